// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "report/csv_reader.h"
#include "lib/text.h"

#define MAX_FIELDS 8

/* Text written to a memory stream: the buffer stays valid until the next call. */
static char *mem_text;
static size_t mem_len;

static FILE *mem_open(void)
{
	free(mem_text);
	mem_text = NULL;
	return open_memstream(&mem_text, &mem_len);
}

static const char *mem_close(FILE *f)
{
	fclose(f);
	return mem_text;
}

static const char *field_text(const char *s)
{
	FILE *f = mem_open();

	csv_field(f, s);
	CHECK(!ferror(f));
	return mem_close(f);
}

/*
 * One row read back by the report's reader as a table's header: fields copied into out (each
 * malloc'd); their number, or -1 when the text is not one well-formed row ending in "\n".
 */
static int parse_row(const char *p, char **out, int max)
{
	struct csv_table *t = csv_table_parse(p, strlen(p));
	int n = -1;

	if (t && !t->nr_rows && !t->truncated && !t->malformed && t->nr_columns <= max) {
		for (n = 0; n < t->nr_columns; n++)
			out[n] = strdup(t->header[n]);
	}
	csv_table_free(t);
	return n;
}

static void test_quoting(void)
{
	CHECK_STR(field_text("plain"), "plain");
	CHECK_STR(field_text(""), "");
	CHECK_STR(field_text("mid space"), "mid space");
	CHECK_STR(field_text("a,b"), "\"a,b\"");
	CHECK_STR(field_text("say \"hi\""), "\"say \"\"hi\"\"\"");
	CHECK_STR(field_text("\""), "\"\"\"\"");
	CHECK_STR(field_text("line\nbreak"), "\"line\nbreak\"");
	CHECK_STR(field_text("cr\r"), "\"cr\r\"");
	CHECK_STR(field_text(" lead"), "\" lead\"");
	CHECK_STR(field_text("trail "), "\"trail \"");
	CHECK_STR(field_text("\xff\xfe"), "\xff\xfe");
	CHECK_STR(field_text("/sys/fs/cgroup/a.slice"), "/sys/fs/cgroup/a.slice");
}

static void test_round_trip(void)
{
	char *long_label = malloc(4001), *parsed[MAX_FIELDS];
	const char *labels[] = {
		"web,api", "say \"hi\"", "two\nlines", NULL, "\xff\xfe", " edge ", "plain", "",
	};
	FILE *f;
	int i, n;

	/* 4000 bytes with every kind of trouble in them. */
	for (i = 0; i < 4000; i++)
		long_label[i] = "ab,\"\n \xff"[i % 7];
	long_label[4000] = '\0';
	labels[3] = long_label;

	f = mem_open();
	csv_fields(f, labels, MAX_FIELDS);
	csv_end_row(f);
	CHECK(!ferror(f));
	n = parse_row(mem_close(f), parsed, MAX_FIELDS);
	CHECK(n == MAX_FIELDS);
	for (i = 0; i < n; i++) {
		CHECK_STR(parsed[i], labels[i]);
		free(parsed[i]);
	}
	free(long_label);

	/* A formula-like label comes back as it was, without the ' that defused it. */
	f = mem_open();
	csv_field(f, "=1+1");
	csv_end_row(f);
	n = parse_row(mem_close(f), parsed, MAX_FIELDS);
	CHECK(n == 1 && !strcmp(csv_label(parsed[0]), "=1+1") && parsed[0][0] == '\'');
	if (n == 1)
		free(parsed[0]);
	CHECK_STR(csv_label("'plain"), "'plain");

	/* The reader itself: a stray quote or a missing row end is not a row. */
	CHECK(parse_row("a\"b\n", parsed, MAX_FIELDS) == -1);
	CHECK(parse_row("\"a\"\"\n", parsed, MAX_FIELDS) == -1);
	CHECK(parse_row("a,b", parsed, MAX_FIELDS) == -1);
	CHECK(parse_row("a,,b,,c,,d,,e\n", parsed, MAX_FIELDS) == -1);
}

static void test_numbers(void)
{
	FILE *f = mem_open();

	csv_u64(f, UINT64_MAX);
	csv_sep(f);
	csv_number(f, true, 1.5, 3);
	csv_sep(f);
	csv_number(f, true, 500, 1);
	csv_sep(f);
	csv_number(f, true, 0.04999, 1);
	csv_sep(f);
	csv_number(f, true, 42, 0);
	csv_sep(f);
	csv_number(f, false, 7, 3);
	csv_sep(f);
	csv_number(f, true, 0.0004, 3);
	csv_sep(f);
	/* a negative value that rounds to zero has no sign (its digits read as the buffer's
	 * whole: AddressSanitizer saw the check read past it before 2026-12-06) */
	csv_number(f, true, -0.0004, 3);
	csv_sep(f);
	csv_number(f, true, -1.5, 3);
	csv_end_row(f);
	CHECK(!ferror(f));
	CHECK_STR(mem_close(f), "18446744073709551615,1.500,500.0,0.0,42,,0.000,0.000,-1.500\n");
}

static void test_errors(void)
{
	FILE *f;

	/* Buffered, the failure shows at the flush. */
	f = fopen("/dev/full", "w");
	CHECK(f != NULL);
	csv_field(f, "a,b");
	CHECK(stdio_flush(f) == -ENOSPC);
	fclose(f);

	/* Unbuffered, the first field fails, and the flush reports it however many follow. */
	f = fopen("/dev/full", "w");
	setvbuf(f, NULL, _IONBF, 0);
	csv_field(f, "plain");
	CHECK(ferror(f));
	csv_field(f, "say \"hi\"");
	csv_number(f, true, 1, 3);
	csv_u64(f, 1);
	csv_sep(f);
	csv_end_row(f);
	CHECK(stdio_flush(f) == -ENOSPC);
	fclose(f);
}

/* A label a spreadsheet would run as a formula is written as text: quoted, after a '. */
static void test_formulas(void)
{
	CHECK_STR(field_text("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
	CHECK_STR(field_text("+1"), "\"'+1\"");
	CHECK_STR(field_text("-2+3"), "\"'-2+3\"");
	CHECK_STR(field_text("@SUM(A1)"), "\"'@SUM(A1)\"");
	CHECK_STR(field_text("\tx"), "\"'\tx\"");
	/* only the first character makes a formula */
	CHECK_STR(field_text("a=b"), "a=b");
	CHECK_STR(field_text("/system.slice/a-b.service"), "/system.slice/a-b.service");
}

int main(void)
{
	test_formulas();
	test_quoting();
	test_round_trip();
	test_numbers();
	test_errors();
	free(mem_text);
	return check_done();
}
