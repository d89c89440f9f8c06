// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "lib/hashtab.h"
#include "lib/message.h"
#include "sources/container_names.h"

#define REMOVED_KEPT 256

/* A container the runtime named, by id, with the label it was given. */
struct named_container {
	struct hash_node node;
	struct cg_container info;
	char *label;	   /* its name, made unique (see the header) */
	unsigned long seq; /* when it was last named: the newest of a name is the one selected */
	bool removed;
};

/* A pod's name, by uid. */
struct named_pod {
	struct hash_node node;
	unsigned long seq; /* when it was last named: the newest of a name is the one selected */
	char uid[POD_UID_MAX + 1];
	char pod_namespace[CG_CONTAINER_NAME_MAX + 1];
	char pod_name[CG_CONTAINER_NAME_MAX + 1];
	char *label; /* "NAMESPACE/POD", made unique */
};

/* A label given, and the container (or pod) it belongs to for the run. */
struct label_claim {
	struct hash_node node;
	char *label;
	char owner[CONTAINER_ID_LEN + 1]; /* a container's id or a pod's uid */
};

struct container_names {
	pthread_mutex_t lock;
	struct hash_table containers, pods, claims;
	unsigned long generation;
	unsigned long seq;
	char *trouble[NR_RUNTIMES];
	bool trouble_said[NR_RUNTIMES];
	void (*on_unknown)(void *ctx);
	void *on_unknown_ctx;
	/*
	 * The ids of the last containers removed, oldest first from removed_next: a removed one's
	 * name is forgotten only when REMOVED_KEPT others have gone after it, long after its last
	 * rows were drained, so that the table holds what runs, however many come and go.
	 */
	char removed[REMOVED_KEPT][CONTAINER_ID_LEN + 1];
	unsigned int removed_next;
	int event_fd; /* written at each name set or removed: container_names__event_fd() */
	unsigned long changes; /* of those; atomic: container_names__changes() */
};

/* Something was said of a container or a pod: whoever polls event_fd looks again. */
static void names_changed(struct container_names *t)
{
	uint64_t one = 1;

	__atomic_add_fetch(&t->changes, 1, __ATOMIC_RELAXED);
	if (t->event_fd >= 0 && write(t->event_fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is full, and the reader will look anyway */
	}
}

#define NAMES_BUCKETS 64

static bool container_is(const struct hash_node *n, const void *id)
{
	return !strcmp(container_of(n, struct named_container, node)->info.id, id);
}

static bool pod_is(const struct hash_node *n, const void *uid)
{
	return !strcmp(container_of(n, struct named_pod, node)->uid, uid);
}

static bool claim_is(const struct hash_node *n, const void *label)
{
	return !strcmp(container_of(n, struct label_claim, node)->label, label);
}

static struct named_container *find_container(const struct container_names *t, const char *id)
{
	struct hash_node *n = hash_table_find(&t->containers, hash_string(id), container_is, id);

	return n ? container_of(n, struct named_container, node) : NULL;
}

static struct named_pod *find_pod(const struct container_names *t, const char *uid)
{
	struct hash_node *n = hash_table_find(&t->pods, hash_string(uid), pod_is, uid);

	return n ? container_of(n, struct named_pod, node) : NULL;
}

struct container_names *container_names__new(void)
{
	struct container_names *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->event_fd = -1;
	if (hash_table_init(&t->containers, NAMES_BUCKETS) ||
	    hash_table_init(&t->pods, NAMES_BUCKETS) ||
	    hash_table_init(&t->claims, NAMES_BUCKETS)) {
		container_names__free(t);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	t->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (t->event_fd < 0) {
		container_names__free(t);
		return NULL;
	}
	return t;
}

unsigned long container_names__changes(struct container_names *t)
{
	return __atomic_load_n(&t->changes, __ATOMIC_RELAXED);
}

int container_names__event_fd(const struct container_names *t)
{
	return t->event_fd;
}

static void free_container(struct hash_table *table, struct hash_node *n, void *ctx)
{
	struct named_container *c = container_of(n, struct named_container, node);

	(void)ctx;
	hash_table_del(table, n);
	free(c->label);
	free(c);
}

static void free_pod(struct hash_table *table, struct hash_node *n, void *ctx)
{
	struct named_pod *p = container_of(n, struct named_pod, node);

	(void)ctx;
	hash_table_del(table, n);
	free(p->label);
	free(p);
}

static void free_claim(struct hash_table *table, struct hash_node *n, void *ctx)
{
	struct label_claim *c = container_of(n, struct label_claim, node);

	(void)ctx;
	hash_table_del(table, n);
	free(c->label);
	free(c);
}

void container_names__free(struct container_names *t)
{
	if (!t)
		return;
	if (t->containers.buckets)
		hash_table_visit(&t->containers, free_container, NULL);
	if (t->pods.buckets)
		hash_table_visit(&t->pods, free_pod, NULL);
	if (t->claims.buckets)
		hash_table_visit(&t->claims, free_claim, NULL);
	hash_table_fini(&t->containers);
	hash_table_fini(&t->pods);
	hash_table_fini(&t->claims);
	for (int i = 0; i < NR_RUNTIMES; i++)
		free(t->trouble[i]);
	if (t->event_fd >= 0)
		close(t->event_fd);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

/*
 * Whether a name could be read as another kind of label: a path ("/..."), a cgroup known by id
 * only ("#12"), a container by short id ("docker:ID"), or a systemd unit's ("cron.service").
 * Such a name is labelled with its runtime in front ("docker:cron.service").
 */
static bool name_is_ambiguous(const char *name)
{
	static const char *const unit_suffixes[] = { ".service", ".scope", ".slice" };
	size_t len = strlen(name), n;

	if (!len || name[0] == '/' || name[0] == '#' || strchr(name, ':'))
		return true;
	for (size_t i = 0; i < sizeof(unit_suffixes) / sizeof(unit_suffixes[0]); i++) {
		n = strlen(unit_suffixes[i]);
		if (len >= n && !strcmp(name + len - n, unit_suffixes[i]))
			return true;
	}
	return false;
}

/*
 * The label owner is given for base: base itself if no one else has it, else base@OWNER's
 * short form, claimed for owner either way. A new string, or NULL when out of memory.
 */
static char *claim_label(struct container_names *t, const char *base, const char *owner)
{
	char unique[CG_CONTAINER_NAME_MAX * 3 + 64];
	const char *label = base;
	struct label_claim *claim;
	struct hash_node *n;

	n = hash_table_find(&t->claims, hash_string(base), claim_is, base);
	if (n && strcmp(container_of(n, struct label_claim, node)->owner, owner)) {
		snprintf(unique, sizeof(unique), "%s@%.*s", base, CONTAINER_SHORT_ID, owner);
		label = unique;
		n = hash_table_find(&t->claims, hash_string(label), claim_is, label);
	}
	if (!n) {
		claim = calloc(1, sizeof(*claim));
		if (!claim || !(claim->label = strdup(label))) {
			free(claim);
			return NULL;
		}
		snprintf(claim->owner, sizeof(claim->owner), "%s", owner);
		hash_table_add(&t->claims, &claim->node, hash_string(label));
	}
	return strdup(label);
}

/* The name a container's label is made of: "NAMESPACE/POD/CONTAINER" for a pod's. */
static void base_label(const struct cg_container *c, char *buf, size_t len)
{
	if (c->pod_namespace[0] && c->pod_name[0])
		snprintf(buf, len, "%s/%s/%s", c->pod_namespace, c->pod_name, c->name);
	else if (name_is_ambiguous(c->name))
		snprintf(buf, len, "container:%s", c->name);
	else
		snprintf(buf, len, "%s", c->name);
}

int container_names__set(struct container_names *t, const struct cg_container *c)
{
	char base[CG_CONTAINER_NAME_MAX * 3 + 8];
	struct named_container *e;
	char *label;
	int err = 0;

	if (!c->name[0] || !container_id_valid(c->id, strlen(c->id)))
		return -EINVAL;
	base_label(c, base, sizeof(base));
	pthread_mutex_lock(&t->lock);
	e = find_container(t, c->id);
	if (e && !strcmp(e->info.name, c->name) &&
	    !strcmp(e->info.compose_service, c->compose_service)) {
		e->info = *c;
		goto out;
	}
	label = claim_label(t, base, c->id);
	if (!label) {
		err = -ENOMEM;
		goto out;
	}
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e) {
			free(label);
			err = -ENOMEM;
			goto out;
		}
		hash_table_add(&t->containers, &e->node, hash_string(c->id));
	}
	/* a new name, or a container's first: a name target may select it now */
	t->generation++;
	e->seq = ++t->seq;
	e->removed = false;
	free(e->label);
	e->label = label;
	e->info = *c;
out:
	pthread_mutex_unlock(&t->lock);
	if (!err)
		names_changed(t);
	return err;
}

void container_names__remove(struct container_names *t, const char *id)
{
	char *slot;
	struct named_container *e;

	if (!container_id_valid(id, strlen(id)))
		return;
	pthread_mutex_lock(&t->lock);
	slot = t->removed[t->removed_next];
	t->removed_next = (t->removed_next + 1) % REMOVED_KEPT;
	e = slot[0] ? find_container(t, slot) : NULL;
	/* its label stays claimed: a later container of its name is told apart */
	if (e)
		free_container(&t->containers, &e->node, NULL);
	snprintf(slot, CONTAINER_ID_LEN + 1, "%s", id);
	e = find_container(t, id);
	if (e && !e->removed) {
		e->removed = true;
		t->generation++;
	}
	pthread_mutex_unlock(&t->lock);
	names_changed(t);
}

int container_names__set_pod(struct container_names *t, const char *uid, const char *pod_namespace,
			     const char *pod_name)
{
	char base[CG_CONTAINER_NAME_MAX * 2 + 2];
	struct named_pod *p;
	char *label;
	int err = 0;

	if (!*uid || strlen(uid) > POD_UID_MAX || !*pod_namespace || !*pod_name)
		return -EINVAL;
	snprintf(base, sizeof(base), "%s/%s", pod_namespace, pod_name);
	pthread_mutex_lock(&t->lock);
	p = find_pod(t, uid);
	if (p && !strcmp(p->pod_namespace, pod_namespace) && !strcmp(p->pod_name, pod_name))
		goto out;
	label = claim_label(t, base, uid);
	if (!label) {
		err = -ENOMEM;
		goto out;
	}
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p) {
			free(label);
			err = -ENOMEM;
			goto out;
		}
		snprintf(p->uid, sizeof(p->uid), "%s", uid);
		hash_table_add(&t->pods, &p->node, hash_string(uid));
	}
	snprintf(p->pod_namespace, sizeof(p->pod_namespace), "%s", pod_namespace);
	snprintf(p->pod_name, sizeof(p->pod_name), "%s", pod_name);
	p->seq = ++t->seq;
	free(p->label);
	p->label = label;
	t->generation++;
out:
	pthread_mutex_unlock(&t->lock);
	if (!err)
		names_changed(t);
	return err;
}

void container_names__set_trouble(struct container_names *t, enum container_runtime runtime,
				  const char *why, bool said)
{
	char *copy = why ? strdup(why) : NULL;

	if ((unsigned int)runtime >= NR_RUNTIMES) {
		free(copy);
		return;
	}
	pthread_mutex_lock(&t->lock);
	/* said once for an outage, however often the source tries again meanwhile */
	if (copy && t->trouble[runtime])
		said = said || t->trouble_said[runtime];
	free(t->trouble[runtime]);
	t->trouble[runtime] = copy;
	t->trouble_said[runtime] = said;
	pthread_mutex_unlock(&t->lock);
}

void container_names__on_unknown(struct container_names *t, void (*fn)(void *ctx), void *ctx)
{
	pthread_mutex_lock(&t->lock);
	t->on_unknown = fn;
	t->on_unknown_ctx = ctx;
	pthread_mutex_unlock(&t->lock);
}

unsigned long container_names__generation(struct container_names *t)
{
	unsigned long g;

	pthread_mutex_lock(&t->lock);
	g = t->generation;
	pthread_mutex_unlock(&t->lock);
	return g;
}

/* The runtime whose names Docker's API gives: Podman answers it too. */
static enum container_runtime names_runtime(enum container_runtime r)
{
	return r == RUNTIME_PODMAN ? RUNTIME_DOCKER : r;
}

const char *container_names__label(struct container_names *t, const char *path, char *buf,
				   size_t len)
{
	void (*ask)(void *ctx) = NULL;
	void *ask_ctx = NULL;
	const struct named_container *e;
	const struct named_pod *p;
	struct container_path c;
	enum container_runtime r;
	const char *name = NULL;
	char *why = NULL, line[512];
	int n = -1;

	if (container_path_parse(path, &c) != CONTAINER_OWN && c.kind != CONTAINER_MONITOR &&
	    c.kind != CONTAINER_POD)
		return container_or_path_label(path, buf, len);
	r = names_runtime(c.runtime);
	pthread_mutex_lock(&t->lock);
	p = c.pod_uid[0] ? find_pod(t, c.pod_uid) : NULL;
	if (c.kind == CONTAINER_POD) {
		name = p ? p->label : NULL;
	} else {
		e = find_container(t, c.id);
		name = e ? e->label : NULL;
	}
	if (name)
		n = snprintf(buf, len, "%s%s%s", c.kind == CONTAINER_MONITOR ? "conmon:" : "", name,
			     path + c.below);
	else if (p) /* a container with no name in a named pod: its sandbox (pause) */
		n = snprintf(buf, len, "%s/%s:%.*s%s", p->label,
			     *container_runtime_name(c.runtime) ? container_runtime_name(c.runtime)
								: "cri",
			     CONTAINER_SHORT_ID, c.id, path + c.below);
	else if (t->trouble[r] && !t->trouble_said[r] && c.kind != CONTAINER_POD)
		why = strdup(t->trouble[r]);
	else if (!t->trouble[r]) {
		ask = t->on_unknown;
		ask_ctx = t->on_unknown_ctx;
	}
	if (why)
		t->trouble_said[r] = true;
	pthread_mutex_unlock(&t->lock);
	if (why) {
		/* why holds a socket's path, from the environment */
		message_escape_buf(line, sizeof(line), why);
		fprintf(stderr, "cgstat: %s containers are labelled by their short ids: %s\n",
			container_runtime_name(c.runtime), line);
		free(why);
	}
	if (ask)
		ask(ask_ctx);
	if (n >= 0 && (size_t)n < len)
		return buf;
	return container_or_path_label(path, buf, len);
}

int container_names__describe(struct container_names *t, const char *path, struct cg_container *c)
{
	const struct named_container *e;
	const struct named_pod *p;
	struct container_path at;

	memset(c, 0, sizeof(*c));
	container_path_parse(path, &at);
	if (at.kind != CONTAINER_OWN && at.kind != CONTAINER_MONITOR && at.kind != CONTAINER_POD)
		return -ENOENT;
	pthread_mutex_lock(&t->lock);
	if (at.kind == CONTAINER_POD) {
		p = find_pod(t, at.pod_uid);
		if (p) {
			memcpy(c->pod_namespace, p->pod_namespace, sizeof(c->pod_namespace));
			memcpy(c->pod_name, p->pod_name, sizeof(c->pod_name));
		}
	} else {
		e = find_container(t, at.id);
		if (e)
			*c = e->info;
	}
	pthread_mutex_unlock(&t->lock);
	/* what the path says is the truth: a runtime's reply does not rename the cgroup */
	c->runtime = container_runtime_name(at.runtime);
	c->pod = at.kind == CONTAINER_POD;
	memcpy(c->id, at.id, sizeof(c->id));
	if (at.pod_uid[0])
		memcpy(c->pod_uid, at.pod_uid, sizeof(c->pod_uid));
	return 0;
}

struct container_search {
	bool (*match)(const struct cg_container *c, const void *ctx);
	const void *ctx;
	const struct named_container *best;
};

static void search_container(struct hash_table *table, struct hash_node *n, void *ctx)
{
	const struct named_container *e = container_of(n, struct named_container, node);
	struct container_search *s = ctx;

	(void)table;
	if (!e->removed && (!s->best || e->seq > s->best->seq) && s->match(&e->info, s->ctx))
		s->best = e;
}

int container_names__find(struct container_names *t,
			  bool (*match)(const struct cg_container *c, const void *ctx),
			  const void *ctx, char *id)
{
	struct container_search s = { .match = match, .ctx = ctx };

	pthread_mutex_lock(&t->lock);
	hash_table_visit(&t->containers, search_container, &s);
	if (s.best)
		memcpy(id, s.best->info.id, CONTAINER_ID_LEN + 1);
	pthread_mutex_unlock(&t->lock);
	return s.best ? 0 : -ENOENT;
}

void container_names__remove_pod(struct container_names *t, const char *uid)
{
	struct named_pod *p;

	pthread_mutex_lock(&t->lock);
	p = find_pod(t, uid);
	/* its label stays claimed; its cgroup, gone with it, has no rows to label */
	if (p)
		free_pod(&t->pods, &p->node, NULL);
	pthread_mutex_unlock(&t->lock);
	if (p)
		names_changed(t);
}

struct pod_search {
	const char *pod_namespace, *pod_name;
	const struct named_pod *found;
};

static void search_pod(struct hash_table *table, struct hash_node *n, void *ctx)
{
	const struct named_pod *p = container_of(n, struct named_pod, node);
	struct pod_search *s = ctx;

	(void)table;
	if (!strcmp(p->pod_namespace, s->pod_namespace) && !strcmp(p->pod_name, s->pod_name) &&
	    (!s->found || p->seq > s->found->seq))
		s->found = p;
}

int container_names__find_pod(struct container_names *t, const char *pod_namespace,
			      const char *pod_name, char *uid)
{
	struct pod_search s = { .pod_namespace = pod_namespace, .pod_name = pod_name };

	pthread_mutex_lock(&t->lock);
	hash_table_visit(&t->pods, search_pod, &s);
	if (s.found)
		memcpy(uid, s.found->uid, POD_UID_MAX + 1);
	pthread_mutex_unlock(&t->lock);
	return s.found ? 0 : -ENOENT;
}
