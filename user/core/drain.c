// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/drain.h"
#include "core/hist.h"
#include "core/totals.h"
#include "lib/hashtab.h"

/* A preempters map pair as last read. */
struct pair_entry {
	struct hash_node node;
	struct cg_preempter_key key;
	uint64_t count;
	uint32_t idle; /* calls since it last grew */
	uint64_t seen; /* the call that last read it */
};

/* Each slot's preempters over the interval, most often first. */
struct slot_top {
	int n;
	struct {
		uint64_t cgid;
		uint64_t count;
	} p[CG_PREEMPTERS_PER_SLOT];
};

/* Whether (count, cgid) goes before (other_count, other_cgid): more often, then smaller id. */
static bool preempter_before(uint64_t count, uint64_t cgid, uint64_t other_count,
			     uint64_t other_cgid)
{
	return count > other_count || (count == other_count && cgid < other_cgid);
}

/* Put (cgid, count) in its place in top, the last one falling off when it is full. */
static void top_insert(struct slot_top *top, uint64_t cgid, uint64_t count)
{
	int i = top->n < CG_PREEMPTERS_PER_SLOT ? top->n++ : CG_PREEMPTERS_PER_SLOT - 1;

	if (i == CG_PREEMPTERS_PER_SLOT - 1 && top->n == CG_PREEMPTERS_PER_SLOT &&
	    !preempter_before(count, cgid, top->p[i].count, top->p[i].cgid) && top->p[i].count)
		return;
	for (; i > 0 && preempter_before(count, cgid, top->p[i - 1].count, top->p[i - 1].cgid); i--)
		top->p[i] = top->p[i - 1];
	top->p[i].cgid = cgid;
	top->p[i].count = count;
}

struct drain {
	uint32_t max_slots;
	/*
	 * Groups (drain__set_group()): each slot's group's total slot, or -1; NULL when there is
	 * no group. A total slot counts nothing itself, so that its record has room.
	 */
	int32_t *group_total;
	struct cg_slot_snap *prev; /* each slot's previous snapshot */
	struct cg_record *records;
	uint32_t *gone; /* this interval's records of removed cgroups, by index */
	drain_label_fn label;
	void *label_ctx;
	int nr_cols;
	struct drain_column cols[CG_MAX_EVENTS];
	struct hash_table pairs; /* struct pair_entry */
	struct slot_top *top;	 /* per slot, from the last drain__preempters() */
	struct cg_preempter_key *stale;
	size_t stale_cap, stale_cap_used;
	uint64_t calls;
	drain_container_fn container;
	void *container_ctx;
	drain_cgroup_label_fn preempter_label;
	void *preempter_ctx;
	/* with pools: this interval's records of pool slots, each one's watched slot */
	bool pools;
	bool pool_exact; /* --pool-by comm */
	bool light;	 /* --light: every record's amounts are the sweep's */
	struct cg_record *pool_records;
	uint32_t *pool_owner;
	uint32_t *pool_slot;		/* and each one's own slot */
	int *record_moved, *record_new; /* records_merge_gone()'s, by record */
	/* with pools: each wake edge's count at the last drain, and the interval's rows */
	uint64_t *wake_prev;
	struct cg_wake_row *wake_rows;
	uint32_t *record_slot;		     /* the slot of each of records */
	struct cg_record *pools_out;	     /* pool_records by cgroup, for iv->pools */
	uint32_t *pools_out_slot;	     /* and each one's own slot */
	char (*pool_names)[CG_COMM_LEN + 1]; /* by slot */
	/* with pools: the interval's thread records, and what is made of them */
	const struct cg_thread_rec *thread_recs;
	size_t nr_thread_recs;
	uint32_t threads_top;
	int *slot_record;	/* by slot: its record's index, or -1 */
	size_t *record_threads; /* records_threads()'s: where each record's threads go */
	struct cg_interval_thread *all_threads;
	size_t all_threads_cap;
	struct cg_record *thread_rows;
	size_t thread_rows_cap;
};

/*
 * The pool of a cgroup's threads that count in its own slot (docs/metrics.md): longer than a
 * thread's name can be (CG_COMM_LEN - 1), so that no pool of a pattern has it. ("(other)" was
 * a thread's name away from two pools alike, and two keys alike in one JSON object.)
 */
static const char POOL_OTHER[] = "(the other pools)";

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
	d->top = calloc(max_slots, sizeof(*d->top));
	d->record_slot = calloc(max_slots, sizeof(*d->record_slot));
	if (!d->prev || !d->records || !d->gone || !d->top || !d->record_slot ||
	    hash_table_init(&d->pairs, 64)) {
		drain__free(d);
		errno = ENOMEM;
		return NULL;
	}
	return d;
}

void drain__set_light(struct drain *d)
{
	d->light = true;
}

int drain__set_pools(struct drain *d, bool exact)
{
	d->pool_exact = exact;
	d->pool_records = calloc(d->max_slots, sizeof(*d->pool_records));
	d->pools_out = calloc(d->max_slots, sizeof(*d->pools_out));
	d->pools_out_slot = calloc(d->max_slots, sizeof(*d->pools_out_slot));
	d->pool_owner = calloc(d->max_slots, sizeof(*d->pool_owner));
	d->pool_slot = calloc(d->max_slots, sizeof(*d->pool_slot));
	d->record_moved = calloc(d->max_slots + 1, sizeof(*d->record_moved));
	d->record_new = calloc(d->max_slots + 1, sizeof(*d->record_new));
	d->wake_prev = calloc(CG_WAKE_EDGES, sizeof(*d->wake_prev));
	d->wake_rows = calloc(CG_WAKE_EDGES, sizeof(*d->wake_rows));
	d->pool_names = calloc(d->max_slots, sizeof(*d->pool_names));
	d->slot_record = calloc(d->max_slots, sizeof(*d->slot_record));
	d->record_threads = calloc((size_t)d->max_slots + 1, sizeof(*d->record_threads));
	if (!d->pool_records || !d->pools_out || !d->pools_out_slot || !d->pool_owner ||
	    !d->pool_slot || !d->record_moved || !d->record_new || !d->wake_prev || !d->wake_rows ||
	    !d->pool_names || !d->slot_record || !d->record_threads)
		return -ENOMEM;
	d->pools = true;
	return 0;
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
	r->light = d->light;
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
	r->busiest.on_cpu_ns = cur->busiest_ns;
	r->busiest.tid = cur->busiest_ns ? cur->busiest_tid : 0;
	memcpy(r->busiest.comm, cur->busiest_comm, CG_COMM_LEN);
	r->busiest.comm[strnlen(r->busiest.comm, CG_COMM_LEN)] = '\0';
	r->busiest.runq_ns = 0;
	memset(&r->hungriest, 0, sizeof(r->hungriest));
	r->runner_up_wanted_ns = 0;
}

static bool record_active(const struct cg_record *r)
{
	int k;

	for (k = 0; k < CG_NR_COUNTS; k++)
		if (r->count[k])
			return true;
	return r->time_ns[CG_ONCPU] != 0;
}

/* Nothing to show: no task at the end, and none did anything or spent time in the interval. */
static bool record_empty(const struct cg_record *r)
{
	int s;

	for (s = 0; s < CG_NR_STATES; s++)
		if (r->time_ns[s])
			return false;
	return !r->tasks && !record_active(r);
}

/* r's figures added into t's: two cgroups of one label in one interval. */
/* r's preempters, labelled, from the slot's of the interval (none without a label function). */
static void record_preempters(const struct drain *d, struct cg_record *r,
			      const struct slot_top *top)
{
	int i;

	r->nr_preempters = 0;
	if (!d->preempter_label)
		return;
	for (i = 0; i < top->n; i++) {
		r->preempters[i].cgid = top->p[i].cgid;
		r->preempters[i].count = top->p[i].count;
		r->preempters[i].label = d->preempter_label(d->preempter_ctx, top->p[i].cgid);
		/* no label, no place in a row: the count still is in preemptedByOtherCgroup */
		if (!r->preempters[i].label)
			break;
		r->nr_preempters = i + 1;
	}
}

/* r's preempters into t's: the same cgroup's counts add up, the most often stay. */
static void preempters_add(struct cg_record *t, const struct cg_record *r)
{
	struct slot_top top = { 0 };
	const char *labels[2 * CG_PREEMPTERS_PER_SLOT];
	const struct cg_record *from[2] = { t, r };
	int i, j, k, n = 0;
	uint64_t cgids[2 * CG_PREEMPTERS_PER_SLOT], counts[2 * CG_PREEMPTERS_PER_SLOT];

	for (k = 0; k < 2; k++) {
		for (i = 0; i < from[k]->nr_preempters; i++) {
			const struct cg_record_preempter *p = &from[k]->preempters[i];

			for (j = 0; j < n && cgids[j] != p->cgid; j++)
				;
			if (j == n) {
				cgids[n] = p->cgid;
				labels[n] = p->label;
				counts[n++] = 0;
			}
			counts[j] += p->count;
		}
	}
	for (j = 0; j < n; j++)
		top_insert(&top, cgids[j], counts[j]);
	for (i = 0; i < top.n; i++) {
		for (j = 0; cgids[j] != top.p[i].cgid; j++)
			;
		t->preempters[i] = (struct cg_record_preempter){ labels[j], cgids[j], counts[j] };
	}
	t->nr_preempters = top.n;
}

/* r into t, both of one interval: different cgroups, or a cgroup's pools. */
static void record_add(struct cg_record *t, const struct cg_record *r, int nr_cols)
{
	uint64_t r_wanted = r->hungriest.on_cpu_ns + r->hungriest.runq_ns;
	uint64_t t_wanted = t->hungriest.on_cpu_ns + t->hungriest.runq_ns;

	totals_add(&t->amounts, &r->amounts, nr_cols, TOTALS_VALID_ALL);
	hist_add(&t->runq_hist, &r->runq_hist);
	preempters_add(t, r);
	if (r->busiest.on_cpu_ns > t->busiest.on_cpu_ns)
		t->busiest = r->busiest;
	/* the hungriest of both, and for runner-up the hungrier of the rest */
	if (r->runner_up_wanted_ns > t->runner_up_wanted_ns)
		t->runner_up_wanted_ns = r->runner_up_wanted_ns;
	if ((r_wanted < t_wanted ? r_wanted : t_wanted) > t->runner_up_wanted_ns)
		t->runner_up_wanted_ns = r_wanted < t_wanted ? r_wanted : t_wanted;
	if (r_wanted > t_wanted)
		t->hungriest = r->hungriest;
}

/*
 * One record per label: a cgroup removed and made again under the same path (a restarted
 * service) has a record from each in the interval that holds both, and a JSON object cannot
 * hold a key twice. Each removed cgroup's record is added into another of its label, which
 * keeps its cgid (the live one, where there is one). Removed cgroups are few an interval, so
 * only their labels are looked for. The new count of records.
 */
static int records_merge_gone(struct drain *d, int n, uint32_t nr_gone, struct cg_interval *iv)
{
	/* with pools, the interval's threads name their record by index: where each went */
	int *moved = d->pools ? d->record_moved : NULL;
	struct cg_record *g, *r;
	uint32_t k;
	int i, kept = 0;

	for (i = 0; moved && i < n; i++)
		moved[i] = i;
	for (k = 0; k < nr_gone; k++) {
		g = &d->records[d->gone[k]];
		for (i = 0; i < n; i++) {
			r = &d->records[i];
			if (r == g || !r->name || strcmp(r->name, g->name))
				continue;
			record_add(r, g, d->nr_cols);
			g->name = NULL;
			if (moved)
				moved[d->gone[k]] = i;
			break;
		}
	}
	for (i = 0; i < n; i++) {
		if (!d->records[i].name)
			continue;
		if (kept != i) {
			d->records[kept] = d->records[i];
			d->record_slot[kept] = d->record_slot[i];
		}
		if (moved)
			d->record_new[i] = kept;
		kept++;
	}
	for (i = 0; moved && i < iv->nr_all_threads; i++)
		d->all_threads[i].record = d->record_new[moved[d->all_threads[i].record]];
	return kept;
}

/*
 * A record for each group's total slot, the sum of its members' records (a Compose service's
 * replicas), where any member has one: their pools and cgroup files' figures included, so made
 * once both are in. Its slot counts nothing, so the records have room for it. The new count of
 * records, or -errno.
 */
static int records_add_groups(struct drain *d, int n)
{
	struct cg_record *t;
	uint32_t slot;
	int i, members, limited;

	for (slot = 0; slot < d->max_slots; slot++) {
		if (d->group_total[slot] != (int32_t)slot || (uint32_t)n >= d->max_slots)
			continue;
		t = &d->records[n];
		memset(t, 0, sizeof(*t));
		totals_init(&t->amounts, TOTALS_VALID_ALL);
		for (i = 0, members = 0, limited = 0; i < n; i++) {
			if (d->group_total[d->record_slot[i]] != (int32_t)slot ||
			    d->record_slot[i] == slot)
				continue;
			record_add(t, &d->records[i], d->nr_cols);
			t->cpu_limit_cores += d->records[i].cpu_limit_cores;
			limited += d->records[i].cpu_limit_cores > 0;
			members++;
		}
		/* one member without a limit: the group has none */
		if (limited < members)
			t->cpu_limit_cores = 0;
		if (!members)
			continue;
		t->name = d->label(d->label_ctx, slot, 0);
		if (!t->name)
			return -errno;
		d->record_slot[n++] = slot;
	}
	return n;
}

/* slot_record for the records [0, n): each one's index by its slot, -1 for other slots. */
static void records_index(struct drain *d, int n, uint32_t nr_slots)
{
	uint32_t s;
	int r;

	for (s = 0; s < nr_slots; s++)
		d->slot_record[s] = -1;
	for (r = 0; r < n; r++)
		d->slot_record[d->record_slot[r]] = r;
}

/*
 * With pools: each cgroup's record becomes the sum of its pools (its own slot counted the
 * threads of pools past its last, POOL_OTHER); every pool is added in, the ones not shown too,
 * so that the sum is exact whatever is shown. Then, active_only, the records that did nothing
 * with their pools in go: a cgroup whose threads all count in pools has an empty slot of its
 * own. The new count of records.
 */
static int records_sum_pools(struct drain *d, int n, int np, uint32_t nr_slots, bool active_only)
{
	int k, r, kept = 0;

	records_index(d, n, nr_slots);
	for (r = 0; r < n; r++)
		record_preempters(d, &d->records[r], &d->top[d->record_slot[r]]);
	for (k = 0; k < np; k++) {
		r = d->pool_owner[k] < nr_slots ? d->slot_record[d->pool_owner[k]] : -1;
		if (r < 0)
			continue;
		record_preempters(d, &d->pool_records[k], &d->top[d->pool_slot[k]]);
		if (d->pool_records[k].pool != POOL_OTHER)
			record_add(&d->records[r], &d->pool_records[k], d->nr_cols);
	}
	for (r = 0; r < n; r++) {
		if (active_only && !record_active(&d->records[r]))
			continue;
		if (kept != r) {
			d->records[kept] = d->records[r];
			d->record_slot[kept] = d->record_slot[r];
		}
		kept++;
	}
	records_index(d, kept, nr_slots);
	return kept;
}

/* The record of pool record k's cgroup, or -1 (a cgroup without one: idle, not listed). */
static int pool_record_of(const struct drain *d, int k, uint32_t nr_slots)
{
	return d->pool_owner[k] < nr_slots ? d->slot_record[d->pool_owner[k]] : -1;
}

/*
 * With pools: the pools of the records [0, n), listed by cgroup in iv->pools (the part its own
 * slot counted, POOL_OTHER, first), labelled as their cgroup: in passes (how many each record
 * has, then each to its place), not a pass over the pools for each record (1,000 cgroups with
 * 5 pools each in the all-cgroups mode).
 */
static void records_list_pools(struct drain *d, int n, int np, uint32_t nr_slots,
			       struct cg_interval *iv)
{
	size_t *at = d->record_threads;
	struct cg_record *p;
	int k, r, own;

	memset(at, 0, ((size_t)n + 1) * sizeof(*at));
	for (k = 0; k < np; k++)
		if ((r = pool_record_of(d, k, nr_slots)) >= 0 && !record_empty(&d->pool_records[k]))
			at[r + 1]++;
	for (r = 0; r < n; r++) {
		at[r + 1] += at[r];
		d->records[r].first_pool = (int)at[r];
		d->records[r].nr_pools = (int)(at[r + 1] - at[r]);
	}
	for (own = 1; own >= 0; own--) {
		for (k = 0; k < np; k++) {
			p = &d->pool_records[k];
			r = pool_record_of(d, k, nr_slots);
			if (r < 0 || (p->pool == POOL_OTHER) != own || record_empty(p))
				continue;
			p->name = d->records[r].name;
			p->container = d->records[r].container;
			p->first_waker = p->nr_wakers = 0;
			d->pools_out_slot[at[r]] = d->pool_slot[k];
			d->pools_out[at[r]++] = *p;
		}
	}
	iv->pools = d->pools_out;
	iv->nr_pools = (int)at[n];
}

int drain__threads(struct drain *d, const struct cg_thread_rec *recs, size_t nr, uint32_t top)
{
	size_t cap = nr * CG_MAX_NEST;
	void *grown;

	if (cap > d->all_threads_cap) {
		grown = realloc(d->all_threads, cap * sizeof(*d->all_threads));
		if (!grown)
			return -ENOMEM;
		d->all_threads = grown;
		d->all_threads_cap = cap;
	}
	d->thread_recs = recs;
	d->nr_thread_recs = nr;
	d->threads_top = top;
	return 0;
}

/* Whether thread x ranks before y: busier, else the lower thread id. */
static bool thread_before(const struct cg_interval_thread *x, const struct cg_interval_thread *y)
{
	if (x->busy_ns != y->busy_ns)
		return x->busy_ns > y->busy_ns;
	return x->rec->tid < y->rec->tid;
}

static int thread_order(const void *a, const void *b)
{
	return thread_before(a, b) ? -1 : thread_before(b, a);
}

static void thread_swap(struct cg_interval_thread *a, struct cg_interval_thread *b)
{
	struct cg_interval_thread x = *a;

	*a = *b;
	*b = x;
}

/* Sift t[i] down the heap t[0, n), whose root ranks last of all. */
static void heap_down(struct cg_interval_thread *t, size_t n, size_t i)
{
	size_t c;

	for (c = 2 * i + 1; c < n; i = c, c = 2 * i + 1) {
		if (c + 1 < n && thread_before(&t[c], &t[c + 1]))
			c++;
		if (!thread_before(&t[i], &t[c]))
			break;
		thread_swap(&t[i], &t[c]);
	}
}

/*
 * The top busiest of t[0, n) to its front, in rank order: a heap of top threads that the others
 * pass through, not a sort of them all (10,000 threads of a pool, 10 rows).
 */
static void threads_top(struct cg_interval_thread *t, size_t n, size_t top)
{
	size_t i;

	if (top > n)
		top = n;
	if (top < n) {
		for (i = top / 2; i-- > 0;)
			heap_down(t, top, i);
		for (i = top; i < n; i++) {
			if (top && thread_before(&t[i], &t[0])) {
				thread_swap(&t[0], &t[i]);
				heap_down(t, top, 0);
			}
		}
	}
	if (top)
		qsort(t, top, sizeof(*t), thread_order);
}

/*
 * The record of the cgroup whose row thread rec has for its k-th slot, or -1: the slot's
 * watched cgroup, when the drain has a record for it.
 */
static int thread_record_of(const struct drain *d, const struct cg_thread_rec *rec, uint32_t k,
			    uint32_t nr_slots)
{
	uint32_t owner = rec->owner[k];

	if (owner >= nr_slots || rec->slot[k] >= d->max_slots)
		return -1;
	return d->slot_record[owner];
}

/* Thread rec as a record's thread: its times in the interval, its id and name. */
static void record_thread_of(struct cg_record_thread *t, const struct cg_thread_rec *rec)
{
	t->on_cpu_ns = rec->time_ns[CG_ONCPU];
	t->runq_ns = rec->time_ns[CG_RUNQ];
	t->tid = rec->tid;
	memcpy(t->comm, rec->comm, CG_COMM_LEN);
	t->comm[strnlen(t->comm, CG_COMM_LEN)] = '\0';
}

/* A record of thread t for thread-stats.csv: its figures, its pool, itself as busiest. */
static void thread_row(struct cg_record *r, const struct cg_interval_thread *t,
		       const struct cg_record *owner)
{
	const struct cg_thread_rec *rec = t->rec;
	int s, k;

	memset(r, 0, sizeof(*r));
	r->name = owner->name;
	r->cgid = owner->cgid;
	r->pool = t->pool;
	r->thread = rec;
	r->tasks = !rec->exited;
	for (s = 0; s < CG_THREAD_TIMES; s++)
		r->time_ns[s] = rec->time_ns[s];
	for (k = 0; k < CG_THREAD_COUNTS; k++)
		r->count[k] = rec->count[k];
	record_thread_of(&r->busiest, rec);
	r->busiest.runq_ns = 0;
	record_thread_of(&r->hungriest, rec);
}

/*
 * The thread of t[0, n) that wanted a CPU most: on-CPU and run-queue time, as the kernel counts
 * them (sum_exec_runtime, run_delay); the lower id on a tie. NULL when none did; *runner_up
 * the next one's.
 */
static const struct cg_thread_rec *threads_hungriest(const struct cg_interval_thread *t, size_t n,
						     uint64_t *runner_up)
{
	const struct cg_thread_rec *best = NULL;
	uint64_t most = 0, wanted;
	size_t i;

	*runner_up = 0;
	for (i = 0; i < n; i++) {
		wanted = t[i].rec->time_ns[CG_ONCPU] + t[i].rec->time_ns[CG_RUNQ];
		if (wanted > most || (wanted && wanted == most && t[i].rec->tid < best->tid)) {
			*runner_up = most;
			most = wanted;
			best = t[i].rec;
		} else if (wanted > *runner_up) {
			*runner_up = wanted;
		}
	}
	return best;
}

/*
 * With pools: each thread record once for every cgroup it counts in (a watched cgroup and its
 * watched ancestors), by the slots it counts in, ranked; and records of each cgroup's busiest.
 */
static int records_threads(struct drain *d, const struct cg_slot_snap *snap, uint32_t nr_slots,
			   int n, struct cg_interval *iv)
{
	const struct cg_thread_rec *rec;
	struct cg_interval_thread *t;
	size_t i, start, nr, rows, *at = d->record_threads;
	uint32_t k, s;
	int r, record;
	void *grown;

	records_index(d, n, nr_slots);
	/* by record without a sort: how many each has, then each thread to its record's place */
	memset(at, 0, ((size_t)n + 1) * sizeof(*at));
	for (i = 0; i < d->nr_thread_recs; i++)
		for (k = 0, rec = &d->thread_recs[i]; k < rec->nslots && k < CG_MAX_NEST; k++)
			if ((record = thread_record_of(d, rec, k, nr_slots)) >= 0)
				at[record + 1]++;
	for (r = 0; r < n; r++)
		at[r + 1] += at[r];
	nr = at[n];
	for (i = 0; i < d->nr_thread_recs; i++) {
		rec = &d->thread_recs[i];
		for (k = 0; k < rec->nslots && k < CG_MAX_NEST; k++) {
			record = thread_record_of(d, rec, k, nr_slots);
			if (record < 0)
				continue;
			s = rec->slot[k];
			/*
			 * A pool slot taken after this drain's snapshot has no name from it yet:
			 * its name is the pattern of the name the thread had when it took it
			 */
			if (rec->owner[k] != s && (s >= nr_slots || !snap[s].pool_of))
				cg_pool_name(rec->comm, d->pool_names[s], d->pool_exact);
			t = &d->all_threads[at[record]++];
			t->rec = rec;
			t->record = record;
			t->pool = rec->owner[k] == s ? POOL_OTHER : d->pool_names[s];
			t->busy_ns = rec->time_ns[CG_ONCPU] + rec->time_ns[CG_RUNQ] +
				     rec->time_ns[CG_BLOCKED];
		}
	}
	/* each thread's row at most once: --threads=100000 is not 100,000 records a cgroup */
	rows = (size_t)n * d->threads_top < nr ? (size_t)n * d->threads_top : nr;
	if (rows > d->thread_rows_cap) {
		grown = realloc(d->thread_rows, rows * sizeof(*d->thread_rows));
		if (!grown)
			return -ENOMEM;
		d->thread_rows = grown;
		d->thread_rows_cap = rows;
	}
	iv->nr_threads = 0;
	/* record r's threads are all_threads[start, at[r]) now */
	for (r = 0, start = 0; r < n; start = at[r++]) {
		rec = threads_hungriest(&d->all_threads[start], at[r] - start,
					&d->records[r].runner_up_wanted_ns);
		if (rec)
			record_thread_of(&d->records[r].hungriest, rec);
		threads_top(&d->all_threads[start], at[r] - start, d->threads_top);
		d->records[r].first_thread = iv->nr_threads;
		for (i = start; i < at[r] && i - start < d->threads_top; i++)
			thread_row(&d->thread_rows[iv->nr_threads++], &d->all_threads[i],
				   &d->records[r]);
		d->records[r].nr_threads = iv->nr_threads - d->records[r].first_thread;
	}
	iv->threads = d->thread_rows;
	iv->all_threads = d->all_threads;
	iv->nr_all_threads = (int)nr;
	return 0;
}

/* Record r of slot's cgroup labelled and named by its runtime. 0 or -errno. */
static int record_label(struct drain *d, struct cg_record *r, uint32_t slot, uint64_t cgid)
{
	r->name = d->label(d->label_ctx, slot, cgid);
	if (!r->name)
		return -errno;
	r->container = d->container ? d->container(d->container_ctx, slot, cgid) : NULL;
	return 0;
}

int drain__interval(struct drain *d, const struct cg_slot_snap *snap, uint32_t nr_slots,
		    bool active_only, struct cg_interval *iv)
{
	static const struct cg_slot_snap zero;
	struct cg_record *r;
	uint32_t slot, nr_gone = 0;
	int i, n = 0, np = 0, err;

	if (nr_slots > d->max_slots)
		nr_slots = d->max_slots;
	for (slot = 0; slot < nr_slots; slot++) {
		const struct cg_slot_snap *cur = &snap[slot];
		const struct cg_slot_snap *prev = &d->prev[slot];

		if (!cur->cgid || cg_cgid_pending(cur->cgid)) {
			d->prev[slot] = zero;
			continue;
		}
		if (prev->cgid != cur->cgid || prev->pool_of != cur->pool_of)
			prev = &zero;
		r = cur->pool_of && d->pools ? &d->pool_records[np] : &d->records[n];
		memset(r->counter_valid, 0, sizeof(r->counter_valid));
		r->pool = NULL;
		r->thread = NULL;
		r->first_pool = r->nr_pools = r->first_thread = r->nr_threads = 0;
		r->pools_full = cur->pools_full;
		record_fill(d, r, cur, prev);
		d->prev[slot] = *cur;
		if (r != &d->records[n]) {
			memcpy(d->pool_names[slot], cur->pool, CG_COMM_LEN);
			r->pool = d->pool_names[slot];
			d->pool_slot[np] = slot;
			d->pool_owner[np++] = cur->pool_of - 1;
			continue;
		}
		/* with pools, whether it did anything is known once its pools are in */
		if (active_only && !d->pools && !record_active(r))
			continue;
		if (d->pools) {
			/* what its own slot counted: its pool "(the other pools)" */
			d->pool_records[np] = *r;
			d->pool_records[np].pool = POOL_OTHER;
			d->pool_slot[np] = slot;
			d->pool_owner[np++] = slot;
		}
		d->record_slot[n++] = slot;
	}
	if (d->pools)
		n = records_sum_pools(d, n, np, nr_slots, active_only);
	for (i = 0; i < n; i++) {
		slot = d->record_slot[i];
		err = record_label(d, &d->records[i], slot, snap[slot].cgid);
		if (err)
			return err;
		if (!d->pools) /* with pools, listed as its pools were added */
			record_preempters(d, &d->records[i], &d->top[slot]);
		if (snap[slot].dead)
			d->gone[nr_gone++] = i;
	}
	if (d->pools) {
		records_list_pools(d, n, np, nr_slots, iv);
		if (records_threads(d, snap, nr_slots, n, iv))
			return -ENOMEM;
	}
	iv->records = d->records;
	iv->nr_records = nr_gone ? records_merge_gone(d, n, nr_gone, iv) : n;
	return 0;
}

/*
 * The container and pool of slot (a wake edge's end) by snap; false for a slot out of it or
 * free: an edge of a cgroup gone since.
 */
static bool wake_end(struct drain *d, const struct cg_slot_snap *snap, uint32_t nr_slots,
		     uint32_t slot, const char **container, const char **pool)
{
	uint32_t owner;

	if (slot >= nr_slots || !snap[slot].cgid)
		return false;
	owner = snap[slot].pool_of ? snap[slot].pool_of - 1 : slot;
	*container = d->label(d->label_ctx, owner, snap[slot].cgid);
	if (snap[slot].pool_of) {
		memcpy(d->pool_names[slot], snap[slot].pool, CG_COMM_LEN);
		*pool = d->pool_names[slot];
	} else {
		*pool = POOL_OTHER;
	}
	return *container != NULL;
}

/* By woken pool's slot, then most wakeups first. */
static int wake_row_cmp(const void *a, const void *b)
{
	const struct cg_wake_row *x = a, *y = b;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return x->wakeups > y->wakeups ? -1 : x->wakeups < y->wakeups;
}

/*
 * Each pool of iv (listed by records_list_pools(), from its slot) to its edges in iv->wakes,
 * sorted here: one sort and a search a pool, not a pass over the edges for each pool.
 */
static void wakes_to_pools(struct drain *d, struct cg_interval *iv)
{
	struct cg_wake_row *rows = d->wake_rows;
	int j, lo, hi, mid, n = iv->nr_wakes;
	uint32_t slot;

	qsort(rows, (size_t)n, sizeof(*rows), wake_row_cmp);
	for (j = 0; j < iv->nr_pools; j++) {
		slot = d->pools_out_slot[j];
		for (lo = 0, hi = n; lo < hi;) {
			mid = lo + (hi - lo) / 2;
			if (rows[mid].slot < slot)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (hi = lo; hi < n && rows[hi].slot == slot; hi++)
			;
		d->pools_out[j].first_waker = lo;
		d->pools_out[j].nr_wakers = hi - lo;
	}
}

int drain__wakes(struct drain *d, const struct cg_slot_snap *snap, uint32_t nr_slots,
		 const struct cg_wake_edge *edges, const uint64_t *counts, uint32_t nr,
		 struct cg_interval *iv)
{
	struct cg_wake_row *row;
	uint64_t moved;
	uint32_t i, waker;

	iv->nr_wakes = 0;
	iv->wakes = d->wake_rows;
	if (nr > CG_WAKE_EDGES)
		nr = CG_WAKE_EDGES;
	if (nr_slots > d->max_slots)
		nr_slots = d->max_slots;
	for (i = 0; i < nr; i++) {
		if (!__atomic_load_n(&edges[i].set, __ATOMIC_ACQUIRE) ||
		    counts[i] <= d->wake_prev[i])
			continue;
		moved = counts[i] - d->wake_prev[i];
		d->wake_prev[i] = counts[i];
		row = &d->wake_rows[iv->nr_wakes];
		if (!wake_end(d, snap, nr_slots, edges[i].pair.wakee_slot, &row->container,
			      &row->pool))
			continue;
		waker = edges[i].pair.waker_slot;
		row->waker_container = "";
		if (waker == CG_WAKER_TIMER)
			row->waker_pool = "(timer)";
		else if (waker == CG_WAKER_INTERRUPT)
			row->waker_pool = "(interrupt)";
		else if (waker >= CG_WAKER_UNWATCHED ||
			 !wake_end(d, snap, nr_slots, waker, &row->waker_container,
				   &row->waker_pool))
			row->waker_pool = "(unwatched)";
		row->wakeups = moved;
		row->slot = edges[i].pair.wakee_slot;
		iv->nr_wakes++;
	}
	wakes_to_pools(d, iv);
	return 0;
}

int drain__add_groups(struct drain *d, struct cg_interval *iv)
{
	int n;

	if (!d->group_total)
		return 0;
	n = records_add_groups(d, iv->nr_records);
	if (n < 0)
		return n;
	iv->nr_records = n;
	return 0;
}

int drain__set_group(struct drain *d, uint32_t member, uint32_t total)
{
	uint32_t i;

	if (member >= d->max_slots || total >= d->max_slots)
		return -EINVAL;
	if (!d->group_total) {
		d->group_total = malloc(d->max_slots * sizeof(*d->group_total));
		if (!d->group_total)
			return -ENOMEM;
		for (i = 0; i < d->max_slots; i++)
			d->group_total[i] = -1;
	}
	d->group_total[member] = (int32_t)total;
	d->group_total[total] = (int32_t)total;
	return 0;
}

void drain__set_container(struct drain *d, drain_container_fn container, void *ctx)
{
	d->container = container;
	d->container_ctx = ctx;
}

void drain__set_preempter_label(struct drain *d, drain_cgroup_label_fn label, void *ctx)
{
	d->preempter_label = label;
	d->preempter_ctx = ctx;
}

static uint64_t pair_hash(const struct cg_preempter_key *k)
{
	return hash_u64(k->cgid ^ ((uint64_t)k->slot << 40));
}

static bool pair_is(const struct hash_node *n, const void *key)
{
	const struct cg_preempter_key *a = &container_of(n, struct pair_entry, node)->key, *b = key;

	return a->slot == b->slot && a->cgid == b->cgid;
}

static void pair_free(struct hash_table *t, struct hash_node *n, void *ctx)
{
	(void)ctx;
	hash_table_del(t, n);
	free(container_of(n, struct pair_entry, node));
}

/* Forget the pairs idle too long, listing them in d->stale; those not read this call too. */
static void pair_age(struct hash_table *t, struct hash_node *n, void *ctx)
{
	struct pair_entry *e = container_of(n, struct pair_entry, node);
	struct drain *d = ctx;
	struct cg_preempter_key *grown;

	if (e->seen == d->calls && e->idle < DRAIN_PREEMPTER_IDLE)
		return;
	if (e->seen == d->calls) {
		if (d->stale_cap <= d->stale_cap_used) {
			grown = realloc(d->stale, (d->stale_cap * 2 + 16) * sizeof(*grown));
			if (!grown)
				return; /* kept: tried again next call */
			d->stale = grown;
			d->stale_cap = d->stale_cap * 2 + 16;
		}
		d->stale[d->stale_cap_used++] = e->key;
	}
	hash_table_del(t, n);
	free(e);
}

int drain__preempters(struct drain *d, const struct cg_preempter *pairs, size_t nr,
		      const struct cg_preempter_key **stale, size_t *nr_stale)
{
	struct hash_node *n;
	struct pair_entry *e;
	uint64_t grew;
	size_t i;

	d->calls++;
	memset(d->top, 0, d->max_slots * sizeof(*d->top));
	for (i = 0; i < nr; i++) {
		const struct cg_preempter *p = &pairs[i];

		if (p->key.slot >= d->max_slots)
			continue;
		n = hash_table_find(&d->pairs, pair_hash(&p->key), pair_is, &p->key);
		if (n) {
			e = container_of(n, struct pair_entry, node);
		} else {
			e = calloc(1, sizeof(*e));
			if (!e)
				return -ENOMEM;
			e->key = p->key;
			hash_table_add(&d->pairs, &e->node, pair_hash(&p->key));
		}
		/* a pair first read now (or made again after it was forgotten): all of it is new */
		grew = p->count >= e->count ? p->count - e->count : p->count;
		e->count = p->count;
		e->seen = d->calls;
		e->idle = grew ? 0 : e->idle + 1;
		if (grew)
			top_insert(&d->top[p->key.slot], p->key.cgid, grew);
	}
	d->stale_cap_used = 0;
	hash_table_visit(&d->pairs, pair_age, d);
	*stale = d->stale;
	*nr_stale = d->stale_cap_used;
	return 0;
}

void drain__free(struct drain *d)
{
	if (!d)
		return;
	hash_table_visit(&d->pairs, pair_free, NULL);
	hash_table_fini(&d->pairs);
	free(d->prev);
	free(d->records);
	free(d->group_total);
	free(d->gone);
	free(d->top);
	free(d->stale);
	free(d->record_slot);
	free(d->pool_records);
	free(d->pools_out);
	free(d->pools_out_slot);
	free(d->pool_owner);
	free(d->pool_slot);
	free(d->record_moved);
	free(d->record_new);
	free(d->wake_prev);
	free(d->wake_rows);
	free(d->pool_names);
	free(d->slot_record);
	free(d->record_threads);
	free(d->all_threads);
	free(d->thread_rows);
	free(d);
}
