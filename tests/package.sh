#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# cgstat installed like a system tool (docs/metrics-endpoint.md, "Dashboard and service"):
# build the .deb with cpack, install it with apt-get as a user would, and check what it put in
# place: the binary (-V), the man page (man -w), the systemd unit (systemd-analyze verify),
# the dashboard; then run the installed binary with exactly the unit's capabilities, scrape its
# /metrics and read the ids and capabilities of each of its threads (nobody, CAP_BPF alone),
# and without each of them: without CAP_SETUID or CAP_SETGID it stays uid 0, without any other
# it must fail with one line saying what was not permitted. The package is removed at the end.
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
# every Depends entry names a library the binary links (dpkg-shlibdeps), libmicrohttpd among them
check sh -c "dpkg-deb -f '$deb' Depends | grep -q libmicrohttpd"
check sh -c "dpkg-deb -f '$deb' Depends | grep -q libbpf"
if command -v systemd-analyze >/dev/null; then
	check systemd-analyze verify "$unit"
else
	skip "systemd-analyze verify: no systemd-analyze here"
fi

# the unit's capabilities, as setpriv names them: cap_bpf -> +bpf
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit" | tr 'A-Z' 'a-z' | sed 's/cap_//g')
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
free_port() { # a loopback port no one listens on now
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
port=$(free_port)
err=$(mktemp)
trap 'rm -f "$err"; DEBIAN_FRONTEND=noninteractive apt-get remove -y cgstat >/dev/null' EXIT
run_with() { # run_with CAPS: the unit's command line on another port for 3 s, with those caps
	local set="-all"
	for c in $1; do set="$set,+$c"; done
	setpriv --bounding-set "$set" --inh-caps=-all --no-new-privs -- \
		${exec_start/127.0.0.1:9477/127.0.0.1:$port} -d 3 --no-perf 2>"$err" &
}
# refused: exit 1 (not a crash, not a sanitizer's abort) and one line saying what was not
# permitted
refused() {
	test "$1" = 1 -a "$(wc -l <"$err")" = 1 && grep -q "Operation not permitted" "$err" ||
		{ sed 's/^/      | /' "$err"; false; }
}
# serving() PID: wait until the run on $port serves cgstat_up 1 (its privileges are dropped
# before the server answers), then set $threads to its threads' count and $ids to what they
# hold, one line for all of them when they agree: "UIDS GIDS CapEff CapPrm CapBnd"
serving() {
	up=""
	threads=0
	ids=""
	for _ in $(seq 1 40); do
		up=$(curl -sf "http://127.0.0.1:$port/metrics" | grep '^cgstat_up ' || true)
		[ "$up" = "cgstat_up 1" ] && break
		sleep 0.25
	done
	[ "$up" = "cgstat_up 1" ] || return 0
	# a run that ended meanwhile leaves no threads and no ids, which the checks fail
	threads=$(ls "/proc/$1/task" 2>/dev/null | wc -l || true)
	ids=$(for s in /proc/"$1"/task/*/status; do
		awk '/^Uid:/ { u = $2 "," $3 "," $4 "," $5 } /^Gid:/ { g = $2 "," $3 "," $4 "," $5 }
		     /^CapEff:/ { e = $2 } /^CapPrm:/ { p = $2 } /^CapBnd:/ { b = $2 }
		     END { print u, g, e, p, b }' "$s" 2>/dev/null
	done | sort -u | tr '\n' ';' || true)
}
nobody=$(id -u nobody),$(id -u nobody),$(id -u nobody),$(id -u nobody)
nogroup=$(id -g nobody),$(id -g nobody),$(id -g nobody),$(id -g nobody)
root=0,0,0,0
bpf_only=0000008000000000 # CAP_BPF, the one capability the drain keeps
# with the unit's set: served, and every thread (the listener's too) is nobody with CAP_BPF
run_with "$caps"
pid=$!
serving "$pid"
wait "$pid" && rc=0 || rc=$?
check test "$up" = "cgstat_up 1" -a "$rc" = 0
check test "$threads" -ge 2 -a "$ids" = "$nobody $nogroup $bpf_only $bpf_only $bpf_only;"
for drop in $caps; do
	port=$(free_port)
	run_with "$(echo " $caps " | sed "s/ $drop / /")"
	pid=$!
	case $drop in
	setuid | setgid) # without it cgstat cannot become nobody: it serves as uid 0, CAP_BPF only
		serving "$pid"
		wait "$pid" && rc=0 || rc=$?
		check test "$rc" = 0 -a "$ids" = "$root $root $bpf_only $bpf_only $bpf_only;" # without $drop
		;;
	*)
		wait "$pid" && rc=0 || rc=$?
		check refused "$rc" # without $drop
		;;
	esac
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
