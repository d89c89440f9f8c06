#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Fetch Debian's own kernel of each suite the matrix boots, with apt and a private state
# folder: the machine's own apt configuration, lists and caches are never read or changed.
# Each suite's kernel is the one its linux-image-amd64 metapackage names today; the vmlinuz is
# taken out of the package (BTF is built into Debian's kernels, so no modules are needed).
#
#   tests/kernels/fetch.sh SUITE...      prints "SUITE VERSION VMLINUZ" a line
#
# SUITE: bullseye, bookworm, bookworm-backports, trixie, unstable. The cache is
# $CGSTAT_KERNEL_CACHE (default /var/cache/cgstat-kernels); a suite already fetched there is
# not fetched again unless CGSTAT_KERNEL_REFRESH=1.
set -euo pipefail

CACHE=${CGSTAT_KERNEL_CACHE:-/var/cache/cgstat-kernels}
MIRROR=${CGSTAT_DEBIAN_MIRROR:-}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# The mirror the machine's apt sources name for Debian, so that a machine behind its own
# mirror fetches from it too.
find_mirror() {
	local m
	m=$(grep -rhoE 'https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ \
		2>/dev/null | head -n1 | tr -d ' ')
	echo "${m:-http://deb.debian.org/debian}"
}

[ -n "$MIRROR" ] || MIRROR=$(find_mirror)
MIRROR=${MIRROR%/}

APT_DIR=$CACHE/apt
# apt_private apt-get|apt-cache ARGS...
apt_private() {
	local tool=$1
	shift
	"$tool" -q -o Dir::Etc="$APT_DIR/etc" -o Dir::Etc::SourceList="$APT_DIR/etc/sources.list" \
		-o Dir::Etc::SourceParts="$APT_DIR/etc/sources.list.d" \
		-o Dir::Etc::Parts="$APT_DIR/etc/apt.conf.d" \
		-o Dir::Etc::PreferencesParts="$APT_DIR/etc/preferences.d" \
		-o Dir::State="$APT_DIR/state" -o Dir::State::status="$APT_DIR/state/status" \
		-o Dir::Cache="$APT_DIR/cache" -o APT::Get::List-Cleanup=0 \
		-o Acquire::Languages=none -o APT::Sandbox::User=root "$@"
}

setup_apt() {
	mkdir -p "$APT_DIR"/etc/{sources.list.d,apt.conf.d,preferences.d} \
		"$APT_DIR"/state/lists/partial "$APT_DIR"/cache/archives/partial
	: >"$APT_DIR/state/status"
	{
		for s in bullseye bookworm bookworm-backports trixie unstable; do
			echo "deb [signed-by=$KEYRING] $MIRROR $s main"
		done
	} >"$APT_DIR/etc/sources.list"
	apt_private apt-get update >"$APT_DIR/update.log" 2>&1 ||
		{ cat "$APT_DIR/update.log" >&2; return 1; }
}

# The kernel package a suite's linux-image-amd64 depends on, at that suite's version.
kernel_package() {
	local suite=$1 meta
	meta=$(apt_private apt-cache show "linux-image-amd64/$suite" 2>/dev/null |
		sed -n 's/^Depends: //p' | head -n1)
	# "linux-image-6.1.0-57-amd64 (= 6.1.192-1)" or unstable's "linux-binary-… (= …)"
	echo "$meta" | tr ',' '\n' | sed -n 's/^ *\(linux-[a-z]*-[0-9][^ ]*\).*/\1/p' | head -n1
}

# download PKG SUITE DIR: the package's .deb into DIR; prints its path
download() {
	(cd "$3" && apt_private apt-get download "$1/$2" >/dev/null) ||
		{ echo "fetch.sh: cannot download $1 ($2)" >&2; return 1; }
	ls "$3/$1"_*.deb
}

fetch_suite() {
	local suite=$1 pkg dir deb bin vmlinuz release
	dir=$CACHE/$suite
	if [ -z "${CGSTAT_KERNEL_REFRESH:-}" ] && [ -f "$dir/vmlinuz" ] && [ -f "$dir/version" ]; then
		echo "$suite $(cat "$dir/version") $dir/vmlinuz"
		return 0
	fi
	[ -n "${updated:-}" ] || { setup_apt && updated=1; }
	pkg=$(kernel_package "$suite")
	[ -n "$pkg" ] || { echo "fetch.sh: no kernel package for $suite" >&2; return 1; }
	rm -rf "$dir" && mkdir -p "$dir/deb"
	deb=$(download "$pkg" "$suite" "$dir/deb")
	# Since 7.x the image package is split: the kernel itself is in linux-binary-VERSION.
	bin=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed -n 's/^ *\(linux-binary-[^ ]*\).*/\1/p')
	[ -z "$bin" ] || deb=$(download "$bin" "$suite" "$dir/deb")
	dpkg-deb -x "$deb" "$dir/root"
	# /boot/vmlinuz-RELEASE until 6.x; /usr/lib/modules/RELEASE/vmlinuz in the split packages
	vmlinuz=$(find "$dir/root/boot" "$dir/root/usr/lib/modules" -name 'vmlinuz*' 2>/dev/null |
		head -n1) || true
	[ -f "$vmlinuz" ] || { echo "fetch.sh: no vmlinuz in $deb" >&2; return 1; }
	mv "$vmlinuz" "$dir/vmlinuz"
	release=$(basename "$(dirname "$vmlinuz")")
	[ "$release" != boot ] || release=${vmlinuz##*/vmlinuz-}
	echo "$release ($(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version))" \
		>"$dir/version"
	rm -rf "$dir/root" "$dir/deb"
	echo "$suite $(cat "$dir/version") $dir/vmlinuz"
}

[ $# -gt 0 ] || { echo "usage: tests/kernels/fetch.sh SUITE..." >&2; exit 2; }
for s in "$@"; do
	case "$s" in
	bullseye | bookworm | bookworm-backports | trixie | unstable) fetch_suite "$s" ;;
	*) echo "fetch.sh: unknown suite $s" >&2; exit 2 ;;
	esac
done
