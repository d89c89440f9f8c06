/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Run-queue wait histograms (the bucket scheme is in bpf/cgstat.h) and their quantiles. */
#ifndef CGSTAT_HIST_H
#define CGSTAT_HIST_H

#include <stdint.h>

#include "core/record.h"

void hist_add(struct cg_hist *dst, const struct cg_hist *src);

/*
 * The q-quantile (0 < q <= 1) in nanoseconds: the midpoint of the bucket that holds the
 * ceil(q * count)-th smallest value, never below min_ns (the shortest value) nor above max_ns
 * when max_ns is not 0. 0 for an empty histogram.
 */
uint64_t hist_quantile(const struct cg_hist *h, double q, uint64_t min_ns, uint64_t max_ns);

#endif /* CGSTAT_HIST_H */
