// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The report's CSV reader on any bytes (it reads files a run may have left cut short or that
 * someone edited): it must not crash, and every row it keeps has the header's number of fields.
 * Then the round trip: the input split at NUL bytes into up to 8 fields, written by csv_field()
 * as a header and one row, must read back as exactly those fields (a formula-like one after
 * the ' that defused it), twice.
 */
#include <stdbool.h>
#include <string.h>

#include "report/csv_reader.h"
#include "fuzz.h"
#include "lib/text.h"

#define MAX_FIELDS 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *fields[MAX_FIELDS];
	char *text = fuzz_strdup(data, size), *written = NULL;
	struct csv_table *t;
	size_t len = 0, at = 0;
	int n = 0, i, r;
	FILE *f;

	t = csv_table_parse((const char *)data, size);
	if (t) {
		CHECK(t->nr_columns >= 1);
		for (r = 0; r < t->nr_rows; r++)
			for (i = 0; i < t->nr_columns; i++)
				CHECK(t->rows[r][i] != NULL);
	}
	csv_table_free(t);

	while (n < MAX_FIELDS) {
		fields[n++] = text + at;
		at += strlen(text + at) + 1;
		if (at > size)
			break;
	}
	f = open_memstream(&written, &len);
	CHECK(f != NULL);
	for (r = 0; r < 2; r++) {
		csv_fields(f, fields, n);
		csv_end_row(f);
	}
	CHECK(!fclose(f));
	t = csv_table_parse(written, len);
	CHECK(t != NULL && t->nr_columns == n && t->nr_rows == 1 && !t->truncated && !t->malformed);
	for (i = 0; i < n; i++) {
		/* a formula-like field comes back after the ' that defused it */
		size_t skip = csv_formula_like(fields[i]);

		CHECK(!skip || (t->header[i][0] == '\'' && t->rows[0][i][0] == '\''));
		CHECK(!strcmp(t->header[i] + skip, fields[i]) &&
		      !strcmp(t->rows[0][i] + skip, fields[i]));
	}
	csv_table_free(t);
	free(written);
	free(text);
	return 0;
}
