/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Snapshots to records: what each slot did since the previous snapshot. Free of libbpf (it
 * reads the snapshot layout of bpf/cgstat.h only), so it is unit-tested without root.
 */
#ifndef CGSTAT_DRAIN_H
#define CGSTAT_DRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "core/record.h"

struct drain;

/* Names a slot's record; the string must live until the interval has been written. */
typedef const char *(*drain_label_fn)(void *ctx, uint32_t slot, uint64_t cgid);

/* What a slot's cgroup is, if a container's or a pod's: NULL otherwise. Lives as the label does. */
typedef const struct cg_container *(*drain_container_fn)(void *ctx, uint32_t slot, uint64_t cgid);

/* Labels a cgroup by its id (a preempter): the string must live until the interval is written. */
typedef const char *(*drain_cgroup_label_fn)(void *ctx, uint64_t cgid);

/*
 * Where a column's figure comes from. The software events that cgstat's own scheduler
 * programs count exactly (task-clock, the switches, the migrations, and the page faults from
 * the tasks' own min_flt and maj_flt) are taken from the record rather than from a perf
 * counter: no counter is opened for them, nor read on the hot path.
 */
enum cg_event_source {
	CG_EVENT_FROM_PERF = 0,
	CG_EVENT_CORE_TASK_CLOCK,
	CG_EVENT_CORE_CONTEXT_SWITCHES,
	CG_EVENT_CORE_MIGRATIONS,
	CG_EVENT_CORE_PAGE_FAULTS,
	CG_EVENT_CORE_MINOR_FAULTS,
	CG_EVENT_CORE_MAJOR_FAULTS,
};

/* Where a record's counter[i] comes from. */
struct drain_column {
	enum cg_event_source source; /* one of cgstat's own figures, or perf */
	int perf_index; /* for perf: the BPF counter it is in, or -1 when it is not counted */
};

/* cols[0..nr_cols) describe the records' counter[] columns; nr_cols may be 0. */
struct drain *drain__new(uint32_t max_slots, const struct drain_column *cols, int nr_cols,
			 drain_label_fn label, void *label_ctx);

/*
 * Count watched cgroups by thread pool: the slots whose snapshot names a pool (pool_of) are a
 * watched slot's pools, and drain__interval() makes each record the sum of its pools; exact:
 * a pool is a thread name, not its pattern (--pool-by comm). 0 or -ENOMEM.
 */
int drain__set_pools(struct drain *d, bool exact);

/*
 * --light: the slots hold what the sweep of the tasks' own counters charged (bpf/light.bpf.h),
 * and every record says so: the figures only events give are not had (core/derived.h).
 */
void drain__set_light(struct drain *d);

/*
 * With pools, the thread records of the interval (collector__threads()), before
 * drain__interval(), which lists them by record in iv->all_threads and makes records of the
 * busiest top of each record's in iv->threads. recs must live until the interval is written.
 * 0 or -ENOMEM.
 */
int drain__threads(struct drain *d, const struct cg_thread_rec *recs, size_t nr, uint32_t top);

/* Take the values intervals are measured from (the snapshot right after attaching). */
void drain__baseline(struct drain *d, const struct cg_slot_snap *snap, uint32_t nr_slots);

/*
 * Fill iv->records with one record per slot in use: every slot, or with active_only just those
 * whose tasks ran, switched, migrated or waited in the interval. A slot whose cgroup changed
 * since the last snapshot (reused) is measured from zero. A removed cgroup's record is added
 * into another of the same label, so that each label has one record. The records live until
 * the next call. 0 or -errno.
 */
int drain__interval(struct drain *d, const struct cg_slot_snap *snap, uint32_t nr_slots,
		    bool active_only, struct cg_interval *iv);

/*
 * With pools, after drain__interval(): the wake graph's edges that had wakeups since the last
 * call (collector__wake_edges(): pairs of slots, counts so far) into iv->wakes, named by the
 * slots of snap, and each of iv->pools to its edges (first_waker, nr_wakers). 0 or -ENOMEM.
 */
int drain__wakes(struct drain *d, const struct cg_slot_snap *snap, uint32_t nr_slots,
		 const struct cg_wake_edge *edges, const uint64_t *counts, uint32_t nr,
		 struct cg_interval *iv);

/* How drain__preempters() labels the preempting cgroups. */
void drain__set_preempter_label(struct drain *d, drain_cgroup_label_fn label, void *ctx);

/*
 * Slot member counts in the group whose total slot is total: each interval the total's record
 * is the sum of its members' (a Compose service's replicas), made by drain__add_groups(). total
 * must count nothing itself (a slot whose cgroup is pending). 0, -EINVAL or -ENOMEM.
 */
int drain__set_group(struct drain *d, uint32_t member, uint32_t total);

/*
 * The groups' totals appended to iv's records, once drain__interval() made them and their
 * cgroup files' figures are in (cgroupfs__sample()). 0 or -errno.
 */
int drain__add_groups(struct drain *d, struct cg_interval *iv);

/* How records say which container they are (none without it). */
void drain__set_container(struct drain *d, drain_container_fn container, void *ctx);

/* Intervals a pair may go without a switch before the drain forgets it. */
#define DRAIN_PREEMPTER_IDLE 10

/*
 * The preempter pairs (cumulative, collector__preempters()), before drain__interval(): each
 * slot's record of the interval then names the cgroup whose threads preempted its tasks most
 * often since the previous call (the smaller id on a tie). A pair that did not grow for
 * DRAIN_PREEMPTER_IDLE calls is forgotten and listed in *stale (valid until the next call) for
 * the caller to free on the BPF side; should it come back, all its count is new. 0 or -ENOMEM.
 */
int drain__preempters(struct drain *d, const struct cg_preempter *pairs, size_t nr,
		      const struct cg_preempter_key **stale, size_t *nr_stale);

void drain__free(struct drain *d);

/*
 * A perf count over an interval, scaled as perf scales a multiplexed event: by the time it
 * was enabled over the time it was on the PMU, both summed over the interval's pieces.
 */
uint64_t counter_scaled(uint64_t count, uint64_t enabled, uint64_t running);

#endif /* CGSTAT_DRAIN_H */
