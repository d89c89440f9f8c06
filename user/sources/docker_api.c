// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sources/docker_api.h"

/* A string member of obj into dst (at most max bytes, cut where it would not fit): "" if none. */
static void copy_string(const cJSON *obj, const char *key, char *dst, size_t max)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
	const char *s = cJSON_IsString(item) ? item->valuestring : NULL;

	dst[0] = '\0';
	if (!s)
		return;
	strncat(dst, s, max);
}

/* A replica number as compose writes it, "1" to "9999"; 0 otherwise. */
static int replica_of(const char *s)
{
	int n = 0;

	if (!s || !*s || strlen(s) > 4 || strspn(s, "0123456789") != strlen(s) || s[0] == '0')
		return 0;
	while (*s)
		n = n * 10 + (*s++ - '0');
	return n;
}

/* The compose fields of a labels object (the list's Labels, an event's Attributes). */
static void compose_of(const cJSON *labels, struct cg_container *c)
{
	const cJSON *number;

	copy_string(labels, "com.docker.compose.project", c->compose_project, CG_COMPOSE_FIELD_MAX);
	copy_string(labels, "com.docker.compose.service", c->compose_service, CG_COMPOSE_FIELD_MAX);
	number = cJSON_GetObjectItemCaseSensitive(labels, "com.docker.compose.container-number");
	c->compose_replica = cJSON_IsString(number) ? replica_of(number->valuestring) : 0;
}

/* A name as the API gives it, "/broker", without its slash. */
static void name_of(const char *s, struct cg_container *c)
{
	c->name[0] = '\0';
	if (!s)
		return;
	if (*s == '/')
		s++;
	strncat(c->name, s, CG_CONTAINER_NAME_MAX);
}

int docker_parse_list(const char *json, void (*fn)(const struct cg_container *c, void *ctx),
		      void *ctx)
{
	cJSON *root = cJSON_Parse(json);
	const cJSON *entry, *id, *names, *first;
	struct cg_container c;
	int n = 0;

	if (!cJSON_IsArray(root)) {
		cJSON_Delete(root);
		return -EINVAL;
	}
	cJSON_ArrayForEach(entry, root)
	{
		id = cJSON_GetObjectItemCaseSensitive(entry, "Id");
		if (!cJSON_IsObject(entry) || !cJSON_IsString(id) ||
		    !container_id_valid(id->valuestring, strlen(id->valuestring)))
			continue;
		memset(&c, 0, sizeof(c));
		memcpy(c.id, id->valuestring, CONTAINER_ID_LEN);
		names = cJSON_GetObjectItemCaseSensitive(entry, "Names");
		first = cJSON_IsArray(names) ? cJSON_GetArrayItem(names, 0) : NULL;
		name_of(cJSON_IsString(first) ? first->valuestring : NULL, &c);
		copy_string(entry, "Image", c.image, CG_CONTAINER_IMAGE_MAX);
		compose_of(cJSON_GetObjectItemCaseSensitive(entry, "Labels"), &c);
		fn(&c, ctx);
		n++;
	}
	cJSON_Delete(root);
	return n;
}

int docker_parse_event(const char *json, enum docker_event_kind *kind, struct cg_container *c)
{
	cJSON *root = cJSON_Parse(json);
	const cJSON *type, *action, *actor, *id, *attrs, *name;
	const char *a;

	memset(c, 0, sizeof(*c));
	*kind = DOCKER_EVENT_OTHER;
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return -EINVAL;
	}
	type = cJSON_GetObjectItemCaseSensitive(root, "Type");
	action = cJSON_GetObjectItemCaseSensitive(root, "Action");
	actor = cJSON_GetObjectItemCaseSensitive(root, "Actor");
	id = cJSON_GetObjectItemCaseSensitive(actor, "ID");
	if (!cJSON_IsString(type) || strcmp(type->valuestring, "container") ||
	    !cJSON_IsString(action) || !cJSON_IsString(id) ||
	    !container_id_valid(id->valuestring, strlen(id->valuestring)))
		goto out;
	memcpy(c->id, id->valuestring, CONTAINER_ID_LEN);
	attrs = cJSON_GetObjectItemCaseSensitive(actor, "Attributes");
	name = cJSON_GetObjectItemCaseSensitive(attrs, "name");
	name_of(cJSON_IsString(name) ? name->valuestring : NULL, c);
	copy_string(attrs, "image", c->image, CG_CONTAINER_IMAGE_MAX);
	compose_of(attrs, c);
	a = action->valuestring;
	if (!strcmp(a, "create") || !strcmp(a, "start") || !strcmp(a, "rename"))
		*kind = DOCKER_EVENT_NAMED;
	else if (!strcmp(a, "destroy"))
		*kind = DOCKER_EVENT_REMOVED;
out:
	cJSON_Delete(root);
	return 0;
}
