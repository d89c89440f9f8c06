// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/files.h"

int folder_open(const char *path, bool make, bool *made)
{
	char *unslashed = strdup(path);
	size_t len;
	int fd;

	if (made)
		*made = false;
	if (!unslashed)
		return -ENOMEM;
	/* a path ending in a slash is followed through a symlink at its end, O_NOFOLLOW or not */
	len = strlen(unslashed);
	while (len > 1 && unslashed[len - 1] == '/')
		unslashed[--len] = '\0';
	if (make && mkdir(unslashed, 0755)) {
		if (errno != EEXIST) {
			fd = -errno;
			goto out;
		}
	} else if (make && made) {
		*made = true;
	}
	fd = open(unslashed, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
out:
	free(unslashed);
	return fd;
}

/*
 * fd if it is a regular file, made to block again (O_NONBLOCK only kept the open from
 * waiting on a FIFO); else it is closed: -EINVAL, or -errno.
 */
static int regular_only(int fd)
{
	struct stat st;
	int err = 0;

	if (fstat(fd, &st))
		err = errno;
	else if (!S_ISREG(st.st_mode))
		err = EINVAL;
	else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK))
		err = errno;
	if (err) {
		close(fd);
		return -err;
	}
	return fd;
}

int file_create(int dirfd, const char *name, bool replace)
{
	int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, fd, err;
	struct stat st;

	if (replace) {
		/* only a regular file is removed: a link or a FIFO there is refused below */
		if (!fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode) &&
		    unlinkat(dirfd, name, 0) && errno != ENOENT)
			return -errno;
		flags |= O_EXCL;
	} else {
		flags |= O_TRUNC;
	}
	/*
	 * O_NONBLOCK: a FIFO planted under the name would block the open until a reader came
	 * (regular files ignore the flag).
	 */
	fd = openat(dirfd, name, flags | O_NONBLOCK, 0644);
	if (fd < 0) {
		err = errno;
		/* with O_EXCL, what is still there was not a regular file */
		if (replace && err == EEXIST)
			err = !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode)
				      ? ELOOP
				      : EINVAL;
		return -(err == ENXIO ? EINVAL : err);
	}
	return regular_only(fd);
}

int file_open_read(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -(errno == ENXIO ? EINVAL : errno);
	return regular_only(fd);
}
