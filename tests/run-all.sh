#!/bin/sh
# Build cgstat and run every test: unit tests (no root needed) and the integration tests
# (root: they load BPF and make scratch cgroups). Run from the repository's root.
set -eu
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure
