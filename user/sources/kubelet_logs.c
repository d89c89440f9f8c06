// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The names of a Kubernetes node's pods and containers, without the API server: from the
 * kubelet's own log tree, whose names it makes from the pod's and container's (pkg/kubelet/
 * kuberuntime/helpers.go, BuildPodLogsDirectory() and the CRI's log symlinks):
 *
 *   pods/NAMESPACE_POD_UID/CONTAINER/N.log
 *   containers/POD_NAMESPACE_CONTAINER-ID.log -> ../pods/NAMESPACE_POD_UID/CONTAINER/N.log
 *
 * Namespaces, pod and container names are DNS labels or subdomains, which hold no '_', so a
 * name splits at its underscores. A pod's sandbox (pause) container has no log, and is named by
 * its id within its pod. A thread looks again each second, when either folder changed; what a
 * look no longer finds is forgotten.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sources/kubelet_logs.h"
#include "sources/name_source.h"

#define RESCAN_MS 1000

struct found;

struct kubelet_logs {
	struct container_names *names;
	int (*settle)(bool keep_groups); /* name_source_config's */
	char pods[4096], containers[4096];
	struct timespec pods_mtime, containers_mtime;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stopping;
	/* what the last look found, sorted by key: what the next does not find is gone */
	struct found *last_pods, *last_containers;
	size_t nr_last_pods, nr_last_containers;
};

/* s split at its n-1 underscores into parts of at most max bytes each: whether it has exactly n. */
static bool split_underscores(const char *s, size_t n, char (*parts)[CG_CONTAINER_NAME_MAX + 1])
{
	const char *end;
	size_t i, len;

	for (i = 0; i < n; i++) {
		end = i + 1 < n ? strchr(s, '_') : s + strlen(s);
		if (!end)
			return false;
		len = (size_t)(end - s);
		if (!len || len > CG_CONTAINER_NAME_MAX || memchr(s, '_', len))
			return false;
		memcpy(parts[i], s, len);
		parts[i][len] = '\0';
		s = end + 1;
	}
	return true;
}

int kubelet_parse_pod_dir(const char *name, char *pod_namespace, char *pod_name, char *uid)
{
	char parts[3][CG_CONTAINER_NAME_MAX + 1];

	if (!split_underscores(name, 3, parts) || strlen(parts[2]) > CG_POD_UID_MAX ||
	    strspn(parts[2], "0123456789abcdef-") != strlen(parts[2]))
		return -EINVAL;
	strcpy(pod_namespace, parts[0]);
	strcpy(pod_name, parts[1]);
	strcpy(uid, parts[2]);
	return 0;
}

int kubelet_parse_container_log(const char *name, struct cg_container *c)
{
	char parts[3][CG_CONTAINER_NAME_MAX + 1];
	char stem[3 * (CG_CONTAINER_NAME_MAX + 1)];
	size_t len = strlen(name), tail = 1 + CG_CONTAINER_ID_LEN + 4; /* "-ID.log" */

	memset(c, 0, sizeof(*c));
	if (len <= tail || len - tail >= sizeof(stem) || name[len - tail] != '-' ||
	    strcmp(name + len - 4, ".log") ||
	    !container_id_valid(name + len - tail + 1, CG_CONTAINER_ID_LEN))
		return -EINVAL;
	memcpy(stem, name, len - tail);
	stem[len - tail] = '\0';
	if (!split_underscores(stem, 3, parts))
		return -EINVAL;
	memcpy(c->id, name + len - tail + 1, CG_CONTAINER_ID_LEN);
	strcpy(c->pod_name, parts[0]);
	strcpy(c->pod_namespace, parts[1]);
	strcpy(c->name, parts[2]);
	return 0;
}

/* Whether the folder changed since *seen (kept up): a look costs a stat, a listing a walk. */
static bool folder_changed(const char *path, struct timespec *seen)
{
	struct stat st;

	if (stat(path, &st))
		return false;
	if (st.st_mtim.tv_sec == seen->tv_sec && st.st_mtim.tv_nsec == seen->tv_nsec)
		return false;
	*seen = st.st_mtim;
	return true;
}

/* What one look at a folder found, to be named in order and compared with the look before. */
struct found {
	char key[CG_CONTAINER_ID_LEN + 1]; /* a container's id, a pod's uid */
	long long rank; /* older first: a pod folder's mtime, a container log's restart count */
	struct cg_container c;
};

static int by_rank(const void *a, const void *b)
{
	const struct found *x = a, *y = b;

	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct found *)a)->key, ((const struct found *)b)->key);
}

/* One more entry in *list: NULL when out of memory (the look is cut short). */
static struct found *found_add(struct found **list, size_t *nr, size_t *cap)
{
	struct found *grown;

	if (*nr == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		grown = realloc(*list, *cap * sizeof(**list));
		if (!grown)
			return NULL;
		*list = grown;
	}
	memset(&(*list)[*nr], 0, sizeof(**list));
	return &(*list)[(*nr)++];
}

/*
 * The keys of the last look that this one did not find: gone, told with gone(); then this
 * look kept, sorted by key, for the next.
 */
static void forget_gone(struct kubelet_logs *k, struct found **last, size_t *nr_last,
			struct found *now, size_t nr_now,
			void (*gone)(struct container_names *, const char *))
{
	qsort(now, nr_now, sizeof(*now), by_key);
	for (size_t i = 0; i < *nr_last; i++)
		if (!bsearch(&(*last)[i], now, nr_now, sizeof(*now), by_key))
			gone(k->names, (*last)[i].key);
	free(*last);
	*last = now;
	*nr_last = nr_now;
}

/*
 * The pods, oldest folder first: a pod made again under its name (a StatefulSet's) has a new
 * uid, and the newest is the one -c pod: selects.
 */
static void scan_pods(struct kubelet_logs *k)
{
	struct found *list = NULL, *f;
	size_t nr = 0, cap = 0;
	struct dirent *d;
	struct stat st;
	DIR *dir;

	dir = opendir(k->pods);
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		struct cg_container c = {};

		if (kubelet_parse_pod_dir(d->d_name, c.pod_namespace, c.pod_name, c.pod_uid) ||
		    fstatat(dirfd(dir), d->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		f = found_add(&list, &nr, &cap);
		if (!f)
			break;
		snprintf(f->key, sizeof(f->key), "%s", c.pod_uid);
		f->rank = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
		f->c = c;
	}
	closedir(dir);
	qsort(list, nr, sizeof(*list), by_rank);
	for (size_t i = 0; i < nr; i++)
		container_names__set_pod(k->names, list[i].c.pod_uid, list[i].c.pod_namespace,
					 list[i].c.pod_name);
	forget_gone(k, &k->last_pods, &k->nr_last_pods, list, nr, container_names__remove_pod);
}

/*
 * Where a container's log links to ("../pods/NAMESPACE_POD_UID/CONTAINER/N.log"), read, never
 * followed: the pod's uid into c, and the restart count N (-1 when not known).
 */
static long long read_link(const struct kubelet_logs *k, const char *name, struct cg_container *c)
{
	char target[4096], path[4096 + 256], ns[CG_CONTAINER_NAME_MAX + 1];
	char pod[CG_CONTAINER_NAME_MAX + 1], uid[CG_POD_UID_MAX + 1], *dir, *slash, *end;
	long long restarts;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", k->containers, name);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return -1;
	target[n] = '\0';
	slash = strrchr(target, '/');
	restarts = slash ? strtoll(slash + 1, &end, 10) : -1;
	if (!slash || end == slash + 1 || strcmp(end, ".log") || restarts < 0)
		restarts = -1;
	dir = strstr(target, "pods/");
	if (!dir)
		return restarts;
	dir += 5;
	slash = strchr(dir, '/');
	if (slash)
		*slash = '\0';
	if (!kubelet_parse_pod_dir(dir, ns, pod, uid) && !strcmp(ns, c->pod_namespace) &&
	    !strcmp(pod, c->pod_name))
		strcpy(c->pod_uid, uid);
	return restarts;
}

/*
 * The containers, each pod's container's earlier instances first: the kubelet keeps the log of
 * the one before a restart, and the newest is the one -c pod:NAMESPACE/POD/CONTAINER selects.
 */
static void scan_containers(struct kubelet_logs *k)
{
	struct found *list = NULL, *f;
	size_t nr = 0, cap = 0;
	struct cg_container c;
	struct dirent *d;
	DIR *dir;

	dir = opendir(k->containers);
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		if (kubelet_parse_container_log(d->d_name, &c))
			continue;
		f = found_add(&list, &nr, &cap);
		if (!f)
			break;
		f->rank = read_link(k, d->d_name, &c);
		f->c = c;
		memcpy(f->key, c.id, sizeof(f->key));
	}
	closedir(dir);
	qsort(list, nr, sizeof(*list), by_rank);
	for (size_t i = 0; i < nr; i++)
		container_names__set(k->names, &list[i].c);
	forget_gone(k, &k->last_containers, &k->nr_last_containers, list, nr,
		    container_names__remove);
}

static void *kubelet_thread(void *arg)
{
	struct kubelet_logs *k = arg;
	struct timespec until;
	bool stopping = false;
	int err;

	/* the Docker socket's group is not this thread's to keep */
	pthread_setname_np(pthread_self(), "cgstat-kubelet");
	err = k->settle ? k->settle(false) : 0;
	if (err) {
		fprintf(stderr, "cgstat: the kubelet's names: cannot drop privileges: %s\n",
			strerror(-err));
		return NULL;
	}
	while (!stopping) {
		if (folder_changed(k->pods, &k->pods_mtime))
			scan_pods(k);
		if (folder_changed(k->containers, &k->containers_mtime))
			scan_containers(k);
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += RESCAN_MS / 1000;
		pthread_mutex_lock(&k->lock);
		while (!k->stopping &&
		       pthread_cond_timedwait(&k->cond, &k->lock, &until) != ETIMEDOUT)
			;
		stopping = k->stopping;
		pthread_mutex_unlock(&k->lock);
	}
	return NULL;
}

/* The state of a kubelet not on this node: nothing to follow. */
static struct kubelet_logs absent;

static void *kubelet_start(struct container_names *names, const struct name_source_config *cfg)
{
	const char *root = cfg->kubelet_logs ? cfg->kubelet_logs : "/var/log";
	pthread_condattr_t attr;
	struct kubelet_logs *k;
	struct stat st;
	int err;

	k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->names = names;
	k->settle = cfg->settle;
	if ((size_t)snprintf(k->pods, sizeof(k->pods), "%s/pods", root) >= sizeof(k->pods) ||
	    (size_t)snprintf(k->containers, sizeof(k->containers), "%s/containers", root) >=
		    sizeof(k->containers)) {
		free(k);
		errno = ENAMETOOLONG;
		return NULL;
	}
	if (stat(k->pods, &st) || !S_ISDIR(st.st_mode)) {
		free(k);
		return &absent;
	}
	/* the names there are at start, before the first interval */
	folder_changed(k->pods, &k->pods_mtime);
	folder_changed(k->containers, &k->containers_mtime);
	scan_pods(k);
	scan_containers(k);
	pthread_mutex_init(&k->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&k->cond, &attr);
	pthread_condattr_destroy(&attr);
	err = pthread_create(&k->thread, NULL, kubelet_thread, k);
	if (err) {
		pthread_cond_destroy(&k->cond);
		pthread_mutex_destroy(&k->lock);
		free(k->last_pods);
		free(k->last_containers);
		free(k);
		errno = err;
		return NULL;
	}
	return k;
}

static void kubelet_stop(void *state)
{
	struct kubelet_logs *k = state;

	if (k == &absent)
		return;
	pthread_mutex_lock(&k->lock);
	k->stopping = true;
	pthread_cond_broadcast(&k->cond);
	pthread_mutex_unlock(&k->lock);
	pthread_join(k->thread, NULL);
	pthread_cond_destroy(&k->cond);
	pthread_mutex_destroy(&k->lock);
	free(k->last_pods);
	free(k->last_containers);
	free(k);
}

const struct name_source kubelet_logs_source = {
	.name = "the kubelet's logs",
	.start = kubelet_start,
	.stop = kubelet_stop,
};
