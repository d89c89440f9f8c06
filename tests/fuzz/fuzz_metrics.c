// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * /metrics carries text from outside in its label values: a cgroup's path (any bytes), a thread
 * pool's name (a thread's comm) and what a container runtime says (name, image, id, pod, Compose
 * project). The input is split at '\x1f' into those; one interval of one cgroup with one pool
 * and its container is added, and both formats are rendered. Each page must read back by a
 * parser of the Prometheus text format written here (exposition_formats.md): every line a
 * comment or NAME{LABELS} VALUE, names and label names of the allowed characters, values with
 * only the three escapes and valid UTF-8, no timestamp; and the cgroup, pool and container name
 * must read back as utf8_sanitize() makes them.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "lib/utf8.h"
#include "outputs/metrics.h"

enum {
	FIELD_CGROUP,
	FIELD_POOL,
	FIELD_NAME,
	FIELD_IMAGE,
	FIELD_ID,
	FIELD_POD,
	NR_FIELDS
};

static bool is_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	while (*p) {
		n = utf8_sequence(p);
		if (!n)
			return false;
		p += n;
	}
	return true;
}

static bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
	       (!first && c >= '0' && c <= '9');
}

/* The label value at *p (after its opening quote), unescaped into out; *p past the quote. */
static bool read_value(const char **p, char *out, size_t cap)
{
	const char *s = *p;
	size_t n = 0;

	while (*s != '"') {
		CHECK(*s && *s != '\n');
		if (*s == '\\') {
			s++;
			CHECK(*s == '\\' || *s == '"' || *s == 'n');
			out[n++] = *s == 'n' ? '\n' : *s;
			s++;
			continue;
		}
		out[n++] = *s++;
		CHECK(n < cap);
	}
	out[n] = '\0';
	*p = s + 1;
	return true;
}

/*
 * One sample line: its labels checked and, where key is one, its value into found[key]. The
 * line ends at end.
 */
static void read_sample(const char *line, const char *end, const char *want[NR_FIELDS],
			bool seen[NR_FIELDS], char *buf, size_t cap)
{
	static const char *const keys[NR_FIELDS] = { "cgroup", "pool",	       "container_name",
						     "image",  "container_id", "pod_name" };
	const char *p = line, *key;
	size_t klen;
	char *number_end;
	int i;

	CHECK(name_char(*p, true));
	while (name_char(*p, false))
		p++;
	if (*p == '{') {
		p++;
		while (*p != '}') {
			key = p;
			CHECK(name_char(*p, true));
			while (name_char(*p, false))
				p++;
			klen = p - key;
			CHECK(*p++ == '=' && *p++ == '"');
			read_value(&p, buf, cap);
			for (i = 0; i < NR_FIELDS; i++) {
				if (strlen(keys[i]) == klen && !strncmp(key, keys[i], klen)) {
					CHECK(!strcmp(buf, want[i]));
					seen[i] = true;
				}
			}
			if (*p == ',')
				p++;
			else
				CHECK(*p == '}');
		}
		p++;
	}
	CHECK(*p++ == ' ');
	/* one number and the line's end: no timestamp */
	if (!strncmp(p, "+Inf", 4) || !strncmp(p, "NaN", 3))
		return;
	strtod(p, &number_end);
	CHECK(number_end > p && number_end == end);
}

static void check_page(const char *text, const char *want[NR_FIELDS], bool om, size_t cap)
{
	bool seen[NR_FIELDS] = {};
	const char *line, *end;
	char *buf = malloc(cap);
	int i;

	CHECK(buf && is_utf8(text));
	for (line = text; *line; line = end + 1) {
		end = strchr(line, '\n');
		CHECK(end);
		if (*line == '#') {
			CHECK(!strncmp(line, "# HELP ", 7) || !strncmp(line, "# TYPE ", 7) ||
			      (om && (!strncmp(line, "# UNIT ", 7) || !strcmp(line, "# EOF\n"))));
			continue;
		}
		read_sample(line, end, want, seen, buf, cap);
	}
	for (i = 0; i < NR_FIELDS; i++)
		CHECK(seen[i] || !*want[i]);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *input = fuzz_strdup(data, size), *field[NR_FIELDS] = {}, *p = input;
	const char *want[NR_FIELDS];
	struct cg_container ct = { .runtime = "docker" };
	struct cg_record r = {}, pool = {};
	struct cg_interval iv = { .epoch_ms = 1, .interval_ns = 1000000000, .nr_cpus = 2 };
	struct metrics_snapshot *s;
	struct metrics *m;
	char *text;
	size_t len;
	int i;

	for (i = 0; i < NR_FIELDS; i++) {
		field[i] = p;
		p = strchr(p, '\x1f');
		if (p)
			*p++ = '\0';
		else
			p = field[i] + strlen(field[i]);
	}
	/* a label is never empty: the drain names the root "/" */
	if (!*field[FIELD_CGROUP] || !*field[FIELD_POOL])
		goto out;
	snprintf(ct.name, sizeof(ct.name), "%s", field[FIELD_NAME]);
	snprintf(ct.image, sizeof(ct.image), "%s", field[FIELD_IMAGE]);
	snprintf(ct.id, sizeof(ct.id), "%s", field[FIELD_ID]);
	snprintf(ct.pod_name, sizeof(ct.pod_name), "%s", field[FIELD_POD]);
	r.name = field[FIELD_CGROUP];
	r.container = &ct;
	r.time_ns[CG_ONCPU] = 12345;
	r.nr_pools = 1;
	pool.name = r.name;
	pool.pool = field[FIELD_POOL];
	iv.records = &r;
	iv.nr_records = 1;
	iv.pools = &pool;
	iv.nr_pools = 1;
	/* what the page must say: the text as utf8_sanitize() makes it (runtimes' cut to size) */
	want[FIELD_CGROUP] = utf8_sanitize(r.name);
	want[FIELD_POOL] = utf8_sanitize(pool.pool);
	want[FIELD_NAME] = utf8_sanitize(ct.name);
	want[FIELD_IMAGE] = utf8_sanitize(ct.image);
	want[FIELD_ID] = utf8_sanitize(ct.id);
	want[FIELD_POD] = utf8_sanitize(ct.pod_name);
	for (i = 0; i < NR_FIELDS; i++)
		CHECK(want[i]);
	m = metrics__new(NULL, 0, "v1.1");
	CHECK(m && !metrics__add(m, &iv, 1000));
	for (i = 0; i < 2; i++) {
		s = metrics__snapshot(m);
		CHECK(s);
		text = metrics_snapshot__render(s, i, &len);
		CHECK(text && strlen(text) == len);
		check_page(text, want, i, len + 1);
		free(text);
		metrics_snapshot__free(s);
	}
	metrics__free(m);
	for (i = 0; i < NR_FIELDS; i++)
		free((char *)want[i]);
out:
	free(input);
	return 0;
}
