/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `cgstat compare A... vs B...`: repeated runs on two sides, each an output folder, compared per
 * container and figure of their container-summary.json as benchstat compares benchmarks: the
 * median of each side with its 95 % confidence interval, the change in %, and the two-sided
 * Mann-Whitney U test's p, a change shown only where p < 0.05 ("~" otherwise). No libbpf here.
 */
#ifndef CGSTAT_COMPARE_H
#define CGSTAT_COMPARE_H

#include <stdio.h>

/*
 * argv[0] is "compare". Writes the comparison to out and problems to err; returns the exit
 * status: 0, 1 when a side has no run that could be read, 2 on a usage error.
 */
int compare_main(int argc, char **argv, FILE *out, FILE *err);

#endif /* CGSTAT_COMPARE_H */
