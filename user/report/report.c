// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "report/csv_reader.h"
#include "core/derived.h"
#include "lib/files.h"
#include "lib/message.h"
#include "report/report.h"
#include "report/wake_drawing.h"
#include "lib/text.h"
#include "lib/util.h"

/* The files of an output folder the report reads. */
enum report_file {
	FILE_CONTAINER,
	FILE_SCHED,
	FILE_HOST,
	NR_FILES,
};

/* perf's page-faults as the summary gives it (the event's column, per second) */
#define PERF_PAGE_FAULTS_RATE "pageFaultsPerSecond"

static const char *const file_names[NR_FILES] = {
	[FILE_CONTAINER] = "container-stats.csv",
	[FILE_SCHED] = "sched-stats.csv",
	[FILE_HOST] = "host-io.csv",
};

/*
 * A name the outputs wrote: a figure's (figure_columns), a perf ratio's (derived_columns), or
 * one of its own (a summary key that is no figure, or a host-io.csv column's part).
 */
struct out_name {
	enum {
		NAME_NONE,
		NAME_FIGURE,
		NAME_DERIVED,
		NAME_OWN
	} kind;
	int id; /* enum cg_figure or enum cg_derived */
	const char *own;
};

#define FIGURE(f)                    \
	{                            \
		NAME_FIGURE, f, NULL \
	}
#define DERIVED(d)                    \
	{                             \
		NAME_DERIVED, d, NULL \
	}
#define OWN(s)                 \
	{                      \
		NAME_OWN, 0, s \
	}
#define NONE                       \
	{                          \
		NAME_NONE, 0, NULL \
	}

/* The name, or NULL for none. */
static const char *out_name(const struct out_name *n)
{
	switch (n->kind) {
	case NAME_FIGURE:
		return figure_columns[n->id].name;
	case NAME_DERIVED:
		return derived_columns[n->id].name;
	case NAME_OWN:
		return n->own;
	default:
		return NULL;
	}
}

/*
 * One chart: from file, per container (or, for the host, one line per matching column), the
 * value of column (plus column2's) as written, or per second of its interval.
 */
struct chart {
	const char *title;
	const char *unit;
	enum report_file file;
	struct out_name column;	 /* a column; for the host, a part every plotted column has */
	struct out_name column2; /* added to column, or none */
	bool per_second;	 /* the column is an amount over the interval */
};

static const struct chart charts[] = {
	{ "CPU cores", "cores", FILE_CONTAINER, FIGURE(CG_FIG_CPU_CORES), NONE, false },
	{ "Run-queue wait", "ms/s", FILE_SCHED, FIGURE(CG_FIG_RUNQ_MILLIS), NONE, true },
	{ "Run-queue wait p99", "µs", FILE_SCHED, FIGURE(CG_FIG_RUNQ_P99_MICROS), NONE, false },
	{ "Off-CPU sleeping", "ms/s", FILE_SCHED, FIGURE(CG_FIG_SLEEP_MILLIS), NONE, true },
	{ "Off-CPU blocked (D)", "ms/s", FILE_SCHED, FIGURE(CG_FIG_BLOCKED_MILLIS), NONE, true },
	{ "Context switches", "1/s", FILE_CONTAINER, FIGURE(CG_FIG_VCSW_RATE),
	  FIGURE(CG_FIG_IVCSW_RATE), false },
	{ "Migrations", "1/s", FILE_SCHED, FIGURE(CG_FIG_MIGRATIONS), NONE, true },
	/* the host's: "cpu" plots the columns that start so, a suffix the disks' that end so */
	{ "Host CPU busy and iowait", "%", FILE_HOST, OWN("cpu"), NONE, false },
	{ "Host disk throughput", "MB/s", FILE_HOST, OWN("MBps"), NONE, false },
	{ "Host disk busy", "%", FILE_HOST, OWN("BusyPercent"), NONE, false },
};

struct report {
	const char *dir;
	int dirfd; /* dir's: every file is read and written relative to it, through no link */
	struct csv_table *tables[NR_FILES];
	cJSON *summary;
	uint64_t start_ms; /* from the summary; 0 without one (the first row has no rate then) */
	FILE *err;
	char missing[1024]; /* what the report lacks, for report.md */
};

static void say_missing(struct report *r, const char *file, const char *why)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", r->dir, file);
	fputs("cgstat: report: ", r->err);
	message_quote(r->err, path);
	fprintf(r->err, ": %s\n", why);
	snprintf(r->missing + strlen(r->missing), sizeof(r->missing) - strlen(r->missing),
		 "%s%s (%s)", *r->missing ? "; " : "", file, why);
}

/* Why a file of the folder could not be read (-errno from text_read_at()). */
static const char *read_failure(int err)
{
	if (err == -ELOOP)
		return "a symbolic link, which report does not read through";
	if (err == -EINVAL)
		return "not a regular file";
	return strerror(-err);
}

static void read_inputs(struct report *r)
{
	size_t len;
	char *text;
	int err;

	for (int i = 0; i < NR_FILES; i++) {
		text = text_read_at(r->dirfd, file_names[i], &len, &err);
		if (!text) {
			say_missing(r, file_names[i], read_failure(err));
			continue;
		}
		r->tables[i] = csv_table_parse(text, len);
		free(text);
		if (!r->tables[i])
			say_missing(r, file_names[i], "no header: empty or not CSV");
		else if (r->tables[i]->truncated)
			say_missing(r, file_names[i], "its last row is cut short and left out");
	}
	text = text_read_at(r->dirfd, "container-summary.json", NULL, &err);
	if (!text) {
		say_missing(r, "container-summary.json", read_failure(err));
		return;
	}
	r->summary = cJSON_Parse(text);
	free(text);
	if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(r->summary, "containers"))) {
		say_missing(r, "container-summary.json", "not whole JSON: was the run cut short?");
		cJSON_Delete(r->summary);
		r->summary = NULL;
	}
}

static double json_number(const cJSON *obj, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNumber(item) ? item->valuedouble : NAN;
}

/* A figure in a Markdown cell: "–" when it is not there. */
static void md_number(FILE *f, double v, int decimals)
{
	if (isnan(v))
		fputs(" – |", f);
	else
		fprintf(f, " %.*f |", decimals, v);
}

struct md_column {
	const char *head;
	struct out_name key;  /* in the container's summary object, or none: computed */
	struct out_name key2; /* added to key's value when present */
	int decimals;
};

/* The run-queue share: its waits against all its tasks' time (on CPU, waiting, off CPU). */
static double runq_share(const cJSON *c)
{
	double runq = json_number(c, figure_columns[CG_FIG_RUNQ_MILLIS_RATE].name);
	double all = 1000 * json_number(c, "cpus") + runq +
		     json_number(c, figure_columns[CG_FIG_SLEEP_MILLIS_RATE].name) +
		     json_number(c, figure_columns[CG_FIG_BLOCKED_MILLIS_RATE].name);
	double stolen = json_number(c, figure_columns[CG_FIG_STOLEN_MILLIS_RATE].name);

	if (!isnan(stolen))
		all += stolen;
	return all > 0 ? 100 * runq / all : NAN;
}

static double md_value(const cJSON *c, const struct md_column *col)
{
	const char *key = out_name(&col->key), *key2 = out_name(&col->key2);
	double v, v2;

	if (!key)
		return runq_share(c);
	v = json_number(c, key);
	if (key2) {
		v2 = json_number(c, key2);
		/* page faults: perf's count when it was taken, else the threads' own */
		if (!strcmp(key, PERF_PAGE_FAULTS_RATE))
			return isnan(v)
				       ? json_number(
						 c, figure_columns[CG_FIG_MINOR_FAULTS_RATE].name) +
						 v2
				       : v;
		v = isnan(v) || isnan(v2) ? NAN : v + v2;
	}
	return v;
}

static void md_table(FILE *f, const cJSON *containers, const char *title,
		     const struct md_column *cols, int nr)
{
	const cJSON *c;
	int i;

	fprintf(f, "\n## %s\n\n| container |", title);
	for (i = 0; i < nr; i++)
		fprintf(f, " %s |", cols[i].head);
	fputs("\n| --- |", f);
	for (i = 0; i < nr; i++)
		fputs(" ---: |", f);
	fputc('\n', f);
	cJSON_ArrayForEach(c, containers)
	{
		fputs("| ", f);
		md_field(f, c->string);
		fputs(" |", f);
		for (i = 0; i < nr; i++)
			md_number(f, md_value(c, &cols[i]), cols[i].decimals);
		fputc('\n', f);
	}
}

static const struct md_column pulsar_columns[] = {
	{ "CPUs", OWN("cpus"), NONE, 2 },
	{ "CPU s / M msgs", OWN("cpuSecondsPerMillionMessages"), NONE, 2 },
	{ "vol. switches/s", FIGURE(CG_FIG_VCSW_RATE), NONE, 0 },
	{ "invol. switches/s", FIGURE(CG_FIG_IVCSW_RATE), NONE, 0 },
	{ "migrations/s", FIGURE(CG_FIG_MIGRATIONS_RATE), NONE, 0 },
	{ "page faults/s", OWN(PERF_PAGE_FAULTS_RATE), FIGURE(CG_FIG_MAJOR_FAULTS_RATE), 0 },
};

static const struct md_column counter_columns[] = {
	{ "GHz", DERIVED(CG_DERIVED_GHZ), NONE, 2 },
	{ "IPC", DERIVED(CG_DERIVED_IPC), NONE, 2 },
	{ "LLC MPKI", DERIVED(CG_DERIVED_LLC_MPKI), NONE, 2 },
	{ "LLC miss %", DERIVED(CG_DERIVED_LLC_MISS_PERCENT), NONE, 1 },
};

static const struct md_column own_columns[] = {
	{ "run-queue share %", NONE, NONE, 1 },
	{ "run-queue p99 µs", FIGURE(CG_FIG_RUNQ_P99_MICROS), NONE, 0 },
	{ "off-CPU sleeping ms/s", FIGURE(CG_FIG_SLEEP_MILLIS_RATE), NONE, 0 },
	{ "off-CPU blocked ms/s", FIGURE(CG_FIG_BLOCKED_MILLIS_RATE), NONE, 0 },
};

/*
 * Why each container waited: the summary's dominant verdict and how many intervals had each
 * (container-summary.json's "verdict" and "verdicts"); – for a summary without them.
 */
static void md_verdicts(FILE *f, const cJSON *containers)
{
	const cJSON *c, *counts, *dominant;
	double n;
	int v;

	fputs("\n## Verdicts (intervals with each)\n\n| container | dominant |", f);
	for (v = 0; v < CG_NR_VERDICTS; v++)
		fprintf(f, " %s |", verdict_names[v]);
	fputs("\n| --- | --- |", f);
	for (v = 0; v < CG_NR_VERDICTS; v++)
		fputs(" ---: |", f);
	fputc('\n', f);
	cJSON_ArrayForEach(c, containers)
	{
		counts = cJSON_GetObjectItemCaseSensitive(c, "verdicts");
		dominant = cJSON_GetObjectItemCaseSensitive(c, "verdict");
		fputs("| ", f);
		md_field(f, c->string);
		fputs(" | ", f);
		md_field(f, cJSON_IsString(dominant) ? dominant->valuestring : "–");
		fputs(" |", f);
		for (v = 0; v < CG_NR_VERDICTS; v++) {
			/* the summary names the verdicts some interval had: the others had none */
			n = cJSON_IsObject(counts) ? json_number(counts, verdict_names[v]) : NAN;
			md_number(f, cJSON_IsObject(counts) && isnan(n) ? 0 : n, 0);
		}
		fputc('\n', f);
	}
}

/* A time the summary holds, which anyone may have written: within a time_t, or "?". */
static void format_time(char *buf, size_t len, double epoch_ms)
{
	struct tm tm;
	time_t t;

	/* the range first: converting NaN or a value past it is undefined (the fuzzer's find) */
	if (!(epoch_ms >= 0 && epoch_ms < 1e18)) {
		snprintf(buf, len, "?");
		return;
	}
	t = (time_t)(epoch_ms / 1000);
	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, len, "?");
}

static void write_md(FILE *f, const struct report *r)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(r->summary, "measurement");
	const cJSON *host = cJSON_GetObjectItemCaseSensitive(r->summary, "host");
	const cJSON *containers = cJSON_GetObjectItemCaseSensitive(r->summary, "containers");
	const cJSON *item;
	char from[64], to[64];

	fputs("# cgstat run report\n\n", f);
	fputs("Folder: ", f);
	md_field(f, r->dir);
	fputs("\n", f);
	if (*r->missing) {
		fputs("\nNot in this report: ", f);
		md_field(f, r->missing);
		fputs("\n", f);
	}
	if (!r->summary)
		return;
	format_time(from, sizeof(from), json_number(m, "startEpochMillis"));
	format_time(to, sizeof(to), json_number(m, "endEpochMillis"));
	fprintf(f, "\nRun: %s to %s, %.1f s.\n\n**Host:**", from, to,
		json_number(m, "durationSeconds"));
	cJSON_ArrayForEach(item, host)
	{
		if (cJSON_IsNumber(item)) {
			fputs(item == host->child ? " " : ", ", f);
			md_field(f, item->string);
			fprintf(f, " %.1f", item->valuedouble);
		}
	}
	fputs("\n", f);
	md_table(f, containers, "Containers", pulsar_columns, ARRAY_SIZE(pulsar_columns));
	md_table(f, containers, "Counters", counter_columns, ARRAY_SIZE(counter_columns));
	md_table(f, containers, "Scheduling (cgstat)", own_columns, ARRAY_SIZE(own_columns));
	md_verdicts(f, containers);
	fputs("\nRates are averages over the run; – is a figure the run did not have (a counter "
	      "the hardware does not count, no messages given, no waits).\n",
	      f);
}

/* The value of row's field, or NaN when it is empty (a figure the interval did not have). */
static double field_number(const char *s)
{
	char *end;
	double v;

	if (!*s)
		return NAN;
	v = strtod(s, &end);
	return *end ? NAN : v;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The distinct epochs of t's rows, sorted; their number. */
static int distinct_epochs(const struct csv_table *t, int col, uint64_t *epochs)
{
	int n = 0, i, k;

	for (i = 0; i < t->nr_rows; i++)
		epochs[n++] = strtoull(t->rows[i][col], NULL, 10);
	qsort(epochs, n, sizeof(*epochs), cmp_u64);
	for (i = 0, k = 0; i < n; i++)
		if (!k || epochs[i] != epochs[k - 1])
			epochs[k++] = epochs[i];
	return k;
}

static int epoch_index(const uint64_t *epochs, int n, uint64_t e)
{
	const uint64_t *found = bsearch(&e, epochs, n, sizeof(*epochs), cmp_u64);

	return found ? (int)(found - epochs) : -1;
}

/*
 * One chart's data as dygraphs takes it: {"title", "unit", "labels": ["time", line...], "rows":
 * [[epochMs, value or null...]...]}. NULL when the file is missing or has not the columns.
 */
static cJSON *chart_data(const struct report *r, const struct chart *c)
{
	const struct csv_table *t = r->tables[c->file];
	int epoch_col, label_col = -1, nr_lines = 0, nr_epochs, i, j, k, line;
	int cols[64], cols2[64] = { -1 };
	const char *names[64];
	uint64_t *epochs = NULL;
	double *values = NULL;
	cJSON *obj = NULL, *labels, *rows, *row;

	if (!t)
		return NULL;
	epoch_col = csv_table_column(t, c->file == FILE_HOST ? "epochMs" : "epochMillis");
	if (epoch_col < 0)
		return NULL;
	if (c->file == FILE_HOST) {
		/* one line per column: cpu... starts, the disks' end in the suffix */
		for (i = 0; i < t->nr_columns && nr_lines < 64; i++) {
			const char *part = out_name(&c->column);
			size_t n = strlen(t->header[i]), m = strlen(part);
			bool cpu = !strncmp(t->header[i], "cpu", 3);
			bool match = !strcmp(part, "cpu")
					     ? cpu
					     : !cpu && n > m && !strcmp(t->header[i] + n - m, part);

			if (match) {
				names[nr_lines] = t->header[i];
				cols[nr_lines++] = i;
			}
		}
	} else {
		label_col = csv_table_column(t, "container");
		cols[0] = csv_table_column(t, out_name(&c->column));
		cols2[0] = out_name(&c->column2) ? csv_table_column(t, out_name(&c->column2)) : -1;
		if (label_col < 0 || cols[0] < 0 || (out_name(&c->column2) && cols2[0] < 0))
			return NULL;
		for (i = 0; i < t->nr_rows; i++) {
			const char *label = csv_label(t->rows[i][label_col]);

			for (j = 0; j < nr_lines && strcmp(names[j], label); j++)
				;
			if (j == nr_lines && nr_lines < 64)
				names[nr_lines++] = label;
		}
	}
	epochs = malloc((t->nr_rows + 1) * sizeof(*epochs));
	values = malloc(((size_t)t->nr_rows * (nr_lines ? nr_lines : 1) + 1) * sizeof(*values));
	if (!epochs || !values)
		goto out;
	nr_epochs = distinct_epochs(t, epoch_col, epochs);
	for (i = 0; i < nr_epochs * nr_lines; i++)
		values[i] = NAN;
	for (i = 0; i < t->nr_rows; i++) {
		char **f = t->rows[i];
		int e = epoch_index(epochs, nr_epochs, strtoull(f[epoch_col], NULL, 10));
		double v, seconds;

		for (line = 0; line < nr_lines; line++) {
			if (label_col >= 0 && strcmp(names[line], csv_label(f[label_col])))
				continue;
			v = field_number(f[label_col >= 0 ? cols[0] : cols[line]]);
			if (label_col >= 0 && cols2[0] >= 0)
				v += field_number(f[cols2[0]]);
			if (c->per_second) {
				/* the interval a row covers ends at its epoch, from the one before
				 */
				seconds = e		? (double)(epochs[e] - epochs[e - 1]) / 1e3
					  : r->start_ms ? ((double)epochs[0] - r->start_ms) / 1e3
							: NAN;
				v = seconds > 0 ? v / seconds : NAN;
			}
			values[(size_t)e * nr_lines + line] = v;
		}
	}
	obj = cJSON_CreateObject();
	if (!obj)
		goto out;
	cJSON_AddStringToObject(obj, "title", c->title);
	cJSON_AddStringToObject(obj, "unit", c->unit);
	labels = cJSON_AddArrayToObject(obj, "labels");
	rows = cJSON_AddArrayToObject(obj, "rows");
	if (!labels || !rows)
		goto fail;
	cJSON_AddItemToArray(labels, cJSON_CreateString("time"));
	for (line = 0; line < nr_lines; line++)
		cJSON_AddItemToArray(labels, cJSON_CreateString(names[line]));
	for (k = 0; k < nr_epochs; k++) {
		row = cJSON_CreateArray();
		if (!row)
			goto fail;
		cJSON_AddItemToArray(rows, row);
		cJSON_AddItemToArray(row, cJSON_CreateNumber((double)epochs[k]));
		for (line = 0; line < nr_lines; line++) {
			double v = values[(size_t)k * nr_lines + line];

			cJSON_AddItemToArray(row, isfinite(v) ? cJSON_CreateNumber(v)
							      : cJSON_CreateNull());
		}
	}
	goto out;
fail:
	cJSON_Delete(obj);
	obj = NULL;
out:
	free(epochs);
	free(values);
	return obj;
}

/* JSON text inside a <script>: "<" escaped, so that no label can close the element. */
static void write_script_json(FILE *f, const char *json)
{
	for (; *json; json++) {
		if (*json == '<')
			fputs("\\u003c", f);
		else
			fputc(*json, f);
	}
}

/* The page's own script: one dygraph per chart, and what a test (or a person) can check. */
static const char page_script[] =
	"window.onerror = function (msg, src, line) {\n"
	"  var e = document.getElementById('errors');\n"
	"  e.textContent += msg + ' (line ' + line + ')\\n';\n"
	"  document.body.dataset.errors = (+document.body.dataset.errors || 0) + 1;\n"
	"};\n"
	"function clock(d) { return d.toISOString().substr(11, 10); }\n"
	"(function () {\n"
	"  var box = document.getElementById('charts'), drawn = 0;\n"
	"  REPORT.charts.forEach(function (c) {\n"
	"    var h = document.createElement('h2'), div = document.createElement('div');\n"
	"    h.textContent = c.title + ' (' + c.unit + ')';\n"
	"    div.className = 'chart';\n"
	"    box.appendChild(h);\n"
	"    box.appendChild(div);\n"
	"    var points = 0, rows = c.rows.map(function (r) {\n"
	"      r.slice(1).forEach(function (v) { if (v !== null) points++; });\n"
	"      return [new Date(r[0])].concat(r.slice(1));\n"
	"    });\n"
	"    div.dataset.points = points;\n"
	"    div.dataset.lines = c.labels.length - 1;\n"
	"    if (!rows.length) { div.textContent = 'no data'; return; }\n"
	"    new Dygraph(div, rows, { labels: c.labels, ylabel: c.unit, legend: 'always',\n"
	"      labelsSeparateLines: true, drawPoints: rows.length < 60, includeZero: true,\n"
	"      xlabel: 'UTC', axes: { x: { axisLabelFormatter: function (d) {\n"
	"        return clock(d).substr(0, 8); }, valueFormatter: function (ms) {\n"
	"        return clock(new Date(ms)); } } } });\n"
	"    drawn++;\n"
	"  });\n"
	"  document.body.dataset.charts = REPORT.charts.length;\n"
	"  document.body.dataset.drawn = drawn;\n"
	"})();\n";

/* What the page holds besides the report's data: dygraphs, and the wake graph's drawing. */
struct page_parts {
	char *js, *css;
	char *wake_svg; /* NULL: none (no wake graph, or not drawn) */
	int wake_edges, wake_left;
};

/*
 * The wake graph's section, where the summary has one: dot's drawing, or why there is none;
 * data-edges and data-left say how many edges it drew and left out.
 */
static void write_wake_graph(FILE *f, const struct page_parts *p)
{
	if (!p->wake_svg)
		return;
	fprintf(f, "<h2>Who wakes whom</h2>\n<p>Pools by container; a box's red is how busy its "
		   "busiest thread was (a whole core: full red); a serial stage is drawn double; "
		   "edges from waker to woken, wider with more wakeups a second.");
	if (p->wake_left)
		fprintf(f, " The %d busiest edges of %d.", p->wake_edges,
			p->wake_edges + p->wake_left);
	fprintf(f, "</p>\n<div id=\"wakegraph\" data-edges=\"%d\" data-left=\"%d\">\n",
		p->wake_edges, p->wake_left);
	fputs(p->wake_svg, f);
	fputs("</div>\n", f);
}

static int write_html(FILE *f, const struct report *r, const struct page_parts *p)
{
	cJSON *root, *list, *one;
	char *json;

	root = cJSON_CreateObject();
	list = root ? cJSON_AddArrayToObject(root, "charts") : NULL;
	if (!list) {
		cJSON_Delete(root);
		return -ENOMEM;
	}
	cJSON_AddStringToObject(root, "folder", r->dir);
	for (size_t i = 0; i < ARRAY_SIZE(charts); i++) {
		one = chart_data(r, &charts[i]);
		if (one)
			cJSON_AddItemToArray(list, one);
	}
	json = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!json)
		return -ENOMEM;
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<title>cgstat run report</title>\n<style>\n",
	      f);
	fputs(p->css, f);
	fputs("\nbody { font-family: sans-serif; margin: 1em 2em; }\n"
	      ".chart { width: 95%; height: 280px; }\n"
	      "h2 { font-size: 1.1em; margin: 1.5em 0 0.3em; }\n</style>\n<script>\n",
	      f);
	fputs(p->js, f);
	fputs("\n</script>\n</head><body>\n<h1>cgstat run report</h1>\n<p id=\"folder\"></p>\n"
	      "<pre id=\"errors\"></pre>\n",
	      f);
	write_wake_graph(f, p);
	fputs("<div id=\"charts\"></div>\n<script>\nvar REPORT = ", f);
	write_script_json(f, json);
	free(json);
	fputs(";\ndocument.getElementById('folder').textContent = REPORT.folder;\n", f);
	fputs(page_script, f);
	fputs("</script>\n</body></html>\n", f);
	return 0;
}

/* Write path with fn; 0, or 1 after saying why not. */
static int write_file(struct report *r, const char *name,
		      int (*fn)(FILE *, struct report *, void *), void *ctx)
{
	char path[4096];
	FILE *f;
	int err, fd;

	snprintf(path, sizeof(path), "%s/%s", r->dir, name);
	/* made anew: no link planted under the name, nor another link to the file, is written */
	fd = file_create(r->dirfd, name, true);
	if (fd < 0) {
		err = -fd;
		goto fail;
	}
	f = fdopen(fd, "w");
	if (!f) {
		err = errno;
		close(fd);
		goto fail;
	}
	err = -fn(f, r, ctx);
	if (!err)
		err = -stdio_flush(f);
	fclose(f);
	if (!err)
		return 0;
fail:
	fputs("cgstat: report: ", r->err);
	message_quote(r->err, path);
	fprintf(r->err, ": %s\n",
		err == ELOOP	? "a symbolic link, which report does not write through"
		: err == EINVAL ? "not a regular file, which report does not replace"
				: strerror(err));
	return 1;
}

static int md_writer(FILE *f, struct report *r, void *ctx)
{
	(void)ctx;
	write_md(f, r);
	return 0;
}

static int html_writer(FILE *f, struct report *r, void *ctx)
{
	return write_html(f, r, ctx);
}

/* The wake graph drawn, where the summary has one: 0, or 1 after saying why it is not. */
static int draw_wake_graph(struct report *r, struct page_parts *p)
{
	int err;

	p->wake_svg = wake_drawing_svg(r->summary, &p->wake_edges, &p->wake_left, &err);
	if (!err)
		return 0;
	fprintf(r->err, "cgstat: report: report.html has no wake graph: %s: %s\n",
		getenv("CGSTAT_DOT") ?: WAKE_DRAWING_DOT,
		err == -ENOENT	 ? "not found (Debian: apt-get install graphviz)"
		: err == -EPROTO ? "failed"
				 : strerror(-err));
	return 1;
}

/* dygraphs, read now so that the page holds it and opens offline. */
static int read_library(struct report *r, struct page_parts *lib)
{
	const char *dir = getenv("CGSTAT_DYGRAPHS_DIR");
	char path[4096];
	int err;

	if (!dir || !*dir)
		dir = REPORT_DYGRAPHS_DIR;
	snprintf(path, sizeof(path), "%s/dygraph.min.js", dir);
	lib->js = text_read_file(path, NULL, &err);
	if (lib->js) {
		snprintf(path, sizeof(path), "%s/dygraph.min.css", dir);
		lib->css = text_read_file(path, NULL, &err);
	}
	if (lib->js && lib->css)
		return 0;
	fputs("cgstat: report: ", r->err);
	message_quote(r->err, path);
	fprintf(r->err,
		": %s; report.html needs dygraphs (Debian: apt-get install libjs-dygraphs)\n",
		strerror(-err));
	return 1;
}

int report_main(int argc, char **argv, FILE *err)
{
	struct report r = { .err = err };
	struct page_parts lib = {};
	int ret = 0, i;
	double start;

	if (argc != 2 || argv[1][0] == '-') {
		fputs("Usage: cgstat report DIR\n", err);
		return 2;
	}
	r.dir = argv[1];
	r.dirfd = folder_open(r.dir, false, NULL);
	if (r.dirfd < 0) {
		fputs("cgstat: report: ", err);
		message_quote(err, r.dir);
		fprintf(err, ": %s\n", strerror(-r.dirfd));
		return 1;
	}
	read_inputs(&r);
	for (i = 0; i < NR_FILES && !r.tables[i]; i++)
		;
	if (i == NR_FILES && !r.summary) {
		fprintf(err, "cgstat: report: nothing in the folder could be read\n");
		close(r.dirfd);
		return 1;
	}
	start = json_number(cJSON_GetObjectItemCaseSensitive(r.summary, "measurement"),
			    "startEpochMillis");
	/* 0, as without one, where it is no time (NaN, below 0, past 2^64: undefined to convert) */
	r.start_ms = start >= 0 && start < 1.8e19 ? (uint64_t)start : 0;
	ret |= write_file(&r, "report.md", md_writer, NULL);
	if (read_library(&r, &lib)) {
		ret = 1;
	} else {
		ret |= draw_wake_graph(&r, &lib);
		ret |= write_file(&r, "report.html", html_writer, &lib);
	}
	free(lib.js);
	free(lib.css);
	free(lib.wake_svg);
	for (i = 0; i < NR_FILES; i++)
		csv_table_free(r.tables[i]);
	cJSON_Delete(r.summary);
	close(r.dirfd);
	return ret;
}
