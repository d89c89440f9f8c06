/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The run's wake graph, with --threads: each interval's edges (iv->wakes) summed over the run,
 * between pools named by container and pool, or from a source ("(timer)", "(interrupt)",
 * "(unwatched)"); and for each pool at an edge's end what `cgstat report` colours it by, its
 * CPU time and how busy its busiest thread was. Kept for the run (as core/stages.c keeps its
 * pools): a pool or edge once seen stays, bounded by the BPF side's edges (CG_WAKE_EDGES) and
 * pools. No I/O, no libbpf.
 */
#ifndef CGSTAT_WAKEGRAPH_H
#define CGSTAT_WAKEGRAPH_H

#include <cjson/cJSON.h>

#include "core/record.h"

struct wake_graph;

/* NULL and errno on failure. */
struct wake_graph *wake_graph__new(void);

/* One interval's edges (iv->wakes) and pools (iv->pools). 0 or -ENOMEM. */
int wake_graph__add(struct wake_graph *g, const struct cg_interval *iv);

/*
 * Into root, "wakeGraph": {"nodes": [...], "edges": [...]} (docs/metrics.md, "The wake graph"),
 * edges with their wakeups a second over the run's seconds. 0 or -errno.
 */
int wake_graph__json(const struct wake_graph *g, double seconds, cJSON *root);

void wake_graph__free(struct wake_graph *g);

#endif /* CGSTAT_WAKEGRAPH_H */
