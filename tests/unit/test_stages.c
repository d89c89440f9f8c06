// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The serial-stage rule (user/outputs/stages.c, docs/metrics.md "Serial stages"): a thread at
 * 0.9 of a core or more in at least half of the intervals it lived through is named, and no
 * other; a thread that exited is kept only if it was one; a tid used again is a new thread.
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
	uint64_t on_ns;
} life[64];

static struct stages *stages_new(void)
{
	memset(life, 0, sizeof(life));
	return stages__new();
}

/* One interval of 1 s with these threads: on-CPU ms each, and which ones are new or exit. */
static void add(struct stages *st, int n, const uint32_t *tids, const uint64_t *on_ms,
		const uint32_t *exited)
{
	static struct cg_thread_rec recs[8];
	static struct cg_interval_thread all[8];
	static struct cg_record pool = { .name = "broker", .pool = "w-N" };
	struct cg_interval iv = { .interval_ns = 1000 * MS, .nr_records = 1, .records = records };
	int i;

	for (i = 0; i < n; i++) {
		recs[i] = (struct cg_thread_rec){ .tid = tids[i], .pid = 1, .exited = exited[i] };
		snprintf(recs[i].comm, sizeof(recs[i].comm), "w-%u", tids[i]);
		recs[i].time_ns[CG_ONCPU] = on_ms[i] * MS;
		life[tids[i]].intervals++;
		life[tids[i]].on_ns += on_ms[i] * MS;
		recs[i].intervals = life[tids[i]].intervals;
		recs[i].lived_ns = life[tids[i]].intervals * 1000 * MS;
		recs[i].total_ns[CG_ONCPU] = life[tids[i]].on_ns;
		if (exited[i])
			memset(&life[tids[i]], 0, sizeof(life[0]));
		all[i] = (struct cg_interval_thread){ &recs[i], 0, "w-N", on_ms[i] * MS };
	}
	pool.time_ns[CG_ONCPU] = 0;
	for (i = 0; i < n; i++)
		pool.time_ns[CG_ONCPU] += on_ms[i] * MS;
	iv.nr_all_threads = n;
	iv.all_threads = all;
	iv.nr_pools = 1;
	iv.pools = &pool;
	CHECK(stages__add(st, &iv) == 0);
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

	/* 10: 0.95 in 3 of 4; 11: 0.95 in 1 of 4; 12: 0.5 always */
	for (i = 0; i < 4; i++) {
		uint64_t on[] = { i == 0 ? 300 : 950, i == 0 ? 950 : 100, 500 };

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
	CHECK_STR(cJSON_GetObjectItem(obj, "serialStage")->valuestring,
		  "broker: thread w-N (tid 10) ran at 0.95 cores in 3 of 4 intervals");
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

int main(void)
{
	test_rule();
	test_exits();
	test_none();
	return check_done();
}
