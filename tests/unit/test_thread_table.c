// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The thread table's reader (user/sources/thread_table.c): a thread's rows are what its
 * figures moved by since the last read, from its base at its first sight; a sleep in progress
 * counts to the snapshot; a figure read low (BPF wrote it meanwhile) waits, so the rows still
 * add up; a thread that only slept has no row; an exit is read once, and its entry given back
 * comes again as a new thread.
 */
#include <string.h>

#include "check.h"
#include "sources/thread_table.h"

#define MS 1000000ULL

static struct cg_thread_entry table[4];

/* Entry i holds thread tid (its seq) from a base of on-CPU on_ms in watched slot 0. */
static void take(uint32_t i, uint32_t seq, uint32_t tid, uint64_t on_ms)
{
	struct cg_thread_entry *e = &table[i];

	memset(e, 0, sizeof(*e));
	e->seq = seq;
	e->tid = tid;
	e->pid = 100;
	snprintf(e->comm, sizeof(e->comm), "w-%u", tid);
	e->nslots = 1;
	e->state = CG_NR_STATES;
	e->time_ns[CG_ONCPU] = e->base_time_ns[CG_ONCPU] = on_ms * MS;
}

static const struct cg_thread_rec *read_at(struct thread_table *tt, uint64_t from_ms,
					   uint64_t now_ms, size_t *nr)
{
	CHECK(thread_table__read(tt, table, 4, from_ms * MS, now_ms * MS) == 0);
	return thread_table__recs(tt, nr);
}

static void test_rows(void)
{
	struct thread_table *tt = thread_table__new(4);
	const struct cg_thread_rec *r;
	const uint32_t *done;
	size_t nr, nr_done;

	/* a thread that ran 5 ms before its first sight: its rows count from there */
	take(0, 1, 10, 5);
	table[0].time_ns[CG_ONCPU] += 30 * MS;
	table[0].count[CG_NVCSW] = 3;
	r = read_at(tt, 0, 1000, &nr);
	CHECK(nr == 1 && r[0].tid == 10 && r[0].intervals == 1 && !r[0].exited);
	CHECK(nr == 1 && r[0].time_ns[CG_ONCPU] == 30 * MS && r[0].count[CG_NVCSW] == 3);
	CHECK(nr == 1 && r[0].intervals == 1 && r[0].lived_ns == 1000 * MS);

	/* asleep since 1500 ms at the snapshot at 2000: 500 ms of sleep, no row for it alone */
	table[0].state = CG_SLEEP;
	table[0].since = 1500 * MS;
	r = read_at(tt, 1000, 2000, &nr);
	CHECK(nr == 0);

	/* woken at 2200 (700 ms of sleep in all), ran 10 ms: the row has the sleep's rest */
	table[0].time_ns[CG_SLEEP] += 700 * MS;
	table[0].state = CG_RUNQ;
	table[0].time_ns[CG_ONCPU] += 10 * MS;
	r = read_at(tt, 2000, 3000, &nr);
	CHECK(nr == 1 && r[0].intervals == 3 && r[0].time_ns[CG_ONCPU] == 10 * MS);
	CHECK(nr == 1 && r[0].time_ns[CG_SLEEP] == 200 * MS);
	CHECK(nr == 1 && r[0].intervals == 3 && r[0].lived_ns == 3000 * MS);
	CHECK(nr == 1 && r[0].total_ns[CG_ONCPU] == 40 * MS && r[0].total_ns[CG_SLEEP] == 700 * MS);

	/* read while a sleep was half-counted: the time waits until the figure passes it */
	table[0].state = CG_BLOCKED;
	table[0].since = 3500 * MS;
	r = read_at(tt, 3000, 4000, &nr); /* 500 ms blocked so far */
	CHECK(nr == 1 && r[0].time_ns[CG_BLOCKED] == 500 * MS);
	table[0].state = CG_RUNQ; /* the wakeup's state, before its time was added */
	r = read_at(tt, 4000, 5000, &nr);
	CHECK(nr == 0);
	table[0].time_ns[CG_BLOCKED] += 1600 * MS; /* blocked 3500 to 5100 */
	r = read_at(tt, 5000, 6000, &nr);
	CHECK(nr == 1 && r[0].time_ns[CG_BLOCKED] == 1100 * MS);

	/* out of every watched subtree: no row, though it ran */
	table[0].nslots = 0;
	table[0].time_ns[CG_ONCPU] += 10 * MS;
	r = read_at(tt, 6000, 7000, &nr);
	CHECK(nr == 0);
	table[0].nslots = 1;

	/* its exit: read once, its last stretch in it, and the entry given back */
	table[0].time_ns[CG_ONCPU] += 2 * MS;
	table[0].exited = 1;
	r = read_at(tt, 7000, 8000, &nr);
	done = thread_table__done(tt, &nr_done);
	CHECK(nr == 1 && r[0].exited && r[0].time_ns[CG_ONCPU] == 2 * MS);
	CHECK(nr_done == 1 && done[0] == 0);
	r = read_at(tt, 8000, 9000, &nr);
	thread_table__done(tt, &nr_done);
	CHECK(nr == 0 && nr_done == 0);

	/* taken again by another thread (tid 10 again, too): a new thread from its own base */
	take(0, 2, 10, 100);
	table[0].time_ns[CG_ONCPU] += 1 * MS;
	r = read_at(tt, 9000, 10000, &nr);
	CHECK(nr == 1 && r[0].time_ns[CG_ONCPU] == 1 * MS && r[0].intervals == 1);
	thread_table__free(tt);
}

/* An entry no thread took yet is skipped; a thread new and gone between reads has its row. */
static void test_between(void)
{
	struct thread_table *tt = thread_table__new(4);
	const struct cg_thread_rec *r;
	size_t nr, nr_done;

	memset(table, 0, sizeof(table));
	take(2, 7, 30, 0);
	table[2].time_ns[CG_ONCPU] = 4 * MS;
	table[2].exited = 1;
	r = read_at(tt, 0, 1000, &nr);
	thread_table__done(tt, &nr_done);
	CHECK(nr == 1 && r[0].tid == 30 && r[0].intervals == 1 && r[0].exited);
	CHECK(nr == 1 && r[0].time_ns[CG_ONCPU] == 4 * MS && nr_done == 1);
	thread_table__free(tt);
}

int main(void)
{
	test_rows();
	test_between();
	return check_done();
}
