// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/csv_reader.h"
#include "lib/text.h"

/* What parse_row() found. */
enum row_end {
	ROW_OK,
	ROW_MALFORMED, /* a stray quote: the rest of the line is skipped */
	ROW_CUT,       /* the text ended before the row did */
};

/*
 * One row at *p (before end), unescaped in place: its fields' starts in fields (up to max; *nr
 * says how many there were, which may be more), each NUL-terminated. *p moves past the row's
 * end, or to end.
 */
static enum row_end parse_row(char **p, char *end, char **fields, int max, int *nr)
{
	char *r = *p, *w;

	*nr = 0;
	for (;;) {
		if (*nr < max)
			fields[*nr] = r;
		(*nr)++;
		w = r;
		if (r < end && *r == '"') {
			for (r++;; r++) {
				if (r == end) {
					*p = end;
					return ROW_CUT;
				}
				if (*r == '"') {
					if (r + 1 < end && r[1] == '"')
						r++;
					else
						break;
				}
				*w++ = *r;
			}
			r++; /* the closing quote */
		} else {
			while (r < end && *r != ',' && *r != '\n' && *r != '"')
				*w++ = *r++;
		}
		if (r == end) {
			*p = end;
			return ROW_CUT;
		}
		if (*r == ',') {
			*w = '\0';
			r++;
			continue;
		}
		if (*r == '\n') {
			*w = '\0';
			*p = r + 1;
			return ROW_OK;
		}
		/* a quote inside an unquoted field, or text after a closing quote */
		r = memchr(r, '\n', end - r);
		*p = r ? r + 1 : end;
		return r ? ROW_MALFORMED : ROW_CUT;
	}
}

/* How many fields the header has: commas outside quotes on its line, plus one. */
static int count_header_fields(const char *p, const char *end)
{
	bool quoted = false;
	int n = 1;

	for (; p < end && (quoted || *p != '\n'); p++) {
		if (*p == '"')
			quoted = !quoted;
		else if (*p == ',' && !quoted)
			n++;
	}
	return n;
}

static int add_row(struct csv_table *t, char **fields, int *cap)
{
	char ***grown;

	if (t->nr_rows == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		grown = realloc(t->rows, *cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		t->rows = grown;
	}
	t->rows[t->nr_rows] = malloc(t->nr_columns * sizeof(char *));
	if (!t->rows[t->nr_rows])
		return -ENOMEM;
	memcpy(t->rows[t->nr_rows++], fields, t->nr_columns * sizeof(char *));
	return 0;
}

struct csv_table *csv_table_parse(const char *text, size_t len)
{
	struct csv_table *t;
	char **fields = NULL, *p, *end;
	int nr, cap = 0, err = ENOMEM;
	enum row_end how;

	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->text = malloc(len + 1);
	if (!t->text)
		goto fail;
	memcpy(t->text, text, len);
	t->text[len] = '\0';
	p = t->text;
	end = t->text + len;
	t->nr_columns = count_header_fields(p, end);
	t->header = calloc(t->nr_columns, sizeof(char *));
	fields = calloc(t->nr_columns, sizeof(char *));
	if (!t->header || !fields)
		goto fail;
	if (parse_row(&p, end, t->header, t->nr_columns, &nr) != ROW_OK || nr != t->nr_columns) {
		err = EINVAL;
		goto fail;
	}
	while (p < end) {
		how = parse_row(&p, end, fields, t->nr_columns, &nr);
		if (how == ROW_CUT) {
			t->truncated = true;
			break;
		}
		if (how == ROW_MALFORMED || nr != t->nr_columns) {
			t->malformed++;
			continue;
		}
		if (add_row(t, fields, &cap))
			goto fail;
	}
	free(fields);
	return t;
fail:
	free(fields);
	csv_table_free(t);
	errno = err;
	return NULL;
}

int csv_table_column(const struct csv_table *t, const char *name)
{
	for (int i = 0; i < t->nr_columns; i++)
		if (!strcmp(t->header[i], name))
			return i;
	return -1;
}

const char *csv_label(const char *field)
{
	if (field[0] == '\'' && csv_formula_like(field + 1))
		return field + 1;
	return field;
}

void csv_table_free(struct csv_table *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nr_rows; i++)
		free(t->rows[i]);
	free(t->rows);
	free(t->header);
	free(t->text);
	free(t);
}
