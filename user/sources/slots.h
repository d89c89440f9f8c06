/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The slots' life in user space, around the BPF side's allocation: which cgroup each slot
 * counts, under what label, and what follows each interval. Watched (-c, -p): slot i is
 * watched cgroup i under its given label, and follows its path made again or its process
 * moved. Every cgroup: a slot is labelled from its cgroup's path, and a removed cgroup's slot
 * is given back once its last record is out, the cgroup retired from the summary.
 */
#ifndef CGSTAT_SLOTS_H
#define CGSTAT_SLOTS_H

#include <stdbool.h>
#include <stdint.h>

#include "sources/cgroup.h"
#include "sources/collector.h"
#include "sources/watch.h"

struct slots;

/*
 * The slots of the collector c, for watched (nr 0: every cgroup), containers labelled with the
 * runtimes' names in containers (NULL: by their paths); each argument must outlive the slots.
 * NULL and errno on failure.
 */
struct slots *slots__new(struct collector *c, struct watch_list *watched,
			 const struct cgroup_mount *mnt, struct container_names *containers,
			 bool verbose);

/* Whether every cgroup has a slot; else only the watched ones. */
bool slots__all_cgroups(const struct slots *s);

/* Before an interval is drained. */
void slots__begin_interval(struct slots *s);

/* The label of slot, which counts cgroup cgid: a drain_label_fn, with the slots as ctx. */
const char *slots__label(void *slots, uint32_t slot, uint64_t cgid);

/*
 * What slot's cgroup is, if a container's or a pod's: a drain_container_fn, with the slots as
 * ctx; NULL for another cgroup.
 */
const struct cg_container *slots__container(void *slots, uint32_t slot, uint64_t cgid);

/*
 * The label of any cgroup (a preempter): a watched one's label, else its path under the mount
 * ("#id" when it is gone). A drain_cgroup_label_fn, with the slots as ctx; NULL and errno.
 */
const char *slots__cgroup_label(void *slots, uint64_t cgid);

/*
 * The directory of cgroup cgid: a cgroupfs_dir_fn, with the slots as ctx. 0, or -ENOENT when
 * it is neither watched nor labelled by its path.
 */
int slots__dir(void *slots, uint64_t cgid, char *path, size_t len);

/* A removed cgroup, labelled name, has had its last record: whoever keeps it lets it go. */
typedef void (*slots_retire_fn)(void *ctx, const char *name, uint64_t cgid);

/*
 * Watched: each target followed to where it is now (a path made again, a process moved, a
 * container by name started or made again), said on stderr. slots__end_interval() does it after
 * each interval; the run once before the first, for the containers there at start.
 */
void slots__follow(struct slots *s);

/* Whether a watched target is a container's (a pod's, a unit's) name, for slots__follow(). */
bool slots__names_followed(const struct slots *s);

/* After the interval of snap is written everywhere; retire is told of the cgroups gone. */
void slots__end_interval(struct slots *s, const struct cg_slot_snap *snap, uint32_t nr_slots,
			 slots_retire_fn retire, void *ctx);

void slots__free(struct slots *s);

#endif /* CGSTAT_SLOTS_H */
