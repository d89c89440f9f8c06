/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The figures every output prints, computed in one place from records: the per-record columns
 * (cores, millis, rates, run-queue quantiles), the perf event columns, the ratios derived from
 * the counters, and the host columns. No formatting here beyond how many decimals a figure
 * deserves; a figure that cannot be had is reported as not valid, never as 0.
 */
#ifndef CGSTAT_DERIVED_H
#define CGSTAT_DERIVED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/record.h"

enum cg_unit {
	CG_UNIT_COUNT,	/* a whole number */
	CG_UNIT_FINE,	/* millis, micros, cores and ratios */
	CG_UNIT_COARSE, /* per-second rates and percents */
};

/* How many decimals a figure of this unit is printed with: 0, 3 or 1. */
int unit_decimals(enum cg_unit unit);

struct cg_column {
	const char *name; /* the CSV header and JSON key */
	enum cg_unit unit;
};

/* What of a record a figure is made from. */
enum cg_amount {
	CG_AMOUNT_TIME,		  /* time_ns[index]: an enum cg_state */
	CG_AMOUNT_OFF_CPU,	  /* time_ns[CG_SLEEP] + time_ns[CG_BLOCKED] */
	CG_AMOUNT_COUNT,	  /* count[index]: an enum cg_count */
	CG_AMOUNT_TASKS,	  /* tasks at the end */
	CG_AMOUNT_RUNQ_QUANTILE,  /* index: the quantile in thousandths; needs a wait */
	CG_AMOUNT_RUNQ_MAX,	  /* the longest wait; needs a wait */
	CG_AMOUNT_CGROUPFS,	  /* cgroupfs[index]: an enum cg_cgroupfs; needs its valid bit */
	CG_AMOUNT_BUSIEST_THREAD, /* the busiest thread's on-CPU time */
	/* index: the hungriest thread's on-CPU (CG_ONCPU) or run-queue (CG_RUNQ) time; needs one */
	CG_AMOUNT_HUNGRIEST_THREAD,
};

/* How the amount is shown. */
enum cg_scale {
	CG_SCALE_AS_IS,
	CG_SCALE_MILLIS,	    /* nanoseconds as milliseconds */
	CG_SCALE_MICROS,	    /* nanoseconds as microseconds */
	CG_SCALE_PER_SECOND,	    /* per second of the time covered */
	CG_SCALE_MILLIS_PER_SECOND, /* nanoseconds as milliseconds per second */
	CG_SCALE_CORES,		    /* nanoseconds per nanosecond of the time covered */
	CG_SCALE_SHARE,		    /* percent of the tasks' time in all states */
};

/* One figure: its name and unit, and how it is made from a record. */
struct cg_figure_column {
	const char *name; /* the CSV header and JSON key */
	enum cg_unit unit;
	enum cg_amount amount;
	int index;
	enum cg_scale scale;
};

/* What one record says about its cgroup over the time it covers. */
enum cg_figure {
	CG_FIG_CPU_CORES, /* on-CPU time / interval */
	CG_FIG_TASKS,
	CG_FIG_ONCPU_MILLIS,
	CG_FIG_RUNQ_MILLIS,
	CG_FIG_SLEEP_MILLIS,
	CG_FIG_BLOCKED_MILLIS,
	CG_FIG_VCSW,
	CG_FIG_IVCSW,
	CG_FIG_MIGRATIONS,
	CG_FIG_RUNQ_WAITS,
	CG_FIG_RUNQ_P50_MICROS, /* the three run-queue figures need at least one wait */
	CG_FIG_RUNQ_P99_MICROS,
	CG_FIG_RUNQ_MAX_MICROS,
	CG_FIG_VCSW_RATE, /* per second of the interval */
	CG_FIG_IVCSW_RATE,
	CG_FIG_MIGRATIONS_RATE,
	CG_FIG_RUNQ_WAITS_RATE,
	CG_FIG_RUNQ_MILLIS_RATE,
	CG_FIG_SLEEP_MILLIS_RATE,
	CG_FIG_BLOCKED_MILLIS_RATE,
	CG_FIG_RUNQ_PERCENT, /* shares of the tasks' time (all states), not of the interval */
	CG_FIG_SLEEP_PERCENT,
	CG_FIG_BLOCKED_PERCENT,
	CG_FIG_STOLEN_MILLIS, /* on a CPU that ran something else (steal) */
	CG_FIG_STOLEN_MILLIS_RATE,
	CG_FIG_MINOR_FAULTS,
	CG_FIG_MAJOR_FAULTS,
	CG_FIG_MINOR_FAULTS_RATE,
	CG_FIG_MAJOR_FAULTS_RATE,
	CG_FIG_PREEMPTED_SAME, /* involuntary switches by who took the CPU */
	CG_FIG_PREEMPTED_OTHER,
	CG_FIG_PREEMPTED_KERNEL,
	CG_FIG_PREEMPTED_SAME_RATE,
	CG_FIG_PREEMPTED_OTHER_RATE,
	CG_FIG_PREEMPTED_KERNEL_RATE,
	CG_FIG_PERIODS, /* from the cgroup's files (cgroup-stats.csv) */
	CG_FIG_THROTTLED_PERIODS,
	CG_FIG_THROTTLED_MILLIS,
	CG_FIG_CPU_PRESSURE_SOME_MILLIS,
	CG_FIG_CPU_PRESSURE_FULL_MILLIS,
	CG_FIG_MEMORY_PRESSURE_SOME_MILLIS,
	CG_FIG_MEMORY_PRESSURE_FULL_MILLIS, /* on /metrics only, as its CG_FS_ */
	CG_FIG_IO_PRESSURE_SOME_MILLIS,
	CG_FIG_IO_PRESSURE_FULL_MILLIS,
	CG_FIG_BUSIEST_THREAD_CORES,   /* the thread that ran most: its on-CPU time / interval */
	CG_FIG_HUNGRIEST_RAN_CORES,    /* with --threads, the thread that wanted a CPU most: */
	CG_FIG_HUNGRIEST_WAITED_CORES, /* its on-CPU and run-queue time / interval */
	CG_FIG_THREADS,		       /* tasks, under pool-stats.csv's name for them */
	CG_FIG_OFFCPU_MILLIS,	       /* sleep and blocked: the whole of it with --light */
	CG_FIG_OFFCPU_MILLIS_RATE,
	CG_NR_FIGURES,
};

/* sched-stats.csv's figures in its column order, for every output that has them. */
#define CG_SCHED_FIGURES                                                               \
	CG_FIG_TASKS, CG_FIG_ONCPU_MILLIS, CG_FIG_RUNQ_MILLIS, CG_FIG_SLEEP_MILLIS,    \
		CG_FIG_BLOCKED_MILLIS, CG_FIG_VCSW, CG_FIG_IVCSW, CG_FIG_MIGRATIONS,   \
		CG_FIG_RUNQ_WAITS, CG_FIG_RUNQ_P50_MICROS, CG_FIG_RUNQ_P99_MICROS,     \
		CG_FIG_RUNQ_MAX_MICROS, CG_FIG_PREEMPTED_SAME, CG_FIG_PREEMPTED_OTHER, \
		CG_FIG_PREEMPTED_KERNEL

/* cgroup-stats.csv's figures in its column order, for every output that has them. */
#define CG_CGROUPFS_FIGURES                                                         \
	CG_FIG_PERIODS, CG_FIG_THROTTLED_PERIODS, CG_FIG_THROTTLED_MILLIS,          \
		CG_FIG_CPU_PRESSURE_SOME_MILLIS, CG_FIG_CPU_PRESSURE_FULL_MILLIS,   \
		CG_FIG_MEMORY_PRESSURE_SOME_MILLIS, CG_FIG_IO_PRESSURE_SOME_MILLIS, \
		CG_FIG_IO_PRESSURE_FULL_MILLIS

/* pool-stats.csv's figures in its column order (after pool), for every output that has them. */
#define CG_POOL_FIGURES                                                               \
	CG_FIG_THREADS, CG_FIG_ONCPU_MILLIS, CG_FIG_RUNQ_MILLIS, CG_FIG_SLEEP_MILLIS, \
		CG_FIG_BLOCKED_MILLIS, CG_FIG_VCSW, CG_FIG_IVCSW, CG_FIG_MIGRATIONS,  \
		CG_FIG_BUSIEST_THREAD_CORES

/* thread-stats.csv's figures in its column order (after pool), for every output that has them */
#define CG_THREAD_FIGURES                                                                    \
	CG_FIG_ONCPU_MILLIS, CG_FIG_RUNQ_MILLIS, CG_FIG_SLEEP_MILLIS, CG_FIG_BLOCKED_MILLIS, \
		CG_FIG_VCSW, CG_FIG_IVCSW, CG_FIG_MIGRATIONS

extern const struct cg_figure_column figure_columns[CG_NR_FIGURES];

/*
 * Figure fig of r, whose amounts cover interval_ns (a summary passes run totals and the run's
 * time). True and *value set, or false when the figure is not available.
 */
bool record_figure(const struct cg_record *r, uint64_t interval_ns, enum cg_figure fig,
		   double *value);

/*
 * The amount fig is made from, before any scale, where it is one of a's (a time, a count, the
 * tasks or a cgroup file's figure): nanoseconds for a figure shown as millis, micros or cores
 * (figure_in_nanoseconds()), else a count. For run totals (the metrics endpoint's counters).
 * True and *value set; false for a figure of another kind or one a has no value of.
 */
bool amounts_value(const struct cg_amounts *a, enum cg_figure fig, uint64_t *value);

/* Whether fig's amount is a time in nanoseconds. */
bool figure_in_nanoseconds(enum cg_figure fig);

/*
 * Why a record's tasks waited, or that they did not, by the first rule that holds, in this order
 * (docs/metrics.md): the cgroup's quota throttled it; it used what it may (its quota, its cpuset
 * or the machine); one of its threads wanted a CPU (with --threads: on-CPU and run-queue time;
 * without, BPF keeps only what it ran) VERDICT_SERIAL_SHARE of the interval or more, no other
 * did, and the others together ran less than VERDICT_SERIAL_REST_SHARE of that; its tasks
 * were blocked (D) at least as long as they ran and waited for a CPU; they waited for a CPU at
 * least VERDICT_CONTENDED_SHARE of their on-CPU time; they hardly ran; none of these.
 */
enum cg_verdict {
	CG_VERDICT_THROTTLED,
	CG_VERDICT_SATURATED,
	CG_VERDICT_SERIAL,
	CG_VERDICT_BLOCKED,
	CG_VERDICT_CONTENDED,
	CG_VERDICT_IDLE,
	CG_VERDICT_OK,
	CG_NR_VERDICTS,
};

/* The verdicts' names, as the verdict column begins with them. */
extern const char *const verdict_names[CG_NR_VERDICTS];

/* saturated: at least this share of the cores the cgroup may use */
#define VERDICT_SATURATED_SHARE 0.95
/* serial: one thread on CPU or waiting for one at least this share of the interval */
#define VERDICT_SERIAL_SHARE 0.90
/*
 * and the cgroup's other threads together ran less than this share of that thread's time so,
 * and none of them wanted VERDICT_SERIAL_SHARE: two threads at 0.9 of a core each are a
 * parallel load held back, not one stage (docs/reliability.md, "Incidents"). What the others
 * ran, not what they wanted: on a busy host every waking thread waits, and a pool of workers
 * that each work a little would hide the stage they feed.
 */
#define VERDICT_SERIAL_REST_SHARE 0.5
/* contended: run-queue wait at least this share of the on-CPU time */
#define VERDICT_CONTENDED_SHARE 0.10
/*
 * blocked and contended need at least this share of the interval in the state (10 ms a second),
 * and idle is on-CPU below it: a few wakeups of a sleeper are neither a wait nor a load
 */
#define VERDICT_MIN_SHARE 0.01

/*
 * The verdict on r, whose amounts cover interval_ns on a machine of nr_cpus CPUs online, and
 * into text (cut at len) its column: the name, with what it names after a colon where the
 * rules say (contended:other:/x.slice, blocked:io, serial:COMM:TID); len 0: the verdict alone.
 */
enum cg_verdict record_verdict(const struct cg_record *r, uint64_t interval_ns, int nr_cpus,
			       char *text, size_t len);

/* Figures that name a cgroup or a cause instead of counting: text in CSV, a string in JSON. */
enum cg_label_figure {
	CG_LABEL_TOP_PREEMPTER,	   /* the cgroup that preempted the record's tasks most often */
	CG_LABEL_VERDICT,	   /* record_verdict()'s text */
	CG_LABEL_BUSIEST_THREAD,   /* "COMM:TID" of the thread that ran most; none when none ran */
	CG_LABEL_HUNGRIEST_THREAD, /* of the thread that wanted a CPU most; none without --threads
				    */
	CG_NR_LABEL_FIGURES,
};

/* Each label figure's CSV header and JSON key. */
extern const char *const label_figure_names[CG_NR_LABEL_FIGURES];

/* Room for any label figure: a path under the mount and a verdict's words before it. */
#define CG_LABEL_FIGURE_MAX 4160

/*
 * Label figure fig of r, a record of iv, or NULL when it has none (an empty field, an absent
 * key). buf (CG_LABEL_FIGURE_MAX bytes) holds what has to be composed.
 */
const char *record_label_figure(const struct cg_interval *iv, const struct cg_record *r,
				enum cg_label_figure fig, char buf[CG_LABEL_FIGURE_MAX]);

/*
 * The figure of an event column's counter and its unit: "taskClockMillis" counts nanoseconds
 * and shows as millis; every other event is a plain count.
 */
double event_figure(const char *column, uint64_t counter, enum cg_unit *unit);

enum cg_derived_metric {
	CG_DERIVED_GHZ,
	CG_DERIVED_IPC,
	CG_DERIVED_LLC_MPKI,
	CG_DERIVED_LLC_MISS_PERCENT,
	CG_DERIVED_L1D_MPKI,
	CG_DERIVED_BRANCH_MPKI,
	CG_NR_DERIVED,
};

extern const struct cg_column derived_columns[CG_NR_DERIVED];

struct cg_derived {
	double value[CG_NR_DERIVED];
	bool valid[CG_NR_DERIVED];
};

/*
 * The ratios of the counters named by columns (one record's, or sums over a run). A ratio is
 * valid only when both its inputs are among the columns, counted (counter_valid) and its
 * denominator is not 0.
 */
void derived_compute(struct cg_derived *d, int nr_events, const char *const *columns,
		     const uint64_t *counter, const bool *counter_valid);

/* derived_compute() for one record of iv, whose events name its counters. */
void record_derived(const struct cg_interval *iv, const struct cg_record *r, struct cg_derived *d);

/* Room for a host column name: a 31-character disk name and the longest suffix. */
#define CG_HOST_COLUMN_NAME_MAX 48

/*
 * host-io.csv's columns after epochMs, in order: cpuBusyPercent, cpuIowaitPercent, then per
 * disk <disk>ReadMBps, <disk>WriteMBps, <disk>BusyPercent; all CG_UNIT_COARSE.
 */
int host_nr_columns(const struct cg_host *h);

/* Column i (0 <= i < host_nr_columns(h)): its header name into name, and its value. */
double host_column(const struct cg_host *h, int i, char name[CG_HOST_COLUMN_NAME_MAX]);

#endif /* CGSTAT_DERIVED_H */
