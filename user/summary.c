// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "derived.h"
#include "hist.h"
#include "json_util.h"
#include "summary.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* One cgroup over the run: its records summed, in a record of their own. */
struct summary_entry {
	char *name;
	struct cg_record total; /* tasks: the last interval's; runq_max_ns: the maximum */
};

struct summary {
	struct summary_entry *entries;
	int nr_entries;
	int cap_entries;
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
};

struct summary *summary__new(void)
{
	struct summary *s;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->messages = -1;
	return s;
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

/*
 * The entry for name. Drains list the cgroups in the same order every time, so the entry at
 * the record's own position is tried before the search.
 */
static struct summary_entry *find_entry(struct summary *s, const char *name, int hint)
{
	struct summary_entry *e;
	int i;

	if (hint < s->nr_entries && !strcmp(s->entries[hint].name, name))
		return &s->entries[hint];
	for (i = 0; i < s->nr_entries; i++)
		if (!strcmp(s->entries[i].name, name))
			return &s->entries[i];

	if (s->nr_entries == s->cap_entries) {
		int cap = s->cap_entries ? 2 * s->cap_entries : 16;

		e = reallocarray(s->entries, cap, sizeof(*e));
		if (!e)
			return NULL;
		s->entries = e;
		s->cap_entries = cap;
	}
	e = &s->entries[s->nr_entries];
	memset(e, 0, sizeof(*e));
	e->name = strdup(name);
	if (!e->name)
		return NULL;
	for (i = 0; i < CG_MAX_EVENTS; i++)
		e->total.counter_valid[i] = true;
	s->nr_entries++;
	return e;
}

/* Fold r into the run's total t; nr_events counters, each valid only while every r's is. */
static void add_record(struct cg_record *t, const struct cg_record *r, int nr_events)
{
	int i;

	for (i = 0; i < CG_NR_STATES; i++)
		t->time_ns[i] += r->time_ns[i];
	t->nvcsw += r->nvcsw;
	t->nivcsw += r->nivcsw;
	t->migrations += r->migrations;
	t->runq_waits += r->runq_waits;
	if (r->runq_max_ns > t->runq_max_ns)
		t->runq_max_ns = r->runq_max_ns;
	hist_add(&t->runq_hist, &r->runq_hist);
	for (i = 0; i < nr_events; i++) {
		t->counter[i] += r->counter[i];
		t->counter_valid[i] = t->counter_valid[i] && r->counter_valid[i];
	}
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
		e = find_entry(s, r->name, i);
		if (!e)
			return -ENOMEM;
		add_record(&e->total, r, nr_events);
		/* Counters the interval lacks did not count for this cgroup. */
		memset(&e->total.counter_valid[nr_events], 0,
		       (s->nr_events - nr_events) * sizeof(bool));
		e->total.tasks = r->tasks;
	}
	s->total_ns += iv->interval_ns;
	if (iv->host.valid)
		return add_host(s, &iv->host);
	return 0;
}

/* "cpus" stands for cpuCores in the Pulsar shape; the other figures keep their names. */
static const struct {
	const char *key;
	enum cg_figure figure;
} summary_figures[] = {
	{ "cpus", CG_FIG_CPU_CORES },	    { NULL, CG_FIG_VCSW_RATE },
	{ NULL, CG_FIG_IVCSW_RATE },	    { NULL, CG_FIG_MIGRATIONS_RATE },
	{ NULL, CG_FIG_RUNQ_WAITS_RATE },   { NULL, CG_FIG_RUNQ_MILLIS_RATE },
	{ NULL, CG_FIG_SLEEP_MILLIS_RATE }, { NULL, CG_FIG_BLOCKED_MILLIS_RATE },
	{ NULL, CG_FIG_RUNQ_P50_MICROS },   { NULL, CG_FIG_RUNQ_P99_MICROS },
	{ NULL, CG_FIG_RUNQ_MAX_MICROS },   { NULL, CG_FIG_TASKS },
};

static int json_figures(cJSON *obj, const struct summary *s, const struct cg_record *t)
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

		if (record_figure(t, s->total_ns, fig, &value))
			err = json_add_number(obj, name, value);
	}
	for (i = 0; i < (size_t)s->nr_events && !err; i++) {
		if (!t->counter_valid[i] || !s->total_ns)
			continue;
		value = event_figure(s->event_columns[i], t->counter[i], &unit);
		snprintf(key, sizeof(key), "%sPerSecond", s->event_columns[i]);
		err = json_add_number(obj, key, value * 1e9 / (double)s->total_ns);
	}
	derived_compute(&d, s->nr_events, (const char *const *)s->event_columns, t->counter,
			t->counter_valid);
	for (i = 0; i < CG_NR_DERIVED && !err; i++)
		if (d.valid[i])
			err = json_add_number(obj, derived_columns[i].name, d.value[i]);
	if (!err && s->messages > 0 && s->total_ns)
		err = json_add_number(obj, "cpuSecondsPerMillionMessages",
				      (double)t->time_ns[CG_ONCPU] / 1e9 / (s->messages / 1e6));
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
	struct cg_record all = { 0 };
	cJSON *containers, *obj;
	int i, err = 0;

	containers = cJSON_AddObjectToObject(root, "containers");
	if (!containers)
		return -ENOMEM;
	for (i = 0; i < CG_MAX_EVENTS; i++)
		all.counter_valid[i] = true;
	for (i = 0; i < s->nr_entries && !err; i++) {
		obj = json_add_object(containers, s->entries[i].name);
		if (!obj)
			return -errno;
		err = json_figures(obj, s, &s->entries[i].total);
		add_record(&all, &s->entries[i].total, s->nr_events);
		all.tasks += s->entries[i].total.tasks;
	}
	if (err)
		return err;
	obj = cJSON_AddObjectToObject(root, "allContainers");
	if (!obj)
		return -ENOMEM;
	return json_figures(obj, s, &all);
}

char *summary__to_json(const struct summary *s, uint64_t start_ms, uint64_t end_ms,
		       uint64_t dropped_events)
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
		err = json_add_number(measurement, "durationSeconds", (double)s->total_ns / 1e9);
	if (!err)
		err = json_host(root, s);
	if (!err)
		err = json_containers(root, s);
	if (!err)
		err = json_add_number(root, "droppedEvents", (double)dropped_events);
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
	int i;

	if (!s)
		return;
	for (i = 0; i < s->nr_entries; i++)
		free(s->entries[i].name);
	free(s->entries);
	for (i = 0; i < s->nr_events; i++)
		free(s->event_columns[i]);
	free(s->event_columns);
	free(s->host_columns);
	free(s->host_sums);
	free(s->host_counts);
	free(s);
}
