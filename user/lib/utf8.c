// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>

#include "lib/utf8.h"

size_t utf8_sequence(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		if (s[0] == 0xe0)
			lo = 0xa0; /* below is an overlong form */
		else if (s[0] == 0xed)
			hi = 0x9f; /* above are the UTF-16 surrogates */
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		if (s[0] == 0xf0)
			lo = 0x90;
		else if (s[0] == 0xf4)
			hi = 0x8f; /* above is past U+10FFFF */
	} else {
		return 0;
	}
	/* Only the second byte has the narrowed range; the NUL terminator fails every test. */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

bool utf8_unsafe(const unsigned char *s, size_t *len)
{
	*len = utf8_sequence(s);
	if (!*len) {
		*len = 1;
		return true;
	}
	if (*len == 1)
		return s[0] < 0x20 || s[0] == 0x7f;
	return s[0] == 0xc2 && s[1] < 0xa0;
}

static const char replacement[] = "\xef\xbf\xbd";

char *utf8_sanitize(const char *s)
{
	const unsigned char *in = (const unsigned char *)s;
	char *out, *p;
	size_t len;

	/* A replacement is 3 bytes for 1 byte of input, and nothing grows more. */
	out = malloc(3 * strlen(s) + 1);
	if (!out)
		return NULL;
	p = out;
	while (*in) {
		len = utf8_sequence(in);
		if (len) {
			memcpy(p, in, len);
			p += len;
			in += len;
		} else {
			memcpy(p, replacement, 3);
			p += 3;
			in++;
		}
	}
	*p = '\0';
	return out;
}
