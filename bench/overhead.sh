#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The overhead benchmark (docs/performance.md): what cgstat costs the workload it watches, next
# to no tracing, an empty BPF floor, a bpftrace peer and `perf stat -a -G`; and what cgstat
# itself costs per interval with 1,000 active cgroups. Prints a Markdown table on stdout and
# saves the raw numbers as CSV. Needs root; installs what it lacks with apt-get and builds
# cgstat into build-bench/ (or --build-dir) first.
#
#   bench/overhead.sh [--rounds N] [--quick] [--drain-only | --pools-only] [--out DIR]
#                     [--build-dir DIR]
#                     [--compare CGSTAT]
#
# Each round runs every scenario once under every configuration, the configurations in an
# order that rotates from round to round and scenario to scenario, so that a slow spell of the
# machine is spread over all of them instead of landing on one; the table quotes medians.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=5
ROUNDS_GIVEN=0
QUICK=0
DRAIN_ONLY=0
POOLS_ONLY=0
OUT=""
REF=""
BUILD_DIR=${BUILD_DIR:-$REPO/build-bench}

usage() {
	cat <<EOF
Usage: bench/overhead.sh [--rounds N] [--quick] [--drain-only | --pools-only] [--out DIR]
                         [--build-dir DIR] [--compare CGSTAT]
  --rounds N       rounds of every scenario under every configuration (default 5)
  --quick          small workloads and one round (unless --rounds): a smoke run
  --drain-only     the 1,000-cgroup drain scenario alone (with --compare: the reference
                   binary's cgstat-all and cgstat-all-listen beside)
  --pools-only     the thread-pool scenarios alone (10,000 threads, and churn beside them)
  --out DIR        where the CSV and the table go (default bench/results/)
  --build-dir DIR  cgstat's build directory (default build-bench/, or \$BUILD_DIR)
  --compare CGSTAT another cgstat binary (say, a build of the previous commit), run as the
                   configurations ref-all and ref-one in the same rounds (and, in the
                   thread-pool scenarios, ref-light-all and ref-light-one): a change's cost
                   measured side by side
EOF
}

while [ $# -gt 0 ]; do
	case "$1" in
	--rounds)
		[ $# -ge 2 ] && [[ "$2" =~ ^[1-9][0-9]*$ ]] || { usage >&2; exit 2; }
		ROUNDS=$2; ROUNDS_GIVEN=1; shift 2 ;;
	--quick) QUICK=1; shift ;;
	--drain-only) DRAIN_ONLY=1; shift ;;
	--pools-only) POOLS_ONLY=1; shift ;;
	--out)
		[ $# -ge 2 ] || { usage >&2; exit 2; }
		OUT=$2; shift 2 ;;
	--build-dir)
		[ $# -ge 2 ] || { usage >&2; exit 2; }
		BUILD_DIR=$2; shift 2 ;;
	--compare)
		[ $# -ge 2 ] || { usage >&2; exit 2; }
		REF=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
[ "$QUICK" = 1 ] && [ "$ROUNDS_GIVEN" = 0 ] && ROUNDS=1
OUT=${OUT:-$REPO/bench/results}

say() { echo "overhead: $*" >&2; }
die() { echo "overhead: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (BPF, perf -a, cgroups)"

# Workload sizes: each run lasts one to two seconds in the full benchmark. A run repeats its
# load (pingpong in blocks, perf bench as several invocations) and keeps the fastest
# repetition: on a shared machine other jobs only ever add time to a repetition, so the
# fastest is the best estimate of the load's own cost; the median over rounds then absorbs
# what is left. The mean of the repetitions is saved too.
if [ "$QUICK" = 1 ]; then
	PP_ROUNDS=50000; PP_BLOCKS=2
	MSG_GROUPS=4; MSG_LOOPS=50; MSG_REPEATS=2
	DRAIN_CGROUPS=1000; DRAIN_INTERVALS=3
else
	PP_ROUNDS=400000; PP_BLOCKS=8
	MSG_GROUPS=10; MSG_LOOPS=100; MSG_REPEATS=3
	DRAIN_CGROUPS=1000; DRAIN_INTERVALS=5
fi
PP_WARMUP=10000
# Each drain task spins 20 us every 100 ms: 1,000 of them keep about a tenth of the machine
# busy, enough for every cgroup to have a row in every interval without starving cgstat.
DRAIN_WORK_US=20
DRAIN_PERIOD_MS=100
# Thread pools (issue 12): in one cgroup, sleepers that wake once a second and busy threads that
# spin 50 us every 10 ms (200 of them keep one CPU busy); the same load, smaller, beside a churn
# of cgroups made and removed one after another, each with a short process in it (as the soak).
THREADS_SLEEPERS=10000
THREADS_BUSY=200
THREADS_WORK_US=50
CHURN_SLEEPERS=1000
CHURN_BUSY=20
PERF_EVENTS=task-clock,context-switches,cpu-migrations,page-faults

# The workload runs on CPU 1 and the tracers' user space on CPU 0, so that what the ping-pong
# pays is what happens in the scheduler path, not a tracer's drain stealing its CPU.
if [ "$(nproc)" -ge 2 ]; then WORK_CPU=1; TRACER_CPU=0; else WORK_CPU=0; TRACER_CPU=0; fi

# --- what the benchmark needs --------------------------------------------------------------

need_install=()
for tool in cmake clang bpftool pkg-config python3 taskset; do
	command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] || need_install=(packages)
done
command -v perf >/dev/null && perf version >/dev/null 2>&1 || need_install+=(linux-perf)
command -v bpftrace >/dev/null || need_install+=(bpftrace)
if [ ${#need_install[@]} -gt 0 ]; then
	say "installing: ${need_install[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	pkgs=(bpftrace linux-perf)
	if [ "${need_install[0]}" = packages ]; then
		mapfile -t -O ${#pkgs[@]} pkgs <"$REPO/packages.txt"
	fi
	apt-get install -y -qq "${pkgs[@]}" >&2
fi

# Configured every time: the build globs user/**/*.c, and a new file needs a new configure.
say "building cgstat and the benchmark's programs in $BUILD_DIR"
cmake -S "$REPO" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
cmake --build "$BUILD_DIR" -j"$(nproc)" --target cgstat cgstat-floor pingpong drainload threadload >&2
CGSTAT=$BUILD_DIR/cgstat
FLOOR=$BUILD_DIR/bench/cgstat-floor
PINGPONG=$BUILD_DIR/bench/pingpong
DRAINLOAD=$BUILD_DIR/bench/drainload
THREADLOAD=$BUILD_DIR/bench/threadload
PEER=$REPO/bench/peers/cgstat-peer.bt

# The cgroup v2 mount, from mountinfo: pure or hybrid, never a fixed path.
V2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") break; if ($(i + 1) == "cgroup2") { print $5; exit } }' /proc/self/mountinfo)
[ -n "$V2" ] || die "no cgroup2 mount in /proc/self/mountinfo"
# perf resolves -G names under the mount that has perf_event: v2 where no v1 hierarchy holds it.
if awk '$0 ~ / - cgroup / && $NF ~ /(^|,)perf_event(,|$)/ { found = 1 } END { exit !found }' \
	/proc/self/mountinfo; then
	die "perf_event is bound to a v1 hierarchy here; perf -G could not name v2 cgroups"
fi

# --- scratch cgroups, state, and cleanup ---------------------------------------------------

STAMP=$(date +%Y%m%d-%H%M%S)
START_UTC=$(date -u '+%Y-%m-%d %H:%M')
NAME=cgstat-bench.$$
SCRATCH=$V2/$NAME
WORK=$(mktemp -d /tmp/cgstat-bench.XXXXXX)
TRACER_PID=""
DRAIN_PID=""
CHURN_PID=""
SCRAPER_PID=""
KEEP_WORK=1

cleanup() {
	set +e
	if [ -n "$TRACER_PID" ]; then
		kill -INT "$TRACER_PID" 2>/dev/null
		# Up to 5 s to exit (a zombie has exited: it only waits to be reaped below).
		for _ in $(seq 50); do
			state=$(awk '{ print $3 }' /proc/"$TRACER_PID"/stat 2>/dev/null)
			[ -z "$state" ] || [ "$state" = Z ] && break
			sleep 0.1
		done
		kill -KILL "$TRACER_PID" 2>/dev/null
		wait "$TRACER_PID" 2>/dev/null
	fi
	for pid in $SCRAPER_PID $DRAIN_PID $CHURN_PID; do
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	if [ -d "$SCRATCH" ]; then
		# Anything still in a scratch cgroup (a workload cut short by Ctrl-C) keeps it busy.
		for _ in 1 2 3 4 5; do
			left=$(find "$SCRATCH" -name cgroup.procs -exec cat {} + 2>/dev/null)
			[ -z "$left" ] && break
			# shellcheck disable=SC2086 # one pid per word
			kill -KILL $left 2>/dev/null
			sleep 0.2
		done
		find "$SCRATCH" -depth -type d -exec rmdir {} + 2>/dev/null
		[ -d "$SCRATCH" ] && echo "overhead: could not remove $SCRATCH" >&2
	fi
	if [ "$KEEP_WORK" = 1 ]; then
		echo "overhead: logs kept in $WORK" >&2
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir "$SCRATCH" "$SCRATCH/one" "$SCRATCH/a" "$SCRATCH/b" "$SCRATCH/msg" "$SCRATCH/drain" \
	"$SCRATCH/threads" "$SCRATCH/churnload" "$SCRATCH/churn"
for ((i = 0; i < DRAIN_CGROUPS; i++)); do mkdir "$SCRATCH/drain/c$i"; done

now_us() { echo "${EPOCHREALTIME/./}"; }

# CPU time of a process in ns, all its threads, from /proc/PID/task/*/schedstat: the same
# sum_exec_runtime that getrusage reports, but readable while the process runs.
cpu_ns() {
	{ cat /proc/"$1"/task/*/schedstat 2>/dev/null || true; } |
		awk '{ s += $1 } END { printf "%d\n", s }'
}

# --- configurations ------------------------------------------------------------------------

CONFIGS=(baseline floor cgstat-all cgstat-one light-all light-one bpftrace perf-stat)
if [ -n "$REF" ]; then
	[ -x "$REF" ] || die "--compare: $REF is not an executable"
	CONFIGS+=(ref-all ref-one)
fi

# The cgstat binary a configuration runs: the reference one for ref-*.
cgstat_of() {
	case "$1" in
	ref-*) echo "$REF" ;;
	*) echo "$CGSTAT" ;;
	esac
}

# The cgroups a scenario's load runs in: the first is the one "cgstat-one" watches; perf
# stat -G counts them all.
scenario_cgroups() {
	case "$1" in
	pingpong-same) echo one ;;
	pingpong-cross) echo "a b" ;;
	messaging) echo msg ;;
	drain) echo drain/c0 ;;
	threads) echo threads ;;
	churn) echo churnload ;;
	esac
}

# wait_for PID LOG PATTERN: until PATTERN is in LOG; fails if PID dies or a minute passes.
wait_for() {
	local pid=$1 log=$2 pattern=$3 deadline=$((SECONDS + 60))
	while ! grep -q "$pattern" "$log" 2>/dev/null; do
		if ! kill -0 "$pid" 2>/dev/null; then
			cat "$log" >&2
			die "tracer exited before it attached (log above)"
		fi
		[ $SECONDS -lt $deadline ] || die "no '$pattern' from the tracer in 60 s"
		sleep 0.005
	done
}

# start_tracer CONFIG SCENARIO: sets TRACER_PID, ATTACH_MS and TLOG. For perf-stat, attached
# means counting: it starts disabled and is enabled through its control fifo, which it
# acknowledges once the counters run.
start_tracer() {
	local config=$1 scen=$2 t0 cgs first
	cgs=$(scenario_cgroups "$scen")
	first=${cgs%% *}
	TLOG=$WORK/$config.$scen.log
	TDIR=$WORK/$config.$scen.out
	rm -rf "$TLOG" "$TDIR"
	ATTACH_MS=""
	TRACER_PID=""
	t0=$(now_us)
	case "$config" in
	baseline)
		return 0 ;;
	floor)
		taskset -c $TRACER_CPU "$FLOOR" >"$TLOG" 2>&1 &
		TRACER_PID=$!
		wait_for $TRACER_PID "$TLOG" "cgstat-floor: attached" ;;
	cgstat-all | ref-all)
		taskset -c $TRACER_CPU "$(cgstat_of "$config")" -q -v -i 1 -o "$TDIR" >"$TLOG" 2>&1 &
		TRACER_PID=$!
		wait_for $TRACER_PID "$TLOG" "cgstat: attached" ;;
	cgstat-all-noout)
		taskset -c $TRACER_CPU "$CGSTAT" -q -v -i 1 >"$TLOG" 2>&1 &
		TRACER_PID=$!
		wait_for $TRACER_PID "$TLOG" "cgstat: attached" ;;
	cgstat-all-listen | cgstat-all-listen-idle | ref-all-listen)
		taskset -c $TRACER_CPU "$(cgstat_of "$config")" -q -v -i 1 -o "$TDIR" \
			--listen "127.0.0.1:$LISTEN_PORT" >"$TLOG" 2>&1 &
		TRACER_PID=$!
		wait_for $TRACER_PID "$TLOG" "cgstat: attached"
		[ "$config" = cgstat-all-listen-idle ] || start_scraper ;;
	cgstat-one | ref-one)
		taskset -c $TRACER_CPU "$(cgstat_of "$config")" -q -v -i 1 -o "$TDIR" \
			-c "bench=$SCRATCH/$first" \
			>"$TLOG" 2>&1 &
		TRACER_PID=$!
		wait_for $TRACER_PID "$TLOG" "cgstat: attached" ;;
	light-all | light-one | ref-light-all | ref-light-one)
		# issue 42: nothing on the switches, every task's counters read each interval
		local watch=()
		[ "${config#ref-}" = light-one ] && watch=(-c "bench=$SCRATCH/$first")
		taskset -c $TRACER_CPU "$(cgstat_of "$config")" -q -v -i 1 -o "$TDIR" --light \
			"${watch[@]}" \
			>"$TLOG" 2>&1 &
		TRACER_PID=$!
		wait_for $TRACER_PID "$TLOG" "cgstat: attached" ;;
	cgstat-threads)
		# issue 13: the one watched cgroup broken down by pool and thread
		taskset -c $TRACER_CPU "$CGSTAT" -q -v -i 1 -o "$TDIR" --threads \
			-c "bench=$SCRATCH/$first" >"$TLOG" 2>&1 &
		TRACER_PID=$!
		wait_for $TRACER_PID "$TLOG" "cgstat: attached" ;;
	cgstat-all-threads)
		# issue 41: every cgroup broken down by pool and thread
		taskset -c $TRACER_CPU "$CGSTAT" -q -v -i 1 -o "$TDIR" --threads >"$TLOG" 2>&1 &
		TRACER_PID=$!
		wait_for $TRACER_PID "$TLOG" "cgstat: attached" ;;
	bpftrace)
		# bpftrace 0.17 attaches tracepoint probes through tracefs, which this host may
		# not mount: a mount namespace of its own gets one without touching the host's.
		# shellcheck disable=SC2016 # $0 is for the inner shell
		BPFTRACE_MAP_KEYS_MAX=65536 taskset -c $TRACER_CPU unshare -m sh -c \
			'mountpoint -q /sys/kernel/tracing ||
			 mount -t tracefs nodev /sys/kernel/tracing || exit 1
			 exec bpftrace "$0"' "$PEER" >"$TLOG" 2>&1 &
		TRACER_PID=$!
		wait_for $TRACER_PID "$TLOG" "cgstat-peer: attached" ;;
	perf-stat)
		local ev="" g="" c e ackfd
		for c in $cgs; do
			for e in ${PERF_EVENTS//,/ }; do
				ev+=${ev:+,}$e
				g+=${g:+,}$NAME/$c
			done
		done
		rm -f "$WORK/ctl" "$WORK/ack"
		mkfifo "$WORK/ctl" "$WORK/ack"
		taskset -c $TRACER_CPU perf stat -a -x, -o "$TLOG.csv" -e "$ev" -G "$g" \
			--control "fifo:$WORK/ctl,$WORK/ack" -D -1 >"$TLOG" 2>&1 &
		TRACER_PID=$!
		exec {ackfd}<>"$WORK/ack"
		timeout 60 sh -c "echo enable > '$WORK/ctl'" || die "perf stat took no enable command"
		local reply=""
		read -r -t 60 -u $ackfd reply || true
		exec {ackfd}<&-
		[ "$reply" = ack ] || { cat "$TLOG" >&2; die "perf stat did not enable its counters"; }
		;;
	esac
	ATTACH_MS=$(awk -v a="$t0" -v b="$(now_us)" 'BEGIN { printf "%.1f", (b - a) / 1000 }')
}

# stop_tracer: the tracer must still be alive after the load (one that died would look free)
# and must exit cleanly on SIGINT. Sets TRACER_SWITCHES for perf-stat: the context switches
# it counted in the scenario's cgroups.
stop_tracer() {
	local config=$1 rc=0
	TRACER_SWITCHES=""
	[ -n "$TRACER_PID" ] || return 0
	kill -0 "$TRACER_PID" 2>/dev/null || { cat "$TLOG" >&2; die "$config died during the run"; }
	if [ -n "$SCRAPER_PID" ]; then
		kill -TERM "$SCRAPER_PID"
		wait "$SCRAPER_PID" 2>/dev/null || true
		SCRAPER_PID=""
		# a scraper that never got the page would leave the rendering out of the figure
		grep -q '^cgstat_cpu_seconds_total{' "$WORK/scrape.txt" ||
			{ cat "$TLOG" >&2; die "$config: /metrics served no per-container sample"; }
	fi
	kill -INT "$TRACER_PID"
	wait "$TRACER_PID" || rc=$?
	TRACER_PID=""
	# perf stat, having printed its counts, exits as killed by the signal (128 + 2).
	[ $rc = 0 ] || { [ "$config" = perf-stat ] && [ $rc = 130 ]; } ||
		{ cat "$TLOG" >&2; die "$config exited with status $rc on SIGINT"; }
	if [ "$config" = perf-stat ]; then
		TRACER_SWITCHES=$(awk -F, '$3 == "context-switches" { s += $1 } END { print s + 0 }' \
			"$TLOG.csv")
	fi
}

# --- loads ---------------------------------------------------------------------------------

# Runs a command in a cgroup, on some CPUs, and prints its context switches as the kernel
# counted them (wait4's rusage covers the command and every descendant it reaped).
RUN_PY='
import os, sys
cg, cpus, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
with open(cg + "/cgroup.procs", "w") as f:
    f.write("0")
if cpus:
    os.sched_setaffinity(0, {int(c) for c in cpus.split(",")})
sys.stdout.flush()
pid = os.fork()
if pid == 0:
    os.execvp(argv[0], argv)
_, status, ru = os.wait4(pid, 0)
print("switches=%d" % (ru.ru_nvcsw + ru.ru_nivcsw), flush=True)
sys.exit(os.waitstatus_to_exitcode(status))
'

# run_load SCENARIO: sets OP_NS (time per operation, ns: the fastest repetition), OP_MEAN_NS
# (the mean over the repetitions) and OP_SWITCHES (switches per operation).
run_load() {
	local out="" i
	OP_NS="" OP_MEAN_NS="" OP_SWITCHES=""
	case "$1" in
	pingpong-same)
		out=$("$PINGPONG" -w $PP_WARMUP -k $PP_BLOCKS -a "$SCRATCH/one" -c $WORK_CPU \
			$PP_ROUNDS) ;;
	pingpong-cross)
		out=$("$PINGPONG" -w $PP_WARMUP -k $PP_BLOCKS -a "$SCRATCH/a" -b "$SCRATCH/b" \
			-c $WORK_CPU -C $WORK_CPU $PP_ROUNDS) ;;
	messaging)
		for ((i = 0; i < MSG_REPEATS; i++)); do
			out+=$(python3 -c "$RUN_PY" "$SCRATCH/msg" "" \
				perf bench sched messaging -g $MSG_GROUPS -l $MSG_LOOPS)$'\n'
		done ;;
	esac
	case "$1" in
	pingpong-*)
		OP_NS=$(sed -n 's/.* ns_per_round_trip=\([0-9.]*\).*/\1/p' <<<"$out")
		OP_MEAN_NS=$(sed -n 's/.*mean_ns_per_round_trip=\([0-9.]*\).*/\1/p' <<<"$out")
		OP_SWITCHES=$(sed -n 's/.*switches_per_round_trip=\([0-9.]*\).*/\1/p' <<<"$out") ;;
	messaging)
		read -r OP_NS OP_MEAN_NS OP_SWITCHES < <(awk -v n=$MSG_REPEATS '
			/Total time:/ { t = $3 * 1e9; k++; s += t; if (k == 1 || t < min) min = t }
			/^switches=/ { sub(/^switches=/, ""); sw += $0 }
			END { if (k) printf "%.0f %.0f %.0f\n", min, s / k, sw / n }' <<<"$out") ||
			true ;;
	esac
	[ -n "${OP_NS:-}" ] && [ -n "${OP_MEAN_NS:-}" ] && [ -n "${OP_SWITCHES:-}" ] ||
		{ echo "$out" >&2; die "cannot parse $1's output"; }
}

# Operations during which a tracer counts: pingpong's warm-up round trips too.
ops_per_run() {
	case "$1" in
	pingpong-same | pingpong-cross) echo $((PP_ROUNDS + PP_WARMUP)) ;;
	messaging) echo $MSG_REPEATS ;;
	esac
}

CSV=$WORK/raw.csv
echo "round,scenario,config,position,time_per_op_ns,mean_time_per_op_ns,switches_per_op,attach_ms,tracer_switches_per_op,cpu_ms_per_interval,startup_cpu_ms,peak_rss_kb,rows_per_interval,switches_per_s" >"$CSV"

run_switch_scenario() {
	local round=$1 scen=$2 config=$3 pos=$4 tsw=""
	start_tracer "$config" "$scen"
	run_load "$scen"
	stop_tracer "$config"
	[ -n "$TRACER_SWITCHES" ] &&
		tsw=$(awk -v s="$TRACER_SWITCHES" -v n="$(ops_per_run "$scen")" \
			'BEGIN { printf "%.4f", s / n }')
	echo "$round,$scen,$config,$pos,$OP_NS,$OP_MEAN_NS,$OP_SWITCHES,$ATTACH_MS,$tsw,,,,," >>"$CSV"
	say "round $round $scen $config: $OP_NS ns/op (mean $OP_MEAN_NS), $OP_SWITCHES switches/op${ATTACH_MS:+, attached in $ATTACH_MS ms}"
}

# Drain: one tracer watching 1,000 busy cgroups; its own CPU per interval after the first
# interval (the start is reported apart, as startup_cpu_ms), and its peak RSS. cgstat-all
# writes its CSV files (-o) as in the other scenarios; cgstat-all-noout computes the same rows
# and writes nothing, which tells the drain apart from the formatting.
DRAIN_CONFIGS=(cgstat-all cgstat-all-noout cgstat-all-listen cgstat-all-listen-idle cgstat-one
	light-all bpftrace)
# --drain-only: cgstat's own configurations, what a change to the drain or --listen moves
[ "$DRAIN_ONLY" = 1 ] && DRAIN_CONFIGS=(cgstat-all cgstat-all-noout cgstat-all-listen
	cgstat-all-listen-idle)
[ -n "$REF" ] && DRAIN_CONFIGS+=(ref-all ref-all-listen)

# cgstat-all-listen: cgstat-all with --listen, scraped once a second as a Prometheus set to a 1 s
# scrape interval would (through bash's /dev/tcp: no client to install). The listener's thread
# renders the page, so its work counts in cgstat's CPU beside the drain's. cgstat-all-listen-idle:
# the same never scraped, what --listen adds to the drain itself.
LISTEN_PORT=19477
start_scraper() {
	rm -f "$WORK/scrape.txt"
	(
		while sleep 1; do
			exec 3<>"/dev/tcp/127.0.0.1/$LISTEN_PORT" || continue
			printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
			cat <&3 >"$WORK/scrape.txt"
			exec 3<&-
		done
	) &
	SCRAPER_PID=$!
}

# The context switches of the machine since boot (/proc/stat's ctxt).
switches() { awk '$1 == "ctxt" { print $2 }' /proc/stat; }

run_drain() {
	local round=$1 config=$2 pos=$3 scen=${4:-drain} c0 c1 t0 t1 s0 s1 startup hwm cpu rows=""
	local sps
	start_tracer "$config" "$scen"
	startup=$(awk -v n="$(cpu_ns $TRACER_PID)" 'BEGIN { printf "%.1f", n / 1e6 }')
	sleep 1.5
	c0=$(cpu_ns $TRACER_PID); t0=$(now_us); s0=$(switches)
	sleep $DRAIN_INTERVALS
	c1=$(cpu_ns $TRACER_PID); t1=$(now_us); s1=$(switches)
	hwm=$(awk '/^VmHWM:/ { print $2 }' /proc/$TRACER_PID/status)
	stop_tracer "$config"
	cpu=$(awk -v c="$((c1 - c0))" -v t="$((t1 - t0))" 'BEGIN { printf "%.3f", c / 1e6 / (t / 1e6) }')
	sps=$(awk -v s="$((s1 - s0))" -v t="$((t1 - t0))" 'BEGIN { printf "%.0f", s / (t / 1e6) }')
	if [ -f "$TDIR/sched-stats.csv" ]; then
		# Rows per complete interval (the median over intervals): every busy cgroup
		# should have one.
		rows=$(awk -F, 'NR > 1 { n[$1]++ } END { for (k in n) print n[k] }' \
			"$TDIR/sched-stats.csv" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	fi
	echo "$round,$scen,$config,$pos,,,,$ATTACH_MS,,$cpu,$startup,$hwm,$rows,$sps" >>"$CSV"
	say "round $round $scen $config: $cpu ms CPU per interval, peak RSS $hwm kB, attached in $ATTACH_MS ms, $sps switches/s${rows:+, $rows rows per interval}"
}

# Thread pools: threadload in the scenario's cgroup, and each pool configuration measured as
# the drain is (the tracer's CPU per interval), one cgroup watched or all, and one watched with
# --threads (its pools and threads: issue 13), and all with --threads (issue 41).
POOL_CONFIGS=(cgstat-all cgstat-one cgstat-threads cgstat-all-threads light-all light-one)
[ -n "$REF" ] && POOL_CONFIGS+=(ref-light-all ref-light-one)

run_pool_scenario() {
	local round=$1 scen=$2 sleepers=$3 busy=$4 k n=${#POOL_CONFIGS[@]}
	"$THREADLOAD" "$SCRATCH/$(scenario_cgroups "$scen")" "$sleepers" "$busy" $THREADS_WORK_US \
		>"$WORK/threadload.log" 2>&1 &
	DRAIN_PID=$!
	wait_for $DRAIN_PID "$WORK/threadload.log" "threadload: ready"
	for ((k = 0; k < n; k++)); do
		run_drain "$round" "${POOL_CONFIGS[(round + k) % n]}" $k "$scen"
	done
	kill -TERM $DRAIN_PID
	wait $DRAIN_PID
	DRAIN_PID=""
}

# cgroups made and removed one after another under churn/, each with a short process in it.
# The names go on from round to round: a cgroup whose process's exit was slow to release it
# stays behind (removed at the end with the rest), and a name reused after it would fail to be
# made. The loop stops at a file rather than a signal: once, a TERM sent to it was not acted on,
# and the benchmark waited for it for ten minutes.
CHURN_NEXT=0
start_churn() {
	rm -f "$WORK/churn.stop"
	(
		n=$CHURN_NEXT
		while [ ! -e "$WORK/churn.stop" ]; do
			dir=$SCRATCH/churn/c$n
			n=$((n + 1))
			mkdir "$dir" || continue
			sh -c 'echo $$ > "$0/cgroup.procs" && exec true' "$dir" || true
			for _ in $(seq 20); do rmdir "$dir" 2>/dev/null && break; sleep 0.01; done
		done
	) &
	CHURN_PID=$!
	CHURN_NEXT=$((CHURN_NEXT + 100000))
}

stop_churn() {
	touch "$WORK/churn.stop"
	wait $CHURN_PID
	CHURN_PID=""
}

# --- the rounds ----------------------------------------------------------------------------

SCENARIOS=(pingpong-same pingpong-cross messaging)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
# Others' load on a shared machine lands on single runs as noise; medians absorb some, not all.
awk '$1 > 0.5 { exit 1 }' /proc/loadavg ||
	say "warning: load average $LOAD_START before the start: expect noisy figures"
say "$ROUNDS round(s); logs in $WORK"
[ "$DRAIN_ONLY" = 1 ] || [ "$POOLS_ONLY" = 1 ] && SCENARIOS=()
for ((r = 1; r <= ROUNDS; r++)); do
	for ((s = 0; s < ${#SCENARIOS[@]}; s++)); do
		n=${#CONFIGS[@]}
		for ((k = 0; k < n; k++)); do
			run_switch_scenario $r "${SCENARIOS[s]}" "${CONFIGS[(r + s + k) % n]}" $k
		done
	done
	if [ "$POOLS_ONLY" = 0 ]; then
		"$DRAINLOAD" "$SCRATCH/drain" $DRAIN_CGROUPS $DRAIN_WORK_US $DRAIN_PERIOD_MS \
			>"$WORK/drainload.log" 2>&1 &
		DRAIN_PID=$!
		wait_for $DRAIN_PID "$WORK/drainload.log" "drainload: ready"
		n=${#DRAIN_CONFIGS[@]}
		for ((k = 0; k < n; k++)); do
			run_drain $r "${DRAIN_CONFIGS[(r + k) % n]}" $k
		done
		kill -TERM $DRAIN_PID
		wait $DRAIN_PID || die "drainload failed"
		DRAIN_PID=""
	fi
	[ "$DRAIN_ONLY" = 1 ] && continue
	run_pool_scenario $r threads $THREADS_SLEEPERS $THREADS_BUSY
	start_churn
	run_pool_scenario $r churn $CHURN_SLEEPERS $CHURN_BUSY
	stop_churn
done

# --- each BPF program's own time, from the kernel's BPF statistics ---------------------------

# kernel.bpf_stats_enabled makes the kernel time every BPF program run (two clock reads and two
# additions a run, on every program of the machine), so it is on only in this phase: one run of
# each ping-pong under cgstat-all and cgstat-one, with bpftool's run_cnt and run_time_ns of
# cgstat's programs read before and after the load. That run's time per
# round trip, beside the rounds' median, says what the statistics cost.
STATS_CSV=$WORK/bpf-stats.csv
echo "scenario,config,program,runs,run_time_ns,seconds,time_per_op_ns" >"$STATS_CSV"

# cgstat's programs, by their names (cg_*): Debian's bpftool 7.1 shows no pids of the programs'
# holders, so no other cgstat may run meanwhile (the benchmark runs one tracer at a time).
prog_stats() {
	bpftool -j prog show | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    if p.get("name", "").startswith("cg_"):
        print(p["name"], p.get("run_cnt", 0), p.get("run_time_ns", 0))'
}

run_bpf_stats() {
	local scen=$1 config=$2 t0 t1 old
	old=$(sysctl -n kernel.bpf_stats_enabled)
	start_tracer "$config" "$scen"
	sysctl -q -w kernel.bpf_stats_enabled=1
	prog_stats >"$WORK/stats0"
	t0=$(now_us)
	run_load "$scen"
	t1=$(now_us)
	prog_stats >"$WORK/stats1"
	sysctl -q -w kernel.bpf_stats_enabled="$old"
	stop_tracer "$config"
	awk -v s="$scen" -v c="$config" -v sec="$(awk -v a="$t0" -v b="$t1" \
		'BEGIN { printf "%.3f", (b - a) / 1e6 }')" -v op="$OP_NS" \
		'NR == FNR { n[$1] = $2; t[$1] = $3; next }
		 { printf "%s,%s,%s,%d,%d,%s,%s\n", s, c, $1, $2 - n[$1], $3 - t[$1], sec, op }' \
		"$WORK/stats0" "$WORK/stats1" >>"$STATS_CSV"
	say "bpf stats $scen $config: $OP_NS ns/op with the statistics on"
}

for scen in pingpong-same pingpong-cross; do
	[ "$DRAIN_ONLY" = 1 ] || [ "$POOLS_ONLY" = 1 ] && break
	for config in cgstat-all cgstat-one; do
		run_bpf_stats $scen $config
	done
done

# --- the table -----------------------------------------------------------------------------

mkdir -p "$OUT"
cp "$CSV" "$OUT/overhead-$STAMP.csv"
[ "$DRAIN_ONLY" = 1 ] || [ "$POOLS_ONLY" = 1 ] || cp "$STATS_CSV" "$OUT/bpf-stats-$STAMP.csv"
META="$START_UTC to $(date -u '+%H:%M') UTC; $(uname -r); $(nproc) CPUs; \
cgstat $(git -C "$REPO" describe --always --dirty 2>/dev/null || echo '?'); \
$(perf version 2>/dev/null); $(bpftrace --version 2>/dev/null); $ROUNDS round(s); \
load average at start $LOAD_START, at end $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$CSV" "$META" "$PP_ROUNDS $PP_BLOCKS" \
	"$MSG_GROUPS $MSG_LOOPS $MSG_REPEATS" \
	"$DRAIN_CGROUPS" "$DRAIN_INTERVALS" "$DRAIN_WORK_US" "$DRAIN_PERIOD_MS" "$PERF_EVENTS" \
	"$THREADS_SLEEPERS $THREADS_BUSY $CHURN_SLEEPERS $CHURN_BUSY" "$STATS_CSV" <<'PY' | tee "$OUT/overhead-$STAMP.md"
import csv
import statistics
import sys

path, meta, pp, msg, dn, di, dw, dp, events, pools, stats_path = sys.argv[1:]
ts, tb, cs, cb = pools.split()
pp, pb = pp.split()
mg, ml, mr = msg.split()
rows = list(csv.DictReader(open(path)))
med = statistics.median


def vals(scen, config, col):
    return [float(r[col]) for r in rows
            if r["scenario"] == scen and r["config"] == config and r[col] != ""]


configs = ["baseline", "floor", "cgstat-all", "cgstat-one", "light-all", "light-one", "bpftrace",
           "perf-stat"]
configs += [c for c in ("ref-all", "ref-one") if any(r["config"] == c for r in rows)]
names = {
    "pingpong-same": "(1) ping-pong, one cgroup, pinned: µs per round trip",
    "pingpong-cross": "(2) ping-pong, a cgroup per end, pinned: µs per round trip",
    "messaging": "(3) `perf bench sched messaging -g %s -l %s`: ms per run" % (mg, ml),
}
scale = {"pingpong-same": 1e3, "pingpong-cross": 1e3, "messaging": 1e6}
over = {}

print("Run: %s." % meta)
print()
print("Loads: `pingpong` %s round trips in %s blocks, "
      "`perf bench sched messaging` %s times; each run's time is its fastest block or "
      "repetition. perf stat events: %s. Drain: %s cgroups, each task spinning %s µs every "
      "%s ms, %s intervals of 1 s." % (pp, pb, mr, events, dn, dw, dp, di))
print()
print("| scenario | configuration | time per op (median) | min–max | overhead | "
      "added ns per switch | start to attached (ms) |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
for scen in ["pingpong-same", "pingpong-cross", "messaging"]:
    base = vals(scen, "baseline", "time_per_op_ns")
    if not base:
        continue
    b = med(base)
    sw = med(vals(scen, "baseline", "switches_per_op"))
    for config in configs:
        t = vals(scen, config, "time_per_op_ns")
        if not t:
            continue
        m = med(t)
        att = vals(scen, config, "attach_ms")
        if config == "baseline":
            o = "—"
            ns = "(%s switches per op, %.0f per second)" % (
                "%.2f" % sw if sw < 100 else "%.0f" % sw, sw / (b / 1e9))
        else:
            over[(scen, config)] = 100 * (m - b) / b
            o = "%+.1f %%" % over[(scen, config)]
            ns = "%+.0f" % ((m - b) / sw)
        print("| %s | %s | %.3f | %.3f–%.3f | %s | %s | %s |" % (
            names[scen], config, m / scale[scen], min(t) / scale[scen],
            max(t) / scale[scen], o, ns, "%.0f" % med(att) if att else "—"))

titles = {
    "drain": "(4) drain, %s active cgroups" % dn,
    "threads": "(5) thread pools: %s sleeping and %s busy threads in one cgroup" % (ts, tb),
    "churn": "(6) churn: cgroups made and removed beside %s sleeping and %s busy threads"
             % (cs, cb),
}
drain = {}
for scen in ["drain", "threads", "churn"]:
    print()
    print("| %s | tracer CPU per 1 s interval (ms, median) | min–max | CPU to start (ms) | "
          "peak RSS (MB, max) | start to attached (ms, median; max) | rows per interval | "
          "switches per second (median) |" % titles[scen])
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for config in ["cgstat-all", "cgstat-all-noout", "cgstat-all-listen",
                   "cgstat-all-listen-idle", "ref-all", "ref-all-listen", "cgstat-one",
                   "cgstat-threads", "cgstat-all-threads", "light-all", "light-one",
                   "ref-light-all", "ref-light-one", "bpftrace"]:
        c = vals(scen, config, "cpu_ms_per_interval")
        if not c:
            continue
        rss = vals(scen, config, "peak_rss_kb")
        att = vals(scen, config, "attach_ms")
        st = vals(scen, config, "startup_cpu_ms")
        rw = vals(scen, config, "rows_per_interval")
        sps = vals(scen, config, "switches_per_s")
        drain[(scen, config)] = (med(c), max(rss) / 1024, med(att), max(att))
        print("| %s | %.2f | %.2f–%.2f | %.0f | %.1f | %.0f; %.0f | %s | %s |" % (
            config, med(c), min(c), max(c), med(st), max(rss) / 1024, med(att), max(att),
            "%.0f" % med(rw) if rw else "—", "%.0f" % med(sps) if sps else "—"))

print()
print("Each program's own time with `kernel.bpf_stats_enabled` (one run per row; the time per "
      "round trip of that run, beside the rounds' median without the statistics, is what they "
      "cost):")
print()
print("| scenario | configuration | program | runs per second | ns per run | time per op with "
      "stats (µs) | median without (µs) |")
print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
for r in csv.DictReader(open(stats_path)):
    runs, sec = int(r["runs"]), float(r["seconds"])
    if not runs:
        continue
    off = vals(r["scenario"], r["config"], "time_per_op_ns")
    print("| %s | %s | %s | %.0f | %.0f | %.3f | %s |" % (
        r["scenario"], r["config"], r["program"], runs / sec, int(r["run_time_ns"]) / runs,
        float(r["time_per_op_ns"]) / 1e3, "%.3f" % (med(off) / 1e3) if off else "—"))

print()
print("| target | limit | measured | holds |")
print("| --- | --- | ---: | --- |")


def target(what, limit, measured, ok):
    print("| %s | %s | %s | %s |" % (what, limit, measured, "yes" if ok else "**no**"))


# issue 12's targets: each mode, each ping-pong; one cgroup watched no dearer than all
for scen, limit in (("pingpong-same", 6), ("pingpong-cross", 8)):
    for config in ("cgstat-all", "cgstat-one"):
        if (scen, config) in over:
            v = over[(scen, config)]
            target("%s, %s (default events)" % (names[scen], config), "≤ %d %%" % limit,
                   "%+.1f %%" % v, v <= limit)
    if (scen, "cgstat-all") in over and (scen, "cgstat-one") in over:
        a, o = over[(scen, "cgstat-all")], over[(scen, "cgstat-one")]
        target("%s: one cgroup watched no dearer than all" % names[scen],
               "≤ %+.1f %%" % a, "%+.1f %%" % o, o <= a)
if ("pingpong-cross", "cgstat-all") in over and ("pingpong-cross", "perf-stat") in over:
    v, p = over[("pingpong-cross", "cgstat-all")], over[("pingpong-cross", "perf-stat")]
    target("cross-cgroup ping-pong, cgstat below `perf stat -a -G` (same events)",
           "< %+.1f %%" % p, "%+.1f %%" % v, v < p)
# issue 42's: --light below the floor, and within the noise of the baseline (the spread of its
# rounds, max - min over the median)
for scen in ("pingpong-same", "pingpong-cross"):
    base = vals(scen, "baseline", "time_per_op_ns")
    if not base:
        continue
    noise = 100 * (max(base) - min(base)) / med(base)
    for config in ("light-all", "light-one"):
        if (scen, config) not in over:
            continue
        v = over[(scen, config)]
        if (scen, "floor") in over:
            f = over[(scen, "floor")]
            target("%s, %s: below the floor" % (names[scen], config), "< %+.1f %%" % f,
                   "%+.1f %%" % v, v < f)
        target("%s, %s: within the baseline's noise" % (names[scen], config),
               "≤ %.1f %% (its rounds' spread)" % noise, "%+.1f %%" % v, v <= noise)
for scen in ("threads", "churn"):
    for config in ("cgstat-all", "cgstat-one", "cgstat-threads", "cgstat-all-threads",
                   "light-all", "light-one"):
        if (scen, config) in drain:
            c = drain[(scen, config)][0]
            target("%s, %s: cgstat CPU per interval" % (titles[scen], config), "≤ 5 ms",
                   "%.2f ms" % c, c <= 5)
if ("drain", "cgstat-all") in drain:
    c, rss, att, attmax = drain[("drain", "cgstat-all")]
    target("drain, %s active cgroups: cgstat CPU per interval" % dn, "≤ 5 ms",
           "%.2f ms" % c, c <= 5)
    target("peak RSS (drain)", "≤ 32 MB", "%.1f MB" % rss, rss <= 32)
    target("start to attached (drain, median)", "< 500 ms", "%.0f ms" % att, att < 500)
PY
KEEP_WORK=0
say "saved $OUT/overhead-$STAMP.csv and $OUT/overhead-$STAMP.md"
