// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sources/thread_table.h"

/* What the last read took of an entry's thread. */
struct entry_seen {
	uint32_t seq;	     /* whose: 0 none yet */
	bool done;	     /* its exit was read: the entry waits to be taken again */
	uint32_t first_read; /* the read that saw its thread first */
	uint64_t from;	     /* the start of that read's interval */
	uint64_t time_ns[CG_THREAD_TIMES];
	uint64_t count[CG_THREAD_COUNTS];
};

struct thread_table {
	uint32_t entries;
	uint32_t reads;
	struct entry_seen *seen;
	struct cg_thread_rec *recs;
	size_t nr_recs, recs_cap;
	uint32_t *done;
	size_t nr_done;
};

struct thread_table *thread_table__new(uint32_t entries)
{
	struct thread_table *tt = calloc(1, sizeof(*tt));

	if (!tt)
		return NULL;
	tt->entries = entries;
	/* calloc: untouched entries take no memory until threads have used them */
	tt->seen = calloc(entries, sizeof(*tt->seen));
	tt->done = calloc(entries, sizeof(*tt->done));
	if (!tt->seen || !tt->done) {
		thread_table__free(tt);
		errno = ENOMEM;
		return NULL;
	}
	return tt;
}

void thread_table__free(struct thread_table *tt)
{
	if (!tt)
		return;
	free(tt->seen);
	free(tt->done);
	free(tt->recs);
	free(tt);
}

static struct cg_thread_rec *rec_new(struct thread_table *tt)
{
	struct cg_thread_rec *grown;
	size_t cap;

	if (tt->nr_recs == tt->recs_cap) {
		cap = tt->recs_cap * 2 + 256;
		grown = realloc(tt->recs, cap * sizeof(*grown));
		if (!grown)
			return NULL;
		tt->recs = grown;
		tt->recs_cap = cap;
	}
	return memset(&tt->recs[tt->nr_recs++], 0, sizeof(*tt->recs));
}

/* What a figure moved by since *last, which it becomes; 0 while it reads lower. */
static uint64_t figure_moved(uint64_t *last, uint64_t now)
{
	uint64_t moved = now > *last ? now - *last : 0;

	if (moved)
		*last = now;
	return moved;
}

/*
 * Copy entry e of a thread whose seq is seq: false when another thread took the entry while
 * it was being copied (its figures are read next time). seq and exited are written by BPF's
 * exchanges, after the figures they publish.
 */
static bool entry_copy(const struct cg_thread_entry *e, uint32_t seq, struct cg_thread_entry *copy)
{
	uint32_t exited = __atomic_load_n(&e->exited, __ATOMIC_ACQUIRE);

	memcpy(copy, e, sizeof(*copy));
	copy->exited = exited;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&e->seq, __ATOMIC_RELAXED) == seq;
}

/* Entry index's thread, copied as e, since the last read: a record where it did something. */
static int entry_read(struct thread_table *tt, uint32_t index, const struct cg_thread_entry *e,
		      uint64_t from, uint64_t now)
{
	struct entry_seen *s = &tt->seen[index];
	struct cg_thread_rec r = { .tid = e->tid, .pid = e->pid, .exited = e->exited };
	uint64_t time_ns[CG_THREAD_TIMES], moved = 0;
	bool first = s->seq != e->seq;
	struct cg_thread_rec *rec;
	int i;

	if (first) {
		s->seq = e->seq;
		s->done = false;
		s->first_read = tt->reads;
		s->from = from;
		memcpy(s->time_ns, e->base_time_ns, sizeof(s->time_ns));
		memcpy(s->count, e->base_count, sizeof(s->count));
	}
	memcpy(time_ns, e->time_ns, sizeof(time_ns));
	if ((e->state == CG_SLEEP || e->state == CG_BLOCKED) && now > e->since)
		time_ns[e->state] += now - e->since;
	for (i = 0; i < CG_THREAD_TIMES; i++) {
		r.time_ns[i] = figure_moved(&s->time_ns[i], time_ns[i]);
		if (i != CG_SLEEP)
			moved |= r.time_ns[i];
	}
	for (i = 0; i < CG_THREAD_COUNTS; i++) {
		r.count[i] = figure_moved(&s->count[i], e->count[i]);
		moved |= r.count[i];
	}
	if (e->exited) {
		s->done = true;
		tt->done[tt->nr_done++] = index;
	}
	/* out of every watched subtree now: its figures move on, in no row */
	if (!e->nslots || !(moved || first || r.exited))
		return 0;
	rec = rec_new(tt);
	if (!rec)
		return -ENOMEM;
	r.intervals = tt->reads - s->first_read + 1;
	r.lived_ns = now > s->from ? now - s->from : 0;
	for (i = 0; i < CG_THREAD_TIMES; i++)
		r.total_ns[i] = s->time_ns[i] - e->base_time_ns[i];
	memcpy(r.comm, e->comm, sizeof(r.comm));
	r.nslots = e->nslots < CG_MAX_NEST ? e->nslots : CG_MAX_NEST;
	memcpy(r.slot, e->slot, sizeof(r.slot));
	memcpy(r.owner, e->owner, sizeof(r.owner));
	*rec = r;
	return 0;
}

int thread_table__read(struct thread_table *tt, const struct cg_thread_entry *table, uint32_t n,
		       uint64_t from, uint64_t now)
{
	struct cg_thread_entry copy;
	uint32_t index, seq;
	int err;

	tt->nr_recs = 0;
	tt->nr_done = 0;
	tt->reads++;
	if (n > tt->entries)
		n = tt->entries;
	for (index = 0; index < n; index++) {
		seq = __atomic_load_n(&table[index].seq, __ATOMIC_ACQUIRE);
		if (!seq || (seq == tt->seen[index].seq && tt->seen[index].done))
			continue;
		if (!entry_copy(&table[index], seq, &copy))
			continue;
		err = entry_read(tt, index, &copy, from, now);
		if (err)
			return err;
	}
	return 0;
}

const struct cg_thread_rec *thread_table__recs(const struct thread_table *tt, size_t *nr)
{
	*nr = tt->nr_recs;
	return tt->recs;
}

const uint32_t *thread_table__done(const struct thread_table *tt, size_t *nr)
{
	*nr = tt->nr_done;
	return tt->done;
}
