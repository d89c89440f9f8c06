/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The perf event list of -e: perf's own names turned into perf_event_attr type and config, and
 * the column each gets in perf-stat.csv. No libbpf here.
 */
#ifndef CGSTAT_PERF_EVENTS_H
#define CGSTAT_PERF_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "core/drain.h"

struct cg_event {
	char name[64];	 /* perf's canonical name: "context-switches" for "cs" */
	char column[64]; /* the perf-stat.csv header, e.g. "contextSwitches" */
	uint32_t type;	 /* perf_event_attr.type, also for the CG_EVENT_CORE_* ones */
	uint64_t config; /* perf_event_attr.config */
	enum cg_event_source core_source;
};

/*
 * Parse a comma-separated list of perf event names: perf's generic hardware, software and
 * hardware-cache names with perf's aliases, and raw events as r followed by 1 to 16 hex digits.
 * Blanks around a name are ignored. Fills ev[0..*nr) in the list's order and returns 0, or
 * writes one line naming the bad item to err (when errlen > 0), sets *nr to 0 and returns
 * -EINVAL: an empty list or item, an unknown name, an event given twice (under any of its
 * names), or more than max events.
 */
int events_parse(const char *list, struct cg_event *ev, int max, int *nr, char *err, size_t errlen);

/* The list used when -e is not given. */
const char *events_default_list(void);

#endif /* CGSTAT_PERF_EVENTS_H */
