/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The thread table of --threads: an entry per thread, taken from a free ring, published to the
 * drain by its sequence number.
 *
 * One room of cgstat.bpf.c, which includes the rooms in order as one compilation unit (it says
 * why); each room uses only those before it.
 */
#ifndef CGSTAT_THREADS_BPF_H
#define CGSTAT_THREADS_BPF_H

#include "slots.bpf.h"

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

#endif /* CGSTAT_THREADS_BPF_H */
