// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Workloads of known shape for the integration tests. The process moves itself into the
 * cgroup given with --cgroup, runs one shape, and before its threads exit prints the kernel's
 * own accounting of every thread (from /proc/self/task/TID/{schedstat,status,sched}) and of
 * its reaped children (wait4's rusage) as one JSON object: the ground truth cgstat is checked
 * against. The main thread's figures from before the move are subtracted. Each thread's
 * alive_ns (from its start, or the move, to the report) lets the test derive off-CPU time as
 * alive - exec - run_delay where the kernel lacks schedstats. Shapes that run threads print a
 * second line once the threads have exited: the process's figures then, and each worker's
 * schedstat as it was released after the report, "last" (see report_after() and park()).
 * Threads that spin in hogs and slices time their own waits, reported as gaps_ns and
 * oversleeps_ns (see spin_timed()).
 *
 *   workload [--cgroup DIR] pingpong ROUNDS CPU   two threads on one CPU, pipe round trips
 *   workload [--cgroup DIR] hogs SECONDS CPU      two spinning threads sharing one CPU
 *   workload [--cgroup DIR] spinner SECONDS CPU   one spinning thread on that CPU
 *   workload [--cgroup DIR] sleeper SECONDS       one thread: spin 0.5 ms, sleep 5 ms
 *   workload [--cgroup DIR] vfork SECONDS         vfork children that sleep 20 ms: parent in D
 *   workload [--cgroup DIR] slices SECONDS        on CPU 0 a SCHED_FIFO thread runs 4 ms in 10
 *                                                 beside a spinning thread, which waits 4 ms
 *   workload [--cgroup DIR] hopper HOPS           one thread moved between CPUs HOPS times
 *   workload [--cgroup DIR] churn PROCS THREADS   PROCS processes fork and exit, each with
 *                                                 THREADS threads that start and exit
 *   workload [--cgroup DIR] steady SECONDS N      N threads: spin 2 ms, sleep 3 ms, for SECONDS
 *   workload [--cgroup DIR] faults PAGES ROUNDS   one thread touching PAGES fresh pages ROUNDS
 *                                                 times (a page fault each)
 *   workload [--cgroup DIR] majfaults FILE PAGES  one thread writing FILE of PAGES pages,
 *                                                 dropping it from the page cache and reading
 *                                                 it through a mapping without readahead (a
 *                                                 major fault each); FILE is removed
 *   workload [--cgroup DIR] xpingpong ROUNDS CPU CGROUP2
 *                                                 ping-pong on one CPU between this process and
 *                                                 a child in CGROUP2: every switch crosses
 *                                                 cgroups. Per round the parent touches one
 *                                                 fresh page, the child two.
 *                                                 The child's report comes first, its own line.
 *   workload [--cgroup DIR] longrun SECONDS SLEEPERS
 *                                                 a pipe ping-pong between CPU 0 and CPU 1
 *                                                 for SECONDS, beside SLEEPERS threads that
 *                                                 sleep 1 s at a time, their wakeups spread
 *                                                 over the second; prints "ready" once
 *                                                 all run, and no report: the test reads
 *                                                 /proc while it runs
 *   workload [--cgroup DIR] sleepers SECONDS THREADS POOLS
 *                                                 THREADS threads on 64 KiB stacks that name
 *                                                 themselves into POOLS pools (slaaa, slaab,
 *                                                 ...) and sleep a second at a time, their
 *                                                 wakeups spread over the second; prints
 *                                                 "ready" once all are named; no report
 *   workload [--cgroup DIR] pipeline SECONDS PRODUCERS WRITERS [CGROUP2]
 *                                                 PRODUCERS threads (prod-1, ...) hand items
 *                                                 over a queue of 16 to one thread (stage)
 *                                                 that spins 50 us on each and hands it over
 *                                                 a second queue to WRITERS threads (wr-1,
 *                                                 ...); a thread (tick) sleeps 10 ms at a
 *                                                 time; with CGROUP2 the stage, the writers
 *                                                 and tick run in a child there. Futexes in
 *                                                 shared memory: prints the wakeups each
 *                                                 role's threads made of each other's
 *                                                 (FUTEX_WAKE's counts), the ticks, the items
 *   workload [--cgroup DIR] pools SECONDS      12 named threads for SECONDS: serial-ml-7
 *                                                 spins; io-3-1 to io-3-3 spin 0.5 ms and
 *                                                 sleep 4.5 ms; idle-10 to idle-17 sleep 20 ms
 *                                                 at a time; each thread's name is in the
 *                                                 report ("comm")
 *   workload [--cgroup DIR] messaging GROUPS LOOPS
 *                                                 perf bench sched messaging with threads that
 *                                                 park: per group 20 senders and 20 receivers,
 *                                                 each sender writes LOOPS 100-byte messages to
 *                                                 every receiver of its group over its pipe
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct kstat {
	uint64_t exec_ns, run_delay_ns, pcount, nvcsw, nivcsw, migrations, alive_ns;
	uint64_t minflt, majflt;
	char comm[16]; /* the thread's name, plain characters only; empty for children */
};

/*
 * When each thread started (the main thread: when it moved into the cgroup), and a parked
 * worker's own figures as it left the release barrier (has_last), its last reading.
 */
#define MAX_THREADS 1024
static struct {
	pid_t tid;
	uint64_t start_ns;
	int has_last;
	uint64_t last_exec_ns, last_run_delay_ns, last_pcount;
} starts[MAX_THREADS];
static int nr_starts;

static struct kstat children;	    /* reaped children, from rusage */
static long reaped, reaped_threads; /* children, and the threads they ran and joined */
static uint64_t moved_ns, moved_faults, premove_ns; /* see enter_cgroup() */

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static void thread_started(void)
{
	int i = __sync_fetch_and_add(&nr_starts, 1);

	if (i < MAX_THREADS) {
		starts[i].tid = gettid();
		starts[i].start_ns = now_ns();
	}
}

/* tid's index in starts, or -1 */
static int start_of(pid_t tid)
{
	int i;

	for (i = 0; i < nr_starts && i < MAX_THREADS; i++)
		if (starts[i].tid == tid)
			return i;
	return -1;
}

static uint64_t alive_ns(pid_t tid, uint64_t now)
{
	int i = start_of(tid);

	return i < 0 ? 0 : now - starts[i].start_ns;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static void spin_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		;
}

/*
 * Waits as the waiting threads timed them, for the test's quantile checks: gaps, each an upper
 * bound of one wait within a few microseconds of it (see spin_timed()); oversleeps, each only an
 * upper bound (see slicer()).
 */
#define MAX_TIMED 65536
static struct {
	uint64_t ns[MAX_TIMED];
	int n;
} gaps, oversleeps;

static void timed_add(typeof(gaps) *to, uint64_t ns)
{
	int i = __sync_fetch_and_add(&to->n, 1);

	if (i < MAX_TIMED)
		to->ns[i] = ns;
}

static void timed_print(const char *key, typeof(gaps) *from)
{
	int i;

	printf("\"%s\":[", key);
	for (i = 0; i < from->n && i < MAX_TIMED; i++)
		printf("%s%lu", i ? "," : "", from->ns[i]);
	printf("],");
}

static long thread_switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		die("getrusage");
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/*
 * spin_ns(), timing each wait: a thread that only spins is off CPU only when preempted, and
 * then waits on the run queue from its switch-out to its switch-in. A jump of its clock across
 * which its switch count moved holds that wait, plus the few hundred nanoseconds from its last
 * clock read to the switch-out and from the switch-in to its next read (an interrupt, or a
 * stall of the VM, there stretches it more). A jump with no switch (an interrupt) is no wait.
 */
static void spin_timed(uint64_t ns)
{
	uint64_t last = now_ns(), end = last + ns, now;
	long switches = thread_switches(), count;

	while ((now = now_ns()) < end) {
		/* a loop turn is tens of ns; no switch-out and back is done in 1 us */
		if (now - last > 1000) {
			count = thread_switches();
			if (count != switches)
				timed_add(&gaps, now - last);
			switches = count;
			now = now_ns();
		}
		last = now;
	}
}

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

/* A count from the "name   :   value" lines of /proc/.../sched. */
static uint64_t sched_field(const char *text, const char *name)
{
	const char *p = strstr(text, name);

	if (!p)
		return 0;
	p = strchr(p, ':');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* A task's /proc schedstat: sum_exec_runtime, run_delay and pcount. A small buffer: see park(). */
static int read_schedstat(const char *task_dir, uint64_t *exec_ns, uint64_t *run_delay_ns,
			  uint64_t *pcount)
{
	char path[512], buf[128];

	snprintf(path, sizeof(path), "%s/schedstat", task_dir);
	if (read_file(path, buf, sizeof(buf)))
		return -1;
	return sscanf(buf, "%lu %lu %lu", exec_ns, run_delay_ns, pcount) == 3 ? 0 : -1;
}

static int read_kstat(const char *task_dir, struct kstat *k)
{
	char path[512], buf[16384];
	const char *p;

	memset(k, 0, sizeof(*k));
	if (read_schedstat(task_dir, &k->exec_ns, &k->run_delay_ns, &k->pcount))
		return -1;
	snprintf(path, sizeof(path), "%s/status", task_dir);
	if (read_file(path, buf, sizeof(buf)))
		return -1;
	p = strstr(buf, "\nvoluntary_ctxt_switches:");
	if (p)
		k->nvcsw = strtoull(strchr(p, ':') + 1, NULL, 10);
	p = strstr(buf, "\nnonvoluntary_ctxt_switches:");
	if (p)
		k->nivcsw = strtoull(strchr(p, ':') + 1, NULL, 10);
	snprintf(path, sizeof(path), "%s/sched", task_dir);
	if (read_file(path, buf, sizeof(buf)))
		return -1;
	k->migrations = sched_field(buf, "se.nr_migrations");
	snprintf(path, sizeof(path), "%s/stat", task_dir);
	if (read_file(path, buf, sizeof(buf)))
		return -1;
	/* after "(comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt */
	p = strrchr(buf, ')');
	if (!p ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %lu %*u %lu", &k->minflt, &k->majflt) != 2)
		return -1;
	snprintf(path, sizeof(path), "%s/comm", task_dir);
	if (read_file(path, buf, sizeof(k->comm) + 1))
		return -1;
	/* the names this program gives need no JSON escape; anything else is cut */
	for (size_t i = 0; i < sizeof(k->comm) - 1 && buf[i] > ' ' && buf[i] < 0x7f &&
			   buf[i] != '"' && buf[i] != '\\';
	     i++)
		k->comm[i] = buf[i];
	return 0;
}

/*
 * The calling thread's own figures: as read_kstat(), but its runtime from its CPU clock. Its
 * schedstat's sum_exec_runtime is as of its last update (a tick or a switch), so a thread that
 * reads its own lags by up to a tick: CI run 64 read the main thread's 1.4 ms short of what
 * cgstat counted (over the bound of its run after the report). The clock adds the stretch under
 * way (task_sched_runtime()).
 */
static int read_own_kstat(const char *task_dir, struct kstat *k)
{
	if (read_kstat(task_dir, k))
		return -1;
	k->exec_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	return 0;
}

static void kstat_sub(struct kstat *a, const struct kstat *b)
{
	a->exec_ns -= b->exec_ns;
	a->run_delay_ns -= b->run_delay_ns;
	a->pcount -= b->pcount;
	a->nvcsw -= b->nvcsw;
	a->nivcsw -= b->nivcsw;
	a->migrations -= b->migrations;
	a->minflt -= b->minflt;
	a->majflt -= b->majflt;
}

static void kstat_print(const char *key, const struct kstat *k, int comma)
{
	printf("\"%s\":{\"exec_ns\":%lu,\"run_delay_ns\":%lu,\"pcount\":%lu,\"nvcsw\":%lu,"
	       "\"nivcsw\":%lu,\"migrations\":%lu,\"alive_ns\":%lu,\"minflt\":%lu,"
	       "\"majflt\":%lu,\"comm\":\"%s\"}%s",
	       key, k->exec_ns, k->run_delay_ns, k->pcount, k->nvcsw, k->nivcsw, k->migrations,
	       k->alive_ns, k->minflt, k->majflt, k->comm, comma ? "," : "");
}

static struct kstat main_baseline;
static uint64_t report_ns; /* when report() read the kernel's figures */

/* Print every live thread's accounting (the main thread's since the move) and the children. */
static void report(void)
{
	struct dirent *de;
	char dir[300];
	struct kstat k;
	DIR *d;
	pid_t self = getpid();
	uint64_t now = now_ns();

	report_ns = now;

	d = opendir("/proc/self/task");
	if (!d)
		die("/proc/self/task");
	printf("{\"pid\":%d,\"threads\":{", self);
	int first = 1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), "/proc/self/task/%s", de->d_name);
		if ((atoi(de->d_name) == self ? read_own_kstat : read_kstat)(dir, &k))
			continue;
		if (atoi(de->d_name) == self)
			kstat_sub(&k, &main_baseline);
		k.alive_ns = alive_ns(atoi(de->d_name), now);
		if (!first)
			printf(",");
		first = 0;
		kstat_print(de->d_name, &k, 0);
	}
	closedir(d);
	printf("},");
	timed_print("gaps_ns", &gaps);
	timed_print("oversleeps_ns", &oversleeps);
	printf("\"moved_ns\":%lu,\"premove_ns\":%lu,\"moved_faults\":%lu,\"reaped\":%ld,"
	       "\"reaped_threads\":%ld,",
	       moved_ns, premove_ns, moved_faults, reaped, reaped_threads);
	kstat_print("children", &children, 0);
	printf("}\n");
	fflush(stdout);
}

/*
 * The kernel's figures again once every worker has exited, as a second line: the process's
 * switches and CPU time (getrusage and the process CPU clock fold in each exited thread's) and
 * the main thread's own figures, less its baseline. What they leave out is small and known:
 * each worker's last switch and the few microseconds around it (taken after its figures were
 * folded in), and the main thread's exit. tail_ns is the wall time from the report to this
 * reading, within which the workers' last waits and sleeps fall; read_ns is when this reading
 * was taken (CLOCK_MONOTONIC), from which the test bounds what the main thread's exit adds.
 */
static void report_after(int workers)
{
	int i, first;
	struct timespec cpu;
	struct rusage ru;
	struct kstat k;
	uint64_t now = now_ns();

	if (getrusage(RUSAGE_SELF, &ru) || clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) ||
	    read_own_kstat("/proc/thread-self", &k))
		die("report_after");
	kstat_sub(&k, &main_baseline);
	printf("{\"last\":{");
	for (i = 0, first = 1; i < nr_starts && i < MAX_THREADS; i++) {
		if (!starts[i].has_last)
			continue;
		printf("%s\"%d\":{\"exec_ns\":%lu,\"run_delay_ns\":%lu,\"pcount\":%lu}",
		       first ? "" : ",", starts[i].tid, starts[i].last_exec_ns,
		       starts[i].last_run_delay_ns, starts[i].last_pcount);
		first = 0;
	}
	printf("},\"after\":{\"workers\":%d,\"tail_ns\":%lu,\"read_ns\":%lu,\"nvcsw\":%lu,"
	       "\"nivcsw\":%lu,\"exec_ns\":%lu,",
	       workers, now - report_ns, now, ru.ru_nvcsw - main_baseline.nvcsw,
	       ru.ru_nivcsw - main_baseline.nivcsw,
	       (uint64_t)(cpu.tv_sec * 1000000000L + cpu.tv_nsec - main_baseline.exec_ns));
	k.alive_ns = alive_ns(getpid(), now);
	kstat_print("main", &k, 0);
	printf("}}\n");
	fflush(stdout);
}

static void reap(pid_t pid)
{
	struct rusage ru;
	int status;

	if (wait4(pid, &status, 0, &ru) < 0)
		die("wait4");
	reaped++;
	children.exec_ns += (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
			    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
	children.nvcsw += ru.ru_nvcsw;
	children.nivcsw += ru.ru_nivcsw;
	children.minflt += ru.ru_minflt;
	children.majflt += ru.ru_majflt;
}

/*
 * Threads park here once their work is done, so that report() sees them alive. Released, each
 * reads its schedstat once more: a wait the kernel had pending at the report (run_delay grows
 * only at the switch-in) is in it, and only the exit follows. Its schedstat alone, into a small
 * buffer, so that this last reading adds no page faults of fresh stack to the thread's exit.
 */
static pthread_barrier_t done, release;
static int parked;

static void park(void)
{
	int i;

	pthread_barrier_wait(&done);
	__sync_fetch_and_add(&parked, 1);
	pthread_barrier_wait(&release);
	i = start_of(gettid());
	if (i >= 0 && !read_schedstat("/proc/thread-self", &starts[i].last_exec_ns,
				      &starts[i].last_run_delay_ns, &starts[i].last_pcount))
		starts[i].has_last = 1;
}

/* A thread's state letter from /proc/self/task/TID/stat, or 0. */
static char thread_state(pid_t tid)
{
	char path[64], buf[512];
	const char *p;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	if (read_file(path, buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] ? p[2] : 0;
}

/*
 * Wait until every worker sleeps in the release barrier, so that the report holds each one's
 * last sleep and what follows it is the same for all: one wakeup, then the exit. A worker has
 * left the first barrier once it counted itself parked; asleep after that, it is in the second.
 */
static void wait_parked(int workers)
{
	struct timespec nap = { 0, 100000 };
	int i, asleep;

	for (;;) {
		asleep = __sync_fetch_and_add(&parked, 0) == workers;
		for (i = 0; asleep && i < nr_starts && i < MAX_THREADS; i++)
			if (starts[i].tid != getpid() && thread_state(starts[i].tid) != 'S')
				asleep = 0;
		if (asleep)
			return;
		nanosleep(&nap, NULL);
	}
}

static void *(*thread_fn)(void *);

static void *thread_main(void *arg)
{
	thread_started();
	return thread_fn(arg);
}

static void run_threads(int n, void *(*fn)(void *), void *arg)
{
	pthread_t *t = calloc(n, sizeof(*t));
	int i;

	pthread_barrier_init(&done, NULL, n + 1);
	pthread_barrier_init(&release, NULL, n + 1);
	thread_fn = fn;
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, thread_main, arg))
			die("pthread_create");
	pthread_barrier_wait(&done);
	wait_parked(n);
	report();
	pthread_barrier_wait(&release);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
	report_after(n);
}

/* pingpong */
static long pp_rounds;
static int pp_cpu, pp_ab[2], pp_ba[2];

static void *pp_ping(void *arg)
{
	char c = 0;
	long i;

	pin(pp_cpu);
	for (i = 0; i < pp_rounds; i++) {
		if (write(pp_ab[1], &c, 1) != 1 || read(pp_ba[0], &c, 1) != 1)
			die("ping");
	}
	park();
	return arg;
}

static void *pp_pong(void *arg)
{
	char c;
	long i;

	pin(pp_cpu);
	for (i = 0; i < pp_rounds; i++) {
		if (read(pp_ab[0], &c, 1) != 1 || write(pp_ba[1], &c, 1) != 1)
			die("pong");
	}
	park();
	return arg;
}

static void *pp_thread(void *arg)
{
	static int which;

	return __sync_fetch_and_add(&which, 1) ? pp_pong(arg) : pp_ping(arg);
}

/* hogs, spinner, steady */
static double seconds;
static int hog_cpu;

static void *hog(void *arg)
{
	pin(hog_cpu);
	spin_timed((uint64_t)(seconds * 1e9));
	park();
	return arg;
}

static void *steady(void *arg)
{
	uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
	struct timespec nap = { 0, 3000000 };

	while (now_ns() < end) {
		spin_ns(2000000);
		nanosleep(&nap, NULL);
	}
	park();
	return arg;
}

static void *sleeper(void *arg)
{
	uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
	struct timespec nap = { 0, 5000000 };

	while (now_ns() < end) {
		spin_ns(500000);
		nanosleep(&nap, NULL);
	}
	park();
	return arg;
}

/* pools: which of the shape's threads this is, in the order they start */
static int pools_next;

static void *pools_thread(void *arg)
{
	int i = __sync_fetch_and_add(&pools_next, 1);
	uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
	struct timespec nap = { 0, 20000000 };
	char name[16];

	if (i == 0)
		snprintf(name, sizeof(name), "serial-ml-7");
	else if (i <= 3)
		snprintf(name, sizeof(name), "io-3-%d", i % 10);
	else
		snprintf(name, sizeof(name), "idle-%d", (6 + i) % 100);
	if (pthread_setname_np(pthread_self(), name))
		die("pthread_setname_np");
	if (i == 0) {
		spin_ns((uint64_t)(seconds * 1e9));
	} else if (i <= 3) {
		/* 0.1 of a core each: the spinner keeps a CPU to itself on 2 */
		nap.tv_nsec = 4500000;
		while (now_ns() < end) {
			spin_ns(500000);
			nanosleep(&nap, NULL);
		}
	} else {
		while (now_ns() < end)
			nanosleep(&nap, NULL);
	}
	park();
	return arg;
}

static void *vforker(void *arg)
{
	uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
	struct timespec nap = { 0, 20000000 };
	pid_t pid;

	while (now_ns() < end) {
		pid = vfork();
		if (pid < 0)
			die("vfork");
		if (!pid) {
			nanosleep(&nap, NULL);
			_exit(0);
		}
		reap(pid);
	}
	park();
	return arg;
}

/*
 * slices: on CPU 0, a SCHED_FIFO thread that runs 4 ms and sleeps 6 ms, beside an ordinary
 * thread that spins: each time the first wakes it preempts the second, whose every wait is
 * then one 4 ms slice (by the clock: steal stretches none of them); the first's waits are
 * its wakeups' latencies.
 */
static void *slicer(void *arg)
{
	static int which;
	uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
	struct sched_param rt = { .sched_priority = 10 };
	struct timespec nap = { 0, 6000000 };
	uint64_t asleep;

	pin(0);
	if (__sync_fetch_and_add(&which, 1) == 0) {
		if (sched_setscheduler(0, SCHED_FIFO, &rt))
			die("sched_setscheduler");
		while (now_ns() < end) {
			spin_ns(4000000);
			asleep = now_ns();
			nanosleep(&nap, NULL);
			/*
			 * The wait after its wakeup is within what it slept beyond the 6 ms: the
			 * timer fires at their end at the earliest (no slack for SCHED_FIFO)
			 */
			timed_add(&oversleeps, now_ns() - asleep - nap.tv_nsec);
		}
	} else {
		spin_timed(end - now_ns());
	}
	park();
	return arg;
}

static long hops;

static void *hopper(void *arg)
{
	long i;

	for (i = 0; i < hops; i++) {
		pin(i & 1);
		spin_ns(200000);
	}
	park();
	return arg;
}

static void *short_thread(void *arg)
{
	spin_ns(20000);
	return arg;
}

static long churn_procs, churn_threads;

static void *churner(void *arg)
{
	pthread_t t[64];
	long p, i, n = churn_threads < 64 ? churn_threads : 64;
	pid_t pid;

	for (p = 0; p < churn_procs; p++) {
		pid = fork();
		if (pid < 0)
			die("fork");
		if (!pid) {
			for (i = 0; i < n; i++)
				if (pthread_create(&t[i], NULL, short_thread, NULL))
					die("pthread_create");
			for (i = 0; i < n; i++)
				pthread_join(t[i], NULL);
			_exit(0);
		}
		reap(pid);
		reaped_threads += n;
	}
	park();
	return arg;
}

static long fault_pages, fault_rounds;

static void *faulter(void *arg)
{
	size_t len = fault_pages * 4096;
	long r, i;
	char *mem;

	for (r = 0; r < fault_rounds; r++) {
		mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			die("mmap");
		for (i = 0; i < fault_pages; i++)
			mem[i * 4096] = 1;
		munmap(mem, len);
	}
	park();
	return arg;
}

static const char *majflt_path;
static long majflt_pages;

static void *major_faulter(void *arg)
{
	static char page[4096];
	size_t len = majflt_pages * 4096;
	volatile char sum = 0;
	char *mem;
	long i;
	int fd;

	fd = open(majflt_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		die(majflt_path);
	for (i = 0; i < majflt_pages; i++) {
		page[0] = (char)i;
		if (write(fd, page, sizeof(page)) != (ssize_t)sizeof(page))
			die("write");
	}
	/* clean pages that no one maps are dropped for certain */
	if (fsync(fd) || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		die("fsync, or dropping the file from the page cache");
	mem = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED)
		die("mmap");
	/* no readahead: each page is read by a fault of its own */
	if (madvise(mem, len, MADV_RANDOM))
		die("madvise");
	for (i = 0; i < majflt_pages; i++)
		sum += mem[i * 4096];
	(void)sum;
	munmap(mem, len);
	close(fd);
	unlink(majflt_path);
	park();
	return arg;
}

/* messaging: the shape and sizes of perf bench sched messaging */
#define MSG_FDS	 20
#define MSG_SIZE 100

static long msg_loops;
static int (*msg_pipes)[2]; /* one per receiver: MSG_FDS per group */
static int msg_next;

static void msg_receive(int fd)
{
	char buf[MSG_SIZE];
	long left = MSG_FDS * msg_loops * MSG_SIZE;
	ssize_t n;

	while (left > 0) {
		n = read(fd, buf, left < MSG_SIZE ? left : MSG_SIZE);
		if (n <= 0)
			die("messaging read");
		left -= n;
	}
}

static void msg_send(int (*pipes)[2])
{
	char buf[MSG_SIZE] = { 0 };
	long l;
	int r;

	/* A write of at most PIPE_BUF bytes is whole or blocks: no short writes. */
	for (l = 0; l < msg_loops; l++)
		for (r = 0; r < MSG_FDS; r++)
			if (write(pipes[r][1], buf, MSG_SIZE) != MSG_SIZE)
				die("messaging write");
}

static void *messenger(void *arg)
{
	int id = __sync_fetch_and_add(&msg_next, 1);
	int group = id / (2 * MSG_FDS), k = id % (2 * MSG_FDS);

	if (k < MSG_FDS)
		msg_receive(msg_pipes[group * MSG_FDS + k][0]);
	else
		msg_send(&msg_pipes[group * MSG_FDS]);
	park();
	return arg;
}

static void messaging(long groups, long loops)
{
	long i;

	msg_loops = loops;
	msg_pipes = calloc(groups * MSG_FDS, sizeof(*msg_pipes));
	if (!msg_pipes)
		die("calloc");
	for (i = 0; i < groups * MSG_FDS; i++)
		if (pipe(msg_pipes[i]))
			die("pipe");
	run_threads(groups * 2 * MSG_FDS, messenger, NULL);
}

/* longrun: what a long run holds steady, read by the test from /proc as it goes */
static volatile int lr_stop;
static int lr_ab[2], lr_ba[2];

/* Each sleeper's phase is its own (arg: a fraction of a second), so that they wake spread
 * over every second rather than in one burst. */
static long lr_pools; /* sleepers: the sleepers name themselves into this many pools */
static long lr_named;

static void *lr_sleeper(void *arg)
{
	struct timespec phase = { 0, (long)(uintptr_t)arg }, nap = { 1, 0 };
	long i = __sync_fetch_and_add(&lr_named, 1) % (lr_pools ? lr_pools : 1);
	char name[16];

	/* "sl" and letters, no digit: each name a pool of its own (digit runs make one) */
	if (lr_pools) {
		snprintf(name, sizeof(name), "sl%c%c%c", 'a' + (int)(i / 676 % 26),
			 'a' + (int)(i / 26 % 26), 'a' + (int)(i % 26));
		if (pthread_setname_np(pthread_self(), name))
			die("pthread_setname_np");
	}
	nanosleep(&phase, NULL);
	while (!lr_stop)
		nanosleep(&nap, NULL);
	return arg;
}

static void *lr_pong(void *arg)
{
	char c;

	pin(1);
	while (read(lr_ab[0], &c, 1) == 1)
		if (write(lr_ba[1], &c, 1) != 1)
			die("longrun pong");
	return arg;
}

static void longrun(double secs, long sleepers)
{
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
	pthread_t *t = calloc(sleepers + 1, sizeof(*t));
	pthread_attr_t attr;
	char c = 0;
	long i;

	if (!t || pipe(lr_ab) || pipe(lr_ba) || pthread_attr_init(&attr) ||
	    pthread_attr_setstacksize(&attr, 64 * 1024))
		die("longrun setup");
	for (i = 0; i < sleepers; i++)
		if (pthread_create(&t[i], &attr, lr_sleeper,
				   (void *)(uintptr_t)(i * (1000000000L / sleepers))))
			die("pthread_create");
	if (pthread_create(&t[sleepers], &attr, lr_pong, NULL))
		die("pthread_create");
	pin(0);
	printf("ready\n");
	fflush(stdout);
	while (now_ns() < end)
		for (i = 0; i < 1024; i++)
			if (write(lr_ab[1], &c, 1) != 1 || read(lr_ba[0], &c, 1) != 1)
				die("longrun ping");
	lr_stop = 1;
	close(lr_ab[1]);
	for (i = 0; i <= sleepers; i++)
		pthread_join(t[i], NULL);
}

/* SLEEPERS threads named into POOLS pools, sleeping a second at a time, for SECONDS. */
static void sleepers(double secs, long n, long pools)
{
	pthread_t *t = calloc(n, sizeof(*t));
	struct timespec nap = { 0, 10000000 };
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
	pthread_attr_t attr;
	long i;

	lr_pools = pools;
	if (!t || pthread_attr_init(&attr) || pthread_attr_setstacksize(&attr, 64 * 1024))
		die("sleepers setup");
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], &attr, lr_sleeper,
				   (void *)(uintptr_t)(i * (1000000000L / n))))
			die("pthread_create");
	while (__sync_fetch_and_add(&lr_named, 0) < n)
		nanosleep(&nap, NULL);
	printf("ready\n");
	fflush(stdout);
	while (now_ns() < end)
		nanosleep(&nap, NULL);
	lr_stop = 1;
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

/*
 * pipeline: producers hand items over a bounded queue to one stage thread that does fixed work
 * per item and hands each over a second queue to writers; a timer thread beside. Each queue is
 * two counting semaphores (its items, its free places) on futexes, in memory shared with a
 * child when the stage's side runs in another cgroup: a thread that wakes others counts what
 * futex(FUTEX_WAKE) says it woke, by its role and the woken one's, so that the workload knows
 * every wakeup it made, each one a sched_waking of the woken thread.
 */
enum pl_role {
	PL_PROD,
	PL_STAGE,
	PL_WRITER,
	PL_NR_ROLES
};

struct pl_sem {
	uint32_t value;	  /* the futex word: what may be taken */
	uint32_t waiters; /* threads asleep on it, or about to be */
};

#define PL_QUEUE	 16
#define PL_STAGE_WORK_NS 50000 /* the stage's fixed work per item */

static struct pl_shared {
	struct pl_sem items[2], room[2]; /* queue 0: producers to the stage; 1: stage to writers */
	/* [waker][wakee]; waker PL_NR_ROLES: the main thread, as it stops the run */
	uint64_t woke[PL_NR_ROLES + 1][PL_NR_ROLES];
	uint64_t ticks; /* the timer thread's sleeps that ended */
	uint64_t items_done;
	int stop;
} * pl;

static long futex(uint32_t *word, int op, uint32_t val)
{
	return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

/* Take one of s, asleep while there is none. */
static void pl_take(struct pl_sem *s)
{
	uint32_t v;

	for (;;) {
		v = __atomic_load_n(&s->value, __ATOMIC_ACQUIRE);
		if (v && __atomic_compare_exchange_n(&s->value, &v, v - 1, 0, __ATOMIC_ACQ_REL,
						     __ATOMIC_ACQUIRE))
			return;
		if (v)
			continue;
		/* the run's end: whoever waits leaves (pl_stop()) */
		if (__atomic_load_n(&pl->stop, __ATOMIC_SEQ_CST))
			return;
		__atomic_fetch_add(&s->waiters, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&s->value, __ATOMIC_SEQ_CST) == 0)
			futex(&s->value, FUTEX_WAIT, 0);
		__atomic_fetch_sub(&s->waiters, 1, __ATOMIC_SEQ_CST);
	}
}

/* Give one to s, waking a sleeper: counted as role waking wakee. */
static void pl_give(struct pl_sem *s, enum pl_role role, enum pl_role wakee)
{
	long woken;

	__atomic_fetch_add(&s->value, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&s->waiters, __ATOMIC_SEQ_CST))
		return;
	woken = futex(&s->value, FUTEX_WAKE, 1);
	if (woken > 0)
		__atomic_fetch_add(&pl->woke[role][wakee], (uint64_t)woken, __ATOMIC_RELAXED);
}

static void *pl_producer(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "prod-%ld", (long)(uintptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	while (!__atomic_load_n(&pl->stop, __ATOMIC_RELAXED)) {
		pl_take(&pl->room[0]);
		pl_give(&pl->items[0], PL_PROD, PL_STAGE);
	}
	return arg;
}

static void *pl_stage(void *arg)
{
	pthread_setname_np(pthread_self(), "stage");
	while (!__atomic_load_n(&pl->stop, __ATOMIC_RELAXED)) {
		pl_take(&pl->items[0]);
		pl_give(&pl->room[0], PL_STAGE, PL_PROD);
		spin_ns(PL_STAGE_WORK_NS);
		pl_take(&pl->room[1]);
		pl_give(&pl->items[1], PL_STAGE, PL_WRITER);
	}
	return arg;
}

static void *pl_writer(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "wr-%ld", (long)(uintptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	while (!__atomic_load_n(&pl->stop, __ATOMIC_RELAXED)) {
		pl_take(&pl->items[1]);
		pl_give(&pl->room[1], PL_WRITER, PL_STAGE);
		__atomic_fetch_add(&pl->items_done, 1, __ATOMIC_RELAXED);
	}
	return arg;
}

/* Sleeps 10 ms at a time: each sleep ends at its timer's expiry, the timer waking it. */
static void *pl_ticker(void *arg)
{
	struct timespec nap = { 0, 10000000 };

	pthread_setname_np(pthread_self(), "tick");
	while (!__atomic_load_n(&pl->stop, __ATOMIC_RELAXED)) {
		clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, NULL);
		__atomic_fetch_add(&pl->ticks, 1, __ATOMIC_RELAXED);
	}
	return arg;
}

/*
 * The run's end: stop, then one give of each of the four so that whoever sleeps in the
 * pipeline wakes, sees it and leaves (those wakeups are counted too, by the one that gave).
 */
static void pl_stop(enum pl_role role)
{
	__atomic_store_n(&pl->stop, 1, __ATOMIC_SEQ_CST);
	pl_give(&pl->items[0], role, PL_STAGE);
	pl_give(&pl->room[0], role, PL_PROD);
	pl_give(&pl->items[1], role, PL_WRITER);
	pl_give(&pl->room[1], role, PL_STAGE);
}

static void pl_stage_side(pthread_t *t, long writers)
{
	long i;

	pthread_create(&t[0], NULL, pl_stage, NULL);
	for (i = 0; i < writers; i++)
		pthread_create(&t[1 + i], NULL, pl_writer, (void *)(uintptr_t)(i + 1));
	pthread_create(&t[1 + writers], NULL, pl_ticker, NULL);
}

static void enter_cgroup(const char *dir);

static void pipeline(double secs, long producers, long writers, const char *stage_cgroup)
{
	pthread_t *prod = calloc(producers, sizeof(*prod)),
		  *side = calloc(writers + 2, sizeof(*side));
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
	struct timespec nap = { 0, 10000000 };
	pid_t child = 0;
	long i;

	pl = mmap(NULL, sizeof(*pl), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!prod || !side || pl == MAP_FAILED)
		die("pipeline setup");
	pl->room[0].value = pl->room[1].value = PL_QUEUE;
	/* the stage's side: here, or in a child in stage_cgroup */
	if (stage_cgroup) {
		child = fork();
		if (child < 0)
			die("fork");
		if (!child) {
			enter_cgroup(stage_cgroup);
			pl_stage_side(side, writers);
			for (i = 0; i < writers + 2; i++)
				pthread_join(side[i], NULL);
			_exit(0);
		}
	} else {
		pl_stage_side(side, writers);
	}
	for (i = 0; i < producers; i++)
		pthread_create(&prod[i], NULL, pl_producer, (void *)(uintptr_t)(i + 1));
	while (now_ns() < end)
		nanosleep(&nap, NULL);
	/* the last ones asleep: wake them until every thread has left */
	for (i = 0; i < producers; i++)
		while (pthread_tryjoin_np(prod[i], NULL)) {
			pl_stop(PL_NR_ROLES);
			nanosleep(&nap, NULL);
		}
	if (child) {
		while (waitpid(child, NULL, WNOHANG) == 0) {
			pl_stop(PL_NR_ROLES);
			nanosleep(&nap, NULL);
		}
	} else {
		for (i = 0; i < writers + 2; i++)
			while (pthread_tryjoin_np(side[i], NULL)) {
				pl_stop(PL_NR_ROLES);
				nanosleep(&nap, NULL);
			}
	}
	printf("{\"pid\":%d,\"items\":%lu,\"ticks\":%lu,\"woke\":{"
	       "\"prod-N>stage\":%lu,\"stage>prod-N\":%lu,\"stage>wr-N\":%lu,"
	       "\"wr-N>stage\":%lu}}\n",
	       getpid(), pl->items_done, pl->ticks, pl->woke[PL_PROD][PL_STAGE],
	       pl->woke[PL_STAGE][PL_PROD], pl->woke[PL_STAGE][PL_WRITER],
	       pl->woke[PL_WRITER][PL_STAGE]);
	fflush(stdout);
}

/*
 * Cross-cgroup ping-pong. The sides touch one and two fresh pages per round, so that a count
 * charged to the wrong cgroup shows; each prints its own report.
 */
static void xpingpong(long rounds, int cpu, const char *other_cgroup)
{
	int ab[2], ba[2];
	char c = 0, *mem;
	pid_t pid;
	long i;

	if (pipe(ab) || pipe(ba))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		enter_cgroup(other_cgroup);
		nr_starts = 0;
		thread_started();
	}
	pin(cpu);
	mem = mmap(NULL, 2 * rounds * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		   0);
	if (mem == MAP_FAILED)
		die("mmap");
	for (i = 0; i < rounds; i++) {
		if (pid) {
			if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
				die("ping");
		} else {
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				die("pong");
		}
		mem[2 * i * 4096] = 1;
		if (!pid)
			mem[(2 * i + 1) * 4096] = 1;
	}
	if (!pid) {
		report();
		_exit(0);
	}
	/* the child's report first; the child is in another cgroup, so not in ours */
	if (waitpid(pid, NULL, 0) < 0)
		die("waitpid");
	report();
}

static void move_to_cgroup(const char *dir)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, "0", 1) != 1)
		die(path);
	close(fd);
}

static uint64_t thread_faults(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		die("getrusage");
	return ru.ru_minflt + ru.ru_majflt;
}

/*
 * A task's time on a CPU, and its next migration, count in the cgroup it was in when it was
 * last switched in (cgstat's rule, as perf's); the kernel's cpu.stat charges the cgroup it is
 * in at each update. So the main thread sleeps once right after its move, pinned so that the
 * wakeup does not migrate it, and says how long it ran from just before the move to that
 * sleep (moved_ns), and its page faults then (moved_faults): at most what cpu.stat, or perf's
 * cgroup counters, which follow a move at once, hold and cgstat leaves to the old cgroup.
 * premove_ns: all it ran before the move (since its fork, exec and all), in the old cgroup for
 * cpu.stat, and in the new one for --light, which takes a task's runtime at its first sweep.
 */
static void enter_cgroup(const char *dir)
{
	char self_dir[64];
	cpu_set_t all;

	moved_faults = thread_faults();
	moved_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	premove_ns = moved_ns;
	move_to_cgroup(dir);
	snprintf(self_dir, sizeof(self_dir), "/proc/self/task/%d", gettid());
	if (read_own_kstat(self_dir, &main_baseline))
		die("baseline");
	if (sched_getaffinity(0, sizeof(all), &all))
		die("sched_getaffinity");
	pin(sched_getcpu());
	moved_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - moved_ns;
	nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	/* after the sleep: a first call of nanosleep() may fault too */
	moved_faults = thread_faults() - moved_faults;
	if (sched_setaffinity(0, sizeof(all), &all))
		die("sched_setaffinity");
}

int main(int argc, char **argv)
{
	char self_dir[64];
	int i = 1;

	snprintf(self_dir, sizeof(self_dir), "/proc/self/task/%d", getpid());
	if (argc > 2 && !strcmp(argv[1], "--cgroup")) {
		enter_cgroup(argv[2]);
		i = 3;
	} else if (read_own_kstat(self_dir, &main_baseline)) {
		die("baseline");
	}
	thread_started();
	if (argc - i < 2) {
		fprintf(stderr, "usage: see the comment at the top of workload.c\n");
		return 2;
	}
	if (!strcmp(argv[i], "pingpong") && argc - i == 3) {
		pp_rounds = atol(argv[i + 1]);
		pp_cpu = atoi(argv[i + 2]);
		if (pipe(pp_ab) || pipe(pp_ba))
			die("pipe");
		run_threads(2, pp_thread, NULL);
	} else if (!strcmp(argv[i], "hogs") && argc - i == 3) {
		seconds = atof(argv[i + 1]);
		hog_cpu = atoi(argv[i + 2]);
		run_threads(2, hog, NULL);
	} else if (!strcmp(argv[i], "spinner") && argc - i == 3) {
		seconds = atof(argv[i + 1]);
		hog_cpu = atoi(argv[i + 2]);
		run_threads(1, hog, NULL);
	} else if (!strcmp(argv[i], "steady") && argc - i == 3) {
		seconds = atof(argv[i + 1]);
		run_threads(atoi(argv[i + 2]), steady, NULL);
	} else if (!strcmp(argv[i], "sleeper")) {
		seconds = atof(argv[i + 1]);
		run_threads(1, sleeper, NULL);
	} else if (!strcmp(argv[i], "vfork")) {
		seconds = atof(argv[i + 1]);
		run_threads(1, vforker, NULL);
	} else if (!strcmp(argv[i], "slices") && argc - i == 2) {
		seconds = atof(argv[i + 1]);
		run_threads(2, slicer, NULL);
	} else if (!strcmp(argv[i], "hopper")) {
		hops = atol(argv[i + 1]);
		run_threads(1, hopper, NULL);
	} else if (!strcmp(argv[i], "faults") && argc - i == 3) {
		fault_pages = atol(argv[i + 1]);
		fault_rounds = atol(argv[i + 2]);
		run_threads(1, faulter, NULL);
	} else if (!strcmp(argv[i], "majfaults") && argc - i == 3) {
		majflt_path = argv[i + 1];
		majflt_pages = atol(argv[i + 2]);
		run_threads(1, major_faulter, NULL);
	} else if (!strcmp(argv[i], "xpingpong") && argc - i == 4) {
		xpingpong(atol(argv[i + 1]), atoi(argv[i + 2]), argv[i + 3]);
	} else if (!strcmp(argv[i], "churn") && argc - i == 3) {
		churn_procs = atol(argv[i + 1]);
		churn_threads = atol(argv[i + 2]);
		run_threads(1, churner, NULL);
	} else if (!strcmp(argv[i], "longrun") && argc - i == 3) {
		longrun(atof(argv[i + 1]), atol(argv[i + 2]));
	} else if (!strcmp(argv[i], "pipeline") && (argc - i == 4 || argc - i == 5)) {
		pipeline(atof(argv[i + 1]), atol(argv[i + 2]), atol(argv[i + 3]),
			 argc - i == 5 ? argv[i + 4] : NULL);
	} else if (!strcmp(argv[i], "sleepers") && argc - i == 4) {
		sleepers(atof(argv[i + 1]), atol(argv[i + 2]), atol(argv[i + 3]));
	} else if (!strcmp(argv[i], "pools") && argc - i == 2) {
		seconds = atof(argv[i + 1]);
		run_threads(12, pools_thread, NULL);
	} else if (!strcmp(argv[i], "messaging") && argc - i == 3) {
		messaging(atol(argv[i + 1]), atol(argv[i + 2]));
	} else {
		fprintf(stderr, "workload: unknown shape '%s'\n", argv[i]);
		return 2;
	}
	return 0;
}
