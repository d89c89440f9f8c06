/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --listen: /metrics over HTTP (libmicrohttpd), in its own thread. The drain never waits on a
 * client: a scrape copies the metrics' sums (metrics__snapshot()) and renders the copy in the
 * server's thread. Slow or hostile clients are bounded by libmicrohttpd's limits (connections,
 * per-connection memory, idle timeout), set in listener.c.
 */
#ifndef CGSTAT_LISTENER_H
#define CGSTAT_LISTENER_H

#include "outputs/metrics.h"

struct listener;

/*
 * Listen on addr (numeric IPv4 or IPv6) port: the socket is bound here, while cgstat may still
 * bind a port below 1024 and before the programs load, so that a port in use is said at once.
 * Nothing is served until listener__serve(). NULL and errno.
 */
struct listener *listener__bind(const char *addr, const char *port);

/*
 * Serve m until stopped, from a thread made here. Called once privileges are dropped: a thread
 * takes its capabilities and ids from the one that makes it, and the server's thread parses
 * what the network sends. m must outlive the listener. 0 or -errno.
 */
int listener__serve(struct listener *l, struct metrics *m);

/* Stop serving, close every connection and free l. */
void listener__stop(struct listener *l);

#endif /* CGSTAT_LISTENER_H */
