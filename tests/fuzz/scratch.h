/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A fuzz target's scratch folder: made once in $TMPDIR (else /tmp), removed with all it holds
 * when the target exits (libFuzzer ends a run with exit(), which runs atexit handlers).
 * run_fuzz.cmake gives each target a TMPDIR of its own and fails one that leaves anything in it.
 * The including file defines _GNU_SOURCE, for nftw().
 */
#ifndef CGSTAT_FUZZ_SCRATCH_H
#define CGSTAT_FUZZ_SCRATCH_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

static char scratch_root[256];

static inline int scratch_remove_entry(const char *path, const struct stat *st, int flag,
				       struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static inline void scratch_remove(void)
{
	nftw(scratch_root, scratch_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The folder's path, "$TMPDIR/cgstat-fuzz-<name>-XXXXXX" made unique; made once per process. */
static inline const char *scratch_make(const char *name)
{
	const char *tmp = getenv("TMPDIR");

	CHECK(!scratch_root[0]);
	snprintf(scratch_root, sizeof(scratch_root), "%s/cgstat-fuzz-%s-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp", name);
	CHECK(mkdtemp(scratch_root) != NULL);
	CHECK(atexit(scratch_remove) == 0);
	return scratch_root;
}

#endif /* CGSTAT_FUZZ_SCRATCH_H */
