// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The runtimes' names as labels, over any bytes: the input's first line is a container's name
 * as an engine could send it, the rest a cgroup's path (and the whole a kubelet log's file
 * name). A named container's label holds its name whole, a label always fits and is
 * terminated, and the kubelet's names parse into bounded parts free of the '_' that splits
 * them, with an id of 64 lowercase hex digits.
 */
#include <errno.h>
#include <limits.h>

#include "fuzz.h"
#include "sources/container_names.h"
#include "sources/kubelet_logs.h"

#define ID "4bc4dbfde87267fee060d72d1c5f4c7b2a0e0c2e0b0b9c3d2f1e0a9b8c7d6e5f"

static void check_kubelet(const char *s)
{
	char ns[CG_CONTAINER_NAME_MAX + 1], pod[CG_CONTAINER_NAME_MAX + 1];
	char uid[CG_POD_UID_MAX + 1];
	struct cg_container c;

	if (!kubelet_parse_container_log(s, &c)) {
		CHECK(strlen(c.id) == CG_CONTAINER_ID_LEN);
		CHECK(strspn(c.id, "0123456789abcdef") == CG_CONTAINER_ID_LEN);
		CHECK(c.name[0] && c.pod_name[0] && c.pod_namespace[0]);
		CHECK(!strchr(c.name, '_') && !strchr(c.pod_name, '_') &&
		      !strchr(c.pod_namespace, '_'));
	}
	if (!kubelet_parse_pod_dir(s, ns, pod, uid)) {
		CHECK(ns[0] && pod[0] && uid[0] && strlen(uid) <= CG_POD_UID_MAX);
		CHECK(!strchr(ns, '_') && !strchr(pod, '_'));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_strdup(data, size), *nl, buf[PATH_MAX];
	struct container_names *t = container_names__new();
	const char *path = "", *label;
	struct cg_container c = {};
	int ret;

	CHECK(t != NULL);
	check_kubelet(s);
	nl = strchr(s, '\n');
	if (nl) {
		*nl = '\0';
		path = nl + 1;
	}
	memcpy(c.id, ID, CG_CONTAINER_ID_LEN);
	snprintf(c.name, sizeof(c.name), "%s", s);
	ret = container_names__set(t, &c);
	CHECK(ret == 0 || (ret == -EINVAL && !c.name[0]));
	label = container_names__label(t, "/docker/" ID, buf, sizeof(buf));
	CHECK(fuzz_terminated(label, PATH_MAX));
	if (!ret)
		CHECK(strstr(label, c.name) != NULL);
	label = container_names__label(t, path, buf, sizeof(buf));
	CHECK(label == path || fuzz_terminated(buf, sizeof(buf)));
	container_names__free(t);
	free(s);
	return 0;
}
