// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>

#include "check.h"
#include "lib/json_util.h"
#include "lib/utf8.h"

#define FFFD "\xef\xbf\xbd"

static void check_sanitized(const char *in, const char *want)
{
	char *out = utf8_sanitize(in);

	CHECK_STR(out, want);
	free(out);
}

static void test_sanitize(void)
{
	char *long_in = malloc(4001), *long_want = malloc(3 * 4000 + 1), *out;
	int i;

	check_sanitized("", "");
	check_sanitized("web/api.slice", "web/api.slice");
	/* Well-formed sequences of 2, 3 and 4 bytes, at the edges of their ranges. */
	check_sanitized(
		"\xc2\x80 \xdf\xbf \xe0\xa0\x80 \xef\xbf\xbf \xf0\x90\x80\x80 \xf4\x8f\xbf\xbf",
		"\xc2\x80 \xdf\xbf \xe0\xa0\x80 \xef\xbf\xbf \xf0\x90\x80\x80 \xf4\x8f\xbf\xbf");
	check_sanitized("caf\xc3\xa9", "caf\xc3\xa9");
	/* Each invalid byte is one replacement, and the next byte starts afresh. */
	check_sanitized("\xff\xfe", FFFD FFFD);
	check_sanitized("a\x80z", "a" FFFD "z");
	/* Overlong forms. */
	check_sanitized("\xc0\xaf", FFFD FFFD);
	check_sanitized("\xc1\xbf", FFFD FFFD);
	check_sanitized("\xe0\x9f\xbf", FFFD FFFD FFFD);
	check_sanitized("\xf0\x8f\xbf\xbf", FFFD FFFD FFFD FFFD);
	/* UTF-16 surrogates, and past U+10FFFF. */
	check_sanitized("\xed\xa0\x80", FFFD FFFD FFFD);
	check_sanitized("\xed\x9f\xbf", "\xed\x9f\xbf");
	check_sanitized("\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD);
	check_sanitized("\xf5\x80\x80\x80", FFFD FFFD FFFD FFFD);
	/* Cut short, by the end of the string or by an ASCII byte. */
	check_sanitized("ab\xe2\x82", "ab" FFFD FFFD);
	check_sanitized("\xe2\x82z", FFFD FFFD "z");
	check_sanitized("\xf0\x9f\x98", FFFD FFFD FFFD);
	check_sanitized("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80");

	/* The worst case: every byte grows to three. */
	memset(long_in, '\xff', 4000);
	long_in[4000] = '\0';
	for (i = 0; i < 4000; i++)
		memcpy(long_want + 3 * i, FFFD, 3);
	long_want[3 * 4000] = '\0';
	out = utf8_sanitize(long_in);
	CHECK(out && strlen(out) == 12000);
	CHECK_STR(out, long_want);
	free(out);
	free(long_in);
	free(long_want);
}

static void test_json(void)
{
	cJSON *obj = cJSON_CreateObject(), *child, *parsed;
	char *text;

	CHECK(json_add_number(obj, "third", 1.0 / 3) == 0);
	CHECK(json_add_number(obj, "half", 0.0005) == 0);
	/* Whole numbers keep every digit cJSON prints (15 significant). */
	CHECK(json_add_number(obj, "counter", 123456789012345.0) == 0);
	CHECK(json_add_number(obj, "rate", 4066666666.6666665) == 0);
	child = json_add_object(obj, "a\"b\n\xff");
	CHECK(child != NULL);
	CHECK(json_add_number(child, "n", 2) == 0);
	text = cJSON_PrintUnformatted(obj);
	CHECK_STR(text, "{\"third\":0.333,\"half\":0.001,"
			"\"counter\":123456789012345,\"rate\":4066666666.667,"
			"\"a\\\"b\\n" FFFD "\":{\"n\":2}}");
	parsed = cJSON_Parse(text);
	CHECK(cJSON_GetObjectItemCaseSensitive(parsed, "a\"b\n" FFFD) != NULL);
	cJSON_Delete(parsed);
	free(text);
	cJSON_Delete(obj);
}

int main(void)
{
	test_sanitize();
	test_json();
	return check_done();
}
