#!/usr/bin/env bash
# A GPU machine's checks of modelc's CUDA path in one call (issue 13), most
# important first: the golden cuda tests on the driver, bench/gpu_vs_pytorch.py
# (f32 with each way of running the matrix products, bf16, TF32), then
# compute-sanitizer on the kernel forms (f32 and bf16 tiles, cuBLASLt, CUDA
# graphs). Each step has its own time limit inside one overall budget; after
# each, OUT/gpu-check.tgz is rewritten with every log so far (one file: the
# device tool returns only a few files per call), so a run that is cut off
# still returns what it did; its steps.log says what ran, how long, and how
# it exited.
#
#   tools/gpu-check.sh ARCHIVE OUT [BUDGET_SECONDS]
#
# Run from the checkout; ARCHIVE is a build packed by
# ../shared/tools/gpu-pack.sh (a machine without LLVM can run it).
set -u
archive=$1 out=$2 budget=${3:-540}
logs=$(mktemp -d /tmp/gpu-check.XXXXXX)
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
    echo "[$(($(date +%s) - start))s] $name: skipped, budget spent" | tee -a "$logs/steps.log"
    return
  fi
  ((limit > left)) && limit=$left
  echo "[$(($(date +%s) - start))s] $name (limit ${limit}s)" | tee -a "$logs/steps.log"
  timeout -k 5 "$limit" "$@" >"$logs/$name.log" 2>&1
  rc=$?
  echo "[$(($(date +%s) - start))s] $name: exit $rc" | tee -a "$logs/steps.log"
  tar czf "$out/gpu-check.tgz" -C "$logs" .
}

{
  date -u
  nvidia-smi
  nvcc --version 2>/dev/null | tail -2
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  nproc
  uptime
} >"$logs/machine.txt" 2>&1

tar -xJf "$archive" -C / || { echo "cannot unpack $archive"; exit 1; }
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
    --rounds 5 --block-ms 30 --json "$logs/$name.json" "$@"
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
# Where the GPU time of a forward goes, kernel by kernel (graph nodes
# included), through the embedding API as the bench runs it.
profile() { # NAME MODEL ARGS WEIGHTS INPUT DIM...
  local name=$1 file=$2 model=$3 args=$4 weights=$5 input=$6
  shift 6
  local run=("$build/bin/modelc-api-bench" "$file" "$model" "$args" "$work/$weights"
    "$work/$input" "$@" --device cuda:0 --warmup 3)
  if command -v nsys >/dev/null; then
    step "$name" 60 sh -c 'printf "time 100\nquit\n" | nsys profile --cuda-graph-trace=node \
      --stats=true --force-overwrite=true -o "/tmp/$0" "$@"' "$name" "${run[@]}"
  else
    step "$name" 60 sh -c 'printf "time 3\nquit\n" | ncu --metrics gpu__time_duration.sum \
      --print-summary per-kernel "$@"' "$name" "${run[@]}"
  fi
}
export MODELC_CUDA=driver
profile profile-lenet5-b1 examples/lenet5.mdl LeNet5 - lenet5_f32.safetensors lenet5_b1.f32 1 1 28 28
profile profile-resnet-b64 examples/resnet_basic_block.mdl BasicBlock \
  in_planes=64,planes=128,stride=2 resnet_block_f32.safetensors resnet_block_b64.f32 64 64 16 16
profile profile-bf16-block-b1 bench/mlp_block_dtype.mdl MlpBlock dim=256,hidden=1024,dtype=bf16 \
  mlp_block_256_bf16.safetensors mlp_block_256_b1.f32 1 8 256
step memcheck-api-encoder 60 sh -c 'printf "time 3\nquit\n" | compute-sanitizer --tool memcheck \
  --error-exitcode 9 "$@"' memcheck "$build/bin/modelc-api-bench" stdlib/nn.mdl \
  TransformerEncoderLayer d_model=256,nhead=4,dim_feedforward=1024 \
  "$work/encoder_layer_f32.safetensors" "$work/encoder_layer_b64.f32" 64 32 256 --device cuda:0

sanitize memcheck-f32-own memcheck own 1024 4096 f32 mlp_block_4096_tokens_b8
sanitize memcheck-f32-cublaslt memcheck cublaslt 1024 4096 f32 mlp_block_4096_tokens_b8
sanitize memcheck-bf16-own memcheck own 1024 4096 bf16 mlp_block_4096_tokens_b8
sanitize racecheck-bf16-own racecheck own 256 1024 bf16 mlp_block_256_b64
sanitize racecheck-f32-own racecheck own 256 1024 f32 mlp_block_256_b64
echo "[$(($(date +%s) - start))s] done" | tee -a "$logs/steps.log"
tar czf "$out/gpu-check.tgz" -C "$logs" .
