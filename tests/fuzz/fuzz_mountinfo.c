// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgroup_find_v2_mount() over arbitrary mountinfo text, and over a line the way the kernel
 * writes it (show_mountinfo() escapes space, tab, newline and backslash as \ooo) for a path
 * made of the input, which must come back decoded byte for byte.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sources/cgroup.h"
#include "fuzz.h"

/* Longer paths only repeat what shorter ones exercise, and keep each run fast. */
#define MAX_PATH_INPUT 1000

static int memfd = -1;
static char memfd_path[64];

/* The parser takes a path, so the text goes through a file: a memfd, to leave no file behind. */
static void set_file(const void *text, size_t len)
{
	const char *p = text;
	ssize_t n;

	if (memfd < 0) {
		memfd = memfd_create("mountinfo", MFD_CLOEXEC);
		CHECK(memfd >= 0);
		snprintf(memfd_path, sizeof(memfd_path), "/proc/self/fd/%d", memfd);
	}
	CHECK(ftruncate(memfd, 0) == 0);
	for (off_t off = 0; len; off += n, len -= (size_t)n) {
		n = pwrite(memfd, p + off, len, off);
		CHECK(n > 0);
	}
}

static void check_raw(const uint8_t *data, size_t size)
{
	struct cgroup_mount m, again;
	int ret;

	set_file(data, size);
	memset(&m, 0xa5, sizeof(m));
	ret = cgroup_find_v2_mount(memfd_path, &m);
	/* A memfd cannot fail to read, so no -errno other than the documented ones. */
	CHECK(ret == 0 || ret == -ENOENT || ret == -ENAMETOOLONG);
	if (!memmem(data, size, "cgroup2", 7))
		CHECK(ret == -ENOENT);
	if (ret == -ENAMETOOLONG)
		CHECK(size >= sizeof(m.path));
	if (!ret) {
		CHECK(fuzz_terminated(m.path, sizeof(m.path)));
		CHECK(fuzz_terminated(m.root, sizeof(m.root)));
		CHECK(m.path[0] == '/' && m.root[0] == '/');
		/* Decoding only shortens: \ooo is four bytes for one. */
		CHECK(strlen(m.path) <= size && strlen(m.root) <= size);
	}
	/* No state survives a call: the same file gives the same answer. */
	CHECK(cgroup_find_v2_mount(memfd_path, &again) == ret);
	if (!ret)
		CHECK(!strcmp(again.path, m.path) && !strcmp(again.root, m.root));
}

/* As the kernel's mangle_path(): space, tab, newline and backslash as \ooo. */
static size_t escape(char *out, const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\\')
			n += (size_t)sprintf(out + n, "\\%03o", c);
		else
			out[n++] = (char)c;
	}
	out[n] = '\0';
	return n;
}

static void check_round_trip(const uint8_t *data, size_t size)
{
	static char path[MAX_PATH_INPUT + 2], esc[4 * sizeof(path)], text[3 * sizeof(esc)];
	struct cgroup_mount m;
	size_t len = strnlen((const char *)data, size);
	int n;

	if (len > MAX_PATH_INPUT)
		len = MAX_PATH_INPUT;
	path[0] = '/';
	memcpy(path + 1, data, len);
	path[len + 1] = '\0';
	escape(esc, path, len + 1);
	/*
	 * A v1 hierarchy and an ordinary mount before it, optional fields of varying number, and a
	 * second cgroup2 mount after it that must not be the one found. The root is the path too,
	 * as inside a cgroup namespace.
	 */
	n = snprintf(
		text, sizeof(text),
		"27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
		"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime shared:12 - cgroup cgroup rw,cpu\n"
		"41 31 0:38 %s %s rw,nosuid shared:9 master:3 - cgroup2 cgroup2 rw\n"
		"99 31 0:99 / /second rw - cgroup2 none rw\n",
		esc, esc);
	CHECK(n > 0 && (size_t)n < sizeof(text));
	set_file(text, (size_t)n);
	CHECK(cgroup_find_v2_mount(memfd_path, &m) == 0);
	CHECK(!strcmp(m.path, path));
	CHECK(!strcmp(m.root, path));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_raw(data, size);
	check_round_trip(data, size);
	return 0;
}
