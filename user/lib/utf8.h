/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * UTF-8 as the writers of text that people read need it: labels are any bytes a user chose,
 * and a terminal acts on control characters, C1's included (0x9b is a CSI in 8-bit mode).
 */
#ifndef CGSTAT_UTF8_H
#define CGSTAT_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong forms, surrogates
 * or code points above U+10FFFF), or 0 when s does not start one. s is NUL-terminated.
 */
size_t utf8_sequence(const unsigned char *s);

/*
 * The length of the unit at s (a whole UTF-8 sequence, or one byte that starts none), through
 * *len, and whether a terminal would act on it rather than show it: a C0 control or DEL, a
 * C1 control (U+0080 to U+009F), or a byte that is not UTF-8.
 */
bool utf8_unsafe(const unsigned char *s, size_t *len);

/*
 * A malloc'd copy of s in which every byte that is not part of a well-formed UTF-8 sequence
 * (RFC 3629: no overlong forms, surrogates or code points above U+10FFFF) is replaced by
 * U+FFFD. NULL and errno on failure.
 */
char *utf8_sanitize(const char *s);

#endif /* CGSTAT_UTF8_H */
