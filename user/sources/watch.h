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

/* What a -c or -p argument names. */
enum cg_target_kind {
	CG_TARGET_CGROUP,  /* -c PATH or -c ID */
	CG_TARGET_PID,	   /* -p PID */
	CG_TARGET_DOCKER,  /* -c docker:NAME: Docker's (or Podman's) container of that name */
	CG_TARGET_COMPOSE, /* -c compose:[PROJECT/]SERVICE: each replica, and their total */
	CG_TARGET_POD,	   /* -c pod:NAMESPACE/POD[/CONTAINER] */
	CG_TARGET_UNIT,	   /* -c unit:NAME.service: a systemd unit's own cgroup */
};

/* One -c or -p argument. */
struct cg_target {
	char *name;   /* the NAME= label, or NULL: label by the path under the mount */
	char *cgroup; /* -c: a path (absolute or under the v2 mount) or a cgroup id; else NULL */
	int pid;      /* -p: the process whose cgroup to watch; else 0 */
	enum cg_target_kind kind;
	/* a name target's value after its prefix ("broker", "pulsar/bookie"); else NULL */
	char *select;
};

/* The replicas of a compose service that -c compose: counts, each in a slot of its own. */
#define WATCH_COMPOSE_REPLICAS 8

/*
 * -c's value, if it names a container, a pod or a unit ("docker:broker"): 0 with t->kind and
 * t->select (malloc'd) set; 1 when it is a cgroup's path or id (t unchanged); -EINVAL with why
 * (an empty name, an unknown prefix, a pod without its namespace), or -ENOMEM.
 */
int watch_target_parse(const char *value, struct cg_target *t, const char **why);

/* What a watched slot of a name target follows. */
struct watch_name {
	enum cg_target_kind kind; /* CG_TARGET_CGROUP and CG_TARGET_PID: none */
	const char *select;	  /* the target's, shared by a compose service's slots */
	int replica;		  /* a compose replica's number; 0 for the service's total */
	/* the container's id (a pod's uid) counted now; "" while there is none */
	char owner[CG_CONTAINER_ID_LEN + 1];
	bool said_waiting;
	/*
	 * The last walk of the tree that found no cgroup for it: for whom, at which count of the
	 * names' news (container_names__changes()) or when (a unit's). Walks cost 5 to 38 ms on a
	 * host of 1,000 cgroups, so one is not made again until something could have changed.
	 */
	char walked_for[CG_CONTAINER_ID_LEN + 1];
	unsigned long walked_changes;
	uint64_t walked_ns;
};

/* Watched cgroup i counts in slot i. */
struct watch_list {
	uint64_t *ids;
	char **labels;
	char **paths; /* -c by path: the absolute path to follow; NULL for an id or -p */
	char **dirs;  /* where watched cgroup i is: its absolute path, kept up as it is followed */
	int *pids;    /* -p: the process to follow; 0 otherwise */
	/*
	 * name targets: the container (pod, unit) to follow; its slot counts a pending id
	 * (core/record.h) while it has no cgroup, and dirs[i] is NULL
	 */
	struct watch_name *names;
	int nr; /* 0: no -c or -p, every cgroup is counted */
};

/* Whether watched slot n is a compose service's total: the drain sums its replicas into it. */
bool watch_name_is_total(const struct watch_name *n);

/*
 * Fill w from the nr targets of -c and -p, saying on stderr what is wrong with one: 0, -EEXIST
 * for a cgroup given twice, -E2BIG for one the BPF side cannot count (too deep, or too many
 * nested), or another -errno.
 */
int watch_list_resolve(struct watch_list *w, const struct cg_target *targets, int nr,
		       const struct cgroup_mount *mnt);

/*
 * Where watched cgroup i is now, if it is to be followed: 1 and its id in *id and its path in
 * path when it is another cgroup than w->ids[i], else 0. A name target is looked up in
 * containers (NULL: never found); its w->names[i].owner is kept up.
 */
struct container_names;
int watch_list_moved(struct watch_list *w, int i, const struct cgroup_mount *mnt,
		     struct container_names *containers, char *path, size_t len, uint64_t *id);

void watch_list_free(struct watch_list *w);

#endif /* CGSTAT_WATCH_H */
