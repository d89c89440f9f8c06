/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The -o directory: container-stats.csv, sched-stats.csv, cgroup-stats.csv, pool-stats.csv (with
 * --threads), perf-stat.csv (when perf counts), host-io.csv (once the host sampler has a reading)
 * and container-summary.json. cgstat runs as root and the directory may be writable by others, so
 * every file is opened relative to the directory and a symlink in place of a file name makes the
 * open fail instead of being followed.
 */
#ifndef CGSTAT_OUT_FILES_H
#define CGSTAT_OUT_FILES_H

#include <sys/types.h>

#include "core/record.h"

struct out_files;

/* What out_files__open() makes besides the files every run writes. */
enum out_files_flags {
	OUT_FILES_PERF = 1 << 0, /* perf-stat.csv: the run counts events */
	/*
	 * container-summary.json itself, written over at exit instead of renamed into place: for
	 * a folder root does not own, where cgstat, without CAP_DAC_OVERRIDE by then, can write
	 * a file it holds open but can make none.
	 */
	OUT_FILES_SUMMARY_IN_PLACE = 1 << 1,
	OUT_FILES_POOLS = 1 << 2, /* pool-stats.csv, with its header: --threads */
};

/*
 * Create dir (0755) unless it exists, and in it every file the run writes (flags), so that
 * none need be made once privileges are dropped: container-stats.csv, sched-stats.csv and
 * cgroup-stats.csv with their headers, so that a run that ends early still leaves them;
 * perf-stat.csv and host-io.csv empty, their headers written at the first interval with events and
 * with a valid host sample. NULL and errno on failure: ENOTDIR when dir is a symlink, ELOOP when
 * one of the files is, EINVAL when one is there and is not a regular file (a FIFO would block the
 * open, a device take the rows).
 */
struct out_files *out_files__open(const char *dir, unsigned int flags);

/*
 * Append a row per record to each file and flush them. perf-stat.csv has rows when the first
 * interval had events; host-io.csv from the first interval with a valid host sample, its disk
 * columns fixed by that sample. 0, or -errno of the first failed write (-ENOSPC).
 */
int out_files__write(struct out_files *o, const struct cg_interval *iv);

/*
 * Give the files made by out_files__open() to uid and gid, and the folder too where it made
 * it: the user who ran cgstat through sudo, so that its runs are theirs to read, report on and
 * remove. 0 or -errno.
 */
int out_files__give(struct out_files *o, uid_t uid, gid_t gid);

/*
 * Write container-summary.json under a temporary name and rename it into place, so that the
 * file is whole or absent; with OUT_FILES_SUMMARY_IN_PLACE over the file made at open. 0 or
 * -errno.
 */
int out_files__write_summary(struct out_files *o, const char *json_text);

void out_files__close(struct out_files *o);

#endif /* CGSTAT_OUT_FILES_H */
