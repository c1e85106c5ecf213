#!/usr/bin/env python3
"""reference.py - the built-ins of ops.mdl, computed in plain Python.

    reference.py FN OUT INPUT.npy...

Computes what fn FN of tests/lit/exec/Inputs/ops.mdl returns for the given
inputs, in float64 with Python's math module (independent of modelc's
lowering), and writes it to OUT as .npy in the fn's result dtype.
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import npy  # noqa: E402


class T:
    """A row-major tensor: shape and a flat list."""

    def __init__(self, shape, values):
        self.shape = list(shape)
        self.v = list(values)

    def at(self, *idx):
        off = 0
        for i, d in zip(idx, self.shape):
            off = off * d + i
        return self.v[off]


def load(path):
    _, shape, values = npy.read(path)
    return T(shape, values)


def indices(shape):
    if not shape:
        yield ()
        return
    for i in range(shape[0]):
        for rest in indices(shape[1:]):
            yield (i,) + rest


def ew(x, f):
    return T(x.shape, [f(a) for a in x.v])


def ew2(x, y, f):
    # y broadcasts from the right (same rank or a trailing vector)
    out = []
    for idx in indices(x.shape):
        yidx = idx[len(idx) - len(y.shape):]
        out.append(f(x.at(*idx), y.at(*yidx)))
    return T(x.shape, out)


def matmul(a, b):
    m, k = a.shape
    _, n = b.shape
    return T([m, n], [sum(a.at(i, p) * b.at(p, j) for p in range(k)) for i in range(m) for j in range(n)])


def transpose(a):
    m, n = a.shape
    return T([n, m], [a.at(i, j) for j in range(n) for i in range(m)])


def reduce_rows(x, dim, f):
    b, n = x.shape
    if dim == 1:
        return T([b], [f([x.at(i, j) for j in range(n)]) for i in range(b)])
    return T([n], [f([x.at(i, j) for i in range(b)]) for j in range(n)])


def softmax_rows(rows, log):
    out = []
    for r in rows:
        m = max(r)
        s = sum(math.exp(a - m) for a in r)
        out.append([(a - m - math.log(s)) if log else math.exp(a - m) / s for a in r])
    return out


def sigmoid(a):
    return 1 / (1 + math.exp(-a))


def gelu(a):
    return 0.5 * a * (1 + math.erf(a / math.sqrt(2)))


def conv2d(x, w, b, stride, pad):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = []
    for ni in range(n):
        for oi in range(o):
            for y in range(oh):
                for z in range(ow):
                    acc = b.v[oi] if b else 0.0
                    for ci in range(c):
                        for p in range(kh):
                            for q in range(kw):
                                iy, iz = y * stride - pad + p, z * stride - pad + q
                                if 0 <= iy < h and 0 <= iz < wd:
                                    acc += x.at(ni, ci, iy, iz) * w.at(oi, ci, p, q)
                    out.append(acc)
    return T([n, o, oh, ow], out)


def conv2d_general(x, w, stride, pad, dil, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh = (h + 2 * pad - dil * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dil * (kw - 1) - 1) // stride + 1
    out = []
    for ni, oi, y, z in indices([n, o, oh, ow]):
        g = oi // (o // groups)
        acc = 0.0
        for ci in range(cg):
            for p in range(kh):
                for q in range(kw):
                    iy, iz = y * stride - pad + p * dil, z * stride - pad + q * dil
                    if 0 <= iy < h and 0 <= iz < wd:
                        acc += x.at(ni, g * cg + ci, iy, iz) * w.at(oi, ci, p, q)
        out.append(acc)
    return T([n, o, oh, ow], out)


def adaptive_avg_pool(x, oh, ow):
    """PyTorch's windows: rows floor(i*H/OH) to ceil((i+1)*H/OH)."""
    n, c, h, w = x.shape
    out = []
    for ni, ci, i, j in indices([n, c, oh, ow]):
        r0, r1 = (i * h) // oh, -((-(i + 1) * h) // oh)
        c0, c1 = (j * w) // ow, -((-(j + 1) * w) // ow)
        cells = [x.at(ni, ci, r, q) for r in range(r0, r1) for q in range(c0, c1)]
        out.append(sum(cells) / len(cells))
    return T([n, c, oh, ow], out)


def pool(x, k, f):
    n, c, h, w = x.shape
    out = []
    for idx in indices([n, c, h // k, w // k]):
        ni, ci, y, z = idx
        out.append(f([x.at(ni, ci, y * k + p, z * k + q) for p in range(k) for q in range(k)]))
    return T([n, c, h // k, w // k], out)


def compute(fn, a):
    x = a[0]
    unary = {
        "relu_": lambda v: max(v, 0.0), "gelu_": gelu, "silu_": lambda v: v * sigmoid(v),
        "tanh_": math.tanh, "sigmoid_": sigmoid, "exp_": math.exp, "log_": math.log,
        "sqrt_": math.sqrt, "sin_": math.sin, "cos_": math.cos, "abs_": abs, "neg_": lambda v: -2 * v, "pow_": lambda v: v * v,
        "to_": lambda v: v, "zeros_": lambda v: v + 1.5, "cast_": lambda v: v,
    }
    if fn in unary:
        return ew(x, unary[fn])
    if fn == "arith":
        return ew2(x, a[1], lambda p, q: (p + q) * (p - q) / (q * q + 1.0) + 2.0 * p)
    if fn == "stack_scalars":
        return T(x.shape, [v + 1 + i % 3 for i, v in enumerate(x.v)])
    if fn == "bcast":
        return ew2(x, a[1], lambda p, q: p * q + q)
    if fn == "where_":
        return ew2(x, a[1], lambda p, q: p if p > q else q)
    if fn == "matmul_":
        return matmul(x, transpose(a[1]))
    if fn == "matmul_fn":
        return matmul(transpose(x), a[1])
    if fn == "permute_":
        return transpose(x)
    if fn == "reshape_":
        return T([x.shape[1], 2], x.v)
    if fn in ("flatten_", "squeeze_"):
        return x
    if fn == "concat_":
        b, n = x.shape
        return T([b, 2 * n], [r for i in range(b) for r in
                              [x.at(i, j) for j in range(n)] + [a[1].at(i, j) for j in range(n)]])
    if fn == "stack_":
        return T([2] + x.shape, x.v + a[1].v)
    if fn == "sum_":
        return reduce_rows(x, 1, sum)
    if fn == "sum_all":
        return T([], [sum(x.v)])
    if fn == "mean_":
        r = reduce_rows(x, 0, lambda l: sum(l) / len(l))
        return T([1] + r.shape, r.v)
    if fn == "max_":
        return reduce_rows(x, 1, max)
    if fn == "min_":
        return reduce_rows(x, 0, min)
    if fn in ("softmax_", "log_softmax_"):
        b, n = x.shape
        if fn == "softmax_":
            rows = softmax_rows([[x.at(i, j) for j in range(n)] for i in range(b)], False)
            return T([b, n], [v for r in rows for v in r])
        cols = softmax_rows([[x.at(i, j) for i in range(b)] for j in range(n)], True)
        return T([b, n], [cols[j][i] for i in range(b) for j in range(n)])
    if fn == "layer_norm_":
        b, n = x.shape
        out = []
        for i in range(b):
            r = [x.at(i, j) for j in range(n)]
            m = sum(r) / n
            var = sum((v - m) ** 2 for v in r) / n
            out += [(r[j] - m) / math.sqrt(var + 0.001) * a[1].v[j] + a[2].v[j] for j in range(n)]
        return T([b, n], out)
    if fn == "arange_":
        return T(x.shape, [x.at(i, j) * j for i, j in indices(x.shape)])
    if fn == "eye_":
        return T(x.shape, [x.at(i, j) + (1.0 if i == j else 0.0) for i, j in indices(x.shape)])
    if fn == "conv":
        return conv2d(x, a[1], a[2], 1, 0)
    if fn == "conv_pad":
        return conv2d(x, a[1], None, 2, 1)
    if fn == "max_pool":
        return pool(x, 2, max)
    if fn == "avg_pool":
        return pool(x, 2, lambda l: sum(l) / len(l))
    if fn == "adaptive":
        return pool(x, x.shape[2], lambda l: sum(l) / len(l))
    if fn == "batch_norm_":
        m, v, w, b = a[1:]
        return T(x.shape, [(x.at(*i) - m.v[i[1]]) / math.sqrt(v.v[i[1]] + 1e-5) * w.v[i[1]] + b.v[i[1]]
                           for i in indices(x.shape)])
    if fn in ENTRY_FNS:
        return compute_entry(fn, x, a)
    return compute_more(fn, x, a)


def rows(x):
    return [[x.at(i, j) for j in range(x.shape[1])] for i in range(x.shape[0])]


def from_rows(r):
    return T([len(r), len(r[0]) if r else 0], [v for row in r for v in row])


def compute_more(fn, x, a):
    """The fns of more_ops.mdl: Python's own indexing, %, // and logic."""
    r = rows(x)
    if fn == "row_":
        return T([x.shape[1]], r[1])
    if fn == "last_col":
        return T([x.shape[0]], [row[-1] for row in r])
    if fn == "cols_":
        return from_rows([row[1:3] for row in r])
    if fn == "tail_":
        return from_rows([row[-2:] for row in r])
    if fn == "step_":
        return from_rows([row[0::2] for row in r])
    if fn == "rows_":
        return from_rows([[p + q for p, q in zip(u, w)] for u, w in zip(r[1:], r[:-1])])
    if fn == "mod_":
        return ew2(x, a[1], lambda p, q: p % q + p % 2.0)
    if fn == "imod":
        return ew2(x, a[1], lambda p, q: int(p) % int(q) + (int(p) // int(q)) * 100)
    if fn == "logic_":
        return ew2(x, a[1], lambda p, q: p if (p > 0 and not q > 0) or p > 1 else q)
    if fn == "logic_scalar":
        return ew(x, lambda p: p if p > 0 else -p)
    if fn == "sized":
        return T(x.shape, [x.at(i, j) + 1.0 + i for i, j in indices(x.shape)])
    if fn == "casts":
        return ew(x, lambda p: int(p) * 2 + (1.0 if p > 0 else 0.0))
    if fn == "ints":
        return ew(x, lambda p: abs(-p) + max(p - 1, 0) * p)
    if fn == "adaptive_odd":
        return adaptive_avg_pool(x, 3, 2)
    if fn == "conv_dil":
        return conv2d_general(x, a[1], stride=1, pad=0, dil=2, groups=2)
    sys.exit("reference.py: no reference for fn %s" % fn)


def torch_matmul(a, b):
    """torch.matmul: a vector operand gains a unit dim (a row on the left, a
    column on the right) that the result drops; batch dims broadcast."""
    lhs = T([1] + a.shape, a.v) if len(a.shape) == 1 else a
    rhs = T(b.shape + [1], b.v) if len(b.shape) == 1 else b
    ba, bb = lhs.shape[:-2], rhs.shape[:-2]
    rank = max(len(ba), len(bb))
    ba, bb = [1] * (rank - len(ba)) + ba, [1] * (rank - len(bb)) + bb
    batch = [max(p, q) for p, q in zip(ba, bb)]
    m, k, n = lhs.shape[-2], lhs.shape[-1], rhs.shape[-1]
    out = []
    for idx in indices(batch):
        ia = [i if d != 1 else 0 for i, d in zip(idx, ba)][rank - len(lhs.shape) + 2:]
        ib = [i if d != 1 else 0 for i, d in zip(idx, bb)][rank - len(rhs.shape) + 2:]
        for i in range(m):
            for j in range(n):
                out.append(sum(lhs.at(*ia, i, p) * rhs.at(*ib, p, j) for p in range(k)))
    shape = batch + ([] if len(a.shape) == 1 else [m]) + ([] if len(b.shape) == 1 else [n])
    return T(shape, out)


def scalar(t):
    return t.v[0]


ENTRY_FNS = ("mv", "vm", "dot", "bmv", "vbm", "unbatched", "scale", "pick", "head", "gate",
             "packed", "helpers", "conv_chw", "pool_chw", "patches",
             "positioned")


def compute_entry(fn, x, a):
    """The fns of entry_ops.mdl."""
    if fn in ("mv", "vm", "dot", "bmv", "vbm"):
        return torch_matmul(x, a[1])
    if fn == "unbatched":  # x, weight [out, in], bias [out]
        w, bias = a[1], a[2]
        out, n = w.shape
        return T([out], [sum(x.v[j] * w.at(o, j) for j in range(n)) + bias.v[o] for o in range(out)])
    if fn == "scale":
        s = scalar(a[1])
        return ew(x, lambda p: p * s + s)
    if fn == "pick":
        i = int(scalar(a[1]))
        return T([x.shape[0]], [row[i] for row in rows(x)])
    if fn == "head":
        k = int(scalar(a[1]))
        return from_rows([row[0:k] for row in rows(x)])
    if fn == "gate":
        on = bool(scalar(a[1]))
        return ew(x, lambda p: p if p > 0 and on else 0.0)
    if fn == "packed":
        y = a[1]
        n = x.shape[-1]
        out = []
        for r in range(len(x.v) // n):
            row = x.v[r * n:(r + 1) * n]
            total = sum(row)
            out += [max(p, 0.0) * q + total for p, q in zip(row, y.v[r * n:(r + 1) * n])]
        return T(x.shape, out)
    if fn in ("conv_chw", "pool_chw"):
        batched = T([1] + x.shape, x.v)
        if fn == "conv_chw":
            out = conv2d(batched, a[1], a[2], 1, 0)
        else:
            mx = pool(batched, 2, max)
            avg = pool(batched, 2, lambda l: sum(l) / len(l))
            out = T(mx.shape, [p + 2 * q + 3 * q for p, q in zip(mx.v, avg.v)])
        return T(out.shape[1:], out.v)
    if fn == "patches":  # conv with stride = kernel, [N, C, h, w] -> [N, h * w, C]
        y = conv2d(x, a[1], a[2], a[1].shape[2], 0)
        n, c, h, w = y.shape
        return T([n, h * w, c], [y.at(i, ch, q // w, q % w) for i in range(n) for q in range(h * w)
                                 for ch in range(c)])
    if fn == "positioned":  # patches + pos_embed [1, P, C]
        y = compute_entry("patches", x, a[:3])
        pos = a[3]
        n, p, c = y.shape
        return T(y.shape, [y.at(i, q, ch) + pos.at(0, q, ch) for i, q, ch in indices([n, p, c])])
    if fn == "helpers":  # x / sqrt(n) + B
        b, n = x.shape
        return ew(x, lambda p: p / math.sqrt(n) + b)
    sys.exit("reference.py: no reference for fn %s" % fn)


# Result dtypes other than f32.
RESULT_DTYPES = {"cast_": "f64", "imod": "i64", "ints": "i64"}


def compute_lookup(fn, table, a):
    if fn == "embed":
        i = a[0]
        d = table.shape[1]
        return T(i.shape + [d], [table.at(int(k), j) for k in i.v for j in range(d)])
    if fn == "gather_":
        x, i = a
        return T(i.shape, [x.at(r, int(i.at(r, c))) for r, c in indices(i.shape)])
    if fn == "select":
        x, i = a
        return T([x.shape[0], len(i.v)], [x.at(r, int(k)) for r in range(x.shape[0]) for k in i.v])
    if fn in ("xent", "nll"):
        x, t = a
        b, n = x.shape
        rows = softmax_rows([[x.at(r, j) for j in range(n)] for r in range(b)], True)
        return T([], [-sum(rows[r][int(t.v[r])] for r in range(b)) / b])
    if fn in ("xent_w", "nll_w"):
        x, t, w = a
        b, n = x.shape
        rows = softmax_rows([[x.at(r, j) for j in range(n)] for r in range(b)], True)
        weights = [w.v[int(t.v[r])] for r in range(b)]
        return T([], [-sum(weights[r] * rows[r][int(t.v[r])] for r in range(b)) / sum(weights)])
    sys.exit("reference.py: no reference for fn %s" % fn)


def main(argv):
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    fn, out = argv[1], argv[2]
    if argv[3].startswith("--table="):
        table = load(argv[3][len("--table="):])
        result = compute_lookup(fn, table, [load(p) for p in argv[4:]])
    else:
        result = compute(fn, [load(p) for p in argv[3:]])
    npy.write_array(out, RESULT_DTYPES.get(fn, "f32"), result.shape, result.v)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
