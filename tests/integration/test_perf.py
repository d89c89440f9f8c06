# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Per-cgroup perf counters against `perf stat -a -G` over the same cgroup and window, and
against the kernel's own per-task fault counts; the cross-cgroup path; an unsupported hardware
event; the host sampler against /proc/stat and /proc/diskstats read by the test itself."""

import json
import os
import subprocess
import tempfile
import time

import harness as h

PERF = 0.03
DEFAULT_COLUMNS = ("epochMillis,container,taskClockMillis,contextSwitches,cpuMigrations,"
                   "pageFaults,cycles,instructions,cacheReferences,cacheMisses,l1dLoadMisses,"
                   "branchMisses")


class PerfStat:
    """`perf stat -a -G` counting events for cgroups (paths under the v2 mount), in CSV."""

    def __init__(self, events, cgroups):
        mount = h.v2_mount()
        names = [os.path.relpath(c, mount) for c in cgroups]
        self.out = tempfile.NamedTemporaryFile(prefix="perf-stat-", suffix=".csv", delete=False)
        # perf pairs the n-th -G entry with the n-th event: repeat each cgroup per event
        args = ["perf", "stat", "-a", "-x,", "-o", self.out.name]
        for name in names:
            args += ["-e", ",".join(events), "-G", ",".join([name] * len(events))]
        self.names = dict(zip(names, cgroups))
        # no command: perf counts system-wide until SIGINT
        self.proc = subprocess.Popen(args, stderr=subprocess.PIPE)
        time.sleep(0.5)  # perf has opened its counters well before this

    def stop(self):
        """{cgroup path: {event: count or None when not counted}}."""
        self.proc.send_signal(2)
        self.proc.wait(30)
        counts = {}
        with open(self.out.name) as f:
            for line in f:
                fields = line.strip().split(",")
                if len(fields) < 4 or line.startswith("#"):
                    continue
                value, _, event, cgroup = fields[:4]
                path = self.names.get(cgroup)
                if path is None:
                    continue
                counts.setdefault(path, {})[event] = (
                    None if value.startswith("<") else float(value))
        os.unlink(self.out.name)
        return counts


def perf_totals(rows, container):
    total = {}
    for r in rows:
        if r["container"] != container:
            continue
        for k, v in r.items():
            if k in ("epochMillis", "container"):
                continue
            if v == "":
                total.setdefault(k, None)
            elif total.get(k, 0) is not None:
                total[k] = total.get(k, 0) + float(v)
    return total


def faults_of(report):
    total = report["children"].get("minflt", 0) + report["children"].get("majflt", 0)
    for t in report["threads"].values():
        total += t["minflt"] + t["majflt"]
    return total


def workload_lines(workload, cgroup, *args):
    out = subprocess.run([workload, "--cgroup", cgroup] + [str(a) for a in args],
                         stdout=subprocess.PIPE, check=True, timeout=300)
    return [json.loads(line) for line in out.stdout.decode().splitlines() if line.strip()]


def test_page_faults(args):
    """Page faults of a workload of known shape: 20 rounds of 2000 fresh pages."""
    with h.scratch_cgroup("faults") as cg:
        perf = PerfStat(["page-faults", "context-switches", "task-clock"], [cg])
        cgstat = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "-c", "f=" + cg])
        report = h.run_workload(args.workload, cg, "faults", 2000, 20)
        h.settle()
        code = cgstat.stop()
        counts = perf.stop()[cg]
        h.check(code == 0, "faults: cgstat exit code %d" % code)
        rows = cgstat.rows("perf-stat.csv")
        with open(os.path.join(cgstat.out_dir, "perf-stat.csv")) as f:
            header = f.readline().strip()
        h.check(header == DEFAULT_COLUMNS, "perf-stat.csv header: " + header)
        got = perf_totals(rows, "f")
        h.check_close("faults page faults vs perf stat -G", got["pageFaults"],
                      counts["page-faults"], PERF)
        h.check_close("faults page faults vs the kernel's minflt+majflt", got["pageFaults"],
                      faults_of(report), PERF)
        h.check(faults_of(report) >= 40000,
                "faults: the kernel counted at least one fault per page touched (%d)"
                % faults_of(report))
        h.check_close("faults context switches vs perf stat -G", got["contextSwitches"],
                      counts["context-switches"], PERF)
        h.check_close("faults task-clock ms vs perf stat -G", got["taskClockMillis"],
                      counts["task-clock"], PERF)
        for column in ("cycles", "instructions"):
            h.check(got.get(column, "missing") is None,
                    "faults: %s is empty here, where the VM has no PMU" % column)


def test_cross_cgroup(args):
    """A ping-pong whose every switch crosses cgroups: each side's faults land in its own."""
    with h.scratch_cgroup("xa") as a, h.scratch_cgroup("xb") as b:
        perf = PerfStat(["page-faults", "context-switches"], [a, b])
        cgstat = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "-c", "a=" + a, "-c", "b=" + b])
        child, parent = workload_lines(args.workload, a, "xpingpong", 30000, 0, b)
        h.settle()
        code = cgstat.stop()
        h.check(code == 0, "cross-cgroup: cgstat exit code %d" % code)
        counts = perf.stop()
        rows = cgstat.rows("perf-stat.csv")
        for name, cg, report in (("a", a, parent), ("b", b, child)):
            got = perf_totals(rows, name)
            h.check_close("xpingpong %s page faults vs perf stat -G" % name, got["pageFaults"],
                          counts[cg]["page-faults"], PERF)
            h.check_close("xpingpong %s page faults vs the kernel" % name, got["pageFaults"],
                          faults_of(report), PERF)
            pages = 30000 if name == "a" else 60000
            h.check(faults_of(report) >= pages,
                    "xpingpong %s: a fault per page touched, %d pages (%d)"
                    % (name, pages, faults_of(report)))
            h.check_close("xpingpong %s context switches vs perf stat -G" % name,
                          got["contextSwitches"], counts[cg]["context-switches"], PERF)


def test_unsupported_event(args):
    """An event list with a hardware event this VM cannot count: its column is empty, said
    once on stderr, and the rest is intact."""
    with h.scratch_cgroup("unsup") as cg:
        cgstat = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "-e", "cycles,page-faults",
                                        "-c", "u=" + cg])
        report = h.run_workload(args.workload, cg, "faults", 1000, 10)
        h.settle()
        code = cgstat.stop()
        h.check(code == 0, "unsupported event: cgstat exit code %d" % code)
        with open(os.path.join(cgstat.out_dir, "perf-stat.csv")) as f:
            header = f.readline().strip()
        h.check(header == "epochMillis,container,cycles,pageFaults",
                "-e cycles,page-faults: header " + header)
        said = [line for line in cgstat.stderr_lines if "cycles" in line]
        h.check(len(said) == 1, "cycles refused once on stderr: %r" % said)
        got = perf_totals(cgstat.rows("perf-stat.csv"), "u")
        h.check(got["cycles"] is None, "cycles column empty")
        h.check_close("page faults beside the unsupported event", got["pageFaults"],
                      faults_of(report), PERF)


def read_proc_stat():
    with open("/proc/stat") as f:
        cpu = [int(x) for x in f.readline().split()[1:9]]
    return cpu


def test_host(args):
    """host-io.csv against the test's own reading of /proc/stat and /proc/diskstats over the
    run, with a known amount of direct I/O written."""
    cg_dir = tempfile.mkdtemp(prefix="cgstat-hostio-", dir="/var/tmp")
    data = os.path.join(cg_dir, "data")
    cgstat = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "--no-perf"])
    before = read_proc_stat()
    t0 = time.monotonic()
    subprocess.run(["dd", "if=/dev/zero", "of=" + data, "bs=1M", "count=64", "oflag=direct",
                    "status=none"], check=True)
    time.sleep(1.2)
    after = read_proc_stat()
    t1 = time.monotonic()
    code = cgstat.stop()
    h.check(code == 0, "host sampler: cgstat exit code %d" % code)
    os.unlink(data)
    os.rmdir(cg_dir)
    with open(os.path.join(cgstat.out_dir, "host-io.csv")) as f:
        header = f.readline().strip().split(",")
    rows = h.read_csv(os.path.join(cgstat.out_dir, "host-io.csv"))
    h.check(header[:3] == ["epochMs", "cpuBusyPercent", "cpuIowaitPercent"],
            "host-io.csv header starts " + ",".join(header[:3]))
    disks = [c[:-len("WriteMBps")] for c in header if c.endswith("WriteMBps")]
    h.check(len(disks) >= 1, "host-io.csv names the physical disks: %s" % disks)
    written = 0.0
    for r in rows:
        for d in disks:
            written += float(r[d + "WriteMBps"]) * 0.5  # MB in a 0.5 s interval
    h.check(written >= 64 * 1.048576 * 0.95,
            "host-io.csv: at least the 67.1 MB written with O_DIRECT (%.1f MB)" % written)
    total = sum(after) - sum(before)
    busy = 100.0 * (total - (after[3] - before[3]) - (after[4] - before[4])) / total
    mean = sum(float(r["cpuBusyPercent"]) for r in rows) / len(rows)
    h.check(abs(mean - busy) <= 10,
            "cpuBusyPercent: cgstat mean %.1f %%, /proc/stat over the window %.1f %% (%.1f s)"
            % (mean, busy, t1 - t0))


def main():
    args = h.parse_args()
    test_page_faults(args)
    test_cross_cgroup(args)
    test_unsupported_event(args)
    test_host(args)
    h.done()


if __name__ == "__main__":
    main()
