# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""cgstat under load, churn, full maps and faults.

Load: perf bench sched messaging (400 processes) in a watched cgroup against the rusage wait4
gives for perf and every worker it waited for, and the workload's own messaging shape (400
threads that park, so the kernel's per-thread figures are read before they exit): switches and
migrations exact, give or take what the workloads do after the kernel's figures were read, and
no event dropped.

Churn: 20,000 threads in 2,000 processes forking and exiting while 300 child cgroups are made,
used by a short process each and removed. Afterwards the all-cgroups cgstat's BPF maps (the
cgroup id -> slot hash and the slot table) hold no cgroup that no longer exists; its per-task
state is BPF task storage, which the kernel frees with the task and bpftool cannot dump, so it
is not checked here. The watched parent's switches match the kernel's, and its rows have no gap.

Capacity: --max-cgroups 4 with ten busy cgroups: the tasks that found no slot are counted in
droppedEvents (JSON stream and summary) and said once on stderr.

Faults: a full filesystem ends the run with exit 1, one line naming ENOSPC and the files made of
whole rows; SIGKILL mid-run leaves whole rows too."""

import csv
import io
import json
import os
import re
import signal
import subprocess
import tempfile
import time

import harness as h

CHURN_PROCS = 2000
CHURN_THREADS = 10
CHURN_CGROUPS = 300
CHURN_INTERVAL = 0.25

SOFTWARE_EVENTS = "task-clock,context-switches,cpu-migrations,page-faults"


def check_no_drops(name, cgstat):
    lines = h.read_json_lines(cgstat.stdout_path)
    dropped = sorted({line.get("droppedEvents") for line in lines})
    h.check(lines and dropped == [0], "%s: droppedEvents in the %d JSON lines: %s"
            % (name, len(lines), dropped))
    summary = cgstat.summary().get("droppedEvents")
    h.check(summary == 0, "%s: droppedEvents in the summary: %s" % (name, summary))


def perf_messaging(args):
    """perf bench's processes end before the run does, so their ground truth is wait4's rusage,
    which holds every worker perf waited for. It misses the last switch of a task reaped before
    its final schedule(), hence one switch of tail per process perf says it ran, and perf."""
    with h.scratch_cgroup("perfbench") as cg:
        cgstat = h.Cgstat(args.cgstat, ["-f", "json", "-i", "0.5", "-c", "w=" + cg])
        with tempfile.TemporaryFile() as out:
            status, usage, before = h.run_in_cgroup(cg, ["perf", "bench", "sched",
                                                         "messaging", "-g", "10", "-l", "200"],
                                                    stdout=out)
            out.seek(0)
            text = out.read().decode(errors="replace")
        h.settle()
        code = cgstat.stop()
    h.check(code == 0 and status == 0, "perf bench messaging: cgstat exit %d, perf exit %d"
            % (code, status))
    match = re.search(r"== (\d+) processes", text)
    workers = int(match.group(1)) if match else 0
    h.check(workers == 400, "perf bench messaging: perf ran %d processes (400)" % workers)
    got = h.sched_totals(cgstat.rows("sched-stats.csv"), "w")
    h.check_count("perf bench messaging: voluntary + involuntary switches vs rusage (less"
                  " perf's %d before its move)" % sum(before),
                  got["voluntarySwitches"] + got["involuntarySwitches"],
                  usage.ru_nvcsw + usage.ru_nivcsw - sum(before), 0, workers + 2,
                  "the last switch of each of %d workers and of perf, in the rusage or not, "
                  "and one of perf in the write that moved it" % workers)
    check_no_drops("perf bench messaging", cgstat)


def thread_messaging(args):
    """The same load as threads that park: the kernel's per-thread counts are exact, so
    migrations can be checked too."""
    with h.scratch_cgroup("messaging") as cg:
        cgstat = h.Cgstat(args.cgstat, ["-f", "json", "-i", "0.5", "-c", "w=" + cg])
        report = h.run_workload(args.workload, cg, "messaging", 10, 500)
        h.settle()
        cgstat.stop()
    h.precondition(len(report["threads"]) == 401, "messaging threads: the workload reported %d "
                   "threads (400 and main)" % len(report["threads"]))
    h.check_final_counts("messaging threads:", h.sched_totals(cgstat.rows("sched-stats.csv"), "w"),
                         report, ("voluntary", "involuntary", "migrations"))
    check_no_drops("messaging threads", cgstat)


def slot_map_cgroups(cgstat):
    """The cgroup ids the all-cgroups cgstat's maps hold: the keys of cgroup_slots and the
    non-zero cgid of slot_info's entries (with --threads, a pool slot's is its cgroup's). And
    the pools that name a slot no longer a pool's (its cgroup's pools freed, the key left).

    The dumps are not one snapshot: a pool taken while they run (BPF fills its slot, then adds
    the key) or freed (cgstat deletes the key, then frees the slot) can look stale in one pair
    of them (CI run 51: the root cgroup's 'idle-reclaim' pool, taken between the two). A stale
    key outlives every dump, so it must be in the pool dumps before and after slot_info's."""
    maps = h.bpf_maps_of(cgstat.proc.pid)
    keys = {e["key"] for e in h.bpf_map_dump(maps["cgroup_slots"]["id"])}
    pools_before = h.bpf_map_dump(maps["pool_slots"]["id"])
    info = {e["key"]: e["value"] for e in h.bpf_map_dump(maps["slot_info"]["id"])}
    pools_after = h.bpf_map_dump(maps["pool_slots"]["id"])
    infos = {v["cgid"] for v in info.values() if v["cgid"]}
    stale_pools = [e for e in pools_before if e in pools_after
                   and not info.get(e["value"], {}).get("pool_of")]
    h.check(not stale_pools, "churn: every pool key names a pool slot: %s" % stale_pools[:5])
    return keys, infos


def churn(args):
    """Two cgstats: one in the all-cgroups mode, whose maps must forget every removed cgroup,
    and one watching the parent P of the churn, whose switches and rows are checked."""
    with h.scratch_cgroup("churn") as parent:
        c0 = os.path.join(parent, "c0")
        os.mkdir(c0)
        # the host's own cgroups must not fill the map, or ours would be dropped, not slotted;
        # with --threads each cgroup's pools take slots too, and must be freed with it
        everything = h.Cgstat(args.cgstat, ["-q", "-i", str(CHURN_INTERVAL),
                                            "--max-cgroups", "4096", "--threads"])
        watched = h.Cgstat(args.cgstat, ["-q", "-i", str(CHURN_INTERVAL), "-c", "p=" + parent])
        started = time.time()
        load = h.Workload(args.workload, c0, "churn", CHURN_PROCS, CHURN_THREADS)
        dead = {}  # cgroup id -> label, of every cgroup the test removes
        spawned = {"switches": 0, "before": 0, "failed": 0}
        for i in range(1, CHURN_CGROUPS + 1):
            cg = os.path.join(parent, "c%d" % i)
            os.mkdir(cg)
            dead[os.stat(cg).st_ino] = h.v2_label(cg)
            status, usage, before = h.run_in_cgroup(cg, ["/bin/true"])
            spawned["failed"] += status != 0
            spawned["switches"] += usage.ru_nvcsw + usage.ru_nivcsw - sum(before)
            spawned["before"] += sum(before)
            h.remove_cgroup_tree(cg)
        report = load.wait()
        h.settle()
        dead[os.stat(c0).st_ino] = h.v2_label(c0)
        h.remove_cgroup_tree(c0)
        removed_ms = time.time() * 1000

        # A removed cgroup's slot is freed at the first interval that sees it empty.
        everything.wait_intervals(removed_ms, 2)
        before = h.cgroup_ids()
        keys, infos = slot_map_cgroups(everything)
        alive = before | h.cgroup_ids()
        ours = sorted(set(dead) & (keys | infos))
        h.check(not ours, "churn: of the %d removed cgroups, in cgroup_slots (%d entries) or"
                " slot_info (%d in use): %s" % (len(dead), len(keys), len(infos), ours[:20]))
        # Cgroups of others removed just now may still have their slots: they must be gone
        # two intervals later.
        others = (keys | infos) - alive
        mark_ms = time.time() * 1000
        everything.wait_intervals(mark_ms, 2)
        keys2, infos2 = slot_map_cgroups(everything)
        stale = sorted(others & (keys2 | infos2) - h.cgroup_ids())
        h.check(not stale, "churn: ids of removed cgroups still in the maps two intervals after"
                " they were first seen dead: %s (of %d entries; %d cgroups exist)"
                % (stale[:20], len(keys2), len(alive)))
        watched.wait_intervals(time.time() * 1000, 2)
        code_w = watched.stop()
        ended = time.time()
        code_a = everything.stop()
    h.check(code_a == 0 and code_w == 0, "churn: cgstat exit codes %d (all) and %d (watched)"
            % (code_a, code_w))
    h.check(spawned["failed"] == 0, "churn: %d of the short processes failed"
            % spawned["failed"])

    rows = everything.rows("sched-stats.csv")
    seen = {r["container"] for r in rows}
    missing = [label for cgid, label in dead.items()
               if label not in seen and "#%d" % cgid not in seen]
    h.check(not missing, "churn: each of the %d removed cgroups had a slot and rows in the"
            " all-cgroups run; without: %s" % (len(dead), missing[:10]))
    # each lived for one short process, most were gone before the next drain: the names the
    # BPF side read at their first switch label them, where a walk could only find an id
    by_number = [label for cgid, label in dead.items() if "#%d" % cgid in seen]
    h.check(not by_number, "churn: removed cgroups labelled by their path, not their id: %d of"
            " %d by id (%s)" % (len(by_number), len(dead), by_number[:5]))
    # /bin/true lives a millisecond of an interval and runs through it: no stage (before the
    # rule asked for an interval's time, each was named, on stderr too)
    short_stages = [label for label, c in everything.summary()["containers"].items()
                    if label in dead.values() and c.get("serialStages")]
    h.check(not short_stages, "churn: short processes named serial stages in %d of %d removed "
            "cgroups (%s)" % (len(short_stages), len(dead), short_stages[:3]))
    dropped = (everything.summary().get("droppedEvents"), watched.summary().get("droppedEvents"))
    h.check(dropped == (0, 0), "churn: droppedEvents in the summaries (all cgroups, watched):"
            " %s, %s" % dropped)

    # The kernel adds a thread's counts to its process's at release_task(), which for a thread
    # comes before its last schedule(): wait4's rusage never has the final switch of the
    # threads the children made and ended, one each.
    final = h.final_counts(report)
    vol, inv = final["voluntary"], final["involuntary"]
    rows = [r for r in watched.rows("sched-stats.csv") if r["container"] == "p"]
    got = h.sched_totals(rows, "p")
    # Each short process may make its last switch after its parent's rusage was taken, and one
    # in the write that moved it, after the move took effect and before it read its "before".
    h.check_count("churn: P's switches vs the kernel's (churn %d, short processes %d after "
                  "their move, %d before it)" % (vol[0] + inv[0], spawned["switches"],
                                                  spawned["before"]),
                  got["voluntarySwitches"] + got["involuntarySwitches"],
                  vol[0] + inv[0] + spawned["switches"], vol[1] + inv[1],
                  vol[2] + inv[2] + 2 * CHURN_CGROUPS,
                  "%s; %s; and of %d short processes, their last switch and one in their move"
                  % (vol[3], inv[3], CHURN_CGROUPS))

    # No gap: a row for P every interval from the first to the last. cgstat drains on a fixed
    # grid of deadlines and catches up after a late one, so a row may come late by any amount
    # (the churn loads both CPUs) without a gap; a missing row shifts every later one by an
    # interval. So the full rows (the last is the partial one flushed at the stop) must span
    # as many intervals as they are rows, less one: only the first and the last row's delays
    # count, and together they are far below the half interval that would mislead this.
    epochs = [int(r["epochMillis"]) for r in rows]
    full = epochs[:-1]
    span = (full[-1] - full[0]) / (CHURN_INTERVAL * 1000) if len(full) > 1 else 0
    ordered = all(b >= a for a, b in zip(epochs, epochs[1:]))
    h.check(len(full) > 1 and ordered and abs(span - (len(full) - 1)) < 0.5,
            "churn: %d full rows of P, in order: %s, spanning %.2f intervals of %.2f s"
            % (len(full), ordered, span, CHURN_INTERVAL))
    expect = (ended - started) / CHURN_INTERVAL
    h.check(abs(len(epochs) - expect) <= 2, "churn: %d rows of P for a %.2f s run (%.1f"
            " intervals of %.2f s)" % (len(epochs), ended - started, expect, CHURN_INTERVAL))


def capacity(args):
    """Four slots, ten busy cgroups of ours besides the host's: at most four of ours can have a
    slot, and every task of the others must be counted as dropped."""
    cgroups = []
    with h.scratch_cgroup("cap") as top:
        for i in range(10):
            cg = os.path.join(top, "w%d" % i)
            os.mkdir(cg)
            cgroups.append(cg)
        cgstat = h.Cgstat(args.cgstat, ["-f", "json", "-i", "0.25", "--max-cgroups", "4"])
        loads = [h.Workload(args.workload, cg, "steady", 1, 2) for cg in cgroups]
        reports = [load.wait() for load in loads]
        h.settle()
        cgstat.stop()
        labels = {h.v2_label(cg) for cg in cgroups}
    lines = h.read_json_lines(cgstat.stdout_path)
    widest = max((len(line["containers"]) for line in lines), default=0)
    h.check(lines and widest <= 4, "capacity: at most 4 cgroups an interval in %d JSON lines"
            " (%d)" % (len(lines), widest))
    slotted = labels & set().union(*(line["containers"] for line in lines))
    h.check(len(slotted) <= 4, "capacity: %d of our 10 cgroups had a slot (at most 4)"
            % len(slotted))
    tasks = len(reports[0]["threads"])
    least = (10 - len(slotted)) * tasks
    last = lines[-1]["droppedEvents"] if lines else 0
    h.check(last >= least and least > 0,
            "capacity: droppedEvents %d in the last JSON line, at least %d (%d cgroups without"
            " a slot * %d tasks)" % (last, least, 10 - len(slotted), tasks))
    summary = cgstat.summary().get("droppedEvents", 0)
    h.check(summary >= last, "capacity: droppedEvents %d in the summary, at least the last"
            " line's %d" % (summary, last))
    said = [line.rstrip("\n") for line in cgstat.stderr_lines if "dropped" in line.lower()]
    h.check(len(said) == 1 and "droppedEvents" in said[0],
            "capacity: one stderr line about the dropped events, naming droppedEvents: %r"
            % said)


def capacity_freed(args):
    """A task whose cgroup found the slots full is counted as soon as one is freed: four slots
    held by ten busy cgroups of ours (and the host's root), then a cgroup X whose two hogs on
    CPU 0 find none; the ten end and are removed, their slots are given back, and X's threads
    take one at their next switch. From then on X's row shows the hogs' one core, and no event
    is dropped any more."""
    with h.scratch_cgroup("capfree") as top:
        cgroups = []
        for i in range(10):
            cgroups.append(os.path.join(top, "w%d" % i))
            os.mkdir(cgroups[-1])
        late = os.path.join(top, "x")
        os.mkdir(late)
        cgstat = h.Cgstat(args.cgstat, ["-f", "json", "-i", "0.25", "--max-cgroups", "4"],
                          stamp_lines=True)
        loads = [h.Workload(args.workload, cg, "steady", 1.5, 2) for cg in cgroups]
        # the ten run (a main thread and two workers each) and have switched through a drain:
        # the slots are theirs before X comes
        for cg in cgroups:
            h.wait_threads(cg, 3)
        cgstat.wait_intervals(time.time() * 1000, 1)
        hogs = h.Workload(args.workload, late, "hogs", 4, 0)
        for load in loads:
            load.wait()
        for cg in cgroups:
            h.remove_cgroup_tree(cg)
        hogs.wait()
        h.settle()
        cgstat.stop()
        label = h.v2_label(late)
    lines = h.read_json_lines(cgstat.stdout_path)
    first = next((i for i, line in enumerate(lines) if label in line["containers"]), None)
    h.check(first is not None and first > 0 and lines[first - 1]["droppedEvents"] > 0,
            "capacity freed: X had no slot while the ten held them (first row in line %s of "
            "%d, dropped before it %s)" % (first, len(lines),
                                           lines[first - 1]["droppedEvents"] if first else None))
    if not first:
        return
    # The hogs are current on CPU 0 every moment, so on-CPU + stolen is one core of each
    # interval's length by the test's clock (when its line arrived); stolen time is on-CPU the
    # hypervisor took (0.875 cores of on-CPU alone was seen in CI). An interval is never short
    # by much: a miss reads ~0.
    ends = cgstat.line_times
    h.check(len(ends) == len(lines), "capacity freed: %d lines, %d arrival times"
            % (len(lines), len(ends)))
    rows = [i for i in range(first + 1, len(lines)) if label in lines[i]["containers"]][:-1]
    current = [(lines[i]["containers"][label]["onCpuMillis"]
                + lines[i]["containers"][label]["stolenMillis"], (ends[i] - ends[i - 1]) * 1e3)
               for i in rows]
    cores = ["%.3f" % (c / i) for c, i in current]
    # over the rows together the lateness of each arrival cancels but for the first and last
    span_ms = (ends[rows[-1]] - ends[rows[0] - 1]) * 1e3 if rows else 0
    mean = sum(c for c, _ in current) / max(span_ms, 1e-9)
    h.check(len(current) >= 3 and 0.98 <= mean <= 1.01 and all(c >= 0.85 * i for c, i in current),
            "capacity freed: X's two hogs on one CPU once it has a slot: current %.3f cores over "
            "%d intervals (0.98 to 1.01, at least 3), per interval %s (each at least 0.85)"
            % (mean, len(current), cores))
    drops = [line["droppedEvents"] for line in lines[first:]]
    h.check(drops[0] == drops[-1],
            "capacity freed: no event dropped once X has its slot (%d, then %d at the end)"
            % (drops[0], drops[-1]))


def whole_rows(name, path):
    """Every line of a CSV file ends in a newline and has the header's number of fields (an
    empty file has no line to break); returns the number of rows after the header."""
    with open(path, "rb") as f:
        data = f.read()
    text = data.decode("utf-8", errors="surrogateescape")
    records = list(csv.reader(io.StringIO(text, newline="")))
    widths = sorted({len(r) for r in records})
    whole = data.endswith(b"\n") or not data
    ok = whole and (not records or widths == [len(records[0])])
    h.check(ok, "%s: %s: %d bytes, ends in a newline: %s, fields per line %s (header %d)%s"
            % (name, os.path.basename(path), len(data), whole, widths,
               len(records[0]) if records else 0,
               "" if whole else ", last line %r" % data[-80:].split(b"\n")[-1]))
    return max(len(records) - 1, 0)


def csv_files(out):
    return sorted(os.path.join(out, n) for n in os.listdir(out) if n.endswith(".csv"))


def full_filesystem(args):
    """A 64 KiB tmpfs fills within seconds at -i 0.1 in the all-cgroups mode (cgstat's own
    cgroup alone has a row each interval). Software events only: perf-stat.csv is written, and
    no notice about a missing PMU shares stderr with the error."""
    out = tempfile.mkdtemp(prefix="cgstat-full-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", out], check=True)
    try:
        try:
            p = subprocess.run([args.cgstat, "-q", "-i", "0.1", "-e", SOFTWARE_EVENTS, "-o",
                                out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
            code, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired as e:
            code, err = None, e.stderr or b""
        h.check_exit("full filesystem", code, 1, err)
        lines = err.decode(errors="replace").splitlines()
        h.check(len(lines) == 1 and "No space left on device" in lines[0],
                "full filesystem: stderr one line naming ENOSPC: %r" % lines)
        rows = {os.path.basename(path): whole_rows("full filesystem", path)
                for path in csv_files(out)}
        h.check(rows.get("sched-stats.csv", 0) > 0, "full filesystem: rows written: %s" % rows)
        # The summary is written at the end, when the disk is full: it may find no room at
        # all, but what is there must be whole. (In a folder that is not nobody's, cgstat
        # made it empty at the start and writes it in place: empty then.)
        summary = os.path.join(out, "container-summary.json")
        try:
            with open(summary) as f:
                text = f.read()
            if text:
                json.loads(text)
            state = "whole JSON" if text else "empty"
        except FileNotFoundError:
            state = "absent"
        except ValueError:
            state = "broken JSON"
        h.check(state in ("empty", "whole JSON", "absent"), "full filesystem: the summary is "
                "%s (whole JSON, empty or absent)" % state)
    finally:
        subprocess.run(["umount", out], check=True)
        os.rmdir(out)


def sigkill(args):
    """Killed mid-run, between or during its writes: nothing but whole rows on disk."""
    with h.scratch_cgroup("kill") as cg:
        load = h.Workload(args.workload, cg, "steady", 4, 2)
        cgstat = h.Cgstat(args.cgstat, ["-q", "-i", "0.1", "-c", "w=" + cg])
        # mid-run, with rows on disk and more being written
        cgstat.wait_intervals(time.time() * 1000, 10)
        cgstat.stop(signal.SIGKILL, timeout=10, want=-signal.SIGKILL)
        load.wait()
    rows = {os.path.basename(path): whole_rows("SIGKILL", path)
            for path in csv_files(cgstat.out_dir)}
    h.check(rows.get("sched-stats.csv", 0) > 0 and rows.get("container-stats.csv", 0) > 0,
            "SIGKILL: rows written before the kill: %s" % rows)


def main():
    args = h.parse_args()
    # the kernel's switch counts against cgstat's: no user-space path of their own, so not
    # again on the sanitizer build (h.sanitized())
    if not h.sanitized():
        perf_messaging(args)
        thread_messaging(args)
    churn(args)
    capacity(args)
    capacity_freed(args)
    full_filesystem(args)
    sigkill(args)
    h.done()


if __name__ == "__main__":
    main()
