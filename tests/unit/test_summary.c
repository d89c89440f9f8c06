// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "outputs/summary.h"

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
		.count[CG_NVCSW] = 250,
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
	text = summary__to_json(s, 1500, 2000, &(struct cg_health){ .dropped_events = 3 });
	/* 1.5 s on CPU and 250 switches in half a second; no waits, no perf, no host. */
	CHECK_STR(
		text,
		"{\"measurement\":{\"startEpochMillis\":1500,\"endEpochMillis\":2000,"
		"\"durationSeconds\":0.5},\"host\":{},"
		"\"containers\":{\"web\":{\"cpus\":3,\"voluntarySwitchesPerSecond\":500,"
		"\"involuntarySwitchesPerSecond\":0,\"migrationsPerSecond\":0,"
		"\"runqWaitsPerSecond\":0,\"runqWaitMillisPerSecond\":0,"
		"\"offCpuSleepMillisPerSecond\":0,\"offCpuBlockedMillisPerSecond\":0,\"stolenMillisPerSecond\":0,"
		"\"offCpuMillisPerSecond\":0,\"minorPageFaultsPerSecond\":0,\"majorPageFaultsPerSecond\":0,"
		"\"preemptedBySameCgroupPerSecond\":0,\"preemptedByOtherCgroupPerSecond\":0,"
		"\"preemptedByKernelPerSecond\":0,"
		"\"tasks\":3,\"verdicts\":{\"ok\":1},\"verdict\":\"ok\"}},"
		"\"allContainers\":{\"cpus\":3,\"voluntarySwitchesPerSecond\":500,"
		"\"involuntarySwitchesPerSecond\":0,\"migrationsPerSecond\":0,"
		"\"runqWaitsPerSecond\":0,\"runqWaitMillisPerSecond\":0,"
		"\"offCpuSleepMillisPerSecond\":0,\"offCpuBlockedMillisPerSecond\":0,\"stolenMillisPerSecond\":0,"
		"\"offCpuMillisPerSecond\":0,\"minorPageFaultsPerSecond\":0,\"majorPageFaultsPerSecond\":0,"
		"\"preemptedBySameCgroupPerSecond\":0,\"preemptedByOtherCgroupPerSecond\":0,"
		"\"preemptedByKernelPerSecond\":0,"
		"\"tasks\":3},\"droppedEvents\":3,\"missedSwitches\":0,"
		"\"unseenWakeups\":0,\"inconsistencies\":0}");
	free(text);
	summary__free(s);
}

static void test_empty(void)
{
	struct summary *s = summary__new();
	char *text;

	summary__set_messages(s, 1e6);
	text = summary__to_json(s, 10, 10, &(struct cg_health){ 0 });
	/* Nothing measured: no rates, and no CPU per message. */
	CHECK_STR(text, "{\"measurement\":{\"startEpochMillis\":10,\"endEpochMillis\":10,"
			"\"durationSeconds\":0},\"host\":{},\"containers\":{},"
			"\"allContainers\":{\"tasks\":0},\"droppedEvents\":0,"
			"\"missedSwitches\":0,\"unseenWakeups\":0,\"inconsistencies\":0}");
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
			.count[CG_NVCSW] = 300,
			.count[CG_NIVCSW] = 30,
			.count[CG_MIGRATIONS] = 6,
			.count[CG_RUNQ_WAITS] = 2,
			.runq_max_ns = 37000,
			.counter = { 3000000000ULL, 6000000000ULL, 1500000000 },
			.counter_valid = { true, true, true },
		},
		{
			.name = "db",
			.tasks = 4,
			.time_ns = { 500000000, 0, 0, 0 },
			.count[CG_NVCSW] = 100,
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
			.time_ns = { 750000000, 100000000, 0, 50000000, 30000000 },
			.count[CG_NVCSW] = 150,
			.count[CG_RUNQ_WAITS] = 1,
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
	text = summary__to_json(s, 10000, 11500, &(struct cg_health){ .dropped_events = 42 });
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
	CHECK(num(web, "stolenMillisPerSecond") == 20);
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

static void add_wait(struct cg_record *r, uint64_t ns)
{
	r->runq_hist.bucket[cg_hist_bucket(ns)]++;
	r->runq_hist.count++;
	r->count[CG_RUNQ_WAITS]++;
	if (ns > r->runq_max_ns)
		r->runq_max_ns = ns;
}

static char *json_of(struct summary *s)
{
	return summary__to_json(s, 1000, 4000, &(struct cg_health){ 0 });
}

/* The object at root[key][label], NULL when there is none. */
static cJSON *item(const cJSON *root, const char *key, const char *label)
{
	return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, key), label);
}

/*
 * Three intervals of 1 s: "web" in the first two, "db" in the first, "late" in the last two.
 * Retiring each after its last interval must change nothing in the JSON.
 */
static void test_retire_exact(void)
{
	struct cg_record first[2] = {
		{
			.name = "web",
			.tasks = 5,
			.time_ns = { 1000000000, 2000000, 3000000, 4000000 },
			.count[CG_NVCSW] = 100,
			.counter = { 2000000000, 3000000000ULL },
			.counter_valid = { true, true },
		},
		{
			.name = "db",
			.tasks = 2,
			.time_ns = { 500000000, 1000000, 0, 0 },
			.count[CG_NIVCSW] = 7,
			.count[CG_MIGRATIONS] = 3,
			.counter = { 1000000000, 1000000000 },
			.counter_valid = { true, true },
		},
	};
	struct cg_record second[2] = {
		{
			.name = "late",
			.tasks = 1,
			.time_ns = { 100000000, 0, 0, 0 },
			.counter = { 100000000, 50000000 },
			.counter_valid = { true, true },
		},
		{
			.name = "web",
			.tasks = 6,
			.time_ns = { 1000000000, 0, 0, 0 },
			.count[CG_NVCSW] = 50,
			.counter = { 2000000000, 1000000000 },
			.counter_valid = { true, false },
		},
	};
	struct cg_record third = {
		.name = "late",
		.tasks = 0,
		.time_ns = { 200000000, 0, 0, 0 },
	};
	struct cg_interval iv[3] = {
		{ .interval_ns = 1000000000,
		  .nr_events = 2,
		  .event_columns = events,
		  .nr_records = 2,
		  .records = first },
		{ .interval_ns = 1000000000,
		  .nr_events = 2,
		  .event_columns = events,
		  .nr_records = 2,
		  .records = second },
		/* "late"'s counters were not read in its last interval. */
		{ .interval_ns = 1000000000,
		  .nr_events = 2,
		  .event_columns = events,
		  .nr_records = 1,
		  .records = &third },
	};
	struct summary *kept = summary__new(), *retired = summary__new();
	char *kept_text, *retired_text;
	cJSON *root;

	add_wait(&first[0], 1000);
	add_wait(&first[0], 37000);
	add_wait(&first[1], 5000);
	add_wait(&second[1], 20000);

	CHECK(summary__add(kept, &iv[0]) == 0);
	CHECK(summary__add(kept, &iv[1]) == 0);
	CHECK(summary__add(kept, &iv[2]) == 0);

	CHECK(summary__add(retired, &iv[0]) == 0);
	summary__retire(retired, "db", 0);
	/* Retiring twice, or a label never seen, changes nothing. */
	summary__retire(retired, "db", 0);
	summary__retire(retired, "nosuch", 0);
	CHECK(summary__add(retired, &iv[1]) == 0);
	summary__retire(retired, "web", 0);
	CHECK(summary__add(retired, &iv[2]) == 0);
	summary__retire(retired, "late", 0);

	kept_text = json_of(kept);
	retired_text = json_of(retired);
	CHECK_STR(retired_text, kept_text);

	root = cJSON_Parse(retired_text);
	CHECK(root != NULL);
	if (!root)
		goto out;
	/* web: sorted 1000 20000 37000, as in test_run. */
	CHECK(num(item(root, "containers", "web"), "runqP50Micros") == 19.456);
	CHECK(num(item(root, "containers", "web"), "runqP99Micros") == 37);
	CHECK(num(item(root, "containers", "web"), "tasks") == 6);
	CHECK(num(item(root, "containers", "web"), "cpus") == 0.667);
	CHECK(num(item(root, "containers", "web"), "cyclesPerSecond") == 1333333333.333);
	CHECK(!has(item(root, "containers", "web"), "instructionsPerSecond"));
	/* db: one wait of 5000 ns, in [4608, 5120), whose midpoint 4864 is below the maximum. */
	CHECK(num(item(root, "containers", "db"), "runqP50Micros") == 4.864);
	CHECK(num(item(root, "containers", "db"), "runqP99Micros") == 4.864);
	CHECK(num(item(root, "containers", "db"), "runqMaxMicros") == 5);
	CHECK(num(item(root, "containers", "db"), "involuntarySwitchesPerSecond") == 2.333);
	CHECK(num(item(root, "containers", "db"), "instructionsPerCycle") == 1);
	CHECK(!has(item(root, "containers", "late"), "cyclesPerSecond"));
	CHECK(num(item(root, "containers", "late"), "cpus") == 0.1);
	/* All: 1000 5000 20000 37000; the 2nd is 5000's bucket, the 4th capped at 37000. */
	CHECK(num(cJSON_GetObjectItemCaseSensitive(root, "allContainers"), "runqP50Micros") ==
	      4.864);
	CHECK(num(cJSON_GetObjectItemCaseSensitive(root, "allContainers"), "runqP99Micros") == 37);
	CHECK(num(cJSON_GetObjectItemCaseSensitive(root, "allContainers"), "runqMaxMicros") == 37);
	CHECK(num(cJSON_GetObjectItemCaseSensitive(root, "allContainers"), "tasks") == 8);
	CHECK(!has(root, "retiredContainersFolded"));
	cJSON_Delete(root);
out:
	free(kept_text);
	free(retired_text);
	summary__free(kept);
	summary__free(retired);
}

/*
 * "web" is retired after the first interval and a new cgroup at the same path shows up in the
 * second: one label, its sums those of both, its quantiles gone, allContainers untouched.
 */
static void test_retire_reappear(void)
{
	struct cg_record web1 = {
		.name = "web",
		.tasks = 3,
		.time_ns = { 400000000, 0, 0, 0 },
		.count[CG_NVCSW] = 10,
	};
	struct cg_record web2 = {
		.name = "web",
		.tasks = 4,
		.time_ns = { 600000000, 0, 0, 0 },
		.count[CG_NVCSW] = 30,
	};
	struct cg_interval iv1 = { .interval_ns = 1000000000, .nr_records = 1, .records = &web1 };
	struct cg_interval iv2 = { .interval_ns = 1000000000, .nr_records = 1, .records = &web2 };
	struct summary *kept = summary__new(), *retired = summary__new();
	cJSON *kept_root, *retired_root, *web;
	char *kept_text, *retired_text;

	add_wait(&web1, 2000);
	add_wait(&web1, 3000);
	add_wait(&web2, 50000);

	CHECK(summary__add(kept, &iv1) == 0);
	CHECK(summary__add(kept, &iv2) == 0);
	CHECK(summary__add(retired, &iv1) == 0);
	summary__retire(retired, "web", 0);
	CHECK(summary__add(retired, &iv2) == 0);

	kept_text = json_of(kept);
	retired_text = json_of(retired);
	kept_root = cJSON_Parse(kept_text);
	retired_root = cJSON_Parse(retired_text);
	CHECK(kept_root && retired_root);
	if (!kept_root || !retired_root)
		goto out;

	web = item(retired_root, "containers", "web");
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(retired_root, "containers")) ==
	      1);
	CHECK(num(web, "cpus") == 0.5);
	CHECK(num(web, "voluntarySwitchesPerSecond") == 20);
	CHECK(num(web, "runqWaitsPerSecond") == 1.5);
	CHECK(num(web, "runqMaxMicros") == 50);
	CHECK(num(web, "tasks") == 4);
	CHECK(!has(web, "runqP50Micros"));
	CHECK(!has(web, "runqP99Micros"));
	/* Bar the quantiles, the same as never retiring. */
	cJSON_DeleteItemFromObjectCaseSensitive(item(kept_root, "containers", "web"),
						"runqP50Micros");
	cJSON_DeleteItemFromObjectCaseSensitive(item(kept_root, "containers", "web"),
						"runqP99Micros");
	CHECK(cJSON_Compare(item(kept_root, "containers", "web"), web, true));
	/* 2000 3000 50000: the median is 3000's bucket [2816, 3072), midpoint 2944. */
	CHECK(num(cJSON_GetObjectItemCaseSensitive(retired_root, "allContainers"),
		  "runqP50Micros") == 2.944);
	CHECK(num(cJSON_GetObjectItemCaseSensitive(retired_root, "allContainers"),
		  "runqP99Micros") == 50);
	CHECK(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(kept_root, "allContainers"),
			    cJSON_GetObjectItemCaseSensitive(retired_root, "allContainers"), true));
out:
	cJSON_Delete(kept_root);
	cJSON_Delete(retired_root);
	free(kept_text);
	free(retired_text);
	summary__free(kept);
	summary__free(retired);
}

/*
 * "web" restarted within an interval: the drain gave one record, under the new cgroup's id
 * (2), and then the old cgroup (1) is retired. The label's entry is the new cgroup's: nothing
 * changes, its quantiles included.
 */
static void test_retire_other_cgroup(void)
{
	struct cg_record web = {
		.name = "web",
		.cgid = 2,
		.tasks = 3,
		.time_ns = { 400000000, 0, 0, 0 },
	};
	struct cg_interval iv = { .interval_ns = 1000000000, .nr_records = 1, .records = &web };
	struct summary *kept = summary__new(), *retired = summary__new();
	char *kept_text, *retired_text;

	add_wait(&web, 2000);
	add_wait(&web, 3000);
	CHECK(summary__add(kept, &iv) == 0);
	CHECK(summary__add(kept, &iv) == 0);
	CHECK(summary__add(retired, &iv) == 0);
	summary__retire(retired, "web", 1);
	CHECK(summary__add(retired, &iv) == 0);
	kept_text = json_of(kept);
	retired_text = json_of(retired);
	CHECK(kept_text && strstr(kept_text, "\"runqP99Micros\""));
	CHECK_STR(retired_text, kept_text);
	free(kept_text);
	free(retired_text);
	summary__free(kept);
	summary__free(retired);
}

/* Container i of the short-lived ones: 1 ms in one interval of its own. */
static void short_lived(struct cg_record *r, char *name, size_t size, int i)
{
	snprintf(name, size, "pod/%d", i);
	memset(r, 0, sizeof(*r));
	r->name = name;
	r->tasks = i % 3;
	r->time_ns[CG_ONCPU] = 1000 * (uint64_t)(i + 1);
	r->count[CG_NVCSW] = i + 1;
	r->counter[0] = 1000 * (uint64_t)i;
	r->counter[1] = 3000 * (uint64_t)i;
	r->counter_valid[0] = r->counter_valid[1] = true;
	add_wait(r, 1000 * (uint64_t)(i % 50 + 1));
}

static int add_short_lived(struct summary *s, int i)
{
	struct cg_interval iv = {
		.interval_ns = 1000000,
		.nr_events = 2,
		.event_columns = events,
		.nr_records = 1,
	};
	struct cg_record r;
	char name[32];

	short_lived(&r, name, sizeof(name), i);
	iv.records = &r;
	return summary__add(s, &iv);
}

static bool near(double got, double want)
{
	/* The JSON rounds to 3 decimals. */
	return fabs(got - want) <= 0.0005 + 1e-9 * fabs(want);
}

/*
 * SUMMARY_MAX_RETIRED + 10 containers, each retired after its one interval: the last 10 go
 * into "(removed cgroups)", which has their sums; everything else is as if none were retired.
 */
static void test_retire_folds(void)
{
	const int n = SUMMARY_MAX_RETIRED + 10;
	struct summary *kept = summary__new(), *retired = summary__new();
	uint64_t oncpu = 0, nvcsw = 0, tasks = 0, max_ns = 0, cycles = 0, instructions = 0;
	cJSON *kept_root = NULL, *retired_root = NULL, *folded;
	char *kept_text, *retired_text;
	struct cg_record r;
	char name[32];
	double seconds = n * 1e-3;
	int i, err = 0;

	for (i = 0; i < n && !err; i++) {
		err = add_short_lived(kept, i) ?: add_short_lived(retired, i);
		short_lived(&r, name, sizeof(name), i);
		summary__retire(retired, name, 0);
		if (i < SUMMARY_MAX_RETIRED)
			continue;
		oncpu += r.time_ns[CG_ONCPU];
		nvcsw += r.count[CG_NVCSW];
		tasks += r.tasks;
		cycles += r.counter[0];
		instructions += r.counter[1];
		if (r.runq_max_ns > max_ns)
			max_ns = r.runq_max_ns;
	}
	CHECK(err == 0);

	kept_text = json_of(kept);
	retired_text = json_of(retired);
	kept_root = cJSON_Parse(kept_text);
	retired_root = cJSON_Parse(retired_text);
	CHECK(kept_root && retired_root);
	if (!kept_root || !retired_root)
		goto out;

	CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(retired_root, "containers")) ==
	      SUMMARY_MAX_RETIRED + 1);
	CHECK(num(retired_root, "retiredContainersFolded") == 10);
	CHECK(!has(kept_root, "retiredContainersFolded"));
	/* The first are kept whole, the folded ones are gone under their own label. */
	CHECK(cJSON_Compare(item(kept_root, "containers", "pod/0"),
			    item(retired_root, "containers", "pod/0"), true));
	CHECK(cJSON_Compare(item(kept_root, "containers", "pod/4095"),
			    item(retired_root, "containers", "pod/4095"), true));
	CHECK(item(retired_root, "containers", "pod/4096") == NULL);
	CHECK(item(retired_root, "containers", "pod/4105") == NULL);

	folded = item(retired_root, "containers", "(removed cgroups)");
	CHECK(folded != NULL);
	CHECK(near(num(folded, "cpus"), (double)oncpu / 1e9 / seconds));
	CHECK(near(num(folded, "voluntarySwitchesPerSecond"), (double)nvcsw / seconds));
	CHECK(near(num(folded, "runqWaitsPerSecond"), 10 / seconds));
	CHECK(num(folded, "runqMaxMicros") == (double)max_ns / 1e3);
	CHECK(num(folded, "tasks") == (double)tasks);
	CHECK(near(num(folded, "cyclesPerSecond"), (double)cycles / seconds));
	CHECK(near(num(folded, "instructionsPerCycle"), (double)instructions / (double)cycles));
	CHECK(!has(folded, "runqP50Micros"));
	CHECK(!has(folded, "runqP99Micros"));

	/* Quantiles from the run-wide histogram: all as exact as without retiring. */
	CHECK(has(cJSON_GetObjectItemCaseSensitive(retired_root, "allContainers"),
		  "runqP99Micros"));
	CHECK(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(kept_root, "allContainers"),
			    cJSON_GetObjectItemCaseSensitive(retired_root, "allContainers"), true));
out:
	cJSON_Delete(kept_root);
	cJSON_Delete(retired_root);
	free(kept_text);
	free(retired_text);
	summary__free(kept);
	summary__free(retired);
}

/* ASan's allocator is not malloc's, so mallinfo2 says nothing under it; gcc and clang say so apart.
 */
#if defined(__SANITIZE_ADDRESS__)
#define HEAP_MEASURED 0
#elif defined(__has_feature)
#define HEAP_MEASURED !__has_feature(address_sanitizer)
#else
#define HEAP_MEASURED 1
#endif

#if HEAP_MEASURED
/* Bytes malloc'd and not freed, the big blocks malloc maps on their own included. */
static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}
#endif

/*
 * 20,000 containers come and go: the summary keeps SUMMARY_MAX_RETIRED of them and the
 * aggregate, a few hundred bytes each, where it used to keep 2.7 KB for every one (54 MB).
 * Under ASan only the JSON is checked.
 */
static void test_retire_bounded(void)
{
	const int n = 20000;
	struct summary *s = summary__new();
	struct cg_record r;
	char name[32], *text;
	int i, err = 0;
	cJSON *root;
#if HEAP_MEASURED
	size_t before = heap_in_use(), after;
#endif

	for (i = 0; i < n && !err; i++) {
		err = add_short_lived(s, i);
		short_lived(&r, name, sizeof(name), i);
		summary__retire(s, name, 0);
	}
	CHECK(err == 0);
#if HEAP_MEASURED
	after = heap_in_use();
	CHECK(after - before < 8 << 20);
#endif
	text = json_of(s);
	root = cJSON_Parse(text);
	CHECK(root != NULL);
	CHECK(num(root, "retiredContainersFolded") == n - SUMMARY_MAX_RETIRED);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "containers")) ==
	      SUMMARY_MAX_RETIRED + 1);
	/* Each had one wait in 1 ms. */
	CHECK(num(cJSON_GetObjectItemCaseSensitive(root, "allContainers"), "runqWaitsPerSecond") ==
	      1000);
	cJSON_Delete(root);
	free(text);
	summary__free(s);
}

/*
 * --bpf-stats: the programs' figures are cumulative, so the last interval's are the run's; their
 * time is a share of each interval's length times its CPUs (1 s on 2, then 0.5 s on 1: 2.5 s).
 */
static void test_programs(void)
{
	struct cg_program_stats first[2] = { { "cg_sched_switch", 10, 1000 },
					     { "cg_cgroup_rmdir", 0, 0 } };
	struct cg_program_stats last[2] = { { "cg_sched_switch", 40000, 5000000 },
					    { "cg_cgroup_rmdir", 0, 0 } };
	struct cg_interval iv1 = { .interval_ns = 1000000000, .nr_cpus = 2 };
	struct cg_interval iv2 = { .interval_ns = 500000000, .nr_cpus = 1 };
	struct cg_interval none = { .interval_ns = 500000000, .nr_cpus = 1 };
	struct summary *s = summary__new();
	cJSON *root, *programs, *p;
	char *text, *table = NULL;
	size_t len;
	FILE *f;

	/* none without --bpf-stats: no key, no table */
	CHECK(summary__add(s, &none) == 0);
	text = json_of(s);
	CHECK(text && !strstr(text, "bpfPrograms"));
	free(text);
	f = open_memstream(&table, &len);
	summary__print_programs(s, f);
	fclose(f);
	CHECK_STR(table, "");
	free(table);
	summary__free(s);

	s = summary__new();
	iv1.nr_programs = iv2.nr_programs = 2;
	iv1.programs = first;
	iv2.programs = last;
	CHECK(summary__add(s, &iv1) == 0);
	CHECK(summary__add(s, &iv2) == 0);
	text = json_of(s);
	root = cJSON_Parse(text);
	programs = cJSON_GetObjectItemCaseSensitive(root, "bpfPrograms");
	CHECK(cJSON_GetArraySize(programs) == 2);
	p = cJSON_GetObjectItemCaseSensitive(programs, "cg_sched_switch");
	CHECK(num(p, "runs") == 40000);
	CHECK(num(p, "runMillis") == 5);
	CHECK(num(p, "nanosPerRun") == 125);
	CHECK(fabs(num(p, "cpuTimePercent") - 0.2) < 1e-12);
	/* no runs: no time a run */
	p = cJSON_GetObjectItemCaseSensitive(programs, "cg_cgroup_rmdir");
	CHECK(num(p, "runs") == 0 && !has(p, "nanosPerRun") && num(p, "cpuTimePercent") == 0);
	cJSON_Delete(root);
	free(text);
	f = open_memstream(&table, &len);
	summary__print_programs(s, f);
	fclose(f);
	CHECK_STR(table,
		  "cgstat: BPF programs over 1.5 s, 2.5 CPU-seconds online (--bpf-stats):\n"
		  "cgstat:   program                        runs       run ms    ns/run "
		  "% of CPU time\n"
		  "cgstat:   cg_sched_switch               40000        5.000     125.0        "
		  "0.2000\n"
		  "cgstat:   cg_cgroup_rmdir                   0        0.000         -        "
		  "0.0000\n"
		  "cgstat:   (all)                         40000        5.000     125.0        "
		  "0.2000\n");
	free(table);
	summary__free(s);
}

/* 5,000 cgroups, listed in opposite orders by two intervals of 0.5 s: each has its own sums. */
static void test_many(void)
{
	const int n = 5000;
	struct cg_record *records = calloc(2 * n, sizeof(*records));
	char(*names)[32] = calloc(n, sizeof(*names));
	struct cg_interval iv1 = { .interval_ns = 500000000, .nr_records = n };
	struct cg_interval iv2 = { .interval_ns = 500000000, .nr_records = n };
	struct summary *s = summary__new();
	cJSON *root = NULL, *containers;
	char *text = NULL;
	int i, wrong = 0;

	CHECK(records && names);
	if (!records || !names)
		goto out;
	for (i = 0; i < n; i++) {
		/* Names alike up to their last bytes, one not UTF-8. */
		snprintf(names[i], sizeof(names[i]), "kubepods.slice/pod-%d%s", i,
			 i == 77 ? "\xff" : "");
		records[i].name = names[i];
		records[i].count[CG_NVCSW] = i;
		records[2 * n - 1 - i].name = names[i];
		records[2 * n - 1 - i].count[CG_NVCSW] = 2 * (uint64_t)i;
	}
	iv1.records = records;
	iv2.records = records + n;
	CHECK(summary__add(s, &iv1) == 0);
	CHECK(summary__add(s, &iv2) == 0);
	text = json_of(s);
	root = cJSON_Parse(text);
	CHECK(root != NULL);
	if (!root)
		goto out;
	containers = cJSON_GetObjectItemCaseSensitive(root, "containers");
	CHECK(cJSON_GetArraySize(containers) == n);
	for (i = 0; i < n; i++) {
		char label[40];

		snprintf(label, sizeof(label), "kubepods.slice/pod-%d%s", i,
			 i == 77 ? "\xef\xbf\xbd" : "");
		/* i + 2i switches over 1 s. */
		if (num(cJSON_GetObjectItemCaseSensitive(containers, label),
			"voluntarySwitchesPerSecond") != 3 * i)
			wrong++;
	}
	CHECK(wrong == 0);
	/* 3 * (0 + ... + 4999) */
	CHECK(num(cJSON_GetObjectItemCaseSensitive(root, "allContainers"),
		  "voluntarySwitchesPerSecond") == 37492500);
out:
	cJSON_Delete(root);
	free(text);
	free(records);
	free(names);
	summary__free(s);
}

int main(void)
{
	test_exact();
	test_empty();
	test_run();
	test_programs();
	test_retire_exact();
	test_retire_reappear();
	test_retire_other_cgroup();
	test_retire_folds();
	test_retire_bounded();
	test_many();
	return check_done();
}
