// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgroupfs_parse_cpu_stat() and cgroupfs_parse_pressure() against a second reading of the same
 * text done another way: each line split at its first blank (cpu.stat) or at its last
 * " total=" (PSI), the value read with strtoull(). By cgroupfs.h, the last line of a key whose
 * value is a whole decimal that fits (in nanoseconds, for microseconds) wins.
 * cgroupfs_parse_cpu_list() against a split at commas and dashes with strtoull(), and
 * cgroupfs_parse_cpu_max() for the promise that a quota is a positive number of cores.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include "sources/cgroupfs.h"
#include "fuzz.h"

/*
 * The decimal at s, ended by a blank (a space or a tab, as lib/text.h's parser takes for every
 * file cgstat reads), a newline or the end, that fits in 64 bits.
 */
static bool value_at(const char *s, uint64_t *v)
{
	size_t len = strspn(s, "0123456789");
	char *buf, *end;
	bool ok;

	if (!len || (s[len] && !strchr(" \t\n", s[len])))
		return false;
	buf = fuzz_strdup((const uint8_t *)s, len);
	errno = 0;
	*v = strtoull(buf, &end, 10);
	ok = !errno && !*end;
	free(buf);
	return ok;
}

static void reference_cpu_stat(const char *text, struct cgroupfs_reading *r)
{
	static const struct {
		const char *key;
		int item;
		uint64_t scale;
	} keys[] = {
		{ "nr_periods", CG_FS_PERIODS, 1 },
		{ "nr_throttled", CG_FS_THROTTLED_PERIODS, 1 },
		{ "throttled_usec", CG_FS_THROTTLED_NS, 1000 },
		{ "throttled_time", CG_FS_THROTTLED_NS, 1 },
	};

	for (const char *line = text; line; line = strchr(line, '\n'), line = line ? line + 1 : 0) {
		size_t key_len = strcspn(line, " \n");
		uint64_t v;

		if (line[key_len] != ' ' || !value_at(line + key_len + 1, &v))
			continue;
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			if (strlen(keys[i].key) != key_len || strncmp(line, keys[i].key, key_len))
				continue;
			if (v > UINT64_MAX / keys[i].scale)
				continue;
			r->value[keys[i].item] = v * keys[i].scale;
			r->valid |= 1u << keys[i].item;
		}
	}
}

static void reference_pressure(const char *text, int some, int full, struct cgroupfs_reading *r)
{
	for (const char *line = text; line; line = strchr(line, '\n'), line = line ? line + 1 : 0) {
		size_t len = strcspn(line, "\n");
		const char *total = NULL;
		int item;
		uint64_t v;

		/* the first " total=" of the line, as strstr() finds it */
		for (const char *p = line; p + 7 <= line + len; p++) {
			if (!strncmp(p, " total=", 7)) {
				total = p;
				break;
			}
		}
		item = !strncmp(line, "some ", 5) ? some : !strncmp(line, "full ", 5) ? full : -1;
		if (item < 0 || !total || !value_at(total + 7, &v) || v > UINT64_MAX / 1000)
			continue;
		r->value[item] = v * 1000;
		r->valid |= 1u << item;
	}
}

/* A CPU number: digits only, at most INT_MAX. */
static bool cpu_number(const char *s, size_t len, uint64_t *v)
{
	if (!len || strspn(s, "0123456789") < len)
		return false;
	*v = 0;
	for (size_t i = 0; i < len; i++) {
		*v = *v * 10 + (uint64_t)(s[i] - '0');
		if (*v > INT_MAX)
			return false;
	}
	return true;
}

static int reference_cpu_list(const char *text)
{
	size_t len = strlen(text);
	uint64_t n = 0, lo, hi;
	const char *piece, *end, *dash;

	if (len && text[len - 1] == '\n')
		len--; /* one line end, at the end */
	if (!len)
		return text[0] && text[1] ? -1 : 0;
	for (piece = text; piece <= text + len; piece = end + 1) {
		end = memchr(piece, ',', text + len - piece);
		if (!end)
			end = text + len;
		dash = memchr(piece, '-', end - piece);
		if (!dash) {
			if (!cpu_number(piece, end - piece, &lo))
				return -1;
			hi = lo;
		} else if (!cpu_number(piece, dash - piece, &lo) ||
			   !cpu_number(dash + 1, end - dash - 1, &hi) || hi < lo) {
			return -1;
		}
		n += hi - lo + 1;
		if (n > INT_MAX)
			return -1;
	}
	return (int)n;
}

static void check_same(const struct cgroupfs_reading *a, const struct cgroupfs_reading *b)
{
	CHECK(a->valid == b->valid);
	for (int i = 0; i < CG_NR_CGROUPFS; i++)
		CHECK(!(a->valid & (1u << i)) || a->value[i] == b->value[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_strdup(data, size);
	struct cgroupfs_reading got = {}, want = {};

	cgroupfs_parse_cpu_stat(text, &got);
	reference_cpu_stat(text, &want);
	check_same(&got, &want);

	got = want = (struct cgroupfs_reading){};
	cgroupfs_parse_pressure(text, CG_FS_IO_SOME_NS, CG_FS_IO_FULL_NS, &got);
	reference_pressure(text, CG_FS_IO_SOME_NS, CG_FS_IO_FULL_NS, &want);
	check_same(&got, &want);

	CHECK(cgroupfs_parse_cpu_list(text) == reference_cpu_list(text));
	{
		double cores = 0;

		if (cgroupfs_parse_cpu_max(text, &cores))
			CHECK(cores > 0);
	}
	free(text);
	return 0;
}
