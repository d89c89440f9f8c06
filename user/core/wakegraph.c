// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/derived.h"
#include "lib/hashtab.h"
#include "lib/json_util.h"
#include "core/wakegraph.h"

/* A pool (container and pool name), or a source (container ""). */
struct wg_node {
	struct hash_node node; /* by container and pool */
	char *container;
	char pool[CG_COMM_LEN + 8]; /* a pool's name, POOL_OTHER, or a source's */
	uint64_t cpu_ns;	    /* on CPU over the intervals it was listed in */
	uint64_t busiest_ns;	    /* its busiest thread's on-CPU time, summed over those */
	uint64_t listed_ns;	    /* their time */
	bool in_edge;
	struct wg_node *next;
};

struct wg_edge {
	struct hash_node node; /* by its two nodes */
	struct wg_node *wakee, *waker;
	uint64_t wakeups;
	struct wg_edge *next;
};

struct wake_graph {
	struct hash_table nodes, edges;
	struct wg_node *first_node, **node_tail;
	struct wg_edge *first_edge, **edge_tail;
	size_t nr_nodes, nr_edges;
};

struct node_key {
	const char *container, *pool;
};

struct wake_graph *wake_graph__new(void)
{
	struct wake_graph *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	if (hash_table_init(&g->nodes, 64) || hash_table_init(&g->edges, 64)) {
		hash_table_fini(&g->nodes);
		free(g);
		errno = ENOMEM;
		return NULL;
	}
	g->node_tail = &g->first_node;
	g->edge_tail = &g->first_edge;
	return g;
}

static uint64_t node_hash(const char *container, const char *pool)
{
	return hash_string(container) ^ hash_u64(hash_string(pool));
}

static bool node_is(const struct hash_node *n, const void *key)
{
	const struct wg_node *node = container_of(n, struct wg_node, node);
	const struct node_key *k = key;

	return !strcmp(node->container, k->container) && !strcmp(node->pool, k->pool);
}

static struct wg_node *node_get(struct wake_graph *g, const char *container, const char *pool)
{
	struct node_key key = { container, pool };
	uint64_t hash = node_hash(container, pool);
	struct hash_node *n;
	struct wg_node *node;

	n = hash_table_find(&g->nodes, hash, node_is, &key);
	if (n)
		return container_of(n, struct wg_node, node);
	node = calloc(1, sizeof(*node));
	if (!node)
		return NULL;
	node->container = strdup(container);
	if (!node->container) {
		free(node);
		return NULL;
	}
	snprintf(node->pool, sizeof(node->pool), "%s", pool);
	hash_table_add(&g->nodes, &node->node, hash);
	*g->node_tail = node;
	g->node_tail = &node->next;
	g->nr_nodes++;
	return node;
}

static uint64_t edge_hash(const struct wg_node *wakee, const struct wg_node *waker)
{
	return hash_u64((uint64_t)(uintptr_t)wakee) ^ hash_u64(~(uint64_t)(uintptr_t)waker);
}

static bool edge_is(const struct hash_node *n, const void *key)
{
	const struct wg_edge *e = container_of(n, struct wg_edge, node);
	const struct wg_node *const *ends = key;

	return e->wakee == ends[0] && e->waker == ends[1];
}

static struct wg_edge *edge_get(struct wake_graph *g, struct wg_node *wakee, struct wg_node *waker)
{
	const struct wg_node *ends[2] = { wakee, waker };
	uint64_t hash = edge_hash(wakee, waker);
	struct hash_node *n;
	struct wg_edge *e;

	n = hash_table_find(&g->edges, hash, edge_is, ends);
	if (n)
		return container_of(n, struct wg_edge, node);
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->wakee = wakee;
	e->waker = waker;
	wakee->in_edge = waker->in_edge = true;
	hash_table_add(&g->edges, &e->node, hash);
	*g->edge_tail = e;
	g->edge_tail = &e->next;
	g->nr_edges++;
	return e;
}

int wake_graph__add(struct wake_graph *g, const struct cg_interval *iv)
{
	const struct cg_wake_row *w;
	struct wg_node *wakee, *waker;
	struct wg_edge *e;
	int i;

	for (i = 0; i < iv->nr_pools; i++) {
		wakee = node_get(g, iv->pools[i].name, iv->pools[i].pool);
		if (!wakee)
			return -ENOMEM;
		wakee->cpu_ns += iv->pools[i].time_ns[CG_ONCPU];
		wakee->busiest_ns += iv->pools[i].busiest.on_cpu_ns;
		wakee->listed_ns += iv->interval_ns;
	}
	for (i = 0; i < iv->nr_wakes; i++) {
		w = &iv->wakes[i];
		wakee = node_get(g, w->container, w->pool);
		waker = wakee ? node_get(g, w->waker_container, w->waker_pool) : NULL;
		e = waker ? edge_get(g, wakee, waker) : NULL;
		if (!e)
			return -ENOMEM;
		e->wakeups += w->wakeups;
	}
	return 0;
}

/* A node's "container" and "pool" into obj under the keys given; a source has no container. */
static int json_end(cJSON *obj, const struct wg_node *n, const char *container_key,
		    const char *pool_key)
{
	int err = 0;

	if (*n->container)
		err = json_add_label(obj, container_key, n->container);
	return err ?: json_add_label(obj, pool_key, n->pool);
}

static int json_nodes(const struct wake_graph *g, cJSON *graph)
{
	cJSON *arr = cJSON_AddArrayToObject(graph, "nodes"), *item;
	const struct wg_node *n;
	int err = 0;

	if (!arr)
		return -ENOMEM;
	for (n = g->first_node; n && !err; n = n->next) {
		if (!n->in_edge)
			continue;
		item = json_append_object(arr);
		if (!item)
			return -ENOMEM;
		err = json_end(item, n, "container", "pool");
		if (!err && *n->container)
			err = json_add_number(item, "cpuSeconds", n->cpu_ns / 1e9);
		if (!err && *n->container)
			err = json_add_number(
				item, figure_columns[CG_FIG_BUSIEST_THREAD_CORES].name,
				n->listed_ns ? (double)n->busiest_ns / n->listed_ns : 0);
	}
	return err;
}

static int edge_order(const void *a, const void *b)
{
	const struct wg_edge *x = *(const struct wg_edge *const *)a;
	const struct wg_edge *y = *(const struct wg_edge *const *)b;

	return x->wakeups > y->wakeups ? -1 : x->wakeups < y->wakeups;
}

static int json_edges(const struct wake_graph *g, double seconds, cJSON *graph)
{
	cJSON *arr = cJSON_AddArrayToObject(graph, "edges"), *item;
	struct wg_edge **sorted, *e;
	size_t i = 0;
	int err = 0;

	sorted = calloc(g->nr_edges ?: 1, sizeof(*sorted));
	if (!arr || !sorted) {
		free(sorted);
		return -ENOMEM;
	}
	for (e = g->first_edge; e; e = e->next)
		sorted[i++] = e;
	qsort(sorted, g->nr_edges, sizeof(*sorted), edge_order);
	for (i = 0; i < g->nr_edges && !err; i++) {
		e = sorted[i];
		item = json_append_object(arr);
		if (!item) {
			err = -ENOMEM;
			break;
		}
		err = json_end(item, e->wakee, "container", "pool");
		if (!err)
			err = json_end(item, e->waker, "wakerContainer", "wakerPool");
		if (!err)
			err = json_add_number(item, "wakeups", (double)e->wakeups);
		if (!err)
			err = json_add_number(item, "wakeupsPerSecond",
					      seconds > 0 ? e->wakeups / seconds : 0);
	}
	free(sorted);
	return err;
}

int wake_graph__json(const struct wake_graph *g, double seconds, cJSON *root)
{
	cJSON *graph = cJSON_AddObjectToObject(root, "wakeGraph");
	int err;

	if (!graph)
		return -ENOMEM;
	err = json_nodes(g, graph);
	return err ?: json_edges(g, seconds, graph);
}

static void free_node(struct hash_table *t, struct hash_node *n, void *ctx)
{
	struct wg_node *node = container_of(n, struct wg_node, node);

	(void)t;
	(void)ctx;
	free(node->container);
	free(node);
}

static void free_edge(struct hash_table *t, struct hash_node *n, void *ctx)
{
	(void)t;
	(void)ctx;
	free(container_of(n, struct wg_edge, node));
}

void wake_graph__free(struct wake_graph *g)
{
	if (!g)
		return;
	hash_table_visit(&g->edges, free_edge, NULL);
	hash_table_visit(&g->nodes, free_node, NULL);
	hash_table_fini(&g->edges);
	hash_table_fini(&g->nodes);
	free(g);
}
