// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <math.h>

#include "core/hist.h"

void hist_add(struct cg_hist *dst, const struct cg_hist *src)
{
	uint64_t left = src->count;
	int b;

	/*
	 * Up to src's last wait (its count is its buckets' sum, as hist_quantile() relies on):
	 * most histograms are a few short buckets, and adding all 305 of each into 1,000 others
	 * was a twelfth of the drain's time, most of it in cache misses on dst.
	 */
	for (b = 0; left && b < CG_HIST_BUCKETS; b++) {
		dst->bucket[b] += src->bucket[b];
		left -= left < src->bucket[b] ? left : src->bucket[b];
	}
	dst->count += src->count;
}

/* The value that stands for every value in bucket b. */
static uint64_t bucket_value(__u32 b)
{
	__u64 lower = cg_hist_lower(b);

	/* The last bucket has no upper bound, so its lower bound is all that is known. */
	if (b < CG_HIST_LINEAR || b == CG_HIST_BUCKETS - 1)
		return lower;
	return lower + (cg_hist_lower(b + 1) - lower) / 2;
}

uint64_t hist_quantile(const struct cg_hist *h, double q, uint64_t min_ns, uint64_t max_ns)
{
	uint64_t total = h->count, seen = 0, rank, value;
	__u32 b;

	/*
	 * h->count is the buckets' sum wherever user space makes a histogram (the drain adds it
	 * up, hist_add() keeps it): summing them again here was a third of the drain's time with
	 * 1,000 cgroups. A count ahead of the buckets still cannot walk off the end: the walk stops
	 * at the last bucket.
	 */
	if (!total)
		return 0;

	/* The epsilon keeps 0.99 * 100 = 99.00000000000001 from becoming rank 100. */
	rank = (uint64_t)ceil(q * (double)total - 1e-9);
	if (rank < 1)
		rank = 1;
	if (rank > total)
		rank = total;

	for (b = 0; b < CG_HIST_BUCKETS - 1; b++) {
		seen += h->bucket[b];
		if (seen >= rank)
			break;
	}
	value = bucket_value(b);
	/* the midpoint of the lowest bucket may lie below every value in it */
	if (value < min_ns)
		value = min_ns;
	if (max_ns && value > max_ns)
		value = max_ns;
	return value;
}
