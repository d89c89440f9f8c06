# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""--bpf-stats: cgstat's own BPF programs' runs and run time, against the kernel's.

- Without --bpf-stats the kernel times none of cgstat's programs (their run_cnt, as bpftool
  reads it by the ids in cgstat's own /proc/PID/fdinfo, stays 0 through a ping-pong) and the
  summary and stderr say nothing of them.
- With it, each program's runs and run time in container-summary.json are at least what
  bpftool read of the same program over a window inside cgstat's (from its "attached" line to
  before the stop signal), the window holding a pipe ping-pong of known switches; the switch
  program's runs at most that plus every context switch of the machine (/proc/stat's ctxt)
  outside the window, as the program runs once a switch; its share of the CPU time against the
  test's own clock of the run; the stderr table the same figures as the JSON.
- The statistics are machine-wide while cgstat runs (another cgstat's programs are timed too)
  and off once it exits, at SIGINT or killed by SIGKILL alike (the kernel closes the fd that
  holds them); kernel.bpf_stats_enabled, the sysctl, is 0 throughout (the fd does not set it).
- Started without CAP_SYS_ADMIN (the systemd unit's capability set): one line, and the run
  goes on without the figures, exit 0.

The statistics are the machine's: no other tool may turn them on meanwhile (ctest runs the
integration tests one at a time; a precondition says the sysctl is 0)."""

import json
import os
import re
import signal
import subprocess
import time
import urllib.request

import harness as h

# Ping-pong round trips in the window: two voluntary switches each, about 0.5 s here.
ROUND_TRIPS = 50000

# The JSON's numbers have 3 decimals (json_util.c): a run time in ms within half a us of its
# own, a percentage within 0.0005 points.
ROUNDED = 0.0005

# The time of one run of cgstat's programs outside the window, at most: for the runs the switch
# bracket allows beyond the window. The dearest run seen is cg_snapshot's, 2 to 6 us with a
# few slots (idle caches); a switch or wakeup 0.1 to 2 us. Three times the most.
MAX_RUN_NS = 20000


def ctxt():
    """The machine's context switches since boot (/proc/stat): each one runs cg_sched_switch
    once while it is attached."""
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("ctxt "):
                return int(line.split()[1])
    raise RuntimeError("no ctxt in /proc/stat")


def stats_sysctl():
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        return int(f.read())


def programs_of(pid):
    """The BPF programs process pid holds, by their full names (bpftool takes them from BTF
    where the kernel's 15 characters cut them): {name: (id, run_cnt, run_time_ns)}, by the
    program ids in /proc/PID/fdinfo, so that another cgstat's are never taken. bpftool leaves
    out both figures while run_time_ns is 0."""
    progs = {}
    fd_dir = "/proc/%d/fd" % pid
    for fd in os.listdir(fd_dir):
        try:
            if os.readlink(os.path.join(fd_dir, fd)) != "anon_inode:bpf-prog":
                continue
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        out = subprocess.run(["bpftool", "-j", "prog", "show", "id", fields["prog_id"].strip()],
                             stdout=subprocess.PIPE, check=True).stdout
        info = json.loads(out)
        progs[info["name"]] = (info["id"], info.get("run_cnt", 0), info.get("run_time_ns", 0))
    return progs


def stderr_table(lines):
    """The programs' table cgstat wrote to stderr at exit: {name: (runs, run ms)}."""
    table = {}
    row = re.compile(r"^cgstat:   (\S+) +(\d+) +([\d.]+) +(\S+) +(\S+)$")
    for line in lines[next((i for i, x in enumerate(lines) if "BPF programs over" in x),
                           len(lines)):]:
        m = row.match(line.rstrip("\n"))
        if m and m.group(1) != "program":
            table[m.group(1)] = (int(m.group(2)), float(m.group(3)))
    return table


def without(args, cg):
    """A cgstat without --bpf-stats, through a ping-pong: none of its programs timed. It keeps
    running (returned) to watch the statistics come and go with the other runs."""
    plain = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "-c", "w=" + cg])
    h.run_workload(args.workload, cg, "pingpong", 2000, 0)
    timed = {name: p for name, p in programs_of(plain.proc.pid).items() if p[1] or p[2]}
    h.check(programs_of(plain.proc.pid) and not timed,
            "without --bpf-stats: no program of cgstat's timed through 4,000 switches (run_cnt "
            "and run_time_ns 0; timed: %s)" % timed)
    h.check(stats_sysctl() == 0, "without --bpf-stats: kernel.bpf_stats_enabled 0")
    return plain


def switch_runs(plain):
    """The run count of the plain cgstat's cg_sched_switch: it grows only while the
    statistics are on."""
    return programs_of(plain.proc.pid)["cg_sched_switch"][1]


def still_off(args, cg, plain, what):
    """The statistics off: plain's switch program does not count a thousand switches and more
    (a ping-pong's, and the machine's)."""
    runs, switches = switch_runs(plain), ctxt()
    h.run_workload(args.workload, cg, "pingpong", 500, 0)
    time.sleep(0.3)
    h.precondition(ctxt() - switches >= 1000, "%s: %d switches made" % (what, ctxt() - switches))
    h.check(switch_runs(plain) == runs, "%s: another cgstat's cg_sched_switch timed no more "
            "(run_cnt %d, then %d)" % (what, runs, switch_runs(plain)))


def with_stats(args, cg, plain):
    """cgstat --bpf-stats over a window of known switches, checked against bpftool's readings
    of its programs and the machine's context switches."""
    before = ctxt()
    port = h.free_port()
    cgstat = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "--bpf-stats", "-c", "w=" + cg,
                                    "--listen", str(port)])
    start = programs_of(cgstat.proc.pid)
    c0 = ctxt()
    plain0 = switch_runs(plain)
    report = h.run_workload(args.workload, cg, "pingpong", ROUND_TRIPS, 0)
    c1 = ctxt()
    end = programs_of(cgstat.proc.pid)
    # two intervals later, /metrics has every run of the window
    cgstat.wait_intervals(time.time() * 1000, 2)
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        page = r.read().decode()
    h.check(switch_runs(plain) > plain0, "with --bpf-stats: another cgstat's programs timed "
            "too (its cg_sched_switch's run_cnt %d, then %d)" % (plain0, switch_runs(plain)))
    h.check(stats_sysctl() == 0, "with --bpf-stats: kernel.bpf_stats_enabled stays 0 (the fd "
            "does not set it)")
    cgstat.stop()
    c2 = ctxt()
    summary = cgstat.summary()
    got = summary.get("bpfPrograms", {})
    h.check(set(got) == set(end), "the summary's programs %s are the loaded ones %s (autoload "
            "off: not loaded, not listed)" % (sorted(got), sorted(end)))
    workload = h.kernel_totals(report)
    workload_switches = workload["nvcsw"] + workload["nivcsw"]
    window = {name: (end[name][1] - start[name][1], end[name][2] - start[name][2])
              for name in end}
    h.precondition(window["cg_sched_switch"][0] >= workload_switches,
                   "bpftool's window holds the ping-pong: %d runs of cg_sched_switch, %d "
                   "switches of its threads" % (window["cg_sched_switch"][0], workload_switches))
    for name, (runs, ns) in sorted(window.items()):
        if name not in got:
            continue
        p = got[name]
        h.check(p["runs"] >= runs, "%s: %d runs, at least bpftool's %d in a window inside the "
                "run" % (name, p["runs"], runs))
        outside = p["runs"] - runs
        h.check(ns / 1e6 - ROUNDED <= p["runMillis"] <= (ns + outside * MAX_RUN_NS) / 1e6 + ROUNDED,
                "%s: run time %.3f ms, bpftool's in the window %.4f ms, and up to %d us for each "
                "of the %d runs outside it" % (name, p["runMillis"], ns / 1e6,
                                               MAX_RUN_NS // 1000, outside))
    # /metrics: one series a program, by its whole name, between the window's and the end's runs
    served = {}
    for m in re.finditer(r'^cgstat_bpf_program_runs_total\{program="([^"]*)"\} (\d+)$', page,
                         re.M):
        served.setdefault(m.group(1), []).append(int(m.group(2)))
    lint = subprocess.run(["promtool", "check", "metrics"], input=page.encode(),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    h.check(lint.returncode == 0 and set(served) == set(end)
            and all(len(v) == 1 and window[n][0] <= v[0] <= got.get(n, {}).get("runs", 0)
                    for n, v in served.items()),
            "/metrics: one cgstat_bpf_program_runs_total a loaded program (%s), each between "
            "bpftool's window and the summary's total; promtool exit %d %s"
            % (sorted(served), lint.returncode, lint.stdout.decode()[-200:]))
    runs = got.get("cg_sched_switch", {}).get("runs", 0)
    win = window["cg_sched_switch"][0]
    h.check_count("cg_sched_switch runs against the machine's switches", runs, win, 0,
                  (c0 - before) + (c2 - c1),
                  "bpftool's count over the window; beyond it, at most every context switch "
                  "of the machine from cgstat's start to bpftool's first reading (%d) and from "
                  "its last to cgstat's exit (%d)" % (c0 - before, c2 - c1))
    h.check(runs >= workload_switches, "cg_sched_switch: %d runs, at least the ping-pong's %d "
            "switches (its threads' voluntary and involuntary, from /proc)"
            % (runs, workload_switches))
    # the share of the CPU time, against the test's own clock of the run
    switch = got.get("cg_sched_switch", {})
    cpus = os.cpu_count()
    run_ns = switch.get("runMillis", 0) * 1e6
    least = 100 * run_ns / (cgstat.longest_run() * 1e9 * cpus)
    most = 100 * run_ns / (cgstat.shortest_run() * 1e9 * cpus)
    h.check(least - ROUNDED <= switch.get("cpuTimePercent", -1) <= most + ROUNDED,
            "cg_sched_switch: %.4f %% of the CPU time, between %.4f and %.4f %% (its run time "
            "over the test's longest and shortest reckoning of the run, on %d CPUs)"
            % (switch.get("cpuTimePercent", -1), least, most, cpus))
    table = stderr_table(cgstat.stderr_lines)
    total = (sum(p["runs"] for p in got.values()), sum(p["runMillis"] for p in got.values()))
    # each rounded twice (the table's and the JSON's), the total from the JSON's rounded values;
    # 1e-9 for the difference of two decimals in binary (0.023 - 0.022 > 0.001: CI run 67)
    h.check(set(table) == set(got) | {"(all)"}
            and all(table[n][0] == p["runs"]
                    and abs(table[n][1] - p["runMillis"]) <= slack + 1e-9
                    for n, p, slack in [(n, p, 2 * ROUNDED) for n, p in got.items()]
                    + [("(all)", dict(zip(("runs", "runMillis"), total)),
                        (len(got) + 1) * ROUNDED)]),
            "the stderr table: the summary's runs and run times (ms to 3 decimals), and their "
            "total: %s (the summary's: %s)"
            % (table, {n: (p["runs"], p["runMillis"]) for n, p in got.items()}))
    still_off(args, cg, plain, "after cgstat --bpf-stats exited")


def killed(args, cg, plain):
    """cgstat --bpf-stats killed by SIGKILL: the kernel closes its fd, and the statistics go
    off with it."""
    cgstat = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "--bpf-stats", "-c", "w=" + cg])
    runs = switch_runs(plain)
    time.sleep(0.3)
    h.check(switch_runs(plain) > runs, "--bpf-stats, before SIGKILL: another cgstat's programs "
            "timed (run_cnt %d, then %d)" % (runs, switch_runs(plain)))
    cgstat.stop(sig=signal.SIGKILL, want=-signal.SIGKILL)
    still_off(args, cg, plain, "after cgstat --bpf-stats was killed")


def no_cap_sys_admin(args, plain):
    """The systemd unit's capabilities (no CAP_SYS_ADMIN): one line, the run goes on, exit 0,
    no figures, and nothing timed."""
    runs = switch_runs(plain)
    p = h.run_cgstat(["setpriv", "--bounding-set", "-all,+bpf,+perfmon,+setpcap,+setuid,+setgid",
                      "--inh-caps=-all", "--no-new-privs", "--", args.cgstat, "--bpf-stats", "-q",
                      "-d", "1", "--no-perf"], what="--bpf-stats without CAP_SYS_ADMIN")
    err = p.stderr.decode(errors="replace")
    h.check(err.count("\n") == 1 and "--bpf-stats" in err and "CAP_SYS_ADMIN" in err
            and "going on without them" in err,
            "--bpf-stats without CAP_SYS_ADMIN: one line naming it, and the run goes on: %r"
            % err)
    h.check(switch_runs(plain) == runs, "--bpf-stats without CAP_SYS_ADMIN: nothing timed "
            "(another cgstat's run_cnt %d, then %d)" % (runs, switch_runs(plain)))


def main():
    args = h.parse_args()
    if not h.precondition(stats_sysctl() == 0, "kernel.bpf_stats_enabled is 0: no other tool "
                          "times BPF programs by it"):
        h.done()
    with h.scratch_cgroup("bpf-stats") as cg:
        plain = without(args, cg)
        with_stats(args, cg, plain)
        killed(args, cg, plain)
        no_cap_sys_admin(args, plain)
        plain.stop()
        h.check(not any("BPF programs" in line for line in plain.stderr_lines)
                and "bpfPrograms" not in plain.summary(),
                "without --bpf-stats: no table on stderr, no bpfPrograms in the summary")
    h.done()


if __name__ == "__main__":
    main()
