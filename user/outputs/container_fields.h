/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A container's fields as the JSON outputs (the stream's rows, the summary's containers) give
 * them beside its figures: runtime, containerId, image; Kubernetes' namespace, pod, podUid;
 * Compose's project, service, replica. The values are the runtimes' untrusted text, made valid
 * UTF-8 as every label is (lib/json_util.h). No libbpf here.
 */
#ifndef CGSTAT_CONTAINER_FIELDS_H
#define CGSTAT_CONTAINER_FIELDS_H

#include <cjson/cJSON.h>

#include "core/record.h"

/* c's known fields into obj (none for NULL): 0 or -ENOMEM. */
int container_fields_json(cJSON *obj, const struct cg_container *c);

#endif /* CGSTAT_CONTAINER_FIELDS_H */
