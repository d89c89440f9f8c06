/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the kernel says about cgstat's own process, as the Prometheus client libraries export
 * it for every process (process_cpu_seconds_total and the rest): what cgstat costs the host
 * it measures, on /metrics.
 */
#ifndef CGSTAT_PROCESS_SELF_H
#define CGSTAT_PROCESS_SELF_H

#include <stdbool.h>
#include <stdint.h>

struct process_self {
	uint64_t cpu_ns;      /* user and system time of every thread, /proc/self/stat */
	uint64_t rss_bytes;   /* resident set */
	uint64_t vsize_bytes; /* virtual memory */
	double start_seconds; /* start time, seconds since the epoch (btime + starttime) */
	bool have_fds;	      /* /proc/self/fd could be listed */
	uint64_t open_fds;    /* entries of /proc/self/fd */
	uint64_t max_fds;     /* RLIMIT_NOFILE's soft limit */
};

/* Reads the figures: 0, or -errno when /proc/self/stat cannot be read or parsed. */
int process_self_read(struct process_self *p);

/*
 * The figures out of the text of /proc/PID/stat and of /proc/stat (for btime), with the clock
 * tick and page size given: 0 or -EINVAL. Apart, so that it is tested on any text.
 */
int process_self_parse(const char *stat, const char *proc_stat, long ticks_per_second,
		       long page_size, struct process_self *p);

#endif /* CGSTAT_PROCESS_SELF_H */
