# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""How close each check against a reference came to its limit, over several runs: the table
behind docs/metrics.md's "Limits" (limit, observed range, runs).

    python3 tests/limits.py [--far] CTEST_LOG...

Each CTEST_LOG is a ctest LastTest.log (tests/run-all.sh keeps each stage's as NN-NAME.ctest).
The checks read are the harness's check_time() lines ("NAME: cgstat X, reference Y, error E%
(limit L%, and +T ms for ..., and -B ms for ...)") and check_count() lines ("NAME: cgstat X,
kernel Y, difference D (limit A to B: ...)"). A check's name has its numbers replaced by N so
that the same check over runs (and over labels that differ by a number) is one row. For each:
the runs it was in, how many times it ran, its error's range, and the largest share of its
limit used (the error over the limit on the error's side, tails included). --far prints only
the checks whose worst used less than a tenth of their limit."""

import argparse
import collections
import re

from summarize import ctest_tests

NUMBER = r"[-+]?(?:\d+(?:\.\d*)?(?:e[-+]?\d+)?|inf)"
# the limit is "R%" (both sides) or "+A% -B%" (check_time's rel_below)
TIME = re.compile(r"^(ok|FAIL)\s+(.*): cgstat (%s), reference (%s), error (%s)%% "
                  r"\(limit (?:(%s)%%|\+(%s)%% -(%s)%%)"
                  r"(?:, and \+(%s) ms for .*?)?(?:, and -(%s) ms for .*?)?\)$"
                  % ((NUMBER,) * 8))
COUNT = re.compile(r"^(ok|FAIL)\s+(.*): cgstat (-?\d+), kernel (-?\d+), difference ([-+]\d+) "
                   r"\(limit ([-+]\d+) to ([-+]\d+)")
# what varies from run to run inside a check's name: paths and numbers
VARIABLE = [(re.compile(r"/sys/fs/cgroup/\S*"), "CGROUP"), (re.compile(r"/tmp/\S*"), "TMP"),
            (re.compile(r"\d+(?:\.\d+)?"), "N")]


def normalize(name):
    for pattern, what in VARIABLE:
        name = pattern.sub(what, name)
    return name


def samples(lines):
    """(name, kind, error, used share of the limit, limit text) of each check line."""
    for line in lines:
        m = TIME.match(line)
        if m:
            got, want = float(m.group(3)), float(m.group(4))
            rel_up = float(m.group(6) or m.group(7)) / 100
            rel_down = float(m.group(6) or m.group(8)) / 100
            above, below = float(m.group(9) or 0), float(m.group(10) or 0)
            diff = got - want
            room = (rel_up * abs(want) + above) if diff >= 0 else (rel_down * abs(want) + below)
            used = abs(diff) / room if room else (0.0 if diff == 0 else float("inf"))
            rel = ("±%s%%" % m.group(6) if m.group(6)
                   else "+%s%% -%s%%" % (m.group(7), m.group(8)))
            limit = "%s%s%s" % (rel, " +%s ms" % m.group(9) if m.group(9) else "",
                                " -%s ms" % m.group(10) if m.group(10) else "")
            err = 100 * diff / want if want else 0.0
            yield normalize(m.group(2)), "%", err, used, limit
            continue
        m = COUNT.match(line)
        if m:
            diff, least, most = int(m.group(5)), int(m.group(6)), int(m.group(7))
            # a count's limit is where the difference may lie; the share is of the side used
            room = most if diff >= 0 else -least
            used = abs(diff) / room if room else (0.0 if diff == 0 else float("inf"))
            yield normalize(m.group(2)), "count", diff, used, "%+d to %+d" % (least, most)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--far", action="store_true",
                        help="only the checks whose worst used under a tenth of the limit")
    parser.add_argument("logs", nargs="+")
    args = parser.parse_args()
    rows = collections.OrderedDict()
    for run, path in enumerate(args.logs):
        for test, lines, _ok in ctest_tests(path):
            for name, kind, err, used, limit in samples(lines):
                row = rows.setdefault((test, name), dict(kind=kind, errs=[], used=0.0, runs=set(),
                                                         limits=set()))
                row["errs"].append(err)
                row["used"] = max(row["used"], used)
                row["runs"].add(run)
                row["limits"].add(limit)
    print("| test | check | runs | times | error range | limit | worst share of it |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for (test, name), row in rows.items():
        if args.far and row["used"] >= 0.1:
            continue
        unit = "%" if row["kind"] == "%" else ""
        fmt = "%+.3f" if row["kind"] == "%" else "%+d"
        limits = sorted(row["limits"])
        print("| %s | %s | %d | %d | %s to %s%s | %s | %.2f |"
              % (test.replace("integration.", ""), name.replace("|", "/"), len(row["runs"]),
                 len(row["errs"]), fmt % min(row["errs"]), fmt % max(row["errs"]), unit,
                 limits[0] if len(limits) == 1 else "%s … %s" % (limits[0], limits[-1]),
                 row["used"]))


if __name__ == "__main__":
    main()
