#!/usr/bin/env bash
# A GPU machine's checks of modelc's CUDA path in one call (issue 13), most
# important first: the golden cuda tests on the driver, bench/gpu_vs_pytorch.py
# (f32 with each way of running the matrix products, bf16, TF32), then
# compute-sanitizer on the kernel forms (f32 and bf16 tiles, cuBLASLt, CUDA
# graphs). Each step has its own time limit inside one overall budget and
# writes its log to OUT as it runs, so a run that is cut off still returns
# what it did; OUT/steps.log says what ran, how long, and how it exited.
#
#   tools/gpu-check.sh ARCHIVE OUT [BUDGET_SECONDS]
#
# Run from the checkout; ARCHIVE is a build packed by
# ../shared/tools/gpu-pack.sh (a machine without LLVM can run it).
set -u
archive=$1 out=$2 budget=${3:-540}
mkdir -p "$out"
start=$(date +%s)
deadline=$((start + budget))

# step NAME SECONDS CMD...: runs CMD with at most SECONDS (less if the budget
# is nearly spent), its output in OUT/NAME.log.
step() {
  local name=$1 limit=$2 left rc
  shift 2
  left=$((deadline - $(date +%s)))
  if ((left < 15)); then
    echo "[$(($(date +%s) - start))s] $name: skipped, budget spent" | tee -a "$out/steps.log"
    return
  fi
  ((limit > left)) && limit=$left
  echo "[$(($(date +%s) - start))s] $name (limit ${limit}s)" | tee -a "$out/steps.log"
  timeout -k 5 "$limit" "$@" >"$out/$name.log" 2>&1
  rc=$?
  echo "[$(($(date +%s) - start))s] $name: exit $rc" | tee -a "$out/steps.log"
}

{
  date -u
  nvidia-smi
  nvcc --version 2>/dev/null | tail -2
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  nproc
  uptime
} >"$out/machine.txt" 2>&1

tar -xJf "$archive" -C / || { echo "cannot unpack $archive" | tee -a "$out/steps.log"; exit 1; }
build=$(cat /opt/mc/build-dir)
export LD_LIBRARY_PATH=/opt/mc/stubs:/opt/mc/lib:$build/lib
export MODELC_CACHE_DIR=/tmp/modelc-kernels
work=/tmp/modelc-gpu-bench
lit=/usr/lib/llvm-22/bin/lit

step lit-cuda 150 python3 "$lit" -sv -j8 -Dcuda=driver "$build/tests/lit/cuda"

bench() {
  local name=$1 limit=$2
  shift 2
  step "$name" "$limit" python3 -u bench/gpu_vs_pytorch.py --build "$build" --work "$work" \
    --rounds 5 --block-ms 30 --json "$out/$name.json" "$@"
}
all=own,cublaslt,auto
bench bench-mlp_block_4096 70 --models mlp_block_4096_tokens --gemm $all
bench bench-mlp 50 --models mlp --gemm $all --compile mlp:64
bench bench-mlp_block_256 50 --models mlp_block_256 --gemm $all --compile none
bench bench-lenet5 50 --models lenet5 --gemm $all --compile lenet5:256
bench bench-resnet_block 50 --models resnet_block --gemm $all --compile none
bench bench-encoder_layer 50 --models encoder_layer --gemm $all --compile encoder_layer:64
bench bench-bf16 70 --dtype bf16 --gemm $all --compile mlp_block_4096_tokens:8
bench bench-tf32 40 --tf32 --models mlp_block_4096_tokens --gemm $all --compile none

# compute-sanitizer on one forward of each kernel form, from the bench's files.
python3 - "$work" <<'PY' || true
import sys, numpy as np
w = sys.argv[1]
for stem, shape in (("mlp_block_4096_tokens_b8", (8, 512, 1024)), ("mlp_block_256_b64", (64, 8, 256))):
    try:
        np.save("%s/%s.npy" % (w, stem), np.fromfile("%s/%s.f32" % (w, stem), "<f4").reshape(shape))
    except OSError:
        pass
PY
sanitize() { # NAME TOOL GEMM DIM HIDDEN DTYPE INPUT
  local file=examples/mlp_block.mdl args="dim=$4,hidden=$5" key=mlp_block
  [[ $4 == 256 ]] && key=mlp_block_256
  [[ $6 != f32 ]] && file=bench/mlp_block_dtype.mdl args="$args,dtype=$6"
  step "$1" 60 env MODELC_CUDA_GEMM="$3" compute-sanitizer --tool "$2" --error-exitcode 9 \
    "$build/bin/modelc" run "$file" --model MlpBlock --args "$args" --device cuda:0 \
    --cuda=driver --report --weights "$work/${key}_$6.safetensors" \
    --input "$work/$7.npy@cuda:0" --output "/tmp/$1.npy"
}
sanitize memcheck-f32-own memcheck own 1024 4096 f32 mlp_block_4096_tokens_b8
sanitize memcheck-f32-cublaslt memcheck cublaslt 1024 4096 f32 mlp_block_4096_tokens_b8
sanitize memcheck-bf16-own memcheck own 1024 4096 bf16 mlp_block_4096_tokens_b8
sanitize racecheck-bf16-own racecheck own 256 1024 bf16 mlp_block_256_b64
sanitize racecheck-f32-own racecheck own 256 1024 f32 mlp_block_256_b64
echo "[$(($(date +%s) - start))s] done" | tee -a "$out/steps.log"
