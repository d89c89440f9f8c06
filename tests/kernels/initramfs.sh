#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Build the guests' initramfs from the project's own build: cgstat and the test workload with
# the shared libraries they link (taken from this machine, as ldd names them), busybox-static,
# Debian's python3 with the part of its standard library the checks import, the integration
# tests' harness and checks (tests/integration, tests/kernels/guest_checks.py), the terminfo
# the live view needs, and tests/kernels/guest.sh as /init.
#
#   tests/kernels/initramfs.sh BUILD_DIR OUT.cpio.gz
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: tests/kernels/initramfs.sh BUILD_DIR OUT.cpio.gz" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "$1" && pwd)
OUT=$2
BUSYBOX=/bin/busybox
# busybox-static's: the guest has no libraries of its own for busybox to link
! ldd "$BUSYBOX" >/dev/null 2>&1 || { echo "initramfs.sh: needs busybox-static" >&2; exit 1; }

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
# mktemp's 0700 would be the guest's /: cgstat, nobody once attached, could reach no file
chmod 0755 "$root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp,run,etc}
chmod 1777 "$root/tmp"

# copy_libs FILE: each library FILE links, at its own path (none for a static FILE)
copy_libs() {
	local lib
	for lib in $( (ldd "$1" 2>/dev/null || true) | grep -oE '/[^ ]+' || true); do
		[ -e "$root$lib" ] || install -D -m 0755 "$(readlink -f "$lib")" "$root$lib"
	done
}

# copy_with_libs FILE DEST: FILE at DEST, and its libraries
copy_with_libs() {
	install -D -m 0755 "$1" "$root/$2"
	copy_libs "$1"
}

cp "$BUSYBOX" "$root/bin/busybox"
copy_with_libs "$BUILD/cgstat" bin/cgstat
copy_with_libs "$BUILD/tests/workload" bin/workload
# the "capabilities" check runs cgstat as nobody with a chosen capability set
copy_with_libs "$(command -v setpriv)" bin/setpriv
# python3: the interpreter, its standard library less what no check imports, and the libraries
# its extension modules link
PY=$(readlink -f /usr/bin/python3)
PYLIB=/usr/lib/$(basename "$PY")
copy_with_libs "$PY" usr/bin/python3
mkdir -p "$root$PYLIB"
tar -C "$PYLIB" -c --exclude=__pycache__ --exclude='./test' --exclude='./idlelib' \
	--exclude='./tkinter' --exclude='./ensurepip' --exclude='./lib2to3' --exclude='./pydoc_data' \
	--exclude='./distutils' --exclude='./config-*' --exclude='./site-packages' \
	--exclude='./dist-packages' --exclude='./asyncio' --exclude='./unittest' \
	--exclude='./turtledemo' . | tar -C "$root$PYLIB" -x
for so in "$PYLIB"/lib-dynload/*.so; do
	copy_libs "$so"
done
mkdir -p "$root/tests"
cp -r "$HERE/../integration" "$HERE/../kernels" "$root/tests/"
rm -rf "$root"/tests/*/__pycache__
for t in linux vt100 xterm; do
	f=$(find /lib/terminfo /usr/share/terminfo -name "$t" 2>/dev/null | head -n1)
	[ -n "$f" ] && install -D -m 0644 "$f" "$root/usr/share/terminfo/${t:0:1}/$t"
done
install -m 0755 "$HERE/guest.sh" "$root/init"
(cd "$root" && find . | cpio --quiet -o -H newc | gzip -1) >"$OUT"
