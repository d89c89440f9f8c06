// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/message.h"
#include "sources/container_names.h"
#include "sources/slots.h"

struct slots {
	struct collector *collector;
	struct watch_list *watched;
	const struct cgroup_mount *mnt;
	struct cgroup_names *names; /* every cgroup: the labels, by id */
	/* watched: the paths of other cgroups (preempters), made at the first one */
	struct cgroup_names *other_names;
	/*
	 * watched: each slot's id as its records have it (the cgroup's at the start), which a
	 * restarted cgroup's slot keeps while the watch list follows the new one
	 */
	uint64_t *slot_ids;
	struct container_names *containers;
	/* watched: what each one's cgroup is, made as it is drained */
	struct cg_container *watched_containers;
	/* all cgroups: free_dead_slots()'s note of the cgroup slots with pools left, by slot */
	bool *pools_left;
	bool verbose;
};

struct slots *slots__new(struct collector *c, struct watch_list *watched,
			 const struct cgroup_mount *mnt, struct container_names *containers,
			 bool verbose)
{
	struct slots *s;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->collector = c;
	s->watched = watched;
	s->mnt = mnt;
	s->containers = containers;
	s->verbose = verbose;
	if (!watched->nr) {
		s->names = cgroup_names__new(mnt);
		s->pools_left = calloc(collector__max_slots(c), sizeof(*s->pools_left));
		if (!s->names || !s->pools_left) {
			cgroup_names__free(s->names);
			free(s->pools_left);
			free(s);
			return NULL;
		}
		cgroup_names__use_containers(s->names, containers);
		return s;
	}
	s->slot_ids = malloc(watched->nr * sizeof(*s->slot_ids));
	s->watched_containers = calloc(watched->nr, sizeof(*s->watched_containers));
	if (!s->slot_ids || !s->watched_containers) {
		free(s->slot_ids);
		free(s->watched_containers);
		free(s);
		return NULL;
	}
	memcpy(s->slot_ids, watched->ids, watched->nr * sizeof(*s->slot_ids));
	return s;
}

bool slots__all_cgroups(const struct slots *s)
{
	return s->names != NULL;
}

void slots__begin_interval(struct slots *s)
{
	if (s->names)
		cgroup_names__new_interval(s->names);
	if (s->other_names)
		cgroup_names__new_interval(s->other_names);
}

/*
 * A new cgroup is labelled from its parent's path and the name the BPF side read when it first
 * met the cgroup: walking the tree for it, under churn, was most of the drain's time (a walk
 * opens and lists every cgroup directory: 5 to 38 ms for 1,000 of them). A parent nobody
 * labelled yet is labelled first, the same way from its own origin when BPF noted one
 * (cgroup_origins), else by a walk; either way it is kept for its other children. What the
 * origin cannot label is looked up by a walk. NULL only with errno ENOMEM.
 */
static const char *label_from_origin(struct slots *s, struct cgroup_names *names, uint64_t cgid,
				     uint64_t parent, const char *leaf, int depth)
{
	const char *label = cgroup_names__add_child(names, cgid, parent, leaf);
	char parent_leaf[CG_LEAF_NAME_MAX];
	uint64_t grandparent;

	if (label || errno == ENOMEM)
		return label;
	if (errno == ENOENT && *leaf && parent) {
		if (depth < CG_MAX_LEVEL &&
		    !collector__cgroup_origin(s->collector, parent, &grandparent, parent_leaf))
			label = label_from_origin(s, names, parent, grandparent, parent_leaf,
						  depth + 1);
		else
			label = cgroup_names__get(names, parent);
		if (!label)
			return NULL;
		label = cgroup_names__add_child(names, cgid, parent, leaf);
		if (label || errno == ENOMEM)
			return label;
	}
	return cgroup_names__get(names, cgid);
}

const char *slots__cgroup_label(void *ctx, uint64_t cgid)
{
	struct slots *s = ctx;
	struct cgroup_names *names;
	char leaf[CG_LEAF_NAME_MAX];
	const char *label;
	uint64_t parent;
	int i;

	for (i = 0; i < s->watched->nr; i++)
		if (s->watched->ids[i] == cgid)
			return s->watched->labels[i];
	names = s->names;
	if (!names) {
		if (!s->other_names) {
			s->other_names = cgroup_names__new(s->mnt);
			if (s->other_names)
				cgroup_names__use_containers(s->other_names, s->containers);
		}
		names = s->other_names;
		if (!names)
			return NULL;
	}
	label = cgroup_names__known(names, cgid);
	if (label)
		return label;
	if (collector__cgroup_origin(s->collector, cgid, &parent, leaf))
		return cgroup_names__get(names, cgid);
	return label_from_origin(s, names, cgid, parent, leaf, 0);
}

const char *slots__label(void *ctx, uint32_t slot, uint64_t cgid)
{
	struct slots *s = ctx;
	char leaf[CG_LEAF_NAME_MAX];
	const char *label;
	uint64_t parent;

	if (!s->names)
		return slot < (uint32_t)s->watched->nr ? s->watched->labels[slot] : "?";
	label = cgroup_names__known(s->names, cgid);
	if (label)
		return label;
	if (collector__slot_origin(s->collector, slot, cgid, &parent, leaf))
		return cgroup_names__get(s->names, cgid);
	return label_from_origin(s, s->names, cgid, parent, leaf, 0);
}

const struct cg_container *slots__container(void *ctx, uint32_t slot, uint64_t cgid)
{
	struct slots *s = ctx;
	const char *below;

	if (s->names)
		return cgroup_names__container(s->names, cgid);
	if (!s->containers || slot >= (uint32_t)s->watched->nr || !s->watched->dirs[slot])
		return NULL;
	below = cgroup_label(s->mnt, s->watched->dirs[slot]);
	if (container_names__describe(s->containers, below, &s->watched_containers[slot]))
		return NULL;
	return &s->watched_containers[slot];
}

/*
 * Whether pool slot slot (snap[slot].pool_of set) is of a cgroup that is gone: its cgroup's
 * slot says the cgroup was removed, or holds another cgroup (freed and taken again).
 */
static bool pool_gone(const struct cg_slot_snap *snap, uint32_t nr_slots, uint32_t slot)
{
	uint32_t owner = snap[slot].pool_of - 1;

	return owner >= nr_slots || snap[owner].cgid != snap[slot].cgid || snap[owner].dead;
}

/*
 * The all-cgroups mode: a removed cgroup whose last task has gone has had its last record
 * (this interval's); its slot is given back and the summary keeps it compact from now on, so
 * that churn costs no memory that lasts. With pools, each of its pools' slots once no task
 * counts in it, and its own slot once its pools are all given back: a pool slot names its
 * cgroup's slot, which must not be another cgroup's meanwhile.
 */
static void free_dead_slots(struct slots *s, const struct cg_slot_snap *snap, uint32_t nr_slots,
			    slots_retire_fn retire, void *ctx)
{
	const char *name;
	uint32_t slot, freed = 0, owner;
	bool pools = false;
	int err;

	for (slot = 0; slot < nr_slots; slot++) {
		if (!snap[slot].cgid || !snap[slot].pool_of)
			continue;
		owner = snap[slot].pool_of - 1;
		if (!pool_gone(snap, nr_slots, slot) || snap[slot].tasks > 0) {
			if (owner < nr_slots)
				s->pools_left[owner] = true;
			continue;
		}
		err = collector__free_pool_slot(s->collector, slot, owner, snap[slot].pool);
		if (err && s->verbose)
			fprintf(stderr, "cgstat: cannot free slot %u: %s\n", slot, strerror(-err));
		pools = true;
	}
	for (slot = 0; slot < nr_slots; slot++) {
		if (!snap[slot].cgid || snap[slot].pool_of || !snap[slot].dead ||
		    snap[slot].tasks > 0 || s->pools_left[slot])
			continue;
		freed++;
		err = collector__free_slot(s->collector, slot, snap[slot].cgid);
		if (err && s->verbose)
			fprintf(stderr, "cgstat: cannot free slot %u: %s\n", slot, strerror(-err));
		/* a cgroup that never had a row has no label, and nothing in the summary */
		name = cgroup_names__stored(s->names, snap[slot].cgid);
		if (name)
			retire(ctx, name, snap[slot].cgid);
		cgroup_names__forget(s->names, snap[slot].cgid);
	}
	memset(s->pools_left, 0, nr_slots * sizeof(*s->pools_left));
	/*
	 * Under churn every new cgroup's record and histogram is allocated and freed around the
	 * small entries the summary keeps, and glibc holds the freed pages between them, so RSS
	 * grows while the heap in use does not (docs/reliability.md, "Soak"). Hand them back.
	 */
	if (freed || pools)
		malloc_trim(0);
}

/*
 * After each interval: a watched path that names another cgroup now (removed and made again)
 * or a watched process in another cgroup is counted from now on in the same slot, under the
 * same label, and said on stderr. A path that is gone, or a process that exited, keeps its
 * last cgroup.
 */
/* "docker:broker" as the user gave it. */
static void say_target(const struct watch_name *n)
{
	static const char *const prefixes[] = {
		[CG_TARGET_DOCKER] = "docker:",
		[CG_TARGET_COMPOSE] = "compose:",
		[CG_TARGET_POD] = "pod:",
		[CG_TARGET_UNIT] = "unit:",
	};
	char target[512];

	snprintf(target, sizeof(target), "%s%s", prefixes[n->kind], n->select);
	message_quote(stderr, target);
	if (n->kind == CG_TARGET_COMPOSE)
		fprintf(stderr, " replica %d", n->replica);
}

/* What changed of watched i, which counts in id from now on, at path: one line. */
static void say_followed(const struct watch_list *w, int i, bool first, const char *path)
{
	fprintf(stderr, "cgstat: %s: ", w->labels[i]);
	if (w->names[i].select) {
		say_target(&w->names[i]);
		fputs(first ? " is " : " was made again, now ", stderr);
		message_quote(stderr, path);
		fputs(first ? "; counting it\n" : "; counting it under the same label\n", stderr);
	} else if (w->pids[i]) {
		fprintf(stderr, "pid %d moved to ", w->pids[i]);
		message_quote(stderr, path);
		fputs("; following it\n", stderr);
	} else {
		message_quote(stderr, w->paths[i]);
		fputs(" was made again; counting it under the same label\n", stderr);
	}
}

bool slots__names_followed(const struct slots *s)
{
	for (int i = 0; i < s->watched->nr; i++)
		if (s->watched->names[i].select)
			return true;
	return false;
}

void slots__follow(struct slots *s)
{
	struct watch_list *w = s->watched;
	char path[4096], *dir;
	bool first;
	uint64_t id;
	int i, err;

	for (i = 0; i < w->nr; i++) {
		if (!watch_list_moved(w, i, s->mnt, s->containers, path, sizeof(path), &id)) {
			/* a compose service's replicas past its last are not waited for aloud */
			if (cg_cgid_pending(w->ids[i]) && !w->names[i].said_waiting &&
			    !watch_name_is_total(&w->names[i]) && w->names[i].replica <= 1) {
				w->names[i].said_waiting = true;
				fprintf(stderr, "cgstat: %s: ", w->labels[i]);
				say_target(&w->names[i]);
				fputs(" has no cgroup yet; waiting for it\n", stderr);
			}
			continue;
		}
		err = collector__rewatch(s->collector, i, w->ids[i], id);
		if (err) {
			/* another watched slot has it: both watch the same cgroup now */
			if (err != -EEXIST)
				fprintf(stderr, "cgstat: %s: cannot follow: %s\n", w->labels[i],
					strerror(-err));
			continue;
		}
		first = cg_cgid_pending(w->ids[i]);
		say_followed(w, i, first, path);
		/* its records carry the first cgroup's id from now on (collector__rewatch()) */
		if (first)
			s->slot_ids[i] = id;
		w->ids[i] = id;
		dir = strdup(w->pids[i] || w->names[i].select ? path : w->paths[i]);
		if (dir) {
			free(w->dirs[i]);
			w->dirs[i] = dir;
		}
	}
}

int slots__dir(void *ctx, uint64_t cgid, char *path, size_t len)
{
	struct slots *s = ctx;
	const char *below;
	int i, n;

	if (!s->names) {
		for (i = 0; i < s->watched->nr; i++) {
			if ((s->slot_ids[i] != cgid && s->watched->ids[i] != cgid) ||
			    !s->watched->dirs[i])
				continue;
			n = snprintf(path, len, "%s", s->watched->dirs[i]);
			return n >= 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
		}
		return -ENOENT;
	}
	below = cgroup_names__path(s->names, cgid);
	if (!below)
		return -ENOENT;
	n = snprintf(path, len, "%s%s", s->mnt->path, strcmp(below, "/") ? below : "");
	return n >= 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

void slots__end_interval(struct slots *s, const struct cg_slot_snap *snap, uint32_t nr_slots,
			 slots_retire_fn retire, void *ctx)
{
	if (s->names)
		free_dead_slots(s, snap, nr_slots, retire, ctx);
	else
		slots__follow(s);
}

void slots__free(struct slots *s)
{
	if (!s)
		return;
	cgroup_names__free(s->names);
	cgroup_names__free(s->other_names);
	free(s->pools_left);
	free(s->slot_ids);
	free(s->watched_containers);
	free(s);
}
