// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kubelet's log tree followed (sources/kubelet_logs.c, through struct name_source): a
 * container's earlier instance, whose log the kubelet keeps after a restart, never taken for
 * the one that runs; a pod made again under its name (a new uid) selected over the old one; and
 * what goes from the tree forgotten at the next look.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "sources/name_source.h"

#define OLD_ID	"0000000000000000000000000000000000000000000000000000000000000001"
#define NEW_ID	"0000000000000000000000000000000000000000000000000000000000000002"
#define OLD_UID "11111111-1111-1111-1111-111111111111"
#define NEW_UID "22222222-2222-2222-2222-222222222222"

static char root[64];

static void put(const char *path)
{
	FILE *f = fopen(path, "w");

	if (f)
		fclose(f);
}

/* pods/pulsar_web-0_UID/web/N.log, and its link in containers/ for id. */
static void container_log(const char *uid, int restarts, const char *id)
{
	char dir[256], file[320], link[320], target[320];

	snprintf(dir, sizeof(dir), "%s/pods/pulsar_web-0_%s", root, uid);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/pods/pulsar_web-0_%s/web", root, uid);
	mkdir(dir, 0755);
	snprintf(file, sizeof(file), "%s/%d.log", dir, restarts);
	put(file);
	snprintf(target, sizeof(target), "../pods/pulsar_web-0_%s/web/%d.log", uid, restarts);
	snprintf(link, sizeof(link), "%s/containers/web-0_pulsar_web-%s.log", root, id);
	if (symlink(target, link))
		perror("symlink");
}

static bool is_web(const struct cg_container *c, const void *ctx)
{
	(void)ctx;
	return !strcmp(c->pod_namespace, "pulsar") && !strcmp(c->pod_name, "web-0") &&
	       !strcmp(c->name, "web");
}

/* Until find gives want (the thread looks each second): whether it did within 10 s. */
static bool selects(struct container_names *t, const char *want_id, const char *want_uid)
{
	char id[CG_CONTAINER_ID_LEN + 1], uid[CG_POD_UID_MAX + 1];
	struct timespec pause = { 0, 50 * 1000 * 1000 };

	for (int i = 0; i < 200; i++) {
		bool id_ok =
			container_names__find(t, is_web, NULL, id) == 0 && !strcmp(id, want_id);
		bool uid_ok = container_names__find_pod(t, "pulsar", "web-0", uid) == 0 &&
			      !strcmp(uid, want_uid);

		if (id_ok && uid_ok)
			return true;
		nanosleep(&pause, NULL);
	}
	return false;
}

int main(void)
{
	struct name_source_config cfg = { .kubelet_logs = root };
	struct container_names *t = container_names__new();
	struct timespec older[2] = { { 1000, 0 }, { 1000, 0 } };
	char path[256];
	void *state;

	snprintf(root, sizeof(root), "/tmp/cgstat-test-kubelet-XXXXXX");
	if (!t || !mkdtemp(root)) {
		perror("setup");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/pods", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/containers", root);
	mkdir(path, 0755);
	/* the pod made again (a new uid), its container restarted once: both logs kept */
	container_log(OLD_UID, 0, OLD_ID);
	container_log(NEW_UID, 1, NEW_ID);
	snprintf(path, sizeof(path), "%s/pods/pulsar_web-0_%s", root, OLD_UID);
	utimensat(AT_FDCWD, path, older, 0);

	state = kubelet_logs_source.start(t, &cfg);
	CHECK(state != NULL);
	if (!state)
		return check_done();
	CHECK(selects(t, NEW_ID, NEW_UID));

	/* the new ones gone from the tree: forgotten, the old ones selected again */
	snprintf(path, sizeof(path), "%s/containers/web-0_pulsar_web-%s.log", root, NEW_ID);
	unlink(path);
	snprintf(path, sizeof(path), "%s/pods/pulsar_web-0_%s/web/1.log", root, NEW_UID);
	unlink(path);
	snprintf(path, sizeof(path), "%s/pods/pulsar_web-0_%s/web", root, NEW_UID);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/pods/pulsar_web-0_%s", root, NEW_UID);
	rmdir(path);
	CHECK(selects(t, OLD_ID, OLD_UID));

	kubelet_logs_source.stop(state);
	container_names__free(t);
	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	CHECK(system(path) == 0);
	return check_done();
}
