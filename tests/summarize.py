# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The closing lines of tests/run-all.sh: each stage's time and counts, every skipped check by
name, and "N passed, M failed, K skipped" over all of them.

    python3 tests/summarize.py LOG_DIR

LOG_DIR holds, for each stage in the order run, NN-NAME.log (what it printed), NN-NAME.rc (its
exit status), NN-NAME.seconds, and for a ctest stage NN-NAME.ctest (ctest's LastTest.log, which
has every test's output, passed or not). A test or stage ends with the line "N passed, M failed,
K skipped" (or, from the kernel matrix and the unit tests, "N passed, M failed"). One that
failed without saying so (a crash, a timeout, a build that broke) counts one failure more;
one without such a line that succeeded (a build, a fuzz target) counts one pass."""

import os
import re
import sys

CLOSING = re.compile(r"^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*$")
SKIP = re.compile(r"^SKIP  (.*)$")
CTEST_START = re.compile(r"^\d+/\d+ Testing: (\S+)")


def counts(lines, ok):
    """[passed, failed, skipped] of one test's or stage's output, ok: its exit status was 0;
    and its skipped checks."""
    last = None
    skips = []
    for line in lines:
        m = CLOSING.match(line)
        if m:
            last = [int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)]
        m = SKIP.match(line)
        if m:
            skips.append(m.group(1))
    if last is None:
        last = [1, 0, 0] if ok else [0, 1, 0]
    elif not ok and last[1] == 0:
        last[1] += 1  # it failed after its checks passed: an exit status, a sanitizer abort
    return last, skips


def ctest_tests(path):
    """(name, output lines, passed) of each test in a LastTest.log."""
    tests, name, lines = [], None, []
    with open(path, errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\n")
            m = CTEST_START.match(line)
            if m:
                if name:
                    tests.append((name, lines, "Test Passed." in lines))
                name, lines = m.group(1), []
            elif name:
                lines.append(line)
    if name:
        tests.append((name, lines, "Test Passed." in lines))
    return tests


def main():
    log_dir = sys.argv[1]
    stages = sorted(f[:-3] for f in os.listdir(log_dir) if f.endswith(".rc"))
    total = [0, 0, 0]
    skipped = []
    print("\nstage              seconds  passed  failed  skipped")
    for stage in stages:
        base = os.path.join(log_dir, stage)
        with open(base + ".rc") as f:
            rc = int(f.read().strip() or 1)
        seconds = 0
        if os.path.exists(base + ".seconds"):
            with open(base + ".seconds") as f:
                seconds = int(f.read().strip() or 0)
        name = stage.split("-", 1)[1]
        stage_total = [0, 0, 0]
        if os.path.exists(base + ".ctest"):
            tests = ctest_tests(base + ".ctest")
            for test, lines, ok in tests:
                got, skips = counts(lines, ok)
                stage_total = [a + b for a, b in zip(stage_total, got)]
                skipped += ["%s %s: %s" % (name, test, s) for s in skips]
            if rc and stage_total[1] == 0:
                stage_total[1] += 1  # ctest failed with every test passed: none ran
        else:
            with open(base + ".log", errors="replace") as f:
                got, skips = counts(f.read().splitlines(), rc == 0)
            stage_total = got
            skipped += ["%s: %s" % (name, s) for s in skips]
        total = [a + b for a, b in zip(total, stage_total)]
        print("%-18s %7d  %6d  %6d  %7d" % (name, seconds, *stage_total))
    if skipped:
        print("\nskipped (cannot run here):")
        for s in skipped:
            print("  " + s)
    print("\n%d passed, %d failed, %d skipped" % tuple(total))
    return 1 if total[1] else 0


if __name__ == "__main__":
    sys.exit(main())
