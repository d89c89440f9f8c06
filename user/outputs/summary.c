// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/derived.h"
#include "core/hist.h"
#include "lib/json_util.h"
#include "lib/message.h"
#include "core/stages.h"
#include "core/wakegraph.h"
#include "core/totals.h"
#include "outputs/stream.h"
#include "outputs/summary.h"
#include "lib/util.h"
#include "outputs/container_fields.h"

/*
 * The label of the cgroups retired beyond SUMMARY_MAX_RETIRED. A cgroup really labelled so
 * shares the entry, and while it is live its tasks stand for the entry's.
 */
#define FOLDED_NAME "(removed cgroups)"

/* Preempting cgroups a label keeps over the run; a new one beyond them is not counted. */
#define SUMMARY_MAX_PREEMPTERS 16

/* How many of them container-summary.json names, most often first. */
#define SUMMARY_TOP_PREEMPTERS 3

/* A first table big enough for a host's usual cgroups without growing. */
#define FIRST_BUCKETS 64

/* Where an entry's run-queue quantiles come from. */
enum summary_quantiles {
	QUANTILES_FROM_HIST, /* one cgroup, live: its histogram holds every wait */
	QUANTILES_KEPT,	     /* one cgroup, retired: worked out from its histogram then */
	QUANTILES_NONE,	     /* more than one cgroup under the label, and quantiles do not add */
};

/* A cgroup whose threads took a label's tasks' CPU, and how often, over the run. */
struct summary_preempter {
	char *label;
	uint64_t count;
};

/* One label over the run. */
struct summary_entry {
	struct totals_label label;	   /* its sums, in summary's table (first-seen order) */
	uint64_t verdicts[CG_NR_VERDICTS]; /* intervals with each verdict */
	struct cg_hist *hist;		   /* the live cgroup's waits; NULL once retired */
	enum summary_quantiles quantiles;
	double runq_p50_micros; /* QUANTILES_KEPT */
	double runq_p99_micros;
	struct summary_preempter *preempters; /* the first SUMMARY_MAX_PREEMPTERS at most */
	int nr_preempters;
	struct cg_container *container; /* as its last record said; NULL: not a container's */
	char name[];
};

/* One of cgstat's BPF programs over the run, with --bpf-stats. */
struct summary_program {
	char *name;
	uint64_t runs;
	uint64_t run_ns;
};

struct summary {
	struct totals_table labels; /* of summary_entry, first-seen order, which the JSON keeps */
	/*
	 * Retirements that kept their entry. It never goes down, so that labels that come back
	 * and go again cannot take the kept entries past the bound.
	 */
	int nr_kept;
	uint64_t nr_folded;
	struct summary_entry *spare_folded; /* FOLDED_NAME's entry before its first use */
	/*
	 * Histograms of retired cgroups, for the next new ones: under churn a cgroup lives a
	 * second, and 2.4 kB freed and allocated that often among the entries that stay
	 * fragments the heap for good.
	 */
	struct spare_hist *spare_hists;
	struct cg_hist retired_hist; /* every retired cgroup's waits, for allContainers */
	uint64_t total_ns;
	bool events_known;
	char **event_columns;
	int nr_events;
	double messages;
	/* host-io.csv's columns, fixed by the first valid sample, and their sums */
	char (*host_columns)[CG_HOST_COLUMN_NAME_MAX];
	double *host_sums;
	uint64_t *host_counts;
	int nr_host_columns;
	struct stages *stages;	  /* with --threads (intervals with pools): made at the first */
	struct wake_graph *wakes; /* and the run's wake graph, alike */
	/* with --bpf-stats: the programs as of the last interval that had them (cumulative) */
	struct summary_program *programs;
	int nr_programs;
	/* each interval's length times its CPUs online: what the programs took a share of */
	uint64_t cpu_ns;
};

/* A histogram on the spare list. */
struct spare_hist {
	union {
		struct spare_hist *next;
		struct cg_hist hist;
	};
};

/* An empty histogram, a spare one if there is. NULL on failure. */
static struct cg_hist *hist_take(struct summary *s)
{
	struct spare_hist *h = s->spare_hists;

	if (!h)
		return calloc(1, sizeof(struct cg_hist));
	s->spare_hists = h->next;
	memset(&h->hist, 0, sizeof(h->hist));
	return &h->hist;
}

static void hist_give_back(struct summary *s, struct cg_hist *hist)
{
	struct spare_hist *h = (struct spare_hist *)hist;

	h->next = s->spare_hists;
	s->spare_hists = h;
}

/* A new entry for name, with no histogram, linked nowhere. NULL on failure. */
static struct summary_entry *entry_new(const char *name)
{
	size_t len = strlen(name) + 1;
	struct summary_entry *e;

	e = calloc(1, sizeof(*e) + len);
	if (!e)
		return NULL;
	memcpy(e->name, name, len);
	totals_label_init(&e->label, e->name, TOTALS_VALID_ALL);
	return e;
}

static void entry_free(struct summary_entry *e)
{
	for (int i = 0; i < e->nr_preempters; i++)
		free(e->preempters[i].label);
	free(e->preempters);
	free(e->container);
	free(e);
}

/* count more switches of e's tasks to cgroup label. 0 or -ENOMEM. */
static int preempter_add(struct summary_entry *e, const char *label, uint64_t count)
{
	struct summary_preempter *grown;
	int i;

	for (i = 0; i < e->nr_preempters; i++) {
		if (!strcmp(e->preempters[i].label, label)) {
			e->preempters[i].count += count;
			return 0;
		}
	}
	if (e->nr_preempters == SUMMARY_MAX_PREEMPTERS)
		return 0;
	grown = realloc(e->preempters, (e->nr_preempters + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	e->preempters = grown;
	grown[e->nr_preempters].label = strdup(label);
	if (!grown[e->nr_preempters].label)
		return -ENOMEM;
	grown[e->nr_preempters++].count = count;
	return 0;
}

/* The entry of label l, or NULL. */
static struct summary_entry *entry_of(struct totals_label *l)
{
	return l ? container_of(l, struct summary_entry, label) : NULL;
}

static struct summary_entry *find_entry(const struct summary *s, const char *name)
{
	return entry_of(totals_table_find(&s->labels, name));
}

struct summary *summary__new(void)
{
	struct summary *s;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->messages = -1;
	if (totals_table_init(&s->labels, FIRST_BUCKETS))
		goto err_out;
	s->spare_folded = entry_new(FOLDED_NAME);
	if (!s->spare_folded)
		goto err_out;
	s->spare_folded->quantiles = QUANTILES_NONE;
	return s;
err_out:
	totals_table_fini(&s->labels);
	free(s->spare_folded);
	free(s);
	errno = ENOMEM;
	return NULL;
}

void summary__set_messages(struct summary *s, double messages)
{
	s->messages = messages;
}

static int take_event_columns(struct summary *s, const struct cg_interval *iv)
{
	char **columns;
	int i;

	if (iv->nr_events) {
		columns = calloc(iv->nr_events, sizeof(*columns));
		if (!columns)
			return -ENOMEM;
		for (i = 0; i < iv->nr_events; i++) {
			columns[i] = strdup(iv->event_columns[i]);
			if (!columns[i])
				goto err_out;
		}
		s->event_columns = columns;
		s->nr_events = iv->nr_events;
	}
	s->events_known = true;
	return 0;
err_out:
	while (i--)
		free(columns[i]);
	free(columns);
	return -ENOMEM;
}

/* The entry that name's live cgroup adds to, made live if it was retired. NULL on failure. */
static struct summary_entry *live_entry(struct summary *s, const char *name)
{
	struct summary_entry *e;

	e = find_entry(s, name);
	if (e) {
		if (!e->hist) {
			e->hist = hist_take(s);
			if (!e->hist)
				return NULL;
			/* The label's earlier cgroup took its histogram with it. */
			e->quantiles = QUANTILES_NONE;
		}
		return e;
	}
	e = entry_new(name);
	if (!e)
		return NULL;
	e->hist = hist_take(s);
	if (!e->hist) {
		free(e);
		return NULL;
	}
	totals_table_link(&s->labels, &e->label);
	return e;
}

static int add_host(struct summary *s, const struct cg_host *h)
{
	char name[CG_HOST_COLUMN_NAME_MAX];
	int i, n = host_nr_columns(h);
	double value;

	if (!s->host_columns) {
		s->host_columns = calloc(n, sizeof(*s->host_columns));
		s->host_sums = calloc(n, sizeof(*s->host_sums));
		s->host_counts = calloc(n, sizeof(*s->host_counts));
		if (!s->host_columns || !s->host_sums || !s->host_counts) {
			free(s->host_columns);
			free(s->host_sums);
			free(s->host_counts);
			s->host_columns = NULL;
			s->host_sums = NULL;
			s->host_counts = NULL;
			return -ENOMEM;
		}
		for (i = 0; i < n; i++)
			host_column(h, i, s->host_columns[i]);
		s->nr_host_columns = n;
	}
	/* The sampler keeps its disks; a column that ever differs averages its matching samples. */
	for (i = 0; i < s->nr_host_columns && i < n; i++) {
		value = host_column(h, i, name);
		if (strcmp(name, s->host_columns[i]))
			continue;
		s->host_sums[i] += value;
		s->host_counts[i]++;
	}
	return 0;
}

static void programs_free(struct summary_program *p, int nr)
{
	for (int i = 0; i < nr; i++)
		free(p[i].name);
	free(p);
}

/*
 * The programs' figures, cumulative: the last interval's are the run's. The same programs come
 * every interval (they are one object's), so their names are copied once. 0 or -ENOMEM.
 */
static int take_programs(struct summary *s, const struct cg_interval *iv)
{
	struct summary_program *p = s->programs;
	int i;

	if (s->nr_programs != iv->nr_programs) {
		p = calloc(iv->nr_programs, sizeof(*p));
		if (!p)
			return -ENOMEM;
		for (i = 0; i < iv->nr_programs; i++) {
			p[i].name = strdup(iv->programs[i].name);
			if (!p[i].name) {
				programs_free(p, i);
				return -ENOMEM;
			}
		}
		programs_free(s->programs, s->nr_programs);
		s->programs = p;
		s->nr_programs = iv->nr_programs;
	}
	for (i = 0; i < iv->nr_programs; i++) {
		p[i].runs = iv->programs[i].runs;
		p[i].run_ns = iv->programs[i].run_ns;
	}
	return 0;
}

int summary__add(struct summary *s, const struct cg_interval *iv)
{
	const struct cg_record *r;
	struct summary_entry *e;
	int i, nr_events, err;

	if (!s->events_known) {
		err = take_event_columns(s, iv);
		if (err)
			return err;
	}
	nr_events = iv->nr_events < s->nr_events ? iv->nr_events : s->nr_events;

	for (i = 0; i < iv->nr_records; i++) {
		r = &iv->records[i];
		e = live_entry(s, r->name);
		if (!e)
			return -ENOMEM;
		totals_label_add(&e->label, r, nr_events, TOTALS_VALID_ALL);
		e->verdicts[record_verdict(r, iv->interval_ns, iv->nr_cpus, NULL, 0)]++;
		/* Counters the interval lacks did not count for this cgroup. */
		memset(&e->label.sum.counter_valid[nr_events], 0,
		       (s->nr_events - nr_events) * sizeof(bool));
		hist_add(e->hist, &r->runq_hist);
		/*
		 * 1.3 kB copied when it says more: a container made again (a new id), or named
		 * (a row labelled before its name came), not each interval
		 */
		if (r->container && !e->container)
			e->container = calloc(1, sizeof(*e->container));
		if (r->container && e->container &&
		    (!e->container->runtime || strcmp(e->container->id, r->container->id) ||
		     strcmp(e->container->name, r->container->name) ||
		     strcmp(e->container->pod_name, r->container->pod_name)))
			*e->container = *r->container;
		for (int k = 0; k < r->nr_preempters; k++) {
			err = preempter_add(e, r->preempters[k].label, r->preempters[k].count);
			if (err)
				return err;
		}
	}
	s->total_ns += iv->interval_ns;
	s->cpu_ns += iv->interval_ns * (uint64_t)iv->nr_cpus;
	if (iv->nr_programs) {
		err = take_programs(s, iv);
		if (err)
			return err;
	}
	if (iv->pools && !s->stages && !(s->stages = stages__new()))
		return -ENOMEM;
	if (iv->pools && !s->wakes && !(s->wakes = wake_graph__new()))
		return -ENOMEM;
	if (iv->pools) {
		err = stages__add(s->stages, iv);
		if (!err)
			err = wake_graph__add(s->wakes, iv);
		if (err)
			return err;
	}
	if (iv->host.valid)
		return add_host(s, &iv->host);
	return 0;
}

void summary__print_stages(const struct summary *s, FILE *f)
{
	if (s->stages)
		stages__print(s->stages, f);
}

/* e, retired, into FOLDED_NAME's entry, which then stands for it. */
static void fold_entry(struct summary *s, struct summary_entry *e)
{
	struct summary_entry *folded;

	folded = find_entry(s, FOLDED_NAME);
	if (!folded) {
		folded = s->spare_folded;
		s->spare_folded = NULL;
		totals_table_link(&s->labels, &folded->label);
	}
	s->nr_folded++;
	folded->quantiles = QUANTILES_NONE;
	if (folded == e)
		return;
	/* Different cgroups: their tasks add up, as they do in allContainers. */
	totals_add(&folded->label.sum, &e->label.sum, s->nr_events, TOTALS_VALID_ALL);
	for (int v = 0; v < CG_NR_VERDICTS; v++)
		folded->verdicts[v] += e->verdicts[v];
	totals_table_unlink(&s->labels, &e->label);
	entry_free(e);
}

void summary__retire(struct summary *s, const char *name, uint64_t cgid)
{
	struct summary_entry *e;
	struct cg_record t;

	e = find_entry(s, name);
	/* another cgroup took the label (made again under the path): the entry is its */
	if (!e || !e->hist || e->label.cgid != cgid)
		return;
	hist_add(&s->retired_hist, e->hist);
	if (e->quantiles == QUANTILES_FROM_HIST) {
		/* Neither the waits nor the maximum can change any more, so neither can these. */
		totals_record(&t, &e->label.sum, e->hist);
		record_figure(&t, s->total_ns, CG_FIG_RUNQ_P50_MICROS, &e->runq_p50_micros);
		record_figure(&t, s->total_ns, CG_FIG_RUNQ_P99_MICROS, &e->runq_p99_micros);
		e->quantiles = QUANTILES_KEPT;
	}
	hist_give_back(s, e->hist);
	e->hist = NULL;
	if (s->nr_kept < SUMMARY_MAX_RETIRED)
		s->nr_kept++;
	else
		fold_entry(s, e);
}

/* "cpus" stands for cpuCores in the Pulsar shape; the other figures keep their names. */
static const struct {
	const char *key;
	enum cg_figure figure;
} summary_figures[] = {
	{ "cpus", CG_FIG_CPU_CORES },
	{ NULL, CG_FIG_VCSW_RATE },
	{ NULL, CG_FIG_IVCSW_RATE },
	{ NULL, CG_FIG_MIGRATIONS_RATE },
	{ NULL, CG_FIG_RUNQ_WAITS_RATE },
	{ NULL, CG_FIG_RUNQ_MILLIS_RATE },
	{ NULL, CG_FIG_SLEEP_MILLIS_RATE },
	{ NULL, CG_FIG_BLOCKED_MILLIS_RATE },
	{ NULL, CG_FIG_STOLEN_MILLIS_RATE },
	{ NULL, CG_FIG_OFFCPU_MILLIS_RATE },
	{ NULL, CG_FIG_MINOR_FAULTS_RATE },
	{ NULL, CG_FIG_MAJOR_FAULTS_RATE },
	{ NULL, CG_FIG_PREEMPTED_SAME_RATE },
	{ NULL, CG_FIG_PREEMPTED_OTHER_RATE },
	{ NULL, CG_FIG_PREEMPTED_KERNEL_RATE },
	{ NULL, CG_FIG_RUNQ_P50_MICROS },
	{ NULL, CG_FIG_RUNQ_P99_MICROS },
	{ NULL, CG_FIG_RUNQ_MAX_MICROS },
	{ NULL, CG_FIG_TASKS },
};

/*
 * Figure fig of t, the run's sums of a label (or of every label); a run-queue quantile is
 * taken from t's histogram unless q says it is kept in e or not to be had.
 */
static bool summary_figure(const struct summary *s, const struct cg_record *t,
			   enum summary_quantiles q, const struct summary_entry *e,
			   enum cg_figure fig, double *value)
{
	if (!record_figure(t, s->total_ns, fig, value))
		return false;
	if (fig != CG_FIG_RUNQ_P50_MICROS && fig != CG_FIG_RUNQ_P99_MICROS)
		return true;
	if (q == QUANTILES_KEPT)
		*value = fig == CG_FIG_RUNQ_P50_MICROS ? e->runq_p50_micros : e->runq_p99_micros;
	return q != QUANTILES_NONE;
}

static int json_figures(cJSON *obj, const struct summary *s, const struct cg_record *t,
			enum summary_quantiles q, const struct summary_entry *e)
{
	char key[256];
	struct cg_derived d;
	enum cg_unit unit;
	double value;
	size_t i;
	int err = 0;

	for (i = 0; i < ARRAY_SIZE(summary_figures) && !err; i++) {
		enum cg_figure fig = summary_figures[i].figure;
		const char *name = summary_figures[i].key ?: figure_columns[fig].name;

		if (summary_figure(s, t, q, e, fig, &value))
			err = json_add_number(obj, name, value);
	}
	for (i = 0; i < (size_t)s->nr_events && !err; i++) {
		if (!t->counter_valid[i] || !s->total_ns)
			continue;
		value = event_figure(s->event_columns[i], t->counter[i], &unit);
		snprintf(key, sizeof(key), "%sPerSecond", s->event_columns[i]);
		err = json_add_number(obj, key, value * NSEC_PER_SEC / (double)s->total_ns);
	}
	derived_compute(&d, s->nr_events, (const char *const *)s->event_columns, t->counter,
			t->counter_valid);
	for (i = 0; i < CG_NR_DERIVED && !err; i++)
		if (d.valid[i])
			err = json_add_number(obj, derived_columns[i].name, d.value[i]);
	if (!err && s->messages > 0 && s->total_ns)
		err = json_add_number(obj, "cpuSecondsPerMillionMessages",
				      (double)t->time_ns[CG_ONCPU] / NSEC_PER_SEC /
					      (s->messages / 1e6));
	return err;
}

/*
 * "topPreempters": the SUMMARY_TOP_PREEMPTERS cgroups that preempted e's tasks most often
 * over the run (the first label on a tie), none when no one did. 0 or -ENOMEM.
 */
static int json_preempters(cJSON *obj, const struct summary_entry *e)
{
	bool taken[SUMMARY_MAX_PREEMPTERS] = { false };
	cJSON *list, *item;
	int n, i, best, err;

	if (!e->nr_preempters)
		return 0;
	list = cJSON_AddArrayToObject(obj, "topPreempters");
	if (!list)
		return -ENOMEM;
	for (n = 0; n < SUMMARY_TOP_PREEMPTERS && n < e->nr_preempters; n++) {
		best = -1;
		for (i = 0; i < e->nr_preempters; i++)
			if (!taken[i] &&
			    (best < 0 || e->preempters[i].count > e->preempters[best].count))
				best = i;
		taken[best] = true;
		item = json_append_object(list);
		if (!item)
			return -ENOMEM;
		err = json_add_label(item, "cgroup", e->preempters[best].label);
		if (!err)
			err = json_add_number(item, "preemptions",
					      (double)e->preempters[best].count);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The verdict of most of u's intervals: the first in the rules' order on a tie, and idle only
 * when every interval was (a container idle before and after a test is judged by the test).
 * CG_NR_VERDICTS without an interval.
 */
static enum cg_verdict dominant_verdict(const struct summary_entry *u)
{
	enum cg_verdict v, best = CG_NR_VERDICTS;

	for (v = 0; v < CG_NR_VERDICTS; v++)
		if (v != CG_VERDICT_IDLE && u->verdicts[v] &&
		    (best == CG_NR_VERDICTS || u->verdicts[v] > u->verdicts[best]))
			best = v;
	if (best == CG_NR_VERDICTS && u->verdicts[CG_VERDICT_IDLE])
		best = CG_VERDICT_IDLE;
	return best;
}

/* "verdicts": how many intervals had each verdict (those that some had); "verdict": the dominant.
 */
static int json_verdicts(cJSON *obj, const struct summary_entry *u)
{
	enum cg_verdict v, dominant = dominant_verdict(u);
	cJSON *counts;
	int err = 0;

	if (dominant == CG_NR_VERDICTS)
		return 0;
	counts = cJSON_AddObjectToObject(obj, "verdicts");
	if (!counts)
		return -ENOMEM;
	for (v = 0; v < CG_NR_VERDICTS && !err; v++)
		if (u->verdicts[v])
			err = json_add_number(counts, verdict_names[v], (double)u->verdicts[v]);
	if (!err)
		err = json_add_label(obj, "verdict", verdict_names[dominant]);
	return err;
}

static int json_host(cJSON *root, const struct summary *s)
{
	cJSON *host;
	int i, err = 0;

	host = cJSON_AddObjectToObject(root, "host");
	if (!host)
		return -ENOMEM;
	for (i = 0; i < s->nr_host_columns && !err; i++)
		if (s->host_counts[i])
			err = json_add_number(host, s->host_columns[i],
					      s->host_sums[i] / (double)s->host_counts[i]);
	return err;
}

static int json_containers(cJSON *root, const struct summary *s)
{
	struct cg_amounts all_sums;
	const struct summary_entry *e;
	struct cg_record t, all;
	cJSON *containers, *obj;
	int err = 0;

	containers = cJSON_AddObjectToObject(root, "containers");
	if (!containers)
		return -ENOMEM;
	totals_init(&all_sums, TOTALS_VALID_ALL);
	for (e = entry_of(s->labels.first); e && !err; e = entry_of(e->label.next)) {
		obj = json_add_object(containers, e->name);
		if (!obj)
			return -errno;
		totals_record(&t, &e->label.sum, e->hist);
		err = container_fields_json(obj, e->container);
		if (!err)
			err = json_figures(obj, s, &t, e->quantiles, e);
		if (!err)
			err = json_preempters(obj, e);
		if (!err)
			err = json_verdicts(obj, e);
		if (!err && s->stages)
			err = stages__json(s->stages, e->name, obj);
		totals_add(&all_sums, &e->label.sum, s->nr_events, TOTALS_VALID_ALL);
	}
	if (err)
		return err;
	/* The retired cgroups' waits are in the run-wide histogram, the live ones' in their own. */
	totals_record(&all, &all_sums, &s->retired_hist);
	for (e = entry_of(s->labels.first); e; e = entry_of(e->label.next))
		if (e->hist)
			hist_add(&all.runq_hist, e->hist);
	obj = cJSON_AddObjectToObject(root, "allContainers");
	if (!obj)
		return -ENOMEM;
	return json_figures(obj, s, &all, QUANTILES_FROM_HIST, NULL);
}

/*
 * "bpfPrograms", with --bpf-stats: each program's runs and run time over the run, its time a
 * run, and its time as a share of the CPU time there was (the run's length times the CPUs
 * online): what cgstat's programs took from the machine. 0 or -errno.
 */
static int json_programs(cJSON *root, const struct summary *s)
{
	const struct summary_program *p;
	cJSON *programs, *obj;
	int i, err = 0;

	if (!s->nr_programs)
		return 0;
	programs = cJSON_AddObjectToObject(root, "bpfPrograms");
	if (!programs)
		return -ENOMEM;
	for (i = 0; i < s->nr_programs && !err; i++) {
		p = &s->programs[i];
		obj = json_add_object(programs, p->name);
		if (!obj)
			return -errno;
		err = json_add_number(obj, "runs", (double)p->runs);
		if (!err)
			err = json_add_number(obj, "runMillis", (double)p->run_ns / NSEC_PER_MSEC);
		if (!err && p->runs)
			err = json_add_number(obj, "nanosPerRun", (double)p->run_ns / p->runs);
		if (!err && s->cpu_ns)
			err = json_add_number(obj, "cpuTimePercent",
					      100.0 * (double)p->run_ns / (double)s->cpu_ns);
	}
	return err;
}

/* One line of summary__print_programs(): what, runs, run time, ns a run, share of CPU time. */
static void print_program(FILE *f, const struct summary *s, const char *name, uint64_t runs,
			  uint64_t run_ns)
{
	fprintf(f, "cgstat:   %-22s %12llu %12.3f ", name, (unsigned long long)runs,
		(double)run_ns / NSEC_PER_MSEC);
	if (runs)
		fprintf(f, "%9.1f ", (double)run_ns / (double)runs);
	else
		fprintf(f, "%9s ", "-");
	if (s->cpu_ns)
		fprintf(f, "%13.4f\n", 100.0 * (double)run_ns / (double)s->cpu_ns);
	else
		fprintf(f, "%13s\n", "-");
}

void summary__print_programs(const struct summary *s, FILE *f)
{
	uint64_t runs = 0, run_ns = 0;
	int i;

	if (!s->nr_programs)
		return;
	fprintf(f, "cgstat: BPF programs over %.1f s, %.1f CPU-seconds online (--bpf-stats):\n",
		(double)s->total_ns / NSEC_PER_SEC, (double)s->cpu_ns / NSEC_PER_SEC);
	fprintf(f, "cgstat:   %-22s %12s %12s %9s %13s\n", "program", "runs", "run ms", "ns/run",
		"% of CPU time");
	for (i = 0; i < s->nr_programs; i++) {
		print_program(f, s, s->programs[i].name, s->programs[i].runs,
			      s->programs[i].run_ns);
		runs += s->programs[i].runs;
		run_ns += s->programs[i].run_ns;
	}
	print_program(f, s, "(all)", runs, run_ns);
}

/* One figure for summary__print_brief(): its value with its decimals, or "-" without one. */
static void print_figure(FILE *f, const struct summary *s, const struct cg_record *t,
			 enum cg_figure fig, const char *before, const char *after)
{
	double value;

	fputs(before, f);
	if (record_figure(t, s->total_ns, fig, &value))
		fprintf(f, "%.*f", unit_decimals(figure_columns[fig].unit), value);
	else
		fputc('-', f);
	fputs(after, f);
}

static uint64_t verdict_intervals(const struct summary_entry *u)
{
	uint64_t n = 0;

	for (int v = 0; v < CG_NR_VERDICTS; v++)
		n += u->verdicts[v];
	return n;
}

void summary__print_brief(const struct summary *s, FILE *f)
{
	const struct summary_entry *e;
	struct cg_record t;
	enum cg_verdict v;

	for (e = entry_of(s->labels.first); e; e = entry_of(e->label.next)) {
		totals_record(&t, &e->label.sum, NULL);
		fputs("cgstat: ", f);
		message_quote(f, e->name);
		print_figure(f, s, &t, CG_FIG_CPU_CORES, ": ", " cores");
		fprintf(f, " over %.1f s", (double)s->total_ns / NSEC_PER_SEC);
		print_figure(f, s, &t, CG_FIG_RUNQ_PERCENT, "; of its tasks' time: run queue ",
			     " %");
		print_figure(f, s, &t, CG_FIG_SLEEP_PERCENT, ", off-CPU sleeping ", " %");
		print_figure(f, s, &t, CG_FIG_BLOCKED_PERCENT, ", blocked ", " %");
		print_figure(f, s, &t, CG_FIG_VCSW_RATE, "; switches/s: ", " voluntary");
		print_figure(f, s, &t, CG_FIG_IVCSW_RATE, ", ", " involuntary");
		v = dominant_verdict(e);
		if (v != CG_NR_VERDICTS)
			fprintf(f, "; verdict: %s in %llu of %llu intervals", verdict_names[v],
				(unsigned long long)e->verdicts[v],
				(unsigned long long)verdict_intervals(e));
		fputc('\n', f);
	}
}

char *summary__to_json(const struct summary *s, uint64_t start_ms, uint64_t end_ms,
		       const struct cg_health *health)
{
	cJSON *root, *measurement;
	char *text = NULL;
	int err;

	root = cJSON_CreateObject();
	if (!root)
		return NULL;
	measurement = cJSON_AddObjectToObject(root, "measurement");
	if (!measurement) {
		err = -ENOMEM;
		goto out;
	}
	err = json_add_number(measurement, "startEpochMillis", (double)start_ms);
	if (!err)
		err = json_add_number(measurement, "endEpochMillis", (double)end_ms);
	/* The measured time, which every average below is over. */
	if (!err)
		err = json_add_number(measurement, "durationSeconds",
				      (double)s->total_ns / NSEC_PER_SEC);
	if (!err)
		err = json_host(root, s);
	if (!err)
		err = json_containers(root, s);
	if (!err && s->nr_folded)
		err = json_add_number(root, "retiredContainersFolded", (double)s->nr_folded);
	if (!err && s->wakes)
		err = wake_graph__json(s->wakes, (double)s->total_ns / NSEC_PER_SEC, root);
	if (!err)
		err = json_programs(root, s);
	if (!err)
		err = stream__json_health(root, health);
	if (err)
		goto out;
	text = cJSON_PrintUnformatted(root);
	if (!text)
		err = -ENOMEM;
out:
	cJSON_Delete(root);
	if (err)
		errno = -err;
	return text;
}

void summary__free(struct summary *s)
{
	struct summary_entry *e, *next;
	struct spare_hist *h;
	int i;

	if (!s)
		return;
	for (e = entry_of(s->labels.first); e; e = next) {
		next = entry_of(e->label.next);
		free(e->hist);
		entry_free(e);
	}
	while ((h = s->spare_hists)) {
		s->spare_hists = h->next;
		free(h);
	}
	totals_table_fini(&s->labels);
	if (s->spare_folded)
		entry_free(s->spare_folded);
	for (i = 0; i < s->nr_events; i++)
		free(s->event_columns[i]);
	free(s->event_columns);
	free(s->host_columns);
	free(s->host_sums);
	free(s->host_counts);
	stages__free(s->stages);
	wake_graph__free(s->wakes);
	programs_free(s->programs, s->nr_programs);
	free(s);
}
