// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "drain.h"
#include "events.h"

struct drain {
	uint32_t max_slots;
	struct cg_slot_snap *prev; /* each slot's previous snapshot */
	struct cg_record *records;
	uint32_t *gone; /* this interval's records of removed cgroups, by index */
	drain_label_fn label;
	void *label_ctx;
	int nr_cols;
	struct drain_column cols[CG_MAX_EVENTS];
};

struct drain *drain__new(uint32_t max_slots, const struct drain_column *cols, int nr_cols,
			 drain_label_fn label, void *label_ctx)
{
	struct drain *d;
	int i;

	if (nr_cols < 0 || nr_cols > CG_MAX_EVENTS) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < nr_cols; i++) {
		if (cols[i].perf_index >= CG_MAX_EVENTS) {
			errno = EINVAL;
			return NULL;
		}
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->nr_cols = nr_cols;
	if (nr_cols)
		memcpy(d->cols, cols, nr_cols * sizeof(*cols));
	d->max_slots = max_slots;
	d->label = label;
	d->label_ctx = label_ctx;
	d->prev = calloc(max_slots, sizeof(*d->prev));
	d->records = calloc(max_slots, sizeof(*d->records));
	d->gone = calloc(max_slots, sizeof(*d->gone));
	if (!d->prev || !d->records || !d->gone) {
		drain__free(d);
		errno = ENOMEM;
		return NULL;
	}
	return d;
}

void drain__baseline(struct drain *d, const struct cg_slot_snap *snap, uint32_t nr_slots)
{
	if (nr_slots > d->max_slots)
		nr_slots = d->max_slots;
	memcpy(d->prev, snap, nr_slots * sizeof(*snap));
}

/*
 * Cumulative values only grow, but the CPUs of one snapshot are read microseconds apart, so a
 * state's time can read a little lower than the last time: count that as no time, and the
 * next interval gets it.
 */
static uint64_t grown(uint64_t now, uint64_t before)
{
	return (int64_t)(now - before) > 0 ? now - before : 0;
}

uint64_t counter_scaled(uint64_t count, uint64_t enabled, uint64_t running)
{
	/* a count that ran the whole time, or not at all, is what it is */
	if (!running || running >= enabled)
		return count;
	return (uint64_t)((double)count * (double)enabled / (double)running + 0.5);
}

/* counter[i] from cgstat's own exact figures where perf's event means the same thing. */
static void record_counters(const struct drain *d, struct cg_record *r,
			    const struct cg_slot_snap *cur, const struct cg_slot_snap *prev)
{
	const struct drain_column *col;
	int i;

	for (i = 0; i < d->nr_cols; i++) {
		col = &d->cols[i];
		r->counter_valid[i] = true;
		switch (col->source) {
		case CG_EVENT_CORE_TASK_CLOCK:
			/* perf's task-clock runs while the task is current, stolen time included */
			r->counter[i] = r->time_ns[CG_ONCPU] + r->time_ns[CG_STOLEN];
			break;
		case CG_EVENT_CORE_CONTEXT_SWITCHES:
			r->counter[i] = r->count[CG_NVCSW] + r->count[CG_NIVCSW];
			break;
		case CG_EVENT_CORE_MIGRATIONS:
			r->counter[i] = r->count[CG_MIGRATIONS];
			break;
		/*
		 * The tasks' own min_flt and maj_flt, the faults perf's events count, but for
		 * failed faults (in perf's page-faults only) and those get_user_pages() takes for
		 * the task (in min_flt and maj_flt only): mm_account_fault(), commit 53156443a303.
		 */
		case CG_EVENT_CORE_PAGE_FAULTS:
			r->counter[i] = r->count[CG_MINOR_FAULTS] + r->count[CG_MAJOR_FAULTS];
			break;
		case CG_EVENT_CORE_MINOR_FAULTS:
			r->counter[i] = r->count[CG_MINOR_FAULTS];
			break;
		case CG_EVENT_CORE_MAJOR_FAULTS:
			r->counter[i] = r->count[CG_MAJOR_FAULTS];
			break;
		default:
			r->counter_valid[i] = col->perf_index >= 0;
			r->counter[i] = 0;
			if (r->counter_valid[i]) {
				int e = col->perf_index;

				r->counter[i] =
					counter_scaled(grown(cur->counter[e], prev->counter[e]),
						       grown(cur->enabled[e], prev->enabled[e]),
						       grown(cur->running[e], prev->running[e]));
			}
			break;
		}
	}
}

static void record_fill(const struct drain *d, struct cg_record *r, const struct cg_slot_snap *cur,
			const struct cg_slot_snap *prev)
{
	int s, k, b;

	r->cgid = cur->cgid;
	r->tasks = cur->tasks > 0 ? (uint64_t)cur->tasks : 0;
	for (s = 0; s < CG_NR_STATES; s++)
		r->time_ns[s] = grown(cur->time_ns[s], prev->time_ns[s]);
	for (k = 0; k < CG_NR_COUNTS; k++)
		r->count[k] = grown(cur->count[k], prev->count[k]);
	r->runq_max_ns = r->count[CG_RUNQ_WAITS] ? cur->runq_max_ns : 0;
	r->runq_min_inv = r->count[CG_RUNQ_WAITS] ? cur->runq_min_inv : 0;
	r->runq_hist.count = 0;
	for (b = 0; b < CG_HIST_BUCKETS; b++) {
		/* 32-bit per-CPU counters: the difference modulo 2^32 is right */
		r->runq_hist.bucket[b] = (uint32_t)(cur->runq_hist[b] - prev->runq_hist[b]);
		r->runq_hist.count += r->runq_hist.bucket[b];
	}
	record_counters(d, r, cur, prev);
}

static bool record_active(const struct cg_record *r)
{
	int k;

	for (k = 0; k < CG_NR_COUNTS; k++)
		if (r->count[k])
			return true;
	return r->time_ns[CG_ONCPU] != 0;
}

/* r's figures added into t's: two cgroups of one label in one interval. */
static void record_add(struct cg_record *t, const struct cg_record *r, int nr_cols)
{
	int s, k, b, i;

	/* different cgroups: their tasks add up (a removed one's are about to go) */
	t->tasks += r->tasks;
	for (s = 0; s < CG_NR_STATES; s++)
		t->time_ns[s] += r->time_ns[s];
	for (k = 0; k < CG_NR_COUNTS; k++)
		t->count[k] += r->count[k];
	if (r->runq_max_ns > t->runq_max_ns)
		t->runq_max_ns = r->runq_max_ns;
	if (r->runq_min_inv > t->runq_min_inv)
		t->runq_min_inv = r->runq_min_inv;
	for (b = 0; b < CG_HIST_BUCKETS; b++)
		t->runq_hist.bucket[b] += r->runq_hist.bucket[b];
	t->runq_hist.count += r->runq_hist.count;
	for (i = 0; i < nr_cols; i++)
		t->counter[i] += r->counter[i];
}

/*
 * One record per label: a cgroup removed and made again under the same path (a restarted
 * service) has a record from each in the interval that holds both, and a JSON object cannot
 * hold a key twice. Each removed cgroup's record is added into another of its label, which
 * keeps its cgid (the live one, where there is one). Removed cgroups are few an interval, so
 * only their labels are looked for. The new count of records.
 */
static int records_merge_gone(struct drain *d, int n, uint32_t nr_gone)
{
	struct cg_record *g, *r;
	uint32_t k;
	int i, kept = 0;

	for (k = 0; k < nr_gone; k++) {
		g = &d->records[d->gone[k]];
		for (i = 0; i < n; i++) {
			r = &d->records[i];
			if (r == g || !r->name || strcmp(r->name, g->name))
				continue;
			record_add(r, g, d->nr_cols);
			g->name = NULL;
			break;
		}
	}
	for (i = 0; i < n; i++) {
		if (!d->records[i].name)
			continue;
		if (kept != i)
			d->records[kept] = d->records[i];
		kept++;
	}
	return kept;
}

int drain__interval(struct drain *d, const struct cg_slot_snap *snap, uint32_t nr_slots,
		    bool active_only, struct cg_interval *iv)
{
	static const struct cg_slot_snap zero;
	struct cg_record *r;
	uint32_t slot, nr_gone = 0;
	int n = 0;

	if (nr_slots > d->max_slots)
		nr_slots = d->max_slots;
	for (slot = 0; slot < nr_slots; slot++) {
		const struct cg_slot_snap *cur = &snap[slot];
		const struct cg_slot_snap *prev = &d->prev[slot];

		if (!cur->cgid) {
			d->prev[slot] = zero;
			continue;
		}
		if (prev->cgid != cur->cgid)
			prev = &zero;
		r = &d->records[n];
		memset(r->counter_valid, 0, sizeof(r->counter_valid));
		record_fill(d, r, cur, prev);
		d->prev[slot] = *cur;
		if (active_only && !record_active(r))
			continue;
		r->name = d->label(d->label_ctx, slot, cur->cgid);
		if (!r->name)
			return -errno;
		if (cur->dead)
			d->gone[nr_gone++] = n;
		n++;
	}
	iv->records = d->records;
	iv->nr_records = nr_gone ? records_merge_gone(d, n, nr_gone) : n;
	return 0;
}

void drain__free(struct drain *d)
{
	if (!d)
		return;
	free(d->prev);
	free(d->records);
	free(d->gone);
	free(d);
}
