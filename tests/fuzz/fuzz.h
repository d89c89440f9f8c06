/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the fuzz targets share: an invariant check that libFuzzer sees, and C strings. */
#ifndef CGSTAT_FUZZ_H
#define CGSTAT_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* abort() rather than a return code: libFuzzer saves the input only for a crash. */
#define CHECK(cond)                                                                          \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, \
				#cond);                                                      \
			abort();                                                             \
		}                                                                            \
	} while (0)

/*
 * The input as a C string in a buffer of exactly size + 1 bytes, so that ASan catches a parser
 * reading past the terminator. Bytes after an embedded NUL are invisible to the parser, as they
 * would be in the real caller.
 */
static inline char *fuzz_strdup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* True when s[0..size) holds a NUL: a fixed-size string field was terminated. */
static inline int fuzz_terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

#endif /* CGSTAT_FUZZ_H */
