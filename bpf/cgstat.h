/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Shared by cgstat.bpf.c and the user-space loader: map layouts and the run-queue histogram's
 * bucket scheme. Fixed-width types only, so that both sides agree on every offset.
 */
#ifndef CGSTAT_H
#define CGSTAT_H

#ifndef __VMLINUX_H__
#include <linux/types.h> /* user space; BPF gets the types from vmlinux.h */
#endif

/*
 * Where a task's time goes. A task is in exactly one state from the moment cgstat first sees it
 * until it exits, so per cgroup the five times add up to the time its tasks were alive.
 */
enum cg_state {
	CG_ONCPU, /* current on a CPU, and the CPU ran it: what sum_exec_runtime and cpu.stat count
		   */
	CG_RUNQ,  /* runnable, waiting for a CPU: after a wakeup or a preemption */
	CG_SLEEP, /* off CPU and not blocked: S, stopped, traced, TASK_IDLE (I) */
	CG_BLOCKED, /* off CPU in D: TASK_UNINTERRUPTIBLE without TASK_NOLOAD (disk, vfork) */
	/*
	 * current on a CPU that did not run it: the hypervisor ran something else (steal), or,
	 * with IRQ_TIME_ACCOUNTING, the CPU served interrupts. No task enters this state: the
	 * time is moved here from on-CPU (task_clock_untasked() in cgstat.bpf.c).
	 */
	CG_STOLEN,
	CG_NR_STATES,
};

/*
 * What a cgroup's tasks did, counted per event. Each is one __u64 in the count[] of the slot,
 * the snapshot, the record and the summary, so that carrying and adding them up are loops; a
 * new count is an entry here, the BPF line that counts it, and its figures in
 * user/core/derived.c.
 */
enum cg_count {
	CG_NVCSW,	 /* voluntary switches: the task's nvcsw moved at its switch-out */
	CG_NIVCSW,	 /* involuntary switches: preempted while runnable */
	CG_MIGRATIONS,	 /* moves to another CPU, as se.nr_migrations counts them */
	CG_RUNQ_WAITS,	 /* run-queue waits, each ended by a switch-in */
	CG_MINOR_FAULTS, /* page faults served without I/O: the task's min_flt moved while it ran */
	CG_MAJOR_FAULTS, /* page faults that waited for I/O: its maj_flt */
	/*
	 * Who took the CPU at an involuntary switch (they add up to CG_NIVCSW): next was a
	 * thread of prev's own cgroup, of another cgroup, or a kernel thread (PF_KTHREAD).
	 */
	CG_PREEMPTED_BY_SAME,
	CG_PREEMPTED_BY_OTHER,
	CG_PREEMPTED_BY_KERNEL,
	/*
	 * Not a count but a sum per event: the lengths of the waits the histogram counts (each
	 * switch-in from the run queue), so that /metrics' _sum covers exactly its _count; the
	 * waits recovered without a length are in CG_RUNQ_WAITS and run-queue time only.
	 */
	CG_RUNQ_MEASURED_NS,
	CG_NR_COUNTS,
};

/* How many watched cgroups one task can count in (itself and its watched ancestors). */
#define CG_MAX_NEST 8

/*
 * The levels below the root that the BPF side reads a cgroup's ancestors at: a watched cgroup
 * must be above it (the loader refuses one that is not); the kernel allows deeper ones, which
 * count in their watched ancestors all the same. A power of two: the walk masks its index.
 */
#define CG_MAX_LEVEL 32

/* perf events (columns of perf-stat.csv) one run can count. */
#define CG_MAX_EVENTS 16

/*
 * Involuntary switches of a slot's tasks to a thread of another cgroup, cumulative, by that
 * cgroup, in the slot_preempters map (an array by slot, mapped by the loader): the drain takes
 * each interval's top preempter (topPreempter) from the differences. A slot holds the first
 * CG_PREEMPTERS_PER_SLOT cgroups that preempt it; a later one goes uncounted there (its
 * switches still count in preemptedByOtherCgroup) until the loader frees an idle entry.
 */
#define CG_PREEMPTERS_PER_SLOT 4

struct cg_slot_preempters {
	__u64 cgid[CG_PREEMPTERS_PER_SLOT]; /* 0: a free entry */
	__u64 count[CG_PREEMPTERS_PER_SLOT];
};

/* One (slot, preempting cgroup) pair, as the loader hands them to the drain. */
struct cg_preempter_key {
	__u32 slot; /* the preempted task's slot */
	__u32 pad;
	__u64 cgid; /* the preempting thread's cgroup */
};

/*
 * Run-queue wait histogram, log-linear over nanoseconds: values below 16 ns have a bucket
 * each, then every power of two is cut into 8 equal buckets, so a bucket's width is at most
 * 1/8 of its lower bound and its midpoint is within 6.25 % of any value in it. One last
 * bucket takes everything from 2^40 ns (18 minutes) up.
 */
#define CG_HIST_SUB_BITS 3
#define CG_HIST_SUB	 (1 << CG_HIST_SUB_BITS)
#define CG_HIST_LINEAR	 (2 * CG_HIST_SUB)
#define CG_HIST_MAX_MSB	 40
#define CG_HIST_BUCKETS \
	(CG_HIST_LINEAR + (CG_HIST_MAX_MSB - CG_HIST_SUB_BITS - 1) * CG_HIST_SUB + 1)

/*
 * One watched cgroup on one CPU, as the scheduler programs write it. Per-CPU, so CPUs never
 * share a cache line. Times are kept as base + in_state * now: entering a state at t does
 * base -= t, in_state += 1; leaving it at t does base += t, in_state -= 1. Any reader that knows
 * "now" then has the closed time plus the in-flight part of every task in that state, without
 * walking tasks. Only the sum over CPUs is meaningful (a task may enter on one CPU and leave on
 * another); the arithmetic wraps and the sum is right.
 */
struct cg_slot_live {
	__u64 seq; /* bumped by programs that may interrupt a snapshot on this CPU */
	__u64 base[CG_NR_STATES];
	__s64 in_state[CG_NR_STATES]; /* tasks in each state */
	__u64 count[CG_NR_COUNTS];
	__u64 runq_max_ns; /* since the last snapshot on this CPU; the snapshot resets it */
	/*
	 * The shortest wait, bit-inverted: 0 when there was none, and the shortest wait has the
	 * largest inverse, so it is reset, summed over CPUs and merged as runq_max_ns is (a
	 * quantile's bucket midpoint may be below every wait in the bucket; this floors it).
	 */
	__u64 runq_min_inv;
	/*
	 * perf counts while this cgroup ran, raw, with the time each event was enabled and
	 * running meanwhile: a multiplexed event is scaled once, over the interval, by the drain
	 * (scaling each short piece alone counts a piece read while the event was off the PMU as
	 * nothing).
	 */
	__u64 counter[CG_MAX_EVENTS];
	__u64 enabled[CG_MAX_EVENTS];
	__u64 running[CG_MAX_EVENTS];
	/*
	 * The waits since the last snapshot that had new ones on this CPU: that snapshot added
	 * them to the slot's cumulative histogram and emptied this one. runq_waits_snapped is
	 * count[CG_RUNQ_WAITS] as it did, so an unchanged count means nothing to add.
	 */
	__u64 runq_waits_snapped;
	/*
	 * The slot's thread that ran most in the interval, as far as this CPU has seen: each
	 * thread's on-CPU time since the last snapshot, at its switch-outs here and, for the one
	 * on CPU, at the snapshot, which takes the largest over CPUs and resets these. task is the
	 * thread's address, only probe-read after its pid matches, for its name.
	 */
	__u64 busiest_ns;
	__u64 busiest_task;
	__u32 busiest_tid;
	__u32 busiest_pad;
	__u32 runq_hist[CG_HIST_BUCKETS];
};

/*
 * Each CPU's perf counters as last read: a read charges the difference to the cgroup that ran
 * since, and the counters are read only where the running cgroup changes, and at snapshots.
 */
struct cg_cpu_counters {
	__u64 count[CG_MAX_EVENTS];
	__u64 enabled[CG_MAX_EVENTS];
	__u64 running[CG_MAX_EVENTS];
	/* the last read's differences, for the slots it is charged to (too big for the stack) */
	__u64 d_count[CG_MAX_EVENTS];
	__u64 d_enabled[CG_MAX_EVENTS];
	__u64 d_running[CG_MAX_EVENTS];
	__u64 read_at; /* when they were last read, on cgstat's clock */
};

/* A thread's name as the kernel keeps it (TASK_COMM_LEN, its NUL included). */
#define CG_COMM_LEN 16

/* A cgroup directory's name, NAME_MAX and its NUL. */
#define CG_LEAF_NAME_MAX 256

/* Origins of preempters and of slots' ancestors kept for user space's labels (LRU beyond). */
#define CG_ORIGINS 1024

/*
 * A cgroup's parent and its own directory name, read when BPF first meets the cgroup, so that
 * user space can label it from its parent's label without walking the tree, even once it is
 * gone. parent_cgid 0: the root, or (leaf_name empty) deeper than BPF reads.
 */
struct cg_cgroup_origin {
	__u64 parent_cgid;
	char leaf_name[CG_LEAF_NAME_MAX];
};

/*
 * With --threads each thread of a watched cgroup counts in a pool slot of that cgroup instead
 * of the cgroup's own slot: one per thread name pattern (cg_pool_name()), taken by BPF as
 * threads first show up. A cgroup's record is the sum of its pools, so that they add up to it
 * exactly. Past CG_POOLS_PER_WATCHED pool slots a cgroup, threads of new pools count in the
 * cgroup's own slot, its pool "(the other pools)".
 */
#define CG_POOLS_PER_WATCHED 128

/* What user space needs to know of a slot besides its counts. */
struct cg_slot_info {
	__u64 cgid;    /* 0: free; a pool slot: its watched cgroup's when the slot was taken */
	__u32 dead;    /* the cgroup was removed; free the slot once no task counts in it */
	__u32 pool_of; /* a pool slot: its watched cgroup's slot + 1; 0: a cgroup's own slot */
	char pool[CG_COMM_LEN];		/* a pool slot's thread name pattern */
	struct cg_cgroup_origin origin; /* as the slot was taken */
	/* a cgroup's own slot: a thread of a new pool found no pool slot, and counts here */
	__u32 pools_full;
	__u32 pad;
};

/*
 * A pool's key: its watched cgroup's slot (in the all-cgroups mode, its cgroup's) and its
 * thread name pattern. By the slot, not the cgroup id, so that a watched path made again goes
 * on with the same pools; user space deletes it as it frees the pool's slot.
 */
struct cg_pool_key {
	__u32 watched_slot;
	char pool[CG_COMM_LEN];
};

/*
 * With --threads, the wake graph: each pair (the woken thread's slot, the waker's slot) an
 * edge, its wakeups counted per CPU at sched_waking, where the waker is current. A waker slot
 * from CG_WAKER_UNWATCHED up is a source, not a slot: a timer's expiry (hrtimer or the timer
 * wheel), another interrupt or softirq, or a task counted in no slot (out of every watched
 * subtree). An edge's pair is written once, before set: user space reads the edges [0,
 * wake_edges_taken) whose set is, and sums each one's counts over CPUs.
 */
#define CG_WAKE_EDGES	   16384
#define CG_WAKER_TIMER	   0xffffffffu
#define CG_WAKER_INTERRUPT 0xfffffffeu
#define CG_WAKER_UNWATCHED 0xfffffffdu

struct cg_wake_pair {
	__u32 wakee_slot;
	__u32 waker_slot;
};

struct cg_wake_edge {
	struct cg_wake_pair pair;
	__u32 set;
	__u32 pad;
};

/*
 * One slot summed over CPUs at a snapshot, with the in-flight time folded in. Counts are
 * cumulative since the slot was taken; user space subtracts the previous snapshot. runq_max_ns,
 * runq_min_inv and the busiest thread alone are per snapshot.
 */
struct cg_slot_snap {
	__u64 cgid;
	__u32 dead;
	__u32 pool_of; /* as in cg_slot_info */
	char pool[CG_COMM_LEN];
	__u32 pools_full; /* as in cg_slot_info */
	__u32 pad;
	__u64 time_ns[CG_NR_STATES];
	__s64 tasks;
	__u64 count[CG_NR_COUNTS];
	__u64 runq_max_ns;
	__u64 runq_min_inv;
	/* the thread that ran most in the interval (per snapshot, as runq_max_ns): 0 when none */
	__u64 busiest_ns;
	__u32 busiest_tid;
	char busiest_comm[CG_COMM_LEN]; /* empty when it is gone */
	/*
	 * The snapshot (thread_gen) that last filled it: the first CPU that reads the slot in a
	 * snapshot sets it, those after add to it. Usually the first CPU's, but a slot taken while
	 * the snapshot ran (a pool a later CPU's rename resolve made) is first read by a later one.
	 */
	__u32 snapshot_gen;
	__u64 counter[CG_MAX_EVENTS]; /* raw; scaled by the drain with enabled and running */
	__u64 enabled[CG_MAX_EVENTS];
	__u64 running[CG_MAX_EVENTS];
	__u32 runq_hist[CG_HIST_BUCKETS];
};

/*
 * One thread of a watched subtree, with --threads (thread-stats.csv): an entry of the thread
 * table, an array user space maps and reads at each drain, so that a drain costs a read of
 * memory a thread instead of a visit (a task iterator over 10,000 threads took 12 ms). BPF
 * keeps the figures as of the thread's last event: on-CPU and run-queue time and the counts,
 * the kernel's own per-task figures (se.sum_exec_runtime, sched_info.run_delay, nvcsw, nivcsw,
 * se.nr_migrations), at each switch-out and at each snapshot that finds the thread on CPU;
 * sleep and blocked time, cgstat's (the kernel has no per-task split without schedstats), at
 * each wakeup, the sleep in progress from state and since. Each figure is indexed by its enum
 * cg_state or enum cg_count; user space takes what moved since its last read, from base for a
 * thread it has not read yet.
 */
#define CG_THREAD_TIMES	 (CG_BLOCKED + 1)
#define CG_THREAD_COUNTS (CG_MIGRATIONS + 1)
/* Threads of the watched subtrees the table holds at once (224 bytes each: 7 MiB). */
#define CG_THREAD_TABLE 32768

struct cg_thread_entry {
	/*
	 * Which thread the entry is of: 0 before its first, new whenever a thread takes it (or
	 * counts anew, moved back into a watched subtree); written last, after base.
	 */
	__u32 seq;
	/* its final figures are in: user space reads them once and gives the entry back */
	__u32 exited;
	__u32 tid;
	__u32 pid;
	__u32 state;  /* CG_SLEEP or CG_BLOCKED: in that sleep since `since` */
	__u32 nslots; /* the slots it counts in (pool slots); 0: out of every watched subtree */
	__u64 since;
	char comm[CG_COMM_LEN]; /* its name, as its pool was resolved for */
	__u32 slot[CG_MAX_NEST];
	__u32 owner[CG_MAX_NEST]; /* each one's watched cgroup's slot */
	__u64 time_ns[CG_THREAD_TIMES];
	__u64 count[CG_THREAD_COUNTS];
	/* the figures when it was first seen in a watched subtree: it counts from there */
	__u64 base_time_ns[CG_THREAD_TIMES];
	__u64 base_count[CG_THREAD_COUNTS];
};

/* The snapshot program's context: BPF_PROG_TEST_RUN passes it as the raw_tp argument array. */
struct cg_snapshot_args {
	__u64 first_cpu; /* 1 on the first CPU of a snapshot: overwrite rather than add */
	/*
	 * CG_THIS_CPU, or an offline CPU whose slots this run reads from another CPU: nothing
	 * writes them while it is offline, and its last values still belong in every sum.
	 */
	__u64 cpu;
};

#define CG_THIS_CPU ((__u64)-1)

#ifndef CG_INLINE
#define CG_INLINE static inline __attribute__((always_inline))
#endif

/* floor(log2(v)) for v > 0, without a count-leading-zeros instruction (BPF has none). */
CG_INLINE __u32 cg_log2(__u64 v)
{
	__u32 r = 0, shift;

	shift = (v > 0xffffffffULL) << 5;
	v >>= shift;
	r |= shift;
	shift = (v > 0xffff) << 4;
	v >>= shift;
	r |= shift;
	shift = (v > 0xff) << 3;
	v >>= shift;
	r |= shift;
	shift = (v > 0xf) << 2;
	v >>= shift;
	r |= shift;
	shift = (v > 0x3) << 1;
	v >>= shift;
	r |= shift;
	r |= (v >> 1);
	return r;
}

CG_INLINE __u32 cg_hist_bucket(__u64 ns)
{
	__u32 msb;

	if (ns < CG_HIST_LINEAR)
		return (__u32)ns;
	msb = cg_log2(ns);
	if (msb >= CG_HIST_MAX_MSB)
		return CG_HIST_BUCKETS - 1;
	return CG_HIST_LINEAR + (msb - CG_HIST_SUB_BITS - 1) * CG_HIST_SUB +
	       (__u32)((ns >> (msb - CG_HIST_SUB_BITS)) & (CG_HIST_SUB - 1));
}

/* The smallest value that falls in bucket b. */
CG_INLINE __u64 cg_hist_lower(__u32 b)
{
	__u32 octave, sub;

	if (b < CG_HIST_LINEAR)
		return b;
	octave = (b - CG_HIST_LINEAR) / CG_HIST_SUB + CG_HIST_SUB_BITS + 1;
	sub = (b - CG_HIST_LINEAR) % CG_HIST_SUB;
	return (1ULL << octave) + ((__u64)sub << (octave - CG_HIST_SUB_BITS));
}

/*
 * The pool of a thread named comm: every run of digits replaced by one 'N' ("pulsar-io-4-1" is
 * "pulsar-io-N-N", "pool-3-thread-12" "pool-N-thread-N"), or the name itself when exact. Built
 * one character at a time, so that BPF runs each step in a bpf_loop() callback, which the
 * verifier checks once, where a loop over the name had it follow every mix of digits.
 */
struct cg_pool_builder {
	char pool[CG_COMM_LEN]; /* zeroed first: NUL-padded, for it is a map key */
	__u32 len;
	__u32 in_digits;
};

/* Append ch, one of the name's characters before its NUL, to b's pool. */
CG_INLINE void cg_pool_step(struct cg_pool_builder *b, char ch, int exact)
{
	if (!exact && ch >= '0' && ch <= '9') {
		if (b->in_digits)
			return;
		b->in_digits = 1;
		ch = 'N';
	} else {
		b->in_digits = 0;
	}
	b->pool[b->len++ & (CG_COMM_LEN - 1)] = ch;
}

/*
 * The pool of comm (CG_COMM_LEN bytes, NUL-terminated or cut there) into pool (CG_COMM_LEN
 * bytes, NUL-padded). User space's; BPF steps through the name in a callback.
 */
CG_INLINE void cg_pool_name(const char *comm, char *pool, int exact)
{
	struct cg_pool_builder b = {};
	__u32 i;

	for (i = 0; i < CG_COMM_LEN - 1 && comm[i]; i++)
		cg_pool_step(&b, comm[i], exact);
	for (i = 0; i < CG_COMM_LEN; i++)
		pool[i] = b.pool[i];
}

#endif /* CGSTAT_H */
