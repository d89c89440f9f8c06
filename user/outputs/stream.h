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

#include <cjson/cJSON.h>

#include "core/record.h"

enum cg_format {
	CG_FORMAT_AUTO, /* live on a terminal (table with a command), csv otherwise */
	CG_FORMAT_TABLE,
	CG_FORMAT_CSV,
	CG_FORMAT_JSON,
	CG_FORMAT_LIVE, /* full screen, redrawn each interval: the default on a terminal */
	NR_CG_FORMATS,
};

/*
 * Write iv to f in fmt; first says this is the run's first interval (the CSV header goes
 * before it). f is flushed. 0, -EINVAL for CG_FORMAT_AUTO (the caller resolves it), -ENOMEM,
 * or the -errno of the failed write: -EPIPE when the reader went away (with SIGPIPE ignored).
 */
int stream__write(FILE *f, enum cg_format fmt, const struct cg_interval *iv, bool first);

/*
 * The run's health figures (droppedEvents, missedSwitches, unseenWakeups, inconsistencies) into
 * obj, as the JSON lines and the summary both write them. 0 or -ENOMEM.
 */
int stream__json_health(cJSON *obj, const struct cg_health *health);

#endif /* CGSTAT_STREAM_H */
