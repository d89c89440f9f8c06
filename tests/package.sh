#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# cgstat installed like a system tool (docs/metrics-endpoint.md, "Dashboard and service"):
# build the .deb with cpack, install it with apt-get as a user would, and check what it put in
# place: the binary (-V), the man page (man -w), the systemd unit (systemd-analyze verify), its
# examples, the dashboard; then run the installed binary as the installed unit runs it, and
# with each of its capabilities fewer (tests/integration/test_unit.py: an unused uid with
# exactly the unit's capabilities, under its system call filter; READY=1 once attached,
# /metrics served, one line and exit 1 without a capability). The package is removed at the end.
# Ends with "N passed, M failed, K skipped".
# Needs root; run from the repository's root (run-all.sh's "package" stage, which passes the
# build folder it made: the package is made from that build, not built again).
#
#   tests/package.sh [BUILD_DIR]    (default build-package, configured and built here)
set -euo pipefail

dir=${1:-build-package}
unit=/usr/lib/systemd/system/cgstat.service
passed=0
failed=0
skipped=0

check() {
	if "$@"; then
		echo "ok    $*"
		passed=$((passed + 1))
	else
		echo "FAIL  $*"
		failed=$((failed + 1))
	fi
}

skip() {
	echo "SKIP  $*"
	skipped=$((skipped + 1))
}

cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$dir" -j"$(nproc)" --target cgstat
(cd "$dir" && rm -f cgstat_*.deb && cpack -G DEB >/dev/null)
deb=$(ls "$PWD/$dir"/cgstat_*.deb)
echo "built $deb"
dpkg-deb -f "$deb" Package Version Depends

DEBIAN_FRONTEND=noninteractive apt-get install -y "$deb" >/dev/null
trap 'DEBIAN_FRONTEND=noninteractive apt-get remove -y cgstat >/dev/null' EXIT

version=$(sed -n 's/^project(cgstat VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
check test "$(/usr/bin/cgstat -V)" = "cgstat $version"
check test "$(man -w cgstat)" = /usr/share/man/man1/cgstat.1.gz -o \
	"$(man -w cgstat)" = /usr/share/man/man1/cgstat.1
check test -s /usr/share/cgstat/grafana/cgstat.json
# the unit's examples: /etc/default/cgstat, and the drop-in for Docker's names
check test -s /usr/share/doc/cgstat/examples/cgstat.default
check test -s /usr/share/doc/cgstat/examples/docker.conf
# every Depends entry names a library the binary links (dpkg-shlibdeps), libmicrohttpd among them
check sh -c "dpkg-deb -f '$deb' Depends | grep -q libmicrohttpd"
check sh -c "dpkg-deb -f '$deb' Depends | grep -q libbpf"
check sh -c "dpkg-deb -f '$deb' Depends | grep -q libsystemd0"
if command -v systemd-analyze >/dev/null; then
	check systemd-analyze verify "$unit"
else
	skip "systemd-analyze verify: no systemd-analyze here"
fi

# the installed binary run as the installed unit runs it (its user, capabilities, system call
# filter, options and readiness), and with each of its capabilities fewer: test_unit.py, whose
# checks count here
out=$(mktemp)
trap 'rm -f "$out"; DEBIAN_FRONTEND=noninteractive apt-get remove -y cgstat >/dev/null' EXIT
python3 tests/integration/test_unit.py --cgstat /usr/bin/cgstat --unit "$unit" \
	--examples /usr/share/doc/cgstat/examples >"$out" 2>&1 && rc=0 || rc=$?
grep -v -E '^[0-9]+ passed, [0-9]+ failed' "$out" || true
counts=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' "$out" | tail -1)
if [ -n "$counts" ]; then
	read -r p f k <<<"$counts"
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + k))
fi
# it ended without its counts, or with a status they do not explain (a crash)
if [ -z "$counts" ] || { [ "$rc" != 0 ] && [ "$f" = 0 ]; }; then
	echo "FAIL  tests/integration/test_unit.py: exit $rc"
	failed=$((failed + 1))
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
