// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pingpong: two processes pass one byte back and forth over two pipes, the overhead
 * benchmark's context-switch load. Unlike `perf bench sched pipe`, each end can be put into a
 * cgroup of its own, so that every switch crosses cgroups; with the same cgroup for both ends
 * the two scenarios differ in nothing else.
 *
 *   pingpong [-a CGROUP] [-b CGROUP] [-c CPU] [-C CPU] [-w WARMUP] [-k BLOCKS] ROUND_TRIPS
 *
 * The parent moves into CGROUP a and onto CPU c before it forks, so the child starts there
 * too; the child then moves into b and onto C where they are given. After WARMUP round trips
 * (default 10000) it times ROUND_TRIPS in BLOCKS equal blocks (default 1) and prints one line:
 *
 *   round_trips=N blocks=K ns_per_round_trip=X mean_ns_per_round_trip=M switches_per_round_trip=Y
 *
 * X is the fastest block's time per round trip and M the mean over all of them. On a shared
 * machine another job's time slices and interrupts only ever add to a block's time, so the
 * fastest block is the best estimate of what the round trip itself costs. Y is what the kernel
 * counted (getrusage of both ends over the timed round trips), so that the benchmark divides
 * by switches that happened rather than by ones assumed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../user/lib/util.h"

static void die(const char *what)
{
	fprintf(stderr, "pingpong: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr, "usage: pingpong [-a CGROUP] [-b CGROUP] [-c CPU] [-C CPU] [-w WARMUP] "
			"[-k BLOCKS] ROUND_TRIPS (a multiple of BLOCKS)\n");
	exit(2);
}

static uint64_t switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

static void join_cgroup(const char *dir)
{
	char path[4096];
	int fd;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		die(path);
	/* "0" is the writer itself: no pid to get wrong after a fork. */
	if (write(fd, "0", 1) != 1)
		die(path);
	close(fd);
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static void put(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		die("write");
}

static char get(int fd)
{
	char c;

	if (read(fd, &c, 1) != 1)
		die("read");
	return c;
}

/*
 * The child echoes every byte. 'S' and 'E' bracket the timed round trips: it counts its own
 * switches between them and sends the count back after 'E'.
 */
static void child(int in, int out)
{
	uint64_t start = 0, count;

	for (;;) {
		char c = get(in);

		if (c == 'S')
			start = switches();
		if (c == 'E') {
			count = switches() - start;
			if (write(out, &count, sizeof(count)) != sizeof(count))
				die("write");
			exit(0);
		}
		put(out, c);
	}
}

static long parse(const char *text, long min)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < min)
		usage();
	return v;
}

static void round_trips(int out, int in, long n)
{
	for (long i = 0; i < n; i++) {
		put(out, 'x');
		get(in);
	}
}

int main(int argc, char **argv)
{
	const char *cg_a = NULL, *cg_b = NULL;
	int cpu_a = -1, cpu_b = -1, p2c[2], c2p[2], status, opt;
	long rounds, warmup = 10000, blocks = 1, per_block;
	uint64_t sw0, sw1, child_sw, best = UINT64_MAX, total = 0;
	pid_t pid;

	while ((opt = getopt(argc, argv, "a:b:c:C:w:k:")) != -1) {
		switch (opt) {
		case 'a':
			cg_a = optarg;
			break;
		case 'b':
			cg_b = optarg;
			break;
		case 'c':
			cpu_a = parse(optarg, 0);
			break;
		case 'C':
			cpu_b = parse(optarg, 0);
			break;
		case 'w':
			warmup = parse(optarg, 0);
			break;
		case 'k':
			blocks = parse(optarg, 1);
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();
	rounds = parse(argv[optind], 1);
	if (rounds % blocks)
		usage();
	per_block = rounds / blocks;

	join_cgroup(cg_a);
	pin(cpu_a);
	if (pipe(p2c) || pipe(c2p))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(p2c[1]);
		close(c2p[0]);
		join_cgroup(cg_b);
		pin(cpu_b);
		child(p2c[0], c2p[1]);
	}
	close(p2c[0]);
	close(c2p[1]);

	round_trips(p2c[1], c2p[0], warmup);
	put(p2c[1], 'S');
	get(c2p[0]);
	sw0 = switches();
	for (long b = 0; b < blocks; b++) {
		uint64_t t0 = clock_ns(CLOCK_MONOTONIC), t;

		round_trips(p2c[1], c2p[0], per_block);
		t = clock_ns(CLOCK_MONOTONIC) - t0;
		total += t;
		if (t < best)
			best = t;
	}
	sw1 = switches();
	put(p2c[1], 'E');
	if (read(c2p[0], &child_sw, sizeof(child_sw)) != sizeof(child_sw))
		die("read");
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		die("child");
	printf("round_trips=%ld blocks=%ld ns_per_round_trip=%.1f mean_ns_per_round_trip=%.1f "
	       "switches_per_round_trip=%.4f\n",
	       rounds, blocks, (double)best / per_block, (double)total / rounds,
	       (double)(sw1 - sw0 + child_sw) / rounds);
	return 0;
}
