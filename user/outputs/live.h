/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The live view on a terminal, as top and systemd-cgtop show theirs: the screen redrawn each
 * interval (ncurses) with the host line on top and the containers below, sorted by a key the
 * user types; with --threads, t switches to each container's busiest threads and back. Lines
 * are cut to the terminal's width, labels shortened first, never wrapped. The terminal is given
 * back on exit, and on a crash (a fatal signal restores it before the process dies).
 */
#ifndef CGSTAT_LIVE_H
#define CGSTAT_LIVE_H

#include "core/record.h"

/* What live__keys() found. */
enum live_key_result {
	LIVE_GO_ON,
	LIVE_QUIT, /* q */
};

struct live;

/* Take over the terminal on stdin/stdout. NULL and errno when it is not one ncurses can drive. */
struct live *live__open(void);

/* Show iv. 0 or -ENOMEM. */
int live__draw(struct live *l, const struct cg_interval *iv);

/* Act on the keys typed (and a resize) since the last call; never waits. */
enum live_key_result live__keys(struct live *l);

/* Give the terminal back. NULL is allowed. */
void live__close(struct live *l);

#endif /* CGSTAT_LIVE_H */
