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

#include "sources/container_path.h"

#define DOCKER_NAME_MAX	  128 /* Docker's names are [a-zA-Z0-9][a-zA-Z0-9_.-]*, 1 to 128+ */
#define DOCKER_IMAGE_MAX  256
#define COMPOSE_FIELD_MAX 128 /* a project or service name */

/* One container as the engine names it. */
struct docker_container {
	char id[CONTAINER_ID_LEN + 1];
	char name[DOCKER_NAME_MAX + 1]; /* without the API's leading '/' */
	char image[DOCKER_IMAGE_MAX + 1];
	/* com.docker.compose.project, .service and .container-number; "" and 0 when absent */
	char compose_project[COMPOSE_FIELD_MAX + 1];
	char compose_service[COMPOSE_FIELD_MAX + 1];
	int compose_replica;
};

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
int docker_parse_list(const char *json, void (*fn)(const struct docker_container *c, void *ctx),
		      void *ctx);

/*
 * One /events object: its kind, and for a container's event the container as it names it
 * (c->name "" when the event carries none). -EINVAL when it is not a JSON object.
 */
int docker_parse_event(const char *json, enum docker_event_kind *kind, struct docker_container *c);

#endif /* CGSTAT_DOCKER_API_H */
