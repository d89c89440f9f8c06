// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The drain on synthetic snapshots: what a slot did between two, perf counts scaled once. */
#include <stdlib.h>

#include "check.h"
#include "core/drain.h"
#include "lib/util.h"

static const char *label(void *ctx, uint32_t slot, uint64_t cgid)
{
	(void)ctx;
	(void)cgid;
	return slot ? "b" : "a";
}

static void test_counter_scaled(void)
{
	CHECK(counter_scaled(1000, 100, 100) == 1000); /* on the PMU the whole time */
	CHECK(counter_scaled(1000, 100, 50) == 2000);  /* half the time: doubled */
	CHECK(counter_scaled(1000, 0, 0) == 1000);     /* nothing known: as counted */
	CHECK(counter_scaled(0, 10, 0) == 0);	       /* enabled, never on the PMU */
	CHECK(counter_scaled(3, 10, 7) == 4);	       /* rounded to nearest: 4.29 */
}

/*
 * An event multiplexed over an interval read in two pieces: 1,000 counted in 50 of 100 ms
 * enabled, then a piece of 10 ms enabled while it was off the PMU. Scaled once over the
 * interval that is 1,000 * 110 / 50 = 2,200; scaled piece by piece, 2,000 + 0 = 2,000.
 */
static void test_multiplexed_interval(void)
{
	struct drain_column col = { .source = CG_EVENT_FROM_PERF, .perf_index = 0 };
	static struct cg_slot_snap snap[2];
	struct cg_interval iv = {};
	struct drain *d;

	d = drain__new(2, &col, 1, label, NULL);
	CHECK(d != NULL);
	if (!d)
		return;
	snap[0].cgid = 7;
	snap[0].counter[0] = 500;
	snap[0].enabled[0] = 1000;
	snap[0].running[0] = 1000;
	drain__baseline(d, snap, 1);

	snap[0].counter[0] += 1000;
	snap[0].enabled[0] += 100 + 10;
	snap[0].running[0] += 50;
	snap[0].time_ns[CG_ONCPU] = 1; /* active */
	CHECK(drain__interval(d, snap, 1, true, &iv) == 0);
	CHECK(iv.nr_records == 1);
	CHECK(iv.nr_records == 1 && iv.records[0].counter_valid[0] &&
	      iv.records[0].counter[0] == 2200);

	/* the next interval on the PMU throughout: as counted */
	snap[0].counter[0] += 300;
	snap[0].enabled[0] += 100;
	snap[0].running[0] += 100;
	snap[0].time_ns[CG_ONCPU] = 2;
	CHECK(drain__interval(d, snap, 1, true, &iv) == 0);
	CHECK(iv.nr_records == 1 && iv.records[0].counter[0] == 300);

	/* a slot reused by another cgroup is measured from zero */
	snap[0].cgid = 8;
	snap[0].counter[0] = 40;
	snap[0].enabled[0] = snap[0].running[0] = 10;
	CHECK(drain__interval(d, snap, 1, true, &iv) == 0);
	CHECK(iv.nr_records == 1 && iv.records[0].cgid == 8 && iv.records[0].counter[0] == 40);
	drain__free(d);
}

static const char *same_label(void *ctx, uint32_t slot, uint64_t cgid)
{
	(void)ctx;
	(void)cgid;
	return slot == 2 ? "other" : "svc";
}

/*
 * A service restarted within one interval: slot 0 holds its removed cgroup, slot 1 the one
 * made again under the path (same label), slot 2 another. One record for the label, with the
 * figures of both and the live cgroup's id; the other untouched.
 */
static void test_same_label_merged(void)
{
	struct drain_column col = { .source = CG_EVENT_CORE_TASK_CLOCK, .perf_index = -1 };
	static struct cg_slot_snap snap[3];
	struct cg_interval iv = {};
	const struct cg_record *r;
	struct drain *d;

	d = drain__new(3, &col, 1, same_label, NULL);
	CHECK(d != NULL);
	if (!d)
		return;
	drain__baseline(d, snap, 3);
	snap[0] = (struct cg_slot_snap){
		.cgid = 10, .dead = 1, .count[CG_NVCSW] = 4, .count[CG_RUNQ_WAITS] = 1
	};
	snap[0].time_ns[CG_ONCPU] = 300;
	snap[0].time_ns[CG_STOLEN] = 5;
	snap[0].runq_max_ns = 900;
	snap[0].runq_min_inv = ~900ULL;
	snap[0].runq_hist[cg_hist_bucket(900)] = 1;
	snap[1] = (struct cg_slot_snap){
		.cgid = 11, .tasks = 2, .count[CG_NVCSW] = 6, .count[CG_RUNQ_WAITS] = 1
	};
	snap[1].time_ns[CG_ONCPU] = 200;
	snap[1].runq_max_ns = 100;
	snap[1].runq_min_inv = ~100ULL;
	snap[1].runq_hist[cg_hist_bucket(100)] = 1;
	snap[2] = (struct cg_slot_snap){ .cgid = 12, .tasks = 1, .count[CG_NVCSW] = 1 };
	snap[2].time_ns[CG_ONCPU] = 7;
	CHECK(drain__interval(d, snap, 3, false, &iv) == 0);
	CHECK(iv.nr_records == 2);
	if (iv.nr_records != 2)
		goto out;
	r = &iv.records[0];
	CHECK_STR(r->name, "svc");
	CHECK(r->cgid == 11 && r->tasks == 2 && r->count[CG_NVCSW] == 10 &&
	      r->count[CG_RUNQ_WAITS] == 2);
	CHECK(r->time_ns[CG_ONCPU] == 500 && r->time_ns[CG_STOLEN] == 5);
	CHECK(r->runq_max_ns == 900 && r->runq_hist.count == 2);
	CHECK(r->runq_min_inv == ~100ULL);
	/* task-clock is on-CPU + stolen, of both cgroups */
	CHECK(r->counter_valid[0] && r->counter[0] == 505);
	r = &iv.records[1];
	CHECK_STR(r->name, "other");
	CHECK(r->cgid == 12 && r->count[CG_NVCSW] == 1 && r->time_ns[CG_ONCPU] == 7);
out:
	drain__free(d);
}

/*
 * The software events taken from the scheduler programs' figures, not from a perf counter:
 * each column is the interval's growth of the figure it stands for, and is valid without one.
 */
static void test_core_sourced(void)
{
	static const int sources[] = {
		CG_EVENT_CORE_TASK_CLOCK,   CG_EVENT_CORE_CONTEXT_SWITCHES,
		CG_EVENT_CORE_MIGRATIONS,   CG_EVENT_CORE_PAGE_FAULTS,
		CG_EVENT_CORE_MINOR_FAULTS, CG_EVENT_CORE_MAJOR_FAULTS,
	};
	static const uint64_t want[] = { 1000 + 30, 7 + 2, 3, 40 + 5, 40, 5 };
	struct drain_column cols[ARRAY_SIZE(sources)];
	static struct cg_slot_snap snap[1];
	struct cg_interval iv = {};
	const struct cg_record *r;
	struct drain *d;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sources); i++)
		cols[i] = (struct drain_column){ .source = sources[i], .perf_index = -1 };
	d = drain__new(1, cols, ARRAY_SIZE(cols), label, NULL);
	CHECK(d != NULL);
	if (!d)
		return;
	snap[0] = (struct cg_slot_snap){ .cgid = 5,
					 .count[CG_NVCSW] = 100,
					 .count[CG_MINOR_FAULTS] = 900 };
	snap[0].time_ns[CG_ONCPU] = 5000;
	drain__baseline(d, snap, 1);
	snap[0].time_ns[CG_ONCPU] += 1000;
	snap[0].time_ns[CG_STOLEN] += 30;
	snap[0].count[CG_NVCSW] += 7;
	snap[0].count[CG_NIVCSW] += 2;
	snap[0].count[CG_MIGRATIONS] += 3;
	snap[0].count[CG_MINOR_FAULTS] += 40;
	snap[0].count[CG_MAJOR_FAULTS] += 5;
	CHECK(drain__interval(d, snap, 1, true, &iv) == 0);
	CHECK(iv.nr_records == 1);
	if (iv.nr_records != 1)
		goto out;
	r = &iv.records[0];
	for (i = 0; i < ARRAY_SIZE(sources); i++)
		CHECK(r->counter_valid[i] && r->counter[i] == want[i]);
out:
	drain__free(d);
}

static const char *cgroup_label(void *ctx, uint64_t cgid)
{
	(void)ctx;
	return cgid == 7 ? "/seven" : "/other";
}

/* One interval with the preempters map holding pairs: the records of snap's two slots. */
static const struct cg_interval *preempted(struct drain *d, struct cg_slot_snap *snap,
					   const struct cg_preempter *pairs, size_t nr,
					   size_t *nr_stale)
{
	static struct cg_interval iv;
	const struct cg_preempter_key *stale;

	CHECK(drain__preempters(d, pairs, nr, &stale, nr_stale) == 0);
	CHECK(drain__interval(d, snap, 2, false, &iv) == 0);
	CHECK(iv.nr_records == 2);
	return &iv;
}

static bool top_is(const struct cg_record *r, uint64_t cgid, uint64_t count)
{
	return r->nr_preempters > 0 && r->preempters[0].cgid == cgid &&
	       r->preempters[0].count == count;
}

static void test_top_preempter(void)
{
	static struct cg_slot_snap snap[2] = { { .cgid = 1 }, { .cgid = 2 } };
	struct cg_preempter pairs[4] = {
		{ { 0, 0, 7 }, 10 },
		{ { 0, 0, 8 }, 4 },
		{ { 1, 0, 8 }, 3 },
		{ { 9, 0, 7 }, 99 },
	};
	const struct cg_interval *iv;
	struct drain *d;
	size_t stale;
	int i;

	d = drain__new(2, NULL, 0, label, NULL);
	CHECK(d != NULL);
	if (!d)
		return;
	drain__set_preempter_label(d, cgroup_label, NULL);
	drain__baseline(d, snap, 2);
	/* pairs first seen: all of their count is new; a slot beyond the drain's is ignored */
	iv = preempted(d, snap, pairs, 4, &stale);
	CHECK(top_is(&iv->records[0], 7, 10) &&
	      !strcmp(iv->records[0].preempters[0].label, "/seven"));
	CHECK(iv->records[0].nr_preempters == 2 && iv->records[0].preempters[1].cgid == 8 &&
	      iv->records[0].preempters[1].count == 4);
	CHECK(top_is(&iv->records[1], 8, 3) && iv->records[1].nr_preempters == 1);
	/* the interval's growth decides, not the total; a tie goes to the smaller id */
	pairs[0].count = 12;
	pairs[1].count = 6;
	iv = preempted(d, snap, pairs, 2, &stale);
	CHECK(top_is(&iv->records[0], 7, 2) && iv->records[0].preempters[1].cgid == 8);
	CHECK(!iv->records[1].nr_preempters);
	pairs[1].count = 16;
	iv = preempted(d, snap, pairs, 2, &stale);
	CHECK(top_is(&iv->records[0], 8, 10));
	/* idle: forgotten after DRAIN_PREEMPTER_IDLE intervals, listed once to be deleted */
	pairs[0].count = 13;
	pairs[1].count = 17;
	preempted(d, snap, pairs, 2, &stale);
	for (i = 1; i < DRAIN_PREEMPTER_IDLE; i++) {
		iv = preempted(d, snap, pairs, 2, &stale);
		CHECK(stale == 0 && !iv->records[0].nr_preempters);
	}
	preempted(d, snap, pairs, 2, &stale);
	CHECK(stale == 2);
	/* made again by the BPF side after the delete: counted from 0 again */
	pairs[0].count = 3;
	iv = preempted(d, snap, pairs, 1, &stale);
	CHECK(stale == 0 && top_is(&iv->records[0], 7, 3));
	drain__free(d);
}

static const char *watched_label(void *ctx, uint32_t slot, uint64_t cgid)
{
	(void)ctx;
	(void)cgid;
	return slot == 0 ? "broker" : slot == 1 ? "client" : "?";
}

/*
 * With pools, a watched cgroup's record is the sum of its own slot ("(the other pools)") and its
 * pool slots, and the pools are listed by cgroup: slots 0 and 1 are watched, 2 to 4 pools of 0 (4
 * empty: counted into the sum, not shown), 5 a pool of 1.
 */
static void test_pools(void)
{
	static struct cg_slot_snap snap[6];
	struct cg_interval iv = {};
	const struct cg_record *r;
	struct drain *d;
	int s;

	d = drain__new(6, NULL, 0, watched_label, NULL);
	CHECK(d != NULL && drain__set_pools(d, false) == 0);
	if (!d)
		return;
	for (s = 0; s < 6; s++)
		snap[s].cgid = s == 1 || s == 5 ? 21 : 20;
	for (s = 2; s < 6; s++)
		snap[s].pool_of = s == 5 ? 2 : 1;
	memcpy(snap[2].pool, "io-N-N", 7);
	/* a thread may name itself anything, the overflow pool's old name too */
	memcpy(snap[3].pool, "(other)", 8);
	memcpy(snap[4].pool, "gone-N", 7);
	memcpy(snap[5].pool, "main", 5);
	drain__baseline(d, snap, 6);
	snap[2].tasks = 3;
	snap[2].time_ns[CG_ONCPU] = 700;
	snap[2].time_ns[CG_RUNQ] = 40;
	snap[2].count[CG_NVCSW] = 9;
	snap[2].count[CG_RUNQ_WAITS] = 1;
	snap[2].runq_max_ns = 40;
	snap[2].runq_hist[cg_hist_bucket(40)] = 1;
	snap[2].busiest_ns = 300;
	snap[2].busiest_tid = 7;
	snap[3].tasks = 1;
	snap[3].time_ns[CG_ONCPU] = 900;
	snap[3].count[CG_NIVCSW] = 2;
	snap[3].busiest_ns = 900;
	snap[3].busiest_tid = 8;
	snap[0].tasks = 1; /* a thread past the cgroup's last pool */
	snap[0].time_ns[CG_SLEEP] = 1000;
	snap[5].tasks = 1;
	snap[5].time_ns[CG_ONCPU] = 5;
	CHECK(drain__interval(d, snap, 6, false, &iv) == 0);
	CHECK(iv.nr_records == 2 && iv.nr_pools == 4);
	if (iv.nr_records != 2 || iv.nr_pools != 4)
		goto out;
	r = &iv.records[0];
	CHECK_STR(r->name, "broker");
	CHECK(r->tasks == 5 && r->time_ns[CG_ONCPU] == 1600 && r->time_ns[CG_RUNQ] == 40 &&
	      r->time_ns[CG_SLEEP] == 1000);
	CHECK(r->count[CG_NVCSW] == 9 && r->count[CG_NIVCSW] == 2 && r->runq_hist.count == 1);
	CHECK(r->busiest.on_cpu_ns == 900 && r->busiest.tid == 8);
	CHECK(r->first_pool == 0 && r->nr_pools == 3);
	/* longer than a thread's name can be: no pool of a pattern is named so */
	CHECK_STR(iv.pools[0].pool, "(the other pools)");
	CHECK(strlen(iv.pools[0].pool) >= CG_COMM_LEN);
	CHECK(iv.pools[0].tasks == 1 && iv.pools[0].time_ns[CG_SLEEP] == 1000);
	CHECK_STR(iv.pools[1].pool, "io-N-N");
	CHECK_STR(iv.pools[1].name, "broker");
	CHECK(iv.pools[1].tasks == 3 && iv.pools[1].time_ns[CG_ONCPU] == 700);
	CHECK_STR(iv.pools[2].pool, "(other)");
	r = &iv.records[1];
	CHECK_STR(r->name, "client");
	CHECK(r->tasks == 1 && r->time_ns[CG_ONCPU] == 5 && r->first_pool == 3 && r->nr_pools == 1);
	CHECK_STR(iv.pools[3].pool, "main");

	/* the next interval counts from this one, pools and all */
	snap[3].time_ns[CG_ONCPU] += 50;
	CHECK(drain__interval(d, snap, 6, false, &iv) == 0);
	CHECK(iv.nr_records == 2 && iv.records[0].time_ns[CG_ONCPU] == 50);
out:
	drain__free(d);
}

static int labelled[4]; /* by slot: how often every_label() was asked */

static const char *every_label(void *ctx, uint32_t slot, uint64_t cgid)
{
	(void)ctx;
	(void)cgid;
	if (slot < 4)
		labelled[slot]++;
	return slot == 0 ? "/a" : slot == 2 ? "/b" : "?";
}

/*
 * Pools in the all-cgroups mode (active_only): a cgroup whose own slot only slept but whose
 * pool ran has its row, the sum of both, with both listed; one whose own slot and pools only
 * slept has none, and is never labelled (a cgroup that never had a row has no label). Slots:
 * 0 cgroup /a, 1 a pool of it, 2 cgroup /b, 3 a pool of it.
 */
static void test_pools_every_cgroup(void)
{
	static struct cg_slot_snap snap[4];
	struct cg_interval iv = {};
	const struct cg_record *r;
	struct drain *d;
	int s;

	d = drain__new(4, NULL, 0, every_label, NULL);
	CHECK(d != NULL && drain__set_pools(d, false) == 0);
	if (!d)
		return;
	for (s = 0; s < 4; s++)
		snap[s].cgid = s < 2 ? 30 : 31;
	snap[1].pool_of = 1;
	snap[3].pool_of = 3;
	memcpy(snap[1].pool, "io-N", 5);
	memcpy(snap[3].pool, "idle-N", 7);
	drain__baseline(d, snap, 4);
	snap[0].tasks = 1;
	snap[0].time_ns[CG_SLEEP] = 1000;
	snap[1].tasks = 2;
	snap[1].time_ns[CG_ONCPU] = 100;
	snap[1].count[CG_NVCSW] = 3;
	snap[2].tasks = 1;
	snap[2].time_ns[CG_SLEEP] = 1000;
	snap[3].tasks = 4;
	snap[3].time_ns[CG_SLEEP] = 4000;
	CHECK(drain__interval(d, snap, 4, true, &iv) == 0);
	CHECK(iv.nr_records == 1 && iv.nr_pools == 2);
	if (iv.nr_records != 1 || iv.nr_pools != 2)
		goto out;
	r = &iv.records[0];
	CHECK_STR(r->name, "/a");
	CHECK(r->tasks == 3 && r->time_ns[CG_ONCPU] == 100 && r->time_ns[CG_SLEEP] == 1000 &&
	      r->count[CG_NVCSW] == 3);
	CHECK(r->first_pool == 0 && r->nr_pools == 2);
	CHECK_STR(iv.pools[0].pool, "(the other pools)");
	CHECK_STR(iv.pools[0].name, "/a");
	CHECK_STR(iv.pools[1].pool, "io-N");
	CHECK_STR(iv.pools[1].name, "/a");
	CHECK(labelled[2] == 0 && labelled[3] == 0);
out:
	drain__free(d);
}

/*
 * Thread records go to their watched cgroup's record by the owner BPF gives each slot, even
 * when the pool's slot was taken after the snapshot (beyond nr_slots, or not yet in it): its
 * pool is then named from the thread's name.
 */
static void test_thread_new_pool(void)
{
	static struct cg_slot_snap snap[4];
	static struct cg_thread_rec recs[2];
	struct cg_interval iv = {};
	struct drain *d;

	d = drain__new(4, NULL, 0, watched_label, NULL);
	CHECK(d != NULL && drain__set_pools(d, false) == 0);
	if (!d)
		return;
	snap[0].cgid = 20;
	snap[0].tasks = 1;
	drain__baseline(d, snap, 1);
	recs[0] = (struct cg_thread_rec){ .tid = 5, .nslots = 1, .slot = { 3 }, .owner = { 0 } };
	memcpy(recs[0].comm, "ml-worker-12", 13);
	recs[0].time_ns[CG_ONCPU] = 400;
	recs[1] = (struct cg_thread_rec){ .tid = 6, .nslots = 1, .slot = { 0 }, .owner = { 0 } };
	memcpy(recs[1].comm, "late-1", 7);
	recs[1].time_ns[CG_ONCPU] = 100;
	CHECK(drain__threads(d, recs, 2, 10) == 0);
	/* the snapshot knew slot 0 only: slot 3 was taken after it */
	CHECK(drain__interval(d, snap, 1, false, &iv) == 0);
	CHECK(iv.nr_all_threads == 2 && iv.nr_threads == 2);
	if (iv.nr_threads == 2) {
		CHECK(iv.threads[0].thread->tid == 5 && iv.threads[1].thread->tid == 6);
		CHECK_STR(iv.threads[0].pool, "ml-worker-N");
		CHECK_STR(iv.threads[1].pool, "(the other pools)");
		CHECK_STR(iv.threads[0].name, "broker");
	}
	drain__free(d);
}

int main(void)
{
	test_counter_scaled();
	test_top_preempter();
	test_multiplexed_interval();
	test_same_label_merged();
	test_core_sourced();
	test_pools();
	test_pools_every_cgroup();
	test_thread_new_pool();
	return check_done();
}
