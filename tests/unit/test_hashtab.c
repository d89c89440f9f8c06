// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>

#include "check.h"
#include "lib/hashtab.h"

struct item {
	struct hash_node node;
	uint64_t key;
	int visits;
};

static bool item_is(const struct hash_node *n, const void *key)
{
	return container_of(n, struct item, node)->key == *(const uint64_t *)key;
}

static struct item *find(const struct hash_table *t, uint64_t key, uint64_t hash)
{
	struct hash_node *n = hash_table_find(t, hash, item_is, &key);

	return n ? container_of(n, struct item, node) : NULL;
}

static void count_visit(struct hash_table *t, struct hash_node *n, void *ctx)
{
	(void)t;
	container_of(n, struct item, node)->visits++;
	(*(int *)ctx)++;
}

/* Deletes the odd keys as it goes: a visitor may delete the node it is given. */
static void drop_odd(struct hash_table *t, struct hash_node *n, void *ctx)
{
	struct item *it = container_of(n, struct item, node);

	(void)ctx;
	if (it->key & 1)
		hash_table_del(t, n);
}

#define NR_ITEMS 5000

static void test_add_find_delete(void)
{
	static struct item items[NR_ITEMS];
	struct hash_table t;
	int i, visited = 0, found = 0;

	CHECK(hash_table_init(&t, 3) == 0);
	CHECK(t.nr_buckets == 4);
	for (i = 0; i < NR_ITEMS; i++) {
		items[i].key = 1000 + i;
		hash_table_add(&t, &items[i].node, hash_u64(items[i].key));
	}
	CHECK(t.nr_nodes == NR_ITEMS);
	/* grown as it filled: chains about one node long */
	CHECK(t.nr_buckets >= NR_ITEMS / 2);
	for (i = 0; i < NR_ITEMS; i++)
		found += find(&t, 1000 + i, hash_u64(1000 + i)) == &items[i];
	CHECK(found == NR_ITEMS);
	CHECK(!find(&t, 999, hash_u64(999)));
	CHECK(!find(&t, 1000 + NR_ITEMS, hash_u64(1000 + NR_ITEMS)));

	hash_table_visit(&t, count_visit, &visited);
	CHECK(visited == NR_ITEMS);
	for (i = 0; i < NR_ITEMS; i++)
		if (items[i].visits != 1)
			break;
	CHECK(i == NR_ITEMS);

	hash_table_visit(&t, drop_odd, NULL);
	CHECK(t.nr_nodes == NR_ITEMS / 2);
	found = 0;
	for (i = 0; i < NR_ITEMS; i++)
		found += find(&t, items[i].key, hash_u64(items[i].key)) ==
			 (items[i].key & 1 ? NULL : &items[i]);
	CHECK(found == NR_ITEMS);

	hash_table_del(&t, &items[0].node);
	CHECK(!find(&t, items[0].key, hash_u64(items[0].key)));
	CHECK(find(&t, items[2].key, hash_u64(items[2].key)) == &items[2]);
	hash_table_fini(&t);
	CHECK(!t.buckets && !t.nr_nodes);
}

/* Keys that share a hash are told apart by the match function alone. */
static void test_same_hash(void)
{
	struct item a = { .key = 1 }, b = { .key = 2 }, c = { .key = 3 };
	struct hash_table t;

	CHECK(hash_table_init(&t, 1) == 0);
	hash_table_add(&t, &a.node, 42);
	hash_table_add(&t, &b.node, 42);
	hash_table_add(&t, &c.node, 42);
	CHECK(find(&t, 1, 42) == &a);
	CHECK(find(&t, 2, 42) == &b);
	CHECK(find(&t, 3, 42) == &c);
	CHECK(!find(&t, 4, 42));
	CHECK(!find(&t, 1, 43));
	hash_table_del(&t, &b.node);
	CHECK(find(&t, 1, 42) == &a);
	CHECK(!find(&t, 2, 42));
	CHECK(find(&t, 3, 42) == &c);
	hash_table_fini(&t);
}

static void test_hashes(void)
{
	/* FNV-1a's published test vectors */
	CHECK(hash_string("") == 0xcbf29ce484222325ULL);
	CHECK(hash_string("a") == 0xaf63dc4c8601ec8cULL);
	/* consecutive ids land in different low bits, where the buckets are chosen */
	CHECK((hash_u64(1) & 0xff) != (hash_u64(2) & 0xff) ||
	      (hash_u64(2) & 0xff) != (hash_u64(3) & 0xff));
	CHECK(hash_u64(0) == 0);
}

int main(void)
{
	test_add_find_delete();
	test_same_hash();
	test_hashes();
	return check_done();
}
