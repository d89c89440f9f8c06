// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "summary.h"

static const char *const events[] = { "cycles", "instructions", "taskClockMillis" };

static double num(const cJSON *obj, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!cJSON_IsNumber(item)) {
		fprintf(stderr, "no number at \"%s\"\n", key);
		return -1;
	}
	return item->valuedouble;
}

static bool has(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key) != NULL;
}

static void test_exact(void)
{
	struct cg_record web = {
		.name = "web",
		.tasks = 3,
		.time_ns = { 1500000000, 0, 0, 0 },
		.nvcsw = 250,
	};
	struct cg_interval iv = {
		.epoch_ms = 2000,
		.interval_ns = 500000000,
		.nr_records = 1,
		.records = &web,
	};
	struct summary *s = summary__new();
	char *text;

	CHECK(summary__add(s, &iv) == 0);
	text = summary__to_json(s, 1500, 2000, 3);
	/* 1.5 s on CPU and 250 switches in half a second; no waits, no perf, no host. */
	CHECK_STR(text, "{\"measurement\":{\"startEpochMillis\":1500,\"endEpochMillis\":2000,"
			"\"durationSeconds\":0.5},\"host\":{},"
			"\"containers\":{\"web\":{\"cpus\":3,\"voluntarySwitchesPerSecond\":500,"
			"\"involuntarySwitchesPerSecond\":0,\"migrationsPerSecond\":0,"
			"\"runqWaitsPerSecond\":0,\"runqWaitMillisPerSecond\":0,"
			"\"offCpuSleepMillisPerSecond\":0,\"offCpuBlockedMillisPerSecond\":0,"
			"\"tasks\":3}},"
			"\"allContainers\":{\"cpus\":3,\"voluntarySwitchesPerSecond\":500,"
			"\"involuntarySwitchesPerSecond\":0,\"migrationsPerSecond\":0,"
			"\"runqWaitsPerSecond\":0,\"runqWaitMillisPerSecond\":0,"
			"\"offCpuSleepMillisPerSecond\":0,\"offCpuBlockedMillisPerSecond\":0,"
			"\"tasks\":3},\"droppedEvents\":3}");
	free(text);
	summary__free(s);
}

static void test_empty(void)
{
	struct summary *s = summary__new();
	char *text;

	summary__set_messages(s, 1e6);
	text = summary__to_json(s, 10, 10, 0);
	/* Nothing measured: no rates, and no CPU per message. */
	CHECK_STR(text, "{\"measurement\":{\"startEpochMillis\":10,\"endEpochMillis\":10,"
			"\"durationSeconds\":0},\"host\":{},\"containers\":{},"
			"\"allContainers\":{\"tasks\":0},\"droppedEvents\":0}");
	free(text);
	summary__free(s);
}

/*
 * Two intervals, 1 s and 0.5 s: "web" in both (its task clock not counted in the second),
 * "db" only in the first, "late\xff" only in the second. Averages are over all 1.5 s.
 */
static void test_run(void)
{
	struct cg_host_disk disks1[] = { { "vda", 10, 20, 30 } };
	struct cg_host_disk disks2[] = { { "vda", 20, 40, 50 } };
	struct cg_record first[2] = {
		{
			.name = "web",
			.tasks = 10,
			.time_ns = { 1500000000, 200000000, 300000000, 0 },
			.nvcsw = 300,
			.nivcsw = 30,
			.migrations = 6,
			.runq_waits = 2,
			.runq_max_ns = 37000,
			.counter = { 3000000000ULL, 6000000000ULL, 1500000000 },
			.counter_valid = { true, true, true },
		},
		{
			.name = "db",
			.tasks = 4,
			.time_ns = { 500000000, 0, 0, 0 },
			.nvcsw = 100,
			.counter = { 1000000000, 1000000000, 500000000 },
			.counter_valid = { true, true, true },
		},
	};
	struct cg_record second[2] = {
		{
			.name = "late\xff",
			.tasks = 1,
			.time_ns = { 300000000, 0, 0, 0 },
			.counter = { 600000000, 300000000, 300000000 },
			.counter_valid = { true, true, true },
		},
		{
			.name = "web",
			.tasks = 12,
			.time_ns = { 750000000, 100000000, 0, 50000000 },
			.nvcsw = 150,
			.runq_waits = 1,
			.runq_max_ns = 20000,
			.counter = { 1500000000, 3000000000ULL, 750000000 },
			.counter_valid = { true, true, false },
		},
	};
	struct cg_interval iv1 = {
		.epoch_ms = 11000,
		.interval_ns = 1000000000,
		.nr_events = 3,
		.event_columns = events,
		.host = { true, 40, 4, 1, disks1 },
		.nr_records = 2,
		.records = first,
	};
	struct cg_interval iv2 = {
		.epoch_ms = 11500,
		.interval_ns = 500000000,
		.nr_events = 3,
		.event_columns = events,
		.host = { true, 60, 6, 1, disks2 },
		.nr_records = 2,
		.records = second,
	};
	const cJSON *containers, *web, *db, *late, *all, *host, *m;
	struct summary *s = summary__new();
	cJSON *root;
	char *text;

	first[0].runq_hist.bucket[cg_hist_bucket(1000)] = 1;
	first[0].runq_hist.bucket[cg_hist_bucket(37000)] = 1;
	first[0].runq_hist.count = 2;
	second[1].runq_hist.bucket[cg_hist_bucket(20000)] = 1;
	second[1].runq_hist.count = 1;

	CHECK(summary__add(s, &iv1) == 0);
	CHECK(summary__add(s, &iv2) == 0);
	summary__set_messages(s, 3e6);
	text = summary__to_json(s, 10000, 11500, 42);
	root = cJSON_Parse(text);
	CHECK(root != NULL);
	if (!root)
		goto out;

	m = cJSON_GetObjectItemCaseSensitive(root, "measurement");
	CHECK(num(m, "startEpochMillis") == 10000);
	CHECK(num(m, "endEpochMillis") == 11500);
	CHECK(num(m, "durationSeconds") == 1.5);
	CHECK(num(root, "droppedEvents") == 42);

	host = cJSON_GetObjectItemCaseSensitive(root, "host");
	CHECK(cJSON_GetArraySize(host) == 5);
	CHECK(num(host, "cpuBusyPercent") == 50);
	CHECK(num(host, "cpuIowaitPercent") == 5);
	CHECK(num(host, "vdaReadMBps") == 15);
	CHECK(num(host, "vdaWriteMBps") == 30);
	CHECK(num(host, "vdaBusyPercent") == 40);

	containers = cJSON_GetObjectItemCaseSensitive(root, "containers");
	CHECK(cJSON_GetArraySize(containers) == 3);

	/* web: 2.25 s on CPU, 450 + 30 switches, 6 migrations, waits of 1, 37 and 20 us. */
	web = cJSON_GetObjectItemCaseSensitive(containers, "web");
	CHECK(num(web, "cpus") == 1.5);
	CHECK(num(web, "voluntarySwitchesPerSecond") == 300);
	CHECK(num(web, "involuntarySwitchesPerSecond") == 20);
	CHECK(num(web, "migrationsPerSecond") == 4);
	CHECK(num(web, "runqWaitsPerSecond") == 2);
	CHECK(num(web, "runqWaitMillisPerSecond") == 200);
	CHECK(num(web, "offCpuSleepMillisPerSecond") == 200);
	CHECK(num(web, "offCpuBlockedMillisPerSecond") == 33.333);
	/* Sorted 1000 20000 37000: the median's bucket [18432, 20480) has midpoint 19456; the
	 * top one's midpoint 38912 is capped by the maximum. */
	CHECK(num(web, "runqP50Micros") == 19.456);
	CHECK(num(web, "runqP99Micros") == 37);
	CHECK(num(web, "runqMaxMicros") == 37);
	CHECK(num(web, "tasks") == 12);
	CHECK(num(web, "cyclesPerSecond") == 3e9);
	CHECK(num(web, "instructionsPerSecond") == 6e9);
	/* The task clock was not counted in one of web's intervals: it and GHz are gone. */
	CHECK(!has(web, "taskClockMillisPerSecond"));
	CHECK(!has(web, "ghz"));
	CHECK(num(web, "instructionsPerCycle") == 2);
	CHECK(!has(web, "llcMissPercent"));
	CHECK(num(web, "cpuSecondsPerMillionMessages") == 0.75);

	/* db: only in the first second, but averaged over the whole 1.5 s. */
	db = cJSON_GetObjectItemCaseSensitive(containers, "db");
	CHECK(num(db, "cpus") == 0.333);
	CHECK(num(db, "voluntarySwitchesPerSecond") == 66.667);
	CHECK(num(db, "runqWaitsPerSecond") == 0);
	CHECK(!has(db, "runqP50Micros"));
	CHECK(!has(db, "runqP99Micros"));
	CHECK(!has(db, "runqMaxMicros"));
	CHECK(num(db, "tasks") == 4);
	CHECK(num(db, "taskClockMillisPerSecond") == 333.333);
	CHECK(num(db, "cyclesPerSecond") == 666666666.667);
	CHECK(num(db, "ghz") == 2);
	CHECK(num(db, "instructionsPerCycle") == 1);
	CHECK(num(db, "cpuSecondsPerMillionMessages") == 0.167);

	late = cJSON_GetObjectItemCaseSensitive(containers, "late\xef\xbf\xbd");
	CHECK(late != NULL);
	CHECK(num(late, "cpus") == 0.2);
	CHECK(num(late, "taskClockMillisPerSecond") == 200);
	CHECK(num(late, "ghz") == 2);
	CHECK(num(late, "instructionsPerCycle") == 0.5);

	/* All: sums of the rates, the merged histogram, the ratios of the summed counters. */
	all = cJSON_GetObjectItemCaseSensitive(root, "allContainers");
	CHECK(num(all, "cpus") == 2.033);
	CHECK(num(all, "voluntarySwitchesPerSecond") == 366.667);
	CHECK(num(all, "involuntarySwitchesPerSecond") == 20);
	CHECK(num(all, "runqWaitsPerSecond") == 2);
	CHECK(num(all, "offCpuBlockedMillisPerSecond") == 33.333);
	CHECK(num(all, "runqP50Micros") == 19.456);
	CHECK(num(all, "runqP99Micros") == 37);
	CHECK(num(all, "runqMaxMicros") == 37);
	CHECK(num(all, "tasks") == 17);
	CHECK(num(all, "cyclesPerSecond") == 4066666666.667);
	CHECK(num(all, "instructionsPerSecond") == 6866666666.667);
	CHECK(!has(all, "taskClockMillisPerSecond"));
	CHECK(!has(all, "ghz"));
	/* 10.3e9 instructions over 6.1e9 cycles. */
	CHECK(num(all, "instructionsPerCycle") == 1.689);
	CHECK(num(all, "cpuSecondsPerMillionMessages") == 1.017);
	cJSON_Delete(root);
out:
	free(text);
	summary__free(s);
}

int main(void)
{
	test_exact();
	test_empty();
	test_run();
	return check_done();
}
