/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a Docker Engine API (Docker's, or Podman's compatible socket) says of containers, read
 * from its JSON: GET /containers/json (the list at start) and each object of GET /events (a
 * container made, started, renamed or destroyed while cgstat runs). No I/O here: the replies
 * are untrusted text, and every field taken from one is checked and bounded.
 */
#ifndef CGSTAT_DOCKER_API_H
#define CGSTAT_DOCKER_API_H

#include <stdbool.h>

#include "sources/container_names.h"

/* What an event does to the names. */
enum docker_event_kind {
	DOCKER_EVENT_OTHER,   /* nothing to the names: exec, die, a network's, an image's */
	DOCKER_EVENT_NAMED,   /* create, start, rename: the container's name as it is now */
	DOCKER_EVENT_REMOVED, /* destroy: its name is free for another */
};

/*
 * The containers of a /containers/json reply, each passed to fn with ctx, in order. The number
 * passed, or -EINVAL when the reply is not a JSON array (its entries that are not containers,
 * or whose id is not 64 lowercase hex digits, are skipped).
 */
int docker_parse_list(const char *json, void (*fn)(const struct cg_container *c, void *ctx),
		      void *ctx);

/*
 * One /events object: its kind, and for a container's event the container as it names it
 * (c->name "" when the event carries none). -EINVAL when it is not a JSON object.
 */
int docker_parse_event(const char *json, enum docker_event_kind *kind, struct cg_container *c);

#endif /* CGSTAT_DOCKER_API_H */
