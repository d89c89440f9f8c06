/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kernel fields that were renamed or moved, read through CO-RE so that one object loads on old
 * and new kernels. Each fix names the kernel commit that made it necessary. Never
 * LINUX_VERSION_CODE: distributions backport.
 */
#ifndef CGSTAT_CORE_FIXES_BPF_H
#define CGSTAT_CORE_FIXES_BPF_H

#include <vmlinux.h>
#include <bpf/bpf_core_read.h>

/*
 * commit 2f064a59a11f ("sched: Change task_struct::state") renamed state to __state (v5.14).
 */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

/* Direct loads: t must be a BTF pointer (tp_btf or iterator argument); this runs per switch. */
static __always_inline __u32 task_run_state(struct task_struct *t)
{
	struct task_struct___pre514 *old = (void *)t;

	if (bpf_core_field_exists(t->__state))
		return t->__state;
	return old->state;
}

/*
 * commit 7f203bc89eb6 ("cgroup: Replace cgroup->ancestor_ids[] with ->ancestors[]") (v6.1):
 * before it, a cgroup held its ancestors' ids; since, pointers to the ancestors.
 */
struct cgroup___pre61 {
	int level;
	u64 ancestor_ids[];
} __attribute__((preserve_access_index));

static __always_inline __u64 cgroup_ancestor_id(struct cgroup *cg, int level)
{
	struct cgroup___pre61 *old = (void *)cg;
	struct cgroup *anc = NULL;
	__u64 id = 0;

	if (bpf_core_field_exists(old->ancestor_ids)) {
		bpf_core_read(&id, sizeof(id), &old->ancestor_ids[level]);
		return id;
	}
	bpf_core_read(&anc, sizeof(anc), &cg->ancestors[level]);
	if (!anc)
		return 0;
	return BPF_CORE_READ(anc, kn, id);
}

/*
 * task_struct.on_cpu is an int up to 6.x and a u8 in 7.x (Debian's 7.2.13): a direct load of
 * the int fails its CO-RE relocation there ("failed to resolve CO-RE relocation ... on_cpu"),
 * as libbpf will not narrow a signed load to an unsigned byte. BPF_CORE_READ_BITFIELD reads
 * the field at whatever size the running kernel gives it.
 */
static __always_inline bool task_on_cpu(struct task_struct *t)
{
	return BPF_CORE_READ_BITFIELD(t, on_cpu) != 0;
}

#endif /* CGSTAT_CORE_FIXES_BPF_H */
