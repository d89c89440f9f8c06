// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpf/cgstat.h"
#include "lib/message.h"
#include "sources/container_names.h"
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
	free(w->names);
}

static const struct {
	const char *prefix;
	enum cg_target_kind kind;
} target_prefixes[] = {
	{ "docker:", CG_TARGET_DOCKER },
	{ "compose:", CG_TARGET_COMPOSE },
	{ "pod:", CG_TARGET_POD },
	{ "unit:", CG_TARGET_UNIT },
};

/* Whether s[0..len) is 1 to CG_CONTAINER_NAME_MAX bytes, each of chars, starting alphanumeric. */
static bool name_valid(const char *s, size_t len, const char *chars)
{
	static const char alnum[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

	if (!len || len > CG_CONTAINER_NAME_MAX || !strchr(alnum, s[0]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!s[i] || (!strchr(alnum, s[i]) && !strchr(chars, s[i])))
			return false;
	return true;
}

/* Whether s is 1 to max parts of name_valid() names split by '/', at least min of them. */
static bool parts_valid(const char *s, int min, int max, const char *chars)
{
	const char *slash;
	int n = 0;

	for (;;) {
		slash = strchr(s, '/');
		if (!name_valid(s, slash ? (size_t)(slash - s) : strlen(s), chars))
			return false;
		n++;
		if (!slash)
			break;
		s = slash + 1;
	}
	return n >= min && n <= max;
}

/* Whether a unit name ends as those that have cgroups of their own do. */
static bool unit_valid(const char *s)
{
	static const char *const suffixes[] = { ".service", ".scope", ".slice" };
	size_t len = strlen(s), n;

	/* systemd's unit name characters (unit-name.c, VALID_CHARS_WITH_AT) */
	if (!name_valid(s, len, ":-_.\\@"))
		return false;
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		n = strlen(suffixes[i]);
		if (len > n && !strcmp(s + len - n, suffixes[i]))
			return true;
	}
	return false;
}

int watch_target_parse(const char *value, struct cg_target *t, const char **why)
{
	const char *colon = strchr(value, ':'), *rest;
	enum cg_target_kind kind;
	size_t i, len;
	bool ok;

	/* a path ("/sys/fs/cgroup/x", "system.slice/a:b.service") or an id: not a prefix */
	if (value[0] == '/' || !colon || colon == value ||
	    strspn(value, "abcdefghijklmnopqrstuvwxyz") != (size_t)(colon - value))
		return 1;
	len = (size_t)(colon - value) + 1;
	for (i = 0; i < sizeof(target_prefixes) / sizeof(target_prefixes[0]); i++)
		if (strlen(target_prefixes[i].prefix) == len &&
		    !strncmp(value, target_prefixes[i].prefix, len))
			break;
	if (i == sizeof(target_prefixes) / sizeof(target_prefixes[0])) {
		*why = " has an unknown prefix (not docker:, compose:, pod: or unit:)";
		return -EINVAL;
	}
	kind = target_prefixes[i].kind;
	rest = colon + 1;
	switch (kind) {
	case CG_TARGET_DOCKER:
		/* Docker's names: [a-zA-Z0-9][a-zA-Z0-9_.-]* */
		ok = name_valid(rest, strlen(rest), "_.-");
		*why = " is not docker:NAME (a container's name: letters, digits, '_', '.', '-')";
		break;
	case CG_TARGET_COMPOSE:
		ok = parts_valid(rest, 1, 2, "_.-");
		*why = " is not compose:[PROJECT/]SERVICE";
		break;
	case CG_TARGET_POD:
		/* Kubernetes' names are DNS labels and subdomains */
		ok = parts_valid(rest, 2, 3, ".-");
		*why = " is not pod:NAMESPACE/POD[/CONTAINER]";
		break;
	default:
		ok = unit_valid(rest);
		*why = " is not unit:NAME.service (or .scope, .slice)";
		break;
	}
	if (!ok)
		return -EINVAL;
	t->select = strdup(rest);
	if (!t->select) {
		*why = ": out of memory";
		return -ENOMEM;
	}
	t->kind = kind;
	return 0;
}

/* Part k (from 0) of a '/'-split select into buf; "" when it has fewer. */
static const char *select_part(const char *select, int k, char *buf, size_t len)
{
	const char *end;

	for (; k > 0 && select; k--) {
		select = strchr(select, '/');
		if (select)
			select++;
	}
	if (!select) {
		buf[0] = '\0';
		return buf;
	}
	end = strchr(select, '/');
	snprintf(buf, len, "%.*s", (int)(end ? (size_t)(end - select) : strlen(select)), select);
	return buf;
}

static int select_parts(const char *select)
{
	int n = 1;

	for (; *select; select++)
		n += *select == '/';
	return n;
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
		/* a name target has no cgroup yet */
		if (!paths[i])
			continue;
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
			nested += paths[j] && cgroup_contains(paths[j], paths[i]);
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

/* The next slot's label, a copy of label, unless another slot has it: 0, -EEXIST (said), -ENOMEM.
 */
static int watch_label_add(struct watch_list *w, const char *label)
{
	for (int j = 0; j < w->nr; j++) {
		if (!strcmp(w->labels[j], label)) {
			fputs("cgstat: label ", stderr);
			message_quote(stderr, label);
			fputs(" is given to two targets\n", stderr);
			return -EEXIST;
		}
	}
	w->labels[w->nr] = strdup(label);
	return w->labels[w->nr] ? 0 : -ENOMEM;
}

/*
 * A name target's slots, each counting a pending id until its container has a cgroup: one, or a
 * compose service's WATCH_COMPOSE_REPLICAS, labelled LABEL-N (LABEL: the NAME= label, else the
 * service's name), and its total, labelled LABEL, which counts nothing itself (the drain sums
 * the replicas' records into it: replica 0).
 */
static int watch_name_add(struct watch_list *w, const struct cg_target *t)
{
	char label[PATH_MAX], service[CG_CONTAINER_NAME_MAX + 1];
	const char *base = t->name ? t->name : t->select;
	int replica, last, err;

	if (t->kind == CG_TARGET_COMPOSE && !t->name)
		base = select_part(t->select, select_parts(t->select) - 1, service,
				   sizeof(service));
	last = t->kind == CG_TARGET_COMPOSE ? WATCH_COMPOSE_REPLICAS : 0;
	for (replica = t->kind == CG_TARGET_COMPOSE ? 1 : 0; replica <= last; replica++) {
		if (replica)
			snprintf(label, sizeof(label), "%s-%d", base, replica);
		else
			snprintf(label, sizeof(label), "%s", base);
		err = watch_label_add(w, label);
		if (err)
			return err;
		w->names[w->nr] = (struct watch_name){
			.kind = t->kind,
			.select = t->select,
			.replica = replica,
		};
		w->ids[w->nr] = CG_CGID_PENDING_MIN + (uint64_t)w->nr;
		w->nr++;
		/* the service's total last */
		if (replica == last && t->kind == CG_TARGET_COMPOSE) {
			err = watch_label_add(w, base);
			if (err)
				return err;
			w->names[w->nr] =
				(struct watch_name){ .kind = t->kind, .select = t->select };
			w->ids[w->nr] = CG_CGID_PENDING_MIN + (uint64_t)w->nr;
			w->nr++;
		}
	}
	return 0;
}

bool watch_name_is_total(const struct watch_name *n)
{
	return n->kind == CG_TARGET_COMPOSE && !n->replica;
}

int watch_list_resolve(struct watch_list *w, const struct cg_target *targets, int nr,
		       const struct cgroup_mount *mnt)
{
	char path[4096], label[PATH_MAX];
	int i, j, err, slots;
	uint64_t id;

	for (i = 0, slots = 0; i < nr; i++)
		slots += targets[i].kind == CG_TARGET_COMPOSE ? WATCH_COMPOSE_REPLICAS + 1 : 1;
	w->ids = calloc(slots, sizeof(*w->ids));
	w->labels = calloc(slots, sizeof(*w->labels));
	w->paths = calloc(slots, sizeof(*w->paths));
	w->pids = calloc(slots, sizeof(*w->pids));
	w->dirs = calloc(slots, sizeof(*w->dirs));
	w->names = calloc(slots, sizeof(*w->names));
	if (!w->ids || !w->labels || !w->paths || !w->pids || !w->dirs || !w->names)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		const struct cg_target *t = &targets[i];

		if (t->select) {
			err = watch_name_add(w, t);
			if (err)
				return err;
			continue;
		}
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
		/* a NAME= label against a path's (opts_parse() compared the NAME= ones) */
		err = watch_label_add(w, target_label(t, mnt, path, label, sizeof(label)));
		if (err)
			return err;
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

/* A container's selected by a name target: ctx is its struct watch_name. */
static bool container_selected(const struct cg_container *c, const void *ctx)
{
	const struct watch_name *n = ctx;
	char a[CG_CONTAINER_NAME_MAX + 1], b[CG_CONTAINER_NAME_MAX + 1];
	char d[CG_CONTAINER_NAME_MAX + 1];
	int parts = select_parts(n->select);

	switch (n->kind) {
	case CG_TARGET_DOCKER:
		return !c->pod_namespace[0] && !strcmp(c->name, n->select);
	case CG_TARGET_COMPOSE:
		if (c->compose_replica != n->replica)
			return false;
		if (parts == 2 &&
		    strcmp(c->compose_project, select_part(n->select, 0, a, sizeof(a))))
			return false;
		return !strcmp(c->compose_service, select_part(n->select, parts - 1, b, sizeof(b)));
	case CG_TARGET_POD:
		return !strcmp(c->pod_namespace, select_part(n->select, 0, a, sizeof(a))) &&
		       !strcmp(c->pod_name, select_part(n->select, 1, b, sizeof(b))) &&
		       !strcmp(c->name, select_part(n->select, 2, d, sizeof(d)));
	default:
		return false;
	}
}

/* What a cgroup's path must be: a container's own (by id), a pod's own (by uid), a unit's. */
struct owner_path {
	enum container_kind kind;
	const char *owner;
};

static bool owner_path_is(const char *below, void *ctx)
{
	const struct owner_path *o = ctx;
	struct container_path c;

	if (container_path_parse(below, &c) != o->kind || c.below != strlen(below))
		return false;
	return !strcmp(o->kind == CONTAINER_POD	   ? c.pod_uid
		       : o->kind == CONTAINER_UNIT ? c.unit
						   : c.id,
		       o->owner);
}

/* How long a unit not found waits before the tree is walked for it again. */
#define UNIT_WALK_EVERY_NS (10 * 1000000000ULL)

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * The cgroup of a container's id (of a pod's uid, of a unit's name): where Docker's two
 * drivers and Podman put a container, and systemd its units, looked at first (a stat each),
 * else found by a walk, made again only once something could have changed (n's walked_*).
 */
static int owner_cgroup(const struct cgroup_mount *mnt, enum container_kind kind, const char *owner,
			struct watch_name *n, unsigned long changes, char *path, size_t len,
			uint64_t *id)
{
	static const char *const container_places[] = { "/docker/%s",
							"/system.slice/docker-%s.scope",
							"/machine.slice/libpod-%s.scope" };
	static const char *const unit_places[] = { "/system.slice/%s", "/%s", "/user.slice/%s" };
	const char *const *places = kind == CONTAINER_UNIT ? unit_places : container_places;
	size_t nr = kind == CONTAINER_UNIT  ? sizeof(unit_places) / sizeof(unit_places[0])
		    : kind == CONTAINER_OWN ? sizeof(container_places) / sizeof(container_places[0])
					    : 0;
	struct owner_path o = { kind, owner };
	uint64_t now = monotonic_ns();
	char below[512];
	int err;

	for (size_t i = 0; i < nr; i++) {
		snprintf(below, sizeof(below), places[i], owner);
		if ((size_t)snprintf(path, len, "%s%s", mnt->path, below) < len &&
		    !cgroup_id_of_path(path, id) && owner_path_is(cgroup_label(mnt, path), &o))
			return 0;
	}
	if (!strncmp(n->walked_for, owner, sizeof(n->walked_for) - 1) &&
	    (kind == CONTAINER_UNIT ? now - n->walked_ns < UNIT_WALK_EVERY_NS
				    : n->walked_changes == changes))
		return -ENOENT;
	err = cgroup_find(mnt, owner_path_is, &o, path, len, id);
	if (err) {
		snprintf(n->walked_for, sizeof(n->walked_for), "%s", owner);
		n->walked_changes = changes;
		n->walked_ns = now;
	}
	return err;
}

/* Where name target i's container is now: 1 with its path and id, 0 while it has none. */
static int name_target_moved(struct watch_list *w, int i, const struct cgroup_mount *mnt,
			     struct container_names *containers, char *path, size_t len,
			     uint64_t *id)
{
	struct watch_name *n = &w->names[i];
	char owner[CG_CONTAINER_ID_LEN + 1], a[CG_CONTAINER_NAME_MAX + 1];
	char b[CG_CONTAINER_NAME_MAX + 1];
	enum container_kind kind = CONTAINER_OWN;
	int err;

	if (n->kind == CG_TARGET_UNIT) {
		kind = CONTAINER_UNIT;
		snprintf(owner, sizeof(owner), "%.*s", (int)sizeof(owner) - 1, n->select);
	} else if (!containers) {
		return 0;
	} else if (n->kind == CG_TARGET_POD && select_parts(n->select) == 2) {
		kind = CONTAINER_POD;
		err = container_names__find_pod(containers, select_part(n->select, 0, a, sizeof(a)),
						select_part(n->select, 1, b, sizeof(b)), owner);
		if (err)
			return 0;
	} else if (container_names__find(containers, container_selected, n, owner)) {
		return 0;
	}
	/* the same container: its cgroup made again under the same path (docker restart) */
	if (w->dirs[i] && !strcmp(owner, n->owner)) {
		err = cgroup_id_of_path(w->dirs[i], id);
		if (err || *id == w->ids[i])
			return 0;
		snprintf(path, len, "%s", w->dirs[i]);
		return 1;
	}
	/* a unit's name is too long for owner: it is matched whole in owner_path_is() */
	err = owner_cgroup(mnt, kind, kind == CONTAINER_UNIT ? n->select : owner, n,
			   containers ? container_names__changes(containers) : 0, path, len, id);
	if (err)
		return 0;
	snprintf(n->owner, sizeof(n->owner), "%s", owner);
	free(w->dirs[i]);
	w->dirs[i] = strdup(path);
	return *id != w->ids[i];
}

int watch_list_moved(struct watch_list *w, int i, const struct cgroup_mount *mnt,
		     struct container_names *containers, char *path, size_t len, uint64_t *id)
{
	int err;

	/* a compose service's total counts nothing of its own */
	if (watch_name_is_total(&w->names[i]))
		return 0;
	if (w->names[i].select)
		return name_target_moved(w, i, mnt, containers, path, len, id);
	if (w->pids[i])
		err = cgroup_of_pid(mnt, "/proc", w->pids[i], path, len, id);
	else if (w->paths[i])
		err = cgroup_id_of_path(w->paths[i], id);
	else
		return 0;
	/* a path that is gone, or a process that exited, keeps its last cgroup */
	return !err && *id != w->ids[i];
}
