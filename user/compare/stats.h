/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The statistics `cgstat compare` reports, as benchstat does: the median of each side, its
 * distribution-free confidence interval from order statistics, and the two-sided Mann-Whitney U
 * test, exact (ties included) up to STATS_EXACT_MAX values together. No I/O here.
 */
#ifndef CGSTAT_STATS_H
#define CGSTAT_STATS_H

/* Above this many values on both sides together the U test uses the normal approximation. */
#define STATS_EXACT_MAX 100

/* The median of n > 0 sorted values. */
double stats_median(const double *sorted, int n);

/*
 * The confidence interval of the median at level (e.g. 0.95) from the order statistics of n
 * sorted values: [x_(k), x_(n+1-k)] with the largest k whose coverage, from the binomial
 * distribution, is at least level. 0, or -EDOM when n is too small for any (n < 6 at 0.95).
 */
int stats_median_ci(const double *sorted, int n, double level, double *lo, double *hi);

/*
 * The two-sided p-value of the Mann-Whitney U test of a (na values) against b (nb): twice the
 * smaller tail of the rank sum of a, capped at 1. Exact over every split of the pooled values
 * when na + nb <= STATS_EXACT_MAX (with ties, over their mid-ranks: the permutation test of the
 * rank sum), else normal with the tie correction and a continuity correction of 1/2. NaN when
 * a side is empty.
 */
double stats_mann_whitney_p(const double *a, int na, const double *b, int nb);

/* The smallest p-value the test can give for na and nb values (all of a below all of b). */
double stats_mann_whitney_min_p(int na, int nb);

#endif /* CGSTAT_STATS_H */
