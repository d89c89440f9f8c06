// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * docker_parse_list() and docker_parse_event() on replies Debian's dockerd 20.10.24 (API 1.41)
 * gave (tests/unit/fixtures/docker: /containers/json?all=1 with a container given compose's
 * labels, and /events while containers were made, started, renamed and removed), and on
 * hostile ones.
 */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "lib/text.h"
#include "sources/docker_api.h"

#define BOOKIE "bfe0b0cfe01dd4a6a1442ef04fad07b3072aa4e02ad8877b84eb987290e2c33a"
#define BROKER "af7623ce73e7298150e7b74bd83958a2659bedeeed1110d63784b3c6585b9e58"

struct listed {
	struct cg_container c[4];
	int n;
};

static void keep(const struct cg_container *c, void *ctx)
{
	struct listed *l = ctx;

	if (l->n < 4)
		l->c[l->n++] = *c;
}

static char *fixture(const char *name)
{
	char path[512];
	int err;

	snprintf(path, sizeof(path), "%s/docker/%s", FIXTURES, name);
	return text_read_file(path, NULL, &err);
}

static void test_list(void)
{
	char *json = fixture("containers.json");
	struct listed l = { .n = 0 };

	CHECK(json != NULL);
	if (!json)
		return;
	CHECK(docker_parse_list(json, keep, &l) == 1);
	CHECK_STR(l.c[0].id, BOOKIE);
	CHECK_STR(l.c[0].name, "pulsar-bookie-2");
	CHECK_STR(l.c[0].image, "cgstat-busybox:test");
	CHECK_STR(l.c[0].compose_project, "pulsar");
	CHECK_STR(l.c[0].compose_service, "bookie");
	CHECK(l.c[0].compose_replica == 2);
	free(json);

	/* not an array; entries that are no container, or whose id is not one, skipped */
	l.n = 0;
	CHECK(docker_parse_list("{}", keep, &l) == -EINVAL);
	CHECK(docker_parse_list("not json", keep, &l) == -EINVAL);
	CHECK(docker_parse_list("[1, \"x\", {\"Id\": \"abc\"}, {\"Id\": \"" BOOKIE "0\"}, "
				"{\"Id\": \"" BOOKIE "\", \"Names\": [7], \"Labels\": [],"
				" \"Image\": {}}]",
				keep, &l) == 1);
	CHECK(l.n == 1 && !strcmp(l.c[0].name, "") && !strcmp(l.c[0].image, "") &&
	      !l.c[0].compose_replica);
	/* a name longer than kept is cut, never overflows; replica numbers compose writes only */
	l.n = 0;
	CHECK(docker_parse_list("[{\"Id\": \"" BOOKIE "\", \"Names\": [\"/"
				"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				"bbbb\"], \"Labels\": {\"com.docker.compose.container-number\":"
				" \"-1\"}}]",
				keep, &l) == 1);
	CHECK(strlen(l.c[0].name) == CG_CONTAINER_NAME_MAX && l.c[0].name[0] == 'a');
	CHECK(l.c[0].compose_replica == 0);
}

static void test_events(void)
{
	char *text = fixture("events.ndjson"), *line, *next;
	enum docker_event_kind kind;
	struct cg_container c;
	int named = 0, removed = 0, other = 0;

	CHECK(text != NULL);
	if (!text)
		return;
	for (line = text; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		CHECK(docker_parse_event(line, &kind, &c) == 0);
		named += kind == DOCKER_EVENT_NAMED;
		removed += kind == DOCKER_EVENT_REMOVED;
		other += kind == DOCKER_EVENT_OTHER;
		if (kind == DOCKER_EVENT_REMOVED) {
			CHECK_STR(c.id, BROKER);
			CHECK_STR(c.name, "broker-x");
		}
		if (kind == DOCKER_EVENT_NAMED && !strcmp(c.id, BOOKIE)) {
			CHECK_STR(c.name, "pulsar-bookie-2");
			CHECK_STR(c.compose_service, "bookie");
			CHECK(c.compose_replica == 2);
		}
	}
	/* two creates, two starts and a rename; a kill and a die; one destroy */
	CHECK(named == 5 && other == 2 && removed == 1);
	free(text);

	/* the rename carries the new name */
	CHECK(docker_parse_event("{\"Type\":\"container\",\"Action\":\"rename\",\"Actor\":{\"ID\":"
				 "\"" BROKER "\",\"Attributes\":{\"name\":\"broker-x\","
				 "\"oldName\":\"/broker\"}}}",
				 &kind, &c) == 0);
	CHECK(kind == DOCKER_EVENT_NAMED);
	CHECK_STR(c.name, "broker-x");
	/* others' events, and containers' without a valid id, change nothing */
	CHECK(docker_parse_event("{\"Type\":\"network\",\"Action\":\"create\",\"Actor\":{\"ID\":"
				 "\"" BROKER "\"}}",
				 &kind, &c) == 0);
	CHECK(kind == DOCKER_EVENT_OTHER);
	CHECK(docker_parse_event("{\"Type\":\"container\",\"Action\":\"start\",\"Actor\":{\"ID\":"
				 "\"../../etc\"}}",
				 &kind, &c) == 0);
	CHECK(kind == DOCKER_EVENT_OTHER && c.id[0] == '\0');
	CHECK(docker_parse_event("[]", &kind, &c) == -EINVAL);
	CHECK(docker_parse_event("{\"Type\":", &kind, &c) == -EINVAL);
}

int main(void)
{
	test_list();
	test_events();
	return check_done();
}
