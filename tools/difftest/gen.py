"""The generator (random well-typed programs), the .mdl writer and the
PyTorch twin, all from one description (model.Program)."""
import random

import torch

import layers
import ops
from model import FLOAT, HALF, INT, Invalid, Node, Program, Ty, is_float

OPS = [ops.Unary(), ops.Binary(), ops.Compare(), ops.Logic(), ops.Where(), ops.MinMax2(), ops.Clamp(),
       ops.Dropout(), ops.Cast(), ops.Reduce(), ops.ArgReduce(), ops.Softmax(), ops.Reshape(), ops.Flatten(),
       ops.Transpose(), ops.Unsqueeze(), ops.Concat(), ops.Split(), ops.Slice(), ops.Pad(), ops.Masks(),
       ops.Matmul(), ops.Attention(), ops.Conv(), ops.Pool(), ops.Norm(), ops.Interpolate(), ops.Index(),
       ops.Loss(), ops.Create(), ops.ToDevice()] + layers.LAYERS
BY_NAME = {o.name: o for o in OPS}

# What the campaign counts as covered: every built-in of compiler/sema/Builtins.def,
# the operators, and every std.nn layer the generator instantiates.
ALL_COVERS = sorted({c for o in OPS for c in o.covers})

# Results of these ops are bit-exact functions of exact operands on every
# back end (no rounding): comparisons and casts of them need no margin.
EXACT_OPS = {"compare", "logic", "where", "minmax2", "clamp", "dropout", "reshape", "flatten", "transpose",
             "unsqueeze", "concat", "split", "slice", "pad", "masks", "index", "to_device", "argreduce"}


class Resample(Exception):
    pass


class G:
    """Generator state for one program."""

    def __init__(self, rng, mode, coverage):
        self.rng = rng
        self.mode = mode
        self.nodes = []
        self.pool = []
        self.coverage = coverage

    def ty(self, i):
        return self.nodes[i].ty

    def add(self, node):
        self.nodes.append(node)
        self.pool.append(node.id)
        return node.id

    def leaf(self, ty, kind="input", init=None):
        if ty.dtype in HALF and kind == "input" and False:
            pass
        return self.add(Node(len(self.nodes), kind, ty, init=init))

    def rand_dim(self, lo=1, hi=6):
        return self.rng.randint(lo, hi)

    def rand_type(self, dev="D"):
        r = self.rng.random()
        dtype = "f32" if r < 0.6 else self.rng.choice(["f16", "bf16", "f64", "i32", "i64", "i64", "i32", "bool"])
        rank = self.rng.choice([0, 1, 2, 2, 3, 3, 4])
        shape = [self.rand_dim() for _ in range(rank)]
        if rank and self.rng.random() < 0.5:
            shape[0] = "B"
        return Ty(dtype, shape, dev)

    def bshape(self, shape):
        """A shape that broadcasts against `shape` to `shape`."""
        r = self.rng.random()
        if r < 0.5 or not shape:
            return tuple(shape)
        if r < 0.75:
            return tuple(1 if self.rng.random() < 0.5 else d for d in shape)
        k = self.rng.randint(0, len(shape))
        return tuple(shape[k:])

    def find(self, pred):
        cands = [i for i in self.pool if pred(self.nodes[i].ty)]
        return self.rng.choice(cands) if cands else None

    def operand_like(self, v):
        t = self.ty(v)
        if self.rng.random() < 0.5:
            w = self.find(lambda u: u.dtype == t.dtype and u.dev == t.dev and ops._bc_ok(u.shape, t.shape))
            if w is not None:
                return w
        return self.leaf(Ty(t.dtype, self.bshape(t.shape), t.dev))

    def operand_same(self, v):
        t = self.ty(v)
        w = self.find(lambda u: u == t) if self.rng.random() < 0.5 else None
        return w if w is not None else self.leaf(t)

    def fresh_input(self, rank, t, last_min=1, max_mid=8):
        if self.rng.random() < 0.3:
            return None
        dtype = t.dtype if is_float(t) else "f32"
        shape = ["B" if self.rng.random() < 0.5 else self.rand_dim(1, 3)]
        for i in range(rank - 1):
            shape.append(self.rand_dim(last_min if i == rank - 2 else 1, max_mid if i == 0 else 7))
        return self.leaf(Ty(dtype, shape, t.dev))

    def pick_op(self):
        weights = []
        for o in OPS:
            w = o.weight
            if w and any(self.coverage.get(c, 0) == 0 for c in o.covers):
                w *= 4
            weights.append(w)
        return self.rng.choices(OPS, weights)[0]

    def pick_value(self):
        recent = [n.id for n in self.nodes if n.kind == "op"][-3:]
        if recent and self.rng.random() < 0.7:
            return self.rng.choice(recent)
        return self.rng.choice(self.pool)

    def rollback(self, k):
        del self.nodes[k:]
        self.pool = [i for i in self.pool if i < k]

    def apply(self, op, ins, attrs):
        out = op.infer([self.ty(i) for i in ins], attrs)
        return self.add(Node(len(self.nodes), "op", out, op.name, ins, attrs))


def generate(rng, max_ops=20, coverage=None, mixed=None):
    coverage = {} if coverage is None else coverage
    mode = mixed if mixed is not None else ("mixed" if rng.random() < 0.15 else "D")
    g = G(rng, mode, coverage)
    g.leaf(g.rand_type())
    want = rng.randint(1, max_ops)
    made = 0
    for _ in range(want * 12):
        if made >= want:
            break
        op = g.pick_op()
        v = g.pick_value()
        k = len(g.nodes)
        try:
            if mode == "mixed" and rng.random() < 0.3:
                v = g.apply(BY_NAME["to_device"], [v], BY_NAME["to_device"].pick(g, v)[1])
            res = op.pick(g, v)
            if res is None:
                raise Invalid("pick")
            nid = g.apply(op, *res)
            made += 1
            for c in op.covered(g.nodes[nid].attrs):
                coverage[c] = coverage.get(c, 0) + 1
        except Invalid:
            g.rollback(k)
    opn = [n.id for n in g.nodes if n.kind == "op"]
    if not opn:
        return None
    used = {i for n in g.nodes for i in n.ins}
    outputs = [opn[-1]]
    loose = [i for i in opn[:-1] if i not in used]
    if loose and rng.random() < 0.4:
        outputs.append(rng.choice(loose))
    p = Program(g.nodes, outputs, b=rng.choice([1, 2, 3]), seed=rng.randrange(1 << 30), tag=mode)
    return p.prune()


# ------------------------------------------------------------------ the .mdl writer

def names_of(prog, k):
    return {n.id: "p%d_n%d" % (k, n.id) for n in prog.nodes}


def io_type(ty):
    """npy has no bf16: bf16 inputs and results cross the fn boundary as f32."""
    return ty.with_(dtype="f32") if ty.dtype == "bf16" else ty


def write_batch(progs, model="Batch", loss=False):
    """One model whose `forward` runs every program; returns (text, inputs,
    outputs): inputs [(prog index, node id)], outputs [(prog index, node id)]."""
    decls, params, body, results, rtypes = [], [], [], [], []
    inputs, outputs = [], []
    uses_nn = False
    for k, p in enumerate(progs):
        nm = names_of(p, k)
        for n in p.nodes:
            name = nm[n.id]
            if n.kind == "input":
                it = io_type(n.ty)
                if it != n.ty:
                    params.append("%s_in: %s" % (name, it.mdl()))
                    body.append("let %s = cast(%s_in, bf16)" % (name, name))
                else:
                    params.append("%s: %s" % (name, n.ty.mdl()))
                inputs.append((k, n.id))
            elif n.kind == "param":
                dev = "" if n.ty.dev == "D" else " @ %s" % n.ty.dev
                decls.append("param %s: %s[%s]%s" % (name, n.ty.dtype, ", ".join(map(str, n.ty.shape)), dev))
            else:
                op = BY_NAME[n.op]
                tys = [p.node(i).ty for i in n.ins]
                args = [nm[i] for i in n.ins]
                if op.layer:
                    uses_nn = True
                    decls.append(op.decl(name, n.attrs, tys))
                    expr = op.emit(args, n.attrs, tys, n.ty, me=name)
                else:
                    expr = op.emit(args, n.attrs, tys, n.ty)
                body.append("let %s = %s" % (name, expr))
        for o in p.outputs:
            t = p.node(o).ty
            results.append(("cast(%s, f32)" % nm[o]) if t.dtype == "bf16" else nm[o])
            rtypes.append(io_type(t).mdl())
            outputs.append((k, o))
    lines = []
    if uses_nn:
        lines.append("import std.nn")
        lines.append("")
    lines.append("model %s<D: device>() {" % model)
    lines += ["  " + d for d in decls]
    rt = rtypes[0] if len(rtypes) == 1 else "(%s)" % ", ".join(rtypes)
    lines.append("  fn forward(%s) -> %s {" % (", ".join(params), rt))
    lines += ["    " + b for b in body]
    lines.append("    return %s" % ", ".join(results))
    lines.append("  }")
    if loss:
        # The hook for gradients (docs/difftest.md): a scalar loss, the sum of
        # every float result in f64, which Twin.gradients differentiates.
        terms = ["sum(cast(%s, f64))%s" % (names_of(progs[k], k)[o], ".to(D)" if progs[k].node(o).ty.dev != "D" else "")
                 for k, o in outputs if progs[k].node(o).ty.dtype in FLOAT]
        lines.append("  fn loss(%s) -> f64[] @ D {" % ", ".join(params))
        lines += ["    " + b for b in body]
        lines.append("    return %s" % (" + ".join(terms) or "zeros([], dtype: f64) @ D"))
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n", inputs, outputs


# ------------------------------------------------------------------ data and the twin

TORCH = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64,
         "i32": torch.int32, "i64": torch.int64, "bool": torch.bool}
EDGE = {"i32": [0, -1, 1, -(2 ** 31), 2 ** 31 - 1, -(2 ** 31) + 1, 7, -7],
        "i64": [0, -1, 1, -(2 ** 63), 2 ** 63 - 1, -(2 ** 63) + 1, 7, -7]}


def rnd(x, dtype):
    if dtype in ("f32", "f16", "bf16"):
        return x.to(TORCH[dtype]).to(torch.float64)
    return x


def wrap(x, dtype):
    if dtype == "i32":
        return x.to(torch.int32).to(torch.int64)
    return x


def gen_torch(dt):
    return torch.bool if dt == "bool" else torch.int64


def draw(gen, ty, init, b, scale):
    shape = ops.concrete(ty.shape, b)
    dt = ty.dtype
    if isinstance(init, dict) and "value" in init:
        # a cut node (difftest.py minimize): the value the twin computed for it
        v = torch.tensor(init["value"], dtype=torch.float64 if dt in FLOAT else gen_torch(dt))
        for i, d in enumerate(ty.shape):
            if d == "B":
                v = v.narrow(i, 0, b)
        return v
    if dt == "bool":
        return torch.rand(shape, generator=gen) < 0.5
    if isinstance(init, dict) and "index" in init:
        return torch.randint(0, init["index"], shape, generator=gen)
    if dt in INT:
        if init == "exponent":
            return torch.randint(-3, 7, shape, generator=gen)
        x = torch.randint(-12, 13, shape, generator=gen)
        edge = torch.tensor(EDGE[dt], dtype=torch.int64)
        pick = torch.randint(0, len(EDGE[dt]), shape, generator=gen)
        return torch.where(torch.rand(shape, generator=gen) < 0.15, edge[pick], x)
    if init in ("away", "positive", "var"):
        x = 0.5 + 1.5 * torch.rand(shape, generator=gen, dtype=torch.float64)
        if init == "away":
            x = torch.where(torch.rand(shape, generator=gen) < 0.5, -x, x)
    else:
        x = torch.randn(shape, generator=gen, dtype=torch.float64) * scale
        special = torch.tensor([0.0, -0.0, 1.0, -1.0, 0.5])
        pick = torch.randint(0, 5, shape, generator=gen)
        x = torch.where(torch.rand(shape, generator=gen) < 0.05, special[pick].double(), x)
    return rnd(x, dt)


class Ctx:
    def __init__(self, b):
        self.b = b
        self.flag_unknown = False
        self.exact_ins = ()

    rnd = staticmethod(rnd)
    wrap = staticmethod(wrap)

    def margin(self, ok, why):
        if not ok:
            raise Resample(why)

    def unknown(self):
        self.flag_unknown = True

    def exact(self, *idx):
        return all(self.exact_ins[i] for i in idx)


def layer_state(prog, nid, a, tys, gen):
    """The torch module of a layer node with random weights in its dtype."""
    op = BY_NAME[prog.node(nid).op]
    m = op.module(a, tys).double().eval()
    dt = prog.node(nid).ty.dtype if prog.node(nid).ty.dtype in FLOAT else "f32"
    with torch.no_grad():
        for name, p in list(m.named_parameters()) + list(m.named_buffers()):
            if p.dtype != torch.float64:
                continue
            if "running_var" in name:
                v = 0.5 + torch.rand(p.shape, generator=gen, dtype=torch.float64)
            else:
                fan = p.shape[-1] if p.dim() > 1 else max(p.numel(), 1)
                v = torch.randn(p.shape, generator=gen, dtype=torch.float64) / max(1.0, fan ** 0.5)
            p.copy_(rnd(v, dt))
    return m, dt


class Twin(torch.nn.Module):
    """The PyTorch module of a program: torch.nn layers and parameters under
    the generated model's state names, computing in float64 (each op's
    result rounded to the dtype the program gives it)."""

    def __init__(self, prog, k=0, scale=1.0):
        super().__init__()
        self.prog = prog
        self.k = k
        gen = torch.Generator().manual_seed(prog.seed)
        self.names = names_of(prog, k)
        self.mods = torch.nn.ModuleDict()
        self.state = {}     # the weights file: name -> tensor in its dtype
        self.values = {}    # param leaf id -> float64 value
        for n in prog.nodes:
            if n.kind == "param":
                v = draw(gen, n.ty, n.init, prog.b, 1.0)
                self.values[n.id] = v
                self.state[self.names[n.id]] = v.to(TORCH[n.ty.dtype])
            elif n.kind == "op" and BY_NAME[n.op].layer:
                tys = [prog.node(i).ty for i in n.ins]
                m, dt = layer_state(prog, n.id, n.attrs, tys, gen)
                self.mods[str(n.id)] = m
                prefix = m.state_prefix() if hasattr(m, "state_prefix") else ""
                for key, t in m.state_dict().items():
                    key = key[len(prefix):] if key.startswith(prefix) else key
                    t = t.to(TORCH[dt]) if t.dtype == torch.float64 else t
                    self.state["%s.%s" % (self.names[n.id], key)] = t

    def draw_inputs(self, seed, scale):
        gen = torch.Generator().manual_seed(seed)
        return {n.id: draw(gen, n.ty, n.init, self.prog.b, scale) for n in self.prog.nodes if n.kind == "input"}

    def forward(self, inputs, values=None):
        """Returns {node id: (value, exact, unknown)} for every node."""
        env = {}
        for n in self.prog.nodes:
            if n.kind == "input":
                env[n.id] = (inputs[n.id], True, False)
                continue
            if n.kind == "param":
                env[n.id] = (self.values[n.id], True, False)
                continue
            op = BY_NAME[n.op]
            xs = [env[i][0] for i in n.ins]
            tys = [self.prog.node(i).ty for i in n.ins]
            ctx = Ctx(self.prog.b)
            ctx.exact_ins = [env[i][1] for i in n.ins]
            if op.layer:
                r = op.twin(ctx, xs, n.attrs, tys, n.ty, module=self.mods[str(n.id)])
            else:
                r = op.twin(ctx, xs, n.attrs, tys, n.ty)
            dt = n.ty.dtype
            if dt in FLOAT:
                r = rnd(r.to(torch.float64), dt)
                lim = 6e4 if dt == "f16" else 1e30
                if not bool(torch.isfinite(r).all()) or bool((r.abs() > lim).any()):
                    raise Resample("not finite at node %d (%s)" % (n.id, n.op))
            elif dt in INT:
                r = wrap(r.to(torch.int64), dt)
            else:
                r = r.to(torch.bool)
            if list(r.shape) != ops.concrete(n.ty.shape, self.prog.b):
                raise AssertionError("twin shape %s != %s at node %d (%s %s)" % (
                    list(r.shape), n.ty.shape, n.id, n.op, n.attrs))
            exact = (n.op in EXACT_OPS or dt in INT or dt == "bool") and all(env[i][1] for i in n.ins)
            unknown = ctx.flag_unknown or any(env[i][2] for i in n.ins)
            env[n.id] = (r, exact, unknown)
        return env


def gradients(twin, inputs):
    """The loss of write_batch(loss=True) and its gradient with respect to
    every float state tensor, by PyTorch's autograd in float64: what modelc's
    gradients are to be compared with once it differentiates a loss."""
    saved = dict(twin.values)
    leaves = {}
    for nid, v in saved.items():
        if v.is_floating_point():
            leaves[nid] = v.clone().requires_grad_(True)
            twin.values[nid] = leaves[nid]
    try:
        with torch.enable_grad():
            env = twin(inputs)
            loss = sum(env[o][0].sum() for o in twin.prog.outputs if twin.prog.node(o).ty.dtype in FLOAT)
            loss = loss if torch.is_tensor(loss) else torch.zeros((), dtype=torch.float64)
            params = {twin.names[nid]: t for nid, t in leaves.items()}
            for nid, m in twin.mods.items():
                prefix = m.state_prefix() if hasattr(m, "state_prefix") else ""
                for key, p in m.named_parameters():
                    key = key[len(prefix):] if key.startswith(prefix) else key
                    params["%s.%s" % (twin.names[int(nid)], key)] = p
            wrt = [p for p in params.values() if p.requires_grad]
            grads = torch.autograd.grad(loss, wrt, allow_unused=True) if loss.requires_grad and wrt else []
        named = dict(zip([k for k, p in params.items() if p.requires_grad], grads))
        return loss.detach(), {k: (g if g is not None else torch.zeros_like(params[k])).detach() for k, g in named.items()}
    finally:
        twin.values = saved


def finite_inputs(twin, tries=8):
    """NNSmith's search, simply: draw inputs, halving their scale, until every
    value of the program is finite and no result sits on a discontinuity."""
    scale = 1.0
    why = ""
    for t in range(tries):
        inputs = twin.draw_inputs(twin.prog.seed * 31 + t, scale)
        try:
            with torch.no_grad():
                env = twin(inputs)
            return inputs, env
        except Resample as e:
            why = str(e)
            scale *= 0.5
    raise Resample(why)
