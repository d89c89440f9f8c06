# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The checks the kernel matrix runs inside each guest (tests/kernels/guest.sh runs this as the
guest's last step): the main suite's own checks against the guest kernel's accounting, taken
from tests/integration so that the guests and this host are held to the same rules, and a few
of the guest's own where the main suite's need this host's hybrid cgroup layout or tmux.

One line per check on stdout, read by tests/kernels/matrix.sh:
    RESULT <check> pass|fail <passed>/<checks> [<why it stopped>]
    PROG <mode> <program> insns=<processed> usec=<verification time>
The harness's own "ok"/"FAIL" lines come before each RESULT, with the figures.

    python3 guest_checks.py --cgstat CGSTAT --workload WORKLOAD [CHECK...]"""

import argparse
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

import harness as h  # noqa: E402
import test_accuracy as acc  # noqa: E402
import test_invariants as inv  # noqa: E402
import test_light as light  # noqa: E402
import test_modes as modes  # noqa: E402
import test_threads as thr  # noqa: E402
import test_verdict as ver  # noqa: E402

# The guests run under TCG on a 2-CPU host: QEMU's own threads take host CPUs from the guest's
# at moments the guest cannot see (TCG has no steal time), and everything runs 10 to 50 times
# slower than on this host. So the checks whose reference rests on timing (the test's own
# readings as a line arrives, the drains' wall-clock stamps, a workload's barrier sleeps that last
# microseconds on hardware) get limits of their own here, each about three times the worst error
# seen in the guests (docs/kernels.md); the checks against the kernel's per-task and per-cgroup
# accounting over the same events keep the main suite's.
GUEST_LIMITS = [
    # all cgroups against /proc/stat busy, per interval and over the run: +2.1 % in 18 intervals
    # of quiet runs (7.5 % once with a compiler running beside QEMU)
    (inv, "CAPACITY_SHARE", 0.06),
    (inv, "RUN_SHARE", 0.06),
    # a vfork parent's barrier sleeps are in its reference: -0.50 % at worst
    (acc, "BLOCKED", 0.015),
    # and above it on 6.12 and 7.2: up to +0.20 % (docs/kernels.md)
    (acc, "BLOCKED_ABOVE", 0.006),
    # sleepers' off-CPU time: +2.3 % at worst
    (acc, "OFFCPU", 0.06),
    # sleepers' run-queue time: -5.7 % at worst, on 6.12 alone (cgstat below run_delay, as on
    # this host's 6.18, docs/metrics.md: run_delay takes in part of some sleeps)
    (acc, "RUNQ_SLEEPERS", 0.15),
    # conservation against the test's clock, each line's arrival: the lines' lag behind their
    # snapshots changes by tens of ms here (the reader waits for its CPU's turn), most after
    # the interval the load started in: up to 44 ms there, 13 ms in the others, 54 ms between
    # the run's first and last line, in 5 runs on 6.1 (2026-12-05)
    (h, "LINE_LAG_MS", 150.0),
    # the intervals' stated lengths against the test's clock from the run's first line to its
    # last, whose arrivals lag by what the reader waited for its CPU: 11 to 30 ms on 6.1 and
    # 6.12, but 94 to 110 ms in 4 of 6 one-busy runs on 7.2 (2026-12-06), against 50 here
    (inv, "INTERVAL_CLOCK_MS", 350),
]
for module, name, limit in GUEST_LIMITS:
    setattr(module, name, limit)

# libbpf's debug output of one program's load with the kernel's statistics (-vv)
PROG_LOG = re.compile(r"prog '(\w+)': -- BEGIN PROG LOAD LOG --\n(.*?)-- END PROG LOAD LOG --",
                      re.S)
# cpu.max of the throttled check: half a CPU
QUOTA_US, PERIOD_US = 50000, 100000


def loads(args, mode, argv):
    """cgstat loads in a mode and runs two intervals: exit 0, and each program's verifier
    statistics as the kernel gave them (-vv sets BPF_LOG_STATS)."""
    out = subprocess.run([args.cgstat, "-vv", "-f", "csv", "-i", "0.5", "-d", "1"] + argv,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    err = out.stderr.decode(errors="replace")
    h.check(out.returncode == 0, "%s: cgstat loads and exits 0 (exit %d)%s"
            % (mode, out.returncode, "" if out.returncode == 0 else "\n" + err[-4000:]))
    rows = [line for line in out.stdout.decode().splitlines()[1:] if line]
    h.check(len(rows) >= 1, "%s: cgstat wrote %d rows" % (mode, len(rows)))
    for name, log in PROG_LOG.findall(err):
        insns = re.search(r"processed (\d+) insns", log)
        usec = re.search(r"verification time (\d+) usec", log)
        print("PROG %s %s insns=%s usec=%s" % (mode, name, insns.group(1) if insns else "?",
                                               usec.group(1) if usec else "?"), flush=True)


def load_modes(args):
    loads(args, "all", ["--no-perf"])
    with h.scratch_cgroup("outer") as outer:
        inner = os.path.join(outer, "inner")
        os.mkdir(inner)
        loads(args, "watched", ["--no-perf", "-c", "o=" + outer, "-c", "i=" + inner])
        loads(args, "threads", ["--no-perf", "--threads", "-c", "o=" + outer])
    loads(args, "all-threads", ["--no-perf", "--threads"])
    loads(args, "light", ["--light"])
    with h.scratch_cgroup("outer") as outer:
        loads(args, "light-watched", ["--light", "-c", "o=" + outer])
    # software events: the guests have no PMU, as this host has none
    loads(args, "perf", ["-e", "task-clock,context-switches,cpu-migrations,page-faults"])


def oncpu(args):
    """A spinner's on-CPU time against its cgroup's cpu.stat."""
    got, report, usage = acc.measure(args, "spinner", 2, 1)
    acc.check_cpu("spinner", got, usage, report)


def runq(args):
    """Two spinners sharing one CPU: run-queue wait against /proc/TID/schedstat, switches
    against /proc/TID/status."""
    got, report, usage = acc.measure(args, "hogs", 2, 1)
    h.check_final_counts("hogs", got, report, ("voluntary", "involuntary", "waits"))
    acc.check_cpu("hogs", got, usage, report)
    acc.check_runq("hogs", got, report)


def switches(args):
    """A pinned pipe ping-pong: every switch counted, against /proc/TID/status."""
    got, report, usage = acc.measure(args, "pingpong", 20000, 0)
    h.check_final_counts("pingpong", got, report, ("voluntary", "involuntary", "waits"))
    acc.check_cpu("pingpong", got, usage, report)
    acc.check_runq("pingpong", got, report)


def sleepers(args):
    """Threads that sleep: their on-CPU, run-queue and off-CPU time each against the kernel's
    figures, over the run, and every interval's states adding up to its threads' lives; a
    vfork parent's blocked time."""
    got, report, usage = acc.measure(args, "sleeper", 2)
    h.check_final_counts("sleeper", got, report, ("voluntary", "involuntary", "waits"))
    acc.check_off_cpu("sleeper", got, report)
    got, report, usage = acc.measure(args, "steady", 2, 4)
    h.check_final_counts("steady", got, report, ("voluntary", "involuntary", "waits",
                                                 "migrations"))
    acc.check_cpu("steady", got, usage, report)
    acc.check_runq("steady", got, report, acc.RUNQ_SLEEPERS)
    acc.check_off_cpu("steady", got, report)
    modes.conservation(args)
    got, report, usage = acc.measure(args, "vfork", 2)
    parent = [t for tid, t in report["threads"].items() if int(tid) != report["pid"]][0]
    h.check_time("vfork off-CPU blocked ms", got["offCpuBlockedMillis"],
                 h.thread_off_cpu_ns(parent) / 1e6, acc.BLOCKED)


def all_cgroups(args):
    """Every cgroup's on-CPU time against /proc/stat's busy time, idle and with a CPU busy."""
    inv.all_cgroups_equal_host(args, "idle", [])
    inv.all_cgroups_equal_host(args, "one-busy", [0])


def threads(args):
    """--threads: each interval's pools add up to their container's row."""
    cgstat, report = thr.run(args)
    thr.check_sums(cgstat)


def light_mode(args):
    """--light: two spinners sharing one CPU (on-CPU against cpu.stat, run-queue time against
    schedstat, switches and waits against /proc/TID/status) and a fork/exit loop whose
    processes come and go between sweeps (on-CPU against cpu.stat)."""
    light.sweep_kind(args)
    got, rows, report, usage = light.measure(args, "hogs", 2, 1)
    light.check_empty("light hogs", rows)
    h.check_final_counts("light hogs", got, report, ("voluntary", "involuntary", "waits"))
    light.check_cpu("light hogs", got, usage, report)
    light.check_runq("light hogs", got, report)
    got, rows, report, usage = light.measure(args, "churn", 100, 4)
    light.check_cpu("light churn", got, usage, report)


def throttled(args):
    """A spinner under a cpu.max of half a CPU: the verdict is throttled, and the throttled
    periods are the cgroup's own cpu.stat's."""
    with h.scratch_cgroup("thr") as cg:
        with open(os.path.join(cg, "cpu.max"), "w") as f:
            f.write("%d %d" % (QUOTA_US, PERIOD_US))
        hog = subprocess.Popen(["sh", "-c", 'echo $$ > "$0/cgroup.procs" && kill -STOP $$ && '
                                'exec "$1" spinner "$2" 1', cg, args.workload, str(ver.SECONDS)],
                               stdout=subprocess.DEVNULL)
        h.wait_stopped(hog.pid)
        before = h.read_keyed(os.path.join(cg, "cpu.stat"))
        cgstat = ver.cgstat_for(args, [("thr", cg)])
        start = ver.now_ms()
        hog.send_signal(signal.SIGCONT)
        h.check(hog.wait(120) == 0, "the spinner exits 0")
        after = h.read_keyed(os.path.join(cg, "cpu.stat"))
        code = cgstat.stop()
    h.check(code == 0, "thr: cgstat exit code %d" % code)
    periods = after["nr_throttled"] - before["nr_throttled"]
    h.check(periods >= 15, "thr: the kernel throttled the spinner in %d periods" % periods)
    rows = [r for r in cgstat.rows("cgroup-stats.csv") if r["container"] == "thr"]
    got = sum(int(r["throttledPeriods"] or 0) for r in rows)
    h.check(got == periods, "thr: throttled periods, cgstat %d, cpu.stat %d" % (got, periods))
    ver.check_verdicts("a spinner under a quota of half a CPU",
                       ver.whole_rows(cgstat, "thr", start), "throttled")


def live(args):
    """The default mode on a terminal: the live view paints its title line, and q ends it with
    exit 0."""
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "linux"
        os.execv(args.cgstat, [args.cgstat])
    screen = b""
    deadline = time.monotonic() + 120
    painted = False
    while time.monotonic() < deadline and not painted:
        ready, _, _ = select.select([fd], [], [], 1)
        if ready:
            try:
                screen += os.read(fd, 65536)
            except OSError:
                break
        text = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][0-9A-B]|\x1b.", b" ", screen)
        painted = re.search(rb"cgstat \d\d:\d\d:\d\d\.\d\d\d +interval", text) is not None
    h.check(painted, "the live view paints its title (%d bytes read)" % len(screen))
    os.write(fd, b"q")
    code = None
    deadline = time.monotonic() + 30
    while code is None and time.monotonic() < deadline:
        # drain the terminal, or cgstat may block writing its last frame
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                os.read(fd, 65536)
            except OSError:
                pass
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
    if code is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    h.check(code == 0, "q ends the live view with exit %s" % code)


def capabilities(args):
    """cgstat as nobody with only the capabilities a container engine can give it: CAP_BPF and
    CAP_PERFMON, or CAP_SYS_ADMIN alone (Debian 12's Docker 20.10 knows no CAP_BPF). Each run
    loads, then drains with none of them left but CAP_BPF, or none at all in the second
    (kernel.unprivileged_bpf_disabled is 2: only creating maps and loading programs check it
    on these kernels, not the drain's calls on their fds)."""
    for caps in ("+bpf,+perfmon", "+sys_admin"):
        out = subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534",
                              "--clear-groups", "--inh-caps=-all," + caps,
                              "--ambient-caps=-all," + caps, "--bounding-set=-all," + caps,
                              args.cgstat, "--no-perf", "-f", "csv", "-i", "0.5", "-d", "1.5"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        rows = [line for line in out.stdout.decode().splitlines()[1:] if line]
        h.check(out.returncode == 0, "%s: cgstat as nobody exits 0 (exit %d)%s"
                % (caps, out.returncode, "" if out.returncode == 0
                   else "\n" + out.stderr.decode(errors="replace")[-2000:]))
        h.check(len({r.split(",")[0] for r in rows}) >= 2,
                "%s: rows of 2 or more intervals (%d rows)" % (caps, len(rows)))


def refused(args):
    """A kernel below the minimum: one line naming what is missing, exit 1, nothing loaded."""
    out = subprocess.run([args.cgstat, "-f", "csv", "-d", "1"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, timeout=120)
    err = out.stderr.decode(errors="replace").strip().splitlines()
    h.check(out.returncode == 1, "cgstat exits 1 (%d)" % out.returncode)
    h.check(len(err) == 1 and re.match(r"cgstat: needs Linux \S+ or newer with BTF; this is "
                                       + re.escape(os.uname().release) + ": no ", err[0]),
            "one line names what is missing: %s" % err)
    h.check(out.stdout == b"", "nothing on stdout (%d bytes)" % len(out.stdout))


CHECKS = {
    "loads": load_modes,
    "oncpu": oncpu,
    "runq": runq,
    "switches": switches,
    "sleepers": sleepers,
    "all-cgroups": all_cgroups,
    "threads": threads,
    "light": light_mode,
    "throttled": throttled,
    "live": live,
    "capabilities": capabilities,
    "refused": refused,
}
SUPPORTED = [c for c in CHECKS if c != "refused"]


def run_check(name, args):
    """One check: its RESULT line, whatever it raised (a check that raised has failed)."""
    passed, failed = h._passed, h._failed
    why = None
    try:
        CHECKS[name](args)
    except Exception as e:
        traceback.print_exc(file=sys.stdout)
        why = "%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0][:200])
    p, f = h._passed - passed, h._failed - failed + (why is not None)
    ok = p > 0 and f == 0
    print("RESULT %s %s %d/%d%s" % (name, "pass" if ok else "fail", p, p + f,
                                    " " + why if why else ""), flush=True)
    return ok


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cgstat", required=True)
    p.add_argument("--workload", required=True)
    p.add_argument("checks", nargs="*", default=SUPPORTED)
    args = p.parse_args()
    bad = [c for c in args.checks if c not in CHECKS]
    if bad:
        p.error("unknown checks: " + " ".join(bad))
    results = [run_check(c, args) for c in args.checks]
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
