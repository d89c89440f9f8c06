# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The wake graph of --threads (docs/metrics.md, "wakeups.csv"; issue 41), with the workload's
pipeline shape: producers hand items to one stage thread over a futex queue, the stage hands
them to writers over another, a thread sleeps 10 ms at a time beside. The workload counts what
FUTEX_WAKE says each role's threads woke of each other's, so the reference is its own.

- In one container: wakeups.csv's edges prod-N -> stage, stage -> wr-N, and back (a full queue's
  room), each within 1 % of the workload's counts; the sleeper's wakeups from "(timer)" within
  1 % of its sleeps.
- The JSON stream's "wakers" of each pool give the same edges, interval by interval, and the
  summary's "wakeGraph" over the run (the workload's counts again the reference, not
  wakeups.csv); the graph's nodes are the edges' ends.
- A second cgstat beside the first, at another interval, counts the same edges.
- Across containers (the stage's side in a child in another watched cgroup): the edge into the
  stage names the producers' container."""

import collections

import harness as h

SECONDS = 3
# issue 41's limit against the workload's own counts
WAKES = 0.01
EDGES = {"prod-N>stage": ("stage", "prod-N"), "stage>prod-N": ("prod-N", "stage"),
         "stage>wr-N": ("wr-N", "stage"), "wr-N>stage": ("stage", "wr-N")}


def edges_of(cgstat):
    """wakeups.csv summed over the run: {(container, pool, wakerContainer, wakerPool): n}."""
    got = collections.Counter()
    for r in cgstat.rows("wakeups.csv"):
        got[(r["container"], r["pool"], r["wakerContainer"], r["wakerPool"])] += \
            int(r["wakeups"])
    return got


def stream_edges_of(cgstat):
    """The JSON stream's "wakers" of each pool, summed over the run, keyed as edges_of()'s; and
    the number of wakers objects with a key they must not have."""
    got = collections.Counter()
    bad = 0
    for line in h.read_json_lines(cgstat.stdout_path):
        for name, c in line["containers"].items():
            for pool, figures in c.get("pools", {}).items():
                for w in figures.get("wakers", []):
                    source = w["pool"].startswith("(")
                    bad += source == ("container" in w) or set(w) - {"container", "pool",
                                                                    "wakeups"} != set()
                    got[(name, pool, w.get("container", ""), w["pool"])] += w["wakeups"]
    return got, bad


def summary_edges_of(cgstat):
    """The summary's wakeGraph: its edges keyed as edges_of()'s, with wakeups and a second; its
    nodes as (container, pool)."""
    graph = cgstat.summary()["wakeGraph"]
    edges = {(e.get("container", ""), e["pool"], e.get("wakerContainer", ""), e["wakerPool"]):
             (e["wakeups"], e["wakeupsPerSecond"]) for e in graph["edges"]}
    nodes = {(n.get("container", ""), n["pool"]) for n in graph["nodes"]}
    return edges, nodes


def check_edge(what, got, want, least=0, edges=None, pool=None):
    """got within 1 % of the workload's want (or 2, for an edge that hardly woke: the stage
    is the pipeline's limit, so the producers find it busy and rarely wake it). Where it is
    not, every edge into pool of edges is printed: whom the wakeups went to instead."""
    ok = h.check(want >= least and abs(got - want) <= max(WAKES * want, 2),
                 "%s: %d wakeups, the workload's %d (limit %.0f %%)"
                 % (what, got, want, WAKES * 100))
    if not ok and edges is not None:
        print("      every edge into %s: %s"
              % (pool, sorted((k, n) for k, n in edges.items() if k[1] == pool)), flush=True)


def one_container(args):
    with h.scratch_cgroup("pipe") as cg:
        cgstat = h.Cgstat(args.cgstat, ["-f", "json", "-i", "0.5", "--threads", "--no-perf",
                                        "-c", "pl=" + cg])
        # a second cgstat beside, maps and programs of its own: its graph must be as exact
        second = h.Cgstat(args.cgstat, ["-q", "-i", "0.3", "--threads", "--no-perf",
                                        "-c", "pl=" + cg])
        report = h.run_workload(args.workload, cg, "pipeline", SECONDS, 2, 2)
        h.settle()
        second.stop()
        cgstat.stop()
    got = edges_of(cgstat)
    beside = edges_of(second)
    for key, (pool, waker) in EDGES.items():
        check_edge("pl (a second cgstat beside): %s -> %s" % (waker, pool),
                   beside[("pl", pool, "pl", waker)], report["woke"][key],
                   1000 if waker == "stage" else 0, beside, pool)
    stream, bad = stream_edges_of(cgstat)
    for key, (pool, waker) in EDGES.items():
        for where, edges in (("pl", got), ("pl (stream's wakers)", stream)):
            check_edge("%s: %s -> %s" % (where, waker, pool), edges[("pl", pool, "pl", waker)],
                       report["woke"][key], 1000 if waker == "stage" else 0, edges, pool)
    check_edge("pl: (timer) -> tick", got[("pl", "tick", "", "(timer)")], report["ticks"])
    check_edge("pl (stream's wakers): (timer) -> tick", stream[("pl", "tick", "", "(timer)")],
               report["ticks"])
    h.check(bad == 0, "pl: stream's wakers with a container exactly when a pool's: %d not" % bad)
    summary, nodes = summary_edges_of(cgstat)
    seconds = cgstat.summary()["measurement"]["durationSeconds"]
    for key, (pool, waker) in EDGES.items():
        wakeups, per_second = summary.get(("pl", pool, "pl", waker), (0, 0))
        check_edge("pl (summary's wakeGraph): %s -> %s" % (waker, pool), wakeups,
                   report["woke"][key], 1000 if waker == "stage" else 0)
        # both figures rounded to 3 decimals in the JSON
        h.check(abs(per_second * seconds - wakeups) <= 0.0005 * (per_second + seconds) + 1e-9,
                "pl (summary's wakeGraph): %s -> %s: %.1f a second over %.3f s" % (
                    waker, pool, per_second, seconds))
    check_edge("pl (summary's wakeGraph): (timer) -> tick",
               summary.get(("pl", "tick", "", "(timer)"), (0, 0))[0], report["ticks"])
    ends = {(k[0], k[1]) for k in summary} | {(k[2], k[3]) for k in summary}
    h.check(nodes == ends, "pl (summary's wakeGraph): nodes are the edges' ends: %s"
            % sorted(nodes ^ ends))


def across(args):
    with h.scratch_cgroup("prod") as a, h.scratch_cgroup("stage") as b:
        cgstat = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "--threads", "--no-perf",
                                        "-c", "a=" + a, "-c", "b=" + b])
        report = h.run_workload(args.workload, a, "pipeline", SECONDS, 2, 2, b)
        h.settle()
        cgstat.stop()
    got = edges_of(cgstat)
    check_edge("b's stage woken by a's producers", got[("b", "stage", "a", "prod-N")],
               report["woke"]["prod-N>stage"])
    check_edge("a's producers woken by b's stage", got[("a", "prod-N", "b", "stage")],
               report["woke"]["stage>prod-N"], 1000)
    check_edge("b: (timer) -> tick", got[("b", "tick", "", "(timer)")], report["ticks"])


def depth_attach_order(args):
    """The ends of timers' callbacks, interrupt handlers and softirqs are attached before their
    beginnings (link ids are handed out in order): one that began between the two attaches
    would leave its CPU's depth up, and every later wakeup there the timer's or the interrupt's
    (CI run 58: a second cgstat's edges from the stage were all 0)."""
    with h.scratch_cgroup("order") as cg:
        cgstat = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "--threads", "--no-perf",
                                        "-c", "o=" + cg])
        links = h.bpf_objects_of(cgstat.proc.pid, "link")
        progs = {p["id"]: p["name"] for p in h.bpf_objects_of(cgstat.proc.pid, "prog")}
        cgstat.stop()
    # bpftool gives the name from BTF, or the kernel's first 15 characters of it without
    link_of = {progs.get(link["prog_id"], "")[:15]: link["id"] for link in links}
    for kind in ("hrtimer", "timer", "irq", "softirq"):
        begin = link_of.get(("cg_%s_entry" % kind)[:15])
        end = link_of.get(("cg_%s_exit" % kind)[:15])
        h.check(begin and end and end < begin,
                "%s: its end attached before its beginning (links %s and %s)"
                % (kind, end, begin))


def main():
    args = h.parse_args()
    depth_attach_order(args)
    one_container(args)
    across(args)
    h.done()


if __name__ == "__main__":
    main()
