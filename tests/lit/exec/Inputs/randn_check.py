#!/usr/bin/env python3
"""randn_check.py FILE.npy - checks the [3, 64, 64] output of more_ops.mdl's
`noise`: slices 0 and 1 (the same seed) are identical, slice 2 (another seed)
differs, and each looks standard normal (mean within 0.1 of 0, standard
deviation within 0.1 of 1). Prints PASS or what failed."""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import npy  # noqa: E402


def main(path):
    _, shape, v = npy.read(path)
    if list(shape) != [3, 64, 64]:
        print("FAIL: shape %s" % list(shape))
        return 1
    n = 64 * 64
    a, b, c = v[:n], v[n:2 * n], v[2 * n:]
    problems = []
    if a != b:
        problems.append("the same seed gave different samples")
    if sum(1 for p, q in zip(a, c) if p == q) > n // 100:
        problems.append("different seeds gave the same samples")
    for name, s in (("seed 7", a), ("seed 8", c)):
        mean = sum(s) / n
        std = math.sqrt(sum((x - mean) ** 2 for x in s) / n)
        print("%s: mean %.4f std %.4f" % (name, mean, std))
        if abs(mean) > 0.1 or abs(std - 1) > 0.1 or any(math.isnan(x) for x in s):
            problems.append("%s is not standard normal" % name)
    print("FAIL: " + "; ".join(problems) if problems else "PASS")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
