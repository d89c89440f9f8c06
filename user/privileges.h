/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Least privilege: once the programs are attached and the counters open, the drain needs only
 * the bpf() syscall, and nothing it reads (/proc, /sys, the cgroup tree) needs root's ids. No
 * libbpf here.
 */
#ifndef CGSTAT_PRIVILEGES_H
#define CGSTAT_PRIVILEGES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * What loading takes, as a mask of CAP_* bits: CAP_BPF for the programs and maps, CAP_PERFMON
 * for programs that trace the scheduler and for perf counters on every CPU
 * (kernel.perf_event_paranoid is 2 on Debian). Nothing else: what cgstat reads (/proc/PID/cgroup,
 * the cgroup tree, /proc and /sys) is world-readable.
 */
uint64_t privileges_needed(void);

/*
 * Those of privileges_needed() and CAP_SYS_ADMIN that the process is permitted but does not
 * have in effect, raised: what file capabilities give when set as permitted only (the image's
 * binary, Dockerfile), so that execve() does not fail where the engine grants fewer than the
 * file names. 0 or -errno.
 */
int privileges_raise(void);

/* Those of privileges_needed() the calling thread lacks, as a mask: 0 when it may load. */
uint64_t privileges_missing(void);

/*
 * The ids cgstat runs as after privileges_drop(): nobody's where it runs as root with
 * CAP_SETUID and CAP_SETGID, else its own.
 */
void privileges_target(uid_t *uid, gid_t *gid);

/* The capabilities privileges_drop() keeps, as a mask of CAP_* bits. */
uint64_t privileges_kept(bool signals_command);

/*
 * Keep privileges_kept() alone (what of it the process holds), in the effective and permitted
 * sets and, with CAP_SETPCAP, the bounding set, with no inheritable or ambient capabilities and
 * no_new_privs set, as privileges_target()'s ids with the nr_groups groups (the Docker socket's:
 * sources/name_source.h) as the only supplementary ones, for the threads that settle keeping
 * them (privileges_settle()). Started as a user with capabilities (the systemd unit), the ids
 * and groups stay as they are. Call it while the process has one thread: capabilities and ids
 * are each thread's own, and a thread made later takes them from its maker. 0 or -errno.
 */
int privileges_drop(bool signals_command, const gid_t *groups, int nr_groups);

/*
 * With groups kept, privileges_drop() leaves CAP_SETGID and CAP_SETPCAP until each thread
 * settles: every thread made before the main thread settles calls this first thing (keeping
 * the groups if it needs them: the Docker names' thread), and the main thread calls it before
 * it makes any other (--listen's server), so that only the thread that connects to the socket
 * holds its group. The calling thread alone: raw system calls, as credentials are each
 * thread's own. 0 (also when there is nothing to settle) or -errno.
 */
int privileges_settle(bool keep_groups);

/*
 * The ids of the user who ran cgstat through sudo (SUDO_UID and SUDO_GID, where cgstat runs
 * as root): 0, -ENOENT when not through sudo, -EINVAL when they are not ids.
 */
int privileges_sudo_ids(uid_t *uid, gid_t *gid);

/*
 * Become that user, with its groups (and, with login_env, its HOME, USER and LOGNAME): for the
 * command of -- CMD, and for report and compare, which read and write a user's folders. 0 (also
 * when not through sudo) or -errno.
 */
int privileges_become_sudo_user(bool login_env);

#endif /* CGSTAT_PRIVILEGES_H */
