/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --light: nothing runs on a switch, a wakeup or a migration. Each interval the loader runs a
 * task iterator (cg_light_sweep) just before the snapshot, which charges every task's growth
 * since its last sweep of the kernel's own per-task figures (se.sum_exec_runtime,
 * sched_info.run_delay and pcount, nvcsw, nivcsw, se.nr_migrations, min_flt, maj_flt) to the
 * slots it counts in; a task's exit charges its last stretch (cg_light_exit), and its free the
 * few microseconds it ran after that (cg_light_freed).
 *
 * The slots keep their meaning: a task alive is counted in CG_SLEEP from its birth (or first
 * sight), and each sweep moves what it ran and waited out of CG_SLEEP, so per slot on-CPU,
 * run-queue and "sleep" add up to the tasks' alive time, and "sleep" is all their off-CPU time,
 * sleeping and blocked alike (the kernel keeps no per-task split without schedstats). A task
 * that moved to another cgroup since its last sweep is charged to the new one for all of that
 * stretch (task_move_cgroup() moves its alive time at the sweep): at most one interval of its
 * figures in the wrong cgroup.
 *
 * One room of cgstat.bpf.c, which includes the rooms in order as one compilation unit (it says
 * why); each room uses only those before it.
 */
#ifndef CGSTAT_LIGHT_BPF_H
#define CGSTAT_LIGHT_BPF_H

#include "switch.bpf.h"

#ifdef CGSTAT_TASK_WALK
/*
 * The open-coded task iterator ("bpf: Introduce task open coded iterator kfuncs", Linux 6.7)
 * and the RCU read lock kfuncs (Linux 6.2) that cg_light_walk needs (cgstat_walk.bpf.o only).
 */
extern int bpf_iter_task_new(struct bpf_iter_task *it, struct task_struct *task,
			     unsigned int flags) __weak __ksym;
extern struct task_struct *bpf_iter_task_next(struct bpf_iter_task *it) __weak __ksym;
extern void bpf_iter_task_destroy(struct bpf_iter_task *it) __weak __ksym;
extern void bpf_rcu_read_lock(void) __weak __ksym;
extern void bpf_rcu_read_unlock(void) __weak __ksym;
#endif

/* ts->state of a task whose exit ended its alive time: only its last growth is charged since */
#define TS_LIGHT_ENDED (CG_NR_STATES + 1)

/* What a task did since its figures were last charged. */
struct light_visit {
	struct slot_visit v;
	__u64 on;
	__u64 runq;
	__u64 count[CG_NR_COUNTS];
};

/* Atomics: the sweep is preemptible, and an exit or a free on this CPU may interrupt it. */
static __always_inline long slot_light_charge(__u32 index, void *ctx)
{
	struct light_visit *w = ctx;
	struct cg_slot_live *live = slot_live_of(w->v.set, index);
	int k;

	if (!live)
		return 0;
	__sync_fetch_and_add(&live->base[CG_ONCPU], w->on);
	__sync_fetch_and_add(&live->base[CG_RUNQ], w->runq);
	__sync_fetch_and_sub(&live->base[CG_SLEEP], w->on + w->runq);
	for (k = 0; k < CG_NR_COUNTS; k++)
		if (w->count[k])
			__sync_fetch_and_add(&live->count[k], w->count[k]);
	__sync_fetch_and_add(&live->seq, 1);
	return 0;
}

/* The kernel's figures of t now, as struct light_visit holds their growth. */
static __always_inline void light_figures(struct task_struct *t, struct light_visit *f)
{
	f->on = t->se.sum_exec_runtime;
	f->runq = t->sched_info.run_delay;
	f->count[CG_RUNQ_WAITS] = t->sched_info.pcount;
	f->count[CG_NVCSW] = t->nvcsw;
	f->count[CG_NIVCSW] = t->nivcsw;
	f->count[CG_MIGRATIONS] = t->se.nr_migrations;
	f->count[CG_MINOR_FAULTS] = t->min_flt;
	f->count[CG_MAJOR_FAULTS] = t->maj_flt;
}

/* ts's figures from f, the kernel's now (a task seen first, from now on) */
static __always_inline void light_store(struct task_state *ts, const struct light_visit *f)
{
	ts->light_exec = f->on;
	ts->run_delay = f->runq;
	ts->pcount = f->count[CG_RUNQ_WAITS];
	ts->nvcsw = f->count[CG_NVCSW];
	ts->nivcsw = f->count[CG_NIVCSW];
	ts->nr_migrations = f->count[CG_MIGRATIONS];
	ts->min_flt = f->count[CG_MINOR_FAULTS];
	ts->maj_flt = f->count[CG_MAJOR_FAULTS];
}

/* ts's figures zero: a task born since the sweep before counts its whole life */
static __always_inline void light_store_zero(struct task_state *ts)
{
	ts->light_exec = 0;
	ts->run_delay = 0;
	ts->pcount = 0;
	ts->nvcsw = 0;
	ts->nivcsw = 0;
	ts->nr_migrations = 0;
	ts->min_flt = 0;
	ts->maj_flt = 0;
}

/*
 * f (the kernel's figures now) becomes what they grew by since ts's, and ts's become f's. In
 * place, field by field: a second struct on the stack took the sweep past BPF's 512 bytes.
 */
#define LIGHT_TAKE(now, last)           \
	do {                            \
		__u64 taken = (now);    \
		(now) = taken - (last); \
		(last) = taken;         \
	} while (0)

static __always_inline void light_take(struct task_state *ts, struct light_visit *f)
{
	LIGHT_TAKE(f->on, ts->light_exec);
	LIGHT_TAKE(f->runq, ts->run_delay);
	/* the kernel's pcount is wider than what the storage keeps: modulo 2^32 */
	f->count[CG_RUNQ_WAITS] = (__u32)(f->count[CG_RUNQ_WAITS] - ts->pcount);
	ts->pcount += (__u32)f->count[CG_RUNQ_WAITS];
	LIGHT_TAKE(f->count[CG_NVCSW], ts->nvcsw);
	LIGHT_TAKE(f->count[CG_NIVCSW], ts->nivcsw);
	LIGHT_TAKE(f->count[CG_MIGRATIONS], ts->nr_migrations);
	LIGHT_TAKE(f->count[CG_MINOR_FAULTS], ts->min_flt);
	LIGHT_TAKE(f->count[CG_MAJOR_FAULTS], ts->maj_flt);
}

/*
 * Take t's growth since its last charge into f at now; with end, its alive time ends too (its
 * exit or its free). A task first seen counts from zero when it was born after the sweep before
 * this one began (none saw it; at an exit, after the last sweep began), else from now. The sweep,
 * the exit and the free may meet on one task: whoever holds ts->light_busy takes, and a sweep that
 * finds it held leaves the growth to the next one. False where it was held. Not inlined: its stack
 * apart from task_state_get()'s calls, which with it came to 576 bytes, past BPF's 512.
 */
static __noinline bool light_take_locked(struct task_struct *t, struct task_state *ts, __u64 now,
					 bool end, struct light_visit *f)
{
	__u64 born_after = end ? READ_ONCE(light_sweep_at) : light_born_after;
	bool first, newborn;

	if (!f || __sync_val_compare_and_swap(&ts->light_busy, 0, 1) != 0)
		return false;
	light_figures(t, f);
	first = ts->state == TS_UNTRACKED;
	/* born since the sweep before: nothing saw it, and it counts from zero */
	newborn = t->start_time > born_after;
	if (first && newborn)
		light_store_zero(ts);
	else if (first)
		light_store(ts, f);
	light_take(ts, f);
	if (first) {
		/* alive from its birth where it counts from zero, else from now */
		ts->since = newborn && t->start_time < now ? t->start_time : now;
		ts->state = CG_SLEEP + 1;
		slots_move(&ts->slots, CG_NR_STATES, CG_SLEEP, ts->since, true);
	}
	if (end && ts->state == CG_SLEEP + 1) {
		slots_move(&ts->slots, CG_SLEEP, CG_NR_STATES, now, true);
		ts->state = TS_LIGHT_ENDED;
	}
	WRITE_ONCE(ts->light_busy, 0);
	return true;
}

/* A task's exit or free: its growth charged to its slots at once, and its alive time ended. */
static __always_inline void light_charge(struct task_struct *t, struct task_state *ts, __u64 now)
{
	struct light_visit f = {};

	if (light_take_locked(t, ts, now, true, &f))
		for_each_slot(&ts->slots, slot_light_charge, &f);
}

/*
 * The sweep's growth of the tasks it took in since it last charged, all of one slot set (cgid
 * and gen name it): consecutive tasks are mostly one process's threads, so a run of them is
 * charged with one set of atomics rather than a set a task (465 ns a task before, 10,000
 * threads 7.2 ms of cgstat's CPU an interval). Only the sweep uses it, one at a time.
 */
struct light_pending {
	struct light_visit growth;
	struct slot_set slots;
	__u64 cgid;
	__u32 gen;
	__u32 any;
};

static struct light_pending light_pending;

/* Charge what is pending to its slots. Not inlined: the loop's stack apart from the sweep's. */
static __noinline int light_flush(void)
{
	struct light_visit w;

	if (!light_pending.any)
		return 0;
	w = light_pending.growth;
	for_each_slot(&light_pending.slots, slot_light_charge, &w);
	light_pending.growth = (struct light_visit){};
	light_pending.any = 0;
	return 0;
}

/* Add f, the growth of a task whose slots ts holds, to what is pending. */
static __always_inline void light_pend(const struct task_state *ts, const struct light_visit *f)
{
	int k;

	if (light_pending.any && (light_pending.cgid != ts->cgid || light_pending.gen != ts->gen))
		light_flush();
	if (!light_pending.any) {
		light_pending.slots = ts->slots;
		light_pending.cgid = ts->cgid;
		light_pending.gen = ts->gen;
		light_pending.any = 1;
	}
	light_pending.growth.on += f->on;
	light_pending.growth.runq += f->runq;
	for (k = 0; k < CG_NR_COUNTS; k++)
		light_pending.growth.count[k] += f->count[k];
}

#endif /* CGSTAT_LIGHT_BPF_H */
