/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The live stream on stdout, one interval at a time: a table for a terminal, CSV (the header
 * once, then a row per cgroup) or JSON lines (one object per interval). Unavailable figures are
 * empty CSV fields, absent JSON keys and "-" in the table.
 */
#ifndef CGSTAT_STREAM_H
#define CGSTAT_STREAM_H

#include <stdbool.h>
#include <stdio.h>

#include "opts.h"
#include "record.h"

/*
 * Write iv to f in fmt; first says this is the run's first interval (the CSV header goes
 * before it). f is flushed. 0, -EINVAL for CG_FORMAT_AUTO (the caller resolves it), -ENOMEM,
 * or the -errno of the failed write: -EPIPE when the reader went away (with SIGPIPE ignored).
 */
int stream__write(FILE *f, enum cg_format fmt, const struct cg_interval *iv, bool first);

#endif /* CGSTAT_STREAM_H */
