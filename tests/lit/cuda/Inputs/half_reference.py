#!/usr/bin/env python3
"""half_reference.py - the fns of half_ops.mdl in float64, rounded like f16/bf16.

    half_reference.py run DTYPE DIR MODELC-COMMAND...
        Writes the inputs of every fn into DIR, runs each fn through
        MODELC-COMMAND (`modelc run half_ops.mdl-with-DTYPE --model Ops
        --device cuda:0 --cuda=emulate`, to which the fn, inputs and output
        are added), and prints one line per fn: `FN: ok ...` or `FN: FAIL ...`.
    half_reference.py DTYPE FN OUT INPUT.npy...   the reference alone (f32 .npy)
    half_reference.py compare DTYPE ACTUAL EXPECTED [exact]
        torch.testing.assert_close's bound for DTYPE, element by element:
        |a - b| <= atol + rtol * |b| (f16: rtol 1e-3, atol 1e-5; bf16: rtol
        1.6e-2, atol 1e-5), NaN only where NaN. `exact`: bit for bit.

Values are computed in float64 and rounded to DTYPE (to nearest, ties to
even) where the generated code rounds them: a cast to DTYPE, and a DTYPE
result stored to memory (a kernel's output). Inside one kernel (a fused
elementwise chain, a GEMM and its epilogue, a reduction's accumulator) the
GPU keeps f32, the reference float64. Plain Python (no NumPy, no torch).
"""

import math
import os
import random
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "exec",
                                "Inputs"))
import npy  # noqa: E402
from reference import T, gelu, indices, load, sigmoid  # noqa: E402

TOLERANCES = {"f16": (1e-3, 1e-5), "bf16": (1.6e-2, 1e-5)}


def to_f32(x):
    """Round to float32 (nearest even); beyond its range is infinity."""
    if math.isnan(x) or math.isinf(x):
        return x
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def round_f16(x):
    if math.isnan(x) or math.isinf(x):
        return x
    if abs(x) >= 65520.0:  # halfway to 2^16 and beyond: infinity
        return math.copysign(math.inf, x)
    return struct.unpack("<e", struct.pack("<e", x))[0]


def round_bf16(x):
    x = to_f32(x)
    if math.isnan(x) or math.isinf(x):
        return x
    (bits,) = struct.unpack("<I", struct.pack("<f", x))
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


def rounding(dtype):
    return round_f16 if dtype == "f16" else round_bf16


def compute(dtype, fn, a):
    r = rounding(dtype)

    def h(t):  # cast(t, HALF)
        return T(t.shape, [r(v) for v in t.v])

    if fn == "round_trip":
        return h(a[0])
    if fn == "noise":  # randn(..., seed: 7, dtype: HALF): f32 samples rounded once
        return T(a[0].shape, [r(to_f32(randn(7, i))) for i in range(len(a[0].v))])
    if fn == "fused":
        x, y = h(a[0]), h(a[1])
        n = x.shape[1]
        out = []
        for i, j in indices(x.shape):  # one kernel: nothing stored as DTYPE
            xv, yv = x.at(i, j), y.v[j]
            out.append(gelu(xv * yv + 1.0) * sigmoid(xv) - math.tanh(yv) + max(xv, 0.0) / 3.0)
        del n
        return T(x.shape, out)
    if fn == "linear_relu":
        x, w, b = h(a[0]), h(a[1]), h(a[2])
        rows, k = x.shape
        m = w.shape[0]
        out = []
        for i in range(rows):
            for j in range(m):
                product = math.fsum(x.at(i, p) * w.at(j, p) for p in range(k))
                out.append(max(product + b.v[j], 0.0))  # the epilogue, in f32
        return T([rows, m], out)
    if fn == "stored_product":
        x, w = h(a[0]), h(a[1])
        rows, k = x.shape
        m = w.shape[0]
        out = []
        for i in range(rows):
            for j in range(m):
                y = r(math.fsum(x.at(i, p) * w.at(j, p) for p in range(k)))  # stored
                out.append(y * 2.0 + max(y, 0.0))
        return T([rows, m], out)
    if fn == "batched":
        x, y = h(a[0]), h(a[1])
        nb, m, k = x.shape
        n = y.shape[2]
        out = [math.fsum(x.at(q, i, p) * y.at(q, p, j) for p in range(k))
               for q, i, j in indices([nb, m, n])]
        return T([nb, m, n], out)
    if fn == "conv_bn_relu":
        x, w, b, mean, var = (h(t) for t in a)
        var = T(var.shape, [r(abs(v) + 0.5) for v in var.v])  # two uses: stored
        n, c, hh, ww = x.shape
        o, cg, kh, kw = w.shape
        og, stride, pad = o // 2, 2, 1
        oh, ow = (hh + 2 * pad - kh) // stride + 1, (ww + 2 * pad - kw) // stride + 1
        out = []
        for ni, oi, y, z in indices([n, o, oh, ow]):
            terms = [b.v[oi]]
            g = oi // og
            for ci, p, q in indices([cg, kh, kw]):
                iy, iz = y * stride - pad + p, z * stride - pad + q
                if 0 <= iy < hh and 0 <= iz < ww:
                    terms.append(x.at(ni, g * cg + ci, iy, iz) * w.at(oi, ci, p, q))
            conv = math.fsum(terms)
            # batch_norm(y, mean, var, weight = mean, bias = var) + relu: the epilogue
            normed = (conv - mean.v[oi]) / math.sqrt(var.v[oi] + 1e-5) * mean.v[oi] + var.v[oi]
            out.append(max(normed, 0.0))
        return T([n, o, oh, ow], out)
    if fn in ("sum_rows", "max_rows", "mean_cols"):
        x = h(a[0])
        b, n = x.shape
        if fn == "mean_cols":
            return T([n], [r(math.fsum(x.at(i, j) for i in range(b)) / b) for j in range(n)])
        f = math.fsum if fn == "sum_rows" else max
        return T([b], [r(f([x.at(i, j) for j in range(n)])) for i in range(b)])
    if fn in ("softmax_rows", "log_softmax_rows"):
        x = h(a[0])
        b, n = x.shape
        out = []
        for i in range(b):
            row = [x.at(i, j) for j in range(n)]
            big = max(row)
            total = math.fsum(math.exp(v - big) for v in row)
            if fn == "softmax_rows":
                out += [r(math.exp(v - big) / total) for v in row]
            else:
                out += [r(v - big - math.log(total)) for v in row]
        return T([b, n], out)
    if fn == "layer_norm_rows":
        x, w, bias = h(a[0]), h(a[1]), h(a[2])
        b, n = x.shape
        out = []
        for i in range(b):
            row = [x.at(i, j) for j in range(n)]
            mean = math.fsum(row) / n
            var = math.fsum((v - mean) ** 2 for v in row) / n
            scale = 1 / math.sqrt(var + 1e-5)
            out += [r((v - mean) * scale * w.v[j] + bias.v[j]) for j, v in enumerate(row)]
        return T([b, n], out)
    if fn == "pools":
        x = h(a[0])
        n, c, _, _ = x.shape

        def window(ni, ci, ys, zs):
            return [x.at(ni, ci, y, z) for y in ys for z in zs]

        out = []
        for ni, ci, y, z in indices([n, c, 3, 3]):
            top = max(window(ni, ci, range(2 * y, 2 * y + 2), range(2 * z, 2 * z + 2)))
            avg = r(math.fsum(window(ni, ci, range(2 * y, 2 * y + 3), range(2 * z, 2 * z + 3))) / 9)
            # adaptive 7 -> 3: windows [floor(i*7/3), ceil((i+1)*7/3))
            ys = range(y * 7 // 3, -(-(y + 1) * 7 // 3))
            zs = range(z * 7 // 3, -(-(z + 1) * 7 // 3))
            cells = window(ni, ci, ys, zs)
            adaptive = r(math.fsum(cells) / len(cells))
            out.append(top + avg + adaptive)  # each pool stores DTYPE, the sum is fused
        return T([n, c, 3, 3], out)
    if fn == "indexing":
        ids, table, pick = a[0], h(a[1]), a[2]
        b = ids.shape[0]
        out = []
        for i in range(b):
            e = [[table.at(int(ids.at(i, s)), d) for d in range(8)] for s in range(3)]
            rows = [[table.at(int(p), d) for d in range(8)] for p in pick.v]
            for row in e + rows + e[1:] + [[v * 2.0 for v in e[0]]] + e[2:]:
                out += row
        return T([b, 11, 8], out)
    if fn == "losses":
        x, t, w = h(a[0]), a[1], h(a[2])
        b, c = x.shape
        logp = []
        for i in range(b):
            row = [x.at(i, j) for j in range(c)]
            big = max(row)
            lse = big + math.log(math.fsum(math.exp(v - big) for v in row))
            logp.append([v - lse for v in row])
        targets = [int(v) for v in t.v]
        ce = r(math.fsum(-w.v[k] * logp[i][k] for i, k in enumerate(targets)) /
               math.fsum(w.v[k] for k in targets))
        rounded = [[r(v) for v in row] for row in logp]  # log_softmax's result
        nll = r(math.fsum(-rounded[i][k] for i, k in enumerate(targets)) / b)
        return T([2], [ce, nll])
    raise SystemExit("half_reference.py: unknown fn " + fn)


# Rounding cases: ties to even at 1 and in the subnormals, the largest finite
# values, overflow, signed zeros, infinities, NaN.
SPECIAL = [0.0, -0.0, 1.0, -1.0, 1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-8, 1 + 3 * 2**-8,
           1 + 2**-9, 2**-25, 3 * 2**-25, 2**-24, 1.5 * 2**-24, 2**-14 - 2**-25, 65504.0,
           65519.99, 65520.0, -65520.0, 1e5, 3.0e38, 1e-8, 1e-40, 0.1, -0.3, 1 / 3,
           math.inf, -math.inf, math.nan]

# fn: inputs as (name, kind, shape, scale or values)
INPUTS = {
    "fused": [("x", "f32", [6, 33], 2.0), ("y", "f32", [33], 1.5)],
    "linear_relu": [("x", "f32", [37, 70], 1.0), ("w", "f32", [45, 70], 0.3),
                    ("b", "f32", [45], 0.5)],
    "stored_product": [("x", "f32", [37, 70], 1.0), ("w", "f32", [45, 70], 0.3)],
    "batched": [("a", "f32", [3, 5, 19], 1.0), ("b", "f32", [3, 19, 7], 1.0)],
    "conv_bn_relu": [("x", "f32", [2, 4, 9, 9], 1.0), ("w", "f32", [6, 2, 3, 3], 0.5),
                     ("b", "f32", [6], 0.5), ("mean", "f32", [6], 0.5), ("var", "f32", [6], 1.0)],
    "sum_rows": [("x", "f32", [5, 1000], 1.0)],
    "mean_cols": [("x", "f32", [5, 1000], 1.0)],
    "max_rows": [("x", "f32", [5, 1000], 1.0)],
    "softmax_rows": [("x", "f32", [5, 1000], 3.0)],
    "log_softmax_rows": [("x", "f32", [5, 1000], 3.0)],
    "layer_norm_rows": [("x", "f32", [5, 1000], 2.0), ("w", "f32", [1000], 1.0),
                        ("b", "f32", [1000], 0.5)],
    "pools": [("x", "f32", [2, 3, 7, 7], 1.0)],
    "indexing": [("ids", "i64", [4, 3], 10), ("table", "f32", [10, 8], 1.0),
                 ("pick", "i64", [4], 10)],
    "losses": [("x", "f32", [9, 10], 2.0), ("t", "i64", [9], 10), ("w", "f32", [10], 1.0)],
    "noise": [("x", "f32", [4, 300], 1.0)],
    "round_trip": [("x", "special", [len(SPECIAL) * 2], None)],
}


def randn(seed, index):
    """mdl_randn (runtime/ScalarOps.h), in float64."""
    def hash32(x):
        x ^= x >> 16
        x = (x * 0x7FEB352D) & 0xFFFFFFFF
        x ^= x >> 15
        x = (x * 0x846CA68B) & 0xFFFFFFFF
        return x ^ (x >> 16)

    mixed = (seed * 0x9E3779B9 + 0x85EBCA6B) & 0xFFFFFFFF
    twice = (index << 1) & 0xFFFFFFFF
    u1 = ((hash32(twice ^ mixed) >> 8) + 1) / 16777216.0
    u2 = ((hash32((twice | 1) ^ mixed) >> 8) + 1) / 16777216.0
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2 * math.pi * u2)


def make_inputs(fn, directory):
    generator = random.Random(sum(map(ord, fn)))
    paths = []
    for name, kind, shape, scale in INPUTS[fn]:
        count = 1
        for d in shape:
            count *= d
        path = os.path.join(directory, "%s.%s.npy" % (fn, name))
        if kind == "i64":
            npy.write_array(path, "i64", shape, [generator.randrange(scale) for _ in range(count)])
        elif kind == "special":
            npy.write_array(path, "f32", shape, SPECIAL + [-v for v in SPECIAL])
        else:
            values = [to_f32(generator.uniform(-scale, scale)) for _ in range(count)]
            if name == "w" and fn == "losses":
                values = [abs(v) + 0.1 for v in values]  # class weights are positive
            npy.write_array(path, "f32", shape, values)
        paths.append(path)
    return paths


def run(dtype, directory, command):
    failures = 0
    for fn in INPUTS:
        inputs = make_inputs(fn, directory)
        output = os.path.join(directory, fn + ".out.npy")
        args = command + ["--fn", fn, "--output", output]
        for path in inputs:
            args += ["--input", path]
        done = subprocess.run(args, capture_output=True, text=True)
        if done.returncode != 0:
            print("%s: FAIL: modelc exited %d: %s" % (fn, done.returncode, done.stderr.strip()))
            failures += 1
            continue
        expected = os.path.join(directory, fn + ".ref.npy")
        result = compute(dtype, fn, [load(p) for p in inputs])
        npy.write_array(expected, "f32", result.shape, [to_f32(v) for v in result.v])
        print(fn + ": ", end="", flush=True)
        failures += compare(dtype, output, expected, fn == "round_trip")
    return 1 if failures else 0


def compare(dtype, actual_path, expected_path, exact):
    _, ashape, actual = npy.read(actual_path)
    _, eshape, expected = npy.read(expected_path)
    if ashape != eshape:
        print("shape mismatch: %s vs %s" % (ashape, eshape))
        return 1
    rtol, atol = TOLERANCES[dtype]
    bad, worst = 0, 0.0
    for i, (x, y) in enumerate(zip(actual, expected)):
        if exact:
            ok = struct.pack("<f", x) == struct.pack("<f", y) or (math.isnan(x) and math.isnan(y))
        elif math.isnan(y) or math.isinf(y):
            ok = (math.isnan(x) and math.isnan(y)) or x == y
        else:
            ok = abs(x - y) <= atol + rtol * abs(y)
            if abs(y) > 0:
                worst = max(worst, (abs(x - y) - atol) / abs(y))
        if not ok:
            if bad < 5:
                print("element %d: %r, expected %r" % (i, x, y))
            bad += 1
    print("%s: %d of %d elements outside the bound%s" %
          ("ok" if bad == 0 else "FAIL", bad, len(expected), "" if exact else
           " (largest relative error beyond atol %.3g, rtol %g)" % (worst, rtol)))
    return 1 if bad else 0


def main(argv):
    if len(argv) >= 5 and argv[1] == "run":
        return run(argv[2], argv[3], argv[4:])
    if len(argv) >= 5 and argv[1] == "compare":
        return compare(argv[2], argv[3], argv[4], len(argv) > 5 and argv[5] == "exact")
    if len(argv) < 4 or argv[1] not in TOLERANCES:
        sys.stderr.write(__doc__)
        return 2
    result = compute(argv[1], argv[2], [load(p) for p in argv[4:]])
    npy.write_array(argv[3], "f32", result.shape, [to_f32(v) for v in result.v])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
