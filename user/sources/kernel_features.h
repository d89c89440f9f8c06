/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Whether the running kernel has the BPF features cgstat's programs are built on, probed one
 * by one with libbpf (never read off the version: distributions backport features).
 */
#ifndef CGSTAT_KERNEL_FEATURES_H
#define CGSTAT_KERNEL_FEATURES_H

#include <stdbool.h>
#include <stdio.h>

/*
 * 0 when the kernel has every feature, or a probe could not tell (the load then says what is
 * wrong); -EOPNOTSUPP after one line on f naming each missing feature and the release it came
 * in. verbose: say on f which probes could not tell. Needs root.
 */
int kernel_features__check(FILE *f, bool verbose);

#endif /* CGSTAT_KERNEL_FEATURES_H */
