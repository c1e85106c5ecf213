"""Writes traced torch.nn.Modules as .mdl models.

One .mdl model per module instance that has its own forward (the root and
every user-defined submodule); torch.nn layers become std.nn layers (or a
helper model in the same file where std.nn cannot express their options);
nn.Sequential / nn.ModuleList become submodel lists. Every emitted line
remembers the Python location it came from (the source map) and, for the
lines where a device bug starts, the fix in PyTorch terms.

The same emission runs once per device: `D` (the model's device parameter:
`model Net<D: device>`) for the file that is written, or a concrete device
(`cuda:0`) for checking, which pins everything the model owns there. Both
texts have the same lines.
"""

import operator
import re

import torch
import torch.nn.functional as F

from builtin_names import BUILTINS as BUILTIN_FUNCTIONS
from errors import unsupported
from locations import source_line, source_text
from tracing import CONTAINERS, facts, is_torch_layer, original_factory

MODEL_DEVICE = "\x00D"  # a value on the device of the model being emitted

KEYWORDS = {
    "import", "model", "param", "buffer", "fn", "let", "return", "for", "true", "false", "and",
    "or", "not", "device", "cpu", "cuda", "int", "float", "bool", "f16", "bf16", "f32", "f64",
    "i32", "i64", "in", "inf",
}
# Names a local must not take: the built-in functions (generated from
# compiler/sema/Builtins.def, see README.md) and the std.nn import's name.
BUILTINS = BUILTIN_FUNCTIONS | {"nn"}

DTYPES = {
    torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.float64: "f64",
    torch.int32: "i32", torch.int64: "i64", torch.bool: "bool",
}
CAST_METHODS = {"float": "f32", "half": "f16", "double": "f64", "long": "i64", "int": "i32",
                "bool": "bool", "bfloat16": "bf16"}
BINARY = {
    operator.add: "+", operator.iadd: "+", operator.sub: "-", operator.mul: "*",
    operator.imul: "*", operator.truediv: "/",
    operator.matmul: "@", operator.pow: "**", operator.mod: "%", operator.gt: ">",
    operator.lt: "<", operator.ge: ">=", operator.le: "<=", operator.eq: "==", operator.ne: "!=",
    torch.add: "+", torch.sub: "-", torch.mul: "*", torch.div: "/", torch.matmul: "@",
    torch.bmm: "@",
    torch.pow: "**",
}
# On bool tensors (masks): `~m`, `a & b`, `a | b`.
LOGICAL = {operator.and_: "and", operator.or_: "or", torch.logical_and: "and",
           torch.logical_or: "or"}
BINARY_METHODS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "matmul": "@", "pow": "**",
                  "bmm": "@"}
LIKE_FUNCTIONS = {torch.zeros_like: "zeros", torch.ones_like: "ones", torch.randn_like: "randn",
                  torch.full_like: "full", torch.empty_like: "zeros"}
NEW_METHODS = {"new_zeros": "zeros", "new_ones": "ones", "new_full": "full", "new_empty": "zeros"}
UNARY = {
    torch.relu: "relu", F.relu: "relu", torch.sigmoid: "sigmoid", torch.tanh: "tanh",
    F.gelu: "gelu", F.silu: "silu", torch.exp: "exp", torch.log: "log", torch.sqrt: "sqrt",
    torch.abs: "abs", torch.neg: "neg", operator.neg: "neg", torch.sigmoid: "sigmoid",
    F.sigmoid: "sigmoid", F.tanh: "tanh", torch.sin: "sin", torch.cos: "cos",
}
UNARY_METHODS = {"relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh", "exp": "exp", "log": "log",
                 "sqrt": "sqrt", "abs": "abs", "neg": "neg", "sin": "sin", "cos": "cos"}
IDENTITY_METHODS = {"contiguous", "clone", "detach"}
STATELESS_LAYERS = {
    "ReLU": "relu", "GELU": "gelu", "SiLU": "silu", "Tanh": "tanh", "Sigmoid": "sigmoid",
}

CONV_HELPER = """\
/// torch.nn.Conv2d(%(in_ch)d, out_ch, kernel, groups=%(groups)d%(what)s) with a square kernel,
/// stride and padding (std.nn's Conv2d has no groups). The input channels
/// are a number, so the checker sees that they split into the groups.
model %(name)s<D: device>(out_ch: int, kernel: int, stride: int, padding: int) {
  param weight: f32[out_ch, %(per_group)d, kernel, kernel]%(bias_decl)s

  fn forward(x: f32[N, %(in_ch)d, H, W] @ D) -> f32[N, out_ch, (H + 2 * padding - %(dk)s) / stride + 1, (W + 2 * padding - %(dk)s) / stride + 1] @ D {
    return conv2d(x, weight%(bias_arg)s, stride: stride, padding: padding%(dilation_arg)s, groups: %(groups)d)
  }
}
"""


def keyword_args(*options):
    """`, name: value` for each (name, value, default) whose value is not the
    default, in .mdl syntax."""
    text = ""
    for name, value, default in options:
        if value != default:
            text += ", %s: %s" % (name, scalar_text(value))
    return text


def text_keyword_args(*options):
    """`, name: text` for each (name, text, default text) whose text is not
    the default's."""
    return "".join(", %s: %s" % (name, text) for name, text, default in options
                   if text != default)


def python_text(mdl_value):
    """A .mdl literal as PyTorch code writes it (`false` -> `False`)."""
    return {"true": "True", "false": "False"}.get(mdl_value, mdl_value)


def conv_helper(bias, dilation, groups, in_channels):
    """(name, text) of the helper model for a grouped Conv2d."""
    name = "Conv2d%sIn%dGroups%d" % ("" if bias else "NoBias", in_channels, groups)
    if dilation != 1:
        name += "Dilation%d" % dilation
    text = CONV_HELPER % {
        "name": name, "in_ch": in_channels, "groups": groups,
        "what": (", dilation=%d" % dilation if dilation != 1 else "") +
                ("" if bias else ", bias=False"),
        "per_group": in_channels // groups,
        "bias_decl": "\n  param bias: f32[out_ch]" if bias else "",
        "bias_arg": ", bias" if bias else "",
        "dk": "kernel" if dilation == 1 else "%d * (kernel - 1) - 1" % dilation,
        "dilation_arg": ", dilation: %d" % dilation if dilation != 1 else "",
    }
    return name, text


def float_text(value):
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"  # `inf` is a .mdl literal
    if value != value:
        raise ValueError("non-finite constant %r" % value)
    text = repr(float(value))
    if "e" in text and "." not in text.split("e")[0]:
        return text  # 1e-05 is a valid .mdl float
    return text


def scalar_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if value >= 0 else "(%d)" % value
    if isinstance(value, float):
        text = float_text(value)
        return text if value >= 0 else "(%s)" % text
    return None


def layer_dtype(module, loc):
    """The .mdl dtype of a torch.nn layer's floating parameters and buffers
    (PyTorch's dtype= of the layer, or what .half() / .to(torch.bfloat16)
    made them): "f32" for a layer without any."""
    dtypes = {t.dtype for t in list(module.parameters()) + list(module.buffers())
              if t.is_floating_point()}
    if len(dtypes) > 1:
        raise unsupported("`nn.%s` with %s weights" % (
            type(module).__name__, " and ".join(sorted(DTYPES.get(d, str(d)) for d in dtypes))),
            loc, help_text="give all of its parameters and buffers one dtype (`.to(dtype)`)")
    dtype = next(iter(dtypes), torch.float32)
    if dtype not in DTYPES:
        raise unsupported("`nn.%s` with %s weights" % (type(module).__name__, dtype), loc)
    return DTYPES[dtype]


def single(value, what):
    """An int, or a tuple of equal ints, as one int (square kernels)."""
    if isinstance(value, (tuple, list)):
        if len(set(value)) != 1:
            raise ValueError("%s %s is not square" % (what, tuple(value)))
        return value[0]
    return value


def pair_text(value):
    """An int, or PyTorch's pair as .mdl writes it: `3` for 3 or (3, 3),
    `(1, 7)` for (1, 7)."""
    if isinstance(value, (tuple, list)):
        if len(set(value)) == 1:
            return str(value[0])
        return "(%s)" % ", ".join(str(v) for v in value)
    return str(value)


RECURRENT_LAYERS = {"LSTM", "GRU"}


class RecurrentCall:
    """A call of nn.LSTM / nn.GRU, whose tuple result is taken apart later."""

    def __init__(self, callee, x, batch_first, num_layers, dev):
        self.callee = callee
        self.num_layers = num_layers
        self.x = x
        self.batch_first = batch_first
        self.dev = dev
        self.output = None  # the .mdl name of the output, once it is bound
        self.lstm = False
        # Through std.nn's forward_state / forward_from: the initial states
        # given (h_0[, c_0] texts, or None), and the names of the tuple's
        # parts (out, h_n[, c_n]) once they are bound.
        self.whole = False
        self.initial = None
        self.parts = None


def needs_whole_state(node, num_layers, lstm):
    """Whether the uses of an nn.LSTM/nn.GRU call `node` take more than its
    output and its last layer's h_n: the cell state c_n, or h_n of a layer
    below the last, or h_n as a whole of several layers."""
    def item_users(n):
        return [(u, u.args[1]) for u in n.users
                if u.op == "call_function" and u.target is operator.getitem and u.args[0] is n]

    for user, index in item_users(node):
        if index != 1:
            continue
        h_n = user
        if lstm:
            parts = dict((i % 2, u) for u, i in item_users(user) if isinstance(i, int))
            if 1 in parts and parts[1].users:
                return True
            if len(item_users(user)) != len(user.users):
                return True  # the (h_n, c_n) pair itself is passed on
            h_n = parts.get(0)
            if h_n is None:
                continue
        layers = item_users(h_n)
        if num_layers > 1 and (len(layers) != len(h_n.users) or any(
                i not in (-1, num_layers - 1) for _, i in layers)):
            return True
    return False


class Line:
    def __init__(self, text, loc=None, fix=None, kind=None, redundant_fix=None):
        self.text = text
        self.loc = loc
        self.fix = fix
        self.kind = kind
        self.redundant_fix = redundant_fix


class Unit:
    """One module instance emitted as its own .mdl model."""

    def __init__(self, module, graph, class_name, forward_loc):
        self.module = module
        self.graph = graph
        self.class_name = class_name
        self.forward_loc = forward_loc
        self.model_name = class_name
        self.final_name = class_name
        self.duplicate_of = None  # an earlier unit whose model is the same
        self.input_names = []
        self.defaults = {}  # placeholder -> the default it was traced at


class ModelEmitter:
    """Emits one unit for one device (`device` is "D" or a concrete one)."""

    def __init__(self, session, unit, device):
        self.session = session
        self.unit = unit
        self.module = unit.module
        self.device = device
        self.generic = device == "D"
        self.lines = []
        self.names = {}  # node -> .mdl local name
        self.exprs = {}  # node -> text usable as an operand (names, literals)
        self.devices = {}  # node -> MODEL_DEVICE or a concrete device
        self.used_names = set()
        self.value_params = []  # (name, type, default, loc)
        self.declared_forward = {}
        self.recurrent = {}  # node -> RecurrentCall: the tuple an nn.LSTM/nn.GRU call returns
        self.lists = set()  # split/chunk results: lists indexed where fx takes their items
        self.unpacked = set()  # results named by the `let (a, b) = ...` of their call
        self.recurrent_parts = {}  # node -> (RecurrentCall, "state" | "h_n" | "c_n")
        self.used_plain = set()

    # ------------------------------------------------------------- helpers
    def dev_text(self, dev):
        return self.device if dev == MODEL_DEVICE else dev

    def values(self, node):
        return self.session.values[self.unit][node]

    def sample(self, node):
        return self.values(node)[0]

    def dim_text(self, numbers, loc):
        poly = self.session.fit(numbers)
        if poly is None:
            raise unsupported("a size that depends on the input sizes other than as a polynomial",
                              loc, help_text="give that input dim a concrete size in --input")
        return poly.text()

    def tensor_type(self, node_or_values, loc, dev):
        values = node_or_values
        t = values[0]
        if t.dtype not in DTYPES:
            raise unsupported("dtype %s" % t.dtype, loc)
        dims = [self.dim_text([v.shape[i] for v in values], loc) for i in range(t.dim())]
        text = "%s[%s]" % (DTYPES[t.dtype], ", ".join(dims))
        return text + " @ " + self.dev_text(dev)

    def fresh(self, base):
        name = re.sub(r"[^A-Za-z0-9_]", "_", base) or "v"
        if name[0].isdigit():
            name = "v" + name
        if name in KEYWORDS or name in BUILTINS:
            name += "_"
        elif name in self.used_names:
            name += "_out"
        candidate = name
        n = 1
        while candidate in self.used_names or candidate in KEYWORDS or candidate in BUILTINS:
            n += 1
            candidate = "%s_%d" % (name, n)
        self.used_names.add(candidate)
        return candidate

    # ------------------------------------------------------------ the model
    def emit(self):
        module = self.module
        decl_lines = []
        for name in list(module._modules):
            child = module._modules[name]
            if child is None:
                continue
            decl_lines.extend(self.declare_child(name, child))
        for name, param in module._parameters.items():
            if param is None:
                continue
            self.used_names.add(name)
            decl_lines.append(self.state_line("param", name, param))
        for name, buf in module._buffers.items():
            if buf is None:
                continue
            self.used_names.add(name)
            decl_lines.append(self.state_line("buffer", name, buf))
        for name in module._modules:
            self.used_names.add(name)

        body = self.emit_forward()
        plain = self.plain_state_lines()

        header = "model %s" % self.unit.model_name
        if self.generic:
            header += "<D: device>"
        if self.value_params:
            header += "(%s)" % ", ".join("%s: %s = %s" % (n, t, d) for n, t, d, _ in
                                         self.value_params)
        lines = [Line("/// Imported from %s (%s)." % (self.unit.class_name,
                                                     self.session.where(self.unit.forward_loc)),
                      None),
                 Line(header + " {", self.unit.forward_loc and dict(self.unit.forward_loc,
                                                                    col=None, end_col=None))]
        for _, _, _, loc in self.value_params:
            pass
        lines += [Line("  " + l.text, l.loc, l.fix, l.kind, l.redundant_fix) for l in decl_lines + plain]
        if decl_lines or plain:
            lines.append(Line(""))
        lines += [Line("  " + l.text if l.text else "", l.loc, l.fix, l.kind, l.redundant_fix) for l in body]
        lines.append(Line("}"))
        return lines

    def state_line(self, kind, name, tensor):
        owner_locs = self.module.__dict__.get("_modelc_attr_locs", {})
        dev = facts(tensor).get("device")
        t = tensor.detach()
        if t.dtype not in DTYPES:
            raise unsupported("state `%s` of dtype %s" % (name, t.dtype), owner_locs.get(name))
        text = "%s %s: %s[%s]" % (kind, name, DTYPES[t.dtype], ", ".join(str(d) for d in t.shape))
        if dev is not None:
            text += " @ " + dev
        elif not self.generic:
            text += " @ " + self.device
        self.session.state[self.session.prefix(self.unit) + name] = t
        return Line(text, owner_locs.get(name))

    def plain_state_lines(self):
        lines = []
        locs = self.module.__dict__.get("_modelc_attr_locs", {})
        for name in sorted(self.used_plain):
            tensor = self.session.attr(self.module, name)
            loc = locs.get(name)
            dev = facts(tensor).get("device") or str(tensor.device)
            if tensor.dim() == 0:
                continue  # a value parameter; see get_attr
            t = tensor.detach()
            text = "buffer %s: %s[%s] @ %s" % (name, DTYPES[t.dtype],
                                               ", ".join(str(d) for d in t.shape), dev)
            self.session.state[self.session.prefix(self.unit) + name] = t
            fix = None
            if loc is not None:
                rhs = re.search(r"self\.%s\s*=\s*(.+)$" % re.escape(name), source_line(loc))
                value = rhs.group(1).strip() if rhs else "..."
                fix = ("`self.%s` is a plain tensor attribute, which `model.to(device)` does not "
                       "move: register it as a buffer: `self.register_buffer(\"%s\", %s)`"
                       % (name, name, value))
            lines.append(Line("// a plain tensor attribute: `.to()` does not move it, it stays "
                              "on %s" % dev))
            lines.append(Line(text, loc, fix, "plain_attr"))
        return lines

    def child_device_suffix(self, child):
        pinned = facts(child).get("pinned")
        if pinned is not None:
            return "<%s>" % pinned
        if not self.generic:
            return "<%s>" % self.device
        return ""

    def declare_child(self, name, child):
        loc = self.module.__dict__.get("_modelc_attr_locs", {}).get(name) or \
            facts(child).get("created_at")
        if isinstance(child, torch.nn.ModuleDict):
            raise unsupported("nn.ModuleDict", loc, help_text="use nn.ModuleList or attributes")
        if isinstance(child, CONTAINERS):
            lines = [Line("%s = [" % name, loc)]
            for index, element in child._modules.items():
                if isinstance(element, CONTAINERS):
                    raise unsupported("an nn.Sequential or nn.ModuleList inside another", 
                                      facts(element).get("created_at") or loc,
                                      help_text="wrap the inner one in an nn.Module subclass")
                expr = self.instance_expr(element, facts(element).get("created_at") or loc,
                                          in_list=True)
                lines.append(Line("  %s," % expr, facts(element).get("created_at") or loc))
            lines.append(Line("]", loc))
            self.session.declared_children.add(self.session.prefix(self.unit) + name)
            return lines
        expr = self.instance_expr(child, loc, in_list=False)
        if expr is None:
            return []
        self.session.declared_children.add(self.session.prefix(self.unit) + name)
        return [Line("%s = %s" % (name, expr), loc)]

    def instance_expr(self, module, loc, in_list):
        """The .mdl instantiation of `module`, or None for a stateless layer
        that needs no declaration (its calls become built-ins)."""
        suffix = self.child_device_suffix(module)
        if not is_torch_layer(module):
            unit = self.session.unit_for(module)
            if unit is None:
                return None  # never called: nothing to declare
            if not self.generic:
                return "%s()" % self.session.concrete_name(unit, facts(module).get("pinned") or
                                                           self.device)
            return "%s%s()" % (unit.model_name, suffix)
        name, args = self.layer_expr(module, loc)
        if name is None:
            if in_list:
                # Keeps the list's indices; the calls use the built-in.
                name, args = self.stateless_placeholder(module)
            else:
                return None
        dtype = layer_dtype(module, loc)
        if dtype != "f32" and name.startswith("nn."):
            # nn.Linear(4, 3, dtype=torch.float16), or a layer after .half()
            args += "%sdtype: %s" % (", " if args else "", dtype)
        self.require_std_nn(name, args, loc)
        return "%s%s(%s)" % (name, suffix, args)

    def require_std_nn(self, name, args, loc):
        """E0704 when the std.nn the import is written for lacks the layer or
        one of the options `args` gives it."""
        if not name.startswith("nn."):
            return
        layer = name[len("nn."):]
        if not self.session.std_nn_has(layer):
            raise unsupported("`nn.%s`" % layer, loc,
                              help_text="this std.nn has no %s" % layer)
        for option in re.findall(r"(\w+):", re.sub(r'"[^"]*"', "", args)):
            if not self.session.std_nn_has(layer, option):
                value = re.search(r"%s:\s*([^,]+)" % option, args).group(1)
                raise unsupported("`nn.%s(%s=%s)`" % (layer, option, python_text(value)), loc,
                                  help_text="this std.nn's %s has no `%s`" % (layer, option))

    def stateless_placeholder(self, m):
        """The std.nn layer that stands for a stateless layer in a list (its
        calls are built-ins; the element keeps the list's indices)."""
        kind = type(m).__name__
        if kind in STATELESS_LAYERS:
            return "nn." + kind, ""
        if kind == "Flatten" and (m.start_dim, m.end_dim) == (1, -1):
            return "nn.Flatten", ""
        if kind in ("MaxPool2d", "AvgPool2d"):
            return "nn." + kind, "%s, stride: %s, padding: %s" % (
                pair_text(m.kernel_size), pair_text(m.stride), pair_text(m.padding))
        if kind == "Upsample" and m.size is None and m.mode == "nearest" and \
                float(single(m.scale_factor, "scale_factor")).is_integer():
            return "nn.Upsample", "scale_factor: %d" % single(m.scale_factor, "scale_factor")
        if kind == "AdaptiveAvgPool2d" and None not in (
                (m.output_size,) if isinstance(m.output_size, int) else m.output_size):
            return "nn.AdaptiveAvgPool2d", pair_text(m.output_size)
        return "nn.Dropout", "p: 0.0"

    def layer_expr(self, m, loc):
        """(std.nn or helper name, argument text) for a torch.nn layer; (None,
        None) for a stateless layer emitted as a built-in at each call."""
        kind = type(m).__name__
        if kind == "Linear":
            return "nn.Linear", "%d, %d%s" % (m.in_features, m.out_features,
                                             "" if m.bias is not None else ", bias: false")
        if kind == "Conv2d":
            return self.conv2d_layer(m, loc)
        if kind == "ConvTranspose2d":
            return self.conv_transpose2d_layer(m, loc)
        if kind == "Conv1d":
            return self.conv1d_layer(m, loc)
        if kind in ("BatchNorm2d", "BatchNorm1d"):
            if not m.track_running_stats:
                raise unsupported("nn.%s(track_running_stats=False)" % kind, loc,
                                  help_text="std.nn's %s normalises with the running "
                                            "statistics (eval mode)" % kind)
            return "nn." + kind, "%d, eps: %s%s" % (
                m.num_features, float_text(m.eps), "" if m.affine else ", affine: false")
        if kind == "TransformerEncoder":
            return "nn.TransformerEncoder", self.encoder_args(m, loc)
        if kind == "LayerNorm":
            if len(m.normalized_shape) != 1:
                raise unsupported("nn.LayerNorm over several dims", loc,
                                  help_text="normalise over the last dim only")
            return "nn.LayerNorm", "%d, eps: %s%s" % (
                m.normalized_shape[0], float_text(m.eps),
                "" if m.elementwise_affine else ", elementwise_affine: false")
        if kind == "GroupNorm":
            if not m.affine:
                raise unsupported("nn.GroupNorm(affine=False)", loc)
            return "nn.GroupNorm", "%d, %d, eps: %s" % (m.num_groups, m.num_channels,
                                                       float_text(m.eps))
        if kind == "Embedding":
            if m.max_norm is not None:
                raise unsupported("nn.Embedding(max_norm=...)", loc)
            return "nn.Embedding", "%d, %d" % (m.num_embeddings, m.embedding_dim)
        if kind == "TransformerEncoderLayer":
            return "nn.TransformerEncoderLayer", self.encoder_layer_args(m, loc)
        if kind in RECURRENT_LAYERS:
            return "nn." + kind, self.recurrent_args(m, loc)
        if not list(m.parameters(recurse=True)) and not list(m.buffers(recurse=True)):
            return None, None
        raise unsupported("`nn.%s`" % kind, loc)

    def conv_sizes(self, m, loc, names=("kernel_size", "stride", "padding", "dilation")):
        """{name: its .mdl text} of a conv layer's per-axis sizes: one int when
        the axes agree, else PyTorch's pair `(1, 7)` where std.nn's layer
        declares that argument a tuple (`kernel_size: (int, int)`)."""
        kind = type(m).__name__
        if isinstance(m.padding, str) or m.padding_mode not in self.padding_modes(kind):
            raise unsupported("nn.%s(padding=%r, padding_mode=%r)" % (kind, m.padding,
                                                                     m.padding_mode), loc)
        return {name: self.size_text(kind, name, getattr(m, name), loc) for name in names}

    def size_text(self, layer, name, value, loc):
        """`value`, an int or PyTorch's per-axis tuple, as std.nn `layer`'s
        argument `name` takes it."""
        if not isinstance(value, (tuple, list)) or len(set(value)) == 1 or \
                self.session.std_nn_is_tuple(layer, name):
            return pair_text(value)
        raise unsupported("nn.%s with a %s %s is not square" % (layer, name, tuple(value)), loc,
                          help_text="this std.nn's %s takes one int for `%s`" % (layer, name))

    def padding_modes(self, kind):
        """The padding modes std.nn's layer `kind` has."""
        if kind == "Conv2d" and self.session.std_nn_has(kind, "padding_mode"):
            return ("zeros", "reflect", "replicate", "circular")
        return ("zeros",)

    def conv2d_layer(self, m, loc):
        sizes = self.conv_sizes(m, loc)
        if m.groups == 1 or self.session.std_nn_has("Conv2d", "groups"):
            return "nn.Conv2d", "%d, %d, %s%s" % (
                m.in_channels, m.out_channels, sizes["kernel_size"], text_keyword_args(
                    ("stride", sizes["stride"], "1"), ("padding", sizes["padding"], "0"),
                    ("dilation", sizes["dilation"], "1"), ("groups", str(m.groups), "1"),
                    ("bias", scalar_text(m.bias is not None), "true"),
                    ("padding_mode", '"%s"' % m.padding_mode, '"zeros"')))
        # A std.nn whose Conv2d has no groups: a helper model in the same file
        # (square sizes only, as such a std.nn's Conv2d).
        try:
            k, s, p, d = (single(getattr(m, name), name)
                          for name in ("kernel_size", "stride", "padding", "dilation"))
        except ValueError as error:
            raise unsupported("nn.Conv2d with a %s" % error, loc)
        helper, text = conv_helper(m.bias is not None, d, m.groups, m.in_channels)
        self.session.helpers[helper] = text
        return helper, "%d, %d, %d, %d" % (m.out_channels, k, s, p)

    def conv_transpose2d_layer(self, m, loc):
        sizes = self.conv_sizes(m, loc, ("kernel_size", "stride", "padding", "output_padding",
                                         "dilation"))
        return "nn.ConvTranspose2d", "%d, %d, %s%s" % (
            m.in_channels, m.out_channels, sizes["kernel_size"], text_keyword_args(
                ("stride", sizes["stride"], "1"), ("padding", sizes["padding"], "0"),
                ("output_padding", sizes["output_padding"], "0"), ("groups", str(m.groups), "1"),
                ("dilation", sizes["dilation"], "1"),
                ("bias", scalar_text(m.bias is not None), "true")))

    def conv1d_layer(self, m, loc):
        sizes = self.conv_sizes(m, loc)
        return "nn.Conv1d", "%d, %d, %s%s" % (
            m.in_channels, m.out_channels, sizes["kernel_size"], text_keyword_args(
                ("stride", sizes["stride"], "1"), ("padding", sizes["padding"], "0"),
                ("dilation", sizes["dilation"], "1"), ("groups", str(m.groups), "1"),
                ("bias", scalar_text(m.bias is not None), "true")))

    def recurrent_args(self, m, loc):
        """std.nn LSTM/GRU's arguments; the options it has not, by name."""
        # num_layers, bias, bidirectional and LSTM's proj_size are checked
        # against std.nn by require_std_nn. batch_first stays std.nn's
        # default (true): a time-first call is transposed around it.
        return "%d, %d%s" % (m.input_size, m.hidden_size, keyword_args(
            ("num_layers", m.num_layers, 1), ("bias", m.bias, True),
            ("bidirectional", m.bidirectional, False),
            ("proj_size", getattr(m, "proj_size", 0), 0)))

    def encoder_args(self, m, loc):
        """std.nn TransformerEncoder's arguments: its layers' (PyTorch copies
        one layer num_layers times), num_layers, and `final_norm` for
        `norm=nn.LayerNorm(d_model)`."""
        layer = m.layers[0]
        d_model, nhead, rest = self.encoder_layer_args(layer, loc).split(", ", 2)
        final = ""
        if m.norm is not None:
            norm = m.norm
            if type(norm).__name__ != "LayerNorm" or not norm.elementwise_affine or \
                    norm.eps != layer.norm1.eps:
                raise unsupported("nn.TransformerEncoder(norm=%s)" % type(norm).__name__, loc,
                                  help_text="std.nn's TransformerEncoder ends with "
                                            "nn.LayerNorm(d_model) of its layers' eps "
                                            "(`final_norm: true`)")
            final = ", final_norm: true"
        return "%s, %s, %d, %s%s" % (d_model, nhead, m.num_layers, rest, final)

    def encoder_layer_args(self, m, loc):
        """std.nn TransformerEncoderLayer's arguments for PyTorch's options."""
        act = m.activation
        gelu = act is F.gelu or isinstance(act, torch.nn.GELU) and act.approximate == "none"
        if not gelu and act is not F.relu and not isinstance(act, torch.nn.ReLU):
            raise unsupported("nn.TransformerEncoderLayer(activation=%r)" % (act,), loc,
                              help_text="std.nn's TransformerEncoderLayer has \"relu\" and "
                                        "\"gelu\"")
        eps = m.norm1.eps
        return "%d, %d, dim_feedforward: %d%s%s" % (
            m.self_attn.embed_dim, m.self_attn.num_heads, m.linear1.out_features,
            ', activation: "gelu"' if gelu else "", keyword_args(
                ("layer_norm_eps", eps, 1e-5), ("batch_first", m.self_attn.batch_first, True),
                ("norm_first", m.norm_first, False)))

    # --------------------------------------------------------- the forward
    def emit_forward(self):
        unit = self.unit
        graph = unit.graph
        lines = []
        params = []
        for node in graph.nodes:
            if node.op != "placeholder" or node in unit.defaults:
                continue
            name = self.fresh(node.name)
            self.names[node] = name
            self.exprs[node] = name
            self.devices[node] = MODEL_DEVICE
            value = self.sample(node)
            if isinstance(value, torch.Tensor):
                params.append("%s: %s" % (name, self.tensor_type(self.values(node),
                                                                  unit.forward_loc, MODEL_DEVICE)))
            else:
                raise unsupported("a forward parameter that is not a tensor (`%s`)" % node.name,
                                  unit.forward_loc)
        output = None
        for node in graph.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "call_function" and \
                    getattr(node.target, "__name__", "") == "_assert_is_none":
                continue  # fx's check of a parameter traced at its default None
            if node.op == "output":
                output = node
                continue
            lines.extend(self.emit_node(node))
        result = output.args[0]
        # A dict of results (Hugging Face and detection models): its values,
        # in order, as a tuple; a comment in the fn names them.
        keys = list(result.keys()) if isinstance(result, dict) else None
        if keys is not None:
            result = tuple(result.values())
        results = list(result) if isinstance(result, (tuple, list)) else [result]
        for item in results:
            if isinstance(item, (tuple, list, dict)) or item in self.recurrent or \
                    item in self.recurrent_parts:
                raise unsupported("a forward that returns a nested tuple", self.last_loc(graph),
                                  help_text="return the tensors as one flat tuple "
                                            "(`return out, h_n`)")
            if not isinstance(item, torch.fx.Node) or item not in self.names:
                raise unsupported("a forward that returns a non-tensor value",
                                  self.last_loc(graph), help_text="return tensors")
        types = [self.tensor_type(self.values(item), self.last_loc(graph), self.devices[item])
                 for item in results]
        result_type = types[0] if len(types) == 1 else "(%s)" % ", ".join(types)
        header = "fn forward(%s) -> %s {" % (", ".join(params), result_type)
        fix_loc = unit.forward_loc
        body = [Line(header, fix_loc)]
        body += [Line("  " + l.text, l.loc, l.fix, l.kind, l.redundant_fix) for l in lines]
        if keys is not None:
            body.append(Line("  // PyTorch's forward returns a dict; here its values, in order: "
                             + ", ".join(str(k) for k in keys)))
        body.append(Line("  return %s" % ", ".join(self.names[item] for item in results),
                         results[-1].meta.get("loc")))
        body.append(Line("}"))
        return body

    def last_loc(self, graph):
        for node in reversed(list(graph.nodes)):
            if node.meta.get("loc"):
                return node.meta["loc"]
        return self.unit.forward_loc

    def arg(self, a, loc, want="tensor"):
        """Operand text for a node argument. A size that varies with the
        input sizes (`x.size(-1)`, `T` of `B, T, C = x.shape`) is its dim
        expression; one that does not is already its number (emit_node)."""
        if isinstance(a, torch.fx.Node):
            if a in self.exprs:
                return self.exprs[a]
            sample = self.sample(a)
            if isinstance(sample, int) and not isinstance(sample, bool):
                return "(%s)" % self.int_text(a, loc)
            raise unsupported("a value of type %s" % type(self.sample(a)).__name__, loc)
        try:
            text = scalar_text(a)
        except ValueError:
            text = None
        if text is None:
            raise unsupported("the constant %r" % (a,), loc,
                              help_text="use a large finite number" if isinstance(a, float)
                              else "")
        return text

    def int_text(self, a, loc):
        if isinstance(a, torch.fx.Node):
            values = self.values(a)
            if not all(isinstance(v, int) for v in values):
                raise unsupported("a size that is not an int", loc)
            return self.dim_text(values, loc)
        if isinstance(a, int):
            return str(a)
        raise unsupported("the size %r" % (a,), loc)

    def shape_list(self, args, loc):
        """Factory or reshape sizes: ints, int nodes, or one tuple/Size."""
        if len(args) == 1 and isinstance(args[0], (tuple, list)):
            args = args[0]
        if len(args) == 1 and isinstance(args[0], torch.fx.Node) and \
                isinstance(self.sample(args[0]), (tuple, torch.Size)):
            node = args[0]
            sample = self.sample(node)
            return [self.dim_text([v[i] for v in self.values(node)], loc)
                    for i in range(len(sample))]
        return [self.int_text(a, loc) for a in args]

    def device_arg(self, a, loc):
        """A device argument as (MODEL_DEVICE or a device), or None."""
        from tracing import parse_device

        if isinstance(a, torch.fx.Node):
            if a in self.devices and isinstance(self.sample(a), torch.device):
                return self.devices[a]
            return None
        return parse_device(a)

    def first_tensor_device(self, node):
        for a in list(node.args) + list(node.kwargs.values()):
            items = a if isinstance(a, (list, tuple)) else [a]
            for item in items:
                if isinstance(item, torch.fx.Node) and item in self.devices and \
                        isinstance(self.sample(item), torch.Tensor):
                    return self.devices[item]
        return MODEL_DEVICE

    def bind(self, node, expr, dev, loc, fix=None, kind=None, base=None):
        base = base or node.name
        if isinstance(node.target, str) and node.target.startswith("<forward>."):
            base = node.target[len("<forward>."):] + "_out"
        name = self.fresh(base)
        self.names[node] = name
        self.exprs[node] = name
        self.devices[node] = dev
        return [Line("let %s = %s" % (name, expr), loc, fix, kind)]

    def alias(self, node, source):
        self.names[node] = self.names.get(source, self.exprs.get(source))
        self.exprs[node] = self.exprs[source]
        self.devices[node] = self.devices.get(source, MODEL_DEVICE)
        return []

    def emit_node(self, node):
        loc = node.meta.get("loc")
        sample = self.sample(node)
        # Sizes, shapes and devices are not values in .mdl: they are used
        # where they are consumed (dims, placements).
        if isinstance(sample, torch.device):
            self.devices[node] = self.device_of_device_node(node, loc)
            return []
        if isinstance(sample, (int, float)) and not isinstance(sample, bool) and \
                node.op != "get_attr":
            values = self.values(node)
            if all(v == sample for v in values):
                self.exprs[node] = scalar_text(sample)  # a number Python computed
            return []  # a size that varies: a dim where it is used
        if isinstance(sample, torch.Size):
            return []
        if node.op == "get_attr":
            return self.emit_get_attr(node, loc)
        if node.op == "call_module":
            return self.emit_call_module(node, loc)
        if node.op == "call_method":
            return self.emit_call_method(node, loc)
        if node.op == "call_function":
            return self.emit_call_function(node, loc)
        raise unsupported("fx node `%s`" % node.op, loc)

    def device_of_device_node(self, node, loc):
        if node.op == "call_function" and node.target is getattr and node.args[1] == "device":
            source = node.args[0]
            return self.devices.get(source, MODEL_DEVICE)
        raise unsupported("this device expression", loc)

    def emit_get_attr(self, node, loc):
        path = node.target
        tensor = self.sample(node)
        owner_path, _, leaf = path.rpartition(".")
        owner = self.module.get_submodule(owner_path) if owner_path else self.module
        if leaf in owner._parameters or leaf in owner._buffers:
            dev = facts(tensor).get("device")
            owner_pinned = facts(owner).get("pinned")
            if owner is self.module:
                self.exprs[node] = leaf
            else:
                self.exprs[node] = self.module_access(owner_path, loc) + "." + leaf
            self.devices[node] = dev or owner_pinned or MODEL_DEVICE
            return []
        if owner is not self.module:
            raise unsupported("a plain tensor attribute of a submodule (`%s`)" % path, loc)
        # A plain tensor attribute (or a constant fx stored): state pinned
        # where it was created, which `.to()` never moves.
        if tensor.dim() == 0:
            name = self.fresh(leaf)
            value = tensor.item()
            kind = "bool" if isinstance(value, bool) else ("int" if isinstance(value, int)
                                                           else "float")
            self.value_params.append((name, kind, scalar_text(value).strip("()") if value >= 0
                                      else scalar_text(value), loc))
            self.exprs[node] = name
            self.devices[node] = MODEL_DEVICE
            return []
        self.used_plain.add(leaf)
        self.used_names.add(leaf)
        self.exprs[node] = leaf
        self.devices[node] = facts(tensor).get("device") or str(tensor.device)
        return []

    def module_access(self, path, loc):
        parts = path.split(".")
        text = parts[0]
        container = self.module._modules.get(parts[0])
        rest = parts[1:]
        if isinstance(container, CONTAINERS) and rest:
            if isinstance(container, torch.nn.ModuleDict):
                raise unsupported("nn.ModuleDict", loc)
            text += "[%s]" % rest[0]
            rest = rest[1:]
        if rest:
            raise unsupported("a call of `%s` (a layer inside a nested container)" % path, loc)
        return text

    def emit_call_module(self, node, loc):
        target = node.target
        forward_created = target.startswith("<forward>.")
        if forward_created:
            name = target[len("<forward>."):]
            module, created_at = self.session.forward_modules[self.unit][name]
        else:
            module = self.module.get_submodule(target)
            created_at = None
        kind = type(module).__name__
        initial = None
        if kind in RECURRENT_LAYERS and (len(node.args) > 1 or node.kwargs):
            if node.kwargs or not self.session.std_nn_has(kind, "bidirectional"):
                raise unsupported("`nn.%s` with an initial state" % kind, loc,
                                  help_text="std.nn's %s starts from zeros, as PyTorch does "
                                            "without one: call it with the input alone" % kind)
            # lstm(x, (h_0, c_0)) / gru(x, h_0): std.nn's forward_from.
            state = node.args[1]
            states = list(state) if isinstance(state, (tuple, list)) else [state]
            initial = [self.arg(a, loc) for a in states]
        args = [self.arg(a, loc) for a in (node.args[:1] if initial else node.args)]
        if node.kwargs:
            raise unsupported("keyword arguments to a submodule call", loc)
        if is_torch_layer(module):
            functional = self.stateless_layer(module, node, args, loc)
            if functional is not None:
                if functional is True:
                    return self.alias(node, node.args[0])
                return self.bind(node, functional, self.first_tensor_device(node), loc)
        dev = facts(module).get("pinned") or MODEL_DEVICE
        lines = []
        if forward_created:
            if name not in self.declared_forward:
                expr = self.instance_expr(module, created_at or loc, in_list=False)
                local = self.fresh(name)
                self.declared_forward[name] = local
                container = self.plain_container_of(module)
                if container:
                    # The classic "submodel left behind": layers kept in a
                    # python list or dict are not registered.
                    attr, what, wrapper = container
                    fix = ("`self.%s` is a python %s, so PyTorch does not register the layers "
                           "in it: `model.to(device)` never moves them and `state_dict()` does "
                           "not save them; make it `self.%s = %s(...)` with the same layers"
                           % (attr, what, attr, wrapper))
                else:
                    fix = ("`%s` is created inside forward, so `model.to(device)` never moves "
                           "it and `state_dict()` does not save it: create it once in "
                           "`__init__` (`self.%s = %s`) and call `self.%s(...)` here"
                           % (source_text(created_at) if created_at else kind, name,
                              source_text(created_at) if created_at else "nn.%s(...)" % kind,
                              name))
                lines.append(Line("let %s = %s" % (local, expr), created_at or loc, fix,
                                  "module_in_forward"))
            callee = self.declared_forward[name]
            dev = facts(module).get("pinned") or "cpu"
        else:
            callee = self.module_access(target, loc)
        if kind in RECURRENT_LAYERS:
            # PyTorch returns (output, h_n) or (output, (h_n, c_n)): the parts
            # are emitted where they are taken out (emit_recurrent_part).
            if self.sample(node.args[0]).dim() != 3:
                raise unsupported("nn.%s on an unbatched (2-D) input" % kind, loc,
                                  help_text="give the input a batch dim")
            call = RecurrentCall(callee, args[0], module.batch_first, module.num_layers, dev)
            call.lstm = kind == "LSTM"
            call.initial = initial
            # std.nn's forward_state where the output and h_n[-1] do not say
            # it all (a std.nn without it stops at those uses with E0704).
            call.whole = self.session.std_nn_has(kind, "bidirectional") and (
                initial is not None or module.bidirectional or
                needs_whole_state(node, module.num_layers, call.lstm))
            self.recurrent[node] = call
            return lines
        if kind == "BatchNorm1d" and self.sample(node.args[0]).dim() == 3:
            callee += ".forward_seq"  # [N, C, L]
        sample = self.sample(node)
        if isinstance(sample, tuple):
            unpacked = self.unpack_results(node, len(sample), dev)
            if unpacked is not None:
                return lines + [Line("let (%s) = %s(%s)" % (unpacked, callee, ", ".join(args)),
                                     loc)]
        lines += self.bind(node, "%s(%s)" % (callee, ", ".join(args)), dev, loc)
        return lines

    def unpack_results(self, node, count, dev):
        """`a, b = self.enc(x)`: the names of a `let (a, b) = ...` when every
        use of the call takes one result out (each at most once), else None."""
        taken = {}
        for user in node.users:
            index = user.args[1] if user.op == "call_function" and \
                user.target is operator.getitem and user.args[0] is node else None
            if not isinstance(index, int) or not -count <= index < count or \
                    index % count in taken:
                return None
            taken[index % count] = user
        pattern = []
        for position in range(count):
            user = taken.get(position)
            if user is None:
                pattern.append("_")
                continue
            name = self.fresh(user.name)
            self.names[user] = self.exprs[user] = name
            self.devices[user] = dev
            self.unpacked.add(user)
            pattern.append(name)
        return ", ".join(pattern)

    def emit_recurrent_part(self, node, source, index, loc):
        """`out, (h_n, c_n) = self.lstm(x)`, `self.gru(x)[1]`, `h_n[-1]`: the
        output is std.nn's `forward`; h_n[0] (one layer) is its `last`, or the
        output's last step when the output is computed anyway."""
        if source in self.recurrent and self.recurrent[source].whole:
            return self.emit_whole_state_part(node, self.recurrent[source], index, loc)
        if source in self.recurrent_parts and self.recurrent_parts[source][0].whole:
            call, part = self.recurrent_parts[source]
            if index not in (0, 1, -1, -2):
                raise unsupported("item %r of an LSTM's state" % (index,), loc)
            return self.alias_name(node, call.parts[1 + index % 2], call.dev)
        if source in self.recurrent:
            call = self.recurrent[source]
            if index == 0:
                if not node.users:
                    return []
                x = call.x if call.batch_first else "transpose(%s, 0, 1)" % call.x
                expr = "%s(%s)" % (call.callee, x)
                if not call.batch_first:
                    expr = "transpose(%s, 0, 1)" % expr
                lines = self.bind(node, expr, call.dev, loc, base=call.callee + "_out")
                call.output = self.names[node]
                return lines
            if index != 1:
                raise unsupported("item %r of an RNN's result" % (index,), loc)
            lstm = isinstance(self.sample(node), tuple)
            self.recurrent_parts[node] = (call, "state" if lstm else "h_n")
            return self.recurrent_h_n(node, call, loc) if not lstm else []
        call, part = self.recurrent_parts[source]
        if part == "state":
            if index in (0, -2):
                self.recurrent_parts[node] = (call, "h_n")
                return self.recurrent_h_n(node, call, loc)
            if node.users:
                raise unsupported("the cell state `c_n` of `nn.LSTM`", loc,
                                  help_text="std.nn's LSTM gives the output and h_n; use those")
            return []
        if index not in (-1, call.num_layers - 1):
            raise unsupported("h_n[%r] of a %d-layer RNN (a layer below the last)" % (
                index, call.num_layers), loc, help_text="use the last layer's, h_n[-1]")
        return self.bind(node, self.recurrent_last(call), call.dev, loc,
                         base=call.callee + "_last")

    def emit_whole_state_part(self, node, call, index, loc):
        """A part of the result through std.nn's forward_state (or
        forward_from with an initial state): `let (out, h_n, c_n) =
        lstm.forward_state(x)` once, then each part is a name (h_n, c_n
        [layers * directions, B, H] as PyTorch's)."""
        lines = []
        if call.parts is None:
            base = call.callee.replace(".", "_")
            call.parts = [self.fresh(base + "_out"), self.fresh(base + "_h_n")]
            if call.lstm:
                call.parts.append(self.fresh(base + "_c_n"))
            x = call.x if call.batch_first else "transpose(%s, 0, 1)" % call.x
            if call.initial:
                expr = "%s.forward_from(%s, %s)" % (call.callee, x, ", ".join(call.initial))
            else:
                expr = "%s.forward_state(%s)" % (call.callee, x)
            lines.append(Line("let (%s) = %s" % (", ".join(call.parts), expr), loc))
            if not call.batch_first:
                out = self.fresh(base + "_out")
                lines.append(Line("let %s = transpose(%s, 0, 1)" % (out, call.parts[0]), loc))
                call.parts[0] = out
        if index == 0:
            return lines + self.alias_name(node, call.parts[0], call.dev)
        if index != 1:
            raise unsupported("item %r of an RNN's result" % (index,), loc)
        if call.lstm:
            self.recurrent_parts[node] = (call, "state")
            return lines
        return lines + self.alias_name(node, call.parts[1], call.dev)

    def alias_name(self, node, name, dev):
        """`node` is the .mdl value `name`."""
        self.names[node] = self.exprs[node] = name
        self.devices[node] = dev
        return []

    def recurrent_h_n(self, node, call, loc):
        """h_n ([1, B, hidden]) as a value, unless it is only indexed by
        layer (`h_n[-1]`), where the indexing gives the last step itself."""
        if all(user.op == "call_function" and user.target is operator.getitem and
               user.args[0] is node for user in node.users):
            return []
        if call.num_layers != 1:
            raise unsupported("h_n of a %d-layer RNN as a whole" % call.num_layers, loc,
                              help_text="use the last layer's, h_n[-1]")
        return self.bind(node, "unsqueeze(%s, 0)" % self.recurrent_last(call), call.dev, loc,
                         base=call.callee + "_h_n")

    def recurrent_last(self, call):
        """The last layer's hidden state after the last step, [B, hidden]."""
        if call.output is not None:
            return "%s[%s-1]" % (call.output, ":, " if call.batch_first else "")
        x = call.x if call.batch_first else "transpose(%s, 0, 1)" % call.x
        if call.num_layers != 1:
            return "%s(%s)[:, -1]" % (call.callee, x)
        return "%s.last(%s)" % (call.callee, x)

    def stateless_layer(self, m, node, args, loc):
        """The built-in for a call of a stateless layer; True for an identity;
        None for a layer with state."""
        kind = type(m).__name__
        x = args[0] if args else None
        if kind in STATELESS_LAYERS:
            if kind == "GELU" and m.approximate != "none":
                raise unsupported("nn.GELU(approximate=%r)" % m.approximate, loc)
            return "%s(%s)" % (STATELESS_LAYERS[kind], x)
        if kind in ("Dropout", "Identity"):
            return True
        if kind == "ReLU6":
            return "where(%s > 6.0, 6.0, relu(%s))" % (x, x)
        if kind == "Flatten":
            return "flatten(%s, start_dim: %d, end_dim: %d)" % (x, m.start_dim, m.end_dim)
        if kind in ("Softmax", "LogSoftmax"):
            return "%s(%s, dim: %d)" % ("softmax" if kind == "Softmax" else "log_softmax", x, m.dim)
        if kind in ("MaxPool2d", "AvgPool2d"):
            return self.pool(kind == "MaxPool2d", x, m.kernel_size, m.stride, m.padding,
                             getattr(m, "dilation", 1), m.ceil_mode,
                             getattr(m, "count_include_pad", True),
                             getattr(m, "divisor_override", None), loc)
        if kind == "AdaptiveAvgPool2d":
            size = m.output_size
            h, w = (size, size) if isinstance(size, int) else size
            if h is None or w is None:
                raise unsupported("nn.AdaptiveAvgPool2d with a None size", loc)
            return "adaptive_avg_pool2d(%s, [%d, %d])" % (x, h, w)
        if kind == "Upsample":
            return self.interpolate(x, m.size, m.scale_factor, m.mode, m.align_corners,
                                    "nn.Upsample", loc)
        if not list(m.parameters()) and not list(m.buffers()) and \
                self.layer_expr(m, loc)[0] is None:
            raise unsupported("`nn.%s`" % kind, loc)
        return None  # a declared layer (LayerNorm without affine has no state, but options)

    def interpolate(self, x, size, scale_factor, mode, align_corners, what, loc):
        """The `interpolate` built-in for nn.Upsample / F.interpolate."""
        if mode not in ("nearest", "linear", "bilinear"):
            raise unsupported("%s(mode=%r)" % (what, mode), loc,
                              help_text="the modes are \"nearest\", \"linear\" and "
                                        "\"bilinear\"")
        if size is not None:
            if isinstance(size, torch.fx.Node) and isinstance(self.sample(size), torch.Size):
                # `size=y.shape[-2:]` (FPN, U-Net): each of its dims.
                values = self.values(size)
                dims = [self.dim_text([v[i] for v in values], loc)
                        for i in range(len(self.sample(size)))]
                text = "size: [%s]" % ", ".join(dims) if len(dims) > 1 else "size: " + dims[0]
            else:
                sizes = list(size) if isinstance(size, (tuple, list)) else [size]
                text = "size: [%s]" % ", ".join(self.int_text(v, loc) for v in sizes) \
                    if len(sizes) > 1 else "size: %s" % self.int_text(sizes[0], loc)
        elif scale_factor is not None:
            factors = list(scale_factor) if isinstance(scale_factor, (tuple, list)) \
                else [scale_factor]
            texts = [str(int(f)) if float(f).is_integer() else float_text(f) for f in factors]
            text = "scale_factor: %s" % (texts[0] if len(set(texts)) == 1
                                         else "[%s]" % ", ".join(texts))
        else:
            raise unsupported("%s without size or scale_factor" % what, loc)
        if mode != "nearest":
            text += ', mode: "%s"' % mode
            if align_corners:
                text += ", align_corners: true"
        return "interpolate(%s, %s)" % (x, text)

    def pool(self, is_max, x, kernel, stride, padding, dilation, ceil_mode, count_include_pad,
             divisor, loc):
        what = "max_pool2d" if is_max else "avg_pool2d"
        if pair_text(dilation) != "1" or ceil_mode or not count_include_pad or \
                divisor is not None:
            raise unsupported("%s with dilation, ceil_mode, count_include_pad=False or "
                              "divisor_override" % what, loc)
        # The built-in takes an int or an (h, w) pair for each, as PyTorch's.
        return "%s(%s, %s, stride: %s, padding: %s)" % (
            what, x, pair_text(kernel), pair_text(stride if stride is not None else kernel),
            pair_text(padding))

    # ------------------------------------------------------------- methods
    def emit_call_method(self, node, loc):
        method = node.target
        x = node.args[0]
        xs = self.arg(x, loc)
        rest = node.args[1:]
        kw = dict(node.kwargs)
        dev = self.first_tensor_device(node)
        if method in IDENTITY_METHODS:
            return self.alias(node, x)
        if method in NEW_METHODS:
            if method == "new_full":
                shape_args, fill = [rest[0] if rest else kw["size"]], list(rest[1:2])
            else:
                shape_args, fill = list(rest) or [kw["size"]], []
            return self.emit_created_from(node, NEW_METHODS[method], x, shape_args, fill, kw,
                                          loc)
        if method in ("cuda", "cpu", "to", "type_as"):
            return self.emit_transfer(node, method, xs, rest, kw, loc)
        if method in CAST_METHODS:
            return self.bind(node, "cast(%s, %s)" % (xs, CAST_METHODS[method]), dev, loc)
        if method in UNARY_METHODS:
            return self.bind(node, "%s(%s)" % (UNARY_METHODS[method], xs), dev, loc)
        if method in BINARY_METHODS:
            return self.bind(node, "%s %s %s" % (xs, BINARY_METHODS[method],
                                                 self.arg(rest[0], loc)), dev, loc)
        if method in ("split", "chunk"):
            return self.emit_split(node, method, x, rest, kw, dev, loc)
        if method in ("view", "reshape"):
            dims = self.shape_list(rest, loc)
            return self.bind(node, "reshape(%s, [%s])" % (xs, ", ".join(dims)), dev, loc)
        if method == "flatten":
            start = rest[0] if rest else kw.get("start_dim", 0)
            end = rest[1] if len(rest) > 1 else kw.get("end_dim", -1)
            return self.bind(node, "flatten(%s, start_dim: %d, end_dim: %d)" % (xs, start, end),
                             dev, loc)
        if method in ("transpose", "permute", "unsqueeze", "squeeze", "softmax", "log_softmax",
                      "sum", "mean", "max", "min", "masked_fill", "t", "amax", "amin", "argmax",
                      "argmin", "clamp", "clip", "clamp_min", "clamp_max", "maximum", "minimum",
                      "triu", "tril"):
            return self.emit_shaped(node, method, xs, rest, kw, dev, loc)
        if method == "size":
            return []
        raise unsupported("`Tensor.%s`" % method, loc)

    def plain_container_of(self, module):
        """(attribute, "list" or "dict", the nn wrapper) of the python list,
        tuple or dict attribute of the model being emitted that holds
        `module`, or None."""
        for attr, value in vars(self.module).items():
            if isinstance(value, (list, tuple)) and any(v is module for v in value):
                return attr, "list", "nn.ModuleList"
            if isinstance(value, dict) and any(v is module for v in value.values()):
                return attr, "dict", "nn.ModuleDict"
        return None

    def emit_transfer(self, node, method, xs, rest, kw, loc):
        from tracing import split_to_args

        if method == "cuda":
            target = self.device_arg(rest[0], loc) if rest else "cuda:0"
            if target is None:
                target = "cuda:0"
            expr_dev = target
            cast = None
        elif method == "cpu":
            expr_dev, cast = "cpu", None
        elif method == "type_as":
            # x.type_as(y) is x.type(y.type()): y's dtype and, as the type
            # names torch.cuda.FloatTensor, its device.
            expr_dev, cast = self.like_tensor(node.args[0], rest[0] if rest else kw["other"])
        else:
            device = None
            cast = None
            plain = []
            for a in list(rest) + ([kw["device"]] if "device" in kw else []):
                d = self.device_arg(a, loc)
                if d is not None:
                    device = d
                elif isinstance(a, torch.fx.Node) and isinstance(self.sample(a), torch.Tensor):
                    # .to(other): other's device and dtype
                    device, cast = self.like_tensor(node.args[0], a)
                elif isinstance(a, torch.dtype):
                    cast = DTYPES.get(a)
                else:
                    plain.append(a)
            if "dtype" in kw:
                cast = DTYPES.get(kw["dtype"])
            if plain:
                raise unsupported("`.to(%s)`" % ", ".join(map(str, plain)), loc,
                                  help_text="pass a device or a dtype")
            expr_dev = device
        expr = xs
        if cast is not None:
            expr = "cast(%s, %s)" % (expr, cast)
        dev = self.devices.get(node.args[0], MODEL_DEVICE)
        fix = redundant = None
        if expr_dev is not None:
            expr = "%s.to(%s)" % (expr, self.dev_text(expr_dev))
            dev = expr_dev
            if loc is not None:
                call = source_text(loc)
                start = call.rfind("." + method + "(")
                call = call[start:] if start >= 0 else "." + method + "(...)"
                redundant = "remove `%s`: the tensor is already on that device" % call
                fix = ("remove `%s`: it moves the tensor to %s, away from the tensors it meets"
                       % (call, "the GPU" if expr_dev.startswith("cuda") else expr_dev
                          if expr_dev != MODEL_DEVICE else "the model's device"))
        if expr == xs:
            return self.alias(node, node.args[0])
        lines = self.bind(node, expr, dev, loc, fix, "transfer")
        lines[0].redundant_fix = redundant
        return lines

    def tensor_literal(self, data, dtype, device, loc):
        """`torch.tensor(data)` for a (nested) list of Python numbers as
        nested `stack`s of 0-dim `full`s placed on `device`; dtype as
        PyTorch infers it (bool, i64, or f32 once a float appears) unless
        given."""
        leaves = []

        def walk(item):
            if isinstance(item, (list, tuple)):
                if not item:
                    raise unsupported("`torch.tensor` of an empty list inside forward", loc,
                                      help_text="register the tensor as a buffer in __init__")
                return [walk(i) for i in item]
            if not isinstance(item, (bool, int, float)):
                raise unsupported("`torch.tensor` of this list inside forward", loc,
                                  help_text="register the tensor as a buffer in __init__")
            leaves.append(item)
            return item

        tree = walk(data)
        if dtype is None:
            if all(isinstance(v, bool) for v in leaves):
                dtype = torch.bool
            elif all(isinstance(v, int) for v in leaves):
                dtype = torch.int64
            else:
                dtype = torch.float32
        if dtype not in DTYPES:
            raise unsupported("dtype %s" % dtype, loc)
        floating = dtype.is_floating_point
        place = " @ " + self.dev_text(device)

        def text(item):
            if isinstance(item, list):
                return "stack([%s])" % ", ".join(text(i) for i in item)
            value = float(item) if floating else (bool(item) if dtype == torch.bool else int(item))
            return "full([], %s, dtype: %s)%s" % (scalar_text(value), DTYPES[dtype], place)

        return text(tree)

    def like_tensor(self, x, other):
        """(device, cast) that `.to(other)` gives x: other's device, and
        other's dtype where it differs from x's (None: no cast)."""
        dtype = self.sample(other).dtype
        cast = DTYPES.get(dtype) if dtype != self.sample(x).dtype else None
        return self.devices.get(other, MODEL_DEVICE), cast

    def emit_shaped(self, node, op, xs, rest, kw, dev, loc):
        def get(i, name, default=None):
            if len(rest) > i:
                return rest[i]
            return kw.get(name, default)

        if op == "t":
            return self.bind(node, "transpose(%s, 0, 1)" % xs, dev, loc)
        if op == "transpose":
            return self.bind(node, "transpose(%s, %d, %d)" % (xs, get(0, "dim0"), get(1, "dim1")),
                             dev, loc)
        if op == "permute":
            dims = rest[0] if len(rest) == 1 and isinstance(rest[0], (tuple, list)) else rest
            return self.bind(node, "permute(%s, [%s])" % (xs, ", ".join(map(str, dims))), dev,
                             loc)
        if op in ("unsqueeze", "squeeze"):
            d = get(0, "dim")
            if d is None:
                return self.bind(node, "squeeze(%s)" % xs, dev, loc)
            return self.bind(node, "%s(%s, %d)" % (op, xs, d), dev, loc)
        if op in ("softmax", "log_softmax"):
            return self.bind(node, "%s(%s, dim: %d)" % (op, xs, get(0, "dim")), dev, loc)
        if op == "masked_fill":
            return self.bind(node, "where(%s, %s, %s)" % (self.arg(get(0, "mask"), loc),
                                                        self.arg(get(1, "value"), loc), xs),
                             dev, loc)
        if op in ("clamp", "clip", "clamp_min", "clamp_max"):
            lo = get(0, "min") if op != "clamp_max" else None
            hi = get(1, "max") if op in ("clamp", "clip") else (get(0, "max") if op == "clamp_max"
                                                                 else None)
            bounds = "".join(", %s: %s" % (name, self.arg(v, loc))
                             for name, v in (("min", lo), ("max", hi)) if v is not None)
            return self.bind(node, "clamp(%s%s)" % (xs, bounds), dev, loc)
        if op in ("maximum", "minimum"):
            return self.bind(node, "%s(%s, %s)" % (op, xs, self.arg(get(0, "other"), loc)), dev,
                             loc)
        if op in ("triu", "tril"):
            diagonal = get(0, "diagonal", 0)
            return self.bind(node, "%s(%s%s)" % (op, xs, ", diagonal: %d" % diagonal
                                                 if diagonal else ""), dev, loc)
        if op in ("argmax", "argmin"):
            d, keepdim = get(0, "dim"), get(1, "keepdim", False)
            if d is None:
                return self.bind(node, "%s(%s)" % (op, xs), dev, loc)
            return self.bind(node, "%s(%s, dim: %d%s)" % (op, xs, d % self.sample(node.args[0]).dim(),
                                                          ", keepdim: true" if keepdim else ""),
                             dev, loc)
        if op in ("amax", "amin"):
            return self.reduction(node, op[1:], xs, get(0, "dim", ()), get(1, "keepdim", False),
                                  dev, loc, amax=True)
        return self.reduction(node, op, xs, get(0, "dim"), get(1, "keepdim", False), dev, loc)

    def reduction(self, node, op, xs, dim, keepdim, dev, loc, amax=False):
        if dim == ():
            dim = None
        if op in ("max", "min") and dim is not None and not amax:
            if isinstance(dim, (tuple, list)):
                raise unsupported("`%s` over several dims" % op, loc, help_text="use `amax`/`amin`")
            # PyTorch's (values, indices): a tuple of the values and `argmax`.
            d = dim % self.sample(node.args[0]).dim()
            kd = ", keepdim: true" if keepdim else ""
            return self.bind(node, "(%s(%s, dim: %d%s), arg%s(%s, dim: %d%s))"
                             % (op, xs, d, kd, op, xs, d, kd), dev, loc)
        if dim is None:
            return self.bind(node, "%s(%s)" % (op, xs), dev, loc)
        dims = list(dim) if isinstance(dim, (tuple, list)) else [dim]
        rank = self.sample(node.args[0]).dim()
        dims = sorted((d % rank for d in dims), reverse=True)
        expr = xs
        for d in dims:
            expr = "%s(%s, dim: %d%s)" % (op, expr, d, ", keepdim: true" if keepdim else "")
        return self.bind(node, expr, dev, loc)

    # ----------------------------------------------------------- functions
    def emit_call_function(self, node, loc):
        fn = node.target
        args = node.args
        kw = dict(node.kwargs)
        dev = self.first_tensor_device(node)
        if original_factory(fn) in self.session.factories:
            return self.emit_factory(node, original_factory(fn), args, kw, loc)
        if fn in LIKE_FUNCTIONS:
            return self.emit_created_from(node, LIKE_FUNCTIONS[fn], args[0], None, args[1:], kw,
                                          loc)
        if fn is getattr:
            attr = args[1]
            if attr == "T":
                return self.bind(node, "%s.T" % self.arg(args[0], loc), dev, loc)
            if attr in ("values", "indices") and isinstance(self.sample(args[0]), tuple):
                # `x.max(dim).values`: an item of the (values, indices) tuple.
                return self.emit_getitem(node, (args[0], 0 if attr == "values" else 1), loc, dev)
            raise unsupported("`Tensor.%s`" % attr, loc)
        if fn is operator.getitem:
            return self.emit_getitem(node, args, loc, dev)
        if fn in (torch.split, torch.chunk):
            return self.emit_split(node, fn.__name__, args[0], args[1:], kw, dev, loc)
        if fn in (operator.invert, torch.logical_not) and \
                self.sample(args[0]).dtype == torch.bool:
            return self.bind(node, "not (%s)" % self.arg(args[0], loc), dev, loc)
        if fn in LOGICAL and all(isinstance(a, torch.fx.Node) and
                                 self.sample(a).dtype == torch.bool for a in args[:2]):
            return self.bind(node, "(%s) %s (%s)" % (self.arg(args[0], loc), LOGICAL[fn],
                                                     self.arg(args[1], loc)), dev, loc)
        if fn in BINARY:
            # A tensor with a size (`x.sum(-1) / x.size(-1)`, `x * C` after
            # `B, T, C = x.shape`): the size is a number or a dim here.
            a, b = args[0], args[1] if len(args) > 1 else kw.get("other")
            return self.bind(node, "%s %s %s" % (self.arg(a, loc), BINARY[fn], self.arg(b, loc)),
                             dev, loc)
        if fn in UNARY:
            if fn is F.gelu and kw.get("approximate", "none") != "none":
                raise unsupported("gelu(approximate=%r)" % kw["approximate"], loc)
            if fn is operator.neg:
                return self.bind(node, "-%s" % self.arg(args[0], loc), dev, loc)
            return self.bind(node, "%s(%s)" % (UNARY[fn], self.arg(args[0], loc)), dev, loc)
        if fn in (F.dropout, torch.dropout, torch.nn.functional.dropout2d):
            return self.alias(node, args[0])
        if fn in (F.softmax, F.log_softmax, torch.softmax, torch.log_softmax):
            name = "softmax" if fn in (F.softmax, torch.softmax) else "log_softmax"
            d = args[1] if len(args) > 1 else kw.get("dim")
            return self.bind(node, "%s(%s, dim: %d)" % (name, self.arg(args[0], loc), d), dev, loc)
        if fn is torch.flatten:
            start = args[1] if len(args) > 1 else kw.get("start_dim", 0)
            end = args[2] if len(args) > 2 else kw.get("end_dim", -1)
            return self.bind(node, "flatten(%s, start_dim: %d, end_dim: %d)" % (
                self.arg(args[0], loc), start, end), dev, loc)
        if fn is torch.reshape:
            dims = self.shape_list(args[1:], loc)
            return self.bind(node, "reshape(%s, [%s])" % (self.arg(args[0], loc), ", ".join(dims)),
                             dev, loc)
        if fn in (torch.transpose, torch.permute, torch.unsqueeze, torch.squeeze, torch.sum,
                  torch.mean, torch.masked_fill, torch.max, torch.min, torch.amax, torch.amin,
                  torch.argmax, torch.argmin, torch.clamp, torch.clip, torch.clamp_min,
                  torch.clamp_max, torch.maximum, torch.minimum, torch.triu, torch.tril):
            if fn in (torch.max, torch.min) and len(args) > 1 and \
                    isinstance(args[1], torch.fx.Node) and \
                    isinstance(self.sample(args[1]), torch.Tensor):
                # torch.max(a, b): elementwise.
                name = "maximum" if fn is torch.max else "minimum"
                return self.bind(node, "%s(%s, %s)" % (name, self.arg(args[0], loc),
                                                       self.arg(args[1], loc)), dev, loc)
            return self.emit_shaped(node, fn.__name__, self.arg(args[0], loc), args[1:], kw, dev,
                                    loc)
        if fn in (torch.cat, torch.concat, torch.stack):
            tensors = ", ".join(self.arg(t, loc) for t in args[0])
            d = args[1] if len(args) > 1 else kw.get("dim", 0)
            name = "stack" if fn is torch.stack else "concat"
            return self.bind(node, "%s([%s], %d)" % (name, tensors, d), dev, loc)
        if fn is F.linear:
            x, w = self.arg(args[0], loc), self.arg(args[1], loc)
            b = args[2] if len(args) > 2 else kw.get("bias")
            expr = "%s @ %s.T" % (x, w)
            if b is not None:
                expr += " + %s" % self.arg(b, loc)
            return self.bind(node, expr, dev, loc)
        if fn in (F.conv2d, torch.conv2d):
            return self.bind(node, self.conv2d_call(args, kw, loc), dev, loc)
        if fn in (F.max_pool2d, F.avg_pool2d, torch.max_pool2d, F.avg_pool2d):
            is_max = fn in (F.max_pool2d, torch.max_pool2d)
            names = ["input", "kernel_size", "stride", "padding"]
            values = dict(zip(names, args))
            values.update(kw)
            return self.bind(node, self.pool(
                is_max, self.arg(values["input"], loc), values["kernel_size"],
                values.get("stride") or values["kernel_size"], values.get("padding", 0),
                values.get("dilation", 1), values.get("ceil_mode", False),
                values.get("count_include_pad", True), values.get("divisor_override"), loc),
                dev, loc)
        if fn is F.adaptive_avg_pool2d:
            size = args[1] if len(args) > 1 else kw["output_size"]
            h, w = (size, size) if isinstance(size, int) else size
            return self.bind(node, "adaptive_avg_pool2d(%s, [%d, %d])" % (
                self.arg(args[0], loc), h, w), dev, loc)
        if fn is F.layer_norm:
            names = ["input", "normalized_shape", "weight", "bias", "eps"]
            v = dict(zip(names, args))
            v.update(kw)
            if v.get("weight") is None or v.get("bias") is None:
                raise unsupported("layer_norm without weight and bias", loc)
            return self.bind(node, "layer_norm(%s, %s, %s, eps: %s)" % (
                self.arg(v["input"], loc), self.arg(v["weight"], loc), self.arg(v["bias"], loc),
                float_text(v.get("eps", 1e-5))), dev, loc)
        if fn is F.interpolate:
            names = ["input", "size", "scale_factor", "mode", "align_corners",
                     "recompute_scale_factor", "antialias"]
            v = dict(zip(names, args))
            v.update(kw)
            if v.get("antialias"):
                raise unsupported("F.interpolate(antialias=True)", loc)
            return self.bind(node, self.interpolate(
                self.arg(v["input"], loc), v.get("size"), v.get("scale_factor"),
                v.get("mode", "nearest"), v.get("align_corners"), "F.interpolate", loc), dev, loc)
        if fn is F.group_norm:
            names = ["input", "num_groups", "weight", "bias", "eps"]
            v = dict(zip(names, args))
            v.update(kw)
            if v.get("weight") is None and v.get("bias") is not None:
                raise unsupported("F.group_norm with a bias but no weight", loc)
            text = "group_norm(%s, %d" % (self.arg(v["input"], loc), v["num_groups"])
            for name in ("weight", "bias"):
                if v.get(name) is not None:
                    text += ", %s" % self.arg(v[name], loc)
            return self.bind(node, text + ", eps: %s)" % float_text(v.get("eps", 1e-5)), dev,
                             loc)
        if fn is F.embedding:
            return self.bind(node, "embedding(%s, %s)" % (self.arg(args[0], loc),
                                                         self.arg(args[1], loc)), dev, loc)
        if fn in (F.cross_entropy, F.nll_loss):
            names = ["input", "target", "weight"]
            v = dict(zip(names, args))
            v.update(kw)
            if v.get("reduction", "mean") != "mean" or v.get("ignore_index", -100) != -100 or \
                    v.get("label_smoothing", 0.0) != 0.0:
                raise unsupported("%s with reduction, ignore_index or label_smoothing" %
                                  fn.__name__, loc)
            text = "%s(%s, %s" % (fn.__name__, self.arg(v["input"], loc),
                                  self.arg(v["target"], loc))
            if v.get("weight") is not None:
                text += ", weight: %s" % self.arg(v["weight"], loc)
            return self.bind(node, text + ")", dev, loc)
        if fn is torch.where and len(args) == 3:
            return self.bind(node, "where(%s, %s, %s)" % tuple(self.arg(a, loc) for a in args),
                             dev, loc)
        name = getattr(fn, "__name__", str(fn))
        module = getattr(fn, "__module__", "") or ""
        prefix = "F." if "functional" in module else ("torch." if "torch" in module else "")
        raise unsupported("`%s%s`" % (prefix, name), loc)

    def conv2d_call(self, args, kw, loc):
        names = ["input", "weight", "bias", "stride", "padding", "dilation", "groups"]
        v = dict(zip(names, args))
        v.update(kw)
        s, p, d = (pair_text(v.get(name, default))
                   for name, default in (("stride", 1), ("padding", 0), ("dilation", 1)))
        if isinstance(v.get("padding", 0), str):
            raise unsupported("conv2d(padding=%r)" % v["padding"], loc)
        text = "conv2d(%s, %s" % (self.arg(v["input"], loc), self.arg(v["weight"], loc))
        if v.get("bias") is not None:
            text += ", %s" % self.arg(v["bias"], loc)
        return text + text_keyword_args(("stride", s, "1"), ("padding", p, "0"),
                                        ("dilation", d, "1"),
                                        ("groups", str(v.get("groups", 1)), "1")) + ")"

    def emit_split(self, node, method, x, rest, kw, dev, loc):
        """`x.split(n, dim)` / `x.chunk(k, dim)` (nanoGPT's `q, k, v =
        self.c_attn(x).split(self.n_embd, dim=2)`): the built-in's list,
        indexed where fx takes its items."""
        size = rest[0] if rest else kw.get("split_size_or_sections", kw.get("split_size",
                                                                             kw.get("chunks")))
        dim = rest[1] if len(rest) > 1 else kw.get("dim", 0)
        if isinstance(size, (list, tuple)):
            size_text = "[%s]" % ", ".join(self.int_text(v, loc) for v in size)
        else:
            size_text = self.int_text(size, loc)
        self.lists.add(node)
        return self.bind(node, "%s(%s, %s, dim: %s)" % (method, self.arg(x, loc), size_text,
                                                       self.int_text(dim, loc)), dev, loc)

    def emit_getitem(self, node, args, loc, dev):
        source, index = args
        if source in self.recurrent or source in self.recurrent_parts:
            return self.emit_recurrent_part(node, source, index, loc)
        if node in self.unpacked:
            return []
        if source in self.lists:
            count = len(self.sample(source))
            if not isinstance(index, int) or not -count <= index < count:
                raise unsupported("item %r of a split" % (index,), loc)
            return self.bind(node, "%s[%d]" % (self.exprs[source], index), dev, loc)
        if isinstance(self.sample(source), tuple) and source in self.names:
            # The results of a submodel whose forward returns a tuple.
            count = len(self.sample(source))
            if not isinstance(index, int) or not -count <= index < count:
                raise unsupported("item %r of a submodel's results" % (index,), loc)
            name = self.fresh(node.name)
            self.names[node] = self.exprs[node] = name
            self.devices[node] = self.devices.get(source, MODEL_DEVICE)
            pattern = ["_"] * count
            pattern[index % count] = name
            return [Line("let (%s) = %s" % (", ".join(pattern), self.names[source]), loc)]
        sample = self.sample(source)
        if isinstance(sample, torch.Tensor):
            items = index if isinstance(index, tuple) else (index,)
            parts = []
            for item in items:
                if isinstance(item, slice):
                    part = ""
                    if item.start is not None:
                        part += self.int_text(item.start, loc)
                    part += ":"
                    if item.stop is not None:
                        part += self.int_text(item.stop, loc)
                    if item.step is not None:
                        part += ":" + self.int_text(item.step, loc)
                    parts.append(part)
                elif item is None or item is Ellipsis:
                    raise unsupported("indexing with `None` or `...`", loc,
                                      help_text="use unsqueeze / explicit slices")
                else:
                    parts.append(self.int_text(item, loc))
            return self.bind(node, "%s[%s]" % (self.arg(source, loc), ", ".join(parts)), dev, loc)
        raise unsupported("indexing a %s" % type(sample).__name__, loc)

    def emit_created_from(self, node, builtin, source, shape_args, rest, kw, loc):
        """`torch.zeros_like(x)` / `x.new_zeros(shape)`: created on x's device
        (and, for *_like, with x's shape) unless `device=` says otherwise."""
        if shape_args is None:
            values = self.values(source)
            dims = [self.dim_text([v.shape[i] for v in values], loc)
                    for i in range(values[0].dim())]
        else:
            dims = self.shape_list(shape_args, loc)
        device = self.devices.get(source, MODEL_DEVICE)
        if kw.get("device") is not None:
            device = self.device_arg(kw["device"], loc)
            if device is None:
                raise unsupported("this `device=` argument", loc)
        sample = self.sample(node)
        dtype = ", dtype: " + DTYPES[sample.dtype] if sample.dtype != torch.float32 else ""
        if builtin == "full":
            value = rest[0] if rest else kw.get("fill_value")
            expr = "full([%s], %s%s)" % (", ".join(dims), self.arg(value, loc), dtype)
        else:
            expr = "%s([%s]%s)" % (builtin, ", ".join(dims), dtype)
        return self.bind(node, expr + " @ " + self.dev_text(device), device, loc)

    def emit_factory(self, node, fn, args, kw, loc):
        name = fn.__name__
        device = "cpu"
        if "device" in kw and kw["device"] is not None:
            device = self.device_arg(kw["device"], loc)
            if device is None:
                raise unsupported("this `device=` argument", loc)
        dtype = kw.get("dtype")
        dtype_text = ""
        if dtype is not None:
            if dtype not in DTYPES:
                raise unsupported("dtype %s" % dtype, loc)
            dtype_text = ", dtype: " + DTYPES[dtype]
        fix = None
        if device == "cpu" and loc is not None:
            call = source_text(loc)
            x = self.unit.input_names[0] if self.unit.input_names else "x"
            if re.search(r"device\s*=", call):
                fixed = re.sub(r"device\s*=\s*[^,)]+", "device=%s.device" % x, call)
            elif call.endswith("()"):
                fixed = call[:-1] + "device=%s.device)" % x
            elif call.endswith(")"):
                fixed = call[:-1] + ", device=%s.device)" % x
            else:
                fixed = "%s(..., device=%s.device)" % (name, x)
            fix = ("`%s` creates the tensor on the CPU whatever device the model is on: create "
                   "it where the tensors it meets are: `%s`" % (call, fixed))
        if name == "tensor":
            data = args[0] if args else kw.get("data")
            if isinstance(data, (int, float, bool)):
                # A 0-dim tensor from a Python number: PyTorch lets a 0-dim
                # CPU tensor meet GPU tensors as a scalar, so it is one here.
                self.exprs[node] = scalar_text(data)
                self.devices[node] = MODEL_DEVICE
                return []
            # A list of numbers: .mdl has no tensor literal, so one `full`
            # per number, stacked, each created on the call's device (the
            # CPU without device=, as in PyTorch: the checker then reports
            # where it meets the model's tensors, with the fix above).
            expr = self.tensor_literal(data, dtype, device, loc)
            return self.bind(node, expr, device, loc, fix, "factory")
        if name in ("zeros", "ones", "randn", "empty"):
            dims = self.shape_list([a for a in args], loc)
            builtin = {"empty": "zeros"}.get(name, name)
            expr = "%s([%s]%s)" % (builtin, ", ".join(dims), dtype_text)
        elif name == "full":
            dims = self.shape_list([args[0]], loc)
            expr = "full([%s], %s%s)" % (", ".join(dims), self.arg(args[1], loc), dtype_text)
        elif name == "arange":
            if len(args) != 1:
                raise unsupported("`torch.arange(start, end)`", loc)
            expr = "arange(%s%s)" % (self.int_text(args[0], loc), dtype_text)
        elif name == "eye":
            if len(args) != 1:
                raise unsupported("`torch.eye(n, m)`", loc)
            expr = "eye(%s%s)" % (self.int_text(args[0], loc), dtype_text)
        else:
            raise unsupported("`torch.%s`" % name, loc)
        expr += " @ " + self.dev_text(device)
        return self.bind(node, expr, device, loc, fix, "factory")
