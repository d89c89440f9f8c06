#!/bin/sh
# Build cgstat and run every test, as CI does: the unit tests (no root needed) and the
# integration tests (root: they load BPF and make scratch cgroups), once on the normal build
# and once with the user code under AddressSanitizer and UndefinedBehaviorSanitizer. Run from
# the repository's root.
set -eu
jobs=$(nproc)

build() {
	dir=$1
	shift
	cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
	cmake --build "$dir" -j"$jobs"
}

build build
ctest --test-dir build --output-on-failure

# halt_on_error: a sanitizer report fails the test that triggered it
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
build build-sanitize -DCGSTAT_SANITIZE=ON
# the ten-minute long run once is enough: on the normal build above
ctest --test-dir build-sanitize --output-on-failure -LE long

# libFuzzer on every parser of outside input, a bounded time each (CGSTAT_FUZZ_TIME seconds)
CC=clang build build-fuzz -DCGSTAT_FUZZ=ON
ctest --test-dir build-fuzz -L fuzz --output-on-failure -j"$jobs"
