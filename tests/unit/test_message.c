// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <stdlib.h>

#include "check.h"
#include "lib/message.h"

static const char *quoted(const char *value)
{
	static char *text;
	size_t len;
	FILE *f;

	free(text);
	text = NULL;
	f = open_memstream(&text, &len);
	message_quote(f, value);
	fclose(f);
	return text;
}

/* What reaches stderr from a value cannot split the line nor act on the terminal. */
static void test_quote(void)
{
	CHECK_STR(quoted("plain/path"), "'plain/path'");
	CHECK_STR(quoted("a\nb\\c"), "'a\\x0ab\\\\c'");
	CHECK_STR(quoted("esc\x1b[2J"), "'esc\\x1b[2J'");
	/* C1 controls: U+009B (CSI) as UTF-8, and the lone byte an 8-bit terminal takes as CSI */
	CHECK_STR(quoted("x\xc2\x9b"
			 "2Jy"),
		  "'x\\xc2\\x9b2Jy'");
	CHECK_STR(quoted("x\x9b"
			 "2J"),
		  "'x\\x9b2J'");
	/* printable UTF-8 passes: U+00A0 is the first after C1, and a CJK character */
	CHECK_STR(quoted("\xc2\xa0\xe4\xb8\xad"), "'\xc2\xa0\xe4\xb8\xad'");
	CHECK_STR(quoted("bad\xff"), "'bad\\xff'");
}

static void test_quote_buf(void)
{
	char buf[16];

	message_quote_buf(buf, sizeof(buf),
			  "a\xc2\x9b"
			  "bcdefghijklmnop",
			  20);
	CHECK_STR(buf, "'a\\xc2\\x9bbcde'");
	/* a unit is never cut: n ends inside the two bytes of U+00E9 */
	message_quote_buf(buf, sizeof(buf), "ab\xc3\xa9", 3);
	CHECK_STR(buf, "'ab'");
}

/* compare's table: the same escaping, no quotes; whole units only */
static void test_escape_buf(void)
{
	char buf[12];

	message_escape_buf(buf, sizeof(buf), "cpus\x1b[2J");
	CHECK_STR(buf, "cpus\\x1b[2J");
	message_escape_buf(buf, sizeof(buf), "abcdefgh\x1b");
	CHECK_STR(buf, "abcdefgh");
	message_escape_buf(buf, 1, "abc");
	CHECK_STR(buf, "");
}

int main(void)
{
	test_quote();
	test_quote_buf();
	test_escape_buf();
	return check_done();
}
