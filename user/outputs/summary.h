/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The whole run in one JSON document (container-summary.json, in the shape the Pulsar
 * benchmarks read): per cgroup and over all of them, every amount as an average per second of
 * the run, run-queue quantiles from the run's merged histogram, the counter ratios from the
 * run's totals, and the host's columns averaged over its samples.
 *
 * A run over every cgroup sees cgroups come and go for as long as it lasts, so a cgroup that is
 * gone is retired: what it still has to say is worked out then and its histogram let go. The
 * first SUMMARY_MAX_RETIRED retired cgroups keep their own entries; every later one is folded
 * into one entry labelled "(removed cgroups)", which has their sums but no run-queue quantiles
 * (quantiles do not add up), and the JSON then says how many were folded in
 * "retiredContainersFolded". allContainers stays exact throughout: every retired histogram is
 * merged into a run-wide one.
 */
#ifndef CGSTAT_SUMMARY_H
#define CGSTAT_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

#include "core/record.h"

/* Retired cgroups kept under their own label; a few hundred bytes each. */
#define SUMMARY_MAX_RETIRED 4096

struct summary;

/* NULL and errno on failure. */
struct summary *summary__new(void);

/*
 * Add one interval. Cgroups are matched by label, and one may appear in only some intervals;
 * the averages of every cgroup are over the time of all intervals added. A counter counts for
 * a cgroup only if it was valid in every interval the cgroup appeared in. The event columns
 * are taken from the first interval. A label that was retired and appears again (a new cgroup
 * at the same path) goes on summing into the same entry, which then has no run-queue
 * quantiles, since its earlier cgroup's histogram is gone. With --bpf-stats, the BPF programs'
 * figures (cumulative) are those of the last interval that has them. 0 or -ENOMEM.
 */
int summary__add(struct summary *s, const struct cg_interval *iv);

/*
 * The cgroup cgid, labelled name, is gone for good, its last interval already added. A label
 * not seen, not seen since it was last retired, or last added to by another cgroup (one made
 * again under the same path) is left alone. Never fails: it allocates nothing.
 */
void summary__retire(struct summary *s, const char *name, uint64_t cgid);

/* The work the run did (--messages), for cpuSecondsPerMillionMessages; < 0: not given. */
void summary__set_messages(struct summary *s, double messages);

/*
 * The summary as JSON text, malloc'd (the caller frees it). A figure that is not available
 * (no time, no waits, a counter missing) is left out, never 0. NULL and errno on failure.
 */
char *summary__to_json(const struct summary *s, uint64_t start_ms, uint64_t end_ms,
		       const struct cg_health *health);

/*
 * One line per label to f, what `cgstat -- CMD` says at exit: cores over the run, the shares of
 * the tasks' time waiting to run, sleeping and blocked, and switches per second. A figure that
 * is not available is "-".
 */
void summary__print_brief(const struct summary *s, FILE *f);

/*
 * With --threads, the serial stage verdict of each container that had one, a line each to f
 * (stages.h); nothing otherwise.
 */
void summary__print_stages(const struct summary *s, FILE *f);

/*
 * With --bpf-stats, a table to f: each of cgstat's BPF programs' runs over the run, their time,
 * the time a run, and that time as a share of the CPU time there was (the run's length times
 * the CPUs online), and the programs together; nothing without.
 */
void summary__print_programs(const struct summary *s, FILE *f);

void summary__free(struct summary *s);

#endif /* CGSTAT_SUMMARY_H */
