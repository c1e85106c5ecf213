#!/usr/bin/env python3
"""kernels_reference.py - the fns of kernels.mdl, computed in plain Python.

    kernels_reference.py FN OUT INPUT.npy...

float64 with Python's math module, independent of modelc and of the CUDA
kernels it generates; the result is written to OUT as f32 .npy.
"""

import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "exec",
                                "Inputs"))
import npy  # noqa: E402
from reference import T, gelu, indices, load, matmul, sigmoid, softmax_rows, transpose  # noqa: E402


def rows(x):
    b, n = x.shape
    return [[x.at(i, j) for j in range(n)] for i in range(b)]


def conv2d(x, w, b, stride, pad, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    og = o // groups
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = []
    for ni, oi, y, z in indices([n, o, oh, ow]):
        acc = b.v[oi] if b else 0.0
        g = oi // og
        for ci in range(cg):
            for p in range(kh):
                for q in range(kw):
                    iy, iz = y * stride - pad + p, z * stride - pad + q
                    if 0 <= iy < h and 0 <= iz < wd:
                        acc += x.at(ni, g * cg + ci, iy, iz) * w.at(oi, ci, p, q)
        out.append(acc)
    return T([n, o, oh, ow], out)


def pool(x, k, f):
    n, c, h, w = x.shape
    oh, ow = (h - k) // k + 1, (w - k) // k + 1
    out = [f([x.at(ni, ci, y * k + p, z * k + q) for p in range(k) for q in range(k)])
           for ni, ci, y, z in indices([n, c, oh, ow])]
    return T([n, c, oh, ow], out)


def compute(fn, a):
    x = a[0]
    if fn == "matmul_nt":
        return matmul(x, transpose(a[1]))
    if fn == "matmul_nn":
        return matmul(x, a[1])
    if fn == "matmul_tn":
        return matmul(transpose(x), a[1])
    if fn == "linear_relu":
        y = matmul(x, transpose(a[1]))
        m = y.shape[1]
        return T(y.shape, [max(v + a[2].v[i % m], 0.0) for i, v in enumerate(y.v)])
    if fn == "linear_gelu_residual":
        y = matmul(x, transpose(a[1]))
        m = y.shape[1]
        return T(y.shape, [gelu(v + a[2].v[i % m]) + a[3].v[i] for i, v in enumerate(y.v)])
    if fn in ("softmax_long", "log_softmax_long"):
        return T(x.shape, [v for r in softmax_rows(rows(x), fn == "log_softmax_long") for v in r])
    if fn == "layer_norm_long":
        out = []
        for r in rows(x):
            mean = sum(r) / len(r)
            var = sum((v - mean) ** 2 for v in r) / len(r)
            out += [(v - mean) / math.sqrt(var + 1e-5) * a[1].v[j] + a[2].v[j]
                    for j, v in enumerate(r)]
        return T(x.shape, out)
    if fn == "sum_rows":
        return T([x.shape[0]], [sum(r) for r in rows(x)])
    if fn == "mean_cols":
        cols = list(zip(*rows(x)))
        return T([x.shape[1]], [sum(c) / len(c) for c in cols])
    if fn == "max_rows":
        return T([x.shape[0]], [max(r) for r in rows(x)])
    if fn == "fused":
        n = x.shape[1]
        return T(x.shape, [gelu(v * a[1].v[i % n] + 1.0) * sigmoid(v) - math.tanh(a[1].v[i % n])
                           for i, v in enumerate(x.v)])
    if fn == "grouped":
        return conv2d(x, a[1], a[2], 2, 1, 2)
    if fn == "depthwise":
        return conv2d(x, a[1], None, 1, 1, 3)
    if fn == "conv_5x5":
        return conv2d(x, a[1], a[2], 2, 0, 1)
    if fn == "max_pool_odd":
        return pool(x, 2, max)
    if fn == "avg_pool_3":
        return pool(x, 3, lambda v: sum(v) / len(v))
    sys.exit("kernels_reference.py: no reference for fn %s" % fn)


def main(argv):
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    result = compute(argv[1], [load(p) for p in argv[3:]])
    npy.write_array(argv[2], "f32", result.shape, result.v)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
