#!/bin/sh
# Build cgstat and run every test, as CI does: the unit tests (no root needed) and the
# integration tests (root: they load BPF and make scratch cgroups), the package (built,
# installed and run as a system tool), once on the normal build
# and once with the user code under AddressSanitizer and UndefinedBehaviorSanitizer, then
# libFuzzer on every parser. Run from the repository's root. Every stage runs even when one
# before it failed, so that a sanitizer or fuzz failure is not hidden behind another; the
# script fails at the end, naming the stages that did.
#
#   tests/run-all.sh [--full]
#
# The kernel matrix (tests/kernels/matrix.py) boots Debian 12's 6.1 and, for the refusal,
# Debian 11's 5.10; --full boots every suite's kernel (6.12 of Debian 13 and of bookworm-backports,
# unstable's newest too), for before a release.
set -u
jobs=$(nproc)
failed=""
kernels=""
case "${1:-}" in
--full) kernels=--all ;;
"") ;;
*)
	echo "usage: tests/run-all.sh [--full]" >&2
	exit 2
	;;
esac

build() {
	dir=$1
	shift
	cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" &&
		cmake --build "$dir" -j"$jobs"
}

# stage NAME COMMAND...: run it, and remember NAME if it fails
stage() {
	name=$1
	shift
	echo "=== $name"
	"$@" || failed="$failed $name"
}

stage build build build
stage tests ctest --test-dir build --output-on-failure --no-tests=error
# Debian's own kernels booted under QEMU, the same checks run in each guest
stage kernels python3 tests/kernels/matrix.py --build build $kernels
# the .deb built, installed with apt-get, run with its unit's capabilities, removed
stage package tests/package.sh

# halt_on_error: a sanitizer report fails the test that triggered it
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
stage sanitize-build build build-sanitize -DCGSTAT_SANITIZE=ON
# the ten-minute long run once is enough: on the normal build above
stage sanitize-tests ctest --test-dir build-sanitize --output-on-failure --no-tests=error -LE long

# libFuzzer on every parser of outside input, a bounded time each (CGSTAT_FUZZ_TIME seconds)
export CC=clang
stage fuzz-build build build-fuzz -DCGSTAT_FUZZ=ON
stage fuzz ctest --test-dir build-fuzz -L fuzz --output-on-failure --no-tests=error -j"$jobs"

if [ -n "$failed" ]; then
	echo "FAILED stages:$failed"
	# The failed checks once more, last: a log cut to its head and tail still names them.
	for log in build*/Testing/Temporary/LastTest.log; do
		[ -f "$log" ] && grep -H -E '^FAIL  |CHECK\(.*\) failed|ERROR: AddressSanitizer|runtime error:' "$log"
	done
	exit 1
fi
echo "all stages passed"
