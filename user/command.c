// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE /* strchrnul(), pipe2() */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "command.h"
#include "privileges.h"
#include "lib/message.h"

struct command {
	char parent[PATH_MAX]; /* <mount>/cgstat-<pid> */
	char cgroup[PATH_MAX]; /* parent/<leaf> */
	char home[PATH_MAX];   /* cgstat's own cgroup, where what outlives the run goes */
	const char *home_label;
	const char *name; /* argv[0], for messages */
	pid_t pid;
	pid_t janitor;
	int janitor_fd; /* closed to have the janitor clean up; -1 after */
	int go_fd;	/* written once to let the command exec; -1 after */
	int error_fd;	/* the errno of a failed exec, from the child; -1 once read */
	int status;	/* as command__status() gives it */
	bool started;
};

static bool executable_file(const char *path, int *err)
{
	struct stat st;

	if (stat(path, &st)) {
		*err = errno;
		return false;
	}
	if (!S_ISREG(st.st_mode) || access(path, X_OK)) {
		*err = EACCES;
		return false;
	}
	return true;
}

int command_find(const char *file)
{
	const char *path = getenv("PATH"), *dir, *end;
	char full[PATH_MAX];
	int err = ENOENT, found = ENOENT;

	if (!*file)
		return -ENOENT;
	if (strchr(file, '/'))
		return executable_file(file, &err) ? 0 : -err;
	/* execvp()'s default when PATH is unset */
	if (!path)
		path = "/bin:/usr/bin";
	for (dir = path;; dir = end + 1) {
		end = strchrnul(dir, ':');
		/* an empty entry is the current directory, as for execvp() */
		if (snprintf(full, sizeof(full), "%.*s%s%s", (int)(end - dir), dir,
			     end == dir ? "" : "/", file) < (int)sizeof(full)) {
			if (executable_file(full, &err))
				return 0;
			if (err == EACCES)
				found = EACCES;
		}
		if (!*end)
			break;
	}
	return -found;
}

int cgroup_events_populated(const char *text)
{
	const char *line;

	for (line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (strncmp(line, "populated ", 10))
			continue;
		if ((line[10] == '0' || line[10] == '1') && (line[11] == '\n' || !line[11]))
			return line[10] - '0';
		return -EINVAL;
	}
	return -EINVAL;
}

/* Whether the cgroup holds a process; one that cannot be read holds none (it is gone). */
static bool populated(const char *cgroup)
{
	char path[PATH_MAX + 16], text[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.events", cgroup);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return false;
	text[n] = '\0';
	return cgroup_events_populated(text) == 1;
}

/* Write pid into cgroup's cgroup.procs. 0 or -errno. */
static int cgroup_move(const char *cgroup, pid_t pid)
{
	char path[PATH_MAX + 16];
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (dprintf(fd, "%d\n", (int)pid) < 0)
		err = -errno;
	close(fd);
	return err;
}

/* The child: wait for the go, become the sudo user, exec. Only async-signal-safe enough calls. */
static void __attribute__((noreturn)) child_run(char *const argv[], int go_fd, int error_fd)
{
	sigset_t none;
	ssize_t n;
	char go;
	int err;

	do
		n = read(go_fd, &go, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(COMMAND_NOT_RUN); /* cgstat gave up before counting began */
	/* cgstat blocks its stop signals to take them synchronously; the command must not */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	err = privileges_become_sudo_user(true);
	if (!err) {
		execvp(argv[0], argv);
		err = -errno;
	}
	err = -err;
	if (write(error_fd, &err, sizeof(err)) < 0)
		_exit(COMMAND_NOT_RUN);
	_exit(COMMAND_NOT_RUN);
}

/* Move what still runs in the command's cgroup to cgstat's own, so that it can be removed. */
static void move_leftovers(const struct command *c)
{
	char path[PATH_MAX + 16];
	int moved = 0, pass, pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", c->cgroup);
	/* a process that forks while the list is read leaves a child for the next pass */
	for (pass = 0; pass < 16 && populated(c->cgroup); pass++) {
		f = fopen(path, "re");
		if (!f)
			break;
		while (fscanf(f, "%d", &pid) == 1)
			moved += !cgroup_move(c->home, pid);
		fclose(f);
	}
	if (moved) {
		fprintf(stderr, "cgstat: %d process%s of the command still run%s; moved to cgroup ",
			moved, moved == 1 ? "" : "es", moved == 1 ? "s" : "");
		message_quote(stderr, c->home_label);
		fputc('\n', stderr);
	}
}

static void say(const char *what, const char *path, int err)
{
	fprintf(stderr, "cgstat: %s ", what);
	message_quote(stderr, path);
	fprintf(stderr, ": %s\n", strerror(err));
}

/*
 * The janitor: a process forked before cgstat drops its privileges, which removes the cgroups
 * once its pipe is closed, by cgstat at the end of the run or by the kernel if cgstat dies. The
 * v2 mount's root directory is not writable (mode 555): without CAP_DAC_OVERRIDE cgstat could
 * make cgstat-<pid> there but not remove it.
 */
static void __attribute__((noreturn)) janitor_run(const struct command *c, int fd)
{
	sigset_t all;
	char byte;
	ssize_t n;

	/*
	 * Out of cgstat's session and process group, every signal blocked: a hangup, or a
	 * signal sent to the group, that ends cgstat must not end the one that cleans up after it.
	 */
	setsid();
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	do
		n = read(fd, &byte, 1);
	while (n > 0 || (n < 0 && errno == EINTR));
	move_leftovers(c);
	if (rmdir(c->cgroup) && errno != ENOENT)
		say("cannot remove cgroup", c->cgroup, errno);
	if (rmdir(c->parent) && errno != ENOENT)
		say("cannot remove cgroup", c->parent, errno);
	_exit(0);
}

static int janitor_start(struct command *c)
{
	int fds[2];

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	c->janitor = fork();
	if (c->janitor < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (c->janitor == 0) {
		close(fds[1]);
		janitor_run(c, fds[0]);
	}
	close(fds[0]);
	c->janitor_fd = fds[1];
	return 0;
}

static const char *leaf_name(const char *label)
{
	if (!*label || strchr(label, '/') || !strcmp(label, ".") || !strcmp(label, "..") ||
	    strlen(label) > NAME_MAX)
		return "command";
	return label;
}

struct command *command__start(const struct cgroup_mount *m, char *const argv[], const char *leaf)
{
	int go[2] = { -1, -1 }, error[2] = { -1, -1 };
	struct command *c;
	uint64_t id;
	int err = 0;

	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->name = argv[0];
	c->pid = c->janitor = -1;
	c->go_fd = c->error_fd = c->janitor_fd = -1;
	c->status = -1;
	err = -cgroup_of_pid(m, "/proc", getpid(), c->home, sizeof(c->home), &id);
	if (err) {
		fprintf(stderr, "cgstat: cannot read its own cgroup: %s\n", strerror(err));
		goto fail_free;
	}
	c->home_label = cgroup_label(m, c->home);
	if (snprintf(c->parent, sizeof(c->parent), "%s/cgstat-%d", m->path, (int)getpid()) >=
		    (int)sizeof(c->parent) ||
	    snprintf(c->cgroup, sizeof(c->cgroup), "%s/%s", c->parent, leaf_name(leaf)) >=
		    (int)sizeof(c->cgroup)) {
		err = ENAMETOOLONG;
		say("cannot make cgroup", c->parent, err);
		goto fail_free;
	}
	if (mkdir(c->parent, 0755)) {
		err = errno;
		say("cannot make cgroup", c->parent, err);
		goto fail_free;
	}
	if (mkdir(c->cgroup, 0755)) {
		err = errno;
		say("cannot make cgroup", c->cgroup, err);
		rmdir(c->parent);
		goto fail_free;
	}
	err = -janitor_start(c);
	if (err) {
		rmdir(c->cgroup);
		rmdir(c->parent);
		goto fail_say;
	}
	/* from here on the janitor removes the cgroups, however this ends */
	if (pipe2(go, O_CLOEXEC) || pipe2(error, O_CLOEXEC)) {
		err = errno;
		goto fail_pipes;
	}
	/* orphans of the command are reaped here, and their exits end the wait for an empty cgroup
	 */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) {
		err = errno;
		goto fail_pipes;
	}
	fflush(NULL); /* the child must not write cgstat's buffered output again */
	c->pid = fork();
	if (c->pid < 0) {
		err = errno;
		goto fail_pipes;
	}
	if (c->pid == 0) {
		close(go[1]);
		close(error[0]);
		child_run(argv, go[0], error[1]);
	}
	close(go[0]);
	close(error[1]);
	c->go_fd = go[1];
	c->error_fd = error[0];
	err = -cgroup_move(c->cgroup, c->pid);
	if (err) {
		say("cannot move the command into", c->cgroup, err);
		goto fail_finish;
	}
	return c;

fail_pipes:
	if (go[0] >= 0) {
		close(go[0]);
		close(go[1]);
	}
	if (error[0] >= 0) {
		close(error[0]);
		close(error[1]);
	}
fail_say:
	fprintf(stderr, "cgstat: cannot start the command: %s\n", strerror(err));
fail_finish:
	if (c->janitor > 0) {
		command__finish(c);
		errno = err;
		return NULL;
	}
fail_free:
	free(c);
	errno = err;
	return NULL;
}

const char *command__cgroup(const struct command *c)
{
	return c->cgroup;
}

int command__go(struct command *c)
{
	char go = 1;
	int err = 0;

	if (write(c->go_fd, &go, 1) != 1)
		err = -errno;
	close(c->go_fd);
	c->go_fd = -1;
	c->started = !err;
	return err;
}

bool command__in_foreground(const struct command *c)
{
	static const int terminal_fds[] = { STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO };
	pid_t group = getpgid(c->pid), foreground;
	size_t i;

	for (i = 0; i < sizeof(terminal_fds) / sizeof(terminal_fds[0]); i++) {
		foreground = tcgetpgrp(terminal_fds[i]);
		if (foreground > 0)
			return group > 0 && group == foreground;
	}
	return false;
}

bool command__signal(struct command *c, int sig)
{
	if (c->status >= 0)
		return false;
	return kill(c->pid, sig) == 0;
}

/* The command exited with wait status st: its status, and why it did not run if it did not. */
static void command_exited(struct command *c, int st)
{
	int exec_err = 0;

	if (WIFEXITED(st))
		c->status = WEXITSTATUS(st);
	else
		c->status = 128 + WTERMSIG(st);
	/* its end of the pipe is closed now: an exec that failed wrote its errno before */
	if (read(c->error_fd, &exec_err, sizeof(exec_err)) == sizeof(exec_err) && exec_err) {
		fprintf(stderr, "cgstat: ");
		message_quote(stderr, c->name);
		fprintf(stderr, ": %s\n", strerror(exec_err));
		c->status = COMMAND_NOT_RUN;
	}
	close(c->error_fd);
	c->error_fd = -1;
}

bool command__reap(struct command *c)
{
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		if (pid == c->pid)
			command_exited(c, st);
	return c->status >= 0 && !populated(c->cgroup);
}

int command__status(const struct command *c)
{
	return c->status;
}

void command__finish(struct command *c)
{
	if (!c)
		return;
	if (!c->started && c->pid > 0 && c->status < 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
	} else if (c->pid > 0) {
		command__reap(c);
	}
	if (c->go_fd >= 0)
		close(c->go_fd);
	if (c->error_fd >= 0)
		close(c->error_fd);
	/* the janitor's end of the run: the cgroups are gone when cgstat exits */
	close(c->janitor_fd);
	waitpid(c->janitor, NULL, 0);
	free(c);
}
