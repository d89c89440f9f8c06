/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One-line messages on stderr about values that came from outside. No libbpf here. */
#ifndef CGSTAT_MESSAGE_H
#define CGSTAT_MESSAGE_H

#include <stdio.h>

/*
 * Write 'VALUE' with control characters (C1's too) and bytes that are not UTF-8 as \xNN, and
 * backslashes doubled, so that a value holding a newline (a label, a path) cannot split the
 * one line a message is, nor an escape sequence act on the terminal.
 */
void message_quote(FILE *f, const char *value);

/* The same for the first n bytes of value, into dst (cut short to fit len, always ended). */
void message_quote_buf(char *dst, size_t len, const char *value, size_t n);

/* The same escaping without the quotes, into dst (cut short to fit len, always ended). */
void message_escape_buf(char *dst, size_t len, const char *value);

#endif /* CGSTAT_MESSAGE_H */
