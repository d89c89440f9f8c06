/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the JSON writers (the stream and the summary) share on top of cJSON: labels made valid
 * UTF-8, since a cgroup's name is any bytes and JSON text must be UTF-8, and numbers rounded
 * so that cJSON does not print 17 digits of binary noise.
 */
#ifndef CGSTAT_JSON_UTIL_H
#define CGSTAT_JSON_UTIL_H

#include <cjson/cJSON.h>

#include "record.h"

/*
 * A malloc'd copy of s in which every byte that is not part of a well-formed UTF-8 sequence
 * (RFC 3629: no overlong forms, surrogates or code points above U+10FFFF) is replaced by
 * U+FFFD. NULL and errno on failure.
 */
char *utf8_sanitize(const char *s);

/* obj[key] = value rounded to 3 decimals. 0 or -ENOMEM. */
int json_add_number(cJSON *obj, const char *key, double value);

/*
 * The run's health figures (droppedEvents, missedSwitches, unseenWakeups, inconsistencies).
 * 0 or -ENOMEM.
 */
int json_add_health(cJSON *obj, const struct cg_health *health);

/* obj[key] = label as a string, sanitized first. 0 or -ENOMEM. */
int json_add_label(cJSON *obj, const char *key, const char *label);

/* A new empty object at obj[label], the label sanitized first. NULL and errno on failure. */
cJSON *json_add_object(cJSON *obj, const char *label);

#endif /* CGSTAT_JSON_UTIL_H */
