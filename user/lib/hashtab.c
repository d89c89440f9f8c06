// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>

#include "lib/hashtab.h"

static struct hash_node **bucket_of(const struct hash_table *t, uint64_t hash)
{
	return &t->buckets[hash & (t->nr_buckets - 1)];
}

int hash_table_init(struct hash_table *t, size_t nr_buckets)
{
	size_t n = 1;

	while (n < nr_buckets)
		n *= 2;
	t->buckets = calloc(n, sizeof(*t->buckets));
	if (!t->buckets)
		return -ENOMEM;
	t->nr_buckets = n;
	t->nr_nodes = 0;
	return 0;
}

void hash_table_fini(struct hash_table *t)
{
	free(t->buckets);
	t->buckets = NULL;
	t->nr_buckets = 0;
	t->nr_nodes = 0;
}

static void grow(struct hash_table *t)
{
	struct hash_table bigger = { .nr_buckets = 2 * t->nr_buckets };
	struct hash_node *n, *next, **b;
	size_t i;

	bigger.buckets = calloc(bigger.nr_buckets, sizeof(*bigger.buckets));
	if (!bigger.buckets)
		return;
	for (i = 0; i < t->nr_buckets; i++) {
		for (n = t->buckets[i]; n; n = next) {
			next = n->next;
			b = bucket_of(&bigger, n->hash);
			n->next = *b;
			*b = n;
		}
	}
	free(t->buckets);
	t->buckets = bigger.buckets;
	t->nr_buckets = bigger.nr_buckets;
}

void hash_table_add(struct hash_table *t, struct hash_node *n, uint64_t hash)
{
	struct hash_node **b;

	if (t->nr_nodes >= t->nr_buckets)
		grow(t);
	b = bucket_of(t, hash);
	n->hash = hash;
	n->next = *b;
	*b = n;
	t->nr_nodes++;
}

void hash_table_del(struct hash_table *t, struct hash_node *n)
{
	struct hash_node **p = bucket_of(t, n->hash);

	while (*p != n)
		p = &(*p)->next;
	*p = n->next;
	t->nr_nodes--;
}

struct hash_node *hash_table_find(const struct hash_table *t, uint64_t hash, hash_match_fn match,
				  const void *key)
{
	struct hash_node *n;

	for (n = *bucket_of(t, hash); n; n = n->next)
		if (n->hash == hash && match(n, key))
			return n;
	return NULL;
}

void hash_table_visit(struct hash_table *t, hash_visit_fn visit, void *ctx)
{
	struct hash_node *n, *next;
	size_t i;

	for (i = 0; i < t->nr_buckets; i++) {
		for (n = t->buckets[i]; n; n = next) {
			next = n->next;
			visit(t, n, ctx);
		}
	}
}

uint64_t hash_string(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

uint64_t hash_u64(uint64_t v)
{
	v ^= v >> 30;
	v *= 0xbf58476d1ce4e5b9ULL;
	v ^= v >> 27;
	v *= 0x94d049bb133111ebULL;
	v ^= v >> 31;
	return v;
}
