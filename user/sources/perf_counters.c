// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sources/perf_counters.h"
#include "core/record.h"

struct perf_counters {
	int nr_cpus;
	int nr_open;
	int index[CG_MAX_EVENTS];
	int *fds;
};

static int perf_event_open(struct perf_event_attr *attr, int cpu)
{
	return syscall(__NR_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* 0 with fds[0..nr_cpus) open (-1 where a CPU is offline), or the errno of the refusal. */
static int open_event(const struct cg_event *ev, int nr_cpus, int *fds)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = ev->type,
		.config = ev->config,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
	};
	int cpu, err = 0, online = 0;

	for (cpu = 0; cpu < nr_cpus; cpu++) {
		fds[cpu] = perf_event_open(&attr, cpu);
		if (fds[cpu] >= 0) {
			online++;
			continue;
		}
		/* an offline or absent CPU: nothing runs there to count */
		if (errno == ENODEV || errno == ENXIO)
			continue;
		err = errno;
		break;
	}
	if (!err && !online)
		err = ENODEV;
	if (err) {
		while (cpu-- > 0)
			if (fds[cpu] >= 0)
				close(fds[cpu]);
	}
	return err;
}

struct perf_counters *perf_counters__open(const struct cg_event *ev, int nr_events, int nr_cpus,
					  FILE *err)
{
	struct perf_counters *p;
	int i, refused, nr_unsupported = 0;

	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->nr_cpus = nr_cpus;
	p->fds = malloc(sizeof(*p->fds) * nr_cpus * (nr_events ? nr_events : 1));
	if (!p->fds) {
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < nr_events && i < CG_MAX_EVENTS; i++) {
		p->index[i] = -1;
		if (ev[i].core_source != CG_EVENT_FROM_PERF)
			continue;
		refused = open_event(&ev[i], nr_cpus, &p->fds[p->nr_open * nr_cpus]);
		if (refused == ENOENT || refused == EOPNOTSUPP) {
			/* said once for all of them, below: a VM without a PMU refuses six */
			fprintf(err, "%s%s",
				nr_unsupported++ ? ", " : "cgstat: <not supported> here: ",
				ev[i].name);
			continue;
		}
		if (refused) {
			fprintf(err, "cgstat: event %s: %s; its column stays empty\n", ev[i].name,
				strerror(refused));
			continue;
		}
		p->index[i] = p->nr_open++;
	}
	if (nr_unsupported)
		fprintf(err, " (no PMU counts %s here); %s empty\n",
			nr_unsupported > 1 ? "them" : "it",
			nr_unsupported > 1 ? "their columns stay" : "its column stays");
	return p;
}

int perf_counters__nr_open(const struct perf_counters *p)
{
	return p->nr_open;
}

const int *perf_counters__fds(const struct perf_counters *p)
{
	return p->fds;
}

int perf_counters__index(const struct perf_counters *p, int i)
{
	return i >= 0 && i < CG_MAX_EVENTS ? p->index[i] : -1;
}

void perf_counters__close(struct perf_counters *p)
{
	int i;

	if (!p)
		return;
	for (i = 0; i < p->nr_open * p->nr_cpus; i++)
		if (p->fds[i] >= 0)
			close(p->fds[i]);
	free(p->fds);
	free(p);
}
