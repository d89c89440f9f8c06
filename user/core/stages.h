/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The bottleneck finder over a run, with --threads: per container its thread pools by CPU time
 * (topPools) and its serial stages, each thread that wanted a CPU (ran, or waited on a run
 * queue) STAGES_SERIAL_SHARE of the time or more, the rest of its container little, over at
 * least half of the time it was seen in (docs/metrics.md, "Serial stages").
 * Fed every interval's records; keeps a thread while it lives, and after its exit only if it
 * was a serial stage, so that thread churn over a long run costs no memory that lasts. No I/O
 * but the caller's FILE, no libbpf.
 */
#ifndef CGSTAT_STAGES_H
#define CGSTAT_STAGES_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "core/derived.h"
#include "core/record.h"

/*
 * A thread's interval counts as serial when it wanted a CPU for at least this share of it, and
 * its container's other threads less than the rest share of that: the verdict's thresholds.
 */
#define STAGES_SERIAL_SHARE	 VERDICT_SERIAL_SHARE
#define STAGES_SERIAL_REST_SHARE VERDICT_SERIAL_REST_SHARE
/* topPools: this many pools a container, most CPU time first */
#define STAGES_TOP_POOLS 5

struct stages;

/* NULL and errno on failure. */
struct stages *stages__new(void);

/* One interval's pools and threads (iv->pools, iv->all_threads). 0 or -ENOMEM. */
int stages__add(struct stages *st, const struct cg_interval *iv);

/*
 * Into obj, the summary's object of container name: "topPools", "serialStages" and, when there
 * is one, "serialStage", the verdict line. Nothing when the run had no --threads. 0 or -errno.
 */
int stages__json(const struct stages *st, const char *name, cJSON *obj);

/* The verdict lines, one per container with a serial stage ("cgstat: NAME: thread ..."). */
void stages__print(const struct stages *st, FILE *f);

void stages__free(struct stages *st);

#endif /* CGSTAT_STAGES_H */
