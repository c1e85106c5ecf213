#!/usr/bin/env bash
# From a fresh clone to a checked model: installs the dependencies, builds the
# `modelc` driver, and checks an example model (and shows a device bug it
# catches).
#
#   tools/quickstart.sh      (build folder: ./build, or $MODELC_BUILD_DIR)
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MODELC_BUILD_DIR:-$src/build}

"$src/tools/install-deps.sh"
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" --target modelc
cd "$src"

echo "\$ modelc check examples/mlp.mdl"
"$build/bin/modelc" check examples/mlp.mdl
echo "examples/mlp.mdl: no errors"
echo
echo "\$ modelc check examples/device-bugs/01-bias-on-cpu.mdl"
if "$build/bin/modelc" check examples/device-bugs/01-bias-on-cpu.mdl; then
  echo "quickstart: expected modelc to reject examples/device-bugs/01-bias-on-cpu.mdl" >&2
  exit 1
fi

# Run the reference MLP on the CPU with PyTorch's weights, when the reference
# data (../shared/ref) sits beside the checkout.
ref="$src/../shared/ref/mlp"
if [ -f "$ref/weights.safetensors" ]; then
  echo
  echo "\$ modelc run examples/mlp.mdl --model Mlp --args in=784,hidden=256,out=10 --device cpu --weights $ref/weights.safetensors --input $ref/input.npy"
  "$build/bin/modelc" run examples/mlp.mdl --model Mlp --args in=784,hidden=256,out=10 \
    --device cpu --weights "$ref/weights.safetensors" --input "$ref/input.npy"
fi
