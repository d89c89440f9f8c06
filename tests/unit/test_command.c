// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * command.c's parts that need no root: cgroup.events as the kernel writes it, and finding a
 * command as execvp() would, against files this test makes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "command.h"

static void test_events(void)
{
	CHECK(cgroup_events_populated("populated 1\nfrozen 0\n") == 1);
	CHECK(cgroup_events_populated("populated 0\nfrozen 0\n") == 0);
	CHECK(cgroup_events_populated("frozen 0\npopulated 1\n") == 1);
	CHECK(cgroup_events_populated("populated 0") == 0);
	CHECK(cgroup_events_populated("") == -EINVAL);
	CHECK(cgroup_events_populated("frozen 0\n") == -EINVAL);
	CHECK(cgroup_events_populated("populated 2\n") == -EINVAL);
	CHECK(cgroup_events_populated("populated 10\n") == -EINVAL);
	CHECK(cgroup_events_populated("xpopulated 1\n") == -EINVAL);
}

static void make_file(const char *path, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	CHECK(fd >= 0);
	close(fd);
	chmod(path, mode);
}

static void test_find(void)
{
	char dir[] = "/tmp/cgstat-test-command-XXXXXX", path[256], env[512];

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/runs", dir);
	make_file(path, 0755);
	snprintf(path, sizeof(path), "%s/plain", dir);
	make_file(path, 0644);
	snprintf(path, sizeof(path), "%s/sub", dir);
	CHECK(!mkdir(path, 0755));

	snprintf(env, sizeof(env), "/nonexistent:%s", dir);
	setenv("PATH", env, 1);
	CHECK(command_find("runs") == 0);
	CHECK(command_find("plain") == -EACCES);
	CHECK(command_find("sub") == -EACCES); /* a directory is found, and cannot be run */
	CHECK(command_find("missing") == -ENOENT);
	CHECK(command_find("") == -ENOENT);
	snprintf(path, sizeof(path), "%s/runs", dir);
	CHECK(command_find(path) == 0);
	snprintf(path, sizeof(path), "%s/plain", dir);
	CHECK(command_find(path) == -EACCES);
	CHECK(command_find("/nonexistent/x") == -ENOENT);
	/* with a '/', PATH is not searched */
	CHECK(command_find("./runs") == -ENOENT || !access("./runs", X_OK));

	/* unset: execvp()'s default, which holds sh */
	unsetenv("PATH");
	CHECK(command_find("sh") == 0);
	CHECK(command_find("runs") == -ENOENT);

	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK(system(path) == 0);
}

int main(void)
{
	test_events();
	test_find();
	return check_done();
}
