// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <math.h>

#include "check.h"
#include "core/derived.h"
#include "lib/util.h"

static int near(double got, double want)
{
	return fabs(got - want) <= 1e-9 * fabs(want) + 1e-12;
}

static double figure(const struct cg_record *r, uint64_t interval_ns, enum cg_figure fig)
{
	double value = -1;

	CHECK(record_figure(r, interval_ns, fig, &value));
	return value;
}

static void test_record_figures(void)
{
	struct cg_record r = {
		.name = "web",
		.tasks = 12,
		.time_ns = { 1500000000, 500000000, 1500000000, 500000000 },
		.count[CG_NVCSW] = 250,
		.count[CG_NIVCSW] = 20,
		.count[CG_MIGRATIONS] = 5,
		.count[CG_RUNQ_WAITS] = 4,
		.runq_max_ns = 37000,
	};
	double value;

	/* Waits of 1000, 1000, 3000 and 37000 ns. */
	r.runq_hist.bucket[cg_hist_bucket(1000)] = 2;
	r.runq_hist.bucket[cg_hist_bucket(3000)] = 1;
	r.runq_hist.bucket[cg_hist_bucket(37000)] = 1;
	r.runq_hist.count = 4;

	CHECK(near(figure(&r, 1000000000, CG_FIG_CPU_CORES), 1.5));
	CHECK(near(figure(&r, 500000000, CG_FIG_CPU_CORES), 3.0));
	CHECK(near(figure(&r, 1000000000, CG_FIG_TASKS), 12));
	CHECK(near(figure(&r, 1000000000, CG_FIG_ONCPU_MILLIS), 1500));
	CHECK(near(figure(&r, 1000000000, CG_FIG_RUNQ_MILLIS), 500));
	CHECK(near(figure(&r, 1000000000, CG_FIG_SLEEP_MILLIS), 1500));
	CHECK(near(figure(&r, 1000000000, CG_FIG_BLOCKED_MILLIS), 500));
	CHECK(near(figure(&r, 1000000000, CG_FIG_VCSW), 250));
	CHECK(near(figure(&r, 1000000000, CG_FIG_IVCSW), 20));
	CHECK(near(figure(&r, 1000000000, CG_FIG_MIGRATIONS), 5));
	CHECK(near(figure(&r, 1000000000, CG_FIG_RUNQ_WAITS), 4));
	/* Rank 2 is in 1000's bucket [960, 1024), midpoint 992; rank 4 in [36864, 40960)
	 * would be 38912 but the exact maximum caps it. */
	CHECK(near(figure(&r, 1000000000, CG_FIG_RUNQ_P50_MICROS), 0.992));
	CHECK(near(figure(&r, 1000000000, CG_FIG_RUNQ_P99_MICROS), 37.0));
	CHECK(near(figure(&r, 1000000000, CG_FIG_RUNQ_MAX_MICROS), 37.0));
	/* 250 switches in half a second. */
	CHECK(near(figure(&r, 500000000, CG_FIG_VCSW_RATE), 500));
	CHECK(near(figure(&r, 500000000, CG_FIG_IVCSW_RATE), 40));
	CHECK(near(figure(&r, 500000000, CG_FIG_MIGRATIONS_RATE), 10));
	CHECK(near(figure(&r, 500000000, CG_FIG_RUNQ_WAITS_RATE), 8));
	CHECK(near(figure(&r, 2000000000, CG_FIG_RUNQ_MILLIS_RATE), 250));
	CHECK(near(figure(&r, 2000000000, CG_FIG_SLEEP_MILLIS_RATE), 750));
	CHECK(near(figure(&r, 2000000000, CG_FIG_BLOCKED_MILLIS_RATE), 250));
	/* Of 4 s of task time: 0.5 s waiting, 1.5 s sleeping, 0.5 s blocked. */
	CHECK(near(figure(&r, 1000000000, CG_FIG_RUNQ_PERCENT), 12.5));
	CHECK(near(figure(&r, 1000000000, CG_FIG_SLEEP_PERCENT), 37.5));
	CHECK(near(figure(&r, 1000000000, CG_FIG_BLOCKED_PERCENT), 12.5));

	/* No time: no rates, no cores, but the amounts are still there. */
	CHECK(!record_figure(&r, 0, CG_FIG_CPU_CORES, &value));
	CHECK(!record_figure(&r, 0, CG_FIG_VCSW_RATE, &value));
	CHECK(!record_figure(&r, 0, CG_FIG_BLOCKED_MILLIS_RATE, &value));
	CHECK(near(figure(&r, 0, CG_FIG_VCSW), 250));

	/* No waits: no run-queue figures at all. */
	r.count[CG_RUNQ_WAITS] = 0;
	r.runq_max_ns = 0;
	CHECK(!record_figure(&r, 1000000000, CG_FIG_RUNQ_P50_MICROS, &value));
	CHECK(!record_figure(&r, 1000000000, CG_FIG_RUNQ_P99_MICROS, &value));
	CHECK(!record_figure(&r, 1000000000, CG_FIG_RUNQ_MAX_MICROS, &value));
	CHECK(near(figure(&r, 1000000000, CG_FIG_RUNQ_WAITS), 0));

	/* No task time: no shares. */
	memset(r.time_ns, 0, sizeof(r.time_ns));
	CHECK(!record_figure(&r, 1000000000, CG_FIG_RUNQ_PERCENT, &value));
	CHECK(near(figure(&r, 1000000000, CG_FIG_CPU_CORES), 0));

	CHECK_STR(figure_columns[CG_FIG_CPU_CORES].name, "cpuCores");
	CHECK_STR(figure_columns[CG_FIG_RUNQ_MAX_MICROS].name, "runqMaxMicros");
	CHECK_STR(figure_columns[CG_FIG_VCSW_RATE].name, "voluntarySwitchesPerSecond");
	CHECK(figure_columns[CG_FIG_CPU_CORES].unit == CG_UNIT_FINE);
	CHECK(figure_columns[CG_FIG_VCSW_RATE].unit == CG_UNIT_COARSE);
	CHECK(figure_columns[CG_FIG_VCSW].unit == CG_UNIT_COUNT);
	CHECK(unit_decimals(CG_UNIT_COUNT) == 0);
	CHECK(unit_decimals(CG_UNIT_FINE) == 3);
	CHECK(unit_decimals(CG_UNIT_COARSE) == 1);
}

/*
 * --light's records: what the sweep counts is there (off-CPU as a whole too), what only events
 * give is not, whatever the amounts hold; and so in run totals (/metrics' counters).
 */
static void test_light_figures(void)
{
	struct cg_record r = {
		.tasks = 3,
		.time_ns = { 1500000000, 500000000, 2000000000, 0, 0 },
		.count[CG_NVCSW] = 250,
		.count[CG_RUNQ_WAITS] = 4,
		.count[CG_PREEMPTED_BY_SAME] = 0,
		.runq_max_ns = 37000,
		.light = true,
	};
	static const enum cg_figure missing[] = {
		CG_FIG_SLEEP_MILLIS,	     CG_FIG_BLOCKED_MILLIS,	CG_FIG_SLEEP_MILLIS_RATE,
		CG_FIG_BLOCKED_MILLIS_RATE,  CG_FIG_SLEEP_PERCENT,	CG_FIG_BLOCKED_PERCENT,
		CG_FIG_STOLEN_MILLIS,	     CG_FIG_STOLEN_MILLIS_RATE, CG_FIG_RUNQ_P50_MICROS,
		CG_FIG_RUNQ_P99_MICROS,	     CG_FIG_RUNQ_MAX_MICROS,	CG_FIG_PREEMPTED_SAME,
		CG_FIG_PREEMPTED_OTHER,	     CG_FIG_PREEMPTED_KERNEL,	CG_FIG_PREEMPTED_SAME_RATE,
		CG_FIG_BUSIEST_THREAD_CORES,
	};
	double value;
	uint64_t amount;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(missing); i++) {
		CHECK(!record_figure(&r, 1000000000, missing[i], &value));
		CHECK(!amounts_value(&r.amounts, missing[i], &amount));
	}
	CHECK(near(figure(&r, 1000000000, CG_FIG_ONCPU_MILLIS), 1500));
	CHECK(near(figure(&r, 1000000000, CG_FIG_RUNQ_MILLIS), 500));
	CHECK(near(figure(&r, 1000000000, CG_FIG_RUNQ_WAITS), 4));
	CHECK(near(figure(&r, 1000000000, CG_FIG_VCSW), 250));
	CHECK(near(figure(&r, 1000000000, CG_FIG_OFFCPU_MILLIS), 2000));
	CHECK(near(figure(&r, 2000000000, CG_FIG_OFFCPU_MILLIS_RATE), 1000));
	/* of 4 s of task time, 0.5 s waiting */
	CHECK(near(figure(&r, 1000000000, CG_FIG_RUNQ_PERCENT), 12.5));
	CHECK(amounts_value(&r.amounts, CG_FIG_OFFCPU_MILLIS, &amount) && amount == 2000000000);

	/* the default mode has off-CPU as a whole as sleep and blocked together */
	r.light = false;
	r.time_ns[CG_BLOCKED] = 500000000;
	CHECK(near(figure(&r, 1000000000, CG_FIG_OFFCPU_MILLIS), 2500));
	CHECK(near(figure(&r, 1000000000, CG_FIG_SLEEP_MILLIS), 2000));
}

static void test_event_figure(void)
{
	enum cg_unit unit;

	CHECK(near(event_figure("taskClockMillis", 2500000000ULL, &unit), 2500));
	CHECK(unit == CG_UNIT_FINE);
	CHECK(near(event_figure("cycles", 123456789, &unit), 123456789));
	CHECK(unit == CG_UNIT_COUNT);
}

static const char *const columns[] = {
	"cycles",	 "instructions", "cacheReferences", "cacheMisses",
	"l1dLoadMisses", "branchMisses", "taskClockMillis", "pageFaults",
};

static void test_derived(void)
{
	uint64_t counter[8] = { 3000000000ULL, 6000000000ULL, 1000000,	  250000,
				12000000,      3000000,	      1000000000, 77 };
	bool valid[8] = { true, true, true, true, true, true, true, true };
	struct cg_derived d;

	derived_compute(&d, 8, columns, counter, valid);
	/* 3e9 cycles in 1e9 ns of task clock; 6e9 instructions. */
	CHECK(d.valid[CG_DERIVED_GHZ] && near(d.value[CG_DERIVED_GHZ], 3.0));
	CHECK(d.valid[CG_DERIVED_IPC] && near(d.value[CG_DERIVED_IPC], 2.0));
	CHECK(d.valid[CG_DERIVED_LLC_MPKI] && near(d.value[CG_DERIVED_LLC_MPKI], 250000e3 / 6e9));
	CHECK(d.valid[CG_DERIVED_LLC_MISS_PERCENT] &&
	      near(d.value[CG_DERIVED_LLC_MISS_PERCENT], 25.0));
	CHECK(d.valid[CG_DERIVED_L1D_MPKI] && near(d.value[CG_DERIVED_L1D_MPKI], 2.0));
	CHECK(d.valid[CG_DERIVED_BRANCH_MPKI] && near(d.value[CG_DERIVED_BRANCH_MPKI], 0.5));

	/* cycles not counted: both ratios with cycles in them are gone, and only those. */
	valid[0] = false;
	derived_compute(&d, 8, columns, counter, valid);
	CHECK(!d.valid[CG_DERIVED_GHZ]);
	CHECK(!d.valid[CG_DERIVED_IPC]);
	CHECK(d.valid[CG_DERIVED_LLC_MPKI]);
	CHECK(d.valid[CG_DERIVED_BRANCH_MPKI]);
	valid[0] = true;

	/* instructions 0: every per-kilo-instruction ratio is gone, IPC is 0 and real. */
	counter[1] = 0;
	derived_compute(&d, 8, columns, counter, valid);
	CHECK(!d.valid[CG_DERIVED_LLC_MPKI]);
	CHECK(!d.valid[CG_DERIVED_L1D_MPKI]);
	CHECK(!d.valid[CG_DERIVED_BRANCH_MPKI]);
	CHECK(d.valid[CG_DERIVED_IPC] && d.value[CG_DERIVED_IPC] == 0);
	CHECK(d.valid[CG_DERIVED_LLC_MISS_PERCENT]);
	counter[1] = 6000000000ULL;

	/* Only cycles and instructions in the event list: IPC alone can be had. */
	derived_compute(&d, 2, columns, counter, valid);
	CHECK(d.valid[CG_DERIVED_IPC] && near(d.value[CG_DERIVED_IPC], 2.0));
	CHECK(!d.valid[CG_DERIVED_GHZ]);
	CHECK(!d.valid[CG_DERIVED_LLC_MPKI]);
	CHECK(!d.valid[CG_DERIVED_LLC_MISS_PERCENT]);
	CHECK(!d.valid[CG_DERIVED_L1D_MPKI]);
	CHECK(!d.valid[CG_DERIVED_BRANCH_MPKI]);

	/* No events at all. */
	derived_compute(&d, 0, columns, counter, valid);
	CHECK(!d.valid[CG_DERIVED_IPC]);

	CHECK_STR(derived_columns[CG_DERIVED_GHZ].name, "ghz");
	CHECK_STR(derived_columns[CG_DERIVED_IPC].name, "instructionsPerCycle");
	CHECK_STR(derived_columns[CG_DERIVED_LLC_MPKI].name, "llcMissesPerKiloInstructions");
	CHECK_STR(derived_columns[CG_DERIVED_LLC_MISS_PERCENT].name, "llcMissPercent");
	CHECK_STR(derived_columns[CG_DERIVED_L1D_MPKI].name, "l1dMissesPerKiloInstructions");
	CHECK_STR(derived_columns[CG_DERIVED_BRANCH_MPKI].name, "branchMissesPerKiloInstructions");
}

static void test_host_columns(void)
{
	struct cg_host_disk disks[2] = {
		{ "nvme0n1", 1.5, 2.5, 10.0 },
		{ "vda", 3.0, 4.0, 50.0 },
	};
	struct cg_host h = { true, 40.0, 5.0, 2, disks };
	const char *names[] = {
		"cpuBusyPercent",     "cpuIowaitPercent", "nvme0n1ReadMBps", "nvme0n1WriteMBps",
		"nvme0n1BusyPercent", "vdaReadMBps",	  "vdaWriteMBps",    "vdaBusyPercent",
	};
	double values[] = { 40.0, 5.0, 1.5, 2.5, 10.0, 3.0, 4.0, 50.0 };
	char name[CG_HOST_COLUMN_NAME_MAX];
	int i;

	CHECK(host_nr_columns(&h) == 8);
	for (i = 0; i < 8; i++) {
		CHECK(host_column(&h, i, name) == values[i]);
		CHECK_STR(name, names[i]);
	}
}

/* The verdict of a record over 1 s on 2 CPUs, with its text. */
static enum cg_verdict verdict_of(const struct cg_record *r, char *text)
{
	return record_verdict(r, NSEC_PER_SEC, 2, text, CG_LABEL_FIGURE_MAX);
}

static void test_verdict(void)
{
	char text[CG_LABEL_FIGURE_MAX];
	struct cg_record r = { .name = "web" };
	double value;

	/* nothing ran, or less than 1 % of a core: idle, whatever the waits below the floor */
	CHECK(verdict_of(&r, text) == CG_VERDICT_IDLE);
	CHECK_STR(text, "idle");
	r.time_ns[CG_ONCPU] = 9 * NSEC_PER_MSEC;
	r.time_ns[CG_RUNQ] = 9 * NSEC_PER_MSEC;
	r.time_ns[CG_BLOCKED] = 9 * NSEC_PER_MSEC;
	CHECK(verdict_of(&r, text) == CG_VERDICT_IDLE);

	/* half a core, waits under 10 % of it: ok */
	r.time_ns[CG_ONCPU] = 500 * NSEC_PER_MSEC;
	r.time_ns[CG_RUNQ] = 49 * NSEC_PER_MSEC;
	CHECK(verdict_of(&r, text) == CG_VERDICT_OK);
	CHECK_STR(text, "ok");

	/* 10 % of on-CPU in the run queue: contended, by what preempted most */
	r.time_ns[CG_RUNQ] = 50 * NSEC_PER_MSEC;
	CHECK(verdict_of(&r, text) == CG_VERDICT_CONTENDED);
	CHECK_STR(text, "contended");
	r.count[CG_PREEMPTED_BY_SAME] = 5;
	r.count[CG_PREEMPTED_BY_KERNEL] = 4;
	CHECK(verdict_of(&r, text) == CG_VERDICT_CONTENDED);
	CHECK_STR(text, "contended:same");
	r.count[CG_PREEMPTED_BY_KERNEL] = 5; /* a tie: what the container cannot fix itself */
	record_verdict(&r, NSEC_PER_SEC, 2, text, sizeof(text));
	CHECK_STR(text, "contended:kernel");
	r.count[CG_PREEMPTED_BY_OTHER] = 5;
	record_verdict(&r, NSEC_PER_SEC, 2, text, sizeof(text));
	CHECK_STR(text, "contended:other");
	r.preempters[0] = (struct cg_record_preempter){ "/system.slice/noisy", 7, 5 };
	r.nr_preempters = 1;
	record_verdict(&r, NSEC_PER_SEC, 2, text, sizeof(text));
	CHECK_STR(text, "contended:other:/system.slice/noisy");
	/* cut at len like snprintf */
	record_verdict(&r, NSEC_PER_SEC, 2, text, 12);
	CHECK_STR(text, "contended:o");

	/* blocked at least as long as on-CPU and the run queue: blocked, by the pressure seen */
	r.time_ns[CG_BLOCKED] = 500 * NSEC_PER_MSEC;
	CHECK(verdict_of(&r, text) == CG_VERDICT_BLOCKED);
	CHECK_STR(text, "blocked");
	r.cgroupfs[CG_FS_IO_SOME_NS] = 300 * NSEC_PER_MSEC;
	r.cgroupfs[CG_FS_MEMORY_SOME_NS] = 400 * NSEC_PER_MSEC;
	r.cgroupfs_valid = 1u << CG_FS_IO_SOME_NS;
	verdict_of(&r, text);
	CHECK_STR(text, "blocked:io");
	r.cgroupfs_valid |= 1u << CG_FS_MEMORY_SOME_NS;
	verdict_of(&r, text);
	CHECK_STR(text, "blocked:memory");
	r.time_ns[CG_RUNQ] = 501 * NSEC_PER_MSEC; /* the run queue longer: contended */
	CHECK(verdict_of(&r, text) == CG_VERDICT_CONTENDED);
	r.time_ns[CG_RUNQ] = 50 * NSEC_PER_MSEC;

	/* 95 % of what it may use: the machine's 2 CPUs, or its smaller quota or cpuset */
	r.time_ns[CG_ONCPU] = 1899 * NSEC_PER_MSEC;
	CHECK(verdict_of(&r, text) == CG_VERDICT_OK);
	r.time_ns[CG_ONCPU] = 1900 * NSEC_PER_MSEC;
	CHECK(verdict_of(&r, text) == CG_VERDICT_SATURATED);
	CHECK_STR(text, "saturated");
	r.time_ns[CG_ONCPU] = 480 * NSEC_PER_MSEC;
	r.cpu_limit_cores = 0.5;
	CHECK(verdict_of(&r, text) == CG_VERDICT_SATURATED);
	r.cpu_limit_cores = 4; /* more than the machine has: the machine */
	CHECK(verdict_of(&r, text) == CG_VERDICT_BLOCKED);
	r.cpu_limit_cores = 0.5;

	/*
	 * one thread at 90 % of the interval, the others under half of it: serial, naming it,
	 * after saturated
	 */
	r.cpu_limit_cores = 0;
	r.time_ns[CG_ONCPU] = 1349 * NSEC_PER_MSEC;
	r.busiest = (struct cg_record_thread){ 899 * NSEC_PER_MSEC, 0, 4123, "pulsar-ml-3-1" };
	CHECK(verdict_of(&r, text) == CG_VERDICT_OK);
	r.busiest.on_cpu_ns = 900 * NSEC_PER_MSEC;
	CHECK(verdict_of(&r, text) == CG_VERDICT_SERIAL);
	CHECK_STR(text, "serial:pulsar-ml-3-1:4123");
	/* the others at half of it: a parallel load, not one stage */
	r.time_ns[CG_ONCPU] = 1350 * NSEC_PER_MSEC;
	CHECK(verdict_of(&r, text) == CG_VERDICT_OK);
	r.time_ns[CG_ONCPU] = 1349 * NSEC_PER_MSEC;
	r.cpu_limit_cores = 0.5;
	CHECK(verdict_of(&r, text) == CG_VERDICT_SATURATED);

	/*
	 * With --threads, by demand: a thread that ran 0.43 and waited 0.57 of the interval is
	 * the stage, not "contended"; its waits count, and so do the others'
	 */
	r.cpu_limit_cores = 0;
	r.time_ns[CG_ONCPU] = 500 * NSEC_PER_MSEC;
	r.time_ns[CG_RUNQ] = 600 * NSEC_PER_MSEC;
	r.time_ns[CG_BLOCKED] = 0;
	r.busiest.on_cpu_ns = 430 * NSEC_PER_MSEC;
	CHECK(verdict_of(&r, text) == CG_VERDICT_CONTENDED);
	r.hungriest = (struct cg_record_thread){ 430 * NSEC_PER_MSEC, 469 * NSEC_PER_MSEC, 77,
						 "serial-ml-7" };
	CHECK(verdict_of(&r, text) == CG_VERDICT_CONTENDED);
	r.hungriest.runq_ns = 470 * NSEC_PER_MSEC;
	CHECK(verdict_of(&r, text) == CG_VERDICT_SERIAL);
	CHECK_STR(text, "serial:serial-ml-7:77");
	/* the others running half of what it wanted: a parallel load held back */
	r.time_ns[CG_ONCPU] = 880 * NSEC_PER_MSEC;
	CHECK(verdict_of(&r, text) == CG_VERDICT_CONTENDED);
	r.time_ns[CG_ONCPU] = 879 * NSEC_PER_MSEC;
	CHECK(verdict_of(&r, text) == CG_VERDICT_SERIAL);
	/* another thread wanting 0.9 too: two threads held back, no stage */
	r.runner_up_wanted_ns = 900 * NSEC_PER_MSEC;
	CHECK(verdict_of(&r, text) == CG_VERDICT_CONTENDED);
	r.runner_up_wanted_ns = 899 * NSEC_PER_MSEC;
	CHECK(verdict_of(&r, text) == CG_VERDICT_SERIAL);
	r.runner_up_wanted_ns = 0;
	/* the figures of it: empty without --threads */
	CHECK(record_figure(&r, NSEC_PER_SEC, CG_FIG_HUNGRIEST_RAN_CORES, &value) &&
	      fabs(value - 0.43) < 1e-12);
	CHECK(record_figure(&r, NSEC_PER_SEC, CG_FIG_HUNGRIEST_WAITED_CORES, &value) &&
	      fabs(value - 0.47) < 1e-12);
	memset(&r.hungriest, 0, sizeof(r.hungriest));
	CHECK(!record_figure(&r, NSEC_PER_SEC, CG_FIG_HUNGRIEST_RAN_CORES, &value));
	CHECK(verdict_of(&r, text) == CG_VERDICT_CONTENDED);
	r.time_ns[CG_ONCPU] = 1349 * NSEC_PER_MSEC;
	r.time_ns[CG_RUNQ] = 50 * NSEC_PER_MSEC;
	r.busiest.on_cpu_ns = 900 * NSEC_PER_MSEC;
	r.cpu_limit_cores = 0.5;

	/* a throttled period comes first; zero throttled periods do not count, nor unread ones */
	r.cgroupfs[CG_FS_THROTTLED_PERIODS] = 0;
	r.cgroupfs_valid |= 1u << CG_FS_THROTTLED_PERIODS;
	CHECK(verdict_of(&r, text) == CG_VERDICT_SATURATED);
	r.cgroupfs[CG_FS_THROTTLED_PERIODS] = 1;
	CHECK(verdict_of(&r, text) == CG_VERDICT_THROTTLED);
	CHECK_STR(text, "throttled");
	r.cgroupfs_valid &= ~(1u << CG_FS_THROTTLED_PERIODS);
	CHECK(verdict_of(&r, text) == CG_VERDICT_SATURATED);

	/* no time covered: idle, whatever the amounts; and no text wanted */
	CHECK(record_verdict(&r, NSEC_PER_SEC, 2, NULL, 0) == CG_VERDICT_SATURATED);
	CHECK(record_verdict(&r, 0, 2, NULL, 0) == CG_VERDICT_IDLE);
}

int main(void)
{
	test_record_figures();
	test_light_figures();
	test_event_figure();
	test_derived();
	test_host_columns();
	test_verdict();
	return check_done();
}
