// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"
#include "utf8.h"

static const char replacement[] = "\xef\xbf\xbd";

char *utf8_sanitize(const char *s)
{
	const unsigned char *in = (const unsigned char *)s;
	char *out, *p;
	size_t len;

	/* A replacement is 3 bytes for 1 byte of input, and nothing grows more. */
	out = malloc(3 * strlen(s) + 1);
	if (!out)
		return NULL;
	p = out;
	while (*in) {
		len = utf8_sequence(in);
		if (len) {
			memcpy(p, in, len);
			p += len;
			in += len;
		} else {
			memcpy(p, replacement, 3);
			p += 3;
			in++;
		}
	}
	*p = '\0';
	return out;
}

int json_add_number(cJSON *obj, const char *key, double value)
{
	/* Whole numbers stay as they are: past 2^53 / 1000 the scaling would change them. */
	if (value != floor(value))
		value = round(value * 1000) / 1000;
	return cJSON_AddNumberToObject(obj, key, value) ? 0 : -ENOMEM;
}

cJSON *json_add_object(cJSON *obj, const char *label)
{
	cJSON *child = NULL;
	char *key;

	key = utf8_sanitize(label);
	if (!key)
		return NULL;
	child = cJSON_CreateObject();
	if (!child || !cJSON_AddItemToObject(obj, key, child)) {
		cJSON_Delete(child);
		child = NULL;
		errno = ENOMEM;
	}
	free(key);
	return child;
}

int json_add_label(cJSON *obj, const char *key, const char *label)
{
	char *value = utf8_sanitize(label);
	int err = 0;

	if (!value)
		return -ENOMEM;
	if (!cJSON_AddStringToObject(obj, key, value))
		err = -ENOMEM;
	free(value);
	return err;
}

int json_add_health(cJSON *obj, const struct cg_health *health)
{
	int err;

	err = json_add_number(obj, "droppedEvents", (double)health->dropped_events);
	if (!err)
		err = json_add_number(obj, "missedSwitches", (double)health->missed_switches);
	if (!err)
		err = json_add_number(obj, "unseenWakeups", (double)health->unseen_wakeups);
	if (!err)
		err = json_add_number(obj, "inconsistencies", (double)health->inconsistencies);
	return err;
}
