// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <linux/capability.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "privileges.h"

int privileges_drop(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};
	/*
	 * CAP_BPF: with kernel.unprivileged_bpf_disabled set (Debian's default), every bpf() call
	 * of the drain (BPF_PROG_TEST_RUN for the snapshot, map updates when a slot is freed)
	 * needs it. Every output file is made before this.
	 */
	uint64_t keep = 1ULL << CAP_BPF;
	int cap;

	/* the bounding set first: dropping from it needs CAP_SETPCAP, which goes next */
	for (cap = 0; cap <= CAP_LAST_CAP; cap++) {
		if (keep & (1ULL << cap))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL)
			return -errno;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -errno;
	data[0].effective = data[0].permitted = (uint32_t)keep;
	data[1].effective = data[1].permitted = (uint32_t)(keep >> 32);
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	return 0;
}
