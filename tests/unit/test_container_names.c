// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The table of runtime names and the labels made of it: a container named, renamed, removed
 * and its name reused; the same name under two runtimes; a pod and its containers named from
 * the kubelet's log tree (kubelet_parse_*() on the names the kubelet makes, and on near misses);
 * names that could be read as another label; what a row says of its container; the one line
 * when a runtime does not answer.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sources/container_names.h"
#include "sources/kubelet_logs.h"

#define ID  "4bc4dbfde87267fee060d72d1c5f4c7b2a0e0c2e0b0b9c3d2f1e0a9b8c7d6e5f"
#define ID2 "b06d4eb841f40c6cfc4b589c0000000000000000000000000000000000000001"
#define ID3 "c06d4eb841f40c6cfc4b589c0000000000000000000000000000000000000002"
#define UID "5e3a1c2d-8f4b-4a6e-9c1d-2b3a4c5d6e7f"

static struct cg_container named(const char *id, const char *name)
{
	struct cg_container c = {};

	snprintf(c.id, sizeof(c.id), "%s", id);
	snprintf(c.name, sizeof(c.name), "%s", name);
	return c;
}

static const char *label(struct container_names *t, const char *path)
{
	static char buf[512];

	return container_names__label(t, path, buf, sizeof(buf));
}

static bool by_name(const struct cg_container *c, const void *ctx)
{
	return !strcmp(c->name, ctx);
}

static void test_docker(void)
{
	struct container_names *t = container_names__new();
	struct cg_container c = named(ID, "broker");
	unsigned long g;
	char id[CG_CONTAINER_ID_LEN + 1];

	CHECK(t != NULL);
	if (!t)
		return;
	/* unknown: the short id, as with no runtime */
	CHECK_STR(label(t, "/docker/" ID), "docker:4bc4dbfde872");
	g = container_names__generation(t);
	snprintf(c.image, sizeof(c.image), "busybox");
	CHECK(container_names__set(t, &c) == 0);
	CHECK(container_names__generation(t) != g);
	CHECK_STR(label(t, "/docker/" ID), "broker");
	CHECK_STR(label(t, "/system.slice/docker-" ID ".scope"), "broker");
	CHECK_STR(label(t, "/docker/" ID "/sub"), "broker/sub");
	/* a start event again: the same label, no new generation */
	g = container_names__generation(t);
	CHECK(container_names__set(t, &c) == 0);
	CHECK(container_names__generation(t) == g);
	/* renamed: its rows take the new name */
	c = named(ID, "broker-old");
	CHECK(container_names__set(t, &c) == 0);
	CHECK_STR(label(t, "/docker/" ID), "broker-old");
	/* a new container under the first's name: told apart by its short id, never merged */
	c = named(ID2, "broker");
	CHECK(container_names__set(t, &c) == 0);
	CHECK_STR(label(t, "/docker/" ID2), "broker@b06d4eb841f4");
	CHECK(container_names__find(t, by_name, "broker", id) == 0);
	CHECK_STR(id, ID2);
	/* removed: still named for its last rows, no longer selected */
	container_names__remove(t, ID2);
	CHECK_STR(label(t, "/docker/" ID2), "broker@b06d4eb841f4");
	CHECK(container_names__find(t, by_name, "broker", id) == -ENOENT);
	/* the same name from Podman (through its compatible socket): told apart too */
	c = named(ID3, "broker");
	CHECK(container_names__set(t, &c) == 0);
	CHECK_STR(label(t, "/machine.slice/libpod-" ID3 ".scope"), "broker@c06d4eb841f4");
	CHECK_STR(label(t, "/machine.slice/libpod-conmon-" ID3 ".scope"),
		  "conmon:broker@c06d4eb841f4");
	/* names that read as another label's: a unit's, a path's, a short id's */
	c = named(ID, "cron.service");
	CHECK(container_names__set(t, &c) == 0);
	CHECK_STR(label(t, "/docker/" ID), "container:cron.service");
	/* not a container: the path, untouched */
	CHECK_STR(label(t, "/system.slice/cron.service"), "cron.service");
	CHECK_STR(label(t, "/user.slice"), "/user.slice");
	/* bad input: no name, an id of another shape */
	c = named("abc", "x");
	CHECK(container_names__set(t, &c) == -EINVAL);
	c = named(ID, "");
	CHECK(container_names__set(t, &c) == -EINVAL);
	container_names__free(t);
}

static void test_describe(void)
{
	struct container_names *t = container_names__new();
	struct cg_container c = named(ID, "bookie-2"), row;

	if (!t)
		return;
	snprintf(c.image, sizeof(c.image), "apachepulsar/pulsar:3.3");
	snprintf(c.compose_project, sizeof(c.compose_project), "pulsar");
	snprintf(c.compose_service, sizeof(c.compose_service), "bookie");
	c.compose_replica = 2;
	CHECK(container_names__set(t, &c) == 0);
	CHECK(container_names__describe(t, "/docker/" ID, &row) == 0);
	CHECK_STR(row.runtime, "docker");
	CHECK_STR(row.id, ID);
	CHECK_STR(row.name, "bookie-2");
	CHECK_STR(row.image, "apachepulsar/pulsar:3.3");
	CHECK_STR(row.compose_service, "bookie");
	CHECK(row.compose_replica == 2 && !row.pod);
	/* the runtime is the path's: Podman's socket answers as Docker's */
	CHECK(container_names__describe(t, "/machine.slice/libpod-" ID ".scope", &row) == 0);
	CHECK_STR(row.runtime, "podman");
	/* a container nobody named: its id and runtime */
	CHECK(container_names__describe(t, "/docker/" ID2, &row) == 0);
	CHECK_STR(row.id, ID2);
	CHECK_STR(row.name, "");
	CHECK(container_names__describe(t, "/system.slice/cron.service", &row) == -ENOENT);
	CHECK(container_names__describe(t, "/", &row) == -ENOENT);
	container_names__free(t);
}

static void test_pods(void)
{
	struct container_names *t = container_names__new();
	const char *pod = "/kubepods.slice/kubepods-burstable.slice/"
			  "kubepods-burstable-pod5e3a1c2d_8f4b_4a6e_9c1d_2b3a4c5d6e7f.slice";
	char path[512], uid[CG_POD_UID_MAX + 1];
	struct cg_container c, row;

	if (!t)
		return;
	CHECK(kubelet_parse_pod_dir("pulsar_broker-0_" UID, c.pod_namespace, c.pod_name, uid) == 0);
	CHECK(container_names__set_pod(t, uid, c.pod_namespace, c.pod_name) == 0);
	CHECK(kubelet_parse_container_log("broker-0_pulsar_broker-" ID ".log", &c) == 0);
	snprintf(c.pod_uid, sizeof(c.pod_uid), "%s", UID);
	CHECK(container_names__set(t, &c) == 0);
	CHECK_STR(label(t, pod), "pulsar/broker-0");
	snprintf(path, sizeof(path), "%s/cri-containerd-%s.scope", pod, ID);
	CHECK_STR(label(t, path), "pulsar/broker-0/broker");
	/* its sandbox (pause) container has no log: named by its id within the pod */
	snprintf(path, sizeof(path), "%s/cri-containerd-%s.scope", pod, ID2);
	CHECK_STR(label(t, path), "pulsar/broker-0/containerd:b06d4eb841f4");
	CHECK(container_names__describe(t, pod, &row) == 0);
	CHECK(row.pod && !strcmp(row.pod_namespace, "pulsar") &&
	      !strcmp(row.pod_name, "broker-0") && !strcmp(row.pod_uid, UID) && !row.id[0]);
	CHECK(container_names__find_pod(t, "pulsar", "broker-0", uid) == 0);
	CHECK_STR(uid, UID);
	CHECK(container_names__find_pod(t, "pulsar", "broker-1", uid) == -ENOENT);
	/* the cgroupfs driver's layout, the same names */
	snprintf(path, sizeof(path), "/kubepods/burstable/pod%s/%s", UID, ID);
	CHECK_STR(label(t, path), "pulsar/broker-0/broker");
	container_names__free(t);
}

static void test_kubelet_names(void)
{
	char ns[CG_CONTAINER_NAME_MAX + 1], pod[CG_CONTAINER_NAME_MAX + 1];
	char uid[CG_POD_UID_MAX + 1];
	struct cg_container c;

	CHECK(kubelet_parse_container_log("coredns-5d78c9869d-abcde_kube-system_coredns-" ID ".log",
					  &c) == 0);
	CHECK_STR(c.pod_name, "coredns-5d78c9869d-abcde");
	CHECK_STR(c.pod_namespace, "kube-system");
	CHECK_STR(c.name, "coredns");
	CHECK_STR(c.id, ID);
	/* near misses: no id, a short one, uppercase, one part too many or few, no .log */
	CHECK(kubelet_parse_container_log("a_b_c.log", &c) == -EINVAL);
	CHECK(kubelet_parse_container_log("a_b_c-4bc4dbfde872.log", &c) == -EINVAL);
	CHECK(kubelet_parse_container_log("a_b_c-" ID ".txt", &c) == -EINVAL);
	CHECK(kubelet_parse_container_log("a_b-" ID ".log", &c) == -EINVAL);
	CHECK(kubelet_parse_container_log("a_b_c_d-" ID ".log", &c) == -EINVAL);
	CHECK(kubelet_parse_container_log("__c-" ID ".log", &c) == -EINVAL);
	CHECK(kubelet_parse_container_log("-" ID ".log", &c) == -EINVAL);
	CHECK(kubelet_parse_pod_dir("kube-system_etcd-node_0123456789abcdef0123456789abcdef", ns,
				    pod, uid) == 0);
	CHECK_STR(uid, "0123456789abcdef0123456789abcdef");
	CHECK(kubelet_parse_pod_dir("a_b", ns, pod, uid) == -EINVAL);
	CHECK(kubelet_parse_pod_dir("a_b_NOT-A-UID", ns, pod, uid) == -EINVAL);
	CHECK(kubelet_parse_pod_dir("a_b_" UID "0000", ns, pod, uid) == -EINVAL);
	CHECK(kubelet_parse_pod_dir("a_b_c_" UID, ns, pod, uid) == -EINVAL);
}

/* Lines written to stderr while fn runs with t. */
static int stderr_lines(void (*fn)(struct container_names *t), struct container_names *t,
			char *text, size_t len)
{
	FILE *f = tmpfile();
	int saved = dup(STDERR_FILENO), n = 0;
	size_t got;

	if (!f || saved < 0)
		return -1;
	fflush(stderr);
	dup2(fileno(f), STDERR_FILENO);
	fn(t);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	got = fread(text, 1, len - 1, f);
	text[got] = '\0';
	fclose(f);
	for (size_t i = 0; i < got; i++)
		n += text[i] == '\n';
	return n;
}

static void label_two_unnamed(struct container_names *t)
{
	CHECK_STR(label(t, "/docker/" ID), "docker:4bc4dbfde872");
	CHECK_STR(label(t, "/docker/" ID2), "docker:b06d4eb841f4");
}

static void test_trouble(void)
{
	struct container_names *t = container_names__new();
	char text[1024];

	if (!t)
		return;
	/* said once, on the first container labelled by its short id; a newline escaped */
	container_names__set_trouble(t, RUNTIME_DOCKER, "cannot connect:\nPermission denied",
				     false);
	CHECK(stderr_lines(label_two_unnamed, t, text, sizeof(text)) == 1);
	CHECK(strstr(text, "docker containers are labelled by their short ids") != NULL);
	CHECK(strstr(text, "connect:\\x0aPermission") != NULL);
	CHECK(stderr_lines(label_two_unnamed, t, text, sizeof(text)) == 0);
	/* said by the source already: not again */
	container_names__set_trouble(t, RUNTIME_DOCKER, "stopped", true);
	CHECK(stderr_lines(label_two_unnamed, t, text, sizeof(text)) == 0);
	/* answering again, then not: said again */
	container_names__set_trouble(t, RUNTIME_DOCKER, NULL, false);
	container_names__set_trouble(t, RUNTIME_DOCKER, "gone", false);
	CHECK(stderr_lines(label_two_unnamed, t, text, sizeof(text)) == 1);
	container_names__free(t);
}

int main(void)
{
	test_docker();
	test_describe();
	test_pods();
	test_kubelet_names();
	test_trouble();
	return check_done();
}
