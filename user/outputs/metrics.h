/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What --listen serves on /metrics (docs/metrics-endpoint.md): every cgroup's amounts summed
 * since the start as counters, its levels in the last interval as gauges, its run-queue waits as
 * a classic histogram, its perf counts, its pools' figures, and cgstat's own. No sample has a
 * timestamp: Prometheus stamps the scrape, and marks series stale when they go. The drain adds
 * each interval under a lock; a scrape copies the sums under it (the copy, a few hundred bytes a
 * cgroup, is all it holds the drain up by) and renders the copy in the HTTP thread, in the
 * Prometheus text format or in OpenMetrics. No HTTP here: unit-tested without a socket.
 */
#ifndef CGSTAT_METRICS_H
#define CGSTAT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/record.h"

/*
 * A container whose cgroup is gone is still exported this long (its last sums reach a scraper
 * that scrapes every minute), then dropped: churn does not grow the label set without bound.
 */
#define METRICS_GRACE_MS (120 * 1000ULL)

struct metrics;
struct metrics_snapshot;

/*
 * event_names: perf's names of the run's events, in the order of cg_record.counter (they label
 * cgstat_perf_events_total and must outlive the metrics); libbpf_version: the libbpf cgstat
 * runs with, for cgstat_build_info. NULL and errno.
 */
struct metrics *metrics__new(const char *const *event_names, int nr_events,
			     const char *libbpf_version);

void metrics__free(struct metrics *m);

/*
 * Add one interval, whose drain took drain_ns (snapshot to outputs written), and drop the
 * cgroups retired more than METRICS_GRACE_MS before it. 0 or -ENOMEM. Thread-safe, as the rest.
 */
int metrics__add(struct metrics *m, const struct cg_interval *iv, uint64_t drain_ns);

/* The cgroup behind label name is gone at now_ms: exported until the grace has passed. */
void metrics__retire(struct metrics *m, const char *name, uint64_t now_ms);

/* A copy of the figures as of the last interval added, for one scrape. NULL and errno. */
struct metrics_snapshot *metrics__snapshot(struct metrics *m);

void metrics_snapshot__free(struct metrics_snapshot *s);

/*
 * s as text, malloc'd, its length in *len: the Prometheus text format 0.0.4, or OpenMetrics
 * 1.0.0 (families without _total, UNIT lines, "# EOF"). s NULL: before the first interval,
 * only what is known before it. NULL and errno.
 */
char *metrics_snapshot__render(const struct metrics_snapshot *s, bool openmetrics, size_t *len);

#endif /* CGSTAT_METRICS_H */
