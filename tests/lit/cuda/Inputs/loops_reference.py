#!/usr/bin/env python3
"""loops_reference.py - the fns of loops.mdl, computed in plain Python.

    loops_reference.py FN OUT X.npy [ROW.npy]

Each fn on nested lists of float64 (x is [2, 4, n]), as PyTorch would run the
same loop; written to OUT as f32 .npy. Independent of modelc.
"""

import copy
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "exec",
                                "Inputs"))
import npy  # noqa: E402


def nested(path):
    _, shape, values = npy.read(path)
    if len(shape) == 2:
        return [values[i * shape[1]:(i + 1) * shape[1]] for i in range(shape[0])]
    b, t, n = shape
    return [[values[(i * t + j) * n:(i * t + j + 1) * n] for j in range(t)] for i in range(b)]


def sigmoid(v):
    return 1.0 / (1.0 + math.exp(-v))


def fill(x):
    b, t, n = len(x), len(x[0]), len(x[0][0])
    out = [[[0.0] * n for _ in range(t)] for _ in range(b)]
    for s in range(4):
        for i in range(b):
            out[i][3 - s] = [math.tanh(x[i][s][k]) + x[i][s - 4][k] for k in range(n)]
    return out


def patch(x, row):
    y = copy.deepcopy(x)
    for i in range(len(y)):
        y[i][-1] = [2.0 * v for v in row[i]]
    return y


def keep(x):
    out = [[[sigmoid(v) for v in r] for r in m] for m in x]
    before = copy.deepcopy(out)
    for s in (1, 2):
        for i in range(len(out)):
            out[i][s] = [0.5 * v for v in out[i][s - 1]]
    return [[[a + b for a, b in zip(ra, rb)] for ra, rb in zip(ma, mb)]
            for ma, mb in zip(out, before)]


def corner(x):
    out = copy.deepcopy(x)
    for s in (0, 1):
        out[s][-1 - s] = [v - 1.0 for v in x[1 - s][s]]
    return out


def main(argv):
    fn, out = argv[1], argv[2]
    inputs = [nested(p) for p in argv[3:]]
    result = {"fill": fill, "patch": patch, "keep": keep, "corner": corner}[fn](*inputs)
    flat = [v for m in result for r in m for v in r]
    npy.write_array(out, "f32", (len(result), len(result[0]), len(result[0][0])), flat)


if __name__ == "__main__":
    main(sys.argv)
