// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * container_path_parse() over arbitrary paths: whatever it takes from one is of the characters
 * its field may hold (a label is made of them), where the container's own cgroup ends is a
 * component boundary of the path, and a label, made exactly for a container, pod or unit, ends
 * with the path below it and never looks like a path or an id's fallback ("/", "#").
 */
#include <errno.h>
#include <stdbool.h>

#include "fuzz.h"
#include "sources/container_path.h"

static bool all_of(const char *s, const char *allowed)
{
	return strspn(s, allowed) == strlen(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct container_path c;
	char *path = fuzz_strdup(data, size);
	size_t len = strlen(path), uid_len, id_len;
	enum container_kind kind = container_path_parse(path, &c);
	char *label;
	int ret;

	CHECK(kind == c.kind);
	CHECK(c.below <= len);
	CHECK(c.below == len || path[c.below] == '/');
	CHECK((unsigned int)c.runtime < NR_RUNTIMES);
	CHECK(container_runtime_name(c.runtime) != NULL);
	id_len = strlen(c.id);
	CHECK(id_len == 0 || id_len == CONTAINER_ID_LEN);
	CHECK(all_of(c.id, "0123456789abcdef"));
	CHECK((id_len != 0) == (kind == CONTAINER_OWN || kind == CONTAINER_MONITOR));
	uid_len = strlen(c.pod_uid);
	CHECK(uid_len == 0 || uid_len == 32 || uid_len == 36);
	CHECK(all_of(c.pod_uid, "0123456789abcdef-"));
	CHECK((uid_len != 0) || kind != CONTAINER_POD);
	CHECK((uid_len != 0) == (c.qos != QOS_NONE));
	CHECK(all_of(c.unit,
		     "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ:-_.\\@"));
	CHECK((c.unit[0] != '\0') == (kind == CONTAINER_UNIT));
	CHECK(c.unit[0] == '\0' || strstr(path, c.unit));
	CHECK(c.user >= -1);
	/* a unit is systemd's, and only a container or its monitor has a runtime besides */
	CHECK((c.runtime == RUNTIME_SYSTEMD) == (kind == CONTAINER_UNIT));
	CHECK(c.runtime == RUNTIME_NONE || c.runtime == RUNTIME_SYSTEMD || id_len);
	/* the container's id and the unit are in the path as they were read */
	CHECK(id_len == 0 || strstr(path, c.id));

	/* a label exactly for what has one, ending with the path below it */
	label = malloc(len + 128);
	CHECK(label);
	ret = container_path_label(path, label, len + 128);
	CHECK(ret == (kind == CONTAINER_NONE ? -ENOENT : 0));
	if (!ret) {
		size_t n = strlen(label), below = len - c.below;

		CHECK(n >= below && !strcmp(label + n - below, path + c.below));
		CHECK(label[0] != '/' && label[0] != '#');
	}
	free(label);
	free(path);
	return 0;
}
