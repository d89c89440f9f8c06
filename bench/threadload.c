// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * threadload: the overhead benchmark's many-threads load. One process in cgroup DIR (made
 * beforehand) with SLEEPERS threads that each sleep a second at a time, their wakeups spread
 * over the second, and BUSY threads that each spin WORK_US microseconds every 10 ms: a server's
 * thread pools, most of them parked, some serving. Every thread is on a 64 KiB stack, so that
 * 10,000 of them take 640 MiB of address space and little memory.
 *
 *   threadload DIR SLEEPERS BUSY WORK_US
 *
 * Prints "threadload: ready THREADS" on stdout once every thread runs, and runs until SIGINT
 * or SIGTERM.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../user/lib/util.h"

#define STACK_BYTES    (64 * 1024)
#define BUSY_PERIOD_NS (10 * NSEC_PER_MSEC)

static long sleepers, busy, work_ns;
static int started;

static void die(const char *what)
{
	fprintf(stderr, "threadload: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Sleep until the absolute time t (CLOCK_MONOTONIC ns), so that phases do not drift. */
static void sleep_until(uint64_t t)
{
	struct timespec ts = { .tv_sec = t / NSEC_PER_SEC, .tv_nsec = t % NSEC_PER_SEC };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void *sleeper(void *arg)
{
	long index = (long)arg;
	/* thread i wakes at i/SLEEPERS of each second: the wakeups are spread evenly */
	uint64_t next = clock_ns(CLOCK_MONOTONIC) + NSEC_PER_SEC * index / sleepers;
	char name[32];

	/* named as a JVM names a pool's threads: one pool for --threads (15 bytes kept) */
	snprintf(name, sizeof(name), "pool-1-th-%ld", index);
	name[15] = '\0';
	pthread_setname_np(pthread_self(), name);
	__sync_fetch_and_add(&started, 1);
	for (;;) {
		sleep_until(next);
		next += NSEC_PER_SEC;
	}
	return NULL;
}

static void *server(void *arg)
{
	long index = (long)arg;
	uint64_t next = clock_ns(CLOCK_MONOTONIC) + BUSY_PERIOD_NS * index / busy, end;
	char name[32];

	snprintf(name, sizeof(name), "io-worker-%ld", index);
	name[15] = '\0';
	pthread_setname_np(pthread_self(), name);
	__sync_fetch_and_add(&started, 1);
	for (;;) {
		sleep_until(next);
		end = clock_ns(CLOCK_MONOTONIC) + work_ns;
		while (clock_ns(CLOCK_MONOTONIC) < end)
			;
		next += BUSY_PERIOD_NS;
	}
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	_exit(0);
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	pthread_t t;
	char path[4096];
	long i;
	int fd;

	if (argc != 5) {
		fprintf(stderr, "usage: threadload DIR SLEEPERS BUSY WORK_US\n");
		return 2;
	}
	sleepers = atol(argv[2]);
	busy = atol(argv[3]);
	work_ns = atol(argv[4]) * NSEC_PER_USEC;
	if (sleepers < 0 || busy < 0 || work_ns < 0 || (uint64_t)work_ns >= BUSY_PERIOD_NS) {
		fprintf(stderr, "threadload: SLEEPERS and BUSY at least 0, WORK_US under 10,000\n");
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	snprintf(path, sizeof(path), "%s/cgroup.procs", argv[1]);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, "0", 1) != 1)
		die(path);
	close(fd);
	if (pthread_attr_init(&attr) || pthread_attr_setstacksize(&attr, STACK_BYTES))
		die("pthread_attr");
	for (i = 0; i < sleepers; i++)
		if (pthread_create(&t, &attr, sleeper, (void *)i))
			die("pthread_create");
	for (i = 0; i < busy; i++)
		if (pthread_create(&t, &attr, server, (void *)i))
			die("pthread_create");
	while (__sync_fetch_and_add(&started, 0) < sleepers + busy)
		usleep(1000);
	printf("threadload: ready %ld\n", sleepers + busy);
	fflush(stdout);
	for (;;)
		pause();
}
