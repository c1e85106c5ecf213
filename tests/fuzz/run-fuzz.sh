#!/usr/bin/env bash
# Builds a fuzz target with clang-22 and sanitizers (ASan, UBSan) in its own
# build folder and fuzzes it for a while; any crash, sanitizer report, leak
# or input slower than MODELC_FUZZ_TIMEOUT fails the run (exit != 0) and
# leaves the reproducer in BUILD_DIR/artifacts/.
#
#   tests/fuzz/run-fuzz.sh [BUILD_DIR]      (default: <repo>/build-fuzz)
#
# Environment: MODELC_FUZZ_SECONDS (default 60) is how long to fuzz;
# MODELC_FUZZ_TARGET (default frontend) which target: frontend (the whole
# front end), parse, check, npy, safetensors, mdlc, lsp (tests/fuzz/README.md);
# MODELC_FUZZ_CORPUS a folder to grow (default BUILD_DIR/corpus-TARGET, seeded
# from the repository's tests/fuzz/corpus/TARGET/ and, for the .mdl targets,
# examples/ and stdlib/); MODELC_FUZZ_TIMEOUT (seconds, default 10).
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

target=${MODELC_FUZZ_TARGET:-frontend}
echo "run-fuzz.sh: building modelc_${target}_fuzzer"
ninja -C "$build" "modelc_${target}_fuzzer"

# The corpus: the repository's minimized corpus of the target, plus, for the
# .mdl targets, every example and stdlib model and the hand-written seeds,
# copied so that what the fuzzer adds stays out of the source tree.
corpus=${MODELC_FUZZ_CORPUS:-$build/corpus-$target}
artifacts=$build/artifacts
mkdir -p "$corpus" "$artifacts"
flags=()
case $target in
frontend | parse | check)
  find "$src/examples" "$src/stdlib" "$src/tests/fuzz/seeds" -name '*.mdl' -type f \
    -exec cp -n -t "$corpus" {} + 2>/dev/null || true
  flags+=(-dict="$src/tests/fuzz/mdl.dict")
  # the whole front end checks and renders std.nn too: longer inputs
  [ "$target" = frontend ] && flags+=(-max_len=16384) || flags+=(-max_len=4096) ;;
*) flags+=(-max_len=65536) ;;
esac
if [ -d "$src/tests/fuzz/corpus/$target" ]; then
  cp -n -t "$corpus" "$src/tests/fuzz/corpus/$target"/* 2>/dev/null || true
fi

echo "run-fuzz.sh: fuzzing for ${seconds}s with $(ls "$corpus" | wc -l) seed files"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
"$build/modelc_${target}_fuzzer" \
  -max_total_time="$seconds" -timeout="${MODELC_FUZZ_TIMEOUT:-10}" -rss_limit_mb=4096 \
  "${flags[@]}" -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus"
