// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgroupfs.c: the parsers against the files' formats as the kernel writes them (v2 and v1
 * cpu.stat, PSI files), and the sampler against a directory tree under /tmp that stands in for
 * cgroupfs and /proc: deltas, the v1 fallback, a file that goes away, a cgroup without a row.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sources/cgroupfs.h"
#include "check.h"

#define BIT(i) (1u << (i))

static char tmp[] = "/tmp/cgstat-test-cgroupfs-XXXXXX";

static const char *at(const char *rel, char *buf)
{
	snprintf(buf, PATH_MAX, "%s/%s", tmp, rel);
	return buf;
}

static void write_file(const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f = fopen(at(rel, path), "w");

	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

static void make_dir(const char *rel)
{
	char path[PATH_MAX];

	if (mkdir(at(rel, path), 0755)) {
		perror(path);
		exit(2);
	}
}

static void test_parse_cpu_stat(void)
{
	struct cgroupfs_reading r = {};

	/* v2 with the cpu controller (6.x has nr_bursts, burst_usec after these) */
	cgroupfs_parse_cpu_stat("usage_usec 100811\nuser_usec 0\nsystem_usec 100811\n"
				"nr_periods 250\nnr_throttled 125\nthrottled_usec 6250001\n"
				"nr_bursts 0\nburst_usec 0\n",
				&r);
	CHECK(r.valid ==
	      (BIT(CG_FS_PERIODS) | BIT(CG_FS_THROTTLED_PERIODS) | BIT(CG_FS_THROTTLED_NS)));
	CHECK(r.value[CG_FS_PERIODS] == 250 && r.value[CG_FS_THROTTLED_PERIODS] == 125);
	CHECK(r.value[CG_FS_THROTTLED_NS] == 6250001000ULL);

	/* v2 without it: usage only */
	r = (struct cgroupfs_reading){};
	cgroupfs_parse_cpu_stat("usage_usec 1\nuser_usec 0\nsystem_usec 1\nnice_usec 0\n", &r);
	CHECK(r.valid == 0);

	/* v1: throttled_time in nanoseconds, no newline at the end */
	r = (struct cgroupfs_reading){};
	cgroupfs_parse_cpu_stat("nr_periods 7\nnr_throttled 3\nthrottled_time 123456789\n"
				"nr_bursts 0\nburst_time 0",
				&r);
	CHECK(r.valid ==
	      (BIT(CG_FS_PERIODS) | BIT(CG_FS_THROTTLED_PERIODS) | BIT(CG_FS_THROTTLED_NS)));
	CHECK(r.value[CG_FS_THROTTLED_NS] == 123456789);

	/* what is not a whole decimal, or overflows, is not taken; keys are whole words */
	r = (struct cgroupfs_reading){};
	cgroupfs_parse_cpu_stat("nr_periods -1\nnr_throttled 18446744073709551616\n"
				"throttled_usec 18446744073709552\nxnr_periods 5\nnr_periods5\n"
				"nr_periods 12x\n",
				&r);
	CHECK(r.valid == 0);
	cgroupfs_parse_cpu_stat("nr_throttled 18446744073709551615\n", &r);
	CHECK(r.valid == BIT(CG_FS_THROTTLED_PERIODS) &&
	      r.value[CG_FS_THROTTLED_PERIODS] == 18446744073709551615ULL);
	cgroupfs_parse_cpu_stat("", &r);
	CHECK(r.valid == BIT(CG_FS_THROTTLED_PERIODS));
}

static void test_parse_limits(void)
{
	double cores = -1;

	CHECK(cgroupfs_parse_cpu_max("50000 100000\n", &cores) && cores == 0.5);
	CHECK(cgroupfs_parse_cpu_max("250000 100000", &cores) && cores == 2.5);
	cores = -1;
	CHECK(!cgroupfs_parse_cpu_max("max 100000\n", &cores) && cores == -1);
	CHECK(!cgroupfs_parse_cpu_max("0 100000\n", &cores));
	CHECK(!cgroupfs_parse_cpu_max("50000 0\n", &cores));
	CHECK(!cgroupfs_parse_cpu_max("50000\n", &cores));
	CHECK(!cgroupfs_parse_cpu_max("", &cores));
	CHECK(!cgroupfs_parse_cpu_max("50000 1x\n", &cores));
	CHECK(!cgroupfs_parse_cpu_max("99999999999999999999 100000\n", &cores));
	CHECK(cgroupfs_parse_v1_quota("50000\n", "100000\n", &cores) && cores == 0.5);
	CHECK(!cgroupfs_parse_v1_quota("-1\n", "100000\n", &cores));
	CHECK(!cgroupfs_parse_v1_quota("50000\n", "\n", &cores));

	CHECK(cgroupfs_parse_cpu_list("0-1\n") == 2);
	CHECK(cgroupfs_parse_cpu_list("0,2-3,8\n") == 4);
	CHECK(cgroupfs_parse_cpu_list("7") == 1);
	CHECK(cgroupfs_parse_cpu_list("\n") == 0);
	CHECK(cgroupfs_parse_cpu_list("") == 0);
	CHECK(cgroupfs_parse_cpu_list("3-1\n") == -1);
	CHECK(cgroupfs_parse_cpu_list("0-\n") == -1);
	CHECK(cgroupfs_parse_cpu_list("0,,1\n") == -1);
	CHECK(cgroupfs_parse_cpu_list("0-1-2\n") == -1);
	CHECK(cgroupfs_parse_cpu_list("0\n1\n") == -1);
	CHECK(cgroupfs_parse_cpu_list("a\n") == -1);
	CHECK(cgroupfs_parse_cpu_list("0-3000000000\n") == -1);
	CHECK(cgroupfs_parse_cpu_list("0-2147483647\n") == -1);
}

static void test_parse_pressure(void)
{
	struct cgroupfs_reading r = {};

	cgroupfs_parse_pressure("some avg10=1.50 avg60=0.09 avg300=0.77 total=7290277717\n"
				"full avg10=0.00 avg60=0.00 avg300=0.00 total=56838\n",
				CG_FS_CPU_SOME_NS, CG_FS_CPU_FULL_NS, &r);
	CHECK(r.valid == (BIT(CG_FS_CPU_SOME_NS) | BIT(CG_FS_CPU_FULL_NS)));
	CHECK(r.value[CG_FS_CPU_SOME_NS] == 7290277717000ULL);
	CHECK(r.value[CG_FS_CPU_FULL_NS] == 56838000);

	/* memory: "full" not wanted; a kernel before 5.13 has no cpu "full" line */
	r = (struct cgroupfs_reading){};
	cgroupfs_parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n"
				"full avg10=0.00 avg60=0.00 avg300=0.00 total=9\n",
				CG_FS_MEMORY_SOME_NS, -1, &r);
	CHECK(r.valid == BIT(CG_FS_MEMORY_SOME_NS) && r.value[CG_FS_MEMORY_SOME_NS] == 5000);
	r = (struct cgroupfs_reading){};
	cgroupfs_parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n",
				CG_FS_CPU_SOME_NS, CG_FS_CPU_FULL_NS, &r);
	CHECK(r.valid == BIT(CG_FS_CPU_SOME_NS));

	/* a total= on the next line is not this line's; garbage is nothing */
	r = (struct cgroupfs_reading){};
	cgroupfs_parse_pressure("some avg10=0.00\nfull avg10=0.00 total=3\n", CG_FS_IO_SOME_NS,
				CG_FS_IO_FULL_NS, &r);
	CHECK(r.valid == BIT(CG_FS_IO_FULL_NS) && r.value[CG_FS_IO_FULL_NS] == 3000);
	r = (struct cgroupfs_reading){};
	cgroupfs_parse_pressure("some total=\nfull total=x1\nsome  total=1e3\n", CG_FS_IO_SOME_NS,
				CG_FS_IO_FULL_NS, &r);
	CHECK(r.valid == 0);
}

/*
 * Directories by cgid: 1 is "a" (v2 cpu controller), 2 is "b" (hybrid), 3 is "c" (no
 * io.pressure), 4 a cgroup that is gone; 5 has no directory.
 */
static int dir_of(void *ctx, uint64_t cgid, char *path, size_t len)
{
	static const char *const dirs[] = { "v2/a", "v2/b", "v2/c", "v2/gone" };
	char buf[PATH_MAX];

	(void)ctx;
	if (cgid < 1 || cgid > 4)
		return -ENOENT;
	snprintf(path, len, "%s", at(dirs[cgid - 1], buf));
	return 0;
}

static void write_pressure(const char *dir, const char *file, unsigned long some,
			   unsigned long full)
{
	char rel[PATH_MAX], text[256];

	snprintf(rel, sizeof(rel), "%s/%s", dir, file);
	snprintf(text, sizeof(text),
		 "some avg10=0.00 avg60=0.00 avg300=0.00 total=%lu\n"
		 "full avg10=0.00 avg60=0.00 avg300=0.00 total=%lu\n",
		 some, full);
	write_file(rel, text);
}

static void write_cgroup(const char *dir, unsigned long periods, unsigned long throttled_us,
			 unsigned long psi)
{
	char rel[PATH_MAX], text[256];

	snprintf(rel, sizeof(rel), "%s/cpu.stat", dir);
	snprintf(text, sizeof(text),
		 "usage_usec 5\nuser_usec 4\nsystem_usec 1\nnr_periods %lu\nnr_throttled %lu\n"
		 "throttled_usec %lu\n",
		 periods, periods / 2, throttled_us);
	write_file(rel, text);
	write_pressure(dir, "cpu.pressure", psi, psi / 2);
	write_pressure(dir, "memory.pressure", psi / 4, psi / 8);
	write_pressure(dir, "io.pressure", psi * 2, psi);
}

/* stderr into a file while f runs: the lines it wrote */
static int stderr_lines(void (*f)(void *), void *arg, char *text, size_t len)
{
	char path[PATH_MAX];
	int fd, saved, lines = 0;
	ssize_t n;

	fflush(stderr);
	fd = open(at("stderr", path), O_RDWR | O_CREAT | O_TRUNC, 0600);
	saved = dup(2);
	dup2(fd, 2);
	f(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, text, len - 1, 0);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	for (char *p = text; *p; p++)
		lines += *p == '\n';
	return lines;
}

struct sample_args {
	struct cgroupfs *c;
	struct cg_interval *iv;
};

static void do_sample(void *arg)
{
	struct sample_args *a = arg;

	cgroupfs__sample(a->c, a->iv);
}

static void do_baseline(void *arg)
{
	struct sample_args *a = arg;

	cgroupfs__baseline(a->c, 1, "a");
	cgroupfs__baseline(a->c, 2, "b");
}

static void test_sampler(void)
{
	struct cg_record records[5] = { { .name = "a", .cgid = 1 },
					{ .name = "b", .cgid = 2 },
					{ .name = "c", .cgid = 3 },
					{ .name = "gone", .cgid = 4 },
					{ .name = "nodir", .cgid = 5 } };
	struct cg_interval iv = { .nr_records = 5, .records = records };
	struct cgroup_mount v1 = { .root = "/" };
	char text[4096], path[PATH_MAX], proc[PATH_MAX];
	struct sample_args args;
	struct cgroupfs *c;
	const struct cg_record *a = &records[0], *b = &records[1];
	const uint32_t all = BIT(CG_NR_CGROUPFS) - 1;

	make_dir("v2");
	make_dir("v2/a");
	make_dir("v2/b");
	make_dir("v2/c");
	write_cgroup("v2/c", 1, 1, 1);
	at("v2/c/io.pressure", path);
	CHECK(unlink(path) == 0);
	make_dir("v1");
	make_dir("v1/box");
	make_dir("v1/other");
	make_dir("proc");
	make_dir("proc/42");
	write_file("proc/42/cgroup", "3:cpuset:/\n2:cpu,cpuacct:/box\n0::/b\n");
	make_dir("proc/43");
	write_file("proc/43/cgroup", "2:cpu,cpuacct:/other\n0::/b\n");
	write_cgroup("v2/a", 10, 1000, 100);
	/* b: v2's cpu.stat without the cpu controller; its first thread is in v1's /box */
	write_cgroup("v2/b", 0, 0, 200);
	write_file("v2/b/cpu.stat", "usage_usec 5\nuser_usec 4\nsystem_usec 1\n");
	write_file("v2/b/cgroup.threads", "42\n43\n");
	write_file("v1/box/cpu.stat", "nr_periods 100\nnr_throttled 50\nthrottled_time 7000\n");
	write_file("v1/other/cpu.stat", "nr_periods 1\nnr_throttled 1\nthrottled_time 1\n");
	snprintf(v1.path, sizeof(v1.path), "%s", at("v1", path));
	/* the limits: a's v2 quota, b's v1 one, c's cpuset */
	write_file("v2/a/cpu.max", "50000 100000\n");
	write_file("v2/a/cpuset.cpus.effective", "0-1\n");
	write_file("v1/box/cpu.cfs_quota_us", "150000\n");
	write_file("v1/box/cpu.cfs_period_us", "100000\n");
	write_file("v1/other/cpu.cfs_quota_us", "-1\n");
	write_file("v1/other/cpu.cfs_period_us", "100000\n");
	write_file("v2/c/cpuset.cpus.effective", "0,2-3\n");

	/* the sampler keeps the pointer */
	c = cgroupfs__new(at("proc", proc), &v1, dir_of, NULL, false, 0);
	CHECK(c != NULL);
	if (!c)
		return;
	args = (struct sample_args){ c, &iv };
	/* the one line that says where b's throttling comes from */
	CHECK(stderr_lines(do_baseline, &args, text, sizeof(text)) == 1);
	CHECK(strstr(text, "'b': the cpu controller is not enabled") != NULL);
	CHECK(strstr(text, "v1") != NULL);

	write_cgroup("v2/a", 14, 3500, 1100);
	write_cgroup("v2/b", 0, 0, 300);
	write_file("v2/b/cpu.stat", "usage_usec 5\nuser_usec 4\nsystem_usec 1\n");
	write_file("v1/box/cpu.stat", "nr_periods 110\nnr_throttled 55\nthrottled_time 9500\n");
	/* c without io.pressure and the cgroup that is gone: one line each */
	CHECK(stderr_lines(do_sample, &args, text, sizeof(text)) == 2);
	CHECK(strstr(text, "'c': cannot read io.pressure (No such file or directory)") != NULL);
	CHECK(strstr(text, "'gone': its cgroup is gone") != NULL);
	CHECK(a->cgroupfs_valid == all);
	CHECK(a->cgroupfs[CG_FS_PERIODS] == 4 && a->cgroupfs[CG_FS_THROTTLED_PERIODS] == 2);
	CHECK(a->cgroupfs[CG_FS_THROTTLED_NS] == 2500000);
	CHECK(a->cgroupfs[CG_FS_CPU_SOME_NS] == 1000000 &&
	      a->cgroupfs[CG_FS_CPU_FULL_NS] == 500000);
	CHECK(a->cgroupfs[CG_FS_MEMORY_SOME_NS] == 250000);
	CHECK(a->cgroupfs[CG_FS_IO_SOME_NS] == 2000000 && a->cgroupfs[CG_FS_IO_FULL_NS] == 1000000);
	CHECK(b->cgroupfs_valid == all);
	CHECK(b->cgroupfs[CG_FS_PERIODS] == 10 && b->cgroupfs[CG_FS_THROTTLED_PERIODS] == 5);
	CHECK(b->cgroupfs[CG_FS_THROTTLED_NS] == 2500);
	CHECK(b->cgroupfs[CG_FS_CPU_SOME_NS] == 100000);
	/* the limits are levels: c's too, without a baseline; the smaller of quota and cpuset */
	CHECK(a->cpu_limit_cores == 0.5 && b->cpu_limit_cores == 1.5);
	CHECK(records[2].cpu_limit_cores == 3 && records[3].cpu_limit_cores == 0);
	/* c's first reading (no baseline), gone and no directory: nothing */
	CHECK(!records[2].cgroupfs_valid && !records[3].cgroupfs_valid &&
	      !records[4].cgroupfs_valid);

	/*
	 * c: everything but io; nothing said again. b's first process is now in another v1
	 * cgroup: no throttling delta across the two.
	 */
	write_file("v2/b/cgroup.threads", "43\n");
	write_file("v2/a/cpu.max", "max 100000\n");
	CHECK(stderr_lines(do_sample, &args, text, sizeof(text)) == 0);
	/* a's quota gone: its cpuset; b's new v1 cgroup has no quota */
	CHECK(a->cpu_limit_cores == 2 && b->cpu_limit_cores == 0);
	CHECK(records[2].cgroupfs_valid ==
	      (all & ~(BIT(CG_FS_IO_SOME_NS) | BIT(CG_FS_IO_FULL_NS))));
	CHECK(a->cgroupfs_valid == all && a->cgroupfs[CG_FS_PERIODS] == 0 &&
	      a->cgroupfs[CG_FS_CPU_SOME_NS] == 0);
	CHECK(!records[3].cgroupfs_valid);
	CHECK(b->cgroupfs_valid == (all & ~(BIT(CG_FS_PERIODS) | BIT(CG_FS_THROTTLED_PERIODS) |
					    BIT(CG_FS_THROTTLED_NS))));
	/* still gone: not said again */
	CHECK(stderr_lines(do_sample, &args, text, sizeof(text)) == 0);
	CHECK(b->cgroupfs_valid == all && b->cgroupfs[CG_FS_PERIODS] == 0);

	/* b's last process left: its v1 cgroup is still where its throttling is */
	write_file("v2/b/cgroup.threads", "");
	write_file("v1/other/cpu.stat", "nr_periods 3\nnr_throttled 2\nthrottled_time 4\n");
	cgroupfs__sample(c, &iv);
	CHECK(b->cgroupfs_valid == all && b->cgroupfs[CG_FS_PERIODS] == 2 &&
	      b->cgroupfs[CG_FS_THROTTLED_NS] == 3);

	/* b has no row for an interval: its next row starts over, empty */
	write_file("v2/b/cgroup.threads", "43\n");
	iv.nr_records = 1;
	cgroupfs__sample(c, &iv);
	iv.nr_records = 2;
	write_pressure("v2/b", "cpu.pressure", 9999, 9999);
	cgroupfs__sample(c, &iv);
	CHECK(b->cgroupfs_valid == 0);
	cgroupfs__sample(c, &iv);
	CHECK(b->cgroupfs_valid == all && b->cgroupfs[CG_FS_CPU_SOME_NS] == 0);

	/* a counter that went back (a file written over) is no delta */
	write_cgroup("v2/a", 1, 1, 1);
	cgroupfs__sample(c, &iv);
	CHECK(a->cgroupfs_valid == 0);
	cgroupfs__free(c);

	/* no v1 hierarchy: b has no throttling at all, said once */
	c = cgroupfs__new(proc, NULL, dir_of, NULL, false, 0);
	args.c = c;
	iv.nr_records = 2;
	CHECK(stderr_lines(do_baseline, &args, text, sizeof(text)) == 1);
	CHECK(strstr(text,
		     "'b': the cpu controller is not enabled for it on cgroup v2, and no v1") !=
	      NULL);
	CHECK(stderr_lines(do_sample, &args, text, sizeof(text)) == 0);
	CHECK(b->cgroupfs_valid == (all & ~(BIT(CG_FS_PERIODS) | BIT(CG_FS_THROTTLED_PERIODS) |
					    BIT(CG_FS_THROTTLED_NS))));
	cgroupfs__free(c);

	/* a budget of 1 ns: the first row is read, the others not, said once */
	c = cgroupfs__new(proc, &v1, dir_of, NULL, false, 1);
	args.c = c;
	write_cgroup("v2/a", 10, 1000, 100);
	cgroupfs__baseline(c, 1, "a");
	cgroupfs__baseline(c, 2, "b");
	CHECK(stderr_lines(do_sample, &args, text, sizeof(text)) == 1);
	CHECK(strstr(text, "rows past the first 1 of an interval have empty fields") != NULL);
	CHECK(a->cgroupfs_valid == all && b->cgroupfs_valid == 0);
	CHECK(stderr_lines(do_sample, &args, text, sizeof(text)) == 0);
	cgroupfs__free(c);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int main(void)
{
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 2;
	}
	test_parse_cpu_stat();
	test_parse_pressure();
	test_parse_limits();
	test_sampler();
	nftw(tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return check_done();
}
