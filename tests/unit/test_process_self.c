// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgstat's own figures for /metrics' process_*: /proc/PID/stat read past a name that holds
 * parentheses and blanks, the clock tick and page size applied, btime from /proc/stat; and
 * malformed text refused. Then this process's own, against getrusage().
 */
#include <errno.h>
#include <sys/resource.h>
#include <unistd.h>

#include "check.h"
#include "lib/process_self.h"
#include "lib/util.h"

static const char proc_stat[] = "cpu  1 2 3 4\nintr 5\nctxt 6\nbtime 1700000000\nprocesses 7\n";

static void test_parse(void)
{
	/* fields 14, 15 (utime, stime) 250 and 50 ticks; 22 starttime 1234 ticks; vsize; rss */
	static const char stat[] =
		"4242 (cg) (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 -20 -5 3 0 "
		"1234 181571584 3783 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 17 1 0 0\n";
	struct process_self p = {};

	CHECK(!process_self_parse(stat, proc_stat, 100, 4096, &p));
	CHECK(p.cpu_ns == 3000000000ULL);
	CHECK(p.vsize_bytes == 181571584ULL && p.rss_bytes == 3783ULL * 4096);
	CHECK(p.start_seconds > 1700000012.33 && p.start_seconds < 1700000012.35);
}

static void test_malformed(void)
{
	struct process_self p;

	CHECK(process_self_parse("4242 (cg) S 1 2", proc_stat, 100, 4096, &p) == -EINVAL);
	CHECK(process_self_parse("4242 cg S 1 2 3", proc_stat, 100, 4096, &p) == -EINVAL);
	CHECK(process_self_parse("", proc_stat, 100, 4096, &p) == -EINVAL);
	CHECK(process_self_parse("1 (a) S 1 1 1 0 -1 0 0 0 0 0 x 0 0 0 0 0 1 0 1 1 1\n", proc_stat,
				 100, 4096, &p) == -EINVAL);
	CHECK(process_self_parse("1 (a) S 1 1 1 0 -1 0 0 0 0 0 1 1 0 0 0 0 1 0 1 1 1\n", "cpu 1\n",
				 100, 4096, &p) == -EINVAL);
	CHECK(process_self_parse("1 (a) S 1 1 1 0 -1 0 0 0 0 0 1 1 0 0 0 0 1 0 1 1 1\n", proc_stat,
				 0, 4096, &p) == -EINVAL);
	CHECK(!process_self_parse("1 (a) S 1 1 1 0 -1 0 0 0 0 0 1 1 0 0 0 0 1 0 1 1 1\n", proc_stat,
				  100, 4096, &p));
}

/* This process: its CPU time as getrusage() says it, to the clock tick. */
static void test_self(void)
{
	struct process_self p;
	struct rusage ru;
	volatile uint64_t spin = 0;
	uint64_t ru_ns, tick_ns = NSEC_PER_SEC / sysconf(_SC_CLK_TCK);

	while (spin < 200000000)
		spin++;
	CHECK(!process_self_read(&p));
	CHECK(!getrusage(RUSAGE_SELF, &ru));
	ru_ns = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * NSEC_PER_SEC +
		(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
	CHECK(p.cpu_ns <= ru_ns + 2 * tick_ns && p.cpu_ns + 2 * tick_ns >= ru_ns);
	CHECK(p.rss_bytes > 0 && p.have_fds && p.open_fds >= 3 && p.max_fds >= p.open_fds);
}

int main(void)
{
	test_parse();
	test_malformed();
	test_self();
	return check_done();
}
