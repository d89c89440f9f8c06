// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <string.h>

#include "csv.h"

int stdio_error(void)
{
	return errno ? -errno : -EIO;
}

int stdio_flush(FILE *f)
{
	if (fflush(f) == EOF || ferror(f))
		return stdio_error();
	return 0;
}

/*
 * A field a spreadsheet would take for a formula (OWASP's CSV injection list): it is written
 * quoted, after a ', which makes it text there.
 */
static bool formula_like(const char *s)
{
	return *s && strchr("=+-@\t\r", *s);
}

static bool needs_quotes(const char *s)
{
	size_t len = strlen(s);

	if (len && (s[0] == ' ' || s[len - 1] == ' '))
		return true;
	return formula_like(s) || strpbrk(s, ",\"\r\n") != NULL;
}

int csv_field(FILE *f, const char *s)
{
	const char *quote;

	if (!needs_quotes(s))
		return fputs(s, f) == EOF ? stdio_error() : 0;

	if (fputc('"', f) == EOF || (formula_like(s) && fputc('\'', f) == EOF))
		return stdio_error();
	while ((quote = strchr(s, '"'))) {
		/* The quote goes out with the run before it, then once more to double it. */
		if (fwrite(s, 1, quote - s + 1, f) != (size_t)(quote - s + 1) ||
		    fputc('"', f) == EOF)
			return stdio_error();
		s = quote + 1;
	}
	if (fputs(s, f) == EOF || fputc('"', f) == EOF)
		return stdio_error();
	return 0;
}

int csv_sep(FILE *f)
{
	return fputc(',', f) == EOF ? stdio_error() : 0;
}

int csv_end_row(FILE *f)
{
	return fputc('\n', f) == EOF ? stdio_error() : 0;
}

/* Without printf, as csv_number(): every row starts with one. */
int csv_u64(FILE *f, uint64_t value)
{
	char buf[24], *end = buf + sizeof(buf), *p = end;

	do {
		*--p = (char)('0' + value % 10);
		value /= 10;
	} while (value);
	return fwrite(p, 1, end - p, f) == (size_t)(end - p) ? 0 : stdio_error();
}

/*
 * "%.*f" without printf: with 1,000 cgroups the drain writes some 40,000 numbers a second, and
 * printf's exact decimal conversion was a third of its time. Values are rounded to the unit's
 * decimals once, as integers; from 2^47 on (or not finite) printf still does it.
 */
int csv_number(FILE *f, bool valid, double value, enum cg_unit unit)
{
	static const double scale[] = { 1, 10, 100, 1000 };
	int decimals = unit_decimals(unit), n = 0;
	char buf[32], *end = buf + sizeof(buf), *p = end;
	unsigned long long whole;
	bool negative;
	double scaled;

	if (!valid)
		return 0;
	scaled = value * scale[decimals];
	if (decimals > 3 || !(fabs(scaled) < 140737488355328.0))
		return fprintf(f, "%.*f", decimals, value) < 0 ? stdio_error() : 0;
	negative = scaled < 0;
	whole = (unsigned long long)rint(fabs(scaled)); /* ties to even, as printf */
	do {
		*--p = (char)('0' + whole % 10);
		whole /= 10;
		if (++n == decimals)
			*--p = '.';
	} while (whole || n <= decimals);
	if (negative && strspn(p, "0.") != (size_t)(end - p))
		*--p = '-';
	return fwrite(p, 1, end - p, f) == (size_t)(end - p) ? 0 : stdio_error();
}

int csv_fields(FILE *f, const char *const *names, int nr)
{
	int i, err = 0;

	for (i = 0; i < nr && !err; i++) {
		if (i)
			err = csv_sep(f);
		if (!err)
			err = csv_field(f, names[i]);
	}
	return err;
}
