// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The host sampler against pairs of /proc/stat and /proc/diskstats taken from a real machine
 * and edited, with every expected figure worked out by hand in the comments. The sampler reads
 * a fake /proc and /sys in a temporary directory, into which each step copies its fixtures.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "sources/host.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

static char tree[64];

static char *read_fixture(const char *name)
{
	char path[4096];
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/host/%s", FIXTURES, name);
	f = fopen(path, "r");
	if (!f) {
		perror(path);
		exit(2);
	}
	if (getdelim(&text, &len, '\0', f) < 0) {
		perror(path);
		exit(2);
	}
	fclose(f);
	return text;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(path);
		exit(2);
	}
}

/* Copy the fixtures of one step into the fake /proc; NULL removes the file. */
static void install(const char *stat_fixture, const char *diskstats_fixture)
{
	const char *fixture[2] = { stat_fixture, diskstats_fixture };
	const char *file[2] = { "stat", "diskstats" };
	char path[128];
	char *text;
	int i;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/proc/%s", tree, file[i]);
		if (!fixture[i]) {
			unlink(path);
			continue;
		}
		text = read_fixture(fixture[i]);
		write_file(path, text);
		free(text);
	}
}

static void make_dir(const char *rel)
{
	char path[256];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", tree, rel) >= sizeof(path)) {
		fprintf(stderr, "%s/%s: path too long\n", tree, rel);
		exit(2);
	}
	if (mkdir(path, 0755) && errno != EEXIST) {
		perror(path);
		exit(2);
	}
}

/*
 * The /sys of the fixtures: whole disks have a device entry (a directory or, as in the real
 * sysfs, a symlink), loop, zram and device-mapper devices have none, and partitions are not
 * in /sys/block at all.
 */
static void make_tree(void)
{
	static const char *const plain[] = { "loop0", "loop1", "loop2", "loop3", "loop4",
					     "loop5", "loop6", "loop7", "zram0", "dm-0" };
	static const char *const disks[] = { "vda", "nvme0n1", "sda", "cciss!c0d0" };
	char path[256];
	size_t i;

	strcpy(tree, "/tmp/cgstat-test-host-XXXXXX");
	if (!mkdtemp(tree)) {
		perror("mkdtemp");
		exit(2);
	}
	make_dir("proc");
	make_dir("sys");
	make_dir("sys/block");
	make_dir("sys/devices");
	make_dir("sys/devices/sdb-target");
	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		snprintf(path, sizeof(path), "sys/block/%s", plain[i]);
		make_dir(path);
	}
	for (i = 0; i < sizeof(disks) / sizeof(disks[0]); i++) {
		snprintf(path, sizeof(path), "sys/block/%s", disks[i]);
		make_dir(path);
		snprintf(path, sizeof(path), "sys/block/%s/device", disks[i]);
		make_dir(path);
	}
	make_dir("sys/block/sdb");
	snprintf(path, sizeof(path), "%s/sys/block/sdb/device", tree);
	if (symlink("../../devices/sdb-target", path)) {
		perror(path);
		exit(2);
	}
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void remove_tree(void)
{
	nftw(tree, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static struct host_sampler *new_sampler(void)
{
	char proc[128], sys[128];
	struct host_sampler *h;

	snprintf(proc, sizeof(proc), "%s/proc", tree);
	snprintf(sys, sizeof(sys), "%s/sys", tree);
	h = host_sampler__new(proc, sys);
	if (!h) {
		perror("host_sampler__new");
		exit(2);
	}
	return h;
}

static void check_disk(const struct cg_host_disk *d, const char *name, double read_mbps,
		       double write_mbps, double busy_percent)
{
	CHECK_STR(d->name, name);
	CHECK(NEAR(d->read_mbps, read_mbps));
	CHECK(NEAR(d->write_mbps, write_mbps));
	CHECK(NEAR(d->busy_percent, busy_percent));
}

static void test_parse_stat(void)
{
	struct host_cpu_times t;
	char *text;

	text = read_fixture("stat.1");
	CHECK(host_parse_stat(text, &t) == 0);
	CHECK(t.user == 2050 && t.nice == 0 && t.system == 796 && t.idle == 96149);
	CHECK(t.iowait == 336 && t.irq == 0 && t.softirq == 41 && t.steal == 4);
	free(text);

	/* guest (150) and guest_nice are inside user and nice already */
	text = read_fixture("stat.2");
	CHECK(host_parse_stat(text, &t) == 0);
	CHECK(t.user == 2550 && t.nice == 100 && t.steal == 24);
	free(text);

	/* a 2.4 kernel's four fields: the rest count as 0 */
	memset(&t, 0xff, sizeof(t));
	CHECK(host_parse_stat("cpu  100 2 30 400\ncpu0 100 2 30 400\n", &t) == 0);
	CHECK(t.user == 100 && t.nice == 2 && t.system == 30 && t.idle == 400);
	CHECK(t.iowait == 0 && t.irq == 0 && t.softirq == 0 && t.steal == 0);

	/* seven fields (2.6.0 to 2.6.10), no newline at the end, not the first line */
	CHECK(host_parse_stat("intr 5 0\ncpu  1 2 3 4 5 6 7", &t) == 0);
	CHECK(t.user == 1 && t.softirq == 7 && t.steal == 0);

	CHECK(host_parse_stat("cpu  1 2 3\n", &t) == -EINVAL);
	CHECK(host_parse_stat("cpu0 1 2 3 4\ncpu1 1 2 3 4\n", &t) == -EINVAL);
	CHECK(host_parse_stat("cpu  1 2 x 4 5\n", &t) == -EINVAL);
	CHECK(host_parse_stat("cpu  1 2 3 -4 5\n", &t) == -EINVAL);
	CHECK(host_parse_stat("cpu  1 2 3 99999999999999999999\n", &t) == -EINVAL);
	CHECK(host_parse_stat("", &t) == -EINVAL);
}

static void test_parse_diskstats_formats(void)
{
	struct host_disk_reading d[16];
	char *text;
	int nr;

	/* before 4.18: 14 fields */
	text = read_fixture("diskstats-14.1");
	CHECK(host_parse_diskstats(text, d, 16, &nr) == 0);
	CHECK(nr == 3);
	CHECK_STR(d[0].name, "sda");
	CHECK(d[0].sectors_read == 10093026 && d[0].sectors_written == 4128472);
	CHECK(d[0].ms_doing_io == 101552);
	CHECK_STR(d[2].name, "dm-0");
	free(text);

	/* 4.18 to 5.4: four discard fields more */
	text = read_fixture("diskstats-18.2");
	CHECK(host_parse_diskstats(text, d, 16, &nr) == 0);
	CHECK(nr == 3);
	CHECK_STR(d[1].name, "sda1");
	CHECK(d[1].sectors_read == 10110978 && d[1].sectors_written == 4133000);
	CHECK(d[1].ms_doing_io == 102500);
	free(text);

	/* 5.5 on: two flush fields more; this machine's own file with lines added */
	text = read_fixture("diskstats.1");
	CHECK(host_parse_diskstats(text, d, 16, &nr) == 0);
	CHECK(nr == 13);
	CHECK_STR(d[0].name, "loop0");
	CHECK_STR(d[8].name, "vda");
	CHECK(d[8].sectors_read == 2376234 && d[8].sectors_written == 454056);
	CHECK(d[8].ms_doing_io == 3628);
	CHECK_STR(d[12].name, "sdb1");
	free(text);
}

static void test_parse_diskstats_malformed(void)
{
	struct host_disk_reading d[16], sentinel = { .name = "untouched" };
	char *text;
	int nr;

	/*
	 * Taken: sda (14 fields), the 31-character name, sdf (counters at the 64-bit limit) and
	 * sdg (18 fields, no newline at the end). Skipped: 13 fields, an empty line, words, a
	 * letter, a minus sign or a number past 2^64 in a count, a 32-character name, a letter
	 * as the major number, a suffix after the digits and a hex count.
	 */
	text = read_fixture("diskstats.malformed");
	CHECK(host_parse_diskstats(text, d, 16, &nr) == 0);
	CHECK(nr == 4);
	CHECK_STR(d[0].name, "sda");
	CHECK(d[0].sectors_read == 3 && d[0].sectors_written == 7 && d[0].ms_doing_io == 10);
	CHECK_STR(d[1].name, "abcdefghijklmnopqrstuvwxyz01234");
	CHECK(d[1].sectors_read == 30 && d[1].sectors_written == 70 && d[1].ms_doing_io == 100);
	CHECK_STR(d[2].name, "sdf");
	CHECK(d[2].sectors_read == UINT64_MAX && d[2].sectors_written == UINT64_MAX - 1);
	CHECK(d[2].ms_doing_io == 4294967295u);
	CHECK_STR(d[3].name, "sdg");
	CHECK(d[3].sectors_read == 3 && d[3].sectors_written == 7 && d[3].ms_doing_io == 10);

	/* more lines than room: the first ones are stored, all are counted */
	d[2] = sentinel;
	CHECK(host_parse_diskstats(text, d, 2, &nr) == 0);
	CHECK(nr == 4);
	CHECK_STR(d[1].name, "abcdefghijklmnopqrstuvwxyz01234");
	CHECK_STR(d[2].name, "untouched");
	CHECK(host_parse_diskstats(text, NULL, 0, &nr) == 0);
	CHECK(nr == 4);
	free(text);

	CHECK(host_parse_diskstats("", d, 16, &nr) == 0);
	CHECK(nr == 0);
	CHECK(host_parse_diskstats("\n\n  \n", d, 16, &nr) == 0);
	CHECK(nr == 0);
}

static void test_sampler_sequence(void)
{
	struct host_sampler *h;
	struct cg_host out;

	make_tree();
	h = new_sampler();

	/*
	 * First reading: no rates yet, but the disk list is fixed: sdb (device is a symlink)
	 * and vda, sorted. Not loop0-7, zram0 (no device entry), vda1, sdb1 (partitions).
	 */
	install("stat.1", "diskstats.1");
	CHECK(host_sampler__sample(h, 1000000000, &out) == 0);
	CHECK(!out.valid);
	CHECK(out.nr_disks == 2);
	if (out.nr_disks == 2) {
		check_disk(&out.disks[0], "sdb", 0, 0, 0);
		check_disk(&out.disks[1], "vda", 0, 0, 0);
	}

	/*
	 * 2 s later. CPU deltas: user 500, nice 100, system 200, idle 900, iowait 200, irq 40,
	 * softirq 40, steal 20 (guest 150 not counted again): total 2000, busy (2000 - 900 -
	 * 200) / 2000 = 45 %, iowait 200 / 2000 = 10 %.
	 * vda: 40000 sectors read * 512 = 20.48 MB / 2 s = 10.24 MB/s; 10000 written = 2.56 MB/s;
	 * 500 ms doing I/O / 2000 ms = 25 %.
	 * sdb: nothing read; 195312 sectors written * 512 = 99.999744 MB / 2 s = 49.999872 MB/s;
	 * 2500 ms doing I/O in 2000 ms is 125 %, capped at 100.
	 * nvme0n1 is new and has a device entry, but the list is fixed: ignored.
	 */
	install("stat.2", "diskstats.2");
	CHECK(host_sampler__sample(h, 3000000000, &out) == 0);
	CHECK(out.valid);
	CHECK(NEAR(out.cpu_busy_percent, 45.0));
	CHECK(NEAR(out.cpu_iowait_percent, 10.0));
	CHECK(out.nr_disks == 2);
	if (out.nr_disks == 2) {
		check_disk(&out.disks[0], "sdb", 0, 49.999872, 100);
		check_disk(&out.disks[1], "vda", 10.24, 2.56, 25);
	}

	/*
	 * 1 s later. CPU: user 300, system 100, idle 600, iowait went back by 50 (counts 0):
	 * total 1000, busy 40 %, iowait 0 %.
	 * vda's sectors read went back (reset): 0 MB/s; 2000 sectors written = 1.024 MB/s;
	 * 100 ms doing I/O = 10 %. sdb is gone: all 0.
	 */
	install("stat.3", "diskstats.3");
	CHECK(host_sampler__sample(h, 4000000000, &out) == 0);
	CHECK(out.valid);
	CHECK(NEAR(out.cpu_busy_percent, 40.0));
	CHECK(NEAR(out.cpu_iowait_percent, 0.0));
	CHECK(out.nr_disks == 2);
	if (out.nr_disks == 2) {
		check_disk(&out.disks[0], "sdb", 0, 0, 0);
		check_disk(&out.disks[1], "vda", 0, 1.024, 10);
	}

	/*
	 * 1 s later, /proc/stat unchanged: no ticks, both shares 0. vda: 1000 sectors read from
	 * its new base = 0.512 MB/s. sdb is back with new counters: no base yet, all 0.
	 */
	install("stat.4", "diskstats.4");
	CHECK(host_sampler__sample(h, 5000000000, &out) == 0);
	CHECK(out.valid);
	CHECK(NEAR(out.cpu_busy_percent, 0.0));
	CHECK(NEAR(out.cpu_iowait_percent, 0.0));
	if (out.nr_disks == 2) {
		check_disk(&out.disks[0], "sdb", 0, 0, 0);
		check_disk(&out.disks[1], "vda", 0.512, 0, 0);
	}

	/*
	 * 1 s later. CPU: user 10, idle 65, iowait 25: busy 10 %, iowait 25 %. vda idle. sdb:
	 * 2000 sectors read = 1.024 MB/s, 1000 written = 0.512 MB/s, 250 ms = 25 %.
	 */
	install("stat.5", "diskstats.5");
	CHECK(host_sampler__sample(h, 6000000000, &out) == 0);
	CHECK(out.valid);
	CHECK(NEAR(out.cpu_busy_percent, 10.0));
	CHECK(NEAR(out.cpu_iowait_percent, 25.0));
	if (out.nr_disks == 2) {
		check_disk(&out.disks[0], "sdb", 1.024, 0.512, 25);
		check_disk(&out.disks[1], "vda", 0, 0, 0);
	}

	host_sampler__free(h);
	remove_tree();
}

/*
 * Older formats through the sampler, 2 s apart: sda read 20000 sectors (5.12 MB/s), wrote
 * 5000 (1.28 MB/s), 1000 ms doing I/O (50 %). sda1 is a partition and dm-0 has no device
 * entry. CPU as in the sequence's second step: 45 % and 10 %.
 */
static void test_sampler_formats(void)
{
	static const char *const first[] = { "diskstats-14.1", "diskstats-18.1" };
	static const char *const second[] = { "diskstats-14.2", "diskstats-18.2" };
	struct host_sampler *h;
	struct cg_host out;
	int i;

	for (i = 0; i < 2; i++) {
		make_tree();
		h = new_sampler();
		install("stat.1", first[i]);
		CHECK(host_sampler__sample(h, 1000000000, &out) == 0);
		CHECK(!out.valid);
		install("stat.2", second[i]);
		CHECK(host_sampler__sample(h, 3000000000, &out) == 0);
		CHECK(out.valid);
		CHECK(NEAR(out.cpu_busy_percent, 45.0));
		CHECK(NEAR(out.cpu_iowait_percent, 10.0));
		CHECK(out.nr_disks == 1);
		if (out.nr_disks == 1)
			check_disk(&out.disks[0], "sda", 5.12, 1.28, 50);
		host_sampler__free(h);
		remove_tree();
	}
}

/*
 * diskstats names a cciss disk "cciss/c0d0", sysfs "cciss!c0d0". 2 s apart: 10000 sectors
 * read = 2.56 MB/s, 2000 written = 0.512 MB/s, 500 ms = 25 %.
 */
static void test_sampler_slash_name(void)
{
	struct host_sampler *h;
	struct cg_host out;

	make_tree();
	h = new_sampler();
	install("stat.1", "diskstats-cciss.1");
	CHECK(host_sampler__sample(h, 1000000000, &out) == 0);
	install("stat.2", "diskstats-cciss.2");
	CHECK(host_sampler__sample(h, 3000000000, &out) == 0);
	CHECK(out.nr_disks == 1);
	if (out.nr_disks == 1)
		check_disk(&out.disks[0], "cciss/c0d0", 2.56, 0.512, 25);
	host_sampler__free(h);
	remove_tree();
}

static void test_sampler_errors(void)
{
	struct host_sampler *h;
	struct cg_host out;
	char path[128];

	make_tree();
	h = new_sampler();

	install(NULL, NULL);
	CHECK(host_sampler__sample(h, 500000000, &out) == -ENOENT);
	CHECK(!out.valid);
	CHECK(out.nr_disks == 0);

	install("stat.1", "diskstats.1");
	CHECK(host_sampler__sample(h, 1000000000, &out) == 0);
	CHECK(!out.valid);

	/* failed readings leave the first one as the base */
	install("stat.2", NULL);
	CHECK(host_sampler__sample(h, 2000000000, &out) == -ENOENT);
	CHECK(!out.valid);
	CHECK(out.nr_disks == 2);
	snprintf(path, sizeof(path), "%s/proc/stat", tree);
	write_file(path, "cpu  1 2\n");
	CHECK(host_sampler__sample(h, 2500000000, &out) == -EINVAL);
	CHECK(!out.valid);

	/* so the next one spans the 2 s from the first: the sequence's second step again */
	install("stat.2", "diskstats.2");
	CHECK(host_sampler__sample(h, 3000000000, &out) == 0);
	CHECK(out.valid);
	CHECK(NEAR(out.cpu_busy_percent, 45.0));
	if (out.nr_disks == 2)
		check_disk(&out.disks[1], "vda", 10.24, 2.56, 25);

	/* no time passed: no disk rate can be had, the CPU shares still can (40 %, 0 %) */
	install("stat.3", "diskstats.3");
	CHECK(host_sampler__sample(h, 3000000000, &out) == 0);
	CHECK(out.valid);
	CHECK(NEAR(out.cpu_busy_percent, 40.0));
	if (out.nr_disks == 2)
		check_disk(&out.disks[1], "vda", 0, 0, 0);

	host_sampler__free(h);
	remove_tree();
}

int main(void)
{
	test_parse_stat();
	test_parse_diskstats_formats();
	test_parse_diskstats_malformed();
	test_sampler_sequence();
	test_sampler_formats();
	test_sampler_slash_name();
	test_sampler_errors();
	return check_done();
}
