/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The table a terminal shows, one line per cgroup: the scrolling `-f table` stream and the
 * live view format their lines here. Labels are made safe for a terminal (control characters,
 * C1's included, since an escape sequence could rewrite the screen, and bytes that are not
 * UTF-8 become '?') and cut to the label width (TABLE_LABEL_WIDTH bytes at most) without
 * splitting a UTF-8 sequence; a figure that is not available is "-". The verdict ends the line,
 * cut to TABLE_VERDICT_WIDTH bytes the same way.
 */
#ifndef CGSTAT_TABLE_H
#define CGSTAT_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/record.h"

#define TABLE_LABEL_WIDTH 32
#define TABLE_NR_COLUMNS  13
/* The verdict, last: "contended:other:" and the start of a path */
#define TABLE_VERDICT_WIDTH 48
/* the longest verdict's name alone */
#define TABLE_VERDICT_NAME_WIDTH 9
/* Room for a whole line: the label, every column and the verdict. */
#define TABLE_LINE_MAX 320

/* Which columns iv's table has: the counter ratios only when some cgroup has them. */
void table_columns_shown(const struct cg_interval *iv, bool shown[TABLE_NR_COLUMNS]);

/* How wide the columns shown are, after the label. */
int table_numbers_width(const bool shown[TABLE_NR_COLUMNS]);

/*
 * The header line and r's line, for the columns shown, with the label cut to label_width
 * (at most TABLE_LABEL_WIDTH) bytes and padded to it; no line end.
 */
void table_header(char *line, size_t len, const bool shown[TABLE_NR_COLUMNS], int label_width);
void table_row(char *line, size_t len, const struct cg_interval *iv, const struct cg_record *r,
	       const bool shown[TABLE_NR_COLUMNS], int label_width);

#endif /* CGSTAT_TABLE_H */
