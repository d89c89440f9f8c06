// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libbpf's warnings while the BPF object loads, the verifier's log among them, as collector.c
 * holds them back: the input split at NUL bytes into successive messages for
 * load_refusal_add(). What it keeps stays in its buffers, only ever gets more telling, and
 * load_refusal_print() makes one line of it that no byte of the input can split or turn into a
 * terminal control.
 */
#define _GNU_SOURCE
#include <stdbool.h>

#include "fuzz.h"
#include "sources/refusal.h"

#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_."

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static void check_kept(const struct load_refusal *r, enum load_reason before)
{
	size_t len = strlen(r->reason);

	CHECK(r->rank >= before && r->rank <= LOAD_REASON_VERIFIER);
	CHECK(fuzz_terminated(r->name, sizeof(r->name)));
	CHECK(fuzz_terminated(r->reason, sizeof(r->reason)));
	if (r->rank == LOAD_REASON_NONE) {
		CHECK(len == 0);
		return;
	}
	/* one line, trimmed (a cut can end at a blank) */
	CHECK(len > 0 && !strchr(r->reason, '\n'));
	CHECK(!blank(r->reason[0]) && (r->reason_cut || !blank(r->reason[len - 1])));
	if (r->rank >= LOAD_REASON_NAMED) {
		CHECK(r->name[0] && strspn(r->name, NAME_CHARS) == strlen(r->name));
		CHECK(r->rank == LOAD_REASON_NAMED || !r->is_map);
	}
}

static void check_line(const struct load_refusal *r, const char *btf_path)
{
	char *line = NULL;
	size_t len;
	FILE *f = open_memstream(&line, &len);

	CHECK(f);
	load_refusal_print(f, r, "6.1.0-50-amd64", "Permission denied", btf_path);
	CHECK(fclose(f) == 0);
	CHECK(len > 0 && strchr(line, '\n') == line + len - 1);
	CHECK(!strncmp(line, "cgstat: ", strlen("cgstat: ")));
	for (size_t i = 0; i + 1 < len; i++) {
		unsigned char c = (unsigned char)line[i];

		CHECK(c >= 0x20 && c != 0x7f);
		CHECK(!(c == 0xc2 && (unsigned char)line[i + 1] < 0xa0));
	}
	free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct load_refusal r = {};
	enum load_reason before;
	const uint8_t *p = data, *end = data + size, *nul;
	char *msg, *first = NULL;

	while (p <= end) {
		nul = memchr(p, '\0', end - p);
		if (!nul)
			nul = end;
		msg = fuzz_strdup(p, nul - p);
		before = r.rank;
		load_refusal_add(&r, msg);
		check_kept(&r, before);
		if (!first)
			first = msg;
		else
			free(msg);
		p = nul + 1;
	}
	check_line(&r, NULL);
	/* a BTF path is outside text too */
	check_line(&r, first);
	free(first);
	return 0;
}
