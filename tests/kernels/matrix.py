# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The kernel matrix: cgstat as built here, booted under QEMU on Debian's own kernels, each
guest running tests/kernels/guest_checks.py against its own kernel's accounting. Prints one
table of kernel x check, the verifier's figures of each program on each kernel, and how long
each guest took; the last line is "N passed, M failed" over kernel x check. Exit 1 when any
check failed or a guest gave no result for it (it crashed, or ran out of time).

    python3 tests/kernels/matrix.py [--build DIR] [--out DIR] [--all | SUITE...]

SUITE: a Debian suite whose kernel to boot (tests/kernels/fetch.sh): bookworm (6.1, the
README's target) and bullseye (5.10, below the minimum: the refusal) by default; --all adds
bookworm-backports, trixie and unstable."""

import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import guest_checks  # noqa: E402

DEFAULT = ["bookworm", "bullseye"]
ALL = ["bullseye", "bookworm", "bookworm-backports", "trixie", "unstable"]
# Kernels below the minimum (README): what the guest checks there is the refusal alone.
BELOW_MINIMUM = {"bullseye"}
# A guest's whole run under TCG (no KVM): about 80 s for every check here; the limit leaves
# room for a machine two to three times slower.
GUEST_SECONDS = 900

RESULT = re.compile(r"^RESULT (\S+) (pass|fail) (\d+)/(\d+)(.*)$")
PROG = re.compile(r"^PROG (\S+) (\w+) insns=(\S+) usec=(\S+)")


def checks_for(suite):
    return ["refused"] if suite in BELOW_MINIMUM else guest_checks.SUPPORTED


def fetch(suites):
    """suite -> (release and package, vmlinuz), from fetch.sh's lines."""
    out = subprocess.run([os.path.join(HERE, "fetch.sh")] + suites, stdout=subprocess.PIPE,
                         check=True, text=True).stdout
    kernels = {}
    for line in out.splitlines():
        suite, rest = line.split(" ", 1)
        version, vmlinuz = rest.rsplit(" ", 1)
        kernels[suite] = (version, vmlinuz)
    return kernels


def boot(suite, vmlinuz, initrd, log_path):
    """Boot one guest with its checks; (its RESULT lines by check, its PROG lines, seconds)."""
    start = time.monotonic()
    with open(log_path, "w") as log:
        code = subprocess.run([os.path.join(HERE, "boot.sh"), vmlinuz, initrd,
                               str(GUEST_SECONDS), "cgstat.checks=" + ",".join(checks_for(suite))],
                              stdout=log, stderr=subprocess.STDOUT).returncode
    seconds = time.monotonic() - start
    results, progs = {}, []
    with open(log_path, errors="replace") as log:
        for line in log:
            line = line.rstrip("\r\n")
            m = RESULT.match(line)
            if m:
                results[m.group(1)] = (m.group(2), "%s/%s" % (m.group(3), m.group(4)),
                                       m.group(5).strip())
            m = PROG.match(line)
            if m:
                progs.append(m.groups())
    if code == 124:
        print("%s: the guest did not power off within %d s (log: %s)"
              % (suite, GUEST_SECONDS, log_path), flush=True)
    return results, progs, seconds


def table(rows):
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--out", default=None, help="logs and the initramfs (default BUILD/kernels)")
    p.add_argument("--all", action="store_true", help="every suite: " + " ".join(ALL))
    p.add_argument("suites", nargs="*")
    args = p.parse_args()
    suites = ALL if args.all else (args.suites or DEFAULT)
    out = args.out or os.path.join(args.build, "kernels")
    os.makedirs(out, exist_ok=True)

    kernels = fetch(suites)
    initrd = os.path.join(out, "initramfs.cpio.gz")
    subprocess.run([os.path.join(HERE, "initramfs.sh"), args.build, initrd], check=True)

    passed = failed = 0
    runs = {}
    for suite in suites:
        version, vmlinuz = kernels[suite]
        print("=== %s: %s" % (suite, version), flush=True)
        runs[suite] = boot(suite, vmlinuz, initrd, os.path.join(out, suite + ".log"))
        results, _, seconds = runs[suite]
        for check in checks_for(suite):
            status, counts, why = results.get(check, ("missing", "-", "no RESULT line"))
            ok = status == "pass"
            passed, failed = passed + ok, failed + (not ok)
            print("%-4s  %s %s %s %s" % ("ok" if ok else "FAIL", suite, check, counts, why))
        print("%s: %.0f s (log: %s)" % (suite, seconds, os.path.join(out, suite + ".log")),
              flush=True)

    every = [c for c in guest_checks.CHECKS if any(c in checks_for(s) for s in suites)]
    rows = [["kernel", "suite"] + every + ["seconds"]]
    for suite in suites:
        results, _, seconds = runs[suite]
        rows.append([kernels[suite][0].split(" ")[0], suite] +
                    [results.get(c, ("missing",))[0] if c in checks_for(suite) else "-"
                     for c in every] + ["%.0f" % seconds])
    print("\nkernel x check")
    table(rows)

    progs = sorted({(mode, name) for s in suites for mode, name, _, _ in runs[s][1]})
    if progs:
        print("\nverified instructions / verification time (us), by program and mode")
        head = [["program", "mode"] + [kernels[s][0].split(" ")[0] for s in suites
                                       if s not in BELOW_MINIMUM]]
        for mode, name in progs:
            cells = []
            for s in suites:
                if s in BELOW_MINIMUM:
                    continue
                got = [(i, u) for m, n, i, u in runs[s][1] if (m, n) == (mode, name)]
                cells.append("%s/%s" % got[0] if got else "-")
            head.append([name, mode] + cells)
        table(head)
    print("\n%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
