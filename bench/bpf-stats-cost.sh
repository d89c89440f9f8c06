#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# What --bpf-stats costs (docs/performance.md, "What --bpf-stats costs"). The kernel's BPF
# statistics time every run of every BPF program on the machine (two clock reads and a per-CPU
# update a run), so with them on each context switch pays for timing the programs that run at
# it. The pinned ping-pong (bench/pingpong: both ends on CPU 1, one cgroup) runs with nothing
# beside it, with cgstat (every cgroup, -q -i 1, on CPU 0) and with cgstat --bpf-stats, the
# three in an order that rotates from round to round; the table gives each one's median time a
# round trip and the difference the statistics make, in ns a switch, both as the difference of
# the medians and as the median of each round's own difference (its two runs a few seconds
# apart, which a VM's speed from minute to minute moves less).
#
#   bench/bpf-stats-cost.sh [--rounds N] [--round-trips N] [--build-dir DIR] [--out DIR]
#
# Needs root; builds cgstat and pingpong into build-bench/ (or --build-dir) first. No other
# tool may turn the statistics on meanwhile (kernel.bpf_stats_enabled is checked at the start).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=10
ROUND_TRIPS=400000
BLOCKS=8
OUT=""
BUILD_DIR=${BUILD_DIR:-$REPO/build-bench}

usage() {
	cat <<EOF
Usage: bench/bpf-stats-cost.sh [--rounds N] [--round-trips N] [--build-dir DIR] [--out DIR]
  --rounds N       rounds of the three configurations (default 10)
  --round-trips N  timed round trips a run, a multiple of $BLOCKS (default 400000)
  --build-dir DIR  cgstat's build directory (default build-bench/, or \$BUILD_DIR)
  --out DIR        where the CSV and the table go (default bench/results/)
EOF
}

while [ $# -gt 0 ]; do
	case "$1" in
	--rounds)
		[ $# -ge 2 ] && [[ "$2" =~ ^[1-9][0-9]*$ ]] || { usage >&2; exit 2; }
		ROUNDS=$2; shift 2 ;;
	--round-trips)
		[ $# -ge 2 ] && [[ "$2" =~ ^[1-9][0-9]*$ ]] && [ $(($2 % BLOCKS)) = 0 ] ||
			{ usage >&2; exit 2; }
		ROUND_TRIPS=$2; shift 2 ;;
	--build-dir)
		[ $# -ge 2 ] || { usage >&2; exit 2; }
		BUILD_DIR=$2; shift 2 ;;
	--out)
		[ $# -ge 2 ] || { usage >&2; exit 2; }
		OUT=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
OUT=${OUT:-$REPO/bench/results}
die() { echo "bpf-stats-cost: $*" >&2; exit 1; }
say() { echo "bpf-stats-cost: $*" >&2; }
[ "$(id -u)" = 0 ] || die "needs root (BPF, cgroups)"
[ "$(nproc)" -ge 2 ] || die "needs 2 CPUs: cgstat runs on CPU 0, the ping-pong on CPU 1"
[ "$(sysctl -n kernel.bpf_stats_enabled)" = 0 ] ||
	die "kernel.bpf_stats_enabled is on: the runs without --bpf-stats would be timed too"

say "building cgstat and pingpong in $BUILD_DIR"
cmake -S "$REPO" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
cmake --build "$BUILD_DIR" -j"$(nproc)" --target cgstat pingpong >&2
CGSTAT=$BUILD_DIR/cgstat
PINGPONG=$BUILD_DIR/bench/pingpong

V2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") break; if ($(i + 1) == "cgroup2") { print $5; exit } }' /proc/self/mountinfo)
[ -n "$V2" ] || die "no cgroup2 mount in /proc/self/mountinfo"
SCRATCH=$V2/cgstat-bench.$$
WORK=$(mktemp -d)
TRACER_PID=""

# cgstat is stopped with SIGTERM, which it takes as SIGINT: bash starts a background command
# with SIGINT ignored, and one sent before cgstat blocks it for itself (a start slowed by a busy
# machine) would be lost, and the wait for its exit with it.
cleanup() {
	if [ -n "$TRACER_PID" ]; then
		kill -TERM "$TRACER_PID" 2>/dev/null && wait "$TRACER_PID" 2>/dev/null
	fi
	rmdir "$SCRATCH" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir "$SCRATCH"

# run_once CONFIG: one timed ping-pong beside the configuration; sets NS, MEAN_NS, SWITCHES
run_once() {
	local config=$1 log=$WORK/cgstat.log out deadline=$((SECONDS + 60)) args=(-q -v -i 1)
	TRACER_PID=""
	if [ "$config" != none ]; then
		[ "$config" = stats ] && args+=(--bpf-stats)
		taskset -c 0 "$CGSTAT" "${args[@]}" >"$log" 2>&1 &
		TRACER_PID=$!
		until grep -q "cgstat: attached" "$log"; do
			kill -0 "$TRACER_PID" 2>/dev/null || die "cgstat exited: $(cat "$log")"
			[ $SECONDS -lt $deadline ] || die "cgstat did not attach in 60 s"
			sleep 0.05
		done
	fi
	out=$("$PINGPONG" -w 10000 -k $BLOCKS -a "$SCRATCH" -c 1 "$ROUND_TRIPS")
	if [ -n "$TRACER_PID" ]; then
		kill -TERM "$TRACER_PID"
		wait "$TRACER_PID" || die "cgstat exited with status $? on SIGTERM: $(cat "$log")"
		TRACER_PID=""
		# with the statistics on, cgstat says what they measured: kept for the table
		[ "$config" = stats ] && { grep -q "BPF programs over" "$log" ||
			die "cgstat --bpf-stats printed no table: $(cat "$log")"; }
		[ "$config" = stats ] && sed -n 's/^cgstat:   //p' "$log" >"$WORK/table.$ROUND"
	fi
	NS=$(sed -n 's/.* ns_per_round_trip=\([0-9.]*\).*/\1/p' <<<"$out")
	MEAN_NS=$(sed -n 's/.*mean_ns_per_round_trip=\([0-9.]*\).*/\1/p' <<<"$out")
	SWITCHES=$(sed -n 's/.*switches_per_round_trip=\([0-9.]*\).*/\1/p' <<<"$out")
	[ -n "$NS" ] && [ -n "$SWITCHES" ] || die "cannot parse pingpong's output: $out"
}

STAMP=$(date +%Y%m%d-%H%M%S)
START_UTC=$(date -u '+%Y-%m-%d %H:%M')
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
CSV=$WORK/rows.csv
CONFIGS=(none plain stats)
echo "round,config,position,ns_per_round_trip,mean_ns_per_round_trip,switches_per_round_trip" \
	>"$CSV"
for ((ROUND = 1; ROUND <= ROUNDS; ROUND++)); do
	for ((k = 0; k < 3; k++)); do
		config=${CONFIGS[(ROUND + k) % 3]}
		run_once "$config"
		echo "$ROUND,$config,$k,$NS,$MEAN_NS,$SWITCHES" >>"$CSV"
		say "round $ROUND $config: $NS ns a round trip (mean $MEAN_NS), $SWITCHES switches"
	done
done
[ "$(sysctl -n kernel.bpf_stats_enabled)" = 0 ] || die "kernel.bpf_stats_enabled is on at the end"

mkdir -p "$OUT"
cp "$CSV" "$OUT/bpf-stats-cost-$STAMP.csv"
META="$START_UTC to $(date -u '+%H:%M') UTC; $(uname -r); $(nproc) CPUs; \
cgstat $(git -C "$REPO" describe --always --dirty 2>/dev/null || echo '?'); $ROUNDS rounds of \
$ROUND_TRIPS round trips in $BLOCKS blocks; load average at start $LOAD_START, at end \
$(cut -d' ' -f1-3 /proc/loadavg)"
TRIPS=$((ROUND_TRIPS + 10000))
python3 - "$CSV" "$META" "$WORK/table.$ROUNDS" $TRIPS <<'PY' | tee "$OUT/bpf-stats-cost-$STAMP.md"
import csv
import statistics
import sys

path, meta, table, trips = sys.argv[1:]
rows = list(csv.DictReader(open(path)))
med = statistics.median
by = {c: {int(r["round"]): float(r["ns_per_round_trip"]) for r in rows if r["config"] == c}
      for c in ("none", "plain", "stats")}
sw = med(float(r["switches_per_round_trip"]) for r in rows if r["config"] == "none")
names = {"none": "nothing beside it", "plain": "cgstat", "stats": "cgstat --bpf-stats"}
print("Run: %s." % meta)
print()
print("| configuration | ns a round trip (median) | min–max | over nothing, ns a switch |")
print("| --- | ---: | ---: | ---: |")
for c in ("none", "plain", "stats"):
    v = list(by[c].values())
    over = "—" if c == "none" else "%+.1f" % ((med(v) - med(by["none"].values())) / sw)
    print("| %s | %.1f | %.1f–%.1f | %s |" % (names[c], med(v), min(v), max(v), over))
pairs = [(by["stats"][r] - by["plain"][r]) / sw for r in sorted(by["stats"]) if r in by["plain"]]
diff = (med(by["stats"].values()) - med(by["plain"].values())) / sw
# the last --bpf-stats run's table, over its ping-pong's round trips (warm-up included; the few
# hundred runs of its start and stop are left in)
prog = {line.split()[0]: line.split() for line in open(table)}
runs, run_ms = int(prog["(all)"][1]), float(prog["(all)"][2])
switches = int(prog["cg_sched_switch"][1])
print()
print("--bpf-stats: %+.1f ns a switch as the median of the rounds' differences (%s), %+.1f by "
      "the medians; %.2f switches a round trip." % (med(pairs), " ".join("%+.1f" % p for p in pairs),
                                                   diff, sw))
print()
print("The programs, timed, took %.1f ns a switch (the table's run time over cg_sched_switch's "
      "runs): the statistics add %.0f %% of that. %.2f timed runs a round trip: %+.1f ns a run."
      % (run_ms * 1e6 / switches, 100 * med(pairs) / (run_ms * 1e6 / switches),
         runs / int(trips), med(pairs) * sw / (runs / int(trips))))
print()
print("The last round's cgstat --bpf-stats, as it said at exit:")
print()
print("```")
print(open(table).read().rstrip())
print("```")
PY
