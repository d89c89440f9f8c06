// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "derived.h"
#include "json_util.h"
#include "stream.h"
#include "text.h"
#include "utf8.h"
#include "util.h"

/* What the CSV and JSON stream give per cgroup, before the events and the derived ratios. */
static const enum cg_figure stream_figures[] = {
	CG_FIG_CPU_CORES,
	CG_FIG_TASKS,
	CG_FIG_ONCPU_MILLIS,
	CG_FIG_RUNQ_MILLIS,
	CG_FIG_SLEEP_MILLIS,
	CG_FIG_BLOCKED_MILLIS,
	CG_FIG_VCSW,
	CG_FIG_IVCSW,
	CG_FIG_MIGRATIONS,
	CG_FIG_RUNQ_WAITS,
	CG_FIG_RUNQ_P50_MICROS,
	CG_FIG_RUNQ_P99_MICROS,
	CG_FIG_RUNQ_MAX_MICROS,
	CG_FIG_STOLEN_MILLIS,
	CG_FIG_MINOR_FAULTS,
	CG_FIG_MAJOR_FAULTS,
};

static void record_derived(const struct cg_interval *iv, const struct cg_record *r,
			   struct cg_derived *d)
{
	derived_compute(d, iv->nr_events, iv->event_columns, r->counter, r->counter_valid);
}

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

static int json_record(cJSON *containers, const struct cg_interval *iv, const struct cg_record *r)
{
	struct cg_derived d;
	enum cg_unit unit;
	cJSON *obj;
	double value;
	size_t i;
	int err = 0;

	obj = json_add_object(containers, r->name);
	if (!obj)
		return -errno;
	for (i = 0; i < ARRAY_SIZE(stream_figures) && !err; i++)
		if (record_figure(r, iv->interval_ns, stream_figures[i], &value))
			err = json_add_number(obj, figure_columns[stream_figures[i]].name, value);
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
	return err;
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
		err = json_add_health(root, &iv->health);
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

#define TABLE_LABEL_WIDTH 32

enum table_source {
	TABLE_FIGURE,
	TABLE_DERIVED,
};

struct table_column {
	const char *title;
	int width;
	enum table_source source;
	int index; /* an enum cg_figure or enum cg_derived_metric */
};

static const struct table_column table_columns[] = {
	{ "CORES", 7, TABLE_FIGURE, CG_FIG_CPU_CORES },
	{ "TASKS", 6, TABLE_FIGURE, CG_FIG_TASKS },
	{ "VCSW/s", 9, TABLE_FIGURE, CG_FIG_VCSW_RATE },
	{ "IVCSW/s", 9, TABLE_FIGURE, CG_FIG_IVCSW_RATE },
	{ "MIGR/s", 8, TABLE_FIGURE, CG_FIG_MIGRATIONS_RATE },
	{ "RUNQ%", 6, TABLE_FIGURE, CG_FIG_RUNQ_PERCENT },
	{ "SLEEP%", 6, TABLE_FIGURE, CG_FIG_SLEEP_PERCENT },
	{ "BLOCK%", 6, TABLE_FIGURE, CG_FIG_BLOCKED_PERCENT },
	{ "P50us", 10, TABLE_FIGURE, CG_FIG_RUNQ_P50_MICROS },
	{ "P99us", 10, TABLE_FIGURE, CG_FIG_RUNQ_P99_MICROS },
	{ "MAXus", 10, TABLE_FIGURE, CG_FIG_RUNQ_MAX_MICROS },
	{ "IPC", 6, TABLE_DERIVED, CG_DERIVED_IPC },
	{ "LLC-MPKI", 9, TABLE_DERIVED, CG_DERIVED_LLC_MPKI },
};

#define NR_TABLE_COLUMNS ARRAY_SIZE(table_columns)

static bool table_value(const struct table_column *c, const struct cg_interval *iv,
			const struct cg_record *r, const struct cg_derived *d, double *value,
			enum cg_unit *unit)
{
	if (c->source == TABLE_DERIVED) {
		*value = d->value[c->index];
		*unit = derived_columns[c->index].unit;
		return d->valid[c->index];
	}
	*unit = figure_columns[c->index].unit;
	return record_figure(r, iv->interval_ns, c->index, value);
}

/*
 * The label as a terminal can show it: at most TABLE_LABEL_WIDTH bytes, not cut inside a UTF-8
 * sequence, and with control characters, C1's included (an escape sequence could rewrite the
 * screen), and bytes that are not UTF-8 as '?'.
 */
static void table_label(const char *name, char out[TABLE_LABEL_WIDTH + 1])
{
	size_t len = strlen(name), i, o, unit;

	if (len > TABLE_LABEL_WIDTH) {
		len = TABLE_LABEL_WIDTH;
		while (len && ((unsigned char)name[len] & 0xc0) == 0x80)
			len--;
	}
	for (i = 0, o = 0; i < len; i += unit) {
		if (utf8_unsafe((const unsigned char *)name + i, &unit)) {
			out[o++] = '?';
		} else {
			memcpy(out + o, name + i, unit);
			o += unit;
		}
	}
	out[o] = '\0';
}

static void write_table(FILE *f, const struct cg_interval *iv, bool first)
{
	bool shown[NR_TABLE_COLUMNS];
	char label[TABLE_LABEL_WIDTH + 1];
	struct cg_derived d;
	enum cg_unit unit;
	time_t seconds = (time_t)(iv->epoch_ms / 1000);
	struct tm tm;
	double value;
	size_t c;
	int i;

	/* The ratio columns appear only when some cgroup has them, as without perf none does. */
	for (c = 0; c < NR_TABLE_COLUMNS; c++)
		shown[c] = table_columns[c].source == TABLE_FIGURE;
	for (i = 0; i < iv->nr_records; i++) {
		record_derived(iv, &iv->records[i], &d);
		for (c = 0; c < NR_TABLE_COLUMNS; c++)
			if (table_columns[c].source == TABLE_DERIVED &&
			    d.valid[table_columns[c].index])
				shown[c] = true;
	}

	localtime_r(&seconds, &tm);
	if (!first)
		fputc('\n', f);
	fprintf(f, "%02d:%02d:%02d  interval %.3f s", tm.tm_hour, tm.tm_min, tm.tm_sec,
		(double)iv->interval_ns / NSEC_PER_SEC);
	if (iv->health.dropped_events)
		fprintf(f, "  dropped events %llu", (unsigned long long)iv->health.dropped_events);
	if (iv->health.inconsistencies)
		fprintf(f, "  INCONSISTENT %llu", (unsigned long long)iv->health.inconsistencies);
	fprintf(f, "\n%-*s", TABLE_LABEL_WIDTH, "CONTAINER");
	for (c = 0; c < NR_TABLE_COLUMNS; c++)
		if (shown[c])
			fprintf(f, " %*s", table_columns[c].width, table_columns[c].title);
	fputc('\n', f);

	for (i = 0; i < iv->nr_records; i++) {
		const struct cg_record *r = &iv->records[i];

		record_derived(iv, r, &d);
		table_label(r->name, label);
		fprintf(f, "%-*s", TABLE_LABEL_WIDTH, label);
		for (c = 0; c < NR_TABLE_COLUMNS; c++) {
			const struct table_column *col = &table_columns[c];

			if (!shown[c])
				continue;
			if (table_value(col, iv, r, &d, &value, &unit))
				fprintf(f, " %*.*f", col->width, unit_decimals(unit), value);
			else
				fprintf(f, " %*s", col->width, "-");
		}
		fputc('\n', f);
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
