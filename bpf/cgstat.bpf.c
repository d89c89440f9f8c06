// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Per-cgroup scheduler accounting. Every task is in one state (on CPU, run queue, sleeping,
 * blocked) from the moment it is first seen; each transition moves it between the per-CPU
 * counters of the cgroup slots it counts in (its own cgroup in the all-cgroups mode, its
 * watched ancestors otherwise). The hot path is sched_switch: keep it to task-storage lookups,
 * direct BTF loads and per-CPU array stores.
 *
 * This file holds the programs (SEC) alone; what they share is in rooms by concern, the
 * .bpf.h files below, included in order into this one compilation unit. One unit because the
 * hot path's helpers are __always_inline, and the verifier checks each program with all it
 * inlines: objects built apart and linked (bpftool gen object) would call their helpers as
 * global functions, each verified alone against its declared arguments, with a call and the
 * checks of pointers the verifier can no longer see through on every switch.
 */
#include "task.bpf.h"
#include "maps.bpf.h"
#include "clock.bpf.h"
#include "slots.bpf.h"
#include "threads.bpf.h"
#include "switch.bpf.h"
#include "repair.bpf.h"
#include "snapshot.bpf.h"
#include "wakes.bpf.h"
#include "light.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

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
 * its next event resolves its slots again, under the new name, kept here from the tracepoint
 * (which comes before the kernel writes it), and where it ran on meanwhile its switch-out gives the
 * new pool the time since the rename (renamed_on_cpu()). A thread names itself as it starts and may
 * then run for tens of milliseconds before its first switch. Loaded with --threads only.
 */
SEC("tp_btf/task_rename")
int BPF_PROG(cg_task_rename, struct task_struct *task, const char *comm)
{
	struct task_state *ts = bpf_task_storage_get(&task_states, task, NULL, 0);

	if (ts) {
		/* the new name first, the gen that sends the task to a resolve last */
		__builtin_memset(ts->comm, 0, sizeof(ts->comm));
		bpf_probe_read_kernel_str(ts->comm, sizeof(ts->comm), comm);
		WRITE_ONCE(ts->comm_renamed, 1);
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

/*
 * The wake graph (wakes.bpf.h): a thread being woken, where its waker is current (a wakeup
 * queued to another CPU reaches sched_wakeup there, in an interrupt); and the timers' callbacks,
 * whose wakeups have the timer for source. Loaded with --threads only.
 */
SEC("tp_btf/sched_waking")
int BPF_PROG(cg_sched_waking, struct task_struct *p)
{
	wake_count(p);
	return 0;
}

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(cg_hrtimer_entry)
{
	irq_depth_move(CG_DEPTH_TIMER, true);
	return 0;
}

SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(cg_hrtimer_exit)
{
	irq_depth_move(CG_DEPTH_TIMER, false);
	return 0;
}

SEC("tp_btf/timer_expire_entry")
int BPF_PROG(cg_timer_entry)
{
	irq_depth_move(CG_DEPTH_TIMER, true);
	return 0;
}

SEC("tp_btf/timer_expire_exit")
int BPF_PROG(cg_timer_exit)
{
	irq_depth_move(CG_DEPTH_TIMER, false);
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(cg_irq_entry)
{
	irq_depth_move(CG_DEPTH_INTERRUPT, true);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(cg_irq_exit)
{
	irq_depth_move(CG_DEPTH_INTERRUPT, false);
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(cg_softirq_entry)
{
	irq_depth_move(CG_DEPTH_INTERRUPT, true);
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(cg_softirq_exit)
{
	irq_depth_move(CG_DEPTH_INTERRUPT, false);
	return 0;
}

/*
 * --light (light.bpf.h): every task's growth since its last sweep, charged to its slots, run
 * by the loader just before each snapshot, by cg_light_walk where the kernel has the open-coded
 * task iterator and by cg_light_sweep where it has not. A task whose storage the kernel refuses
 * now is charged at a later sweep or its exit; a task outside every watched subtree keeps its
 * figures current, so that a move in counts from its last sweep.
 */
static __always_inline void light_sweep_begin(__u64 now)
{
	light_born_after = light_sweep_at ? light_sweep_at : now;
	light_sweep_at = now;
}

/* t, never an idle task: the task iterator has none, and the walk skips init_task, its first */
static __always_inline void light_sweep_task(struct task_struct *t)
{
	struct light_visit f = {};
	struct task_state *ts;
	__u64 now = bpf_ktime_get_ns();

	ts = task_state_get(t, now, true, true);
	if (ts && light_take_locked(t, ts, now, false, &f))
		light_pend(ts, &f);
}

/* The sweep as a task iterator (any kernel cgstat loads on): a program run a task. */
SEC("iter/task")
int cg_light_sweep(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;

	if (ctx->meta->seq_num == 0 && t)
		light_sweep_begin(bpf_ktime_get_ns());
	/* the end of the sweep: what is pending goes in before the snapshot */
	if (!t)
		return light_flush();
	light_sweep_task(t);
	return 0;
}

#ifdef CGSTAT_TASK_WALK
/*
 * The sweep in one run (BPF_PROG_TEST_RUN): the kernel's open-coded task iterator walks the
 * task list under RCU, where the task iterator above looks each task up by pid, takes and drops
 * a reference and calls the program through seq_file (docs/performance.md, "--light"). Built
 * into cgstat_walk.bpf.o alone (CMakeLists.txt), which the loader opens on cgstat's maps where
 * the kernel has the kfuncs: their externs, weak or not, make libbpf 1.1 search the modules'
 * BTF for them where vmlinux lacks them, which takes CAP_SYS_ADMIN on Linux 6.1.
 */
SEC("syscall")
int cg_light_walk(void *ctx)
{
	struct bpf_iter_task it;
	struct task_struct *t;

	light_sweep_begin(bpf_ktime_get_ns());
	bpf_rcu_read_lock();
	bpf_iter_task_new(&it, NULL, BPF_TASK_ITER_ALL_THREADS);
	/* the first is init_task, CPU 0's idle task: skipped, no cache line read for its pid */
	bpf_iter_task_next(&it);
	while ((t = bpf_iter_task_next(&it)))
		light_sweep_task(t);
	bpf_iter_task_destroy(&it);
	bpf_rcu_read_unlock();
	return light_flush();
}
#endif /* CGSTAT_TASK_WALK */

/*
 * --light: a task exits. Its growth to here is charged and its alive time ends; what it runs
 * after this (microseconds, to its last switch) its free charges.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(cg_light_exit, struct task_struct *p)
{
	__u64 now = bpf_ktime_get_ns();
	struct task_state *ts;

	if (!p->pid)
		return 0;
	ts = task_state_get(p, now, true, false);
	if (ts)
		light_charge(p, ts, now);
	return 0;
}

/*
 * --light: a task is freed, an RCU grace period after its exit: its figures are final. Where its
 * exit found it held by a sweep, its alive time ends here, late by that grace period.
 */
SEC("tp_btf/sched_process_free")
int BPF_PROG(cg_light_freed, struct task_struct *p)
{
	struct task_state *ts = bpf_task_storage_get(&task_states, p, NULL, 0);

	if (ts && ts->state != TS_UNTRACKED)
		light_charge(p, ts, bpf_ktime_get_ns());
	return 0;
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

	/* --light: the sweep's clock; no switch samples the offset of the run-queue clock */
	if (c.first)
		snapshot_now = light ? bpf_ktime_get_ns() : clock_now(current);
	c.now = snapshot_now;

	/* --light: no CPU record; the sweep has charged every task already */
	run = light ? NULL : bpf_map_lookup_elem(&cpu_runs, &zero);
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
