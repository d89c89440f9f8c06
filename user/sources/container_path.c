// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE /* memmem() */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/util.h"
#include "sources/container_path.h"

/* One component of a path: its bytes, not NUL-terminated, and where it ends in the path. */
struct part {
	const char *s;
	size_t len;
	size_t end;
};

static bool has_prefix(const struct part *p, const char *prefix, size_t *after)
{
	size_t n = strlen(prefix);

	if (p->len < n || memcmp(p->s, prefix, n))
		return false;
	*after = n;
	return true;
}

static bool has_suffix(const struct part *p, const char *suffix)
{
	size_t n = strlen(suffix);

	return p->len >= n && !memcmp(p->s + p->len - n, suffix, n);
}

bool container_id_valid(const char *s, size_t len)
{
	size_t i;

	if (len != CONTAINER_ID_LEN)
		return false;
	for (i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/*
 * PREFIX<id>SUFFIX, or PREFIX<id> alone when bare_too (the cgroupfs managers' names): the id
 * into c. suffix may be "".
 */
static bool id_between(const struct part *p, const char *prefix, const char *suffix, bool bare_too,
		       struct container_path *c)
{
	size_t start, n = strlen(suffix);
	const char *id;

	if (!has_prefix(p, prefix, &start))
		return false;
	id = p->s + start;
	if (container_id_valid(id, p->len - start) && bare_too) {
		memcpy(c->id, id, CONTAINER_ID_LEN);
	} else if (n && has_suffix(p, suffix) && container_id_valid(id, p->len - start - n)) {
		memcpy(c->id, id, CONTAINER_ID_LEN);
	} else {
		return false;
	}
	c->id[CONTAINER_ID_LEN] = '\0';
	return true;
}

/*
 * A pod's uid as the kubelet names its cgroup: "pod<uid>" (cgroupfs driver) or
 * "kubepods[-QOS]-pod<uid with _ for ->.slice" (systemd driver, any prefix before "kubepods",
 * as kind's "kubelet-kubepods"). A UUID, or a static pod's 32 hex digits.
 */
static bool pod_uid(const struct part *p, struct container_path *c)
{
	const char *uid;
	size_t len, i, start;

	if (has_prefix(p, "pod", &start)) {
		uid = p->s + start;
		len = p->len - start;
	} else if (has_suffix(p, ".slice") && p->len > 6) {
		for (i = p->len - 6; i >= 4 && memcmp(p->s + i - 4, "-pod", 4); i--)
			;
		if (i < 4)
			return false;
		uid = p->s + i;
		len = p->len - 6 - i;
		if (!memmem(p->s, i, "kubepods", 8))
			return false;
	} else {
		return false;
	}
	if (len != 32 && len != 36)
		return false;
	for (i = 0; i < len; i++) {
		char ch = uid[i];

		if (ch == '_' || ch == '-')
			ch = '-';
		else if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
			return false;
		c->pod_uid[i] = ch;
	}
	c->pod_uid[len] = '\0';
	return true;
}

/* kubepods' own cgroup, as either driver names it, with a prefix (kind's "kubelet-"). */
static bool is_kubepods(const struct part *p)
{
	static const char name[] = "kubepods";
	static const char slice[] = "kubepods.slice";

	if (p->len == sizeof(name) - 1 && !memcmp(p->s, name, p->len))
		return true;
	return has_suffix(p, slice) &&
	       (p->len == sizeof(slice) - 1 || p->s[p->len - sizeof(slice)] == '-');
}

static enum pod_qos qos_of(const struct part *p)
{
	if ((p->len == 9 && !memcmp(p->s, "burstable", 9)) ||
	    has_suffix(p, "kubepods-burstable.slice"))
		return QOS_BURSTABLE;
	if ((p->len == 10 && !memcmp(p->s, "besteffort", 10)) ||
	    has_suffix(p, "kubepods-besteffort.slice"))
		return QOS_BESTEFFORT;
	return QOS_NONE;
}

/* A systemd unit's name: NAME.service or NAME.scope, of the characters systemd allows. */
static bool unit_name(const struct part *p, struct container_path *c)
{
	size_t i;

	if (p->len > UNIT_NAME_MAX || !(has_suffix(p, ".service") || has_suffix(p, ".scope")))
		return false;
	if (p->s[0] == '.' || p->s[0] == '@')
		return false;
	for (i = 0; i < p->len; i++) {
		char ch = p->s[i];

		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
		      (ch >= 'A' && ch <= 'Z') || strchr(":-_.\\@", ch)))
			return false;
	}
	memcpy(c->unit, p->s, p->len);
	c->unit[p->len] = '\0';
	return true;
}

/* user@UID.service: the uid, or -1. */
static long user_instance(const struct part *p)
{
	size_t start, i;
	long uid = 0;

	if (!has_prefix(p, "user@", &start) || !has_suffix(p, ".service"))
		return -1;
	if (p->len - start - 8 == 0 || p->len - start - 8 > 10)
		return -1;
	for (i = start; i < p->len - 8; i++) {
		if (p->s[i] < '0' || p->s[i] > '9')
			return -1;
		uid = uid * 10 + (p->s[i] - '0');
	}
	return uid;
}

/*
 * A container's own cgroup, as one component: the runtime and the kind into c, or false. In a
 * pod, a bare id is its container's (the runtime is not in the name: cri).
 */
static bool container_part(const struct part *p, const struct part *prev, bool in_pod,
			   struct container_path *c)
{
	static const struct {
		const char *prefix, *suffix;
		bool bare_too;
		enum container_runtime runtime;
		enum container_kind kind;
	} forms[] = {
		/* the monitors first: their prefixes hold the containers' */
		{ "libpod-conmon-", ".scope", false, RUNTIME_PODMAN, CONTAINER_MONITOR },
		{ "crio-conmon-", ".scope", false, RUNTIME_CRIO, CONTAINER_MONITOR },
		{ "docker-", ".scope", false, RUNTIME_DOCKER, CONTAINER_OWN },
		{ "libpod-", ".scope", true, RUNTIME_PODMAN, CONTAINER_OWN },
		{ "cri-containerd-", ".scope", false, RUNTIME_CONTAINERD, CONTAINER_OWN },
		{ "crio-", ".scope", true, RUNTIME_CRIO, CONTAINER_OWN },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(forms); i++) {
		if (id_between(p, forms[i].prefix, forms[i].suffix, forms[i].bare_too, c)) {
			c->runtime = forms[i].runtime;
			c->kind = forms[i].kind;
			return true;
		}
	}
	/* Docker's cgroupfs driver: /docker/ID (its parent, --cgroup-parent aside) */
	if (prev && prev->len == 6 && !memcmp(prev->s, "docker", 6) &&
	    container_id_valid(p->s, p->len)) {
		memcpy(c->id, p->s, CONTAINER_ID_LEN);
		c->id[CONTAINER_ID_LEN] = '\0';
		c->runtime = RUNTIME_DOCKER;
		c->kind = CONTAINER_OWN;
		return true;
	}
	if (in_pod && container_id_valid(p->s, p->len)) {
		memcpy(c->id, p->s, CONTAINER_ID_LEN);
		c->id[CONTAINER_ID_LEN] = '\0';
		c->runtime = RUNTIME_NONE;
		c->kind = CONTAINER_OWN;
		return true;
	}
	return false;
}

/*
 * The components from the root down: the deepest container (a container in a container's
 * kubepods, as kind's nodes make them) is the one a cgroup is; below a container or a pod's
 * container, the rest are cgroups it made. A unit counts only where no container does, and the
 * outermost: a unit's name is unique in the system's manager, not in a manager it delegates to
 * (a user's instance, a machine), whose units are the cgroups below it.
 */
enum container_kind container_path_parse(const char *path, struct container_path *c)
{
	struct part p = { 0 }, prev = { 0 };
	bool in_kube = false, in_pod = false, have_prev = false;
	struct container_path found;
	size_t at = 0, len = strlen(path);
	long uid;

	memset(c, 0, sizeof(*c));
	c->user = -1;
	c->below = len;
	while (at < len) {
		while (at < len && path[at] == '/')
			at++;
		if (at == len)
			break;
		p.s = path + at;
		while (at < len && path[at] != '/')
			at++;
		p.len = at - (size_t)(p.s - path);
		p.end = at;

		uid = user_instance(&p);
		if (uid >= 0)
			c->user = uid;
		found = *c;
		if (is_kubepods(&p)) {
			/* a new tree of pods: what a container above it was does not carry over */
			memset(c->id, 0, sizeof(c->id));
			c->pod_uid[0] = '\0';
			c->unit[0] = '\0';
			c->runtime = RUNTIME_NONE;
			c->kind = CONTAINER_NONE;
			c->qos = QOS_GUARANTEED;
			c->below = len;
			in_kube = true;
			in_pod = false;
		} else if (in_kube && !in_pod && qos_of(&p) != QOS_NONE) {
			c->qos = qos_of(&p);
		} else if (in_kube && !in_pod && pod_uid(&p, &found)) {
			memcpy(c->pod_uid, found.pod_uid, sizeof(c->pod_uid));
			/* a unit between kubepods and its pods is not the pod */
			c->unit[0] = '\0';
			c->runtime = RUNTIME_NONE;
			c->kind = CONTAINER_POD;
			c->below = p.end;
			in_pod = true;
		} else if (container_part(&p, have_prev ? &prev : NULL, in_pod, &found)) {
			memcpy(c->id, found.id, sizeof(c->id));
			c->runtime = found.runtime;
			c->kind = found.kind;
			c->unit[0] = '\0';
			c->below = p.end;
			/* a container's pod ends with it: below, a kubepods starts anew */
			in_kube = in_pod = false;
		} else if (c->kind == CONTAINER_NONE && unit_name(&p, c)) {
			c->runtime = RUNTIME_SYSTEMD;
			c->kind = CONTAINER_UNIT;
			c->below = p.end;
		}
		prev = p;
		have_prev = true;
	}
	/* a class is a pod's: kubepods with no pod below it names none */
	if (!c->pod_uid[0])
		c->qos = QOS_NONE;
	return c->kind;
}

const char *container_runtime_name(enum container_runtime r)
{
	static const char *const names[NR_RUNTIMES] = {
		[RUNTIME_NONE] = "",	     [RUNTIME_DOCKER] = "docker",
		[RUNTIME_PODMAN] = "podman", [RUNTIME_CONTAINERD] = "containerd",
		[RUNTIME_CRIO] = "crio",     [RUNTIME_SYSTEMD] = "systemd",
	};

	return (unsigned int)r < NR_RUNTIMES ? names[r] : "";
}

int container_path_label(const char *path, char *buf, size_t len)
{
	const char *runtime, *below;
	struct container_path c;
	int n;

	container_path_parse(path, &c);
	runtime = container_runtime_name(c.runtime);
	below = path + c.below;
	switch (c.kind) {
	case CONTAINER_OWN:
		n = snprintf(buf, len, "%s:%.*s%s", *runtime ? runtime : "cri", CONTAINER_SHORT_ID,
			     c.id, below);
		break;
	case CONTAINER_MONITOR:
		n = snprintf(buf, len, "%s-conmon:%.*s%s", runtime, CONTAINER_SHORT_ID, c.id,
			     below);
		break;
	case CONTAINER_POD:
		n = snprintf(buf, len, "pod:%s%s", c.pod_uid, below);
		break;
	case CONTAINER_UNIT:
		n = snprintf(buf, len, "%s%s", c.unit, below);
		break;
	default:
		return -ENOENT;
	}
	return n >= 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

const char *container_or_path_label(const char *path, char *buf, size_t len)
{
	return container_path_label(path, buf, len) ? path : buf;
}
