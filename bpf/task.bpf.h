/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What cgstat keeps of each task and each CPU: the task states as the kernel encodes them, the
 * slots a task counts in, its storage (struct task_state), and what a switch-out, a switch-in
 * and a CPU's record carry.
 *
 * One room of cgstat.bpf.c, which includes the rooms in order as one compilation unit (it says
 * why); each room uses only those before it.
 */
#ifndef CGSTAT_TASK_BPF_H
#define CGSTAT_TASK_BPF_H

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

#define READ_ONCE(x)	 (*(volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))

/* ts->state: 0 until the task is tracked, then its enum cg_state + 1. */
#define TS_UNTRACKED 0

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
	 * stretches on CPU the kernel reported or not (a per-CPU baseline would go stale at each
	 * switch-in the kernel does not report: docs/reliability.md, "Incidents").
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
	/* with pools: comm holds the name a rename gives it, which its next resolve takes */
	__u32 comm_renamed;
	/*
	 * --light: who charges it now: 1 while a sweep, its exit or its free does. Here, in what
	 * was padding, so that with light_exec and nivcsw below it shares their cache line (the
	 * storage's data is cache-line aligned, 8 bytes in): a sweep reads three lines of the
	 * state, not four.
	 */
	__u32 light_busy;
	/*
	 * with pools: its last waker's slot (high half) and their edge's index + 1 (low half),
	 * one store; 0 whenever its own slots are resolved again (task_move_cgroup())
	 */
	__u64 wake_cache;
	/* with pools: its entry of the thread table (index + 1; 0: none), and the entry's seq */
	__u32 thread_entry;
	__u32 thread_seq;
	/*
	 * --light (light.bpf.h): its se.sum_exec_runtime and nivcsw as its last charge took them
	 * in (with run_delay, pcount, nvcsw, nr_migrations and the faults above)
	 */
	__u64 light_exec;
	__u64 nivcsw;
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
	__u64 left;  /* when it stopped running, as the scheduler charged it: last_charged_at() */
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

#endif /* CGSTAT_TASK_BPF_H */
