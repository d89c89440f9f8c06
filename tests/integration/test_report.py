# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""`cgstat report DIR`, checked as a person would look at it: a real run's folder (a workload
under `cgstat -- CMD`, beside the whole tree with -c) is reported, headless Chromium loads
report.html with the network off, takes a screenshot, and dumps the DOM the page's scripts
left: no script error, every chart drawn by dygraphs (its canvases) with data, one line per
container. The charts' own data, embedded in the page, is checked against the kernel: the
workload's cores times each interval add up to its cgroup's cpu.stat, read by the command as
its last act. report.md's CPUs of the workload against the same, over the run's duration.
Then a folder with a file missing and one cut short (a partial report, said on stderr), a label
that tries to close the page's script, and an empty folder (exit 1).

The wake graph (issue 41): a --threads run of the workload's pipeline across two containers is
drawn by Graphviz into the page: its edges' wakeups a second against the workload's own counts
over the run, the stage (the pipeline's serial thread by construction) drawn as the serial stage
and the reddest, no other; without dot, one line and the page without it; hostile names in the
summary's graph drawn as text."""

import contextlib
import hashlib
import html as html_text
import json
import os
import re
import shutil
import subprocess
import tempfile

import harness as h

# Debian's libjs-dygraphs, which report.html embeds
DYGRAPHS = "/usr/share/javascript/dygraphs"
# report.md prints CPUs to 2 decimals: half a hundredth of a core over the run
MD_ROUNDING_CORES = 0.005


def chromium(html, *args):
    """Headless Chromium on a local file, scripts run to their end (virtual time), no
    network: its stdout."""
    p = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                        "--virtual-time-budget=10000", "--proxy-server=127.0.0.1:9",
                        *args, "file://" + html], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, timeout=120)
    return p.stdout.decode(errors="replace")


def look(html, what):
    """Screenshot and DOM of the page; the DOM's charts as (lines, points, canvases)."""
    shot = html + ".png"
    chromium(html, "--window-size=1200,3000", "--screenshot=" + shot)
    with open(shot, "rb") as f:
        png = f.read()
    h.check(png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20000,
            "%s: Chromium took a screenshot (%d bytes)" % (what, len(png)))
    dom = chromium(html, "--dump-dom")
    body = re.search(r"<body([^>]*)>", dom)
    attrs = dict(re.findall(r'data-(\w+)="([^"]*)"', body.group(1))) if body else {}
    errors = re.search(r'<pre id="errors">(.*?)</pre>', dom, re.S)
    charts = []
    for m in re.finditer(r'<div class="chart" data-points="(\d+)" data-lines="(\d+)"(.*?)'
                         r'(?=<h2>|<div class="chart"|</div>\s*<script)', dom, re.S):
        charts.append((int(m.group(2)), int(m.group(1)), m.group(3).count("<canvas")))
    return attrs, (errors.group(1).strip() if errors else "no error element"), charts


def embedded(html):
    with open(html) as f:
        text = f.read()
    m = re.search(r"var REPORT = (\{.*?\});\n", text, re.S)
    return json.loads(m.group(1))


def real_run(args, tmp):
    """A workload under cgstat -- beside an empty watched cgroup: the run's folder, and the
    workload's cpu.stat usage in ms."""
    def record(folder):
        with h.scratch_cgroup("report-beside") as beside:
            h.run_cgstat([args.cgstat, "-q", "-i", "0.5", "-o", os.path.join(folder, "run"),
                          "-c", "beside=" + beside, "-n", "w", "--", "sh", "-c",
                          "%s steady 3 2 >/dev/null; %s > %s"
                          % (args.workload, h.CPU_STAT_OF_SELF,
                             os.path.join(folder, "usage"))],
                         env=h.command_env(), stdout=subprocess.DEVNULL)

    folder = h.recorded_run(args, tmp, "report-whole", record)
    return (os.path.join(folder, "run"),
            h.cpu_stat_usage_ms(os.path.join(folder, "usage")))


def check_report(args, out, usage_ms):
    p = h.run_cgstat([args.cgstat, "report", out])
    h.check(not p.stderr and not p.stdout, "report of a whole run: says nothing: %r %r"
            % (p.stdout, p.stderr))
    html = os.path.join(out, "report.html")
    attrs, errors, charts = look(html, "whole run")
    nr = int(attrs.get("charts", -1))
    empty = [i for i, (lines, points, canvases) in enumerate(charts)
             if points == 0 or canvases == 0]
    h.check(nr == 10 and attrs.get("drawn") == "10" and len(charts) == 10 and not empty
            and "errors" not in attrs and not errors,
            "whole run: %s charts drawn of %s, each with data and a canvas (without: %s), "
            "script errors %r" % (attrs.get("drawn"), nr, empty, errors))
    data = embedded(html)
    cores = [c for c in data["charts"] if c["title"] == "CPU cores"][0]
    h.check(cores["labels"] == ["time", "beside", "w"],
            "CPU cores: one line per container: %s" % cores["labels"][1:])

    # the workload's cores times each row's interval, against its cgroup's cpu.stat
    with open(os.path.join(out, "container-summary.json")) as f:
        summary = json.load(f)
    start = summary["measurement"]["startEpochMillis"]
    column = cores["labels"].index("w")
    got, previous = 0.0, start
    for row in cores["rows"]:
        if row[column] is not None:
            got += row[column] * (row[0] - previous)
        previous = row[0]
    rows = len(cores["rows"])
    # cpuCores has 3 decimals: half a thousandth of each row's interval
    h.check_time("report.html: w's cores * interval vs cpu.stat", got, usage_ms, h.ONCPU,
                 tail=3.0 + 0.25 * rows, why="the command's work after its reading and the "
                 "rounding", below=0.25 * rows, below_why="the rounding")

    with open(os.path.join(out, "report.md")) as f:
        md = f.read()
    row = re.search(r"^\| w \| ([0-9.]+) \|", md, re.M)
    seconds = summary["measurement"]["durationSeconds"]
    h.check(row is not None and "## Scheduling (cgstat)" in md and "**Host:**" in md,
            "report.md: the host line, the tables, and w's row")
    # the verdicts: the empty cgroup beside is idle in each of its intervals
    beside_rows = sum(1 for r in h.read_csv(os.path.join(out, "sched-stats.csv"))
                      if r["container"] == "beside")
    section = md.partition("## Verdicts (intervals with each)")[2]
    verdicts = re.search(r"^\| beside \| (\S+) \|((?: \S+ \|)+)$", section, re.M)
    counts = verdicts.group(2).split("|")[:-1] if verdicts else []
    h.check(verdicts is not None
            and verdicts.group(1) == "idle" and beside_rows > 0
            and [c.strip() for c in counts] == ["0"] * 5 + [str(beside_rows), "0"],
            "report.md: beside, an empty cgroup, is idle in each of its %d intervals: %s"
            % (beside_rows, verdicts.group(0) if verdicts else None))
    if row:
        h.check_time("report.md: w's CPUs * run vs cpu.stat", float(row.group(1)) * seconds *
                     1e3, usage_ms, h.ONCPU, tail=3.0 + MD_ROUNDING_CORES * seconds * 1e3,
                     why="the work after the reading and the rounding",
                     below=MD_ROUNDING_CORES * seconds * 1e3, below_why="the rounding")


def partial(args, out, tmp):
    """sched-stats.csv gone, container-stats.csv cut inside a row: the rest is reported."""
    cut = os.path.join(tmp, "cut")
    shutil.copytree(out, cut)
    os.unlink(os.path.join(cut, "sched-stats.csv"))
    for name in ("report.md", "report.html", "report.html.png"):
        os.unlink(os.path.join(cut, name))
    path = os.path.join(cut, "container-stats.csv")
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text[:-7])
    p = h.run_cgstat([args.cgstat, "report", cut])
    err = p.stderr.decode()
    h.check(err.count("\n") == 2 and "sched-stats.csv" in err
            and "cut short" in err,
            "a file missing and one cut short: one line each: %r" % err)
    with open(os.path.join(cut, "report.md")) as f:
        md = f.read()
    h.check("Not in this report" in md and "sched-stats.csv" in md,
            "report.md says what it lacks")
    attrs, errors, charts = look(os.path.join(cut, "report.html"), "partial")
    h.check(attrs.get("charts") == "5" and attrs.get("drawn") == "5" and not errors
            and all(points > 0 and canvases > 0 for _, points, canvases in charts),
            "partial: the 5 charts of the files left drawn with data (%s), no script error %r"
            % (charts, errors))


def hostile_label(args, tmp):
    """A label that would close the page's script and open an element of its own."""
    label = "</script><h1 id=owned>x"
    out = os.path.join(h.recorded_run(args, tmp, "report-hostile", lambda folder: h.run_cgstat(
        [args.cgstat, "-q", "-i", "0.2", "-o", os.path.join(folder, "run"), "-n", label,
         "--", "sleep", "0.5"], stdout=subprocess.DEVNULL)), "run")
    h.run_cgstat([args.cgstat, "report", out])
    html = os.path.join(out, "report.html")
    attrs, errors, charts = look(html, "hostile label")
    dom = chromium(html, "--dump-dom")
    h.check(not errors and attrs.get("drawn") == attrs.get("charts") and 'id="owned"' not in dom
            and any(label in c["labels"] for c in embedded(html)["charts"]),
            "a label holding </script>: the page has it as data, no element of its own, "
            "no script error %r" % errors)


def refusals(args, out, tmp):
    """A wrong command line (exit 2, the usage), dygraphs missing (exit 1, one line naming the
    file and the package; report.md still written), dygraphs from CGSTAT_DYGRAPHS_DIR (the page
    holds that copy), and a report that cannot be written (exit 1, one line naming it; the other
    still written)."""
    for argv in ([], [out, out], ["-h"], ["--bogus", out]):
        p = h.run_cgstat([args.cgstat, "report"] + argv, 2)
        h.check(p.stderr == b"Usage: cgstat report DIR\n" and not p.stdout,
                "report %s: the usage line: %r" % (argv, p.stderr))

    def fresh(name):
        folder = os.path.join(tmp, name)
        shutil.copytree(out, folder)
        for report in ("report.md", "report.html", "report.html.png"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(folder, report))
        return folder

    folder = fresh("no-dygraphs")
    missing = os.path.join(tmp, "no-such-dygraphs")
    p = h.run_cgstat([args.cgstat, "report", folder], 1,
                     env=dict(os.environ, CGSTAT_DYGRAPHS_DIR=missing))
    err = p.stderr.decode(errors="replace")
    h.check(err.count("\n") == 1 and missing + "/dygraph.min.js" in err
            and "libjs-dygraphs" in err and os.path.exists(os.path.join(folder, "report.md"))
            and not os.path.exists(os.path.join(folder, "report.html")),
            "dygraphs missing: one line naming the file and the package, report.md written, no "
            "report.html: %r" % err)

    folder = fresh("own-dygraphs")
    own = os.path.join(tmp, "own-dygraphs-lib")
    os.mkdir(own)
    marker = "/* cgstat-test: this copy of dygraphs */"
    for name in ("dygraph.min.js", "dygraph.min.css"):
        with open(os.path.join(DYGRAPHS, name)) as f:
            text = f.read()
        with open(os.path.join(own, name), "w") as f:
            f.write(marker + "\n" + text)
    h.run_cgstat([args.cgstat, "report", folder], 0, env=dict(os.environ, CGSTAT_DYGRAPHS_DIR=own))
    with open(os.path.join(folder, "report.html")) as f:
        html = f.read()
    h.check(html.count(marker) == 2, "CGSTAT_DYGRAPHS_DIR: the page holds that folder's script "
            "and style (%d of 2 marks)" % html.count(marker))

    folder = fresh("unwritable")
    os.mkdir(os.path.join(folder, "report.md"))
    p = h.run_cgstat([args.cgstat, "report", folder], 1)
    err = p.stderr.decode(errors="replace")
    h.check(err.count("\n") == 1 and os.path.join(folder, "report.md") in err
            and os.path.exists(os.path.join(folder, "report.html")),
            "report.md cannot be written (a folder there): one line naming it, report.html "
            "still written: %r" % err)


def file_sum(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def links(args, out, tmp):
    """A folder whose user planted links: report.md and report.html linking to files outside
    (which report would write), sched-stats.csv to a file only root may read (which report
    would copy into the page). Run as root and as under sudo (SUDO_UID: report becomes that
    user): one line for each link, exit 1, nothing outside changed, the secret in neither
    report."""
    os.chmod(tmp, 0o755)  # for the sudo user, nobody, to reach the folders in it
    secret = os.path.join(tmp, "secret")
    with open(secret, "w") as f:
        f.write("epochMillis,container,cpuCores\n1,cgstat-test-secret-marker,1\n")
    os.chmod(secret, 0o600)
    for env, who in ((None, "root"), (dict(os.environ, SUDO_UID="65534", SUDO_GID="65534"),
                                      "under sudo")):
        folder = os.path.join(tmp, "links-" + who.replace(" ", "-"))
        shutil.copytree(out, folder)
        os.chown(folder, 65534, 65534)
        victims = {}
        for name in ("report.md", "report.html"):
            victim = os.path.join(tmp, "victim-%s-%s" % (who.replace(" ", "-"), name))
            with open(victim, "w") as f:
                f.write("not cgstat's\n")
            victims[victim] = file_sum(victim)
            os.unlink(os.path.join(folder, name))
            os.symlink(victim, os.path.join(folder, name))
        os.unlink(os.path.join(folder, "sched-stats.csv"))
        os.symlink(secret, os.path.join(folder, "sched-stats.csv"))
        p = h.run_cgstat([args.cgstat, "report", folder], 1, env=env)
        err = p.stderr.decode(errors="replace")
        h.check(err.count("symbolic link") == 3 and err.count("\n") == 3,
                "%s: report.md, report.html and sched-stats.csv links: one line each: %r"
                % (who, err))
        h.check(all(file_sum(v) == want for v, want in victims.items()),
                "%s: the files the links point to unchanged" % who)
        os.unlink(os.path.join(folder, "report.md"))
        os.unlink(os.path.join(folder, "report.html"))
        h.run_cgstat([args.cgstat, "report", folder], 0, env=env)
        written = [os.path.join(folder, n) for n in ("report.md", "report.html")]
        with open(written[0]) as f, open(written[1]) as g:
            text = f.read() + g.read()
        owners = [os.stat(w).st_uid for w in written]
        h.check("secret-marker" not in text and owners == [65534 if env else 0] * 2,
                "%s: the reports written without the linked file's content, owned by %s (uids "
                "%s)" % (who, "the sudo user" if env else "root", owners))


def hostile_summary(args, out, tmp):
    """A summary a user wrote: keys and labels with Markdown, HTML and control characters. In
    report.md each is text: no link, image, heading, HTML or escape sequence of its own."""
    folder = os.path.join(tmp, "hostile-summary")
    shutil.copytree(out, folder)
    path = os.path.join(folder, "container-summary.json")
    with open(path) as f:
        summary = json.load(f)
    key = "cpus](http://evil.example/)\n# owned <img src=x onerror=alert(1)> \x1b[31m"
    summary["host"] = {key: 2}
    label = "![x](http://evil.example/a.png)\r\n<b>bold</b>\x1b]0;title\x07"
    summary["containers"][label] = next(iter(summary["containers"].values()))
    with open(path, "w") as f:
        json.dump(summary, f)
    h.run_cgstat([args.cgstat, "report", folder])
    with open(os.path.join(folder, "report.md")) as f:
        md = f.read()
    # each markup character must come escaped (after a backslash)
    bad = [m for m in (r"(?<!\\)\]\(http", r"\n# owned", r"(?<!\\)<img", r"(?<!\\)<b>",
                       "\x1b", "\x07", "\r")
           if re.search(m, md)]
    h.check(not bad and "cpus\\](http://evil.example/)" in md,
            "report.md: a hostile host key and label as text (unescaped: %s)" % bad)


def svg_parts(page):
    """The drawing in report.html: ({node: [texts]}, {(from, to): [texts]}, {node: fill}, and
    the div's data-edges and data-left."""
    div = re.search(r'<div id="wakegraph" data-edges="(\d+)" data-left="(\d+)">(.*?)</div>',
                    page, re.S)
    if not div:
        return {}, {}, {}, None, None
    svg = div.group(3)
    texts = lambda part: [html_text.unescape(t) for t in re.findall(r"<text[^>]*>(.*?)</text>",
                                                                    part, re.S)]
    nodes, fills, edges = {}, {}, {}
    for m in re.finditer(r'<g id="node\d+" class="node">\s*<title>(n\d+)</title>(.*?)</g>',
                         svg, re.S):
        nodes[m.group(1)] = texts(m.group(2))
        fill = re.search(r'fill="#([0-9a-f]{6})"', m.group(2))
        fills[m.group(1)] = fill.group(1) if fill else None
    for m in re.finditer(r'<g id="edge\d+" class="edge">\s*<title>(n\d+)&#45;&gt;(n\d+)'
                         r'</title>(.*?)</g>', svg, re.S):
        edges[(m.group(1), m.group(2))] = texts(m.group(3))
    return nodes, edges, fills, int(div.group(1)), int(div.group(2))


def wake_graph(args, tmp):
    """The pipeline (producers in client, the stage and writers in broker) under --threads;
    the workload's own counts of what each role woke kept beside the run."""
    def record(folder):
        with h.scratch_cgroup("report-client") as a, h.scratch_cgroup("report-broker") as b:
            cgstat = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "--threads", "--no-perf",
                                            "-c", "client=" + a, "-c", "broker=" + b],
                              out_dir=os.path.join(folder, "run"))
            report = h.run_workload(args.workload, a, "pipeline", 3, 2, 2, b)
            h.settle()
            cgstat.stop()
        with open(os.path.join(folder, "workload.json"), "w") as f:
            json.dump(report, f)

    folder = h.recorded_run(args, tmp, "report-wakes", record)
    out = os.path.join(folder, "run")
    with open(os.path.join(folder, "workload.json")) as f:
        woke = json.load(f)["woke"]
    p = h.run_cgstat([args.cgstat, "report", out])
    h.check(not p.stderr, "wake graph run: report says nothing: %r" % p.stderr)
    page_path = os.path.join(out, "report.html")
    with open(page_path) as f:
        page = f.read()
    summary = h.summary_of(out)
    seconds = summary["measurement"]["durationSeconds"]
    nodes, edges, fills, drawn, left = svg_parts(page)
    h.check(drawn == len(summary["wakeGraph"]["edges"]) == len(edges) and left == 0,
            "wake graph: %s edges drawn (%d in the SVG), %s left out, of the summary's %d"
            % (drawn, len(edges), left, len(summary["wakeGraph"]["edges"])))
    by_pool = {texts[0]: n for n, texts in nodes.items() if texts}
    for key, waker, wakee in (("stage>prod-N", "stage", "prod-N"),
                              ("stage>wr-N", "stage", "wr-N")):
        label = edges.get((by_pool.get(waker), by_pool.get(wakee)), ["?"])[0]
        rate = float(label[:-2]) if re.fullmatch(r"[0-9.]+/s", label) else -1
        want = woke[key] / seconds
        # drawn to a whole wakeup a second; the summary's seconds to 3 decimals
        h.check(abs(rate - want) <= 0.01 * want + 0.5 + want * 0.0005 / seconds,
                "wake graph: %s -> %s drawn %r, the workload's %d over %.3f s = %.1f/s "
                "(limit 1 %%)" % (waker, wakee, label, woke[key], seconds, want))
    serial = [texts[0] for texts in nodes.values()
              if any(t.startswith("serial stage: ") for t in texts)]
    stage_label = [t for t in nodes.get(by_pool.get("stage"), []) if t.startswith("serial")]
    h.check(serial == ["stage"] and stage_label == ["serial stage: stage (%d)" % next(
        s["tid"] for s in summary["containers"]["broker"]["serialStages"])],
            "wake graph: the stage alone drawn as the serial stage, with its thread: %s %s"
            % (serial, stage_label))
    green = {texts[0]: int(fills[n][2:4], 16) for n, texts in nodes.items()
             if texts and fills.get(n) and texts[0] in ("stage", "prod-N", "wr-N")}
    h.check(len(green) == 3 and green["stage"] < 0x40 and min(green["prod-N"],
                                                                green["wr-N"]) > 0xd0,
            "wake graph: the stage (a core's thread) red, the 2 %% threads' pools near white "
            "(green of their fills: %s)" % green)
    attrs, errors, charts = look(page_path, "wake graph")
    h.check(not errors and attrs.get("drawn") == attrs.get("charts"),
            "wake graph: the page's charts drawn beside it, no script error %r" % errors)

    # without Graphviz: one line, the page without the drawing
    bare = os.path.join(tmp, "report-wakes-no-dot")
    shutil.copytree(out, bare)
    os.unlink(os.path.join(bare, "report.html"))
    missing = os.path.join(tmp, "no-such-dot")
    p = h.run_cgstat([args.cgstat, "report", bare], 1, env=dict(os.environ, CGSTAT_DOT=missing))
    err = p.stderr.decode(errors="replace")
    with open(os.path.join(bare, "report.html")) as f:
        page = f.read()
    h.check(err.count("\n") == 1 and missing in err and "graphviz" in err
            and 'id="wakegraph"' not in page and 'id="charts"' in page,
            "no dot: one line naming it and the package, report.html without the drawing: %r"
            % err)

    # names from the summary, hostile to dot's language and to the page
    hostile = os.path.join(tmp, "report-wakes-hostile")
    shutil.copytree(out, hostile)
    os.unlink(os.path.join(hostile, "report.html"))
    path = os.path.join(hostile, "container-summary.json")
    with open(path) as f:
        summary = json.load(f)
    name = 'b"r\\o\\"ker\n</svg><script>document.body.dataset.owned=1</script>\\N'
    for part in summary["wakeGraph"]["nodes"] + summary["wakeGraph"]["edges"]:
        for key in ("container", "wakerContainer", "pool", "wakerPool"):
            if part.get(key) in ("broker", "stage"):
                part[key] = name
    with open(path, "w") as f:
        json.dump(summary, f)
    p = h.run_cgstat([args.cgstat, "report", hostile])
    page_path = os.path.join(hostile, "report.html")
    with open(page_path) as f:
        nodes, edges, _, drawn, _ = svg_parts(f.read())
    dom = chromium(page_path, "--dump-dom")
    shown = name.replace("\n", " ")
    h.check(not p.stderr and drawn == len(edges) and any(shown in t for t in sum(
        nodes.values(), [])) and "data-owned" not in dom,
            "hostile names: drawn as text (%s edges), no script of their own: %r"
            % (drawn, p.stderr))


def main():
    args = h.parse_args()
    tmp = tempfile.mkdtemp(prefix="cgstat-report-")
    h.scratch_path(tmp)
    out, usage_ms = real_run(args, tmp)
    check_report(args, out, usage_ms)
    refusals(args, out, tmp)
    partial(args, out, tmp)
    hostile_label(args, tmp)
    links(args, out, tmp)
    hostile_summary(args, out, tmp)
    wake_graph(args, tmp)
    empty = os.path.join(tmp, "empty")
    os.mkdir(empty)
    p = h.run_cgstat([args.cgstat, "report", empty], 1)
    h.check(b"nothing in the folder" in p.stderr, "an empty folder: %r" % p.stderr[-200:])
    h.done()


if __name__ == "__main__":
    main()
