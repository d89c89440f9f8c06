# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""cgroup-stats.csv against the files the kernel keeps for the cgroup, read by the test itself
before the load starts and after it has ended (the cgroup idle at both ends, so that the
kernel's figures are still while they are read):

- throttling: a spinning thread under a v1 cpu.cfs_quota_us of half a CPU (this hybrid host has
  the cpu controller on v1 only): periods, throttled periods and throttled time against the v1
  cgroup's cpu.stat, and the one stderr line that says where they come from;
- pressure: two spinning threads sharing one CPU (cpu "some") and O_DIRECT writes with fsync
  (io "some" and "full") against the watched cgroup's cpu.pressure and io.pressure, in the
  file and in the JSON stream;
- bad input: an io.pressure cgstat cannot read (mode 000, cgstat has dropped the capability to
  override it) and the cgroup removed mid-run: the fields are empty, never 0, one stderr line
  each, and the run goes on."""

import json
import os
import signal
import tempfile
import time

import harness as h

CPU = 1
QUOTA_US, PERIOD_US = 50000, 100000
# each row rounds a time to 0.001 ms
ROUNDING_MS = 0.0005


def column(rows, label, name):
    return [r[name] for r in rows if r["container"] == label]


def total(rows, label, name):
    return sum(float(v) for v in column(rows, label, name))


def settled(path):
    """cpu.stat once it stays the same for 0.3 s: the bandwidth timer counts periods for a
    while after the last task stopped running."""
    last = h.read_keyed(path)
    for _ in range(50):
        time.sleep(0.3)
        now = h.read_keyed(path)
        if now == last:
            return now
        last = now
    raise RuntimeError(path + " does not settle")


def throttled(args):
    mount = h.v1_cpu_mount()
    h.check(mount is not None, "the host has a v1 cpu hierarchy (cpu.cfs_quota_us)")
    if mount is None:
        return
    with h.scratch_cgroup("thr") as cg, h.scratch_cgroup("thr", parent=mount) as v1:
        # stopped before cgstat starts: nothing runs before it counts
        hog = h.stopped_quota_spinner(args.workload, cg, v1, 3, CPU, QUOTA_US, PERIOD_US)
        before = settled(os.path.join(v1, "cpu.stat"))
        cgstat = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "--no-perf", "-c", "thr=" + cg])
        hog.send_signal(signal.SIGCONT)
        hog.wait(60)
        after = settled(os.path.join(v1, "cpu.stat"))
        cgstat.wait_intervals(time.time() * 1000, 1)
        cgstat.stop()
    rows = cgstat.rows("cgroup-stats.csv")
    n = len(column(rows, "thr", "periods"))
    h.check(n >= 6, "thr: %d rows" % n)
    for name, key in (("periods", "nr_periods"), ("throttledPeriods", "nr_throttled")):
        got, want = total(rows, "thr", name), after[key] - before[key]
        h.check(got == want, "thr: %s %d = v1 cpu.stat %s delta %d" % (name, got, key, want))
    got = total(rows, "thr", "throttledMillis")
    want = (after["throttled_time"] - before["throttled_time"]) / 1e6
    h.check(abs(got - want) <= ROUNDING_MS * n,
            "thr: throttledMillis %.3f = v1 throttled_time delta %.3f ms (rows round)"
            % (got, want))
    # 3 s at half a CPU: about 30 periods throttled for about 50 ms each
    h.check(after["nr_throttled"] - before["nr_throttled"] >= 15 and want >= 750,
            "thr: the quota throttled the spinner (%d periods, %.0f ms)"
            % (after["nr_throttled"] - before["nr_throttled"], want))
    said = [line for line in cgstat.stderr_lines if "throttling comes from the v1" in line]
    h.check(len(said) == 1 and mount in said[0],
            "one stderr line says the throttling comes from %s: %s" % (mount, said))


def pressure(args):
    with h.scratch_cgroup("psi") as cg:
        cgstat = h.Cgstat(args.cgstat, ["-f", "json", "-i", "0.5", "--no-perf", "-c",
                                        "psi=" + cg])
        cpu0 = h.read_pressure(os.path.join(cg, "cpu.pressure"))
        io0 = h.read_pressure(os.path.join(cg, "io.pressure"))
        mem0 = h.read_pressure(os.path.join(cg, "memory.pressure"))
        h.run_workload(args.workload, cg, "hogs", 2, CPU)
        with tempfile.NamedTemporaryFile(dir="/var/tmp", prefix="cgstat-test-io-") as f:
            h.run_in_cgroup(cg, ["dd", "if=/dev/zero", "of=" + f.name, "bs=64k", "count=400",
                                 "oflag=direct", "conv=fsync", "status=none"])
        cgstat.wait_intervals(time.time() * 1000, 1)
        cpu1 = h.read_pressure(os.path.join(cg, "cpu.pressure"))
        io1 = h.read_pressure(os.path.join(cg, "io.pressure"))
        mem1 = h.read_pressure(os.path.join(cg, "memory.pressure"))
        cgstat.stop()
    rows = cgstat.rows("cgroup-stats.csv")
    lines = [json.loads(line) for line in cgstat.stdout_text().splitlines() if line.strip()]
    n = len(column(rows, "psi", "periods"))
    for name, got_name, want in (
            ("cpu some", "cpuPressureSomeMillis", cpu1["some"] - cpu0["some"]),
            ("cpu full", "cpuPressureFullMillis", cpu1["full"] - cpu0["full"]),
            ("io some", "ioPressureSomeMillis", io1["some"] - io0["some"]),
            ("io full", "ioPressureFullMillis", io1["full"] - io0["full"]),
            ("memory some", "memoryPressureSomeMillis", mem1["some"] - mem0["some"])):
        got = total(rows, "psi", got_name)
        h.check(abs(got - want) <= ROUNDING_MS * n + 0.001,
                "psi: %s %.3f ms = the cgroup's own delta %.3f ms" % (got_name, got, want))
        # the JSON stream carries the same figures (a key absent where the field is empty)
        streamed = sum(line["containers"]["psi"].get(got_name, 0.0) for line in lines
                       if "psi" in line["containers"])
        h.check(abs(streamed - want) <= ROUNDING_MS * n + 0.001,
                "psi: the JSON stream's %s %.3f ms = the cgroup's own delta %.3f ms"
                % (got_name, streamed, want))
    # the shapes: one of two spinners on one CPU always waits (2 s); dd waits on the disk
    h.check(cpu1["some"] - cpu0["some"] >= 1000,
            "psi: two spinners on one CPU stalled the cgroup %.0f ms"
            % (cpu1["some"] - cpu0["some"]))
    h.check(io1["some"] - io0["some"] > 0, "psi: O_DIRECT writes stalled it on io %.1f ms"
            % (io1["some"] - io0["some"]))


def bad_input(args):
    with h.scratch_cgroup("bad") as cg, h.scratch_cgroup("other") as other:
        os.chmod(os.path.join(cg, "io.pressure"), 0)
        sleeper = h.spawn_in_cgroup(cg, ["sleep", "1000"])
        cgstat = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "--no-perf", "-c", "bad=" + cg,
                                        "-c", "other=" + other])
        cgstat.wait_intervals(time.time() * 1000, 1)
        sleeper.kill()
        sleeper.wait()
        h.remove_cgroup_tree(cg)
        removed_ms = time.time() * 1000
        cgstat.wait_intervals(time.time() * 1000, 1)
        cgstat.wait_intervals(time.time() * 1000, 1)
        cgstat.stop()
    rows = [r for r in cgstat.rows("cgroup-stats.csv") if r["container"] == "bad"]
    before = [r for r in rows if int(r["epochMillis"]) < removed_ms]
    after = [r for r in rows if int(r["epochMillis"]) > removed_ms + 600]
    h.check(before and all(r["ioPressureSomeMillis"] == "" and r["ioPressureFullMillis"] == ""
                           and r["cpuPressureSomeMillis"] != "" for r in before),
            "bad: io.pressure unreadable: its fields empty, cpu.pressure's there (%d rows)"
            % len(before))
    h.check(after and all(all(v == "" for k, v in r.items()
                              if k not in ("epochMillis", "container")) for r in after),
            "bad: removed: every field empty (%d rows)" % len(after))
    others = [r for r in cgstat.rows("cgroup-stats.csv") if r["container"] == "other"]
    h.check(len(others) >= 5 and all(r["cpuPressureSomeMillis"] != "" for r in others[1:]),
            "other: its rows go on (%d)" % len(others))
    lines = [line for line in cgstat.stderr_lines if line.startswith("cgstat: 'bad'")]
    h.check(len([x for x in lines if "cannot read io.pressure (Permission denied)" in x]) == 1,
            "one line says io.pressure cannot be read: %s" % lines)
    h.check(len([x for x in lines if "its cgroup is gone" in x]) == 1,
            "one line says the cgroup is gone: %s" % lines)


def main():
    args = h.parse_args()
    throttled(args)
    pressure(args)
    bad_input(args)
    h.done()


if __name__ == "__main__":
    main()
