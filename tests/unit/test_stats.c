// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stats.c against values computed independently with SciPy 1.10.1 (Debian 12's python3-scipy):
 * scipy.stats.mannwhitneyu(x, y, method="exact") where no value is tied (it ignores ties),
 * scipy.stats.permutation_test((x, y), rank sum of x, permutation_type="independent",
 * n_resamples=inf) for the exact test with ties, mannwhitneyu(method="asymptotic",
 * use_continuity=True) above STATS_EXACT_MAX values, and scipy.stats.binom for the order
 * statistics of the median's 95 % interval (the table in Conover, Practical Nonparametric
 * Statistics: n = 10 gives (2, 9), n = 20 gives (6, 15)). The random samples were drawn with
 * numpy.random.default_rng (seeds 1 and 7) and are written out here.
 */
#include <errno.h>
#include <math.h>

#include "check.h"
#include "compare/stats.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* p against a reference to 1e-9 relative: both are exact, or the same formula */
#define CHECK_P(a, b, want) \
	CHECK(fabs(stats_mann_whitney_p(a, N(a), b, N(b)) - (want)) <= 1e-9 * (want))

static void test_exact_without_ties(void)
{
	static const double sep_a[] = { 1, 2, 3, 4, 5 }, sep_b[] = { 6, 7, 8, 9, 10 };
	static const double three_a[] = { 1, 2, 3 }, three_b[] = { 4, 5, 6 };
	static const double one_a[] = { 1 }, one_b[] = { 2 };
	static const double mid_a[] = { 3 }, low_a[] = { 0.5 }, four_b[] = { 1, 2, 4, 5 };
	static const double mixed_a[] = { 1.1, 2.4, 3.3, 5.0, 7.2, 8.8 };
	static const double mixed_b[] = { 2.0, 4.1, 6.3, 9.1, 9.5, 10.2, 11.7 };
	static const double big_a[] = { 10.0025, 10.5975, 9.4517,  8.2188, 9.0907,
					8.0167,	 10.1203, 12.6804, 9.0156, 8.7591,
					10.9797, 10.7138, 10.2108, 8.1391, 9.9415,
					11.3906, 7.3116,  9.0848,  6.1976, 7.4209 };
	static const double big_b[] = { 7.3165,	 10.5298, 8.4651,  11.5425, 11.3135,
					10.6261, 5.9665,  9.9226,  10.903,  11.2266,
					7.9397,	 10.0445, 9.043,   9.3823,  13.1218,
					9.3849,	 10.935,  12.7688, 9.8328,  10.7766,
					11.2209, 11.1276, 8.5499,  11.1523, 13.7176 };

	CHECK_P(sep_a, sep_b, 0.007936507936507936); /* 2 / C(10, 5) */
	CHECK_P(sep_b, sep_a, 0.007936507936507936);
	CHECK_P(three_a, three_b, 0.1); /* three runs a side can never say p < 0.1 */
	CHECK_P(one_a, one_b, 1.0);
	CHECK_P(mid_a, four_b, 1.0);
	CHECK_P(low_a, four_b, 0.4);
	CHECK_P(mixed_a, mixed_b, 0.13752913752913754);
	CHECK_P(big_a, big_b, 0.06558291049094152); /* 45 values: still exact */
	CHECK(fabs(stats_mann_whitney_min_p(5, 5) - 0.007936507936507936) < 1e-15);
	CHECK(fabs(stats_mann_whitney_min_p(3, 3) - 0.1) < 1e-15);
	CHECK(stats_mann_whitney_min_p(1, 1) == 1);
}

static void test_exact_with_ties(void)
{
	static const double a[] = { 1, 2, 2, 3, 3 }, b[] = { 2, 3, 4, 4, 5 };
	static const double c[] = { 7, 7, 8, 9 }, d[] = { 5, 6, 7, 7, 7, 8 };
	static const double same[] = { 1, 1, 1 };

	CHECK_P(a, b, 0.1111111111111111);  /* the no-ties formula says 0.0952 */
	CHECK_P(c, d, 0.24761904761904763); /* and 0.2571 here */
	CHECK_P(same, same, 1.0);
}

static void test_normal_approximation(void)
{
	static const double a[] = { 10.691, 11.643, 10.661, 7.394,  11.811, 10.893, 8.926,  11.162,
				    10.729, 10.588, 10.057, 11.093, 8.527,  9.674,  9.036,  11.198,
				    10.079, 9.415,  8.436,  9.486,  10.016, 9.449,  12.588, 12.013,
				    4.578,  6.222,  9.65,   9.156,  10.427, 10.435, 14.236, 7.776,
				    9.245,  14.086, 11.293, 11.326, 8.972,  6.704,  10.335, 10.218,
				    7.545,  8.634,  9.856,  8.11,   9.803,  10.191, 10.071, 8.987,
				    11.187, 11.782, 10.642, 8.364,  11.463, 8.997,  11.758, 7.856,
				    11.829, 9.96,   7.503,  9.372 };
	static const double b[] = { 11.108, 11.546, 9.036,  8.785,  11.399, 10.067, 11.471, 12.519,
				    7.702,  11.509, 13.449, 10.405, 9.378,  12.504, 11.507, 12.792,
				    10.31,  8.036,  10.78,  10.108, 12.551, 11.387, 7.738,  8.61,
				    12.768, 12.36,  9.72,   10.998, 11.891, 11.937, 12.752, 11.513,
				    10.81,  10.482, 13.111, 6.498,  10.723, 11.066, 8.149,  11.666,
				    9.697,  12.725, 10.749, 12.338, 13.438, 11.766, 9.249,  7.971,
				    14.507, 10.777, 9.623,  11.289, 10.617, 12.704, 11.068, 11.027,
				    9.571,  11.939, 8.932,  12.332 };
	static const double ta[] = { 13.0, 7.0,	 5.0,  11.0, 15.0, 8.0,	 7.0,  11.0, 8.0,  9.0,
				     9.0,  11.0, 9.0,  11.0, 10.0, 8.0,	 9.0,  8.0,  10.0, 8.0,
				     8.0,  13.0, 10.0, 10.0, 11.0, 9.0,	 10.0, 11.0, 11.0, 8.0,
				     12.0, 9.0,	 8.0,  8.0,  9.0,  13.0, 8.0,  10.0, 6.0,  10.0,
				     12.0, 10.0, 9.0,  10.0, 11.0, 11.0, 14.0, 10.0, 9.0,  10.0,
				     10.0, 10.0, 10.0, 10.0, 7.0,  12.0, 9.0,  8.0,  11.0, 13.0,
				     11.0, 10.0, 8.0,  16.0, 12.0, 8.0,	 8.0,  10.0, 7.0,  10.0 };
	static const double tb[] = { 10.0, 13.0, 13.0, 5.0,  11.0, 7.0,	 13.0, 11.0, 12.0, 8.0,
				     14.0, 15.0, 8.0,  11.0, 9.0,  11.0, 8.0,  14.0, 9.0,  10.0,
				     12.0, 9.0,	 10.0, 9.0,  10.0, 8.0,	 10.0, 10.0, 10.0, 11.0,
				     10.0, 12.0, 10.0, 10.0, 9.0,  10.0, 8.0,  12.0, 8.0,  9.0,
				     11.0, 11.0, 10.0, 7.0,  11.0, 11.0, 8.0,  12.0, 9.0,  8.0 };

	CHECK(N(a) + N(b) > STATS_EXACT_MAX && N(ta) + N(tb) > STATS_EXACT_MAX);
	CHECK_P(a, b, 0.001036581852836867);
	CHECK_P(ta, tb, 0.30447266392265193); /* many ties: the variance's correction */
	CHECK(isnan(stats_mann_whitney_p(a, 0, b, N(b))));
}

static void test_median_and_interval(void)
{
	static const double five[] = { 1, 2, 3, 4, 5 }, six[] = { 1, 2, 3, 4, 5, 6 };
	double ten[10], twenty[20], hundred[100], lo, hi;
	int i;

	for (i = 0; i < 100; i++) {
		hundred[i] = i + 1;
		if (i < 20)
			twenty[i] = i + 1;
		if (i < 10)
			ten[i] = i + 1;
	}
	CHECK(stats_median(five, 5) == 3);
	CHECK(stats_median(six, 6) == 3.5);
	CHECK(stats_median(five, 1) == 1);
	CHECK(stats_median_ci(five, 5, 0.95, &lo, &hi) == -EDOM);
	CHECK(stats_median_ci(six, 6, 0.95, &lo, &hi) == 0 && lo == 1 && hi == 6);
	CHECK(stats_median_ci(ten, 10, 0.95, &lo, &hi) == 0 && lo == 2 && hi == 9);
	CHECK(stats_median_ci(twenty, 20, 0.95, &lo, &hi) == 0 && lo == 6 && hi == 15);
	CHECK(stats_median_ci(hundred, 100, 0.95, &lo, &hi) == 0 && lo == 40 && hi == 61);
}

int main(void)
{
	test_exact_without_ties();
	test_exact_with_ties();
	test_normal_approximation();
	test_median_and_interval();
	return check_done();
}
