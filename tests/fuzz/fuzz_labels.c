// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A cgroup label is whatever bytes a directory name holds. Every writer must carry it through
 * unchanged or, for JSON, sanitized to UTF-8 and nothing else:
 *  - csv_field(), alone and inside a row, read back by an RFC 4180 reader written here;
 *  - utf8_sanitize(), checked byte by byte against a UTF-8 decoder written here;
 *  - cJSON text holding the sanitized label as key and value, parsed back;
 *  - cgroup_label() for paths below, at and beside a mount;
 *  - stream__write() as CSV (the label field reads back), JSON lines (one line, valid UTF-8,
 *    the sanitized key) and the table (no control bytes reach the terminal, rows stay rows);
 *  - a thread's name (its first 15 bytes) and its pool (cg_pool_name()) in the JSON stream's
 *    pools and threads, in the summary's serial stages and in their line on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sources/cgroup.h"
#include "lib/text.h"
#include "fuzz.h"
#include "lib/json_util.h"
#include "lib/utf8.h"
#include "core/stages.h"
#include "outputs/stream.h"

#define MAX_FIELDS 64

/* ---- RFC 4180 ---- */

/*
 * One record of buf starting at *pos, ended by '\n' or the end of buf: the fields, malloc'd,
 * into fields[]. The number of fields, or -1 when the text breaks RFC 4180: a quote inside an
 * unquoted field, a bare CR, text after a closing quote, an unterminated quoted field.
 */
static int read_record(const char *buf, size_t len, size_t *pos, char **fields, int max)
{
	size_t p = *pos;
	int n = 0;

	for (;;) {
		char *f;
		size_t flen = 0;

		if (n == max)
			goto fail;
		f = malloc(len - p + 1);
		CHECK(f);
		fields[n++] = f;
		if (p < len && buf[p] == '"') {
			for (p++;; p++) {
				if (p == len)
					goto fail;
				if (buf[p] == '"') {
					if (p + 1 < len && buf[p + 1] == '"') {
						f[flen++] = '"';
						p++;
						continue;
					}
					p++;
					break;
				}
				f[flen++] = buf[p];
			}
			if (p < len && buf[p] != ',' && buf[p] != '\n')
				goto fail;
		} else {
			for (; p < len && buf[p] != ',' && buf[p] != '\n'; p++) {
				if (buf[p] == '"' || buf[p] == '\r')
					goto fail;
				f[flen++] = buf[p];
			}
		}
		f[flen] = '\0';
		if (p == len)
			break;
		if (buf[p++] == '\n')
			break;
	}
	*pos = p;
	return n;
fail:
	while (n)
		free(fields[--n]);
	return -1;
}

static void free_fields(char **fields, int n)
{
	while (n)
		free(fields[--n]);
}

/* ---- UTF-8, by decoding: RFC 3629 section 3 ---- */

/* The length of the well-formed sequence at s[0..n), or 0. */
static size_t utf8_valid_len(const unsigned char *s, size_t n)
{
	uint32_t cp, min;
	size_t len;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2, cp = s[0] & 0x1f, min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3, cp = s[0] & 0x0f, min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4, cp = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

static bool utf8_valid(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0, len; i < n; i += len) {
		len = utf8_valid_len(u + i, n - i);
		if (!len)
			return false;
	}
	return true;
}

/* Valid sequences copied, every other byte one U+FFFD, as json_util.h describes. */
static void check_sanitized(const char *label, size_t n, const char *out)
{
	const unsigned char *in = (const unsigned char *)label;
	size_t i = 0, o = 0, len;

	while (i < n) {
		len = utf8_valid_len(in + i, n - i);
		if (len) {
			CHECK(!memcmp(out + o, in + i, len));
			i += len, o += len;
		} else {
			CHECK(!memcmp(out + o, "\xef\xbf\xbd", 3));
			i++, o += 3;
		}
	}
	CHECK(out[o] == '\0');
}

/* ---- the checks ---- */

static char *render_field(const char *label, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	CHECK(f);
	csv_field(f, label);
	CHECK(!ferror(f));
	CHECK(fclose(f) == 0);
	return text;
}

/* text.h's rule: a field a spreadsheet would run as a formula reads back after a '. */
static bool formula_like(const char *s)
{
	return s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@' || s[0] == '\t' ||
	       s[0] == '\r';
}

/* label as a CSV reader gets it back, malloc'd. */
static char *csv_read_back(const char *label)
{
	size_t n = strlen(label);
	char *want = malloc(n + 2);

	CHECK(want);
	snprintf(want, n + 2, "%s%s", formula_like(label) ? "'" : "", label);
	return want;
}

static void check_csv(const char *label, size_t n)
{
	char *fields[MAX_FIELDS], *text = NULL, *want = csv_read_back(label);
	bool plain = n && label[0] != ' ' && label[n - 1] != ' ' && !formula_like(label) &&
		     !strpbrk(label, ",\"\r\n");
	size_t len, pos = 0;
	FILE *f;

	/* Alone: as is when text.h says so, otherwise quoted; either way it reads back. */
	if (!n)
		plain = true;
	text = render_field(label, &len);
	if (plain)
		CHECK(len == n && !memcmp(text, label, n));
	else
		CHECK(len >= n + 2 && text[0] == '"' && text[len - 1] == '"');
	CHECK(read_record(text, len, &pos, fields, 1) == 1 && pos == len);
	CHECK(!strcmp(fields[0], want));
	free_fields(fields, 1);
	free(text);

	/* In a row beside itself and other fields, so that no quote or comma leaks across. */
	f = open_memstream(&text, &len);
	CHECK(f);
	csv_field(f, "a");
	csv_sep(f);
	csv_field(f, label);
	csv_sep(f);
	csv_field(f, label);
	csv_sep(f);
	csv_u64(f, 42);
	csv_end_row(f);
	CHECK(!ferror(f));
	CHECK(fclose(f) == 0);
	pos = 0;
	CHECK(read_record(text, len, &pos, fields, MAX_FIELDS) == 4 && pos == len);
	CHECK(!strcmp(fields[0], "a") && !strcmp(fields[1], want) && !strcmp(fields[2], want) &&
	      !strcmp(fields[3], "42"));
	free_fields(fields, 4);
	free(text);
	free(want);
}

static char *check_utf8(const char *label, size_t n)
{
	char *clean = utf8_sanitize(label), *again;

	CHECK(clean);
	check_sanitized(label, n, clean);
	CHECK(utf8_valid(clean, strlen(clean)));
	if (utf8_valid(label, n))
		CHECK(!strcmp(clean, label));
	again = utf8_sanitize(clean);
	CHECK(again && !strcmp(again, clean));
	free(again);
	return clean;
}

/* {"label": clean, clean: {}} printed by cJSON and parsed back. */
static void check_json(const char *label, const char *clean)
{
	cJSON *root = cJSON_CreateObject(), *parsed, *item;
	char *text;

	CHECK(root);
	CHECK(cJSON_AddStringToObject(root, "label", clean));
	CHECK(json_add_object(root, label));
	text = cJSON_PrintUnformatted(root);
	CHECK(text);
	CHECK(utf8_valid(text, strlen(text)));
	parsed = cJSON_Parse(text);
	CHECK(parsed);
	item = cJSON_GetObjectItemCaseSensitive(parsed, "label");
	CHECK(cJSON_IsString(item) && !strcmp(item->valuestring, clean));
	CHECK(cJSON_GetArraySize(parsed) == 2);
	item = parsed->child->next;
	CHECK(cJSON_IsObject(item) && !strcmp(item->string, clean));
	cJSON_Delete(parsed);
	cJSON_Delete(root);
	free(text);
}

static void check_cgroup_label(const char *label, size_t n)
{
	static const char *const mounts[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup/unified/",
					      "/" };
	static struct cgroup_mount m;
	char *path = malloc(sizeof(m.path) + n + 2), *want = malloc(n + 2);
	const char *got;

	CHECK(path && want);
	want[0] = '/';
	memcpy(want + 1, label, n + 1);
	for (size_t i = 0; i < sizeof(mounts) / sizeof(mounts[0]); i++) {
		size_t mlen = strlen(mounts[i]);

		strcpy(m.path, mounts[i]);
		strcpy(m.root, "/");
		while (mlen > 1 && mounts[i][mlen - 1] == '/')
			mlen--;
		if (mlen == 1)
			mlen = 0; /* the root mount: a cgroup's path is "/" + label */

		/* The mount itself. */
		if (mlen) {
			memcpy(path, mounts[i], mlen);
			path[mlen] = '\0';
		} else {
			strcpy(path, "/");
		}
		CHECK(!strcmp(cgroup_label(&m, path), "/"));

		/* Below it: the label is the rest, with its leading slash. */
		memcpy(path, mounts[i], mlen);
		path[mlen] = '/';
		memcpy(path + mlen + 1, label, n + 1);
		CHECK(!strcmp(cgroup_label(&m, path), want));

		/* Beside it ("/sys/fs/cgroup/unifiedX"): not below, so not cut as if it were. */
		if (mlen && n && label[0] != '/') {
			memcpy(path, mounts[i], mlen);
			memcpy(path + mlen, label, n + 1);
			got = cgroup_label(&m, path);
			CHECK(strcmp(got, label) && strcmp(got, want));
		}
	}
	free(path);
	free(want);
}

static char *render_stream(const struct cg_interval *iv, enum cg_format fmt, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	CHECK(f);
	CHECK(stream__write(f, fmt, iv, true) == 0);
	CHECK(fclose(f) == 0);
	return text;
}

static void check_stream_csv(const struct cg_interval *iv, const char *label)
{
	char *header[MAX_FIELDS], *row[MAX_FIELDS];
	size_t len, pos = 0;
	char *text = render_stream(iv, CG_FORMAT_CSV, &len);
	int nr_header = read_record(text, len, &pos, header, MAX_FIELDS);
	int nr_row = read_record(text, len, &pos, row, MAX_FIELDS);

	CHECK(nr_header > 3 && nr_row == nr_header && pos == len);
	char *want = csv_read_back(label);

	CHECK(!strcmp(header[2], "container") && !strcmp(row[2], want));
	free_fields(header, nr_header);
	free_fields(row, nr_row);
	free(text);
	free(want);
}

static void check_stream_json(const struct cg_interval *iv, const char *clean, const char *disk)
{
	size_t len;
	char *text = render_stream(iv, CG_FORMAT_JSON, &len), *clean_disk;
	cJSON *root, *containers, *disks;

	/* JSON lines: a label's newline must not end the line early. */
	CHECK(len > 0 && strchr(text, '\n') == text + len - 1);
	CHECK(utf8_valid(text, len));
	root = cJSON_Parse(text);
	CHECK(root);
	containers = cJSON_GetObjectItemCaseSensitive(root, "containers");
	CHECK(cJSON_IsObject(containers) && cJSON_GetArraySize(containers) == 1);
	CHECK(!strcmp(containers->child->string, clean));
	disks = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "host"),
						 "disks");
	CHECK(cJSON_IsObject(disks) && cJSON_GetArraySize(disks) == 1);
	clean_disk = utf8_sanitize(disk);
	CHECK(clean_disk && !strcmp(disks->child->string, clean_disk));
	free(clean_disk);
	cJSON_Delete(root);
	free(text);
}

/* Whether row[0..32) shows label[0..k) (control bytes as '?') padded with spaces. */
/*
 * Whether row starts with label's first k bytes as the table shows them, padded to 32: each
 * valid UTF-8 sequence as is, and a '?' for each C0 control, DEL, C1 control (U+0080 to
 * U+009F, two bytes) and byte that starts no valid sequence.
 */
static bool table_shows(const char *row, const char *label, size_t k)
{
	const unsigned char *u = (const unsigned char *)label;
	char want[33];
	size_t i = 0, o = 0, len;

	while (i < k) {
		len = utf8_valid_len(u + i, k - i);
		if (!len || (len == 1 && (u[i] < 0x20 || u[i] == 0x7f)) ||
		    (len == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0)) {
			want[o++] = '?';
			i += len ? len : 1;
		} else {
			memcpy(want + o, u + i, len);
			o += len, i += len;
		}
	}
	while (o < 32)
		want[o++] = ' ';
	return !memcmp(row, want, 32);
}

static void check_stream_table(const struct cg_interval *iv, const char *label, size_t n)
{
	size_t len, lines = 0;
	char *text = render_stream(iv, CG_FORMAT_TABLE, &len), *row;
	bool shown = false;

	/*
	 * Nothing that a terminal would take as a control: an escape could rewrite the screen,
	 * and an 8-bit terminal takes C1 (and the lone byte 0x9b) as one.
	 */
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		CHECK(c == '\n' || (c >= 0x20 && c != 0x7f));
		CHECK(!(c == 0xc2 && i + 1 < len && (unsigned char)text[i + 1] < 0xa0));
		lines += c == '\n';
	}
	CHECK(utf8_valid(text, len));
	/* The time line, the column titles, one row: a label cannot add a line. */
	CHECK(lines == 3 && text[len - 1] == '\n');
	row = strchr(strchr(text, '\n') + 1, '\n') + 1;
	CHECK(strlen(row) > 33 && row[32] == ' ');
	if (n <= 32) {
		shown = table_shows(row, label, n);
	} else if (utf8_valid(label, n)) {
		/* Cut to 32 bytes, back to the start of a sequence that would be cut in two. */
		size_t k = 32;

		while (!utf8_valid(label, k))
			k--;
		shown = k >= 29 && table_shows(row, label, k);
	} else {
		for (size_t k = 0; k <= 32 && !shown; k++)
			shown = table_shows(row, label, k);
	}
	CHECK(shown);
	free(text);
}

static void check_stream(const char *label, size_t n, const char *clean)
{
	static const char *const events[] = { "cycles", "instructions" };
	struct cg_host_disk disk = { .read_mbps = 1.5, .write_mbps = 2, .busy_percent = 10 };
	struct cg_record record = {
		.name = label,
		.tasks = 3,
		.time_ns = { 500000000, 100000000, 300000000, 100000000 },
		.count[CG_NVCSW] = 10,
		.counter = { 2000000, 3000000 },
		.counter_valid = { true, true },
	};
	struct cg_interval iv = {
		.epoch_ms = 1700000000123ULL,
		.interval_ns = 1000000000,
		.nr_events = 2,
		.event_columns = events,
		.host = { true, 25, 5, 1, &disk },
		.nr_records = 1,
		.records = &record,
	};

	/* A disk's name is outside input too, cut to fit as host.c cuts it. */
	snprintf(disk.name, sizeof(disk.name), "%s", label);
	check_stream_csv(&iv, label);
	check_stream_json(&iv, clean, disk.name);
	check_stream_table(&iv, label, n);
}

/* The one key of obj's object key, sanitized as want is. */
static void check_only_key(const cJSON *obj, const char *key, const char *want)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(obj, key);
	char *clean = utf8_sanitize(want);

	CHECK(clean && cJSON_IsObject(o) && cJSON_GetArraySize(o) == 1);
	CHECK(!strcmp(o->child->string, clean));
	free(clean);
}

/* A thread named label (cut as the kernel cuts comm) in its pool, a serial stage. */
static void check_threads(const char *label)
{
	struct cg_thread_rec rec = { .tid = 42, .pid = 41, .intervals = 1 };
	char pool[CG_COMM_LEN + 1] = { 0 }, *text, *json, *line = NULL;
	struct cg_record record = { .name = "c", .nr_pools = 1, .nr_threads = 1 };
	struct cg_record pool_row = { .name = "c", .pool = pool };
	struct cg_record thread_row = { .name = "c", .pool = pool, .thread = &rec };
	struct cg_interval_thread it = { &rec, 0, pool, 0 };
	struct cg_interval iv = {
		.interval_ns = 1000000000,
		.nr_records = 1,
		.records = &record,
		.nr_pools = 1,
		.pools = &pool_row,
		.nr_threads = 1,
		.threads = &thread_row,
		.nr_all_threads = 1,
		.all_threads = &it,
	};
	struct stages *st = stages__new();
	cJSON *root, *c, *stage;
	size_t len;
	FILE *f;

	strncpy(rec.comm, label, CG_COMM_LEN - 1);
	cg_pool_name(rec.comm, pool, 0);
	/* all of the interval seen (its rest asleep): a stage is serial for an interval at least */
	rec.time_ns[CG_ONCPU] = 990000000;
	rec.time_ns[CG_SLEEP] = 10000000;
	memcpy(thread_row.busiest.comm, rec.comm, CG_COMM_LEN);
	/* the container's hungriest thread, as the drain finds it: the stage's rule needs it */
	record.time_ns[CG_ONCPU] = rec.time_ns[CG_ONCPU];
	record.hungriest.tid = rec.tid;
	record.hungriest.on_cpu_ns = rec.time_ns[CG_ONCPU];
	memcpy(record.hungriest.comm, rec.comm, CG_COMM_LEN);
	text = render_stream(&iv, CG_FORMAT_JSON, &len);
	CHECK(len > 0 && strchr(text, '\n') == text + len - 1 && utf8_valid(text, len));
	root = cJSON_Parse(text);
	c = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "containers"),
					     "c");
	check_only_key(c, "pools", pool);
	check_only_key(c, "threads", "42");
	cJSON_Delete(root);
	free(text);

	/* the summary: valid JSON naming the thread; its stderr line one line, no controls */
	CHECK(st && stages__add(st, &iv) == 0);
	root = cJSON_CreateObject();
	CHECK(root && stages__json(st, "c", root) == 0);
	json = cJSON_PrintUnformatted(root);
	CHECK(json && utf8_valid(json, strlen(json)));
	cJSON_Delete(root);
	root = cJSON_Parse(json);
	stage = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "serialStages"), 0);
	CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(stage, "comm")));
	cJSON_Delete(root);
	free(json);
	f = open_memstream(&line, &len);
	CHECK(f);
	stages__print(st, f);
	CHECK(fclose(f) == 0);
	CHECK(len > 0 && strchr(line, '\n') == line + len - 1);
	for (size_t i = 0; i + 1 < len; i++)
		CHECK((unsigned char)line[i] >= 0x20 && line[i] != 0x7f);
	free(line);
	stages__free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Labels are C strings: a directory name cannot hold a NUL. */
	char *label = fuzz_strdup(data, strnlen((const char *)data, size));
	size_t n = strlen(label);
	char *clean;

	check_csv(label, n);
	clean = check_utf8(label, n);
	check_json(label, clean);
	check_cgroup_label(label, n);
	check_stream(label, n, clean);
	check_threads(label);
	free(clean);
	free(label);
	return 0;
}
