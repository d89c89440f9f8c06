// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "lib/files.h"

static char root[] = "/tmp/cgstat-unit-files-XXXXXX";

static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static bool holds(const char *name, const char *text)
{
	char path[256], buf[64] = "";
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return !strcmp(buf, text);
}

/* root/name, in one of two buffers by turns: a call's two paths are both good */
static char *at(const char *name)
{
	static char paths[2][256];
	static int turn;

	turn ^= 1;
	snprintf(paths[turn], sizeof(paths[turn]), "%s/%s", root, name);
	return paths[turn];
}

/* A folder given as a link is refused, however many slashes end the path. */
static void test_folder_open(void)
{
	char path[300];
	bool made;
	int fd;

	CHECK(!mkdir(at("target"), 0755));
	CHECK(!symlink(at("target"), at("link")));
	for (int slashes = 0; slashes < 3; slashes++) {
		snprintf(path, sizeof(path), "%s%.*s", at("link"), slashes, "//");
		fd = folder_open(path, true, &made);
		CHECK(fd == -ELOOP || fd == -ENOTDIR);
		CHECK(!made);
	}
	snprintf(path, sizeof(path), "%s/", at("target"));
	fd = folder_open(path, true, &made);
	CHECK(fd >= 0 && !made);
	close(fd);
	fd = folder_open(at("new"), true, &made);
	CHECK(fd >= 0 && made);
	close(fd);
	CHECK(folder_open(at("absent"), false, NULL) == -ENOENT);
}

/* Never through a link, never into a FIFO; replace makes a new file, leaving hard links be. */
static void test_file_create(void)
{
	int dirfd = open(root, O_RDONLY | O_DIRECTORY), fd;

	put("victim", "victim's");
	CHECK(!symlink(at("victim"), at("planted")));
	CHECK(file_create(dirfd, "planted", false) == -ELOOP);
	CHECK(file_create(dirfd, "planted", true) == -ELOOP);
	CHECK(holds("victim", "victim's"));
	CHECK(!mkfifo(at("fifo"), 0644));
	CHECK(file_create(dirfd, "fifo", false) == -EINVAL);
	CHECK(file_create(dirfd, "fifo", true) == -EINVAL);
	/* a second name of the victim's file: replaced, the victim unchanged */
	CHECK(!link(at("victim"), at("hard")));
	fd = file_create(dirfd, "hard", true);
	CHECK(fd >= 0 && write(fd, "new", 3) == 3);
	close(fd);
	CHECK(holds("hard", "new") && holds("victim", "victim's"));
	/* without replace, a regular file is truncated */
	put("old", "old text");
	fd = file_create(dirfd, "old", false);
	CHECK(fd >= 0);
	close(fd);
	CHECK(holds("old", ""));
	CHECK(file_open_read(dirfd, "planted") == -ELOOP);
	CHECK(file_open_read(dirfd, "fifo") == -EINVAL);
	fd = file_open_read(dirfd, "victim");
	CHECK(fd >= 0);
	close(fd);
	close(dirfd);
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(root))
		return 1;
	test_folder_open();
	test_file_create();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd))
		return 1;
	return check_done();
}
