/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one hash table of user space: chained, intrusive (a struct hash_node in the caller's
 * entry, found back with container_of), keyed by a 64-bit hash that the caller computes and
 * matched by the caller, so that one table serves the summary's labels and the cgroup ids.
 * Adding never fails: a table that cannot grow takes longer chains, which lets a caller add an
 * entry where it cannot handle an error (the summary's retirement).
 */
#ifndef CGSTAT_HASHTAB_H
#define CGSTAT_HASHTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/util.h" /* container_of() */

struct hash_node {
	struct hash_node *next;
	uint64_t hash;
};

struct hash_table {
	struct hash_node **buckets;
	size_t nr_buckets; /* a power of two */
	size_t nr_nodes;
};

/* An empty table of nr_buckets (rounded up to a power of two) buckets: 0 or -ENOMEM. */
int hash_table_init(struct hash_table *t, size_t nr_buckets);

/* Frees the buckets; the entries are the caller's. */
void hash_table_fini(struct hash_table *t);

/* Link n under hash; twice the buckets once there are as many nodes as buckets, if it can. */
void hash_table_add(struct hash_table *t, struct hash_node *n, uint64_t hash);

/* Unlink n, which must be in t. */
void hash_table_del(struct hash_table *t, struct hash_node *n);

/* Whether n is the entry key names. */
typedef bool (*hash_match_fn)(const struct hash_node *n, const void *key);

/* The node under hash that match says is key's, or NULL. */
struct hash_node *hash_table_find(const struct hash_table *t, uint64_t hash, hash_match_fn match,
				  const void *key);

/* Called on each node once; it may delete (and free) the node it is given, and no other. */
typedef void (*hash_visit_fn)(struct hash_table *t, struct hash_node *n, void *ctx);

void hash_table_visit(struct hash_table *t, hash_visit_fn visit, void *ctx);

/* FNV-1a over a string's bytes: labels are any bytes, and paths often differ only at the end. */
uint64_t hash_string(const char *s);

/* A 64-bit id mixed over all bits (splitmix64's finalizer): inode numbers come in runs. */
uint64_t hash_u64(uint64_t v);

#endif /* CGSTAT_HASHTAB_H */
