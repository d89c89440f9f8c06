// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include "outputs/metrics.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include "core/derived.h"
#include "core/totals.h"
#include "lib/util.h"
#include "lib/utf8.h"

enum metric_kind {
	METRIC_COUNTER, /* the figure's amount summed over every interval since the start */
	METRIC_GAUGE,	/* the figure in the last interval the container had a record in */
};

/*
 * One sample of a container: the family it belongs to, the labels beside container that tell
 * it from the family's other samples, and the figure it is made of. A family's samples are
 * adjacent, its help and kind given by the first. A new figure on /metrics is one line here.
 */
struct metric_def {
	const char *family; /* without _total; ends in _seconds when the figure is a time */
	enum metric_kind kind;
	const char *labels; /* k="v" pairs, or NULL */
	enum cg_figure figure;
	const char *help;
};

static const struct metric_def metric_defs[] = {
	{ "cgstat_cpu_seconds", METRIC_COUNTER, NULL, CG_FIG_ONCPU_MILLIS,
	  "Time the container's threads ran on a CPU (what cpu.stat usage_usec counts)" },
	{ "cgstat_runqueue_wait_seconds", METRIC_COUNTER, NULL, CG_FIG_RUNQ_MILLIS,
	  "Time the container's threads waited runnable in a run queue" },
	{ "cgstat_offcpu_seconds", METRIC_COUNTER, "state=\"sleep\"", CG_FIG_SLEEP_MILLIS,
	  "Time the container's threads were off CPU: sleeping (S) or blocked (D)" },
	{ "cgstat_offcpu_seconds", METRIC_COUNTER, "state=\"blocked\"", CG_FIG_BLOCKED_MILLIS },
	{ "cgstat_stolen_seconds", METRIC_COUNTER, NULL, CG_FIG_STOLEN_MILLIS,
	  "Time a hypervisor or interrupts took while the container's threads were on CPU" },
	{ "cgstat_context_switches", METRIC_COUNTER, "kind=\"voluntary\"", CG_FIG_VCSW,
	  "Context switches of the container's threads: voluntary (they blocked or slept) or "
	  "involuntary (preempted)" },
	{ "cgstat_context_switches", METRIC_COUNTER, "kind=\"involuntary\"", CG_FIG_IVCSW },
	{ "cgstat_preemptions", METRIC_COUNTER, "by=\"same_cgroup\"", CG_FIG_PREEMPTED_SAME,
	  "Involuntary switches by what took the CPU: a thread of the same cgroup, of another, "
	  "or a kernel thread" },
	{ "cgstat_preemptions", METRIC_COUNTER, "by=\"other_cgroup\"", CG_FIG_PREEMPTED_OTHER },
	{ "cgstat_preemptions", METRIC_COUNTER, "by=\"kernel\"", CG_FIG_PREEMPTED_KERNEL },
	{ "cgstat_migrations", METRIC_COUNTER, NULL, CG_FIG_MIGRATIONS,
	  "Moves of the container's threads to another CPU" },
	{ "cgstat_runqueue_waits", METRIC_COUNTER, NULL, CG_FIG_RUNQ_WAITS,
	  "Run-queue waits of the container's threads, each ended by a switch-in" },
	{ "cgstat_page_faults", METRIC_COUNTER, "kind=\"minor\"", CG_FIG_MINOR_FAULTS,
	  "Page faults of the container's threads: minor (no I/O) or major (waited for I/O)" },
	{ "cgstat_page_faults", METRIC_COUNTER, "kind=\"major\"", CG_FIG_MAJOR_FAULTS },
	{ "cgstat_cfs_periods", METRIC_COUNTER, NULL, CG_FIG_PERIODS,
	  "CFS bandwidth periods with runnable threads (cpu.stat nr_periods)" },
	{ "cgstat_cfs_throttled_periods", METRIC_COUNTER, NULL, CG_FIG_THROTTLED_PERIODS,
	  "CFS bandwidth periods the quota ran out in (cpu.stat nr_throttled)" },
	{ "cgstat_cfs_throttled_seconds", METRIC_COUNTER, NULL, CG_FIG_THROTTLED_MILLIS,
	  "Time the container was throttled (cpu.stat throttled_usec)" },
	{ "cgstat_pressure_seconds", METRIC_COUNTER, "resource=\"cpu\",kind=\"some\"",
	  CG_FIG_CPU_PRESSURE_SOME_MILLIS,
	  "Stall time of the container's pressure files (total= of cpu, memory and io.pressure)" },
	{ "cgstat_pressure_seconds", METRIC_COUNTER, "resource=\"cpu\",kind=\"full\"",
	  CG_FIG_CPU_PRESSURE_FULL_MILLIS },
	{ "cgstat_pressure_seconds", METRIC_COUNTER, "resource=\"memory\",kind=\"some\"",
	  CG_FIG_MEMORY_PRESSURE_SOME_MILLIS },
	{ "cgstat_pressure_seconds", METRIC_COUNTER, "resource=\"io\",kind=\"some\"",
	  CG_FIG_IO_PRESSURE_SOME_MILLIS },
	{ "cgstat_pressure_seconds", METRIC_COUNTER, "resource=\"io\",kind=\"full\"",
	  CG_FIG_IO_PRESSURE_FULL_MILLIS },
	{ "cgstat_threads", METRIC_GAUGE, NULL, CG_FIG_TASKS,
	  "Threads in the container at the end of the last interval" },
	{ "cgstat_busiest_thread_cores", METRIC_GAUGE, NULL, CG_FIG_BUSIEST_THREAD_CORES,
	  "On-CPU time of the container's busiest thread over the last interval" },
};

#define NR_METRIC_DEFS ARRAY_SIZE(metric_defs)
_Static_assert(NR_METRIC_DEFS <= 64, "a container's valid bits are one uint64_t");

/*
 * The classic histogram's edges: every third power of two from 4.096 us to 1.07 s. Powers of
 * two are edges of cgstat's own log-linear buckets, so each count is exact (waits below the
 * edge), where round decimal edges would cut buckets in two.
 */
static const unsigned int hist_edge_shifts[] = { 12, 15, 18, 21, 24, 27, 30 };
#define NR_HIST_EDGES ARRAY_SIZE(hist_edge_shifts)

struct metrics_container {
	/*
	 * every interval's amounts since the start, a counter or cgroup file valid once it was;
	 * in the metrics' table by the name it owns
	 */
	struct totals_label totals;
	char *label;	      /* the name as a label value, escaped once for all its samples */
	uint64_t retired_ms;  /* 0 while its cgroup is there */
	bool in_last;	      /* had a record in the last interval: its gauges are current */
	uint64_t gauge_valid; /* bit i: metric_defs[i], a gauge, has a value */
	double gauge[NR_METRIC_DEFS];
	uint64_t hist_below[NR_HIST_EDGES]; /* waits below each edge, summed */
	uint64_t hist_count;		    /* waits in the histogram, all lengths */
};

struct metrics {
	struct totals_table containers; /* of struct metrics_container */
	const char *const *event_names;
	int nr_events;
	bool have_interval;
	struct cg_interval last; /* its records and disks not kept: see the snapshot */
	uint64_t drain_ns;
	struct cg_host_disk *disks; /* the last interval's, owned */
};

struct metrics_snapshot {
	int refs;
	int nr_containers;
	/* labels owned; names NULL (the page needs only the labels); nodes unused */
	struct metrics_container *containers;
	char stamp[2][32]; /* put_stamp()'s text: [0] the text format's, [1] OpenMetrics' */
	const char *const *event_names;
	int nr_events;
	bool have_interval;
	struct cg_interval last;
	uint64_t drain_ns;
	struct cg_host_disk *disks;
};

struct metrics *metrics__new(const char *const *event_names, int nr_events)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (!m || totals_table_init(&m->containers, 64)) {
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	m->event_names = event_names;
	m->nr_events = nr_events < CG_MAX_EVENTS ? nr_events : CG_MAX_EVENTS;
	return m;
}

/*
 * A label value as the formats want it: backslash, double quote and newline escaped, and any
 * byte that is not UTF-8 (a cgroup path is any bytes) as U+FFFD, which both formats require.
 */
static void put_label_value(FILE *f, const char *v)
{
	const unsigned char *p = (const unsigned char *)v, *run;
	size_t n;

	for (;;) {
		/* what stands for itself goes out a run at a time */
		run = p;
		while (*p && *p != '\\' && *p != '"' && *p != '\n' && (n = utf8_sequence(p)))
			p += n;
		fwrite(run, 1, p - run, f);
		if (!*p)
			return;
		if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\\' || *p == '"')
			fprintf(f, "\\%c", *p);
		else
			fputs("\xef\xbf\xbd", f);
		p++;
	}
}

/* A value escaped by put_label_value(), as a string of its own; NULL when out of memory. */
static char *label_escaped(const char *v)
{
	char *text = NULL;
	size_t len;
	FILE *f;

	f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	put_label_value(f, v);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

static struct metrics_container *container_of_totals(struct totals_label *l)
{
	return l ? container_of(l, struct metrics_container, totals) : NULL;
}

static void container_free(struct metrics *m, struct metrics_container *c)
{
	totals_table_unlink(&m->containers, &c->totals);
	free((char *)c->totals.name);
	free(c->label);
	free(c);
}

void metrics__free(struct metrics *m)
{
	if (!m)
		return;
	while (m->containers.first)
		container_free(m, container_of_totals(m->containers.first));
	totals_table_fini(&m->containers);
	free(m->disks);
	free(m);
}

static struct metrics_container *container_get(struct metrics *m, const char *name)
{
	struct metrics_container *c = container_of_totals(totals_table_find(&m->containers, name));
	char *owned;

	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	owned = strdup(name);
	if (c)
		c->label = label_escaped(name);
	if (!c || !owned || !c->label) {
		free(owned);
		if (c)
			free(c->label);
		free(c);
		return NULL;
	}
	totals_label_init(&c->totals, owned, TOTALS_VALID_ANY);
	totals_table_link(&m->containers, &c->totals);
	return c;
}

static void container_add(struct metrics_container *c, const struct cg_record *r,
			  const struct cg_interval *iv, int nr_events)
{
	uint64_t below = 0;
	size_t i;
	int b = 0;

	c->retired_ms = 0; /* a cgroup made again at the same path goes on with the sums */
	c->in_last = true;
	totals_label_add(&c->totals, r, nr_events, TOTALS_VALID_ANY);
	for (i = 0; i < NR_METRIC_DEFS; i++) {
		const struct metric_def *d = &metric_defs[i];

		if (d->kind == METRIC_GAUGE &&
		    record_figure(r, iv->interval_ns, d->figure, &c->gauge[i]))
			c->gauge_valid |= 1ULL << i;
	}
	for (i = 0; i < NR_HIST_EDGES; i++) {
		for (; b < CG_HIST_BUCKETS && cg_hist_lower(b) < (1ULL << hist_edge_shifts[i]); b++)
			below += r->runq_hist.bucket[b];
		c->hist_below[i] += below;
	}
	c->hist_count += r->runq_hist.count;
}

/* Before an interval is added: no gauge is current, and the retired past their grace go. */
static void containers_expire(struct metrics *m, uint64_t now_ms)
{
	struct metrics_container *c, *next;

	for (c = container_of_totals(m->containers.first); c; c = next) {
		next = container_of_totals(c->totals.next);
		c->in_last = false;
		if (c->retired_ms && now_ms - c->retired_ms > METRICS_GRACE_MS)
			container_free(m, c);
	}
}

int metrics__add(struct metrics *m, const struct cg_interval *iv, uint64_t drain_ns)
{
	struct metrics_container *c;
	struct cg_host_disk *disks = NULL;
	int i;

	if (iv->host.nr_disks) {
		disks = calloc(iv->host.nr_disks, sizeof(*disks));
		if (!disks)
			return -ENOMEM;
		memcpy(disks, iv->host.disks, iv->host.nr_disks * sizeof(*disks));
	}
	containers_expire(m, iv->epoch_ms);
	for (i = 0; i < iv->nr_records; i++) {
		c = container_get(m, iv->records[i].name);
		if (!c) {
			free(disks);
			return -ENOMEM;
		}
		container_add(c, &iv->records[i], iv, m->nr_events);
	}
	free(m->disks);
	m->disks = disks;
	m->last = *iv;
	m->last.records = NULL;
	m->last.nr_records = 0;
	m->last.host.disks = disks;
	m->drain_ns = drain_ns;
	m->have_interval = true;
	return 0;
}

void metrics__retire(struct metrics *m, const char *name, uint64_t now_ms)
{
	struct metrics_container *c = container_of_totals(totals_table_find(&m->containers, name));

	if (c && !c->retired_ms)
		c->retired_ms = now_ms ? now_ms : 1;
}

/* c into dst, a snapshot's: linked nowhere, its name not kept (the page needs the label). */
static int container_copy(struct metrics_container *dst, const struct metrics_container *c)
{
	*dst = *c;
	dst->totals.node = (struct hash_node){};
	dst->totals.prev = dst->totals.next = NULL;
	dst->totals.name = NULL;
	dst->label = strdup(c->label);
	return dst->label ? 0 : -ENOMEM;
}

static int container_cmp(const void *a, const void *b)
{
	return strcmp(((const struct metrics_container *)a)->label,
		      ((const struct metrics_container *)b)->label);
}

struct metrics_snapshot *metrics__snapshot(const struct metrics *m)
{
	struct metrics_snapshot *s = calloc(1, sizeof(*s));
	const struct totals_label *l;

	if (!s)
		goto fail;
	s->refs = 1;
	s->event_names = m->event_names;
	s->nr_events = m->nr_events;
	s->have_interval = m->have_interval;
	s->last = m->last;
	s->drain_ns = m->drain_ns;
	snprintf(s->stamp[0], sizeof(s->stamp[0]), " %" PRIu64 "\n", s->last.epoch_ms);
	snprintf(s->stamp[1], sizeof(s->stamp[1]), " %" PRIu64 ".%03" PRIu64 "\n",
		 s->last.epoch_ms / 1000, s->last.epoch_ms % 1000);
	s->containers = calloc(m->containers.nr ? m->containers.nr : 1, sizeof(*s->containers));
	if (!s->containers)
		goto fail;
	if (m->last.host.nr_disks) {
		s->disks = calloc(m->last.host.nr_disks, sizeof(*s->disks));
		if (!s->disks)
			goto fail;
		memcpy(s->disks, m->disks, m->last.host.nr_disks * sizeof(*s->disks));
	}
	s->last.host.disks = s->disks;
	for (l = m->containers.first; l; l = l->next) {
		/* counted first: the snapshot's put frees the labels of the copies made */
		s->nr_containers++;
		if (container_copy(&s->containers[s->nr_containers - 1],
				   container_of(l, struct metrics_container, totals)))
			goto fail;
	}
	/* scrapes of an unchanged set list it in the same order */
	qsort(s->containers, s->nr_containers, sizeof(*s->containers), container_cmp);
	return s;
fail:
	metrics_snapshot__put(s);
	errno = ENOMEM;
	return NULL;
}

struct metrics_snapshot *metrics_snapshot__get(struct metrics_snapshot *s)
{
	if (s)
		__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
	return s;
}

void metrics_snapshot__put(struct metrics_snapshot *s)
{
	int i;

	if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	for (i = 0; s->containers && i < s->nr_containers; i++)
		free(s->containers[i].label);
	free(s->containers);
	free(s->disks);
	free(s);
}

/*
 * v in decimal, at least width digits (zeros in front). A page of 1,000 containers has 30,000
 * samples, and their values and names by fprintf() were most of a scrape's cost.
 */
static void put_digits(FILE *f, uint64_t v, int width)
{
	char buf[24], *p = buf + sizeof(buf);

	do {
		*--p = '0' + v % 10;
		v /= 10;
	} while (v || buf + sizeof(buf) - p < width);
	fwrite(p, 1, buf + sizeof(buf) - p, f);
}

/* Nanoseconds as seconds, exactly: a counter's digits never round. */
static void put_seconds(FILE *f, uint64_t ns)
{
	put_digits(f, ns / NSEC_PER_SEC, 1);
	fputc('.', f);
	put_digits(f, ns % NSEC_PER_SEC, 9);
}

/*
 * The end of a sample line: the time its value was true, the end of the interval it comes from,
 * then the newline. Without it Prometheus would stamp the value with its scrape time, and with
 * scrapes as frequent as intervals, a window of rate() would hold one drain more or less than
 * its length whenever the two clocks' phases come close (a quarter off over 5 s); stamped with
 * the interval's end, rate() is the intervals' own average. A value scraped twice keeps its
 * stamp, which Prometheus takes as the same sample. Milliseconds in the text format, seconds in
 * OpenMetrics.
 */
static void put_stamp(FILE *f, bool om, const struct metrics_snapshot *s)
{
	fputs(s->stamp[om], f);
}

/* The HELP, TYPE and (OpenMetrics) UNIT lines of a family. */
static void put_family(FILE *f, bool om, const char *family, const char *type, const char *unit,
		       const char *help)
{
	const char *total = !om && !strcmp(type, "counter") ? "_total" : "";

	fprintf(f, "# HELP %s%s %s\n", family, total, help);
	fprintf(f, "# TYPE %s%s %s\n", family, total, type);
	if (om && unit)
		fprintf(f, "# UNIT %s %s\n", family, unit);
}

/*
 * A sample's name and labels, up to its value: name{container="...",labels,key="value"}, the
 * last two where given (value escaped: it comes from outside, as the container's name does;
 * the container's label comes escaped, from the snapshot).
 */
static void put_sample(FILE *f, const char *name, const char *suffix, const char *container,
		       const char *labels, const char *key, const char *value)
{
	fputs(name, f);
	fputs(suffix, f);
	fputs("{container=\"", f);
	fputs(container, f);
	fputc('"', f);
	if (labels) {
		fputc(',', f);
		fputs(labels, f);
	}
	if (key) {
		fputc(',', f);
		fputs(key, f);
		fputs("=\"", f);
		put_label_value(f, value);
		fputc('"', f);
	}
	fputs("} ", f);
}

static void put_container_defs(FILE *f, bool om, const struct metrics_snapshot *s)
{
	const struct metric_def *d, *first = NULL;
	const struct metrics_container *c;
	uint64_t amount;
	size_t i;
	int k;

	for (i = 0; i < NR_METRIC_DEFS; i++) {
		d = &metric_defs[i];
		if (!first || strcmp(first->family, d->family)) {
			first = d;
			put_family(f, om, d->family,
				   d->kind == METRIC_COUNTER ? "counter" : "gauge",
				   figure_in_nanoseconds(d->figure) && d->kind == METRIC_COUNTER
					   ? "seconds"
					   : NULL,
				   d->help);
		}
		for (k = 0; k < s->nr_containers; k++) {
			c = &s->containers[k];
			if (d->kind == METRIC_GAUGE) {
				if (!c->in_last || !(c->gauge_valid & (1ULL << i)))
					continue;
				put_sample(f, d->family, "", c->label, d->labels, NULL, NULL);
				fprintf(f, "%.9g", c->gauge[i]);
				put_stamp(f, om, s);
				continue;
			}
			if (!amounts_value(&c->totals.sum, d->figure, &amount))
				continue;
			put_sample(f, d->family, "_total", c->label, d->labels, NULL, NULL);
			if (figure_in_nanoseconds(d->figure))
				put_seconds(f, amount);
			else
				put_digits(f, amount, 1);
			put_stamp(f, om, s);
		}
	}
}

static void put_histogram(FILE *f, bool om, const struct metrics_snapshot *s)
{
	static const char family[] = "cgstat_runqueue_wait_duration_seconds";
	const struct metrics_container *c;
	char le[NR_HIST_EDGES][24];
	size_t i;
	int k;

	/*
	 * _count: the waits whose length cgstat saw; the few recovered from the kernel's
	 * sched_info at a switch-in are in cgstat_runqueue_waits_total only. _sum: all the time.
	 */
	put_family(f, om, family, "histogram", "seconds",
		   "Run-queue waits of the container's threads by length (edges: powers of two "
		   "nanoseconds, exact edges of cgstat's own histogram)");
	for (i = 0; i < NR_HIST_EDGES; i++)
		snprintf(le[i], sizeof(le[i]), "%.9g",
			 (double)(1ULL << hist_edge_shifts[i]) / NSEC_PER_SEC);
	for (k = 0; k < s->nr_containers; k++) {
		c = &s->containers[k];
		for (i = 0; i < NR_HIST_EDGES; i++) {
			put_sample(f, family, "_bucket", c->label, NULL, "le", le[i]);
			put_digits(f, c->hist_below[i], 1);
			put_stamp(f, om, s);
		}
		put_sample(f, family, "_bucket", c->label, NULL, "le", "+Inf");
		put_digits(f, c->hist_count, 1);
		put_stamp(f, om, s);
		put_sample(f, family, "_count", c->label, NULL, NULL, NULL);
		put_digits(f, c->hist_count, 1);
		put_stamp(f, om, s);
		put_sample(f, family, "_sum", c->label, NULL, NULL, NULL);
		put_seconds(f, c->totals.sum.time_ns[CG_RUNQ]);
		put_stamp(f, om, s);
	}
}

static void put_perf(FILE *f, bool om, const struct metrics_snapshot *s)
{
	const struct metrics_container *c;
	bool any = false;
	int k, e;

	for (k = 0; k < s->nr_containers; k++)
		for (e = 0; e < s->nr_events; e++)
			any |= s->containers[k].totals.sum.counter_valid[e];
	if (!any)
		return;
	put_family(f, om, "cgstat_perf_events", "counter", NULL,
		   "The container's perf counts by perf's event name, as perf stat counts them "
		   "(task-clock in nanoseconds); an event this host cannot count is left out");
	for (e = 0; e < s->nr_events; e++) {
		for (k = 0; k < s->nr_containers; k++) {
			c = &s->containers[k];
			if (!c->totals.sum.counter_valid[e])
				continue;
			put_sample(f, "cgstat_perf_events", "_total", c->label, NULL, "event",
				   s->event_names[e]);
			put_digits(f, c->totals.sum.counter[e], 1);
			put_stamp(f, om, s);
		}
	}
}

/* A family of one sample without labels; stamped with s's interval end unless s is NULL. */
static void put_plain(FILE *f, bool om, const struct metrics_snapshot *s, const char *family,
		      const char *type, const char *unit, const char *help, const char *value)
{
	put_family(f, om, family, type, unit, help);
	fprintf(f, "%s%s %s", family, !strcmp(type, "counter") ? "_total" : "", value);
	if (s)
		put_stamp(f, om, s);
	else
		fputc('\n', f);
}

static void put_host(FILE *f, bool om, const struct metrics_snapshot *s)
{
	/* scale: from the CSV's unit (MB/s, percent) to the base unit (bytes/s, a ratio) */
	static const struct {
		const char *family, *help;
		size_t offset;
		double scale;
	} disk_figures[] = {
		{ "cgstat_host_disk_read_bytes_per_second", "Bytes read from the disk per second",
		  offsetof(struct cg_host_disk, read_mbps), 1e6 },
		{ "cgstat_host_disk_write_bytes_per_second", "Bytes written to the disk per second",
		  offsetof(struct cg_host_disk, write_mbps), 1e6 },
		{ "cgstat_host_disk_busy_ratio", "Share of the interval the disk had I/O in flight",
		  offsetof(struct cg_host_disk, busy_percent), 1e-2 },
	};
	const struct cg_host *h = &s->last.host;
	char v[48];
	size_t i;
	int k;

	if (!h->valid)
		return;
	snprintf(v, sizeof(v), "%.6g", h->cpu_busy_percent / 100);
	put_plain(f, om, s, "cgstat_host_cpu_busy_ratio", "gauge", NULL,
		  "Share of the host's CPU time busy over the last interval (/proc/stat)", v);
	snprintf(v, sizeof(v), "%.6g", h->cpu_iowait_percent / 100);
	put_plain(f, om, s, "cgstat_host_cpu_iowait_ratio", "gauge", NULL,
		  "Share of the host's CPU time idle with I/O outstanding over the last interval",
		  v);
	for (i = 0; i < ARRAY_SIZE(disk_figures) && h->nr_disks; i++) {
		put_family(f, om, disk_figures[i].family, "gauge", NULL, disk_figures[i].help);
		for (k = 0; k < h->nr_disks; k++) {
			double x = *(const double *)((const char *)&h->disks[k] +
						     disk_figures[i].offset) *
				   disk_figures[i].scale;

			fprintf(f, "%s{disk=\"", disk_figures[i].family);
			put_label_value(f, h->disks[k].name);
			fprintf(f, "\"} %.6g", x);
			put_stamp(f, om, s);
		}
	}
}

static void put_health(FILE *f, bool om, const struct metrics_snapshot *s)
{
	const struct cg_health *h = &s->last.health;
	char v[48];

	snprintf(v, sizeof(v), "%" PRIu64, h->dropped_events);
	put_plain(f, om, s, "cgstat_dropped_events", "counter", NULL,
		  "Events cgstat could not attribute: a BPF map was full", v);
	snprintf(v, sizeof(v), "%" PRIu64, h->missed_switches);
	put_plain(f, om, s, "cgstat_missed_switches", "counter", NULL,
		  "Switch-outs the kernel did not report, repaired", v);
	snprintf(v, sizeof(v), "%" PRIu64, h->unseen_wakeups);
	put_plain(f, om, s, "cgstat_unseen_wakeups", "counter", NULL,
		  "Wakeups the kernel did not report, found at the switch-in", v);
	snprintf(v, sizeof(v), "%" PRIu64, h->inconsistencies);
	put_plain(f, om, s, "cgstat_inconsistencies", "counter", NULL,
		  "Snapshots that found more than one task on a CPU: must stay 0", v);
	snprintf(v, sizeof(v), "%.9g", (double)s->last.interval_ns / NSEC_PER_SEC);
	put_plain(f, om, s, "cgstat_interval_seconds", "gauge", NULL,
		  "Length of the last interval, measured", v);
	snprintf(v, sizeof(v), "%.9g", (double)s->drain_ns / NSEC_PER_SEC);
	put_plain(f, om, s, "cgstat_drain_seconds", "gauge", NULL,
		  "Wall time the last interval's snapshot, drain and outputs took", v);
	snprintf(v, sizeof(v), "%.3f", (double)s->last.epoch_ms / 1000);
	put_plain(f, om, s, "cgstat_last_interval_end_timestamp_seconds", "gauge", NULL,
		  "Wall clock at the end of the last interval, in seconds since the epoch", v);
	snprintf(v, sizeof(v), "%d", s->last.nr_cpus);
	put_plain(f, om, s, "cgstat_cpus", "gauge", NULL,
		  "CPUs online: the cores a container without a limit may use", v);
	snprintf(v, sizeof(v), "%d", s->nr_containers);
	put_plain(f, om, s, "cgstat_containers", "gauge", NULL,
		  "Containers exported, the retired ones within their grace included", v);
}

char *metrics_snapshot__render(const struct metrics_snapshot *s, bool openmetrics, size_t *len)
{
	char *text = NULL;
	FILE *f;

	f = open_memstream(&text, len);
	if (!f)
		return NULL;
	/* the page is this thread's alone: tens of thousands of writes need no lock each */
	__fsetlocking(f, FSETLOCKING_BYCALLER);
	if (s && s->have_interval) {
		put_container_defs(f, openmetrics, s);
		put_histogram(f, openmetrics, s);
		put_perf(f, openmetrics, s);
		put_host(f, openmetrics, s);
		put_health(f, openmetrics, s);
	}
	put_plain(f, openmetrics, NULL, "cgstat_up", "gauge", NULL,
		  "1 once the first interval is in, 0 before", s && s->have_interval ? "1" : "0");
	if (openmetrics)
		fputs("# EOF\n", f);
	if (fclose(f) || !text) {
		free(text);
		errno = ENOMEM;
		return NULL;
	}
	return text;
}
