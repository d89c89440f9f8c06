/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Reading back the CSV files cgstat writes (RFC 4180, as text.c writes them) for `cgstat
 * report`: a whole file into rows of fields. What a run cut short leaves (a last row without
 * its end) and rows that are not well formed are left out and counted, never guessed at. No
 * libbpf here.
 */
#ifndef CGSTAT_CSV_READER_H
#define CGSTAT_CSV_READER_H

#include <stdbool.h>
#include <stddef.h>

struct csv_table {
	char **header;
	int nr_columns; /* the header's fields */
	char ***rows;	/* rows[i][j] for j < nr_columns: every row kept has them all */
	int nr_rows;	/* the header not counted */
	bool truncated; /* the text ended inside a row, which is left out */
	int malformed;	/* rows left out: a stray quote, or not as many fields as the header */
	char *text;	/* the fields point into it */
};

/*
 * The table in len bytes of text (which need not end in NUL). NULL and errno: EINVAL when not
 * even the header is a whole row, ENOMEM.
 */
struct csv_table *csv_table_parse(const char *text, size_t len);

/* The index of the column named name, or -1. */
int csv_table_column(const struct csv_table *t, const char *name);

/*
 * A label as the writer gave it: text.c writes a label that starts as a spreadsheet formula
 * after a "'", which this takes off again (the field itself is returned otherwise).
 */
const char *csv_label(const char *field);

void csv_table_free(struct csv_table *t);

#endif /* CGSTAT_CSV_READER_H */
