// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The names of Docker's containers (and Podman's, through its Docker-compatible socket), from
 * the Engine API over its Unix socket, found as the docker CLI finds it: the list once
 * (GET /containers/json?all=1), then the event stream (GET /events) for what is made, renamed
 * and removed while cgstat runs. libcurl speaks HTTP; sources/docker_api.c reads the JSON.
 *
 * One thread does every request. It lists again, and follows the events again from before the
 * list, whenever the stream ends, the engine comes back, or the drain labels a container whose
 * id it does not know (an event missed, or a stream that stalled): at most once a second. The
 * drain never waits on it: it reads the table of names, which the thread fills.
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/message.h"
#include "sources/docker_api.h"
#include "sources/name_source.h"

#define DOCKER_DEFAULT_HOST "unix:///var/run/docker.sock"
#define CONNECT_TIMEOUT_MS  2000
#define LIST_TIMEOUT_MS	    5000
/* how long start() waits for the first list: a stalled engine must not hold up the run */
#define START_WAIT_MS 3000
#define RETRY_MIN_MS  500
#define RETRY_MAX_MS  5000
#define RELIST_MIN_MS 1000
#define LIST_MAX      (64u << 20) /* bytes of a /containers/json reply */
#define EVENT_MAX     (1u << 20)  /* bytes of one event's line */
#define EVENTS_URL                                                                       \
	"http://docker/events?filters=%%7B%%22type%%22%%3A%%5B%%22container%%22%%5D%%7D" \
	"&since=%lld"

struct docker_engine {
	struct container_names *names;
	int (*settle)(bool keep_groups); /* name_source_config's */
	char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pthread_t thread;
	bool have_thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* started, or a wake-up */
	/* under lock */
	bool stopping;
	bool started;	/* the first list was tried */
	bool following; /* the event stream is open */
	bool relist;	/* asked to list again */
	int fd;		/* the transfer's socket, -1 between transfers */
	uint64_t last_relist_ms;
	/* the thread's own */
	char *buf; /* the reply, or the event line, read so far */
	size_t len, cap;
	bool too_long; /* the reply (or line) passed its bound: dropped */
	bool answered; /* the engine answered since it last stopped answering */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * The socket's path from DOCKER_HOST as the docker CLI reads it ("unix:///path"; unset or empty:
 * the default). 0; -EPROTONOSUPPORT for another scheme (tcp://, ssh://); -ENAMETOOLONG.
 */
static int socket_path_of(const char *host, char *path, size_t len)
{
	const char *p;

	if (!host || !*host)
		host = DOCKER_DEFAULT_HOST;
	if (strncmp(host, "unix://", 7))
		return -EPROTONOSUPPORT;
	p = host + 7;
	if (!*p)
		return -EINVAL;
	if (strlen(p) >= len)
		return -ENAMETOOLONG;
	strcpy(path, p);
	return 0;
}

static gid_t engine_group(const struct name_source_config *cfg)
{
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct stat st;

	/* the group that may connect: root's own is no group to keep */
	if (socket_path_of(cfg->docker_host, path, sizeof(path)) || stat(path, &st) ||
	    !S_ISSOCK(st.st_mode) || !st.st_gid || !(st.st_mode & S_IWGRP))
		return (gid_t)-1;
	return st.st_gid;
}

/* Under lock: end the transfer under way, and any wait. */
static void engine_wake(struct docker_engine *e)
{
	if (e->fd >= 0)
		shutdown(e->fd, SHUT_RDWR);
	pthread_cond_broadcast(&e->cond);
}

static curl_socket_t open_socket(void *ctx, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct docker_engine *e = ctx;
	curl_socket_t fd;

	(void)purpose;
	fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
	if (fd < 0)
		return CURL_SOCKET_BAD;
	pthread_mutex_lock(&e->lock);
	/*
	 * Stopping, or a list asked for between the list and the stream's connection (nothing to
	 * wake then): the stream fails at once, and the loop lists again.
	 */
	if (e->stopping || (e->following && e->relist)) {
		close(fd);
		fd = CURL_SOCKET_BAD;
	} else {
		e->fd = fd;
	}
	pthread_mutex_unlock(&e->lock);
	return fd;
}

static int close_socket(void *ctx, curl_socket_t fd)
{
	struct docker_engine *e = ctx;

	pthread_mutex_lock(&e->lock);
	if (e->fd == fd)
		e->fd = -1;
	pthread_mutex_unlock(&e->lock);
	return close(fd);
}

/* Bytes of the list's reply, kept whole up to LIST_MAX. */
static size_t on_list_bytes(char *data, size_t size, size_t n, void *ctx)
{
	struct docker_engine *e = ctx;
	size_t bytes = size * n, cap;
	char *grown;

	if (e->len + bytes >= LIST_MAX) {
		e->too_long = true;
		return 0; /* ends the transfer */
	}
	if (e->len + bytes >= e->cap) {
		cap = e->cap ? e->cap : 65536;
		while (cap <= e->len + bytes)
			cap *= 2;
		grown = realloc(e->buf, cap);
		if (!grown)
			return 0;
		e->buf = grown;
		e->cap = cap;
	}
	memcpy(e->buf + e->len, data, bytes);
	e->len += bytes;
	e->buf[e->len] = '\0';
	return bytes;
}

static void apply_event(struct docker_engine *e, const char *line)
{
	enum docker_event_kind kind;
	struct cg_container c;

	if (docker_parse_event(line, &kind, &c))
		return;
	if (kind == DOCKER_EVENT_NAMED && c.name[0])
		container_names__set(e->names, &c);
	else if (kind == DOCKER_EVENT_REMOVED)
		container_names__remove(e->names, c.id);
}

/* Bytes of the event stream: one JSON object a line, each applied as its newline comes. */
static size_t on_event_bytes(char *data, size_t size, size_t n, void *ctx)
{
	struct docker_engine *e = ctx;
	size_t bytes = size * n, take;
	const char *end, *p = data, *stop = data + bytes;

	while (p < stop) {
		end = memchr(p, '\n', stop - p);
		take = (end ? end : stop) - p;
		if (!e->too_long && e->len + take < EVENT_MAX) {
			if (e->len + take >= e->cap) {
				char *grown = realloc(e->buf, EVENT_MAX);

				if (!grown)
					return 0;
				e->buf = grown;
				e->cap = EVENT_MAX;
			}
			memcpy(e->buf + e->len, p, take);
			e->len += take;
		} else {
			e->too_long = true;
		}
		if (!end)
			break;
		if (!e->too_long) {
			e->buf[e->len] = '\0';
			apply_event(e, e->buf);
		}
		e->len = 0;
		e->too_long = false;
		p = end + 1;
	}
	return bytes;
}

/* One GET of url into write: 0, or -EIO with why. timeout_ms 0: none (the stream). */
static int engine_get(struct docker_engine *e, CURL *h, const char *url, long timeout_ms,
		      curl_write_callback write, char *why, size_t len)
{
	char err[CURL_ERROR_SIZE] = "";
	long os_errno = 0;
	CURLcode res;

	e->len = 0;
	e->too_long = false;
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, e->socket_path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)CONNECT_TIMEOUT_MS);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, e);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_socket);
	curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, e);
	curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, close_socket);
	curl_easy_setopt(h, CURLOPT_CLOSESOCKETDATA, e);
	res = curl_easy_perform(h);
	if (res == CURLE_OK)
		return 0;
	if (res == CURLE_COULDNT_CONNECT &&
	    curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno) == CURLE_OK && os_errno)
		snprintf(why, len, "cannot connect: %s", strerror((int)os_errno));
	else if (e->too_long)
		snprintf(why, len, "its reply is longer than %u MiB", LIST_MAX >> 20);
	else
		snprintf(why, len, "%s", err[0] ? err : curl_easy_strerror(res));
	return -EIO;
}

static void keep_listed(const struct cg_container *c, void *ctx)
{
	struct docker_engine *e = ctx;

	if (c->name[0])
		container_names__set(e->names, c);
}

static int engine_list(struct docker_engine *e, CURL *h, char *why, size_t len)
{
	int err = engine_get(e, h, "http://docker/containers/json?all=1", LIST_TIMEOUT_MS,
			     on_list_bytes, why, len);

	if (err)
		return err;
	if (docker_parse_list(e->len ? e->buf : "", keep_listed, e) < 0) {
		snprintf(why, len, "its reply to /containers/json is not a JSON array");
		return -EINVAL;
	}
	return 0;
}

/* The engine did not answer: said once when it had answered before; else said when needed. */
static void engine_trouble(struct docker_engine *e, const char *why)
{
	char line[512], msg[768];

	snprintf(msg, sizeof(msg), "the engine at %s does not answer: %s", e->socket_path, why);
	if (e->answered) {
		message_escape_buf(line, sizeof(line), msg);
		fprintf(stderr, "cgstat: %s; its containers keep the names known\n", line);
	}
	container_names__set_trouble(e->names, RUNTIME_DOCKER, msg, e->answered);
	e->answered = false;
}

/* Wait ms, or until stopped: whether stopping. */
static bool engine_wait(struct docker_engine *e, unsigned int ms)
{
	struct timespec until;
	bool stopping;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&e->lock);
	while (!e->stopping && pthread_cond_timedwait(&e->cond, &e->lock, &until) != ETIMEDOUT)
		;
	stopping = e->stopping;
	pthread_mutex_unlock(&e->lock);
	return stopping;
}

static void *engine_thread(void *arg)
{
	struct docker_engine *e = arg;
	unsigned int retry_ms = RETRY_MIN_MS;
	char why[CURL_ERROR_SIZE + 128], url[256];
	bool relisted;
	long long since;
	CURL *h;
	int err;

	/* the one thread that keeps the socket's group */
	pthread_setname_np(pthread_self(), "cgstat-docker");
	err = e->settle ? e->settle(true) : 0;
	if (err)
		fprintf(stderr, "cgstat: the Docker engine's names: cannot drop privileges: %s\n",
			strerror(-err));
	h = err ? NULL : curl_easy_init();
	while (h) {
		/* from before the list: what happens while it is read is not missed */
		since = (long long)time(NULL) - 1;
		err = engine_list(e, h, why, sizeof(why));
		pthread_mutex_lock(&e->lock);
		e->started = true;
		pthread_cond_broadcast(&e->cond);
		pthread_mutex_unlock(&e->lock);
		if (err) {
			/* a list cut short by the stop is no engine's trouble */
			if (engine_wait(e, 0))
				break;
			engine_trouble(e, why);
			if (engine_wait(e, retry_ms))
				break;
			retry_ms = retry_ms * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : retry_ms * 2;
			continue;
		}
		if (!e->answered)
			container_names__set_trouble(e->names, RUNTIME_DOCKER, NULL, false);
		e->answered = true;
		retry_ms = RETRY_MIN_MS;

		pthread_mutex_lock(&e->lock);
		e->following = !e->stopping;
		e->relist = false;
		pthread_mutex_unlock(&e->lock);
		snprintf(url, sizeof(url), EVENTS_URL, since);
		engine_get(e, h, url, 0, on_event_bytes, why, sizeof(why));
		pthread_mutex_lock(&e->lock);
		e->following = false;
		relisted = e->relist;
		pthread_mutex_unlock(&e->lock);
		/* a stream that ends unasked: the engine stopping, or one that ends every stream */
		if (!relisted && engine_wait(e, RETRY_MIN_MS))
			break;
		if (relisted && engine_wait(e, 0))
			break;
	}
	curl_easy_cleanup(h);
	pthread_mutex_lock(&e->lock);
	e->started = true;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

/* The drain met a container whose id is not known: list again, at most once a second. */
static void engine_relist(void *ctx)
{
	struct docker_engine *e = ctx;
	uint64_t now = now_ms();

	pthread_mutex_lock(&e->lock);
	if (e->following && !e->relist && now - e->last_relist_ms >= RELIST_MIN_MS) {
		e->relist = true;
		e->last_relist_ms = now;
		engine_wake(e);
	}
	pthread_mutex_unlock(&e->lock);
}

static void engine_stop(void *state)
{
	struct docker_engine *e = state;

	if (e->have_thread) {
		container_names__on_unknown(e->names, NULL, NULL);
		pthread_mutex_lock(&e->lock);
		e->stopping = true;
		engine_wake(e);
		pthread_mutex_unlock(&e->lock);
		pthread_join(e->thread, NULL);
		curl_global_cleanup();
	}
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	free(e->buf);
	free(e);
}

static void *engine_start(struct container_names *names, const struct name_source_config *cfg)
{
	struct docker_engine *e = calloc(1, sizeof(*e));
	pthread_condattr_t attr;
	struct timespec ts;
	char why[512];
	int err;

	if (!e)
		return NULL;
	e->names = names;
	e->settle = cfg->settle;
	e->fd = -1;
	pthread_mutex_init(&e->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&e->cond, &attr);
	pthread_condattr_destroy(&attr);
	err = socket_path_of(cfg->docker_host, e->socket_path, sizeof(e->socket_path));
	if (err) {
		/* nothing to follow: said when a container is labelled by its short id */
		snprintf(why, sizeof(why), "DOCKER_HOST is not a unix:// socket cgstat can follow");
		container_names__set_trouble(names, RUNTIME_DOCKER, why, false);
		return e;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		engine_stop(e);
		errno = ENOMEM;
		return NULL;
	}
	err = pthread_create(&e->thread, NULL, engine_thread, e);
	if (err) {
		curl_global_cleanup();
		engine_stop(e);
		errno = err;
		return NULL;
	}
	e->have_thread = true;
	container_names__on_unknown(names, engine_relist, e);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += START_WAIT_MS / 1000;
	pthread_mutex_lock(&e->lock);
	while (!e->started && !pthread_cond_timedwait(&e->cond, &e->lock, &ts))
		;
	pthread_mutex_unlock(&e->lock);
	return e;
}

const struct name_source docker_engine_source = {
	.name = "the Docker engine",
	.group = engine_group,
	.start = engine_start,
	.stop = engine_stop,
};
