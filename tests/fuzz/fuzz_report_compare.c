// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgstat report and cgstat compare over a run folder a hostile user wrote: the input, split at
 * its first NUL, is the folder's container-summary.json and its sched-stats.csv (side A; side B
 * holds the same summary). Neither may crash, and what they write must show what came from
 * the files as text: compare's output and report.md hold no control character but the newline
 * (C1's, as UTF-8, included), report.md no Markdown of the input's (every [, <, ` and | it has
 * is escaped or the table's own), and report.html no </script> but its own. The wake graph's dot
 * source is made from the summary too: every name in it a whole quoted string (no quote,
 * backslash or control of the input's breaking out), its braces balanced. dot itself is not
 * run (CGSTAT_DOT names none): it is Graphviz's, and a process per input is too slow.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare/compare.h"
#include "fuzz.h"
#include "report/report.h"
#include "report/wake_drawing.h"
#include "scratch.h"

static char side_a[PATH_MAX], side_b[PATH_MAX];

static void put(const char *dir, const char *name, const char *text, size_t len)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(fd >= 0);
	CHECK(write(fd, text, len) == (ssize_t)len);
	close(fd);
}

static char *slurp(const char *dir, const char *name)
{
	char path[PATH_MAX], *text;
	size_t len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	text = calloc(1, 1 << 22);
	CHECK(text != NULL);
	len = fread(text, 1, (1 << 22) - 1, f);
	text[len] = '\0';
	fclose(f);
	return text;
}

/* No C0 control but the newline, no DEL, no C1 control as UTF-8 (U+0080 to U+009F). */
static void check_no_controls(const char *text)
{
	const unsigned char *p;

	for (p = (const unsigned char *)text; *p; p++) {
		CHECK(*p >= 0x20 || *p == '\n');
		CHECK(*p != 0x7f);
		CHECK(!(p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f));
	}
}

/* Every markup character of report.md is escaped, but the table's own bars and dashes. */
static void check_md(const char *md)
{
	const char *p;

	check_no_controls(md);
	for (p = md; *p; p++) {
		if (*p == '\\') {
			if (p[1])
				p++;
			continue;
		}
		CHECK(*p != '[' && *p != ']' && *p != '<' && *p != '>' && *p != '`');
		/* a bar begins or ends a cell: after a space, or at a line's start */
		if (*p == '|')
			CHECK(p == md || p[-1] == '\n' || p[-1] == ' ');
	}
}

static void setup(void)
{
	const char *root = scratch_make("report");
	char lib[PATH_MAX];

	snprintf(side_a, sizeof(side_a), "%s/a", root);
	snprintf(side_b, sizeof(side_b), "%s/b", root);
	snprintf(lib, sizeof(lib), "%s/dygraphs", root);
	CHECK(!mkdir(side_a, 0755) && !mkdir(side_b, 0755) && !mkdir(lib, 0755));
	/* a stand-in library: the page's own code is not what is fuzzed */
	put(lib, "dygraph.min.js", "function Dygraph() {}\n", 22);
	put(lib, "dygraph.min.css", "div {}\n", 7);
	setenv("CGSTAT_DYGRAPHS_DIR", lib, 1);
	setenv("CGSTAT_DOT", "/nonexistent/cgstat-fuzz/dot", 1);
}

/*
 * dot's language as wake_drawing_dot() writes it: strings quoted, within them only escaped
 * quotes and backslashes and its own line breaks (\n), no control byte anywhere but newlines
 * outside strings; braces balanced outside strings.
 */
static void check_dot(const char *dot)
{
	bool quoted = false;
	int depth = 0;
	const char *p;

	for (p = dot; *p; p++) {
		CHECK((unsigned char)*p >= 0x20 || (*p == '\n' && !quoted));
		if (quoted && *p == '\\') {
			CHECK(p[1] == '\\' || p[1] == '"' || p[1] == 'n');
			p++;
		} else if (*p == '"') {
			quoted = !quoted;
		} else if (!quoted && (*p == '{' || *p == '}')) {
			depth += *p == '{' ? 1 : -1;
			CHECK(depth >= 0);
		}
	}
	CHECK(!quoted && depth == 0);
}

static void fuzz_wake_drawing(const char *text, size_t len)
{
	cJSON *summary = cJSON_ParseWithLength(text, len);
	char *dot = NULL;
	size_t dot_len = 0;
	int left;
	FILE *f;

	if (!summary)
		return;
	f = open_memstream(&dot, &dot_len);
	CHECK(f != NULL);
	wake_drawing_dot(f, summary, &left);
	fclose(f);
	check_dot(dot);
	free(dot);
	cJSON_Delete(summary);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t summary_len = nul ? (size_t)(nul - data) : size;
	char *compare_argv[] = { "compare", side_a, "vs", side_b, NULL };
	char *report_argv[] = { "report", side_a, NULL };
	char *out = NULL, *err = NULL, *md, *html, *p;
	size_t out_len = 0, err_len = 0;
	FILE *fout, *ferr;
	int scripts = 0;

	if (!*side_a)
		setup();
	put(side_a, "container-summary.json", (const char *)data, summary_len);
	put(side_b, "container-summary.json", (const char *)data, summary_len);
	put(side_a, "sched-stats.csv", nul ? (const char *)nul + 1 : "",
	    nul ? size - summary_len - 1 : 0);
	/* a report not written this time is not read from the last */
	for (int i = 0; i < 2; i++) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/report.%s", side_a, i ? "html" : "md");
		unlink(path);
	}

	fout = open_memstream(&out, &out_len);
	ferr = open_memstream(&err, &err_len);
	CHECK(fout && ferr);
	compare_main(4, compare_argv, fout, ferr);
	report_main(2, report_argv, ferr);
	fclose(fout);
	fclose(ferr);
	check_no_controls(out);
	check_no_controls(err);
	fuzz_wake_drawing((const char *)data, summary_len);

	md = slurp(side_a, "report.md");
	if (md)
		check_md(md);
	html = slurp(side_a, "report.html");
	for (p = html; p && (p = strstr(p, "</script")); p++)
		scripts++;
	CHECK(!html || scripts == 2);
	free(md);
	free(html);
	free(out);
	free(err);
	return 0;
}
