# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""`cgstat compare`: five runs of a workload against five of one that uses three times the
threads (clearly more CPU: significant), and against five more of the same workload, each run
made with `cgstat -- workload`, interleaved so that a drift of the machine falls on every side.

Every figure the comparison prints is checked against the test's own computation from the
runs' container-summary.json: the medians, and the p-value by enumerating all 252 ways to split
the ten values into two fives (mid-ranks for ties), two-sided as twice the smaller tail; the
verdict must be a change exactly where p < 0.05. A same-workload comparison can show a change by
chance (3.2 % a figure for five runs a side, and figures that move together show it together:
5 of 23 once in CI), so there the test asserts that the CPU's change is under 5 %, not that no
figure shows one; the two sides take turns to run first, as a fixed order made one consistently
0.5 % busier (a real difference, which the test found at p=0.04). Then the bad
inputs: a truncated summary and a missing folder are left out with one line each, a side with
no run is exit 1, no "vs" exit 2."""

import csv
import io
import itertools
import json
import math
import os
import shutil
import statistics
import subprocess
import tempfile

import harness as h

RUNS = 5
ALPHA = 0.05


def runs(args, tmp, name, threads):
    """One run of `steady 1 THREADS` under cgstat --: its output folder."""
    folder = h.recorded_run(args, tmp, "compare-" + name, lambda folder: h.run_cgstat(
        [args.cgstat, "-q", "-i", "0.5", "--no-perf", "-o", os.path.join(folder, "run"), "-n",
         "w", "--", args.workload, "steady", "1", str(threads)], stdout=subprocess.DEVNULL))
    return os.path.join(folder, "run")


def compare(args, a, b, fmt="json"):
    """cgstat compare; the caller checks the exit code with what it said."""
    p = subprocess.run([args.cgstat, "compare", "--format", fmt] + a + ["vs"] + b,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    h.no_sanitizer_report("compare --format " + fmt, p.stderr)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def figures(dirs):
    """{(container, figure): [values]} from the runs' summaries, as the test reads them."""
    values = {}
    for d in dirs:
        with open(os.path.join(d, "container-summary.json")) as f:
            summary = json.load(f)
        groups = dict(summary["containers"], **{"(host)": summary.get("host", {})})
        for container, obj in groups.items():
            for key, value in obj.items():
                if isinstance(value, (int, float)):
                    values.setdefault((container, key), []).append(float(value))
    return values


def mid_ranks(pooled):
    order = sorted(range(len(pooled)), key=lambda i: pooled[i])
    ranks = [0.0] * len(pooled)
    i = 0
    while i < len(order):
        j = i
        while j < len(order) and pooled[order[j]] == pooled[order[i]]:
            j += 1
        for k in range(i, j):
            ranks[order[k]] = (i + 1 + j) / 2
        i = j
    return ranks


def brute_force_p(a, b):
    """Two-sided Mann-Whitney p by enumerating every split of the pooled values."""
    ranks = mid_ranks(a + b)
    observed = sum(ranks[:len(a)])
    sums = [sum(ranks[i] for i in chosen)
            for chosen in itertools.combinations(range(len(ranks)), len(a))]
    below = sum(1 for s in sums if s <= observed + 1e-9) / len(sums)
    above = sum(1 for s in sums if s >= observed - 1e-9) / len(sums)
    return min(1.0, 2 * min(below, above))


def check_rows(what, rows, side_a, side_b, rel=1e-9):
    """Each row's medians and p against the test's own, within rel (the output's precision);
    returns {(container, figure): row}."""
    want_a, want_b = figures(side_a), figures(side_b)
    bad = []
    by_key = {}
    for r in rows:
        key = (r["container"], r["metric"])
        by_key[key] = r
        a, b = want_a.get(key, []), want_b.get(key, [])
        if r["a"]["n"] != len(a) or r["b"]["n"] != len(b):
            bad.append("%s n %d+%d, want %d+%d" % (key, r["a"]["n"], r["b"]["n"], len(a),
                                                   len(b)))
            continue
        if not a or not b:
            continue
        p = brute_force_p(a, b)
        if (abs(r["a"]["median"] - statistics.median(a)) > rel * abs(statistics.median(a))
                or abs(r["b"]["median"] - statistics.median(b)) > rel * abs(statistics.median(b))
                or abs(r["p"] - p) > rel or r["significant"] != (p < ALPHA)):
            bad.append("%s: medians %s %s p %.6f significant %s, want %s %s p %.6f"
                       % (key, r["a"]["median"], r["b"]["median"], r["p"], r["significant"],
                          statistics.median(a), statistics.median(b), p))
    h.check(not bad and len(rows) == len(set(want_a) | set(want_b)),
            "%s: %d figures, each median and p as the test computes them%s"
            % (what, len(rows), (": " + "; ".join(bad[:5])) if bad else ""))
    return by_key


def median_ci(values, level=0.95):
    """The distribution-free interval of the median, as the test computes it: [x_(k), x_(n+1-k)]
    with the largest k whose binomial coverage 1 - 2 P(B <= k-1), B ~ Bin(n, 1/2), is at least
    level; None when no k has it (below 6 values at 0.95)."""
    xs = sorted(values)
    n, best = len(xs), None
    for k in range(1, n // 2 + 1):
        if 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2 ** n < level:
            break
        best = k
    return (xs[best - 1], xs[n - best]) if best else None


def formats_and_intervals(args, side_a, side_a2, side_b):
    """The interval of the median at 6 runs and more (10 of the same workload against 5), each
    output format against the test's own figures, a wrong --format, and a side B with no run."""
    ten = side_a + side_a2
    code, out, err = compare(args, ten, side_b)
    rows = json.loads(out)["rows"] if code == 0 else []
    want = figures(ten)
    bad = []
    for r in rows:
        ci = median_ci(want.get((r["container"], r["metric"]), []))
        got = (r["a"].get("ciLow"), r["a"].get("ciHigh"))
        if ci is None:
            same = got == (None, None)
        else:
            same = None not in got and all(abs(g - w) <= 1e-9 * abs(w) for g, w in zip(got, ci))
        if not same or "ciLow" in r["b"]:
            bad.append("%s/%s: A's interval %s, want %s; B's %s" % (
                r["container"], r["metric"], got, ci, r["b"].get("ciLow")))
    h.check(code == 0 and rows and not bad,
            "10 runs against 5: each figure's interval of A's median is the test's order "
            "statistics (%d figures), B (5 runs) has none: %s" % (len(rows), bad[:3]))
    code, text, _ = compare(args, ten, side_b, "text")
    h.check(code == 0 and "± ∞: need at least 6 runs a side" in text,
            "text: B's missing interval is explained: %r" % text[-300:])

    code, out, _ = compare(args, side_a, side_b, "csv")
    records = list(csv.DictReader(io.StringIO(out))) if code == 0 else []
    as_json = [{"container": r["container"], "metric": r["metric"],
                "a": {"n": int(r["nA"]), "median": float(r["medianA"] or "nan")},
                "b": {"n": int(r["nB"]), "median": float(r["medianB"] or "nan")},
                "p": float(r["p"] or "nan"), "significant": r["significant"] == "true"}
               for r in records]
    h.check(code == 0 and records, "csv: exit %d, %d rows" % (code, len(records)))
    # the CSV prints medians to 6 significant digits and p to 6 decimals
    check_rows("csv", as_json, side_a, side_b, rel=1e-5)

    code, md, _ = compare(args, side_a, side_b, "md")
    _, text, _ = compare(args, side_a, side_b, "text")
    text_cpus = [ln.split()[-3:] for ln in text.splitlines() if ln.startswith("cpus ")]
    md_cpus = [ln for ln in md.splitlines() if ln.startswith("| cpus |")]
    h.check(code == 0 and "### w" in md and len(md_cpus) >= 1 and text_cpus
            and " ".join(text_cpus[0]) in md_cpus[0],
            "md: a table per container, w's cpus row with the text's change %s: %r"
            % (text_cpus[:1], md_cpus[:1]))

    p = h.run_cgstat([args.cgstat, "compare", "--format", "yaml"] + side_a + ["vs"] + side_b, 2)
    h.check(b"not one of text, csv, json, md" in p.stderr and not p.stdout,
            "--format yaml: refused, naming the formats: %r" % p.stderr)
    missing = os.path.join(os.path.dirname(side_a[0]), "no-such-run")
    code, _, err = compare(args, side_a, [missing])
    h.check(code == 1 and "side B has no run" in err, "no readable run on side B: exit %d, %r"
            % (code, err))


def hostile_keys(args, tmp, side_a, side_b):
    """Summaries a user wrote, with a label and a figure's key that hold escape sequences: the
    text table shows each as text (\\xNN), never a control character a terminal acts on."""
    sides = []
    for name, side in (("a", side_a), ("b", side_b)):
        sides.append([])
        for i, run in enumerate(side):
            folder = os.path.join(tmp, "hostile-%s%d" % (name, i))
            shutil.copytree(run, folder)
            path = os.path.join(folder, "container-summary.json")
            with open(path) as f:
                summary = json.load(f)
            figures = dict(summary["containers"]["w"])
            figures["cpus\x1b[2J\x9b31m"] = figures["cpus"]
            summary["containers"]["w\x1b]0;title\x07"] = figures
            with open(path, "w") as f:
                json.dump(summary, f)
            sides[-1].append(folder)
    code, text, err = compare(args, sides[0], sides[1], "text")
    controls = sorted({"%02x" % ord(c) for c in text
                       if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) < 0xa0})
    h.check(code == 0 and not controls and "cpus\\x1b[2J\\xc2\\x9b31m" in text
            and "w\\x1b]0;title\\x07" in text,
            "hostile keys, text: no control character on the terminal (found %s), the keys "
            "escaped; exit %d, %r" % (controls, code, err))


def fabricated(tmp, template, name, values):
    """Runs copied from template, the figure name set to each of values in turn (one a run):
    their folders."""
    folders = []
    for value in values:
        folder = os.path.join(tempfile.mkdtemp(prefix=name + "-", dir=tmp), "run")
        shutil.copytree(template, folder)
        path = os.path.join(folder, "container-summary.json")
        with open(path) as f:
            summary = json.load(f)
        summary["containers"]["w"][name] = value
        with open(path, "w") as f:
            json.dump(summary, f)
        folders.append(folder)
    return folders


def zero_medians_and_small_values(args, tmp, template):
    """A figure at 0 in every run of A and in most of B's, the rest of B's at 1: a significant
    rise from a median of 0 to a median of 0, which the text calls higher (it said -inf, a fall,
    before 2026-12-05). And a figure of about 0.0004: its interval in the CSV to the median's
    digits (it was written 0.000 to 0.001)."""
    a = fabricated(tmp, template, "zeroFigure", [0] * 12)
    b = fabricated(tmp, template, "zeroFigure", [0] * 7 + [1] * 5)
    code, text, err = compare(args, a, b, "text")
    line = [ln for ln in text.splitlines() if ln.startswith("zeroFigure ")]
    h.check(code == 0 and len(line) == 1 and "higher, medians 0 (p=" in line[0]
            and "-inf" not in line[0],
            "a rise from a median of 0 to 0: said higher: %r (exit %d, %r)" % (line, code, err))
    small = [0.00041, 0.00042, 0.00043, 0.00044, 0.00045, 0.00046]
    a = fabricated(tmp, template, "smallFigure", small)
    code, text, err = compare(args, a, a, "csv")
    rows = [r for r in csv.DictReader(io.StringIO(text)) if r["metric"] == "smallFigure"]
    h.check(code == 0 and len(rows) == 1 and float(rows[0]["ciLowA"]) == 0.00041
            and float(rows[0]["ciHighA"]) == 0.00046,
            "a figure of 0.0004: its interval in the CSV %s" % [(r["medianA"], r["ciLowA"],
                                                                 r["ciHighA"]) for r in rows])


def main():
    args = h.parse_args()
    tmp = tempfile.mkdtemp(prefix="cgstat-compare-")
    h.scratch_path(tmp)
    side_a, side_b, side_a2 = [], [], []
    for i in range(RUNS):
        # the two sides of the same workload take turns to run first, after the 3-thread
        # run: in a fixed order, the one after it ran 0.5 % more cores, consistently (p=0.04)
        first, second = (("a", side_a), ("same", side_a2))[::1 if i % 2 else -1]
        for name, side in (first, second):
            side.append(runs(args, tmp, "%s%d" % (name, i), 1))
        side_b.append(runs(args, tmp, "b%d" % i, 3))

    code, out, err = compare(args, side_a, side_b)
    h.check(code == 0 and not err, "1 thread vs 3: exit %d, stderr %r" % (code, err))
    rows = check_rows("1 thread vs 3", json.loads(out)["rows"], side_a, side_b)
    cpus = rows[("w", "cpus")]
    h.check(cpus["significant"] and cpus["changePercent"] > 50 and cpus["p"] < 0.01,
            "1 thread vs 3: cpus %+.1f %% (p=%.3f), a significant rise"
            % (cpus["changePercent"], cpus["p"]))
    code, text, _ = compare(args, side_a, side_b, "text")
    line = [ln for ln in text.splitlines() if ln.startswith("cpus ")]
    h.check(code == 0 and len(line) == 1 and "%+.2f%% (p=%.3f n=5+5)" % (
        cpus["changePercent"], cpus["p"]) in line[0],
            "1 thread vs 3, text: the cpus line says the change and p: %r" % line)

    code, out, err = compare(args, side_a, side_a2)
    rows = check_rows("the same workload", json.loads(out)["rows"], side_a, side_a2)
    cpus = rows[("w", "cpus")]
    changed = [k for k, r in rows.items() if r["significant"]]
    h.check(code == 0 and abs(cpus["changePercent"]) < 5,
            "the same workload: cpus %+.1f %% (p=%.3f), within 5 %%; figures with a change "
            "(each one's chance is 3.2 %%, and they move together): %s"
            % (cpus["changePercent"], cpus["p"], changed))

    formats_and_intervals(args, side_a, side_b=side_b, side_a2=side_a2)

    hostile_keys(args, tmp, side_a, side_b)
    zero_medians_and_small_values(args, tmp, side_a[0])

    # a run killed while writing its summary, and a folder that is not there: left out
    truncated = os.path.join(side_a[0], "container-summary.json")
    with open(truncated) as f:
        text = f.read()
    with open(truncated, "w") as f:
        f.write(text[:len(text) // 2])
    missing = os.path.join(tmp, "no-such-run")
    code, out, err = compare(args, side_a + [missing], side_b)
    lines = err.splitlines()
    rows = json.loads(out)["rows"] if code == 0 else []
    n_a = {r["a"]["n"] for r in rows if r["container"] == "w"}
    h.check(code == 0 and len(lines) == 2 and "a0" in lines[0] and "cut short" in lines[0]
            and missing in lines[1] and n_a == {RUNS - 1},
            "a truncated summary and a missing folder: exit %d, n of A %s, stderr %r"
            % (code, n_a, err))
    code, out, err = compare(args, [missing], side_b)
    h.check(code == 1 and "side A has no run" in err, "no readable run on a side: exit %d, %r"
            % (code, err))
    p = h.run_cgstat([args.cgstat, "compare"] + side_a, 2)
    h.check(p.stderr.startswith(b'cgstat: compare: no "vs"')
            and not p.stdout, "no \"vs\": refused before reading any run: %r" % p.stderr)
    h.done()


if __name__ == "__main__":
    main()
