#!/usr/bin/env bash
# Installs the Debian 12 packages modelc needs to build and test. Idempotent:
# packages already present are left alone. Needs root (or sudo).
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools libzstd-dev
  antlr4 libantlr4-runtime-dev
  libgtest-dev
  libopenblas-dev libdnnl-dev
  libopenmpi-dev openmpi-bin     # data-parallel `modelc train` (mpirun)
  clang-22 libclang-rt-22-dev
  python3
  python3-torch python3-numpy    # `modelc import-torch` and its golden tests (CPU-only torch)
  # bench/cpu_vs_pytorch.py's peer: torch with the OpenMP OpenBLAS, which
  # follows torch.set_num_threads (the default pthreads one keeps a thread
  # per core and fights torch's OpenMP pool on 2 threads). Installed beside
  # it; the system default (libopenblas.so.0, libblas.so.3) stays pthreads.
  libopenblas0-openmp
  neovim
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
