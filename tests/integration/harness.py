# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Shared pieces of the integration tests: scratch cgroups, running cgstat and the workloads,
reading cgstat's files, and the kernel's own accounting to check them against.

Every check compares cgstat with something it did not compute: the kernel's per-task figures
(/proc/TID/schedstat, status, sched) that the workload prints before its threads exit and the
process's once they have (final_counts), a cgroup's cpu.stat, perf stat, or the known shape of
a workload; and each allowance depends only on what the test or the workload measured. Each
test file ends with the line "N passed, M failed, K skipped" (run-all.sh adds them up), and
exits 1 if a check failed. Every cgstat a test runs goes through Cgstat or run_cgstat(), which
check its exit status against what the test expects and fail on any sanitizer report in its
stderr, printing that stderr."""

import argparse
import atexit
import contextlib
import csv
import gzip
import json
import os
import re
import shutil
import socket
import signal
import subprocess
import sys
import tempfile
import threading
import time

_passed = 0
_failed = 0
_skipped = 0

# On-CPU time of a cgroup against its cpu.stat usage over the same run: the median error was
# 0.004 % in 20 runs of each shape here, the worst +0.29 % (a stretch of a switch the kernel did
# not report, whose stolen time cannot be told apart); about three times that (docs/metrics.md,
# "How exact").
ONCPU = 0.008

# How much the lag of a line (JSON or CSV on stdout) behind the snapshot it reports changes from
# one line to the next, for a reader at SCHED_FIFO (realtime()): the drain and the write. Most
# after the interval in which a load started (its drain meets the new threads): up to 0.4 ms
# in 10 idle runs here, 1.7 ms in CI (2026-12-05). About three times the most seen.
LINE_LAG_MS = 5.0

# At most this many preemptions in the exits of a workload's threads (final_counts()): about
# twice the most seen (+204 for 400 threads exiting together, in the sanitizer stage of CI,
# 2026-12-05; +224 in runs 26 to 30 with this cap)
EXIT_PREEMPTIONS = 400

USER_HZ = os.sysconf("SC_CLK_TCK")
# /proc/stat's CPU fields, in order after the line's name
PROC_STAT_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def kernel_tick_ms():
    """The kernel's tick (CONFIG_HZ of the running kernel's config: /proc/config.gz, else
    /boot), which bounds how stale a running thread's se.sum_exec_runtime is; 10 ms (HZ=100,
    the longest) where no config is to be read."""
    for path, opener in (("/proc/config.gz", gzip.open),
                         ("/boot/config-" + os.uname().release, open)):
        try:
            with opener(path, "rt") as f:
                for line in f:
                    if line.startswith("CONFIG_HZ="):
                        return 1000.0 / int(line.split("=")[1])
        except (OSError, ValueError):
            continue
    return 10.0


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--cgstat", required=True)
    p.add_argument("--workload", required=True)
    # test_report and test_compare: keep the runs they record in DIR, or report and compare
    # the runs an earlier stage kept there instead of recording (the sanitizer stage)
    p.add_argument("--record-runs", metavar="DIR")
    p.add_argument("--reuse-runs", metavar="DIR")
    args = p.parse_args()
    # sessions on a terminal run in folders of their own
    args.cgstat, args.workload = os.path.abspath(args.cgstat), os.path.abspath(args.workload)
    return args


def check(cond, what):
    """Record one check; print what was compared either way, so a log shows the figures."""
    global _passed, _failed
    if cond:
        _passed += 1
        print("ok    " + what, flush=True)
    else:
        _failed += 1
        print("FAIL  " + what, flush=True)
    return cond


def precondition(cond, what):
    """What the test needs of its workload or machine (not of cgstat) to check anything: said
    and not counted when it holds, a failure when it does not."""
    if cond:
        print("pre   " + what, flush=True)
        return True
    return check(False, "precondition: " + what)


def skip(what):
    """A check that cannot run here (what says why): counted and listed as skipped, never as
    passed."""
    global _skipped
    _skipped += 1
    print("SKIP  " + what, flush=True)


# The first line of a report from AddressSanitizer, LeakSanitizer or UBSan (which, without
# halt_on_error, would print and go on to exit 0).
def sanitized():
    """Whether the cgstat under test is the sanitizer build's (tests/CMakeLists.txt): its stage
    runs the user-space paths, and leaves what only the kernel's accounting decides to the
    normal build's."""
    return os.environ.get("CGSTAT_SANITIZED") == "1"


SANITIZER_REPORT = re.compile(r"ERROR: (Address|Leak)Sanitizer|runtime error: |"
                              r"SUMMARY: UndefinedBehaviorSanitizer")


def _print_stderr(text):
    print("      its stderr:\n" + "".join("      | " + line + "\n"
                                          for line in text.splitlines()[-60:]), flush=True)


def no_sanitizer_report(what, stderr):
    """A failed check, with the stderr printed, if a run of cgstat said a sanitizer report
    (for runs whose exit status the caller checks with the rest of what they said)."""
    text = stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr
    if not SANITIZER_REPORT.search(text):
        return True
    check(False, "%s: a sanitizer report" % what)
    _print_stderr(text)
    return False


def check_exit(what, code, want, stderr):
    """One run of cgstat ended with the exit status the test expects (want: a number, or a
    tuple of those allowed) and said no sanitizer report; else its stderr is printed."""
    text = stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr
    wants = want if isinstance(want, tuple) else (want,)
    if not no_sanitizer_report(what, text):
        return False
    if not check(code in wants, "%s: exit %s (want %s)"
                 % (what, code, " or ".join(map(str, wants)))):
        _print_stderr(text)
        return False
    return True


def command_text(argv):
    """A command line (str or bytes arguments) as a check names it: its first 120 characters."""
    return " ".join(a.decode(errors="replace") if isinstance(a, bytes) else str(a)
                    for a in argv)[:120]


def run_cgstat(argv, want=0, what=None, **kw):
    """cgstat run to its end (subprocess.run's keywords; stdout and stderr kept unless given),
    its exit status checked with check_exit(). Returns the CompletedProcess."""
    kw.setdefault("stdout", subprocess.PIPE)
    kw["stderr"] = subprocess.PIPE
    kw.setdefault("timeout", 120)
    p = subprocess.run(argv, **kw)
    check_exit(what or command_text(["cgstat"] + list(argv[1:])), p.returncode, want, p.stderr)
    return p


def check_count(name, got, want, least, most, why):
    """A count the kernel read inside cgstat's window: cgstat sees the same events and those the
    workload made after the reading, so got - want lies in [least, most], bounds the caller
    sizes from what the workload does after its reading and says in why."""
    diff = got - want
    return check(least <= diff <= most, "%s: cgstat %d, kernel %d, difference %+d (limit %+d to "
                 "%+d: %s)" % (name, got, want, diff, least, most, why))


def check_time(name, got, want, rel, tail=0.0, why="", below=0.0, below_why="",
               rel_below=None):
    """A time within rel (a fraction) of the reference's, and above that by at most tail (ms)
    that the workload spent after its reading (why says what), below it by at most below (ms)
    that the reference holds and cgstat cannot (below_why). rel_below, where given, is the
    limit below instead of rel: 0 for an error whose sign is known to be positive, and rel 0
    with rel_below for one known to be negative."""
    rel_below = rel if rel_below is None else rel_below
    err = (got - want) / want if want else float("inf")
    ok = -rel_below * want - below <= got - want <= rel * want + tail
    limit = ("%.2f%%" % (100 * rel) if rel == rel_below
             else "+%.2f%% -%.2f%%" % (100 * rel, 100 * rel_below))
    return check(ok, "%s: cgstat %.6g, reference %.6g, error %+.3f%% (limit %s%s%s)"
                 % (name, got, want, 100 * err, limit,
                    ", and +%.3g ms for %s" % (tail, why) if tail else "",
                    ", and -%.3g ms for %s" % (below, below_why) if below else ""))


def final_counts(report):
    """The kernel's counts of all the workload did up to its last reading (its second line,
    once its workers had exited), and what each can still gain after it, which cgstat, watching
    to the process's end, sees too: {figure: (count, least gain, most gain, why)}. The report
    was read with every worker asleep in the release barrier, so what follows is the same for
    each: one wakeup, then its exit; then the main thread's exit."""
    after, kids = report["after"], report["children"]
    n = after["workers"]
    procs, threads = report.get("reaped", 0), report.get("reaped_threads", 0)
    at_report = kernel_totals(report)
    main_then = report["threads"][str(report["pid"])]
    main_gain = {k: after["main"][k] - main_then[k] for k in ("pcount", "migrations",
                                                                "run_delay_ns")}
    last = n + 1 + threads
    # Preemptions in the last stretches: each worker's exit after its rusage was taken,
    # contending for the CPU with the other exiting workers (the pinned ones share one), and
    # the main thread's exit, which tears down its memory. Up to 2 a task were seen in 10 runs
    # of every shape here (docs/metrics.md, "How exact"); 3 a task are allowed, and no more
    # than EXIT_PREEMPTIONS in all: 400 threads exiting together made +31 at most here, +1 to
    # +18 in 14 CI runs' normal stage and +1 to +204 in their sanitizer stage (whose cgstat and
    # test contend more for the CPUs as the threads exit), where 3 a task allowed +1,204.
    preempted = min(3 * (n + 1), EXIT_PREEMPTIONS)
    # The write to cgroup.procs that moved the workload may switch after the move took effect
    # and before it returned, where the baseline is read: one switch, and its wait, at most.
    move = 1
    return {
        "voluntary": (after["nvcsw"] + kids["nvcsw"], last, last + procs + move,
                      "the last switch of each of %d workers and %d threads of reaped children, "
                      "made after the rusage took their counts, and the main thread's at its "
                      "exit; of %d reaped children, in wait4's rusage or not; and one in the "
                      "move" % (n, threads, procs)),
        "involuntary": (after["nivcsw"] + kids["nivcsw"], 0, preempted + procs + move,
                        "up to 3 preemptions in the last stretch of each of %d workers and the "
                        "main thread (%d in all at most), one of each of %d reaped children, "
                        "one in the move" % (n, EXIT_PREEMPTIONS, procs)),
        # children's waits and migrations are in no figure the workload reads
        # None fewer: a wait that ends in a switch-in the kernel did not report is counted from
        # pcount at the thread's next reported switch-in, which comes before its exit (2 fewer
        # once in about 30 runs before that recovery; +2 to +11 in 8 runs since).
        "waits": (at_report["pcount"] + main_gain["pcount"], 0, n + preempted + move,
                  "each of %d workers wakes once from the release barrier (unless the wakeup "
                  "came before its sleep was done), and waits again after each of up to 3 "
                  "preemptions as it exits; so does the main thread; one in the move" % n),
        # cgstat takes migrations from the threads' own se.nr_migrations, as the test does:
        # none fewer (counting sched_migrate_task missed one or two now and then).
        "migrations": (at_report["migrations"] + main_gain["migrations"], 0, n + 1,
                       "each of %d workers' wakeup from the release barrier may place it on "
                       "another CPU, so may the main thread's last wakeup" % n),
        # The main thread's exit comes after its last reading: its waits there fall within
        # the time from that reading to the test's reaping of the process (a sanitized cgstat
        # and the test itself contend for the CPU then: +10.7 ms in 4 waits once in CI).
        "run_delay_ns": (at_report["run_delay_ns"] + main_gain["run_delay_ns"], 0,
                         n * after["tail_ns"] + after["exit_ns"],
                         "the waits of %d workers, each within the %.3f ms from the report to "
                         "the last reading, and of the main thread's exit, within the %.3f ms "
                         "from that reading to the process's reaping"
                         % (n, after["tail_ns"] / 1e6, after["exit_ns"] / 1e6)),
        "off_cpu_ns": (at_report["off_cpu_ns"], 0, (n + 1) * after["tail_ns"],
                       "the sleep of %d workers in the release barrier and of the main thread "
                       "joining them, each within the %.3f ms from the report to the last "
                       "reading" % (n, after["tail_ns"] / 1e6)),
    }


def check_final_counts(name, got, reports, figures=("voluntary", "involuntary")):
    """cgstat's totals of a cgroup against final_counts() of the workload (a report) or
    workloads (a list of reports) that ran in it."""
    columns = {"voluntary": "voluntarySwitches", "involuntary": "involuntarySwitches",
               "waits": "runqWaits", "migrations": "migrations"}
    finals = [final_counts(r) for r in (reports if isinstance(reports, list) else [reports])]
    for figure in figures:
        parts = [f[figure] for f in finals]
        want, least, most = (sum(p[i] for p in parts) for i in range(3))
        check_count("%s %s" % (name, figure if figure != "waits" else "run-queue waits"),
                    got[columns[figure]], want, least, most, "; ".join(p[3] for p in parts))


def moved_ms(reports):
    """What the workloads (reports) ran from just before their move into their cgroup to their
    first sleep there, which the kernel's cpu.stat and perf's cgroup counters charge to the new
    cgroup and cgstat to the cgroup they were switched in in (moved_ns; see workload.c)."""
    return sum(r.get("moved_ns", 0) for r in reports) / 1e6


def check_cpu_stat(name, got_ms, usage_ms, reports, rel=ONCPU):
    """On-CPU time of a cgroup against its cpu.stat usage over the same run: within rel, and
    lower by at most the workloads' moved_ms()."""
    return check_time(name + " ms vs cpu.stat", got_ms, usage_ms, rel,
                      below=moved_ms(reports), below_why="the moves in")


# A shell line that prints the cpu.stat of the cgroup it runs in: for a command run by
# `cgstat -- CMD`, whose cgroup is gone once cgstat exits (see command_env()).
CPU_STAT_OF_SELF = 'cat "$CGSTAT_TEST_MOUNT$(sed -n "s/^0:://p" /proc/self/cgroup)/cpu.stat"'


def command_env():
    """The environment for a command that uses CPU_STAT_OF_SELF."""
    return dict(os.environ, CGSTAT_TEST_MOUNT=v2_mount())


# One tmux server for this test's sessions, on a socket of its own (-L): no session of another
# test or of the user can be hit, and no server another test is shutting down can refuse one.
TMUX_SOCKET = "cgstat-test-%d" % os.getpid()


def tmux(*args, check=True):
    """A tmux command on this test's own server; its stdout."""
    p = subprocess.run(["tmux", "-L", TMUX_SOCKET] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if check and p.returncode:
        raise RuntimeError("tmux %s: exit %d, %s" % (" ".join(args), p.returncode,
                                                      p.stderr.decode(errors="replace").strip()))
    return p.stdout.decode(errors="replace")


def tmux_session(session, cwd, command, width=200, height=50):
    """A detached session running command (a shell line) in cwd, on this test's tmux server,
    which goes when the test ends."""
    if not _tmux_servers:
        _tmux_servers.append(atexit.register(tmux, "kill-server", check=False))
    tmux("new-session", "-d", "-s", session, "-x", str(width), "-y", str(height), "-c", cwd,
         command)


_tmux_servers = []


def wait_file(path, timeout=10):
    """The text of a file some process writes, once it is there and not empty; raise if it
    is not within timeout seconds."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.path.exists(path) and os.path.getsize(path):
            with open(path) as f:
                return f.read().strip()
        time.sleep(0.05)
    raise RuntimeError("nothing written to %s in %d s" % (path, timeout))


def cgroup_usage_ms(path):
    """The kernel's CPU time of everything that ran in a v2 cgroup, from its cpu.stat."""
    return cpu_stat_usage_ms(os.path.join(path, "cpu.stat"))


def cpu_stat_usage_ms(path):
    """usage_usec in milliseconds from a cpu.stat file, or a copy of one."""
    with open(path) as f:
        for line in f:
            key, value = line.split()
            if key == "usage_usec":
                return int(value) / 1e3
    raise RuntimeError("no usage_usec in " + path)


def done():
    print("%d passed, %d failed, %d skipped" % (_passed, _failed, _skipped), flush=True)
    sys.exit(1 if _failed else 0)


def v2_mount():
    """The cgroup2 mount point, from mountinfo (never a fixed path)."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            if right.split()[0] == "cgroup2":
                return left.split()[4].encode().decode("unicode_escape")
    raise RuntimeError("no cgroup2 mount")


def kill_cgroup_tasks(path):
    for _ in range(50):
        try:
            with open(os.path.join(path, "cgroup.procs")) as f:
                pids = [int(x) for x in f.read().split()]
        except FileNotFoundError:
            return
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


@contextlib.contextmanager
def scratch_cgroup(name="t", parent=None):
    """A cgroup of the test's own under the v2 mount, removed with everything in it."""
    base = parent or v2_mount()
    path = os.path.join(base, "cgstat-test-%d-%s" % (os.getpid(), name))
    os.mkdir(path)
    try:
        yield path
    finally:
        remove_cgroup_tree(path)


def service_restarted(cgstat_path, workload, cgstat_args, shape):
    """A service whose cgroup is removed and made again under its path (a restart), watched by
    a cgstat as "svc": the workload shape run in each life. (cgstat, each life's report, both
    lives' cpu.stat usage_usec in ms, cgstat's exit code, and of the second life: when its
    cgroup was made (epoch ms) and its cpu.pressure totals at the end (read_pressure()))."""
    path = os.path.join(v2_mount(), "cgstat-test-%d-svc" % os.getpid())
    os.mkdir(path)
    try:
        cgstat = Cgstat(cgstat_path, list(cgstat_args) + ["-c", "svc=" + path])
        lives = [run_workload(workload, path, *shape)]
        usage_ms = cgroup_usage_ms(path)
        remove_cgroup_tree(path)
        made_ms = time.time() * 1000
        os.mkdir(path)
        # cgstat finds the new cgroup at the end of an interval
        cgstat.wait_intervals(time.time() * 1000, 1)
        lives.append(run_workload(workload, path, *shape))
        settle()
        code = cgstat.stop()
        usage_ms += cgroup_usage_ms(path)
        second = {"made_ms": made_ms, "pressure": read_pressure(os.path.join(path,
                                                                             "cpu.pressure"))}
    finally:
        remove_cgroup_tree(path)
    return cgstat, lives, usage_ms, code, second


def remove_cgroup_tree(path):
    if not os.path.isdir(path):
        return
    for entry in os.scandir(path):
        if entry.is_dir(follow_symlinks=False):
            remove_cgroup_tree(entry.path)
    kill_cgroup_tasks(path)
    for _ in range(100):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("cannot remove " + path)


def scratch_path(path):
    """path is removed when the test ends, unless CGSTAT_KEEP_OUTPUT is set (to look at what a
    failing test saw)."""
    def remove():
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            os.unlink(path)

    if not os.environ.get("CGSTAT_KEEP_OUTPUT"):
        atexit.register(remove)
    return path


def recorded_run(args, tmp, name, record):
    """A folder tmp/name holding a run the test records with record(folder) (cgstat's output
    and whatever the test keeps beside it). With --record-runs DIR a copy is kept as DIR/name
    as soon as it is recorded; with --reuse-runs DIR nothing is recorded and DIR/name, kept by
    an earlier stage, is copied in instead: the sanitizer stage runs report and compare over
    the normal build's runs, without running the workloads again."""
    folder = os.path.join(tmp, name)
    if args.reuse_runs:
        kept = os.path.join(args.reuse_runs, name)
        if not os.path.isdir(kept):
            raise RuntimeError("--reuse-runs: no run %s (kept by --record-runs)" % kept)
        shutil.copytree(kept, folder, symlinks=True)
        return folder
    os.mkdir(folder)
    record(folder)
    if args.record_runs:
        kept = os.path.join(args.record_runs, name)
        shutil.rmtree(kept, ignore_errors=True)
        shutil.copytree(folder, kept, symlinks=True)
    return folder


class Cgstat:
    """cgstat running in the background, started with -v so that the test knows when it has
    attached, stdout captured to a file."""

    def __init__(self, binary, args, out_dir=None, stamp_lines=False, env=None, sample=None):
        """stamp_lines: read stdout as it comes, at real-time priority, and note in
        line_times when each line arrived (time.monotonic()): the test's own clock of each
        interval's end. sample (implies stamp_lines): a function called as each line arrives,
        its results in line_samples, one per line: the test's own reading of the kernel at
        the interval's end."""
        stamp_lines = stamp_lines or sample is not None
        self.sample = sample
        self.line_samples = []
        self.out_dir = out_dir or scratch_path(tempfile.mkdtemp(prefix="cgstat-out-"))
        fd, self.stdout_path = tempfile.mkstemp(prefix="cgstat-stdout-")
        os.close(fd)
        scratch_path(self.stdout_path)
        self.stdout = open(self.stdout_path, "wb")
        # the test's own clock around the run: see shortest_run() and longest_run()
        self.started = time.monotonic()
        self.attached_at = self.stop_sent = self.exited = None
        self.line_times = []
        self.lines = []  # stdout's lines as they came (stamp_lines)
        self.what = command_text(["cgstat"] + list(args))
        self.proc = subprocess.Popen([binary, "-v", "-o", self.out_dir] + list(args),
                                     stdout=subprocess.PIPE if stamp_lines else self.stdout,
                                     stderr=subprocess.PIPE, env=env)
        # a test that raises before it stops cgstat must not leave it running (with its
        # programs attached, its statistics on, or its cgroup held): CI run 40 found one
        atexit.register(self._kill_if_running)
        self.stderr_lines = []
        self.attached = threading.Event()
        self.reader = threading.Thread(target=self._read_stderr, daemon=True)
        self.reader.start()
        self.stamper = None
        if stamp_lines:
            self.stamper = threading.Thread(target=self._stamp_stdout, daemon=True)
            self.stamper.start()
        if not self.attached.wait(30):
            self.proc.kill()
            raise RuntimeError("cgstat did not attach: " + "".join(self.stderr_lines))

    def _kill_if_running(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def _read_stderr(self):
        for raw in self.proc.stderr:
            line = raw.decode(errors="replace")
            self.stderr_lines.append(line)
            if "attached" in line and not self.attached.is_set():
                self.attached_at = time.monotonic()
                self.attached.set()

    def _stamp_stdout(self):
        realtime()
        for raw in self.proc.stdout:
            arrived = time.monotonic()
            if self.sample:
                self.line_samples.append(self.sample())
            self.stdout.write(raw)
            self.lines.append(raw.decode(errors="replace"))
            # last: wait_lines() counts line_times, and a line counted there must be in
            # lines and line_samples already (test_prometheus once read lines[n + 1] too soon)
            self.line_times.append(arrived)
        self.stdout.flush()

    def wait_lines(self, n, timeout=20):
        """Wait until n lines of stdout have arrived (stamp_lines only); raise if they do not
        within timeout seconds."""
        deadline = time.monotonic() + timeout
        while len(self.line_times) < n:
            if time.monotonic() > deadline:
                raise RuntimeError("cgstat wrote %d lines of stdout in %d s, not %d"
                                   % (len(self.line_times), timeout, n))
            time.sleep(0.01)

    def stop(self, sig=signal.SIGINT, timeout=30, want=0):
        """Send sig, wait for the exit, and check_exit() it against want. Returns the exit
        status."""
        self.stop_sent = time.monotonic()
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout)
        self.exited = time.monotonic()
        self.reader.join(5)
        if self.stamper:
            self.stamper.join(5)
        self.stdout.close()
        check_exit(self.what, code, want, "".join(self.stderr_lines))
        return code

    def wait_intervals(self, after_ms, n, timeout=20):
        """Wait until cgstat has written n intervals that began after after_ms (by its files,
        not by the clock, so that a slow interval cannot make the test look too early); raise
        if it does not within timeout seconds."""
        path = os.path.join(self.out_dir, "sched-stats.csv")
        deadline = time.time() + timeout
        while time.time() < deadline:
            if len(csv_epochs_after(path, after_ms)) > n:
                return
            time.sleep(0.05)
        raise RuntimeError("cgstat wrote no %d intervals after %d in %d s" % (n, after_ms,
                                                                           timeout))

    def shortest_run(self):
        """Seconds the run surely lasted, by the test's clock: from cgstat's "attached" line to
        the stop signal."""
        return self.stop_sent - self.attached_at

    def longest_run(self):
        """Seconds the run at most lasted: from before cgstat started to its exit."""
        return self.exited - self.started

    def stdout_text(self):
        with open(self.stdout_path, "rb") as f:
            return f.read().decode(errors="replace")

    def rows(self, name):
        return read_csv(os.path.join(self.out_dir, name))

    def summary(self):
        return summary_of(self.out_dir)


def summary_of(out_dir):
    """The container-summary.json of an output folder."""
    with open(os.path.join(out_dir, "container-summary.json")) as f:
        return json.load(f)


def csv_epochs_after(path, after_ms):
    """The distinct epochMillis later than after_ms in the last rows of a growing CSV file."""
    with contextlib.suppress(FileNotFoundError):
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - (256 << 10)))
            lines = f.read().split(b"\n")[1:-1]
        return {int(field) for field in (line.split(b",", 1)[0] for line in lines)
                if field.isdigit() and int(field) > after_ms}
    return set()


def read_csv(path):
    with open(path, newline="", encoding="utf-8", errors="surrogateescape") as f:
        return list(csv.DictReader(f))


def run_workload(workload, cgroup, *args, timeout=300):
    """Run a workload shape in cgroup; returns the kernel's accounting it printed."""
    out = subprocess.run([workload, "--cgroup", cgroup] + [str(a) for a in args],
                         stdout=subprocess.PIPE, check=True, timeout=timeout)
    return parse_report(out.stdout, time.monotonic_ns())


def report_workers(report):
    """The ids of the threads a workload's report lists beside its main thread, in its order."""
    return [tid for tid in report["threads"] if int(tid) != report["pid"]]


def parse_report(text, reaped_ns):
    """A workload's report (its first line), with the figures it read once its workers had
    exited (the second line of the shapes that run threads) as report["after"]. reaped_ns:
    when the test saw the process end (time.monotonic_ns(), the workload's clock), so that
    report["after"]["exit_ns"] bounds what the main thread did after its last reading."""
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    report = lines[0]
    for line in lines[1:]:
        report.update(line)
    if "after" in report:
        report["after"]["exit_ns"] = max(reaped_ns - report["after"]["read_ns"], 0)
    return report


def thread_off_cpu_ns(t):
    """Off-CPU time of one thread from the kernel's figures: the time it was alive less the
    time it ran (sum_exec_runtime) and waited to run (run_delay). This kernel has no
    schedstats, so this is the ground truth for sleep and blocked time."""
    return t["alive_ns"] - t["exec_ns"] - t["run_delay_ns"]


def kernel_totals(report):
    """Sum of the per-thread kernel figures and the reaped children's."""
    keys = ["exec_ns", "run_delay_ns", "pcount", "nvcsw", "nivcsw", "migrations", "alive_ns"]
    total = dict.fromkeys(keys, 0)
    total["off_cpu_ns"] = 0
    for t in report["threads"].values():
        for k in keys:
            total[k] += t[k]
        total["off_cpu_ns"] += thread_off_cpu_ns(t)
    for k in ("exec_ns", "nvcsw", "nivcsw"):
        total[k] += report["children"][k]
    return total


SCHED_NUMERIC = ["tasks", "onCpuMillis", "runqWaitMillis", "offCpuSleepMillis",
                 "offCpuBlockedMillis", "voluntarySwitches", "involuntarySwitches", "migrations",
                 "runqWaits"]


def sched_totals(rows, container, light=False):
    """cgstat's sums over every interval of one container in sched-stats.csv; light: of a run
    with --light, which leaves the sleep/blocked split empty."""
    columns = [k for k in SCHED_NUMERIC
               if not (light and k in ("offCpuSleepMillis", "offCpuBlockedMillis"))]
    total = dict.fromkeys(columns, 0.0)
    n = 0
    for r in rows:
        if r["container"] != container:
            continue
        n += 1
        for k in columns:
            total[k] += float(r[k])
    total["intervals"] = n
    return total


def settle(seconds=0.3):
    """Let the last switches of exiting threads land before cgstat drains."""
    time.sleep(seconds)


class Workload:
    """A workload shape running while the test goes on (a thread waits for it), so that two can
    run at once or the test can act on cgstat or the cgroup meanwhile."""

    def __init__(self, workload, cgroup, *args, timeout=300):
        self.report = None
        self.error = None
        self.thread = threading.Thread(target=self._run, daemon=True,
                                       args=(workload, cgroup, args, timeout))
        self.thread.start()

    def _run(self, workload, cgroup, args, timeout):
        try:
            self.report = run_workload(workload, cgroup, *args, timeout=timeout)
        except Exception as e:  # handed to wait(), which raises it in the test's thread
            self.error = e

    def wait(self, timeout=300):
        """The kernel's accounting the workload printed."""
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise RuntimeError("workload did not finish")
        if self.error:
            raise self.error
        return self.report


def spawn_in_cgroup(cgroup, argv):
    """A process started in cgroup: a shell moves itself there, then execs argv. Returns once
    the exec is done, so the process does nothing more until it ends (for a sleep)."""
    proc = subprocess.Popen(["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup]
                            + list(argv))
    name = os.path.basename(argv[0])[:15]
    for _ in range(200):
        with contextlib.suppress(OSError):
            with open("/proc/%d/comm" % proc.pid) as f:
                if f.read().strip() == name:
                    return proc
        time.sleep(0.01)
    proc.kill()
    raise RuntimeError("%s did not start in %s" % (argv[0], cgroup))


def read_json_lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def cgroup_threads(cgroup):
    """The kernel's list of the threads directly in cgroup."""
    with open(os.path.join(cgroup, "cgroup.threads")) as f:
        return f.read().split()


def wait_threads(cgroup, n, timeout=10):
    """Wait until the kernel lists at least n threads in cgroup: a workload's workers have
    started. Raise if they do not within timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(cgroup_threads(cgroup)) >= n:
            return
        time.sleep(0.01)
    raise RuntimeError("%s: fewer than %d threads after %d s" % (cgroup, n, timeout))


def wait_member(cgroup, pid, timeout=10):
    """Wait until pid is in cgroup (a workload has moved itself there); raise if it is not
    within timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(os.path.join(cgroup, "cgroup.procs")) as f:
            if str(pid) in f.read().split():
                return
        time.sleep(0.01)
    raise RuntimeError("pid %d not in %s after %d s" % (pid, cgroup, timeout))


def v2_label(path):
    """The label cgstat gives a cgroup in the all-cgroups mode: its path under the v2 mount (for
    a path of no container, pod or unit: test_modes.container_labels())."""
    return "/" + os.path.relpath(path, v2_mount())


def run_in_cgroup(cgroup, argv, stdout=subprocess.DEVNULL):
    """Run argv to its end in cgroup. Returns the exit status; the rusage wait4 gave for it and
    every descendant it waited for; and the child's own voluntary and involuntary switches as
    it read them right after moving itself into cgroup, before the exec: the part of the
    rusage that happened outside cgroup (writing cgroup.procs may sleep, and under load it
    often does)."""
    rfd, wfd = os.pipe()

    def move():
        with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
            f.write("0")
        with open("/proc/thread-self/status") as f:
            status = dict(line.split(":", 1) for line in f if ":" in line)
        os.write(wfd, ("%s %s" % (status["voluntary_ctxt_switches"].strip(),
                                  status["nonvoluntary_ctxt_switches"].strip())).encode())

    try:
        proc = subprocess.Popen(list(argv), stdout=stdout, preexec_fn=move)
    finally:
        os.close(wfd)
    with os.fdopen(rfd) as f:
        before = tuple(int(x) for x in f.read().split())
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    return proc.returncode, usage, before


# the anonymous inode of each kind of BPF object's fd
BPF_FD_NAMES = {"map": "anon_inode:bpf-map", "prog": "anon_inode:bpf-prog",
                "link": "anon_inode:bpf_link"}


def bpf_objects_of(pid, kind):
    """What bpftool shows of each BPF object of kind ("map", "prog", "link") process pid holds:
    the ids from /proc/PID/fdinfo, so that another cgstat's are never taken."""
    objects = []
    fd_dir = "/proc/%d/fd" % pid
    for fd in os.listdir(fd_dir):
        with contextlib.suppress(OSError):
            if os.readlink(os.path.join(fd_dir, fd)) != BPF_FD_NAMES[kind]:
                continue
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
            obj_id = int(fields[kind + "_id"])
            objects.append(json.loads(subprocess.run(
                ["bpftool", "-j", kind, "show", "id", str(obj_id)], stdout=subprocess.PIPE,
                check=True).stdout))
    return objects


def bpf_maps_of(pid):
    """The BPF maps process pid holds, by name (as bpftool gives it: 15 characters at most)."""
    return {info["name"]: info for info in bpf_objects_of(pid, "map")}


def bpf_map_dump(map_id):
    """A map's entries as bpftool formats them from BTF: [{"key": .., "value": ..}]."""
    out = subprocess.run(["bpftool", "-j", "map", "dump", "id", str(map_id)],
                         stdout=subprocess.PIPE, check=True).stdout
    return [e["formatted"] for e in json.loads(out)]


def cgroup_ids():
    """The ids of every cgroup that exists now: a v2 cgroup's id is its directory's inode
    number."""
    ids = set()
    for root, _, _ in os.walk(v2_mount()):
        with contextlib.suppress(FileNotFoundError):
            ids.add(os.stat(root).st_ino)
    return ids


def free_port():
    """A loopback TCP port free now (for --listen and the servers beside it)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def realtime():
    """SCHED_FIFO for the calling thread (or, before exec, the process): a line is written
    and read the moment cgstat drained it, within microseconds, even with every CPU busy, so
    that the test's own reading lines up with cgstat's interval."""
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))


def run_lines(args, cgstat_args, sample, n, check_line=None, until=None):
    """cgstat with cgstat_args, one-second intervals as JSON lines on stdout; its first n
    lines, each with what sample() read the moment the test read the line: the test's own
    reference for the interval that line closes. check_line(line, sample), if given, runs as
    each line arrives (for a long run, whose lines are not all kept in memory). until(got), if
    given, ends the run before n lines once it is true of the (line, sample) pairs so far."""
    proc = subprocess.Popen([args.cgstat, "-v", "-f", "json", "-i", "1"] + cgstat_args,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=realtime)
    attached = threading.Event()
    stderr = []

    def follow_stderr():
        for raw in proc.stderr:
            stderr.append(raw.decode(errors="replace"))
            if "attached" in stderr[-1]:
                attached.set()

    got = []

    def follow_stdout():
        realtime()
        for i, raw in enumerate(proc.stdout):
            ref = sample()
            line = json.loads(raw)
            if check_line:
                check_line(line, ref)
                line = {k: v for k, v in line.items() if k != "containers"}
            got.append((line, ref))
            if i + 1 == n or (until and until(got)):
                return

    threads = [threading.Thread(target=f, daemon=True) for f in (follow_stderr, follow_stdout)]
    for t in threads:
        t.start()
    if not attached.wait(30):
        proc.kill()
        raise RuntimeError("cgstat did not attach: " + "".join(stderr))
    threads[1].join(n + 30)
    proc.send_signal(signal.SIGINT)
    code = proc.wait(30)
    threads[0].join(5)
    check_exit(command_text(["cgstat"] + cgstat_args), code, 0, "".join(stderr))
    if until and len(got) < n:
        check(until(got), "%d intervals arrived, and the run had what it waited for"
              % len(got))
    else:
        check(len(got) == n, "%d of %d intervals arrived" % (len(got), n))
    bad = [line["inconsistencies"] for line, _ in got if line["inconsistencies"]]
    check(not bad, "no CPU ever counted more than one task on CPU (inconsistencies %s in "
            "%d lines; missed switch-outs repaired: %d)"
            % (bad[-1] if bad else 0, len(got), got[-1][0]["missedSwitches"] if got else 0))
    return got


def v1_cpu_mount():
    """Where the v1 hierarchy with the cpu controller is mounted, from mountinfo."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            tail = fields[fields.index("-") + 1:]
            if tail[0] == "cgroup" and "cpu" in tail[2].split(","):
                return fields[4]
    return None


def stopped_quota_spinner(workload, cgroup, v1, seconds, cpu, quota_us, period_us):
    """A spinner for seconds on cpu, in cgroup and in the v1 cpu cgroup v1 whose CFS quota this
    sets, stopped (SIGSTOP) before it spins so that nothing runs before the test's readings and
    cgstat start: the test sends SIGCONT. Returns its Popen."""
    with open(os.path.join(v1, "cpu.cfs_period_us"), "w") as f:
        f.write(str(period_us))
    with open(os.path.join(v1, "cpu.cfs_quota_us"), "w") as f:
        f.write(str(quota_us))
    hog = subprocess.Popen(["sh", "-c", 'echo $$ > "$0/cgroup.procs" && '
                            'echo $$ > "$1/cgroup.procs" && kill -STOP $$ && '
                            'exec "$2" spinner "$3" "$4"', cgroup, v1, workload, str(seconds),
                            str(cpu)], stdout=subprocess.DEVNULL)
    wait_stopped(hog.pid)
    return hog


def wait_stopped(pid):
    """Wait until pid is stopped (state T)."""
    for _ in range(500):
        with open("/proc/%d/stat" % pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "T":
                return
        time.sleep(0.01)
    raise RuntimeError("pid %d did not stop" % pid)


def read_keyed(path):
    """A "KEY VALUE" file (cpu.stat) as a dict of ints."""
    with open(path) as f:
        return {k: int(v) for k, v in (line.split() for line in f if line.strip())}


def read_pressure(path):
    """A PSI file's totals in ms: {"some": .., "full": ..}."""
    out = {}
    with open(path) as f:
        for line in f:
            kind, *fields = line.split()
            out[kind] = int(dict(x.split("=") for x in fields)["total"]) / 1000.0
    return out



def proc_stat_ns(cpu=None):
    """/proc/stat's time fields in ns for one CPU (cpu N's line) or, with cpu None, summed
    over CPUs (the first line). Each is kept in whole USER_HZ ticks: a reading is up to one
    tick (1e9 / USER_HZ ns) low."""
    name = "cpu" if cpu is None else "cpu%d" % cpu
    with open("/proc/stat") as f:
        for line in f:
            fields = line.split()
            if fields[0] == name:
                return {k: int(v) * 1e9 / USER_HZ for k, v in zip(PROC_STAT_FIELDS, fields[1:])}
    raise KeyError(name)


def schedstat(tid):
    """A thread's /proc/TID/schedstat: (sum_exec_runtime ns, run_delay ns, pcount), or None
    once it is gone."""
    try:
        with open("/proc/%d/schedstat" % int(tid)) as f:
            exec_ns, delay_ns, pcount = (int(x) for x in f.read().split())
    except (FileNotFoundError, ProcessLookupError):
        return None
    return exec_ns, delay_ns, pcount


def process_cpu_ns(pid):
    """A process's on-CPU time so far: its threads' schedstat sum_exec_runtime summed."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        figures = schedstat(tid)
        total += figures[0] if figures else 0
    return total
