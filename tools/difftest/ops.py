"""The op catalog: for each op, how the generator picks operands and
attributes (`pick`), the result type (`infer`, which also enforces the op's
constraints), its .mdl text (`emit`) and its PyTorch meaning (`twin`).

`pick(g, v)` gets a generator context and a primary operand id and returns
(ins, attrs) or None; it may add leaves through g. `twin(ctx, xs, node)`
computes in float64 (integers in int64); the caller rounds the result to the
node's dtype. `ctx.margin(ok, why)` asks for other inputs where a result sits
on a discontinuity (a comparison of near-equal values, a cast near an
integer), as NNSmith searches for inputs that keep results well defined.
"""
import math

import torch
import torch.nn.functional as F

from model import FLOAT, HALF, INT, Invalid, Ty, is_float, is_int

I64_MIN = -(2 ** 63)
LITS_F = (0.5, 1.5, 2.0, -0.75, 3.0, 0.25, -2.0)


def dimv(d, b):
    return b if d == "B" else d


def concrete(shape, b):
    return [dimv(d, b) for d in shape]


def bcast(a, b):
    """numpy broadcasting where only a static 1 stretches."""
    ra, rb = list(a), list(b)
    n = max(len(ra), len(rb))
    ra = [1] * (n - len(ra)) + ra
    rb = [1] * (n - len(rb)) + rb
    out = []
    for x, y in zip(ra, rb):
        if x == y:
            out.append(x)
        elif x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        else:
            raise Invalid("broadcast %s %s" % (a, b))
    return tuple(out)


def same_dev(tys):
    if len({t.dev for t in tys}) != 1:
        raise Invalid("devices")
    return tys[0].dev


def fmt_lit(x, dtype):
    if dtype in INT:
        return str(int(x))
    s = repr(float(x))
    return s


def norm_dim(d, r):
    return d + r if d < 0 else d


def static(shape, dims=None):
    idx = range(len(shape)) if dims is None else dims
    return all(shape[i] != "B" for i in idx)


class Op:
    name = ""
    covers = ()          # the built-ins / std.nn layers / operators it exercises
    weight = 1.0
    layer = False        # a std.nn submodel: decl() and module()
    twin_exact = True    # False: PyTorch cannot compute it (randn): compared across paths only

    def pick(self, g, v):
        raise NotImplementedError

    def infer(self, tys, a):
        raise NotImplementedError

    def emit(self, names, a, tys, out):
        raise NotImplementedError

    def twin(self, ctx, xs, a, tys, out):
        raise NotImplementedError

    def covered(self, a):
        return self.covers


# ------------------------------------------------------------------ elementwise

UNARY_T = {
    "relu": torch.relu, "gelu": F.gelu, "silu": F.silu, "tanh": torch.tanh,
    "sigmoid": torch.sigmoid, "exp": torch.exp, "sin": torch.sin, "cos": torch.cos,
    "abs": torch.abs, "neg": torch.neg,
}


class Unary(Op):
    name = "unary"
    covers = tuple(UNARY_T) + ("log", "sqrt")
    weight = 3

    def pick(self, g, v):
        t = g.ty(v)
        if t.dtype == "bool":
            return None
        fns = list(UNARY_T) + ["log", "sqrt"]
        if not is_float(t):
            fns = ["abs", "neg"]
        fn = g.rng.choice(fns)
        form = g.rng.choice(["call", "method"]) if fn not in ("neg",) else "call"
        return [v], {"fn": fn, "form": form}

    def covered(self, a):
        return (a["fn"],)

    def infer(self, tys, a):
        t = tys[0]
        if t.dtype == "bool" or (a["fn"] not in ("abs", "neg") and not is_float(t)):
            raise Invalid("dtype")
        return t

    def emit(self, n, a, tys, out):
        fn = a["fn"]
        if fn in ("log", "sqrt"):
            return "%s(abs(%s) + 0.5)" % (fn, n[0])
        if a["form"] == "method":
            return "%s.%s()" % (n[0], fn)
        return "%s(%s)" % (fn, n[0])

    def twin(self, ctx, xs, a, tys, out):
        x = xs[0]
        fn = a["fn"]
        if fn == "log":
            return torch.log(ctx.rnd(x.abs() + 0.5, tys[0].dtype))
        if fn == "sqrt":
            return torch.sqrt(ctx.rnd(x.abs() + 0.5, tys[0].dtype))
        if is_int(tys[0]):
            return ctx.wrap(torch.neg(x) if fn == "neg" else torch.abs(x), tys[0].dtype)
        return UNARY_T[fn](x)


def ifloordiv(a, b):
    safe = torch.where((b == 0) | (b == -1), torch.ones_like(b), b)
    q = torch.div(a, safe, rounding_mode="floor")
    q = torch.where(b == -1, -a, q)
    return torch.where(b == 0, torch.zeros_like(q), q)


def irem(a, b):
    safe = torch.where((b == 0) | (b == -1), torch.ones_like(b), b)
    r = torch.remainder(a, safe)
    return torch.where((b == 0) | (b == -1), torch.zeros_like(r), r)


def ipow(base, e):
    base, e = torch.broadcast_tensors(base, e)
    neg = e < 0
    res_neg = torch.where(base == 1, torch.ones_like(base),
                          torch.where(base == -1, torch.where(e % 2 == 1, -torch.ones_like(base),
                                                              torch.ones_like(base)),
                                      torch.zeros_like(base)))
    ee = torch.where(neg, torch.zeros_like(e), e)
    result = torch.ones_like(base)
    factor = base.clone()
    for _ in range(64):
        if not bool((ee > 0).any()):
            break
        result = torch.where(ee % 2 == 1, result * factor, result)
        factor = factor * factor
        ee = ee // 2
    return torch.where(neg, res_neg, result)


class Binary(Op):
    """a OP b for + - * / % ** with numpy broadcasting, tensor or scalar."""
    name = "binary"
    covers = ("+", "-", "*", "/", "%", "**")
    weight = 4

    def pick(self, g, v):
        t = g.ty(v)
        if t.dtype == "bool":
            return None
        op = g.rng.choice(["+", "-", "*", "/", "%", "**"])
        a = {"op": op, "scalar": None, "swap": False}
        if is_float(t):
            if op in ("/", "%"):
                # a divisor kept away from 0: a fresh leaf or a literal
                if g.rng.random() < 0.4:
                    a["scalar"] = g.rng.choice([0.5, -1.5, 2.0, 0.75, -3.0])
                    return [v], a
                w = g.leaf(Ty(t.dtype, g.bshape(t.shape), t.dev), init="away")
                return [v, w], a
            if op == "**":
                if g.rng.random() < 0.5:
                    a["scalar"] = g.rng.choice([2.0, 3.0, -1.0, 2.0])
                    if a["scalar"] < 0:
                        return None
                    return [v], a
                base = g.leaf(Ty(t.dtype, g.bshape(t.shape), t.dev), init="positive")
                a["swap"] = True  # base ** v, v bounded by the margin checks
                return [v, base], a
        else:
            if op == "**":
                if g.rng.random() < 0.5:
                    a["scalar"] = g.rng.choice([0, 1, 2, 3, 5])
                    return [v], a
                e = g.leaf(Ty(t.dtype, g.bshape(t.shape), t.dev), init="exponent")
                return [v, e], a
            if op in ("/", "%") and g.rng.random() < 0.4:
                a["scalar"] = g.rng.choice([0, -1, 3, -2, 7])
                return [v], a
        if g.rng.random() < 0.25:
            a["scalar"] = g.rng.choice(LITS_F) if is_float(t) else g.rng.choice([2, -3, 0, 1])
            a["swap"] = g.rng.random() < 0.3 and op in ("+", "-", "*")
            return [v], a
        w = g.operand_like(v)
        a["swap"] = g.rng.random() < 0.5 and op not in ("**",)
        return [v, w], a

    def covered(self, a):
        return (a["op"],)

    def infer(self, tys, a):
        if any(t.dtype == "bool" for t in tys):
            raise Invalid("bool")
        if len(tys) == 1:
            if is_int(tys[0]) and isinstance(a["scalar"], float):
                raise Invalid("float literal on int")
            return tys[0]
        if tys[0].dtype != tys[1].dtype:
            raise Invalid("dtypes")
        return Ty(tys[0].dtype, bcast(tys[0].shape, tys[1].shape), same_dev(tys))

    def emit(self, n, a, tys, out):
        op = a["op"]
        if len(n) == 1:
            lit = fmt_lit(a["scalar"], tys[0].dtype)
            if a["swap"]:
                return "%s %s %s" % (lit, op, n[0])
            if lit.startswith("-"):
                lit = "(%s)" % lit
            return "%s %s %s" % (n[0], op, lit)
        x, y = (n[1], n[0]) if a["swap"] else (n[0], n[1])
        return "%s %s %s" % (x, op, y)

    def twin(self, ctx, xs, a, tys, out):
        op = a["op"]
        dt = out.dtype
        if len(xs) == 1:
            s = torch.tensor(a["scalar"], dtype=xs[0].dtype)
            x, y = (s, xs[0]) if a["swap"] else (xs[0], s)
        else:
            x, y = (xs[1], xs[0]) if a["swap"] else (xs[0], xs[1])
        if dt in INT:
            if op == "+":
                r = x + y
            elif op == "-":
                r = x - y
            elif op == "*":
                r = x * y
            elif op == "/":
                r = ifloordiv(*torch.broadcast_tensors(x, y))
            elif op == "%":
                r = irem(*torch.broadcast_tensors(x, y))
            else:
                r = ipow(x, y)
            return ctx.wrap(r, dt)
        if op == "+":
            return x + y
        if op == "-":
            return x - y
        if op == "*":
            return x * y
        if op == "/":
            return x / y
        if op == "%":
            q = x / y
            ctx.margin(((q - torch.round(q)).abs() > 1e-3 * (1 + q.abs())).all(), "% near a multiple")
            return torch.remainder(x, y)
        ctx.margin(bool((x.abs() < 60).all() if a["scalar"] is None else True), "pow overflow")
        return torch.pow(x, y)


CMP = ("==", "!=", "<", "<=", ">", ">=")


class Compare(Op):
    name = "compare"
    covers = CMP
    weight = 2

    def pick(self, g, v):
        t = g.ty(v)
        if t.dtype == "bool":
            return None
        op = g.rng.choice(CMP)
        if g.rng.random() < 0.3:
            return [v], {"op": op, "scalar": g.rng.choice([0.5, -0.25, 0.0]) if is_float(t) else g.rng.choice([0, 1, -1])}
        return [v, g.operand_like(v)], {"op": op, "scalar": None}

    def covered(self, a):
        return (a["op"],)

    def infer(self, tys, a):
        if any(t.dtype == "bool" for t in tys):
            raise Invalid("bool")
        if len(tys) == 1:
            if is_int(tys[0]) and isinstance(a["scalar"], float):
                raise Invalid("float literal on int")
            return tys[0].with_(dtype="bool")
        if tys[0].dtype != tys[1].dtype:
            raise Invalid("dtypes")
        return Ty("bool", bcast(tys[0].shape, tys[1].shape), same_dev(tys))

    def emit(self, n, a, tys, out):
        if len(n) == 1:
            lit = fmt_lit(a["scalar"], tys[0].dtype)
            return "%s %s %s" % (n[0], a["op"], lit if not lit.startswith("-") else "(%s)" % lit)
        return "%s %s %s" % (n[0], a["op"], n[1])

    def twin(self, ctx, xs, a, tys, out):
        x = xs[0]
        y = torch.tensor(a["scalar"], dtype=x.dtype) if len(xs) == 1 else xs[1]
        if is_float(tys[0]):
            tol = 2e-2 if tys[0].dtype in HALF else 1e-4
            d = (x - y).abs()
            ctx.margin(bool(((d == 0) & ctx.exact(*( [0] if len(xs) == 1 else [0, 1]))).all()
                            or (d > tol * (1 + x.abs())).all()), "near-equal comparison")
        return {"==": torch.eq, "!=": torch.ne, "<": torch.lt, "<=": torch.le, ">": torch.gt,
                ">=": torch.ge}[a["op"]](x, y)


class Logic(Op):
    name = "logic"
    covers = ("and", "or", "not")

    def pick(self, g, v):
        t = g.ty(v)
        if t.dtype != "bool":
            return None
        op = g.rng.choice(["and", "or", "not"])
        if op == "not":
            return [v], {"op": op}
        return [v, g.operand_like(v)], {"op": op}

    def covered(self, a):
        return (a["op"],)

    def infer(self, tys, a):
        if any(t.dtype != "bool" for t in tys):
            raise Invalid("bool")
        if a["op"] == "not":
            return tys[0]
        return Ty("bool", bcast(tys[0].shape, tys[1].shape), same_dev(tys))

    def emit(self, n, a, tys, out):
        if a["op"] == "not":
            return "not %s" % n[0]
        return "%s %s %s" % (n[0], a["op"], n[1])

    def twin(self, ctx, xs, a, tys, out):
        if a["op"] == "not":
            return ~xs[0]
        return (xs[0] & xs[1]) if a["op"] == "and" else (xs[0] | xs[1])


class Where(Op):
    name = "where"
    covers = ("where",)
    weight = 1.5

    def pick(self, g, v):
        t = g.ty(v)
        mask = g.find(lambda u: u.dtype == "bool" and u.dev == t.dev and _bc_ok(u.shape, t.shape))
        if mask is None:
            mask = g.leaf(Ty("bool", g.bshape(t.shape), t.dev), init="mask")
        w = g.operand_like(v)
        return [mask, v, w], {}

    def infer(self, tys, a):
        m, x, y = tys
        if m.dtype != "bool" or x.dtype != y.dtype:
            raise Invalid("where")
        return Ty(x.dtype, bcast(bcast(m.shape, x.shape), y.shape), same_dev(tys))

    def emit(self, n, a, tys, out):
        return "where(%s, %s, %s)" % tuple(n)

    def twin(self, ctx, xs, a, tys, out):
        return torch.where(xs[0], xs[1], xs[2])


def _bc_ok(a, b):
    try:
        return bcast(a, b) == tuple(b)
    except Invalid:
        return False


class MinMax2(Op):
    name = "minmax2"
    covers = ("maximum", "minimum")

    def pick(self, g, v):
        t = g.ty(v)
        if t.dtype == "bool":
            return None
        return [v, g.operand_like(v)], {"fn": g.rng.choice(["maximum", "minimum"])}

    def covered(self, a):
        return (a["fn"],)

    def infer(self, tys, a):
        if tys[0].dtype != tys[1].dtype or tys[0].dtype == "bool":
            raise Invalid("dtypes")
        return Ty(tys[0].dtype, bcast(tys[0].shape, tys[1].shape), same_dev(tys))

    def emit(self, n, a, tys, out):
        return "%s(%s, %s)" % (a["fn"], n[0], n[1])

    def twin(self, ctx, xs, a, tys, out):
        return torch.maximum(xs[0], xs[1]) if a["fn"] == "maximum" else torch.minimum(xs[0], xs[1])


class Clamp(Op):
    name = "clamp"
    covers = ("clamp", "clip")

    def pick(self, g, v):
        t = g.ty(v)
        if t.dtype == "bool":
            return None
        fn = g.rng.choice(["clamp", "clip"])
        kind = g.rng.choice(["both", "min", "max", "tensor"])
        a = {"fn": fn, "kind": kind}
        if kind == "tensor":
            return [v, g.operand_like(v)], a
        if is_float(t):
            a["lo"], a["hi"] = sorted(g.rng.sample([-1.5, -0.5, 0.0, 0.25, 1.0, 2.0], 2))
            if g.rng.random() < 0.15:
                a["lo"], a["hi"] = a["hi"], a["lo"]  # hi wins where lo > hi
        else:
            a["lo"], a["hi"] = sorted(g.rng.sample([-5, -1, 0, 2, 100], 2))
        return [v], a

    def covered(self, a):
        return (a["fn"],)

    def infer(self, tys, a):
        if tys[0].dtype == "bool":
            raise Invalid("bool")
        if len(tys) == 2:
            if tys[1].dtype != tys[0].dtype or not _bc_ok(tys[1].shape, tys[0].shape):
                raise Invalid("clamp bound")
            same_dev(tys)
        return tys[0]

    def emit(self, n, a, tys, out):
        if a["kind"] == "tensor":
            return "%s(%s, min: %s)" % (a["fn"], n[0], n[1])
        dt = tys[0].dtype
        parts = []
        if a["kind"] in ("both", "min"):
            parts.append("min: %s" % fmt_lit(a["lo"], dt))
        if a["kind"] in ("both", "max"):
            parts.append("max: %s" % fmt_lit(a["hi"], dt))
        return "%s(%s, %s)" % (a["fn"], n[0], ", ".join(parts))

    def twin(self, ctx, xs, a, tys, out):
        x = xs[0]
        if a["kind"] == "tensor":
            return torch.maximum(x, xs[1])
        if a["kind"] in ("both", "min"):
            x = torch.maximum(x, torch.tensor(a["lo"], dtype=x.dtype))
        if a["kind"] in ("both", "max"):
            x = torch.minimum(x, torch.tensor(a["hi"], dtype=x.dtype))
        return x


class Dropout(Op):
    name = "dropout"
    covers = ("dropout",)
    weight = 0.3

    def pick(self, g, v):
        return [v], {"p": g.rng.choice([0.1, 0.5])} if is_float(g.ty(v)) else None

    def infer(self, tys, a):
        if not is_float(tys[0]):
            raise Invalid("float")
        return tys[0]

    def emit(self, n, a, tys, out):
        return "dropout(%s, %s)" % (n[0], a["p"])

    def twin(self, ctx, xs, a, tys, out):
        return xs[0]


class Cast(Op):
    name = "cast"
    covers = ("cast",)
    weight = 1.5

    def pick(self, g, v):
        t = g.ty(v)
        choices = [d for d in ("f32", "f16", "bf16", "f64", "i32", "i64", "bool") if d != t.dtype]
        to = g.rng.choice(choices)
        return [v], {"to": to, "form": g.rng.choice(["cast", "to"])}

    def covered(self, a):
        return ("cast",) if a["form"] == "cast" else ("to",)

    def infer(self, tys, a):
        if tys[0].dtype == a["to"]:
            raise Invalid("same dtype")
        return tys[0].with_(dtype=a["to"])

    def emit(self, n, a, tys, out):
        if a["form"] == "cast":
            return "cast(%s, %s)" % (n[0], a["to"])
        return "%s.to(%s)" % (n[0], a["to"])

    def twin(self, ctx, xs, a, tys, out):
        x = xs[0]
        src, to = tys[0].dtype, a["to"]
        if to == "bool":
            return x != 0
        if src == "bool":
            return x.to(torch.float64 if to in FLOAT else torch.int64)
        if to in INT:
            if src in FLOAT:
                lim = 2.0 ** 31 if to == "i32" else 2.0 ** 62
                frac = (x - torch.trunc(x)).abs()
                ctx.margin(bool((x.abs() < lim).all()), "float to int out of range")
                ctx.margin(bool(((frac > 1e-3) & (frac < 1 - 1e-3)).all() or ctx.exact(0)),
                           "cast near an integer")
                return ctx.wrap(torch.trunc(x).to(torch.int64), to)
            return ctx.wrap(x, to)
        if src in INT:
            if to == "f16":
                ctx.margin(bool((x.abs() < 60000).all()), "int to f16 overflow")
            return x.to(torch.float64)
        return x


# ------------------------------------------------------------------ reductions

class Reduce(Op):
    name = "reduce"
    covers = ("sum", "mean", "max", "min")
    weight = 2

    def pick(self, g, v):
        t = g.ty(v)
        fn = g.rng.choice(["sum", "mean", "max", "min"])
        if t.rank == 0:
            return None
        a = {"fn": fn, "form": g.rng.choice(["call", "method"])}
        if g.rng.random() < 0.8:
            a["dim"] = g.rng.randrange(-t.rank, t.rank)
            a["keepdim"] = g.rng.random() < 0.4
        return [v], a

    def covered(self, a):
        return (a["fn"],)

    def infer(self, tys, a):
        t = tys[0]
        fn = a["fn"]
        if t.dtype == "bool" and fn != "sum":
            raise Invalid("bool")
        if fn == "mean" and not is_float(t):
            raise Invalid("mean of ints")
        dt = t.dtype
        if fn == "sum" and not is_float(t):
            dt = "i64"
        if "dim" not in a:
            if fn in ("max", "min") and t.rank == 0:
                raise Invalid("rank")
            return Ty(dt, (), t.dev)
        d = norm_dim(a["dim"], t.rank)
        if not 0 <= d < t.rank:
            raise Invalid("dim")
        shape = list(t.shape)
        if a["keepdim"]:
            shape[d] = 1
        else:
            del shape[d]
        return Ty(dt, shape, t.dev)

    def emit(self, n, a, tys, out):
        args = []
        if "dim" in a:
            args.append("dim: %d" % a["dim"])
            if a["keepdim"] or True:
                args.append("keepdim: %s" % ("true" if a["keepdim"] else "false"))
        if a["form"] == "method":
            return "%s.%s(%s)" % (n[0], a["fn"], ", ".join(args))
        return "%s(%s)" % (a["fn"], ", ".join([n[0]] + args))

    def twin(self, ctx, xs, a, tys, out):
        x = xs[0]
        fn = a["fn"]
        if x.dtype == torch.bool:
            x = x.to(torch.int64)
        if "dim" not in a:
            r = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax, "min": torch.amin}[fn](x) \
                if x.dim() else x
            if fn in ("max", "min") and x.dim() == 0:
                r = x
        else:
            kw = {"dim": a["dim"], "keepdim": a["keepdim"]}
            r = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax, "min": torch.amin}[fn](x, **kw)
        if out.dtype in INT:
            r = ctx.wrap(r, out.dtype)
        return r


class ArgReduce(Op):
    name = "argreduce"
    covers = ("argmax", "argmin")

    def pick(self, g, v):
        t = g.ty(v)
        if t.rank == 0 or t.dtype == "bool":
            return None
        a = {"fn": g.rng.choice(["argmax", "argmin"])}
        if g.rng.random() < 0.8:
            a["dim"] = g.rng.randrange(-t.rank, t.rank)
            a["keepdim"] = g.rng.random() < 0.3
        return [v], a

    def covered(self, a):
        return (a["fn"],)

    def infer(self, tys, a):
        t = tys[0]
        if t.dtype == "bool":
            raise Invalid("bool")
        if "dim" not in a:
            return Ty("i64", (), t.dev)
        d = norm_dim(a["dim"], t.rank)
        shape = list(t.shape)
        if a["keepdim"]:
            shape[d] = 1
        else:
            del shape[d]
        return Ty("i64", shape, t.dev)

    def emit(self, n, a, tys, out):
        if "dim" not in a:
            return "%s(%s)" % (a["fn"], n[0])
        return "%s(%s, dim: %d, keepdim: %s)" % (a["fn"], n[0], a["dim"], "true" if a["keepdim"] else "false")

    def twin(self, ctx, xs, a, tys, out):
        x = xs[0]
        neg = a["fn"] == "argmin"
        xx = -x if neg else x
        flat = "dim" not in a
        y = xx.reshape(-1) if flat else xx
        dim = 0 if flat else a["dim"]
        if is_float(tys[0]) and y.numel():
            top = torch.topk(y, min(2, y.shape[dim]), dim=dim).values
            if top.shape[dim] == 2:
                gap = (top.select(dim, 0) - top.select(dim, 1))
                ctx.margin(bool(((gap == 0) & ctx.exact(0)).all() or (gap > 1e-3 * (1 + top.select(dim, 0).abs())).all()),
                           "near tie in argmax")
        # first position of the extreme value (PyTorch's argmax may pick another on ties)
        m = torch.amax(y, dim=dim, keepdim=True)
        idx = torch.arange(y.shape[dim]).reshape([-1 if i == (dim % y.dim()) else 1 for i in range(y.dim())])
        cand = torch.where(y == m, idx.expand_as(y), torch.full_like(y, y.shape[dim], dtype=torch.int64))
        r = cand.amin(dim=dim, keepdim=(not flat and a["keepdim"]))
        return r


class Softmax(Op):
    name = "softmax"
    covers = ("softmax", "log_softmax")
    weight = 1.5

    def pick(self, g, v):
        t = g.ty(v)
        if not is_float(t) or t.rank == 0:
            return None
        return [v], {"fn": g.rng.choice(["softmax", "log_softmax"]), "dim": g.rng.randrange(-t.rank, t.rank),
                     "named": g.rng.random() < 0.5}

    def covered(self, a):
        return (a["fn"],)

    def infer(self, tys, a):
        if not is_float(tys[0]) or tys[0].rank == 0:
            raise Invalid("softmax")
        return tys[0]

    def emit(self, n, a, tys, out):
        return "%s(%s, %s%d)" % (a["fn"], n[0], "dim: " if a["named"] else "", a["dim"])

    def twin(self, ctx, xs, a, tys, out):
        f = torch.softmax if a["fn"] == "softmax" else torch.log_softmax
        return f(xs[0], dim=a["dim"])


# ------------------------------------------------------------------ shapes

def factor_pairs(n):
    return [(d, n // d) for d in range(1, n + 1) if n % d == 0]


class Reshape(Op):
    name = "reshape"
    covers = ("reshape",)
    weight = 1.5

    def pick(self, g, v):
        t = g.ty(v)
        lead = 1 if (t.rank and t.shape[0] == "B") else 0
        if any(d == "B" for d in t.shape[lead:]):
            return None
        n = 1
        for d in t.shape[lead:]:
            n *= d
        target = []
        rest = n
        for _ in range(g.rng.randint(0, 3)):
            f = g.rng.choice(factor_pairs(rest))
            target.append(f[0])
            rest = f[1]
        target.append(rest)
        g.rng.shuffle(target)
        if lead:
            target = ["B"] + target
        a = {"shape": target, "infer": None}
        cands = [i for i, d in enumerate(target) if d != "B"]
        if cands and g.rng.random() < 0.5:
            a["infer"] = g.rng.choice(cands)
        return [v], a

    def infer(self, tys, a):
        t = tys[0]
        lead = 1 if (t.rank and t.shape[0] == "B") else 0
        if (a["shape"] and a["shape"][0] == "B") != bool(lead):
            raise Invalid("batch")
        n = 1
        for d in t.shape[lead:]:
            if d == "B":
                raise Invalid("B")
            n *= d
        m = 1
        for d in a["shape"][lead:]:
            m *= d
        if n != m:
            raise Invalid("count")
        return Ty(t.dtype, a["shape"], t.dev)

    def emit(self, n, a, tys, out):
        dims = []
        for i, d in enumerate(a["shape"]):
            if d == "B":
                dims.append("%s.shape[0]" % n[0])
            elif a["infer"] == i:
                dims.append("-1")
            else:
                dims.append(str(d))
        return "reshape(%s, [%s])" % (n[0], ", ".join(dims))

    def twin(self, ctx, xs, a, tys, out):
        return xs[0].reshape(concrete(out.shape, ctx.b))


class Flatten(Op):
    name = "flatten"
    covers = ("flatten",)

    def pick(self, g, v):
        t = g.ty(v)
        if t.rank < 2:
            return None
        s = g.rng.randrange(0, t.rank)
        e = g.rng.randrange(s, t.rank)
        return [v], {"start": s, "end": e, "neg": g.rng.random() < 0.3}

    def infer(self, tys, a):
        t = tys[0]
        s, e = a["start"], a["end"]
        if e >= t.rank:
            raise Invalid("rank")
        mid = t.shape[s:e + 1]
        if len(mid) > 1 and "B" in mid:
            raise Invalid("B")
        n = 1
        for d in mid:
            n = d if d == "B" else n * d
        return Ty(t.dtype, t.shape[:s] + (n,) + t.shape[e + 1:], t.dev)

    def emit(self, n, a, tys, out):
        e = a["end"] - tys[0].rank if a["neg"] else a["end"]
        return "flatten(%s, start_dim: %d, end_dim: %d)" % (n[0], a["start"], e)

    def twin(self, ctx, xs, a, tys, out):
        return torch.flatten(xs[0], a["start"], a["end"])


class Transpose(Op):
    name = "transpose"
    covers = ("transpose", "permute", ".T")
    weight = 1.5

    def pick(self, g, v):
        t = g.ty(v)
        if t.rank < 2:
            return None
        fn = g.rng.choice(["transpose", "permute"] + ([".T"] if t.rank == 2 else []))
        if fn == "transpose":
            d0, d1 = g.rng.sample(range(t.rank), 2)
            return [v], {"fn": fn, "d": [d0, d1]}
        if fn == ".T":
            return [v], {"fn": fn}
        p = list(range(t.rank))
        g.rng.shuffle(p)
        return [v], {"fn": fn, "p": p}

    def covered(self, a):
        return (a["fn"],)

    def infer(self, tys, a):
        t = tys[0]
        s = list(t.shape)
        if a["fn"] == ".T":
            if t.rank != 2:
                raise Invalid("rank")
            return Ty(t.dtype, s[::-1], t.dev)
        if a["fn"] == "transpose":
            d0, d1 = a["d"]
            if max(d0, d1) >= t.rank:
                raise Invalid("rank")
            s[d0], s[d1] = s[d1], s[d0]
            return Ty(t.dtype, s, t.dev)
        if sorted(a["p"]) != list(range(t.rank)):
            raise Invalid("rank")
        return Ty(t.dtype, [s[i] for i in a["p"]], t.dev)

    def emit(self, n, a, tys, out):
        if a["fn"] == ".T":
            return "%s.T" % n[0]
        if a["fn"] == "transpose":
            return "transpose(%s, %d, %d)" % (n[0], a["d"][0], a["d"][1])
        return "permute(%s, [%s])" % (n[0], ", ".join(map(str, a["p"])))

    def twin(self, ctx, xs, a, tys, out):
        if a["fn"] == ".T":
            return xs[0].t()
        if a["fn"] == "transpose":
            return xs[0].transpose(*a["d"])
        return xs[0].permute(*a["p"])


class Unsqueeze(Op):
    name = "unsqueeze"
    covers = ("unsqueeze", "squeeze")

    def pick(self, g, v):
        t = g.ty(v)
        ones = [i for i, d in enumerate(t.shape) if d == 1]
        if ones and g.rng.random() < 0.5:
            return [v], {"fn": "squeeze", "dim": g.rng.choice(ones)}
        if t.rank >= 5:
            return None
        return [v], {"fn": "unsqueeze", "dim": g.rng.randrange(-t.rank - 1, t.rank + 1)}

    def covered(self, a):
        return (a["fn"],)

    def infer(self, tys, a):
        t = tys[0]
        s = list(t.shape)
        if a["fn"] == "squeeze":
            if a["dim"] >= t.rank or s[a["dim"]] != 1:
                raise Invalid("squeeze")
            del s[a["dim"]]
        else:
            d = a["dim"] + t.rank + 1 if a["dim"] < 0 else a["dim"]
            if not 0 <= d <= t.rank:
                raise Invalid("dim")
            s.insert(d, 1)
        return Ty(t.dtype, s, t.dev)

    def emit(self, n, a, tys, out):
        return "%s(%s, %d)" % (a["fn"], n[0], a["dim"])

    def twin(self, ctx, xs, a, tys, out):
        return xs[0].squeeze(a["dim"]) if a["fn"] == "squeeze" else xs[0].unsqueeze(a["dim"])


class Concat(Op):
    name = "concat"
    covers = ("concat", "cat", "stack")
    weight = 1.5

    def pick(self, g, v):
        t = g.ty(v)
        fn = g.rng.choice(["concat", "cat", "stack"])
        k = g.rng.randint(1, 3)
        if fn == "stack":
            d = g.rng.randrange(-t.rank - 1, t.rank + 1)
            others = [g.operand_same(v) for _ in range(k)]
            return [v] + others, {"fn": fn, "dim": d}
        if t.rank == 0:
            return None
        d = g.rng.randrange(-t.rank, t.rank)
        if t.shape[d] == "B":
            others = [g.operand_same(v) for _ in range(k)]
        else:
            others = []
            for _ in range(k):
                s = list(t.shape)
                s[d] = g.rng.randint(1, 5)
                others.append(g.find(lambda u: u.dtype == t.dtype and u.dev == t.dev and u.rank == t.rank
                                     and all(u.shape[i] == t.shape[i] for i in range(t.rank) if i != d % t.rank)
                                     and u.shape[d] != "B") or g.leaf(Ty(t.dtype, s, t.dev)))
        return [v] + others, {"fn": fn, "dim": d}

    def covered(self, a):
        return (a["fn"],)

    def infer(self, tys, a):
        t = tys[0]
        same_dev(tys)
        if any(u.dtype != t.dtype or u.rank != t.rank for u in tys):
            raise Invalid("concat")
        if a["fn"] == "stack":
            if any(u.shape != t.shape for u in tys):
                raise Invalid("stack")
            d = a["dim"] + t.rank + 1 if a["dim"] < 0 else a["dim"]
            s = list(t.shape)
            s.insert(d, len(tys))
            return Ty(t.dtype, s, t.dev)
        d = norm_dim(a["dim"], t.rank)
        if not 0 <= d < t.rank:
            raise Invalid("dim")
        for u in tys:
            if any(u.shape[i] != t.shape[i] for i in range(t.rank) if i != d):
                raise Invalid("shape")
        if t.shape[d] == "B":
            if any(u.shape[d] != "B" for u in tys):
                raise Invalid("B")
            if len(tys) > 1:
                raise Invalid("B * k")
            return t
        if any(u.shape[d] == "B" for u in tys):
            raise Invalid("B")
        s = list(t.shape)
        s[d] = sum(u.shape[d] for u in tys)
        return Ty(t.dtype, s, t.dev)

    def emit(self, n, a, tys, out):
        return "%s([%s], %s)" % (a["fn"], ", ".join(n), ("dim: %d" % a["dim"]) if a["fn"] != "cat" else str(a["dim"]))

    def twin(self, ctx, xs, a, tys, out):
        if a["fn"] == "stack":
            return torch.stack(xs, a["dim"])
        return torch.cat(xs, a["dim"])


class Split(Op):
    name = "split"
    covers = ("split", "chunk")

    def pick(self, g, v):
        t = g.ty(v)
        dims = [i for i, d in enumerate(t.shape) if d != "B" and d >= 2]
        if not dims:
            return None
        d = g.rng.choice(dims)
        n = t.shape[d]
        fn = g.rng.choice(["split", "chunk"])
        if fn == "chunk":
            c = g.rng.randint(2, n)
            parts = math.ceil(n / math.ceil(n / c))
            return [v], {"fn": fn, "dim": d, "chunks": c, "index": g.rng.randrange(-parts, parts)}
        if g.rng.random() < 0.5:
            size = g.rng.randint(1, n - 1)
            parts = math.ceil(n / size)
            return [v], {"fn": fn, "dim": d, "size": size, "index": g.rng.randrange(-parts, parts)}
        cut = sorted(g.rng.sample(range(1, n), g.rng.randint(1, min(3, n - 1))))
        sizes = [b - a for a, b in zip([0] + cut, cut + [n])]
        return [v], {"fn": fn, "dim": d, "sizes": sizes, "index": g.rng.randrange(-len(sizes), len(sizes))}

    def covered(self, a):
        return (a["fn"],)

    def _sizes(self, n, a):
        if a["fn"] == "chunk":
            each = math.ceil(n / a["chunks"])
            return [min(each, n - i) for i in range(0, n, each)]
        if "size" in a:
            return [min(a["size"], n - i) for i in range(0, n, a["size"])]
        if sum(a["sizes"]) != n:
            raise Invalid("sizes")
        return a["sizes"]

    def infer(self, tys, a):
        t = tys[0]
        d = a["dim"]
        if d >= t.rank or t.shape[d] == "B":
            raise Invalid("dim")
        sizes = self._sizes(t.shape[d], a)
        if not -len(sizes) <= a["index"] < len(sizes):
            raise Invalid("index")
        s = list(t.shape)
        s[d] = sizes[a["index"]]
        return Ty(t.dtype, s, t.dev)

    def emit(self, n, a, tys, out):
        if a["fn"] == "chunk":
            return "chunk(%s, %d, dim: %d)[%d]" % (n[0], a["chunks"], a["dim"], a["index"])
        arg = str(a["size"]) if "size" in a else "[%s]" % ", ".join(map(str, a["sizes"]))
        return "split(%s, %s, dim: %d)[%d]" % (n[0], arg, a["dim"], a["index"])

    def twin(self, ctx, xs, a, tys, out):
        if a["fn"] == "chunk":
            return torch.chunk(xs[0], a["chunks"], a["dim"])[a["index"]]
        arg = a["size"] if "size" in a else a["sizes"]
        return torch.split(xs[0], arg, a["dim"])[a["index"]]


class Slice(Op):
    name = "slice"
    covers = ("x[a:b:s]", "x[i]")
    weight = 1.5

    def pick(self, g, v):
        t = g.ty(v)
        dims = [i for i, d in enumerate(t.shape) if d != "B"]
        if not dims:
            return None
        d = g.rng.choice(dims)
        n = t.shape[d]
        if g.rng.random() < 0.3:
            return [v], {"dim": d, "index": g.rng.randrange(-n, n)}
        lo = g.rng.choice([None, g.rng.randrange(-n, n)])
        hi = g.rng.choice([None, g.rng.randrange(-n, n + 3)])
        st = g.rng.choice([None, 1, 2, 3])
        return [v], {"dim": d, "lo": lo, "hi": hi, "step": st}

    def covered(self, a):
        return ("x[i]",) if "index" in a else ("x[a:b:s]",)

    def infer(self, tys, a):
        t = tys[0]
        d = a["dim"]
        if d >= t.rank or t.shape[d] == "B":
            raise Invalid("dim")
        n = t.shape[d]
        s = list(t.shape)
        if "index" in a:
            if not -n <= a["index"] < n:
                raise Invalid("index")
            del s[d]
        else:
            k = len(range(n)[slice(a["lo"], a["hi"], a["step"])])
            if k == 0:
                raise Invalid("empty")
            s[d] = k
        return Ty(t.dtype, s, t.dev)

    def emit(self, n, a, tys, out):
        idx = [":"] * (a["dim"] + 1)
        if "index" in a:
            idx[-1] = str(a["index"])
        else:
            txt = "%s:%s" % ("" if a["lo"] is None else a["lo"], "" if a["hi"] is None else a["hi"])
            if a["step"] is not None:
                txt += ":%d" % a["step"]
            idx[-1] = txt
        return "%s[%s]" % (n[0], ", ".join(idx))

    def twin(self, ctx, xs, a, tys, out):
        idx = [slice(None)] * a["dim"]
        if "index" in a:
            idx.append(a["index"])
        else:
            idx.append(slice(a["lo"], a["hi"], a["step"]))
        return xs[0][tuple(idx)]


class Pad(Op):
    name = "pad"
    covers = ("pad",)

    def pick(self, g, v):
        t = g.ty(v)
        if t.rank == 0:
            return None
        mode = g.rng.choice(["constant", "constant", "reflect", "replicate", "circular"])
        k = g.rng.randint(1, min(2, t.rank))
        if mode != "constant":
            k = min(k, max(t.rank - 2, 0) or 1)
        pads = []
        for i in range(k):
            n = t.shape[t.rank - 1 - i]
            if n == "B":
                return None
            if mode == "constant":
                pads += [g.rng.randint(-1 if n > 2 else 0, 2), g.rng.randint(-1 if n > 2 else 0, 2)]
            elif mode == "reflect":
                pads += [g.rng.randint(0, min(2, n - 1)), g.rng.randint(0, min(2, n - 1))]
            else:
                pads += [g.rng.randint(0, min(2, n)), g.rng.randint(0, min(2, n))]
        a = {"pads": pads, "mode": mode}
        if mode == "constant" and g.rng.random() < 0.5:
            a["value"] = 0.5 if is_float(t) else 3
        return [v], a

    def infer(self, tys, a):
        t = tys[0]
        s = list(t.shape)
        k = len(a["pads"]) // 2
        if k > t.rank or (a["mode"] != "constant" and (t.rank < k + 1 or t.rank > k + 2)):
            raise Invalid("rank")
        if t.dtype == "bool":
            raise Invalid("bool")
        for i in range(k):
            d = t.rank - 1 - i
            if s[d] == "B":
                raise Invalid("B")
            lo, hi = a["pads"][2 * i], a["pads"][2 * i + 1]
            if a["mode"] == "reflect" and (lo >= s[d] or hi >= s[d]):
                raise Invalid("reflect")
            if a["mode"] == "circular" and (lo > s[d] or hi > s[d]):
                raise Invalid("circular")
            s[d] = s[d] + lo + hi
            if s[d] <= 0:
                raise Invalid("empty")
        if "value" in a and is_int(t) and isinstance(a["value"], float):
            raise Invalid("float value")
        return Ty(t.dtype, s, t.dev)

    def emit(self, n, a, tys, out):
        args = [n[0], "[%s]" % ", ".join(map(str, a["pads"]))]
        if a["mode"] != "constant" or g_rand_named(a):
            args.append('mode: "%s"' % a["mode"])
        if "value" in a:
            args.append("value: %s" % fmt_lit(a["value"], tys[0].dtype))
        return "pad(%s)" % ", ".join(args)

    def twin(self, ctx, xs, a, tys, out):
        x = xs[0]
        if a["mode"] == "constant":
            return F.pad(x, a["pads"], value=a.get("value", 0))
        # by index, as PyTorch's pads mean, for every dtype (its own kernels
        # take floats only)
        y = x
        for i in range(len(a["pads"]) // 2):
            d = x.dim() - 1 - i
            lo, hi = a["pads"][2 * i], a["pads"][2 * i + 1]
            n = y.shape[d]
            idx = torch.arange(-lo, n + hi)
            if a["mode"] == "reflect":
                idx = torch.where(idx < 0, -idx, torch.where(idx >= n, 2 * (n - 1) - idx, idx))
            elif a["mode"] == "replicate":
                idx = idx.clamp(0, n - 1)
            else:
                idx = torch.remainder(idx, n)
            y = torch.index_select(y, d, idx)
        return y


def ops_numel(s):
    n = 1
    for d in s:
        n *= d
    return n


def g_rand_named(a):
    return len(a["pads"]) == 2


class Masks(Op):
    name = "masks"
    covers = ("masked_fill", "triu", "tril")

    def pick(self, g, v):
        t = g.ty(v)
        fn = g.rng.choice(["masked_fill", "triu", "tril"])
        if fn == "masked_fill":
            if t.dtype == "bool":
                return None
            mask = g.find(lambda u: u.dtype == "bool" and u.dev == t.dev and _bc_ok(u.shape, t.shape)) \
                or g.leaf(Ty("bool", g.bshape(t.shape), t.dev), init="mask")
            val = g.rng.choice([-1000.0, 0.5, 0.0]) if is_float(t) else g.rng.choice([-7, 0])
            return [v, mask], {"fn": fn, "value": val}
        if t.rank < 2 or not static(t.shape, [t.rank - 2, t.rank - 1]):
            return None
        return [v], {"fn": fn, "diagonal": g.rng.choice([None, -1, 0, 1, 2])}

    def covered(self, a):
        return (a["fn"],)

    def infer(self, tys, a):
        t = tys[0]
        if a["fn"] == "masked_fill":
            if tys[1].dtype != "bool" or not _bc_ok(tys[1].shape, t.shape) or t.dtype == "bool":
                raise Invalid("mask")
            if is_int(t) and isinstance(a["value"], float):
                raise Invalid("value")
            same_dev(tys)
            return t
        if t.rank < 2 or not static(t.shape, [t.rank - 2, t.rank - 1]):
            raise Invalid("rank")
        return t

    def emit(self, n, a, tys, out):
        if a["fn"] == "masked_fill":
            lit = fmt_lit(a["value"], tys[0].dtype)
            return "masked_fill(%s, %s, %s)" % (n[0], n[1], lit)
        if a["diagonal"] is None:
            return "%s(%s)" % (a["fn"], n[0])
        return "%s(%s, diagonal: %d)" % (a["fn"], n[0], a["diagonal"])

    def twin(self, ctx, xs, a, tys, out):
        if a["fn"] == "masked_fill":
            return xs[0].masked_fill(xs[1], a["value"])
        f = torch.triu if a["fn"] == "triu" else torch.tril
        return f(xs[0], a["diagonal"] or 0)


# ------------------------------------------------------------------ linear algebra

class Matmul(Op):
    name = "matmul"
    covers = ("@", "matmul")
    weight = 2

    def pick(self, g, v):
        t = g.ty(v)
        if not is_float(t) or t.rank == 0:
            return None
        k = t.shape[-1]
        if k == "B":
            return None
        n = g.rng.randint(1, 8)
        kind = g.rng.choice(["w", "w", "vec", "batched"])
        if kind == "vec":
            w = g.leaf(Ty(t.dtype, (k,), t.dev), kind="param")
        elif kind == "batched" and t.rank >= 3:
            w = g.leaf(Ty(t.dtype, t.shape[:-2] + (k, n), t.dev))
        else:
            w = g.find(lambda u: u.dtype == t.dtype and u.dev == t.dev and u.rank == 2 and u.shape[0] == k
                       and u.shape[1] != "B") if g.rng.random() < 0.3 else None
            w = w if w is not None else g.leaf(Ty(t.dtype, (k, n), t.dev), kind="param")
        return [v, w], {"fn": g.rng.choice(["@", "matmul"])}

    def covered(self, a):
        return (a["fn"],)

    def infer(self, tys, a):
        x, w = tys
        if x.dtype != w.dtype or not is_float(x) or x.rank == 0 or w.rank == 0:
            raise Invalid("matmul")
        same_dev(tys)
        if x.shape[-1] != (w.shape[0] if w.rank == 1 else w.shape[-2]):
            raise Invalid("k")
        if w.rank == 1:
            return Ty(x.dtype, x.shape[:-1], x.dev)
        if x.rank == 1:
            return Ty(x.dtype, w.shape[:-2] + w.shape[-1:], x.dev)
        batch = bcast(x.shape[:-2], w.shape[:-2])
        return Ty(x.dtype, batch + (x.shape[-2], w.shape[-1]), x.dev)

    def emit(self, n, a, tys, out):
        if a["fn"] == "@":
            return "%s @ %s" % (n[0], n[1])
        return "matmul(%s, %s)" % (n[0], n[1])

    def twin(self, ctx, xs, a, tys, out):
        return torch.matmul(xs[0], xs[1])


class Attention(Op):
    """softmax(q @ k^T * scale (+ causal mask)) @ v, built from built-ins."""
    name = "attention"
    covers = ("attention",)

    def pick(self, g, v):
        t = g.ty(v)
        if not is_float(t) or t.rank != 3 or not static(t.shape, [1, 2]):
            return None
        k = g.operand_same(v) if g.rng.random() < 0.5 else v
        val = g.operand_same(v)
        return [v, k, val], {"causal": g.rng.random() < 0.5, "scale": 1.0 / math.sqrt(t.shape[2])}

    def infer(self, tys, a):
        if any(u != tys[0] for u in tys) or tys[0].rank != 3 or not is_float(tys[0]):
            raise Invalid("attention")
        if not static(tys[0].shape, [1, 2]):
            raise Invalid("B")
        return tys[0]

    def emit(self, n, a, tys, out):
        T = tys[0].shape[1]
        scores = "(%s @ transpose(%s, 1, 2)) * %r" % (n[0], n[1], a["scale"])
        if a["causal"]:
            scores = "masked_fill(%s, triu(ones([%d, %d]), diagonal: 1) > 0.5, -inf)" % (scores, T, T)
        return "softmax(%s, dim: -1) @ %s" % (scores, n[2])

    def twin(self, ctx, xs, a, tys, out):
        q, k, v = xs
        dt = tys[0].dtype
        s = ctx.rnd(ctx.rnd(q @ k.transpose(1, 2), dt) * a["scale"], dt)
        if a["causal"]:
            T = q.shape[1]
            s = s.masked_fill(torch.triu(torch.ones(T, T), 1) > 0.5, float("-inf"))
        return ctx.rnd(torch.softmax(s, -1), dt) @ v


# ------------------------------------------------------------------ conv / pool / norm

def pair(x):
    return list(x) if isinstance(x, (list, tuple)) else [x, x]


def fmt_pair(x):
    return "(%d, %d)" % tuple(x) if isinstance(x, (list, tuple)) else str(x)


def conv_out(n, k, s, p, d):
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


class Conv(Op):
    name = "conv"
    covers = ("conv2d", "conv1d", "conv_transpose2d")
    weight = 2

    def pick(self, g, v):
        t = g.ty(v)
        fn = g.rng.choice(["conv2d", "conv1d", "conv_transpose2d"])
        rank = 3 if fn == "conv1d" else 4
        if not is_float(t) or t.rank != rank or not static(t.shape, range(1, rank)):
            v = g.fresh_input(rank, t)
            if v is None:
                return None
            t = g.ty(v)
        C = t.shape[1]
        groups = g.rng.choice([d for d in range(1, C + 1) if C % d == 0][:3] + [1, 1])
        cout = groups * g.rng.randint(1, 3)
        sp = t.shape[2:]
        if fn == "conv1d":
            k = g.rng.randint(1, min(3, sp[0] + 2))
            st, p, d = g.rng.randint(1, 3), g.rng.randint(0, 2), g.rng.randint(1, 2)
            a = {"fn": fn, "k": k, "stride": st, "padding": p, "dilation": d, "groups": groups, "cout": cout}
            w = g.leaf(Ty(t.dtype, (cout, C // groups, k), t.dev), kind="param")
        elif fn == "conv2d":
            k = [g.rng.randint(1, 3), g.rng.randint(1, 3)]
            st = g.rng.choice([1, 2, [1, 2], [2, 1]])
            p = g.rng.choice([0, 1, [0, 1], [1, 0]])
            d = g.rng.choice([1, 1, 2, [1, 2]])
            a = {"fn": fn, "k": k, "stride": st, "padding": p, "dilation": d, "groups": groups, "cout": cout}
            w = g.leaf(Ty(t.dtype, (cout, C // groups, k[0], k[1]), t.dev), kind="param")
        else:
            k = [g.rng.randint(1, 3), g.rng.randint(1, 3)]
            st = g.rng.choice([1, 2, [1, 2]])
            d = g.rng.choice([1, 1, 2])
            p = g.rng.choice([0, 1])
            op_ = g.rng.choice([0, 0, 1])
            a = {"fn": fn, "k": k, "stride": st, "padding": p, "dilation": d, "groups": groups, "cout": cout,
                 "output_padding": op_}
            w = g.leaf(Ty(t.dtype, (C, cout // groups, k[0], k[1]), t.dev), kind="param")
        ins = [v, w]
        if g.rng.random() < 0.6:
            ins.append(g.leaf(Ty(t.dtype, (cout,), t.dev), kind="param"))
        return ins, a

    def covered(self, a):
        return (a["fn"],)

    def infer(self, tys, a):
        x, w = tys[0], tys[1]
        fn = a["fn"]
        rank = 3 if fn == "conv1d" else 4
        if x.rank != rank or not is_float(x) or any(u.dtype != x.dtype for u in tys):
            raise Invalid("conv")
        same_dev(tys)
        if not static(x.shape, range(1, rank)):
            raise Invalid("B")
        C, G = x.shape[1], a["groups"]
        if C % G or a["cout"] % G:
            raise Invalid("groups")
        if fn == "conv_transpose2d":
            if w.shape != (C, a["cout"] // G) + tuple(a["k"]):
                raise Invalid("weight")
            out = []
            s, p, d = pair(a["stride"]), pair(a["padding"]), pair(a["dilation"])
            op_ = pair(a["output_padding"])
            for i in range(2):
                if op_[i] >= max(s[i], d[i]):
                    raise Invalid("output_padding")
                o = (x.shape[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (a["k"][i] - 1) + op_[i] + 1
                if o < 1:
                    raise Invalid("empty")
                out.append(o)
        else:
            ks = [a["k"]] if fn == "conv1d" else a["k"]
            if w.shape != (a["cout"], C // G) + tuple(ks):
                raise Invalid("weight")
            n = len(ks)
            s = [a["stride"]] if fn == "conv1d" else pair(a["stride"])
            p = [a["padding"]] if fn == "conv1d" else pair(a["padding"])
            d = [a["dilation"]] if fn == "conv1d" else pair(a["dilation"])
            out = []
            for i in range(n):
                o = conv_out(x.shape[2 + i], ks[i], s[i], p[i], d[i])
                if o < 1:
                    raise Invalid("empty")
                out.append(o)
        if len(tys) == 3 and tys[2].shape != (a["cout"],):
            raise Invalid("bias")
        return Ty(x.dtype, (x.shape[0], a["cout"]) + tuple(out), x.dev)

    def emit(self, n, a, tys, out):
        args = list(n)
        fn = a["fn"]
        P = (lambda v: str(v)) if fn == "conv1d" else fmt_pair
        args.append("stride: %s" % P(a["stride"]))
        args.append("padding: %s" % P(a["padding"]))
        if fn == "conv_transpose2d":
            args.append("output_padding: %s" % P(a["output_padding"]))
        args.append("dilation: %s" % P(a["dilation"]))
        args.append("groups: %d" % a["groups"])
        return "%s(%s)" % (fn, ", ".join(args))

    def twin(self, ctx, xs, a, tys, out):
        b = xs[2] if len(xs) == 3 else None
        fn = a["fn"]
        if fn == "conv1d":
            return F.conv1d(xs[0], xs[1], b, a["stride"], a["padding"], a["dilation"], a["groups"])
        if fn == "conv2d":
            return F.conv2d(xs[0], xs[1], b, pair(a["stride"]), pair(a["padding"]), pair(a["dilation"]), a["groups"])
        return F.conv_transpose2d(xs[0], xs[1], b, pair(a["stride"]), pair(a["padding"]),
                                  pair(a["output_padding"]), a["groups"], pair(a["dilation"]))


class Pool(Op):
    name = "pool"
    covers = ("max_pool2d", "avg_pool2d", "adaptive_avg_pool2d")
    weight = 1.5

    def pick(self, g, v):
        t = g.ty(v)
        if not is_float(t) or t.rank != 4 or not static(t.shape, [1, 2, 3]):
            v = g.fresh_input(4, t)
            if v is None:
                return None
            t = g.ty(v)
        fn = g.rng.choice(["max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"])
        H, W = t.shape[2], t.shape[3]
        if fn == "adaptive_avg_pool2d":
            return [v], {"fn": fn, "size": [g.rng.randint(1, H + 1), g.rng.randint(1, W + 1)]}
        k = [g.rng.randint(1, min(3, H)), g.rng.randint(1, min(3, W))]
        if g.rng.random() < 0.5:
            k = k[0] if k[0] <= min(H, W) else k
        kp = pair(k)
        a = {"fn": fn, "k": k}
        if g.rng.random() < 0.6:
            a["stride"] = g.rng.choice([1, 2, [1, 2], [2, 1]])
        if g.rng.random() < 0.5:
            a["padding"] = [g.rng.randint(0, kp[0] // 2), g.rng.randint(0, kp[1] // 2)]
        return [v], a

    def covered(self, a):
        return (a["fn"],)

    def infer(self, tys, a):
        t = tys[0]
        if t.rank != 4 or not is_float(t) or not static(t.shape, [1, 2, 3]):
            raise Invalid("pool")
        if a["fn"] == "adaptive_avg_pool2d":
            return Ty(t.dtype, t.shape[:2] + tuple(a["size"]), t.dev)
        k = pair(a["k"])
        s = pair(a.get("stride", a["k"]))
        p = pair(a.get("padding", 0))
        out = []
        for i in range(2):
            if p[i] > k[i] // 2:
                raise Invalid("padding")
            o = (t.shape[2 + i] + 2 * p[i] - k[i]) // s[i] + 1
            if o < 1:
                raise Invalid("empty")
            out.append(o)
        return Ty(t.dtype, t.shape[:2] + tuple(out), t.dev)

    def emit(self, n, a, tys, out):
        if a["fn"] == "adaptive_avg_pool2d":
            return "adaptive_avg_pool2d(%s, [%d, %d])" % (n[0], a["size"][0], a["size"][1])
        args = [n[0], fmt_pair(a["k"])]
        if "stride" in a:
            args.append("stride: %s" % fmt_pair(a["stride"]))
        if "padding" in a:
            args.append("padding: %s" % fmt_pair(a["padding"]))
        return "%s(%s)" % (a["fn"], ", ".join(args))

    def twin(self, ctx, xs, a, tys, out):
        x = xs[0]
        if a["fn"] == "adaptive_avg_pool2d":
            return F.adaptive_avg_pool2d(x, a["size"])
        k = pair(a["k"])
        s = pair(a.get("stride", a["k"]))
        p = pair(a.get("padding", 0))
        if a["fn"] == "max_pool2d":
            return F.max_pool2d(x, k, s, p)
        return F.avg_pool2d(x, k, s, p, count_include_pad=True)


class Norm(Op):
    name = "norm"
    covers = ("layer_norm", "batch_norm", "group_norm")
    weight = 1.5

    def pick(self, g, v):
        t = g.ty(v)
        if not is_float(t) or t.rank == 0:
            return None
        fn = g.rng.choice(["layer_norm", "batch_norm", "group_norm"])
        P = lambda shape, init=None: g.leaf(Ty(t.dtype, shape, t.dev), kind="param", init=init)
        eps = g.rng.choice([None, 1e-5, 1e-3])
        if fn == "layer_norm":
            c = t.shape[-1]
            if c == "B" or c < 2:
                return None
            return [v, P((c,)), P((c,))], {"fn": fn, "eps": eps}
        if t.rank < 2 or t.shape[1] == "B":
            return None
        c = t.shape[1]
        if fn == "batch_norm":
            return [v, P((c,)), P((c,), "var"), P((c,)), P((c,))], {"fn": fn, "eps": eps}
        if not static(t.shape, range(1, t.rank)) or t.rank < 3:
            return None
        G = g.rng.choice([d for d in range(1, c + 1) if c % d == 0])
        if g.rng.random() < 0.5:
            return [v, P((c,)), P((c,))], {"fn": fn, "G": G, "eps": eps}
        return [v], {"fn": fn, "G": G, "eps": eps}

    def covered(self, a):
        return (a["fn"],)

    def infer(self, tys, a):
        t = tys[0]
        if not is_float(t) or any(u.dtype != t.dtype for u in tys):
            raise Invalid("norm")
        same_dev(tys)
        fn = a["fn"]
        if fn == "layer_norm":
            if tys[1].shape != (t.shape[-1],) or t.shape[-1] == "B":
                raise Invalid("ln")
        elif fn == "batch_norm":
            if t.rank < 2 or any(u.shape != (t.shape[1],) for u in tys[1:]):
                raise Invalid("bn")
        else:
            if t.rank < 3 or t.shape[1] % a["G"] or not static(t.shape, range(1, t.rank)):
                raise Invalid("gn")
            if len(tys) > 1 and any(u.shape != (t.shape[1],) for u in tys[1:]):
                raise Invalid("gn")
            if t.shape[1] // a["G"] * ops_numel(t.shape[2:]) < 2:
                raise Invalid("one value per group")
        return t

    def emit(self, n, a, tys, out):
        fn = a["fn"]
        if fn == "group_norm":
            args = [n[0], str(a["G"])] + n[1:]
        else:
            args = list(n)
        if a["eps"] is not None:
            args.append("eps: %r" % a["eps"])
        return "%s(%s)" % (fn, ", ".join(args))

    def twin(self, ctx, xs, a, tys, out):
        eps = a["eps"] if a["eps"] is not None else 1e-5
        x = xs[0]
        if a["fn"] == "layer_norm":
            return F.layer_norm(x, [x.shape[-1]], xs[1], xs[2], eps)
        if a["fn"] == "batch_norm":
            shape = [1, -1] + [1] * (x.dim() - 2)
            m, v, w, b = (t.reshape(shape) for t in xs[1:5])
            return (x - m) / torch.sqrt(v + eps) * w + b
        w = xs[1] if len(xs) > 1 else None
        b = xs[2] if len(xs) > 1 else None
        return F.group_norm(x, a["G"], w, b, eps)


class Interpolate(Op):
    name = "interpolate"
    covers = ("interpolate",)

    def pick(self, g, v):
        t = g.ty(v)
        rank = g.rng.choice([3, 4])
        if not is_float(t) or t.rank not in (3, 4) or not static(t.shape, range(1, t.rank)):
            v = g.fresh_input(rank, t)
            if v is None:
                return None
            t = g.ty(v)
        modes = ["nearest", "linear"] if t.rank == 3 else ["nearest", "bilinear"]
        mode = g.rng.choice(modes)
        a = {"mode": mode, "align": mode != "nearest" and g.rng.random() < 0.4}
        sp = t.rank - 2
        if g.rng.random() < 0.5:
            a["size"] = [g.rng.randint(1, 8) for _ in range(sp)]
        else:
            a["scale"] = g.rng.choice([2, 3]) if g.rng.random() < 0.5 else [g.rng.choice([2, 1.5]) for _ in range(sp)]
        return [v], a

    def infer(self, tys, a):
        t = tys[0]
        if t.rank not in (3, 4) or not is_float(t) or not static(t.shape, range(1, t.rank)):
            raise Invalid("interp")
        sp = t.rank - 2
        if a["mode"] == "linear" and sp != 1 or a["mode"] == "bilinear" and sp != 2:
            raise Invalid("mode")
        if "size" in a:
            if len(a["size"]) != sp:
                raise Invalid("size")
            out = a["size"]
        else:
            sc = a["scale"] if isinstance(a["scale"], list) else [a["scale"]] * sp
            if len(sc) != sp:
                raise Invalid("scale")
            out = [int(math.floor(t.shape[2 + i] * sc[i])) for i in range(sp)]
        return Ty(t.dtype, t.shape[:2] + tuple(out), t.dev)

    def emit(self, n, a, tys, out):
        args = [n[0]]
        if "size" in a:
            args.append("size: [%s]" % ", ".join(map(str, a["size"])))
        else:
            sc = a["scale"]
            args.append("scale_factor: %s" % (("[%s]" % ", ".join(map(repr, sc))) if isinstance(sc, list) else sc))
        if a["mode"] != "nearest" or len(a) % 2:
            args.append('mode: "%s"' % a["mode"])
        if a["align"]:
            args.append("align_corners: true")
        return "interpolate(%s)" % ", ".join(args)

    def twin(self, ctx, xs, a, tys, out):
        kw = {"mode": a["mode"]}
        if a["mode"] != "nearest":
            kw["align_corners"] = a["align"]
        if "size" in a:
            return F.interpolate(xs[0], size=a["size"], **kw)
        # modelc's output is floor(size * scale) with PyTorch's float32 source coordinates
        return F.interpolate(xs[0], size=list(out.shape[2:]), **kw) if a["mode"] != "nearest" or True else None


# ------------------------------------------------------------------ indexing / losses

class Index(Op):
    name = "index"
    covers = ("embedding", "gather", "index_select")

    def pick(self, g, v):
        t = g.ty(v)
        fn = g.rng.choice(["embedding", "gather", "index_select"])
        idt = g.rng.choice(["i64", "i32"])
        if t.rank == 0 or t.dtype == "bool":
            return None
        if fn == "embedding":
            if t.rank != 2 or not static(t.shape) or not is_float(t):
                return None
            shape = g.rng.choice([(g.rng.randint(1, 5),), ("B", g.rng.randint(1, 4))])
            idx = g.leaf(Ty(idt, shape, t.dev), init={"index": t.shape[0]})
            return [idx, v], {"fn": fn}
        dims = [i for i, d in enumerate(t.shape) if d != "B"]
        if not dims:
            return None
        d = g.rng.choice(dims)
        if fn == "index_select":
            idx = g.leaf(Ty(idt, (g.rng.randint(1, 5),), t.dev), init={"index": t.shape[d]})
            return [v, idx], {"fn": fn, "dim": d}
        shape = [s if s == "B" else g.rng.randint(1, s) for s in t.shape]
        shape[d] = g.rng.randint(1, 5)
        idx = g.leaf(Ty("i64", shape, t.dev), init={"index": t.shape[d]})
        return [v, idx], {"fn": fn, "dim": d}

    def covered(self, a):
        return (a["fn"],)

    def infer(self, tys, a):
        fn = a["fn"]
        same_dev(tys)
        if fn == "embedding":
            idx, tab = tys
            if not is_int(idx) or tab.rank != 2:
                raise Invalid("emb")
            return Ty(tab.dtype, idx.shape + (tab.shape[1],), tab.dev)
        x, idx = tys
        if not is_int(idx):
            raise Invalid("index dtype")
        if fn == "index_select":
            if idx.rank != 1 or a["dim"] >= x.rank:
                raise Invalid("rank")
            s = list(x.shape)
            s[a["dim"]] = idx.shape[0]
            return Ty(x.dtype, s, x.dev)
        if idx.rank != x.rank:
            raise Invalid("gather rank")
        return Ty(x.dtype, idx.shape, x.dev)

    def emit(self, n, a, tys, out):
        if a["fn"] == "embedding":
            return "embedding(%s, %s)" % (n[0], n[1])
        return "%s(%s, %d, %s)" % (a["fn"], n[0], a["dim"], n[1])

    def twin(self, ctx, xs, a, tys, out):
        if a["fn"] == "embedding":
            return xs[1][xs[0]]
        if a["fn"] == "index_select":
            return torch.index_select(xs[0], a["dim"], xs[1])
        return torch.gather(xs[0], a["dim"], xs[1])


class Loss(Op):
    name = "loss"
    covers = ("cross_entropy", "nll_loss")

    def pick(self, g, v):
        t = g.ty(v)
        if not is_float(t) or t.rank != 2 or t.shape[1] == "B":
            return None
        fn = g.rng.choice(["cross_entropy", "nll_loss"])
        tgt = g.leaf(Ty("i64", (t.shape[0],), t.dev), init={"index": t.shape[1]})
        ins = [v, tgt]
        if g.rng.random() < 0.4:
            ins.append(g.leaf(Ty(t.dtype, (t.shape[1],), t.dev), kind="param", init="positive"))
        return ins, {"fn": fn}

    def covered(self, a):
        return (a["fn"],)

    def infer(self, tys, a):
        x, tgt = tys[0], tys[1]
        same_dev(tys)
        if not is_float(x) or x.rank != 2 or tgt.shape != x.shape[:1] or not is_int(tgt):
            raise Invalid("loss")
        if len(tys) == 3 and (tys[2].shape != x.shape[1:] or tys[2].dtype != x.dtype):
            raise Invalid("weight")
        return Ty(x.dtype, (), x.dev)

    def emit(self, n, a, tys, out):
        if len(n) == 3:
            return "%s(%s, %s, weight: %s)" % (a["fn"], n[0], n[1], n[2])
        return "%s(%s, %s)" % (a["fn"], n[0], n[1])

    def twin(self, ctx, xs, a, tys, out):
        w = xs[2] if len(xs) == 3 else None
        if a["fn"] == "cross_entropy":
            return F.cross_entropy(xs[0], xs[1], weight=w)
        return F.nll_loss(xs[0], xs[1], weight=w)


# ------------------------------------------------------------------ creation, devices

class Create(Op):
    """v OP creation(...): the created tensor's device is placed with `@ D`
    or inferred from its use."""
    name = "create"
    covers = ("zeros", "ones", "full", "arange", "eye", "randn")
    weight = 1.5

    def pick(self, g, v):
        t = g.ty(v)
        if t.dtype == "bool" or t.rank == 0:
            return None
        fn = g.rng.choice(["zeros", "ones", "full", "arange", "eye", "randn"])
        n = t.shape[-1]
        if n == "B":
            if fn in ("arange", "eye"):
                return None
        if fn == "eye" and (t.rank < 2 or t.shape[-2] != n):
            fn = "full"
        if fn == "randn" and not is_float(t):
            fn = "ones"
        a = {"fn": fn, "place": g.rng.random() < 0.5, "op": g.rng.choice(["+", "*", "-"])}
        if fn == "full":
            a["value"] = g.rng.choice([0.5, -2.0, 3.0]) if is_float(t) else g.rng.choice([-3, 7])
        if fn == "arange":
            a["range"] = g.rng.choice([[n], [0, n], [-2, 2 * n - 2, 2], [n, 0, -1]])
        if fn == "randn":
            a["seed"] = g.rng.choice([None, 7])
            a["op"] = "*"
        a["shape"] = "last" if g.rng.random() < 0.5 or fn in ("arange",) else "all"
        return [v], a

    def covered(self, a):
        return (a["fn"],)

    def infer(self, tys, a):
        t = tys[0]
        if t.dtype == "bool" or t.rank == 0:
            raise Invalid("create")
        if a["fn"] == "randn" and not is_float(t):
            raise Invalid("randn")
        if a["fn"] == "eye" and (t.rank < 2 or t.shape[-1] != t.shape[-2] or t.shape[-1] == "B"):
            raise Invalid("eye")
        if a["fn"] == "arange":
            r = a["range"]
            n = t.shape[-1]
            rr = range(*r)
            if len(rr) != n:
                raise Invalid("arange")
        if "value" in a and is_int(t) and isinstance(a["value"], float):
            raise Invalid("value")
        return t

    def twin_exact_for(self, a):
        return a["fn"] != "randn"

    def _shape_text(self, n, a, t):
        if a["fn"] == "eye":
            return None
        if a["shape"] == "last":
            return "[%s]" % ("%s.shape[%d]" % (n, t.rank - 1) if t.shape[-1] == "B" else t.shape[-1])
        dims = ["%s.shape[%d]" % (n, i) if d == "B" else str(d) for i, d in enumerate(t.shape)]
        return "[%s]" % ", ".join(dims)

    def emit(self, n, a, tys, out):
        t = tys[0]
        fn = a["fn"]
        dt = "" if t.dtype == "f32" else ", dtype: %s" % t.dtype
        shape = self._shape_text(n[0], a, t)
        if fn in ("zeros", "ones"):
            c = "%s(%s%s)" % (fn, shape, dt)
        elif fn == "full":
            c = "full(%s, %s%s)" % (shape, fmt_lit(a["value"], t.dtype), dt)
        elif fn == "eye":
            c = "eye(%d%s)" % (t.shape[-1], dt)
        elif fn == "arange":
            c = "arange(%s%s)" % (", ".join(map(str, a["range"])), "" if t.dtype == "i64" else ", dtype: %s" % t.dtype)
        else:
            c = "randn(%s%s%s)" % (shape, "" if a["seed"] is None else ", seed: %d" % a["seed"], dt)
        if a["place"]:
            c = "(%s @ %s)" % (c, t.dev)
        return "%s %s %s" % (n[0], a["op"], c)

    def twin(self, ctx, xs, a, tys, out):
        x = xs[0]
        t = tys[0]
        fn = a["fn"]
        last = [x.shape[-1]] if a["shape"] == "last" else list(x.shape)
        if fn == "zeros":
            c = torch.zeros(last, dtype=x.dtype)
        elif fn == "ones":
            c = torch.ones(last, dtype=x.dtype)
        elif fn == "full":
            c = torch.full(last, a["value"], dtype=x.dtype)
        elif fn == "eye":
            c = torch.eye(x.shape[-1], dtype=x.dtype)
        elif fn == "arange":
            c = torch.arange(*a["range"]).to(x.dtype)
        else:
            ctx.unknown()
            c = torch.zeros(last, dtype=x.dtype)
        if a["op"] == "+":
            r = x + c
        elif a["op"] == "-":
            r = x - c
        else:
            r = x * c
        return ctx.wrap(r, t.dtype) if is_int(t) else r


class ToDevice(Op):
    name = "to_device"
    covers = ("to",)
    weight = 0

    def pick(self, g, v):
        t = g.ty(v)
        return [v], {"dev": "cpu" if t.dev == "D" else "D"}

    def infer(self, tys, a):
        if tys[0].dev == a["dev"]:
            raise Invalid("same device")
        return tys[0].with_(dev=a["dev"])

    def emit(self, n, a, tys, out):
        return "%s.to(%s)" % (n[0], a["dev"])

    def twin(self, ctx, xs, a, tys, out):
        return xs[0]
