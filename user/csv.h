/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Writing text: CSV fields (RFC 4180 quoting, numbers in the format of their unit) and the
 * stdio error handling every writer shares. Rows end in "\n"; labels are bytes and pass through
 * unchanged, whatever their encoding.
 */
#ifndef CGSTAT_CSV_H
#define CGSTAT_CSV_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "derived.h"

/*
 * One text field: s as is when it holds none of , " CR LF, neither starts nor ends with a
 * space, and does not start as a spreadsheet formula (= + - @ TAB CR); else in double quotes
 * with every " doubled, and a formula's first character after a '. 0 or -errno.
 */
int csv_field(FILE *f, const char *s);

/* The separator before every field but a row's first. 0 or -errno. */
int csv_sep(FILE *f);

/* The end of a row. 0 or -errno. */
int csv_end_row(FILE *f);

int csv_u64(FILE *f, uint64_t value);

/* value with its unit's decimals, or nothing (an empty field) when !valid. 0 or -errno. */
int csv_number(FILE *f, bool valid, double value, enum cg_unit unit);

/* The header names joined by separators, without the row's end. 0 or -errno. */
int csv_fields(FILE *f, const char *const *names, int nr);

/* -errno for the stdio call that just failed on f: -EIO when stdio left errno at 0. */
int stdio_error(void);

/* fflush, and report any write on f that failed since it was opened: 0 or -errno. */
int stdio_flush(FILE *f);

#endif /* CGSTAT_CSV_H */
