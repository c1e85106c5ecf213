#!/usr/bin/env bash
# Differential testing of modelc against PyTorch: random well-typed models on
# every path (cpu JIT, cpu .mdlc, cuda:0 JIT and cuda .mdlc, emulated unless
# --cuda driver), compared with their float64 PyTorch twins (docs/difftest.md).
#
#   tools/difftest.sh --seconds N --seed S [--batch K] [--paths LIST] [--cuda emulate|driver]
#                     [--modelc BIN] [--out DIR] [--max-ops N]
#
# Prints programs generated, ops covered, paths compared, mismatches,
# crashes and time; exits 1 when it found anything. Findings are replayable
# cases in OUT/findings/ (difftest.py replay / minimize).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=${PYTHON:-python3}
if ! "$python" -c "import torch, numpy" 2>/dev/null; then
  python=/usr/bin/python3 # Debian's python3-torch (tools/install-deps.sh)
fi
exec "$python" "$here/difftest/difftest.py" campaign "$@"
