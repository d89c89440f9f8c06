/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Whether cgstat sees the host as the host sees itself: its PID and cgroup namespaces the
 * initial ones, and its cgroup v2 mount the whole tree. In a container started without
 * --pid=host, --cgroupns=host or the host's /sys/fs/cgroup, it does not, and some of what it
 * says is then about the container's view (README, "In a container").
 */
#ifndef CGSTAT_HOST_VIEW_H
#define CGSTAT_HOST_VIEW_H

#include <stdbool.h>
#include <stdio.h>

#include "sources/cgroup.h"

/*
 * The inode numbers of the initial namespaces, fixed since Linux 3.8 (PROC_PID_INIT_INO and
 * PROC_CGROUP_INIT_INO, include/linux/proc_ns.h): a namespace made later has another.
 */
#define HOST_VIEW_PID_NS_INIT_INO    0xEFFFFFFCU
#define HOST_VIEW_CGROUP_NS_INIT_INO 0xEFFFFFFBU

struct host_view {
	bool pid_ns_private;	/* not the initial PID namespace */
	bool cgroup_ns_private; /* not the initial cgroup namespace */
	bool cgroup_subtree;	/* the v2 mount's root is not the tree's root */
};

/*
 * What proc (normally "/proc") says of the calling process's namespaces, and m of its mount.
 * A namespace that cannot be read counts as the host's: only what it can tell is said.
 */
void host_view__read(const char *proc, const struct cgroup_mount *m, struct host_view *v);

/* One line on out for each way the view is not the host's, with what that breaks. */
void host_view__say(FILE *out, const struct host_view *v, const struct cgroup_mount *m);

#endif /* CGSTAT_HOST_VIEW_H */
