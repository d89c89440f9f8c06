/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cgroup-stats.csv's source: each interval, what the cgroups that have a row say in their own
 * files: CFS bandwidth throttling from cpu.stat and stall times from cpu.pressure,
 * memory.pressure and io.pressure, as deltas over the interval. Where the cpu controller is not
 * enabled for a cgroup on v2 (a hybrid host, where cpu is a v1 controller), the throttling comes
 * from the v1 cpu cgroup of its tasks. The parsers work on text alone. No libbpf here.
 */
#ifndef CGSTAT_CGROUPFS_H
#define CGSTAT_CGROUPFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sources/cgroup.h"
#include "core/record.h"

/*
 * Cumulative values of one reading, one per enum cg_cgroupfs; bit i of valid: value[i] read.
 * cpu_limit_cores: the cores its CFS quota or its cpuset lets it use, the smaller; 0: neither.
 */
struct cgroupfs_reading {
	uint64_t value[CG_NR_CGROUPFS];
	uint32_t valid;
	double cpu_limit_cores;
};

/*
 * cpu.stat's throttling: nr_periods, nr_throttled, and throttled_usec (v2) or throttled_time
 * (v1, nanoseconds), each that the text has as "KEY VALUE" with a decimal value that fits,
 * into CG_FS_PERIODS, CG_FS_THROTTLED_PERIODS and CG_FS_THROTTLED_NS. Other lines are ignored.
 */
void cgroupfs_parse_cpu_stat(const char *text, struct cgroupfs_reading *r);

/*
 * A PSI file ("some avg10=.. avg60=.. avg300=.. total=US", the same for "full"): the "some"
 * total into item some and the "full" total into item full (in nanoseconds), either < 0 when
 * not wanted.
 */
void cgroupfs_parse_pressure(const char *text, int some, int full, struct cgroupfs_reading *r);

/*
 * A CFS quota as cores, into *cores: v2's cpu.max ("QUOTA PERIOD", or "max PERIOD" without a
 * quota), or v1's cpu.cfs_quota_us ("-1" without one) and cpu.cfs_period_us texts. False when
 * there is no quota or the text is not one.
 */
bool cgroupfs_parse_cpu_max(const char *text, double *cores);
bool cgroupfs_parse_v1_quota(const char *quota, const char *period, double *cores);

/* How many CPUs a CPU list ("0-3,8" and a line end; empty: none) names; -1 if it is not one. */
int cgroupfs_parse_cpu_list(const char *text);

/*
 * Where the cgroup cgid is now: its absolute directory, 0; or -ENOENT when it is not known
 * (removed, or labelled by its id only).
 */
typedef int (*cgroupfs_dir_fn)(void *ctx, uint64_t cgid, char *path, size_t len);

struct cgroupfs;

/*
 * A sampler that reads PROC/PID/cgroup (proc is normally "/proc") to find the v1 cpu cgroup of
 * a cgroup's tasks when v1_cpu (the v1 hierarchy with the cpu controller) is not NULL; dir and
 * ctx map records to directories. Lines on stderr say, once each, where the throttling comes
 * from and which file of a cgroup could not be read or is gone; quiet (the all-cgroups mode,
 * where cgroups come and go and every run would say where the root's throttling comes from)
 * leaves out all but the unreadable files. With budget_ns, an
 * interval's reading stops once it has taken that long (monotonic clock): the records after
 * it get no figures, said once. NULL and errno.
 */
struct cgroupfs *cgroupfs__new(const char *proc, const struct cgroup_mount *v1_cpu,
			       cgroupfs_dir_fn dir, void *ctx, bool quiet, uint64_t budget_ns);

/* Take a reading of cgroup cgid (labelled label) to measure its first interval from. */
void cgroupfs__baseline(struct cgroupfs *c, uint64_t cgid, const char *label);

/*
 * Fill each record's cpu_limit_cores with what this reading finds (v2's cpu.max, or the v1 cpu
 * cgroup's quota where the throttling comes from there, and cpuset.cpus.effective when the
 * cgroup has one on v2), and its cgroupfs[] and cgroupfs_valid with the change since its cgroup's
 * last reading: a figure is valid when it was read now and at the last reading, which was the
 * previous interval's or the baseline (a cgroup without a row in the previous interval starts
 * again from this reading, its figures empty). Readings of cgroups without a row are dropped.
 */
void cgroupfs__sample(struct cgroupfs *c, struct cg_interval *iv);

void cgroupfs__free(struct cgroupfs *c);

#endif /* CGSTAT_CGROUPFS_H */
