/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The BPF side's lifecycle: load and attach the scheduler programs, seed the tasks that
 * already exist, take consistent snapshots of every slot, and free the slots of removed
 * cgroups. The only module (with perf_counters and bpf_programs) that talks to libbpf.
 */
#ifndef CGSTAT_COLLECTOR_H
#define CGSTAT_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/cgstat.h"
#include "core/record.h"

struct bpf_object;
struct collector;

struct collector_opts {
	/* every cgroup with its own slot, counting the tasks directly in it */
	bool all_cgroups;
	/* watched cgroups, each counting its subtree: watched[i] gets slot i */
	const uint64_t *watched;
	int nr_watched;
	/* slots in the all-cgroups mode */
	uint32_t max_slots;
	/*
	 * watched cgroups counted by thread pool (bpf/cgstat.h, CG_POOLS_PER_WATCHED); pool_exact:
	 * a pool is a thread name, not its pattern
	 */
	bool pools;
	bool pool_exact;
	/* --light: no scheduler event programs; a sweep of every task's figures each interval */
	bool light;
	/* perf counter fds, event e of CPU c at [e * nr_cpus + c], -1 for an offline CPU */
	const int *perf_fds;
	int nr_perf_events;
	int nr_cpus;
	/* -vv: all of libbpf's messages, and each program's verifier statistics */
	bool verbose;
	/* -vvv: with verbose, the path a refused program failed on, instruction by instruction */
	bool verifier_path;
	/* the kernel BTF to relocate against; NULL: the running kernel's */
	const char *btf_path;
};

/* Load, attach and seed. NULL and errno on failure, after a message on stderr. */
struct collector *collector__open(const struct collector_opts *opts);

/*
 * Snapshot every slot (summed over CPUs, in-flight time folded in) into the array returned
 * through snap, valid until the next call; *nr_slots is how many slots have been handed out;
 * *at_ns the time the in-flight time was folded in at (the scheduler's clock: only differences
 * mean anything). 0 or -errno.
 */
int collector__snapshot(struct collector *c, const struct cg_slot_snap **snap, uint32_t *nr_slots,
			uint64_t *at_ns);

/*
 * With pools, the thread records (struct cg_thread_rec) of the threads of the watched subtrees
 * that did more than sleep since the last call, or are new, or exited, from the thread table
 * (thread_table.h), as of the last snapshot. In the array returned through recs, valid until
 * the next call. 0 or -errno.
 */
int collector__threads(struct collector *c, const struct cg_thread_rec **recs, size_t *nr);

/*
 * With --threads, the wake graph's edges as of now (bpf/cgstat.h): *edges the pairs of edges
 * [0, *nr) (an edge not yet set has waker and wakee 0, and count 0), counts each one's
 * wakeups so far summed over CPUs; both valid until the next call. 0 or -errno.
 */
int collector__wake_edges(struct collector *c, const struct cg_wake_edge **edges,
			  const uint64_t **counts, uint32_t *nr);

/* How many slots there are: the drain's size. */
/* --light: whether the sweep is the open-coded task iterator's walk (else the iterator program) */
bool collector__light_walks(const struct collector *c);
uint32_t collector__max_slots(const struct collector *c);

/* Give a removed cgroup's slot back for reuse; only once its snapshot shows no task. */
int collector__free_slot(struct collector *c, uint32_t slot, uint64_t cgid);

/*
 * The all-cgroups mode with pools: give back pool slot slot of the removed cgroup whose slot is
 * owner, named pool (its snapshot's), once no task counts in it; free the owner after its pools
 * (collector__free_slot() resets its count of pools). 0 or -errno.
 */
int collector__free_pool_slot(struct collector *c, uint32_t slot, uint32_t owner,
			      const char pool[CG_COMM_LEN]);

/*
 * A watched slot counts cgroup new_cgid from now on instead of old_cgid (the watched path was
 * made again, or the watched pid moved): its figures go on under the same label. 0, -EEXIST
 * when another watched slot has new_cgid, or -errno.
 */
int collector__rewatch(struct collector *c, uint32_t slot, uint64_t old_cgid, uint64_t new_cgid);

/*
 * The parent id (0: the root) and directory name that slot's cgroup had when the slot was
 * taken, in the all-cgroups mode; name holds CG_LEAF_NAME_MAX bytes. 0, -ENOENT when the slot
 * no longer belongs to cgid, or -errno.
 */
int collector__slot_origin(struct collector *c, uint32_t slot, uint64_t cgid, uint64_t *parent_cgid,
			   char *name);

/*
 * The same of cgroup cgid, by id: a cgroup that preempted a counted task, or an ancestor of one
 * or of a slot's cgroup. 0, -ENOENT when BPF noted none, or -errno.
 */
int collector__cgroup_origin(struct collector *c, uint64_t cgid, uint64_t *parent_cgid, char *name);

/*
 * The (slot, preempting cgroup) pairs of the first nr_slots slots with their counts so far, in
 * the array returned through pairs, valid until the next call. 0 or -errno.
 */
int collector__preempters(struct collector *c, uint32_t nr_slots, const struct cg_preempter **pairs,
			  size_t *nr);

/* Free these pairs' entries (idle ones: the drain forgot them) for other preempters. */
void collector__forget_preempters(struct collector *c, const struct cg_preempter_key *keys,
				  size_t nr);

/*
 * Since start: tasks the BPF side could not attribute because a map was full; switch-outs the
 * kernel did not report (a CPU's switch whose prev is not the task it last switched in), each
 * repaired where found; snapshots that found a CPU counting more than one task on CPU.
 */
void collector__health(const struct collector *c, struct cg_health *health);

/* Whether some perf counter was multiplexed (and its counts scaled) since start. */
bool collector__multiplexed(const struct collector *c);

/* The loaded BPF object, for what reads its programs' statistics (bpf_programs.h). */
struct bpf_object *collector__object(const struct collector *c);

void collector__close(struct collector *c);

#endif /* CGSTAT_COLLECTOR_H */
