/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What cgstat's own BPF programs cost (--bpf-stats): each loaded program's runs and the time
 * they took, from the kernel's BPF statistics (bpf_prog_info's run_cnt and run_time_ns). The
 * kernel keeps them only while they are on, and timing a run adds to every run of every BPF
 * program on the machine (docs/performance.md, "What --bpf-stats costs"), so they are on only
 * when asked, and only for as long as cgstat holds the fd that turned them on: the kernel
 * turns them off when it is closed, at exit or at a crash alike.
 */
#ifndef CGSTAT_BPF_PROGRAMS_H
#define CGSTAT_BPF_PROGRAMS_H

#include "core/record.h"

struct bpf_object;
struct bpf_programs;

/*
 * Turn the BPF statistics on (BPF_ENABLE_STATS) until the fd returned is closed. Needs
 * CAP_SYS_ADMIN: before privileges are dropped. The fd, or -errno.
 */
int bpf_programs__enable_stats(void);

/*
 * The programs of obj that are loaded (those with autoload off are not), their figures counted
 * from now on: the statistics may have been on before, for another tool. Read through the
 * programs' own fds, which needs CAP_BPF alone. NULL and errno on failure.
 */
struct bpf_programs *bpf_programs__new(struct bpf_object *obj);

/*
 * Each program's runs and run time since bpf_programs__new(), in obj's order, in the array
 * returned through progs (valid until the next call; names as long as obj), *nr of them.
 * 0 or -errno.
 */
int bpf_programs__read(struct bpf_programs *p, const struct cg_program_stats **progs, int *nr);

void bpf_programs__free(struct bpf_programs *p);

#endif /* CGSTAT_BPF_PROGRAMS_H */
