// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/derived.h"
#include "lib/json_util.h"
#include "outputs/container_fields.h"
#include "outputs/stream.h"
#include "outputs/table.h"
#include "lib/text.h"
#include "lib/util.h"

/* What the CSV and JSON stream give per cgroup, before the events and the derived ratios. */
static const enum cg_figure stream_figures[] = {
	CG_FIG_CPU_CORES,	    CG_SCHED_FIGURES,
	CG_FIG_STOLEN_MILLIS,	    CG_FIG_OFFCPU_MILLIS,
	CG_FIG_MINOR_FAULTS,	    CG_FIG_MAJOR_FAULTS,
	CG_CGROUPFS_FIGURES,	    CG_FIG_BUSIEST_THREAD_CORES,
	CG_FIG_HUNGRIEST_RAN_CORES, CG_FIG_HUNGRIEST_WAITED_CORES,
};

static double ns_to_millis(uint64_t ns)
{
	return (double)ns / NSEC_PER_MSEC;
}

static void csv_header(FILE *f, const struct cg_interval *iv)
{
	static const char *const leading[] = { "epochMillis", "intervalMillis", "container" };
	size_t i;

	csv_fields(f, leading, ARRAY_SIZE(leading));
	for (i = 0; i < ARRAY_SIZE(stream_figures); i++) {
		csv_sep(f);
		csv_field(f, figure_columns[stream_figures[i]].name);
	}
	for (i = 0; i < CG_NR_LABEL_FIGURES; i++) {
		csv_sep(f);
		csv_field(f, label_figure_names[i]);
	}
	for (i = 0; i < (size_t)iv->nr_events; i++) {
		csv_sep(f);
		csv_field(f, iv->event_columns[i]);
	}
	for (i = 0; i < CG_NR_DERIVED; i++) {
		csv_sep(f);
		csv_field(f, derived_columns[i].name);
	}
	csv_end_row(f);
}

static void csv_row(FILE *f, const struct cg_interval *iv, const struct cg_record *r)
{
	char buf[CG_LABEL_FIGURE_MAX];
	const char *label;
	struct cg_derived d;
	enum cg_unit unit;
	double value;
	bool valid;
	size_t i;

	csv_u64(f, iv->epoch_ms);
	csv_sep(f);
	csv_number(f, true, ns_to_millis(iv->interval_ns), unit_decimals(CG_UNIT_FINE));
	csv_sep(f);
	csv_field(f, r->name);
	for (i = 0; i < ARRAY_SIZE(stream_figures); i++) {
		valid = record_figure(r, iv->interval_ns, stream_figures[i], &value);
		csv_sep(f);
		csv_number(f, valid, value, unit_decimals(figure_columns[stream_figures[i]].unit));
	}
	for (i = 0; i < CG_NR_LABEL_FIGURES; i++) {
		label = record_label_figure(iv, r, i, buf);
		csv_sep(f);
		if (label)
			csv_field(f, label);
	}
	for (i = 0; i < (size_t)iv->nr_events; i++) {
		value = event_figure(iv->event_columns[i], r->counter[i], &unit);
		csv_sep(f);
		csv_number(f, r->counter_valid[i], value, unit_decimals(unit));
	}
	record_derived(iv, r, &d);
	for (i = 0; i < CG_NR_DERIVED; i++) {
		csv_sep(f);
		csv_number(f, d.valid[i], d.value[i], unit_decimals(derived_columns[i].unit));
	}
	csv_end_row(f);
}

static void write_csv(FILE *f, const struct cg_interval *iv, bool first)
{
	int i;

	if (first)
		csv_header(f, iv);
	for (i = 0; i < iv->nr_records; i++)
		csv_row(f, iv, &iv->records[i]);
}

static const enum cg_figure pool_figures[] = { CG_POOL_FIGURES };
static const enum cg_figure thread_figures[] = { CG_THREAD_FIGURES };

/* figs of r into obj, each that is available under its name. */
static int json_figures(cJSON *obj, const struct cg_interval *iv, const struct cg_record *r,
			const enum cg_figure *figs, size_t nr)
{
	double value;
	size_t k;
	int err = 0;

	for (k = 0; k < nr && !err; k++)
		if (record_figure(r, iv->interval_ns, figs[k], &value))
			err = json_add_number(obj, figure_columns[figs[k]].name, value);
	return err;
}

/*
 * Pool p's "wakers": an array of the pools whose threads woke its threads in the interval, most
 * wakeups first, as objects {"container", "pool", "wakeups"}; a source that is no pool
 * ("(timer)", "(interrupt)", "(unwatched)") has no "container". Nothing for a pool nobody woke.
 */
static int json_wakers(cJSON *obj, const struct cg_interval *iv, const struct cg_record *p)
{
	const struct cg_wake_row *w;
	cJSON *wakers, *item;
	int i, err = 0;

	if (!p->nr_wakers)
		return 0;
	wakers = cJSON_AddArrayToObject(obj, "wakers");
	if (!wakers)
		return -ENOMEM;
	for (i = 0; i < p->nr_wakers && !err; i++) {
		w = &iv->wakes[p->first_waker + i];
		item = json_append_object(wakers);
		if (!item)
			return -ENOMEM;
		if (*w->waker_container)
			err = json_add_label(item, "container", w->waker_container);
		if (!err)
			err = json_add_label(item, "pool", w->waker_pool);
		if (!err)
			err = json_add_number(item, "wakeups", (double)w->wakeups);
	}
	return err;
}

/*
 * With --threads, a "pools" object in the record's (each pool's figures under its name, and its
 * wakers) and a "threads" one (its busiest threads under their ids, busiest first, with name
 * and pool).
 */
static int json_pools(cJSON *obj, const struct cg_interval *iv, const struct cg_record *r)
{
	const struct cg_record *p;
	cJSON *pools, *threads, *item;
	char tid[16];
	int i, err = 0;

	if (!iv->pools)
		return 0;
	pools = cJSON_AddObjectToObject(obj, "pools");
	threads = cJSON_AddObjectToObject(obj, "threads");
	if (!pools || !threads)
		return -ENOMEM;
	for (i = 0; i < r->nr_pools && !err; i++) {
		p = &iv->pools[r->first_pool + i];
		item = json_add_object(pools, p->pool);
		if (!item)
			return -errno;
		err = json_figures(item, iv, p, pool_figures, ARRAY_SIZE(pool_figures));
		if (!err)
			err = json_wakers(item, iv, p);
	}
	for (i = 0; i < r->nr_threads && !err; i++) {
		p = &iv->threads[r->first_thread + i];
		snprintf(tid, sizeof(tid), "%u", p->thread->tid);
		item = json_add_object(threads, tid);
		if (!item)
			return -errno;
		err = json_add_label(item, "comm", p->busiest.comm);
		if (!err)
			err = json_add_number(item, "pid", p->thread->pid);
		if (!err)
			err = json_add_label(item, "pool", p->pool);
		if (!err)
			err = json_figures(item, iv, p, thread_figures, ARRAY_SIZE(thread_figures));
	}
	return err;
}

static int json_record(cJSON *containers, const struct cg_interval *iv, const struct cg_record *r)
{
	char buf[CG_LABEL_FIGURE_MAX];
	const char *label;
	struct cg_derived d;
	enum cg_unit unit;
	cJSON *obj;
	double value;
	size_t i;
	int err = 0;

	obj = json_add_object(containers, r->name);
	if (!obj)
		return -errno;
	err = container_fields_json(obj, r->container);
	if (!err)
		err = json_figures(obj, iv, r, stream_figures, ARRAY_SIZE(stream_figures));
	for (i = 0; i < CG_NR_LABEL_FIGURES && !err; i++) {
		label = record_label_figure(iv, r, i, buf);
		if (label)
			err = json_add_label(obj, label_figure_names[i], label);
	}
	for (i = 0; i < (size_t)iv->nr_events && !err; i++) {
		if (!r->counter_valid[i])
			continue;
		value = event_figure(iv->event_columns[i], r->counter[i], &unit);
		err = json_add_number(obj, iv->event_columns[i], value);
	}
	record_derived(iv, r, &d);
	for (i = 0; i < CG_NR_DERIVED && !err; i++)
		if (d.valid[i])
			err = json_add_number(obj, derived_columns[i].name, d.value[i]);
	return err ?: json_pools(obj, iv, r);
}

static int json_host(cJSON *root, const struct cg_host *h)
{
	cJSON *host, *disks, *disk;
	int i, err;

	host = cJSON_AddObjectToObject(root, "host");
	if (!host)
		return -ENOMEM;
	err = json_add_number(host, "cpuBusyPercent", h->cpu_busy_percent);
	if (!err)
		err = json_add_number(host, "cpuIowaitPercent", h->cpu_iowait_percent);
	if (err)
		return err;
	disks = cJSON_AddObjectToObject(host, "disks");
	if (!disks)
		return -ENOMEM;
	for (i = 0; i < h->nr_disks && !err; i++) {
		disk = json_add_object(disks, h->disks[i].name);
		if (!disk)
			return -errno;
		err = json_add_number(disk, "readMBps", h->disks[i].read_mbps);
		if (!err)
			err = json_add_number(disk, "writeMBps", h->disks[i].write_mbps);
		if (!err)
			err = json_add_number(disk, "busyPercent", h->disks[i].busy_percent);
	}
	return err;
}

static int write_json(FILE *f, const struct cg_interval *iv)
{
	cJSON *root, *containers;
	char *text = NULL;
	int i, err;

	root = cJSON_CreateObject();
	if (!root)
		return -ENOMEM;
	err = json_add_number(root, "epochMillis", (double)iv->epoch_ms);
	if (!err)
		err = json_add_number(root, "intervalMillis", ns_to_millis(iv->interval_ns));
	if (!err)
		err = stream__json_health(root, &iv->health);
	if (err)
		goto out;
	containers = cJSON_AddObjectToObject(root, "containers");
	if (!containers) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < iv->nr_records && !err; i++)
		err = json_record(containers, iv, &iv->records[i]);
	if (!err && iv->host.valid)
		err = json_host(root, &iv->host);
	if (err)
		goto out;

	text = cJSON_PrintUnformatted(root);
	if (!text) {
		err = -ENOMEM;
		goto out;
	}
	fputs(text, f);
	fputc('\n', f);
out:
	free(text);
	cJSON_Delete(root);
	return err;
}

static void write_table(FILE *f, const struct cg_interval *iv, bool first)
{
	char line[TABLE_LINE_MAX];
	bool shown[TABLE_NR_COLUMNS];
	time_t seconds = (time_t)(iv->epoch_ms / 1000);
	struct tm tm;
	int i;

	table_columns_shown(iv, shown);
	localtime_r(&seconds, &tm);
	if (!first)
		fputc('\n', f);
	fprintf(f, "%02d:%02d:%02d  interval %.3f s", tm.tm_hour, tm.tm_min, tm.tm_sec,
		(double)iv->interval_ns / NSEC_PER_SEC);
	if (iv->health.dropped_events)
		fprintf(f, "  dropped events %llu", (unsigned long long)iv->health.dropped_events);
	if (iv->health.inconsistencies)
		fprintf(f, "  INCONSISTENT %llu", (unsigned long long)iv->health.inconsistencies);
	table_header(line, sizeof(line), shown, TABLE_LABEL_WIDTH);
	fprintf(f, "\n%s\n", line);
	for (i = 0; i < iv->nr_records; i++) {
		table_row(line, sizeof(line), iv, &iv->records[i], shown, TABLE_LABEL_WIDTH);
		fprintf(f, "%s\n", line);
	}
}

int stream__write(FILE *f, enum cg_format fmt, const struct cg_interval *iv, bool first)
{
	int err;

	/* a failed write leaves f's error flag set, and stdio_flush() reports it */
	switch (fmt) {
	case CG_FORMAT_CSV:
		write_csv(f, iv, first);
		err = 0;
		break;
	case CG_FORMAT_JSON:
		err = write_json(f, iv);
		break;
	case CG_FORMAT_TABLE:
		write_table(f, iv, first);
		err = 0;
		break;
	default:
		err = -EINVAL;
		break;
	}
	return err ?: stdio_flush(f);
}

int stream__json_health(cJSON *obj, const struct cg_health *health)
{
	int err;

	err = json_add_number(obj, "droppedEvents", (double)health->dropped_events);
	if (!err)
		err = json_add_number(obj, "missedSwitches", (double)health->missed_switches);
	if (!err)
		err = json_add_number(obj, "unseenWakeups", (double)health->unseen_wakeups);
	if (!err)
		err = json_add_number(obj, "inconsistencies", (double)health->inconsistencies);
	return err;
}
