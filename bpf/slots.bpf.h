/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Slots: visiting the slots a task counts in, moving its time between their states, and
 * finding them (a cgroup's slot, its watched ancestors', a thread pool's).
 *
 * One room of cgstat.bpf.c, which includes the rooms in order as one compilation unit (it says
 * why); each room uses only those before it.
 */
#ifndef CGSTAT_SLOTS_BPF_H
#define CGSTAT_SLOTS_BPF_H

#include "clock.bpf.h"

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

/*
 * A slot for cgroup cg (id cgid), first seen in the all-cgroups mode; (__u32)-1 when the map is
 * full. Not inlined: in task_move_cgroup()'s frame its locals took 6.1's cg_sched_switch, with
 * the pool walk below it (--threads), to 544 bytes of stack, past BPF's 512.
 */
static __noinline __u32 slot_alloc(struct cgroup *cg, __u64 cgid)
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
 * CG_POOLS_PER_WATCHED, or in the all-cgroups mode once pools hold max_pool_slots, which the
 * cgroup's slot then says (pools_full) for user space to tell. Only from resolve_level(), a
 * bpf_loop() callback with a frame of its own: inlined into task_move_cgroup(), its locals moved
 * that frame's others deeper, and cg_sched_switch came to 528 bytes of stack, past BPF's 512
 * (6.18); as a function of its own, its frame's rounding took 6.1's to 544.
 */
static __always_inline __u32 pool_slot(__u32 watched, const char *comm)
{
	struct cg_pool_key key = { .watched_slot = watched };
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
	if (!taken || !owner)
		return watched;
	if (READ_ONCE(*taken) >= CG_POOLS_PER_WATCHED ||
	    (all_cgroups && READ_ONCE(pool_slots_held) >= max_pool_slots)) {
		if (!READ_ONCE(owner->pools_full))
			owner->pools_full = 1;
		return watched;
	}
	info = slot_take(&slot);
	if (!info)
		return watched;
	if (all_cgroups)
		__sync_fetch_and_add(&pool_slots_held, 1);
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
	if (all_cgroups)
		__sync_fetch_and_add(&pool_slots_held, -1);
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
	__u32 *slot, i, levels;

	if (all_cgroups) {
		slot = bpf_map_lookup_elem(&cgroup_slots, &cgid);
		ts->slots.slot[0] = slot ? *slot : slot_alloc(cg, cgid);
		if (ts->slots.slot[0] == (__u32)-1) {
			/* no cgid: the task's next event tries again, once slots are freed */
			count_drop();
			ts->slots.nslots = 0;
			ts->cgid = 0;
			return;
		}
		ts->slots.nslots = 1;
		ts->cgid = cgid;
		if (!pools)
			return;
		/*
		 * With pools, its pool of its own cgroup: the walk below over that one level
		 * (c.level 0), the path the watched mode verifies, so that its frame is that one's
		 * (its own code here took 6.1's cg_sched_switch to 544 bytes of stack, past 512)
		 */
		levels = 1;
	} else {
		c.level = BPF_CORE_READ(cg, level);
		levels = c.level + 1 < CG_MAX_LEVEL ? c.level + 1 : CG_MAX_LEVEL;
	}
	if (pools)
		__builtin_memcpy(c.comm, ts->comm, sizeof(c.comm));
	bpf_loop(levels, resolve_level, &c, 0);
	/* all cgroups: its pool, or its cgroup's own slot where the walk found none */
	if (all_cgroups && !c.n)
		return;
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
	ts->wake_cache = 0;
	slots_resolve(ts, (struct cgroup *)cg, cgid);
	if (moves)
		slots_move(&ts->slots, CG_NR_STATES, ts_state(ts), now, atomic);
	return 0;
}

#endif /* CGSTAT_SLOTS_BPF_H */
