// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>

#include "message.h"

/* c as it appears in a message: itself, or \\ or \xNN. Returns the length written to out. */
static int escape_byte(unsigned char c, char out[5])
{
	if (c == '\\')
		return snprintf(out, 5, "\\\\");
	if (c < 0x20 || c == 0x7f)
		return snprintf(out, 5, "\\x%02x", c);
	out[0] = (char)c;
	out[1] = '\0';
	return 1;
}

void message_quote(FILE *f, const char *value)
{
	const unsigned char *p;
	char esc[5];

	fputc('\'', f);
	for (p = (const unsigned char *)value; *p; p++) {
		escape_byte(*p, esc);
		fputs(esc, f);
	}
	fputc('\'', f);
}

void message_quote_buf(char *dst, size_t len, const char *value, size_t n)
{
	size_t used = 0, i;
	char esc[5];
	int e;

	if (!len)
		return;
	dst[0] = '\0';
	if (len < 3)
		return;
	dst[used++] = '\'';
	for (i = 0; i < n && value[i]; i++) {
		e = escape_byte((unsigned char)value[i], esc);
		if (used + e + 2 > len)
			break;
		memcpy(dst + used, esc, e);
		used += e;
	}
	dst[used++] = '\'';
	dst[used] = '\0';
}
