// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgroup.c against mountinfo fixtures, and against a directory tree under /tmp that stands in
 * for the cgroup2 mount (inode numbers play the cgroup ids) with a fake /proc beside it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* nftw() */
#endif
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "sources/cgroup.h"

#define NR_MANY 2000

/* Ids no directory of the fixture has (inode numbers are far smaller). */
#define FAKE_ID(n) ((UINT64_C(1) << 60) + (n))

static char tmp[64];

/* tmp + "/" + rel, in one of a few rotating buffers so that calls can be nested in a CHECK. */
static const char *at(const char *rel)
{
	static char bufs[8][PATH_MAX];
	static int next;
	char *buf = bufs[next++ % 8];

	snprintf(buf, PATH_MAX, "%s/%s", tmp, rel);
	return buf;
}

static void make_dir(const char *rel)
{
	if (mkdir(at(rel), 0755)) {
		perror(at(rel));
		exit(2);
	}
}

static void write_file(const char *rel, const char *text)
{
	FILE *f = fopen(at(rel), "w");

	if (!f || fputs(text, f) == EOF || fclose(f)) {
		perror(at(rel));
		exit(2);
	}
}

static uint64_t ino_of(const char *rel)
{
	struct stat st;

	if (lstat(at(rel), &st)) {
		perror(at(rel));
		exit(2);
	}
	return st.st_ino;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void test_mountinfo(void)
{
	struct cgroup_mount m;

	CHECK(cgroup_find_v2_mount(FIXTURES "/mountinfo/hybrid", &m) == 0);
	CHECK_STR(m.path, "/sys/fs/cgroup/unified");
	CHECK_STR(m.root, "/");

	CHECK(cgroup_find_v2_mount(FIXTURES "/mountinfo/v2", &m) == 0);
	CHECK_STR(m.path, "/sys/fs/cgroup");
	CHECK_STR(m.root, "/");

	/* \040 is a space, \011 a tab, \134 a backslash; the first cgroup2 line wins. */
	CHECK(cgroup_find_v2_mount(FIXTURES "/mountinfo/space", &m) == 0);
	CHECK_STR(m.path, "/mnt/my cgroups\\v2");
	CHECK_STR(m.root, "/kube pods/tab\there");

	/* Lines with "cgroup2" as the source or after optional fields must not fool the parser. */
	CHECK(cgroup_find_v2_mount(FIXTURES "/mountinfo/optional", &m) == 0);
	CHECK_STR(m.path, "/run/cg");
	CHECK_STR(m.root, "/container/42");

	CHECK(cgroup_find_v2_mount(FIXTURES "/mountinfo/garbage", &m) == 0);
	CHECK_STR(m.path, "/sys/fs/cgroup/good");
	CHECK_STR(m.root, "/");

	strcpy(m.path, "unchanged");
	CHECK(cgroup_find_v2_mount(FIXTURES "/mountinfo/no-cgroup2", &m) == -ENOENT);
	CHECK_STR(m.path, "unchanged");
	CHECK(cgroup_find_v2_mount(FIXTURES "/mountinfo/does-not-exist", &m) == -ENOENT);

	/* v1: "cpu" is its own hierarchy, not the "cpuacct" one or the "cpu,cpuacct" prefix. */
	CHECK(cgroup_find_v1_mount(FIXTURES "/mountinfo/hybrid", "cpu", &m) == 0);
	CHECK_STR(m.path, "/sys/fs/cgroup/cpu");
	CHECK(cgroup_find_v1_mount(FIXTURES "/mountinfo/hybrid", "cpuacct", &m) == 0);
	CHECK_STR(m.path, "/sys/fs/cgroup/cpuacct");
	CHECK(cgroup_find_v1_mount(FIXTURES "/mountinfo/v1-joined", "cpu", &m) == 0);
	CHECK_STR(m.path, "/sys/fs/cgroup/cpu,cpuacct");
	CHECK(cgroup_find_v1_mount(FIXTURES "/mountinfo/v1-joined", "cpuacct", &m) == 0);
	CHECK_STR(m.path, "/sys/fs/cgroup/cpu,cpuacct");
	CHECK(cgroup_find_v1_mount(FIXTURES "/mountinfo/v1-joined", "cpuset", &m) == -ENOENT);
	CHECK(cgroup_find_v1_mount(FIXTURES "/mountinfo/v2", "cpu", &m) == -ENOENT);
	CHECK(cgroup_find_v1_mount(FIXTURES "/mountinfo/hybrid", "nope", &m) == -ENOENT);
}

static void test_resolve(const struct cgroup_mount *m)
{
	char path[PATH_MAX], spec[64];
	uint64_t id;

	CHECK(cgroup_resolve(m, "a/b", path, sizeof(path), &id) == 0);
	CHECK_STR(path, at("mnt/a/b"));
	CHECK(id == ino_of("mnt/a/b"));

	CHECK(cgroup_resolve(m, at("mnt/a//./b/"), path, sizeof(path), &id) == 0);
	CHECK_STR(path, at("mnt/a/b"));
	CHECK(id == ino_of("mnt/a/b"));

	CHECK(cgroup_resolve(m, m->path, path, sizeof(path), &id) == 0);
	CHECK_STR(path, m->path);
	CHECK(id == ino_of("mnt"));

	CHECK(cgroup_resolve(m, ".", path, sizeof(path), &id) == 0);
	CHECK_STR(path, m->path);

	CHECK(cgroup_resolve(m, "a/b/../../x", path, sizeof(path), &id) == 0);
	CHECK_STR(path, at("mnt/x"));
	CHECK(id == ino_of("mnt/x"));

	/* A directory named by digits is a path first, an id only when no such path exists. */
	CHECK(cgroup_resolve(m, "4242", path, sizeof(path), &id) == 0);
	CHECK_STR(path, at("mnt/4242"));
	CHECK(id == ino_of("mnt/4242"));

	snprintf(spec, sizeof(spec), "%" PRIu64, ino_of("mnt/a/b/c"));
	CHECK(cgroup_resolve(m, spec, path, sizeof(path), &id) == 0);
	CHECK_STR(path, at("mnt/a/b/c"));
	CHECK(id == ino_of("mnt/a/b/c"));

	snprintf(spec, sizeof(spec), "%" PRIu64, ino_of("mnt"));
	CHECK(cgroup_resolve(m, spec, path, sizeof(path), &id) == 0);
	CHECK_STR(path, m->path);
	CHECK(id == ino_of("mnt"));

	/* outside/deep is reachable only through the symlink mnt/link, which is not followed. */
	snprintf(spec, sizeof(spec), "%" PRIu64, ino_of("outside/deep"));
	CHECK(cgroup_resolve(m, spec, path, sizeof(path), &id) == -ENOENT);
	CHECK(cgroup_resolve(m, "link", path, sizeof(path), &id) == -ENOTDIR);

	CHECK(cgroup_resolve(m, "nope", path, sizeof(path), &id) == -ENOENT);
	CHECK(cgroup_resolve(m, "a/nope", path, sizeof(path), &id) == -ENOENT);
	CHECK(cgroup_resolve(m, at("mnt/nope"), path, sizeof(path), &id) == -ENOENT);
	CHECK(cgroup_resolve(m, "a/file", path, sizeof(path), &id) == -ENOTDIR);

	CHECK(cgroup_resolve(m, at("outside"), path, sizeof(path), &id) == -EINVAL);
	CHECK(cgroup_resolve(m, at("mnt/../outside"), path, sizeof(path), &id) == -EINVAL);
	CHECK(cgroup_resolve(m, at("mntx"), path, sizeof(path), &id) == -EINVAL);
	CHECK(cgroup_resolve(m, "../outside", path, sizeof(path), &id) == -EINVAL);
	CHECK(cgroup_resolve(m, "/", path, sizeof(path), &id) == -EINVAL);
	CHECK(cgroup_resolve(m, "", path, sizeof(path), &id) == -EINVAL);

	CHECK(cgroup_resolve(m, "a/b", path, strlen(at("mnt/a/b")), &id) == -ENAMETOOLONG);
}

static void test_of_pid(const struct cgroup_mount *m)
{
	struct cgroup_mount sub = *m;
	char path[PATH_MAX], proc[PATH_MAX];
	uint64_t id;

	/* at() hands out one of 8 buffers, and this test asks it for more. */
	snprintf(proc, sizeof(proc), "%s", at("proc"));
	CHECK(cgroup_of_pid(m, proc, 1234, path, sizeof(path), &id) == 0);
	CHECK_STR(path, at("mnt/a/b"));
	CHECK(id == ino_of("mnt/a/b"));

	CHECK(cgroup_of_pid(m, proc, 66, path, sizeof(path), &id) == 0);
	CHECK_STR(path, m->path);
	CHECK(id == ino_of("mnt"));

	/* A mount of the subtree /a: the file's /a/b is b under that mount. */
	snprintf(sub.path, sizeof(sub.path), "%s", at("mnt/a"));
	strcpy(sub.root, "/a");
	CHECK(cgroup_of_pid(&sub, proc, 1234, path, sizeof(path), &id) == 0);
	CHECK_STR(path, at("mnt/a/b"));
	CHECK(id == ino_of("mnt/a/b"));

	CHECK(cgroup_of_pid(m, proc, 4321, path, sizeof(path), &id) == -ESRCH);
	CHECK(cgroup_of_pid(m, proc, 0, path, sizeof(path), &id) == -ESRCH);
	CHECK(cgroup_of_pid(m, proc, 77, path, sizeof(path), &id) == -ENOENT);
	CHECK(cgroup_of_pid(m, proc, 99, path, sizeof(path), &id) == -ENOENT);
	CHECK(cgroup_of_pid(m, proc, 555, path, sizeof(path), &id) == -ENOENT);
	CHECK(cgroup_of_pid(m, proc, 88, path, sizeof(path), &id) == -ENOENT);
	CHECK(cgroup_of_pid(m, proc, 321, path, sizeof(path), &id) == -ENOENT);

	/* v1: the line whose controllers have "cpu", whatever else they list. */
	CHECK(cgroup_v1_of_pid(m, proc, 77, "cpu", path, sizeof(path)) == 0);
	CHECK_STR(path, m->path);
	CHECK(cgroup_v1_of_pid(m, proc, 1234, "memory", path, sizeof(path)) == 0);
	CHECK_STR(path, at("mnt/x"));
	CHECK(cgroup_v1_of_pid(m, proc, 1234, "cpu", path, sizeof(path)) == -ENOENT);
	CHECK(cgroup_v1_of_pid(m, proc, 1234, "name=systemd", path, sizeof(path)) == 0);
	CHECK(cgroup_v1_of_pid(m, proc, 4321, "cpu", path, sizeof(path)) == -ESRCH);
	CHECK(cgroup_v1_of_pid(m, proc, 78, "cpu", path, sizeof(path)) == 0);
	CHECK_STR(path, at("mnt/a/b"));
	CHECK(cgroup_v1_of_pid(m, proc, 78, "cpuacct", path, sizeof(path)) == 0);
	CHECK(cgroup_v1_of_pid(m, proc, 78, "cpus", path, sizeof(path)) == -ENOENT);
}

static void test_label(const struct cgroup_mount *m)
{
	struct cgroup_mount slash = { .path = "/", .root = "/" };

	CHECK_STR(cgroup_label(m, m->path), "/");
	CHECK_STR(cgroup_label(m, at("mnt/a/b")), "/a/b");
	CHECK_STR(cgroup_label(m, at("mntx/y")), at("mntx/y"));
	CHECK_STR(cgroup_label(&slash, "/"), "/");
	CHECK_STR(cgroup_label(&slash, "/a/b"), "/a/b");
}

static void test_names(const struct cgroup_mount *m)
{
	struct cgroup_mount gone = { .path = "/nonexistent/cgstat/mount", .root = "/" };
	struct cgroup_names *names = cgroup_names__new(m);
	uint64_t many[NR_MANY];
	const char *ab, *unknown;
	size_t before;
	char rel[64], expected[64];
	bool all_right = true;

	CHECK(names != NULL);
	if (!names)
		return;
	/* the mount's own cgroup is known before any walk (known() never walks) */
	CHECK_STR(cgroup_names__known(names, ino_of("mnt")), "/");
	CHECK(cgroup_names__known(names, ino_of("mnt/a")) == NULL);
	ab = cgroup_names__get(names, ino_of("mnt/a/b"));
	CHECK_STR(ab, "/a/b");
	CHECK(cgroup_names__get(names, ino_of("mnt/a/b")) == ab);
	CHECK_STR(cgroup_names__get(names, ino_of("mnt")), "/");
	CHECK_STR(cgroup_names__get(names, ino_of("mnt/a/b/c")), "/a/b/c");

	snprintf(expected, sizeof(expected), "#%" PRIu64, ino_of("outside/deep"));
	unknown = cgroup_names__get(names, ino_of("outside/deep"));
	CHECK_STR(unknown, expected);
	CHECK(cgroup_names__get(names, ino_of("outside/deep")) == unknown);

	/* one walk an interval: a cgroup made after it is found in the next interval */
	make_dir("mnt/new");
	snprintf(expected, sizeof(expected), "#%" PRIu64, ino_of("mnt/new"));
	CHECK_STR(cgroup_names__get(names, ino_of("mnt/new")), expected);
	cgroup_names__new_interval(names);
	CHECK_STR(cgroup_names__get(names, ino_of("mnt/new")), "/new");
	cgroup_names__new_interval(names);

	/*
	 * A fallback handed out (a preempter's label) that a row's label replaces later in the
	 * same interval: the first pointer still reads "#id" until the next interval (ASan).
	 */
	{
		/* the interval's one walk, for an id that is nowhere, before mnt/late is made */
		const char *fallback = cgroup_names__get(names, 424242);
		const char *late_fallback;

		CHECK_STR(fallback, "#424242");
		make_dir("mnt/late");
		snprintf(expected, sizeof(expected), "#%" PRIu64, ino_of("mnt/late"));
		late_fallback = cgroup_names__get(names, ino_of("mnt/late"));
		CHECK_STR(late_fallback, expected);
		CHECK_STR(cgroup_names__add_child(names, ino_of("mnt/late"), ino_of("mnt"), "late"),
			  "/late");
		CHECK_STR(late_fallback, expected);
		CHECK_STR(cgroup_names__get(names, ino_of("mnt/late")), "/late");
	}
	cgroup_names__new_interval(names);

	/*
	 * Containers and units are labelled as such (sources/container_path.h), found by a walk,
	 * as a child of a known parent, or replacing a fallback; their paths stay paths.
	 */
	{
		const char *id = "4bc4dbfde87267fee060d72d1c5f4c7b2a0e0c2e0b0b9c3d2f1e0a9b8c7d6e5f";
		const char *fallback;
		char dir[128], sub[160], want[160];

		make_dir("mnt/docker");
		snprintf(dir, sizeof(dir), "mnt/docker/%s", id);
		make_dir(dir);
		snprintf(sub, sizeof(sub), "%s/sub", dir);
		make_dir(sub);
		make_dir("mnt/system.slice");
		make_dir("mnt/system.slice/cgstat-x.service");
		cgroup_names__new_interval(names);
		CHECK_STR(cgroup_names__get(names, ino_of(dir)), "docker:4bc4dbfde872");
		snprintf(want, sizeof(want), "/docker/%s", id);
		CHECK_STR(cgroup_names__path(names, ino_of(dir)), want);
		CHECK_STR(cgroup_names__known(names, ino_of("mnt/system.slice/cgstat-x.service")),
			  "cgstat-x.service");
		CHECK_STR(cgroup_names__known(names, ino_of("mnt/system.slice")), "/system.slice");
		CHECK_STR(cgroup_names__path(names, ino_of("mnt/system.slice")), "/system.slice");
		cgroup_names__forget(names, ino_of(sub));
		CHECK_STR(cgroup_names__add_child(names, ino_of(sub), ino_of(dir), "sub"),
			  "docker:4bc4dbfde872/sub");
		CHECK(cgroup_names__path(names, 424243) == NULL);
		fallback = cgroup_names__get(names, 424243);
		CHECK_STR(fallback, "#424243");
		CHECK(cgroup_names__path(names, 424243) == NULL);

		/* a container's fallback handed out, then its real label (ASan: both readable) */
		snprintf(dir, sizeof(dir), "mnt/docker/%.63s0",
			 "b06d4eb841f40c6cfc4b589c00000000"
			 "0000000000000000000000000000000");
		make_dir(dir);
		snprintf(want, sizeof(want), "#%" PRIu64, ino_of(dir));
		fallback = cgroup_names__get(names, ino_of(dir));
		CHECK_STR(fallback, want);
		CHECK_STR(
			cgroup_names__add_child(names, ino_of(dir), ino_of("mnt/docker"), dir + 11),
			"docker:b06d4eb841f4");
		CHECK_STR(fallback, want);
		cgroup_names__new_interval(names);
		CHECK_STR(cgroup_names__get(names, ino_of(dir)), "docker:b06d4eb841f4");
	}

	cgroup_names__forget(names, ino_of("mnt/a/b"));
	CHECK_STR(cgroup_names__get(names, ino_of("mnt/a/b")), "/a/b");
	ab = cgroup_names__get(names, ino_of("mnt/a/b"));

	/* Enough cgroups to grow the table several times; labels must survive the rehashes. */
	make_dir("mnt/many");
	for (int i = 0; i < NR_MANY; i++) {
		snprintf(rel, sizeof(rel), "mnt/many/d%d", i);
		make_dir(rel);
		many[i] = ino_of(rel);
	}
	cgroup_names__new_interval(names);
	CHECK_STR(cgroup_names__get(names, many[NR_MANY - 1]), "/many/d1999");
	for (int i = 0; i < NR_MANY; i++) {
		snprintf(expected, sizeof(expected), "/many/d%d", i);
		if (strcmp(cgroup_names__get(names, many[i]), expected))
			all_right = false;
	}
	CHECK(all_right);
	CHECK_STR(ab, "/a/b");

	/*
	 * Forget every even one and remove every odd directory: the odd ones can now come only
	 * from the table, so a deletion that broke a probe chain would show as "#id".
	 */
	for (int i = 0; i < NR_MANY; i += 2)
		cgroup_names__forget(names, many[i]);
	for (int i = 1; i < NR_MANY; i += 2) {
		snprintf(rel, sizeof(rel), "mnt/many/d%d", i);
		rmdir(at(rel));
	}
	all_right = true;
	for (int i = 1; i < NR_MANY; i += 2) {
		snprintf(expected, sizeof(expected), "/many/d%d", i);
		if (strcmp(cgroup_names__get(names, many[i]), expected))
			all_right = false;
	}
	CHECK(all_right);
	/* a forgotten id that still exists is found by the next interval's walk */
	cgroup_names__new_interval(names);
	CHECK_STR(cgroup_names__get(names, many[0]), "/many/d0");
	cgroup_names__forget(names, 12345);

	/*
	 * Cgroups that come and go without a task are found by walks but never asked for: once
	 * gone, the next walk lets them go, and keeps every label it handed out.
	 */
	/* the drain forgets removed cgroups; here their inode numbers may come back */
	for (int i = 1; i < NR_MANY; i += 2)
		cgroup_names__forget(names, many[i]);
	before = cgroup_names__size(names);
	make_dir("mnt/idle");
	for (int i = 0; i < 300; i++) {
		snprintf(rel, sizeof(rel), "mnt/idle/e%d", i);
		make_dir(rel);
	}
	cgroup_names__new_interval(names);
	CHECK_STR(cgroup_names__get(names, ino_of("mnt/idle")), "/idle");
	CHECK(cgroup_names__size(names) == before + 301);
	for (int i = 0; i < 300; i++) {
		snprintf(rel, sizeof(rel), "mnt/idle/e%d", i);
		rmdir(at(rel));
	}
	cgroup_names__new_interval(names);
	snprintf(expected, sizeof(expected), "#%" PRIu64, FAKE_ID(5));
	CHECK_STR(cgroup_names__get(names, FAKE_ID(5)), expected); /* an unknown id: a walk */
	CHECK(cgroup_names__size(names) == before + 2);
	CHECK_STR(ab, "/a/b");
	CHECK_STR(cgroup_names__get(names, ino_of("mnt/idle")), "/idle");

	/*
	 * A child labelled from its parent's label and its own name, as the BPF side read them:
	 * no walk, so it works for a cgroup already gone, and stays until forgotten.
	 */
	CHECK(cgroup_names__known(names, FAKE_ID(1)) == NULL);
	CHECK_STR(
		cgroup_names__add_child(names, FAKE_ID(1), ino_of("mnt/idle"), "gone, \"quoted\""),
		"/idle/gone, \"quoted\"");
	CHECK_STR(cgroup_names__known(names, FAKE_ID(1)), "/idle/gone, \"quoted\"");
	CHECK_STR(cgroup_names__add_child(names, FAKE_ID(2), ino_of("mnt"), "top"), "/top");
	CHECK_STR(cgroup_names__add_child(names, FAKE_ID(3), FAKE_ID(1), "deeper"),
		  "/idle/gone, \"quoted\"/deeper");
	/* an unknown parent, a parent known only by its number, an empty name: not here */
	errno = 0;
	CHECK(cgroup_names__add_child(names, FAKE_ID(4), FAKE_ID(8), "x") == NULL &&
	      errno == ENOENT);
	CHECK(cgroup_names__add_child(names, FAKE_ID(4), FAKE_ID(5), "x") == NULL);
	CHECK(cgroup_names__add_child(names, FAKE_ID(4), ino_of("mnt"), "") == NULL);
	/* a "#id" label is stored but not known, and a child's name replaces it */
	snprintf(expected, sizeof(expected), "#%" PRIu64, FAKE_ID(5));
	CHECK_STR(cgroup_names__stored(names, FAKE_ID(5)), expected);
	CHECK(cgroup_names__known(names, FAKE_ID(5)) == NULL);
	CHECK_STR(cgroup_names__add_child(names, FAKE_ID(5), ino_of("mnt"), "late"), "/late");
	CHECK_STR(cgroup_names__known(names, FAKE_ID(5)), "/late");
	CHECK(cgroup_names__stored(names, 999999) == NULL);
	/* labels handed out survive the next walk, though no directory has them */
	cgroup_names__new_interval(names);
	snprintf(expected, sizeof(expected), "#%" PRIu64, FAKE_ID(9));
	CHECK_STR(cgroup_names__get(names, FAKE_ID(9)), expected);
	CHECK_STR(cgroup_names__known(names, FAKE_ID(1)), "/idle/gone, \"quoted\"");
	cgroup_names__forget(names, FAKE_ID(1));
	CHECK(cgroup_names__known(names, FAKE_ID(1)) == NULL);
	cgroup_names__free(names);

	names = cgroup_names__new(&gone);
	CHECK(names != NULL);
	if (!names)
		return;
	CHECK_STR(cgroup_names__get(names, 5), "#5");
	CHECK_STR(cgroup_names__get(names, 0), "#0");
	cgroup_names__free(names);
}

/*
 * Inode numbers run in sequence and hash with few collisions; random ids collide often, so
 * they test the probing and the deletion. Unknown ids are stored as "#id" strings, and a lost
 * entry would come back as a new string, so pointer identity shows what the table kept.
 */
static void test_names_churn(void)
{
	struct cgroup_mount empty = { .root = "/" };
	struct cgroup_names *names;
	const char *labels[NR_MANY];
	uint64_t ids[NR_MANY], state = 88172645463325252ULL;
	char expected[32];
	bool kept = true, right = true;

	snprintf(empty.path, sizeof(empty.path), "%s", at("empty"));
	names = cgroup_names__new(&empty);
	CHECK(names != NULL);
	if (!names)
		return;
	for (int i = 0; i < NR_MANY; i++) {
		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		ids[i] = state;
		labels[i] = cgroup_names__get(names, ids[i]);
		snprintf(expected, sizeof(expected), "#%" PRIu64, ids[i]);
		if (!labels[i] || strcmp(labels[i], expected))
			right = false;
	}
	CHECK(right);
	for (int i = 0; i < NR_MANY; i += 2)
		cgroup_names__forget(names, ids[i]);
	for (int i = 1; i < NR_MANY; i += 2) {
		if (cgroup_names__get(names, ids[i]) != labels[i])
			kept = false;
	}
	CHECK(kept);
	for (int i = 0; i < NR_MANY; i += 2) {
		snprintf(expected, sizeof(expected), "#%" PRIu64, ids[i]);
		labels[i] = cgroup_names__get(names, ids[i]);
		if (!labels[i] || strcmp(labels[i], expected))
			right = false;
	}
	CHECK(right);
	for (int i = 0; i < NR_MANY; i++) {
		if (cgroup_names__get(names, ids[i]) != labels[i])
			kept = false;
	}
	CHECK(kept);
	cgroup_names__free(names);
}

int main(void)
{
	struct cgroup_mount m = { .root = "/" };

	snprintf(tmp, sizeof(tmp), "/tmp/cgstat-test-cgroup-XXXXXX");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 2;
	}
	make_dir("mnt");
	make_dir("mnt/a");
	make_dir("mnt/a/b");
	make_dir("mnt/a/b/c");
	make_dir("mnt/x");
	make_dir("mnt/4242");
	write_file("mnt/a/file", "");
	make_dir("mntx");
	make_dir("empty");
	make_dir("outside");
	make_dir("outside/deep");
	if (symlink("../outside", at("mnt/link"))) {
		perror("symlink");
		return 2;
	}
	make_dir("proc");
	make_dir("proc/1234");
	write_file("proc/1234/cgroup", "12:pids:/x\n4:memory:/x\n1:name=systemd:/y\n0::/a/b\n");
	make_dir("proc/66");
	write_file("proc/66/cgroup", "0::/\n");
	make_dir("proc/77");
	write_file("proc/77/cgroup", "4:memory:/x\n1:cpu:/\n");
	make_dir("proc/78");
	write_file("proc/78/cgroup", "3:cpuset:/x\n2:cpu,cpuacct:/a/b\n0::/\n");
	make_dir("proc/99");
	write_file("proc/99/cgroup", "0::/a/b (deleted)\n");
	make_dir("proc/555");
	make_dir("proc/88");
	write_file("proc/88/cgroup", "0::/../../elsewhere\n");
	make_dir("proc/321");
	write_file("proc/321/cgroup", "0::/a/nonexistent\n");
	snprintf(m.path, sizeof(m.path), "%s", at("mnt"));

	test_mountinfo();
	test_resolve(&m);
	test_of_pid(&m);
	test_label(&m);
	test_names(&m);
	test_names_churn();

	nftw(tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return check_done();
}
