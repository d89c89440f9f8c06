/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Files cgstat makes in a folder someone else may control: never through a symlink, never
 * into a FIFO or a device, relative to the folder's descriptor so that the folder cannot be
 * swapped for a link between two files. Every writer of files (the outputs, report) opens
 * them here.
 */
#ifndef CGSTAT_FILES_H
#define CGSTAT_FILES_H

#include <stdbool.h>

/*
 * The folder at path, made first (mode 0755) if make and it is not there (*made says so, where
 * made is not NULL): its descriptor, or -errno (-ELOOP or -ENOTDIR where path is a symlink,
 * with or without trailing slashes).
 */
int folder_open(const char *path, bool make, bool *made);

/*
 * name in the folder dirfd, made empty for writing: its descriptor, or -errno. A regular file
 * already there is truncated (replace false) or removed and made anew (replace true, so that
 * nothing another hard link shares is written); a symlink is refused (-ELOOP), anything else
 * that is not a regular file too (-EINVAL).
 */
int file_create(int dirfd, const char *name, bool replace);

/*
 * name in the folder dirfd, opened to read: its descriptor, or -errno (-ELOOP for a symlink,
 * -EINVAL for anything else that is not a regular file: a FIFO would block the reader).
 */
int file_open_read(int dirfd, const char *name);

#endif /* CGSTAT_FILES_H */
