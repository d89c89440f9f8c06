# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What must hold whatever the workload, checked where users look first: the default mode (every
cgroup) and the root cgroup with its kernel threads, idle and busy, beside a second cgstat.

- All cgroups = the host: per interval, the on-CPU and stolen time summed over every row
  equals the busy time of /proc/stat over the same interval, read by the test itself as each
  row arrives, within 1 % of the machine's capacity plus /proc/stat's own resolution. Busy time
  is the time elapsed on every CPU less /proc/stat's idle and iowait, which the kernel measures
  from idle entry to exit; its user, system, irq, softirq and steal are sampled at ticks, and
  their sum strays from the time elapsed by several % of capacity in one interval (see
  host_idle_ns). The stolen time summed over the rows is at most /proc/stat's steal (the same
  bound): steal also comes while a CPU idles, in no task's time; and no row, nor the sum,
  shows more cores than there are CPUs.
- The BPF side's own check that no CPU counts more than one task on CPU (inconsistencies) is 0
  in every line.
- The root cgroup watched counts every task, kernel threads included, as the kernel does: its
  on-CPU time per interval against the sum of /proc/*/task/*/schedstat deltas.
- A second cgstat running beside the first changes neither's figures for a workload of known
  shape."""

import json
import os
import signal
import subprocess
import time

import harness as h

NCPU = len(os.sched_getaffinity(0))
# The bound: 1 % of the machine's capacity, per interval.
CAPACITY_SHARE = 0.01
# All rows against /proc/stat's busy time over a run: up to 0.11 % in the runs behind
# docs/reliability.md, -0.081 to +0.033 % in CI (2026-12-05); about three times the worst
# (CAPACITY_SHARE before).
RUN_SHARE = 0.0035
# The root against every thread's schedstat over a run's compared intervals: up to 0.04 % in
# the runs behind docs/reliability.md, +0.010 to +0.065 % here (2026-12-05); about three times
# the worst (CAPACITY_SHARE / 2 before).
ROOT_RUN_SHARE = 0.002
# /proc/stat counts whole ticks in USER_HZ units, summed over CPUs before rounding: a reading is
# up to one unit low, so a difference of two readings is within one unit either way.
PROC_STAT_RESOLUTION_NS = 1e9 / h.USER_HZ
INTERVALS = 6
# One interval of the root against every thread's schedstat. The two sides' edges differ:
# cgstat snapshots at epochMillis, the test reads some hundred files from when the line arrives
# (the drain and the write later) to the end of its sweep. A thread's time in that window counts
# in the interval ending for the test and in the next for cgstat; and a running thread's
# sum_exec_runtime is up to a tick stale. Both measured at each edge: what can move is at most
# every CPU busy over (the line's lag + the sweep + a tick), at each of the interval's two edges
# (root-idle here: lag 1.4 to 2.0 ms, sweep 3.6 to 5.1 ms, intervals within ±3.9 ms of 2,000;
# in CI once −2.08 % then +3.98 % of capacity, time that moved across one edge). Beyond that,
# ROOT_INTERVAL_SHARE for the outputs' rounding and what the edges' bound leaves out. Over the
# run, ROOT_RUN_SHARE.
ROOT_INTERVAL_SHARE = 0.002
# The intervals cgstat states (intervalMillis, which the per-interval checks scale the test's
# window to) against the test's own clock from its first reading to its last. Both ends are
# read as a line arrives, and a line is late by cgstat's drain and by any stall of the VM (steal)
# meanwhile: 0.0 to 1.5 ms apart in 29 of 30 checks over four CI runs, but 14.9 ms once (the
# sanitizer build, both CPUs busy), and 7.2 and 15.3 ms in two runs here (one CPU busy). 50 ms
# over a 6 s span still shows an interval length off by 1 %.
INTERVAL_CLOCK_MS = 50


def host_idle_ns():
    """Idle and iowait time, and steal, summed over CPUs since boot, from the first line of
    /proc/stat. Idle and iowait are measured from each idle entry to its exit (NO_HZ), where
    user, system and the rest are sampled at ticks: under a load of short processes their sum
    strays 10 % from the time elapsed, and one busy CPU read 1.5 % of capacity off in a second;
    so busy time is the time elapsed less idle and iowait."""
    stat = h.proc_stat_ns()
    return stat["idle"] + stat["iowait"], stat["steal"]


def forks():
    """Threads and processes made since boot (/proc/stat's processes line)."""
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("processes "):
                return int(line.split()[1])
    return 0


def all_task_exec_ns():
    """tid -> sum_exec_runtime for every thread that exists, kernel threads included."""
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            tids = os.listdir("/proc/%s/task" % pid)
        except OSError:
            continue
        for tid in tids:
            figures = h.schedstat(int(tid))
            if figures:
                out[int(tid)] = figures[0]
    return out


def load(args, cg, cpus, seconds):
    """Two spinning threads pinned to each CPU in cpus, in cgroup cg, for seconds."""
    return [h.Workload(args.workload, cg, "hogs", seconds, cpu) for cpu in cpus]


def all_cgroups_equal_host(args, name, cpus, forkers=0, light=False):
    """The all-cgroups mode's on-CPU, summed over rows, against /proc/stat's busy time; hogs on
    cpus, and forkers shells that run /bin/true over and over (a build's shape: processes of a
    millisecond, made and gone many times an interval). With light, cgstat --light, which has
    no stolen time: the tasks' sum_exec_runtime leaves it out, so the reference is busy time
    less /proc/stat's steal."""
    seconds = INTERVALS + 4
    with h.scratch_cgroup(name) as cg:
        runs = load(args, cg, cpus, seconds)
        # every hog runs (a main thread and two spinners each), so every interval is steady
        h.wait_threads(cg, 3 * len(cpus))
        shells = [h.spawn_in_cgroup(cg, ["sh", "-c", "while :; do /bin/true; done"])
                  for _ in range(forkers)]
        try:
            got = h.run_lines(args, ["--light"] if light else [],
                              lambda: (time.monotonic(), host_idle_ns()), INTERVALS + 1)
        finally:
            for shell in shells:
                shell.kill()
                shell.wait()
        for w in runs:
            w.wait()
    worst = prev_steal_share = 0.0
    for (prev, (t0, (idle0, steal0))), (line, (t1, (idle1, steal1))) in zip(got, got[1:]):
        on_cpu_ns = sum(c["onCpuMillis"] for c in line["containers"].values()) * 1e6
        stolen_ns = sum(c.get("stolenMillis", 0) for c in line["containers"].values()) * 1e6
        cores = max([c["cpuCores"] for c in line["containers"].values()] or [0])
        h.check(cores <= NCPU * 1.001, "%s: the busiest row shows %.3f cores of %d"
                % (name, cores, NCPU))
        interval_ns = line["intervalMillis"] * 1e6
        # the host's busy time over the test's own window, scaled to cgstat's interval
        window_ns = (t1 - t0) * 1e9
        scale = interval_ns / window_ns
        steal_ns = (steal1 - steal0) * scale
        busy_ns = (NCPU * window_ns - (idle1 - idle0)) * scale - (steal_ns if light else 0)
        error = (on_cpu_ns + stolen_ns - busy_ns) / (NCPU * interval_ns)
        worst = max(worst, abs(error))
        # --light reads a running task's sum_exec_runtime as its CPU last updated it, at a
        # tick or a switch: up to a tick late on each CPU, which the next interval gets; and
        # its sweep reads each task at its own moment before the snapshot, so a sweep longer
        # than the one before gives the interval more (+0.6 % of capacity once in 6 intervals
        # of the forks, 2026-12-06): a tick a CPU and CAPACITY_SHARE, which the comparison
        # with /proc/stat below holds it to anyway
        late_ns = NCPU * (h.kernel_tick_ms() * 1e6 + CAPACITY_SHARE * interval_ns) if light else 0
        h.check(on_cpu_ns <= NCPU * interval_ns * 1.001 + late_ns,
                "%s: all rows sum to %.3f cores of %d%s" % (
                    name, on_cpu_ns / interval_ns, NCPU,
                    " (and %.1f ms for the sweep's moments)" % (late_ns / 1e6) if light else ""))
        limit = CAPACITY_SHARE + PROC_STAT_RESOLUTION_NS / (NCPU * interval_ns)
        # Off by up to the host's steal too. Below: time stolen while no task was current (an
        # interrupt on an idle CPU) is busy in /proc/stat and no task's (once in CI-like runs
        # here: -3.04 % of capacity in an idle interval whose steal was 5.3 % of it). Either
        # way: a stall of the VM between cgstat's snapshot and the test's reading moves busy
        # time from one of the test's windows to the next, and /proc/stat accounts the stall
        # as steal at the tick after it, in either (+1.95 % and +2.28 % in the forks intervals
        # of two CI runs whose steal was 28 % of capacity): so the larger steal of this window
        # and the one before. The whole run (below) has no such allowance: a stall moves time
        # between windows, not out of them.
        steal_share = steal_ns / (NCPU * interval_ns)
        allowance = max(steal_share, prev_steal_share)
        prev_steal_share = steal_share
        # --light: the sweep's moments move time between neighbouring intervals as above, in
        # either direction here (CI run 66: -1.54, +1.22, -1.79, +1.40 % in four intervals in
        # a row of the forks, -0.058 % over the run); the run's check below has no such room
        sweep_share = late_ns / (NCPU * interval_ns)
        h.check(-(limit + allowance + sweep_share) <= error <= limit + allowance + sweep_share,
                "%s: all rows %.3f cores on CPU + %.3f stolen, /proc/stat busy %.3f cores: "
                "%+.2f%% of capacity (limit %.2f%% + the steal's %.2f%%%s)"
                % (name, on_cpu_ns / interval_ns, stolen_ns / interval_ns,
                   busy_ns / interval_ns, 100 * error, 100 * limit, 100 * allowance,
                   " + the sweep's moments %.2f%%" % (100 * sweep_share) if light else ""))
        steal_error = (stolen_ns - steal_ns) / (NCPU * interval_ns)
        h.check(light or steal_error <= limit,
                "%s: all rows %.3f cores stolen, /proc/stat steal %.3f cores: %+.2f%% of "
                "capacity (at most %+.2f%%)" % (name, stolen_ns / interval_ns,
                                                steal_ns / interval_ns, 100 * steal_error,
                                                100 * limit))
    # over the run, by the test's clock alone: the windows join end to end, so the lateness of
    # each reading cancels but for the first and the last
    span_ns = (got[-1][1][0] - got[0][1][0]) * 1e9
    check_interval_clock(name, got)
    busy_ns = NCPU * span_ns - (got[-1][1][1][0] - got[0][1][1][0])
    if light:
        busy_ns -= got[-1][1][1][1] - got[0][1][1][1]
    cgstat_ns = sum(sum(c["onCpuMillis"] + c.get("stolenMillis", 0)
                        for c in line["containers"].values())
                    for line, _ in got[1:]) * 1e6
    error = (cgstat_ns - busy_ns) / (NCPU * span_ns)
    h.check(abs(error) <= RUN_SHARE,
            "%s: over %.3f s of the test's clock all rows average %.4f cores on CPU + stolen, "
            "/proc/stat busy %.4f: %+.3f%% of capacity (limit %.2f%%; worst interval %.2f%%)"
            % (name, span_ns / 1e9, cgstat_ns / span_ns, busy_ns / span_ns, 100 * error,
               100 * RUN_SHARE, 100 * worst))


def check_interval_clock(name, got):
    """The lengths cgstat gives its intervals add up to the test's own clock over them, from the
    first line's arrival to the last's."""
    lines = [line for line, _ in got[1:]]
    span_ns = (got[-1][1][0] - got[0][1][0]) * 1e9
    stated_ms = sum(line["intervalMillis"] for line in lines)
    h.check(abs(stated_ms - span_ns / 1e6) <= INTERVAL_CLOCK_MS,
            "%s: %d intervals of %.1f ms in all, %.1f ms by the test's clock (within %d ms)"
            % (name, len(lines), stated_ms, span_ns / 1e6, INTERVAL_CLOCK_MS))


def edge_reading():
    """What the test reads at an interval's edge, as the line arrives: when (monotonic and wall
    clock), the forks so far, every thread's sum_exec_runtime, and how long that sweep took."""
    start, wall = time.monotonic(), time.time()
    made = forks()
    exec_ns = all_task_exec_ns()
    return dict(t=start, wall_ms=wall * 1000, forks=made, exec_ns=exec_ns,
                sweep_ms=(time.monotonic() - start) * 1000)


def comparable(before, after):
    """Whether the kernel's per-thread figures are a reference for the interval between two
    readings: no thread was made in it, and none ended. A thread made and gone between the two
    is in cgstat's figure and in neither reading; one that ended ran after the first reading,
    in cgstat's figure and not in the second (+13.4 ms in CI once, with 5 ended)."""
    return after["forks"] == before["forks"] and set(before["exec_ns"]) <= set(after["exec_ns"])


def root_equals_schedstat(args, name, cpus, intervals=INTERVALS, light=False):
    """The v2 root watched: every task counts, kernel threads too, as schedstat says. The
    intervals compared are those in which the host made and ended no thread; on a host that
    does (another program's work), the run goes on until `intervals` of them, up to three
    times as many. light: with --light, whose sweep reads the same sum_exec_runtime."""
    most = 3 * intervals

    def enough(got):
        return sum(comparable(a, b) for (_, a), (_, b) in zip(got, got[1:])) >= intervals

    with h.scratch_cgroup(name) as cg:
        # the load outlasts the longest run; it is killed once the lines are read
        hogs = [subprocess.Popen([args.workload, "--cgroup", cg, "hogs", str(most + 4), str(cpu)],
                                 stdout=subprocess.DEVNULL) for cpu in cpus]
        h.wait_threads(cg, 3 * len(cpus))
        got = h.run_lines(args, ["-c", "root=" + h.v2_mount()] + (["--light"] if light else []),
                          edge_reading, most + 1, until=enough)
        for p in hogs:
            p.kill()
            code = p.wait()
            h.check(code == -signal.SIGKILL, "%s: the load ran until the test ended it (exit %d)"
                    % (name, code))
    kthreads = kernel_threads()
    tick_ms = h.kernel_tick_ms()

    def edge_ms(line, reading):
        # every CPU busy from the snapshot to the sweep's end, and a tick of staleness
        return NCPU * (max(reading["wall_ms"] - line["epochMillis"], 0) + reading["sweep_ms"]
                       + tick_ms)

    compared = 0
    sum_got = sum_kernel = sum_capacity = 0.0
    worst_shift = 0.0
    for (prev, before), (line, after) in zip(got, got[1:]):
        if not comparable(before, after):
            continue
        compared += 1
        interval_ns = line["intervalMillis"] * 1e6
        # the threads' time over the test's own window, scaled to cgstat's interval
        scale = interval_ns / ((after["t"] - before["t"]) * 1e9)
        moved = {tid: v - before["exec_ns"].get(tid, 0) for tid, v in after["exec_ns"].items()}
        kernel_ns = scale * sum(moved.values())
        kthread_ns = scale * sum(v for tid, v in moved.items() if tid in kthreads)
        got_ns = line["containers"]["root"]["onCpuMillis"] * 1e6
        sum_got += got_ns
        sum_kernel += kernel_ns
        capacity_ns = NCPU * interval_ns
        sum_capacity += capacity_ns
        shift_ms = edge_ms(prev, before) + edge_ms(line, after)
        error = (got_ns - kernel_ns) / capacity_ns
        worst_shift = max(worst_shift, abs(got_ns - kernel_ns) / 1e6 / shift_ms)
        h.check(abs(got_ns - kernel_ns) <= ROOT_INTERVAL_SHARE * capacity_ns + shift_ms * 1e6,
                "%s: root on-CPU %.3f ms, schedstat of every thread %.3f ms (kernel threads "
                "%.3f ms): %+.3f ms, %+.2f%% of capacity (limit %.1f%% and "
                "%.1f ms the edges can move: lags %.1f and %.1f ms, sweeps %.1f and %.1f ms)"
                % (name, got_ns / 1e6, kernel_ns / 1e6, kthread_ns / 1e6,
                   (got_ns - kernel_ns) / 1e6, 100 * error, 100 * ROOT_INTERVAL_SHARE, shift_ms,
                   before["wall_ms"] - prev["epochMillis"], after["wall_ms"] - line["epochMillis"],
                   before["sweep_ms"], after["sweep_ms"]))
    h.check(compared >= intervals,
            "%s: %d of %d intervals had no thread made or ended in them, and were compared "
            "(%d needed; the worst used %.0f %% of its edges' bound)"
            % (name, compared, len(got) - 1, intervals, 100 * worst_shift))
    check_interval_clock(name, [(line, (r["t"],)) for line, r in got])
    error = (sum_got - sum_kernel) / max(sum_capacity, 1)
    h.check(abs(error) <= ROOT_RUN_SHARE,
            "%s: over the %d intervals compared, root on-CPU %.3f ms, schedstat %.3f ms: %+.3f%% "
            "of capacity (limit %.1f%%)" % (name, compared, sum_got / 1e6, sum_kernel / 1e6,
                                            100 * error, 100 * ROOT_RUN_SHARE))


def kernel_threads():
    """The tids of kernel threads: kthreadd and its children."""
    tids = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if pid == "2" or ppid == 2:
            tids.add(int(pid))
    return tids


def beside_second_cgstat(args):
    """A pipe ping-pong watched by one cgstat while another watches every cgroup: both
    against the kernel's per-thread figures."""
    with h.scratch_cgroup("pp") as cg:
        other = h.Cgstat(args.cgstat, ["-q", "-i", "0.5"])
        one = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "-c", "w=" + cg])
        report = h.run_workload(args.workload, cg, "pingpong", 100000, 0)
        h.settle()
        code_one, code_other = one.stop(), other.stop()
        usage_ms = h.cgroup_usage_ms(cg)
        h.check(code_one == 0 and code_other == 0,
                "two cgstats: exit codes %d and %d" % (code_one, code_other))
        label = h.v2_label(cg)
        for who, cgstat, container in (("watching it", one, "w"),
                                       ("watching all", other, label)):
            got = h.sched_totals(cgstat.rows("sched-stats.csv"), container)
            h.check_cpu_stat("beside another cgstat, the one %s: on-CPU" % who,
                             got["onCpuMillis"], usage_ms, [report])
            h.check_final_counts("beside another cgstat, the one %s:" % who, got, report,
                                 ("voluntary", "involuntary", "waits"))
            summary = cgstat.summary()
            h.check(summary["inconsistencies"] == 0 and summary["droppedEvents"] == 0,
                    "beside another cgstat, the one %s: %d inconsistencies, %d dropped"
                    % (who, summary["inconsistencies"], summary["droppedEvents"]))


def restarted_service(args, light=False):
    """A watched cgroup removed and made again under its path (a service restart) is counted
    again under its label, and said once on stderr: its on-CPU in sched-stats.csv, and its
    cgroup files in cgroup-stats.csv, every row of the second life but the first (its cgroup
    files' baseline) filled, their CPU pressure within the new cgroup's cpu.pressure. (Before
    2026-12-05 cgroup-stats.csv was empty from the restart on.) light: with --light, whose
    first life's tasks are charged at their exits and the second's by the sweep."""
    what = "restart%s" % (" --light" if light else "")
    cgstat, lives, usage_ms, code, second = h.service_restarted(
        args.cgstat, args.workload, ["-q", "-i", "0.5"] + (["--light"] if light else []),
        ("steady", 1, 2))
    got = h.sched_totals(cgstat.rows("sched-stats.csv"), "svc", light)
    h.check_cpu_stat("%s: on-CPU of both lives of the cgroup" % what, got["onCpuMillis"],
                     usage_ms, lives)
    said = [line for line in cgstat.stderr_lines if "made again" in line]
    h.check(len(said) == 1, "%s: said once on stderr: %r" % (what, said))
    rows = [r for r in cgstat.rows("cgroup-stats.csv") if r["container"] == "svc"
            and float(r["epochMillis"]) > second["made_ms"]]
    empty = [r["epochMillis"] for r in rows[1:] if not r["cpuPressureSomeMillis"]]
    pressure = sum(float(r["cpuPressureSomeMillis"] or 0) for r in rows)
    # each row's figure has 3 decimals
    h.check(len(rows) >= 3 and not empty
            and pressure <= second["pressure"]["some"] + 0.0005 * len(rows),
            "%s: cgroup-stats.csv after the restart: %d rows, empty after the first: %s; "
            "CPU pressure %.3f ms, the new cgroup's cpu.pressure %.3f ms"
            % (what, len(rows), empty, pressure, second["pressure"]["some"]))


def restarted_within_interval(args):
    """The all-cgroups mode, a cgroup removed and made again under its path within one interval
    (a quick service restart): one row of its label in that interval, holding both lives, and
    no key twice in any JSON line or in the summary."""
    path = os.path.join(h.v2_mount(), "cgstat-test-%d-quick" % os.getpid())
    label = h.v2_label(path)
    os.mkdir(path)
    try:
        # the first interval starts at the baseline snapshot, before "attached" is said, and
        # Cgstat returns once it is
        cgstat = h.Cgstat(args.cgstat, ["-f", "json", "-i", "10"])
        start = time.time()
        first = h.run_workload(args.workload, path, "steady", 1, 2)
        usage_ms = h.cgroup_usage_ms(path)
        h.remove_cgroup_tree(path)
        os.mkdir(path)
        second = h.run_workload(args.workload, path, "steady", 1, 2)
        end = time.time()
        usage_ms += h.cgroup_usage_ms(path)
        h.settle()
        code = cgstat.stop()
    finally:
        h.remove_cgroup_tree(path)
    h.check(code == 0, "restart within an interval: cgstat exit code %d; its stderr ends %s"
            % (code, cgstat.stderr_lines[-6:]))
    twice = set()

    def keys_once(pairs):
        keys = [k for k, _ in pairs]
        twice.update(k for k in keys if keys.count(k) > 1)
        return dict(pairs)

    with open(cgstat.stdout_path, encoding="utf-8") as f:
        lines = [json.loads(line, object_pairs_hook=keys_once) for line in f if line.strip()]
    with open(os.path.join(cgstat.out_dir, "container-summary.json"), encoding="utf-8") as f:
        summary = json.load(f, object_pairs_hook=keys_once)
    h.check(not twice, "restart within an interval: keys given twice: %s" % sorted(twice))
    holding = [line for line in lines
               if line["epochMillis"] / 1e3 - line["intervalMillis"] / 1e3 <= start
               and end <= line["epochMillis"] / 1e3]
    h.check(len(holding) == 1 and label in holding[0]["containers"],
            "restart within an interval: both lives in one interval, with a row of %s" % label)
    got_ms = sum(line["containers"].get(label, {}).get("onCpuMillis", 0) for line in lines)
    h.check_cpu_stat("restart within an interval: on-CPU of both lives", got_ms, usage_ms,
                     [first, second])
    h.check(label in summary["containers"],
            "restart within an interval: the summary has %s" % label)


def moved_process(args):
    """-p follows the process when it moves to another cgroup: from the interval after the
    move, its rows hold what the kernel charged the new cgroup."""
    with h.scratch_cgroup("from") as src, h.scratch_cgroup("to") as dst:
        work = subprocess.Popen([args.workload, "--cgroup", src, "steady", "6", "2"],
                                stdout=subprocess.PIPE)
        h.wait_member(src, work.pid)
        cgstat = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "-p", "w=%d" % work.pid])
        # two whole intervals in the old cgroup, counted where it was
        cgstat.wait_intervals(time.time() * 1000, 2)
        with open(os.path.join(dst, "cgroup.procs"), "w") as f:
            f.write(str(work.pid))
        moved_ms = time.time() * 1000
        report = h.parse_report(work.communicate(timeout=60)[0], time.monotonic_ns())
        h.settle()
        cgstat.stop()
        usage_dst = h.cgroup_usage_ms(dst)
    rows = [r for r in cgstat.rows("sched-stats.csv") if r["container"] == "w"]
    # cgstat follows at the end of the interval the move happened in; the rows ending over
    # 750 ms after the move began after it even when an interval runs late
    after = [r for r in rows if float(r["epochMillis"]) > moved_ms + 750]
    got_after = sum(float(r["onCpuMillis"]) for r in after)
    # the steady threads run 40 % of the time: 0.8 cores, 400 ms an interval; those 750 ms
    # span at most two intervals, that the rows after leave out of the new cgroup's usage
    h.check(len(after) >= 2 and usage_dst - 800 <= got_after <= usage_dst * (1 + h.ONCPU),
            "moved: %d rows after the move hold %.1f ms on CPU; the new cgroup's cpu.stat %.1f "
            "ms, of which the 750 ms after the move may hold up to 800" % (len(after), got_after,
                                                                         usage_dst))
    said = [line for line in cgstat.stderr_lines if "moved to" in line]
    h.check(len(said) == 1, "moved: said once on stderr: %r" % said)
    got = h.sched_totals(rows, "w")
    want_ms = h.kernel_totals(report)["exec_ns"] / 1e6
    h.check(got["onCpuMillis"] <= want_ms * (1 + h.ONCPU),
            "moved: on-CPU %.1f ms of the process's %.1f ms: never more (it ran 0.3 s before "
            "cgstat, and up to an interval after its move before cgstat followed)"
            % (got["onCpuMillis"], want_ms))


# A CPU that goes offline takes the thread it ran with it unswitched, and cgstat knows when it
# left only within the CPU's last charged runtime: +0.17 to +0.93 % against cpu.stat here, and
# +1.31 % once in the sanitizer build against the threads' own figures.
HOTPLUG_ONCPU = 0.03

CPU1_ONLINE = "/sys/devices/system/cpu/cpu1/online"


def cpu_hotplug(args):
    """CPU 1 taken offline and back mid-run: its counts stay in every sum, so the totals still
    match the kernel's (before, they dropped out while it was offline and came back counted
    twice)."""
    if NCPU < 2 or not os.path.exists(CPU1_ONLINE):
        h.skip("CPU hotplug: no %s here" % CPU1_ONLINE)
        return
    with h.scratch_cgroup("hotplug") as cg:
        cgstat = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "-c", "w=" + cg])
        work = h.Workload(args.workload, cg, "sleeper", 4)
        try:
            h.wait_threads(cg, 2)
            # on CPU 1 until it goes: its switches are counted there, in CPU 1's slots, and
            # drained from them in two intervals
            for tid in h.cgroup_threads(cg):
                os.sched_setaffinity(int(tid), {1})
            cgstat.wait_intervals(time.time() * 1000, 2)
            with open(CPU1_ONLINE, "w") as f:
                f.write("0")
            # drained while CPU 1 is offline: its slots must stay in the sums
            cgstat.wait_intervals(time.time() * 1000, 2)
        finally:
            with open(CPU1_ONLINE, "w") as f:
                f.write("1")
        report = work.wait()
        h.settle()
        cgstat.stop()
        usage_ms = h.cgroup_usage_ms(cg)
    got = h.sched_totals(cgstat.rows("sched-stats.csv"), "w")
    h.check_final_counts("hotplug:", got, report)
    h.check_cpu_stat("hotplug: on-CPU", got["onCpuMillis"], usage_ms, [report], HOTPLUG_ONCPU)
    h.check(cgstat.summary()["inconsistencies"] == 0, "hotplug: no inconsistency")


def main():
    args = h.parse_args()
    everything = list(range(NCPU))
    all_cgroups_equal_host(args, "idle", [])
    all_cgroups_equal_host(args, "one-busy", [0])
    all_cgroups_equal_host(args, "all-busy", everything)
    all_cgroups_equal_host(args, "forks", [], forkers=NCPU)
    # --light: each task's counters read each interval, exits charged at the exit path (a busy
    # CPU alone, light-one-busy, read -0.041 to +0.033 % over the run: left out of CI's time)
    all_cgroups_equal_host(args, "light-forks", [], forkers=NCPU, light=True)
    # A CPU that idles after a switch-out the kernel did not report used to keep that task
    # on CPU until its next switch: 3 intervals of 60 here, 1 of 6 in CI. 20 intervals idle.
    root_equals_schedstat(args, "root-idle", [], intervals=20)
    root_equals_schedstat(args, "root-busy", everything)
    # --light: the kernel threads' time too, read by the sweep
    root_equals_schedstat(args, "light-root-busy", everything, light=True)
    beside_second_cgstat(args)
    restarted_service(args)
    restarted_service(args, light=True)
    restarted_within_interval(args)
    moved_process(args)
    cpu_hotplug(args)
    h.done()


if __name__ == "__main__":
    main()
