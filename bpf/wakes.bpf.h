/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The wake graph of --threads: at each sched_waking, the woken thread's pool slot and its
 * waker's (current's, or a timer's or another interrupt's as a source) make an edge, counted
 * per CPU. What this CPU serves is followed by the tracepoints of timers' callbacks, interrupt
 * handlers and softirqs: the preempt count says it, but reading it needs the per-CPU variable's
 * address, which kernels without CONFIG_KALLSYMS_ALL do not give BPF. A wakeup in an interrupt
 * no tracepoint shows (an IPI's work) counts as the interrupted task's.
 *
 * One room of cgstat.bpf.c, which includes the rooms in order as one compilation unit (it says
 * why); each room uses only those before it.
 */
#ifndef CGSTAT_WAKES_BPF_H
#define CGSTAT_WAKES_BPF_H

#include "switch.bpf.h"

/* The slot a task counts in for the wake graph: its deepest (its own cgroup's pool). */
static __always_inline __u32 wake_slot_of(const struct task_state *ts)
{
	return ts->slots.slot[(ts->slots.nslots - 1) & (CG_MAX_NEST - 1)];
}

/*
 * Who wakes now: a timer's expiry, another interrupt, current's slot, or none of cgstat's.
 * Current's slot as its task state has it, resolved again where that is stale (a rename sets
 * its gen stale, so a thread that names itself and runs on, as a busy stage does, wakes from
 * its new pool at once: 1 in 120 of a stage's wakeups went to its old pool otherwise, in
 * test_wakes). The clock is read only for that resolve: read for every wakeup, as an argument,
 * it was half the program's work (docs/performance.md).
 */
static __always_inline __u32 waker_now(void)
{
	struct task_struct *current = bpf_get_current_task_btf();
	__u32 zero = 0, *depth = bpf_map_lookup_elem(&irq_depth, &zero);
	struct task_state *ts;

	if (depth && depth[CG_DEPTH_TIMER])
		return CG_WAKER_TIMER;
	if (depth && depth[CG_DEPTH_INTERRUPT])
		return CG_WAKER_INTERRUPT;
	ts = bpf_task_storage_get(&task_states, current, NULL, 0);
	if (!ts || ts->cgid != current->cgroups->dfl_cgrp->kn->id ||
	    ts->gen != READ_ONCE(watch_gen))
		ts = task_state_get(current, clock_now(current), true, true);
	if (!ts || !ts->slots.nslots || ts->state == TS_UNTRACKED)
		return CG_WAKER_UNWATCHED;
	return wake_slot_of(ts);
}

/* The edge of pair, taken on its first wakeup; CG_WAKE_EDGES when the table is full. */
static __noinline __u32 wake_edge_take(__u32 wakee, __u32 waker)
{
	struct cg_wake_pair pair = { .wakee_slot = wakee, .waker_slot = waker };
	struct cg_wake_edge *e;
	__u32 index, *found;

	found = bpf_map_lookup_elem(&wake_edge_index, &pair);
	if (found)
		return *found;
	if (READ_ONCE(wake_edges_taken) >= CG_WAKE_EDGES)
		return CG_WAKE_EDGES;
	index = __sync_fetch_and_add(&wake_edges_taken, 1);
	e = bpf_map_lookup_elem(&wake_edges, &index);
	if (!e)
		return CG_WAKE_EDGES;
	e->pair = pair;
	if (bpf_map_update_elem(&wake_edge_index, &pair, &index, BPF_NOEXIST)) {
		/* another CPU took this pair first: this index stays unset, unused */
		found = bpf_map_lookup_elem(&wake_edge_index, &pair);
		return found ? *found : CG_WAKE_EDGES;
	}
	__sync_lock_test_and_set(&e->set, 1);
	return index;
}

/*
 * p is being woken: one wakeup on its edge from whoever wakes it. Its last waker's edge is in
 * its state, so that a pair seen before costs no hash lookup. Wakers of one task are serialised
 * by its pi_lock, which try_to_wake_up() holds here (but for a task waking itself).
 */
static __always_inline void wake_count(struct task_struct *p)
{
	struct task_state *ts = bpf_task_storage_get(&task_states, p, NULL, 0);
	__u64 cache, *count;
	__u32 waker, index;

	if (!ts || !ts->slots.nslots)
		return;
	waker = waker_now();
	cache = READ_ONCE(ts->wake_cache);
	if ((__u32)(cache >> 32) == waker && (__u32)cache) {
		index = (__u32)cache - 1;
	} else {
		index = wake_edge_take(wake_slot_of(ts), waker);
		if (index >= CG_WAKE_EDGES) {
			__sync_fetch_and_add(&wake_edges_dropped, 1);
			return;
		}
		*(volatile __u64 *)&ts->wake_cache = (__u64)waker << 32 | (index + 1);
	}
	count = bpf_map_lookup_elem(&wake_counts, &index);
	if (count)
		(*count)++;
}

/*
 * A timer's callback (CG_DEPTH_TIMER), or an interrupt handler or softirq (CG_DEPTH_INTERRUPT),
 * begins (entry) or ends on this CPU. One that began before the programs were attached ends
 * with the depth at 0, which stays so.
 */
static __always_inline void irq_depth_move(__u32 which, bool entry)
{
	__u32 zero = 0, *depth = bpf_map_lookup_elem(&irq_depth, &zero);

	if (!depth)
		return;
	which &= 1;
	if (entry)
		depth[which] += 1;
	else if (depth[which])
		depth[which] -= 1;
}

#endif /* CGSTAT_WAKES_BPF_H */
