#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# What a change costs each BPF program, per run (docs/performance.md, "A change's cost per
# program"): two cgstat binaries, A and B, attached at the same time beside the pinned
# ping-pong, with kernel.bpf_stats_enabled on; each program's run_time_ns / run_cnt of A and
# of B over the same window. Run one after the other, two builds differ by the VM's speed from
# minute to minute (±10 % here); side by side they see the same switches at the same speed.
# The program attached first runs on colder caches (10 to 20 ns dearer), so the order alternates
# from round to round and the summary is over pairs of rounds.
#
#   bench/bpf-ab.sh [--rounds N] [--mode all|one] [--scenario same|cross] [--build-dir DIR]
#                   [--a-args ARGS] [--b-args ARGS] A B
#
# A and B may be one binary run two ways: `--b-args --threads build/cgstat build/cgstat` is what
# --threads adds to each program.
#
# Needs root, and a build of the benchmark's loads (bench/overhead.sh makes one in build-bench/).
# No other BPF user with programs named cg_sched_* may run meanwhile.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=8
MODE=all
SCEN=same
BUILD_DIR=${BUILD_DIR:-$REPO/build-bench}
ROUND_TRIPS=400000
A_ARGS=""
B_ARGS=""

usage() {
	cat <<EOF
Usage: bench/bpf-ab.sh [--rounds N] [--mode all|one] [--scenario same|cross] [--build-dir DIR] A B
  A, B             two cgstat binaries (say, builds of the previous commit and of this one)
  --rounds N       rounds, even (default 8); A is attached first in odd rounds, B in even ones
  --mode M         all: every cgroup (default); one: -c on the ping-pong's (first) cgroup
  --scenario S     same: both ends in one cgroup (default); cross: a cgroup per end
  --build-dir DIR  where bench/pingpong was built (default build-bench/, or \$BUILD_DIR)
  --a-args ARGS, --b-args ARGS
                   more options for A or B, split at spaces (say, --threads)
EOF
}

while [ $# -gt 0 ]; do
	case "$1" in
	--rounds)
		[ $# -ge 2 ] && [[ "$2" =~ ^[1-9][0-9]*$ ]] && [ $(($2 % 2)) = 0 ] ||
			{ usage >&2; exit 2; }
		ROUNDS=$2; shift 2 ;;
	--mode)
		[ $# -ge 2 ] && [[ "$2" =~ ^(all|one)$ ]] || { usage >&2; exit 2; }
		MODE=$2; shift 2 ;;
	--scenario)
		[ $# -ge 2 ] && [[ "$2" =~ ^(same|cross)$ ]] || { usage >&2; exit 2; }
		SCEN=$2; shift 2 ;;
	--build-dir)
		[ $# -ge 2 ] || { usage >&2; exit 2; }
		BUILD_DIR=$2; shift 2 ;;
	--a-args)
		[ $# -ge 2 ] || { usage >&2; exit 2; }
		A_ARGS=$2; shift 2 ;;
	--b-args)
		[ $# -ge 2 ] || { usage >&2; exit 2; }
		B_ARGS=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	-*) usage >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# = 2 ] || { usage >&2; exit 2; }
A=$(realpath "$1")
B=$(realpath "$2")
PINGPONG=$BUILD_DIR/bench/pingpong
die() { echo "bpf-ab: $*" >&2; exit 1; }
[ -x "$A" ] && [ -x "$B" ] || die "A and B must be executables"
[ -x "$PINGPONG" ] || die "no $PINGPONG: build the benchmark first (bench/overhead.sh --quick)"
[ "$(nproc)" -ge 2 ] || die "needs 2 CPUs: the tracers run on CPU 0, the ping-pong on CPU 1"

V2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") break; if ($(i + 1) == "cgroup2") { print $5; exit } }' /proc/self/mountinfo)
[ -n "$V2" ] || die "no cgroup2 mount in /proc/self/mountinfo"
SCRATCH=$V2/cgstat-bench.$$
WORK=$(mktemp -d)
STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)
PIDS=()

cleanup() {
	local p
	sysctl -q -w kernel.bpf_stats_enabled="$STATS_WAS"
	for p in "${PIDS[@]}"; do
		kill -INT "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	rmdir "$SCRATCH"/one "$SCRATCH"/a "$SCRATCH"/b "$SCRATCH" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$SCRATCH"/one "$SCRATCH"/a "$SCRATCH"/b

# id name run_cnt run_time_ns of every program named cg_sched_*
prog_stats() {
	bpftool -j prog show | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    if p.get("name", "").startswith("cg_sched_"):
        print(p["id"], p["name"], p.get("run_cnt", 0), p.get("run_time_ns", 0))'
}

start() {
	local bin=$1 log=$2 more=$3 i
	local args=(-q -v -i 1)
	# shellcheck disable=SC2206 # split at spaces on purpose: options, no file names
	args+=($more)
	if [ "$MODE" = one ]; then
		args+=(-c "bench=$SCRATCH/$([ "$SCEN" = same ] && echo one || echo a)")
	fi
	taskset -c 0 "$bin" "${args[@]}" >"$log" 2>&1 &
	PIDS+=($!)
	for ((i = 0; i < 400; i++)); do
		grep -q "cgstat: attached" "$log" && return 0
		kill -0 "${PIDS[-1]}" 2>/dev/null || die "$bin exited: $(cat "$log")"
		sleep 0.05
	done
	die "$bin did not attach in 20 s"
}

echo "round,first,program,a_ns_per_run,b_ns_per_run,runs,ns_per_round_trip" >"$WORK/rows.csv"
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then first=A; else first=B; fi
	if [ $first = A ]; then start "$A" "$WORK/a.log" "$A_ARGS"; else start "$B" "$WORK/b.log" "$B_ARGS"; fi
	prog_stats | awk '{ print $1 }' >"$WORK/first.ids"
	if [ $first = A ]; then start "$B" "$WORK/b.log" "$B_ARGS"; else start "$A" "$WORK/a.log" "$A_ARGS"; fi
	sleep 1
	sysctl -q -w kernel.bpf_stats_enabled=1
	prog_stats >"$WORK/s0"
	if [ "$SCEN" = same ]; then
		out=$("$PINGPONG" -w 10000 -k 8 -a "$SCRATCH/one" -c 1 $ROUND_TRIPS)
	else
		out=$("$PINGPONG" -w 10000 -k 8 -a "$SCRATCH/a" -b "$SCRATCH/b" -c 1 $ROUND_TRIPS)
	fi
	prog_stats >"$WORK/s1"
	sysctl -q -w kernel.bpf_stats_enabled="$STATS_WAS"
	kill -INT "${PIDS[@]}"
	wait "${PIDS[@]}" || die "a tracer failed: $(cat "$WORK"/a.log "$WORK"/b.log)"
	PIDS=()
	ns=$(sed -n 's/.*ns_per_round_trip=\([0-9.]*\).*/\1/p' <<<"$out")
	awk -v r=$r -v first=$first -v ns="$ns" '
		FILENAME ~ /first.ids$/ { f[$1] = 1; next }
		FILENAME ~ /s0$/ { n[$1] = $3; t[$1] = $4; next }
		{
			runs = $3 - n[$1]
			if (runs <= 0) next
			who = (($1 in f) == (first == "A")) ? "a" : "b"
			v[who, $2] = ($4 - t[$1]) / runs
			c[$2] = runs
		}
		END {
			for (p in c)
				printf "%d,%s,%s,%.1f,%.1f,%d,%s\n", r, first, p, v["a", p], v["b", p], c[p], ns
		}' "$WORK/first.ids" "$WORK/s0" "$WORK/s1" >>"$WORK/rows.csv"
	echo "bpf-ab: round $r of $ROUNDS done ($ns ns a round trip)" >&2
done

cat "$WORK/rows.csv"
echo
python3 - "$WORK/rows.csv" "$MODE" "$SCEN" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f"mode {sys.argv[2]}, scenario {sys.argv[3]}: ns a run, medians over rounds; B - A as the")
print("median of the pairs of rounds' means (each pair has A first once and B first once)")
print()
print("| program | runs a round | A | B | B - A | B - A per pair |")
print("| --- | ---: | ---: | ---: | ---: | --- |")
for prog in sorted({r["program"] for r in rows}):
    rs = sorted((r for r in rows if r["program"] == prog), key=lambda r: int(r["round"]))
    a = [float(r["a_ns_per_run"]) for r in rs]
    b = [float(r["b_ns_per_run"]) for r in rs]
    pairs = [((b[i] - a[i]) + (b[i + 1] - a[i + 1])) / 2 for i in range(0, len(rs) - 1, 2)]
    runs = statistics.median(int(r["runs"]) for r in rs)
    print(f"| `{prog}` | {runs:,.0f} | {statistics.median(a):.1f} | {statistics.median(b):.1f} "
          f"| {statistics.median(pairs):+.1f} | {' '.join(f'{p:+.1f}' for p in pairs)} |")
EOF
