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
#include "lib/hashtab.h"

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

/*
 * One label's totals over a run: what the summary and /metrics keep of each label, each
 * embedding it in an entry of its own for what it keeps beside (histograms, gauges). The entry
 * owns name's bytes.
 */
struct totals_label {
	struct hash_node node;		  /* in the table, by name */
	struct totals_label *prev, *next; /* first-seen order */
	struct cg_amounts sum;		  /* tasks: the last record's, its cgroup's at the end */
	uint64_t cgid;			  /* the cgroup whose record came last: the live one */
	const char *name;
};

/* Labels by name, in the order they were first seen (the order outputs list them in). */
struct totals_table {
	struct hash_table by_name;
	struct totals_label *first, *last;
	int nr;
};

/* An empty table sized for nr_labels: 0 or -ENOMEM. Its labels are the caller's to free. */
int totals_table_init(struct totals_table *t, size_t nr_labels);
void totals_table_fini(struct totals_table *t);

struct totals_label *totals_table_find(const struct totals_table *t, const char *name);

/* l, made by totals_label_init(), last in t; it never fails (lib/hashtab.h), which retiring needs.
 */
void totals_table_link(struct totals_table *t, struct totals_label *l);
void totals_table_unlink(struct totals_table *t, struct totals_label *l);

/* Empty totals for name, whose bytes the caller keeps for as long as l lives. */
void totals_label_init(struct totals_label *l, const char *name, enum totals_validity v);

/*
 * One interval's record of l's cgroup into l: its amounts added, its tasks and its cgroup
 * l's now (a label whose cgroup was made again goes on with the sums).
 */
void totals_label_add(struct totals_label *l, const struct cg_record *r, int nr_events,
		      enum totals_validity v);

#endif /* CGSTAT_TOTALS_H */
