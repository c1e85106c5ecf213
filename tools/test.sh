#!/usr/bin/env bash
# Installs the dependencies, builds everything (through ccache) and runs the
# whole test suite with ctest: unit tests (GoogleTest), golden tests (lit),
# the fuzz smoke test and the coverage checks. Prints ctest's summary; the
# exit status is ctest's.
#
#   tools/test.sh            (build folder: ./build, or $MODELC_BUILD_DIR)
#
# Environment: MODELC_JOBS (default: number of cores), MODELC_FUZZ_SECONDS
# (default 60).
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MODELC_BUILD_DIR:-$src/build}
jobs=${MODELC_JOBS:-$(nproc)}

"$src/tools/install-deps.sh"
# Let clones at different paths share one ccache (paths hash relative to the
# checkout).
export CCACHE_BASEDIR="$src" CCACHE_NOHASHDIR=1
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j "$jobs"
cd "$build"
ctest --output-on-failure -j "$jobs"
