/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which container a cgroup is, from its path alone, for the layouts the runtimes make: Docker
 * (cgroupfs and systemd drivers), Podman (root and rootless, its conmon monitor told apart),
 * Kubernetes under containerd, CRI-O or cri-dockerd with either kubelet cgroup driver (the pod's
 * own cgroup told apart from its containers'), and systemd units. The runtimes' names for an id
 * come from elsewhere (a runtime's module); this is what is known with none of them answering. No
 * I/O: paths are untrusted text, and every part taken from one is checked for the characters it may
 * hold.
 */
#ifndef CGSTAT_CONTAINER_PATH_H
#define CGSTAT_CONTAINER_PATH_H

#include <stdbool.h>
#include <stddef.h>

#include "core/record.h"

enum container_runtime {
	RUNTIME_NONE,
	RUNTIME_DOCKER,
	RUNTIME_PODMAN,
	RUNTIME_CONTAINERD,
	RUNTIME_CRIO,
	RUNTIME_SYSTEMD, /* a unit, not a container */
	NR_RUNTIMES,
};

enum container_kind {
	CONTAINER_NONE,	   /* no container's: a slice, the root, a cgroup of nothing known */
	CONTAINER_OWN,	   /* a container's own cgroup */
	CONTAINER_MONITOR, /* a runtime's monitor process beside the container (conmon) */
	CONTAINER_POD,	   /* a Kubernetes pod's cgroup: the total of its containers */
	CONTAINER_UNIT,	   /* a systemd unit's cgroup */
};

/* A Kubernetes pod's QoS class, from the slice or folder its cgroup is in. */
enum pod_qos {
	QOS_NONE,
	QOS_GUARANTEED, /* directly under kubepods */
	QOS_BURSTABLE,
	QOS_BESTEFFORT,
};

#define CONTAINER_ID_LEN   CG_CONTAINER_ID_LEN
#define CONTAINER_SHORT_ID 12 /* as docker ps shows them */
#define POD_UID_MAX	   CG_POD_UID_MAX
#define UNIT_NAME_MAX	   255 /* systemd's UNIT_NAME_MAX */

struct container_path {
	enum container_runtime runtime;
	enum container_kind kind;
	char id[CONTAINER_ID_LEN + 1]; /* CONTAINER_OWN and CONTAINER_MONITOR; else "" */
	/* a Kubernetes pod's, with dashes (the systemd driver writes them as underscores) */
	char pod_uid[POD_UID_MAX + 1];
	enum pod_qos qos;
	/* CONTAINER_UNIT: the outermost unit's name, "cron.service"; "" otherwise */
	char unit[UNIT_NAME_MAX + 1];
	/* the uid of a user's systemd instance (user@UID.service) it is under; -1 when none */
	long user;
	/*
	 * Where the part below the container's (or pod's, or unit's) own cgroup begins in the path:
	 * a cgroup the container made inside its own ("/docker/ID/sub" has "/sub"); the path's
	 * length when there is none.
	 */
	size_t below;
};

/*
 * What path, a cgroup's path under the v2 mount ("/docker/ID"; a leading "/" or none), is.
 * Always fills *c: kind CONTAINER_NONE (runtime RUNTIME_NONE) for a path of no container, pod
 * or unit. Returns c->kind.
 */
enum container_kind container_path_parse(const char *path, struct container_path *c);

/*
 * The label of the cgroup at path (under the v2 mount) when it is a container's, a pod's or a
 * unit's, with no runtime's name for it: "docker:4bc4dbfde872" (the runtime, the short id;
 * "cri" for a pod's container whose runtime the path does not say), "podman-conmon:ID" for a
 * monitor, "pod:UID", a unit's name ("cron.service"), each followed by the path below it
 * ("docker:4bc4dbfde872/sub", "user@1000.service/app.slice/foo.service"). Labels of different
 * cgroups differ: ids and pod uids are unique, and so is the outermost unit's name. 0; -ENOENT for
 * a path of none, which is labelled by the path itself; -ENAMETOOLONG when buf is too short.
 */
int container_path_label(const char *path, char *buf, size_t len);

/*
 * The label of the cgroup at path: container_path_label()'s, made in buf, where it has one,
 * else path itself (also when buf is too short for it).
 */
const char *container_or_path_label(const char *path, char *buf, size_t len);

/* Whether s[0..len) is a container's id as the runtimes write it: 64 lowercase hex digits. */
bool container_id_valid(const char *s, size_t len);

/* The runtime's name as the label's prefix says it ("docker", "podman", ...); "" for none. */
const char *container_runtime_name(enum container_runtime r);

#endif /* CGSTAT_CONTAINER_PATH_H */
