/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kubelet's log tree's names (sources/kubelet_logs.c): a pod's folder and a container's
 * log link, parsed. No I/O here: the names are untrusted text, each part checked and bounded.
 */
#ifndef CGSTAT_KUBELET_LOGS_H
#define CGSTAT_KUBELET_LOGS_H

#include "core/record.h"

/*
 * "NAMESPACE_POD_UID", a folder of pods/, into its parts (each CG_CONTAINER_NAME_MAX + 1 bytes,
 * uid CG_POD_UID_MAX + 1): 0, or -EINVAL for a name of another shape.
 */
int kubelet_parse_pod_dir(const char *name, char *pod_namespace, char *pod_name, char *uid);

/*
 * "POD_NAMESPACE_CONTAINER-ID.log", a link of containers/, into c's id, name, pod_name and
 * pod_namespace (the rest ""): 0, or -EINVAL for a name of another shape.
 */
int kubelet_parse_container_log(const char *name, struct cg_container *c);

#endif /* CGSTAT_KUBELET_LOGS_H */
