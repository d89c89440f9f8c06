# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The container image (Dockerfile), built here with no registry and run as README.md says.

- Built from this tree with `docker build --network host` on an engine of the test's own, its
  base image (debian:bookworm-slim) made from the machine's Debian mirror (debian_base.py,
  cached in /var/cache/cgstat-tests/): it builds, and the runtime image is at most 120 MB, runs
  as nobody, and holds cgstat, its man page, the dashboard and dygraphs.
- README's `docker run` line, taken from README.md and run by a user who is not root (uid
  4242, in the engine socket's group, as a user in the docker group runs it): the one for an
  engine that knows no CAP_BPF where this one does not (Debian 12's Docker 20.10), the same
  but for the capabilities as the other (checked); two containers named broker and bookie-1 started after it, each busy for a known
  time; their rows are named, and their on-CPU time agrees with each one's own cpu.stat; the
  files land in the bind mount, owned by that user; /metrics answers through the published
  port; `docker stop` ends it within the stop timeout, exit 0, the summary written.
- With one capability fewer than documented: one line naming what is missing, exit 1, no
  output folder made, no program of cgstat's left loaded.
- Without --pid=host: the line that says cgstat is not in the host's PID namespace. With it,
  -p takes a host pid; --privileged, the simple fallback, runs as well.
- The DaemonSet of contrib/kubernetes/: its pod spec translated field by field into a `docker
  run` of the same image (k8s_pod.py, which refuses a field it cannot translate), beside a
  named container: the same figures, on /metrics through the container's port.

Prints the image's size and the time from `docker run` to the first interval."""

import contextlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request

import debian_base
import docker_engine
import harness as h
import k8s_pod
from test_containers import BUSY, wait_done

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMAGE = "cgstat:test"
MAX_IMAGE_BYTES = 120 * 1000 * 1000
# the user who runs README's line: not root, in the engine socket's group
USER_ID = 4242
STOP_TIMEOUT_S = 10


def build(e):
    """The image from this tree; True when it built."""
    start = time.monotonic()
    out = subprocess.run([docker_engine.DOCKER_CLI, "-H", "unix://" + e.sock, "build",
                          "--network", "host", "-t", IMAGE, REPO],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=1800)
    seconds = time.monotonic() - start
    h.check(out.returncode == 0, "docker build from the tree, offline but for Debian's mirror: "
            "exit %d in %.0f s%s" % (out.returncode, seconds, "" if out.returncode == 0 else
                                     "\n" + out.stdout.decode(errors="replace")[-3000:]))
    if out.returncode:
        return False
    size = int(e.docker("image", "inspect", "-f", "{{.Size}}", IMAGE))
    print("IMAGE size %.1f MB, built in %.0f s" % (size / 1e6, seconds), flush=True)
    h.check(size <= MAX_IMAGE_BYTES, "the runtime image is %.1f MB (at most %d)"
            % (size / 1e6, MAX_IMAGE_BYTES // 1000000))
    user = e.docker("image", "inspect", "-f", "{{.Config.User}}", IMAGE)
    h.check(user == "65534:65534", "the image runs as nobody by default (%r)" % user)
    files = ["/usr/bin/cgstat", "/usr/share/man/man1/cgstat.1",
             "/usr/share/cgstat/grafana/cgstat.json",
             "/usr/share/javascript/dygraphs/dygraph.min.js"]
    out = e.docker("run", "--rm", "--entrypoint", "/bin/sh", IMAGE, "-c",
                   "for f in %s; do test -f $f || echo missing $f; done; /usr/bin/cgstat -V"
                   % " ".join(files), check=False)
    h.check("missing" not in out and "cgstat" in out,
            "the image holds cgstat, its man page, the dashboard and dygraphs: %r" % out)
    return True


def engine_caps(e):
    """The capabilities of README's line this engine takes: BPF and PERFMON, or SYS_ADMIN where
    it knows no CAP_BPF (README's second line)."""
    out = subprocess.run([docker_engine.DOCKER_CLI, "-H", "unix://" + e.sock, "run", "--rm",
                          "--cap-add", "BPF", "--entrypoint", "/bin/true", IMAGE],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if out.returncode == 0:
        return "--cap-add BPF --cap-add PERFMON"
    err = out.stderr.decode(errors="replace")
    h.check("unknown capability" in err and "CAP_BPF" in err,
            "this engine refuses CAP_BPF by name, as README says of Docker 20.10: %r"
            % err.strip())
    print("ENGINE knows no CAP_BPF: README's line for it, --cap-add SYS_ADMIN", flush=True)
    return "--cap-add SYS_ADMIN"


def readme_line(caps):
    """README's `docker run` line (In a container) for an engine that takes caps: one for
    those that know CAP_BPF, one for those that do not, the same but for the capabilities."""
    with open(os.path.join(REPO, "README.md")) as f:
        text = f.read()
    section = text[text.index("### In a container"):]
    section = section[:section.index("\n### ")]
    lines = [line for line in section.splitlines() if " docker run " in line]
    h.check(len(lines) == 2 and lines[0].replace("--cap-add BPF --cap-add PERFMON",
                                                 "--cap-add SYS_ADMIN") == lines[1],
            "README's two docker run lines differ in the capabilities alone")
    return [line for line in lines if caps in line][0]


def as_here(line, e, port):
    """README's line for this engine: its socket where the host's is, the image built here,
    a free port."""
    for old, new in (("/var/run/docker.sock:/var/run/docker.sock", e.sock + ":/var/run/docker.sock"),
                     ("stat -c %g /var/run/docker.sock", "stat -c %g " + e.sock),
                     ("127.0.0.1:9477:9477", "127.0.0.1:%d:9477" % port),
                     (" cgstat -q ", " %s -q " % IMAGE)):
        h.check(old in line, "README's line has %r" % old)
        line = line.replace(old, new)
    return line


def run_as_user(e, folder, line, timeout=120):
    """A shell line run by USER_ID in folder, with the engine socket's group, as a user of
    the docker group runs docker: (exit code, stdout, stderr)."""
    group = os.stat(e.sock).st_gid
    env = dict(os.environ, HOME=folder, DOCKER_HOST="unix://" + e.sock,
               PATH="/usr/bin:/bin:/usr/sbin:/sbin")
    out = subprocess.run(["setpriv", "--reuid", str(USER_ID), "--regid", str(USER_ID),
                          "--groups", str(group), "--inh-caps=-all", "bash", "-c",
                          "cd %s && %s" % (folder, line)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                         timeout=timeout)
    return out.returncode, out.stdout.decode(errors="replace"), out.stderr.decode(errors="replace")


def wait_rows(path, test, timeout=60):
    """Until the CSV at path has a row for which test is true: the rows then."""
    deadline = time.monotonic() + timeout
    while True:
        rows = h.read_csv(path) if os.path.exists(path) else []
        if any(test(r) for r in rows):
            return rows
        if time.monotonic() > deadline:
            raise RuntimeError("no such row in %s after %d s" % (path, timeout))
        time.sleep(0.1)


def metrics_page(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        return r.read().decode()


def check_named_cpu(what, rows, usage):
    """Each container's rows under its name, and its on-CPU time against its cpu.stat."""
    for name, usage_ms in usage.items():
        got = h.sched_totals(rows, name)
        h.check(got["intervals"] > 0, "%s: %s has %d rows under its name"
                % (what, name, got["intervals"]))
        h.check_cpu_stat("%s: %s on-CPU" % (what, name), got["onCpuMillis"], usage_ms, [])


def busy_containers(e, names, seconds):
    """names started, each busy for seconds then idle; their cgroups' cpu.stat usage (ms) once
    the busy parts are over."""
    for name in names:
        e.run(name, BUSY % seconds)
    cgroups = {name: h.v2_mount() + e.cgroup(name) for name in names}
    for name in names:
        wait_done(e, name)
    h.settle()
    return cgroups


def container_logs(e, name):
    """What a container wrote, stdout and stderr, for a failed check to show."""
    return subprocess.run([docker_engine.DOCKER_CLI, "-H", "unix://" + e.sock, "logs", name],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=60).stdout.decode(errors="replace")


def documented_run(e, caps, folder):
    """README's line, by a user, beside two named busy containers."""
    port = h.free_port()
    line = as_here(readme_line(caps), e, port)
    os.chmod(folder, 0o777)
    start = time.monotonic()
    code, out, err = run_as_user(e, folder, line)
    h.check(code == 0, "README's line starts cgstat (exit %d): %s" % (code, err.strip()))
    if code:
        return
    run = os.path.join(folder, "results", "run")
    rows = wait_rows(os.path.join(run, "sched-stats.csv"), lambda r: True)
    first_s = time.monotonic() - start
    print("START from docker run to the first interval: %.2f s" % first_s, flush=True)
    h.check(first_s < 10, "the first interval within 10 s of docker run (%.2f s)" % first_s)
    cgroups = busy_containers(e, ["broker", "bookie-1"], 2)
    # two more intervals, so that every figure of the busy parts is in the files
    now_ms = time.time() * 1000
    wait_rows(os.path.join(run, "sched-stats.csv"),
              lambda r: float(r["epochMillis"]) > now_ms + 1500)
    page = metrics_page(port)
    for name in cgroups:
        h.check(re.search(r'^cgstat_cpu_seconds_total\{cgroup="%s"\} [0-9.e+-]+$' % name,
                          page, re.M) is not None,
                "/metrics through the published port: cgstat_cpu_seconds_total of %s" % name)
    usage = {name: h.cgroup_usage_ms(path) for name, path in cgroups.items()}
    start = time.monotonic()
    e.docker("stop", "-t", str(STOP_TIMEOUT_S), "cgstat", timeout=STOP_TIMEOUT_S + 60)
    stop_s = time.monotonic() - start
    state = json.loads(e.docker("inspect", "-f", "{{json .State}}", "cgstat"))
    logs = container_logs(e, "cgstat")
    h.check(state["ExitCode"] == 0 and stop_s < STOP_TIMEOUT_S,
            "docker stop: exit %d after %.2f s (stop timeout %d s)%s"
            % (state["ExitCode"], stop_s, STOP_TIMEOUT_S,
               "" if state["ExitCode"] == 0 else ": " + logs[-2000:]))
    h.no_sanitizer_report("cgstat in the image", logs.encode())
    h.check("namespace" not in logs, "in the host's namespaces: nothing said of them: %r"
            % [line for line in logs.splitlines() if "namespace" in line])
    summary = h.summary_of(run)
    h.check(all(name in summary["containers"] for name in cgroups),
            "the summary written at docker stop names %s" % sorted(cgroups))
    owners = {(os.stat(p).st_uid, os.stat(p).st_gid)
              for p in [run] + [os.path.join(run, f) for f in os.listdir(run)]}
    h.check(owners == {(USER_ID, USER_ID)}, "the files in the bind mount are the user's: %s"
            % owners)
    check_named_cpu("README's line", h.read_csv(os.path.join(run, "sched-stats.csv")), usage)
    # the host's /proc/stat and /proc/diskstats: the host's whole disks, as /sys/block has them
    with open(os.path.join(run, "host-io.csv")) as f:
        header = f.readline().strip().split(",")
    disks = {c[:-len("ReadMBps")] for c in header if c.endswith("ReadMBps")}
    want = {d for d in os.listdir("/sys/block") if os.path.exists("/sys/block/%s/device" % d)}
    h.check(disks == want and len(h.read_csv(os.path.join(run, "host-io.csv"))) > 0,
            "host-io.csv has the host's disks %s (/sys/block's with a device: %s)"
            % (sorted(disks), sorted(want)))
    e.clear()


def loaded_programs():
    """The names of the BPF programs loaded now, from bpftool."""
    out = subprocess.run(["bpftool", "-j", "prog", "show"], stdout=subprocess.PIPE,
                         check=True, timeout=60)
    return sorted(p.get("name", "") for p in json.loads(out.stdout))


def one_capability_fewer(e, caps, folder):
    """The documented flags less one capability: one line, exit 1, nothing made or left."""
    fewer = caps.split()[:-2] if "PERFMON" in caps else []
    missing = "CAP_PERFMON" if fewer else "CAP_BPF and CAP_PERFMON"
    results = os.path.join(folder, "fewer")
    os.makedirs(results)
    os.chmod(results, 0o777)
    before = loaded_programs()
    out = subprocess.run(
        [docker_engine.DOCKER_CLI, "-H", "unix://" + e.sock, "run", "--rm", "--pid=host",
         "--cgroupns=host"] + fewer + ["-v", "/sys/fs/cgroup:/sys/fs/cgroup:ro",
                                       "-v", results + ":/results", IMAGE, "-q", "-o",
                                       "/results/run"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    err = out.stderr.decode(errors="replace").strip().splitlines()
    h.check(out.returncode == 1, "%s less: exit 1 (%d)" % (caps, out.returncode))
    h.check(len(err) == 1 and err[0].startswith("cgstat: no %s:" % missing),
            "%s less: one line names %s: %s" % (caps, missing, err))
    h.check(os.listdir(results) == [], "%s less: no output folder made (%s)"
            % (caps, os.listdir(results)))
    h.check(loaded_programs() == before, "%s less: no program left loaded" % caps)


def private_pid_namespace(e, caps):
    """Without --pid=host: one line says so, and the run goes on."""
    out = subprocess.run(
        [docker_engine.DOCKER_CLI, "-H", "unix://" + e.sock, "run", "--rm", "--cgroupns=host"]
        + caps.split() + ["-v", "/sys/fs/cgroup:/sys/fs/cgroup:ro", IMAGE, "--no-names", "-q",
                          "-i", "0.5", "-d", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    said = [line for line in out.stderr.decode(errors="replace").splitlines()
            if "namespace" in line]
    h.check(out.returncode == 0, "without --pid=host: exit 0 (%d)%s" % (
        out.returncode, "" if out.returncode == 0 else ": " + out.stderr.decode(errors="replace")))
    h.check(len(said) == 1 and said[0].startswith("cgstat: not in the host's PID namespace"),
            "without --pid=host: one line says so: %s" % said)


def host_pid_and_privileged(e, caps):
    """-p with a host pid, from the image run as documented: the rows of that process's
    cgroup, the host's path of the container's; and --privileged, the simple fallback, runs."""
    e.run("pidcheck", "while :; do sleep 0.05; done")
    pid = e.pid("pidcheck")
    # found from the host's /proc/PID/cgroup, the container's cgroup, under its short id
    # (--no-names: no engine to name it)
    want = "docker:" + e.docker("inspect", "-f", "{{.Id}}", "pidcheck")[:12]
    base = [docker_engine.DOCKER_CLI, "-H", "unix://" + e.sock, "run", "--rm", "--pid=host",
            "--cgroupns=host", "-v", "/sys/fs/cgroup:/sys/fs/cgroup:ro"]
    args = ["--no-names", "-f", "csv", "-i", "0.5", "-d", "1.5"]
    out = subprocess.run(base + caps.split() + [IMAGE, "-p", str(pid)] + args,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    labels = {line.split(",")[2] for line in out.stdout.decode().splitlines()[1:] if line}
    h.check(out.returncode == 0 and labels == {want},
            "-p %d (the host's pid) in the image: exit %d, rows of %s (want %s)%s"
            % (pid, out.returncode, sorted(labels), want,
               "" if out.returncode == 0 else ": " + out.stderr.decode(errors="replace")))
    out = subprocess.run(base + ["--privileged", IMAGE] + args,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    rows = [line for line in out.stdout.decode().splitlines()[1:] if line]
    h.check(out.returncode == 0 and rows, "--privileged instead of the capabilities: exit %d, "
            "%d rows%s" % (out.returncode, len(rows), "" if out.returncode == 0 and rows
                           else ": " + out.stderr.decode(errors="replace")))
    e.clear()


def metric(page, name, cgroup):
    m = re.search(r'^%s\{cgroup="%s"\} ([0-9.e+-]+)$' % (name, re.escape(cgroup)), page, re.M)
    return float(m.group(1)) if m else None


def wait_page(port, test, timeout=60):
    """Until /metrics on port answers with a page for which test is true: that page."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError):
            page = metrics_page(port)
            if test(page):
                return page
        if time.monotonic() > deadline:
            raise RuntimeError("no such /metrics page on port %d in %d s" % (port, timeout))
        time.sleep(0.2)


def drains(page):
    m = re.search(r"^cgstat_drains_total (\d+)$", page, re.M)
    return int(m.group(1)) if m else -1


def daemonset_run(e, caps, folder):
    """The DaemonSet's pod spec as `docker run` (k8s_pod.docker_run_args: every field
    translated or refused), beside two busy containers: their figures on /metrics through the
    container's port against their cpu.stat, the probes' path answering, and the pod's grace
    period enough for docker stop."""
    docs = k8s_pod.load(os.path.join(REPO, "contrib", "kubernetes", "cgstat-daemonset.yaml"))
    ds = [d for d in docs if d and d.get("kind") == "DaemonSet"][0]
    spec = ds["spec"]["template"]["spec"]
    # the kubelet's log folders, which this host has none of: empty ones of the test's
    logs = {path: os.path.join(folder, os.path.basename(path))
            for path in ("/var/log/pods", "/var/log/containers")}
    for path in logs.values():
        os.makedirs(path)
    subs = {} if "BPF" in caps else {"BPF": "SYS_ADMIN", "PERFMON": "SYS_ADMIN"}
    run = k8s_pod.docker_run_args(spec, spec["containers"][0]["name"], image_override=IMAGE,
                                  host_paths_map=logs, cap_substitutes=subs)
    port = h.free_port()
    container_port = run.ports[0]["containerPort"]
    e.docker("run", *run.argv("-d", "--name", "cgstat-daemonset",
                              "-p", "127.0.0.1:%d:%d" % (port, container_port)))
    wait_page(port, lambda page: drains(page) > 0)
    for kind, probe in sorted(run.probes.items()):
        h.check(probe["port"] == container_port,
                "DaemonSet: the %s's port is the metrics port" % kind)
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, probe["path"]),
                                    timeout=10) as r:
            h.check(r.status == 200, "DaemonSet: the %s's %s answers %d"
                    % (kind, probe["path"], r.status))
    cgroups = busy_containers(e, ["broker", "bookie-1"], 2)
    done = drains(metrics_page(port))
    page = wait_page(port, lambda page: drains(page) >= done + 2)
    for name, path in cgroups.items():
        # no Docker socket in the pod: a container of this engine is labelled by its short id
        # (a pod's containers are named from the kubelet's logs, which this host has none of)
        label = "docker:" + e.docker("inspect", "-f", "{{.Id}}", name)[:12]
        got = metric(page, "cgstat_cpu_seconds_total", label)
        h.check(got is not None, "DaemonSet: /metrics has %s's cpu seconds, as %s"
                % (name, label))
        if got is not None:
            h.check_cpu_stat("DaemonSet: %s's cgstat_cpu_seconds_total" % name, got * 1000,
                             h.cgroup_usage_ms(path), [])
    start = time.monotonic()
    e.docker("stop", "-t", str(run.stop_timeout), "cgstat-daemonset",
             timeout=run.stop_timeout + 60)
    stop_s = time.monotonic() - start
    state = json.loads(e.docker("inspect", "-f", "{{json .State}}", "cgstat-daemonset"))
    h.check(state["ExitCode"] == 0 and stop_s < run.stop_timeout,
            "DaemonSet: docker stop -t %d (its grace period): exit %d after %.2f s%s"
            % (run.stop_timeout, state["ExitCode"], stop_s, "" if state["ExitCode"] == 0
               else ": " + container_logs(e, "cgstat-daemonset")[-2000:]))
    e.clear()


def main():
    h.parse_args()
    folder = tempfile.mkdtemp(prefix="cgstat-image-")
    try:
        with docker_engine.engine(bridge=True) as e:
            debian_base.import_into(e, log=lambda m: print("BASE " + m, flush=True))
            if build(e):
                caps = engine_caps(e)
                documented_run(e, caps, folder)
                one_capability_fewer(e, caps, folder)
                private_pid_namespace(e, caps)
                host_pid_and_privileged(e, caps)
                daemonset_run(e, caps, folder)
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(folder)
    h.done()


if __name__ == "__main__":
    main()
