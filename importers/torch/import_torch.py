"""modelc's PyTorch importer: torch.nn.Module -> .mdl (+ .safetensors).

Run by `modelc import-torch` (compiler/driver/ImportTorchCommand.cpp):

    import_torch.py SOURCE.py CLASS --result RESULT.json [--args K=V,...]
        [--input TYPE]... [--weights OUT.safetensors] [--check DEVICE]
        [--generated DIR]

It never prints a traceback as its only output: everything it has to say
goes into RESULT.json, either {"status": "ok", "mdl": ..., "checked": ...,
"map": [...]} or {"status": "error", "code": "E07xx", ...}, and the driver
renders it. See docs/import-torch.md.
"""

import argparse
import ast
import importlib.util
import inspect
import json
import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the user's model
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from errors import (BAD_INPUT_SPEC, CANNOT_LOAD, NO_TORCH, NOT_A_MODULE, TRACE_FAILED,  # noqa
                    ImportError_)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("source")
    parser.add_argument("class_name")
    parser.add_argument("--result", required=True)
    parser.add_argument("--args", default="")
    parser.add_argument("--input", action="append", default=[])
    parser.add_argument("--weights")
    parser.add_argument("--check", default="D")
    parser.add_argument("--stdlib", help="the folder of the std.nn the import is written for")
    parser.add_argument("--generated",
                        help="the folder of the generated builtin_names.py, where it is not "
                             "beside this file (a build tree's importers/torch)")
    return parser.parse_args(argv)


def parse_constructor_args(text):
    """`in=784,hidden=256,name='x'` -> {"in": 784, ...} (Python literals;
    true/false are accepted too)."""
    kwargs = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        if "=" not in part:
            raise ImportError_(BAD_INPUT_SPEC, "`--args` takes NAME=VALUE pairs, found `%s`" % part)
        key, value = (s.strip() for s in part.split("=", 1))
        lowered = {"true": "True", "false": "False", "none": "None"}.get(value.lower(), value)
        try:
            kwargs[key] = ast.literal_eval(lowered)
        except (ValueError, SyntaxError):
            kwargs[key] = value  # a bare word is a string
    return kwargs


def class_location(cls):
    try:
        lines, start = inspect.getsourcelines(cls)
        return {"file": os.path.abspath(inspect.getsourcefile(cls)), "line": start, "col": None,
                "end_col": None}
    except (OSError, TypeError):
        return None


def forward_location(module):
    fn = type(module).forward
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    for offset, text in enumerate(lines):
        stripped = text.lstrip()
        if stripped.startswith("def "):
            col = len(text.encode("utf-8")) - len(stripped.encode("utf-8"))
            end = len(text.rstrip().encode("utf-8"))
            return {"file": os.path.abspath(inspect.getsourcefile(fn)), "line": start + offset,
                    "col": col, "end_col": end}
    return None


def read_std_nn(folder):
    """{layer: {argument name: its type as written}} of the models std.nn
    declares, read from FOLDER/nn.mdl (`kernel_size: (int, int)` gives
    "(int, int)"); None when there is no such file (then every layer the
    importer knows is taken to exist, with every argument)."""
    import re

    if not folder:
        return None
    try:
        with open(os.path.join(folder, "nn.mdl"), encoding="utf-8") as source:
            text = source.read()
    except OSError:
        return None
    layers = {}
    for match in re.finditer(r"^model\s+(\w+)\s*(?:<[^>]*>)?\s*(\()?", text, re.M):
        params, depth, at = {}, 1, match.end()
        if match.group(2):
            # The parameter list, up to its closing parenthesis: a tuple type
            # `(int, int)` nests.
            while at < len(text) and depth:
                depth += {"(": 1, ")": -1}.get(text[at], 0)
                at += 1
            for param in split_top_level(text[match.end():at - 1]):
                name, _, rest = param.partition(":")
                if name.strip().isidentifier() and rest:
                    params[name.strip()] = rest.split("=")[0].strip()
        layers[match.group(1)] = params
    return layers


def split_top_level(text):
    """`text` split at the commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += {"(": 1, ")": -1}.get(c, 0)
        if c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


class Session:
    def __init__(self, options):
        import torch

        from tracing import FACTORY_NAMES

        self.torch = torch
        self.options = options
        self.factories = {getattr(torch, n) for n in FACTORY_NAMES}
        self.units = {}  # id(module) -> Unit
        self.order = []  # units, callees first
        self.values = {}  # unit -> node -> [value per config]
        self.forward_modules = {}  # unit -> name -> (module, created_at)
        self.state = {}
        self.helpers = {}  # name -> text
        self.std_nn = read_std_nn(options.stdlib)
        self.paths = {}
        self.declared_children = set()

    def std_nn_has(self, layer, option=None):
        if self.std_nn is None:
            return True
        if layer not in self.std_nn:
            return False
        return option is None or option in self.std_nn[layer]

    def std_nn_is_tuple(self, layer, option):
        """Whether std.nn's `layer` takes PyTorch's per-axis tuple for
        `option` (`kernel_size: (int, int)`); true without a std.nn file."""
        if self.std_nn is None:
            return True
        return self.std_nn.get(layer, {}).get(option, "").startswith("(")

    def where(self, loc):
        if not loc:
            return "unknown location"
        return "%s:%d" % (os.path.basename(loc["file"]), loc["line"])

    # ---------------------------------------------------------- loading
    def load(self):
        source = os.path.abspath(self.options.source)
        if not os.path.isfile(source):
            raise ImportError_(CANNOT_LOAD, "cannot read `%s`: no such file" % self.options.source)
        sys.path.insert(0, os.path.dirname(source))
        spec = importlib.util.spec_from_file_location("__modelc_import__", source)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # inspect finds the source of its classes
        self.user_module = module
        try:
            spec.loader.exec_module(module)
        except BaseException as error:  # user code: anything can happen
            raise self.user_error(CANNOT_LOAD, "cannot load `%s`" % os.path.basename(source),
                                  error)
        cls = getattr(module, self.options.class_name, None)
        if cls is None:
            names = sorted(n for n, v in vars(module).items()
                           if inspect.isclass(v) and issubclass(v, self.torch.nn.Module) and
                           v.__module__ == module.__name__)
            raise ImportError_(NOT_A_MODULE, "cannot find class `%s` in `%s`" % (
                self.options.class_name, os.path.basename(source)),
                help_text=("the torch.nn.Module classes there: %s" % ", ".join(names)) if names
                else "it defines no torch.nn.Module class")
        if not inspect.isclass(cls) or not issubclass(cls, self.torch.nn.Module):
            loc = class_location(cls) if inspect.isclass(cls) else None
            raise ImportError_(NOT_A_MODULE, "`%s` is not a torch.nn.Module" %
                               self.options.class_name, loc,
                               label="defined here" if loc else "",
                               help_text="import a class that derives from torch.nn.Module")
        return cls

    def user_error(self, code, what, error):
        from locations import exception_location, short_traceback

        loc = exception_location(error)
        return ImportError_(code, "%s: %s" % (what, short_traceback(error)), loc,
                            label="raised here" if loc else "")

    def construct(self, cls):
        from tracing import construction_patches, patched

        kwargs = parse_constructor_args(self.options.args)
        try:
            with patched(construction_patches()):
                model = cls(**kwargs)
        except ImportError_:
            raise
        except BaseException as error:
            raise self.user_error(CANNOT_LOAD, "cannot construct `%s(%s)`" % (
                cls.__name__, self.options.args), error)
        model.eval()
        self.root = model
        self.paths = {id(m): name for name, m in model.named_modules()}
        return model

    # ---------------------------------------------------------- tracing
    def defaults_left_out(self, module):
        """The root model's trailing forward parameters with defaults beyond
        the --input types given (`def forward(self, x, mask=None)` with one
        --input): traced at their defaults, as a call without them runs."""
        import inspect

        if module is not self.root:
            return {}
        try:
            params = list(inspect.signature(type(module).forward).parameters.values())[1:]
        except (TypeError, ValueError):
            return {}
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                      p.POSITIONAL_OR_KEYWORD)]
        left = positional[len(self.options.input):]
        if not left or any(p.default is p.empty for p in left):
            return {}
        return {p.name: p.default for p in left}

    def trace_unit(self, module):
        from emitter import Unit
        from tracing import ModelcTracer, construction_patches, is_torch_layer, patched

        if id(module) in self.units:
            return self.units[id(module)]
        forward_modules = {}
        tracer = ModelcTracer(forward_modules)
        user_globals = [self.user_module.__dict__]
        fn_globals = getattr(type(module).forward, "__globals__", None)
        if fn_globals is not None and fn_globals is not self.user_module.__dict__:
            user_globals.append(fn_globals)
        defaults = self.defaults_left_out(module)
        try:
            with patched(construction_patches()):
                graph = tracer.trace_with_factories(module, user_globals, defaults)
        except ImportError_:
            raise
        except BaseException as error:
            raise self.trace_error(module, error)
        unit = Unit(module, graph, type(module).__name__, forward_location(module))
        # A parameter traced at its default is no input (fx still gives it a
        # placeholder, and an assert that it is None).
        # They are the last placeholders (fx renames them: `mask_1`).
        placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        unit.defaults = dict(zip(placeholders[len(placeholders) - len(defaults):],
                                 defaults.values())) if defaults else {}
        unit.input_names = [n.target for n in placeholders if n not in unit.defaults]
        self.units[id(module)] = unit
        self.values[unit] = {}
        self.forward_modules[unit] = forward_modules
        for node in graph.nodes:
            if node.op != "call_module":
                continue
            if node.target.startswith("<forward>."):
                callee = forward_modules[node.target[len("<forward>."):]][0]
            else:
                callee = module.get_submodule(node.target)
            if not is_torch_layer(callee):
                self.trace_unit(callee)
        self.order.append(unit)
        return unit

    def trace_error(self, module, error):
        from locations import exception_location, short_traceback

        loc = exception_location(error)
        text = str(error)
        if "control flow" in text:
            reason = ("a tensor decides Python control flow here (`if`, `while`, `bool()`, "
                      "iteration); tracing records one path and cannot follow a branch on "
                      "tensor values")
            help_text = "compute both branches and select with `torch.where`, or branch on a " \
                        "constructor argument instead"
        elif "does not support item assignment" in text:
            # `y[:, 0] = ...`: tensors are values in .mdl, never written in place.
            reason = ("an assignment into a tensor (`y[...] = value`); tensors are values in "
                      ".mdl, never written in place")
            help_text = "build the new tensor instead: `torch.where(mask, value, y)`, " \
                        "`y.masked_fill(mask, value)` or `torch.cat` of the parts"
        else:
            reason = short_traceback(error)
            help_text = ""
        return ImportError_(TRACE_FAILED, "cannot trace `%s.forward`: %s" % (
            type(module).__name__, reason), loc, label="tracing stopped here" if loc else "",
            help_text=help_text)

    def unit_for(self, module):
        return self.units.get(id(module))

    def concrete_name(self, unit, device):
        return unit.model_name

    def prefix(self, unit):
        path = self.paths.get(id(unit.module), "")
        return path + "." if path else ""

    def attr(self, module, name):
        return module.__dict__[name]

    # ---------------------------------------------------- sample runs
    def sample_runs(self, unit):
        from symbolic import parse_input_spec, sample_configs

        torch = self.torch
        specs = []
        base = {}
        for text in self.options.input:
            try:
                specs.append(parse_input_spec(text))
            except ValueError as error:
                raise ImportError_(BAD_INPUT_SPEC, "bad --input: %s" % error)
        for _, dims, bases in specs:
            for d in dims:
                if isinstance(d, str):
                    base.setdefault(d, bases.get(d, 2))
            base.update(bases)
        if len(specs) != len(unit.input_names):
            raise ImportError_(BAD_INPUT_SPEC, "`%s.forward` takes %d input(s) (%s), but %d "
                               "--input type(s) were given" % (
                                   unit.class_name, len(unit.input_names),
                                   ", ".join(unit.input_names), len(specs)), unit.forward_loc,
                               label="forward is defined here",
                               help_text="give one --input per forward parameter, e.g. "
                                         "--input 'f32[B, 784]'")
        self.base = base
        self.configs = sample_configs(base)
        dtypes = {"f32": torch.float32, "f16": torch.float16, "f64": torch.float64,
                  "bf16": torch.bfloat16, "i64": torch.int64, "i32": torch.int32,
                  "bool": torch.bool}
        generator = torch.Generator().manual_seed(0)
        for index, config in enumerate(self.configs):
            inputs = []
            for dtype, dims, _ in specs:
                if dtype not in dtypes:
                    raise ImportError_(BAD_INPUT_SPEC, "bad --input: unknown dtype `%s`" % dtype)
                shape = [config.values[d] if isinstance(d, str) else d for d in dims]
                if dtypes[dtype].is_floating_point:
                    inputs.append(torch.randn(shape, generator=generator).to(dtypes[dtype]))
                else:
                    inputs.append(torch.zeros(shape, dtype=dtypes[dtype]))
            with torch.no_grad():
                self.interpret(unit, inputs, index)

    def fit(self, numbers):
        from symbolic import fit

        if len(numbers) != len(self.configs):
            return None
        return fit(numbers, self.configs, self.base)

    def interpret(self, unit, inputs, config_index):
        from tracing import is_torch_layer, original_factory, split_to_args

        torch = self.torch
        env = {}
        values = self.values[unit]

        def load(a):
            loaded = torch.fx.node.map_arg(a, lambda n: env[n])
            if isinstance(loaded, dict):
                return dict(loaded)
            return tuple(loaded) if isinstance(loaded, (list, tuple)) else loaded

        placeholders = iter(inputs)
        for node in unit.graph.nodes:
            try:
                if node.op == "placeholder":
                    result = unit.defaults[node] if node in unit.defaults \
                        else next(placeholders)
                elif node.op == "get_attr":
                    result = unit.module
                    for part in node.target.split("."):
                        result = getattr(result, part)
                elif node.op == "call_function":
                    args, kwargs = load(node.args), load(node.kwargs)
                    fn = original_factory(node.target)
                    if fn in self.factories:
                        kwargs.pop("device", None)
                    result = fn(*args, **kwargs)
                elif node.op == "call_method":
                    args, kwargs = load(node.args), load(node.kwargs)
                    if node.target in ("cuda", "cpu"):
                        result = args[0]
                    elif node.target == "to":
                        _, rest, rest_kwargs = split_to_args(args[1:], kwargs)
                        result = args[0].to(*rest, **rest_kwargs) if rest or rest_kwargs \
                            else args[0]
                    else:
                        result = getattr(args[0], node.target)(*args[1:], **kwargs)
                elif node.op == "call_module":
                    args, kwargs = load(node.args), load(node.kwargs)
                    if node.target.startswith("<forward>."):
                        module = self.forward_modules[unit][node.target[len("<forward>."):]][0]
                    else:
                        module = unit.module.get_submodule(node.target)
                    if is_torch_layer(module):
                        result = module(*args, **kwargs)
                    else:
                        result = self.interpret(self.units[id(module)], args, config_index)
                else:  # output
                    return load(node.args[0])
            except ImportError_:
                raise
            except Exception as error:
                from locations import short_traceback

                retried = self.retry_with_one_dtype(node, unit, env, config_index)
                if retried is not None:
                    env[node] = retried
                    values.setdefault(node, [])
                    if len(values[node]) == config_index:
                        values[node].append(retried)
                    continue

                loc = node.meta.get("loc")
                raise ImportError_(BAD_INPUT_SPEC, "`%s.forward` fails on inputs of the --input "
                                   "shapes: %s" % (unit.class_name, short_traceback(error)), loc,
                                   label="fails here" if loc else "",
                                   help_text="check the --input types (dtype and sizes)")
            env[node] = result
            slot = values.setdefault(node, [])
            if len(slot) == config_index:
                slot.append(result)
        return None

    def retry_with_one_dtype(self, node, unit, env, config_index):
        """An op that failed on floating tensors of different dtypes, run with
        them all as f32: the import keeps the mismatch, and the checker reports
        it (E0201) at this line, as PyTorch would fail here on a GPU."""
        torch = self.torch
        if node.op not in ("call_function", "call_method"):
            return None
        args = torch.fx.node.map_arg(node.args, lambda n: env[n])
        kwargs = dict(torch.fx.node.map_arg(node.kwargs, lambda n: env[n]))
        floats = [a for a in list(args) + list(kwargs.values())
                  if isinstance(a, torch.Tensor) and a.is_floating_point()]
        if len({a.dtype for a in floats}) < 2:
            return None

        def widen(a):
            return a.float() if isinstance(a, torch.Tensor) and a.is_floating_point() else a

        args = tuple(widen(a) for a in args)
        kwargs = {k: widen(v) for k, v in kwargs.items()}
        try:
            if node.op == "call_function":
                return node.target(*args, **kwargs)
            return getattr(args[0], node.target)(*args[1:], **kwargs)
        except Exception:
            return None

    # --------------------------------------------------------- emitting
    def emit(self, device):
        """The .mdl text for the model on `device` ("D": device-generic). The
        first (generic) emission also merges units whose models come out the
        same (the eight BasicBlocks of a ResNet are four models)."""
        from emitter import Line, ModelEmitter

        model_lines = []
        seen = {}  # body text -> model name
        for unit in self.order:
            if unit.duplicate_of is not None:
                continue
            unit.model_name = unit.class_name if device == "D" else unit.final_name
            lines = ModelEmitter(self, unit, device).emit()
            if device == "D":
                body = "\n".join(l.text for l in lines[2:])
                key = (unit.class_name, body)
                if key in seen:
                    unit.duplicate_of = seen[key]
                    unit.model_name = seen[key].model_name
                    continue
                count = sum(1 for u in seen.values() if u.class_name == unit.class_name)
                if count:
                    unit.model_name = "%s_%d" % (unit.class_name, count + 1)
                seen[key] = unit
            unit.final_name = unit.model_name
            header = lines[1].text.split("<", 1)[0].split("(", 1)[0].split(" {", 1)[0]
            lines[1].text = lines[1].text.replace(header, "model " + unit.final_name, 1)
            model_lines.append((unit, lines))
        out = [Line("// Imported from PyTorch by `modelc import-torch` (%s:%s)." % (
            os.path.basename(self.options.source), self.options.class_name)),
            Line("import std.nn"), Line("")]
        for name in sorted(self.helpers):
            out += [Line(text) for text in self.helpers[name].rstrip("\n").split("\n")]
            out.append(Line(""))
        for index, (unit, lines) in enumerate(model_lines):
            out += lines
            if index + 1 < len(model_lines):
                out.append(Line(""))
        return out

    def run(self):
        cls = self.load()
        model = self.construct(cls)
        root = self.trace_unit(model)
        self.sample_runs(root)
        generic = self.emit("D")
        checked = generic if self.options.check == "D" else self.emit(self.options.check)
        assert len(checked) == len(generic)
        mdl_map = []
        for number, line in enumerate(generic, 1):
            if line.loc:
                entry = {"line": number, "file": line.loc["file"], "py_line": line.loc["line"],
                         "col": line.loc.get("col"), "end_col": line.loc.get("end_col")}
                if line.fix:
                    entry["fix"] = line.fix
                if line.kind:
                    entry["kind"] = line.kind
                if line.redundant_fix:
                    entry["redundant_fix"] = line.redundant_fix
                mdl_map.append(entry)
        if self.options.weights:
            from safetensors_writer import write_safetensors

            tensors = {key: value for key, value in model.state_dict().items()
                       if key in self.state or
                       any(key.startswith(p + ".") for p in self.declared_children)}
            tensors.update(self.state)
            write_safetensors(self.options.weights, tensors)
        return {
            "status": "ok",
            "model": root.model_name,
            "mdl": "\n".join(l.text for l in generic) + "\n",
            "checked": "\n".join(l.text for l in checked) + "\n",
            "map": mdl_map,
            "input_name": root.input_names[0] if root.input_names else "x",
        }


def main(argv):
    options = parse_args(argv)
    if options.generated:
        sys.path.append(options.generated)
    try:
        try:
            import torch  # noqa: F401
            import torch.fx  # noqa: F401
        except BaseException as error:
            raise ImportError_(NO_TORCH, "cannot import torch in %s: %s" % (
                sys.executable, error),
                help_text="install PyTorch for this Python (Debian: `apt install python3-torch`) "
                          "or point $MODELC_PYTHON at a Python that has it")
        # User code may print: keep our stdout (unused) and stderr free of it.
        result = Session(options).run()
    except ImportError_ as error:
        result = error.to_json()
    except Exception as error:  # a bug of the importer: say so, with the trace
        import traceback

        from locations import exception_location

        result = ImportError_(
            "E0704", "the importer cannot handle this model yet (%s: %s)" % (
                type(error).__name__, error), exception_location(error),
            notes=[("importer traceback:\n" + traceback.format_exc().rstrip(), None)],
            help_text="please report it with the model's source").to_json()
    with open(options.result, "w", encoding="utf-8") as out:
        json.dump(result, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
