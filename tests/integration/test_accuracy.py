# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""cgstat's per-cgroup totals against the kernel's own per-task accounting, for workloads of
known shape run in a scratch cgroup: switches and migrations within 2 %, on-CPU and run-queue
time within 5 % of /proc/TID/schedstat, and off-CPU time within 5 % of what the kernel's
figures leave of each thread's life (alive - sum_exec_runtime - run_delay), as sleep for a
sleeper and as blocked time for a vfork parent, whose every wait is in D. cgstat reads the
scheduler's run-queue clock, as schedstat does, so even sub-microsecond waits compare."""

import harness as h

SWITCHES = 0.02
MIGRATIONS = 0.02
TIME = 0.05
# The median wait against the kernel's mean wait. The hogs' waits are all one time slice: the
# two agree to the histogram's bucket width (12.5 %). The ping-pong's are sub-microsecond with
# a tail (an interrupt, a preemption) that raises the mean alone: its median was 0.65 to 0.76
# of the mean in runs here, so only its order of magnitude is checked.
HOGS_MEDIAN = (0.85, 1.15)
PINGPONG_MEDIAN = (0.4, 1.15)


def measure(args, shape, *shape_args):
    """Run one workload shape in its own watched cgroup; cgstat's totals and the kernel's.
    The run's summary of the cgroup goes in the totals as "summary"."""
    with h.scratch_cgroup(shape) as cg:
        cgstat = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "-c", "w=" + cg])
        report = h.run_workload(args.workload, cg, shape, *shape_args)
        h.settle()
        code = cgstat.stop()
        h.check(code == 0, "%s: cgstat exit code %d" % (shape, code))
        got = h.sched_totals(cgstat.rows("sched-stats.csv"), "w")
        got["summary"] = cgstat.summary()["containers"]["w"]
        return got, h.kernel_totals(report), report


def check_switches(shape, got, want, report):
    tail = h.exit_tail(report)
    h.check_count(shape + " voluntary switches", got["voluntarySwitches"], want["nvcsw"],
                  SWITCHES, tail)
    h.check_count(shape + " involuntary switches", got["involuntarySwitches"], want["nivcsw"],
                  SWITCHES, tail)


def check_cpu(shape, got, want):
    h.check_close(shape + " on-CPU ms", got["onCpuMillis"], want["exec_ns"] / 1e6, TIME)


# The waits of the exit tail (threads leaving the park barrier and exiting after the workload
# read the kernel's figures) count in cgstat only; cgstat's excess of waits over pcount says how
# many there were. On this shared 2-CPU VM one of them once took 10 ms: 5 % of a ping-pong's
# run-queue time. Each is allowed this much, and only above the kernel's figure.
TAIL_WAIT_MS = 5


def check_runq(shape, got, want):
    extra = max(0, got["runqWaits"] - want["pcount"])
    kernel_ms = want["run_delay_ns"] / 1e6
    excess = got["runqWaitMillis"] - kernel_ms
    slack = extra * TAIL_WAIT_MS
    ok = abs(excess) <= TIME * kernel_ms or 0 <= excess <= TIME * kernel_ms + slack
    h.check(ok, "%s run-queue wait ms: cgstat %.6g, kernel %.6g, error %.2f%% (limit %.1f%%, and"
            " %d ms above it for %d exit-tail waits)" % (shape, got["runqWaitMillis"], kernel_ms,
                                                         100 * excess / kernel_ms, 100 * TIME,
                                                         slack, extra))


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


def check_cpu_and_runq(shape, got, want):
    h.check_close(shape + " on-CPU + run-queue ms", got["onCpuMillis"] + got["runqWaitMillis"],
                  (want["exec_ns"] + want["run_delay_ns"]) / 1e6, TIME)



def main():
    args = h.parse_args()

    # pinned pipe ping-pong: two switches per round trip, sub-microsecond waits
    got, want, report = measure(args, "pingpong", 100000, 0)
    check_switches("pingpong", got, want, report)
    check_cpu("pingpong", got, want)
    check_runq("pingpong", got, want)
    h.check_count("pingpong run-queue waits vs schedstat pcount", got["runqWaits"],
                  want["pcount"], SWITCHES, h.exit_tail(report))
    check_runq_median("pingpong", got, want, PINGPONG_MEDIAN)
    h.check(got["voluntarySwitches"] + got["involuntarySwitches"] >= 200000,
            "pingpong: at least two switches per round trip (%d)"
            % (got["voluntarySwitches"] + got["involuntarySwitches"]))

    # two hogs sharing one CPU: involuntary switches, run-queue wait ~ on-CPU time
    got, want, report = measure(args, "hogs", 2, 1)
    check_switches("hogs", got, want, report)
    check_cpu("hogs", got, want)
    check_runq("hogs", got, want)
    check_runq_median("hogs", got, want, HOGS_MEDIAN)

    # a sleeper: off-CPU sleep, every wakeup onto an idle CPU
    got, want, report = measure(args, "sleeper", 2)
    check_switches("sleeper", got, want, report)
    check_cpu("sleeper", got, want)
    # its waits add up to under a millisecond on a quiet machine, where a third of a
    # microsecond a wait is 15 %: the sum with on-CPU time is what is checked
    check_cpu_and_runq("sleeper", got, want)
    h.check_close("sleeper off-CPU sleep ms", got["offCpuSleepMillis"],
                  want["off_cpu_ns"] / 1e6, TIME)
    h.check(got["offCpuBlockedMillis"] < 0.01 * got["offCpuSleepMillis"],
            "sleeper: no blocked time (%.3f ms)" % got["offCpuBlockedMillis"])

    # a vfork parent waits in D while each child sleeps 20 ms
    got, want, report = measure(args, "vfork", 2)
    check_switches("vfork", got, want, report)
    parent = [t for tid, t in report["threads"].items() if int(tid) != report["pid"]][0]
    h.check_close("vfork off-CPU blocked ms", got["offCpuBlockedMillis"],
                  h.thread_off_cpu_ns(parent) / 1e6, TIME)

    # an affinity hopper: one migration per hop
    got, want, report = measure(args, "hopper", 400)
    check_switches("hopper", got, want, report)
    h.check_count("hopper migrations", got["migrations"], want["migrations"], MIGRATIONS,
                  h.exit_tail(report))
    # the first hop may find the thread on its CPU already
    h.check(want["migrations"] >= 399,
            "hopper: the kernel saw a migration per hop (%d)" % want["migrations"])

    # many threads on two CPUs: everything at once
    got, want, report = measure(args, "steady", 2, 4)
    check_switches("steady", got, want, report)
    check_cpu("steady", got, want)
    check_runq("steady", got, want)
    h.check_count("steady migrations", got["migrations"], want["migrations"], MIGRATIONS,
                  h.exit_tail(report))
    h.check_close("steady off-CPU ms", got["offCpuSleepMillis"] + got["offCpuBlockedMillis"],
                  want["off_cpu_ns"] / 1e6, TIME)
    h.done()


if __name__ == "__main__":
    main()
