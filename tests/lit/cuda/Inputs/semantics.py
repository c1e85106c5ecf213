#!/usr/bin/env python3
"""semantics.py - inputs for semantics.mdl and the check of its results.

    semantics.py inputs DIR          writes the operands: every pair of interesting
                                     values (negatives, zero, MIN, MAX; -0, inf, NaN)
    semantics.py check FN CPU CUDA DIR
        CPU and CUDA are FN's results on the two back ends. Both must match the
        meaning written in runtime/ScalarOps.h, computed here independently
        (integers exactly with Python's unbounded ints), and each other: bit for
        bit for the integer, boolean and exactly rounded float ops, within a few
        ulps for the transcendental ones. Prints PASS or what differs; exit 1.
"""

import math
import os
import sys

import numpy as np

INT_VALUES = {
    64: [-2**63, -2**63 + 1, -7, -3, -2, -1, 0, 1, 2, 3, 7, 2**63 - 1],
    32: [-2**31, -2**31 + 1, -7, -3, -2, -1, 0, 1, 2, 3, 7, 2**31 - 1],
}
FLOAT_VALUES = [-math.inf, -3.5, -2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, 3.5, math.inf, math.nan]

# Rows of `floats`/`doubles` computed by exactly rounded IEEE operations (or
# none): the back ends must agree bit for bit, signed zeros included.
EXACT_FLOAT_ROWS = {0, 1, 2, 3, 4, 6, 7, 8, 15, 16}


def pairs(values):
    return [a for a in values for _ in values], [b for _ in values for b in values]


def inputs(out):
    for bits in (64, 32):
        a, b = pairs(INT_VALUES[bits])
        np.save(os.path.join(out, "a%d.npy" % bits), np.array(a, dtype="<i%d" % (bits // 8)))
        np.save(os.path.join(out, "b%d.npy" % bits), np.array(b, dtype="<i%d" % (bits // 8)))
    x, y = pairs(FLOAT_VALUES)
    for name, dtype in (("f32", np.float32), ("f64", np.float64)):
        np.save(os.path.join(out, "x%s.npy" % name), np.array(x, dtype=dtype))
        np.save(os.path.join(out, "y%s.npy" % name), np.array(y, dtype=dtype))
    # `casts` reads i64 operands next to f32 ones: as many of each.
    a = (INT_VALUES[64] * 20)[:len(x)]
    np.save(os.path.join(out, "a64f.npy"), np.array(a, dtype="<i8"))


def wrap(value, bits):
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def floordiv(a, b):
    return 0 if b == 0 else a // b


def rem(a, b):
    return 0 if b == 0 else a % b


def ipow(a, b, bits):
    if b < 0:
        return 1 if a == 1 else ((-1 if b & 1 else 1) if a == -1 else 0)
    return pow(a, b, 1 << bits)


def int_reference(a, b, bits):
    rows = [[a_ + b_ for a_, b_ in zip(a, b)], [a_ - b_ for a_, b_ in zip(a, b)],
            [a_ * b_ for a_, b_ in zip(a, b)], [floordiv(a_, b_) for a_, b_ in zip(a, b)],
            [rem(a_, b_) for a_, b_ in zip(a, b)], [ipow(a_, b_, bits) for a_, b_ in zip(a, b)],
            [-a_ for a_ in a], [abs(a_) for a_ in a], [max(a_, 0) for a_ in a],
            [a_ if a_ < b_ else b_ for a_, b_ in zip(a, b)]]
    return np.array([[wrap(v, bits) for v in row] for row in rows],
                    dtype="<i%d" % (bits // 8))


def float_reference(x, y):
    t = x.dtype.type
    with np.errstate(all="ignore"):
        r = np.fmod(x, y)
        rem_ = np.where((r != 0) & ((r < 0) != (y < 0)), r + y, r)
        gelu = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) if not math.isnan(v)
                         else math.nan for v in x.astype(np.float64)]).astype(x.dtype)
        sigmoid = t(1) / (t(1) + np.exp(-x))
        relu = np.where(np.isnan(x), x, np.where(x > 0, x, t(0)))
        return np.array([x + y, x - y, x * y, x / y, rem_, np.power(x, y), -x, np.abs(x), relu,
                         gelu, x * sigmoid, sigmoid, np.tanh(x), np.exp(x), np.log(x),
                         np.sqrt(x), np.where(x < y, x, y), np.sin(x), np.cos(x)],
                        dtype=x.dtype)


def randn_reference(n, seed):
    def hash32(v):
        v ^= v >> 16
        v = (v * 0x7feb352d) & 0xFFFFFFFF
        v ^= v >> 15
        v = (v * 0x846ca68b) & 0xFFFFFFFF
        return v ^ (v >> 16)

    def uniform(h):
        return (np.float32(h >> 8) + np.float32(1)) * np.float32(1.0 / 16777216.0)

    mixed = (seed * 0x9E3779B9 + 0x85EBCA6B) & 0xFFFFFFFF
    out = []
    for i in range(n):
        u1, u2 = uniform(hash32((2 * i) ^ mixed)), uniform(hash32((2 * i + 1) ^ mixed))
        out.append(math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2))
    return np.array(out, dtype=np.float32)


def close(a, b, rel, abs_):
    with np.errstate(all="ignore"):
        finite = np.isfinite(a) & np.isfinite(b)
        if not np.array_equal(np.isnan(a), np.isnan(b)):
            return "NaN at different places"
        if not np.array_equal(np.where(np.isinf(a), a, 0), np.where(np.isinf(b), b, 0)):
            return "infinities differ"
        err = np.abs(a - b)[finite]
        bound = (abs_ + rel * np.abs(b))[finite]
        if np.any(err > bound):
            i = int(np.argmax(err - bound))
            return "differs by %g (bound %g)" % (err[i], bound[i])
    return None


def describe(fn, row, i, operands):
    return "%s row %d element %d (operands %s)" % (fn, row, i, ", ".join(
        str(o[i]) for o in operands))


def check(fn, cpu_path, cuda_path, d):
    cpu, cuda = np.load(cpu_path), np.load(cuda_path)
    if cpu.shape != cuda.shape or cpu.dtype != cuda.dtype:
        return ["cpu %s %s, cuda %s %s" % (cpu.dtype, cpu.shape, cuda.dtype, cuda.shape)]
    problems = []
    if fn in ("ints", "ints32"):
        bits = 64 if fn == "ints" else 32
        a = [int(v) for v in np.load(os.path.join(d, "a%d.npy" % bits))]
        b = [int(v) for v in np.load(os.path.join(d, "b%d.npy" % bits))]
        ref = int_reference(a, b, bits)
        for name, got in (("cpu", cpu), ("cuda", cuda)):
            for row, i in zip(*np.nonzero(got != ref)):
                problems.append("%s: %s is %d, expected %d" % (
                    name, describe(fn, row, i, (a, b)), got[row, i], ref[row, i]))
        return problems
    if fn in ("floats", "doubles"):
        suffix = "f32" if fn == "floats" else "f64"
        x, y = np.load(os.path.join(d, "x%s.npy" % suffix)), np.load(os.path.join(d, "y%s.npy" % suffix))
        ref = float_reference(x, y)
        ulp = 4 * np.finfo(x.dtype).eps
        for row in range(ref.shape[0]):
            for name, got in (("cpu", cpu), ("cuda", cuda)):
                why = close(got[row], ref[row], 1e-5 if fn == "floats" else 1e-12, 1e-7)
                if why:
                    problems.append("%s: %s row %d against the reference: %s" % (name, fn, row, why))
            if row in EXACT_FLOAT_ROWS:
                same = (cpu[row] == cuda[row]) | (np.isnan(cpu[row]) & np.isnan(cuda[row]))
                same &= (np.signbit(cpu[row]) == np.signbit(cuda[row])) | np.isnan(cpu[row])
                for i in np.nonzero(~same)[0]:
                    problems.append("cpu %r, cuda %r: %s" % (
                        cpu[row, i], cuda[row, i], describe(fn, row, i, (x, y))))
            else:
                why = close(cuda[row], cpu[row], ulp, 0)
                if why:
                    problems.append("%s row %d, cuda against cpu: %s" % (fn, row, why))
        return problems
    if fn == "compares":
        x, y = np.load(os.path.join(d, "xf32.npy")), np.load(os.path.join(d, "yf32.npy"))
        with np.errstate(all="ignore"):
            p, q = x < y, x >= 0
            ref = np.array([x == y, x != y, x < y, x <= y, x > y, x >= y, p & q, p | q, ~p])
        for name, got in (("cpu", cpu), ("cuda", cuda)):
            for row, i in zip(*np.nonzero(got != ref)):
                problems.append("%s: %s" % (name, describe(fn, row, i, (x, y))))
        return problems
    if fn == "casts":
        a, x = np.load(os.path.join(d, "a64f.npy")), np.load(os.path.join(d, "xf32.npy"))
        ref = np.array([a.astype(np.float64), a.astype(np.int32).astype(np.float64),
                        (x != 0).astype(np.float64), a.astype(np.float32).astype(np.float64)])
        for name, got in (("cpu", cpu), ("cuda", cuda)):
            for row, i in zip(*np.nonzero(got != ref)):
                problems.append("%s: %s is %r, expected %r" % (
                    name, describe(fn, row, i, (a, x)), got[row, i], ref[row, i]))
        return problems
    if fn == "noise":
        x = np.load(os.path.join(d, "xf32.npy"))
        finite = np.isfinite(x)
        ref = randn_reference(len(x), 5)
        for name, got in (("cpu", cpu), ("cuda", cuda)):
            why = close((got - x)[finite], ref[finite], 1e-5, 1e-5)
            if why:
                problems.append("%s: randn: %s" % (name, why))
        why = close(cuda[finite], cpu[finite], 1e-6, 1e-6)
        if why:
            problems.append("randn, cuda against cpu: %s" % why)
        return problems
    return ["unknown fn " + fn]


def main(argv):
    if len(argv) == 3 and argv[1] == "inputs":
        inputs(argv[2])
        return 0
    if len(argv) == 6 and argv[1] == "check":
        problems = check(*argv[2:])
        for p in problems[:20]:
            print(p)
        if problems:
            print("FAIL: %d difference(s)" % len(problems))
            return 1
        print("PASS")
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
