/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Writing text, for every output and knowing none of their figures: CSV fields (RFC 4180
 * quoting), numbers with a given number of decimals, and stdio's error handling. The writers
 * return nothing: a stream keeps its error flag once a write on it fails, so a writer checks
 * it once, where it flushes or commits what it wrote (stdio_flush()). Rows end in "\n"; labels
 * are bytes and pass through unchanged, whatever their encoding.
 */
#ifndef CGSTAT_TEXT_H
#define CGSTAT_TEXT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * One text field: s as is when it holds none of , " CR LF, neither starts nor ends with a
 * space, and does not start as a spreadsheet formula (= + - @ TAB CR); else in double quotes
 * with every " doubled, and a formula's first character after a '.
 */
void csv_field(FILE *f, const char *s);

/* The separator before every field but a row's first. */
void csv_sep(FILE *f);

/* The end of a row. */
void csv_end_row(FILE *f);

void csv_u64(FILE *f, uint64_t value);

/* value with decimals (0 to 3) digits after the point, or nothing (an empty field) when !valid. */
void csv_number(FILE *f, bool valid, double value, int decimals);

/* The header names joined by separators, without the row's end. */
void csv_fields(FILE *f, const char *const *names, int nr);

/* -errno for the stdio call that just failed on f: -EIO when stdio left errno at 0. */
int stdio_error(void);

/* fflush, and report any write on f that failed since it was opened: 0 or -errno. */
int stdio_flush(FILE *f);

#endif /* CGSTAT_TEXT_H */
