/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `cgstat -- CMD`: the command run in a cgroup of its own, from before cgstat attaches until the
 * cgroup is empty. The cgroup is <v2 mount>/cgstat-<cgstat's pid>/<leaf>, made here and removed
 * at the end. The command is forked before anything is loaded (so that it gets root's
 * capabilities, or the sudo user's ids, and none of cgstat's files), waits in its cgroup, and
 * execs only once counting has begun. cgstat becomes a child subreaper, so that the command's
 * orphans are reaped here and their exits wake the run. A janitor process, forked with root's
 * privileges too, removes the cgroups at the end, or when cgstat dies. No libbpf here.
 */
#ifndef CGSTAT_COMMAND_H
#define CGSTAT_COMMAND_H

#include <stdbool.h>

#include "sources/cgroup.h"

/* Exit statuses as a shell gives them. */
#define COMMAND_NOT_RUN 127 /* not found, or could not be executed */

struct command;

/*
 * 0 when file can be executed as execvp() would find it (on PATH when it has no '/'), else
 * -ENOENT or -EACCES: checked before anything is loaded, so that a typo costs one line.
 */
int command_find(const char *file);

/*
 * The cgroup <mount>/cgstat-<pid>/<leaf> (leaf: a directory name; a label that is not one is
 * replaced by "command"), and argv's process forked and moved into it, waiting. NULL and errno,
 * having said why on stderr and left nothing behind.
 */
struct command *command__start(const struct cgroup_mount *m, char *const argv[], const char *leaf);

/* The command's cgroup, an absolute path: the cgroup to watch. */
const char *command__cgroup(const struct command *c);

/* Let the command exec. 0 or -errno. */
int command__go(struct command *c);

/*
 * Whether the command's process group is the foreground one of cgstat's terminal (stdin,
 * stdout or stderr): a Ctrl-C or a hangup there reached it as it reached cgstat.
 */
bool command__in_foreground(const struct command *c);

/* Send sig to the command; false when it has exited (nothing to send it to). */
bool command__signal(struct command *c, int sig);

/*
 * Reap every child that exited (the command and, as subreaper, its orphans). True once the
 * command has exited and its cgroup is empty: the run is over.
 */
bool command__reap(struct command *c);

/* The command's status as a shell gives it: its exit code, 128 + N for signal N, 127 when it
 * could not be executed; -1 while it runs. */
int command__status(const struct command *c);

/*
 * Kill the command if it never began, and have the janitor move any process still in its
 * cgroup to cgstat's own (saying so on stderr) and remove both cgroups; free c. Never fails;
 * NULL is allowed.
 */
void command__finish(struct command *c);

/* 1 when cgroup.events text says the cgroup holds a process, 0 when not, -EINVAL otherwise. */
int cgroup_events_populated(const char *text);

#endif /* CGSTAT_COMMAND_H */
