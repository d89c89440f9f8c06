/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Writing text, for every output and knowing none of their figures: CSV fields (RFC 4180
 * quoting), Markdown cells, numbers with a given number of decimals, and stdio's error
 * handling; reading a whole file back, for the commands that read outputs; and a count from
 * the kernel's text files. The writers
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

/*
 * Whether a spreadsheet would take s for a formula (OWASP's CSV injection list: it starts with
 * = + - @ TAB or CR): csv_field() writes it after a ', which makes it text there.
 */
bool csv_formula_like(const char *s);

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

/*
 * A whole file, NUL-terminated (its length in *len when len is not NULL), malloc'd; NULL with
 * -errno in *err (which is 0 on success).
 */
char *text_read_file(const char *path, size_t *len, int *err);

/*
 * The same for name in the folder dirfd, as file_open_read() opens it: a folder's file that may
 * be a planted link is read through none.
 */
char *text_read_at(int dirfd, const char *name, size_t *len, int *err);

/*
 * s as text in Markdown (a table cell, a line): its markup characters escaped (so that no
 * label makes a link, an image, a heading or HTML), control characters as spaces.
 */
void md_field(FILE *f, const char *s);

/* fflush, and report any write on f that failed since it was opened: 0 or -errno. */
int stdio_flush(FILE *f);

/*
 * A whole decimal token at s, ended by a blank, a newline or the end: no blank before it and
 * no sign or base prefix as strtoull() would take, so that "-1" or "12abc" is malformed rather
 * than a huge or truncated count. 0, with the value in *value and the byte after the digits in
 * *end (when end is not NULL); -EINVAL, or -ERANGE past 64 bits.
 */
int text_parse_u64(const char *s, uint64_t *value, const char **end);

#endif /* CGSTAT_TEXT_H */
