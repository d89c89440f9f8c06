/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What --listen serves on /metrics (docs/metrics-endpoint.md): every container's amounts summed
 * since the start as counters, its levels in the last interval as gauges, its run-queue waits as
 * a classic histogram, its perf counts, and the host's and cgstat's own figures. The drain adds
 * each interval and takes an immutable snapshot of the sums; the HTTP thread renders a snapshot
 * per scrape, in the Prometheus text format or in OpenMetrics, so that a scrape never holds up
 * a drain. No HTTP here: unit-tested without a socket.
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
 * cgstat_perf_events_total and must outlive the metrics). NULL and errno.
 */
struct metrics *metrics__new(const char *const *event_names, int nr_events);

void metrics__free(struct metrics *m);

/*
 * Add one interval, whose drain took drain_ns (snapshot to outputs written), and drop the
 * containers retired more than METRICS_GRACE_MS before it. 0 or -ENOMEM.
 */
int metrics__add(struct metrics *m, const struct cg_interval *iv, uint64_t drain_ns);

/* The cgroup behind label name is gone at now_ms: exported until the grace has passed. */
void metrics__retire(struct metrics *m, const char *name, uint64_t now_ms);

/* The figures as of the last interval added, with one reference. NULL and errno. */
struct metrics_snapshot *metrics__snapshot(const struct metrics *m);

/* Another reference to s; s is freed when the last is put. Both are thread-safe. */
struct metrics_snapshot *metrics_snapshot__get(struct metrics_snapshot *s);
void metrics_snapshot__put(struct metrics_snapshot *s);

/*
 * s as text, malloc'd, its length in *len: the Prometheus text format 0.0.4, or OpenMetrics
 * 1.0.0 (families without _total, UNIT lines, "# EOF"). s NULL: before the first interval,
 * only what is known before it. NULL and errno.
 */
char *metrics_snapshot__render(const struct metrics_snapshot *s, bool openmetrics, size_t *len);

#endif /* CGSTAT_METRICS_H */
