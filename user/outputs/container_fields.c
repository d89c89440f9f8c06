// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>

#include "lib/json_util.h"
#include "outputs/container_fields.h"

/* obj[key] = value where the runtime gave one. */
static int add_known(cJSON *obj, const char *key, const char *value)
{
	return value && *value ? json_add_label(obj, key, value) : 0;
}

int container_fields_json(cJSON *obj, const struct cg_container *c)
{
	int err;

	if (!c)
		return 0;
	err = add_known(obj, "runtime", c->runtime);
	if (!err && !c->pod)
		err = add_known(obj, "containerId", c->id);
	if (!err)
		err = add_known(obj, "image", c->image);
	if (!err)
		err = add_known(obj, "namespace", c->pod_namespace);
	if (!err)
		err = add_known(obj, "pod", c->pod_name);
	if (!err)
		err = add_known(obj, "podUid", c->pod_uid);
	if (!err)
		err = add_known(obj, "project", c->compose_project);
	if (!err)
		err = add_known(obj, "service", c->compose_service);
	if (!err && c->compose_replica)
		err = json_add_number(obj, "replica", c->compose_replica);
	return err;
}
