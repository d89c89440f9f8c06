// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The -e list against the constants of <linux/perf_event.h> and perf's hw-cache encoding. */
#include <errno.h>
#include <stdint.h>

#include <linux/perf_event.h>

#include "check.h"
#include "sources/perf_events.h"
#include "core/record.h"

#define HW_CACHE(cache, op, result)                                                           \
	((uint64_t)PERF_COUNT_HW_CACHE_##cache | (uint64_t)PERF_COUNT_HW_CACHE_OP_##op << 8 | \
	 (uint64_t)PERF_COUNT_HW_CACHE_RESULT_##result << 16)

static struct cg_event ev[CG_MAX_EVENTS];
static char err[256];
static int nr;

static int parse(const char *list)
{
	err[0] = '\0';
	return events_parse(list, ev, CG_MAX_EVENTS, &nr, err, sizeof(err));
}

static void test_default_list(void)
{
	static const char *const columns[] = {
		"taskClockMillis", "contextSwitches", "cpuMigrations",	 "pageFaults",
		"cycles",	   "instructions",    "cacheReferences", "cacheMisses",
		"l1dLoadMisses",   "branchMisses",
	};
	int i;

	CHECK_STR(events_default_list(), "task-clock,context-switches,cpu-migrations,page-faults,"
					 "cycles,instructions,cache-references,cache-misses,"
					 "L1-dcache-load-misses,branch-misses");
	CHECK(parse(events_default_list()) == 0);
	CHECK(nr == 10);
	if (nr != 10)
		return;
	for (i = 0; i < 10; i++)
		CHECK_STR(ev[i].column, columns[i]);

	CHECK_STR(ev[0].name, "task-clock");
	CHECK(ev[0].type == PERF_TYPE_SOFTWARE && ev[0].config == PERF_COUNT_SW_TASK_CLOCK);
	CHECK(ev[0].core_source == CG_EVENT_CORE_TASK_CLOCK);
	CHECK(ev[1].type == PERF_TYPE_SOFTWARE && ev[1].config == PERF_COUNT_SW_CONTEXT_SWITCHES);
	CHECK(ev[1].core_source == CG_EVENT_CORE_CONTEXT_SWITCHES);
	CHECK(ev[2].type == PERF_TYPE_SOFTWARE && ev[2].config == PERF_COUNT_SW_CPU_MIGRATIONS);
	CHECK(ev[2].core_source == CG_EVENT_CORE_MIGRATIONS);
	CHECK(ev[3].type == PERF_TYPE_SOFTWARE && ev[3].config == PERF_COUNT_SW_PAGE_FAULTS);
	CHECK(ev[3].core_source == CG_EVENT_CORE_PAGE_FAULTS);
	CHECK(ev[4].type == PERF_TYPE_HARDWARE && ev[4].config == PERF_COUNT_HW_CPU_CYCLES);
	CHECK(ev[5].type == PERF_TYPE_HARDWARE && ev[5].config == PERF_COUNT_HW_INSTRUCTIONS);
	CHECK(ev[6].type == PERF_TYPE_HARDWARE && ev[6].config == PERF_COUNT_HW_CACHE_REFERENCES);
	CHECK(ev[7].type == PERF_TYPE_HARDWARE && ev[7].config == PERF_COUNT_HW_CACHE_MISSES);
	/* L1D = 0, read = 0, miss = 1: 0x10000 */
	CHECK(ev[8].type == PERF_TYPE_HW_CACHE && ev[8].config == 0x10000);
	CHECK(ev[8].config == HW_CACHE(L1D, READ, MISS));
	CHECK(ev[9].type == PERF_TYPE_HARDWARE && ev[9].config == PERF_COUNT_HW_BRANCH_MISSES);
	for (i = 4; i < 10; i++)
		CHECK(ev[i].core_source == CG_EVENT_FROM_PERF);
}

static void test_aliases(void)
{
	CHECK(parse("cs,migrations,faults,cpu-cycles,branches,idle-cycles-frontend,"
		    "idle-cycles-backend") == 0);
	CHECK(nr == 7);
	if (nr != 7)
		return;
	CHECK_STR(ev[0].name, "context-switches");
	CHECK_STR(ev[0].column, "contextSwitches");
	CHECK(ev[0].config == PERF_COUNT_SW_CONTEXT_SWITCHES);
	CHECK(ev[0].core_source == CG_EVENT_CORE_CONTEXT_SWITCHES);
	CHECK_STR(ev[1].column, "cpuMigrations");
	CHECK(ev[1].core_source == CG_EVENT_CORE_MIGRATIONS);
	CHECK_STR(ev[2].column, "pageFaults");
	CHECK(ev[2].type == PERF_TYPE_SOFTWARE && ev[2].config == PERF_COUNT_SW_PAGE_FAULTS);
	CHECK(ev[2].core_source == CG_EVENT_CORE_PAGE_FAULTS);
	CHECK_STR(ev[3].name, "cycles");
	CHECK_STR(ev[3].column, "cycles");
	CHECK_STR(ev[4].column, "branchInstructions");
	CHECK(ev[4].type == PERF_TYPE_HARDWARE &&
	      ev[4].config == PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
	CHECK_STR(ev[5].column, "stalledCyclesFrontend");
	CHECK(ev[5].config == PERF_COUNT_HW_STALLED_CYCLES_FRONTEND);
	CHECK_STR(ev[6].column, "stalledCyclesBackend");
	CHECK(ev[6].config == PERF_COUNT_HW_STALLED_CYCLES_BACKEND);
}

static void test_other_events(void)
{
	CHECK(parse("minor-faults,major-faults,cgroup-switches,cpu-clock,ref-cycles,bus-cycles,"
		    "alignment-faults,emulation-faults") == 0);
	CHECK(nr == 8);
	if (nr == 8) {
		CHECK_STR(ev[0].column, "minorFaults");
		CHECK(ev[0].type == PERF_TYPE_SOFTWARE &&
		      ev[0].config == PERF_COUNT_SW_PAGE_FAULTS_MIN);
		CHECK(ev[0].core_source == CG_EVENT_CORE_MINOR_FAULTS);
		CHECK_STR(ev[1].column, "majorFaults");
		CHECK(ev[1].config == PERF_COUNT_SW_PAGE_FAULTS_MAJ);
		CHECK(ev[1].core_source == CG_EVENT_CORE_MAJOR_FAULTS);
		CHECK_STR(ev[2].column, "cgroupSwitches");
		CHECK(ev[2].type == PERF_TYPE_SOFTWARE && ev[2].config == 11);
		CHECK(ev[2].config == PERF_COUNT_SW_CGROUP_SWITCHES);
		CHECK_STR(ev[3].column, "cpuClock");
		CHECK(ev[3].config == PERF_COUNT_SW_CPU_CLOCK);
		CHECK(ev[3].core_source == CG_EVENT_FROM_PERF);
		CHECK_STR(ev[4].column, "refCycles");
		CHECK(ev[4].type == PERF_TYPE_HARDWARE &&
		      ev[4].config == PERF_COUNT_HW_REF_CPU_CYCLES);
		CHECK_STR(ev[5].column, "busCycles");
		CHECK_STR(ev[6].column, "alignmentFaults");
		CHECK(ev[6].config == PERF_COUNT_SW_ALIGNMENT_FAULTS);
		CHECK_STR(ev[7].column, "emulationFaults");
		CHECK(ev[7].config == PERF_COUNT_SW_EMULATION_FAULTS);
	}

	/*
	 * hw-cache: cache | op << 8 | result << 16. L1I = 1, LL = 2, DTLB = 3, ITLB = 4,
	 * BPU = 5; read = 0; access = 0, miss = 1.
	 */
	CHECK(parse("L1-dcache-loads,L1-icache-load-misses,LLC-loads,LLC-load-misses,dTLB-loads,"
		    "dTLB-load-misses,iTLB-load-misses,branch-loads,branch-load-misses") == 0);
	CHECK(nr == 9);
	if (nr == 9) {
		CHECK_STR(ev[0].column, "l1DcacheLoads");
		CHECK(ev[0].type == PERF_TYPE_HW_CACHE && ev[0].config == 0x00000);
		CHECK_STR(ev[1].column, "l1IcacheLoadMisses");
		CHECK(ev[1].config == 0x10001 && ev[1].config == HW_CACHE(L1I, READ, MISS));
		CHECK_STR(ev[2].column, "llcLoads");
		CHECK(ev[2].config == 0x00002);
		CHECK_STR(ev[3].column, "llcLoadMisses");
		CHECK(ev[3].config == 0x10002 && ev[3].config == HW_CACHE(LL, READ, MISS));
		CHECK_STR(ev[4].column, "dtlbLoads");
		CHECK(ev[4].config == 0x00003);
		CHECK_STR(ev[5].name, "dTLB-load-misses");
		CHECK_STR(ev[5].column, "dtlbLoadMisses");
		CHECK(ev[5].type == PERF_TYPE_HW_CACHE && ev[5].config == 0x10003);
		CHECK_STR(ev[6].column, "itlbLoadMisses");
		CHECK(ev[6].config == 0x10004);
		CHECK_STR(ev[7].column, "branchLoads");
		CHECK(ev[7].config == 0x00005 && ev[7].config == HW_CACHE(BPU, READ, ACCESS));
		CHECK_STR(ev[8].column, "branchLoadMisses");
		CHECK(ev[8].config == 0x10005);
	}

	/* stores and prefetches where perf has them: write = 1, prefetch = 2 */
	CHECK(parse("L1-dcache-stores,LLC-prefetch-misses") == 0);
	CHECK(nr == 2);
	CHECK(ev[0].config == 0x00100 && ev[1].config == 0x10202);
	CHECK_STR(ev[1].column, "llcPrefetchMisses");
	/* perf has no stores for the instruction cache */
	CHECK(parse("L1-icache-stores") == -EINVAL);
	CHECK_STR(err, "unknown event 'L1-icache-stores'");
}

static void test_raw(void)
{
	CHECK(parse("r01c2,r1A2B,rffffffffffffffff") == 0);
	CHECK(nr == 3);
	if (nr == 3) {
		CHECK_STR(ev[0].name, "r01c2");
		CHECK_STR(ev[0].column, "r01c2");
		CHECK(ev[0].type == PERF_TYPE_RAW && ev[0].config == 0x1c2);
		CHECK(ev[0].core_source == CG_EVENT_FROM_PERF);
		CHECK_STR(ev[1].column, "r1a2b");
		CHECK(ev[1].config == 0x1a2b);
		CHECK(ev[2].config == UINT64_MAX);
	}

	CHECK(parse("cycles,rzz") == -EINVAL);
	CHECK_STR(err, "unknown event 'rzz' (a raw event is r and 1 to 16 hex digits)");
	CHECK(nr == 0);
	CHECK(parse("r") == -EINVAL);
	CHECK_STR(err, "unknown event 'r' (a raw event is r and 1 to 16 hex digits)");
	CHECK(parse("r1ffffffffffffffff") == -EINVAL);
	CHECK(strstr(err, "'r1ffffffffffffffff'") != NULL);
	CHECK(parse("r0x1c2") == -EINVAL);
	CHECK(strstr(err, "'r0x1c2'") != NULL);
	/* the same value written twice is the same counter */
	CHECK(parse("r1c2,r01C2") == -EINVAL);
	CHECK_STR(err, "event 'r01C2' repeats 'r1c2'");
}

static void test_errors(void)
{
	CHECK(parse("cycles,cache-mises,instructions") == -EINVAL);
	CHECK_STR(err, "unknown event 'cache-mises'");
	CHECK(nr == 0);
	/* names are case-sensitive, as in perf */
	CHECK(parse("Cycles") == -EINVAL);
	CHECK_STR(err, "unknown event 'Cycles'");

	CHECK(parse("cycles,cpu-cycles") == -EINVAL);
	CHECK_STR(err, "event 'cpu-cycles' repeats 'cycles'");
	CHECK(parse("cs, instructions ,context-switches") == -EINVAL);
	CHECK_STR(err, "event 'context-switches' repeats 'context-switches'");

	CHECK(parse("") == -EINVAL);
	CHECK_STR(err, "empty event list");
	CHECK(parse(" \t ") == -EINVAL);
	CHECK_STR(err, "empty event list");
	CHECK(parse("cycles,") == -EINVAL);
	CHECK_STR(err, "empty name as event 2 of the list");
	CHECK(parse("cycles, ,instructions") == -EINVAL);
	CHECK_STR(err, "empty name as event 2 of the list");
	CHECK(parse(",cycles") == -EINVAL);
	CHECK_STR(err, "empty name as event 1 of the list");

	/* an error with no room for the message still fails */
	CHECK(events_parse("bogus", ev, CG_MAX_EVENTS, &nr, NULL, 0) == -EINVAL);
	CHECK(nr == 0);
	/* a long message is cut to the buffer */
	CHECK(events_parse("bogus", ev, CG_MAX_EVENTS, &nr, err, 10) == -EINVAL);
	CHECK_STR(err, "unknown e");
}

static void test_limits(void)
{
	char name[80];

	/* exactly max is fine, one more is not */
	CHECK(events_parse("cycles,instructions,cs", ev, 3, &nr, err, sizeof(err)) == 0);
	CHECK(nr == 3);
	CHECK(events_parse("cycles,instructions,cs,faults", ev, 3, &nr, err, sizeof(err)) ==
	      -EINVAL);
	CHECK_STR(err, "too many events at 'faults': at most 3");
	CHECK(nr == 0);
	/* as many as the record has counters (CG_MAX_EVENTS, 16), and one more */
	CHECK(parse("task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,"
		    "cache-references,cache-misses,L1-dcache-load-misses,branch-misses,"
		    "minor-faults,major-faults,cpu-clock,ref-cycles,bus-cycles,branches") == 0);
	CHECK(nr == 16);
	CHECK(parse("task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,"
		    "cache-references,cache-misses,L1-dcache-load-misses,branch-misses,"
		    "minor-faults,major-faults,cpu-clock,ref-cycles,bus-cycles,branches,"
		    "LLC-loads") == -EINVAL);
	CHECK_STR(err, "too many events at 'LLC-loads': at most 16");

	/* a name too long for cg_event.name is unknown, not cut */
	memset(name, 'x', 70);
	name[70] = '\0';
	CHECK(parse(name) == -EINVAL);
	CHECK(strncmp(err, "unknown event 'xxxxxxxx", 23) == 0);
	CHECK(strlen(err) == strlen("unknown event ''") + 70);
}

static void test_whitespace(void)
{
	CHECK(parse("  cycles ,\tinstructions\n, L1-dcache-load-misses  ") == 0);
	CHECK(nr == 3);
	if (nr != 3)
		return;
	CHECK_STR(ev[0].name, "cycles");
	CHECK_STR(ev[1].column, "instructions");
	CHECK_STR(ev[2].column, "l1dLoadMisses");
	CHECK(parse("cpu cycles") == -EINVAL);
	CHECK_STR(err, "unknown event 'cpu cycles'");
}

int main(void)
{
	test_default_list();
	test_aliases();
	test_other_events();
	test_raw();
	test_errors();
	test_limits();
	test_whitespace();
	return check_done();
}
