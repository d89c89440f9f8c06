// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * drainload: the overhead benchmark's many-cgroups load. One small process in each of COUNT
 * cgroups DIR/c0 .. DIR/c{COUNT-1} (made beforehand), each spinning WORK_US microseconds every
 * PERIOD_MS milliseconds, so that every cgroup has activity in every interval and cgstat has a
 * row to drain for each. Processes rather than threads: a cgroup v2 leaf holds processes, and
 * threads of one process cannot be spread over 1,000 of them without the threaded mode.
 *
 *   drainload DIR COUNT WORK_US PERIOD_MS
 *
 * Prints "drainload: ready COUNT" on stdout once every process is in its cgroup, runs until
 * SIGINT or SIGTERM, then kills and reaps them all. The children die with it as well if it is
 * killed outright (PR_SET_PDEATHSIG), so no process is left behind to keep a cgroup busy.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../user/lib/util.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

static void die(const char *what)
{
	fprintf(stderr, "drainload: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void ticker(const char *dir, int index, int count, long work_us, long period_ms, int ready)
{
	uint64_t period = period_ms * NSEC_PER_MSEC, next;
	struct timespec ts;
	char path[4096];
	int fd;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL))
		die("prctl");
	if (getppid() == 1)
		exit(0);
	snprintf(path, sizeof(path), "%s/c%d/cgroup.procs", dir, index);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, "0", 1) != 1)
		die(path);
	close(fd);
	if (write(ready, "r", 1) != 1)
		die("write");
	close(ready);
	/* Spread the phases over the period, so the ticks do not arrive all at once. */
	next = clock_ns(CLOCK_MONOTONIC) + period * index / count;
	for (;;) {
		uint64_t end;

		ts.tv_sec = next / NSEC_PER_SEC;
		ts.tv_nsec = next % NSEC_PER_SEC;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		end = clock_ns(CLOCK_MONOTONIC) + work_us * NSEC_PER_USEC;
		while (clock_ns(CLOCK_MONOTONIC) < end)
			;
		next += period;
	}
}

static long parse(const char *text, long min)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < min) {
		fprintf(stderr, "usage: drainload DIR COUNT WORK_US PERIOD_MS\n");
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	long count, work_us, period_ms;
	int ready[2], started = 0, failed = 0;
	pid_t *pids;
	char c;

	if (argc != 5)
		parse("", 1);
	count = parse(argv[2], 1);
	work_us = parse(argv[3], 0);
	period_ms = parse(argv[4], 1);
	pids = calloc(count, sizeof(*pids));
	if (!pids)
		die("calloc");
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (pipe(ready))
		die("pipe");

	for (long i = 0; i < count && !stop && !failed; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("drainload: fork");
			failed = 1;
			break;
		}
		if (pids[i] == 0) {
			close(ready[0]);
			ticker(argv[1], i, count, work_us, period_ms, ready[1]);
		}
		started++;
	}
	close(ready[1]);
	/* Every child writes one byte once it is in its cgroup; a failed one closes without. */
	for (int i = 0; i < started && !stop && !failed; i++) {
		if (read(ready[0], &c, 1) != 1) {
			fprintf(stderr, "drainload: a child failed to join its cgroup\n");
			failed = 1;
		}
	}
	if (!stop && !failed) {
		printf("drainload: ready %ld\n", count);
		fflush(stdout);
	}
	while (!stop && !failed)
		pause();
	for (int i = 0; i < started; i++)
		kill(pids[i], SIGKILL);
	for (int i = 0; i < started; i++)
		waitpid(pids[i], NULL, 0);
	return failed;
}
