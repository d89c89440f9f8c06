/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Least privilege: once the programs are attached and the counters open, the drain needs only
 * the bpf() syscall. No libbpf here.
 */
#ifndef CGSTAT_PRIVILEGES_H
#define CGSTAT_PRIVILEGES_H

/*
 * Keep CAP_BPF alone, in the effective, permitted and bounding sets, with no inheritable or
 * ambient capabilities and no_new_privs set. 0 or -errno.
 */
int privileges_drop(void);

#endif /* CGSTAT_PRIVILEGES_H */
