// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include "outputs/listener.h"

#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>
#include <netinet/in.h>

#include "lib/util.h"

/*
 * The bounds on clients. A scraper opens one connection at a time and asks in one packet; these
 * cap what slowloris (connections that send a byte now and then, each time within the idle
 * timeout) or a huge request can hold: LISTENER_CONNECTIONS × LISTENER_CONNECTION_MEMORY of
 * buffers; a connection is dropped after LISTENER_IDLE_SECONDS without progress, or
 * LISTENER_REQUEST_SECONDS after it began or was last answered without a whole request; and
 * whenever a client arrives, room is made for it by dropping the oldest of its address's
 * connections at LISTENER_CONNECTIONS_PER_IP - 1 (the oldest of all at
 * LISTENER_CONNECTIONS - 1): the oldest is the slowest, as a live client's request is answered
 * at once. So a scraper gets in while any number of slow connections stay open. A request whose
 * headers do not fit in the connection's memory is refused by libmicrohttpd.
 */
#define LISTENER_CONNECTIONS	    128
#define LISTENER_CONNECTIONS_PER_IP 96
#define LISTENER_CONNECTION_MEMORY  (32 * 1024)
#define LISTENER_IDLE_SECONDS	    10
#define LISTENER_REQUEST_SECONDS    10

#define CONTENT_TYPE_TEXT	 "text/plain; version=0.0.4; charset=utf-8"
#define CONTENT_TYPE_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"

/*
 * A connection, from libmicrohttpd's start of it to its close. Only the server's thread (every
 * callback below runs there) touches the list, so it takes no lock, and a connection's socket
 * is open while it is listed.
 */
struct client {
	struct client *next, **pprev;
	int fd;
	struct sockaddr_storage addr;
	uint64_t since_ns; /* CLOCK_MONOTONIC: when it began, or its last answer */
	bool dropped;	   /* shut down by cgstat; closed by libmicrohttpd next */
};

struct listener {
	struct MHD_Daemon *daemon;
	int fd;
	struct metrics *metrics; /* copied at each scrape (metrics__snapshot()) */
	struct client *clients;
};

static bool same_host(const struct sockaddr_storage *a, const struct sockaddr *b)
{
	if (a->ss_family != b->sa_family)
		return false;
	if (b->sa_family == AF_INET)
		return !memcmp(&((const struct sockaddr_in *)a)->sin_addr,
			       &((const struct sockaddr_in *)b)->sin_addr, sizeof(struct in_addr));
	if (b->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr,
			       sizeof(struct in6_addr));
	return false;
}

static void client_drop(struct client *c)
{
	/* libmicrohttpd sees the end of the stream and closes it in its next round */
	shutdown(c->fd, SHUT_RDWR);
	c->dropped = true;
}

/*
 * Before a client at addr is taken in: drop the connections past their time, and the oldest
 * of addr's (or of all) where taking it in would reach the limit.
 */
static enum MHD_Result client_arrives(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct listener *l = cls;
	struct client *c, *oldest = NULL, *oldest_here = NULL;
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	unsigned int all = 0, here = 0;

	(void)len;
	for (c = l->clients; c; c = c->next) {
		if (!c->dropped && now - c->since_ns > LISTENER_REQUEST_SECONDS * NSEC_PER_SEC)
			client_drop(c);
		if (c->dropped)
			continue;
		all++;
		if (!oldest || c->since_ns < oldest->since_ns)
			oldest = c;
		if (same_host(&c->addr, addr)) {
			here++;
			if (!oldest_here || c->since_ns < oldest_here->since_ns)
				oldest_here = c;
		}
	}
	if (here >= LISTENER_CONNECTIONS_PER_IP - 1) {
		client_drop(oldest_here);
		if (oldest == oldest_here)
			oldest = NULL;
		all--;
	}
	if (all >= LISTENER_CONNECTIONS - 1 && oldest)
		client_drop(oldest);
	return MHD_YES;
}

static void client_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct listener *l = cls;
	const union MHD_ConnectionInfo *fd, *addr;
	struct client *c = *socket_context;

	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (c) {
			*c->pprev = c->next;
			if (c->next)
				c->next->pprev = c->pprev;
			free(c);
		}
		return;
	}
	fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	addr = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	c = calloc(1, sizeof(*c));
	if (!c || !fd || !addr || !addr->client_addr) {
		free(c);
		return; /* not listed: bounded by libmicrohttpd's own limits alone */
	}
	c->fd = fd->connect_fd;
	memcpy(&c->addr, addr->client_addr,
	       addr->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
							: sizeof(struct sockaddr_in));
	c->since_ns = clock_ns(CLOCK_MONOTONIC);
	c->next = l->clients;
	c->pprev = &l->clients;
	if (c->next)
		c->next->pprev = &c->next;
	l->clients = c;
	*socket_context = c;
}

/* A request answered: the connection's time for its next one starts now. */
static void request_done(void *cls, struct MHD_Connection *conn, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct client *c = info ? info->socket_context : NULL;

	(void)cls;
	(void)req_cls;
	if (c && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
		c->since_ns = clock_ns(CLOCK_MONOTONIC);
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, char *body,
			     size_t len, const char *type, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(len, body, mode);
	if (!resp) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result reply_static(struct MHD_Connection *conn, unsigned int status,
				    const char *text)
{
	return reply(conn, status, (char *)text, strlen(text), "text/plain; charset=utf-8",
		     MHD_RESPMEM_PERSISTENT);
}

/* OpenMetrics when the scraper lists it in Accept (Prometheus does, first), else the text format */
static bool wants_openmetrics(struct MHD_Connection *conn)
{
	const char *accept =
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);

	return accept && strstr(accept, "application/openmetrics-text");
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **req_cls)
{
	struct listener *l = cls;
	struct metrics_snapshot *s;
	bool om;
	size_t len;
	char *text;

	(void)version;
	(void)upload_data;
	(void)req_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_static(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET /metrics\n");
	/* a GET with a body: refused, not read */
	if (*upload_data_size)
		return MHD_NO;
	if (!strcmp(url, "/"))
		return reply_static(conn, MHD_HTTP_OK, "cgstat: the metrics are at /metrics\n");
	if (strcmp(url, "/metrics"))
		return reply_static(conn, MHD_HTTP_NOT_FOUND, "not found; GET /metrics\n");
	om = wants_openmetrics(conn);
	s = metrics__snapshot(l->metrics);
	text = s ? metrics_snapshot__render(s, om, &len) : NULL;
	metrics_snapshot__free(s);
	if (!text)
		return reply_static(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	return reply(conn, MHD_HTTP_OK, text, len,
		     om ? CONTENT_TYPE_OPENMETRICS : CONTENT_TYPE_TEXT, MHD_RESPMEM_MUST_FREE);
}

/* libmicrohttpd's own messages would interleave with the outputs on stderr */
static void quiet_logger(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	(void)fmt;
	(void)ap;
}

static int bind_socket(const char *addr, const char *port)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
	};
	struct addrinfo *ai;
	int fd, one = 1, err;

	err = getaddrinfo(addr, port, &hints, &ai);
	if (err)
		return err == EAI_SYSTEM ? -errno : -EINVAL;
	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 64)) {
		err = -errno;
		close(fd);
		goto out;
	}
	err = fd;
out:
	freeaddrinfo(ai);
	return err;
}

struct listener *listener__bind(const char *addr, const char *port)
{
	struct listener *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return NULL;
	l->fd = bind_socket(addr, port);
	if (l->fd < 0) {
		err = l->fd;
		free(l);
		errno = -err;
		return NULL;
	}
	return l;
}

int listener__serve(struct listener *l, struct metrics *m)
{
	sigset_t all, old;
	int err;

	l->metrics = m;
	/*
	 * The server's thread takes no signal: SIGINT and SIGCHLD must reach the main thread,
	 * whose sleep they cut short.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* one server thread: every callback runs in it (struct client) */
	l->daemon = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0,
		client_arrives, l, handle, l, MHD_OPTION_LISTEN_SOCKET, l->fd,
		MHD_OPTION_NOTIFY_CONNECTION, client_notify, l, MHD_OPTION_NOTIFY_COMPLETED,
		request_done, NULL, MHD_OPTION_CONNECTION_LIMIT, (unsigned int)LISTENER_CONNECTIONS,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)LISTENER_CONNECTIONS_PER_IP,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)LISTENER_CONNECTION_MEMORY,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)LISTENER_IDLE_SECONDS,
		MHD_OPTION_EXTERNAL_LOGGER, quiet_logger, NULL, MHD_OPTION_END);
	err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!l->daemon)
		return err ? -err : -EIO;
	return 0;
}

void listener__stop(struct listener *l)
{
	if (!l)
		return;
	/* given with MHD_OPTION_LISTEN_SOCKET, the socket is the daemon's to close */
	if (l->daemon)
		MHD_stop_daemon(l->daemon);
	else
		close(l->fd);
	free(l);
}
