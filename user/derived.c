// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>

#include "derived.h"
#include "hist.h"
#include "util.h"

#define TASK_CLOCK "taskClockMillis"

int unit_decimals(enum cg_unit unit)
{
	switch (unit) {
	case CG_UNIT_FINE:
		return 3;
	case CG_UNIT_COARSE:
		return 1;
	case CG_UNIT_COUNT:
		break;
	}
	return 0;
}

const struct cg_column figure_columns[CG_NR_FIGURES] = {
	[CG_FIG_CPU_CORES] = { "cpuCores", CG_UNIT_FINE },
	[CG_FIG_TASKS] = { "tasks", CG_UNIT_COUNT },
	[CG_FIG_ONCPU_MILLIS] = { "onCpuMillis", CG_UNIT_FINE },
	[CG_FIG_RUNQ_MILLIS] = { "runqWaitMillis", CG_UNIT_FINE },
	[CG_FIG_SLEEP_MILLIS] = { "offCpuSleepMillis", CG_UNIT_FINE },
	[CG_FIG_BLOCKED_MILLIS] = { "offCpuBlockedMillis", CG_UNIT_FINE },
	[CG_FIG_VCSW] = { "voluntarySwitches", CG_UNIT_COUNT },
	[CG_FIG_IVCSW] = { "involuntarySwitches", CG_UNIT_COUNT },
	[CG_FIG_MIGRATIONS] = { "migrations", CG_UNIT_COUNT },
	[CG_FIG_RUNQ_WAITS] = { "runqWaits", CG_UNIT_COUNT },
	[CG_FIG_RUNQ_P50_MICROS] = { "runqP50Micros", CG_UNIT_FINE },
	[CG_FIG_RUNQ_P99_MICROS] = { "runqP99Micros", CG_UNIT_FINE },
	[CG_FIG_RUNQ_MAX_MICROS] = { "runqMaxMicros", CG_UNIT_FINE },
	[CG_FIG_VCSW_RATE] = { "voluntarySwitchesPerSecond", CG_UNIT_COARSE },
	[CG_FIG_IVCSW_RATE] = { "involuntarySwitchesPerSecond", CG_UNIT_COARSE },
	[CG_FIG_MIGRATIONS_RATE] = { "migrationsPerSecond", CG_UNIT_COARSE },
	[CG_FIG_RUNQ_WAITS_RATE] = { "runqWaitsPerSecond", CG_UNIT_COARSE },
	[CG_FIG_RUNQ_MILLIS_RATE] = { "runqWaitMillisPerSecond", CG_UNIT_COARSE },
	[CG_FIG_SLEEP_MILLIS_RATE] = { "offCpuSleepMillisPerSecond", CG_UNIT_COARSE },
	[CG_FIG_BLOCKED_MILLIS_RATE] = { "offCpuBlockedMillisPerSecond", CG_UNIT_COARSE },
	[CG_FIG_RUNQ_PERCENT] = { "runqPercent", CG_UNIT_COARSE },
	[CG_FIG_SLEEP_PERCENT] = { "offCpuSleepPercent", CG_UNIT_COARSE },
	[CG_FIG_BLOCKED_PERCENT] = { "offCpuBlockedPercent", CG_UNIT_COARSE },
	[CG_FIG_STOLEN_MILLIS] = { "stolenMillis", CG_UNIT_FINE },
	[CG_FIG_STOLEN_MILLIS_RATE] = { "stolenMillisPerSecond", CG_UNIT_COARSE },
};

static bool per_second(double amount, uint64_t interval_ns, double *value)
{
	if (!interval_ns)
		return false;
	*value = amount * NSEC_PER_SEC / (double)interval_ns;
	return true;
}

static bool share_of_task_time(const struct cg_record *r, enum cg_state state, double *value)
{
	uint64_t total = 0;
	int s;

	for (s = 0; s < CG_NR_STATES; s++)
		total += r->time_ns[s];
	if (!total)
		return false;
	*value = 100.0 * (double)r->time_ns[state] / (double)total;
	return true;
}

static bool runq_quantile_micros(const struct cg_record *r, double q, double *value)
{
	if (!r->runq_waits)
		return false;
	*value = (double)hist_quantile(&r->runq_hist, q, r->runq_max_ns) / NSEC_PER_USEC;
	return true;
}

bool record_figure(const struct cg_record *r, uint64_t interval_ns, enum cg_figure fig,
		   double *value)
{
	switch (fig) {
	case CG_FIG_CPU_CORES:
		if (!interval_ns)
			return false;
		*value = (double)r->time_ns[CG_ONCPU] / (double)interval_ns;
		return true;
	case CG_FIG_TASKS:
		*value = (double)r->tasks;
		return true;
	case CG_FIG_ONCPU_MILLIS:
		*value = (double)r->time_ns[CG_ONCPU] / NSEC_PER_MSEC;
		return true;
	case CG_FIG_RUNQ_MILLIS:
		*value = (double)r->time_ns[CG_RUNQ] / NSEC_PER_MSEC;
		return true;
	case CG_FIG_SLEEP_MILLIS:
		*value = (double)r->time_ns[CG_SLEEP] / NSEC_PER_MSEC;
		return true;
	case CG_FIG_BLOCKED_MILLIS:
		*value = (double)r->time_ns[CG_BLOCKED] / NSEC_PER_MSEC;
		return true;
	case CG_FIG_VCSW:
		*value = (double)r->nvcsw;
		return true;
	case CG_FIG_IVCSW:
		*value = (double)r->nivcsw;
		return true;
	case CG_FIG_MIGRATIONS:
		*value = (double)r->migrations;
		return true;
	case CG_FIG_RUNQ_WAITS:
		*value = (double)r->runq_waits;
		return true;
	case CG_FIG_RUNQ_P50_MICROS:
		return runq_quantile_micros(r, 0.5, value);
	case CG_FIG_RUNQ_P99_MICROS:
		return runq_quantile_micros(r, 0.99, value);
	case CG_FIG_RUNQ_MAX_MICROS:
		if (!r->runq_waits)
			return false;
		*value = (double)r->runq_max_ns / NSEC_PER_USEC;
		return true;
	case CG_FIG_VCSW_RATE:
		return per_second((double)r->nvcsw, interval_ns, value);
	case CG_FIG_IVCSW_RATE:
		return per_second((double)r->nivcsw, interval_ns, value);
	case CG_FIG_MIGRATIONS_RATE:
		return per_second((double)r->migrations, interval_ns, value);
	case CG_FIG_RUNQ_WAITS_RATE:
		return per_second((double)r->runq_waits, interval_ns, value);
	case CG_FIG_RUNQ_MILLIS_RATE:
		return per_second((double)r->time_ns[CG_RUNQ] / NSEC_PER_MSEC, interval_ns, value);
	case CG_FIG_SLEEP_MILLIS_RATE:
		return per_second((double)r->time_ns[CG_SLEEP] / NSEC_PER_MSEC, interval_ns, value);
	case CG_FIG_BLOCKED_MILLIS_RATE:
		return per_second((double)r->time_ns[CG_BLOCKED] / NSEC_PER_MSEC, interval_ns,
				  value);
	case CG_FIG_RUNQ_PERCENT:
		return share_of_task_time(r, CG_RUNQ, value);
	case CG_FIG_SLEEP_PERCENT:
		return share_of_task_time(r, CG_SLEEP, value);
	case CG_FIG_BLOCKED_PERCENT:
		return share_of_task_time(r, CG_BLOCKED, value);
	case CG_FIG_STOLEN_MILLIS:
		*value = (double)r->time_ns[CG_STOLEN] / NSEC_PER_MSEC;
		return true;
	case CG_FIG_STOLEN_MILLIS_RATE:
		return per_second((double)r->time_ns[CG_STOLEN] / NSEC_PER_MSEC, interval_ns,
				  value);
	case CG_NR_FIGURES:
		break;
	}
	return false;
}

double event_figure(const char *column, uint64_t counter, enum cg_unit *unit)
{
	if (!strcmp(column, TASK_CLOCK)) {
		*unit = CG_UNIT_FINE;
		return (double)counter / NSEC_PER_MSEC;
	}
	*unit = CG_UNIT_COUNT;
	return (double)counter;
}

const struct cg_column derived_columns[CG_NR_DERIVED] = {
	[CG_DERIVED_GHZ] = { "ghz", CG_UNIT_FINE },
	[CG_DERIVED_IPC] = { "instructionsPerCycle", CG_UNIT_FINE },
	[CG_DERIVED_LLC_MPKI] = { "llcMissesPerKiloInstructions", CG_UNIT_FINE },
	[CG_DERIVED_LLC_MISS_PERCENT] = { "llcMissPercent", CG_UNIT_COARSE },
	[CG_DERIVED_L1D_MPKI] = { "l1dMissesPerKiloInstructions", CG_UNIT_FINE },
	[CG_DERIVED_BRANCH_MPKI] = { "branchMissesPerKiloInstructions", CG_UNIT_FINE },
};

/* Each metric is scale * numerator / denominator. */
static const struct {
	const char *numerator;
	const char *denominator;
	double scale;
} derived_inputs[CG_NR_DERIVED] = {
	/* The task-clock counter is in nanoseconds, and cycles per nanosecond are GHz. */
	[CG_DERIVED_GHZ] = { "cycles", TASK_CLOCK, 1 },
	[CG_DERIVED_IPC] = { "instructions", "cycles", 1 },
	[CG_DERIVED_LLC_MPKI] = { "cacheMisses", "instructions", 1000 },
	[CG_DERIVED_LLC_MISS_PERCENT] = { "cacheMisses", "cacheReferences", 100 },
	[CG_DERIVED_L1D_MPKI] = { "l1dLoadMisses", "instructions", 1000 },
	[CG_DERIVED_BRANCH_MPKI] = { "branchMisses", "instructions", 1000 },
};

static bool counter_of(int nr_events, const char *const *columns, const uint64_t *counter,
		       const bool *counter_valid, const char *name, uint64_t *value)
{
	int i;

	for (i = 0; i < nr_events; i++) {
		if (!strcmp(columns[i], name)) {
			*value = counter[i];
			return counter_valid[i];
		}
	}
	return false;
}

void derived_compute(struct cg_derived *d, int nr_events, const char *const *columns,
		     const uint64_t *counter, const bool *counter_valid)
{
	uint64_t num, den;
	int m;

	for (m = 0; m < CG_NR_DERIVED; m++) {
		d->valid[m] = counter_of(nr_events, columns, counter, counter_valid,
					 derived_inputs[m].numerator, &num) &&
			      counter_of(nr_events, columns, counter, counter_valid,
					 derived_inputs[m].denominator, &den) &&
			      den;
		d->value[m] = d->valid[m] ? derived_inputs[m].scale * (double)num / (double)den : 0;
	}
}

int host_nr_columns(const struct cg_host *h)
{
	return 2 + 3 * h->nr_disks;
}

double host_column(const struct cg_host *h, int i, char name[CG_HOST_COLUMN_NAME_MAX])
{
	const struct cg_host_disk *disk;

	if (i == 0) {
		snprintf(name, CG_HOST_COLUMN_NAME_MAX, "cpuBusyPercent");
		return h->cpu_busy_percent;
	}
	if (i == 1) {
		snprintf(name, CG_HOST_COLUMN_NAME_MAX, "cpuIowaitPercent");
		return h->cpu_iowait_percent;
	}
	disk = &h->disks[(i - 2) / 3];
	switch ((i - 2) % 3) {
	case 0:
		snprintf(name, CG_HOST_COLUMN_NAME_MAX, "%.31sReadMBps", disk->name);
		return disk->read_mbps;
	case 1:
		snprintf(name, CG_HOST_COLUMN_NAME_MAX, "%.31sWriteMBps", disk->name);
		return disk->write_mbps;
	default:
		snprintf(name, CG_HOST_COLUMN_NAME_MAX, "%.31sBusyPercent", disk->name);
		return disk->busy_percent;
	}
}
