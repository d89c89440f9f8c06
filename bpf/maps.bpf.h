/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The programs' global data and maps: the loader's settings (read-only after load), the
 * counters users see (drops, missed switches, unseen wakeups), the slot maps the drain reads,
 * the task storage, the per-CPU records and the thread table.
 *
 * One room of cgstat.bpf.c, which includes the rooms in order as one compilation unit (it says
 * why); each room uses only those before it.
 */
#ifndef CGSTAT_MAPS_BPF_H
#define CGSTAT_MAPS_BPF_H

#include "task.bpf.h"

/* Set by the loader before load. */
const volatile bool all_cgroups;
const volatile __u32 max_slots = 1;  /* max_entries of the slot maps */
const volatile __u32 nr_perf_events; /* perf-counted events; perf_events holds [event][cpu] */
const volatile __u32 nr_cpus = 1;
/* --threads: each watched cgroup's threads count in its pool slots (CG_POOLS_PER_WATCHED) */
const volatile bool pools;
const volatile bool pool_exact; /* --pool-by comm: a pool is a thread name, not its pattern */
/* --light: no scheduler event is counted; a sweep reads each task's figures (light.bpf.h) */
const volatile bool light;
/*
 * With pools in the all-cgroups mode, the slots pools may hold of max_slots, all cgroups
 * together (the rest are the cgroups' own); pool_slots_held, how many they hold now: taken
 * here, given back by user space as it frees a removed cgroup's pools.
 */
const volatile __u32 max_pool_slots;
__u32 pool_slots_held;

/* Slots [0, slot_hwm) have been handed out; the snapshot walks them. */
__u32 slot_hwm;
/*
 * Bumped by the loader when a watched cgroup's id changes (it was made again under its path,
 * or the watched pid moved): every task resolves its slots again at its next event.
 */
__u32 watch_gen;
/*
 * Events whose loss changed a figure (a map was full, or the kernel refused a task's storage at
 * a switch): reported, never silent. A wakeup of a task first seen is not one of them: its
 * switch-in recovers the wait (waits_recover()).
 */
__u64 dropped_events;
/* When tracking began (the first CPU's seeding), on the run-queue clock. */
__u64 tracking_since;
/*
 * Switch-outs the kernel did not report: a CPU's switch whose prev is not the task this CPU last
 * switched in. Repaired where found (see cpu_run); counted so that users know.
 */
__u64 missed_switches;
/* Wakeups no tracepoint reported, found at the task's switch-in (waits_recover()). */
__u64 unseen_wakeups;
/*
 * Bumped by each snapshot: a thread's on-CPU time of an earlier interval (task_state's
 * thread_on_ns) counts for nothing in this one.
 */
__u32 thread_gen;
/* Snapshots that found a CPU counting more than one task on CPU: must stay 0. */
__u64 oncpu_violations;
/* Set once a perf counter ran for less time than it was enabled (the PMU multiplexed it). */
__u32 multiplexed;
/* The run-queue clock less bpf_ktime_get_ns(), for snapshots; sampled by sched_switch. */
__u64 clock_offset;
__u32 clock_offset_valid;
/*
 * The time of the snapshot being taken, from its first CPU's run: every CPU's slots are
 * summed at one time. A state's per-CPU counts drift apart without bound (a task sleeps on one
 * CPU and is woken on another: +1 here, -1 there), so reading each CPU at its own time put
 * count * (the microseconds between two CPUs' reads) into every sum: hundreds of ms of
 * run-queue time in a long run, given back as an interval of none.
 */
__u64 snapshot_now;
/*
 * --light: when the sweep running now began, and the one before it; a task born after the one
 * before was seen by none, and counts from zero
 */
__u64 light_sweep_at;
__u64 light_born_after;

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_state);
} task_states SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_run);
} cpu_runs SEC(".maps");

/* max_entries of the slot maps is set by the loader: the number of slots it wants. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cg_slot_preempters);
} slot_preempters SEC(".maps");

/*
 * Where cgroups that may have no slot came from: each cgroup that preempted a counted task, and
 * the ancestors of those and (every cgroup watched) of every cgroup that took a slot. Read when
 * BPF first meets them, so that user space labels them without walking the whole tree, even
 * once they are gone (a walk of 1,000 cgroups cost 5 to 38 ms under churn). Ids are never
 * reused, so entries stay true; LRU bounds them.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CG_ORIGINS);
	__type(key, __u64);
	__type(value, struct cg_cgroup_origin);
} cgroup_origins SEC(".maps");

/* An origin is made here before it is copied into cgroup_origins: too big for the stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cg_cgroup_origin);
} origin_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cg_slot_live);
} slot_live SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cg_slot_info);
} slot_info SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cg_slot_snap);
} slot_snap SEC(".maps");

/* cgroup id -> slot: watched cgroups (filled by the loader) or every cgroup seen. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, __u32);
} cgroup_slots SEC(".maps");

/* The loader's perf event fds, event e of CPU c at e * nr_cpus + c. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} perf_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cg_cpu_counters);
} cpu_counters SEC(".maps");

/* The slots a read of this CPU's perf counts goes to: see counted_slots() */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct slot_set);
} charge_slots SEC(".maps");

/*
 * The wake graph's edges (bpf/cgstat.h), with --threads: each pair's index, the pairs, their
 * counts (the loader sizes them to CG_WAKE_EDGES with --threads, and maps the pairs)
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct cg_wake_pair);
	__type(value, __u32);
} wake_edge_index SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cg_wake_edge);
} wake_edges SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} wake_counts SEC(".maps");

/* Edges taken so far; wakeups of pairs that found the table full */
__u32 wake_edges_taken;
__u64 wake_edges_dropped;

/*
 * Per CPU, with --threads: how deep in timers' callbacks (hrtimer and timer wheel expiries) and
 * in other interrupt handlers and softirqs it is
 */
#define CG_DEPTH_TIMER	   0
#define CG_DEPTH_INTERRUPT 1

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32[2]);
} irq_depth SEC(".maps");

/* struct cg_pool_key -> its pool slot, with --threads */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct cg_pool_key);
	__type(value, __u32);
} pool_slots SEC(".maps");

/* Pool slots each watched cgroup has taken, by its slot (the loader sizes it). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} pools_taken SEC(".maps");

/*
 * The thread table, with pools (bpf/cgstat.h, struct cg_thread_entry; the loader sizes it to
 * CG_THREAD_TABLE and maps it), and the entries user space gave back once it read a thread's
 * exit, for reuse: thread_free[tail % CG_THREAD_TABLE, head % ...), written and mapped by user
 * space, taken here (thread_entry_take()).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cg_thread_entry);
} thread_table SEC(".maps");

/* 8 bytes an index: an array's values are 8-byte aligned, and user space maps them as such */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} thread_free SEC(".maps");

/* user space's: it writes thread_free[head] and then moves head on */
__u32 thread_free_head;
__u32 thread_free_tail;
/* entries taken that no thread had before: thread_table[0, thread_entries_new) have been used */
__u32 thread_entries_new;
__u32 thread_seq_last;
/* threads of the watched subtrees first seen while the table was full: in no thread row */
__u64 threads_untabled;

/* Slots the loader freed after their cgroup was removed, for reuse. */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 1);
	__type(value, __u32);
} free_slots SEC(".maps");

static __always_inline void count_drop(void)
{
	__sync_fetch_and_add(&dropped_events, 1);
}

#endif /* CGSTAT_MAPS_BPF_H */
