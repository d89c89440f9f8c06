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
counts it against its own cpu.stat), one restarted (the same label); the engine stopped in the
middle (live-restore: the containers go on): rows go on under their names, one line, exit 0.

No engine (DOCKER_HOST names no socket): rows labelled docker:SHORTID, one line why; -p on a
container's process giving the same label."""

import json
import os
import time

import docker_engine as de
import harness as h

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


def docker_named(args):
    """Names from the engine: labels, accuracy, throttling, JSON fields and selection."""
    with de.engine() as e:
        env = named_env(e)
        every = h.Cgstat(args.cgstat, ["-i", "0.5", "-f", "json"], env=env)
        chosen = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "-c", "docker:broker",
                                        "-c", "compose:pulsar/bookie"], env=env)
        ids = {"broker": e.run("broker", GATED % 2),
               "pulsar-bookie-1": e.run("pulsar-bookie-1", GATED % 3, "--cpus", "0.5",
                                        *compose_labels("pulsar", "bookie", 1))}
        cgroups = {name: e.cgroup(name) for name in ids}
        # -c counts a container from its start event, after runc's init ran in its cgroup
        # (60 to 80 ms here): its busy part waits for that, and is compared from there
        for label in ("broker", "bookie-1"):
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
        every.stop()
        chosen.stop()
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
    # selected by name before they existed: the same containers, the same accuracy
    selected = chosen.rows("sched-stats.csv")
    h.check({r["container"] for r in selected} == {"broker", "bookie-1"},
            "-c docker:broker -c compose:pulsar/bookie: rows %s"
            % sorted({r["container"] for r in selected}))
    for label, name in (("broker", "broker"), ("bookie-1", "pulsar-bookie-1")):
        check_followed("-c selected %s" % label, h.sched_totals(selected, label)["onCpuMillis"],
                       usage[name], gated[name])
    waited = [line for line in chosen.stderr_lines if "waiting for it" in line]
    h.check(len(waited) == 2, "-c: said it waited, once a target (%s)" % waited)


def docker_followed(args):
    """Renamed, made again, restarted; the engine stopped in the middle."""
    with de.engine() as e:
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
        e.docker("exec", "-d", "broker-old", "sh", "-c", "timeout 1 yes > /dev/null")
        e.docker("restart", "-t", "0", "bookie")
        e.docker("exec", "-d", "bookie", "sh", "-c", "timeout 1 yes > /dev/null")
        for name in ("broker-old", "bookie"):
            e.docker("exec", "-d", name, "sh", "-c", TICKING)
        h.settle()
        usage = h.cgroup_usage_ms(h.v2_mount() + second_cgroup)
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
    h.check(len(again) == 1 and second in again[0],
            "-c docker:broker: the second broker followed, said once (%s)" % again)
    # the first broker ran nothing while -c counted it: its busy part came after the rename
    check_followed("-c docker:broker (made again)",
                   h.sched_totals(chosen.rows("sched-stats.csv"), "broker")["onCpuMillis"],
                   usage, gated)


def docker_no_engine(args):
    """No socket: short ids, one line; -p gives the same label."""
    with de.engine() as e:
        env = dict(os.environ, DOCKER_HOST="unix:///nonexistent/docker.sock")
        cgstat = h.Cgstat(args.cgstat, ["-q", "-i", "0.5"], env=env)
        ids = {"broker": e.run("broker", BUSY % 2),
               "bookie": e.run("bookie", BUSY % 3, "--cpus", "0.5")}
        watching = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "-p", str(e.pid("broker"))],
                            env=env)
        cgroups = {name: e.cgroup(name) for name in ids}
        for name in ids:
            wait_done(e, name)
        h.settle()
        cgstat.stop()
        watching.stop()
        mount = h.v2_mount()
        usage = {name: h.cgroup_usage_ms(mount + cgroups[name]) for name in ids}
        cgids = {name: os.stat(mount + cgroups[name]).st_ino for name in ids}
    rows = cgstat.rows("sched-stats.csv")
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
    said = [line for line in cgstat.stderr_lines if "short ids" in line]
    h.check(len(said) == 1 and "/nonexistent/docker.sock" in said[0],
            "no engine: one line says why (%s)" % said)
    verdicts = {name: [r["verdict"] for r in rows if r["container"] == "docker:" + cid[:12]]
                for name, cid in ids.items()}
    h.check("throttled" in verdicts["bookie"],
            "bookie (--cpus 0.5): throttled under its label in %d of %d intervals"
            % (verdicts["bookie"].count("throttled"), len(verdicts["bookie"])))
    watched = {r["container"] for r in watching.rows("sched-stats.csv")}
    h.check(watched == {"docker:" + ids["broker"][:12]},
            "-p on broker's process: its rows labelled %s" % sorted(watched))


def main():
    args = h.parse_args()
    docker_named(args)
    docker_followed(args)
    docker_no_engine(args)
    h.done()


if __name__ == "__main__":
    main()
