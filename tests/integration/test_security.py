# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What cgstat may do once attached, and where it may write, as the kernel shows it.

- Every thread of cgstat, in every mode (default, -c with an output folder, --listen,
  --threads, -- CMD, the live view on a terminal), once attached: its ids and capability sets
  from /proc/PID/task/TID/status. Each holds nobody's ids and no more than the documented set
  (docs/reliability.md, Security): CAP_BPF, and CAP_KILL with -- CMD; the bounding set the
  same, nothing inheritable or ambient, no_new_privs. Before 2026-12-05 the --listen thread,
  which parses what the network sends, kept every capability and uid 0.
- The image's binary, with its capabilities as permitted file capabilities, run as nobody
  with what an engine grants (CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN alone): it raises them,
  attaches and keeps no more; one missing: one line, exit 1.
- --listen with 64 slow connections (slowloris) open from the scraper's own address: every
  scrape answered, each slow connection dropped in bounded time, the connections bounded.
- An output folder given as a symlink, with or without a trailing slash (the slash makes the
  kernel follow the link despite O_NOFOLLOW): one line, exit 1, nothing in the link's target
  changed (its files' checksums)."""

import grp
import hashlib
import os
import pty
import pwd
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request

import fake_engine as fe
import harness as h

CAP_KILL = 5
CAP_SYS_ADMIN = 21
CAP_PERFMON = 38
CAP_BPF = 39


def nobody_ids():
    try:
        pw = pwd.getpwnam("nobody")
        return pw.pw_uid, pw.pw_gid
    except KeyError:
        return 65534, 65534


def threads_status(pid):
    """tid -> the fields of /proc/PID/task/TID/status, for every thread of pid."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                out[int(tid)] = dict((k, v.strip()) for k, v in
                                     (line.split(":", 1) for line in f if ":" in line))
        except FileNotFoundError:
            continue
    return out


def wait_threads(pid, n, timeout=20):
    """Wait until pid has at least n threads; its threads' status then."""
    deadline = time.monotonic() + timeout
    while True:
        status = threads_status(pid)
        if len(status) >= n or time.monotonic() > deadline:
            return status
        time.sleep(0.02)


def check_threads(mode, pid, threads, kept, groups="", bounding=None):
    """Every thread of pid: nobody's ids, the kept capabilities at most, none to pass on, and
    no supplementary group but groups (the Docker socket's) in the thread that follows the
    engine's names (cgstat-docker) alone. The bounding set kept, or bounding where cgstat had
    no CAP_SETPCAP to shrink it (no_new_privs leaves it of no use)."""
    uid, gid = nobody_ids()
    status = wait_threads(pid, threads)
    h.check(len(status) == threads, "%s: %d threads (want %d: %s)"
            % (mode, len(status), threads, sorted(s.get("Name") for s in status.values())))
    for tid, s in sorted(status.items()):
        ids = [int(x) for x in s["Uid"].split()] + [int(x) for x in s["Gid"].split()]
        caps = {k: int(s[k], 16) for k in ("CapEff", "CapPrm", "CapBnd", "CapInh", "CapAmb")}
        want = {"CapEff": kept, "CapPrm": kept, "CapBnd": kept if bounding is None else bounding, "CapInh": 0, "CapAmb": 0}
        want_groups = groups if s.get("Name") == "cgstat-docker" else ""
        h.check(ids == [uid] * 4 + [gid] * 4 and caps == want and s["NoNewPrivs"] == "1"
                and s.get("Groups", "") == want_groups,
                "%s: thread %d (%s): uids and gids %s, groups %r, %s, NoNewPrivs %s; want "
                "nobody's %d/%d, %s, groups %r, NoNewPrivs 1"
                % (mode, tid, s.get("Name"), ids, s.get("Groups"),
                   {k: "%x" % v for k, v in caps.items()}, s["NoNewPrivs"], uid, gid,
                   {k: "%x" % v for k, v in want.items()}, want_groups))


def background_modes(args, tmp, cg):
    """The modes that run with stdout a pipe: each once attached and writing. Every mode has
    the thread that follows the Docker engine's names (none answers here) beside its own."""
    bpf_only = 1 << CAP_BPF
    port = h.free_port()
    for mode, extra, threads, kept in (
            ("default", [], 2, bpf_only),
            ("-c", ["-c", "w=" + cg], 2, bpf_only),
            ("--threads", ["--threads", "-c", "w=" + cg], 2, bpf_only),
            # the statistics' fd, taken with CAP_SYS_ADMIN, keeps none of it
            ("--bpf-stats", ["--bpf-stats", "-c", "w=" + cg], 2, bpf_only),
            ("--listen", ["--listen", "127.0.0.1:%d" % port, "-c", "w=" + cg], 3, bpf_only),
            ("-- CMD", ["--", "sleep", "60"], 2, bpf_only | 1 << CAP_KILL),
            ("--no-names", ["--no-names"], 1, bpf_only)):
        cgstat = h.Cgstat(args.cgstat, ["-i", "0.2"] + extra, stamp_lines=True,
                          env=h.command_env() if mode == "-- CMD" else None)
        cgstat.wait_lines(2)
        if mode == "--listen":
            with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
                h.check(r.status == 200, "--listen: /metrics served (status %d)" % r.status)
        check_threads(mode, cgstat.proc.pid, threads, kept)
        # -- CMD: SIGINT goes to sleep, which it ends: cgstat exits with its status
        cgstat.stop(want=128 + signal.SIGINT if mode == "-- CMD" else 0)


def docker_socket_group(args):
    """A Docker socket root:docker 0660, as Debian's engine makes it: cgstat's names thread
    keeps the docker group, and no other, so that it can connect again as nobody, and no other
    thread has it; a socket of root's group alone gives no group."""
    docker_gid = grp.getgrnam("docker").gr_gid
    for group, want in ((docker_gid, str(docker_gid)), (0, "")):
        with fe.engine() as e:
            os.chown(e.sock, 0, group)
            os.chmod(e.sock, 0o660)
            # --listen's thread parses what the network sends: never the docker group's
            cgstat = h.Cgstat(args.cgstat, ["-i", "0.2", "--listen", str(h.free_port())],
                              stamp_lines=True,
                              env=dict(os.environ, DOCKER_HOST="unix://" + e.sock))
            cgstat.wait_lines(2)
            check_threads("DOCKER_HOST, a socket of group %d, --listen" % group,
                          cgstat.proc.pid, 3, 1 << CAP_BPF, groups=want)
            cgstat.stop()
            if group:
                h.check(any(r.startswith("/containers/json") for r in e.requests),
                        "DOCKER_HOST, a socket of group docker: cgstat, as nobody, asked it")


def live_view(args, cg):
    """The live view, on a terminal of the test's making, once it has drawn."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([args.cgstat, "-i", "0.2", "-c", "w=" + cg], stdin=slave,
                            stdout=slave, stderr=subprocess.PIPE, env=dict(os.environ,
                                                                         TERM="xterm"))
    os.close(slave)
    drawn = bytearray()
    stop = threading.Event()

    def drain():
        # the terminal's output read as it comes, so that cgstat never blocks on it
        while not stop.is_set():
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    drawn.extend(os.read(master, 65536))
                except OSError:
                    return

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    # attached and past the drop of privileges, which comes before the first interval; then
    # the view draws
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None and not (
            drawn and threads_status(proc.pid).get(proc.pid, {}).get("CapEff")
            == "%016x" % (1 << CAP_BPF)):
        time.sleep(0.05)
    h.precondition(bool(drawn), "live view: drawn on the terminal (%d bytes)" % len(drawn))
    check_threads("live view", proc.pid, 2, 1 << CAP_BPF)
    os.write(master, b"q")
    try:
        code = proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
    stop.set()
    reader.join(5)
    os.close(master)
    h.check_exit("live view", code, 0, proc.stderr.read())


def file_capabilities(args, tmp):
    """The image's binary (Dockerfile): its capabilities as permitted file capabilities, run
    by a user that is not root, as a container engine starts it. cgstat raises what it needs
    into effect: with CAP_BPF and CAP_PERFMON in the bounding set (an engine that knows them),
    or CAP_SYS_ADMIN alone (Debian 12's Docker 20.10), it attaches and keeps no more than it
    keeps elsewhere; with CAP_PERFMON missing, one line names it and it exits 1. Before the
    raise, every such run said the capabilities were missing."""
    binary = os.path.join(tmp, "cgstat-file-caps")
    shutil.copy(args.cgstat, binary)
    os.chmod(os.path.dirname(binary), 0o755)
    subprocess.run(["setcap", "cap_bpf,cap_perfmon,cap_sys_admin+p", binary], check=True)
    uid, gid = nobody_ids()
    for bounding, caps, kept, ok in (
            ("+bpf,+perfmon", 1 << CAP_BPF | 1 << CAP_PERFMON, 1 << CAP_BPF, True),
            ("+sys_admin", 1 << CAP_SYS_ADMIN, 0, True),
            ("+bpf", 1 << CAP_BPF, 0, False)):
        proc = subprocess.Popen(
            ["setpriv", "--reuid", str(uid), "--regid", str(gid), "--clear-groups",
             "--inh-caps=-all", "--bounding-set=-all," + bounding, binary, "-v", "-q",
             "-i", "0.2", "--no-names", "-f", "csv"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        what = "file capabilities, bounding set %s" % bounding
        if not ok:
            try:
                _, err = proc.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                _, err = proc.communicate()
            h.no_sanitizer_report(what, err.encode())
            lines = err.strip().splitlines()
            h.check(proc.returncode == 1, "%s: exit 1 (%s)" % (what, proc.returncode))
            h.check(len(lines) == 1 and "no CAP_PERFMON" in lines[0],
                    "%s: one line names what is missing: %s" % (what, lines))
            continue
        said = []  # cgstat's stderr, line by line as it comes

        def read_stderr():
            for line in proc.stderr:
                said.append(line)

        reader = threading.Thread(target=read_stderr, daemon=True)
        reader.start()
        deadline = time.monotonic() + 60
        while (not any("attached" in line for line in said) and proc.poll() is None
               and time.monotonic() < deadline):
            time.sleep(0.05)
        attached = any("attached" in line for line in said)
        h.check(attached, "%s: cgstat attached (exit %s)%s"
                % (what, proc.poll(), "" if attached else ": " + "".join(said)))
        if attached:
            # no CAP_SYS_ADMIN kept: the drain's bpf() calls need no capability on their fds
            check_threads(what, proc.pid, 1, kept, bounding=caps)
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        reader.join(10)
        h.no_sanitizer_report(what, "".join(said).encode())
        h.check(code == 0, "%s: SIGINT ends it with exit 0 (%s)%s"
                % (what, code, "" if code == 0 else ": " + "".join(said)))


def tree_sums(path):
    """name -> sha256 of every file under path."""
    out = {}
    for root, _, files in os.walk(path):
        for name in files:
            full = os.path.join(root, name)
            with open(full, "rb") as f:
                out[os.path.relpath(full, path)] = hashlib.sha256(f.read()).hexdigest()
    return out


def output_folder_link(args, tmp, cg):
    """-o LINK and -o LINK/ where LINK is a symlink to a folder: refused, the folder as it was."""
    target = os.path.join(tmp, "target")
    os.mkdir(target)
    with open(os.path.join(target, "sched-stats.csv"), "w") as f:
        f.write("someone else's file\n")
    link = os.path.join(tmp, "results")
    os.symlink(target, link)
    before = tree_sums(target)
    for given in (link, link + "/", link + "//"):
        p = h.run_cgstat([args.cgstat, "-q", "-d", "0.3", "-o", given, "-c", "w=" + cg],
                         want=1)
        err = p.stderr.decode(errors="replace")
        h.check(err.count("\n") == 1 and "output folder" in err,
                "-o %s (a symlink): one line: %r" % (given, err))
        h.check(tree_sums(target) == before and sorted(os.listdir(target)) == sorted(before),
                "-o %s: the link's target unchanged (%s)" % (given, sorted(os.listdir(target))))


SLOW_CLIENTS = 64
# listener.c: LISTENER_REQUEST_SECONDS, LISTENER_CONNECTIONS
REQUEST_SECONDS = 10
CONNECTIONS = 128
# how often each slow connection sends its next byte, and the scraper asks
SLOW_BYTE_SECONDS = 2.0
SCRAPE_SECONDS = 0.5
SCRAPES = 36


def server_connections(port):
    """The established TCP connections whose local port is port (the server's ends)."""
    n = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                    n += 1
    return n


def slow_clients(args, cg):
    """64 connections from loopback that send a request a byte every 2 s (slowloris), each
    reopened when cgstat drops it, while a scraper on the same address asks /metrics twice a
    second as Prometheus does: every scrape is answered; no slow connection lives longer than
    its request time (10 s) and a send period and a scrape after; and cgstat never holds more
    than its 128 connections (the kernel's socket table). Before 2026-12-05, 32 such
    connections locked every scraper out for as long as they sent."""
    port = h.free_port()
    cgstat = h.Cgstat(args.cgstat, ["-q", "-i", "0.5", "--listen", "127.0.0.1:%d" % port, "-c",
                                    "w=" + cg])
    request = b"GET /metrics HTTP/1.1\r\nHost: cgstat\r\nUser-Agent: slow\r\n"
    stop = threading.Event()
    lifetimes, most = [], [0]

    def slow():
        conns = []
        while not stop.is_set():
            now = time.monotonic()
            while len(conns) < SLOW_CLIENTS:
                s = socket.create_connection(("127.0.0.1", port), timeout=5)
                conns.append([s, now, 0])
            for c in list(conns):
                s, opened, sent = c
                try:
                    # dropped: the server's end shut down reads as the stream's end
                    if select.select([s], [], [], 0)[0] and not s.recv(4096):
                        raise ConnectionResetError("dropped")
                    s.send(request[sent % len(request):sent % len(request) + 1])
                    c[2] += 1
                except OSError:
                    lifetimes.append(time.monotonic() - opened)
                    s.close()
                    conns.remove(c)
            most[0] = max(most[0], server_connections(port))
            stop.wait(SLOW_BYTE_SECONDS)
        for s, _, _ in conns:
            s.close()

    slow_thread = threading.Thread(target=slow, daemon=True)
    slow_thread.start()
    answered, failed = 0, []
    try:
        for i in range(SCRAPES):
            req = urllib.request.Request("http://127.0.0.1:%d/metrics" % port, headers={
                "Accept": "application/openmetrics-text;version=1.0.0,text/plain;q=0.5"})
            try:
                with urllib.request.urlopen(req, timeout=5) as r:
                    answered += r.status == 200 and b"cgstat_" in r.read()
            except OSError as e:
                failed.append((i, str(e)))
            time.sleep(SCRAPE_SECONDS)
    finally:
        stop.set()
        slow_thread.join(30)
        cgstat.stop()
    h.check(answered == SCRAPES, "%d slow connections open: %d of %d scrapes answered (failed: "
            "%s)" % (SLOW_CLIENTS, answered, SCRAPES, failed[:3]))
    # its time, the scrape that finds it past it, the send period that sees it dropped, and
    # as much again for a machine that stalls
    bound = REQUEST_SECONDS + 2 * (SCRAPE_SECONDS + SLOW_BYTE_SECONDS)
    h.check(lifetimes and max(lifetimes) <= bound,
            "slow connections dropped within %.1f s: %d dropped, the longest lived %.1f s"
            % (bound, len(lifetimes), max(lifetimes) if lifetimes else -1))
    h.check(most[0] <= CONNECTIONS, "at most %d connections held: %d at once"
            % (CONNECTIONS, most[0]))


OUTPUT_FILES = ("container-stats.csv", "sched-stats.csv", "cgroup-stats.csv", "pool-stats.csv",
                "thread-stats.csv", "perf-stat.csv", "host-io.csv", "container-summary.json")


def output_file_links(args, tmp, cg):
    """Each file cgstat writes planted as a link to a file outside the folder, as root and as
    under sudo (SUDO_UID set): one line, exit 1, the link's target unchanged."""
    for env, who in ((None, "root"), (dict(os.environ, SUDO_UID="65534", SUDO_GID="65534"),
                                      "under sudo")):
        for name in OUTPUT_FILES:
            folder = os.path.join(tmp, "links-%s-%s" % (who.replace(" ", "-"), name))
            os.mkdir(folder)
            victim = folder + ".victim"
            with open(victim, "w") as f:
                f.write("not cgstat's\n")
            with open(victim, "rb") as f:
                want = f.read()
            os.symlink(victim, os.path.join(folder, name))
            p = h.run_cgstat([args.cgstat, "-q", "-d", "0.3", "--threads", "-o", folder, "-c",
                              "w=" + cg], want=1, env=env)
            err = p.stderr.decode(errors="replace")
            with open(victim, "rb") as f:
                got = f.read()
            h.check(err.count("\n") == 1 and "symbolic link" in err and got == want,
                    "%s: %s a link to a file outside: one line %r, its target unchanged (%r)"
                    % (who, name, err, got[:40]))


def main():
    args = h.parse_args()
    tmp = h.scratch_path(tempfile.mkdtemp(prefix="cgstat-security-"))
    with h.scratch_cgroup("sec") as cg:
        background_modes(args, tmp, cg)
        docker_socket_group(args)
        file_capabilities(args, tmp)
        live_view(args, cg)
        output_folder_link(args, tmp, cg)
        output_file_links(args, tmp, cg)
        slow_clients(args, cg)
    h.done()


if __name__ == "__main__":
    main()
