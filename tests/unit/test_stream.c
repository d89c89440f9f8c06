// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "outputs/stream.h"

#define TRICKY_LABEL "a,\"b\"\n\xff\xfe"
/* The same bytes after UTF-8 sanitizing: each invalid byte is U+FFFD. */
#define TRICKY_JSON_KEY "a,\"b\"\n\xef\xbf\xbd\xef\xbf\xbd"

static const char *const events[] = { "cycles", "instructions", "taskClockMillis" };

static struct cg_host_disk disks[] = { { "vda", 1.25, 2.5, 12.5 } };

static struct cg_record records[2];
static struct cg_interval iv;

/*
 * web: 1.5 s on CPU in a 1 s interval, waits of 1000 and 37000 ns, every counter counted.
 * The other: a label that needs quoting and sanitizing, no waits, cycles not counted.
 */
static void make_interval(void)
{
	memset(records, 0, sizeof(records));
	records[0] = (struct cg_record){
		.name = "web",
		.tasks = 12,
		.time_ns = { 1500000000, 250000000, 2000000000, 250000000, 125000000 },
		.count[CG_NVCSW] = 250,
		.count[CG_NIVCSW] = 20,
		.count[CG_PREEMPTED_BY_SAME] = 12,
		.count[CG_PREEMPTED_BY_OTHER] = 7,
		.count[CG_PREEMPTED_BY_KERNEL] = 1,
		.count[CG_MIGRATIONS] = 5,
		.count[CG_RUNQ_WAITS] = 2,
		.count[CG_MINOR_FAULTS] = 300,
		.count[CG_MAJOR_FAULTS] = 4,
		.runq_max_ns = 37000,
		.counter = { 3000000000ULL, 6000000000ULL, 1500000000 },
		.counter_valid = { true, true, true },
		.preempters = { { "/noisy\n\xff", 9, 5 } },
		.nr_preempters = 1,
	};
	records[0].runq_hist.bucket[cg_hist_bucket(1000)] = 1;
	records[0].runq_hist.bucket[cg_hist_bucket(37000)] = 1;
	records[0].runq_hist.count = 2;
	records[1] = (struct cg_record){
		.name = TRICKY_LABEL,
		.tasks = 1,
		.counter = { 0, 1000, 0 },
		.counter_valid = { false, true, true },
	};
	iv = (struct cg_interval){
		.epoch_ms = 1700000000123ULL,
		.interval_ns = 1000000000,
		.health = { .dropped_events = 7, .missed_switches = 5, .unseen_wakeups = 4 },
		.nr_events = 3,
		.event_columns = events,
		.host = { true, 40.0, 5.0, 1, disks },
		.nr_records = 2,
		.records = records,
	};
}

static char *out_text;
static size_t out_len;

/* stream__write into memory; the text stays valid until the next call. */
static const char *render(enum cg_format fmt, bool first, int *err)
{
	FILE *f;

	free(out_text);
	out_text = NULL;
	f = open_memstream(&out_text, &out_len);
	*err = stream__write(f, fmt, &iv, first);
	fclose(f);
	return out_text;
}

static void test_csv(void)
{
	int err;

	make_interval();
	CHECK_STR(
		render(CG_FORMAT_CSV, true, &err),
		"epochMillis,intervalMillis,container,cpuCores,tasks,onCpuMillis,runqWaitMillis,"
		"offCpuSleepMillis,offCpuBlockedMillis,voluntarySwitches,involuntarySwitches,"
		"migrations,runqWaits,runqP50Micros,runqP99Micros,runqMaxMicros,"
		"preemptedBySameCgroup,preemptedByOtherCgroup,preemptedByKernel,stolenMillis,"
		"offCpuMillis,minorPageFaults,majorPageFaults,periods,throttledPeriods,throttledMillis,"
		"cpuPressureSomeMillis,cpuPressureFullMillis,memoryPressureSomeMillis,"
		"ioPressureSomeMillis,ioPressureFullMillis,busiestThreadCores,hungriestThreadRanCores,"
		"hungriestThreadWaitedCores,topPreempter,verdict,"
		"busiestThread,hungriestThread,"
		"cycles,instructions,taskClockMillis,"
		"ghz,instructionsPerCycle,llcMissesPerKiloInstructions,llcMissPercent,"
		"l1dMissesPerKiloInstructions,branchMissesPerKiloInstructions\n"
		"1700000000123,1000.000,web,1.500,12,1500.000,250.000,2000.000,250.000,"
		"250,20,5,2,0.992,37.000,37.000,12,7,1,125.000,2250.000,300,4,,,,,,,,,0.000,,,\"/noisy\n\xff\",contended:same,,,"
		"3000000000,6000000000,1500.000,"
		"2.000,2.000,,,,\n"
		"1700000000123,1000.000,\"a,\"\"b\"\"\n\xff\xfe\",0.000,1,0.000,0.000,0.000,0.000,"
		"0,0,0,0,,,,0,0,0,0.000,0.000,0,0,,,,,,,,,0.000,,,,idle,,,,1000,0.000,,,,,,\n");
	CHECK(err == 0);

	/* Later intervals: rows only. Half a second with the same amounts: twice the cores. */
	iv.nr_records = 1;
	iv.interval_ns = 500000000;
	CHECK_STR(
		render(CG_FORMAT_CSV, false, &err),
		"1700000000123,500.000,web,3.000,12,1500.000,250.000,2000.000,250.000,"
		"250,20,5,2,0.992,37.000,37.000,12,7,1,125.000,2250.000,300,4,,,,,,,,,0.000,,,\"/noisy\n\xff\",contended:same,,,"
		"3000000000,6000000000,1500.000,"
		"2.000,2.000,,,,\n");
	CHECK(err == 0);

	/* Without perf the event columns go and the ratio columns stay, empty. */
	iv.nr_events = 0;
	CHECK_STR(
		render(CG_FORMAT_CSV, true, &err),
		"epochMillis,intervalMillis,container,cpuCores,tasks,onCpuMillis,runqWaitMillis,"
		"offCpuSleepMillis,offCpuBlockedMillis,voluntarySwitches,involuntarySwitches,"
		"migrations,runqWaits,runqP50Micros,runqP99Micros,runqMaxMicros,"
		"preemptedBySameCgroup,preemptedByOtherCgroup,preemptedByKernel,stolenMillis,"
		"offCpuMillis,minorPageFaults,majorPageFaults,periods,throttledPeriods,throttledMillis,"
		"cpuPressureSomeMillis,cpuPressureFullMillis,memoryPressureSomeMillis,"
		"ioPressureSomeMillis,ioPressureFullMillis,busiestThreadCores,hungriestThreadRanCores,"
		"hungriestThreadWaitedCores,topPreempter,verdict,"
		"busiestThread,hungriestThread,"
		"ghz,instructionsPerCycle,llcMissesPerKiloInstructions,llcMissPercent,"
		"l1dMissesPerKiloInstructions,branchMissesPerKiloInstructions\n"
		"1700000000123,500.000,web,3.000,12,1500.000,250.000,2000.000,250.000,"
		"250,20,5,2,0.992,37.000,37.000,12,7,1,125.000,2250.000,300,4,,,,,,,,,0.000,,,\"/noisy\n\xff\",contended:same,,,,,,,,\n");
	CHECK(err == 0);
}

static void test_json_exact(void)
{
	int err;

	make_interval();
	iv.nr_records = 1;
	iv.host.valid = false;
	CHECK_STR(
		render(CG_FORMAT_JSON, true, &err),
		"{\"epochMillis\":1700000000123,\"intervalMillis\":1000,\"droppedEvents\":7,"
		"\"missedSwitches\":5,\"unseenWakeups\":4,\"inconsistencies\":0,"
		"\"containers\":{\"web\":{\"cpuCores\":1.5,\"tasks\":12,\"onCpuMillis\":1500,"
		"\"runqWaitMillis\":250,\"offCpuSleepMillis\":2000,\"offCpuBlockedMillis\":250,"
		"\"voluntarySwitches\":250,\"involuntarySwitches\":20,\"migrations\":5,"
		"\"runqWaits\":2,\"runqP50Micros\":0.992,\"runqP99Micros\":37,"
		"\"runqMaxMicros\":37,\"preemptedBySameCgroup\":12,\"preemptedByOtherCgroup\":7,"
		"\"preemptedByKernel\":1,\"stolenMillis\":125,\"offCpuMillis\":2250,\"minorPageFaults\":300,\"majorPageFaults\":4,\"busiestThreadCores\":0,\"topPreempter\":\"/noisy\\n\xef\xbf\xbd\",\"verdict\":\"contended:same\",\"cycles\":3000000000,\"instructions\":6000000000,"
		"\"taskClockMillis\":1500,\"ghz\":2,\"instructionsPerCycle\":2}}}\n");
	CHECK(err == 0);

	/* Rounded to 3 decimals: 1/3 of a second is 333.333 ms, 1/3 core. */
	iv.interval_ns = 333333333;
	records[0].time_ns[CG_ONCPU] = 111111111;
	render(CG_FORMAT_JSON, true, &err);
	CHECK(strstr(out_text, "\"intervalMillis\":333.333,") != NULL);
	CHECK(strstr(out_text, "\"cpuCores\":0.333,") != NULL);
}

static void test_json_parsed(void)
{
	cJSON *root, *containers, *web, *tricky, *host, *vda;
	int err;

	make_interval();
	render(CG_FORMAT_JSON, true, &err);
	CHECK(err == 0);
	/* One line per interval. */
	CHECK(out_len > 0 && out_text[out_len - 1] == '\n' && !memchr(out_text, '\n', out_len - 1));

	root = cJSON_Parse(out_text);
	CHECK(root != NULL);
	if (!root)
		return;
	containers = cJSON_GetObjectItemCaseSensitive(root, "containers");
	CHECK(cJSON_GetArraySize(containers) == 2);
	web = cJSON_GetObjectItemCaseSensitive(containers, "web");
	CHECK(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(web, "cpuCores")) == 1.5);
	CHECK(!cJSON_GetObjectItemCaseSensitive(web, "llcMissPercent"));

	tricky = cJSON_GetObjectItemCaseSensitive(containers, TRICKY_JSON_KEY);
	CHECK(tricky != NULL);
	CHECK(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(tricky, "tasks")) == 1);
	/* No waits: no run-queue figures. Cycles not counted: neither they nor the ratios. */
	CHECK(!cJSON_GetObjectItemCaseSensitive(tricky, "runqP50Micros"));
	CHECK(!cJSON_GetObjectItemCaseSensitive(tricky, "runqP99Micros"));
	CHECK(!cJSON_GetObjectItemCaseSensitive(tricky, "runqMaxMicros"));
	CHECK(!cJSON_GetObjectItemCaseSensitive(tricky, "cycles"));
	CHECK(!cJSON_GetObjectItemCaseSensitive(tricky, "ghz"));
	CHECK(!cJSON_GetObjectItemCaseSensitive(tricky, "instructionsPerCycle"));
	CHECK(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(tricky, "instructions")) ==
	      1000);
	CHECK(cJSON_GetObjectItemCaseSensitive(tricky, "runqWaits") != NULL);

	host = cJSON_GetObjectItemCaseSensitive(root, "host");
	CHECK(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(host, "cpuBusyPercent")) ==
	      40.0);
	CHECK(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(host, "cpuIowaitPercent")) ==
	      5.0);
	vda = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(host, "disks"),
					       "vda");
	CHECK(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(vda, "readMBps")) == 1.25);
	CHECK(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(vda, "writeMBps")) == 2.5);
	CHECK(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(vda, "busyPercent")) == 12.5);
	cJSON_Delete(root);
}

static void test_table(void)
{
	int err;

	make_interval();
	records[1].name = "\x1b[31mred\x1b[0m-and-a-label-longer-than-32-bytes";
	/* 2023-11-14 22:13:20 UTC */
	CHECK_STR(render(CG_FORMAT_TABLE, true, &err),
		  "22:13:20  interval 1.000 s  dropped events 7\n"
		  "CONTAINER                          CORES  TASKS    VCSW/s   IVCSW/s   MIGR/s"
		  "  RUNQ% SLEEP% BLOCK%      P50us      P99us      MAXus    IPC VERDICT\n"
		  "web                                1.500     12     250.0      20.0      5.0"
		  "    6.1   48.5    6.1      0.992     37.000     37.000  2.000 contended:same\n"
		  "?[31mred?[0m-and-a-label-longer-   0.000      1       0.0       0.0      0.0"
		  "      -      -      -          -          -          -      - idle\n");
	CHECK(err == 0);

	/*
	 * A later interval starts after a blank line; without perf no IPC column. Another
	 * cgroup preempting most: the verdict names it, made as safe as a label.
	 */
	iv.nr_events = 0;
	iv.nr_records = 1;
	iv.health.dropped_events = 0;
	records[0].count[CG_PREEMPTED_BY_OTHER] = 13;
	CHECK_STR(
		render(CG_FORMAT_TABLE, false, &err),
		"\n22:13:20  interval 1.000 s\n"
		"CONTAINER                          CORES  TASKS    VCSW/s   IVCSW/s   MIGR/s"
		"  RUNQ% SLEEP% BLOCK%      P50us      P99us      MAXus VERDICT\n"
		"web                                1.500     12     250.0      20.0      5.0"
		"    6.1   48.5    6.1      0.992     37.000     37.000 contended:other:/noisy??\n");
	CHECK(err == 0);

	/* A cut never splits a UTF-8 sequence: byte 32 would be the middle of "é". */
	make_interval();
	iv.nr_records = 1;
	records[0].name = "0123456789012345678901234567890\xc3\xa9xyz";
	render(CG_FORMAT_TABLE, true, &err);
	CHECK(strstr(out_text, "\n0123456789012345678901234567890  ") != NULL);
}

static void test_write_errors(void)
{
	enum cg_format formats[] = { CG_FORMAT_CSV, CG_FORMAT_JSON, CG_FORMAT_TABLE };
	int fds[2];
	FILE *f;
	size_t i;

	make_interval();
	for (i = 0; i < 3; i++) {
		f = fopen("/dev/full", "w");
		CHECK(stream__write(f, formats[i], &iv, true) == -ENOSPC);
		fclose(f);
	}

	/* The reader went away: the caller ends cleanly on -EPIPE. */
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < 3; i++) {
		CHECK(pipe(fds) == 0);
		close(fds[0]);
		f = fdopen(fds[1], "w");
		CHECK(stream__write(f, formats[i], &iv, true) == -EPIPE);
		fclose(f);
	}

	f = fopen("/dev/null", "w");
	CHECK(stream__write(f, CG_FORMAT_AUTO, &iv, true) == -EINVAL);
	fclose(f);
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	test_csv();
	test_json_exact();
	test_json_parsed();
	test_table();
	test_write_errors();
	free(out_text);
	return check_done();
}
