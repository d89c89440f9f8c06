// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>

#include "core/derived.h"
#include "core/hist.h"
#include "lib/util.h"

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

#define TIME(state, scale)	   CG_AMOUNT_TIME, state, CG_SCALE_##scale
#define COUNT(count, scale)	   CG_AMOUNT_COUNT, count, CG_SCALE_##scale
#define CGROUPFS(item, scale)	   CG_AMOUNT_CGROUPFS, item, CG_SCALE_##scale
#define RUNQ_QUANTILE(thousandths) CG_AMOUNT_RUNQ_QUANTILE, thousandths, CG_SCALE_MICROS

const struct cg_figure_column figure_columns[CG_NR_FIGURES] = {
	[CG_FIG_CPU_CORES] = { "cpuCores", CG_UNIT_FINE, TIME(CG_ONCPU, CORES) },
	[CG_FIG_TASKS] = { "tasks", CG_UNIT_COUNT, CG_AMOUNT_TASKS, 0, CG_SCALE_AS_IS },
	[CG_FIG_ONCPU_MILLIS] = { "onCpuMillis", CG_UNIT_FINE, TIME(CG_ONCPU, MILLIS) },
	[CG_FIG_RUNQ_MILLIS] = { "runqWaitMillis", CG_UNIT_FINE, TIME(CG_RUNQ, MILLIS) },
	[CG_FIG_SLEEP_MILLIS] = { "offCpuSleepMillis", CG_UNIT_FINE, TIME(CG_SLEEP, MILLIS) },
	[CG_FIG_BLOCKED_MILLIS] = { "offCpuBlockedMillis", CG_UNIT_FINE, TIME(CG_BLOCKED, MILLIS) },
	[CG_FIG_VCSW] = { "voluntarySwitches", CG_UNIT_COUNT, COUNT(CG_NVCSW, AS_IS) },
	[CG_FIG_IVCSW] = { "involuntarySwitches", CG_UNIT_COUNT, COUNT(CG_NIVCSW, AS_IS) },
	[CG_FIG_MIGRATIONS] = { "migrations", CG_UNIT_COUNT, COUNT(CG_MIGRATIONS, AS_IS) },
	[CG_FIG_RUNQ_WAITS] = { "runqWaits", CG_UNIT_COUNT, COUNT(CG_RUNQ_WAITS, AS_IS) },
	[CG_FIG_RUNQ_P50_MICROS] = { "runqP50Micros", CG_UNIT_FINE, RUNQ_QUANTILE(500) },
	[CG_FIG_RUNQ_P99_MICROS] = { "runqP99Micros", CG_UNIT_FINE, RUNQ_QUANTILE(990) },
	[CG_FIG_RUNQ_MAX_MICROS] = { "runqMaxMicros", CG_UNIT_FINE, CG_AMOUNT_RUNQ_MAX, 0,
				     CG_SCALE_MICROS },
	[CG_FIG_VCSW_RATE] = { "voluntarySwitchesPerSecond", CG_UNIT_COARSE,
			       COUNT(CG_NVCSW, PER_SECOND) },
	[CG_FIG_IVCSW_RATE] = { "involuntarySwitchesPerSecond", CG_UNIT_COARSE,
				COUNT(CG_NIVCSW, PER_SECOND) },
	[CG_FIG_MIGRATIONS_RATE] = { "migrationsPerSecond", CG_UNIT_COARSE,
				     COUNT(CG_MIGRATIONS, PER_SECOND) },
	[CG_FIG_RUNQ_WAITS_RATE] = { "runqWaitsPerSecond", CG_UNIT_COARSE,
				     COUNT(CG_RUNQ_WAITS, PER_SECOND) },
	[CG_FIG_RUNQ_MILLIS_RATE] = { "runqWaitMillisPerSecond", CG_UNIT_COARSE,
				      TIME(CG_RUNQ, MILLIS_PER_SECOND) },
	[CG_FIG_SLEEP_MILLIS_RATE] = { "offCpuSleepMillisPerSecond", CG_UNIT_COARSE,
				       TIME(CG_SLEEP, MILLIS_PER_SECOND) },
	[CG_FIG_BLOCKED_MILLIS_RATE] = { "offCpuBlockedMillisPerSecond", CG_UNIT_COARSE,
					 TIME(CG_BLOCKED, MILLIS_PER_SECOND) },
	[CG_FIG_RUNQ_PERCENT] = { "runqPercent", CG_UNIT_COARSE, TIME(CG_RUNQ, SHARE) },
	[CG_FIG_SLEEP_PERCENT] = { "offCpuSleepPercent", CG_UNIT_COARSE, TIME(CG_SLEEP, SHARE) },
	[CG_FIG_BLOCKED_PERCENT] = { "offCpuBlockedPercent", CG_UNIT_COARSE,
				     TIME(CG_BLOCKED, SHARE) },
	[CG_FIG_STOLEN_MILLIS] = { "stolenMillis", CG_UNIT_FINE, TIME(CG_STOLEN, MILLIS) },
	[CG_FIG_STOLEN_MILLIS_RATE] = { "stolenMillisPerSecond", CG_UNIT_COARSE,
					TIME(CG_STOLEN, MILLIS_PER_SECOND) },
	[CG_FIG_MINOR_FAULTS] = { "minorPageFaults", CG_UNIT_COUNT, COUNT(CG_MINOR_FAULTS, AS_IS) },
	[CG_FIG_MAJOR_FAULTS] = { "majorPageFaults", CG_UNIT_COUNT, COUNT(CG_MAJOR_FAULTS, AS_IS) },
	[CG_FIG_MINOR_FAULTS_RATE] = { "minorPageFaultsPerSecond", CG_UNIT_COARSE,
				       COUNT(CG_MINOR_FAULTS, PER_SECOND) },
	[CG_FIG_MAJOR_FAULTS_RATE] = { "majorPageFaultsPerSecond", CG_UNIT_COARSE,
				       COUNT(CG_MAJOR_FAULTS, PER_SECOND) },
	[CG_FIG_PREEMPTED_SAME] = { "preemptedBySameCgroup", CG_UNIT_COUNT,
				    COUNT(CG_PREEMPTED_BY_SAME, AS_IS) },
	[CG_FIG_PREEMPTED_OTHER] = { "preemptedByOtherCgroup", CG_UNIT_COUNT,
				     COUNT(CG_PREEMPTED_BY_OTHER, AS_IS) },
	[CG_FIG_PREEMPTED_KERNEL] = { "preemptedByKernel", CG_UNIT_COUNT,
				      COUNT(CG_PREEMPTED_BY_KERNEL, AS_IS) },
	[CG_FIG_PREEMPTED_SAME_RATE] = { "preemptedBySameCgroupPerSecond", CG_UNIT_COARSE,
					 COUNT(CG_PREEMPTED_BY_SAME, PER_SECOND) },
	[CG_FIG_PREEMPTED_OTHER_RATE] = { "preemptedByOtherCgroupPerSecond", CG_UNIT_COARSE,
					  COUNT(CG_PREEMPTED_BY_OTHER, PER_SECOND) },
	[CG_FIG_PREEMPTED_KERNEL_RATE] = { "preemptedByKernelPerSecond", CG_UNIT_COARSE,
					   COUNT(CG_PREEMPTED_BY_KERNEL, PER_SECOND) },
	[CG_FIG_PERIODS] = { "periods", CG_UNIT_COUNT, CGROUPFS(CG_FS_PERIODS, AS_IS) },
	[CG_FIG_THROTTLED_PERIODS] = { "throttledPeriods", CG_UNIT_COUNT,
				       CGROUPFS(CG_FS_THROTTLED_PERIODS, AS_IS) },
	[CG_FIG_THROTTLED_MILLIS] = { "throttledMillis", CG_UNIT_FINE,
				      CGROUPFS(CG_FS_THROTTLED_NS, MILLIS) },
	[CG_FIG_CPU_PRESSURE_SOME_MILLIS] = { "cpuPressureSomeMillis", CG_UNIT_FINE,
					      CGROUPFS(CG_FS_CPU_SOME_NS, MILLIS) },
	[CG_FIG_CPU_PRESSURE_FULL_MILLIS] = { "cpuPressureFullMillis", CG_UNIT_FINE,
					      CGROUPFS(CG_FS_CPU_FULL_NS, MILLIS) },
	[CG_FIG_MEMORY_PRESSURE_SOME_MILLIS] = { "memoryPressureSomeMillis", CG_UNIT_FINE,
						 CGROUPFS(CG_FS_MEMORY_SOME_NS, MILLIS) },
	[CG_FIG_MEMORY_PRESSURE_FULL_MILLIS] = { "memoryPressureFullMillis", CG_UNIT_FINE,
						 CGROUPFS(CG_FS_MEMORY_FULL_NS, MILLIS) },
	[CG_FIG_IO_PRESSURE_SOME_MILLIS] = { "ioPressureSomeMillis", CG_UNIT_FINE,
					     CGROUPFS(CG_FS_IO_SOME_NS, MILLIS) },
	[CG_FIG_IO_PRESSURE_FULL_MILLIS] = { "ioPressureFullMillis", CG_UNIT_FINE,
					     CGROUPFS(CG_FS_IO_FULL_NS, MILLIS) },
	[CG_FIG_BUSIEST_THREAD_CORES] = { "busiestThreadCores", CG_UNIT_FINE,
					  CG_AMOUNT_BUSIEST_THREAD, 0, CG_SCALE_CORES },
	[CG_FIG_HUNGRIEST_RAN_CORES] = { "hungriestThreadRanCores", CG_UNIT_FINE,
					 CG_AMOUNT_HUNGRIEST_THREAD, CG_ONCPU, CG_SCALE_CORES },
	[CG_FIG_HUNGRIEST_WAITED_CORES] = { "hungriestThreadWaitedCores", CG_UNIT_FINE,
					    CG_AMOUNT_HUNGRIEST_THREAD, CG_RUNQ, CG_SCALE_CORES },
	[CG_FIG_THREADS] = { "threads", CG_UNIT_COUNT, CG_AMOUNT_TASKS, 0, CG_SCALE_AS_IS },
	[CG_FIG_OFFCPU_MILLIS] = { "offCpuMillis", CG_UNIT_FINE, CG_AMOUNT_OFF_CPU, 0,
				   CG_SCALE_MILLIS },
	[CG_FIG_OFFCPU_MILLIS_RATE] = { "offCpuMillisPerSecond", CG_UNIT_COARSE, CG_AMOUNT_OFF_CPU,
					0, CG_SCALE_MILLIS_PER_SECOND },
};

static bool per_second(double amount, uint64_t interval_ns, double *value)
{
	if (!interval_ns)
		return false;
	*value = amount * NSEC_PER_SEC / (double)interval_ns;
	return true;
}

static bool share_of_task_time(const struct cg_record *r, int state, double *value)
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

/*
 * Whether col's amount is one only the scheduler's events give, which --light's sweep of the
 * tasks' own counters has not: the split of off-CPU time into sleep and blocked (the sweep
 * counts all of it as CG_SLEEP), stolen time, who preempted, the waits' lengths one by one and
 * the busiest thread.
 */
static bool amount_from_events(const struct cg_figure_column *col)
{
	switch (col->amount) {
	case CG_AMOUNT_TIME:
		return col->index == CG_SLEEP || col->index == CG_BLOCKED ||
		       col->index == CG_STOLEN;
	case CG_AMOUNT_COUNT:
		return col->index == CG_PREEMPTED_BY_SAME || col->index == CG_PREEMPTED_BY_OTHER ||
		       col->index == CG_PREEMPTED_BY_KERNEL;
	case CG_AMOUNT_RUNQ_QUANTILE:
	case CG_AMOUNT_RUNQ_MAX:
	case CG_AMOUNT_BUSIEST_THREAD:
	case CG_AMOUNT_HUNGRIEST_THREAD:
		return true;
	default:
		return false;
	}
}

/* The amount col reads from a, where it is one of a's; false otherwise or when it has none. */
static bool column_amount(const struct cg_amounts *a, const struct cg_figure_column *col,
			  uint64_t *amount)
{
	if (a->light && amount_from_events(col))
		return false;
	switch (col->amount) {
	case CG_AMOUNT_TIME:
		*amount = a->time_ns[col->index];
		return true;
	case CG_AMOUNT_OFF_CPU:
		*amount = a->time_ns[CG_SLEEP] + a->time_ns[CG_BLOCKED];
		return true;
	case CG_AMOUNT_COUNT:
		*amount = a->count[col->index];
		return true;
	case CG_AMOUNT_TASKS:
		*amount = a->tasks;
		return true;
	case CG_AMOUNT_CGROUPFS:
		if (!(a->cgroupfs_valid & (1u << col->index)))
			return false;
		*amount = a->cgroupfs[col->index];
		return true;
	default:
		return false;
	}
}

/* The amount col reads from r, as a number; false when r has none (no wait to take from). */
static bool figure_amount(const struct cg_record *r, const struct cg_figure_column *col,
			  double *amount)
{
	uint64_t value;

	if (r->light && amount_from_events(col))
		return false;
	switch (col->amount) {
	case CG_AMOUNT_RUNQ_QUANTILE:
		if (!r->count[CG_RUNQ_WAITS])
			return false;
		*amount = (double)hist_quantile(&r->runq_hist, col->index / 1000.0,
						r->runq_min_inv ? ~r->runq_min_inv : 0,
						r->runq_max_ns);
		return true;
	case CG_AMOUNT_RUNQ_MAX:
		if (!r->count[CG_RUNQ_WAITS])
			return false;
		*amount = (double)r->runq_max_ns;
		return true;
	case CG_AMOUNT_BUSIEST_THREAD:
		*amount = (double)r->busiest.on_cpu_ns;
		return true;
	case CG_AMOUNT_HUNGRIEST_THREAD:
		if (!r->hungriest.tid)
			return false;
		*amount = (double)(col->index == CG_RUNQ ? r->hungriest.runq_ns
							 : r->hungriest.on_cpu_ns);
		return true;
	default:
		if (!column_amount(&r->amounts, col, &value))
			return false;
		*amount = (double)value;
		return true;
	}
}

bool record_figure(const struct cg_record *r, uint64_t interval_ns, enum cg_figure fig,
		   double *value)
{
	const struct cg_figure_column *col;
	double amount;

	if ((unsigned int)fig >= CG_NR_FIGURES)
		return false;
	col = &figure_columns[fig];
	if (!figure_amount(r, col, &amount))
		return false;
	switch (col->scale) {
	case CG_SCALE_AS_IS:
		*value = amount;
		return true;
	case CG_SCALE_MILLIS:
		*value = amount / NSEC_PER_MSEC;
		return true;
	case CG_SCALE_MICROS:
		*value = amount / NSEC_PER_USEC;
		return true;
	case CG_SCALE_PER_SECOND:
		return per_second(amount, interval_ns, value);
	case CG_SCALE_MILLIS_PER_SECOND:
		return per_second(amount / NSEC_PER_MSEC, interval_ns, value);
	case CG_SCALE_CORES:
		if (!interval_ns)
			return false;
		*value = amount / (double)interval_ns;
		return true;
	case CG_SCALE_SHARE:
		return share_of_task_time(r, col->index, value);
	}
	return false;
}

bool amounts_value(const struct cg_amounts *a, enum cg_figure fig, uint64_t *value)
{
	if ((unsigned int)fig >= CG_NR_FIGURES)
		return false;
	return column_amount(a, &figure_columns[fig], value);
}

bool figure_in_nanoseconds(enum cg_figure fig)
{
	if ((unsigned int)fig >= CG_NR_FIGURES)
		return false;
	switch (figure_columns[fig].scale) {
	case CG_SCALE_MILLIS:
	case CG_SCALE_MICROS:
	case CG_SCALE_MILLIS_PER_SECOND:
	case CG_SCALE_CORES:
		return true;
	default:
		return false;
	}
}

const char *const verdict_names[CG_NR_VERDICTS] = {
	[CG_VERDICT_THROTTLED] = "throttled",
	[CG_VERDICT_SATURATED] = "saturated",
	[CG_VERDICT_SERIAL] = "serial",
	[CG_VERDICT_BLOCKED] = "blocked",
	[CG_VERDICT_CONTENDED] = "contended",
	[CG_VERDICT_IDLE] = "idle",
	[CG_VERDICT_OK] = "ok",
};

static bool cgroupfs_figure(const struct cg_record *r, enum cg_cgroupfs item, uint64_t *value)
{
	if (!(r->cgroupfs_valid & (1u << item)))
		return false;
	*value = r->cgroupfs[item];
	return true;
}

/*
 * What took the CPU from a contended record's tasks most often: "other:" and the cgroup that
 * did most (or "other" when no cgroup could be named), "kernel" or "same"; NULL when they were
 * not preempted (they waited after wakeups only). A tie goes to another cgroup, then the kernel:
 * what the container cannot fix itself comes first.
 */
static const char *main_preempter(const struct cg_record *r, const char **cgroup)
{
	uint64_t same = r->count[CG_PREEMPTED_BY_SAME], other = r->count[CG_PREEMPTED_BY_OTHER];
	uint64_t kernel = r->count[CG_PREEMPTED_BY_KERNEL];

	*cgroup = NULL;
	if (!same && !other && !kernel)
		return NULL;
	if (other >= kernel && other >= same) {
		*cgroup = r->nr_preempters ? r->preempters[0].label : NULL;
		return "other";
	}
	return kernel >= same ? "kernel" : "same";
}

/* A thread as COMM:TID: its id too, which a name shared by a pool does not say. */
static const char *thread_label(const struct cg_record_thread *t, char *buf, size_t len)
{
	snprintf(buf, len, "%s:%u", t->comm, t->tid);
	return buf;
}

enum cg_verdict record_verdict(const struct cg_record *r, uint64_t interval_ns, int nr_cpus,
			       char *text, size_t len)
{
	double on = (double)r->time_ns[CG_ONCPU], runq = (double)r->time_ns[CG_RUNQ];
	double blocked = (double)r->time_ns[CG_BLOCKED], least = VERDICT_MIN_SHARE * interval_ns;
	/* by demand where the kernel's per-thread figures are had (--threads), else by what ran */
	const struct cg_record_thread *stage = r->hungriest.tid ? &r->hungriest : &r->busiest;
	double wanted = (double)stage->on_cpu_ns + (double)stage->runq_ns;
	double limit = nr_cpus > 0 ? nr_cpus : 0;
	const char *cause = NULL, *detail = NULL; /* after the name: "name:cause:detail" */
	char thread[CG_LABEL_FIGURE_MAX];
	uint64_t periods, io = 0, memory = 0;
	enum cg_verdict v;

	if (r->cpu_limit_cores > 0 && (!limit || r->cpu_limit_cores < limit))
		limit = r->cpu_limit_cores;
	if (!interval_ns) {
		v = CG_VERDICT_IDLE; /* nothing covered, nothing to judge */
	} else if (cgroupfs_figure(r, CG_FS_THROTTLED_PERIODS, &periods) && periods) {
		v = CG_VERDICT_THROTTLED;
	} else if (limit > 0 && on >= VERDICT_SATURATED_SHARE * limit * interval_ns) {
		v = CG_VERDICT_SATURATED;
	} else if (wanted > 0 && wanted >= VERDICT_SERIAL_SHARE * interval_ns &&
		   on - stage->on_cpu_ns < VERDICT_SERIAL_REST_SHARE * wanted &&
		   r->runner_up_wanted_ns < VERDICT_SERIAL_SHARE * interval_ns) {
		v = CG_VERDICT_SERIAL;
		cause = thread_label(stage, thread, sizeof(thread));
	} else if (blocked >= least && blocked >= on && blocked >= runq && blocked > 0) {
		v = CG_VERDICT_BLOCKED;
		/* the stall the cgroup's own pressure files saw most of, when they saw one */
		cgroupfs_figure(r, CG_FS_IO_SOME_NS, &io);
		cgroupfs_figure(r, CG_FS_MEMORY_SOME_NS, &memory);
		if (io || memory)
			cause = io >= memory ? "io" : "memory";
	} else if (runq >= least && runq > 0 && runq >= VERDICT_CONTENDED_SHARE * on) {
		v = CG_VERDICT_CONTENDED;
		cause = main_preempter(r, &detail);
	} else if (on < least) {
		v = CG_VERDICT_IDLE;
	} else {
		v = CG_VERDICT_OK;
	}
	if (len)
		snprintf(text, len, "%s%s%s%s%s", verdict_names[v], cause ? ":" : "", cause ?: "",
			 detail ? ":" : "", detail ?: "");
	return v;
}

const char *const label_figure_names[CG_NR_LABEL_FIGURES] = {
	[CG_LABEL_TOP_PREEMPTER] = "topPreempter",
	[CG_LABEL_VERDICT] = "verdict",
	[CG_LABEL_BUSIEST_THREAD] = "busiestThread",
	[CG_LABEL_HUNGRIEST_THREAD] = "hungriestThread",
};

const char *record_label_figure(const struct cg_interval *iv, const struct cg_record *r,
				enum cg_label_figure fig, char buf[CG_LABEL_FIGURE_MAX])
{
	switch (fig) {
	case CG_LABEL_TOP_PREEMPTER:
		return r->nr_preempters ? r->preempters[0].label : NULL;
	case CG_LABEL_VERDICT:
		record_verdict(r, iv->interval_ns, iv->nr_cpus, buf, CG_LABEL_FIGURE_MAX);
		return buf;
	case CG_LABEL_BUSIEST_THREAD:
		return r->busiest.on_cpu_ns ? thread_label(&r->busiest, buf, CG_LABEL_FIGURE_MAX)
					    : NULL;
	case CG_LABEL_HUNGRIEST_THREAD:
		return r->hungriest.tid ? thread_label(&r->hungriest, buf, CG_LABEL_FIGURE_MAX)
					: NULL;
	case CG_NR_LABEL_FIGURES:
		break;
	}
	return NULL;
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

void record_derived(const struct cg_interval *iv, const struct cg_record *r, struct cg_derived *d)
{
	derived_compute(d, iv->nr_events, iv->event_columns, r->counter, r->counter_valid);
}
