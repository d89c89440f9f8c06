// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The serial-stage rule (user/core/stages.c, docs/metrics.md "Serial stages"): a thread that
 * wanted a CPU (ran or waited for one) 0.9 of the time or more, its container's other threads
 * less than half of that, over at least half of the time it was seen in, is named, and no
 * other; partial intervals weigh what they cover; a thread that exited is kept only if it was
 * one; a tid used again is a new thread.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/stages.h"

#define MS 1000000ULL

static struct cg_record records[1] = { { .name = "broker" } };

/* Each thread's life so far, by tid, as the collector's records carry it; reset by its exit. */
static struct {
	uint32_t intervals;
	uint64_t lived_ns;
	uint64_t total_ns[CG_THREAD_TIMES];
} life[64];

static struct stages *stages_new(void)
{
	memset(life, 0, sizeof(life));
	return stages__new();
}

/*
 * One interval of 1 s with these threads: on-CPU and run-queue ms each (runq_ms NULL: none),
 * the ms each was seen in (seen_ms NULL: all; the rest of it asleep), and which ones exit.
 */
static void add_seen(struct stages *st, int n, const uint32_t *tids, const uint64_t *on_ms,
		     const uint64_t *runq_ms, const uint64_t *seen_ms, const uint32_t *exited)
{
	static struct cg_thread_rec recs[8];
	static struct cg_interval_thread all[8];
	static struct cg_record pool = { .name = "broker", .pool = "w-N" };
	struct cg_interval iv = { .interval_ns = 1000 * MS, .nr_records = 1, .records = records };
	int i;

	memset(records[0].time_ns, 0, sizeof(records[0].time_ns));
	for (i = 0; i < n; i++) {
		uint64_t runq = runq_ms ? runq_ms[i] : 0, seen = seen_ms ? seen_ms[i] : 1000;
		int s;

		recs[i] = (struct cg_thread_rec){ .tid = tids[i], .pid = 1, .exited = exited[i] };
		snprintf(recs[i].comm, sizeof(recs[i].comm), "w-%u", tids[i]);
		recs[i].time_ns[CG_ONCPU] = on_ms[i] * MS;
		recs[i].time_ns[CG_RUNQ] = runq * MS;
		recs[i].time_ns[CG_SLEEP] = (seen - on_ms[i] - runq) * MS;
		life[tids[i]].intervals++;
		life[tids[i]].lived_ns += 1000 * MS;
		for (s = 0; s < CG_THREAD_TIMES; s++) {
			life[tids[i]].total_ns[s] += recs[i].time_ns[s];
			records[0].time_ns[s] += recs[i].time_ns[s];
		}
		recs[i].intervals = life[tids[i]].intervals;
		recs[i].lived_ns = life[tids[i]].lived_ns;
		memcpy(recs[i].total_ns, life[tids[i]].total_ns, sizeof(recs[i].total_ns));
		if (exited[i])
			memset(&life[tids[i]], 0, sizeof(life[0]));
		all[i] = (struct cg_interval_thread){ &recs[i], 0, "w-N", on_ms[i] * MS };
	}
	memcpy(pool.time_ns, records[0].time_ns, sizeof(pool.time_ns));
	/* the container's hungriest thread and the runner-up, as the drain finds them */
	memset(&records[0].hungriest, 0, sizeof(records[0].hungriest));
	records[0].runner_up_wanted_ns = 0;
	for (i = 0; i < n; i++) {
		uint64_t wanted = recs[i].time_ns[CG_ONCPU] + recs[i].time_ns[CG_RUNQ];
		uint64_t most = records[0].hungriest.on_cpu_ns + records[0].hungriest.runq_ns;

		if (wanted > most) {
			records[0].runner_up_wanted_ns = most;
			records[0].hungriest.on_cpu_ns = recs[i].time_ns[CG_ONCPU];
			records[0].hungriest.runq_ns = recs[i].time_ns[CG_RUNQ];
			records[0].hungriest.tid = recs[i].tid;
		} else if (wanted > records[0].runner_up_wanted_ns) {
			records[0].runner_up_wanted_ns = wanted;
		}
	}
	iv.nr_all_threads = n;
	iv.all_threads = all;
	iv.nr_pools = 1;
	iv.pools = &pool;
	CHECK(stages__add(st, &iv) == 0);
}

static void add(struct stages *st, int n, const uint32_t *tids, const uint64_t *on_ms,
		const uint32_t *exited)
{
	add_seen(st, n, tids, on_ms, NULL, NULL, exited);
}

static cJSON *summary_of(struct stages *st)
{
	cJSON *obj = cJSON_CreateObject();

	CHECK(stages__json(st, "broker", obj) == 0);
	return obj;
}

static void test_rule(void)
{
	static const uint32_t tids[] = { 10, 11, 12 }, live[] = { 0, 0, 0 };
	struct stages *st = stages_new();
	cJSON *obj, *stages, *first;
	int i;

	/* 10: 0.95 in 3 of 4; 11: 0.95 in 1 of 4; 12: 0.3 always */
	for (i = 0; i < 4; i++) {
		uint64_t on[] = { i == 0 ? 300 : 950, i == 0 ? 950 : 100, 300 };

		add(st, 3, tids, on, live);
	}
	obj = summary_of(st);
	stages = cJSON_GetObjectItem(obj, "serialStages");
	CHECK(cJSON_GetArraySize(stages) == 1);
	first = cJSON_GetArrayItem(stages, 0);
	CHECK(first && cJSON_GetObjectItem(first, "tid")->valuedouble == 10);
	CHECK(first && cJSON_GetObjectItem(first, "serialIntervals")->valuedouble == 3);
	CHECK(first && cJSON_GetObjectItem(first, "intervals")->valuedouble == 4);
	/* from its first sight, before it was first serial: (300 + 3 * 950) ms in 4 s */
	CHECK(first && fabs(cJSON_GetObjectItem(first, "meanCores")->valuedouble - 0.79) < 0.006);
	CHECK_STR(
		cJSON_GetObjectItem(obj, "serialStage")->valuestring,
		"broker: thread w-N (tid 10) wanted 0.95 of a core (ran 0.95, waited 0.00) in 3 of "
		"4 intervals");
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(obj, "topPools")) == 1);
	cJSON_Delete(obj);
	stages__free(st);
}

/* A thread that exits is kept only as a serial stage, and its tid may come back as another. */
static void test_exits(void)
{
	static const uint32_t tid[] = { 20 }, live[] = { 0 }, gone[] = { 1 };
	static const uint64_t busy[] = { 990 }, idle[] = { 10 };
	struct stages *st = stages_new();
	cJSON *obj;

	add(st, 1, tid, busy, live);
	add(st, 1, tid, busy, gone); /* serial in 2 of 2: kept */
	add(st, 1, tid, idle, live); /* tid 20 again, a new thread */
	add(st, 1, tid, idle, gone); /* not serial: forgotten */
	obj = summary_of(st);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(obj, "serialStages")) == 1);
	CHECK(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(obj, "serialStages"), 0),
				  "intervals")
		      ->valuedouble == 2);
	cJSON_Delete(obj);
	stages__free(st);
}

/* Eight threads at a quarter of a core each: busy, none serial, no verdict line. */
static void test_none(void)
{
	static const uint32_t tids[] = { 1, 2, 3, 4, 5, 6, 7, 8 }, live[8];
	static const uint64_t on[] = { 250, 250, 250, 250, 250, 250, 250, 250 };
	struct stages *st = stages_new();
	cJSON *obj;
	int i;

	for (i = 0; i < 5; i++)
		add(st, 8, tids, on, live);
	obj = summary_of(st);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(obj, "serialStages")) == 0);
	CHECK(!cJSON_GetObjectItem(obj, "serialStage"));
	cJSON_Delete(obj);
	stages__free(st);
}

/*
 * On a busy host: a thread that ran 0.43 of a core and waited 0.57 for one is the stage, with
 * both parts said, and the workers that each work a little are not; two threads that each want
 * a core are a parallel load, and neither is named.
 */
static void test_demand(void)
{
	static const uint32_t tids[] = { 30, 31, 32, 33 }, live[4];
	static const uint64_t on[] = { 430, 30, 30, 30 }, runq[] = { 570, 40, 40, 40 };
	static const uint64_t two_on[] = { 450, 450, 20, 20 }, two_runq[] = { 500, 500, 10, 10 };
	struct stages *st = stages_new();
	cJSON *obj, *first;
	int i;

	for (i = 0; i < 5; i++)
		add_seen(st, 4, tids, on, runq, NULL, live);
	obj = summary_of(st);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(obj, "serialStages")) == 1);
	first = cJSON_GetArrayItem(cJSON_GetObjectItem(obj, "serialStages"), 0);
	CHECK(first && cJSON_GetObjectItem(first, "tid")->valuedouble == 30);
	CHECK(first && fabs(cJSON_GetObjectItem(first, "serialCores")->valuedouble - 0.43) < 1e-9);
	CHECK(first &&
	      fabs(cJSON_GetObjectItem(first, "serialWaitedCores")->valuedouble - 0.57) < 1e-9);
	CHECK(first && fabs(cJSON_GetObjectItem(first, "runqSeconds")->valuedouble - 2.85) < 1e-9);
	CHECK_STR(
		cJSON_GetObjectItem(obj, "serialStage")->valuestring,
		"broker: thread w-N (tid 30) wanted 1.00 of a core (ran 0.43, waited 0.57) in 5 of "
		"5 intervals");
	cJSON_Delete(obj);
	stages__free(st);

	st = stages_new();
	for (i = 0; i < 5; i++)
		add_seen(st, 4, tids, two_on, two_runq, NULL, live);
	obj = summary_of(st);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(obj, "serialStages")) == 0);
	cJSON_Delete(obj);
	stages__free(st);
}

/*
 * Partial intervals weigh what they cover: a spinner that starts 0.8 s into its first interval
 * and exits 0.1 s into its third is serial over 1.3 s of 1.3 (two intervals of three before);
 * one seen all through its 3 intervals but serial in only its 0.3 s first one is not.
 */
static void test_partial(void)
{
	static const uint32_t tid[] = { 40 }, live[] = { 0 }, gone[] = { 1 };
	static const uint64_t first[] = { 200 }, whole[] = { 1000 }, last[] = { 100 };
	static const uint64_t lazy[] = { 100 };
	struct stages *st = stages_new();
	cJSON *obj;

	add_seen(st, 1, tid, first, NULL, first, live);
	add_seen(st, 1, tid, whole, NULL, NULL, live);
	add_seen(st, 1, tid, last, NULL, last, gone);
	obj = summary_of(st);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(obj, "serialStages")) == 1);
	cJSON_Delete(obj);
	stages__free(st);

	st = stages_new();
	add_seen(st, 1, tid, first, NULL, first, live);
	add(st, 1, tid, lazy, live);
	add(st, 1, tid, lazy, gone);
	obj = summary_of(st);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(obj, "serialStages")) == 0);
	cJSON_Delete(obj);
	stages__free(st);
}

/*
 * A process that lives a millisecond of an interval and spins through it (every /bin/true of
 * a churn in the every-cgroup mode) is no stage: serial over all of the time it was seen in,
 * but for less than an interval in all. One that spins through a whole interval's time, split
 * over two, is.
 */
static void test_short(void)
{
	static const uint32_t tid[] = { 41 }, live[] = { 0 }, gone[] = { 1 };
	static const uint64_t blink[] = { 1 }, late[] = { 600 }, early[] = { 400 };
	struct stages *st = stages_new();
	cJSON *obj;

	add_seen(st, 1, tid, blink, NULL, blink, gone);
	obj = summary_of(st);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(obj, "serialStages")) == 0);
	cJSON_Delete(obj);
	stages__free(st);

	st = stages_new();
	add_seen(st, 1, tid, late, NULL, late, live);
	add_seen(st, 1, tid, early, NULL, early, gone);
	obj = summary_of(st);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(obj, "serialStages")) == 1);
	cJSON_Delete(obj);
	stages__free(st);
}

int main(void)
{
	test_rule();
	test_short();
	test_demand();
	test_partial();
	test_exits();
	test_none();
	return check_done();
}
