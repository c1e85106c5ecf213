"""The program description shared by the generator, the .mdl writer, the
PyTorch twin and the minimizer.

A program is a DAG of nodes. A leaf is an entry-fn input or a model param
(state); every other node applies one op (ops.py) to earlier nodes. Types are
(dtype, shape, device): a dim is an int or 'B' (the symbolic batch, bound by
the inputs at run time), the device 'D' (the model's device parameter) or
'cpu'. The description is plain data (JSON), so a program can be written
out, replayed and reduced.
"""
import json

FLOAT = ("f32", "f16", "bf16", "f64")
HALF = ("f16", "bf16")
INT = ("i32", "i64")


class Invalid(Exception):
    """An op's constraints do not hold for these operand types/attributes."""


class Ty:
    __slots__ = ("dtype", "shape", "dev")

    def __init__(self, dtype, shape, dev="D"):
        self.dtype = dtype
        self.shape = tuple(shape)
        self.dev = dev

    @property
    def rank(self):
        return len(self.shape)

    def with_(self, dtype=None, shape=None, dev=None):
        return Ty(dtype or self.dtype, self.shape if shape is None else shape, dev or self.dev)

    def to_json(self):
        return [self.dtype, list(self.shape), self.dev]

    @staticmethod
    def from_json(j):
        return Ty(j[0], j[1], j[2])

    def mdl(self):
        dims = ", ".join(str(d) for d in self.shape)
        return "%s[%s] @ %s" % (self.dtype, dims, self.dev)

    def __repr__(self):
        return self.mdl()

    def __eq__(self, o):
        return isinstance(o, Ty) and (self.dtype, self.shape, self.dev) == (o.dtype, o.shape, o.dev)


def is_float(t):
    return t.dtype in FLOAT


def is_int(t):
    return t.dtype in INT


def numel_static(shape, b=3):
    n = 1
    for d in shape:
        n *= b if d == "B" else d
    return n


class Node:
    """kind: 'input' | 'param' | 'op'. For op nodes, `op` names an entry of
    ops.OPS, `ins` the operand node ids and `attrs` its attributes (JSON)."""

    __slots__ = ("id", "kind", "op", "ins", "attrs", "ty", "init")

    def __init__(self, id, kind, ty, op=None, ins=(), attrs=None, init=None):
        self.id = id
        self.kind = kind
        self.ty = ty
        self.op = op
        self.ins = list(ins)
        self.attrs = attrs or {}
        self.init = init or {}

    def to_json(self):
        j = {"id": self.id, "kind": self.kind, "ty": self.ty.to_json()}
        if self.op:
            j["op"] = self.op
            j["ins"] = self.ins
            j["attrs"] = self.attrs
        if self.init:
            j["init"] = self.init
        return j

    @staticmethod
    def from_json(j):
        return Node(j["id"], j["kind"], Ty.from_json(j["ty"]), j.get("op"), j.get("ins", ()),
                    j.get("attrs"), j.get("init"))


class Program:
    """nodes in topological order; outputs: node ids returned by the entry fn;
    b: the run-time value of the batch dim B; seed: the data seed."""

    def __init__(self, nodes, outputs, b=2, seed=0, tag=""):
        self.nodes = nodes
        self.outputs = outputs
        self.b = b
        self.seed = seed
        self.tag = tag

    def node(self, i):
        for n in self.nodes:
            if n.id == i:
                return n
        raise KeyError(i)

    def by_id(self):
        return {n.id: n for n in self.nodes}

    def ops(self):
        return [n for n in self.nodes if n.kind == "op"]

    def to_json(self):
        return {"nodes": [n.to_json() for n in self.nodes], "outputs": self.outputs, "b": self.b,
                "seed": self.seed, "tag": self.tag}

    @staticmethod
    def from_json(j):
        return Program([Node.from_json(n) for n in j["nodes"]], j["outputs"], j.get("b", 2),
                       j.get("seed", 0), j.get("tag", ""))

    def dumps(self):
        return json.dumps(self.to_json(), sort_keys=True)

    def prune(self):
        """Drops nodes no output depends on."""
        live = set(self.outputs)
        by = self.by_id()
        for n in reversed(self.nodes):
            if n.id in live:
                live.update(n.ins)
        self.nodes = [n for n in self.nodes if n.id in live]
        del by
        return self
