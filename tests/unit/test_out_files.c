// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "outputs/out_files.h"

#define TRICKY_LABEL "a,\"b\"\n\xff\xfe"
#define TRICKY_CSV   "\"a,\"\"b\"\"\n\xff\xfe\""

#define CONTAINER_HEADER \
	"epochMillis,container,cpuCores,voluntarySwitchesPerSecond,involuntarySwitchesPerSecond\n"
#define SCHED_HEADER                                                                              \
	"epochMillis,container,tasks,onCpuMillis,runqWaitMillis,offCpuSleepMillis,"               \
	"offCpuBlockedMillis,voluntarySwitches,involuntarySwitches,migrations,runqWaits,"         \
	"runqP50Micros,runqP99Micros,runqMaxMicros,preemptedBySameCgroup,preemptedByOtherCgroup," \
	"preemptedByKernel,topPreempter,verdict\n"

#define CGROUP_HEADER                                                                           \
	"epochMillis,container,periods,throttledPeriods,throttledMillis,cpuPressureSomeMillis," \
	"cpuPressureFullMillis,memoryPressureSomeMillis,ioPressureSomeMillis,"                  \
	"ioPressureFullMillis\n"

static char base[] = "/tmp/test_out_files.XXXXXX";
static char path[4096];

static const char *in_base(const char *name)
{
	snprintf(path, sizeof(path), "%s/%s", base, name);
	return path;
}

/* The whole file as a string (malloc'd), or NULL when it cannot be read. */
static char *slurp(const char *dir, const char *name)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f, *mem;
	int c;

	snprintf(path, sizeof(path), "%s/%s/%s", base, dir, name);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	mem = open_memstream(&text, &len);
	while ((c = fgetc(f)) != EOF)
		fputc(c, mem);
	fclose(mem);
	fclose(f);
	return text;
}

static void check_file(const char *dir, const char *name, const char *want)
{
	char *text = slurp(dir, name);

	CHECK_STR(text, want);
	free(text);
}

static bool exists(const char *dir, const char *name)
{
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s/%s", base, dir, name);
	return lstat(path, &st) == 0;
}

static const char *const events[] = { "cycles", "taskClockMillis" };
static struct cg_host_disk disks[] = { { "nvme0n1", 1.5, 2.5, 10.0 }, { "vda", 0, 0, 0 } };
static struct cg_record records[2];

/*
 * web: 0.75 s on CPU and 250 voluntary switches in a 0.5 s interval, waits of 1000 and
 * 37000 ns. The other: a label that needs quoting, nothing counted, cycles not valid.
 */
static struct cg_interval make_interval(void)
{
	memset(records, 0, sizeof(records));
	records[0] = (struct cg_record){
		.name = "web",
		.tasks = 12,
		.time_ns = { 750000000, 250000000, 200000000, 1234567 },
		.count[CG_NVCSW] = 250,
		.count[CG_NIVCSW] = 20,
		.count[CG_PREEMPTED_BY_SAME] = 12,
		.count[CG_PREEMPTED_BY_OTHER] = 7,
		.count[CG_PREEMPTED_BY_KERNEL] = 1,
		.count[CG_MIGRATIONS] = 5,
		.count[CG_RUNQ_WAITS] = 2,
		.runq_max_ns = 37000,
		.counter = { 3000000000ULL, 1500000000 },
		.counter_valid = { true, true },
		/* throttled 3 of 5 periods for 12.5 ms; io "full" not read: an empty field */
		.preempters = { { "/system.slice/noisy", 9, 7 } },
		.nr_preempters = 1,
		.cgroupfs = { 5, 3, 12500000, 40000000, 1000, 0, 7654321, 99 },
		.cgroupfs_valid = (1u << CG_NR_CGROUPFS) - 1 - (1u << CG_FS_IO_FULL_NS),
	};
	records[0].runq_hist.bucket[cg_hist_bucket(1000)] = 1;
	records[0].runq_hist.bucket[cg_hist_bucket(37000)] = 1;
	records[0].runq_hist.count = 2;
	records[1] = (struct cg_record){
		.name = TRICKY_LABEL,
		.tasks = 1,
		.counter = { 0, 2500000 },
		.counter_valid = { false, true },
	};
	return (struct cg_interval){
		.epoch_ms = 1700000000123ULL,
		.interval_ns = 500000000,
		.nr_events = 2,
		.event_columns = events,
		.host = { true, 40.0, 5.0, 2, disks },
		.nr_records = 2,
		.records = records,
	};
}

static void test_files(void)
{
	struct cg_interval iv = make_interval();
	struct out_files *o;

	o = out_files__open(in_base("out"), OUT_FILES_PERF);
	CHECK(o != NULL);
	if (!o)
		return;
	/*
	 * Before the first interval: the two files whose headers are known, and the two whose
	 * headers are not yet, empty (every file is made before privileges are dropped).
	 */
	check_file("out", "container-stats.csv", CONTAINER_HEADER);
	check_file("out", "sched-stats.csv", SCHED_HEADER);
	check_file("out", "cgroup-stats.csv", CGROUP_HEADER);
	check_file("out", "perf-stat.csv", "");
	check_file("out", "host-io.csv", "");
	CHECK(!exists("out", "container-summary.json"));

	CHECK(out_files__write(o, &iv) == 0);
	/* The second interval has no host sample, the third one again. */
	iv.epoch_ms += 500;
	iv.host.valid = false;
	iv.nr_records = 1;
	CHECK(out_files__write(o, &iv) == 0);
	iv.epoch_ms += 500;
	iv.host.valid = true;
	iv.host.cpu_busy_percent = 12.25;
	disks[1].write_mbps = 100.04;
	CHECK(out_files__write(o, &iv) == 0);

	/* Checked before the close: every write is flushed. */
	check_file("out", "container-stats.csv",
		   CONTAINER_HEADER "1700000000123,web,1.500,500.0,40.0\n"
				    "1700000000123," TRICKY_CSV ",0.000,0.0,0.0\n"
				    "1700000000623,web,1.500,500.0,40.0\n"
				    "1700000001123,web,1.500,500.0,40.0\n");
	check_file("out", "sched-stats.csv",
		   SCHED_HEADER
		   "1700000000123,web,12,750.000,250.000,200.000,1.235,250,20,5,2,0.992,37.000,"
		   "37.000,12,7,1,/system.slice/noisy,throttled\n"
		   "1700000000123," TRICKY_CSV ",1,0.000,0.000,0.000,0.000,0,0,0,0,,,,0,0,0,,idle\n"
		   "1700000000623,web,12,750.000,250.000,200.000,1.235,250,20,5,2,0.992,37.000,"
		   "37.000,12,7,1,/system.slice/noisy,throttled\n"
		   "1700000001123,web,12,750.000,250.000,200.000,1.235,250,20,5,2,0.992,37.000,"
		   "37.000,12,7,1,/system.slice/noisy,throttled\n");
	check_file("out", "cgroup-stats.csv",
		   CGROUP_HEADER "1700000000123,web,5,3,12.500,40.000,0.001,0.000,7.654,\n"
				 "1700000000123," TRICKY_CSV ",,,,,,,,\n"
				 "1700000000623,web,5,3,12.500,40.000,0.001,0.000,7.654,\n"
				 "1700000001123,web,5,3,12.500,40.000,0.001,0.000,7.654,\n");
	check_file("out", "perf-stat.csv",
		   "epochMillis,container,cycles,taskClockMillis\n"
		   "1700000000123,web,3000000000,1500.000\n"
		   "1700000000123," TRICKY_CSV ",,2.500\n"
		   "1700000000623,web,3000000000,1500.000\n"
		   "1700000001123,web,3000000000,1500.000\n");
	check_file("out", "host-io.csv",
		   "epochMs,cpuBusyPercent,cpuIowaitPercent,nvme0n1ReadMBps,nvme0n1WriteMBps,"
		   "nvme0n1BusyPercent,vdaReadMBps,vdaWriteMBps,vdaBusyPercent\n"
		   "1700000000123,40.0,5.0,1.5,2.5,10.0,0.0,0.0,0.0\n"
		   "1700000001123,12.2,5.0,1.5,2.5,10.0,0.0,100.0,0.0\n");

	CHECK(out_files__write_summary(o, "{\"a\":1}") == 0);
	check_file("out", "container-summary.json", "{\"a\":1}\n");
	CHECK(out_files__write_summary(o, "{\"b\":2}") == 0);
	check_file("out", "container-summary.json", "{\"b\":2}\n");
	CHECK(!exists("out", ".container-summary.json.tmp"));
	out_files__close(o);
	disks[1].write_mbps = 0;

	/* An existing directory is fine, and its files start over. */
	o = out_files__open(in_base("out"), OUT_FILES_PERF);
	CHECK(o != NULL);
	out_files__close(o);
	check_file("out", "container-stats.csv", CONTAINER_HEADER);
}

static void test_without_perf_or_host(void)
{
	struct cg_interval iv = make_interval();
	struct out_files *o;

	iv.nr_events = 0;
	iv.host.valid = false;
	o = out_files__open(in_base("plain"), OUT_FILES_PERF);
	CHECK(o != NULL);
	if (!o)
		return;
	CHECK(out_files__write(o, &iv) == 0);
	/* Events that show up after the first interval get no header, nor rows. */
	iv.nr_events = 2;
	CHECK(out_files__write(o, &iv) == 0);
	out_files__close(o);
	check_file("plain", "perf-stat.csv", "");
	check_file("plain", "host-io.csv", "");
	CHECK(exists("plain", "sched-stats.csv"));

	/* A run that counts no events makes no perf-stat.csv. */
	o = out_files__open(in_base("plain2"), 0);
	CHECK(o != NULL);
	out_files__close(o);
	CHECK(!exists("plain2", "perf-stat.csv"));
	CHECK(exists("plain2", "host-io.csv"));
}

/* A folder root does not own: the summary is made at open and written over at exit. */
static void test_summary_in_place(void)
{
	struct out_files *o;

	o = out_files__open(in_base("inplace"), OUT_FILES_SUMMARY_IN_PLACE);
	CHECK(o != NULL);
	if (!o)
		return;
	check_file("inplace", "container-summary.json", "");
	CHECK(out_files__write_summary(o, "{\"longer\":12345}") == 0);
	check_file("inplace", "container-summary.json", "{\"longer\":12345}\n");
	/* shorter the second time: nothing of the first is left behind */
	CHECK(out_files__write_summary(o, "{\"b\":2}") == 0);
	check_file("inplace", "container-summary.json", "{\"b\":2}\n");
	CHECK(!exists("inplace", ".container-summary.json.tmp"));
	out_files__close(o);
}

static const char precious[] = "precious\n";

static void make_target(void)
{
	FILE *f = fopen(in_base("target"), "w");

	fputs(precious, f);
	fclose(f);
}

static void check_target(void)
{
	char *text = slurp(".", "target");

	CHECK_STR(text, precious);
	free(text);
}

static void plant(const char *dir, const char *name)
{
	char link[4096];

	snprintf(link, sizeof(link), "%s/%s/%s", base, dir, name);
	CHECK(symlink(in_base("target"), link) == 0);
}

static void test_symlinks(void)
{
	struct cg_interval iv = make_interval();
	struct out_files *o;
	struct stat st;
	char link[4096];

	make_target();

	/* A link at a file that is created at open: the open fails, the target is untouched. */
	CHECK(mkdir(in_base("trap"), 0755) == 0);
	plant("trap", "sched-stats.csv");
	errno = 0;
	CHECK(out_files__open(in_base("trap"), OUT_FILES_PERF) == NULL);
	CHECK(errno == ELOOP);
	check_target();

	/* So does one at a file whose header comes later, or at the summary made in place. */
	CHECK(mkdir(in_base("trap3"), 0755) == 0);
	plant("trap3", "perf-stat.csv");
	errno = 0;
	CHECK(out_files__open(in_base("trap3"), OUT_FILES_PERF) == NULL);
	CHECK(errno == ELOOP);
	CHECK(mkdir(in_base("trap4"), 0755) == 0);
	plant("trap4", "container-summary.json");
	errno = 0;
	CHECK(out_files__open(in_base("trap4"), OUT_FILES_SUMMARY_IN_PLACE) == NULL);
	CHECK(errno == ELOOP);
	check_target();

	CHECK(mkdir(in_base("trap2"), 0755) == 0);
	o = out_files__open(in_base("trap2"), OUT_FILES_PERF);
	CHECK(o != NULL);
	if (o) {
		CHECK(out_files__write(o, &iv) == 0);
		/* The summary replaces a link at its name or its temporary name, not the target. */
		plant("trap2", "container-summary.json");
		plant("trap2", ".container-summary.json.tmp");
		CHECK(out_files__write_summary(o, "{}") == 0);
		out_files__close(o);
	}
	check_target();
	snprintf(link, sizeof(link), "%s/trap2/container-summary.json", base);
	CHECK(lstat(link, &st) == 0 && S_ISREG(st.st_mode));
	check_file("trap2", "container-summary.json", "{}\n");

	/* The directory itself may not be a link either. */
	snprintf(link, sizeof(link), "%s/linkdir", base);
	CHECK(symlink(in_base("plain"), link) == 0);
	errno = 0;
	CHECK(out_files__open(link, 0) == NULL);
	CHECK(errno == ENOTDIR);

	/* No parent: no directory. */
	errno = 0;
	CHECK(out_files__open(in_base("missing/out"), 0) == NULL);
	CHECK(errno == ENOENT);
}

int main(void)
{
	char cmd[4200];

	CHECK(mkdtemp(base) != NULL);
	test_files();
	test_without_perf_or_host();
	test_summary_in_place();
	test_symlinks();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	CHECK(system(cmd) == 0);
	return check_done();
}
