// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <sys/utsname.h>

#include <bpf/libbpf.h>

#include "sources/kernel_features.h"
#include "sources/refusal.h"
#include "lib/util.h"

/*
 * libbpf's map type probe says 0 for any failure to make the map, and leaves the bpf() call's
 * errno; only EINVAL is the kernel's "no such type". Anything else (ENOMEM, EPERM under lockdown)
 * cannot tell, and must not refuse.
 */
static int probe_map_type(int type)
{
	int ret;

	errno = 0;
	ret = libbpf_probe_bpf_map_type(type, NULL);
	if (ret != 0 || errno == EINVAL)
		return ret;
	return errno ? -errno : -ENODATA;
}

/*
 * 0 only when the verifier named the helper unknown; libbpf takes any other failure for a yes.
 * libbpf cannot probe from tracing programs, but raw_tp ones get the same base helpers (and
 * cg_snapshot is one).
 */
static int probe_helper(int id)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, id, NULL);
}

/*
 * Each feature cgstat's programs need, the mainline release it came in, and its probe. Not the
 * tp_btf programs (5.5): task storage implies them, and libbpf's probe of tracing programs loads
 * an fentry one, which a kernel that runs tp_btf ones can refuse (EPERM, on a 6.18).
 */
static const struct kernel_feature {
	const char *what;
	const char *since;
	int (*probe)(int arg);
	int arg;
} features[] = {
	{ "task storage", "5.11", probe_map_type, BPF_MAP_TYPE_TASK_STORAGE },
	{ "bpf_loop", "5.17", probe_helper, BPF_FUNC_loop },
	{ "bpf_map_lookup_percpu_elem", "5.19", probe_helper, BPF_FUNC_map_lookup_percpu_elem },
};

int kernel_features__check(FILE *f, bool verbose)
{
	struct kernel_need needs[ARRAY_SIZE(features)];
	struct utsname uts = { .release = "?" };
	size_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(features); i++) {
		ret = features[i].probe(features[i].arg);
		if (ret < 0 && verbose)
			fprintf(f, "cgstat: cannot tell whether the kernel has %s: %s\n",
				features[i].what, strerror(-ret));
		needs[i] = (struct kernel_need){ features[i].what, features[i].since, ret == 0 };
	}
	uname(&uts);
	return refusal_print_missing(f, uts.release, needs, ARRAY_SIZE(needs)) ? -EOPNOTSUPP : 0;
}
