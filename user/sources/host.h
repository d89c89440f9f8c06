/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The host's side of each interval (host-io.csv): CPU busy and iowait shares from /proc/stat,
 * and read/write throughput and busy share of the physical disks from /proc/diskstats. The
 * parsers work on text alone, so that they can be fuzzed without a /proc. No libbpf here.
 */
#ifndef CGSTAT_HOST_H
#define CGSTAT_HOST_H

#include <stdint.h>

#include "core/record.h"

/* The aggregate "cpu " line of /proc/stat, in USER_HZ ticks. */
struct host_cpu_times {
	uint64_t user; /* guest time is already inside user and nice */
	uint64_t nice;
	uint64_t system;
	uint64_t idle;
	uint64_t iowait;
	uint64_t irq;
	uint64_t softirq;
	uint64_t steal;
};

/* The fields of one /proc/diskstats line that host-io.csv needs; all are cumulative. */
struct host_disk_reading {
	char name[32];
	uint64_t sectors_read; /* 512-byte sectors, whatever the device's own sector size */
	uint64_t sectors_written;
	uint64_t ms_doing_io; /* wall time with at least one request in flight */
};

/*
 * Read the aggregate "cpu " line out of the text of /proc/stat. Fields past the fourth that
 * are missing (old kernels) count as 0; guest and guest_nice are ignored. 0, or -EINVAL when
 * there is no such line or it has fewer than 4 numbers.
 */
int host_parse_stat(const char *text, struct host_cpu_times *t);

/*
 * Parse the text of /proc/diskstats. A line is taken when it has at least the 14 fields of the
 * oldest format (18 and 20 are the newer ones), every field but the name is a decimal number
 * that fits in 64 bits, and the name fits in 31 characters; other lines are skipped. The
 * first max lines taken go to out, in the file's order; *nr is set to the number of lines
 * taken, which may exceed max (so a caller can grow out and parse again). Always 0.
 */
int host_parse_diskstats(const char *text, struct host_disk_reading *out, int max, int *nr);

/*
 * Sampler over PROC/stat and PROC/diskstats. The disks it reports are fixed at the first
 * reading: the physical ones (those with a SYS/block/<name>/device entry), sorted by name. A
 * disk that shows up later is ignored; one that is missing from a reading reports 0 rates
 * until it has been seen in two readings in a row again.
 */
struct host_sampler;

/* proc_root and sys_root are "/proc" and "/sys" in production. NULL and errno on failure. */
struct host_sampler *host_sampler__new(const char *proc_root, const char *sys_root);

/*
 * Take a reading at now_ns (monotonic). From the second call on, out gets the rates over the
 * time since the previous successful call and valid is true; on the first call valid is false
 * but nr_disks and the disk names are already set, so a header can be written. out->disks
 * belongs to the sampler and stays valid until the next call. 0 or -errno; on failure out is
 * not valid and the previous reading is kept as the base of the next one.
 */
int host_sampler__sample(struct host_sampler *h, uint64_t now_ns, struct cg_host *out);

void host_sampler__free(struct host_sampler *h);

#endif /* CGSTAT_HOST_H */
