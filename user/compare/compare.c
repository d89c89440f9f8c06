// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "compare/compare.h"
#include "lib/files.h"
#include "lib/hashtab.h"
#include "lib/json_util.h"
#include "lib/message.h"
#include "compare/stats.h"
#include "lib/text.h"

#define ALPHA 0.05
#define LEVEL 0.95

/* The pseudo-container that holds the host's figures ("host" could be a container's label). */
#define HOST_LABEL "(host)"

enum cmp_format {
	CMP_TEXT,
	CMP_CSV,
	CMP_JSON,
	CMP_MD
};

/* One figure of one container, over the runs of both sides. */
struct series {
	struct hash_node node;
	struct series *next; /* first-seen order */
	char *container;
	char *metric;
	double *values[2];
	int n[2], cap[2];
	bool listed; /* given its row */
};

/* What one side's figure says, and the two sides against each other. */
struct side_stats {
	int n;
	double median, lo, hi;
	double mean; /* the direction of a change where both medians are 0 */
	bool ci;     /* lo and hi hold the interval: enough runs for one */
};

struct row {
	const struct series *s;
	struct side_stats side[2];
	double change; /* %, NaN when side A's median is 0 or a side is empty */
	double p;      /* NaN when a side is empty */
};

struct comparison {
	struct hash_table table;
	struct series *first, *last;
	char **dirs[2];
	int nr_dirs[2];
};

static bool series_is(const struct hash_node *n, const void *key)
{
	const struct series *s = container_of(n, struct series, node);
	const char *const *k = key;

	return !strcmp(s->container, k[0]) && !strcmp(s->metric, k[1]);
}

static uint64_t series_hash(const char *container, const char *metric)
{
	return hash_string(container) * 31 + hash_string(metric);
}

static struct series *series_get(struct comparison *c, const char *container, const char *metric)
{
	const char *key[2] = { container, metric };
	uint64_t hash = series_hash(container, metric);
	struct hash_node *n;
	struct series *s;

	n = hash_table_find(&c->table, hash, series_is, key);
	if (n)
		return container_of(n, struct series, node);
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->container = strdup(container);
	s->metric = strdup(metric);
	if (!s->container || !s->metric) {
		free(s->container);
		free(s->metric);
		free(s);
		return NULL;
	}
	hash_table_add(&c->table, &s->node, hash);
	if (c->last)
		c->last->next = s;
	else
		c->first = s;
	c->last = s;
	return s;
}

static int series_add(struct series *s, int side, double value)
{
	double *grown;

	if (s->n[side] == s->cap[side]) {
		s->cap[side] = s->cap[side] ? 2 * s->cap[side] : 8;
		grown = realloc(s->values[side], s->cap[side] * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		s->values[side] = grown;
	}
	s->values[side][s->n[side]++] = value;
	return 0;
}

/* Every finite number of obj (one container's figures) as one run's values on side. */
static int add_figures(struct comparison *c, int side, const char *container, const cJSON *obj)
{
	const cJSON *item;
	struct series *s;

	cJSON_ArrayForEach(item, obj)
	{
		if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble))
			continue;
		s = series_get(c, container, item->string);
		if (!s || series_add(s, side, item->valuedouble))
			return -ENOMEM;
	}
	return 0;
}

/*
 * One run's container-summary.json into side. A folder without one, or with one that is not
 * whole JSON (a run that was killed), is said on err and left out: 0, or -ENOMEM.
 */
static int add_run(struct comparison *c, int side, const char *dir, FILE *err)
{
	char path[4096];
	const cJSON *containers, *obj;
	cJSON *root;
	char *text;
	int ret, dirfd;

	snprintf(path, sizeof(path), "%s/container-summary.json", dir);
	dirfd = folder_open(dir, false, NULL);
	if (dirfd >= 0) {
		text = text_read_at(dirfd, "container-summary.json", NULL, &ret);
		close(dirfd);
	} else {
		text = NULL;
		ret = dirfd;
	}
	if (!text) {
		if (ret == -ENOMEM)
			return ret;
		fputs("cgstat: compare: ", err);
		message_quote(err, path);
		fprintf(err, ": %s; the run is left out\n", strerror(-ret));
		return 0;
	}
	root = cJSON_Parse(text);
	free(text);
	containers = cJSON_GetObjectItemCaseSensitive(root, "containers");
	if (!cJSON_IsObject(containers)) {
		fputs("cgstat: compare: ", err);
		message_quote(err, path);
		fputs(": not a whole summary (was the run cut short?); the run is left out\n", err);
		cJSON_Delete(root);
		return 0;
	}
	ret = 0;
	cJSON_ArrayForEach(obj, containers)
	{
		if (cJSON_IsObject(obj) && (ret = add_figures(c, side, obj->string, obj)))
			break;
	}
	obj = cJSON_GetObjectItemCaseSensitive(root, "host");
	if (!ret && cJSON_IsObject(obj))
		ret = add_figures(c, side, HOST_LABEL, obj);
	cJSON_Delete(root);
	c->nr_dirs[side] += !ret;
	return ret;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static void side_of(struct side_stats *st, double *values, int n)
{
	*st = (struct side_stats){ .n = n, .median = NAN };
	if (!n)
		return;
	qsort(values, n, sizeof(*values), cmp_double);
	st->median = stats_median(values, n);
	st->mean = 0;
	for (int i = 0; i < n; i++)
		st->mean += values[i] / n;
	st->ci = !stats_median_ci(values, n, LEVEL, &st->lo, &st->hi);
}

static void row_of(struct row *r, const struct series *s)
{
	r->s = s;
	r->p = stats_mann_whitney_p(s->values[0], s->n[0], s->values[1], s->n[1]);
	side_of(&r->side[0], s->values[0], s->n[0]);
	side_of(&r->side[1], s->values[1], s->n[1]);
	r->change = r->side[0].median ? 100 * (r->side[1].median - r->side[0].median) /
						fabs(r->side[0].median)
				      : NAN;
}

static bool significant(const struct row *r)
{
	return !isnan(r->p) && r->p < ALPHA;
}

/* "1.234 ± 2%": the median and the interval's wider half as a share of it; "±∞" without one. */
static void side_cell(char *buf, size_t len, const struct side_stats *st)
{
	double half;

	if (!st->n) {
		snprintf(buf, len, "-");
		return;
	}
	if (!st->ci) {
		snprintf(buf, len, "%.4g ± ∞", st->median);
		return;
	}
	half = fmax(st->median - st->lo, st->hi - st->median);
	if (st->median)
		snprintf(buf, len, "%.4g ± %.0f%%", st->median, 100 * half / fabs(st->median));
	else
		snprintf(buf, len, "%.4g ± %.4g", st->median, half);
}

static void change_cell(char *buf, size_t len, const struct row *r)
{
	if (!r->side[0].n || !r->side[1].n) {
		snprintf(buf, len, "(only in %s)", r->side[0].n ? "A" : "B");
		return;
	}
	if (!significant(r))
		snprintf(buf, len, "~ (p=%.3f n=%d+%d)", r->p, r->side[0].n, r->side[1].n);
	else if (isnan(r->change) && r->side[1].median != 0)
		/* from a median of 0: no ratio, the direction */
		snprintf(buf, len, "%s (p=%.3f n=%d+%d)", r->side[1].median > 0 ? "+inf" : "-inf",
			 r->p, r->side[0].n, r->side[1].n);
	else if (isnan(r->change))
		/* both medians 0: the runs that were not 0 moved, which way the means say */
		snprintf(buf, len, "%s, medians 0 (p=%.3f n=%d+%d)",
			 r->side[1].mean > r->side[0].mean ? "higher" : "lower", r->p, r->side[0].n,
			 r->side[1].n);
	else
		snprintf(buf, len, "%+.2f%% (p=%.3f n=%d+%d)", r->change, r->p, r->side[0].n,
			 r->side[1].n);
}

/* Characters a terminal shows for s: bytes that do not continue a UTF-8 sequence. */
#define CELL 96

static int display_width(const char *s)
{
	int w = 0;

	for (; *s; s++)
		w += (*s & 0xc0) != 0x80;
	return w;
}

/* s, which may come from a file (a summary's key), as a terminal shows it, padded to width */
static void pad(FILE *f, const char *s, int width)
{
	char shown[4 * CELL];

	message_escape_buf(shown, sizeof(shown), s);
	fputs(shown, f);
	for (int w = display_width(shown); w < width; w++)
		fputc(' ', f);
}

static void write_text(FILE *f, const struct row *rows, int nr, const struct comparison *c)
{
	int widths[3] = { 6, 1, 1 }, i, j;
	char a[CELL], b[CELL], ch[CELL], shown[4 * CELL];
	bool few_for_ci = false, few_for_p = false;
	const char *container = NULL;

	for (i = 0; i < 2; i++) {
		fputs(i ? "B:" : "A:", f);
		for (j = 0; j < c->nr_dirs[i]; j++) {
			fputc(' ', f);
			message_quote(f, c->dirs[i][j]);
		}
		fputc('\n', f);
	}
	for (i = 0; i < nr; i++) {
		side_cell(a, sizeof(a), &rows[i].side[0]);
		side_cell(b, sizeof(b), &rows[i].side[1]);
		message_escape_buf(shown, sizeof(shown), rows[i].s->metric);
		widths[0] = fmax(widths[0], display_width(shown));
		widths[1] = fmax(widths[1], display_width(a));
		widths[2] = fmax(widths[2], display_width(b));
	}
	for (i = 0; i < nr; i++) {
		const struct row *r = &rows[i];

		if (!container || strcmp(container, r->s->container)) {
			container = r->s->container;
			fputs("\ncontainer ", f);
			message_quote(f, container);
			fputc('\n', f);
			pad(f, "", widths[0] + 2);
			pad(f, "A", widths[1] + 2);
			pad(f, "B", widths[2] + 2);
			fputs("change\n", f);
		}
		side_cell(a, sizeof(a), &r->side[0]);
		side_cell(b, sizeof(b), &r->side[1]);
		change_cell(ch, sizeof(ch), r);
		pad(f, r->s->metric, widths[0] + 2);
		pad(f, a, widths[1] + 2);
		pad(f, b, widths[2] + 2);
		fprintf(f, "%s\n", ch);
		few_for_ci |= (r->side[0].n && !r->side[0].ci) || (r->side[1].n && !r->side[1].ci);
		few_for_p |= r->side[0].n && r->side[1].n &&
			     stats_mann_whitney_min_p(r->side[0].n, r->side[1].n) >= ALPHA;
	}
	if (few_for_ci || few_for_p)
		fputc('\n', f);
	if (few_for_ci)
		fprintf(f,
			"± ∞: need at least 6 runs a side for a confidence interval at %.0f %%\n",
			100 * LEVEL);
	if (few_for_p)
		fprintf(f, "~ by too few runs: below 4 a side (4+4) no change can reach p < %.2f\n",
			ALPHA);
}

static void csv_side(FILE *f, const struct side_stats *st)
{
	csv_sep(f);
	csv_u64(f, st->n);
	/* the interval to the median's own digits: 3 decimals wrote 0.0004's as 0.000 to 0.001 */
	csv_sep(f);
	fprintf(f, "%.6g", st->median);
	csv_sep(f);
	if (st->ci)
		fprintf(f, "%.6g", st->lo);
	csv_sep(f);
	if (st->ci)
		fprintf(f, "%.6g", st->hi);
}

static void write_csv(FILE *f, const struct row *rows, int nr)
{
	static const char *const header[] = {
		"container", "metric", "nA",	  "medianA",	   "ciLowA", "ciHighA",	    "nB",
		"medianB",   "ciLowB", "ciHighB", "changePercent", "p",	     "significant",
	};

	csv_fields(f, header, ARRAY_SIZE(header));
	csv_end_row(f);
	for (int i = 0; i < nr; i++) {
		const struct row *r = &rows[i];

		csv_field(f, r->s->container);
		csv_sep(f);
		csv_field(f, r->s->metric);
		csv_side(f, &r->side[0]);
		csv_side(f, &r->side[1]);
		csv_sep(f);
		csv_number(f, !isnan(r->change), r->change, 3);
		csv_sep(f);
		if (!isnan(r->p))
			fprintf(f, "%.6f", r->p);
		csv_sep(f);
		fputs(significant(r) ? "true" : "false", f);
		csv_end_row(f);
	}
}

static cJSON *json_side(const struct side_stats *st)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	json_add_number(o, "n", st->n);
	if (st->n)
		cJSON_AddNumberToObject(o, "median", st->median);
	if (st->ci) {
		cJSON_AddNumberToObject(o, "ciLow", st->lo);
		cJSON_AddNumberToObject(o, "ciHigh", st->hi);
	}
	return o;
}

static int write_json(FILE *f, const struct row *rows, int nr, const struct comparison *c)
{
	cJSON *root, *list, *o;
	char *text;
	int i, j;

	root = cJSON_CreateObject();
	if (!root)
		return -ENOMEM;
	cJSON_AddNumberToObject(root, "alpha", ALPHA);
	cJSON_AddNumberToObject(root, "confidenceLevel", LEVEL);
	for (i = 0; i < 2; i++) {
		list = cJSON_AddArrayToObject(root, i ? "b" : "a");
		for (j = 0; list && j < c->nr_dirs[i]; j++)
			cJSON_AddItemToArray(list, cJSON_CreateString(c->dirs[i][j]));
	}
	list = cJSON_AddArrayToObject(root, "rows");
	for (i = 0; list && i < nr; i++) {
		const struct row *r = &rows[i];

		o = cJSON_CreateObject();
		if (!o)
			break;
		cJSON_AddItemToArray(list, o);
		cJSON_AddStringToObject(o, "container", r->s->container);
		cJSON_AddStringToObject(o, "metric", r->s->metric);
		cJSON_AddItemToObject(o, "a", json_side(&r->side[0]));
		cJSON_AddItemToObject(o, "b", json_side(&r->side[1]));
		if (!isnan(r->change))
			cJSON_AddNumberToObject(o, "changePercent", r->change);
		if (!isnan(r->p))
			cJSON_AddNumberToObject(o, "p", r->p);
		cJSON_AddBoolToObject(o, "significant", significant(r));
	}
	text = cJSON_Print(root);
	cJSON_Delete(root);
	if (!text)
		return -ENOMEM;
	fprintf(f, "%s\n", text);
	free(text);
	return 0;
}

static void write_md(FILE *f, const struct row *rows, int nr)
{
	char a[CELL], b[CELL], ch[CELL];
	const char *container = NULL;

	for (int i = 0; i < nr; i++) {
		const struct row *r = &rows[i];

		if (!container || strcmp(container, r->s->container)) {
			container = r->s->container;
			fputs(i ? "\n### " : "### ", f);
			md_field(f, container);
			fputs("\n\n| figure | A | B | change |\n| --- | --- | --- | --- |\n", f);
		}
		side_cell(a, sizeof(a), &r->side[0]);
		side_cell(b, sizeof(b), &r->side[1]);
		change_cell(ch, sizeof(ch), r);
		fputs("| ", f);
		md_field(f, r->s->metric);
		fprintf(f, " | %s | %s | %s |\n", a, b, ch);
	}
}

static int usage(FILE *err, const char *why, const char *what)
{
	fprintf(err, "cgstat: compare: %s", why);
	if (what)
		message_quote(err, what);
	fputs("\nUsage: cgstat compare [--format text|csv|json|md] DIR... vs DIR...\n", err);
	return 2;
}

static int parse_format(const char *arg, enum cmp_format *format)
{
	static const char *const names[] = { "text", "csv", "json", "md" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if (!strcmp(arg, names[i])) {
			*format = (enum cmp_format)i;
			return 0;
		}
	}
	return -EINVAL;
}

static void comparison_free(struct comparison *c)
{
	struct series *s, *next;

	for (s = c->first; s; s = next) {
		next = s->next;
		free(s->container);
		free(s->metric);
		free(s->values[0]);
		free(s->values[1]);
		free(s);
	}
	hash_table_fini(&c->table);
	free(c->dirs[0]);
	free(c->dirs[1]);
}

int compare_main(int argc, char **argv, FILE *out, FILE *err)
{
	enum cmp_format format = CMP_TEXT;
	struct comparison c = {};
	struct row *rows = NULL;
	const struct series *s;
	int i, side = 0, nr = 0, ret = 1;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (strcmp(argv[i], "-f") && strcmp(argv[i], "--format"))
			return usage(err, "unknown option ", argv[i]);
		if (i + 1 == argc)
			return usage(err, "--format needs an argument", NULL);
		if (parse_format(argv[++i], &format))
			return usage(err, "--format: not one of text, csv, json, md: ", argv[i]);
	}
	/* the usage first, so that a wrong command line reads no run */
	for (int j = i, vs = 0; j <= argc; j++) {
		if (j < argc && !strcmp(argv[j], "vs"))
			vs++;
		else if (j == argc && vs != 1)
			return usage(err,
				     vs ? "\"vs\" is given twice"
					: "no \"vs\" between the two sides",
				     NULL);
	}
	if (hash_table_init(&c.table, 256))
		goto nomem;
	c.dirs[0] = calloc(argc, sizeof(char *));
	c.dirs[1] = calloc(argc, sizeof(char *));
	if (!c.dirs[0] || !c.dirs[1])
		goto nomem;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "vs")) {
			side = 1;
			continue;
		}
		c.dirs[side][c.nr_dirs[side]] = argv[i];
		if (add_run(&c, side, argv[i], err))
			goto nomem;
	}
	for (side = 0; side < 2; side++) {
		if (!c.nr_dirs[side]) {
			fprintf(err, "cgstat: compare: side %s has no run that could be read\n",
				side ? "B" : "A");
			goto out;
		}
	}
	for (s = c.first; s; s = s->next)
		nr++;
	rows = calloc(nr ? nr : 1, sizeof(*rows));
	if (!rows)
		goto nomem;
	/* grouped by container, in the order containers and figures were first seen */
	nr = 0;
	for (struct series *first = c.first; first; first = first->next) {
		for (struct series *t = first; t && !first->listed; t = t->next) {
			if (!t->listed && !strcmp(t->container, first->container)) {
				row_of(&rows[nr++], t);
				t->listed = t != first;
			}
		}
		first->listed = true;
	}
	switch (format) {
	case CMP_TEXT:
		write_text(out, rows, nr, &c);
		break;
	case CMP_CSV:
		write_csv(out, rows, nr);
		break;
	case CMP_JSON:
		if (write_json(out, rows, nr, &c))
			goto nomem;
		break;
	case CMP_MD:
		write_md(out, rows, nr);
		break;
	}
	ret = stdio_flush(out) ? 1 : 0;
	if (ret)
		fputs("cgstat: compare: cannot write the comparison\n", err);
	goto out;
nomem:
	fputs("cgstat: compare: out of memory\n", err);
	ret = 1;
out:
	free(rows);
	comparison_free(&c);
	return ret;
}
