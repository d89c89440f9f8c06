// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/text.h"

#include "lib/files.h"
#include "lib/utf8.h"

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

bool csv_formula_like(const char *s)
{
	return *s && strchr("=+-@\t\r", *s);
}

static bool needs_quotes(const char *s)
{
	size_t len = strlen(s);

	if (len && (s[0] == ' ' || s[len - 1] == ' '))
		return true;
	return csv_formula_like(s) || strpbrk(s, ",\"\r\n") != NULL;
}

void csv_field(FILE *f, const char *s)
{
	const char *quote;

	if (!needs_quotes(s)) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	if (csv_formula_like(s))
		fputc('\'', f);
	while ((quote = strchr(s, '"'))) {
		/* The quote goes out with the run before it, then once more to double it. */
		fwrite(s, 1, quote - s + 1, f);
		fputc('"', f);
		s = quote + 1;
	}
	fputs(s, f);
	fputc('"', f);
}

void csv_sep(FILE *f)
{
	fputc(',', f);
}

void csv_end_row(FILE *f)
{
	fputc('\n', f);
}

/* Without printf, as csv_number(): every row starts with one. */
void csv_u64(FILE *f, uint64_t value)
{
	char buf[24], *end = buf + sizeof(buf), *p = end;

	do {
		*--p = (char)('0' + value % 10);
		value /= 10;
	} while (value);
	fwrite(p, 1, end - p, f);
}

/* Whether [p, end) holds only zeros and the point: a value that rounds to 0 takes no sign. */
static bool all_zero(const char *p, const char *end)
{
	while (p < end && (*p == '0' || *p == '.'))
		p++;
	return p == end;
}

/*
 * "%.*f" without printf: with 1,000 cgroups the drain writes some 40,000 numbers a second, and
 * printf's exact decimal conversion was a third of its time. Values are rounded to their
 * decimals once, as integers; from 2^47 on (or not finite) printf still does it.
 */
void csv_number(FILE *f, bool valid, double value, int decimals)
{
	static const double scale[] = { 1, 10, 100, 1000 };
	char buf[32], *end = buf + sizeof(buf), *p = end;
	unsigned long long whole;
	bool negative;
	double scaled;
	int n = 0;

	if (!valid)
		return;
	scaled = decimals >= 0 && decimals <= 3 ? value * scale[decimals] : NAN;
	if (!(fabs(scaled) < 140737488355328.0)) {
		fprintf(f, "%.*f", decimals, value);
		return;
	}
	negative = scaled < 0;
	whole = (unsigned long long)rint(fabs(scaled)); /* ties to even, as printf */
	do {
		*--p = (char)('0' + whole % 10);
		whole /= 10;
		if (++n == decimals)
			*--p = '.';
	} while (whole || n <= decimals);
	if (negative && !all_zero(p, end))
		*--p = '-';
	fwrite(p, 1, end - p, f);
}

void csv_fields(FILE *f, const char *const *names, int nr)
{
	int i;

	for (i = 0; i < nr; i++) {
		if (i)
			csv_sep(f);
		csv_field(f, names[i]);
	}
}

/* What is left to read of fd, which is closed here. */
static char *text_read_fd(int fd, size_t *len_out, int *err)
{
	size_t len = 0, cap = 0, n;
	char *text = NULL, *grown;
	FILE *f;

	f = fdopen(fd, "r");
	if (!f) {
		*err = -errno;
		close(fd);
		return NULL;
	}
	do {
		if (cap - len < 4096) {
			cap = cap ? 2 * cap : 65536;
			grown = realloc(text, cap + 1);
			if (!grown) {
				free(text);
				fclose(f);
				*err = -ENOMEM;
				return NULL;
			}
			text = grown;
		}
		n = fread(text + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	*err = ferror(f) ? -EIO : 0;
	fclose(f);
	if (*err) {
		free(text);
		return NULL;
	}
	text[len] = '\0';
	if (len_out)
		*len_out = len;
	return text;
}

char *text_read_file(const char *path, size_t *len_out, int *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	return text_read_fd(fd, len_out, err);
}

char *text_read_at(int dirfd, const char *name, size_t *len_out, int *err)
{
	int fd = file_open_read(dirfd, name);

	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	return text_read_fd(fd, len_out, err);
}

void md_field(FILE *f, const char *s)
{
	size_t unit;

	for (; *s; s += unit) {
		/*
		 * A control character (C1's too), or a byte that is no UTF-8, would end the line or
		 * act on a terminal that shows the file: a space instead.
		 */
		if (utf8_unsafe((const unsigned char *)s, &unit)) {
			fputc(' ', f);
			continue;
		}
		if (unit == 1 && strchr("|\\`*_<>[]&#!~", *s))
			fputc('\\', f);
		fwrite(s, 1, unit, f);
	}
}

int text_parse_u64(const char *s, uint64_t *value, const char **end)
{
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned int digit = (unsigned int)(*s - '0');

		if (v > (UINT64_MAX - digit) / 10)
			return -ERANGE;
		v = v * 10 + digit;
	}
	if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\0')
		return -EINVAL;
	*value = v;
	if (end)
		*end = s;
	return 0;
}
