// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "privileges.h"

/* The ids of "nobody" where the passwd database has none (Debian's are these). */
#define NOBODY_ID 65534

static int caps_get(uint64_t *effective, uint64_t *permitted)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	*effective = data[0].effective | (uint64_t)data[1].effective << 32;
	*permitted = data[0].permitted | (uint64_t)data[1].permitted << 32;
	return 0;
}

static bool can_change_ids(void)
{
	uint64_t eff = 0, prm = 0;

	return geteuid() == 0 && !caps_get(&eff, &prm) && (eff & (1ULL << CAP_SETUID)) &&
	       (eff & (1ULL << CAP_SETGID));
}

uint64_t privileges_needed(void)
{
	return 1ULL << CAP_BPF | 1ULL << CAP_PERFMON;
}

int privileges_raise(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};
	uint64_t eff = 0, prm = 0, raise;
	int err;

	err = caps_get(&eff, &prm);
	if (err)
		return err;
	raise = prm & (privileges_needed() | 1ULL << CAP_SYS_ADMIN) & ~eff;
	if (!raise)
		return 0;
	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[0].effective |= (uint32_t)raise;
	data[1].effective |= (uint32_t)(raise >> 32);
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

uint64_t privileges_missing(void)
{
	uint64_t eff = 0, prm = 0;

	if (caps_get(&eff, &prm))
		return privileges_needed();
	/* the kernel takes CAP_SYS_ADMIN for either (bpf_capable(), perfmon_capable()) */
	if (eff & (1ULL << CAP_SYS_ADMIN))
		return 0;
	return privileges_needed() & ~eff;
}

void privileges_target(uid_t *uid, gid_t *gid)
{
	struct passwd *pw;

	if (!can_change_ids()) {
		*uid = geteuid();
		*gid = getegid();
		return;
	}
	pw = getpwnam("nobody");
	*uid = pw ? pw->pw_uid : NOBODY_ID;
	*gid = pw ? pw->pw_gid : NOBODY_ID;
}

uint64_t privileges_kept(bool signals_command)
{
	/*
	 * CAP_BPF: with kernel.unprivileged_bpf_disabled set (Debian's default), every bpf() call
	 * of the drain (BPF_PROG_TEST_RUN for the snapshot, map updates when a slot is freed)
	 * needs it. CAP_KILL with -- CMD: the command runs as root or as the sudo user, neither
	 * of them nobody, and cgstat forwards its signals to it.
	 */
	return 1ULL << CAP_BPF | (signals_command ? 1ULL << CAP_KILL : 0);
}

/*
 * What privileges_drop() kept until each thread settles (privileges_settle()): CAP_SETGID for a
 * thread to drop the groups it does not need, CAP_SETPCAP for it to take both from its bounding
 * set. Written before any thread is made, read after.
 */
#define TRANSIENT_CAPS (1ULL << CAP_SETGID | 1ULL << CAP_SETPCAP)
static uint64_t settled_keep;
static bool transient;

/* The calling thread's effective and permitted capabilities: keep. 0 or -errno. */
static int caps_set(uint64_t keep)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	data[0].effective = data[0].permitted = (uint32_t)keep;
	data[1].effective = data[1].permitted = (uint32_t)(keep >> 32);
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

int privileges_settle(bool keep_groups)
{
	/*
	 * Raw system calls: credentials are each thread's own in the kernel, and glibc's wrappers
	 * change every thread's
	 */
	if (!transient)
		return 0;
	if (!keep_groups && syscall(SYS_setgroups, 0, NULL))
		return -errno;
	if (prctl(PR_CAPBSET_DROP, CAP_SETGID, 0, 0, 0) ||
	    prctl(PR_CAPBSET_DROP, CAP_SETPCAP, 0, 0, 0))
		return -errno;
	return caps_set(settled_keep);
}

int privileges_drop(bool signals_command, const gid_t *groups, int nr_groups)
{
	uint64_t keep = privileges_kept(signals_command), eff = 0, prm = 0;
	bool change_ids = can_change_ids();
	uid_t uid;
	gid_t gid;
	int cap, err;

	err = caps_get(&eff, &prm);
	if (err)
		return err;
	/*
	 * Only what the process holds can be kept: started as a user of its own with just the
	 * capabilities it needs (contrib/systemd/cgstat.service), cgstat has no CAP_KILL, and
	 * needs none for a command that runs as that same user.
	 */
	keep &= prm;
	privileges_target(&uid, &gid);
	settled_keep = keep;
	/*
	 * Groups kept for some threads: the others drop them as they settle, which takes
	 * CAP_SETPCAP too. Without it every thread keeps them.
	 */
	transient = change_ids && nr_groups > 0 && (prm & TRANSIENT_CAPS) == TRANSIENT_CAPS;
	if (transient)
		keep |= TRANSIENT_CAPS;
	/*
	 * The bounding set first: dropping from it needs CAP_SETPCAP, which goes below. Without
	 * it (the unit gives none) the bounding set stays as it was given, which leaves nothing
	 * to use: what is beyond keep leaves the permitted and inheritable sets below, and
	 * no_new_privs keeps an execve() from granting it again.
	 */
	for (cap = 0; (eff & (1ULL << CAP_SETPCAP)) && cap <= CAP_LAST_CAP; cap++) {
		if (keep & (1ULL << cap))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL)
			return -errno;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -errno;
	/*
	 * Then the ids, so that no file root owns stays writable: PR_SET_KEEPCAPS keeps the
	 * permitted set across the change (the effective one is cleared), for capset() to take
	 * back what is kept. The process has one thread here (the listener's is made after), so
	 * every thread changes.
	 */
	if (change_ids) {
		if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setgroups((size_t)nr_groups, groups) ||
		    setresgid(gid, gid, gid) || setresuid(uid, uid, uid) ||
		    prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0))
			return -errno;
	}
	err = caps_set(keep);
	if (err)
		return err;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	return 0;
}

int privileges_sudo_ids(uid_t *uid, gid_t *gid)
{
	const char *uid_text = getenv("SUDO_UID"), *gid_text = getenv("SUDO_GID");
	char *end;
	long u, g;

	if (geteuid() != 0 || !uid_text || !gid_text)
		return -ENOENT;
	errno = 0;
	u = strtol(uid_text, &end, 10);
	if (errno || *end || end == uid_text || u < 0 || u > INT_MAX)
		return -EINVAL;
	g = strtol(gid_text, &end, 10);
	if (errno || *end || end == gid_text || g < 0 || g > INT_MAX)
		return -EINVAL;
	*uid = (uid_t)u;
	*gid = (gid_t)g;
	return 0;
}

int privileges_become_sudo_user(bool login_env)
{
	struct passwd *pw;
	uid_t uid;
	gid_t gid;
	int err;

	err = privileges_sudo_ids(&uid, &gid);
	if (err)
		return err == -ENOENT ? 0 : err;
	pw = getpwuid(uid);
	if (pw ? initgroups(pw->pw_name, gid) : setgroups(0, NULL))
		return -errno;
	if (setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
		return -errno;
	/* what sudo left is root's: a program that writes to $HOME would write to /root */
	if (login_env && pw &&
	    (setenv("HOME", pw->pw_dir, 1) || setenv("USER", pw->pw_name, 1) ||
	     setenv("LOGNAME", pw->pw_name, 1)))
		return -errno;
	return 0;
}
