# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The Debian 12 base image the Dockerfile names (debian:bookworm-slim), made here with no
registry: debootstrap --variant=minbase from the mirror the machine's apt sources name, trimmed
as Debian's official -slim image is (no documentation, man pages or translations, and dpkg told
to leave them out of every package installed later; apt's lists and caches empty), and imported
into an engine with `docker import` under that tag.

The rootfs tarball is cached in CACHE (/var/cache/cgstat-tests/, 30 days): debootstrap takes 20 s
to a few minutes depending on the mirror, the import a few seconds."""

import glob
import os
import re
import shutil
import subprocess
import tempfile
import time

import docker_engine

TAG = "debian:bookworm-slim"
CACHE = os.environ.get("CGSTAT_TEST_CACHE", "/var/cache/cgstat-tests")
TARBALL = os.path.join(CACHE, "debian-bookworm-slim.tar")
MAX_AGE_S = 30 * 86400

# what Debian's slim images exclude (docker-library/debian, the rootfs's
# /etc/dpkg/dpkg.cfg.d/docker), so that the Dockerfile's apt-get install stays as small here as
# on a user's machine
DPKG_EXCLUDES = """\
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
"""


def mirror():
    """The first Debian mirror the machine's apt sources name (deb822 or one-line format)."""
    texts = []
    for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*")):
        if path.endswith((".list", ".sources")) and os.path.isfile(path):
            with open(path) as f:
                texts.append(f.read())
    for text in texts:
        for m in re.finditer(r"^(?:URIs:\s*|deb\s+(?:\[[^\]]*\]\s+)?)(\S+)", text, re.M):
            uri = m.group(1)
            if "security" not in uri and uri.startswith(("http://", "https://")):
                return uri
    return "http://deb.debian.org/debian"


def _empty(folder):
    for name in os.listdir(folder) if os.path.isdir(folder) else []:
        path = os.path.join(folder, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)


def _trim(root):
    """The rootfs as -slim's is: docs (but each package's copyright), man pages, translations
    gone; apt's lists and caches empty."""
    for folder in ("usr/share/man", "usr/share/info", "usr/share/locale", "usr/share/groff",
                   "usr/share/lintian", "var/lib/apt/lists", "var/cache/apt"):
        _empty(os.path.join(root, folder))
    for top, dirs, files in os.walk(os.path.join(root, "usr/share/doc"), topdown=False):
        for name in files:
            if name != "copyright":
                os.unlink(os.path.join(top, name))
        for name in dirs:
            path = os.path.join(top, name)
            if os.path.islink(path):
                os.unlink(path)
            elif not os.listdir(path):
                os.rmdir(path)
    os.makedirs(os.path.join(root, "var/lib/apt/lists/partial"), exist_ok=True)
    os.makedirs(os.path.join(root, "var/cache/apt/archives/partial"), exist_ok=True)
    with open(os.path.join(root, "etc/dpkg/dpkg.cfg.d/docker"), "w") as f:
        f.write(DPKG_EXCLUDES)


def tarball(log=print):
    """The cached rootfs tarball, made when missing or older than 30 days: its path."""
    if os.path.exists(TARBALL) and time.time() - os.path.getmtime(TARBALL) < MAX_AGE_S:
        return TARBALL
    os.makedirs(CACHE, exist_ok=True)
    work = tempfile.mkdtemp(prefix="cgstat-debootstrap-", dir=CACHE)
    try:
        root = os.path.join(work, "rootfs")
        url = mirror()
        log("debootstrap --variant=minbase bookworm from %s (cached in %s)" % (url, CACHE))
        out = subprocess.run(["debootstrap", "--variant=minbase", "bookworm", root, url],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=1800)
        if out.returncode:
            raise RuntimeError("debootstrap failed: %s" % out.stdout.decode(errors="replace")[-2000:])
        _trim(root)
        part = TARBALL + ".part"
        subprocess.run(["tar", "--numeric-owner", "--xattrs", "-C", root, "-cf", part, "."],
                       check=True, timeout=600)
        os.replace(part, TARBALL)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return TARBALL


def import_into(engine, log=print):
    """TAG in engine (a docker_engine.Engine), from the cached tarball."""
    path = tarball(log)
    with open(path, "rb") as f:
        subprocess.run([docker_engine.DOCKER_CLI, "-H", "unix://" + engine.sock, "import",
                        "--change", 'CMD ["bash"]', "-", TAG],
                       stdin=f, stdout=subprocess.DEVNULL, check=True, timeout=600)
