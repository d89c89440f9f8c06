// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "core/hist.h"

#define NR_VALUES 1000

static uint64_t values[NR_VALUES];

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void fill(struct cg_hist *h, const uint64_t *v, int n)
{
	int i;

	memset(h, 0, sizeof(*h));
	for (i = 0; i < n; i++) {
		h->bucket[cg_hist_bucket(v[i])]++;
		h->count++;
	}
}

/* The ceil(q * n)-th smallest value, as the histogram means it. */
static uint64_t sample_quantile(uint64_t *v, int n, double q)
{
	int rank = (int)ceil(q * n - 1e-9);

	qsort(v, n, sizeof(*v), cmp_u64);
	return v[(rank < 1 ? 1 : rank) - 1];
}

static int within(uint64_t got, uint64_t want, double tolerance)
{
	return fabs((double)got - (double)want) <= tolerance * (double)want;
}

static void check_quantiles(uint64_t *v, int n)
{
	struct cg_hist h;

	fill(&h, v, n);
	CHECK(within(hist_quantile(&h, 0.5, 0, 0), sample_quantile(v, n, 0.5), 0.0625));
	CHECK(within(hist_quantile(&h, 0.99, 0, 0), sample_quantile(v, n, 0.99), 0.0625));
}

static void test_bucket_scheme(void)
{
	__u32 b;
	int bad_lower = 0, bad_upper = 0, bad_width = 0;

	for (b = 0; b < CG_HIST_BUCKETS; b++) {
		if (cg_hist_bucket(cg_hist_lower(b)) != b)
			bad_lower++;
		if (b + 1 < CG_HIST_BUCKETS && cg_hist_bucket(cg_hist_lower(b + 1) - 1) != b)
			bad_upper++;
		if (b >= CG_HIST_LINEAR && b + 1 < CG_HIST_BUCKETS &&
		    8 * (cg_hist_lower(b + 1) - cg_hist_lower(b)) > cg_hist_lower(b))
			bad_width++;
	}
	CHECK(bad_lower == 0);
	CHECK(bad_upper == 0);
	CHECK(bad_width == 0);
	CHECK(cg_hist_bucket(1ULL << CG_HIST_MAX_MSB) == CG_HIST_BUCKETS - 1);
	CHECK(cg_hist_bucket((1ULL << CG_HIST_MAX_MSB) - 1) == CG_HIST_BUCKETS - 2);
	CHECK(cg_hist_lower(CG_HIST_BUCKETS - 1) == 1ULL << CG_HIST_MAX_MSB);
	CHECK(cg_hist_bucket(UINT64_MAX) == CG_HIST_BUCKETS - 1);
}

static void test_uniform(void)
{
	int i;

	/* 1 us to 100 us in even steps. */
	for (i = 0; i < NR_VALUES; i++)
		values[i] = 1000 + (uint64_t)i * 99000 / (NR_VALUES - 1);
	check_quantiles(values, NR_VALUES);
}

static void test_exponential(void)
{
	int i;

	/* The exponential distribution's quantiles at the bin centres, mean 50 us. */
	for (i = 0; i < NR_VALUES; i++)
		values[i] = (uint64_t)(-50000.0 * log(1.0 - (i + 0.5) / NR_VALUES));
	check_quantiles(values, NR_VALUES);

	/* Spread over six orders of magnitude: 1 us * 1.014^i. */
	for (i = 0; i < NR_VALUES; i++)
		values[i] = (uint64_t)(1000.0 * pow(1.014, i));
	check_quantiles(values, NR_VALUES);
}

static void test_single_value(void)
{
	uint64_t v = 12345;
	struct cg_hist h;

	fill(&h, &v, 1);
	/* 12345 is in [12288, 13312), whose midpoint is 12800. */
	CHECK(hist_quantile(&h, 0.5, 0, 0) == 12800);
	CHECK(hist_quantile(&h, 0.99, 0, 0) == 12800);
	/* The exact maximum caps the midpoint. */
	CHECK(hist_quantile(&h, 0.5, 0, 12345) == 12345);
	CHECK(hist_quantile(&h, 0.99, 0, 20000) == 12800);
}

/* Waits all above their bucket's midpoint: the shortest wait floors the quantile. */
static void test_floor(void)
{
	uint64_t v[] = { 13000, 13100, 13000 };
	struct cg_hist h;

	fill(&h, v, 3);
	/* [12288, 13312): the midpoint 12800 is below every wait */
	CHECK(hist_quantile(&h, 0.5, 0, 0) == 12800);
	CHECK(hist_quantile(&h, 0.5, 13000, 13100) == 13000);
	CHECK(hist_quantile(&h, 0.99, 13000, 13100) == 13000);
	/* within the linear range a bucket is one value wide: the floor changes nothing */
	v[0] = v[1] = v[2] = 7;
	fill(&h, v, 3);
	CHECK(hist_quantile(&h, 0.5, 7, 7) == 7);
}

static void test_linear_range(void)
{
	uint64_t v[] = { 9, 3, 7, 3, 5 };
	struct cg_hist h;

	fill(&h, v, 5);
	/* Sorted 3 3 5 7 9: rank ceil(2.5) = 3 is 5, rank ceil(4.95) = 5 is 9, exactly. */
	CHECK(hist_quantile(&h, 0.5, 0, 0) == 5);
	CHECK(hist_quantile(&h, 0.99, 0, 0) == 9);
	CHECK(hist_quantile(&h, 0.2, 0, 0) == 3);
	/* 16 and 17 share the first two-wide bucket, whose midpoint is 17. */
	v[0] = 16;
	fill(&h, v, 1);
	CHECK(hist_quantile(&h, 0.5, 0, 0) == 17);
}

static void test_above_range(void)
{
	uint64_t v = 1ULL << 41;
	/* The last bucket starts at 2^40 and holds everything above. */
	uint64_t last_lower = 1ULL << CG_HIST_MAX_MSB;
	struct cg_hist h;

	fill(&h, &v, 1);
	CHECK(h.bucket[CG_HIST_BUCKETS - 1] == 1);
	/* The last bucket is open above: its lower bound is all that is known. */
	CHECK(hist_quantile(&h, 0.5, 0, 0) == last_lower);
	CHECK(hist_quantile(&h, 0.5, 0, 1ULL << 41) == last_lower);
	CHECK(hist_quantile(&h, 0.5, 0, 1ULL << 39) == 1ULL << 39);
}

static void test_rank(void)
{
	uint64_t v[100];
	struct cg_hist h;
	int i;

	/* 99 waits of 10 ns and one of 1 ms: the 99th percentile is still 10 ns. */
	for (i = 0; i < 99; i++)
		v[i] = 10;
	v[99] = 1000000;
	fill(&h, v, 100);
	CHECK(hist_quantile(&h, 0.99, 0, 0) == 10);
	CHECK(within(hist_quantile(&h, 1.0, 0, 0), 1000000, 0.0625));
	CHECK(hist_quantile(&h, 0.001, 0, 0) == 10);
}

static void test_empty_and_add(void)
{
	uint64_t a[] = { 1, 2, 2000 }, b[] = { 2, 3000000 };
	struct cg_hist ha, hb, empty = { 0 };

	CHECK(hist_quantile(&empty, 0.5, 0, 0) == 0);

	fill(&ha, a, 3);
	fill(&hb, b, 2);
	hist_add(&ha, &hb);
	CHECK(ha.count == 5);
	CHECK(ha.bucket[1] == 1);
	CHECK(ha.bucket[2] == 2);
	CHECK(ha.bucket[cg_hist_bucket(2000)] == 1);
	CHECK(ha.bucket[cg_hist_bucket(3000000)] == 1);
	/* Sorted 1 2 2 2000 3000000: the median is 2. */
	CHECK(hist_quantile(&ha, 0.5, 0, 0) == 2);
}

int main(void)
{
	test_bucket_scheme();
	test_uniform();
	test_exponential();
	test_single_value();
	test_floor();
	test_linear_range();
	test_above_range();
	test_rank();
	test_empty_and_add();
	return check_done();
}
