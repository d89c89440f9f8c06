# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The harness and run-all.sh's counting cannot hide a failure: a run of "cgstat" (here a
stand-in shell script) that says a sanitizer report and exits 0 fails its check, as does one
with the wrong exit status; a skip is counted as a skip; and tests/summarize.py counts a test
that crashed after its checks passed as a failure. Needs no root (a unit test)."""

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import time

import harness as h

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORT = ("==4242==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010",
          "src/drain.c:42:7: runtime error: signed integer overflow",
          "==4242==ERROR: LeakSanitizer: detected memory leaks")


def fake_cgstat(tmp, stderr, code):
    path = os.path.join(tmp, "fake-cgstat-%d" % len(os.listdir(tmp)))
    with open(path, "w") as f:
        f.write("#!/bin/sh\nprintf '%%s\\n' '%s' >&2\nexit %d\n" % (stderr, code))
    os.chmod(path, 0o755)
    return path


def outcome(fn):
    """(passed, failed) that fn() added to the harness's counts, which are then put back; what
    it printed is dropped (its FAIL lines are the point, not failures of this test)."""
    before = (h._passed, h._failed)
    with contextlib.redirect_stdout(io.StringIO()):
        fn()
    after = (h._passed, h._failed)
    h._passed, h._failed = before
    return after[0] - before[0], after[1] - before[1]


def main():
    tmp = h.scratch_path(tempfile.mkdtemp(prefix="cgstat-selftest-"))
    for line in REPORT:
        cgstat = fake_cgstat(tmp, line, 0)
        got = outcome(lambda: h.run_cgstat([cgstat, "-q"]))
        h.check(got == (0, 1), "exit 0 with %r: the run fails (passed, failed %s)"
                % (line[:40], got))
    cgstat = fake_cgstat(tmp, "cgstat: attached", 3)
    got = outcome(lambda: h.run_cgstat([cgstat, "-q"]))
    h.check(got == (0, 1), "exit 3 where 0 was wanted: the run fails (%s)" % (got,))
    got = outcome(lambda: h.run_cgstat([cgstat, "-q"], 3))
    h.check(got == (1, 0), "exit 3 where 3 was wanted: the run passes (%s)" % (got,))
    skipped = h._skipped
    got = outcome(lambda: h.skip("selftest: a skip"))
    h.check(h._skipped == skipped + 1 and got == (0, 0),
            "a skip is counted as skipped, not passed or failed (%s)" % (got,))
    h._skipped = skipped

    # Cgstat(sample=...): a line wait_lines() counts is in lines and line_samples already,
    # however long the sample takes (test_prometheus once read lines[n + 1] too soon)
    path = os.path.join(tmp, "fake-cgstat-lines")
    with open(path, "w") as f:
        f.write("#!/bin/sh\necho 'cgstat: attached' >&2\nfor i in 1 2 3; do echo \"{}\"; "
                "done\nexec sleep 30\n")
    os.chmod(path, 0o755)
    lines = h.Cgstat(path, [], sample=lambda: time.sleep(0.2))
    seen = []
    for k in (1, 2, 3):
        lines.wait_lines(k)
        seen.append((len(lines.line_times), len(lines.lines), len(lines.line_samples)))
    lines.proc.kill()
    lines.proc.wait()
    h.check(all(n_lines >= k and n_samples >= k for k, (_, n_lines, n_samples)
                in zip((1, 2, 3), seen)),
            "wait_lines(k): k lines and samples there (times, lines, samples: %s)" % seen)

    # a test that raises while cgstat runs leaves no cgstat behind (harness.Cgstat's atexit)
    script = ("import sys; sys.path.insert(0, %r); import harness as h\n"
              "c = h.Cgstat(%r, [])\nprint(c.proc.pid, flush=True)\nraise SystemExit(3)\n"
              % (os.path.dirname(os.path.abspath(__file__)), path))
    p = subprocess.run([sys.executable, "-c", script], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, timeout=60)
    pid = int(p.stdout.split()[0])
    gone = True
    with contextlib.suppress(OSError):
        with open("/proc/%d/stat" % pid) as f:
            gone = f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    h.check(p.returncode == 3 and gone, "a test that ends while its cgstat runs kills it (pid "
            "%d %s)" % (pid, "gone" if gone else "still running"))
    if not gone:
        os.kill(pid, 9)

    # summarize.py: a test whose checks all passed but that then died (a sanitizer's abort at
    # exit), a stage without a closing line that failed (a build), and skips listed
    logs = os.path.join(tmp, "logs")
    os.mkdir(logs)
    with open(os.path.join(logs, "01-tests.ctest"), "w") as f:
        f.write("1/2 Testing: a\nok    x\n5 passed, 0 failed, 1 skipped\nSKIP  no PMU\n"
                "Test Failed.\n2/2 Testing: b\n3 passed, 0 failed\nTest Passed.\n")
    for name, rc in (("01-tests", 8), ("02-build", 2)):
        for ext, text in (("rc", rc), ("log", "make: *** Error 1"), ("seconds", 1)):
            with open(os.path.join(logs, "%s.%s" % (name, ext)), "w") as f:
                f.write("%s\n" % text)
    p = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "summarize.py"), logs],
                       stdout=subprocess.PIPE)
    last = p.stdout.decode().strip().splitlines()[-1]
    h.check(p.returncode == 1 and last == "8 passed, 2 failed, 1 skipped"
            and "tests a: no PMU" in p.stdout.decode(),
            "summarize.py: a test dead after its checks and a broken build count as failures, "
            "the skip is listed: exit %d, %r" % (p.returncode, last))
    h.done()


if __name__ == "__main__":
    main()
