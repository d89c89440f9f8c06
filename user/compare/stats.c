// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/stats.h"

double stats_median(const double *sorted, int n)
{
	return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

int stats_median_ci(const double *sorted, int n, double level, double *lo, double *hi)
{
	double tail = 0, term = ldexp(1, -n); /* P(B = 0) for B ~ Binomial(n, 1/2) */
	int k;

	/* the interval [x_(k+1), x_(n-k)] misses the median with probability 2 P(B <= k) */
	for (k = 0; k < n / 2; k++) {
		tail += term;
		if (1 - 2 * tail < level)
			break;
		term = term * (n - k) / (k + 1);
	}
	if (k == 0)
		return -EDOM;
	*lo = sorted[k - 1];
	*hi = sorted[n - k];
	return 0;
}

struct ranked {
	double value;
	int side; /* 0: a, 1: b */
};

static int ranked_cmp(const void *x, const void *y)
{
	const struct ranked *p = x, *q = y;

	return (p->value > q->value) - (p->value < q->value);
}

/*
 * Twice the mid-ranks of the n pooled values (so that they are whole), in rank2[], and the sum
 * of (t^3 - t) over the groups of t tied values, for the normal approximation's variance.
 */
static void mid_ranks(const struct ranked *v, int n, int *rank2, double *ties)
{
	int i, j;

	*ties = 0;
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && v[j].value == v[i].value; j++)
			;
		/* ranks i + 1 .. j share their mean, (i + 1 + j) / 2 */
		for (int k = i; k < j; k++)
			rank2[k] = i + 1 + j;
		*ties += (double)(j - i) * (j - i) * (j - i) - (j - i);
	}
}

/*
 * P(W <= w2) and P(W >= w2) for the sum W of twice the ranks of na values drawn without order
 * from the n pooled ones: count[k][s], the number of ways k of the values seen so far sum to s,
 * one value at a time. Counts are doubles: C(100, 50) is 1e29, exact enough for a p-value.
 */
static int exact_tails(const int *rank2, int n, int na, long w2, double *below, double *above)
{
	long max_sum = 0, s;
	double *count, total = 0;
	int i, k;

	for (i = 0; i < n; i++)
		max_sum += rank2[i];
	count = calloc((size_t)(na + 1) * (max_sum + 1), sizeof(*count));
	if (!count)
		return -ENOMEM;
#define COUNT(k, s) count[(size_t)(k) * (max_sum + 1) + (s)]
	COUNT(0, 0) = 1;
	for (i = 0; i < n; i++)
		for (k = i + 1 < na ? i + 1 : na; k >= 1; k--)
			for (s = max_sum - rank2[i]; s >= 0; s--)
				if (COUNT(k - 1, s))
					COUNT(k, s + rank2[i]) += COUNT(k - 1, s);
	*below = *above = 0;
	for (s = 0; s <= max_sum; s++) {
		total += COUNT(na, s);
		if (s <= w2)
			*below += COUNT(na, s);
		if (s >= w2)
			*above += COUNT(na, s);
	}
#undef COUNT
	free(count);
	*below /= total;
	*above /= total;
	return 0;
}

double stats_mann_whitney_p(const double *a, int na, const double *b, int nb)
{
	int n = na + nb, i, *rank2;
	double ties, below, above, p;
	struct ranked *v;
	long w2 = 0;

	if (na <= 0 || nb <= 0)
		return NAN;
	v = calloc(n, sizeof(*v));
	rank2 = calloc(n, sizeof(*rank2));
	if (!v || !rank2) {
		p = NAN;
		goto out;
	}
	for (i = 0; i < n; i++)
		v[i] = (struct ranked){ i < na ? a[i] : b[i - na], i >= na };
	qsort(v, n, sizeof(*v), ranked_cmp);
	mid_ranks(v, n, rank2, &ties);
	for (i = 0; i < n; i++)
		if (v[i].side == 0)
			w2 += rank2[i];
	if (n <= STATS_EXACT_MAX) {
		if (exact_tails(rank2, n, na, w2, &below, &above)) {
			p = NAN;
			goto out;
		}
		p = 2 * (below < above ? below : above);
	} else {
		double u = w2 / 2.0 - na * (na + 1) / 2.0, mean = na * (double)nb / 2;
		double var = na * (double)nb / 12 * ((n + 1) - ties / ((double)n * (n - 1)));
		double z = (fabs(u - mean) - 0.5) / sqrt(var);

		p = var > 0 ? erfc((z > 0 ? z : 0) / sqrt(2)) : 1;
	}
	if (p > 1)
		p = 1;
out:
	free(v);
	free(rank2);
	return p;
}

double stats_mann_whitney_min_p(int na, int nb)
{
	double splits = 1;
	int i;

	/* C(na + nb, na), one of which puts every value of a below every value of b */
	for (i = 1; i <= na; i++)
		splits = splits * (nb + i) / i;
	return 2 / splits < 1 ? 2 / splits : 1;
}
