# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The systemd unit (contrib/systemd/cgstat.service), run as systemd would run it, without
systemd as PID 1 (this machine's is not). Every figure comes from the unit file itself, so that
the test and the unit cannot drift: the capabilities, the user, the command line and its
options, the system call filter.

- `systemd-analyze verify` clean, on a copy of the unit whose ExecStart names the cgstat under
  test (verify wants the binary there, and executable) and without the man page check
  (tests/package.sh verifies the installed unit as it is, man page included).
- The unit's own sandbox: DynamicUser, Type=notify, and AmbientCapabilities the same set as
  CapabilityBoundingSet (nothing bounded that is not used).
- cgstat run as that unit runs it: ExecStart with CGSTAT_OPTS as Environment= gives it, a free
  loopback port for its --listen; an unused uid and gid of DynamicUser's range and no
  supplementary group, exactly the unit's capabilities ambient, inheritable and bounding, and
  no_new_privs (setpriv); under the unit's system call filter, address families and W^X as
  seccomp filters (unit_sandbox.py, killing on a call outside the filter where the unit
  answers EPERM); NOTIFY_SOCKET a datagram socket of the test's. READY=1 arrives, and when it
  does the scheduler's programs are attached (cgstat's bpf_link fds) and /metrics answers;
  /metrics then serves `cgstat_up 1`; every thread holds the uid, CAP_BPF alone, the unit's
  bounding set, no_new_privs and the filter; SIGTERM ends it with exit 0.
- The example options (contrib/systemd/cgstat.default) with -o in the state directory as
  DynamicUser lays it (a symlink to private/): the files written there, and the summary.
- The Docker drop-in (contrib/systemd/cgstat.service.d/docker.conf): with its supplementary
  group, cgstat lists a (fake) engine's containers through a socket root:docker 0660.
- With each capability of the set taken away in turn: one line on stderr naming it, exit 1,
  no READY=1.
- The filter is no pretence: without `bpf` in it cgstat is killed by SIGSYS.

    python3 tests/integration/test_unit.py --cgstat build/cgstat [--unit PATH --examples DIR]

--unit defaults to the repository's contrib/systemd/cgstat.service, --examples to its folder;
tests/package.sh passes the installed unit and examples, with --cgstat /usr/bin/cgstat."""

import argparse
import contextlib
import grp
import json
import os
import pwd
import re
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import fake_engine as fe
import harness as h

HERE = os.path.dirname(os.path.abspath(__file__))
CONTRIB = os.path.join(HERE, "..", "..", "contrib", "systemd")
CAP_BPF = 39
# systemd's DynamicUser= range (systemd.exec(5)): 61184 to 65519
DYNAMIC_UIDS = range(61184, 65520)
SCHED_HOOKS = {"sched_switch", "sched_wakeup", "sched_wakeup_new"}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--cgstat", required=True)
    p.add_argument("--workload")  # as every integration test is given; not used here
    p.add_argument("--unit", default=os.path.join(CONTRIB, "cgstat.service"))
    # cgstat.default and docker.conf: the repository's, or the package's examples folder
    p.add_argument("--examples", default=CONTRIB)
    args = p.parse_args()
    args.cgstat = os.path.abspath(args.cgstat)
    return args


def unit_settings(path):
    """{key: [values in order]} of a unit file's [Service] and [Unit] sections, lines joined
    where they end in a backslash, comments left out."""
    settings = {}
    with open(path) as f:
        text = re.sub(r"\\\n", " ", f.read())
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;[":
            continue
        key, _, value = line.partition("=")
        settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def one(settings, key):
    values = settings.get(key, [])
    return values[-1] if values else None


def env_assignments(words):
    """KEY=VALUE words (Environment='s, shlex-split) as a dict."""
    return dict(w.split("=", 1) for w in words if "=" in w)


def env_file(path):
    """The assignments an EnvironmentFile= gives: KEY=VALUE lines, quotes as the shell's."""
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                out.update(env_assignments(shlex.split(line)))
    return out


def exec_argv(settings, env):
    """ExecStart's words, each $NAME replaced by that variable's words, split at whitespace,
    as systemd does."""
    argv = []
    for word in shlex.split(one(settings, "ExecStart")):
        if re.fullmatch(r"\$[A-Za-z_][A-Za-z0-9_]*", word):
            argv += env.get(word[1:], "").split()
        else:
            argv.append(word)
    return argv


def caps_of(settings, key):
    return set((one(settings, key) or "").split())


def setpriv_caps(caps):
    """The capabilities as setpriv's lists name them: CAP_BPF -> +bpf."""
    return "".join(",+" + c.lower()[len("cap_"):] for c in sorted(caps))


def syscall_group(name, memo={}):
    """The system calls a SystemCallFilter= group names, its groups expanded, as this
    systemd has them (systemd-analyze syscall-filter)."""
    if name not in memo:
        out = subprocess.run(["systemd-analyze", "syscall-filter", name], check=True,
                             stdout=subprocess.PIPE, text=True).stdout
        calls = set()
        for line in out.splitlines()[1:]:
            line = line.strip()
            if line and not line.startswith("#"):
                calls |= syscall_group(line) if line.startswith("@") else {line}
        memo[name] = calls
    return memo[name]


def syscall_filter(settings):
    """The allow-list of the unit's SystemCallFilter= lines (systemd adds @default to one)."""
    calls = syscall_group("@default")
    for value in settings.get("SystemCallFilter", []):
        if value.startswith("~"):
            raise ValueError("a deny-list SystemCallFilter= is not what this test emulates")
        for word in value.split():
            calls |= syscall_group(word) if word.startswith("@") else {word}
    return calls


def unused_id():
    """A uid and gid of DynamicUser's range that no user, group or process has: what systemd
    would hand the unit."""
    in_use = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            in_use.add(os.stat("/proc/" + pid).st_uid)
    for uid in DYNAMIC_UIDS:
        try:
            pwd.getpwuid(uid)
            continue
        except KeyError:
            pass
        try:
            grp.getgrgid(uid)
            continue
        except KeyError:
            pass
        if uid not in in_use:
            return uid
    raise RuntimeError("no free uid in DynamicUser's range")


def links_of(pid):
    """The tracepoints of the bpf_link fds pid holds (its attached programs)."""
    return {info.get("tp_name") for info in h.bpf_objects_of(pid, "link")}


def metrics(port):
    """/metrics' body, or None while it does not answer."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
            return r.read().decode()
    except OSError:
        return None


def threads_status(pid):
    """tid -> the fields of /proc/PID/task/TID/status; none once pid has ended."""
    out = {}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except FileNotFoundError:
        return out
    for tid in tids:
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                out[int(tid)] = dict((k, v.strip()) for k, v in
                                     (line.split(":", 1) for line in f if ":" in line))
    return out


class Unit:
    """What the test knows of the unit, and cgstat run as it says."""

    def __init__(self, args, tmp):
        self.path = args.unit
        self.examples = args.examples
        self.s = unit_settings(args.unit)
        self.tmp = tmp
        # the binary where the unit's user may reach it, as /usr/bin is
        bindir = os.path.join(tmp, "bin")
        os.mkdir(bindir)
        os.chmod(tmp, 0o755)
        os.chmod(bindir, 0o755)
        self.cgstat = os.path.join(bindir, "cgstat")
        shutil.copy(args.cgstat, self.cgstat)
        os.chmod(self.cgstat, 0o755)
        self.caps = caps_of(self.s, "AmbientCapabilities")
        self.env = env_assignments(shlex.split(" ".join(self.s.get("Environment", []))))
        self.uid = unused_id()
        self.spec = os.path.join(tmp, "filter.json")
        self.write_filter(syscall_filter(self.s))
        self.runs = 0

    def write_filter(self, calls, path=None):
        families = (one(self.s, "RestrictAddressFamilies") or "").split()
        with open(path or self.spec, "w") as f:
            json.dump({"syscalls": sorted(calls), "families": families,
                       "mdwe": one(self.s, "MemoryDenyWriteExecute") == "yes"}, f)

    def argv(self, env, port):
        """ExecStart as the unit runs it, this copy of cgstat and port for its --listen."""
        argv = exec_argv(self.s, env)
        argv[0] = self.cgstat
        for i, word in enumerate(argv[:-1]):
            if word == "--listen":
                argv[i + 1] = "%s:%d" % (argv[i + 1].rsplit(":", 1)[0], port)
        return argv

    def start(self, argv, caps, groups=(), env=None, spec=None):
        """argv run as the unit would: returns (process, its stderr file, the notify socket)."""
        self.runs += 1
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        name = "cgstat-test-unit-%d-%d" % (os.getpid(), self.runs)
        notify.bind("\0" + name)
        setpriv = ["setpriv", "--reuid=%d" % self.uid, "--regid=%d" % self.uid]
        setpriv += ["--groups=" + ",".join(map(str, groups))] if groups else ["--clear-groups"]
        for opt in ("--inh-caps", "--ambient-caps", "--bounding-set"):
            setpriv.append("%s=-all%s" % (opt, setpriv_caps(caps)))
        if one(self.s, "NoNewPrivileges") == "yes":
            setpriv.append("--no-new-privs")
        # what systemd gives a service, and the sanitizer build's options
        run_env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                   "NOTIFY_SOCKET": "@" + name}
        run_env.update((k, v) for k, v in os.environ.items() if k.endswith("SAN_OPTIONS"))
        # LeakSanitizer stops the threads with ptrace() at exit, which the unit's filter
        # refuses (as it should): the leaks of these paths are test_security's, as root
        if "ASAN_OPTIONS" in run_env:
            run_env["ASAN_OPTIONS"] += ":detect_leaks=0"
        run_env.update(env or {})
        err = tempfile.TemporaryFile(dir=self.tmp)
        proc = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "unit_sandbox.py"), spec or self.spec, "--"]
            + setpriv + ["--"] + argv, stdout=subprocess.DEVNULL, stderr=err, env=run_env,
            cwd="/")
        return proc, err, notify


def wait_ready(proc, notify, timeout=30):
    """The notify messages until READY=1 came (True), or the process ended or the time ran
    out (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if select.select([notify], [], [], 0.05)[0]:
            if b"READY=1" in notify.recv(4096).split(b"\n"):
                return True
        elif proc.poll() is not None:
            return False
    return False


def stderr_text(err):
    err.seek(0)
    return err.read().decode(errors="replace")


def stop(proc, err, what, want=0):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return h.check_exit(what, proc.returncode, want, stderr_text(err))


def verify(unit):
    """systemd-analyze verify on a copy whose ExecStart names the binary under test."""
    if not shutil.which("systemd-analyze"):
        h.skip("systemd-analyze verify: no systemd-analyze here")
        return
    folder = os.path.join(unit.tmp, "verify")
    os.mkdir(folder)
    copy = os.path.join(folder, "cgstat.service")
    with open(unit.path) as f:
        text = f.read()
    binary = shlex.split(one(unit.s, "ExecStart"))[0]
    with open(copy, "w") as f:
        f.write(text.replace("ExecStart=" + binary, "ExecStart=" + unit.cgstat))
    p = subprocess.run(["systemd-analyze", "verify", "--man=no", copy],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    h.check(p.returncode == 0 and not p.stdout.strip(),
            "systemd-analyze verify: exit %d, said %r" % (p.returncode, p.stdout.strip()))


def sandbox_settings(unit):
    s = unit.s
    bounding = caps_of(s, "CapabilityBoundingSet")
    h.check(unit.caps and unit.caps == bounding,
            "AmbientCapabilities %s, the same as CapabilityBoundingSet %s"
            % (sorted(unit.caps), sorted(bounding)))
    for key, want in (("DynamicUser", "yes"), ("Type", "notify"), ("NoNewPrivileges", "yes"),
                      ("ProtectSystem", "strict"), ("MemoryDenyWriteExecute", "yes")):
        h.check(one(s, key) == want, "%s=%s (want %s)" % (key, one(s, key), want))
    argv = exec_argv(s, unit.env)
    listen = argv[argv.index("--listen") + 1] if "--listen" in argv else ""
    # the test serves it on a port of its own, never beyond this machine
    h.precondition(listen.rsplit(":", 1)[0] in ("127.0.0.1", "[::1]", "localhost"),
                   "the unit listens on a loopback address (%s)" % listen)
    h.check(bool(one(s, "StateDirectory")) and bool(one(s, "EnvironmentFile")),
            "StateDirectory=%s, EnvironmentFile=%s"
            % (one(s, "StateDirectory"), one(s, "EnvironmentFile")))


def unit_run(unit):
    """The unit's own command line, with exactly its set."""
    port = h.free_port()
    argv = unit.argv(unit.env, port)
    proc, err, notify = unit.start(argv, unit.caps)
    what = "the unit's run (%s)" % " ".join(argv[1:])
    try:
        ready = wait_ready(proc, notify)
        # read at once: what READY=1 promises holds when it arrives
        hooks = links_of(proc.pid) if ready else set()
        answered = metrics(port) is not None if ready else False
        h.check(ready, "%s: READY=1 on NOTIFY_SOCKET" % what)
        h.check(SCHED_HOOKS <= hooks and answered,
                "%s: at READY=1 the scheduler's programs are attached (%s) and /metrics "
                "answers (%s)" % (what, sorted(hooks), answered))
        up = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None:
            body = metrics(port) or ""
            up = re.search(r"^cgstat_up (\S+)$", body, re.M)
            if up and up.group(1) == "1":
                break
            time.sleep(0.1)
        h.check(up is not None and up.group(1) == "1",
                "%s: /metrics serves cgstat_up 1 (%s)" % (what, up and up.group(0)))
        check_threads(unit, proc.pid, what)
    finally:
        stop(proc, err, what)
        notify.close()


def check_threads(unit, pid, what):
    """Every thread: the unit's uid and gid, no group, CAP_BPF alone (the unit's bounding set
    stays: no CAP_SETPCAP to narrow it, and nothing in it can come back), no_new_privs, the
    filter."""
    bounding = sum(1 << cap_number(c) for c in unit.caps)
    want = {"CapEff": 1 << CAP_BPF, "CapPrm": 1 << CAP_BPF, "CapInh": 0, "CapAmb": 0,
            "CapBnd": bounding}
    status = threads_status(pid)
    h.check(len(status) >= 2, "%s: %d threads" % (what, len(status)))
    for tid, s in sorted(status.items()):
        ids = [int(x) for x in s["Uid"].split() + s["Gid"].split()]
        caps = {k: int(s[k], 16) for k in want}
        h.check(ids == [unit.uid] * 8 and caps == want and s.get("Groups", "") == ""
                and s["NoNewPrivs"] == "1" and s["Seccomp"] == "2",
                "%s: thread %d (%s): ids %s, groups %r, %s, NoNewPrivs %s, Seccomp %s; want "
                "%d, none, %s, 1, 2" % (what, tid, s.get("Name"), ids, s.get("Groups"),
                                        {k: "%x" % v for k, v in caps.items()},
                                        s["NoNewPrivs"], s["Seccomp"], unit.uid,
                                        {k: "%x" % v for k, v in want.items()}))


def cap_number(name):
    """A capability's number, as libcap's capsh knows it ("cap_bpf (39) [...]")."""
    out = subprocess.run(["capsh", "--explain=" + name.lower()], stdout=subprocess.PIPE,
                         text=True).stdout
    m = re.match(r"\S+ \((\d+)\)", out)
    if not m:
        raise RuntimeError("capsh does not know " + name)
    return int(m.group(1))


def state_directory_run(unit):
    """The example file's options, -o in the state directory as DynamicUser lays it out:
    /var/lib/NAME a symlink to private/NAME, which the unit's user owns."""
    opts = env_file(os.path.join(unit.examples, "cgstat.default"))
    state = one(unit.s, "StateDirectory")
    lib = os.path.join(unit.tmp, "lib")
    private = os.path.join(lib, "private", state)
    os.makedirs(private)
    os.chmod(lib, 0o755)
    # 0700 on the host; the unit's mount namespace shows the service its own folder in it
    os.chmod(os.path.dirname(private), 0o755)
    os.chown(private, unit.uid, unit.uid)
    os.symlink(os.path.join("private", state), os.path.join(lib, state))
    env = dict(unit.env, **opts)
    argv = unit.argv(env, h.free_port())
    h.precondition("-o" in argv, "the example's options have -o (%s)" % env["CGSTAT_OPTS"])
    out = argv[argv.index("-o") + 1]
    h.precondition(out.startswith("/var/lib/%s/" % state),
                   "the example's -o is in the state directory (%s)" % out)
    argv[argv.index("-o") + 1] = os.path.join(lib, out[len("/var/lib/"):])
    proc, err, notify = unit.start(argv, unit.caps)
    what = "the example's options (%s)" % env["CGSTAT_OPTS"]
    try:
        h.check(wait_ready(proc, notify), "%s: READY=1" % what)
        rows = os.path.join(private, os.path.basename(out), "container-stats.csv")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None:
            with contextlib.suppress(OSError):
                with open(rows) as f:
                    if len(f.readlines()) >= 2:
                        break
            time.sleep(0.1)
    finally:
        stop(proc, err, what)
        notify.close()
    folder = os.path.dirname(rows)
    files = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    h.check("container-stats.csv" in files and "container-summary.json" in files
            and os.stat(folder).st_uid == unit.uid,
            "%s: written to %s, the unit's user's: %s" % (what, out, files))


def docker_drop_in(unit):
    """docker.conf's SupplementaryGroups: the names listed through a socket root:docker."""
    drop_in = os.path.join(unit.examples, "docker.conf")
    if not os.path.exists(drop_in):
        drop_in = os.path.join(unit.examples, "cgstat.service.d", "docker.conf")
    groups = (one(unit_settings(drop_in), "SupplementaryGroups") or "").split()
    try:
        gids = [grp.getgrnam(g).gr_gid for g in groups]
    except KeyError:
        h.skip("the Docker drop-in: no group %s here" % groups)
        return
    with fe.engine() as e:
        os.chown(e.sock, 0, gids[0])
        os.chmod(e.sock, 0o660)
        os.chmod(os.path.dirname(e.sock), 0o755)
        proc, err, notify = unit.start(unit.argv(unit.env, h.free_port()), unit.caps,
                                       groups=gids, env={"DOCKER_HOST": "unix://" + e.sock})
        what = "with docker.conf (SupplementaryGroups=%s)" % " ".join(groups)
        try:
            h.check(wait_ready(proc, notify), "%s: READY=1" % what)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not any(
                    r.startswith("/containers/json") for r in e.requests):
                time.sleep(0.05)
            h.check(any(r.startswith("/containers/json") for r in e.requests),
                    "%s: the engine's containers listed (requests %s)" % (what, e.requests))
        finally:
            stop(proc, err, what)
            notify.close()


def one_fewer(unit):
    """Each capability taken away in turn: one line naming it, exit 1, never ready."""
    for cap in sorted(unit.caps):
        proc, err, notify = unit.start(unit.argv(unit.env, h.free_port()), unit.caps - {cap})
        what = "without %s" % cap
        try:
            ready = wait_ready(proc, notify)
        finally:
            stopped = stop(proc, err, what, want=1)
            notify.close()
        lines = stderr_text(err).splitlines()
        h.check(not ready, "%s: no READY=1" % what)
        if stopped:
            h.check(len(lines) == 1 and cap in lines[0],
                    "%s: one line naming it: %r" % (what, lines))


def filter_bites(unit):
    """Without bpf in the filter, the first bpf() kills cgstat: the filter is the one run."""
    spec = os.path.join(unit.tmp, "filter-no-bpf.json")
    unit.write_filter(syscall_filter(unit.s) - {"bpf"}, spec)
    proc, err, notify = unit.start(unit.argv(unit.env, h.free_port()), unit.caps, spec=spec)
    try:
        wait_ready(proc, notify)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
    finally:
        if proc.poll() is None:  # the filter let it run
            proc.kill()
            proc.wait()
        notify.close()
    h.check(proc.returncode == -signal.SIGSYS,
            "without bpf in SystemCallFilter: killed by SIGSYS (exit %s)" % proc.returncode)


def main():
    args = parse_args()
    tmp = h.scratch_path(tempfile.mkdtemp(prefix="cgstat-unit-"))
    unit = Unit(args, tmp)
    print("unit %s: uid %d, capabilities %s, %d system calls allowed"
          % (unit.path, unit.uid, " ".join(sorted(unit.caps)), len(syscall_filter(unit.s))),
          flush=True)
    verify(unit)
    sandbox_settings(unit)
    unit_run(unit)
    state_directory_run(unit)
    docker_drop_in(unit)
    one_fewer(unit)
    filter_bites(unit)
    h.done()


if __name__ == "__main__":
    main()
