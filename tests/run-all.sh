#!/bin/sh
# Build cgstat and run its tests, as CI does. Run from the repository's root, as root (the
# integration tests load BPF and make scratch cgroups).
#
#   tests/run-all.sh [--quick | --full]
#
# (default, the README's test line and .ci/run; about 20 minutes on 2 CPUs) every stage: the
#     normal build with the unit tests and every integration test against the kernel's own
#     accounting (the long run for CGSTAT_LONGRUN_SECONDS, 70 here); Debian 12's 6.1 kernel
#     booted under QEMU with the core checks run inside it, and Debian 11's 5.10 for the
#     refusal (tests/kernels/); the .deb made from that build, installed and run with its
#     unit's capabilities; a build with AddressSanitizer and UBSan running the unit tests, the
#     integration tests of user-space paths, and report and compare over the runs the normal
#     stage kept; libFuzzer on every parser of outside input, CGSTAT_FUZZ_TIME seconds each
#     (8 here).
# --quick (the inner loop: under 5 minutes from a built tree) the normal build, the unit tests
#     and the integration tests labelled "quick", which touch every output once.
# --full (before a release) everything above, and the 10-minute long run, every Debian
#     suite's kernel, every integration test sanitized, 2 minutes of fuzzing a target, and
#     test_serial's 10 runs a shape.
#
# Every stage runs even when one before it failed, so that a sanitizer or fuzz failure is not
# hidden behind another. The end says each stage's time and counts, each skipped check, and
# "N passed, M failed, K skipped" (tests/summarize.py); the script fails if anything did.
set -u
jobs=$(nproc)
tier=${1:-ci}
case "$tier" in
--quick | --full | ci) ;;
*)
	echo "usage: tests/run-all.sh [--quick | --full]" >&2
	exit 2
	;;
esac
if [ "$tier" = --full ]; then
	longrun=600 fuzz_time=120 kernels=--all sanitized="" serial_runs=10
else
	longrun=70 fuzz_time=6 kernels="" sanitized="-L sanitize" serial_runs=5
fi
export CGSTAT_LONGRUN_SECONDS="${CGSTAT_LONGRUN_SECONDS:-$longrun}"
export CGSTAT_SERIAL_RUNS="${CGSTAT_SERIAL_RUNS:-$serial_runs}"
fuzz_time=${CGSTAT_FUZZ_TIME:-$fuzz_time}

logs=build/run-all
rm -rf "$logs"
mkdir -p "$logs"
n=0

# build DIR [CMAKE_ARGS...]: configured and built; BUILD_TARGET, if set, alone
build() {
	dir=$1
	shift
	cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" &&
		cmake --build "$dir" -j"$jobs" ${BUILD_TARGET:+--target "$BUILD_TARGET"}
}

# stage NAME COMMAND...: run it, its output shown and kept, its status and time noted
stage() {
	n=$((n + 1))
	base=$logs/$(printf %02d $n)-$1
	shift
	echo "=== ${base#"$logs"/??-}"
	start=$(date +%s)
	{
		"$@"
		echo $? >"$base.rc"
	} 2>&1 | tee "$base.log"
	echo $(($(date +%s) - start)) >"$base.seconds"
	echo "=== ${base#"$logs"/??-}: $(cat "$base.seconds") s, exit $(cat "$base.rc")"
}

# ctest_stage NAME BUILD_DIR CTEST_ARGS...: a stage of ctest, its full log kept for the counts
ctest_stage() {
	name=$1
	dir=$2
	shift 2
	rm -f "$dir/Testing/Temporary/LastTest.log"
	stage "$name" ctest --test-dir "$dir" --output-on-failure --no-tests=error "$@"
	cp "$dir/Testing/Temporary/LastTest.log" "$base.ctest" 2>/dev/null
}

stage build build build
if [ "$tier" = --quick ]; then
	ctest_stage tests build -L quick
else
	ctest_stage tests build
	# Debian's own kernels booted under QEMU, the same checks run in each guest
	stage kernels python3 tests/kernels/matrix.py --build build $kernels
	# the .deb made from the build above, installed with apt-get, run with its unit's
	# capabilities, removed
	stage package tests/package.sh build

	# a sanitizer report aborts the run that made it (tests/CMakeLists.txt sets ASAN_OPTIONS
	# and UBSAN_OPTIONS for each test); report and compare run over the runs kept above
	stage sanitize-build build build-sanitize -DCGSTAT_SANITIZE=ON \
		-DCGSTAT_REUSE_RUNS="$PWD/build/runs"
	ctest_stage sanitize-tests build-sanitize -LE long $sanitized

	# libFuzzer on every parser of outside input, a bounded time each
	export CC=clang
	BUILD_TARGET=fuzz_all
	stage fuzz-build build build-fuzz -DCGSTAT_FUZZ=ON -DCGSTAT_FUZZ_TIME="$fuzz_time"
	BUILD_TARGET=
	ctest_stage fuzz build-fuzz -L fuzz -j"$jobs"
fi

python3 tests/summarize.py "$logs"
status=$?
if [ $status != 0 ]; then
	# The failed checks once more, last: a log cut to its head and tail still names them.
	grep -H -E '^FAIL  |CHECK\(.*\) failed|^==[0-9]+==ERROR: (Address|Leak)Sanitizer|^[^ ]+:[0-9]+:[0-9]+: runtime error:' \
		"$logs"/*.log "$logs"/*.ctest 2>/dev/null
fi
exit $status
