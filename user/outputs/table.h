/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The table a terminal shows, one line per cgroup: the scrolling `-f table` stream and the
 * live view format their lines here. Labels are made safe for a terminal (no control or escape
 * bytes) and cut to TABLE_LABEL_WIDTH bytes; a figure that is not available is "-".
 */
#ifndef CGSTAT_TABLE_H
#define CGSTAT_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "record.h"

#define TABLE_LABEL_WIDTH 32
#define TABLE_NR_COLUMNS  13
/* Room for a whole line: the label and every column. */
#define TABLE_LINE_MAX 256

/*
 * The label as a terminal can show it: at most TABLE_LABEL_WIDTH bytes, not cut inside a UTF-8
 * sequence, and with control characters, C1's included (an escape sequence could rewrite the
 * screen), and bytes that are not UTF-8 as '?'.
 */
void table_label(const char *name, char out[TABLE_LABEL_WIDTH + 1]);

/* Which columns iv's table has: the counter ratios only when some cgroup has them. */
void table_columns_shown(const struct cg_interval *iv, bool shown[TABLE_NR_COLUMNS]);

/* The header line and r's line, for the columns shown; no line end. */
void table_header(char *line, size_t len, const bool shown[TABLE_NR_COLUMNS]);
void table_row(char *line, size_t len, const struct cg_interval *iv, const struct cg_record *r,
	       const bool shown[TABLE_NR_COLUMNS]);

#endif /* CGSTAT_TABLE_H */
