/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every JSON writer (the stream, the summary, compare) needs on top of cJSON: labels made
 * valid UTF-8 (utf8_sanitize()), since a cgroup's name is any bytes and JSON text must be
 * UTF-8, and numbers rounded so that cJSON does not print 17 digits of binary noise.
 */
#ifndef CGSTAT_JSON_UTIL_H
#define CGSTAT_JSON_UTIL_H

#include <cjson/cJSON.h>

/* obj[key] = value rounded to 3 decimals. 0 or -ENOMEM. */
int json_add_number(cJSON *obj, const char *key, double value);

/* obj[key] = label as a string, sanitized first. 0 or -ENOMEM. */
int json_add_label(cJSON *obj, const char *key, const char *label);

/* A new empty object at obj[label], the label sanitized first. NULL and errno on failure. */
cJSON *json_add_object(cJSON *obj, const char *label);

/* A new empty object at the end of array. NULL on failure (no memory). */
cJSON *json_append_object(cJSON *array);

#endif /* CGSTAT_JSON_UTIL_H */
