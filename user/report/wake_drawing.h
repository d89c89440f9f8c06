/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The summary's wake graph drawn for report.html: written as Graphviz's dot language and laid out
 * by Graphviz's dot (Debian's graphviz, run as a program: its libraries would pull cairo and
 * pango into cgstat), as SVG to inline in the page. Pools are boxes in their container's frame,
 * filled by how busy their busiest thread was (white: idle, red: a whole core), a serial stage
 * drawn double with its thread's name; sources are grey ellipses; an edge's width and label say
 * its wakeups a second. Only the busiest WAKE_DRAWING_EDGES edges are drawn (a layout of
 * thousands is neither quick nor readable); the caption says how many were left out.
 */
#ifndef CGSTAT_WAKE_DRAWING_H
#define CGSTAT_WAKE_DRAWING_H

#include <stdio.h>

#include <cjson/cJSON.h>

#define WAKE_DRAWING_EDGES 60
/* The dot the report runs, unless CGSTAT_DOT names another (tests): a fixed path, not $PATH */
#define WAKE_DRAWING_DOT "/usr/bin/dot"

/*
 * The dot source of summary's "wakeGraph" into f, marking the serial stages its containers name.
 * Returns the edges drawn; *left the edges left out. 0 when it has none.
 */
int wake_drawing_dot(FILE *f, const cJSON *summary, int *left);

/*
 * The drawing as SVG (its <svg> element alone), made by dot: malloc'd, or NULL with *err
 * -errno (-ENOENT: no dot), and *nr_edges 0 when the summary has no wake graph (nothing to
 * draw, no error).
 */
char *wake_drawing_svg(const cJSON *summary, int *nr_edges, int *left, int *err);

#endif /* CGSTAT_WAKE_DRAWING_H */
