/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A CPU's record against the switch the kernel reports: the repair of a switch it did not
 * report, stolen time, faults, and the busiest thread's time.
 *
 * One room of cgstat.bpf.c, which includes the rooms in order as one compilation unit (it says
 * why); each room uses only those before it.
 */
#ifndef CGSTAT_REPAIR_BPF_H
#define CGSTAT_REPAIR_BPF_H

#include "switch.bpf.h"

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
static __always_inline __u64 record_task_left_at(const struct cpu_run *run, __u64 now)
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
static __always_inline __u64 prev_arrived_at(const struct cpu_run *run, struct task_struct *prev,
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
	r->left = run->task ? record_task_left_at(run, now) : now;
	if (r->left > out->left)
		r->left = out->left;
	if (run->task && r->left < run->since)
		r->left = run->since;
	r->came = prev_arrived_at(run, prev, r->left);
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

#endif /* CGSTAT_REPAIR_BPF_H */
