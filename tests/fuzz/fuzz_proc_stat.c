// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * host_parse_stat() against a second reading of the same text done another way: the first line
 * that starts with "cpu " split into blank-separated tokens, each converted with strtoull().
 * proc(5) gives the field order: user nice system idle iowait irq softirq steal guest guest_nice.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "sources/host.h"

#define MAX_TOKENS 8 /* guest and guest_nice are inside user and nice, so not read */

/* A token of decimal digits only that fits in 64 bits, as strtoull() reads it. */
static bool token_value(const char *tok, size_t len, uint64_t *value)
{
	char *buf, *end;
	bool ok;

	if (!len || strspn(tok, "0123456789") < len)
		return false;
	buf = fuzz_strdup((const uint8_t *)tok, len);
	errno = 0;
	*value = strtoull(buf, &end, 10);
	ok = !errno && *end == '\0';
	free(buf);
	return ok;
}

/* 0 and t filled, or -EINVAL, by the description in host.h. */
static int reference(const char *text, struct host_cpu_times *t)
{
	uint64_t field[MAX_TOKENS] = { 0 };
	const char *line = text, *p;
	int n = 0;

	while (strncmp(line, "cpu ", 4)) {
		line = strchr(line, '\n');
		if (!line)
			return -EINVAL;
		line++;
	}
	p = line + 4;
	for (;;) {
		size_t len;

		p += strspn(p, " \t");
		if (*p == '\n' || *p == '\0' || n == MAX_TOKENS)
			break;
		len = strcspn(p, " \t\n");
		if (!token_value(p, len, &field[n]))
			return -EINVAL;
		n++;
		p += len;
	}
	if (n < 4)
		return -EINVAL;
	*t = (struct host_cpu_times){
		.user = field[0],
		.nice = field[1],
		.system = field[2],
		.idle = field[3],
		.iowait = field[4],
		.irq = field[5],
		.softirq = field[6],
		.steal = field[7],
	};
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_strdup(data, size);
	struct host_cpu_times got, want;
	int ret;

	memset(&got, 0xa5, sizeof(got));
	ret = host_parse_stat(text, &got);
	CHECK(ret == 0 || ret == -EINVAL);
	CHECK(ret == reference(text, &want));
	if (!ret) {
		CHECK(got.user == want.user && got.nice == want.nice);
		CHECK(got.system == want.system && got.idle == want.idle);
		CHECK(got.iowait == want.iowait && got.irq == want.irq);
		CHECK(got.softirq == want.softirq && got.steal == want.steal);
	}
	free(text);
	return 0;
}
