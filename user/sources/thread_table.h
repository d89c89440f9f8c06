/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The thread table's reader (bpf/cgstat.h, struct cg_thread_entry): what each thread of the
 * watched subtrees did since the last read, as thread records (record.h). Free of libbpf: it
 * reads the table where the collector mapped it, or a test's array, without root.
 */
#ifndef CGSTAT_THREAD_TABLE_H
#define CGSTAT_THREAD_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/cgstat.h"
#include "core/record.h"

struct thread_table;

/* A reader of a table of entries entries. NULL and errno on failure. */
struct thread_table *thread_table__new(uint32_t entries);
void thread_table__free(struct thread_table *tt);

/*
 * Read entries [0, n) of table at the end of an interval from..now (the snapshots' times, on
 * BPF's clock: a sleep in progress counts to now): a record for each thread in a watched subtree
 * that did more than sleep since its last, or is new, or exited. BPF writes the table
 * meanwhile: a figure read before an update counts at the next read, and one that reads lower
 * than the last (a sleep half-counted) waits until it passes it, so each thread's rows add up
 * to its figures. 0 or -errno.
 */
int thread_table__read(struct thread_table *tt, const struct cg_thread_entry *table, uint32_t n,
		       uint64_t from, uint64_t now);

/* The last read's records, valid until the next read. */
const struct cg_thread_rec *thread_table__recs(const struct thread_table *tt, size_t *nr);

/* The entries whose thread's exit the last read took in: read for good, for BPF to reuse. */
const uint32_t *thread_table__done(const struct thread_table *tt, size_t *nr);

#endif /* CGSTAT_THREAD_TABLE_H */
