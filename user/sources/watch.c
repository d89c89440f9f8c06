// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/cgstat.h"
#include "lib/message.h"
#include "sources/container_path.h"
#include "sources/watch.h"

void watch_list_free(struct watch_list *w)
{
	int i;

	for (i = 0; i < w->nr; i++) {
		free(w->labels[i]);
		free(w->paths[i]);
		free(w->dirs[i]);
	}
	free(w->labels);
	free(w->paths);
	free(w->dirs);
	free(w->pids);
	free(w->ids);
}

/*
 * A target's label: its NAME=, else what the all-cgroups mode calls its cgroup (a container's,
 * a pod's or a unit's label, made in buf, else the path under the mount).
 */
static const char *target_label(const struct cg_target *t, const struct cgroup_mount *mnt,
				const char *path, char *buf, size_t len)
{
	if (t->name)
		return t->name;
	return container_or_path_label(cgroup_label(mnt, path), buf, len);
}

/* A -c value that is a cgroup id, not a path: nothing to follow. */
static bool is_cgroup_id(const char *spec)
{
	return *spec && strspn(spec, "0123456789") == strlen(spec);
}

/* Levels below the root: the components of the path under the mount. */
static int cgroup_level(const struct cgroup_mount *mnt, const char *path)
{
	const char *p = cgroup_label(mnt, path);
	int level = 0;

	for (; *p; p++)
		level += *p == '/' && p[1];
	return level;
}

/* Whether cgroup path a is b or one of b's ancestors. */
static bool cgroup_contains(const char *a, const char *b)
{
	size_t n = strlen(a);

	return !strncmp(a, b, n) && (b[n] == '\0' || b[n] == '/' || (n && a[n - 1] == '/'));
}

/*
 * What the BPF side cannot count, refused with one line before anything is loaded: a watched
 * cgroup deeper than it reads ancestors, or more watched cgroups on one path than a task can
 * count in. -E2BIG or 0.
 */
static int watch_list_check(char *const *paths, int nr, const struct cgroup_mount *mnt)
{
	int i, j, nested;

	for (i = 0; i < nr; i++) {
		if (cgroup_level(mnt, paths[i]) >= CG_MAX_LEVEL) {
			fputs("cgstat: cgroup ", stderr);
			message_quote(stderr, paths[i]);
			fprintf(stderr,
				" is %d levels deep; cgstat watches cgroups up to %d levels "
				"below the root (deeper ones count in a watched ancestor)\n",
				cgroup_level(mnt, paths[i]), CG_MAX_LEVEL - 1);
			return -E2BIG;
		}
		for (nested = 0, j = 0; j < nr; j++)
			nested += cgroup_contains(paths[j], paths[i]);
		if (nested > CG_MAX_NEST) {
			fputs("cgstat: cgroup ", stderr);
			message_quote(stderr, paths[i]);
			fprintf(stderr,
				" and %d watched cgroups above it: a task counts in at most "
				"%d nested watched cgroups\n",
				nested - 1, CG_MAX_NEST);
			return -E2BIG;
		}
	}
	return 0;
}

int watch_list_resolve(struct watch_list *w, const struct cg_target *targets, int nr,
		       const struct cgroup_mount *mnt)
{
	char path[4096], label[PATH_MAX];
	uint64_t id;
	int i, j, err;

	w->ids = calloc(nr, sizeof(*w->ids));
	w->labels = calloc(nr, sizeof(*w->labels));
	w->paths = calloc(nr, sizeof(*w->paths));
	w->pids = calloc(nr, sizeof(*w->pids));
	w->dirs = calloc(nr, sizeof(*w->dirs));
	if (!w->ids || !w->labels || !w->paths || !w->pids || !w->dirs)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		const struct cg_target *t = &targets[i];

		if (t->cgroup)
			err = cgroup_resolve(mnt, t->cgroup, path, sizeof(path), &id);
		else
			err = cgroup_of_pid(mnt, "/proc", t->pid, path, sizeof(path), &id);
		if (err) {
			if (t->cgroup) {
				fputs("cgstat: cgroup ", stderr);
				message_quote(stderr, t->cgroup);
				fprintf(stderr, ": %s (cgroup v2 is at %s)\n",
					err == -EINVAL	 ? "not under the cgroup v2 mount"
					: err == -ENOENT ? "no such cgroup"
							 : strerror(-err),
					mnt->path);
			} else {
				fprintf(stderr, "cgstat: pid %d: %s\n", t->pid,
					err == -ESRCH ? "no such process" : strerror(-err));
			}
			return err;
		}
		for (j = 0; j < w->nr; j++) {
			if (w->ids[j] == id) {
				fputs("cgstat: cgroup ", stderr);
				message_quote(stderr, path);
				fputs(" is given twice\n", stderr);
				return -EEXIST;
			}
		}
		w->labels[w->nr] = strdup(target_label(t, mnt, path, label, sizeof(label)));
		if (!w->labels[w->nr])
			return -ENOMEM;
		/* a NAME= label against a path's (opts_parse() compared the NAME= ones) */
		for (j = 0; j < w->nr; j++) {
			if (!strcmp(w->labels[j], w->labels[w->nr])) {
				fputs("cgstat: label ", stderr);
				message_quote(stderr, w->labels[j]);
				fputs(" is given to two targets\n", stderr);
				free(w->labels[w->nr]);
				w->labels[w->nr] = NULL;
				return -EEXIST;
			}
		}
		if (t->cgroup && !is_cgroup_id(t->cgroup)) {
			w->paths[w->nr] = strdup(path);
			if (!w->paths[w->nr])
				return -ENOMEM;
		}
		w->pids[w->nr] = t->cgroup ? 0 : t->pid;
		w->dirs[w->nr] = strdup(path);
		if (!w->dirs[w->nr])
			return -ENOMEM;
		w->ids[w->nr++] = id;
	}
	return watch_list_check(w->dirs, w->nr, mnt);
}

int watch_list_moved(const struct watch_list *w, int i, const struct cgroup_mount *mnt, char *path,
		     size_t len, uint64_t *id)
{
	int err;

	if (w->pids[i])
		err = cgroup_of_pid(mnt, "/proc", w->pids[i], path, len, id);
	else if (w->paths[i])
		err = cgroup_id_of_path(w->paths[i], id);
	else
		return 0;
	/* a path that is gone, or a process that exited, keeps its last cgroup */
	return !err && *id != w->ids[i];
}
