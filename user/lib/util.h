/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What any module may need and none owns: the length of an array, the struct around a member,
 * units of time, a clock.
 */
#ifndef CGSTAT_UTIL_H
#define CGSTAT_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

#define NSEC_PER_SEC  1000000000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_USEC 1000ULL

/* Nanoseconds on clock id; clock_gettime cannot fail for the clocks cgstat reads. */
static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

#endif /* CGSTAT_UTIL_H */
