/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The runtimes' names for containers and pods, by id, and the labels made of them. The name
 * sources (sources/name_source.h) fill the table, each from its own thread; the labelling of
 * cgroups reads it on the drain's. One lock guards it and nothing done under it waits on I/O,
 * so a runtime that stalls never holds up the drain.
 *
 * A label belongs to one container for the whole run: the first to bear a name gets it bare
 * ("broker"); another bearing it later, or at once under another runtime, gets the name and its
 * short id ("broker@4bc4dbfde872"), so that two containers never merge into one row. A name
 * that could be read as another kind of label (a path, a unit's, a short id's) is labelled
 * "container:NAME". No libbpf here.
 */
#ifndef CGSTAT_CONTAINER_NAMES_H
#define CGSTAT_CONTAINER_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#include "core/record.h"
#include "sources/container_path.h"

struct container_names;

struct container_names *container_names__new(void);
void container_names__free(struct container_names *t);

/*
 * A container as its runtime names it now (made, started, renamed): c->id and c->name must be
 * set. 0, or -ENOMEM (the table unchanged).
 */
int container_names__set(struct container_names *t, const struct cg_container *c);

/*
 * A container removed: its name is kept for the rows still to come, and forgotten later (its
 * label is never given to another).
 */
void container_names__remove(struct container_names *t, const char *id);

/*
 * A pod's namespace and name, by its uid, for the pod's own cgroup ("NAMESPACE/POD").
 * 0 or -ENOMEM.
 */
int container_names__set_pod(struct container_names *t, const char *uid, const char *pod_namespace,
			     const char *pod_name);

/*
 * Why a runtime's names are not known, for one line on stderr the first time a container of
 * it is labelled by its short id for want of a name, unless said is true (the source said it);
 * why NULL: they are known again.
 */
void container_names__set_trouble(struct container_names *t, enum container_runtime runtime,
				  const char *why, bool said);

/*
 * A function the table calls, without its lock, when it labels a container whose id it does
 * not know while nothing is wrong: a source that missed an event can ask its runtime again.
 */
void container_names__on_unknown(struct container_names *t, void (*fn)(void *ctx), void *ctx);

/*
 * A descriptor that polls readable once a container or a pod was named, renamed or removed
 * (an eventfd: read its 8 bytes to wait again), for a name target to be followed at once
 * rather than at the interval's end.
 */
int container_names__event_fd(const struct container_names *t);

/*
 * Counts what was said of containers and pods (each name set, even unchanged, each removal):
 * a container started says its name again as its cgroup is made.
 */
unsigned long container_names__changes(struct container_names *t);

/* Changes with every label the table would now give otherwise than before. */
unsigned long container_names__generation(struct container_names *t);

/*
 * The label of the cgroup at path (under the v2 mount): for a container or a pod the runtime
 * named, the name ("broker", "NAMESPACE/POD/CONTAINER", "NAMESPACE/POD") followed by the path
 * below it; else container_or_path_label(). In buf, or path itself.
 */
const char *container_names__label(struct container_names *t, const char *path, char *buf,
				   size_t len);

/*
 * What the table knows of the container or pod whose cgroup is at path, in *c (the runtime and
 * ids from the path, the rest as the runtime named them): 0, or -ENOENT when path is neither's.
 */
int container_names__describe(struct container_names *t, const char *path, struct cg_container *c);

/*
 * The id (CONTAINER_ID_LEN + 1 bytes) of the container match says is the one, the last named
 * of those not removed (a name re-created is its new container): 0, or -ENOENT. A visit of the
 * table: for name targets, once an interval.
 */
int container_names__find(struct container_names *t,
			  bool (*match)(const struct cg_container *c, const void *ctx),
			  const void *ctx, char *id);

/* A pod gone: its name forgotten (its label is never given to another). */
void container_names__remove_pod(struct container_names *t, const char *uid);

/* The uid (POD_UID_MAX + 1 bytes) of the pod NAMESPACE/POD, the last named: 0, or -ENOENT. */
int container_names__find_pod(struct container_names *t, const char *pod_namespace,
			      const char *pod_name, char *uid);

#endif /* CGSTAT_CONTAINER_NAMES_H */
