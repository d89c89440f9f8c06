#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What containers' names cost the drain: N containers (cgroups shaped as Docker's cgroupfs driver
makes them, /docker/ID, each with a process that wakes every 100 ms) named by an engine (the
tests' fake one, answering the Engine API with all N), against the same cgroups with --no-names.
Runs alternate (A B A B ...) so that the machine's drift falls on both; each config's cgstat CPU
time per interval (every thread's sum_exec_runtime over the run) and drain time (cgstat's own
/metrics counters: cgstat_drain_seconds_total over cgstat_drains_total between two reads a run
apart) are given as medians, side by side.

    bench/names.py --cgstat build/cgstat [--containers 200] [--rounds 5] [--seconds 10]

Run it with the machine otherwise idle. A benchmark, not a test: it asserts nothing."""

import argparse
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
import fake_engine  # noqa: E402
import harness as h  # noqa: E402


def waker(path):
    """A process in the cgroup at path that wakes every 100 ms and spins 20 us."""
    pid = os.fork()
    if pid:
        return pid
    try:
        with open(os.path.join(path, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        while True:
            end = time.perf_counter() + 20e-6
            while time.perf_counter() < end:
                pass
            time.sleep(0.1)
    finally:
        os._exit(0)


def cpu_seconds(pid):
    """The run time of every thread of pid (the names' threads too), in ns steps: schedstat's
    sum_exec_runtime, where /proc/PID/stat counts in 10 ms ticks."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        with contextlib.suppress(OSError):
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[0])
    return total / 1e9


def drain_totals(port):
    """(cgstat_drain_seconds_total, cgstat_drains_total), or None."""
    got = {}
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
            for line in r.read().decode().splitlines():
                name, _, value = line.partition(" ")
                if name in ("cgstat_drain_seconds_total", "cgstat_drains_total"):
                    got[name] = float(value)
    except OSError:
        pass
    return (got["cgstat_drain_seconds_total"], got["cgstat_drains_total"]) if len(got) == 2 \
        else None


def one_run(cgstat, env, extra, seconds):
    port = h.free_port()
    proc = subprocess.Popen([cgstat, "-q", "-i", "1", "--listen", str(port)] + extra,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2)  # loaded, attached, names listed
    start = cpu_seconds(proc.pid)
    first = drain_totals(port)
    time.sleep(seconds)
    last = drain_totals(port)
    used = cpu_seconds(proc.pid) - start
    proc.send_signal(signal.SIGINT)
    proc.wait(30)
    if not first or not last or last[1] <= first[1]:
        return used / seconds, float("nan")
    return used / seconds, (last[0] - first[0]) / (last[1] - first[1])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cgstat", required=True)
    p.add_argument("--containers", type=int, default=200)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seconds", type=int, default=10)
    args = p.parse_args()
    ids = [uuid.uuid4().hex + uuid.uuid4().hex for _ in range(args.containers)]
    pids = []
    results = {"names": [], "no names": []}
    with fake_engine.engine() as e, h.scratch_cgroup("names-bench") as top, \
            contextlib.ExitStack() as stack:
        for i, cid in enumerate(ids):
            path = os.path.join(top, "docker", cid)
            os.makedirs(path)
            e.container(cid, "bench-%d" % i)
            pids.append(waker(path))

        def reap():
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                with contextlib.suppress(OSError):
                    os.waitpid(pid, 0)
        stack.callback(reap)
        env = dict(os.environ, DOCKER_HOST="unix://" + e.sock)
        for r in range(args.rounds):
            order = (("names", []), ("no names", ["--no-names"]))
            for name, extra in (order if r % 2 == 0 else order[::-1]):
                results[name].append(one_run(args.cgstat, env, extra, args.seconds))
    print("%d containers, %d rounds of %d s (median over rounds):"
          % (args.containers, args.rounds, args.seconds))
    print("%-10s %22s %22s" % ("config", "cgstat CPU ms/interval", "drain ms (own gauge)"))
    med = {}
    for name, runs in results.items():
        cpu = statistics.median(x[0] for x in runs) * 1000
        drain = statistics.median(x[1] for x in runs) * 1000
        med[name] = (cpu, drain)
        print("%-10s %22.3f %22.3f" % (name, cpu, drain))
    print("names - no names: CPU %+.3f ms/interval, drain %+.3f ms"
          % (med["names"][0] - med["no names"][0], med["names"][1] - med["no names"][1]))


if __name__ == "__main__":
    main()
