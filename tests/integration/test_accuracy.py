# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""cgstat's per-cgroup totals against the kernel's own accounting, for workloads of known
shape run in a scratch cgroup: switches, run-queue waits and migrations exactly, give or take
what the workload does after its last reading (harness.final_counts: one-sided, sized from the
workload's exit); on-CPU time against the cgroup's cpu.stat; run-queue time against
/proc/TID/schedstat; and off-CPU time (with stolen time) against what the kernel's figures leave
of each thread's life (alive - sum_exec_runtime - run_delay), as sleep for a sleeper and as
blocked time for a vfork parent, whose every wait is in D. cgstat reads the scheduler's
run-queue clock, as schedstat does, so even sub-microsecond waits compare. The limits are in
docs/metrics.md ("How exact") with the errors seen."""

import math

import harness as h

# Limits, each about three times the largest error seen over repeated runs here (the runs and
# their errors are in docs/metrics.md, "How exact"). The counts have none: they are checked
# exactly, give or take what the workload does after its last reading (harness.final_counts).
# Against schedstat run_delay: +0.008 to +0.15 % for the ping-pong and the hogs in 20 runs.
RUNQ = 0.005
# The steady shape (4 threads on 2 CPUs that sleep) read -0.96 to +0.10 % of run_delay in 10
# runs, as if run_delay took in part of some sleeps (likely EEVDF's delayed dequeue; not
# confirmed: docs/metrics.md). Up to 2.2 % below before the waits after wakeups no tracer saw
# were counted (docs/metrics.md, "Wakeups the kernel does not report").
RUNQ_SLEEPERS = 0.03
# Against what the kernel's figures leave of each thread's life: +0.04 to +0.58 % in 20 runs,
# never below (the life the workload clocks starts after cgstat sees the thread): one-sided,
# up to OFFCPU above and OFFCPU_BELOW below.
OFFCPU = 0.02
OFFCPU_BELOW = 0.0
# A vfork parent's blocked time, against the same: -0.10 to -0.003 % in 20 runs, -0.018 to
# -0.002 % in 8 CI runs of 2026-12-02: up to BLOCKED below and BLOCKED_ABOVE above, and above
# by at most BLOCKED_EXIT_MS: cgstat counts the cgroup's D waits to the process's end, the
# reference the parent's to its report, so a D wait in a thread's exit after the report (the
# teardown of its memory) is cgstat's alone: +0.07 ms in 2 of about 8 runs of 2026-12-06
# (+0.003 and +0.004 %), on a busier machine.
BLOCKED = 0.003
BLOCKED_ABOVE = 0.0
BLOCKED_EXIT_MS = 0.25
# The median wait against the kernel's mean wait, for the ping-pong, whose threads block and so
# cannot time their waits: its waits are sub-microsecond with a tail (an interrupt, a
# preemption) that raises the mean alone: its median was 0.65 to 0.76 of the mean in runs here,
# so only its order of magnitude is checked.
PINGPONG_MEDIAN = (0.4, 1.15)


def measure(args, shape, *shape_args):
    """Run one workload shape in its own watched cgroup; cgstat's totals, the kernel's report,
    and the cgroup's CPU time from cpu.stat once the workload has ended (the cgroup is new, so
    that is all of it). The run's summary of the cgroup goes in the totals as "summary"."""
    with h.scratch_cgroup(shape) as cg:
        cgstat = h.Cgstat(args.cgstat, ["-f", "json", "-i", "0.5", "-c", "w=" + cg])
        report = h.run_workload(args.workload, cg, shape, *shape_args)
        h.settle()
        cgstat.stop()
        usage_ms = h.cgroup_usage_ms(cg)
        got = h.sched_totals(cgstat.rows("sched-stats.csv"), "w")
        got["summary"] = cgstat.summary()["containers"]["w"]
        # stolen time is in the JSON stream only (not a Pulsar column)
        got["stolenMillis"] = sum(line["containers"].get("w", {}).get("stolenMillis", 0)
                                  for line in h.read_json_lines(cgstat.stdout_path))
        return got, report, usage_ms


def check_cpu(shape, got, usage_ms, report):
    h.check_cpu_stat(shape + " on-CPU", got["onCpuMillis"], usage_ms, [report])


def check_runq(shape, got, report, limit=RUNQ):
    want, _, most, why = h.final_counts(report)["run_delay_ns"]
    h.check_time(shape + " run-queue wait ms", got["runqWaitMillis"], want / 1e6, limit,
                 most / 1e6, why)


def check_off_cpu(shape, got, report):
    """What the kernel's figures leave of a thread's life, less its time on CPU and waiting,
    holds the time the hypervisor stole while the thread was current too: sum_exec_runtime
    leaves it out. cgstat counts that as stolen."""
    want, _, most, why = h.final_counts(report)["off_cpu_ns"]
    h.check_time(shape + " off-CPU + stolen ms",
                 got["offCpuSleepMillis"] + got["offCpuBlockedMillis"] + got["stolenMillis"],
                 want / 1e6, OFFCPU, most / 1e6, why, rel_below=OFFCPU_BELOW)


def check_runq_median(shape, got, want, bounds):
    """The run's median wait, from cgstat's histograms merged over every interval and CPU,
    against the kernel's mean wait (run_delay / pcount): within bounds (low, high) of it."""
    mean_us = want["run_delay_ns"] / max(want["pcount"], 1) / 1e3
    p50 = got["summary"].get("runqP50Micros")
    h.check(p50 is not None and bounds[0] * mean_us <= p50 <= bounds[1] * mean_us,
            "%s: run-queue median %s us against the kernel's mean wait %.3f us" % (shape, p50,
                                                                                 mean_us))
    p99, top = got["summary"].get("runqP99Micros"), got["summary"].get("runqMaxMicros")
    h.check(p50 is not None and p99 is not None and top is not None and p50 <= p99 <= top,
            "%s: median %s <= p99 %s <= max %s us" % (shape, p50, p99, top))


# A quantile of cgstat's histogram is the midpoint of the bucket that holds it: within a
# sixteenth of the value, where buckets are an eighth of their lower bound wide (docs/metrics.md).
BUCKET_HALF_WIDTH = 1 / 16


def timed_quantile(report, q):
    """Bounds (low, high), in us, of the q-quantile of every wait the workload's threads made,
    as cgstat ranks them (the ceil(q * n)-th smallest), from the waits its spinning threads timed
    themselves (workload.c, spin_timed(): each a wait plus under a microsecond, or plus a stall
    of the VM after it) and the oversleeps of its sleeping one (each only an upper bound of the
    wait after it). The kernel counts every wait (pcount); the workload did not time its
    workers' first waits, which can be as long as any (each is pinned to a CPU where another
    may spin already), nor their last wakeups and exits and the main thread's waits, all made
    while nothing spins and so taken to be shorter than any timed; how many cgstat sees after
    the kernel's reading is final_counts' range."""
    gaps = sorted(report["gaps_ns"])
    both = sorted(gaps + report["oversleeps_ns"])
    total, least, most, _ = h.final_counts(report)["waits"]
    untimed = total - len(both)
    rank_low, rank_high = (max(1, math.ceil(q * (total + gain) - 1e-9)) for gain in (least, most))
    # low: the oversleeps as no wait at all, every untimed wait below the rank
    index = rank_low - 1 - untimed - most - len(report["oversleeps_ns"])
    low = gaps[min(index, len(gaps) - 1)] if index >= 0 else 0
    # high: the workers' first waits above the rank, every other untimed wait below it
    first = len(report["threads"]) - 1
    high = both[min(max(rank_high - 1 - (untimed + least - first), 0), len(both) - 1)]
    return low / 1e3, high / 1e3


def check_runq_timed(shape, got, report, key, q):
    """cgstat's q-quantile of the run's waits against the workload's own timing of them."""
    low, high = timed_quantile(report, q)
    got_us = got["summary"].get(key)
    h.check(got_us is not None and
            low * (1 - BUCKET_HALF_WIDTH) <= got_us <= high * (1 + BUCKET_HALF_WIDTH),
            "%s: %s %s us, the workload's own timing of its %d waits gives %.1f to %.1f us "
            "(within %.4g of it)" % (shape, key, got_us, len(report["gaps_ns"]) +
                                     len(report["oversleeps_ns"]), low, high, BUCKET_HALF_WIDTH))
    # The longest wait is at least the quantile's lower bound. Neither bounded by the longest
    # gap timed: a thread's first wait comes before it times any (4,163 us against 4,099 us
    # timed once here), and a gap holds any stall of the VM after its switch-in as well
    # (5,255 us timed where the longest wait was 4,060 us, once here).
    top = got["summary"].get("runqMaxMicros")
    h.check(top is not None and got_us is not None and
            top >= max(got_us, low * (1 - BUCKET_HALF_WIDTH)),
            "%s: run-queue max %s us, at least the %s and %.1f us" % (shape, top, key, low))


def main():
    args = h.parse_args()

    # pinned pipe ping-pong: two switches per round trip, sub-microsecond waits
    got, report, usage = measure(args, "pingpong", 100000, 0)
    h.check_final_counts("pingpong", got, report, ("voluntary", "involuntary", "waits"))
    check_cpu("pingpong", got, usage, report)
    check_runq("pingpong", got, report)
    check_runq_median("pingpong", got, h.kernel_totals(report), PINGPONG_MEDIAN)
    h.check(got["voluntarySwitches"] + got["involuntarySwitches"] >= 200000,
            "pingpong: at least two switches per round trip (%d)"
            % (got["voluntarySwitches"] + got["involuntarySwitches"]))

    # two hogs sharing one CPU: involuntary switches, run-queue wait ~ on-CPU time
    got, report, usage = measure(args, "hogs", 2, 1)
    h.check_final_counts("hogs", got, report, ("voluntary", "involuntary", "waits"))
    check_cpu("hogs", got, usage, report)
    check_runq("hogs", got, report)
    check_runq_timed("hogs", got, report, "runqP50Micros", 0.5)

    # a known wait distribution: on CPU 0 a SCHED_FIFO thread runs 4 ms in 10 and preempts a
    # spinning one, whose every wait is that 4 ms slice; the first's waits are sub-microsecond
    got, report, usage = measure(args, "slices", 2)
    h.check_final_counts("slices", got, report, ("voluntary", "waits"))
    check_cpu("slices", got, usage, report)
    check_runq_timed("slices", got, report, "runqP99Micros", 0.99)

    # a sleeper: off-CPU sleep, every wakeup onto an idle CPU
    got, report, usage = measure(args, "sleeper", 2)
    h.check_final_counts("sleeper", got, report, ("voluntary", "involuntary", "waits"))
    check_cpu("sleeper", got, usage, report)
    # its waits add up to under a millisecond on a quiet machine: a third of a microsecond a
    # wait is 15 %, which no relative limit on so small a sum can tell from a real error; the
    # count of waits is exact above
    check_off_cpu("sleeper", got, report)
    h.check(got["offCpuBlockedMillis"] < 0.01 * got["offCpuSleepMillis"],
            "sleeper: no blocked time (%.3f ms)" % got["offCpuBlockedMillis"])

    # a vfork parent waits in D while each child sleeps 20 ms
    got, report, usage = measure(args, "vfork", 2)
    h.check_final_counts("vfork", got, report)
    check_cpu("vfork", got, usage, report)
    parent = report["threads"][h.report_workers(report)[0]]
    # the parent's off-CPU time at the report is its D waits and its sleeps in the park
    # barriers, which last microseconds; the release barrier's sleep after the report is S
    h.check_time("vfork off-CPU blocked ms", got["offCpuBlockedMillis"],
                 h.thread_off_cpu_ns(parent) / 1e6, BLOCKED_ABOVE, rel_below=BLOCKED,
                 tail=BLOCKED_EXIT_MS, why="a D wait in a thread's exit after the report")

    # an affinity hopper: one migration per hop
    got, report, usage = measure(args, "hopper", 400)
    h.check_final_counts("hopper", got, report, ("voluntary", "involuntary", "migrations"))
    # the first hop may find the thread on its CPU already
    h.check(h.kernel_totals(report)["migrations"] >= 399,
            "hopper: the kernel saw a migration per hop (%d)"
            % h.kernel_totals(report)["migrations"])

    # many threads on two CPUs: everything at once
    got, report, usage = measure(args, "steady", 2, 4)
    h.check_final_counts("steady", got, report, ("voluntary", "involuntary", "waits",
                                                 "migrations"))
    check_cpu("steady", got, usage, report)
    check_runq("steady", got, report, RUNQ_SLEEPERS)
    check_off_cpu("steady", got, report)
    h.done()


if __name__ == "__main__":
    main()
