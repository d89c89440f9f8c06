// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sources/name_source.h"

static const struct name_source *const sources[] = {
	&docker_engine_source,
	&kubelet_logs_source,
};

#define NR_SOURCES (sizeof(sources) / sizeof(sources[0]))

struct name_sources {
	void *state[NR_SOURCES];
};

int name_sources__groups(const struct name_source_config *cfg, gid_t *groups, int max)
{
	int n = 0;
	gid_t g;

	for (size_t i = 0; i < NR_SOURCES && n < max; i++) {
		g = sources[i]->group ? sources[i]->group(cfg) : (gid_t)-1;
		if (g != (gid_t)-1)
			groups[n++] = g;
	}
	return n;
}

struct name_sources *name_sources__start(struct container_names *names,
					 const struct name_source_config *cfg)
{
	struct name_sources *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	for (size_t i = 0; i < NR_SOURCES; i++) {
		s->state[i] = sources[i]->start(names, cfg);
		if (!s->state[i]) {
			err = errno;
			fprintf(stderr, "cgstat: cannot follow %s's names: %s\n", sources[i]->name,
				strerror(err));
			name_sources__stop(s);
			errno = err;
			return NULL;
		}
	}
	return s;
}

void name_sources__stop(struct name_sources *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < NR_SOURCES; i++)
		if (s->state[i])
			sources[i]->stop(s->state[i]);
	free(s);
}
