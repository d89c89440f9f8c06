/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Finding cgroups: the v2 mount (and a v1 controller's) from mountinfo, a -c or -p argument to a
 * directory and id, and ids back to paths for the all-cgroups mode. No libbpf here.
 */
#ifndef CGSTAT_CGROUP_H
#define CGSTAT_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cgroup_mount {
	char path[4096]; /* where cgroup2 is mounted, e.g. /sys/fs/cgroup/unified */
	char root[4096]; /* the mount's root within the hierarchy, usually "/" */
};

/*
 * Find the first cgroup2 mount in a mountinfo file (normally /proc/self/mountinfo), decoding
 * its octal escapes (\040 for a space). 0, -ENOENT when there is none, or -errno.
 */
int cgroup_find_v2_mount(const char *mountinfo_path, struct cgroup_mount *m);

/*
 * The first v1 hierarchy ("cgroup" mount) with controller among its super options, e.g. "cpu"
 * on a hybrid host. 0, -ENOENT when there is none, or -errno.
 */
int cgroup_find_v1_mount(const char *mountinfo_path, const char *controller,
			 struct cgroup_mount *m);

/*
 * Resolve a -c value: an absolute path (must lie under the mount), a path relative to the
 * mount, or a decimal cgroup id (searched for under the mount). Writes the absolute directory
 * path and the cgroup id (the directory's inode number). 0, -ENOENT, -EINVAL (outside the
 * mount), -ENAMETOOLONG or -errno.
 */
int cgroup_resolve(const struct cgroup_mount *m, const char *spec, char *path, size_t len,
		   uint64_t *id);

/*
 * The v2 cgroup of a process, from PROC/PID/cgroup's "0::" line (proc is normally "/proc"),
 * as an absolute path under the mount, and its id. 0, -ESRCH (no such process), -ENOENT (no
 * v2 line) or -errno.
 */
int cgroup_of_pid(const struct cgroup_mount *m, const char *proc, int pid, char *path, size_t len,
		  uint64_t *id);

/*
 * The cgroup of a process (or a thread, by its tid: v1 places each thread) in the v1 hierarchy
 * mounted at m that has controller, from its PROC/PID/cgroup line: an absolute path under m.
 * 0, -ESRCH, -ENOENT (no such line) or -errno.
 */
int cgroup_v1_of_pid(const struct cgroup_mount *m, const char *proc, int pid,
		     const char *controller, char *path, size_t len);

/*
 * The first cgroup, depth first, whose path under the mount ("/docker/ID") match says is the
 * one: its absolute path and id. 0, -ENOENT, -ENAMETOOLONG or -errno. A walk of the tree: for
 * what changes seldom, never each interval.
 */
int cgroup_find(const struct cgroup_mount *m, bool (*match)(const char *below, void *ctx),
		void *ctx, char *path, size_t len, uint64_t *id);

/* The directory's cgroup id: its inode number, as the kernel's kernfs id on 64-bit. */
int cgroup_id_of_path(const char *path, uint64_t *id);

/* The label for an absolute path under the mount: the part after it, "/" for the root. */
const char *cgroup_label(const struct cgroup_mount *m, const char *path);

/*
 * Id-to-label cache for the all-cgroups mode. A cgroup's label is its path under the mount,
 * unless the path is a container's, a pod's or a unit's (container_path_label()).
 * cgroup_names__get() walks the tree again when it meets an id it does not know, at most once
 * between two cgroup_names__new_interval() calls (the drain makes one per interval); a cgroup
 * removed before it was walked is labelled by its id ("#1234"). A label returned stays valid until
 * its id is forgotten; a walk drops the labels of every other cgroup it no longer finds, so the
 * cache holds the cgroups that exist and those handed out, however many come and go.
 */
struct cgroup_names;
struct cgroup_names *cgroup_names__new(const struct cgroup_mount *m);
const char *cgroup_names__get(struct cgroup_names *names, uint64_t id);
void cgroup_names__new_interval(struct cgroup_names *names);

/* The label of id if it has a real one (not "#id"), never walking: NULL otherwise. */
const char *cgroup_names__known(struct cgroup_names *names, uint64_t id);

/* The path under the mount of id if a walk found it ("/" for the root), never walking: NULL
 * otherwise. Valid until the next call that may walk or forget. */
const char *cgroup_names__path(const struct cgroup_names *names, uint64_t id);

/* The label of id as stored, "#id" included, never walking: NULL if it has none. */
const char *cgroup_names__stored(struct cgroup_names *names, uint64_t id);

/*
 * Label id as the child named leaf of parent_id, whose label must be known: a new cgroup is
 * labelled without a walk, even after it is gone. NULL and errno (ENOENT: the parent is not
 * known, or leaf is empty; ENOMEM).
 */
const char *cgroup_names__add_child(struct cgroup_names *names, uint64_t id, uint64_t parent_id,
				    const char *leaf);
void cgroup_names__forget(struct cgroup_names *names, uint64_t id);
/*
 * Label the cgroups of containers and pods with the runtimes' names in containers (else by
 * their paths): call before the first label is made. Each interval then labels them again when
 * a name changed; a replaced label stays valid until the next interval.
 */
struct container_names;
struct cg_container;
void cgroup_names__use_containers(struct cgroup_names *names, struct container_names *containers);

/* What the runtimes say of id's container or pod, never walking: NULL for another cgroup. Valid
 * until the next call that may walk or forget. */
const struct cg_container *cgroup_names__container(const struct cgroup_names *names, uint64_t id);

/* Labels held. */
size_t cgroup_names__size(const struct cgroup_names *names);
void cgroup_names__free(struct cgroup_names *names);

#endif /* CGSTAT_CGROUP_H */
