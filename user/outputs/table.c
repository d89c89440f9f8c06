// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>

#include "core/derived.h"
#include "outputs/table.h"
#include "lib/utf8.h"
#include "lib/util.h"

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

static const struct table_column table_columns[TABLE_NR_COLUMNS] = {
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
 * The label (or verdict) as a terminal can show it, into out (width + 1 bytes): at most width
 * bytes, not cut inside a UTF-8 sequence, and with control characters, C1's included (an escape
 * sequence could rewrite the screen), and bytes that are not UTF-8 as '?'.
 */
static void table_label(const char *name, char *out, int width)
{
	size_t len = strlen(name), i, o, unit;

	if (len > (size_t)width) {
		len = width;
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

void table_columns_shown(const struct cg_interval *iv, bool shown[TABLE_NR_COLUMNS])
{
	struct cg_derived d;
	size_t c;
	int i;

	/* The ratio columns appear only when some cgroup has them, as without perf none does. */
	for (c = 0; c < TABLE_NR_COLUMNS; c++)
		shown[c] = table_columns[c].source == TABLE_FIGURE;
	for (i = 0; i < iv->nr_records; i++) {
		record_derived(iv, &iv->records[i], &d);
		for (c = 0; c < TABLE_NR_COLUMNS; c++)
			if (table_columns[c].source == TABLE_DERIVED &&
			    d.valid[table_columns[c].index])
				shown[c] = true;
	}
}

int table_numbers_width(const bool shown[TABLE_NR_COLUMNS])
{
	int c, width = 0;

	for (c = 0; c < TABLE_NR_COLUMNS; c++)
		if (shown[c])
			width += 1 + table_columns[c].width;
	return width;
}

void table_header(char *line, size_t len, const bool shown[TABLE_NR_COLUMNS], int label_width)
{
	size_t c, at;

	at = snprintf(line, len, "%-*.*s", label_width, label_width, "CONTAINER");
	for (c = 0; c < TABLE_NR_COLUMNS && at < len; c++)
		if (shown[c])
			at += snprintf(line + at, len - at, " %*s", table_columns[c].width,
				       table_columns[c].title);
	if (at < len)
		snprintf(line + at, len - at, " VERDICT");
}

void table_row(char *line, size_t len, const struct cg_interval *iv, const struct cg_record *r,
	       const bool shown[TABLE_NR_COLUMNS], int label_width)
{
	char label[TABLE_LABEL_WIDTH + 1], verdict[CG_LABEL_FIGURE_MAX];
	char shown_verdict[TABLE_VERDICT_WIDTH + 1];
	struct cg_derived d;
	enum cg_unit unit;
	double value;
	size_t c, at;

	record_derived(iv, r, &d);
	table_label(r->name, label, label_width);
	at = snprintf(line, len, "%-*s", label_width, label);
	for (c = 0; c < TABLE_NR_COLUMNS && at < len; c++) {
		const struct table_column *col = &table_columns[c];

		if (!shown[c])
			continue;
		if (table_value(col, iv, r, &d, &value, &unit))
			at += snprintf(line + at, len - at, " %*.*f", col->width,
				       unit_decimals(unit), value);
		else
			at += snprintf(line + at, len - at, " %*s", col->width, "-");
	}
	/* a stage found by demand: what it ran and what it waited, both (docs/metrics.md) */
	if (record_verdict(r, iv->interval_ns, iv->nr_cpus, verdict, sizeof(verdict)) ==
		    CG_VERDICT_SERIAL &&
	    r->hungriest.tid && iv->interval_ns)
		snprintf(verdict + strlen(verdict), sizeof(verdict) - strlen(verdict),
			 " ran %.2f waited %.2f",
			 (double)r->hungriest.on_cpu_ns / (double)iv->interval_ns,
			 (double)r->hungriest.runq_ns / (double)iv->interval_ns);
	table_label(verdict, shown_verdict, TABLE_VERDICT_WIDTH);
	if (at < len)
		snprintf(line + at, len - at, " %s", shown_verdict);
}
