// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json_util.h"
#include "lib/utf8.h"

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

cJSON *json_append_object(cJSON *array)
{
	cJSON *item = cJSON_CreateObject();

	if (item && !cJSON_AddItemToArray(array, item)) {
		cJSON_Delete(item);
		return NULL;
	}
	return item;
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
