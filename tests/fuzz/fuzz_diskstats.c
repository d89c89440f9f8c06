// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * host_parse_diskstats() against a second reading of the same text done another way: lines cut
 * at '\n', fields at blanks, numbers through strtoull(). The field positions are the kernel's
 * (Documentation/admin-guide/iostats.rst): 3 the name, 6 sectors read, 10 sectors written,
 * 13 milliseconds doing I/O. out is allocated to exactly max entries so that ASan sees a write
 * past it, and max is small so that more lines than fit are common.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "sources/host.h"

#define MIN_FIELDS 14
#define REF_MAX	   4096

struct ref_disk {
	char name[32];
	uint64_t sectors_read, sectors_written, ms_doing_io;
};

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

/* One line, without its '\n': true with d filled when host.h says it is taken. */
static bool ref_line(const char *line, size_t line_len, struct ref_disk *d)
{
	const char *p = line, *end = line + line_len;
	int field = 0;

	for (;;) {
		size_t len;
		uint64_t v;

		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end)
			break;
		len = 0;
		while (p + len < end && p[len] != ' ' && p[len] != '\t')
			len++;
		field++;
		if (field == 3) {
			if (len >= sizeof(d->name))
				return false;
			memcpy(d->name, p, len);
			d->name[len] = '\0';
		} else {
			if (!token_value(p, len, &v))
				return false;
			if (field == 6)
				d->sectors_read = v;
			else if (field == 10)
				d->sectors_written = v;
			else if (field == 13)
				d->ms_doing_io = v;
		}
		p += len;
	}
	return field >= MIN_FIELDS;
}

static int reference(const char *text, struct ref_disk *out, int max)
{
	const char *line = text;
	int taken = 0;

	while (*line) {
		const char *eol = strchrnul(line, '\n');
		struct ref_disk d;

		if (ref_line(line, (size_t)(eol - line), &d)) {
			if (taken < max)
				out[taken] = d;
			taken++;
		}
		line = *eol ? eol + 1 : eol;
	}
	return taken;
}

static void check(const char *text, const struct ref_disk *want, int want_nr, int max)
{
	struct host_disk_reading *out = malloc((size_t)max * sizeof(*out));
	int nr = -1;

	CHECK(out);
	memset(out, 0xa5, (size_t)max * sizeof(*out));
	CHECK(host_parse_diskstats(text, out, max, &nr) == 0);
	CHECK(nr == want_nr);
	for (int i = 0; i < nr && i < max; i++) {
		CHECK(fuzz_terminated(out[i].name, sizeof(out[i].name)));
		CHECK(out[i].name[0] != '\0');
		CHECK(!strcmp(out[i].name, want[i].name));
		CHECK(out[i].sectors_read == want[i].sectors_read);
		CHECK(out[i].sectors_written == want[i].sectors_written);
		CHECK(out[i].ms_doing_io == want[i].ms_doing_io);
	}
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ref_disk want[REF_MAX];
	char *text = fuzz_strdup(data, size);
	int want_nr = reference(text, want, REF_MAX);

	check(text, want, want_nr, 0);
	check(text, want, want_nr, 3);
	if (want_nr <= REF_MAX)
		check(text, want, want_nr, want_nr);
	free(text);
	return 0;
}
