# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""--threads (docs/metrics.md, "Thread pools"), with the workload's pools shape: twelve threads
that name themselves as they start (serial-ml-7 spins; io-3-1 to io-3-3 spin 2 ms and sleep
3 ms; idle-10 to idle-17 sleep) beside the main thread, so the pools and what each did are known
from the kernel's own figures of every thread, which the workload reports with their names.

- Every interval, the pools of the container add up to its row of sched-stats.csv, figure by
  figure: the counts and threads exactly, the times to the rounding of their 3 decimals (the
  JSON stream's pools the same);
- the pools are exactly those the names make (digit runs as N), each with its threads; the
  renames at the threads' start left none in the pool of the name they were born with;
- each pool's on-CPU time, run-queue time and switches over the run against the sum of its
  threads' /proc/TID/schedstat and /proc/TID/status, with the container tests' tolerances;
- --pool-by comm keeps each name as its own pool."""

import json

import harness as h

SECONDS = 3
POOLS = {"serial-ml-N": 1, "io-N-N": 3, "idle-N": 8, "workload": 1}
TIMES = ["onCpuMillis", "runqWaitMillis", "offCpuSleepMillis", "offCpuBlockedMillis"]
COUNTS = ["voluntarySwitches", "involuntarySwitches", "migrations"]
# each time is printed with 3 decimals: a sum of n of them is off by up to n half-thousandths
ROUNDING_MS = 0.0005
# docs/metrics.md, "How exact": the container tests' limits (test_accuracy.py)
ONCPU = 0.008
RUNQ_SLEEPERS = 0.03
# What a worker ran from its creation to its rename, at most (about 0.08 ms each in runs here)
BORN_MS = 0.5
# Pools whose run-queue time is checked against run_delay: the spinner and the steady threads,
# the shapes the container tests' limit was measured on. The idle threads, which sleep 20 ms at a
# time among threads that keep both CPUs busy, read 4.5 and 14.8 % below their run_delay in two
# runs: a gap of the container figure too (the pools add up to it), not of the pools; see
# docs/metrics.md, "How exact".
RUNQ_POOLS = ("serial-ml-N", "io-N-N", "serial-ml-7", "io-3-1", "io-3-2", "io-3-3")


def run(args, extra=()):
    with h.scratch_cgroup("pools") as cg:
        cgstat = h.Cgstat(args.cgstat, ["-f", "json", "-i", "0.5", "--threads", "-c",
                                        "pl=" + cg] + list(extra))
        report = h.run_workload(args.workload, cg, "pools", SECONDS)
        h.settle()
        code = cgstat.stop()
    h.check(code == 0, "cgstat exit code %d" % code)
    return cgstat, report


def pools_by_interval(rows):
    out = {}
    for r in rows:
        if r["container"] == "pl":
            out.setdefault(r["epochMillis"], []).append(r)
    return out


def check_sums(cgstat):
    """Every interval's pools against the container's row."""
    pools = pools_by_interval(cgstat.rows("pool-stats.csv"))
    sched = {r["epochMillis"]: r for r in cgstat.rows("sched-stats.csv") if r["container"] == "pl"}
    bad = []
    for epoch, row in sched.items():
        mine = pools.get(epoch, [])
        if sum(int(p["threads"]) for p in mine) != int(row["tasks"]):
            bad.append((epoch, "threads"))
        for k in COUNTS:
            if sum(int(p[k]) for p in mine) != int(row[k]):
                bad.append((epoch, k))
        for k in TIMES:
            if abs(sum(float(p[k]) for p in mine) - float(row[k])) > ROUNDING_MS * len(mine) + 1e-9:
                bad.append((epoch, k, sum(float(p[k]) for p in mine), row[k]))
    h.check(len(sched) >= 6 and not bad,
            "pools add up to the container in each of %d intervals: %s" % (len(sched), bad[:5]))
    # the JSON stream: each interval's pools object against the container's own figures
    bad = []
    lines = h.read_json_lines(cgstat.stdout_path)
    for line in lines:
        c = line["containers"].get("pl")
        if not c:
            continue
        mine = c.get("pools", {}).values()
        for k in COUNTS:
            if sum(p[k] for p in mine) != c[k]:
                bad.append((line["epochMillis"], k))
        if abs(sum(p["onCpuMillis"] for p in mine) - c["onCpuMillis"]) > \
                ROUNDING_MS * len(mine) + 1e-9:
            bad.append((line["epochMillis"], "onCpuMillis"))
        if max([p["busiestThreadCores"] for p in mine] or [0]) != c.get("busiestThreadCores", 0):
            bad.append((line["epochMillis"], "busiestThreadCores"))
    h.check(len(lines) >= 6 and not bad, "JSON: pools add up in %d lines: %s" % (len(lines),
                                                                              bad[:5]))
    return pools


def check_pools(pools, report, want):
    """The pools seen, and their threads while all of the workload's lived."""
    seen = {p["pool"] for rows in pools.values() for p in rows}
    h.check(seen == set(want), "pools: %s, want %s" % (sorted(seen), sorted(want)))
    full = [rows for rows in pools.values()
            if sum(int(p["threads"]) for p in rows) == sum(want.values())]
    counts = [{p["pool"]: int(p["threads"]) for p in rows} for rows in full]
    h.check(len(full) >= 4 and all(c == want for c in counts),
            "threads by pool in the %d intervals with all %d threads: %s"
            % (len(full), sum(want.values()), counts[:2]))


def pool_of(comm, exact=False):
    if exact:
        return comm
    out, digits = "", False
    for ch in comm:
        if ch.isdigit():
            if not digits:
                out += "N"
            digits = True
        else:
            out += ch
            digits = False
    return out


def check_kernel(pools, report, exact=False):
    """Each pool's sums over the run against its threads' kernel figures at the report. What
    follows the report adds to cgstat's figures only: each worker's wakeup from the release
    barrier and its exit, within tail_ns; the main thread's joins and exit, within exit_ns. A
    worker runs under the main thread's name from its creation to its rename (pthread_setname_np
    as it starts): that time is in the main thread's pool, not its own."""
    after = report["after"]
    kernel = {}
    for tid, t in report["threads"].items():
        k = kernel.setdefault(pool_of(t["comm"], exact), dict(n=0, exec_ns=0, run_delay_ns=0,
                                                             nvcsw=0, nivcsw=0))
        k["n"] += 1
        for f in ("exec_ns", "run_delay_ns", "nvcsw", "nivcsw"):
            k[f] += t[f]
    got = {}
    for rows in pools.values():
        for p in rows:
            g = got.setdefault(p["pool"], dict.fromkeys(TIMES + COUNTS, 0.0))
            for f in TIMES + COUNTS:
                g[f] += float(p[f])
    workers = len(report["threads"]) - 1
    for pool, k in sorted(kernel.items()):
        g = got.get(pool, dict.fromkeys(TIMES + COUNTS, 0.0))
        main = pool == "workload"
        tail_ms = (k["n"] * after["tail_ns"] + (after["exit_ns"] if main else 0)) / 1e6
        born_ms = BORN_MS * (workers if main else k["n"])
        h.check_time("%s on-CPU ms vs sum_exec_runtime" % pool, g["onCpuMillis"],
                     k["exec_ns"] / 1e6, ONCPU, tail=tail_ms + (born_ms if main else 0),
                     why="%d threads' run after the report%s" % (
                         k["n"], ", and the workers' before their rename" if main else ""),
                     below=0 if main else born_ms, below_why="its run before its rename")
        if pool in RUNQ_POOLS:
            h.check_time("%s run-queue ms vs run_delay" % pool, g["runqWaitMillis"],
                         k["run_delay_ns"] / 1e6, RUNQ_SLEEPERS, tail=tail_ms,
                         why="%d threads' waits after the report" % k["n"])
        # each thread's exit (and the main thread's joins) after the report
        h.check_count("%s voluntary switches" % pool, int(g["voluntarySwitches"]), k["nvcsw"],
                      -1 if not main else 0, k["n"] + (workers + 1 if main else 0) + 1,
                      "the exit of each of %d threads%s, one in the move; one fewer where it "
                      "switched before its rename" % (
                          k["n"], " and the main thread's joins" if main else ""))
        h.check_count("%s involuntary switches" % pool, int(g["involuntarySwitches"]),
                      k["nivcsw"], -1 if not main else 0, 3 * k["n"] + 1,
                      "up to 3 preemptions in each thread's last stretch, one in the move; one "
                      "fewer where it was preempted before its rename")
    total = sum(k["exec_ns"] for k in kernel.values()) / 1e6
    h.check_time("all pools' on-CPU ms vs sum_exec_runtime", sum(g["onCpuMillis"] for g in
                                                                 got.values()), total, ONCPU,
                 tail=(len(report["threads"]) * after["tail_ns"] + after["exit_ns"]) / 1e6,
                 why="the threads' run after the report")


def pools_by_pattern(args):
    cgstat, report = run(args)
    pools = check_sums(cgstat)
    check_pools(pools, report, POOLS)
    check_kernel(pools, report)


def pools_by_comm(args):
    cgstat, report = run(args, ["--pool-by", "comm"])
    pools = check_sums(cgstat)
    want = {t["comm"]: 1 for t in report["threads"].values()}
    check_pools(pools, report, want)
    check_kernel(pools, report, exact=True)


def main():
    args = h.parse_args()
    pools_by_pattern(args)
    pools_by_comm(args)
    h.done()


if __name__ == "__main__":
    main()
