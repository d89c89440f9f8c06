// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/message.h"
#include "sources/host_view.h"

/* Whether PROC/self/ns/NAME is another namespace than the initial one, whose inode is init. */
static bool ns_private(const char *proc, const char *name, unsigned int init)
{
	char path[PATH_MAX];
	struct stat st;

	if ((size_t)snprintf(path, sizeof(path), "%s/self/ns/%s", proc, name) >= sizeof(path) ||
	    stat(path, &st))
		return false;
	return st.st_ino != init;
}

void host_view__read(const char *proc, const struct cgroup_mount *m, struct host_view *v)
{
	v->pid_ns_private = ns_private(proc, "pid", HOST_VIEW_PID_NS_INIT_INO);
	v->cgroup_ns_private = ns_private(proc, "cgroup", HOST_VIEW_CGROUP_NS_INIT_INO);
	v->cgroup_subtree = strcmp(m->root, "/") != 0;
}

void host_view__say(FILE *out, const struct host_view *v, const struct cgroup_mount *m)
{
	if (v->pid_ns_private)
		fputs("cgstat: not in the host's PID namespace (a container without --pid=host): "
		      "-p takes this namespace's pids while the rows' thread ids are the host's, "
		      "and where the cpu controller is cgroup v1 the cgroups of processes outside "
		      "this namespace show no throttling\n",
		      out);
	if (v->cgroup_ns_private)
		fputs("cgstat: not in the host's cgroup namespace (a container without "
		      "--cgroupns=host): cgroup paths are this namespace's (those outside it read "
		      "as /.. paths), so labels and -c paths are not the host's\n",
		      out);
	/* in a cgroup namespace of its own the mount's root reads as a path above it ("/..") */
	if (v->cgroup_subtree && !v->cgroup_ns_private) {
		fputs("cgstat: the cgroup v2 mount at ", out);
		message_quote(out, m->path);
		fputs(" shows the subtree ", out);
		message_quote(out, m->root);
		fputs(" alone (mount the host's: -v /sys/fs/cgroup:/sys/fs/cgroup:ro): cgroups "
		      "outside it are labelled by their ids\n",
		      out);
	}
}
