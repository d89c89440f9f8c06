/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Run totals: one record's amounts added into another's. The drain adds a removed cgroup into
 * the live one of its label and pools into their cgroup, the summary adds intervals into a
 * label's run and labels into allContainers, /metrics adds intervals into a container's
 * counters; all of them add here, so a sum, a maximum, a minimum and a counter's validity
 * merge the same way wherever figures are added up.
 */
#ifndef CGSTAT_TOTALS_H
#define CGSTAT_TOTALS_H

#include "core/record.h"

/* When a sum of perf counters, or of one cgroup file's figure, holds a value. */
enum totals_validity {
	/*
	 * Only while every part had one: a run's figure from intervals that each count the whole
	 * interval (the summary, the drain)
	 */
	TOTALS_VALID_ALL,
	/* Once any part had one: a counter that only grows, however few intervals fed it */
	TOTALS_VALID_ANY,
};

/* Empty totals, every counter and cgroup figure valid for TOTALS_VALID_ALL, none for ANY. */
void totals_init(struct cg_amounts *t, enum totals_validity v);

/*
 * Adds u into t: times, counts, tasks (different cgroups' tasks add up; a caller adding one
 * cgroup's intervals sets tasks to the last), the longest and the shortest wait, and the first
 * nr_events counters and the cgroup figures, each added where u's is valid and valid as v says.
 */
void totals_add(struct cg_amounts *t, const struct cg_amounts *u, int nr_events,
		enum totals_validity v);

/*
 * A record to work figures out from (core/derived.h): t's amounts and hist's waits (none when
 * hist is NULL), nothing else.
 */
void totals_record(struct cg_record *r, const struct cg_amounts *t, const struct cg_hist *hist);

#endif /* CGSTAT_TOTALS_H */
