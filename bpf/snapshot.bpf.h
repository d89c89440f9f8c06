/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The snapshot the drain runs on each CPU: each slot's figures, and the repairs of the task
 * on CPU and of an idle CPU before they are taken.
 *
 * One room of cgstat.bpf.c, which includes the rooms in order as one compilation unit (it says
 * why); each room uses only those before it.
 */
#ifndef CGSTAT_SNAPSHOT_BPF_H
#define CGSTAT_SNAPSHOT_BPF_H

#include "repair.bpf.h"

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
		snap->pools_full = info->pools_full;
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
	left = record_task_left_at(run, now);
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

#endif /* CGSTAT_SNAPSHOT_BPF_H */
