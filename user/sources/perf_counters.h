/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * System-wide perf counters: one fd per CPU and event, for the BPF side to read where the
 * running cgroup changes. No libbpf here: the collector hands the fds to BPF.
 */
#ifndef CGSTAT_PERF_COUNTERS_H
#define CGSTAT_PERF_COUNTERS_H

#include <stdbool.h>
#include <stdio.h>

#include "sources/perf_events.h"

struct perf_counters;

/*
 * Open every event of ev[] counted by perf (not the ones cgstat takes from its own scheduler
 * figures) on each of nr_cpus CPUs, with pid -1: system-wide, never per cgroup, so the fd count
 * is CPUs x events whatever the number of cgroups. An event the kernel refuses on an online CPU
 * (a VM without a PMU refuses cycles) is named once on err and left out; its column stays
 * empty. NULL and errno only when memory runs out.
 */
struct perf_counters *perf_counters__open(const struct cg_event *ev, int nr_events, int nr_cpus,
					  FILE *err);

/* How many events were opened; they are numbered 0..n-1 in the order of ev[]. */
int perf_counters__nr_open(const struct perf_counters *p);

/* The fds, opened event e of CPU c at [e * nr_cpus + c]; -1 for a CPU that is offline. */
const int *perf_counters__fds(const struct perf_counters *p);

/* The opened number of ev[i], or -1 when ev[i] is not counted by perf (or was refused). */
int perf_counters__index(const struct perf_counters *p, int i);

void perf_counters__close(struct perf_counters *p);

#endif /* CGSTAT_PERF_COUNTERS_H */
