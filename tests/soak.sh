#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tests/soak.sh DURATION: cgstat in the all-cgroups mode for DURATION seconds under churn, to
# see that it does not grow. Builds nothing: the binary is $CGSTAT (default build/cgstat); the
# fork-heavy load is the workload's churn shape when $WORKLOAD (default build/tests/workload)
# is there. Root. Beside cgstat run a loop that makes a cgroup, runs a short process in it and
# removes it, over and over, and, with the workload, 500 processes of 10 threads at a time
# forking and exiting.
#
# Every 60 s one line: elapsed seconds, cgstat's VmRSS (kB) and where it is (malloc's heap,
# other anonymous memory, the mmap'd BPF maps, files), the entries of its cgroup_slots map (BPF:
# a cgroup id per slot in use), the rows of sched-stats.csv so far. At the end a
# verdict compares the RSS at 2 minutes (the first line, if the run is shorter) with the
# final one, and after the churn stops looks for removed cgroups left in cgroup_slots; exit 0
# when the RSS grew by at most 5 % or 1024 kB, no removed cgroup was left, cgstat exited 0, no
# event was dropped and no inconsistency counted (the summary), and sched-stats.csv has a row
# for every interval (cgstat's own cgroup runs in each, so a missing second is a gap).
# DURATION is at least 180 s: the baseline is taken at 2 minutes, past the start's growth, and
# a verdict needs a minute after it.
set -euo pipefail

duration=${1:?usage: tests/soak.sh DURATION_SECONDS}
if [ "$duration" -lt 180 ]; then
	echo "soak: $duration s is too short to judge: at least 180 (the baseline is at 120 s)" >&2
	exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
cgstat=${CGSTAT:-$root/build/cgstat}
workload=${WORKLOAD:-$root/build/tests/workload}

# The cgroup2 mount point: field 5 of the mountinfo line whose type (after " - ") is cgroup2.
mount=$(awk -F ' - ' '{ split($2, after, " ") } after[1] == "cgroup2" { split($1, f, " ");
	print f[5]; exit }' /proc/self/mountinfo)
[ -n "$mount" ] || { echo "soak: no cgroup2 mount" >&2; exit 1; }
top=$mount/cgstat-soak.$$
out=$(mktemp -d /tmp/cgstat-soak.XXXXXX)
mkdir "$top"

cgstat_pid=
pids=()

remove_tree() {
	local dir=$1 sub pid
	[ -d "$dir" ] || return 0
	for sub in "$dir"/*/; do
		[ -d "$sub" ] && remove_tree "${sub%/}"
	done
	for _ in $(seq 50); do
		while read -r pid; do
			kill -9 "$pid" 2>/dev/null || true
		done < <(cat "$dir/cgroup.procs" 2>/dev/null)
		rmdir "$dir" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "soak: cannot remove $dir" >&2
}

cleanup() {
	local pid
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	if [ -n "$cgstat_pid" ] && kill -0 "$cgstat_pid" 2>/dev/null; then
		kill -INT "$cgstat_pid"
		wait "$cgstat_pid" || echo "soak: cgstat exited with status $?" >&2
	fi
	remove_tree "$top"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$cgstat" -v -q -i 1 -o "$out" 2>"$out/stderr" &
cgstat_pid=$!
for _ in $(seq 300); do
	grep -q attached "$out/stderr" && break
	kill -0 "$cgstat_pid" 2>/dev/null || { cat "$out/stderr" >&2; exit 1; }
	sleep 0.1
done
grep -q attached "$out/stderr" || { echo "soak: cgstat did not attach" >&2; exit 1; }

# The cgroup_slots map of this cgstat, found through its own file descriptors.
slots_map=
for fd in /proc/"$cgstat_pid"/fd/*; do
	[ "$(readlink "$fd")" = anon_inode:bpf-map ] || continue
	id=$(awk '$1 == "map_id:" { print $2 }' /proc/"$cgstat_pid"/fdinfo/"${fd##*/}")
	if bpftool map show id "$id" | grep -q ' name cgroup_slots '; then
		slots_map=$id
	fi
done
[ -n "$slots_map" ] || { echo "soak: cgstat's cgroup_slots map not found" >&2; exit 1; }

# cgroups made and removed one after another, each with a short process in it
(
	trap 'exit 0' TERM
	n=0
	while :; do
		dir=$top/c$n
		mkdir "$dir" || continue
		sh -c 'echo $$ > "$0/cgroup.procs" && exec true' "$dir" || true
		for _ in $(seq 20); do rmdir "$dir" 2>/dev/null && break; sleep 0.01; done
		n=$((n + 1))
	done
) &
pids+=($!)

if [ -x "$workload" ]; then
	mkdir "$top/fork"
	(
		trap 'exit 0' TERM
		while :; do
			"$workload" --cgroup "$top/fork" churn 500 10 >/dev/null || sleep 1
		done
	) &
	pids+=($!)
else
	echo "soak: no workload at $workload: cgroup churn only" >&2
fi

rss() {
	awk '$1 == "VmRSS:" { print $2 }' /proc/"$cgstat_pid"/status
}

# Where the RSS is: malloc's heap ([heap]), other anonymous memory (glibc's mmap'd chunks and
# thread arenas), the BPF maps cgstat mmaps (the snapshot array), and files (code, libraries).
rss_parts() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { name = $6 }
	     $1 == "Rss:" {
		if (name == "[heap]") heap += $2
		else if (name == "") anon += $2
		else if (name ~ /bpf-map/) bpf += $2
		else file += $2
	     }
	     END { print heap + 0, anon + 0, bpf + 0, file + 0 }' /proc/"$cgstat_pid"/smaps
}

entries() {
	bpftool -j map dump id "$slots_map" |
		python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'
}

# The ids in cgroup_slots of cgroups that do not exist (a v2 cgroup's id is its inode number).
stale_entries() {
	bpftool -j map dump id "$slots_map" | python3 -c '
import json, os, sys
alive = set()
for d, _, _ in os.walk(sys.argv[1]):
    try:
        alive.add(os.stat(d).st_ino)
    except OSError:
        pass
print(" ".join(str(e["formatted"]["key"]) for e in json.load(sys.stdin)
               if e["formatted"]["key"] not in alive))' "$mount"
}

rows() {
	echo $(($(wc -l <"$out/sched-stats.csv") - 1))
}

echo "soak: cgstat pid $cgstat_pid, output $out, cgroups under $top, $duration s"
echo "elapsed_s rss_kB heap_kB anon_kB bpf_map_kB file_kB cgroup_slots rows"
start=$SECONDS
base=
base_at=
rss_last=
next=60
while :; do
	elapsed=$((SECONDS - start))
	if ! kill -0 "$cgstat_pid" 2>/dev/null; then
		echo "soak: cgstat ended by itself after $elapsed s" >&2
		cat "$out/stderr" >&2
		cgstat_pid=
		exit 1
	fi
	if [ "$elapsed" -ge "$next" ] || [ "$elapsed" -ge "$duration" ]; then
		rss_last=$(rss)
		echo "$elapsed $rss_last $(rss_parts) $(entries) $(rows)"
		# the baseline: the first line at or after 2 minutes, else the first line
		if [ -z "$base" ] || { [ "$base_at" -lt 120 ] && [ "$elapsed" -ge 120 ]; }; then
			base=$rss_last
			base_at=$elapsed
		fi
		next=$((next + 60))
	fi
	[ "$elapsed" -ge "$duration" ] && break
	sleep 1
done

for pid in "${pids[@]}"; do
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
done
pids=()
remove_tree "$top"
# A removed cgroup's slot is freed at the first interval that sees it empty: after 3 intervals
# no removed cgroup may be left, and one still there 3 intervals later is a leak (a cgroup of
# someone else's removed just before the first look is not).
sleep 3
stale1=$(stale_entries)
sleep 3
stale=
for id in $(stale_entries); do
	case " $stale1 " in *" $id "*) stale="$stale $id" ;; esac
done
kill -INT "$cgstat_pid"
status=0
wait "$cgstat_pid" || status=$?
cgstat_pid=

growth=$((rss_last - base))
limit=$((base / 20 > 1024 ? base / 20 : 1024))
summary_figure() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], "?"))' \
		"$out/container-summary.json" "$1" 2>/dev/null || echo "?"
}
dropped=$(summary_figure droppedEvents)
inconsistent=$(summary_figure inconsistencies)
# intervals (1 s) whose end is more than 1.5 s after the previous one's
gaps=$(python3 -c '
import csv, sys
ends = sorted({int(r["epochMillis"]) for r in csv.DictReader(open(sys.argv[1]))})
print(sum(1 for a, b in zip(ends, ends[1:]) if b - a > 1500))' "$out/sched-stats.csv")
if [ "$growth" -le "$limit" ] && [ "$status" -eq 0 ] && [ -z "$stale" ] &&
	[ "$dropped" = 0 ] && [ "$inconsistent" = 0 ] && [ "$gaps" = 0 ]; then
	verdict=PASS
else
	verdict=FAIL
fi
echo "soak: $verdict: RSS $base kB at $base_at s, $rss_last kB at the end ($growth kB," \
	"limit $limit kB); cgstat exit $status;" \
	"removed cgroups left in cgroup_slots:${stale:- none}; droppedEvents $dropped;" \
	"inconsistencies $inconsistent; gaps in sched-stats.csv $gaps; rows $(rows)"
[ "$verdict" = PASS ]
