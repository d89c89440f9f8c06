/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The clock every event is timed on: the run-queue clock of the task's CPU, and the monotonic
 * clock moved onto it where that one may be stale.
 *
 * One room of cgstat.bpf.c, which includes the rooms in order as one compilation unit (it says
 * why); each room uses only those before it.
 */
#ifndef CGSTAT_CLOCK_BPF_H
#define CGSTAT_CLOCK_BPF_H

#include "maps.bpf.h"

/* sched_switch resamples the clock offset every this many switches on a CPU (clock_sync()) */
#define CLOCK_SYNC_EVERY 64

/*
 * The time of an event: the scheduler's own run-queue clock (rq->clock) of the task's CPU,
 * which the kernel updated just before each tracepoint cgstat uses. Reading it is three loads,
 * where bpf_ktime_get_ns() reads the clocksource, four times in every ping-pong round trip
 * (what that costs: docs/performance.md); and it is the clock of the kernel's own schedstat, so
 * cgstat's run-queue waits are schedstat's run_delay. Without FAIR_GROUP_SCHED there is no
 * se.cfs_rq->rq, and the monotonic clock serves instead.
 */
static __always_inline __u64 task_clock(struct task_struct *t)
{
	if (!bpf_core_field_exists(t->se.cfs_rq) || !bpf_core_field_exists(struct cfs_rq, rq))
		return bpf_ktime_get_ns();
	return t->se.cfs_rq->rq->clock;
}

/*
 * task_clock(), and how much of it the CPU ran no task so far (in *untasked): rq->clock_task
 * is rq->clock less what the hypervisor stole (PARAVIRT_TIME_ACCOUNTING) and, with
 * IRQ_TIME_ACCOUNTING, interrupt time; the scheduler charges tasks runtime on clock_task
 * alone, so sum_exec_runtime and cpu.stat leave that time out. On a busy shared host steal is
 * tens of percent of a second, all of it inside what rq->clock shows as on-CPU: cgstat moves
 * it from on-CPU to CG_STOLEN, so on-CPU is the kernel's runtime and no time is lost.
 */
static __always_inline __u64 task_clock_untasked(struct task_struct *t, __u64 *untasked)
{
	struct rq *rq;

	if (!bpf_core_field_exists(t->se.cfs_rq) || !bpf_core_field_exists(struct cfs_rq, rq)) {
		*untasked = 0;
		return bpf_ktime_get_ns();
	}
	rq = t->se.cfs_rq->rq;
	*untasked = rq->clock - rq->clock_task;
	return rq->clock;
}

/*
 * cgstat's clock now, outside the scheduler's tracepoints, where t's run-queue clock may be
 * stale (an idle CPU does not update it): the monotonic clock moved onto it by the offset that
 * sched_switch resamples every CLOCK_SYNC_EVERY switches on each CPU (clock_sync()); the two
 * clocks drift apart by no more than NTP's slew between samples.
 */
static __always_inline __u64 clock_now(struct task_struct *t)
{
	return clock_offset_valid ? bpf_ktime_get_ns() + clock_offset : task_clock(t);
}

static __always_inline void clock_sync(struct cpu_run *run, __u64 rq_now)
{
	if ((++run->switches & (CLOCK_SYNC_EVERY - 1)) && clock_offset_valid)
		return;
	clock_offset = rq_now - bpf_ktime_get_ns();
	clock_offset_valid = 1;
}

#endif /* CGSTAT_CLOCK_BPF_H */
