// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The floor for the overhead benchmark: empty programs on the tracepoints cgstat uses, so that
 * the cost of merely being attached is measured apart from what cgstat does there.
 */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/sched_switch")
int BPF_PROG(floor_sched_switch)
{
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(floor_sched_wakeup)
{
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(floor_sched_wakeup_new)
{
	return 0;
}
