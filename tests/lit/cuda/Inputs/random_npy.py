#!/usr/bin/env python3
"""random_npy.py - deterministic pseudo-random f32 arrays for the cuda tests.

    random_npy.py OUT.npy SHAPE SEED [SCALE]   uniform in [-SCALE, SCALE) (default 1);
                                               SHAPE like 4x16

Uses Python's own `random` (no NumPy), so the values are the same on every
machine; npy.py (tests/lit/exec/Inputs) bundles them into .safetensors.
"""

import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "exec", "Inputs"))
import npy  # noqa: E402


def main(argv):
    if len(argv) not in (4, 5):
        sys.stderr.write(__doc__)
        return 2
    shape = tuple(int(d) for d in argv[2].split("x"))
    generator = random.Random(int(argv[3]))
    scale = float(argv[4]) if len(argv) == 5 else 1.0
    count = 1
    for d in shape:
        count *= d
    values = [generator.uniform(-scale, scale) for _ in range(count)]
    npy.write_array(argv[1], "f32", shape, values)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
