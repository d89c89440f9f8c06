// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Per-cgroup scheduler accounting. Every task is in one state (on CPU, run queue, sleeping,
 * blocked) from the moment it is first seen; each transition moves it between the per-CPU
 * counters of the cgroup slots it counts in (its own cgroup in the all-cgroups mode, its
 * watched ancestors otherwise). The hot path is sched_switch: keep it to task-storage lookups,
 * direct BTF loads and per-CPU array stores.
 */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "cgstat.h"
#include "core_fixes.bpf.h"

#define TASK_RUNNING	     0x0000
#define TASK_UNINTERRUPTIBLE 0x0002
#define TASK_DEAD	     0x0080
#define TASK_NOLOAD	     0x0400
#define PF_KTHREAD	     0x00200000 /* include/linux/sched.h; the idle tasks have it too */

/*
 * Blocked is D as ps shows it: uninterruptible, but not TASK_IDLE (uninterruptible | noload),
 * the state idle kernel threads wait in, which ps shows as I and the load average ignores.
 */
static __always_inline bool state_blocked(__u32 state)
{
	return (state & (TASK_UNINTERRUPTIBLE | TASK_NOLOAD)) == TASK_UNINTERRUPTIBLE;
}

#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))

/* ts->state: 0 until the task is tracked, then its enum cg_state + 1. */
#define TS_UNTRACKED 0

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by the loader before load. */
const volatile bool all_cgroups;
const volatile __u32 max_slots = 1;  /* max_entries of the slot maps */
const volatile __u32 nr_perf_events; /* perf-counted events; perf_events holds [event][cpu] */
const volatile __u32 nr_cpus = 1;
/* --threads: each watched cgroup's threads count in its pool slots (CG_POOLS_PER_WATCHED) */
const volatile bool pools;
const volatile bool pool_exact; /* --pool-by comm: a pool is a thread name, not its pattern */

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
/* Wakeups no tracepoint reported, found at the task's switch-in (wakeup_unseen()). */
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

/* The slots a task counts in: its own cgroup's, or its watched ancestors'. */
struct slot_set {
	__u32 nslots;
	__u32 slot[CG_MAX_NEST];
};

/*
 * A task's own view of where it is. CG_ONCPU here is only the task's belief: the on-CPU count
 * in the slots belongs to the CPU that switched the task in (struct cpu_run), so that a
 * switch-out the kernel never reports cannot leave a task counted on CPU after it left.
 */
struct task_state {
	__u64 since; /* when the task entered its state */
	__u64 cgid;  /* the cgroup slots were resolved for; 0 before a successful resolve */
	__u64 nvcsw; /* the task's nvcsw at its last switch-out */
	/*
	 * The task's min_flt and maj_flt when its faults were last charged: at first sight, its
	 * switch-outs and the snapshots that found it on CPU. They move only while it runs (the
	 * kernel charges a fault to current), so what they moved by since is what it faulted, in
	 * stretches on CPU the kernel reported or not (a switch-in it did not report left a
	 * per-CPU baseline stale, and 660 faults of a test's 40,000 uncounted in CI).
	 */
	__u64 min_flt;
	__u64 maj_flt;
	/*
	 * The task's se.nr_migrations when its migrations were last counted: at first sight and
	 * at its switch-ins (and a repair that finds it on CPU). A task moves to another CPU only
	 * while off CPU, so what it moved by is what it migrated before it came on this one, seen
	 * by a tracepoint or not. Counting sched_migrate_task missed 1 or 2 of a test's 68 now
	 * and then, most likely as switches are missed (no tracepoint is delivered while a
	 * hypervisor agent's thread is current, and a balancing softirq over it migrates).
	 */
	__u64 nr_migrations;
	/*
	 * The kernel's own count of the task's run-queue waits (sched_info) as cgstat last took
	 * it in: where the kernel did not report a switch or a wakeup of the task, the waits it
	 * counted and cgstat did not are the difference (waits_recover()).
	 */
	__u64 run_delay;
	__u32 pcount;
	__u32 sched_info_seen; /* run_delay and pcount hold what cgstat took in */
	__u32 state;
	__u32 gen; /* watch_gen when slots were resolved */
	/*
	 * Its on-CPU time in the interval of thread_gen, up to its last switch-out: for the
	 * busiest thread of its slots (the verdict's "serial").
	 */
	__u64 thread_on_ns;
	__u32 thread_gen;
	struct slot_set slots;
	/* with pools: the name its slots were resolved for (a global function gets it here) */
	char comm[CG_COMM_LEN];
	/* with pools: when it was last renamed (see cg_task_rename) */
	__u64 renamed_at;
	/* with pools: its entry of the thread table (index + 1; 0: none), and the entry's seq */
	__u32 thread_entry;
	__u32 thread_seq;
};

/*
 * Run-queue time the kernel counted for a task and no tracepoint showed cgstat
 * (waits_recover()), for the switch's slot pass to move: taken[0] and taken[1] out of what cgstat
 * believed was a sleep (CG_SLEEP, CG_BLOCKED), added from no state (after a switch-out the kernel
 * did not report), and how many waits; all 0 (the initializer's) where every event was seen.
 */
struct waits_recovered {
	__u64 taken[2];
	__u64 added;
	__u64 waits;
};

/* prev's part of a switch: it leaves from for to at left, voluntarily or not. */
struct switch_out {
	__u32 from;  /* CG_NR_STATES: none (first sight, or on CPU: the CPU's record holds that) */
	__u32 to;    /* CG_NR_STATES: it exited */
	__u64 since; /* when it entered from */
	__u64 left;  /* when it stopped running, as the scheduler charged it: charged_until() */
	__u64 min_flt; /* its page faults since they were last charged (task_state) */
	__u64 maj_flt;
	__u64 migrations; /* where a repair found its switch-in unseen: since last counted */
	struct waits_recovered recovered; /* where a repair found its switch-in unseen */
	bool voluntary;
	__u32 preempted_by; /* when not voluntary: CG_PREEMPTED_BY_SAME, _OTHER or _KERNEL */
	/* its on-CPU time in the interval so far, and who it is: 0 when not counted (a repair) */
	__u64 thread_on_ns;
	__u64 task;
	__u32 tid;
};

/* next's part: it leaves from (the run queue, after waiting wait) for the CPU. */
struct switch_in {
	__u32 from; /* CG_NR_STATES: none (first sight, or a stale on CPU) */
	__u64 wait;
	__u32 bucket;
	__u64 migrations; /* since they were last counted (task_state) */
	struct waits_recovered recovered;
};

/*
 * What this CPU's on-CPU count holds: the task it switched in last, counted on CPU in slots
 * since since. Written only on this CPU, by sched_switch and the seeding program, so per CPU
 * and slot the on-CPU count is 0 or 1 whatever the kernel reports. The next switch here
 * releases it; when its prev is another task, the kernel did not report this task's
 * switch-out, and the switch repairs it.
 */
struct cpu_run {
	__u64 task; /* the task's address; 0: none. Only probe-read, after its pid matches */
	__u64 cgid; /* the cgroup slots is for: equal cgids have equal slot sets */
	__u64 since;
	__u64 runtime;	/* the task's se.sum_exec_runtime at its switch-in here */
	__u64 untasked; /* this CPU's untasked time then: task_clock_untasked() */
	__u32 pid;
	__u32 gen;	/* with cgid: which slots; equal (cgid, gen) pairs have equal slot sets */
	__u32 switches; /* this CPU's, to sample clock_offset every CLOCK_SYNC_EVERY of them */
	/*
	 * The task's on-CPU time in the interval of thread_gen up to thread_mark: from its
	 * task_state at the switch-in, set back to 0 by a snapshot that finds it on CPU.
	 */
	__u32 thread_gen;
	__u64 thread_on_ns;
	__u64 thread_mark;
	__u64 thread_stolen; /* the time stolen from it since its switch-in, at thread_mark */
	struct slot_set slots;
	/*
	 * cg_sched_switch's two halves, here rather than on its stack: with the slow path below
	 * it (task_move_cgroup() and its bpf_loop callback) that stack came to 544 bytes, past
	 * BPF's 512, under the verifier of 6.18.44. No switch nests in another on one CPU.
	 */
	struct switch_out out;
	struct switch_in in;
};

/*
 * The state of a tracked task, masked so that the verifier sees a bounded index however the
 * compiler orders the range check and the address arithmetic. A task is never in CG_STOLEN.
 */
_Static_assert(CG_STOLEN == 4, "ts_state() masks a task's state with CG_STOLEN - 1");

static __always_inline __u32 ts_state(const struct task_state *ts)
{
	return (ts->state - 1) & 3;
}

/*
 * The state as the sched_switch program hands it on: CG_NR_STATES or more for none (not yet
 * tracked, or exited). Read back from the task's storage rather than passed on as the
 * constant each branch set, so that the verifier sees one unknown value where the branches
 * join instead of following each branch's constant to the end of the program.
 */
static __always_inline __u32 ts_state_or_none(const struct task_state *ts)
{
	return READ_ONCE(ts->state) - 1;
}

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

#define CLOCK_SYNC_EVERY 64

/*
 * (watched cgroup's slot, thread name pattern) -> its pool slot, with --threads. Keyed by the
 * slot, not the cgroup id, so that a watched path made again goes on with the same pools.
 */
struct pool_key {
	__u32 watched_slot;
	char pool[CG_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct pool_key);
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

/*
 * The time of an event: the scheduler's own run-queue clock (rq->clock) of the task's CPU,
 * which the kernel updated just before each tracepoint cgstat uses. Reading it is three loads,
 * where bpf_ktime_get_ns() reads the clocksource, four times in every ping-pong round trip
 * (what that costs: docs/performance.md); and it is the clock of the kernel's own schedstat, so
 * cgstat's run-queue waits are schedstat's run_delay. Without FAIR_GROUP_SCHED there is no
 * se.cfs_rq->rq, and the monotonic clock serves instead.
 */
static __always_inline __u64 task_clock(struct task_struct *t)
{
	if (!bpf_core_field_exists(t->se.cfs_rq) || !bpf_core_field_exists(struct cfs_rq, rq))
		return bpf_ktime_get_ns();
	return t->se.cfs_rq->rq->clock;
}

/*
 * task_clock(), and how much of it the CPU ran no task so far (in *untasked): rq->clock_task
 * is rq->clock less what the hypervisor stole (PARAVIRT_TIME_ACCOUNTING) and, with
 * IRQ_TIME_ACCOUNTING, interrupt time; the scheduler charges tasks runtime on clock_task
 * alone, so sum_exec_runtime and cpu.stat leave that time out. On a busy shared host steal is
 * tens of percent of a second, all of it inside what rq->clock shows as on-CPU: cgstat moves
 * it from on-CPU to CG_STOLEN, so on-CPU is the kernel's runtime and no time is lost.
 */
static __always_inline __u64 task_clock_untasked(struct task_struct *t, __u64 *untasked)
{
	struct rq *rq;

	if (!bpf_core_field_exists(t->se.cfs_rq) || !bpf_core_field_exists(struct cfs_rq, rq)) {
		*untasked = 0;
		return bpf_ktime_get_ns();
	}
	rq = t->se.cfs_rq->rq;
	*untasked = rq->clock - rq->clock_task;
	return rq->clock;
}

/*
 * A snapshot runs where the run-queue clock may be stale (an idle CPU does not update it), so
 * it reads the monotonic clock and adds this offset, resampled every CLOCK_SYNC_EVERY switches
 * on each CPU: the two clocks drift apart by no more than NTP's slew between samples.
 */
/*
 * cgstat's clock now, outside the scheduler's tracepoints, where t's run-queue clock may be a
 * tick old: the monotonic clock moved onto it by the offset sched_switch samples.
 */
static __always_inline __u64 clock_now(struct task_struct *t)
{
	return clock_offset_valid ? bpf_ktime_get_ns() + clock_offset : task_clock(t);
}

static __always_inline void clock_sync(struct cpu_run *run, __u64 rq_now)
{
	if ((++run->switches & (CLOCK_SYNC_EVERY - 1)) && clock_offset_valid)
		return;
	clock_offset = rq_now - bpf_ktime_get_ns();
	clock_offset_valid = 1;
}

static __always_inline void count_drop(void)
{
	__sync_fetch_and_add(&dropped_events, 1);
}

/*
 * Visit each slot a task counts in with fn(index, ctx) (see for_each_slot()). In the
 * all-cgroups mode that is its own cgroup's slot alone, and all_cgroups is read-only: fn is
 * called once, inlined, in the hot path. A loop of CG_MAX_NEST inlined iterations at each of
 * the hot path's slot updates multiplied the verifier's paths past 800,000 instructions and a
 * second of loading, so the watched mode runs fn through bpf_loop(), verified once a site;
 * but for a task in one watched cgroup, the common case where one cgroup is watched, where it
 * calls fn inline too: bpf_loop()'s helper call and indirect call cost more than fn itself.
 */
struct slot_visit {
	const struct slot_set *set;
};

typedef long (*slot_visitor)(__u32 index, void *ctx);

/*
 * The key is copied to the stack: before 6.2 the verifier takes a map key only from the stack,
 * a packet or a map value, and set lies in task storage (PTR_TO_MEM on 6.1).
 */
static __always_inline struct cg_slot_live *slot_live_of(const struct slot_set *set, __u32 i)
{
	__u32 slot = set->slot[i & (CG_MAX_NEST - 1)];

	return bpf_map_lookup_elem(&slot_live, &slot);
}

/* visit (whose first member is a struct slot_visit) names set; fn's ctx is visit. */
static __always_inline void for_each_slot(const struct slot_set *set, slot_visitor fn, void *visit)
{
	struct slot_visit *v = visit;

	v->set = set;
	if (!all_cgroups && set->nslots > 1) {
		bpf_loop(set->nslots < CG_MAX_NEST ? set->nslots : CG_MAX_NEST, fn, visit, 0);
		return;
	}
	if (set->nslots)
		fn(0, visit);
}

struct counters_visit {
	struct slot_visit v;
	const struct cg_cpu_counters *read;
};

static __always_inline long counters_add(__u32 index, void *ctx)
{
	struct counters_visit *c = ctx;
	struct cg_slot_live *live = slot_live_of(c->v.set, index);
	__u32 e;

	if (!live)
		return 0;
	for (e = 0; e < CG_MAX_EVENTS; e++) {
		if (e >= nr_perf_events)
			break;
		live->counter[e] += c->read->d_count[e];
		live->enabled[e] += c->read->d_enabled[e];
		live->running[e] += c->read->d_running[e];
	}
	return 0;
}

/*
 * Charge this CPU's perf counts since its last read to set, the slots of the task whose cgroup
 * ran since (none: the idle task or an untracked one; the counts are dropped).
 */
static __always_inline void counters_charge(const struct slot_set *set, __u64 now)
{
	__u32 zero = 0, cpu = bpf_get_smp_processor_id(), e;
	struct counters_visit c = {};
	struct bpf_perf_event_value v;
	struct cg_cpu_counters *last;

	last = bpf_map_lookup_elem(&cpu_counters, &zero);
	if (!last)
		return;
	for (e = 0; e < CG_MAX_EVENTS; e++) {
		if (e >= nr_perf_events)
			break;
		last->d_count[e] = last->d_enabled[e] = last->d_running[e] = 0;
		if (bpf_perf_event_read_value(&perf_events, e * nr_cpus + cpu, &v, sizeof(v)))
			continue;
		last->d_count[e] = v.counter - last->count[e];
		last->d_enabled[e] = v.enabled - last->enabled[e];
		last->d_running[e] = v.running - last->running[e];
		last->count[e] = v.counter;
		last->enabled[e] = v.enabled;
		last->running[e] = v.running;
		if (last->d_running[e] < last->d_enabled[e])
			multiplexed = 1;
	}
	last->read_at = now;
	c.read = last;
	if (set)
		for_each_slot(set, counters_add, &c);
}

/*
 * A state s already checked to be below CG_NR_STATES, as an index the verifier sees bounded.
 * The check alone did not do on 6.1 and 6.12: clang compared one copy of s and indexed with
 * another (or hoisted the address arithmetic out of a slot loop), and those verifiers did not
 * carry the bound across ("R1 unbounded memory access"); 6.18's does. The mask bounds the very
 * register the index uses, and barrier_var keeps clang, which knows s < CG_NR_STATES, from
 * dropping it. The mask alone would keep an index inside struct cg_slot_live, which is all the
 * verifier asks; the callers' check keeps it inside the array.
 */
#define CG_STATE_MASK 7
_Static_assert(CG_NR_STATES <= CG_STATE_MASK + 1, "state_index() masks with CG_STATE_MASK");

static __always_inline __u32 state_index(__u32 s)
{
	barrier_var(s);
	return s & CG_STATE_MASK;
}

/* One slot on this CPU: a task leaves state from and enters state to at now (CG_NR_STATES: none).
 */
static __always_inline void live_move(struct cg_slot_live *live, __u32 from, __u32 to, __u64 now)
{
	if (from < CG_NR_STATES) {
		from = state_index(from);
		live->base[from] += now;
		live->in_state[from]--;
	}
	if (to < CG_NR_STATES) {
		to = state_index(to);
		live->base[to] -= now;
		live->in_state[to]++;
	}
}

/*
 * Of the task that left the CPU for state to, and the one that took it: to began gap earlier,
 * and on CPU's time stops for gap (both moved at now by live_move() first).
 */
static __always_inline void live_shift(struct cg_slot_live *live, __u32 to, __u64 gap)
{
	live->base[CG_ONCPU] -= gap;
	if (to < CG_NR_STATES) {
		to = state_index(to);
		live->base[to] += gap;
	}
}

struct move_visit {
	struct slot_visit v;
	__u32 from;
	__u32 to;
	__u64 now;
};

static __always_inline long slot_move(__u32 index, void *ctx)
{
	struct move_visit *m = ctx;
	struct cg_slot_live *live = slot_live_of(m->v.set, index);

	if (!live)
		return 0;
	live->seq++;
	live_move(live, m->from, m->to, m->now);
	return 0;
}

static __always_inline long slot_move_atomic(__u32 index, void *ctx)
{
	struct move_visit *m = ctx;
	struct cg_slot_live *live = slot_live_of(m->v.set, index);
	__u32 from = m->from, to = m->to;

	if (!live)
		return 0;
	if (from < CG_NR_STATES) {
		from = state_index(from);
		__sync_fetch_and_add(&live->base[from], m->now);
		__sync_fetch_and_sub(&live->in_state[from], 1);
	}
	if (to < CG_NR_STATES) {
		to = state_index(to);
		__sync_fetch_and_sub(&live->base[to], m->now);
		__sync_fetch_and_add(&live->in_state[to], 1);
	}
	__sync_fetch_and_add(&live->seq, 1);
	return 0;
}

/*
 * Move a task out of state from and into state to at now, in every slot of set. from or
 * to may be CG_NR_STATES for "none". atomic is for callers that can be preempted mid-update
 * (the iterator); the scheduler tracepoints run with interrupts off and need no atomics.
 */
static __always_inline void slots_move(const struct slot_set *set, __u32 from, __u32 to, __u64 now,
				       bool atomic)
{
	struct move_visit m = { .from = from, .to = to, .now = now };

	/* two calls, each with a known function: BPF has no indirect calls */
	if (atomic)
		for_each_slot(set, slot_move_atomic, &m);
	else
		for_each_slot(set, slot_move, &m);
}

static __always_inline void origin_read(struct cgroup *cg, struct cg_cgroup_origin *origin)
{
	int level = BPF_CORE_READ(cg, level);

	origin->parent_cgid =
		level > 0 ? cgroup_ancestor_id(cg, (level - 1) & (CG_MAX_LEVEL - 1)) : 0;
	/* deeper, the parent is not read: no name, and user space walks the tree for the label */
	if (level <= CG_MAX_LEVEL)
		bpf_probe_read_kernel_str(origin->leaf_name, sizeof(origin->leaf_name),
					  BPF_CORE_READ(cg, kn, name));
	else
		origin->leaf_name[0] = '\0';
}

/*
 * Note where cg and its ancestors came from in cgroup_origins, up to the first one noted already
 * (its ancestors were noted with it). Slow paths only: a cgroup's first slot or first preemption.
 */
static __noinline void origins_note(struct cgroup *cg)
{
	struct cg_cgroup_origin *origin;
	__u32 zero = 0;
	__u64 id;
	int i;

	origin = bpf_map_lookup_elem(&origin_scratch, &zero);
	if (!origin)
		return;
	for (i = 0; i < CG_MAX_LEVEL && cg; i++) {
		id = BPF_CORE_READ(cg, kn, id);
		if (bpf_map_lookup_elem(&cgroup_origins, &id))
			return;
		origin_read(cg, origin);
		bpf_map_update_elem(&cgroup_origins, &id, origin, BPF_NOEXIST);
		if (!origin->parent_cgid || !origin->leaf_name[0])
			return;
		cg = BPF_CORE_READ(cg, self.parent, cgroup);
	}
}

/* A slot nobody uses, its info for the caller to fill; NULL when the map is full. */
static __always_inline struct cg_slot_info *slot_take(__u32 *slot)
{
	if (bpf_map_pop_elem(&free_slots, slot)) {
		/*
		 * A full map is retried at the task's every event: checked first, so that the
		 * retries cannot carry slot_hwm around to slots in use.
		 */
		if (READ_ONCE(slot_hwm) >= max_slots)
			return NULL;
		*slot = __sync_fetch_and_add(&slot_hwm, 1);
		if (*slot >= max_slots)
			return NULL;
	}
	return bpf_map_lookup_elem(&slot_info, slot);
}

static __always_inline __u32 slot_alloc(struct cgroup *cg, __u64 cgid)
{
	struct cg_slot_info *info;
	__u32 slot, *winner;

	info = slot_take(&slot);
	if (!info)
		return (__u32)-1;
	info->dead = 0;
	origin_read(cg, &info->origin);
	/* the parents that have no task, and so no slot, are labelled from these */
	if (all_cgroups && info->origin.parent_cgid && info->origin.leaf_name[0])
		origins_note(BPF_CORE_READ(cg, self.parent, cgroup));
	/* the id last: user space reads the rest once it sees the id */
	info->cgid = cgid;
	if (!bpf_map_update_elem(&cgroup_slots, &cgid, &slot, BPF_NOEXIST)) {
		/*
		 * An exiting task leaves its cgroup's populated count before its last switch, so
		 * its cgroup can be removed, and cgroup_rmdir have found no slot to mark, before
		 * that switch makes one here. rmdir clears CSS_ONLINE before its tracepoint, and
		 * the mapping is in place before this reads it: one of the two marks the slot.
		 */
		if (!(BPF_CORE_READ(cg, self.flags) & CSS_ONLINE))
			info->dead = 1;
		return slot;
	}
	/* Another CPU took a slot for this cgroup first: use its slot, give ours back. */
	info->cgid = 0;
	bpf_map_push_elem(&free_slots, &slot, 0);
	winner = bpf_map_lookup_elem(&cgroup_slots, &cgid);
	return winner ? *winner : (__u32)-1;
}

struct pool_name_ctx {
	char comm[CG_COMM_LEN];
	struct cg_pool_builder b;
};

static long pool_name_char(__u32 i, struct pool_name_ctx *c)
{
	char ch = c->comm[i & (CG_COMM_LEN - 1)];

	if (!ch)
		return 1;
	cg_pool_step(&c->b, ch, pool_exact);
	return 0;
}

/*
 * The pool slot of watched slot watched for a thread named comm, taken on first sight of its
 * pool; watched itself (the pool "(the other pools)") once the cgroup has its
 * CG_POOLS_PER_WATCHED.
 */
static __always_inline __u32 pool_slot(__u32 watched, const char *comm)
{
	struct pool_key key = { .watched_slot = watched };
	struct pool_name_ctx name = {};
	struct cg_slot_info *info, *owner;
	__u32 slot, *found, *taken;

	__builtin_memcpy(name.comm, comm, sizeof(name.comm));
	bpf_loop(CG_COMM_LEN - 1, pool_name_char, &name, 0);
	__builtin_memcpy(key.pool, name.b.pool, sizeof(key.pool));
	found = bpf_map_lookup_elem(&pool_slots, &key);
	if (found)
		return *found;
	taken = bpf_map_lookup_elem(&pools_taken, &watched);
	owner = bpf_map_lookup_elem(&slot_info, &watched);
	if (!taken || !owner || READ_ONCE(*taken) >= CG_POOLS_PER_WATCHED)
		return watched;
	info = slot_take(&slot);
	if (!info)
		return watched;
	__builtin_memcpy(info->pool, key.pool, sizeof(info->pool));
	info->pool_of = watched + 1;
	info->dead = 0;
	/* the id last: user space reads the rest once it sees the id */
	info->cgid = owner->cgid;
	if (!bpf_map_update_elem(&pool_slots, &key, &slot, BPF_NOEXIST)) {
		__sync_fetch_and_add(taken, 1);
		return slot;
	}
	/* another CPU took this pool's slot first (or the map is full): give ours back */
	info->cgid = 0;
	bpf_map_push_elem(&free_slots, &slot, 0);
	found = bpf_map_lookup_elem(&pool_slots, &key);
	return found ? *found : watched;
}

struct resolve_ctx {
	struct cgroup *cg;
	__u64 cgid;
	int level;
	__u32 n;
	__u32 slot[CG_MAX_NEST];
	char comm[CG_COMM_LEN]; /* with pools: the task's name */
};

/*
 * One level of the watched-ancestor walk, with pools to the pool's slot: a bpf_loop callback,
 * so it is verified once.
 */
static long resolve_level(__u32 i, struct resolve_ctx *c)
{
	__u32 *slot;
	__u64 id;

	if (c->n >= CG_MAX_NEST)
		return 1;
	id = (int)i == c->level ? c->cgid : cgroup_ancestor_id(c->cg, i & (CG_MAX_LEVEL - 1));
	slot = bpf_map_lookup_elem(&cgroup_slots, &id);
	if (slot)
		c->slot[c->n++ & (CG_MAX_NEST - 1)] = pools ? pool_slot(*slot, c->comm) : *slot;
	return 0;
}

/*
 * Which slots a task in cgroup cg counts in (with pools, named ts->comm). Slow path: first
 * sight, a cgroup move, or a new name.
 */
static __always_inline void slots_resolve(struct task_state *ts, struct cgroup *cg, __u64 cgid)
{
	struct resolve_ctx c = { .cg = cg, .cgid = cgid };
	__u32 *slot, i;

	if (all_cgroups) {
		slot = bpf_map_lookup_elem(&cgroup_slots, &cgid);
		ts->slots.slot[0] = slot ? *slot : slot_alloc(cg, cgid);
		if (ts->slots.slot[0] == (__u32)-1) {
			/* no cgid: the task's next event tries again, once slots are freed */
			count_drop();
			ts->slots.nslots = 0;
			ts->cgid = 0;
		} else {
			ts->slots.nslots = 1;
			ts->cgid = cgid;
		}
		return;
	}
	c.level = BPF_CORE_READ(cg, level);
	if (pools)
		__builtin_memcpy(c.comm, ts->comm, sizeof(c.comm));
	bpf_loop(c.level + 1 < CG_MAX_LEVEL ? c.level + 1 : CG_MAX_LEVEL, resolve_level, &c, 0);
	for (i = 0; i < CG_MAX_NEST; i++)
		ts->slots.slot[i] = c.slot[i];
	ts->slots.nslots = c.n;
	ts->cgid = cgid;
}

/*
 * The slow path of task_state_get(): a task first seen, or moved to another cgroup, takes its
 * current state along to the slots of cgroup cg (with pools, of its pool: ts->comm). On CPU stays
 * where the CPU's record counted it until the task leaves the CPU. A global function, so that
 * the verifier checks it once rather than at each of the hot paths that inline
 * task_state_get(); cg is the cgroup's address as a number (read with probe reads only).
 */
__noinline int task_move_cgroup(struct task_state *ts, __u64 cg, __u64 cgid, __u64 now, int atomic)
{
	bool moves;

	if (!ts)
		return 0;
	moves = ts->state != TS_UNTRACKED && ts_state(ts) != CG_ONCPU;
	if (moves)
		slots_move(&ts->slots, ts_state(ts), CG_NR_STATES, now, atomic);
	ts->gen = READ_ONCE(watch_gen);
	slots_resolve(ts, (struct cgroup *)cg, cgid);
	if (moves)
		slots_move(&ts->slots, CG_NR_STATES, ts_state(ts), now, atomic);
	return 0;
}

/* ts's entry of the thread table, with pools; NULL where it has none. */
static __always_inline struct cg_thread_entry *thread_entry_of(const struct task_state *ts)
{
	__u32 index = ts->thread_entry - 1;

	if (!pools || !ts->thread_entry)
		return NULL;
	return bpf_map_lookup_elem(&thread_table, &index);
}

/*
 * Thread t's kernel figures now into its entry. Plain loads: t is the kernel's own pointer at
 * every caller (probe reads cost 3 ms a drain when a drain read every thread).
 */
static __always_inline void thread_entry_figures(struct cg_thread_entry *e, struct task_struct *t)
{
	e->time_ns[CG_ONCPU] = t->se.sum_exec_runtime;
	e->time_ns[CG_RUNQ] = t->sched_info.run_delay;
	e->count[CG_NVCSW] = t->nvcsw;
	e->count[CG_NIVCSW] = t->nivcsw;
	e->count[CG_MIGRATIONS] = t->se.nr_migrations;
}

/*
 * An entry for a thread first seen in a watched subtree: one user space gave back, else one no
 * thread had; CG_THREAD_TABLE where the table is full. The ring's slot is read before the
 * compare-and-swap that takes it: user space never writes a slot between tail and head.
 */
static __always_inline __u32 thread_entry_take(void)
{
	__u32 tail, slot, taken;
	__u64 *index;
	int i;

	for (i = 0; i < 4; i++) {
		tail = READ_ONCE(thread_free_tail);
		/*
		 * An acquire of head (an atomic read, which orders what follows): the slot below
		 * is read after it, so never before user space wrote it (it stores head with
		 * release, after the slot).
		 */
		if (tail == __sync_fetch_and_add(&thread_free_head, 0))
			break;
		slot = tail % CG_THREAD_TABLE;
		index = bpf_map_lookup_elem(&thread_free, &slot);
		if (!index)
			break;
		taken = (__u32)*index;
		if (__sync_val_compare_and_swap(&thread_free_tail, tail, tail + 1) == tail)
			return taken < CG_THREAD_TABLE ? taken : CG_THREAD_TABLE;
	}
	taken = __sync_fetch_and_add(&thread_entries_new, 1);
	return taken < CG_THREAD_TABLE ? taken : CG_THREAD_TABLE;
}

/* An entry taken for nothing: user space reads it as a thread gone unseen and gives it back. */
static __always_inline void thread_entry_unused(__u32 index)
{
	struct cg_thread_entry *e = bpf_map_lookup_elem(&thread_table, &index);

	if (!e)
		return;
	e->nslots = 0;
	e->exited = 1;
	__sync_lock_test_and_set(&e->seq, __sync_fetch_and_add(&thread_seq_last, 1) + 1);
}

/*
 * Thread t, in a watched subtree from now on (first seen, or moved in), counts in its entry from
 * here: its figures now are its base. The entry is withdrawn (seq 0) before it is rewritten, and
 * published by a new seq only once thread_entry_name() has said who the thread is: published
 * before, a reused entry once gave a drain the previous thread's tid, name and slots beside the
 * new thread's figures.
 */
static __always_inline void thread_entry_start(struct task_struct *t, struct task_state *ts)
{
	struct cg_thread_entry *e;
	__u32 index, seq;
	int i;

	if (!ts->thread_entry) {
		index = thread_entry_take();
		if (index >= CG_THREAD_TABLE) {
			__sync_fetch_and_add(&threads_untabled, 1);
			return;
		}
		/* two CPUs may resolve a new thread at once: the loser gives its entry back */
		if (__sync_val_compare_and_swap(&ts->thread_entry, 0, index + 1))
			thread_entry_unused(index);
	}
	e = thread_entry_of(ts);
	if (!e)
		return;
	__sync_lock_test_and_set(&e->seq, 0);
	thread_entry_figures(e, t);
	e->time_ns[CG_SLEEP] = 0;
	e->time_ns[CG_BLOCKED] = 0;
	for (i = 0; i < CG_THREAD_TIMES; i++)
		e->base_time_ns[i] = e->time_ns[i];
	for (i = 0; i < CG_THREAD_COUNTS; i++)
		e->base_count[i] = e->count[i];
	e->state = CG_NR_STATES;
	e->exited = 0;
	seq = __sync_fetch_and_add(&thread_seq_last, 1) + 1;
	ts->thread_seq = seq ? seq : 1;
}

/*
 * Who t is and where it counts, into its entry: at each resolve of its slots; then the entry's
 * seq, where thread_entry_start() withdrew it, last (an exchange: after everything above).
 */
static __always_inline void thread_entry_name(struct task_struct *t, struct task_state *ts)
{
	struct cg_thread_entry *e = thread_entry_of(ts);
	struct cg_slot_info *info;
	__u32 slot;
	int i;

	if (!e)
		return;
	e->tid = t->pid;
	e->pid = t->tgid;
	__builtin_memcpy(e->comm, ts->comm, sizeof(e->comm));
	e->nslots = ts->slots.nslots;
	for (i = 0; i < CG_MAX_NEST; i++) {
		slot = ts->slots.slot[i];
		info = bpf_map_lookup_elem(&slot_info, &slot);
		e->slot[i] = slot;
		e->owner[i] = info && info->pool_of ? info->pool_of - 1 : slot;
	}
	if (READ_ONCE(e->seq) != ts->thread_seq)
		__sync_lock_test_and_set(&e->seq, ts->thread_seq);
}

/*
 * Thread t leaves the CPU for state to (CG_NR_STATES: it exited) at ts->since: its figures as
 * the kernel has them now. An exit is its last: user space reads the entry once more and gives
 * it back.
 */
static __always_inline void thread_entry_out(struct task_struct *t, struct task_state *ts, __u32 to)
{
	struct cg_thread_entry *e = thread_entry_of(ts);

	if (!e)
		return;
	thread_entry_figures(e, t);
	e->since = ts->since;
	e->state = to;
	if (to >= CG_NR_STATES)
		__sync_lock_test_and_set(&e->exited, 1);
}

/* slept ns of a sleep (from: CG_SLEEP) or a block of a task, with pools, into its entry. */
static __always_inline struct cg_thread_entry *thread_slept(const struct task_state *ts, __u32 from,
							    __u64 slept)
{
	struct cg_thread_entry *e;

	if (!pools || (from != CG_SLEEP && from != CG_BLOCKED))
		return NULL;
	e = thread_entry_of(ts);
	if (e && (__s64)slept > 0)
		e->time_ns[from == CG_BLOCKED ? CG_BLOCKED : CG_SLEEP] += slept;
	return e;
}

/* A sleep or a block of a task, with pools, ended at now: into its entry. */
static __always_inline void thread_woke(struct task_state *ts, __u32 from, __u64 now)
{
	struct cg_thread_entry *e = thread_slept(ts, from, now - ts->since);

	if (e)
		e->state = CG_RUNQ;
}

/*
 * t's state, made on first sight, with its slots those of the cgroup it is in now: the hot
 * path compares the cgroup id and the watch list's generation, and takes the slow path only
 * when either changed. NULL where the kernel refuses to make it: it serialises task-storage
 * creation per CPU, so a creation fails while another is preempted or interrupted midway on
 * this CPU (the seeding iterator's, an exiting task's storage being freed, another BPF
 * user's). Counted as a drop unless recovered_later: the event is one whose loss the task's
 * next switch-in recovers.
 */
static __always_inline struct task_state *task_state_get(struct task_struct *t, __u64 now,
							 bool atomic, bool recovered_later)
{
	struct task_state *ts;
	__u64 cgid, cg = 0;
	__u32 counted;

	ts = bpf_task_storage_get(&task_states, t, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ts) {
		if (!recovered_later)
			count_drop();
		return NULL;
	}
	cgid = t->cgroups->dfl_cgrp->kn->id;
	if (ts->cgid == cgid && ts->gen == watch_gen)
		return ts;
	/* first sight (or no slots so far): the faults from here on are counted */
	if (!ts->cgid) {
		ts->min_flt = t->min_flt;
		ts->maj_flt = t->maj_flt;
		ts->nr_migrations = t->se.nr_migrations;
	}
	bpf_probe_read_kernel(&cg, sizeof(cg), &t->cgroups->dfl_cgrp);
	if (!pools) {
		task_move_cgroup(ts, cg, cgid, now, atomic);
		return ts;
	}
	bpf_probe_read_kernel(ts->comm, sizeof(ts->comm), t->comm);
	counted = ts->slots.nslots;
	task_move_cgroup(ts, cg, cgid, now, atomic);
	/* a rename seen off CPU: the task comes on in its new slots (renamed_on_cpu()) */
	if (ts->state != CG_ONCPU + 1)
		ts->renamed_at = 0;
	/* its thread row counts from its first sight in a watched subtree (a move in) */
	if (!counted && ts->slots.nslots)
		thread_entry_start(t, ts);
	thread_entry_name(t, ts);
	return ts;
}

/*
 * Claim a task first seen, for state: the seeding iterator races with the tracepoints for the
 * same task, so the claim is a compare-and-swap. The state the task was in before, as
 * ts_state_or_none() gives it: CG_NR_STATES or more when this call claimed it.
 */
static __always_inline __u32 task_claim(struct task_state *ts, __u32 new_state)
{
	__u32 old = READ_ONCE(ts->state);

	if (old == TS_UNTRACKED)
		old = __sync_val_compare_and_swap(&ts->state, TS_UNTRACKED, new_state);
	return old - 1;
}

/* Start tracking a task first seen off CPU; false when another claimed it first. */
static __always_inline bool task_track(struct task_struct *t, struct task_state *ts, __u32 state,
				       __u64 now, bool atomic)
{
	if (task_claim(ts, state + 1) < CG_NR_STATES)
		return false;
	ts->since = now;
	ts->nvcsw = t->nvcsw;
	slots_move(&ts->slots, CG_NR_STATES, state, now, atomic);
	return true;
}

/*
 * When the scheduler last charged prev runtime (se.exec_start, on rq->clock_task), in cgstat's
 * clock: now, unless prev was dequeued (it sleeps) and the CPU then balanced before picking
 * next, with the run queue unlocked and the clock moved on. The kernel charges that time to no
 * task (not in sum_exec_runtime, nor in cpu.stat), so cgstat does not either: prev leaves the
 * CPU where its runtime ended. About a microsecond a sleep where CPUs often go idle.
 */
static __always_inline __u64 charged_until(struct task_struct *prev, __u64 now)
{
	__u64 gap;

	if (!bpf_core_field_exists(prev->se.cfs_rq) || !bpf_core_field_exists(struct cfs_rq, rq))
		return now;
	gap = prev->se.cfs_rq->rq->clock_task - prev->se.exec_start;
	return (__s64)gap > 0 && gap < now ? now - gap : now;
}

static __always_inline struct task_state *switch_out_decide(struct task_struct *prev, bool preempt,
							    __u32 prev_state, __u64 now,
							    struct switch_out *out)
{
	struct task_state *ts;
	__u32 to, from;
	__u64 nvcsw;

	ts = task_state_get(prev, now, false, false);
	if (!ts)
		return NULL;
	if (prev_state & TASK_DEAD)
		to = CG_NR_STATES;
	else if (preempt || task_run_state(prev) == TASK_RUNNING)
		/* preempted, yielded, or a sleep cut short by a pending signal: still runnable */
		to = CG_RUNQ;
	else if (state_blocked(prev_state))
		to = CG_BLOCKED;
	else
		to = CG_SLEEP;
	from = task_claim(ts, to < CG_NR_STATES ? to + 1 : TS_UNTRACKED);
	/*
	 * Exactly as the kernel counts nvcsw/nivcsw: __schedule() bumped one of them just before
	 * this tracepoint, so whether nvcsw moved says which. The arguments alone cannot: since
	 * v6.16 a task that tried to sleep with a signal pending shows prev_state == TASK_RUNNING
	 * yet counts as voluntary, as does a yield as involuntary.
	 */
	nvcsw = prev->nvcsw;
	if (from >= CG_NR_STATES)
		/* running since before cgstat attached: no earlier snapshot to compare with */
		out->voluntary = !preempt && prev_state != TASK_RUNNING;
	else
		out->voluntary = nvcsw != ts->nvcsw;
	ts->nvcsw = nvcsw;
	out->from = from == CG_ONCPU ? CG_NR_STATES : from;
	out->since = ts->since;
	out->left = charged_until(prev, now);
	ts->state = to < CG_NR_STATES ? to + 1 : TS_UNTRACKED;
	ts->since = out->left;
	out->to = ts_state_or_none(ts);
	thread_entry_out(prev, ts, to);
	return ts;
}

/*
 * The waits of a task that no tracepoint showed cgstat, from the scheduler's own accounting
 * (sched_info, on the run-queue clock cgstat uses). On this project's VMs no tracepoint fires
 * while a hypervisor agent's thread is current: its switch-outs and the wakeups made then (a
 * timer that fires) reach no tracer. So a task comes on CPU from what cgstat believes is a
 * sleep (woken unseen), or while it still believes it on CPU (its switch-out was not reported:
 * the CPU's record let it go, and it counted in no state since), or it comes on CPU unseen and
 * is found at its switch-out by a repair, which counts it on CPU only from its last arrival.
 * sched_info counted every such wait: run_delay grows at each switch-in by the time since the
 * task was queued (last_queued, cleared just after the sched_switch tracepoint), and pcount
 * counts the switch-ins. cgstat keeps both as it last took them in; what run_delay grew by
 * since, less the waits cgstat counted itself meanwhile, goes to the run queue: out of the
 * state it believed in, never more than the believed time in it, or from no state. It is taken
 * at the first of the task's events that shows an unseen one: at a repair, or at its
 * switch-in, where its own waits stand if every switch and wakeup of it since was seen (so
 * that a wait the kernel books wrongly, a sleep with its dequeue delayed: docs/metrics.md, does
 * not come in). A task first seen at its switch-in (its wakeup's storage could not be made:
 * task_state_get()) waited from its queueing, if that was since tracking began.
 */
struct recover_args {
	__u64 queued; /* sched_info.last_queued, run_delay and pcount, read by the caller */
	__u64 delay;
	__u64 pcount;
	__u64 counted;	/* the waits cgstat counted itself since it last took them in */
	__u64 believed; /* how long cgstat believed the task in from */
	__u64 now;
	__u32 from; /* the state cgstat believed in; CG_ONCPU: left unseen; CG_NR_STATES: none */
	__u32 at_switch_in; /* 0: at a repair, where the task is on CPU */
};

/*
 * A global function, verified once: its branches on the believed state, inlined, multiplied
 * the verifier's paths through the rest of sched_switch past its million instructions in the
 * watched mode. The switch's own slot pass moves what it finds (live_recovered()).
 */
__noinline int waits_recover(struct task_state *ts, const struct recover_args *a,
			     struct waits_recovered *rec)
{
	__u64 delay, missed;
	__u32 pcount, arrived, seen, from;

	if (!ts || !a || !rec)
		return 0;
	from = a->from;
	delay = a->delay;
	pcount = a->pcount;
	arrived = a->at_switch_in && a->queued && a->queued <= a->now;
	if (arrived)
		delay += a->now - a->queued;
	seen = ts->sched_info_seen && from < CG_NR_STATES;
	ts->sched_info_seen = 1;
	if (a->at_switch_in && from >= CG_NR_STATES && arrived && tracking_since &&
	    a->queued >= tracking_since) {
		rec->added = a->now - a->queued;
		rec->waits = 1;
	}
	missed = delay - ts->run_delay;
	if (seen && !(a->at_switch_in && from == CG_RUNQ && pcount == ts->pcount)) {
		missed = (__s64)(missed - a->counted) > 0 ? missed - a->counted : 0;
		if (from != CG_RUNQ && missed > a->believed)
			missed = a->believed;
		rec->waits = pcount - ts->pcount + (from != CG_RUNQ && arrived);
		if (from == CG_SLEEP || from == CG_BLOCKED) {
			rec->taken[from == CG_BLOCKED] = missed;
			__sync_fetch_and_add(&unseen_wakeups, 1);
		} else {
			rec->added = missed;
		}
	}
	ts->run_delay = delay;
	ts->pcount = pcount + arrived;
	return 0;
}

/*
 * waits_recover() at a switch-in from the run queue where the kernel counted no switch-in of
 * the task that cgstat did not see (pcount unchanged), the common case: nothing to recover,
 * only the baseline to move on by this arrival, exactly as waits_recover() would. Inline: the
 * call and its arguments in memory were a sixth of sched_switch's time (docs/performance.md).
 */
static __always_inline bool waits_all_seen(struct task_struct *t, struct task_state *ts, __u32 from,
					   __u64 now)
{
	__u64 queued;
	__u32 arrived;

	if (from != CG_RUNQ || !bpf_core_field_exists(t->sched_info.last_queued) ||
	    !ts->sched_info_seen || (__u32)t->sched_info.pcount != ts->pcount)
		return false;
	queued = t->sched_info.last_queued;
	arrived = queued && queued <= now;
	ts->run_delay = t->sched_info.run_delay + (arrived ? now - queued : 0);
	ts->pcount += arrived;
	return true;
}

/* waits_recover() for t, where the kernel keeps sched_info (CONFIG_SCHED_INFO). */
static __always_inline void waits_recover_of(struct task_struct *t, struct task_state *ts,
					     struct recover_args *a, struct waits_recovered *rec)
{
	if (!bpf_core_field_exists(t->sched_info.last_queued))
		return;
	a->queued = t->sched_info.last_queued;
	a->delay = t->sched_info.run_delay;
	a->pcount = t->sched_info.pcount;
	waits_recover(ts, a, rec);
}

static __always_inline struct task_state *switch_in_decide(struct task_struct *next, __u64 now,
							   struct switch_in *in)
{
	struct recover_args args = {};
	struct task_state *ts;
	__u32 from;

	ts = task_state_get(next, now, false, false);
	if (!ts)
		return NULL;
	from = task_claim(ts, CG_ONCPU + 1);
	if (from >= CG_NR_STATES)
		ts->nvcsw = next->nvcsw;
	/*
	 * A task that believes it is on CPU left a CPU without the kernel reporting it: that
	 * CPU's record holds its on-CPU count and releases it. Nothing to leave here.
	 */
	in->from = from == CG_ONCPU ? CG_NR_STATES : from;
	in->wait = now - ts->since;
	thread_woke(ts, from, now);
	in->migrations = next->se.nr_migrations - ts->nr_migrations;
	ts->nr_migrations = next->se.nr_migrations;
	if (all_cgroups || ts->slots.nslots) {
		if (!waits_all_seen(next, ts, from, now)) {
			args.from = from;
			args.counted = from == CG_RUNQ ? in->wait : 0;
			args.believed = in->wait;
			args.now = now;
			args.at_switch_in = 1;
			waits_recover_of(next, ts, &args, &in->recovered);
		}
		in->bucket = cg_hist_bucket(in->wait);
	} else {
		/*
		 * Counted in no slot (in the watched mode, outside every watched subtree): the
		 * recovery and the bucket would go nowhere. Its sched_info baseline is taken
		 * afresh at its first switch-in that counts, as at first sight.
		 */
		ts->sched_info_seen = 0;
	}
	ts->state = CG_ONCPU + 1;
	ts->since = now;
	return ts;
}

static __always_inline void count_switch_out(struct cg_slot_live *live,
					     const struct switch_out *out)
{
	__u32 by = out->preempted_by;

	if (out->voluntary) {
		live->count[CG_NVCSW]++;
	} else {
		live->count[CG_NIVCSW]++;
		/*
		 * One unsigned compare on the index itself: clang fused the two-sided range test
		 * on by into a subtraction and one compare on a copy, whose bound 6.1 and 6.12's
		 * verifiers did not carry back to by ("R2 unbounded memory access"); barrier_var
		 * keeps clang from folding the subtraction back into the address.
		 */
		by -= CG_PREEMPTED_BY_SAME;
		barrier_var(by);
		if (by < CG_PREEMPTED_BY_KERNEL - CG_PREEMPTED_BY_SAME + 1)
			live->count[CG_PREEMPTED_BY_SAME + by]++;
	}
	live->count[CG_MINOR_FAULTS] += out->min_flt;
	live->count[CG_MAJOR_FAULTS] += out->maj_flt;
	live->count[CG_MIGRATIONS] += out->migrations;
}

static __always_inline void count_switch_in(struct cg_slot_live *live, const struct switch_in *in)
{
	live->count[CG_MIGRATIONS] += in->migrations;
	if (in->from != CG_RUNQ)
		return;
	live->count[CG_RUNQ_WAITS]++;
	if (in->bucket < CG_HIST_BUCKETS)
		live->runq_hist[in->bucket]++;
	if (in->wait > live->runq_max_ns)
		live->runq_max_ns = in->wait;
	if (~in->wait > live->runq_min_inv)
		live->runq_min_inv = ~in->wait;
}

/*
 * The run-queue time no tracepoint showed (waits_recover()), in one slot; its waits count in
 * runqWaits (not in the histogram nor the max: indexing the histogram needs a branch). Without
 * a branch on it, adding zeros where there was none: this is inlined at every slot pass of the
 * hot path, and a branch on the outcome had the verifier follow both through the rest of
 * sched_switch (twice the instructions, 300 ms more to load).
 */
static __always_inline void live_recovered(struct cg_slot_live *live,
					   const struct waits_recovered *r)
{
	live->base[CG_SLEEP] -= r->taken[0];
	live->base[CG_BLOCKED] -= r->taken[1];
	live->base[CG_RUNQ] += r->taken[0] + r->taken[1] + r->added;
	live->count[CG_RUNQ_WAITS] += r->waits;
}

/* A thread that ran thread_on_ns in the interval: the slot's busiest on this CPU if the most. */
static __always_inline void live_busiest(struct cg_slot_live *live, __u64 thread_on_ns, __u64 task,
					 __u32 tid)
{
	if (thread_on_ns <= live->busiest_ns)
		return;
	live->busiest_ns = thread_on_ns;
	live->busiest_task = task;
	live->busiest_tid = tid;
}

struct switch_visit {
	struct slot_visit v;
	const struct switch_out *out;
	const struct switch_in *in;
	__u64 now;
};

static __always_inline long slot_switch(__u32 index, void *ctx)
{
	struct switch_visit *w = ctx;
	struct cg_slot_live *live = slot_live_of(w->v.set, index);

	if (!live)
		return 0;
	if (w->out && w->in) {
		live_move(live, w->in->from, w->out->to, w->now);
		/* prev left at out->left, next arrived at now: between, no one ran here */
		if (w->out->left != w->now)
			live_shift(live, w->out->to, w->now - w->out->left);
	} else if (w->out) {
		live_move(live, w->out->from, w->out->to, w->out->left);
		/* non-zero only after a repair, which never shares a pass with next */
		live_recovered(live, &w->out->recovered);
	} else if (w->in)
		live_move(live, w->in->from, CG_ONCPU, w->now);
	if (w->in)
		live_recovered(live, &w->in->recovered);
	if (w->out) {
		count_switch_out(live, w->out);
		live_busiest(live, w->out->thread_on_ns, w->out->task, w->out->tid);
	}
	if (w->in)
		count_switch_in(live, w->in);
	return 0;
}

struct preempter_visit {
	struct slot_visit v;
	__u64 cgid;		  /* the preempting thread's cgroup */
	struct task_struct *task; /* and the thread */
};

/*
 * Note where cgroup cgid of preempting task t came from (cgroup_origins): the drain labels the
 * preempter, which may have no slot (watching some cgroups) or have lost it already (the
 * all-cgroups mode, a cgroup removed within the interval).
 */
static __noinline void preempter_origin_note(struct task_struct *t, __u64 cgid)
{
	struct cgroup *cg;

	cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);
	/* moved on since its slots were resolved: user space walks the tree for this one */
	if (cg && BPF_CORE_READ(cg, kn, id) == cgid)
		origins_note(cg);
}

/*
 * One more involuntary switch of the slot's tasks to a thread of cgroup p->cgid: an array
 * lookup and a few compares, not a hash map's (28 ns more a switch in a cross-cgroup
 * ping-pong, where every other switch is such a preemption). Another CPU may take a free
 * entry at the same moment: the compare-and-swap decides, and the loser looks on.
 */
static __always_inline long slot_preempted(__u32 index, void *ctx)
{
	struct preempter_visit *p = ctx;
	__u32 slot = p->v.set->slot[index & (CG_MAX_NEST - 1)];
	struct cg_slot_preempters *table = bpf_map_lookup_elem(&slot_preempters, &slot);
	__u64 seen;
	int i;

	if (!table)
		return 0;
	for (i = 0; i < CG_PREEMPTERS_PER_SLOT; i++) {
		seen = table->cgid[i];
		if (!seen) {
			seen = __sync_val_compare_and_swap(&table->cgid[i], 0, p->cgid);
			if (!seen)
				preempter_origin_note(p->task, p->cgid);
		}
		if (!seen || seen == p->cgid) {
			__sync_fetch_and_add(&table->count[i], 1);
			return 0;
		}
	}
	return 0;
}

/*
 * A switch's parts in set: out (prev leaving the CPU), in (next coming on), or both when the
 * two tasks share the cgroup that the CPU's record counts on CPU (the common case): then one
 * pass does, and the on-CPU count is left alone, since one task replaces the other. Inlined
 * with constant NULLs, each caller gets only its part.
 */
static __always_inline void slots_switch(const struct slot_set *set, const struct switch_out *out,
					 const struct switch_in *in, __u64 now)
{
	struct switch_visit w = { .out = out, .in = in, .now = now };

	for_each_slot(set, slot_switch, &w);
}

static __always_inline __u64 ts_cgid(const struct task_state *ts)
{
	return ts ? ts->cgid : 0;
}

/*
 * Whether two tasks count in the same slots: those of one cgroup at one watch generation, and
 * with pools of one pool (the first slot is a pool's, and the others follow from the name).
 */
static __always_inline bool slots_same(__u64 cgid, __u32 gen, __u32 slot0,
				       const struct task_state *ts)
{
	return cgid == ts->cgid && gen == ts->gen && (!pools || slot0 == ts->slots.slot[0]);
}

/* Whether the CPU's record counts on CPU in the slots of ts. */
static __always_inline bool run_slots_are(const struct cpu_run *run, const struct task_state *ts)
{
	return slots_same(run->cgid, run->gen, run->slots.slot[0], ts);
}

/*
 * When the record's task left this CPU, for a switch that the kernel did not report. Only what
 * the kernel keeps for certain bounds it: the runtime the scheduler has charged the task since
 * its switch-in here (se.sum_exec_runtime, a duration on no CPU's clock), as long as the task
 * is still this CPU's (after a migration that runtime holds runs elsewhere, and nothing more is
 * known: it is counted no further). A task that is gone is counted no further either. Neither
 * sched_info.last_arrival of the task nor of prev serves here: sched_info_arrive() skips it for
 * a task that was not queued in sched_info's eyes, and a stale arrival once counted hundreds of
 * ms of on-CPU time that never ran.
 */
static __always_inline __u64 run_left(const struct cpu_run *run, __u64 now)
{
	struct task_struct *gone = (struct task_struct *)run->task;
	__u64 runtime = 0;
	__u32 cpu = (__u32)-1;
	int pid = 0;

	bpf_core_read(&pid, sizeof(pid), &gone->pid);
	if (pid != run->pid || !pid)
		return run->since;
	if (bpf_core_field_exists(gone->thread_info.cpu))
		bpf_core_read(&cpu, sizeof(cpu), &gone->thread_info.cpu);
	if (cpu != bpf_get_smp_processor_id())
		return run->since;
	bpf_core_read(&runtime, sizeof(runtime), &gone->se.sum_exec_runtime);
	runtime -= run->runtime;
	if ((__s64)runtime < 0 || runtime > now - run->since)
		return now;
	return run->since + runtime;
}

/*
 * When prev came on this CPU, for the same switch: its sched_info.last_arrival if that is
 * after the record's task came (else it is stale), or else when that task left.
 */
static __always_inline __u64 prev_came(const struct cpu_run *run, struct task_struct *prev,
				       __u64 left)
{
	__u64 arrival;

	if (!prev->pid || !bpf_core_field_exists(prev->sched_info.last_arrival))
		return left;
	arrival = prev->sched_info.last_arrival;
	return arrival > left && arrival > run->since ? arrival : left;
}

/*
 * A switch where this CPU's record does not hold prev: the kernel did not report the switch
 * that took the record's task off this CPU, nor the one that brought prev on (both happen
 * where tracepoints are not delivered, e.g. for tasks a hypervisor's agent hides). The record's
 * task is taken off when it left, and prev counted on CPU from when it came.
 */
struct repair {
	__u64 left; /* when the record's task left */
	__u64 came; /* when prev came */
};

static __always_inline void repair_bounds(const struct cpu_run *run, struct task_struct *prev,
					  const struct task_state *prev_ts,
					  const struct switch_out *out, __u64 now, struct repair *r)
{
	/* no task: nothing switched in here since attach; the seeding program had not run yet */
	r->left = run->task ? run_left(run, now) : now;
	if (r->left > out->left)
		r->left = out->left;
	if (run->task && r->left < run->since)
		r->left = run->since;
	r->came = prev_came(run, prev, r->left);
	if (r->came > out->left)
		r->came = out->left;
	if (prev_ts && out->from < CG_NR_STATES && r->came < out->since)
		r->came = out->since;
}

static __always_inline void switch_repair(struct cpu_run *run, struct task_struct *prev,
					  struct task_state *prev_ts, struct switch_out *out,
					  const struct repair *r, __u64 now, bool atomic)
{
	__u64 left = r->left, came = r->came;

	if (run->task) {
		__sync_fetch_and_add(&missed_switches, 1);
		slots_move(&run->slots, CG_ONCPU, CG_NR_STATES, left, atomic);
	}
	if (prev_ts) {
		/* prev came on CPU unseen: its wait up to then, as the kernel counted it */
		struct recover_args args = {
			.counted = out->from == CG_RUNQ ? came - out->since : 0,
			.believed = came - out->since,
			.now = now,
			.from = out->from,
		};

		waits_recover_of(prev, prev_ts, &args, &out->recovered);
		/*
		 * Its thread row's sleep too, less the wait recovered out of it: left out, the
		 * sleep went missing from the row (18.7 ms of an idle thread's once).
		 */
		thread_slept(prev_ts, out->from,
			     came - out->since - out->recovered.taken[out->from == CG_BLOCKED]);
		out->migrations = prev->se.nr_migrations - prev_ts->nr_migrations;
		prev_ts->nr_migrations = prev->se.nr_migrations;
		slots_move(&prev_ts->slots, out->from, CG_ONCPU, came, atomic);
		out->from = CG_ONCPU;
	}
}

/*
 * Of the time since the record's task came, how much this CPU ran no task (see
 * task_clock_untasked()), by untasked now; never more than its time on CPU, to until.
 */
static __always_inline __u64 run_stolen(const struct cpu_run *run, __u64 untasked, __u64 until)
{
	__u64 lost = untasked - run->untasked, ran = until - run->since;

	if (!run->task || !run->slots.nslots || (__s64)lost <= 0 || (__s64)ran <= 0)
		return 0;
	return lost < ran ? lost : ran;
}

struct stolen_visit {
	struct slot_visit v;
	__u64 lost;
};

static __always_inline long slot_stolen(__u32 index, void *ctx)
{
	struct stolen_visit *w = ctx;
	struct cg_slot_live *live = slot_live_of(w->v.set, index);

	if (live)
		live_shift(live, CG_STOLEN, w->lost);
	return 0;
}

/*
 * The slots this CPU's perf counts since their last read go to: the record's; or, at a switch
 * the kernel did not report (r), those of whichever ran longer since that read, the record's
 * task (to when it left) or prev (from when it came). Charging the stale record's slots once
 * sent half of a run's page faults to another cgroup. Always one per-CPU copy, so that the
 * verifier follows one kind of pointer (two cost it seconds at load).
 */
static __always_inline const struct slot_set *counted_slots(const struct cpu_run *run,
							    const struct task_state *prev_ts,
							    const struct repair *r, __u64 now)
{
	const struct cg_cpu_counters *last;
	__u64 before = 0, after = 0, from;
	struct slot_set *to;
	__u32 zero = 0;

	to = bpf_map_lookup_elem(&charge_slots, &zero);
	last = bpf_map_lookup_elem(&cpu_counters, &zero);
	if (!to || !last)
		return NULL;
	if (r) {
		if ((__s64)(r->left - last->read_at) > 0)
			before = r->left - last->read_at;
		from = r->came > last->read_at ? r->came : last->read_at;
		if ((__s64)(now - from) > 0)
			after = now - from;
	}
	if (r && after > before) {
		if (prev_ts)
			*to = prev_ts->slots;
		else
			to->nslots = 0;
	} else if (run->task) {
		*to = run->slots;
	} else {
		to->nslots = 0;
	}
	return to;
}

struct faults_visit {
	struct slot_visit v;
	__u64 min_flt;
	__u64 maj_flt;
};

static __always_inline long slot_faulted(__u32 index, void *ctx)
{
	struct faults_visit *w = ctx;
	struct cg_slot_live *live = slot_live_of(w->v.set, index);

	if (live) {
		live->count[CG_MINOR_FAULTS] += w->min_flt;
		live->count[CG_MAJOR_FAULTS] += w->maj_flt;
	}
	return 0;
}

/*
 * prev's faults go where its on-CPU time goes, to the record's slots (the cgroup it was switched
 * in to), where those are not prev's own: it moved to another cgroup while it ran.
 */
static __always_inline void faults_to_run(const struct cpu_run *run, struct switch_out *out)
{
	struct faults_visit w = { .min_flt = out->min_flt, .maj_flt = out->maj_flt };

	out->min_flt = out->maj_flt = 0;
	if (w.min_flt || w.maj_flt)
		for_each_slot(&run->slots, slot_faulted, &w);
}

/* The task's on-CPU time so far in the interval of gen: none where its time is another's. */
static __always_inline __u64 thread_had(const struct task_state *ts, __u32 gen)
{
	return ts && ts->thread_gen == gen ? ts->thread_on_ns : 0;
}

/*
 * What the record's task ran since its thread mark (its switch-in, or the last snapshot) up to
 * left, less what was stolen from it meanwhile (stolen: since its switch-in).
 */
static __always_inline __u64 thread_ran(const struct cpu_run *run, __u64 left, __u64 stolen)
{
	__u64 ran = left > run->thread_mark ? left - run->thread_mark : 0;

	stolen = stolen > run->thread_stolen ? stolen - run->thread_stolen : 0;
	return ran > stolen ? ran - stolen : 0;
}

/*
 * The same for a task whose switch-in the kernel did not report (r: the repair's bounds): its
 * time in this CPU's interval so far, and what it ran from when it came up to left.
 */
static __always_inline __u64 thread_ran_unseen(const struct cpu_run *run,
					       const struct task_state *ts, const struct repair *r,
					       __u64 left)
{
	__u64 had = thread_had(ts, run->thread_gen);
	__u64 came = r->came > run->thread_mark ? r->came : run->thread_mark;

	return had + (left > came ? left - came : 0);
}

/* Record next as the task this CPU counts on CPU, in the slots of next_ts (NULL: none). */
static __always_inline void run_record(struct cpu_run *run, struct task_struct *next,
				       const struct task_state *next_ts, __u64 now, __u64 untasked)
{
	__u64 cgid = ts_cgid(next_ts);
	__u32 gen = next_ts ? next_ts->gen : 0;

	if (!next_ts || !run->task ||
	    !slots_same(run->cgid, run->gen, run->slots.slot[0], next_ts)) {
		if (next_ts)
			run->slots = next_ts->slots;
		else
			run->slots.nslots = 0;
		run->cgid = cgid;
		run->gen = gen;
	}
	run->task = (__u64)next;
	run->pid = next->pid;
	run->runtime = next->se.sum_exec_runtime;
	run->untasked = untasked;
	run->since = now;
	run->thread_gen = READ_ONCE(thread_gen);
	run->thread_on_ns = thread_had(next_ts, run->thread_gen);
	run->thread_mark = now;
	run->thread_stolen = 0;
}

/*
 * The record's task, renamed in this stretch on CPU and resolved since to ts's slots, goes on
 * CPU there from the rename on (until: now at the latest). Not before the last snapshot that
 * found it here (thread_mark, else its switch-in): that snapshot reported its time to then in
 * the old slots, and a move back in time would count it again in the new ones (a spinner that
 * named itself and ran 0.5 s on did). The rename's time, the monotonic clock moved onto the
 * run-queue clocks by an offset sampled on some CPU, is microseconds off this one's: kept
 * within the stretch.
 */
static __always_inline void run_renamed(struct cpu_run *run, struct task_state *ts, __u64 until,
					bool atomic)
{
	__u64 at = ts->renamed_at;

	ts->renamed_at = 0;
	if ((__s64)(at - run->thread_mark) < 0)
		at = run->thread_mark;
	if ((__s64)(until - at) < 0)
		at = until;
	slots_move(&run->slots, CG_ONCPU, CG_NR_STATES, at, atomic);
	slots_move(&ts->slots, CG_NR_STATES, CG_ONCPU, at, atomic);
}

/*
 * Whether prev, which the record counts on CPU in the slots of its old pool, was renamed while
 * it ran here (renamed off CPU, it came on in its new slots): if so its old pool has it to the
 * rename (run_renamed()) and its new one since, so that its switch-out releases it there.
 */
static __always_inline bool renamed_on_cpu(struct cpu_run *run, struct task_struct *prev,
					   struct task_state *prev_ts, struct switch_out *out)
{
	if (!prev_ts || run->task != (__u64)prev || out->from != CG_NR_STATES ||
	    !prev_ts->renamed_at)
		return false;
	faults_to_run(run, out);
	run_renamed(run, prev_ts, out->left, false);
	return true;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(cg_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct task_state *prev_ts = NULL, *next_ts = NULL;
	struct switch_out *out;
	struct switch_in *in;
	struct repair repair = {};
	struct stolen_visit stolen;
	bool repaired;
	struct cpu_run *run;
	__u32 zero = 0;
	__u64 now, untasked;

	/* prev runs on this CPU, even the idle task: its rq is this CPU's */
	now = task_clock_untasked(prev, &untasked);
	run = bpf_map_lookup_elem(&cpu_runs, &zero);
	if (!run)
		return 0;
	out = &run->out;
	in = &run->in;
	*out = (struct switch_out){ .from = CG_NR_STATES, .to = CG_NR_STATES, .left = now };
	*in = (struct switch_in){ .from = CG_NR_STATES };
	clock_sync(run, now);
	/* the idle task (pid 0, one per CPU) never counts */
	if (prev->pid)
		prev_ts = switch_out_decide(prev, preempt, prev_state, now, out);
	if (next->pid)
		next_ts = switch_in_decide(next, now, in);
	/* who took the CPU: the cgroups are the tasks' own, as the slots were resolved for */
	if (prev_ts && !out->voluntary)
		out->preempted_by = next->flags & PF_KTHREAD ? CG_PREEMPTED_BY_KERNEL
				    : next_ts && next_ts->cgid == prev_ts->cgid
					    ? CG_PREEMPTED_BY_SAME
					    : CG_PREEMPTED_BY_OTHER;
	/* and which cgroup, for topPreempter */
	if (prev_ts && next_ts && out->preempted_by == CG_PREEMPTED_BY_OTHER) {
		struct preempter_visit pv = { .cgid = next_ts->cgid, .task = next };

		for_each_slot(&prev_ts->slots, slot_preempted, &pv);
	}
	/*
	 * perf counters are read only where the running cgroup changes: everything counted on
	 * this CPU since the last read belongs to the cgroup the record counted on CPU. Both
	 * cgroups are known here already, so this needs no cgroup-switches event of its own, and
	 * it follows the v2 hierarchy even where perf_event is a v1 controller. Not between two
	 * cgroups counted in no slot (outside every watched subtree): what runs there is read
	 * with the next cgroup that counts, and charged to the record's slots, none.
	 */
	repaired = run->task != (__u64)prev;
	if (repaired)
		repair_bounds(run, prev, prev_ts, out, now, &repair);
	if (nr_perf_events &&
	    (repaired || (run->cgid != ts_cgid(next_ts) &&
			  (run->slots.nslots || (next_ts && next_ts->slots.nslots)))))
		counters_charge(counted_slots(run, prev_ts, repaired ? &repair : NULL, now), now);

	if (run->task == (__u64)prev && out->left < run->since)
		out->left = run->since;
	if (prev_ts) {
		out->min_flt = prev->min_flt - prev_ts->min_flt;
		out->maj_flt = prev->maj_flt - prev_ts->maj_flt;
		prev_ts->min_flt = prev->min_flt;
		prev_ts->maj_flt = prev->maj_flt;
	}
	/*
	 * Zero unless a hypervisor stole time (or interrupts took it) while the record's task ran.
	 * A repaired record's task left at a moment only bounded: the time taken since is not
	 * known to be its, and none is moved.
	 */
	stolen.lost = run->task == (__u64)prev ? run_stolen(run, untasked, out->left) : 0;
	if (stolen.lost)
		for_each_slot(&run->slots, slot_stolen, &stolen);
	/*
	 * prev's on-CPU time in the interval: what it had at its switch-in (or the snapshot) and
	 * what it ran here since, less what was stolen meanwhile, as its slots count it. Of the
	 * interval this CPU last marked: where a snapshot has begun and not yet reached this CPU,
	 * that is still the one ending, and the time counts there. Where its switch-in went
	 * unreported, what its task_state had and the stretch the repair counts it on CPU for,
	 * from when it came (never before this CPU's mark: the snapshot took what was before).
	 */
	if (prev_ts) {
		if (repaired)
			out->thread_on_ns = thread_ran_unseen(run, prev_ts, &repair, out->left);
		else
			out->thread_on_ns =
				run->thread_on_ns + thread_ran(run, out->left, stolen.lost);
		out->task = (__u64)prev;
		out->tid = prev->pid;
		prev_ts->thread_on_ns = out->thread_on_ns;
		prev_ts->thread_gen = run->thread_gen;
	}
	if (run->task == (__u64)prev && prev_ts && next_ts && out->from == CG_NR_STATES &&
	    run_slots_are(run, prev_ts) &&
	    slots_same(prev_ts->cgid, prev_ts->gen, prev_ts->slots.slot[0], next_ts)) {
		slots_switch(&prev_ts->slots, out, in, now);
	} else {
		if (repaired)
			switch_repair(run, prev, prev_ts, out, &repair, now, false);
		else if (prev_ts && run_slots_are(run, prev_ts) && out->from == CG_NR_STATES)
			/* the record counts prev in prev's own slots: release it in prev's pass */
			out->from = CG_ONCPU;
		else if (pools && renamed_on_cpu(run, prev, prev_ts, out))
			/* its old pool had it to the rename, the new one since: its pass ends it */
			out->from = CG_ONCPU;
		else if (run->task) {
			slots_move(&run->slots, CG_ONCPU, CG_NR_STATES, out->left, false);
			faults_to_run(run, out);
		}
		if (prev_ts)
			slots_switch(&prev_ts->slots, out, NULL, now);
		if (next_ts)
			slots_switch(&next_ts->slots, NULL, in, now);
	}
	run_record(run, next, next_ts, now, untasked);
	return 0;
}

static __always_inline void wake_up(struct task_struct *p)
{
	/* p's rq, whose clock the wakeup updated just before enqueueing it */
	__u64 now = task_clock(p);
	struct task_state *ts;
	__u32 from;

	/* a task seen the first time: where its storage cannot be made, its switch-in recovers */
	ts = task_state_get(p, now, false, true);
	if (!ts)
		return;
	if (ts->state == TS_UNTRACKED) {
		task_track(p, ts, CG_RUNQ, now, false);
		return;
	}
	from = ts_state(ts);
	/*
	 * A wakeup of a task that had not yet switched out finds it on CPU: nothing moves. (So
	 * does one of a task whose switch-out the kernel did not report: its next switch-in
	 * counts it again.)
	 */
	if (from != CG_SLEEP && from != CG_BLOCKED)
		return;
	thread_woke(ts, from, now);
	slots_move(&ts->slots, from, CG_RUNQ, now, false);
	ts->state = CG_RUNQ + 1;
	ts->since = now;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(cg_sched_wakeup, struct task_struct *p)
{
	wake_up(p);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(cg_sched_wakeup_new, struct task_struct *p)
{
	wake_up(p);
	return 0;
}

/* A removed cgroup's slot is freed by the loader once no task counts in it. */
/*
 * A renamed thread (prctl(PR_SET_NAME), a write to /proc/TID/comm, exec) may be of another pool:
 * its next event resolves its slots again, under the new name (the tracepoint comes just before
 * the name changes), and where it ran on meanwhile its switch-out gives the new pool the time
 * since the rename (renamed_on_cpu()). A thread names itself as it starts and may then run for
 * tens of milliseconds before its first switch. Loaded with --threads only.
 */
SEC("tp_btf/task_rename")
int BPF_PROG(cg_task_rename, struct task_struct *task, const char *comm)
{
	struct task_state *ts = bpf_task_storage_get(&task_states, task, NULL, 0);

	if (ts) {
		ts->renamed_at = clock_now(task);
		ts->gen = ~READ_ONCE(watch_gen);
	}
	return 0;
}

SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(cg_cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	struct task_struct *self = bpf_get_current_task_btf();
	struct cg_slot_info *info;
	__u64 cgid;
	__u32 *slot;

	/* v1 hierarchies have their own id spaces: only the default (v2) one counts */
	if (cgrp->root != self->cgroups->dfl_cgrp->root)
		return 0;
	cgid = cgrp->kn->id;
	slot = bpf_map_lookup_elem(&cgroup_slots, &cgid);
	if (!slot)
		return 0;
	info = bpf_map_lookup_elem(&slot_info, slot);
	if (info)
		info->dead = 1;
	return 0;
}

/*
 * Seed what each CPU runs at start: run on each CPU in turn by the loader (BPF_PROG_TEST_RUN
 * with BPF_F_TEST_RUN_ON_CPU), after the tracepoints are attached and before the iterator.
 * Where no switch has happened here since attach, current has been running since before it:
 * this CPU's record takes it on CPU. On an IPI interrupts are off, and on the loader's own CPU
 * preemption is: no switch here can interleave with the record, but wakeups elsewhere can with
 * the slots, hence the atomics.
 */
SEC("raw_tp")
int cg_seed_cpu(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *current = bpf_get_current_task_btf();
	struct task_state *ts = NULL;
	struct cpu_run *run;
	__u32 zero = 0, from;
	__u64 now, untasked;

	run = bpf_map_lookup_elem(&cpu_runs, &zero);
	if (!run || run->task)
		return 0;
	now = task_clock_untasked(current, &untasked);
	__sync_val_compare_and_swap(&tracking_since, 0, now);
	if (current->pid) {
		ts = task_state_get(current, now, true, false);
		if (ts) {
			from = task_claim(ts, CG_ONCPU + 1);
			if (from < CG_NR_STATES && from != CG_ONCPU)
				slots_move(&ts->slots, from, CG_NR_STATES, now, true);
			if (from >= CG_NR_STATES)
				ts->nvcsw = current->nvcsw;
			ts->state = CG_ONCPU + 1;
			ts->since = now;
			slots_move(&ts->slots, CG_NR_STATES, CG_ONCPU, now, true);
		}
	}
	run_record(run, current, ts, now, untasked);
	return 0;
}

/*
 * Seed every task that exists at start and is off CPU, so that tasks sleeping since before
 * cgstat count from the first interval. What runs is cg_seed_cpu()'s, or its switch's: only a
 * CPU may count a task on CPU. Runs once, preemptible: atomics.
 */
SEC("iter/task")
int cg_seed_tasks(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct task_state *ts;
	__u64 now;
	__u32 run_state, state;

	if (!t || !t->pid || t->exit_state)
		return 0;
	run_state = task_run_state(t);
	if (run_state & TASK_DEAD)
		return 0;
	/* maybe a stale clock, but its own domain: a seed's time cancels out of every interval */
	now = task_clock(t);
	if (task_on_cpu(t))
		return 0;
	ts = task_state_get(t, now, true, false);
	if (!ts || ts->state != TS_UNTRACKED)
		return 0;
	if (run_state == TASK_RUNNING)
		state = CG_RUNQ;
	else if (state_blocked(run_state))
		state = CG_BLOCKED;
	else
		state = CG_SLEEP;
	task_track(t, ts, state, now, true);
	return 0;
}

/*
 * A task is freed, an RCU grace period after its exit: where its last switch was not reported
 * (missedSwitches), its entry of the thread table is marked here, so that user space still
 * reads its last figures and gives the entry back. Loaded with --threads only.
 */
SEC("tp_btf/sched_process_free")
int BPF_PROG(cg_thread_freed, struct task_struct *t)
{
	struct task_state *ts = bpf_task_storage_get(&task_states, t, NULL, 0);
	struct cg_thread_entry *e = ts ? thread_entry_of(ts) : NULL;

	/* the entry is another thread's once user space gave it back */
	if (!e || READ_ONCE(e->seq) != ts->thread_seq || READ_ONCE(e->exited))
		return 0;
	thread_entry_figures(e, t);
	e->state = CG_NR_STATES;
	__sync_lock_test_and_set(&e->exited, 1);
	return 0;
}

struct snapshot_ctx {
	__u64 now;
	__u64 cpu; /* whose slots: CG_THIS_CPU, or an offline CPU's */
	bool first;
	__u32 gen; /* which snapshot: thread_gen, moved on by its first CPU */
	/* this CPU's on-CPU counts over its slots, and whether one was neither 0 nor 1 */
	__s64 oncpu;
	bool oncpu_bad;
	/* of the task on this CPU now, the time stolen since it came: moved as its switch will */
	__u64 open_stolen;
};

/*
 * The slot's busiest thread over CPUs so far, with its name while it is still the thread that
 * was seen (its pid read back through the address first: it may have exited); this CPU's reset.
 */
static __always_inline void snapshot_busiest(struct cg_slot_live *live, struct cg_slot_snap *snap,
					     bool first)
{
	struct task_struct *task = (struct task_struct *)live->busiest_task;
	int pid = 0;

	if (first || live->busiest_ns > snap->busiest_ns) {
		snap->busiest_ns = live->busiest_ns;
		snap->busiest_tid = live->busiest_tid;
		snap->busiest_comm[0] = '\0';
		if (live->busiest_ns) {
			bpf_core_read(&pid, sizeof(pid), &task->pid);
			if (pid == (int)live->busiest_tid)
				bpf_core_read(snap->busiest_comm, sizeof(snap->busiest_comm),
					      &task->comm);
		}
	}
	live->busiest_ns = 0;
}

/*
 * Copy one slot of this CPU into the summed snapshot. On an IPI this cannot interleave with
 * the tracepoints on this CPU (interrupts are off); when BPF_PROG_TEST_RUN runs on the caller's
 * own CPU only preemption is off, and a wakeup from an interrupt may land mid-copy: the fields
 * that wakeups write are copied under seq and read again if it moved.
 */
static long snapshot_slot(__u32 index, struct snapshot_ctx *c)
{
	__u64 time_ns[CG_NR_STATES], count[CG_NR_COUNTS], seq;
	struct cg_slot_live *live;
	struct cg_slot_info *info;
	struct cg_slot_snap *snap;
	__s64 tasks;
	int s, k, try, b, e;
	bool first;

	live = c->cpu == CG_THIS_CPU ? bpf_map_lookup_elem(&slot_live, &index)
				     : bpf_map_lookup_percpu_elem(&slot_live, &index, c->cpu);
	info = bpf_map_lookup_elem(&slot_info, &index);
	snap = bpf_map_lookup_elem(&slot_snap, &index);
	if (!live || !info || !snap)
		return 1;
	for (try = 0; try < 8; try++) {
		seq = READ_ONCE(live->seq);
		tasks = 0;
		for (s = 0; s < CG_NR_STATES; s++) {
			time_ns[s] = live->base[s] + live->in_state[s] * c->now;
			tasks += live->in_state[s];
		}
		for (k = 0; k < CG_NR_COUNTS; k++)
			count[k] = live->count[k];
		if (READ_ONCE(live->seq) == seq)
			break;
	}
	/*
	 * Only this CPU's switches move its on-CPU counts, and none runs now. Its count (0 or 1)
	 * says whether the task stolen from is in this slot; multiplied, not branched on, which
	 * would double the states the verifier walks the histogram below in.
	 */
	time_ns[CG_ONCPU] -= live->in_state[CG_ONCPU] * c->open_stolen;
	time_ns[CG_STOLEN] += live->in_state[CG_ONCPU] * c->open_stolen;
	c->oncpu += live->in_state[CG_ONCPU];
	if (live->in_state[CG_ONCPU] != 0 && live->in_state[CG_ONCPU] != 1)
		c->oncpu_bad = true;
	first = snap->snapshot_gen != c->gen;
	if (first) {
		snap->snapshot_gen = c->gen;
		/*
		 * A new cgroup in the slot: its histogram starts empty. (The barrier keeps clang
		 * from making the loop a memset, which BPF does not have for this size.)
		 */
		if (snap->cgid != info->cgid) {
			for (b = 0; b < CG_HIST_BUCKETS; b++) {
				snap->runq_hist[b] = 0;
				barrier_var(b);
			}
		}
		snap->cgid = info->cgid;
		snap->dead = info->dead;
		snap->pool_of = info->pool_of;
		__builtin_memcpy(snap->pool, info->pool, sizeof(snap->pool));
		for (s = 0; s < CG_NR_STATES; s++)
			snap->time_ns[s] = time_ns[s];
		snap->tasks = tasks;
		for (k = 0; k < CG_NR_COUNTS; k++)
			snap->count[k] = count[k];
		snap->runq_max_ns = live->runq_max_ns;
		snap->runq_min_inv = live->runq_min_inv;
		for (e = 0; e < CG_MAX_EVENTS; e++) {
			snap->counter[e] = live->counter[e];
			snap->enabled[e] = live->enabled[e];
			snap->running[e] = live->running[e];
		}
	} else {
		for (s = 0; s < CG_NR_STATES; s++)
			snap->time_ns[s] += time_ns[s];
		snap->tasks += tasks;
		for (k = 0; k < CG_NR_COUNTS; k++)
			snap->count[k] += count[k];
		if (live->runq_max_ns > snap->runq_max_ns)
			snap->runq_max_ns = live->runq_max_ns;
		if (live->runq_min_inv > snap->runq_min_inv)
			snap->runq_min_inv = live->runq_min_inv;
		for (e = 0; e < CG_MAX_EVENTS; e++) {
			snap->counter[e] += live->counter[e];
			snap->enabled[e] += live->enabled[e];
			snap->running[e] += live->running[e];
		}
	}
	/*
	 * The histogram is most of a slot (305 buckets), and a CPU where the cgroup had no wait
	 * since the last snapshot has nothing to add: its waits are moved into the slot's
	 * cumulative histogram instead of copied, so such a CPU is skipped. No switch (the only
	 * writer of the histogram) can run on this CPU meanwhile.
	 */
	if (live->count[CG_RUNQ_WAITS] != live->runq_waits_snapped) {
		for (b = 0; b < CG_HIST_BUCKETS; b++) {
			snap->runq_hist[b] += live->runq_hist[b];
			live->runq_hist[b] = 0;
		}
		live->runq_waits_snapped = live->count[CG_RUNQ_WAITS];
	}
	live->runq_max_ns = 0;
	live->runq_min_inv = 0;
	snapshot_busiest(live, snap, first);
	return 0;
}

/*
 * A snapshot that finds this CPU in its idle task while the record holds a task: the kernel
 * did not report that task's switch-out (see switch_repair()), and the CPU has idled since.
 * Left to this CPU's next switch, which on an idle VM can be a second away, the task would
 * count on CPU meanwhile, in the interval that ends now, and be taken back in the next, where
 * a drop below the last reading counts as none (docs/metrics.md, "How time is attributed").
 * So the snapshot takes it off as that switch would, and records the idle task instead.
 * Interrupts (or, on the loader's own CPU, preemption) are off: no switch here interleaves.
 */
static __always_inline void run_idle_repair(struct cpu_run *run, struct task_struct *current,
					    __u64 now, __u64 untasked)
{
	__u64 left;

	if (current->pid || !run->task || run->task == (__u64)current)
		return;
	left = run_left(run, now);
	__sync_fetch_and_add(&missed_switches, 1);
	slots_move(&run->slots, CG_ONCPU, CG_NR_STATES, left, true);
	run_record(run, current, NULL, now, untasked);
}

/*
 * The waits a snapshot's repair recovered for the task it found on CPU, and its migrations: what
 * slot_switch() applies at a switch-out, with no switch to count. Atomics, as the snapshot's
 * other moves.
 */
static __always_inline long slot_recovered(__u32 index, void *ctx)
{
	struct switch_visit *w = ctx;
	struct cg_slot_live *live = slot_live_of(w->v.set, index);
	const struct waits_recovered *r = &w->out->recovered;

	if (!live)
		return 0;
	__sync_fetch_and_sub(&live->base[CG_SLEEP], r->taken[0]);
	__sync_fetch_and_sub(&live->base[CG_BLOCKED], r->taken[1]);
	__sync_fetch_and_add(&live->base[CG_RUNQ], r->taken[0] + r->taken[1] + r->added);
	__sync_fetch_and_add(&live->count[CG_RUNQ_WAITS], r->waits);
	__sync_fetch_and_add(&live->count[CG_MIGRATIONS], w->out->migrations);
	__sync_fetch_and_add(&live->seq, 1);
	return 0;
}

/*
 * A snapshot that finds on this CPU a task the record does not hold: the kernel reported neither
 * the record's task leaving nor current coming (a hypervisor agent's thread ran between them:
 * switch_repair()). Left to current's switch-out, current would count in the state cgstat last
 * saw it in until then: a spinner that the agent preempted, on the run queue through the
 * interval that ends now, its run coming back as on-CPU time in the next (94 ms of run-queue
 * time in one interval, 594 ms on CPU in the next 500 ms one). So the snapshot repairs it as
 * that switch-out would, and records current on CPU from when it came, in the ending interval's
 * busiest thread too. Not where current's state is not to be had here (its storage busy, or
 * never made, or changed by a wakeup elsewhere at this moment): its switch-out repairs then.
 * Not inlined: its stack is then its own, not cg_snapshot()'s, which with task_move_cgroup()'s
 * below it came to 544 bytes on the verifier of 6.1, past BPF's 512.
 */
static __noinline void run_task_repair(struct cpu_run *run, struct task_struct *current, __u64 now,
				       __u64 untasked)
{
	struct switch_out *out = &run->out;
	struct switch_visit w = { .out = out };
	struct repair r = {};
	struct task_state *ts;
	__u32 old, from, gen;

	if (!current->pid || run->task == (__u64)current)
		return;
	ts = bpf_task_storage_get(&task_states, current, NULL, 0);
	if (!ts)
		return;
	old = READ_ONCE(ts->state);
	if (old == TS_UNTRACKED || old > CG_NR_STATES ||
	    __sync_val_compare_and_swap(&ts->state, old, CG_ONCPU + 1) != old)
		return;
	from = old - 1;
	*out = (struct switch_out){
		.from = from == CG_ONCPU ? CG_NR_STATES : from,
		.to = CG_ONCPU,
		.since = ts->since,
		.left = now,
	};
	repair_bounds(run, current, ts, out, now, &r);
	if (nr_perf_events)
		counters_charge(counted_slots(run, ts, &r, now), now);
	switch_repair(run, current, ts, out, &r, now, true);
	for_each_slot(&ts->slots, slot_recovered, &w);
	ts->since = r.came;
	gen = run->thread_gen;
	run_record(run, current, ts, now, untasked);
	run->thread_gen = gen;
	run->thread_on_ns = thread_had(ts, gen);
	run->thread_mark = r.came;
}

/*
 * The faults of the task on this CPU so far belong to this interval, as its on-CPU time does:
 * charged to its slots, and its baseline moved on. A task that runs for seconds without a
 * switch would otherwise show its faults in a later interval. Its task storage may be busy here
 * (the snapshot interrupts whatever runs): then they wait for its switch-out.
 */
static __always_inline void faults_charge(struct task_struct *current)
{
	struct faults_visit w;
	struct task_state *ts;

	if (!current->pid)
		return;
	ts = bpf_task_storage_get(&task_states, current, NULL, 0);
	if (!ts || !ts->cgid)
		return;
	w.min_flt = current->min_flt - ts->min_flt;
	w.maj_flt = current->maj_flt - ts->maj_flt;
	if (!w.min_flt && !w.maj_flt)
		return;
	ts->min_flt += w.min_flt;
	ts->maj_flt += w.maj_flt;
	for_each_slot(&ts->slots, slot_faulted, &w);
}

struct busiest_visit {
	struct slot_visit v;
	__u64 thread_on_ns;
	__u64 task;
	__u32 tid;
};

static __always_inline long slot_busiest(__u32 index, void *ctx)
{
	struct busiest_visit *b = ctx;
	struct cg_slot_live *live = slot_live_of(b->v.set, index);

	if (live)
		live_busiest(live, b->thread_on_ns, b->task, b->tid);
	return 0;
}

/*
 * The task on this CPU ran in the interval that ends now up to now: a candidate for its slots'
 * busiest thread, which a lone spinning thread that never switches out would otherwise never
 * be. From now on it counts in the next interval.
 */
/*
 * A task renamed while it runs here, found by a snapshot: it counts in its new pool from the
 * rename on, in this interval already (a spinner that names itself as it starts may run for
 * seconds before its first switch). Resolved here as its next event would.
 */
static __always_inline void snapshot_renamed(struct cpu_run *run, struct task_struct *current,
					     __u64 now)
{
	struct task_state *ts;

	if (!pools || !current->pid || run->task != (__u64)current)
		return;
	ts = bpf_task_storage_get(&task_states, current, NULL, 0);
	if (!ts || !ts->renamed_at)
		return;
	ts = task_state_get(current, now, true, true);
	if (!ts || !ts->renamed_at || run_slots_are(run, ts))
		return;
	run_renamed(run, ts, now, true);
	run->slots = ts->slots;
	run->cgid = ts->cgid;
	run->gen = ts->gen;
}

static __always_inline void thread_snapshot(struct cpu_run *run, struct task_struct *current,
					    __u64 now, __u64 stolen)
{
	struct busiest_visit b;

	if (!current->pid || run->task != (__u64)current)
		return;
	/* a thread that runs through the interval has its figures to now in its entry */
	if (pools) {
		struct task_state *ts = bpf_task_storage_get(&task_states, current, NULL, 0);
		struct cg_thread_entry *e = ts ? thread_entry_of(ts) : NULL;

		if (e) {
			thread_entry_figures(e, current);
			e->state = CG_ONCPU;
		}
	}
	b.thread_on_ns = run->thread_on_ns + thread_ran(run, now, stolen);
	b.task = run->task;
	b.tid = current->pid;
	for_each_slot(&run->slots, slot_busiest, &b);
	run->thread_gen = READ_ONCE(thread_gen);
	run->thread_on_ns = 0;
	run->thread_mark = now;
	run->thread_stolen = stolen;
}

/* Run on each CPU in turn by the loader (BPF_PROG_TEST_RUN with BPF_F_TEST_RUN_ON_CPU). */
SEC("raw_tp")
int cg_snapshot(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *current = bpf_get_current_task_btf();
	struct snapshot_ctx c = {
		.first = ctx->args[0],
		.cpu = ctx->args[1],
	};
	struct cpu_run *run;
	__u64 untasked = 0;
	__u32 zero = 0;

	if (c.first)
		snapshot_now = clock_now(current);
	c.now = snapshot_now;

	run = bpf_map_lookup_elem(&cpu_runs, &zero);
	if (run && c.cpu == CG_THIS_CPU) {
		task_clock_untasked(current, &untasked);
		run_task_repair(run, current, c.now, untasked);
	}
	/*
	 * The counts of the cgroup running on this CPU now belong to this interval; but where the
	 * record is not the task on CPU (a switch the kernel did not report brought it), whose
	 * they are is known only at its switch-out (see counted_slots()).
	 */
	if (nr_perf_events && run && c.cpu == CG_THIS_CPU &&
	    (run->task == (__u64)current || !current->pid))
		counters_charge(counted_slots(run, NULL, NULL, c.now), c.now);
	if (c.first)
		__sync_fetch_and_add(&thread_gen, 1);
	c.gen = READ_ONCE(thread_gen);
	if (run && c.cpu == CG_THIS_CPU) {
		faults_charge(current);
		run_idle_repair(run, current, c.now, untasked);
		c.open_stolen = run_stolen(run, untasked, c.now);
		snapshot_renamed(run, current, c.now);
		thread_snapshot(run, current, c.now, c.open_stolen);
	}

	bpf_loop(slot_hwm, snapshot_slot, &c, 0);
	/*
	 * The invariant the records keep: per CPU, one task on CPU at most, so one slot at most
	 * where each task has one (every cgroup's own); a watched task counts in each watched
	 * ancestor. Checked, never assumed.
	 */
	if (c.oncpu_bad || (all_cgroups && c.oncpu > 1))
		__sync_fetch_and_add(&oncpu_violations, 1);
	return 0;
}
