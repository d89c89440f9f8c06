// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sources/host_view.h"

static char *said(const struct host_view *v, const struct cgroup_mount *m)
{
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	host_view__say(f, v, m);
	fclose(f);
	return text;
}

/* A mount of a subtree is said, its path quoted: a hostile one cannot split the line. */
static void test_subtree(void)
{
	struct cgroup_mount m = { .path = "/sys/fs/cgroup", .root = "/docker/x\n\x1b[2J" };
	struct host_view v;
	char *text;

	/* no such proc: the namespaces count as the host's */
	host_view__read("/nonexistent", &m, &v);
	CHECK(!v.pid_ns_private && !v.cgroup_ns_private && v.cgroup_subtree);
	text = said(&v, &m);
	CHECK(strstr(text, "shows the subtree '/docker/x\\x0a\\x1b[2J' alone") != NULL);
	CHECK(strchr(text, '\n') == text + strlen(text) - 1);
	free(text);
	/* in a cgroup namespace of its own, its line says it all: "/.." is no subtree */
	v.cgroup_ns_private = true;
	text = said(&v, &m);
	CHECK(strstr(text, "not in the host's cgroup namespace") != NULL);
	CHECK(strstr(text, "subtree") == NULL);
	free(text);
	strcpy(m.root, "/");
	host_view__read("/nonexistent", &m, &v);
	text = said(&v, &m);
	CHECK_STR(text, "");
	free(text);
}

int main(void)
{
	test_subtree();
	return check_done();
}
