#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Containers of a real Docker engine (docker_engine.py: Debian's dockerd on a private socket,
the cgroupfs driver, each container its own v2 cgroup /docker/ID) as cgstat shows them with no
runtime answering: every row of a container labelled docker:SHORTID from the first interval
that has it, never by its path or its id's fallback; its on-CPU time against the container's
own cpu.stat (below it by what runc's init ran before runc moved it into the cgroup, 2 to 3 ms
here: cpu.stat charges that stretch to the container, cgstat to the cgroup it was switched in
in, as for any move); a container limited to half a CPU (--cpus 0.5) throttled under its
label, the unlimited one not; -p on a container's process giving the same label."""

import os
import time

import docker_engine as de
import harness as h

# what each container runs: a busy part, a mark that it ended, then an idle wait
BUSY = "timeout %d yes > /dev/null; : > /tmp/done; sleep 1000"


def wait_done(e, name, timeout=60):
    """Until the container's busy part has ended: its mark, read through its main process's
    root from the host (a docker exec would start processes in the container, each moved into
    its cgroup while running: time cpu.stat charges to the container and cgstat, as for any
    move, to the cgroup the process was switched in in)."""
    mark = "/proc/%d/root/tmp/done" % e.pid(name)
    deadline = time.monotonic() + timeout
    while not os.path.exists(mark):
        if time.monotonic() > deadline:
            raise RuntimeError("%s's busy part did not end in %d s" % (name, timeout))
        time.sleep(0.1)


def docker_labels(args):
    with de.engine() as e:
        cgstat = h.Cgstat(args.cgstat, ["-q", "-i", "0.5"])
        ids = {"broker": e.run("broker", BUSY % 2),
               "bookie": e.run("bookie", BUSY % 3, "--cpus", "0.5")}
        watching = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "-p", str(e.pid("broker"))])
        cgroups = {name: e.cgroup(name) for name in ids}
        for name in ids:
            wait_done(e, name)
        h.settle()
        cgstat.stop()
        watching.stop()
        mount = h.v2_mount()
        usage = {name: h.cgroup_usage_ms(mount + cgroups[name]) for name in ids}
        cgids = {name: os.stat(mount + cgroups[name]).st_ino for name in ids}
    rows = cgstat.rows("sched-stats.csv")
    for name, cid in ids.items():
        label = "docker:" + cid[:12]
        h.check(cgroups[name] == "/docker/" + cid,
                "%s: its cgroup is /docker/ID (%s)" % (name, cgroups[name]))
        got = h.sched_totals(rows, label)
        h.check(got["intervals"] > 0, "%s: %d rows labelled %s" % (name, got["intervals"], label))
        h.check_cpu_stat("%s (%s) on-CPU" % (name, label), got["onCpuMillis"], usage[name], [])
        other = sorted({r["container"] for r in rows
                        if cid in r["container"] or r["container"] == "#%d" % cgids[name]}
                       - {label})
        h.check(not other, "%s: no row under its path or its id (%s)" % (name, other))
    verdicts = {name: [r["verdict"] for r in rows if r["container"] == "docker:" + cid[:12]]
                for name, cid in ids.items()}
    h.check("throttled" in verdicts["bookie"],
            "bookie (--cpus 0.5): throttled under its label in %d of %d intervals"
            % (verdicts["bookie"].count("throttled"), len(verdicts["bookie"])))
    h.check("throttled" not in verdicts["broker"],
            "broker (no limit): never throttled (%s)" % sorted(set(verdicts["broker"])))
    watched = {r["container"] for r in watching.rows("sched-stats.csv")}
    h.check(watched == {"docker:" + ids["broker"][:12]},
            "-p on broker's process: its rows labelled %s" % sorted(watched))


def main():
    args = h.parse_args()
    docker_labels(args)
    h.done()


if __name__ == "__main__":
    main()
