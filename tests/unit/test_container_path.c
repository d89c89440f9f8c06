// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * container_path_parse() on the paths the runtimes make, in the shapes their sources write
 * them (moby's cgroupfs and systemd drivers, Podman's libpod-*.scope and its conmon, the
 * kubelet's pod cgroups under both drivers and three QoS classes, CRI-O's crio-*.scope, kind's
 * nodes), and on near misses that must be no container.
 */
#include <errno.h>
#include <stdio.h>

#include "check.h"
#include "sources/container_path.h"

#define ID	   "4bc4dbfde87267fee060d72d1c5f4c7b2a0e0c2e0b0b9c3d2f1e0a9b8c7d6e5f"
#define ID2	   "b06d4eb841f40c6cfc4b589c0000000000000000000000000000000000000001"
#define UID	   "5e3a1c2d-8f4b-4a6e-9c1d-2b3a4c5d6e7f"
#define UID_	   "5e3a1c2d_8f4b_4a6e_9c1d_2b3a4c5d6e7f"
#define STATIC_UID "0123456789abcdef0123456789abcdef"

struct want {
	const char *path;
	enum container_kind kind;
	enum container_runtime runtime;
	const char *id;
	const char *pod_uid;
	enum pod_qos qos;
	const char *unit;
	long user;
	const char *below; /* what follows the container's own cgroup */
};

static const struct want cases[] = {
	/* Docker: cgroupfs driver (this VM's engine), systemd driver, a cgroup made inside */
	{ "/docker/" ID, CONTAINER_OWN, RUNTIME_DOCKER, ID, "", QOS_NONE, "", -1, "" },
	{ "docker/" ID, CONTAINER_OWN, RUNTIME_DOCKER, ID, "", QOS_NONE, "", -1, "" },
	{ "//docker//" ID "/", CONTAINER_OWN, RUNTIME_DOCKER, ID, "", QOS_NONE, "", -1, "/" },
	{ "/docker/" ID "/sub/inner", CONTAINER_OWN, RUNTIME_DOCKER, ID, "", QOS_NONE, "", -1,
	  "/sub/inner" },
	{ "/system.slice/docker-" ID ".scope", CONTAINER_OWN, RUNTIME_DOCKER, ID, "", QOS_NONE, "",
	  -1, "" },
	/* the engine itself is a unit */
	{ "/system.slice/docker.service", CONTAINER_UNIT, RUNTIME_SYSTEMD, "", "", QOS_NONE,
	  "docker.service", -1, "" },
	/* rootless Docker under a user's systemd */
	{ "/user.slice/user-1000.slice/user@1000.service/user.slice/docker-" ID ".scope",
	  CONTAINER_OWN, RUNTIME_DOCKER, ID, "", QOS_NONE, "", 1000, "" },
	/* Podman: root under machine.slice, its monitor, the inner cgroup, rootless, cgroupfs */
	{ "/machine.slice/libpod-" ID ".scope", CONTAINER_OWN, RUNTIME_PODMAN, ID, "", QOS_NONE, "",
	  -1, "" },
	{ "/machine.slice/libpod-" ID ".scope/container", CONTAINER_OWN, RUNTIME_PODMAN, ID, "",
	  QOS_NONE, "", -1, "/container" },
	{ "/machine.slice/libpod-conmon-" ID ".scope", CONTAINER_MONITOR, RUNTIME_PODMAN, ID, "",
	  QOS_NONE, "", -1, "" },
	{ "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope",
	  CONTAINER_OWN, RUNTIME_PODMAN, ID, "", QOS_NONE, "", 1000, "" },
	{ "/user.slice/user-1001.slice/user@1001.service/user.slice/libpod-conmon-" ID ".scope",
	  CONTAINER_MONITOR, RUNTIME_PODMAN, ID, "", QOS_NONE, "", 1001, "" },
	{ "/libpod_parent/libpod-" ID, CONTAINER_OWN, RUNTIME_PODMAN, ID, "", QOS_NONE, "", -1,
	  "" },
	/* Kubernetes, systemd driver: three QoS classes, containerd and CRI-O, pods alone */
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	  ".slice/cri-containerd-" ID ".scope",
	  CONTAINER_OWN, RUNTIME_CONTAINERD, ID, UID, QOS_BURSTABLE, "", -1, "" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice",
	  CONTAINER_POD, RUNTIME_NONE, "", UID, QOS_BURSTABLE, "", -1, "" },
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice/crio-" ID
	  ".scope",
	  CONTAINER_OWN, RUNTIME_CRIO, ID, UID, QOS_BESTEFFORT, "", -1, "" },
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
	  ".slice/crio-conmon-" ID ".scope",
	  CONTAINER_MONITOR, RUNTIME_CRIO, ID, UID, QOS_BESTEFFORT, "", -1, "" },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID ".scope", CONTAINER_OWN,
	  RUNTIME_CONTAINERD, ID, UID, QOS_GUARANTEED, "", -1, "" },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice", CONTAINER_POD, RUNTIME_NONE, "", UID,
	  QOS_GUARANTEED, "", -1, "" },
	/* cri-dockerd: Docker's systemd names inside a pod */
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice/docker-" ID
	  ".scope",
	  CONTAINER_OWN, RUNTIME_DOCKER, ID, UID, QOS_BURSTABLE, "", -1, "" },
	/* Kubernetes, cgroupfs driver: a bare id (containerd or cri-dockerd), crio-ID */
	{ "/kubepods/besteffort/pod" UID "/" ID, CONTAINER_OWN, RUNTIME_NONE, ID, UID,
	  QOS_BESTEFFORT, "", -1, "" },
	{ "/kubepods/burstable/pod" UID, CONTAINER_POD, RUNTIME_NONE, "", UID, QOS_BURSTABLE, "",
	  -1, "" },
	{ "/kubepods/pod" UID "/" ID, CONTAINER_OWN, RUNTIME_NONE, ID, UID, QOS_GUARANTEED, "", -1,
	  "" },
	{ "/kubepods/burstable/pod" UID "/crio-" ID, CONTAINER_OWN, RUNTIME_CRIO, ID, UID,
	  QOS_BURSTABLE, "", -1, "" },
	/* a static pod's uid is a hash */
	{ "/kubepods/burstable/pod" STATIC_UID "/" ID, CONTAINER_OWN, RUNTIME_NONE, ID, STATIC_UID,
	  QOS_BURSTABLE, "", -1, "" },
	/* kind: a node is a Docker container, its pods below it; the deepest container wins */
	{ "/docker/" ID2 "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
	  "kubelet-kubepods-besteffort-pod" UID_ ".slice/cri-containerd-" ID ".scope",
	  CONTAINER_OWN, RUNTIME_CONTAINERD, ID, UID, QOS_BESTEFFORT, "", -1, "" },
	{ "/docker/" ID2 "/kubelet.slice", CONTAINER_OWN, RUNTIME_DOCKER, ID2, "", QOS_NONE, "", -1,
	  "/kubelet.slice" },
	{ "/docker/" ID2 "/kubelet.slice/kubelet-kubepods.slice", CONTAINER_NONE, RUNTIME_NONE, "",
	  "", QOS_NONE, "", -1, "" },
	/* systemd units, the outermost: a user's instance and a machine delegate the rest */
	{ "/system.slice/cron.service", CONTAINER_UNIT, RUNTIME_SYSTEMD, "", "", QOS_NONE,
	  "cron.service", -1, "" },
	{ "/system.slice/systemd-journald.service/sub", CONTAINER_UNIT, RUNTIME_SYSTEMD, "", "",
	  QOS_NONE, "systemd-journald.service", -1, "/sub" },
	{ "/user.slice/user-1000.slice/user@1000.service", CONTAINER_UNIT, RUNTIME_SYSTEMD, "", "",
	  QOS_NONE, "user@1000.service", 1000, "" },
	{ "/user.slice/user-1000.slice/user@1000.service/app.slice/foo@2.service", CONTAINER_UNIT,
	  RUNTIME_SYSTEMD, "", "", QOS_NONE, "user@1000.service", 1000,
	  "/app.slice/foo@2.service" },
	{ "/machine.slice/systemd-nspawn@m.service/system.slice/cron.service", CONTAINER_UNIT,
	  RUNTIME_SYSTEMD, "", "", QOS_NONE, "systemd-nspawn@m.service", -1,
	  "/system.slice/cron.service" },
	{ "/user.slice/user-0.slice/session-3.scope", CONTAINER_UNIT, RUNTIME_SYSTEMD, "", "",
	  QOS_NONE, "session-3.scope", -1, "" },
	/* a unit inside a container is the container's own cgroup */
	{ "/docker/" ID "/system.slice/cron.service", CONTAINER_OWN, RUNTIME_DOCKER, ID, "",
	  QOS_NONE, "", -1, "/system.slice/cron.service" },
	/* a unit between kubepods and a pod (found by the fuzzer): the pod, no unit */
	{ "/kubepods/x.service/pod" UID "/" ID, CONTAINER_OWN, RUNTIME_NONE, ID, UID,
	  QOS_GUARANTEED, "", -1, "" },
	{ "/kubepods/x.service/pod" UID, CONTAINER_POD, RUNTIME_NONE, "", UID, QOS_GUARANTEED, "",
	  -1, "" },
	/* no container: near misses */
	{ "/", CONTAINER_NONE, RUNTIME_NONE, "", "", QOS_NONE, "", -1, "" },
	{ "", CONTAINER_NONE, RUNTIME_NONE, "", "", QOS_NONE, "", -1, "" },
	{ "/system.slice", CONTAINER_NONE, RUNTIME_NONE, "", "", QOS_NONE, "", -1, "" },
	{ "/cgstat-test-1/inner", CONTAINER_NONE, RUNTIME_NONE, "", "", QOS_NONE, "", -1, "" },
	{ "/docker", CONTAINER_NONE, RUNTIME_NONE, "", "", QOS_NONE, "", -1, "" },
	{ "/docker/4bc4dbfde87267fee060d72d", CONTAINER_NONE, RUNTIME_NONE, "", "", QOS_NONE, "",
	  -1, "" },
	{ "/docker/4BC4DBFDE87267FEE060D72D1C5F4C7B2A0E0C2E0B0B9C3D2F1E0A9B8C7D6E5F",
	  CONTAINER_NONE, RUNTIME_NONE, "", "", QOS_NONE, "", -1, "" },
	{ "/docker/" ID "0", CONTAINER_NONE, RUNTIME_NONE, "", "", QOS_NONE, "", -1, "" },
	{ "/other/" ID, CONTAINER_NONE, RUNTIME_NONE, "", "", QOS_NONE, "", -1, "" },
	{ "/system.slice/docker-" ID ".scopex", CONTAINER_NONE, RUNTIME_NONE, "", "", QOS_NONE, "",
	  -1, "" },
	{ "/kubepods/burstable/podXYZ/" ID, CONTAINER_NONE, RUNTIME_NONE, "", "", QOS_NONE, "", -1,
	  "" },
	{ "/kubepods/burstable", CONTAINER_NONE, RUNTIME_NONE, "", "", QOS_NONE, "", -1, "" },
	{ "/mykubepods.slice/x-pod" UID_ ".slice", CONTAINER_NONE, RUNTIME_NONE, "", "", QOS_NONE,
	  "", -1, "" },
	{ "/system.slice/bad name.service", CONTAINER_NONE, RUNTIME_NONE, "", "", QOS_NONE, "", -1,
	  "" },
	{ "/system.slice/.service", CONTAINER_NONE, RUNTIME_NONE, "", "", QOS_NONE, "", -1, "" },
	{ "/user.slice/user@x.service", CONTAINER_UNIT, RUNTIME_SYSTEMD, "", "", QOS_NONE,
	  "user@x.service", -1, "" },
};

/* Paths and their labels; NULL: labelled by the path itself. */
static const char *const labels[][2] = {
	{ "/docker/" ID, "docker:4bc4dbfde872" },
	{ "/docker/" ID "/sub", "docker:4bc4dbfde872/sub" },
	{ "/system.slice/docker-" ID ".scope", "docker:4bc4dbfde872" },
	{ "/machine.slice/libpod-conmon-" ID ".scope", "podman-conmon:4bc4dbfde872" },
	{ "/kubepods/besteffort/pod" UID "/" ID, "cri:4bc4dbfde872" },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID ".scope",
	  "containerd:4bc4dbfde872" },
	{ "/kubepods/burstable/pod" UID, "pod:" UID },
	{ "/system.slice/cron.service", "cron.service" },
	{ "/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service",
	  "user@1000.service/app.slice/foo.service" },
	{ "/system.slice", NULL },
	{ "/", NULL },
	{ "/cgstat-test-1", NULL },
};

int main(void)
{
	char too_short[19], just_enough[20];
	struct container_path c;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct want *w = &cases[i];
		enum container_kind kind = container_path_parse(w->path, &c);
		int before = check_failed;

		CHECK(kind == w->kind && c.kind == w->kind);
		CHECK(c.runtime == w->runtime);
		CHECK_STR(c.id, w->id);
		CHECK_STR(c.pod_uid, w->pod_uid);
		CHECK(c.qos == w->qos);
		CHECK_STR(c.unit, w->unit);
		CHECK(c.user == w->user);
		CHECK_STR(w->path + c.below, w->below);
		if (check_failed != before)
			fprintf(stderr, "  in case %zu: %s\n", i, w->path);
	}
	for (i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
		char buf[512];

		CHECK(container_path_label(labels[i][0], buf, sizeof(buf)) ==
		      (labels[i][1] ? 0 : -ENOENT));
		if (labels[i][1])
			CHECK_STR(buf, labels[i][1]);
	}
	CHECK(container_path_label("/docker/" ID, too_short, sizeof(too_short)) == -ENAMETOOLONG);
	CHECK(container_path_label("/docker/" ID, just_enough, sizeof(just_enough)) == 0);
	CHECK_STR(just_enough, "docker:4bc4dbfde872");
	CHECK_STR(container_runtime_name(RUNTIME_DOCKER), "docker");
	CHECK_STR(container_runtime_name(RUNTIME_NONE), "");
	CHECK_STR(container_runtime_name((enum container_runtime)99), "");
	return check_done();
}
