/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A task's storage made at first sight, and the decisions of a switch: what prev leaves for
 * and what next comes from, the waits no tracepoint showed, and the counting into the slots.
 *
 * One room of cgstat.bpf.c, which includes the rooms in order as one compilation unit (it says
 * why); each room uses only those before it.
 */
#ifndef CGSTAT_SWITCH_BPF_H
#define CGSTAT_SWITCH_BPF_H

#include "threads.bpf.h"

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
	/*
	 * The name a rename gives, not t->comm: the kernel writes that after the rename's
	 * tracepoint, and an event in between (a snapshot's IPI on the renaming thread) would
	 * resolve it under its old name for good (CI run 54: a pipeline stage's wakeups all went
	 * to the edges of its pool before it named itself)
	 */
	if (READ_ONCE(ts->comm_renamed))
		ts->comm_renamed = 0;
	else
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
static __always_inline __u64 last_charged_at(struct task_struct *prev, __u64 now)
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
	out->left = last_charged_at(prev, now);
	ts->state = to < CG_NR_STATES ? to + 1 : TS_UNTRACKED;
	ts->since = out->left;
	out->to = ts_state_or_none(ts);
	thread_entry_out(prev, ts, to);
	return ts;
}

/*
 * The waits of a task that no tracepoint showed cgstat, from the scheduler's own accounting
 * (sched_info, on the run-queue clock cgstat uses). Some hosts fire no tracepoint while a
 * hypervisor agent's thread is current (docs/reliability.md, "Incidents"): its switch-outs and
 * the wakeups made then (a timer that fires) reach no tracer. So a task comes on CPU from what
 * cgstat believes is a sleep (woken unseen), or while it still believes it on CPU (its switch-out
 * was not reported: the CPU's record let it go, and it counted in no state since), or it comes on
 * CPU unseen and is found at its switch-out by a repair, which counts it on CPU only from its last
 * arrival. sched_info counted every such wait: run_delay grows at each switch-in by the time since
 * the task was queued (last_queued, cleared just after the sched_switch tracepoint), and pcount
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
	live->count[CG_RUNQ_MEASURED_NS] += in->wait;
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

#endif /* CGSTAT_SWITCH_BPF_H */
