/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The drain's product: one record per cgroup per interval. Every output (CSV files, the stdout
 * stream, the table, the summary) formats these and nothing else, so that a new output never
 * reads the BPF maps itself.
 */
#ifndef CGSTAT_RECORD_H
#define CGSTAT_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/cgstat.h"

/*
 * One thread of a watched cgroup, with --threads (thread-stats.csv): what it did since its last
 * record, as the collector makes it from the thread table (bpf/cgstat.h, struct
 * cg_thread_entry) at each drain. Times and counts indexed by enum cg_state and enum cg_count.
 */
struct cg_thread_rec {
	uint32_t tid;
	uint32_t pid;
	uint32_t exited; /* its last: it exited since the last drain */
	char comm[CG_COMM_LEN];
	uint32_t nslots; /* the slots it counts in (pool slots) */
	uint32_t slot[CG_MAX_NEST];
	/*
	 * Each one's watched cgroup's slot: which containers it is of, even where its pool's slot
	 * was taken after the snapshot of the same drain
	 */
	uint32_t owner[CG_MAX_NEST];
	uint64_t time_ns[CG_THREAD_TIMES];
	uint64_t count[CG_THREAD_COUNTS];
	/*
	 * Since its first sight: the intervals it lived in (this one and its first, partial, too),
	 * their time, and its times over them
	 */
	uint32_t intervals;
	uint64_t lived_ns;
	uint64_t total_ns[CG_THREAD_TIMES];
};

/* Run-queue wait histogram of one interval (or of a whole run, in the summary). */
struct cg_hist {
	uint64_t bucket[CG_HIST_BUCKETS];
	uint64_t count;
};

/*
 * What the cgroup's own files say about the interval (cgroup-stats.csv): deltas of cpu.stat's
 * throttling (v2, or the v1 cpu controller's cgroup of the tasks on a hybrid host) and of the
 * total= stall times of cpu.pressure, memory.pressure and io.pressure. Times in nanoseconds.
 */
enum cg_cgroupfs {
	CG_FS_PERIODS,		 /* nr_periods: CFS bandwidth periods that had runnable tasks */
	CG_FS_THROTTLED_PERIODS, /* nr_throttled */
	CG_FS_THROTTLED_NS,	 /* throttled_usec (v2) or throttled_time (v1) */
	CG_FS_CPU_SOME_NS,	 /* cpu.pressure "some" total= */
	CG_FS_CPU_FULL_NS,
	CG_FS_MEMORY_SOME_NS,
	CG_FS_IO_SOME_NS,
	CG_FS_IO_FULL_NS,
	CG_FS_MEMORY_FULL_NS, /* on /metrics only: cgroup-stats.csv keeps its columns */
	CG_NR_CGROUPFS,
};

/* A cgroup that preempted a record's tasks, and how often. */
struct cg_record_preempter {
	const char *label; /* a watched cgroup's label, else its path under the mount */
	uint64_t cgid;
	uint64_t count;
};

/*
 * One thread of a record's tasks in the interval: its on-CPU and run-queue time there, its id
 * and its name (empty once it is gone). The busiest: on_cpu_ns 0 when none ran, runq_ns 0 (BPF
 * keeps no thread's waits by interval). The hungriest: tid 0 when there is none (no --threads).
 */
struct cg_record_thread {
	uint64_t on_cpu_ns;
	uint64_t runq_ns;
	uint32_t tid;
	char comm[CG_COMM_LEN + 1];
};

/*
 * What of a record adds up, over intervals and over cgroups: all but its histogram (most of its
 * size), its preempters and its busiest thread. The record holds these members both by name and
 * as one struct cg_amounts (the kernel's struct_group_tagged(), include/linux/stddef.h), so run
 * totals keep just these and core/totals.h adds them in one place.
 */
#define CG_AMOUNTS_MEMBERS                                                                        \
	uint64_t tasks; /* threads in the cgroup (its subtree when watched) at the end */         \
	uint64_t time_ns[CG_NR_STATES]; /* on-CPU, run-queue, sleep, blocked, stolen */           \
	uint64_t count[CG_NR_COUNTS];	/* one per enum cg_count */                               \
	uint64_t runq_max_ns;		/* exact; 0 when there was no run-queue wait */           \
	uint64_t runq_min_inv;		/* the shortest wait, ~-inverted as in cg_slot_live */    \
	/* perf counters, in the order of the run's event list; counter_valid says which count */ \
	uint64_t counter[CG_MAX_EVENTS];                                                          \
	bool counter_valid[CG_MAX_EVENTS];                                                        \
	uint64_t cgroupfs[CG_NR_CGROUPFS]; /* one per enum cg_cgroupfs */                         \
	uint32_t cgroupfs_valid;	   /* bit i: cgroupfs[i] was read at both ends */         \
	/* counted by --light's sweep: what only the scheduler's events give is not had */        \
	bool light;

/*
 * The ids of no cgroup (the kernel's are inode numbers, far below): what a watched slot counts
 * while its target (a container by name) has no cgroup yet (sources/watch.h). Such a slot has
 * no record.
 */
#define CG_CGID_PENDING_MIN   (UINT64_MAX - (1ULL << 20))
#define cg_cgid_pending(cgid) ((cgid) >= CG_CGID_PENDING_MIN)

/* The sizes of what runtimes name (sources/container_names.h). */
#define CG_CONTAINER_ID_LEN    64  /* the runtimes' ids: 64 lowercase hex digits */
#define CG_CONTAINER_NAME_MAX  253 /* a Kubernetes name (a DNS subdomain); Docker's are shorter */
#define CG_CONTAINER_IMAGE_MAX 256
#define CG_COMPOSE_FIELD_MAX   128 /* a compose project or service name */
#define CG_POD_UID_MAX	       36  /* a UUID; a static pod's is 32 hex digits */

/*
 * The container, or Kubernetes pod, whose cgroup a record is, as its runtime names it: for the
 * outputs' fields (docs/metrics.md, "Container labels"). Fields not known are "" (and 0).
 */
struct cg_container {
	const char *runtime; /* "docker", "podman", "containerd", "crio"; "" when not known */
	bool pod;	     /* the pod's own cgroup (its total), not one of its containers' */
	char id[CG_CONTAINER_ID_LEN + 1];
	/* Docker's and Podman's name, without the API's leading '/'; a pod's container's name */
	char name[CG_CONTAINER_NAME_MAX + 1];
	char image[CG_CONTAINER_IMAGE_MAX + 1];
	/* Compose: com.docker.compose.project, .service and .container-number */
	char compose_project[CG_COMPOSE_FIELD_MAX + 1];
	char compose_service[CG_COMPOSE_FIELD_MAX + 1];
	int compose_replica;
	/* Kubernetes: the pod the container is in, or the pod's own */
	char pod_namespace[CG_CONTAINER_NAME_MAX + 1];
	char pod_name[CG_CONTAINER_NAME_MAX + 1];
	char pod_uid[CG_POD_UID_MAX + 1];
};

struct cg_amounts {
	CG_AMOUNTS_MEMBERS
};

struct cg_record {
	const char *name; /* the label: NAME= of -c/-p, else the path under the v2 mount */
	/*
	 * A thread pool's record (with --threads): its name (bpf/cgstat.h, cg_pool_name()), or
	 * "(the other pools)" for the cgroup's threads past its CG_POOLS_PER_WATCHED pools; name
	 * is its cgroup's label. NULL: a cgroup's record.
	 */
	const char *pool;
	/* a cgroup's record with --threads: its pools are iv->pools[first_pool, +nr_pools) */
	int first_pool;
	int nr_pools;
	/* a pool's record: the wake graph's edges into it are iv->wakes[first_waker, +nr_wakers) */
	int first_waker;
	int nr_wakers;
	/* and its busiest threads iv->threads[first_thread, +nr_threads) */
	int first_thread;
	int nr_threads;
	/* a thread's record (thread-stats.csv): who it is; NULL otherwise */
	const struct cg_thread_rec *thread;
	/* a container's or a pod's cgroup's record: what its runtime names it; NULL otherwise */
	const struct cg_container *container;
	uint64_t cgid;
	/* its amounts, which add up: core/totals.h */
	union {
		struct {
			CG_AMOUNTS_MEMBERS
		};
		struct cg_amounts amounts;
	};
	struct cg_hist runq_hist;
	/*
	 * The cgroups whose threads took its tasks' CPU (preemptedByOtherCgroup) in the
	 * interval, most often first: topPreempter is the first
	 */
	struct cg_record_preempter preempters[CG_PREEMPTERS_PER_SLOT];
	int nr_preempters;
	/*
	 * The cores its own CFS quota (cpu.max, or the v1 cpu cgroup's cfs_quota_us) or its
	 * cpuset (cpuset.cpus.effective) lets its tasks use at the interval's end, the smaller;
	 * 0 when it has neither. For the verdict's "saturated".
	 */
	double cpu_limit_cores;
	struct cg_record_thread busiest; /* the thread that ran most */
	/*
	 * With --threads, the thread that wanted a CPU most (on-CPU + run-queue time), from the
	 * kernel's own per-thread figures (the thread table): the verdict's "serial" then
	 */
	struct cg_record_thread hungriest;
	uint64_t runner_up_wanted_ns; /* and the next thread's on-CPU + run-queue time */
	/* with pools: a thread of a new pool found no pool slot left, and counts in its own */
	bool pools_full;
};

/* One pair of the BPF side's slot_preempters: a slot, a preempting cgroup, switches so far. */
struct cg_preempter {
	struct cg_preempter_key key;
	uint64_t count;
};

/* One physical disk over one interval (host-io.csv). */
struct cg_host_disk {
	char name[32];
	double read_mbps; /* decimal MB/s of 512-byte sectors */
	double write_mbps;
	double busy_percent; /* share of the interval the disk had I/O in flight */
};

/* The host sampler's figures for one interval; valid is false until two readings exist. */
struct cg_host {
	bool valid;
	double cpu_busy_percent; /* (total - idle - iowait) / total over all CPUs */
	double cpu_iowait_percent;
	int nr_disks;
	struct cg_host_disk *disks;
};

/*
 * How far the run's figures can be trusted, cumulative since start (docs/metrics.md):
 * reported in every JSON line and the summary, never silent.
 */
struct cg_health {
	uint64_t dropped_events;   /* events lost to full maps */
	uint64_t missed_switches;  /* switch-outs the kernel did not report, repaired */
	uint64_t unseen_wakeups;   /* wakeups the kernel did not report, found at the switch-in */
	uint64_t inconsistencies;  /* snapshots with more tasks on a CPU than one: must be 0 */
	uint64_t untabled_threads; /* with --threads: threads first seen with the table full */
	uint64_t dropped_wakeups; /* with --threads: wakeups of pairs past the wake graph's edges */
};

/*
 * A thread of a record in the interval, with --threads: each thread that did more than sleep,
 * or was new, or exited (struct cg_thread_rec).
 */
struct cg_interval_thread {
	const struct cg_thread_rec *rec;
	int record;	  /* its cgroup's, in iv->records */
	const char *pool; /* its pool's name */
	uint64_t busy_ns; /* on-CPU, run-queue and blocked time: what ranks threads */
};

/*
 * One of cgstat's BPF programs, with --bpf-stats: its runs and the time they took, as the
 * kernel's BPF statistics count them (bpf_prog_info's run_cnt and run_time_ns), since cgstat
 * turned the statistics on (sources/bpf_programs.h).
 */
struct cg_program_stats {
	const char *name; /* libbpf's, whole: the kernel's holds 15 characters */
	uint64_t runs;
	uint64_t run_ns;
};

/*
 * One edge of the wake graph in an interval: the pool whose threads were woken, the one whose
 * threads woke them (or a source: waker_container "" and waker_pool "(timer)", "(interrupt)",
 * "(unwatched)"), and how many times.
 */
struct cg_wake_row {
	const char *container, *pool;
	const char *waker_container, *waker_pool;
	uint64_t wakeups;
	uint32_t slot; /* the woken pool's slot: the drain lists rows by it */
};

/* One drain: every cgroup's record for the interval that ended at epoch_ms. */
struct cg_interval {
	uint64_t epoch_ms;    /* wall clock at the interval's end */
	uint64_t interval_ns; /* its length, measured (monotonic) */
	int nr_cpus;	      /* CPUs online: what a cgroup without a limit may use */
	struct cg_health health;
	/* perf column names (perf-stat.csv headers, e.g. "pageFaults"), one per counter[] */
	int nr_events;
	const char *const *event_columns;
	/*
	 * With --bpf-stats, each loaded program of cgstat's, cumulative since the first
	 * snapshot (the run's start); 0 and NULL without. Valid until the next interval.
	 */
	int nr_programs;
	const struct cg_program_stats *programs;
	struct cg_host host;
	int nr_records;
	struct cg_record *records;
	/*
	 * With --threads, the pools of every record, by record: each record is the exact sum of
	 * its pools (every figure adds up; the busiest thread, run-queue maximum and the
	 * histogram merge).
	 */
	int nr_pools;
	struct cg_record *pools;
	/*
	 * With --threads: every thread of the interval, by record, each record's busiest --threads
	 * N first, in rank order; and a record each of those (thread-stats.csv), by record.
	 */
	int nr_all_threads;
	const struct cg_interval_thread *all_threads;
	int nr_threads;
	struct cg_record *threads;
	/*
	 * With --threads: the wake graph's edges that had wakeups in the interval (wakeups.csv),
	 * by woken pool, most wakeups first within one
	 */
	int nr_wakes;
	const struct cg_wake_row *wakes;
};

#endif /* CGSTAT_RECORD_H */
