"""std.nn layers as ops: each is a submodel of the generated model (decl)
and, in the twin, the PyTorch module of the same name with the same state
names (module), so the twin compares modelc's std.nn with torch.nn itself."""
import math

import torch
import torch.nn as nn

from model import Invalid, Ty, is_float
from ops import Op, conv_out, fmt_pair, pair, static

ACTS = {"ReLU": nn.ReLU, "ReLU6": nn.ReLU6, "GELU": nn.GELU, "SiLU": nn.SiLU, "Tanh": nn.Tanh,
        "Sigmoid": nn.Sigmoid, "Dropout": nn.Dropout}


def kw(d):
    return ", ".join(d)


class Layer(Op):
    layer = True
    weight = 1.0

    def decl(self, me, a, tys):
        dev = "<cpu>" if tys[0].dev == "cpu" else ""
        return "%s = nn.%s%s(%s)" % (me, a["cls"], dev, self.args(a, tys))

    def args(self, a, tys):
        raise NotImplementedError

    def dtype_arg(self, tys):
        return [] if tys[0].dtype == "f32" else ["dtype: %s" % tys[0].dtype]

    def covered(self, a):
        return ("nn." + a["cls"],)

    def emit(self, n, a, tys, out, me=None):
        fn = a.get("fn")
        return "%s%s(%s)" % (me, "." + fn if fn else "", ", ".join(n))

    def twin(self, ctx, xs, a, tys, out, module=None):
        return module(*xs)


class Activation(Layer):
    name = "nn_act"
    covers = tuple("nn." + c for c in ACTS) + ("nn.Flatten", "nn.Upsample")

    def pick(self, g, v):
        t = g.ty(v)
        if not is_float(t):
            return None
        cls = g.rng.choice(list(ACTS) + ["Flatten", "Upsample"])
        if cls in ("Flatten", "Upsample") and (t.rank != 4 or not static(t.shape, [1, 2, 3])):
            return None
        a = {"cls": cls}
        if cls == "Upsample":
            a["s"] = g.rng.choice([1, 2, 3])
        return [v], a

    def infer(self, tys, a):
        t = tys[0]
        if not is_float(t):
            raise Invalid("float")
        if a["cls"] == "Flatten":
            if t.rank != 4:
                raise Invalid("rank")
            return Ty(t.dtype, (t.shape[0], t.shape[1] * t.shape[2] * t.shape[3]), t.dev)
        if a["cls"] == "Upsample":
            if t.rank != 4:
                raise Invalid("rank")
            return Ty(t.dtype, t.shape[:2] + (t.shape[2] * a["s"], t.shape[3] * a["s"]), t.dev)
        return t

    def args(self, a, tys):
        if a["cls"] == "Upsample":
            return "scale_factor: %d" % a["s"]
        if a["cls"] == "Dropout":
            return "0.25"
        return ""

    def module(self, a, tys):
        if a["cls"] == "Flatten":
            return nn.Flatten()
        if a["cls"] == "Upsample":
            return nn.Upsample(scale_factor=a["s"])
        return ACTS[a["cls"]]()


class Linear(Layer):
    name = "nn_linear"
    covers = ("nn.Linear",)
    weight = 2

    def pick(self, g, v):
        t = g.ty(v)
        if not is_float(t) or t.rank == 0 or t.shape[-1] == "B":
            return None
        return [v], {"cls": "Linear", "out": g.rng.randint(1, 8), "bias": g.rng.random() < 0.8}

    def infer(self, tys, a):
        t = tys[0]
        if not is_float(t) or t.rank == 0 or t.shape[-1] == "B":
            raise Invalid("linear")
        return Ty(t.dtype, t.shape[:-1] + (a["out"],), t.dev)

    def args(self, a, tys):
        return kw(["%d" % tys[0].shape[-1], "%d" % a["out"]] + ([] if a["bias"] else ["bias: false"])
                  + self.dtype_arg(tys))

    def module(self, a, tys):
        return nn.Linear(tys[0].shape[-1], a["out"], bias=a["bias"])


class Conv(Layer):
    name = "nn_conv"
    covers = ("nn.Conv2d", "nn.Conv1d", "nn.ConvTranspose2d")
    weight = 1.5

    def pick(self, g, v):
        t = g.ty(v)
        cls = g.rng.choice(["Conv2d", "Conv1d", "ConvTranspose2d"])
        rank = 3 if cls == "Conv1d" else 4
        if not is_float(t) or t.rank != rank or not static(t.shape, range(1, rank)):
            v = g.fresh_input(rank, t)
            if v is None:
                return None
            t = g.ty(v)
        C = t.shape[1]
        groups = g.rng.choice([d for d in range(1, C + 1) if C % d == 0][:3] + [1])
        a = {"cls": cls, "out": groups * g.rng.randint(1, 3), "groups": groups, "bias": g.rng.random() < 0.7}
        if cls == "Conv1d":
            a.update(k=g.rng.randint(1, 3), stride=g.rng.randint(1, 2), padding=g.rng.randint(0, 2),
                     dilation=g.rng.randint(1, 2))
        elif cls == "Conv2d":
            a.update(k=g.rng.choice([1, 2, 3, [1, 3], [3, 2]]), stride=g.rng.choice([1, 2, [2, 1]]),
                     padding=g.rng.choice([0, 1, [1, 0]]), dilation=g.rng.choice([1, 1, 2]),
                     mode=g.rng.choice(["zeros", "zeros", "reflect", "replicate", "circular"]))
        else:
            a.update(k=g.rng.choice([1, 2, 3, [2, 3]]), stride=g.rng.choice([1, 2]), padding=g.rng.choice([0, 1]),
                     output_padding=0, dilation=g.rng.choice([1, 2]))
            if max(pair(a["stride"])) > 1 and g.rng.random() < 0.5:
                a["output_padding"] = 1
        return [v], a

    def infer(self, tys, a):
        t = tys[0]
        cls = a["cls"]
        rank = 3 if cls == "Conv1d" else 4
        if not is_float(t) or t.rank != rank or not static(t.shape, range(1, rank)):
            raise Invalid("conv")
        C, G = t.shape[1], a["groups"]
        if C % G or a["out"] % G:
            raise Invalid("groups")
        out = []
        if cls == "Conv1d":
            o = conv_out(t.shape[2], a["k"], a["stride"], a["padding"], a["dilation"])
            out = [o]
        elif cls == "Conv2d":
            k, s, p, d = pair(a["k"]), pair(a["stride"]), pair(a["padding"]), pair(a["dilation"])
            for i in range(2):
                if a["mode"] == "reflect" and p[i] >= t.shape[2 + i]:
                    raise Invalid("reflect")
                if a["mode"] == "circular" and p[i] > t.shape[2 + i]:
                    raise Invalid("circular")
                out.append(conv_out(t.shape[2 + i], k[i], s[i], p[i], d[i]))
        else:
            k, s, p, d, op_ = pair(a["k"]), pair(a["stride"]), pair(a["padding"]), pair(a["dilation"]), pair(a["output_padding"])
            for i in range(2):
                if op_[i] >= max(s[i], d[i]):
                    raise Invalid("output_padding")
                out.append((t.shape[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + op_[i] + 1)
        if min(out) < 1:
            raise Invalid("empty")
        return Ty(t.dtype, (t.shape[0], a["out"]) + tuple(out), t.dev)

    def args(self, a, tys):
        C = tys[0].shape[1]
        cls = a["cls"]
        P = str if cls == "Conv1d" else fmt_pair
        args = ["%d" % C, "%d" % a["out"], P(a["k"]), "stride: %s" % P(a["stride"]), "padding: %s" % P(a["padding"])]
        if cls == "ConvTranspose2d":
            args.append("output_padding: %s" % P(a["output_padding"]))
        args += ["dilation: %s" % P(a["dilation"]), "groups: %d" % a["groups"]]
        if not a["bias"]:
            args.append("bias: false")
        if cls == "Conv2d" and a["mode"] != "zeros":
            args.append('padding_mode: "%s"' % a["mode"])
        return kw(args + self.dtype_arg(tys))

    def module(self, a, tys):
        C = tys[0].shape[1]
        cls = a["cls"]
        if cls == "Conv1d":
            return nn.Conv1d(C, a["out"], a["k"], a["stride"], a["padding"], a["dilation"], a["groups"], a["bias"])
        if cls == "Conv2d":
            return nn.Conv2d(C, a["out"], pair(a["k"]), pair(a["stride"]), pair(a["padding"]), pair(a["dilation"]),
                             a["groups"], a["bias"], padding_mode=a["mode"])
        return nn.ConvTranspose2d(C, a["out"], pair(a["k"]), pair(a["stride"]), pair(a["padding"]),
                                  pair(a["output_padding"]), a["groups"], a["bias"], pair(a["dilation"]))


class Norm(Layer):
    name = "nn_norm"
    covers = ("nn.LayerNorm", "nn.BatchNorm2d", "nn.BatchNorm1d", "nn.GroupNorm")
    weight = 1.5

    def pick(self, g, v):
        t = g.ty(v)
        if not is_float(t) or t.rank == 0:
            return None
        cls = g.rng.choice(["LayerNorm", "BatchNorm2d", "BatchNorm1d", "GroupNorm"])
        a = {"cls": cls, "affine": g.rng.random() < 0.8, "eps": g.rng.choice([None, 1e-3])}
        if cls == "LayerNorm":
            if t.shape[-1] == "B" or t.shape[-1] < 2:
                return None
            return [v], a
        if cls == "BatchNorm1d":
            if t.rank not in (2, 3) or t.shape[1] == "B":
                return None
            if t.rank == 3:
                a["fn"] = "forward_seq"
            return [v], a
        if t.rank != 4 or t.shape[1] == "B":
            return None
        if cls == "GroupNorm":
            C = t.shape[1]
            a["G"] = g.rng.choice([d for d in range(1, C + 1) if C % d == 0])
        return [v], a

    def infer(self, tys, a):
        t = tys[0]
        cls = a["cls"]
        if not is_float(t):
            raise Invalid("float")
        if cls == "LayerNorm" and (t.rank == 0 or t.shape[-1] == "B"):
            raise Invalid("ln")
        if cls == "BatchNorm1d" and (t.rank != (3 if a.get("fn") else 2) or t.shape[1] == "B"):
            raise Invalid("bn1")
        if cls in ("BatchNorm2d", "GroupNorm") and (t.rank != 4 or t.shape[1] == "B"):
            raise Invalid("bn2")
        if cls == "GroupNorm" and (t.shape[1] % a["G"] or t.shape[1] // a["G"] * t.shape[2] * t.shape[3] < 2):
            raise Invalid("groups")
        return t

    def args(self, a, tys):
        t = tys[0]
        cls = a["cls"]
        eps = [] if a["eps"] is None else ["eps: %r" % a["eps"]]
        if cls == "LayerNorm":
            return kw(["%d" % t.shape[-1]] + eps + ([] if a["affine"] else ["elementwise_affine: false"]) + self.dtype_arg(tys))
        aff = [] if a["affine"] else ["affine: false"]
        if cls == "GroupNorm":
            return kw(["%d" % a["G"], "%d" % t.shape[1]] + eps + aff + self.dtype_arg(tys))
        return kw(["%d" % t.shape[1]] + eps + aff + self.dtype_arg(tys))

    def module(self, a, tys):
        t = tys[0]
        eps = a["eps"] if a["eps"] is not None else 1e-5
        cls = a["cls"]
        if cls == "LayerNorm":
            return nn.LayerNorm(t.shape[-1], eps, elementwise_affine=a["affine"])
        if cls == "GroupNorm":
            return nn.GroupNorm(a["G"], t.shape[1], eps, affine=a["affine"])
        m = (nn.BatchNorm2d if cls == "BatchNorm2d" else nn.BatchNorm1d)(t.shape[1], eps, affine=a["affine"])
        return m


class Pool(Layer):
    name = "nn_pool"
    covers = ("nn.MaxPool2d", "nn.AvgPool2d", "nn.AdaptiveAvgPool2d")

    def pick(self, g, v):
        t = g.ty(v)
        if not is_float(t) or t.rank != 4 or not static(t.shape, [1, 2, 3]):
            v = g.fresh_input(4, t)
            if v is None:
                return None
            t = g.ty(v)
        cls = g.rng.choice(["MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"])
        H, W = t.shape[2], t.shape[3]
        if cls == "AdaptiveAvgPool2d":
            return [v], {"cls": cls, "size": g.rng.choice([1, [g.rng.randint(1, H), g.rng.randint(1, W)]])}
        k = g.rng.choice([1, 2, [1, 2], [2, 1], 3])
        a = {"cls": cls, "k": k}
        if g.rng.random() < 0.5:
            a["stride"] = g.rng.choice([1, 2, [2, 1]])
        if g.rng.random() < 0.4:
            a["padding"] = [pair(k)[0] // 2, pair(k)[1] // 2]
        return [v], a

    def infer(self, tys, a):
        t = tys[0]
        if not is_float(t) or t.rank != 4 or not static(t.shape, [1, 2, 3]):
            raise Invalid("pool")
        if a["cls"] == "AdaptiveAvgPool2d":
            return Ty(t.dtype, t.shape[:2] + tuple(pair(a["size"])), t.dev)
        k = pair(a["k"])
        s = pair(a.get("stride", a["k"]))
        p = pair(a.get("padding", 0))
        out = []
        for i in range(2):
            o = (t.shape[2 + i] + 2 * p[i] - k[i]) // s[i] + 1
            if o < 1 or p[i] > k[i] // 2:
                raise Invalid("empty")
            out.append(o)
        return Ty(t.dtype, t.shape[:2] + tuple(out), t.dev)

    def args(self, a, tys):
        if a["cls"] == "AdaptiveAvgPool2d":
            return fmt_pair(a["size"])
        args = [fmt_pair(a["k"])]
        if "stride" in a:
            args.append("stride: %s" % fmt_pair(a["stride"]))
        if "padding" in a:
            args.append("padding: %s" % fmt_pair(a["padding"]))
        return kw(args)

    def module(self, a, tys):
        if a["cls"] == "AdaptiveAvgPool2d":
            return nn.AdaptiveAvgPool2d(pair(a["size"]))
        k = pair(a["k"])
        s = pair(a.get("stride", a["k"]))
        p = pair(a.get("padding", 0))
        if a["cls"] == "MaxPool2d":
            return nn.MaxPool2d(k, s, p)
        return nn.AvgPool2d(k, s, p)


class Embedding(Layer):
    name = "nn_embedding"
    covers = ("nn.Embedding",)

    def pick(self, g, v):
        t = g.ty(v)
        n = g.rng.randint(2, 9)
        d = g.rng.randint(1, 6)
        dtype = t.dtype if is_float(t) else "f32"
        shape = g.rng.choice([(g.rng.randint(1, 5),), ("B", g.rng.randint(1, 4)), ("B",)])
        idx = g.leaf(Ty("i64", shape, t.dev), init={"index": n})
        return [idx], {"cls": "Embedding", "n": n, "d": d, "dtype": dtype}

    def infer(self, tys, a):
        if tys[0].dtype != "i64":
            raise Invalid("indices")
        return Ty(a["dtype"], tys[0].shape + (a["d"],), tys[0].dev)

    def args(self, a, tys):
        return kw(["%d" % a["n"], "%d" % a["d"]] + ([] if a["dtype"] == "f32" else ["dtype: %s" % a["dtype"]]))

    def module(self, a, tys):
        return nn.Embedding(a["n"], a["d"])


class Attention(Layer):
    name = "nn_attention"
    covers = ("nn.MultiheadAttention", "nn.TransformerEncoderLayer", "nn.TransformerEncoder")

    def pick(self, g, v):
        t = g.ty(v)
        if not is_float(t) or t.rank != 3 or not static(t.shape, [1, 2]) or t.shape[2] < 2:
            v = g.fresh_input(3, t, last_min=2)
            if v is None:
                return None
            t = g.ty(v)
        E = t.shape[2]
        H = g.rng.choice([h for h in range(1, E + 1) if E % h == 0][:3])
        cls = g.rng.choice(["MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder"])
        a = {"cls": cls, "H": H}
        if cls == "MultiheadAttention":
            a["fn"] = g.rng.choice([None, "forward_causal"])
        else:
            a.update(ff=g.rng.randint(2, 12), act=g.rng.choice(["relu", "gelu"]), norm_first=g.rng.random() < 0.5)
            if cls == "TransformerEncoder":
                a.update(layers=g.rng.randint(1, 2), final_norm=g.rng.random() < 0.5)
        return [v], a

    def infer(self, tys, a):
        t = tys[0]
        if not is_float(t) or t.rank != 3 or not static(t.shape, [1, 2]) or t.shape[2] % a["H"]:
            raise Invalid("attention")
        return t

    def args(self, a, tys):
        E = tys[0].shape[2]
        cls = a["cls"]
        if cls == "MultiheadAttention":
            return kw(["%d" % E, "%d" % a["H"]] + self.dtype_arg(tys))
        args = ["%d" % E, "%d" % a["H"]]
        if cls == "TransformerEncoder":
            args.append("%d" % a["layers"])
        args += ["dim_feedforward: %d" % a["ff"], 'activation: "%s"' % a["act"]]
        if a["norm_first"]:
            args.append("norm_first: true")
        if cls == "TransformerEncoder" and a["final_norm"]:
            args.append("final_norm: true")
        return kw(args + self.dtype_arg(tys))

    def module(self, a, tys):
        E = tys[0].shape[2]
        cls = a["cls"]
        if cls == "MultiheadAttention":
            return MHA(E, a["H"], a.get("fn") == "forward_causal")
        layer = nn.TransformerEncoderLayer(E, a["H"], a["ff"], 0.0, a["act"], batch_first=True, norm_first=a["norm_first"])
        if cls == "TransformerEncoderLayer":
            return layer
        return nn.TransformerEncoder(layer, a["layers"], norm=nn.LayerNorm(E) if a["final_norm"] else None,
                                     enable_nested_tensor=False)


class MHA(nn.Module):
    def __init__(self, E, H, causal):
        super().__init__()
        self.m = nn.MultiheadAttention(E, H, batch_first=True)
        self.causal = causal

    def forward(self, x):
        mask = None
        if self.causal:
            T = x.shape[1]
            mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
        return self.m(x, x, x, need_weights=False, attn_mask=mask)[0]

    def state_prefix(self):
        return "m."


class Recurrent(Layer):
    name = "nn_recurrent"
    covers = ("nn.LSTM", "nn.GRU")

    def pick(self, g, v):
        t = g.ty(v)
        if not is_float(t) or t.rank != 3 or not static(t.shape, [1, 2]) or t.shape[1] > 6:
            v = g.fresh_input(3, t, max_mid=5)
            if v is None:
                return None
            t = g.ty(v)
        cls = g.rng.choice(["LSTM", "GRU"])
        a = {"cls": cls, "hidden": g.rng.randint(1, 6), "layers": g.rng.randint(1, 2),
             "bidirectional": g.rng.random() < 0.4, "bias": g.rng.random() < 0.8}
        if cls == "LSTM" and g.rng.random() < 0.3 and a["hidden"] > 1:
            a["proj"] = g.rng.randint(1, a["hidden"] - 1)
        return [v], a

    def infer(self, tys, a):
        t = tys[0]
        if not is_float(t) or t.rank != 3 or not static(t.shape, [1, 2]):
            raise Invalid("rnn")
        h = a.get("proj") or a["hidden"]
        return Ty(t.dtype, t.shape[:2] + ((2 if a["bidirectional"] else 1) * h,), t.dev)

    def args(self, a, tys):
        args = ["%d" % tys[0].shape[2], "%d" % a["hidden"], "num_layers: %d" % a["layers"]]
        if not a["bias"]:
            args.append("bias: false")
        if a["bidirectional"]:
            args.append("bidirectional: true")
        if a.get("proj"):
            args.append("proj_size: %d" % a["proj"])
        return kw(args + self.dtype_arg(tys))

    def module(self, a, tys):
        I = tys[0].shape[2]
        if a["cls"] == "LSTM":
            return RNN(nn.LSTM(I, a["hidden"], a["layers"], a["bias"], True, 0.0, a["bidirectional"],
                               a.get("proj", 0)))
        return RNN(nn.GRU(I, a["hidden"], a["layers"], a["bias"], True, 0.0, a["bidirectional"]))


class RNN(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)[0]

    def state_prefix(self):
        return "m."


LAYERS = [Activation(), Linear(), Conv(), Norm(), Pool(), Embedding(), Attention(), Recurrent()]
