// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>

#include "core/totals.h"

static bool valid_merged(bool t, bool u, enum totals_validity v)
{
	return v == TOTALS_VALID_ALL ? t && u : t || u;
}

void totals_init(struct cg_amounts *t, enum totals_validity v)
{
	int i;

	memset(t, 0, sizeof(*t));
	if (v != TOTALS_VALID_ALL)
		return;
	for (i = 0; i < CG_MAX_EVENTS; i++)
		t->counter_valid[i] = true;
	t->cgroupfs_valid = (1u << CG_NR_CGROUPFS) - 1;
}

void totals_add(struct cg_amounts *t, const struct cg_amounts *u, int nr_events,
		enum totals_validity v)
{
	bool valid;
	int i;

	t->tasks += u->tasks;
	t->light |= u->light;
	for (i = 0; i < CG_NR_STATES; i++)
		t->time_ns[i] += u->time_ns[i];
	for (i = 0; i < CG_NR_COUNTS; i++)
		t->count[i] += u->count[i];
	if (u->runq_max_ns > t->runq_max_ns)
		t->runq_max_ns = u->runq_max_ns;
	/* inverted, so the larger is the shorter wait, and 0 (no wait) never wins */
	if (u->runq_min_inv > t->runq_min_inv)
		t->runq_min_inv = u->runq_min_inv;
	for (i = 0; i < nr_events; i++) {
		if (u->counter_valid[i])
			t->counter[i] += u->counter[i];
		t->counter_valid[i] = valid_merged(t->counter_valid[i], u->counter_valid[i], v);
	}
	for (i = 0; i < CG_NR_CGROUPFS; i++) {
		valid = u->cgroupfs_valid & (1u << i);
		if (valid)
			t->cgroupfs[i] += u->cgroupfs[i];
		if (valid_merged(t->cgroupfs_valid & (1u << i), valid, v))
			t->cgroupfs_valid |= 1u << i;
		else
			t->cgroupfs_valid &= ~(1u << i);
	}
}

void totals_record(struct cg_record *r, const struct cg_amounts *t, const struct cg_hist *hist)
{
	memset(r, 0, sizeof(*r));
	r->amounts = *t;
	if (hist)
		r->runq_hist = *hist;
}

int totals_table_init(struct totals_table *t, size_t nr_labels)
{
	memset(t, 0, sizeof(*t));
	return hash_table_init(&t->by_name, nr_labels);
}

void totals_table_fini(struct totals_table *t)
{
	hash_table_fini(&t->by_name);
}

static bool label_is(const struct hash_node *n, const void *name)
{
	return !strcmp(container_of(n, struct totals_label, node)->name, name);
}

struct totals_label *totals_table_find(const struct totals_table *t, const char *name)
{
	struct hash_node *n = hash_table_find(&t->by_name, hash_string(name), label_is, name);

	return n ? container_of(n, struct totals_label, node) : NULL;
}

void totals_table_link(struct totals_table *t, struct totals_label *l)
{
	hash_table_add(&t->by_name, &l->node, hash_string(l->name));
	l->prev = t->last;
	l->next = NULL;
	if (t->last)
		t->last->next = l;
	else
		t->first = l;
	t->last = l;
	t->nr++;
}

void totals_table_unlink(struct totals_table *t, struct totals_label *l)
{
	hash_table_del(&t->by_name, &l->node);
	if (l->prev)
		l->prev->next = l->next;
	else
		t->first = l->next;
	if (l->next)
		l->next->prev = l->prev;
	else
		t->last = l->prev;
	t->nr--;
}

void totals_label_init(struct totals_label *l, const char *name, enum totals_validity v)
{
	memset(l, 0, sizeof(*l));
	totals_init(&l->sum, v);
	l->name = name;
}

void totals_label_add(struct totals_label *l, const struct cg_record *r, int nr_events,
		      enum totals_validity v)
{
	totals_add(&l->sum, &r->amounts, nr_events, v);
	l->sum.tasks = r->tasks;
	l->cgid = r->cgid;
}
