// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "message.h"

void message_quote(FILE *f, const char *value)
{
	const unsigned char *p;

	fputc('\'', f);
	for (p = (const unsigned char *)value; *p; p++) {
		if (*p == '\\')
			fputs("\\\\", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
	fputc('\'', f);
}
