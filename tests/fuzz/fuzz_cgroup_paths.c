// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The input as a -c value for cgroup_resolve() and as the text of /proc/PID/cgroup for
 * cgroup_of_pid(), against a directory tree under /tmp that stands in for the v2 mount (inode
 * numbers play the cgroup ids), with a symlink and a file in it and a sibling directory whose
 * name starts like the mount's. Whatever the input, a cgroup found must be a real directory
 * below the mount, named by a normalised path, with the id of that directory: a -c value must
 * never reach outside the mount.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sources/cgroup.h"
#include "fuzz.h"
#include "scratch.h"

#define PID 1234

static const char *base;
static char proc[PATH_MAX];
static char cgroup_file[PATH_MAX];
static struct cgroup_mount mounts[2];

static void make(const char *rel, int kind)
{
	char path[PATH_MAX], target[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	if (kind == 'd') {
		CHECK(mkdir(path, 0755) == 0);
	} else if (kind == 'f') {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		CHECK(fd >= 0 && close(fd) == 0);
	} else {
		snprintf(target, sizeof(target), "%s/outside", base);
		CHECK(symlink(target, path) == 0);
	}
}

static void setup(void)
{
	static const struct {
		const char *rel;
		int kind;
	} tree[] = {
		{ "cg", 'd' },	      { "cg/a", 'd' },	    { "cg/a/b", 'd' },	{ "cg/a/b/c", 'd' },
		{ "cg/sp ace", 'd' }, { "cg/eq=ual", 'd' }, { "cg/123", 'd' },	{ "cg/file", 'f' },
		{ "cg/link", 'l' },   { "cgX", 'd' },	    { "outside", 'd' }, { "proc", 'd' },
		{ "proc/1234", 'd' },
	};

	base = scratch_make("cgroup-paths");
	for (size_t i = 0; i < sizeof(tree) / sizeof(tree[0]); i++)
		make(tree[i].rel, tree[i].kind);
	snprintf(proc, sizeof(proc), "%s/proc", base);
	snprintf(cgroup_file, sizeof(cgroup_file), "%s/%d/cgroup", proc, PID);
	/* The whole hierarchy, and a mount of the subtree /a as inside a cgroup namespace. */
	snprintf(mounts[0].path, sizeof(mounts[0].path), "%s/cg", base);
	strcpy(mounts[0].root, "/");
	snprintf(mounts[1].path, sizeof(mounts[1].path), "%s/cg/a/", base);
	strcpy(mounts[1].root, "/a");
}

static bool normalised(const char *path)
{
	if (path[0] != '/')
		return false;
	if (!strcmp(path, "/"))
		return true;
	for (const char *p = path; *p; p = strchrnul(p + 1, '/')) {
		size_t len = strcspn(p + 1, "/");

		/* p is at a '/': the component after it is neither empty, "." nor "..". */
		if (!len || (len == 1 && p[1] == '.') || (len == 2 && p[1] == '.' && p[2] == '.'))
			return false;
	}
	return true;
}

static bool below(const struct cgroup_mount *m, const char *path)
{
	size_t n = strlen(m->path);

	while (n > 1 && m->path[n - 1] == '/')
		n--;
	return !strncmp(path, m->path, n) && (path[n] == '\0' || path[n] == '/');
}

static void check_found(const struct cgroup_mount *m, const char *path, uint64_t id)
{
	struct stat st;

	CHECK(fuzz_terminated(path, PATH_MAX));
	CHECK(normalised(path));
	CHECK(below(m, path));
	CHECK(lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_ino == id);
}

static void check_resolve(const struct cgroup_mount *m, const char *spec)
{
	char *path = malloc(PATH_MAX);
	uint64_t id = 0;
	int ret;

	CHECK(path);
	ret = cgroup_resolve(m, spec, path, PATH_MAX, &id);
	CHECK(ret <= 0);
	if (!*spec)
		CHECK(ret == -EINVAL);
	if (!ret)
		check_found(m, path, id);
	free(path);
}

static void check_of_pid(const struct cgroup_mount *m, const uint8_t *data, size_t size)
{
	char *path = malloc(PATH_MAX);
	uint64_t id = 0;
	int ret;

	CHECK(path);
	ret = cgroup_of_pid(m, proc, PID, path, PATH_MAX, &id);
	CHECK(ret <= 0 && ret != -ESRCH);
	if ((size < 3 || memcmp(data, "0::", 3)) && !memmem(data, size, "\n0::", 4))
		CHECK(ret == -ENOENT);
	if (!ret)
		check_found(m, path, id);
	/* A process that is not there, and pids that cannot be. */
	CHECK(cgroup_of_pid(m, proc, PID + 1, path, PATH_MAX, &id) == -ESRCH);
	CHECK(cgroup_of_pid(m, proc, 0, path, PATH_MAX, &id) == -ESRCH);
	free(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *spec = fuzz_strdup(data, size);
	FILE *f;

	if (!base)
		setup();
	f = fopen(cgroup_file, "we");
	CHECK(f);
	CHECK(fwrite(data, 1, size, f) == size && fclose(f) == 0);
	for (size_t i = 0; i < sizeof(mounts) / sizeof(mounts[0]); i++) {
		check_resolve(&mounts[i], spec);
		check_of_pid(&mounts[i], data, size);
	}
	free(spec);
	return 0;
}
