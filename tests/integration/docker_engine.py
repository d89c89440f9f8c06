# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A Docker engine of the test's own: Debian's dockerd on a private socket, data root and exec
root under a temporary folder, with no network set up (--iptables=false --bridge=none, or a
bridge of the test's own where a container publishes a port), and a
busybox image imported from a rootfs the test builds (no registry is reachable, and none is
needed). Stopped at the end with every container it ran, its folder and the cgroups it made
removed; cgroups that were there before are left alone."""

import contextlib
import glob
import os
import shutil
import signal
import subprocess
import tempfile
import time

IMAGE = "cgstat-busybox:test"
CGROUP_ROOT = "/sys/fs/cgroup"
# the docker CLI Debian's docker.io installs; another one earlier in PATH may not match it
DOCKER_CLI = "/usr/bin/docker" if os.path.exists("/usr/bin/docker") else "docker"


class Engine:
    def __init__(self, folder, bridge=None):
        self.folder = folder
        self.sock = os.path.join(folder, "docker.sock")
        self.bridge = bridge  # the test's own bridge for published ports; None: no network
        self.proc = None
        self.log = None

    def docker(self, *args, check=True, timeout=60):
        """Run the docker CLI against this engine: its stdout, stripped."""
        out = subprocess.run([DOCKER_CLI, "-H", "unix://" + self.sock] + list(args),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        if check and out.returncode:
            raise RuntimeError("docker %s: exit %d: %s" % (" ".join(args), out.returncode,
                                                           out.stderr.decode(errors="replace")))
        return out.stdout.decode().strip()

    def run(self, name, command, *options):
        """Start a detached container of the busybox image running sh -c command: its id."""
        return self.docker("run", "-d", "--name", name, *options, IMAGE, "sh", "-c", command)

    def start(self):
        """Start dockerd (again) and wait until it answers. live-restore: containers keep running
        while it is stopped, as a production engine's do across an upgrade."""
        self.log = open(os.path.join(self.folder, "dockerd.log"), "ab")
        self.proc = subprocess.Popen(
            ["dockerd", "--iptables=false", "--bridge=" + (self.bridge or "none"),
             "--live-restore",
             "-H", "unix://" + self.sock,
             "--data-root", os.path.join(self.folder, "data"),
             "--exec-root", os.path.join(self.folder, "exec"),
             "--pidfile", os.path.join(self.folder, "dockerd.pid")],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while not (os.path.exists(self.sock) and
                   self.docker("version", "--format", "{{.Server.Version}}", check=False)):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                with open(self.log.name, errors="replace") as f:
                    raise RuntimeError("dockerd did not start: %s" % f.read()[-2000:])
            time.sleep(0.1)

    def stop(self):
        """Stop dockerd alone: its containers go on (live-restore)."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()

    def clear(self):
        """Every container removed, for the next part of a test to reuse the names."""
        ids = self.docker("ps", "-aq").split()
        if ids:
            self.docker("rm", "-f", *ids, timeout=120)

    def pid(self, container):
        return int(self.docker("inspect", "-f", "{{.State.Pid}}", container))

    def cgroup(self, container):
        """The container's v2 cgroup directory, from its main process's 0:: line."""
        with open("/proc/%d/cgroup" % self.pid(container)) as f:
            for line in f:
                if line.startswith("0::"):
                    return line[3:].strip()
        raise RuntimeError("%s has no v2 cgroup" % container)


def _docker_cgroups():
    """The cgroup folders named docker under each hierarchy (the cgroupfs driver's parent)."""
    return set(glob.glob(os.path.join(CGROUP_ROOT, "*", "docker"))) | \
        set(glob.glob(os.path.join(CGROUP_ROOT, "docker")))


def _remove_tree(path):
    for root, dirs, _ in os.walk(path, topdown=False):
        for d in dirs:
            with contextlib.suppress(OSError):
                os.rmdir(os.path.join(root, d))
    with contextlib.suppress(OSError):
        os.rmdir(path)


def _rootfs(folder):
    """A rootfs of busybox-static with the applets the containers use."""
    root = os.path.join(folder, "rootfs")
    os.makedirs(os.path.join(root, "bin"))
    shutil.copy("/bin/busybox", os.path.join(root, "bin", "busybox"))
    for applet in ("sh", "sleep", "yes", "timeout", "true", "cat", "mkfifo"):
        os.symlink("busybox", os.path.join(root, "bin", applet))
    for d in ("proc", "sys", "dev", "etc", "tmp"):
        os.makedirs(os.path.join(root, d))
    return root


# The bridge of an engine that publishes ports: a private /24 of its own, made
# and removed by the test (docker-proxy forwards a published port to it; no iptables rule).
BRIDGE_ADDRESS = "172.29.213.1/24"


def _bridge_up():
    name = "cgstatbr%d" % (os.getpid() % 100000)
    subprocess.run(["ip", "link", "add", name, "type", "bridge"], check=True)
    subprocess.run(["ip", "addr", "add", BRIDGE_ADDRESS, "dev", name], check=True)
    subprocess.run(["ip", "link", "set", name, "up"], check=True)
    return name


@contextlib.contextmanager
def engine(bridge=False):
    """A running engine with the busybox image; everything it made is gone afterwards. bridge:
    a network of its own, for containers that publish ports (-p)."""
    if not shutil.which("dockerd"):
        raise RuntimeError("dockerd is not installed (packages.txt names docker.io)")
    before = _docker_cgroups()
    folder = tempfile.mkdtemp(prefix="cgstat-docker-")
    # as /run is: others may pass through to the socket (root:docker 0660), which cgstat reaches
    # as nobody in the docker group once it has dropped root
    os.chmod(folder, 0o711)
    e = Engine(folder, _bridge_up() if bridge else None)
    try:
        e.start()
        tar = subprocess.Popen(["tar", "-C", _rootfs(folder), "-c", "."], stdout=subprocess.PIPE)
        subprocess.run([DOCKER_CLI, "-H", "unix://" + e.sock, "import", "-", IMAGE],
                       stdin=tar.stdout, stdout=subprocess.DEVNULL, check=True, timeout=120)
        tar.wait()
        yield e
    finally:
        # an engine the test stopped comes back for its containers to be removed
        if e.proc and e.proc.poll() is not None:
            with contextlib.suppress(Exception):
                e.start()
        if e.proc and e.proc.poll() is None:
            ids = e.docker("ps", "-aq", check=False).split()
            if ids:
                e.docker("rm", "-f", *ids, check=False, timeout=120)
            e.stop()
        # the containerd it started, and its shims, go with it; their mounts too
        with open("/proc/mounts") as f:
            mounts = [line.split()[1] for line in f if folder in line.split()[1]]
        for m in sorted(mounts, reverse=True):
            subprocess.run(["umount", "-l", m], check=False)
        shutil.rmtree(folder, ignore_errors=True)
        for path in _docker_cgroups() - before:
            _remove_tree(path)
        if e.bridge:
            subprocess.run(["ip", "link", "del", e.bridge], check=False)
