/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The whole run in one JSON document (container-summary.json, in the shape the Pulsar
 * benchmarks read): per cgroup and over all of them, every amount as an average per second of
 * the run, run-queue quantiles from the run's merged histogram, the counter ratios from the
 * run's totals, and the host's columns averaged over its samples.
 */
#ifndef CGSTAT_SUMMARY_H
#define CGSTAT_SUMMARY_H

#include <stdint.h>

#include "record.h"

struct summary;

/* NULL and errno on failure. */
struct summary *summary__new(void);

/*
 * Add one interval. Cgroups are matched by label, and one may appear in only some intervals;
 * the averages of every cgroup are over the time of all intervals added. A counter counts for
 * a cgroup only if it was valid in every interval the cgroup appeared in. The event columns
 * are taken from the first interval. 0 or -ENOMEM.
 */
int summary__add(struct summary *s, const struct cg_interval *iv);

/* The work the run did (--messages), for cpuSecondsPerMillionMessages; < 0: not given. */
void summary__set_messages(struct summary *s, double messages);

/*
 * The summary as JSON text, malloc'd (the caller frees it). A figure that is not available
 * (no time, no waits, a counter missing) is left out, never 0. NULL and errno on failure.
 */
char *summary__to_json(const struct summary *s, uint64_t start_ms, uint64_t end_ms,
		       uint64_t dropped_events);

void summary__free(struct summary *s);

#endif /* CGSTAT_SUMMARY_H */
