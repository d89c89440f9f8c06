# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Serial stages by demand (docs/metrics.md, "Serial stages" and the verdict's `serial`), with
the workload's pools shape: serial-ml-7 spins, io-3-1 to io-3-3 work 0.1 of a core each, eight
idle threads sleep, in one watched cgroup.

- On a quiet host (the spinner shares a CPU with the io threads: it ran 0.87 to 0.95 of a core
  an interval before the rule went by demand) and on a busy one (a cgroup of the test's keeps
  both CPUs busy with a pinned spinner each: it runs about half a core and waits the rest),
  RUNS runs each: the summary names the spinner, and no other thread, in every run;
- its demand (cpuSeconds + runqSeconds in the summary) within 1 % of the kernel's own growth of
  sum_exec_runtime + run_delay over its life (its schedstat as it left the workload's last
  barrier: the workload's report);
- the verdict of every interval wholly inside the load is serial:serial-ml-7:TID, with its
  hungriestThread that thread and hungriestThreadRanCores + hungriestThreadWaitedCores at 0.9
  or more; on the busy host the summary's topPreempters name the hogs' cgroup (who held the
  stage back) and the stage's line on stderr says what it waited."""

import os
import re
import time

import harness as h

# issue 41's 10 runs a shape (run-all.sh's --full, and alone); CI's tier runs 5 for its time
RUNS = int(os.environ.get("CGSTAT_SERIAL_RUNS", "10"))
SECONDS = 2
INTERVAL_S = 0.5
# the load runs in full this long after its launch (its threads start and name themselves)
START_MS = 100
# demand against the kernel's: issue 41's limit
DEMAND = 0.01
STAGE = "serial-ml-7"


def now_ms():
    return int(time.time() * 1000)


def one_run(args, busy, form="json"):
    """One run of the pools shape, beside a busy cgroup or not: cgstat, the report, launch."""
    with h.scratch_cgroup("ser") as cg, h.scratch_cgroup("hogs") as hogs_cg:
        hogs = []
        if busy:
            hogs = [h.Workload(args.workload, hogs_cg, "spinner", SECONDS + 2, cpu)
                    for cpu in (0, 1)]
            h.wait_threads(hogs_cg, 4)
        cgstat = h.Cgstat(args.cgstat, ["-f", form, "-i", str(INTERVAL_S), "--threads",
                                        "--no-perf", "-c", "pl=" + cg, "-c", "hogs=" + hogs_cg])
        launched = now_ms()
        report = h.run_workload(args.workload, cg, "pools", SECONDS)
        h.settle()
        cgstat.stop()
        for hog in hogs:
            hog.wait()
    return cgstat, report, launched


def check_run(what, cgstat, report, launched, busy):
    spinner = [tid for tid, t in report["threads"].items() if t["comm"] == STAGE]
    h.precondition(len(spinner) == 1, "%s: the workload reported its spinner" % what)
    tid = spinner[0] if spinner else "?"
    c = cgstat.summary()["containers"].get("pl", {})
    stages = c.get("serialStages") or []
    named = [str(s["tid"]) for s in stages]
    h.check(named == [tid], "%s: serialStages %s, want the spinner %s alone" % (what, named, tid))
    if named == [tid]:
        last = report.get("last", {}).get(tid, {})
        want = (last.get("exec_ns", 0) + last.get("run_delay_ns", 0)) / 1e9
        ran, waited = stages[0].get("cpuSeconds", 0), stages[0].get("runqSeconds", 0)
        h.check(want > 0 and abs(ran + waited - want) <= DEMAND * want,
                "%s: the stage's demand %.4f s (ran %.4f, waited %.4f) vs the kernel's "
                "sum_exec_runtime + run_delay %.4f s (limit %.0f %%)"
                % (what, ran + waited, ran, waited, want, DEMAND * 100))
    said = [l for l in cgstat.stderr_lines if "of a core (ran" in l]
    h.check(len(said) == 1 and "(tid %s) wanted" % tid in said[0],
            "%s: the stage's line on stderr: %r" % (what, said))
    whole = []
    for line in h.read_json_lines(cgstat.stdout_path):
        start = line["epochMillis"] - line["intervalMillis"]
        if start >= launched + START_MS and line["epochMillis"] <= launched + SECONDS * 1000:
            whole.append(line["containers"].get("pl", {}))
    want_verdict = "serial:%s:%s" % (STAGE, tid)
    bad = [(r.get("verdict"), r.get("hungriestThread"), r.get("hungriestThreadRanCores"),
            r.get("hungriestThreadWaitedCores"), r.get("onCpuMillis"), r.get("runqWaitMillis"))
           for r in whole if r.get("verdict") != want_verdict
           or r.get("hungriestThread") != "%s:%s" % (STAGE, tid)
           or r.get("hungriestThreadRanCores", 0) + r.get("hungriestThreadWaitedCores", 0) < 0.9]
    h.check(len(whole) >= 2 and not bad,
            "%s: %s in each of the %d whole intervals; not so: %s"
            % (what, want_verdict, len(whole), bad))
    if busy:
        top = [p.get("cgroup") for p in c.get("topPreempters", [])]
        h.check(top[:1] == ["hogs"], "%s: the summary's topPreempters %s start with hogs"
                % (what, c.get("topPreempters")))
        ran = stages[0]["serialCores"] if stages else 1
        h.check(ran < 0.8, "%s: the stage ran %.2f of a core on the busy host (the test's "
                "premise: it waited for a CPU)" % (what, ran))
    return named == [tid]


def shape(args, busy):
    what = "busy host" if busy else "quiet host"
    named = 0
    for i in range(RUNS):
        cgstat, report, launched = one_run(args, busy)
        named += check_run("%s, run %d" % (what, i + 1), cgstat, report, launched, busy)
    print("# %s: the spinner named in %d of %d runs" % (what, named, RUNS))


def table(args):
    """The table (as the live view draws it) says both parts of the stage's time in its
    VERDICT column."""
    cgstat, report, _ = one_run(args, True, form="table")
    tid = [tid for tid, t in report["threads"].items() if t["comm"] == STAGE]
    lines = [l for l in cgstat.stdout_text().splitlines() if l.startswith("pl ")]
    said = [l for l in lines if re.search(r" serial:%s:%s ran 0\.\d\d waited 0\.\d\d$"
                                          % (STAGE, tid[0] if tid else "?"), l)]
    h.check(len(said) >= 2, "the table's VERDICT: serial:%s:TID ran R waited W in the whole "
            "intervals: %s" % (STAGE, lines))


def main():
    args = h.parse_args()
    shape(args, busy=False)
    shape(args, busy=True)
    table(args)
    h.done()


if __name__ == "__main__":
    main()
