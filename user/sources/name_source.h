/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where the names of containers come from: one module per runtime (sources/docker_engine.c,
 * sources/kubelet_logs.c), each behind struct name_source, each following its runtime on its
 * own thread into the one table of names (sources/container_names.h). No request is made on the
 * drain's thread. No libbpf here.
 */
#ifndef CGSTAT_NAME_SOURCE_H
#define CGSTAT_NAME_SOURCE_H

#include <stdbool.h>
#include <sys/types.h>

#include "sources/container_names.h"

struct name_source_config {
	/* DOCKER_HOST as the docker CLI reads it ("unix:///run/user/1000/docker.sock"); NULL: the
	 * default socket */
	const char *docker_host;
	/* the folder holding the kubelet's pods/ and containers/ logs (normally /var/log) */
	const char *kubelet_logs;
	/*
	 * What each source's thread calls first: its own privileges made final, keeping the
	 * groups it needs (the program's privileges_settle()); NULL: nothing to do. 0 or -errno.
	 */
	int (*settle)(bool keep_groups);
};

struct name_source {
	const char *name;
	/*
	 * The group whose access the source needs once cgstat runs as nobody (the Docker socket's
	 * group), or (gid_t)-1 for none. Called as root, before the drop.
	 */
	gid_t (*group)(const struct name_source_config *cfg);
	/*
	 * Follow the runtime into names, on a thread made here (it takes the caller's ids and
	 * capabilities), returning once the names there are at start are in the table or the
	 * runtime did not answer in time. The source's state, or NULL with errno set when it
	 * cannot. An engine that does not answer is asked again until it does; the kubelet's
	 * logs are followed when their folder is there at start.
	 */
	void *(*start)(struct container_names *names, const struct name_source_config *cfg);
	void (*stop)(void *state);
};

extern const struct name_source docker_engine_source;
extern const struct name_source kubelet_logs_source;

/* Every runtime's source, running. */
struct name_sources;

/* The groups the sources need kept (at most max), into groups: how many. */
int name_sources__groups(const struct name_source_config *cfg, gid_t *groups, int max);

/* Start every source: NULL with errno when one cannot start (said on stderr). */
struct name_sources *name_sources__start(struct container_names *names,
					 const struct name_source_config *cfg);
void name_sources__stop(struct name_sources *s);

#endif /* CGSTAT_NAME_SOURCE_H */
