// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>

#include "lib/message.h"
#include "sources/refusal.h"

/* "5.19" as 5 << 16 | 19, to find the newest; 0 for what is not a release */
static unsigned int release_order(const char *since)
{
	unsigned int major, minor;

	if (sscanf(since, "%u.%u", &major, &minor) != 2)
		return 0;
	return major << 16 | minor;
}

int refusal_print_missing(FILE *f, const char *release, const struct kernel_need *needs, size_t nr)
{
	const char *newest = NULL;
	int missing = 0;
	size_t i;

	for (i = 0; i < nr; i++) {
		missing += needs[i].missing;
		if (!newest || release_order(needs[i].since) > release_order(newest))
			newest = needs[i].since;
	}
	if (!missing)
		return 0;
	fprintf(f, "cgstat: needs Linux %s or newer with BTF; this is %s: no ", newest, release);
	missing = 0;
	for (i = 0; i < nr; i++) {
		if (!needs[i].missing)
			continue;
		fprintf(f, "%s%s (%s)", missing++ ? ", " : "", needs[i].what, needs[i].since);
	}
	fputc('\n', f);
	return missing;
}

/* libbpf's framing of a program's verifier log (libbpf.c, bpf_object_load_prog()) */
#define LOG_BEGIN "-- BEGIN PROG LOAD LOG --"
#define LOG_END	  "-- END PROG LOAD LOG --"

/* What a BPF object's program and map names are made of: C identifiers, and ".rodata" */
#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_."

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* s[0..len) without the blanks around it, through *start; its length, 0 when all blank */
static size_t trim(const char *s, size_t len, const char **start)
{
	while (len && blank(*s))
		s++, len--;
	while (len && blank(s[len - 1]))
		len--;
	*start = s;
	return len;
}

/* Copy s[0..len) into dst[size], cut to fit but never inside a UTF-8 sequence; true if cut. */
static bool copy_cut(char *dst, size_t size, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = len < size - 1 ? len : size - 1, k = n;

	/*
	 * Back to the lead byte of a sequence that the cut would split (its bytes would be \xNN in
	 * the quote), at most 3 back: continuation bytes further on are stray, and cut anywhere.
	 */
	while (k && n - k < 3 && (u[k] & 0xc0) == 0x80)
		k--;
	if (n < len && k < n && (u[k] & 0xc0) == 0xc0)
		n = k;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return n < len;
}

/* reason from s[0..len) without the blanks around it; false, and nothing set, if all blank */
static bool set_reason(struct load_refusal *r, enum load_reason rank, const char *s, size_t len)
{
	len = trim(s, len, &s);
	if (!len)
		return false;
	r->rank = rank;
	r->reason_cut = copy_cut(r->reason, sizeof(r->reason), s, len);
	return true;
}

/*
 * The verifier's reason in a log that follows LOG_BEGIN: its last non-blank line before the
 * statistics it ends with ("processed N insns", and before that, with BPF_LOG_STATS,
 * "verification time N usec"), or before LOG_END when a log has none (cut short). Of a reason
 * said over several lines, the last: where the verifier stopped. Through *line and *len; false
 * when the log has no line but blanks.
 */
static bool log_reason(const char *log, const char **line, size_t *len)
{
	const char *end = strstr(log, LOG_END), *p, *eol, *s;
	size_t n;

	if (!end)
		end = log + strlen(log);
	*len = 0;
	for (p = log; p < end; p = eol + 1) {
		eol = memchr(p, '\n', end - p);
		if (!eol)
			eol = end;
		if (starts_with(p, "processed ") || starts_with(p, "verification time "))
			break;
		n = trim(p, eol - p, &s);
		if (n) {
			*line = s;
			*len = n;
		}
	}
	return *len > 0;
}

void load_refusal_add(struct load_refusal *r, const char *msg)
{
	const char *p, *name, *rest, *line;
	enum load_reason rank;
	size_t name_len, len;
	bool is_map;

	if (starts_with(msg, "libbpf: "))
		msg += strlen("libbpf: ");
	is_map = starts_with(msg, "map '");
	if (!is_map && !starts_with(msg, "prog '"))
		goto unnamed;
	name = msg + (is_map ? strlen("map '") : strlen("prog '"));
	name_len = strspn(name, NAME_CHARS);
	if (!name_len || !starts_with(name + name_len, "': "))
		goto unnamed;
	rest = name + name_len + strlen("': ");

	if (starts_with(rest, LOG_BEGIN)) {
		/* the first program whose log had a reason: the one that failed the load */
		p = strchr(rest, '\n');
		if (r->rank >= LOAD_REASON_VERIFIER || is_map || !p ||
		    !log_reason(p + 1, &line, &len))
			return;
		rank = LOAD_REASON_VERIFIER;
	} else if (r->rank < LOAD_REASON_NAMED) {
		/* a message that is not a log is one line */
		line = rest;
		len = strcspn(rest, "\n");
		rank = LOAD_REASON_NAMED;
	} else {
		return;
	}
	if (!set_reason(r, rank, line, len))
		return;
	r->is_map = is_map;
	r->name_cut = copy_cut(r->name, sizeof(r->name), name, name_len);
	return;
unnamed:
	if (r->rank < LOAD_REASON_LIBBPF)
		set_reason(r, LOAD_REASON_LIBBPF, msg, strcspn(msg, "\n"));
}

void load_refusal_print(FILE *f, const struct load_refusal *r, const char *release,
			const char *error, const char *btf_path)
{
	const char *cut = r->name_cut ? "..." : "";

	if (r->rank == LOAD_REASON_VERIFIER)
		fprintf(f, "cgstat: Linux %s refused the BPF program %s%s: %s", release, r->name,
			cut, error);
	else if (r->rank == LOAD_REASON_NAMED && r->is_map)
		fprintf(f, "cgstat: cannot make the BPF map %s%s on Linux %s: %s", r->name, cut,
			release, error);
	else if (r->rank == LOAD_REASON_NAMED)
		fprintf(f, "cgstat: cannot load the BPF program %s%s on Linux %s: %s", r->name, cut,
			release, error);
	else
		fprintf(f, "cgstat: cannot load the BPF programs on Linux %s: %s", release, error);
	if (r->rank != LOAD_REASON_NONE) {
		fprintf(f, " (%s: ", r->rank == LOAD_REASON_VERIFIER ? "verifier" : "libbpf");
		message_quote(f, r->reason);
		fprintf(f, "%s)", r->reason_cut ? "..." : "");
	}
	if (btf_path) {
		fputs("; with the BTF in ", f);
		message_quote(f, btf_path);
	}
	/* -vv's log of a refused program holds its reason and statistics only; -vvv's its path */
	fprintf(f, "; %s\n",
		r->rank == LOAD_REASON_VERIFIER ? "-vvv shows its log"
						: "-vv shows libbpf's messages");
}
