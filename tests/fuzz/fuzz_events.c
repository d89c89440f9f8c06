// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * events_parse() over arbitrary -e lists. A list it takes must describe distinct events with
 * distinct, non-empty CSV columns, one per comma-separated item, and the canonical names it
 * reports must parse back to the same events; a list it refuses must leave one line in err,
 * since cgstat prints err as a single "cgstat: --events: ..." line.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <linux/perf_event.h>

#include "sources/perf_events.h"
#include "fuzz.h"
#include "core/record.h"

#define ERRLEN 256

static int count_items(const char *list)
{
	int n = 1;

	for (; *list; list++)
		n += *list == ',';
	return n;
}

static bool is_column(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		if (!isalnum((unsigned char)*s))
			return false;
	}
	return true;
}

/* A refusal: no events, one terminated line in err, and err is left alone when errlen is 0. */
static void check_refusal(const char *list, int max)
{
	struct cg_event *ev = malloc((size_t)max * sizeof(*ev));
	char *err = malloc(ERRLEN), tiny[2], none = 'x';
	int nr = -1;

	CHECK(ev && err);
	memset(err, 'x', ERRLEN);
	CHECK(events_parse(list, ev, max, &nr, err, ERRLEN) == -EINVAL);
	CHECK(nr == 0);
	CHECK(fuzz_terminated(err, ERRLEN));
	CHECK(err[0] != '\0');
	CHECK(!strchr(err, '\n'));

	nr = -1;
	CHECK(events_parse(list, ev, max, &nr, tiny, 1) == -EINVAL && nr == 0);
	CHECK(tiny[0] == '\0');
	CHECK(events_parse(list, ev, max, &nr, &none, 0) == -EINVAL && nr == 0);
	CHECK(none == 'x');
	free(ev);
	free(err);
}

static void check_events(const char *list, const struct cg_event *ev, int nr, int max)
{
	CHECK(nr >= 1 && nr <= max);
	CHECK(nr == count_items(list));
	for (int i = 0; i < nr; i++) {
		const struct cg_event *e = &ev[i];

		CHECK(fuzz_terminated(e->name, sizeof(e->name)));
		CHECK(fuzz_terminated(e->column, sizeof(e->column)));
		CHECK(e->name[0] != '\0');
		/* A header that never needs CSV quoting and is a plain JSON key. */
		CHECK(is_column(e->column));
		CHECK(e->type == PERF_TYPE_HARDWARE || e->type == PERF_TYPE_SOFTWARE ||
		      e->type == PERF_TYPE_HW_CACHE || e->type == PERF_TYPE_RAW);
		switch (e->core_source) {
		case CG_EVENT_FROM_PERF:
			break;
		case CG_EVENT_CORE_TASK_CLOCK:
			CHECK(e->type == PERF_TYPE_SOFTWARE &&
			      e->config == PERF_COUNT_SW_TASK_CLOCK);
			break;
		case CG_EVENT_CORE_CONTEXT_SWITCHES:
			CHECK(e->type == PERF_TYPE_SOFTWARE &&
			      e->config == PERF_COUNT_SW_CONTEXT_SWITCHES);
			break;
		case CG_EVENT_CORE_MIGRATIONS:
			CHECK(e->type == PERF_TYPE_SOFTWARE &&
			      e->config == PERF_COUNT_SW_CPU_MIGRATIONS);
			break;
		case CG_EVENT_CORE_PAGE_FAULTS:
			CHECK(e->type == PERF_TYPE_SOFTWARE &&
			      e->config == PERF_COUNT_SW_PAGE_FAULTS);
			break;
		case CG_EVENT_CORE_MINOR_FAULTS:
			CHECK(e->type == PERF_TYPE_SOFTWARE &&
			      e->config == PERF_COUNT_SW_PAGE_FAULTS_MIN);
			break;
		case CG_EVENT_CORE_MAJOR_FAULTS:
			CHECK(e->type == PERF_TYPE_SOFTWARE &&
			      e->config == PERF_COUNT_SW_PAGE_FAULTS_MAJ);
			break;
		default:
			CHECK(!"core_source out of range");
		}
		for (int j = 0; j < i; j++) {
			CHECK(e->type != ev[j].type || e->config != ev[j].config);
			CHECK(strcmp(e->column, ev[j].column));
			CHECK(strcmp(e->name, ev[j].name));
		}
	}
}

/* The canonical names joined again must be taken as they are and mean the same events. */
static void check_canonical(const struct cg_event *ev, int nr)
{
	struct cg_event again[CG_MAX_EVENTS];
	char list[CG_MAX_EVENTS * 65] = "", err[ERRLEN];
	int nr_again = -1;

	for (int i = 0; i < nr; i++) {
		if (i)
			strcat(list, ",");
		strcat(list, ev[i].name);
	}
	CHECK(events_parse(list, again, CG_MAX_EVENTS, &nr_again, err, sizeof(err)) == 0);
	CHECK(nr_again == nr);
	for (int i = 0; i < nr; i++) {
		CHECK(!strcmp(again[i].name, ev[i].name));
		CHECK(!strcmp(again[i].column, ev[i].column));
		CHECK(again[i].type == ev[i].type && again[i].config == ev[i].config);
		CHECK(again[i].core_source == ev[i].core_source);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *list = fuzz_strdup(data, size);
	/* Exactly CG_MAX_EVENTS entries, as in cgstat, so that ASan sees a write past them. */
	struct cg_event *ev = malloc(CG_MAX_EVENTS * sizeof(*ev));
	char err[ERRLEN];
	int nr = -1, ret;

	CHECK(ev);
	ret = events_parse(list, ev, CG_MAX_EVENTS, &nr, err, sizeof(err));
	CHECK(ret == 0 || ret == -EINVAL);
	if (ret) {
		check_refusal(list, CG_MAX_EVENTS);
	} else {
		check_events(list, ev, nr, CG_MAX_EVENTS);
		check_canonical(ev, nr);
		/* One fewer slot than events must be refused, not overrun. */
		check_refusal(list, nr - 1);
	}
	free(ev);
	free(list);
	return 0;
}
