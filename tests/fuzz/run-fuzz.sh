#!/usr/bin/env bash
# Builds the front-end fuzzer with clang-22 and sanitizers in its own build
# folder and fuzzes `modelc check`'s front end for a while; any crash,
# sanitizer report, leak or hang fails the run (exit != 0) and leaves the
# reproducer in BUILD_DIR/artifacts/.
#
#   tests/fuzz/run-fuzz.sh [BUILD_DIR]      (default: <repo>/build-fuzz)
#
# Environment: MODELC_FUZZ_SECONDS (default 60) is how long to fuzz.
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$src/build-fuzz}
seconds=${MODELC_FUZZ_SECONDS:-60}

for tool in clang-22 clang++-22; do
  command -v "$tool" >/dev/null || { echo "run-fuzz.sh: $tool not found (tools/install-deps.sh installs it)" >&2; exit 2; }
done

echo "run-fuzz.sh: configuring $build"
mkdir -p "$build"
CC=clang-22 CXX=clang++-22 cmake -S "$src/tests/fuzz/standalone" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; exit 2; }

echo "run-fuzz.sh: building modelc_frontend_fuzzer (front end only)"
ninja -C "$build" modelc_frontend_fuzzer

# The corpus: every example and stdlib model plus hand-written seeds, copied
# so that what the fuzzer adds stays in the build folder.
corpus=$build/corpus
artifacts=$build/artifacts
mkdir -p "$corpus" "$artifacts"
find "$src/examples" "$src/stdlib" "$src/tests/fuzz/seeds" -name '*.mdl' -type f \
  -exec cp -t "$corpus" {} + 2>/dev/null || true

echo "run-fuzz.sh: fuzzing for ${seconds}s with $(ls "$corpus" | wc -l) seed files"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
"$build/modelc_frontend_fuzzer" \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=16384 \
  -dict="$src/tests/fuzz/mdl.dict" -print_final_stats=1 \
  -artifact_prefix="$artifacts/" "$corpus"
