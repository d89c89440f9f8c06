// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * docker_parse_list() and docker_parse_event() over any bytes, as an engine's reply or a line
 * of its event stream: every container taken has an id of 64 lowercase hex digits, bounded
 * and terminated fields and a replica compose could write; an event without such an id does
 * nothing to the names.
 */
#include <errno.h>
#include <stdbool.h>

#include "fuzz.h"
#include "sources/docker_api.h"

static void check_container(const struct cg_container *c)
{
	CHECK(strlen(c->id) == CONTAINER_ID_LEN);
	CHECK(strspn(c->id, "0123456789abcdef") == CONTAINER_ID_LEN);
	CHECK(fuzz_terminated(c->name, sizeof(c->name)));
	CHECK(fuzz_terminated(c->image, sizeof(c->image)));
	CHECK(fuzz_terminated(c->compose_project, sizeof(c->compose_project)));
	CHECK(fuzz_terminated(c->compose_service, sizeof(c->compose_service)));
	CHECK(c->compose_replica >= 0 && c->compose_replica <= 9999);
}

static void count(const struct cg_container *c, void *ctx)
{
	check_container(c);
	(*(int *)ctx)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *json = fuzz_strdup(data, size);
	enum docker_event_kind kind;
	struct cg_container c;
	int n = 0, ret;

	ret = docker_parse_list(json, count, &n);
	CHECK(ret == -EINVAL ? n == 0 : ret == n);
	ret = docker_parse_event(json, &kind, &c);
	CHECK(ret == 0 || ret == -EINVAL);
	if (ret || kind == DOCKER_EVENT_OTHER)
		CHECK(ret || c.id[0] == '\0' || strlen(c.id) == CONTAINER_ID_LEN);
	else
		check_container(&c);
	CHECK(!ret || kind == DOCKER_EVENT_OTHER);
	free(json);
	return 0;
}
