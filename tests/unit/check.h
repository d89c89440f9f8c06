/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The smallest test harness that does the job: CHECK() records a failure with its line and goes
 * on, and check_done() prints the closing "N passed, N failed" line and gives the exit code.
 */
#ifndef CGSTAT_CHECK_H
#define CGSTAT_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_passed, check_failed;

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		if (cond) {                                                                      \
			check_passed++;                                                          \
		} else {                                                                         \
			check_failed++;                                                          \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
		}                                                                                \
	} while (0)

#define CHECK_STR(a, b)                                                                          \
	do {                                                                                     \
		const char *check_a_ = (a), *check_b_ = (b);                                     \
		if (check_a_ && check_b_ && !strcmp(check_a_, check_b_)) {                       \
			check_passed++;                                                          \
		} else {                                                                         \
			check_failed++;                                                          \
			fprintf(stderr, "%s:%d: \"%s\" != \"%s\"\n", __FILE__, __LINE__,         \
				check_a_ ? check_a_ : "(null)", check_b_ ? check_b_ : "(null)"); \
		}                                                                                \
	} while (0)

static inline int check_done(void)
{
	printf("%d passed, %d failed\n", check_passed, check_failed);
	return check_failed ? 1 : 0;
}

#endif /* CGSTAT_CHECK_H */
