/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The cgroups of -c and -p, resolved before anything is loaded, and followed after: a path
 * given with -c that is made again (a restarted service), or a -p process that moves.
 * Free of libbpf: the slots module hands the changes to the BPF side.
 */
#ifndef CGSTAT_WATCH_H
#define CGSTAT_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include "sources/cgroup.h"

/* One -c or -p argument. */
struct cg_target {
	char *name;   /* the NAME= label, or NULL: label by the path under the mount */
	char *cgroup; /* -c: a path (absolute or under the v2 mount) or a cgroup id; else NULL */
	int pid;      /* -p: the process whose cgroup to watch; else 0 */
};

/* Watched cgroup i counts in slot i. */
struct watch_list {
	uint64_t *ids;
	char **labels;
	char **paths; /* -c by path: the absolute path to follow; NULL for an id or -p */
	char **dirs;  /* where watched cgroup i is: its absolute path, kept up as it is followed */
	int *pids;    /* -p: the process to follow; 0 otherwise */
	int nr;	      /* 0: no -c or -p, every cgroup is counted */
};

/*
 * Fill w from the nr targets of -c and -p, saying on stderr what is wrong with one: 0, -EEXIST
 * for a cgroup given twice, -E2BIG for one the BPF side cannot count (too deep, or too many
 * nested), or another -errno.
 */
int watch_list_resolve(struct watch_list *w, const struct cg_target *targets, int nr,
		       const struct cgroup_mount *mnt);

/*
 * Where watched cgroup i is now, if it is to be followed: 1 and its id in *id (and its path in
 * path, for a process) when it is another cgroup than w->ids[i], else 0.
 */
int watch_list_moved(const struct watch_list *w, int i, const struct cgroup_mount *mnt, char *path,
		     size_t len, uint64_t *id);

void watch_list_free(struct watch_list *w);

#endif /* CGSTAT_WATCH_H */
