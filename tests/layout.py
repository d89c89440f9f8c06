# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The house's layout, recounted from the sources as anyone could with grep (README, "Layout"):
every include of a header of user/ or bpf/ names its folder ("core/record.h"), and runs only
down the data flow:

    bpf/cgstat.h, user/lib  <  user/core  <  user/sources, user/outputs
        <  the commands, user/report and user/compare  <  the program, user/ itself

Folders on one floor (sources and outputs, report and compare) do not include each other, and
no two folders include each other. No file of bpf/ is over BPF_MAX_LINES lines: the BPF
program is kept in rooms (README). And no figure's column name (figure_columns in
user/core/derived.c) is spelled as a string anywhere else in user/, but where the same word
names something else (SAME_WORD).
Prints one line per include that breaks a rule; exits 1 if any does.

    python3 tests/layout.py [SOURCE_ROOT]"""

import os
import re
import sys

# each folder's floor: a file may include from its own floor's folder and from lower floors
FLOORS = {
    "bpf": 0,
    "lib": 0,
    "core": 1,
    "sources": 2,
    "outputs": 2,
    "": 4,  # user/ itself: the program, which runs each command
    "report": 3,  # the commands that read what the outputs wrote
    "compare": 3,
}
# headers that are not in user/ or bpf/: libraries' and the build's
OUTSIDE = {"cgstat.skel.h", "cgstat_walk.skel.h"}
BPF_MAX_LINES = 800
# (file, word): a figure's name that also names something else there
SAME_WORD = {
    ("user/opts.c", "threads"),  # the --threads option
    ("user/outputs/stream.c", "threads"),  # the JSON line's list of busiest threads
    ("user/outputs/live.c", "threads"),  # what the live view lists
    ("user/sources/perf_events.c", "migrations"),  # perf's alias of cpu-migrations
}
FIGURE_NAME = re.compile(r'\[CG_FIG_\w+\]\s*=\s*\{\s*"(\w+)"')
WORD = re.compile(r'"(\w+)"')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(root, path):
    rel = os.path.relpath(path, root)
    if rel.startswith("bpf" + os.sep):
        return "bpf"
    parts = os.path.relpath(path, os.path.join(root, "user")).split(os.sep)
    return parts[0] if len(parts) > 1 else ""


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    root = os.path.abspath(root)
    headers = {}
    for base in ("user", "bpf"):
        for d, _, files in os.walk(os.path.join(root, base)):
            for f in files:
                if f.endswith(".h"):
                    rel = os.path.relpath(os.path.join(d, f), os.path.join(root, "user"))
                    if base == "bpf":
                        rel = os.path.relpath(os.path.join(d, f), root)
                    headers[rel] = os.path.join(d, f)
    problems = []
    edges = set()
    for d, _, files in os.walk(os.path.join(root, "user")):
        for f in files:
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(d, f)
            here = folder_of(root, path)
            name = os.path.relpath(path, root)
            for inc in INCLUDE.findall(open(path, encoding="utf-8").read()):
                if inc in OUTSIDE:
                    continue
                if inc not in headers:
                    problems.append("%s: \"%s\" names no header of user/ or bpf/ by its "
                                    "folder" % (name, inc))
                    continue
                there = folder_of(root, headers[inc])
                if FLOORS[there] > FLOORS[here] or (
                        FLOORS[there] == FLOORS[here] and there != here):
                    problems.append("%s: includes \"%s\", from %s (floor %d) up or across to "
                                    "%s (floor %d)" % (name, inc, here or "user/",
                                                       FLOORS[here], there or "user/",
                                                       FLOORS[there]))
                if there != here:
                    edges.add((here, there))
    # no cycle between folders (the floors already forbid one; this says so if they change)
    for a, b in sorted(edges):
        if a < b and (b, a) in edges:
            problems.append("folders %s and %s include each other" % (a or "user/", b or "user/"))
    derived = os.path.join(root, "user", "core", "derived.c")
    with open(derived, encoding="utf-8") as src:
        figures = set(FIGURE_NAME.findall(src.read()))
    for d, _, files in os.walk(os.path.join(root, "user")):
        for f in sorted(files):
            path = os.path.join(d, f)
            name = os.path.relpath(path, root)
            if not f.endswith((".c", ".h")) or path == derived:
                continue
            with open(path, encoding="utf-8") as src:
                for i, line in enumerate(src, 1):
                    for word in WORD.findall(line):
                        if word in figures and (name, word) not in SAME_WORD:
                            problems.append("%s:%d: the figure name \"%s\" spelled out of "
                                            "the figure table" % (name, i, word))
    for f in sorted(os.listdir(os.path.join(root, "bpf"))):
        with open(os.path.join(root, "bpf", f), encoding="utf-8") as src:
            lines = sum(1 for _ in src)
        if lines > BPF_MAX_LINES:
            problems.append("bpf/%s: %d lines, over %d" % (f, lines, BPF_MAX_LINES))
    for p in problems:
        print(p)
    print("layout: %d problems" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
