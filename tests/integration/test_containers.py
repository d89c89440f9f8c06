#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Containers of a real Docker engine (docker_engine.py: Debian's dockerd on a private socket,
the cgroupfs driver, each container its own v2 cgroup /docker/ID) as cgstat names them.

Named: cgstat started before the containers, the engine's socket in DOCKER_HOST. Every row of a
container labelled by its name from the first interval that has it (never by its short id, its
path or its id's fallback); its on-CPU time against the container's own cpu.stat (below it by
what runc's init ran before runc moved it into the cgroup, 2 to 3 ms here: cpu.stat charges that
stretch to the container, cgstat to the cgroup it was switched in in, as for any move); a
container limited to half a CPU (--cpus 0.5) throttled under its name; the JSON rows' and the
summary's runtime, containerId, image and Compose fields against docker inspect's; -c
docker:NAME and -c compose:PROJECT/SERVICE counting the same containers under LABEL and
SERVICE-N, waited for before they exist.

Followed: a container renamed (its rows take the new name), one made again under a name that
was another's (told apart by its short id; -c docker:NAME follows it under the same label and
counts it against its own cpu.stat), one removed and run again under the name (followed too),
one restarted (the same label); the engine stopped in the
middle (live-restore: the containers go on): rows go on under their names, one line, exit 0.

No engine (DOCKER_HOST names no socket), beside the named run over the same containers: rows
labelled docker:SHORTID, one line why; -p on a container's process giving the same label.

A fake engine (fake_engine.py): a hostile name in every output, a stalled event stream, a
reply that is not JSON."""

import argparse
import csv
import json
import os
import re
import subprocess
import tempfile
import time
import urllib.request
import uuid

import docker_engine as de
import fake_engine as fe
import harness as h
import test_live
import test_report

# what each container runs: a busy part, a mark that it ended, then an idle wait
BUSY = "timeout %d yes > /dev/null; : > /tmp/done; sleep 1000"


def wait_done(e, name, timeout=60):
    """Until the container's busy part has ended: its mark, read through its main process's
    root from the host (a docker exec would start processes in the container, each moved into
    its cgroup while running: time cpu.stat charges to the container and cgstat, as for any
    move, to the cgroup the process was switched in in)."""
    mark = "/proc/%d/root/tmp/done" % e.pid(name)
    deadline = time.monotonic() + timeout
    while not os.path.exists(mark):
        if time.monotonic() > deadline:
            raise RuntimeError("%s's busy part did not end in %d s" % (name, timeout))
        time.sleep(0.1)


# a busy part that waits, asleep, until the test opens the way (/tmp/go, a FIFO)
GATED = "mkfifo /tmp/go; read x < /tmp/go; " + BUSY
# what keeps a container's row in every interval: a wake-up every 50 ms
TICKING = "while :; do sleep 0.05; done"


def wait_said(cgstat, *texts, timeout=30):
    """Until a line of cgstat's stderr holds every one of texts."""
    deadline = time.monotonic() + timeout
    while not any(all(t in line for t in texts) for line in cgstat.stderr_lines):
        if time.monotonic() > deadline:
            raise RuntimeError("%s did not say %r: %s" % (cgstat.what, texts,
                                                           "".join(cgstat.stderr_lines)))
        time.sleep(0.05)


def wait_gated(e, name):
    """Until the container's shell waits, asleep, at its gate: what it ran before (runc's init,
    the shell's start) is over."""
    pid = e.pid(name)
    deadline = time.monotonic() + 30
    while True:
        with open("/proc/%d/wchan" % pid) as f:
            wchan = f.read()
        if os.path.exists("/proc/%d/root/tmp/go" % pid) and (
                "fifo" in wchan or "partner" in wchan or "pipe" in wchan):
            return
        if time.monotonic() > deadline:
            raise RuntimeError("%s is not at its gate (%s)" % (name, wchan))
        time.sleep(0.05)


def open_gate(e, name):
    gate = "/proc/%d/root/tmp/go" % e.pid(name)
    with open(gate, "w") as f:
        f.write("go\n")


def check_followed(what, got_ms, usage_ms, gated_ms):
    """On-CPU time of a container -c followed by name, against its cpu.stat: -c counts from the
    moment it followed the container, between the cgroup's making (runc's init runs in it
    before the start event, 60 to 80 ms here) and the test's opening the gate (when usage was
    gated_ms); so within the accuracy limit of the usage since either."""
    low = (usage_ms - gated_ms) * (1 - h.ONCPU)
    high = usage_ms * (1 + h.ONCPU)
    h.check(low <= got_ms <= high,
            "%s on-CPU: cgstat %.2f ms, cpu.stat %.2f since the gate and %.2f in all "
            "(limits %.2f to %.2f)" % (what, got_ms, usage_ms - gated_ms, usage_ms, low, high))


def compose_labels(project, service, replica):
    return ["--label", "com.docker.compose.project=" + project,
            "--label", "com.docker.compose.service=" + service,
            "--label", "com.docker.compose.container-number=%d" % replica]


def named_env(e):
    return dict(os.environ, DOCKER_HOST="unix://" + e.sock)


def check_named_rows(rows, name, cid, cgid):
    """name's rows: some, and none of its container under another label."""
    got = h.sched_totals(rows, name)
    h.check(got["intervals"] > 0, "%s: %d rows under its name" % (name, got["intervals"]))
    other = sorted({r["container"] for r in rows
                    if cid[:12] in r["container"] or r["container"] == "#%d" % cgid})
    h.check(not other, "%s: no row under its short id, path or cgroup id (%s)" % (name, other))
    return got


def check_metrics_names(page, ids, image, usage):
    """/metrics of the all-cgroups run: each container's figures under its name, what the
    engine says of it in cgstat_cgroup_info (docker inspect's id and image), its on-CPU time
    against its cpu.stat."""
    info = {}
    for m in re.finditer(r'^cgstat_cgroup_info\{(.*)\} 1$', page, re.M):
        labels = dict(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', m.group(1)))
        info[labels.get("cgroup")] = labels
    want = {"broker": {"runtime": "docker", "container_id": ids["broker"],
                       "container_name": "broker", "image": image},
            "pulsar-bookie-1": {"runtime": "docker", "container_id": ids["pulsar-bookie-1"],
                                "container_name": "pulsar-bookie-1", "image": image,
                                "compose_project": "pulsar", "compose_service": "bookie",
                                "compose_replica": "1"}}
    for name, labels in want.items():
        got = {k: v for k, v in info.get(name, {}).items() if k != "cgroup"}
        h.check(got == labels, "/metrics: cgstat_cgroup_info{cgroup=\"%s\"} says %s (docker "
                "inspect's id and image: %s)" % (name, got, labels))
        cpu = re.search(r'^cgstat_cpu_seconds_total\{cgroup="%s"\} (\S+)$' % re.escape(name),
                        page, re.M)
        h.check_cpu_stat("/metrics: %s's cgstat_cpu_seconds_total" % name,
                         float(cpu.group(1)) * 1000 if cpu else 0, usage[name], [])


def docker_named(args, e):
    """Names from the engine: labels, accuracy, throttling, JSON fields and selection."""
    env = named_env(e)
    port = h.free_port()
    every = h.Cgstat(args.cgstat, ["-i", "0.5", "-f", "json", "--listen", str(port)], env=env)
    chosen = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "-c", "docker:broker",
                                    "-c", "compose:pulsar/bookie"], env=env)
    no_engine = dict(os.environ, DOCKER_HOST="unix:///nonexistent/docker.sock")
    unnamed = h.Cgstat(args.cgstat, ["-q", "-i", "0.5"], env=no_engine)
    ids = {"broker": e.run("broker", GATED % 2),
           "pulsar-bookie-1": e.run("pulsar-bookie-1", GATED % 3, "--cpus", "0.5",
                                    *compose_labels("pulsar", "bookie", 1)),
           "pulsar-bookie-2": e.run("pulsar-bookie-2", GATED % 1,
                                    *compose_labels("pulsar", "bookie", 2))}
    cgroups = {name: e.cgroup(name) for name in ids}
    watching = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "-p", str(e.pid("broker"))],
                        env=no_engine)
    # -c counts a container from its start event, after runc's init ran in its cgroup
    # (60 to 80 ms here): its busy part waits for that, and is compared from there
    for label in ("broker", "bookie-1", "bookie-2"):
        wait_said(chosen, "cgstat: %s: " % label, "; counting it")
    for name in ids:
        wait_gated(e, name)
    mount = h.v2_mount()
    gated = {name: h.cgroup_usage_ms(mount + cgroups[name]) for name in ids}
    for name in ids:
        open_gate(e, name)
    for name in ids:
        wait_done(e, name)
    h.settle()
    # /metrics once two more intervals are in: every figure of the containers' work
    every.wait_intervals(time.time() * 1000, 2)
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        page = r.read().decode()
    for cgstat in (every, chosen, unnamed, watching):
        cgstat.stop()
    usage = {name: h.cgroup_usage_ms(mount + cgroups[name]) for name in ids}
    cgids = {name: os.stat(mount + cgroups[name]).st_ino for name in ids}
    image = e.docker("inspect", "-f", "{{.Config.Image}}", "broker")
    rows = every.rows("sched-stats.csv")
    for name, cid in ids.items():
        got = check_named_rows(rows, name, cid, cgids[name])
        h.check_cpu_stat("%s on-CPU" % name, got["onCpuMillis"], usage[name], [])
    verdicts = {name: [r["verdict"] for r in rows if r["container"] == name] for name in ids}
    h.check("throttled" in verdicts["pulsar-bookie-1"],
            "pulsar-bookie-1 (--cpus 0.5): throttled under its name in %d of %d intervals"
            % (verdicts["pulsar-bookie-1"].count("throttled"), len(verdicts["pulsar-bookie-1"])))
    h.check("throttled" not in verdicts["broker"],
            "broker (no limit): never throttled (%s)" % sorted(set(verdicts["broker"])))
    # what the engine said of each, in the JSON rows and the summary
    want = {"broker": {"runtime": "docker", "containerId": ids["broker"], "image": image},
            "pulsar-bookie-1": {"runtime": "docker", "containerId": ids["pulsar-bookie-1"],
                                "image": image, "project": "pulsar", "service": "bookie",
                                "replica": 1}}
    objects = [json.loads(line) for line in every.stdout_text().splitlines() if line.strip()]
    for name, fields in want.items():
        seen = [o["containers"][name] for o in objects if name in o.get("containers", {})]
        h.check(seen and all(all(s.get(k) == v for k, v in fields.items()) for s in seen),
                "%s: its %d JSON rows say %s" % (name, len(seen), fields))
        kept = every.summary()["containers"].get(name, {})
        h.check(all(kept.get(k) == v for k, v in fields.items()),
                "%s: the summary says %s (%s)" % (name, fields,
                                                  {k: kept.get(k) for k in fields}))
    check_metrics_names(page, ids, image, usage)
    # selected by name before they existed: the same containers, the same accuracy
    selected = chosen.rows("sched-stats.csv")
    h.check({r["container"] for r in selected} == {"broker", "bookie-1", "bookie-2", "bookie"},
            "-c docker:broker -c compose:pulsar/bookie: rows %s"
            % sorted({r["container"] for r in selected}))
    for label, name in (("broker", "broker"), ("bookie-1", "pulsar-bookie-1"),
                        ("bookie-2", "pulsar-bookie-2")):
        check_followed("-c selected %s" % label, h.sched_totals(selected, label)["onCpuMillis"],
                       usage[name], gated[name])
    # the service's total: both replicas' cpu.stat
    replicas = ("pulsar-bookie-1", "pulsar-bookie-2")
    check_followed("-c compose:pulsar/bookie, the service's total",
                   h.sched_totals(selected, "bookie")["onCpuMillis"],
                   sum(usage[n] for n in replicas), sum(gated[n] for n in replicas))
    waited = [line for line in chosen.stderr_lines if "waiting for it" in line]
    h.check(len(waited) == 2, "-c: said it waited, once a target (%s)" % waited)
    check_unnamed(unnamed, watching, ids, cgroups, usage, cgids)


def docker_followed(args, e):
    """Renamed, made again, restarted; the engine stopped in the middle."""
    env = named_env(e)
    first = e.run("broker", "sleep 1000")
    bookie = e.run("bookie", "sleep 1000")
    every = h.Cgstat(args.cgstat, ["-q", "-i", "0.5"], env=env)
    chosen = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "-c", "docker:broker"], env=env)
    e.docker("rename", "broker", "broker-old")
    second = e.run("broker", GATED % 1)
    second_cgroup = e.cgroup("broker")
    # -c docker:broker counts the second broker from the end of the interval it came in;
    # its busy part waits for that
    wait_said(chosen, "was made again")
    wait_gated(e, "broker")
    gated = h.cgroup_usage_ms(h.v2_mount() + second_cgroup)
    open_gate(e, "broker")
    wait_done(e, "broker")
    usage = h.cgroup_usage_ms(h.v2_mount() + second_cgroup)
    # removed and run again under the name: a third container, followed the same way
    e.docker("rm", "-f", "broker")
    third = e.run("broker", "sleep 1000")
    wait_said(chosen, "was made again", third)
    third_usage = h.cgroup_usage_ms(h.v2_mount() + e.cgroup("broker"))
    e.docker("exec", "-d", "broker-old", "sh", "-c", "timeout 1 yes > /dev/null")
    e.docker("restart", "-t", "0", "bookie")
    e.docker("exec", "-d", "bookie", "sh", "-c", "timeout 1 yes > /dev/null")
    for name in ("broker-old", "bookie"):
        e.docker("exec", "-d", name, "sh", "-c", TICKING)
    h.settle()
    stopped_ms = int(time.time() * 1000)
    e.stop()
    wait_said(every, "does not answer")
    every.wait_intervals(int(time.time() * 1000), 2)
    every.stop()
    chosen.stop()
    rows = every.rows("sched-stats.csv")
    labels = {r["container"] for r in rows}
    h.check("broker-old" in labels and h.sched_totals(rows, "broker-old")["onCpuMillis"] > 500,
            "the first broker, renamed: its busy rows under broker-old (%s)" % sorted(labels))
    made_again = "broker@" + second[:12]
    h.check(made_again in labels,
            "a second broker while the first lives on: labelled %s, never merged (%s)"
            % (made_again, sorted(labels)))
    h.check(not any(first[:12] in label or bookie[:12] in label for label in labels),
            "no row under a short id (%s)" % sorted(labels))
    after = [r for r in rows if int(r["epochMillis"]) > stopped_ms]
    h.check({"bookie", "broker-old"} <= {r["container"] for r in after},
            "the engine stopped: rows go on under the names (%s)"
            % sorted({r["container"] for r in after}))
    h.check(h.sched_totals(rows, "bookie")["onCpuMillis"] > 500,
            "bookie, restarted: its busy rows under the same label")
    said = [line for line in every.stderr_lines if "does not answer" in line]
    h.check(len(said) == 1, "the engine stopped: one line (%s)" % said)
    # -c docker:broker: the first broker until the second came, then the second, one label
    h.check({r["container"] for r in chosen.rows("sched-stats.csv")} == {"broker"},
            "-c docker:broker: one label")
    again = [line for line in chosen.stderr_lines if "was made again" in line]
    h.check(len(again) == 2 and second in again[0] and third in again[1],
            "-c docker:broker: the second broker (a rename's) and the third (rm -f, run) "
            "followed, each said once (%s)" % again)
    # the first broker ran nothing while -c counted it (its busy part came after the rename),
    # the third only its start (runc's init, some of it before -c followed it)
    check_followed("-c docker:broker (made again)",
                   h.sched_totals(chosen.rows("sched-stats.csv"), "broker")["onCpuMillis"],
                   usage + third_usage, gated + third_usage)


def check_unnamed(unnamed, watching, ids, cgroups, usage, cgids):
    """No engine (DOCKER_HOST naming no socket) for the same containers: short ids, one line
    why, the throttled one so under its short id; -p on a container's process, the same
    label."""
    rows = unnamed.rows("sched-stats.csv")
    for name, cid in ids.items():
        label = "docker:" + cid[:12]
        h.check(cgroups[name] == "/docker/" + cid,
                "%s: its cgroup is /docker/ID (%s)" % (name, cgroups[name]))
        got = h.sched_totals(rows, label)
        h.check(got["intervals"] > 0, "%s: %d rows labelled %s" % (name, got["intervals"], label))
        h.check_cpu_stat("%s (%s) on-CPU" % (name, label), got["onCpuMillis"], usage[name], [])
        other = sorted({r["container"] for r in rows
                        if cid in r["container"] or r["container"] == "#%d" % cgids[name]}
                       - {label})
        h.check(not other, "%s: no row under its path or its id (%s)" % (name, other))
    said = [line for line in unnamed.stderr_lines if "short ids" in line]
    h.check(len(said) == 1 and "/nonexistent/docker.sock" in said[0],
            "no engine: one line says why (%s)" % said)
    throttled = [r["verdict"] for r in rows
                 if r["container"] == "docker:" + ids["pulsar-bookie-1"][:12]]
    h.check("throttled" in throttled,
            "no engine: pulsar-bookie-1 (--cpus 0.5) throttled under its short id in %d of %d "
            "intervals" % (throttled.count("throttled"), len(throttled)))
    watched = {r["container"] for r in watching.rows("sched-stats.csv")}
    h.check(watched == {"docker:" + ids["broker"][:12]},
            "no engine: -p on broker's process: its rows labelled %s" % sorted(watched))


# what no engine would name a container, and every output must keep as text: a formula
# prefix (CSV), quotes, a newline (CSV, JSON, /metrics, the terminal), markup that would open an
# element of its own (report.html)
HOSTILE = '=1+1 "q" </script><h1 id=owned>x\nx'


def hostile_engine(args, tmp):
    """A fake engine: a hostile name in every output; a container it lists only after its
    event stream stalled, named all the same (the drain's unknown id has it listed again); a
    reply that is not JSON: short ids and one line."""
    named, late = (uuid.uuid4().hex + uuid.uuid4().hex for _ in range(2))
    port = h.free_port()
    with fe.engine() as e, h.scratch_cgroup("fake") as top:
        paths = {cid: os.path.join(top, "docker", cid) for cid in (named, late)}
        for path in paths.values():
            os.makedirs(path)
        e.container(named, HOSTILE, {"com.docker.compose.service": HOSTILE})
        env = dict(os.environ, DOCKER_HOST="unix://" + e.sock)
        cgstat = h.Cgstat(args.cgstat, ["-i", "0.5", "-f", "json", "--listen", str(port)],
                          env=env)
        wrapper = os.path.join(tmp, "cgstat-fake-engine")
        with open(wrapper, "w") as f:
            f.write('#!/bin/sh\nDOCKER_HOST=unix://%s exec %s "$@"\n' % (e.sock, args.cgstat))
        os.chmod(wrapper, 0o755)
        work = os.path.join(tmp, "live")
        os.makedirs(work)
        screen = test_live.Screen(argparse.Namespace(cgstat=wrapper), work, ["-i", "0.5"])
        # listed only now: the stream said nothing of it, and stalls
        e.container(late, "late-name")
        loads = [h.Workload(args.workload, path, "steady", 1, 2) for path in paths.values()]
        drawn = screen.frame(lambda lines: any('=1+1 "q"' in line for line in lines), 20)
        for load in loads:
            load.wait()
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
            metrics = r.read().decode()
        h.settle()
        cgstat.stop()
        screen.key("q")
        screen.exit_status()
        screen.close()
        e.list_body = b"<html>not json</html>"
        refused = h.Cgstat(args.cgstat, ["-q", "-i", "0.5"], env=env)
        load = h.Workload(args.workload, paths[named], "steady", 1, 1)
        load.wait()
        h.settle()
        refused.stop()

    # CSV: the exact bytes, quoted, the formula prefix neutralized as for any label
    with open(os.path.join(cgstat.out_dir, "sched-stats.csv"), newline="") as f:
        labels = {r["container"] for r in csv.DictReader(f)}
    h.check("'" + HOSTILE in labels, "hostile name: CSV has it whole, after a quote "
            "(%s)" % sorted(ascii(label[:30]) for label in labels))
    lines = h.read_json_lines(cgstat.stdout_path)
    rows = [line["containers"][HOSTILE] for line in lines if HOSTILE in line["containers"]]
    h.check(rows and all(r.get("service") == HOSTILE and r.get("containerId") == named
                         for r in rows),
            "hostile name: %d JSON rows under it, its service and id as given" % len(rows))
    h.check(HOSTILE in cgstat.summary()["containers"], "hostile name: the summary's key")
    checked = subprocess.run(["promtool", "check", "metrics"], input=metrics.encode(),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    escaped = HOSTILE.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    info = [line for line in metrics.splitlines()
            if line.startswith('cgstat_cgroup_info{cgroup="%s"' % escaped)]
    h.check(checked.returncode == 0 and 'cgstat_cpu_seconds_total{cgroup="%s"}' % escaped
            in metrics and len(info) == 1 and 'container_name="%s"' % escaped in info[0]
            and 'compose_service="%s"' % escaped in info[0]
            and 'container_id="%s"' % named in info[0],
            "hostile name: /metrics escapes it in the cgroup label and in cgstat_cgroup_info's "
            "container_name and compose_service (%s), promtool exit %d %s"
            % (info[:1], checked.returncode, checked.stdout.decode()[-200:]))
    # its newline escaped (\x0a, where the column is wide enough to show it), never a line of
    # its own
    h.check(any('=1+1 "q"' in line for line in drawn) and
            not any(line.startswith("x") for line in drawn),
            "hostile name: the live view shows it on one line (%s)"
            % [line for line in drawn if "=1+1" in line])
    h.run_cgstat([args.cgstat, "report", cgstat.out_dir])
    html = os.path.join(cgstat.out_dir, "report.html")
    dom = test_report.chromium(html, "--dump-dom")
    h.check('id="owned"' not in dom and any(HOSTILE in c["labels"] for c in
                                            test_report.embedded(html)["charts"]),
            "hostile name: report.html has it as data, no element of its own")
    # the container listed after the stream stalled: named within a second
    sched = cgstat.rows("sched-stats.csv")
    early = h.sched_totals(sched, "docker:" + late[:12])["intervals"]
    h.check(h.sched_totals(sched, "late-name")["intervals"] > 0 and early <= 2,
            "a stalled stream: the container listed later named (%d rows), %d rows by short id"
            % (h.sched_totals(sched, "late-name")["intervals"], early))
    said = [line for line in refused.stderr_lines if "JSON" in line]
    h.check(len(said) == 1 and "docker:" + named[:12] in
            {r["container"] for r in refused.rows("sched-stats.csv")},
            "a reply that is not JSON: short ids, one line (%s)" % said)


def main():
    args = h.parse_args()
    # one engine for both: the first part's containers removed; the last stops it
    with de.engine() as e:
        docker_named(args, e)
        e.clear()
        docker_followed(args, e)
    hostile_engine(args, h.scratch_path(tempfile.mkdtemp(prefix="cgstat-containers-")))
    h.done()


if __name__ == "__main__":
    main()
