// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <linux/perf_event.h>

#include "sources/perf_events.h"
#include "lib/message.h"

/*
 * PERF_COUNT_SW_CGROUP_SWITCHES came with Linux 5.13; older uapi headers lack it, and an enum
 * member cannot be tested with #ifdef.
 */
#define CG_COUNT_SW_CGROUP_SWITCHES 11

struct named_event {
	const char *name;  /* perf's canonical name */
	const char *alias; /* perf's other name for it, or NULL */
	uint32_t type;
	uint64_t config;
	enum cg_event_source core_source;
};

static const struct named_event named_events[] = {
	{ "cycles", "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-instructions", "branches", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", "idle-cycles-frontend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", "idle-cycles-backend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK,
	  CG_EVENT_CORE_TASK_CLOCK },
	{ "page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
	  CG_EVENT_CORE_PAGE_FAULTS },
	{ "context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES,
	  CG_EVENT_CORE_CONTEXT_SWITCHES },
	{ "cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS,
	  CG_EVENT_CORE_MIGRATIONS },
	{ "minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN,
	  CG_EVENT_CORE_MINOR_FAULTS },
	{ "major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ,
	  CG_EVENT_CORE_MAJOR_FAULTS },
	{ "alignment-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "cgroup-switches", NULL, PERF_TYPE_SOFTWARE, CG_COUNT_SW_CGROUP_SWITCHES },
};

#define OP_READ	    (1 << PERF_COUNT_HW_CACHE_OP_READ)
#define OP_WRITE    (1 << PERF_COUNT_HW_CACHE_OP_WRITE)
#define OP_PREFETCH (1 << PERF_COUNT_HW_CACHE_OP_PREFETCH)

/* The caches in perf's naming, with the operations perf accepts on each. */
static const struct {
	const char *name;
	unsigned int ops;
} hw_caches[PERF_COUNT_HW_CACHE_MAX] = {
	[PERF_COUNT_HW_CACHE_L1D] = { "L1-dcache", OP_READ | OP_WRITE | OP_PREFETCH },
	[PERF_COUNT_HW_CACHE_L1I] = { "L1-icache", OP_READ | OP_PREFETCH },
	[PERF_COUNT_HW_CACHE_LL] = { "LLC", OP_READ | OP_WRITE | OP_PREFETCH },
	[PERF_COUNT_HW_CACHE_DTLB] = { "dTLB", OP_READ | OP_WRITE | OP_PREFETCH },
	[PERF_COUNT_HW_CACHE_ITLB] = { "iTLB", OP_READ },
	[PERF_COUNT_HW_CACHE_BPU] = { "branch", OP_READ },
	[PERF_COUNT_HW_CACHE_NODE] = { "node", OP_READ | OP_WRITE | OP_PREFETCH },
};

/* An access count is "<cache>-<plural>", a miss count "<cache>-<singular>-misses". */
static const struct {
	const char *singular;
	const char *plural;
} hw_cache_ops[PERF_COUNT_HW_CACHE_OP_MAX] = {
	[PERF_COUNT_HW_CACHE_OP_READ] = { "load", "loads" },
	[PERF_COUNT_HW_CACHE_OP_WRITE] = { "store", "stores" },
	[PERF_COUNT_HW_CACHE_OP_PREFETCH] = { "prefetch", "prefetches" },
};

/* Columns that are not the camelCase of the name, kept as perf-stat.csv has always had them. */
static const struct {
	const char *name;
	const char *column;
} column_overrides[] = {
	{ "task-clock", "taskClockMillis" },
	{ "L1-dcache-load-misses", "l1dLoadMisses" },
};

static const char default_list[] = "task-clock,context-switches,cpu-migrations,page-faults,"
				   "cycles,instructions,cache-references,cache-misses,"
				   "L1-dcache-load-misses,branch-misses";

const char *events_default_list(void)
{
	return default_list;
}

static bool find_named(const char *item, struct cg_event *ev)
{
	const struct named_event *n;
	size_t i;

	for (i = 0; i < sizeof(named_events) / sizeof(named_events[0]); i++) {
		n = &named_events[i];
		if (strcmp(item, n->name) && (!n->alias || strcmp(item, n->alias)))
			continue;
		strcpy(ev->name, n->name);
		ev->type = n->type;
		ev->config = n->config;
		ev->core_source = n->core_source;
		return true;
	}
	return false;
}

static bool find_hw_cache(const char *item, struct cg_event *ev)
{
	int cache, op;

	for (cache = 0; cache < PERF_COUNT_HW_CACHE_MAX; cache++) {
		for (op = 0; op < PERF_COUNT_HW_CACHE_OP_MAX; op++) {
			if (!(hw_caches[cache].ops & (1 << op)))
				continue;
			snprintf(ev->name, sizeof(ev->name), "%s-%s", hw_caches[cache].name,
				 hw_cache_ops[op].plural);
			if (!strcmp(item, ev->name)) {
				ev->config =
					cache | op << 8 | PERF_COUNT_HW_CACHE_RESULT_ACCESS << 16;
				goto found;
			}
			snprintf(ev->name, sizeof(ev->name), "%s-%s-misses", hw_caches[cache].name,
				 hw_cache_ops[op].singular);
			if (!strcmp(item, ev->name)) {
				ev->config =
					cache | op << 8 | PERF_COUNT_HW_CACHE_RESULT_MISS << 16;
				goto found;
			}
		}
	}
	return false;
found:
	ev->type = PERF_TYPE_HW_CACHE;
	ev->core_source = CG_EVENT_FROM_PERF;
	return true;
}

/* "r" and 1 to 16 hex digits, as perf takes them: the value goes to config as it is. */
static bool parse_raw(const char *item, struct cg_event *ev)
{
	uint64_t config = 0;
	const char *p;
	int digit;

	if (item[0] != 'r' || !item[1] || strlen(item + 1) > 16)
		return false;
	for (p = item + 1; *p; p++) {
		if (!isxdigit((unsigned char)*p))
			return false;
		digit = isdigit((unsigned char)*p) ? *p - '0'
						   : tolower((unsigned char)*p) - 'a' + 10;
		config = config << 4 | digit;
	}
	strcpy(ev->name, item);
	for (p = item; *p; p++)
		ev->column[p - item] = tolower((unsigned char)*p);
	ev->column[p - item] = '\0';
	ev->type = PERF_TYPE_RAW;
	ev->config = config;
	ev->core_source = CG_EVENT_FROM_PERF;
	return true;
}

/* "dTLB-load-misses" -> "dtlbLoadMisses": the first word in lower case, the others capitalised. */
static void camel_case(const char *name, char *column)
{
	bool word_start = false;

	for (; *name; name++) {
		if (*name == '-') {
			word_start = true;
			continue;
		}
		*column++ =
			word_start ? toupper((unsigned char)*name) : tolower((unsigned char)*name);
		word_start = false;
	}
	*column = '\0';
}

static void name_column(struct cg_event *ev)
{
	size_t i;

	for (i = 0; i < sizeof(column_overrides) / sizeof(column_overrides[0]); i++) {
		if (!strcmp(ev->name, column_overrides[i].name)) {
			strcpy(ev->column, column_overrides[i].column);
			return;
		}
	}
	camel_case(ev->name, ev->column);
}

static void set_error(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_error(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int events_parse(const char *list, struct cg_event *ev, int max, int *nr, char *err, size_t errlen)
{
	const char *p = list, *start, *end;
	char item[sizeof(ev->name)], quoted[4 * sizeof(ev->name) + 3];
	int n = 0, i, len, ret = -EINVAL;

	while (isspace((unsigned char)*p))
		p++;
	if (!*p) {
		set_error(err, errlen, "empty event list");
		goto out;
	}
	for (p = list;; p = end + 1) {
		end = strchrnul(p, ',');
		start = p;
		while (start < end && isspace((unsigned char)*start))
			start++;
		len = end - start;
		while (len && isspace((unsigned char)start[len - 1]))
			len--;
		if (!len) {
			set_error(err, errlen, "empty name as event %d of the list", n + 1);
			goto out;
		}
		if ((size_t)len >= sizeof(item)) {
			message_quote_buf(quoted, sizeof(quoted), start, len);
			set_error(err, errlen, "unknown event %s", quoted);
			goto out;
		}
		memcpy(item, start, len);
		item[len] = '\0';
		/* an item may hold any byte: quoted, it cannot split the one line of a message */
		message_quote_buf(quoted, sizeof(quoted), item, len);
		if (n == max) {
			set_error(err, errlen, "too many events at %s: at most %d", quoted, max);
			goto out;
		}
		if (find_named(item, &ev[n]) || find_hw_cache(item, &ev[n])) {
			name_column(&ev[n]);
		} else if (!parse_raw(item, &ev[n])) {
			set_error(err, errlen, "unknown event %s%s", quoted,
				  item[0] == 'r' ? " (a raw event is r and 1 to 16 hex digits)"
						 : "");
			goto out;
		}
		for (i = 0; i < n; i++) {
			if (ev[i].type == ev[n].type && ev[i].config == ev[n].config) {
				set_error(err, errlen, "event %s repeats '%s'", quoted, ev[i].name);
				goto out;
			}
		}
		n++;
		if (!*end)
			break;
	}
	ret = 0;
out:
	*nr = ret ? 0 : n;
	return ret;
}
