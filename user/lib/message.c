// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>

#include "lib/message.h"
#include "lib/utf8.h"

/*
 * The unit at s as it appears in a message: itself, or \\ for a backslash, or \xNN for each
 * of its bytes where a terminal would act on it (controls, C1's included, and bytes that are
 * not UTF-8). Returns the length written to out; *used, the bytes of s it stands for.
 */
static int escape_unit(const unsigned char *s, char out[17], size_t *used)
{
	size_t i;
	int n = 0;

	if (s[0] == '\\') {
		*used = 1;
		return snprintf(out, 17, "\\\\");
	}
	if (utf8_unsafe(s, used)) {
		for (i = 0; i < *used; i++)
			n += snprintf(out + n, 17 - n, "\\x%02x", s[i]);
		return n;
	}
	memcpy(out, s, *used);
	out[*used] = '\0';
	return (int)*used;
}

void message_quote(FILE *f, const char *value)
{
	const unsigned char *p;
	char esc[17];
	size_t used;

	fputc('\'', f);
	for (p = (const unsigned char *)value; *p; p += used) {
		escape_unit(p, esc, &used);
		fputs(esc, f);
	}
	fputc('\'', f);
}

/* Escaped units of value's first n bytes into dst, whole units only: the length written. */
static size_t escape_into(char *dst, size_t room, const char *value, size_t n)
{
	size_t used = 0, i, unit;
	char esc[17];
	int e;

	for (i = 0; i < n && value[i]; i += unit) {
		e = escape_unit((const unsigned char *)value + i, esc, &unit);
		if (used + e > room || i + unit > n)
			break;
		memcpy(dst + used, esc, e);
		used += e;
	}
	return used;
}

void message_quote_buf(char *dst, size_t len, const char *value, size_t n)
{
	size_t used;

	if (!len)
		return;
	dst[0] = '\0';
	if (len < 3)
		return;
	dst[0] = '\'';
	used = 1 + escape_into(dst + 1, len - 3, value, n);
	dst[used++] = '\'';
	dst[used] = '\0';
}

void message_escape_buf(char *dst, size_t len, const char *value)
{
	if (!len)
		return;
	dst[escape_into(dst, len - 1, value, strlen(value))] = '\0';
}
