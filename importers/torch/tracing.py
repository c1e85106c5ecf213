"""Symbolic tracing that records PyTorch's device semantics instead of
executing them.

Plain torch.fx.symbolic_trace runs factory calls (`torch.zeros(3).cuda()`
fails on a CPU-only torch), rejects a device that is a proxy and stops at a
layer built inside forward. Here:

- while the model is constructed, `.to()`/`.cuda()` of modules and tensors
  and factories with `device=` only record the device they ask for (the
  tensors stay on the CPU), and every module, attribute and buffer remembers
  the Python line that made it;
- while forward is traced, factory calls from user code become graph nodes
  (never executed), `x.device` is a proxy attribute, and a module created in
  forward becomes a call node of its own, remembered with its creation line;
- every node records the user's line and columns (node.meta["loc"]).
"""

import contextlib
import re

import torch
import torch.fx

from locations import called_from_library, user_location

FACTORY_NAMES = ("zeros", "ones", "randn", "rand", "full", "arange", "eye", "empty", "tensor")
CONTAINERS = (torch.nn.Sequential, torch.nn.ModuleList, torch.nn.ModuleDict)


def parse_device(value):
    """A device argument as a string (`cpu`, `cuda:0`), or None if `value` is
    not a device."""
    if isinstance(value, torch.device):
        if value.type == "cuda":
            return "cuda:%d" % (value.index or 0)
        return value.type
    if isinstance(value, str) and re.fullmatch(r"(cpu|cuda|cuda:\d+|meta)", value):
        return "cuda:0" if value == "cuda" else value
    if isinstance(value, int) and not isinstance(value, bool):
        return "cuda:%d" % value
    return None


def split_to_args(args, kwargs):
    """`.to(...)`'s arguments as (device or None, the rest without the device)."""
    device = None
    rest = []
    for arg in args:
        parsed = parse_device(arg) if not isinstance(arg, torch.dtype) else None
        if parsed is not None and device is None:
            device = parsed
        else:
            rest.append(arg)
    kwargs = dict(kwargs)
    if "device" in kwargs:
        device = parse_device(kwargs.pop("device"))
    return device, rest, kwargs


def _record(obj, **fields):
    """Stores importer facts on a module or tensor without Module.__setattr__."""
    store = obj.__dict__.setdefault("_modelc", {})
    store.update(fields)


def facts(obj):
    return getattr(obj, "__dict__", {}).get("_modelc", {})


@contextlib.contextmanager
def patched(patches):
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    try:
        for owner, name, replacement in patches:
            setattr(owner, name, replacement)
        yield
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)


def construction_patches():
    """Patches active while the user's model is constructed (and while forward
    is traced, for modules built there)."""
    Module = torch.nn.Module
    orig_init = Module.__init__
    orig_setattr = Module.__setattr__
    orig_register_buffer = Module.register_buffer
    orig_module_to = Module.to
    orig_module_cuda = Module.cuda
    orig_tensor_to = torch.Tensor.to
    orig_tensor_cuda = torch.Tensor.cuda

    def init(self, *args, **kwargs):
        orig_init(self, *args, **kwargs)
        if "_modelc" not in self.__dict__:
            _record(self, created_at=user_location())

    def setattr_(self, name, value):
        if isinstance(value, (torch.Tensor, Module)) and not name.startswith("_"):
            locs = self.__dict__.setdefault("_modelc_attr_locs", {})
            locs[name] = user_location()
        orig_setattr(self, name, value)

    def register_buffer(self, name, tensor, persistent=True):
        locs = self.__dict__.setdefault("_modelc_attr_locs", {})
        locs[name] = user_location()
        return orig_register_buffer(self, name, tensor, persistent)

    def module_to(self, *args, **kwargs):
        device, rest, rest_kwargs = split_to_args(args, kwargs)
        if device is not None and device != "cpu":
            _record(self, pinned=device, pinned_at=user_location())
        if rest or rest_kwargs:
            return orig_module_to(self, *rest, **rest_kwargs)
        return self

    def module_cuda(self, device=None):
        _record(self, pinned=parse_device(device if device is not None else "cuda"),
                pinned_at=user_location())
        return self

    def tensor_to(self, *args, **kwargs):
        # A real tensor (a plain attribute) moved to where a traced value is
        # (`self.offset.to(x.device)`, `.to(x)`): recorded as the method call
        # it is; through the patched method the tracer named the call after
        # this function.
        traced = next((a for a in list(args) + list(kwargs.values())
                       if isinstance(a, torch.fx.Proxy)), None)
        if traced is not None:
            return traced.tracer.create_proxy("call_method", "to", (self,) + tuple(args), kwargs)
        device, rest, rest_kwargs = split_to_args(args, kwargs)
        result = orig_tensor_to(self, *rest, **rest_kwargs) if (rest or rest_kwargs) else self
        if device is not None and device != "cpu":
            _record(result, device=device)
        return result

    def tensor_cuda(self, device=None, *args, **kwargs):
        _record(self, device=parse_device(device if device is not None else "cuda"))
        return self

    patches = [
        (Module, "__init__", init),
        (Module, "__setattr__", setattr_),
        (Module, "register_buffer", register_buffer),
        (Module, "to", module_to),
        (Module, "cuda", module_cuda),
        (torch.Tensor, "to", tensor_to),
        (torch.Tensor, "cuda", tensor_cuda),
    ]
    for name in FACTORY_NAMES:
        patches.append((torch, name, _construction_factory(getattr(torch, name))))
    return patches


def _construction_factory(original):
    """A factory that, in __init__, creates on the CPU what asks for a GPU and
    remembers the device it asked for."""

    def factory(*args, **kwargs):
        device = parse_device(kwargs.get("device")) if "device" in kwargs else None
        if device is not None and device != "cpu":
            kwargs = dict(kwargs)
            del kwargs["device"]
            result = original(*args, **kwargs)
            _record(result, device=device)
            return result
        return original(*args, **kwargs)

    factory.__wrapped__ = original
    return factory


def original_factory(fn):
    return getattr(fn, "__wrapped__", fn)


def is_torch_layer(module):
    return type(module).__module__.startswith("torch.nn") and not isinstance(module, CONTAINERS)


def snake_case(name):
    return name.lower()


class ModelcTracer(torch.fx.Tracer):
    """Traces one module's forward; its submodules stay calls (each custom
    submodule is traced on its own)."""

    def __init__(self, forward_modules):
        super().__init__()
        self.forward_modules = forward_modules  # name -> (module, created_at)
        # `self.bias[:, :T, :T]` with T from `x.size()` (nanoGPT's mask, the
        # tutorial's positional encoding): a buffer read in forward is a node,
        # so sizes known only when the model runs can slice it.
        self.proxy_buffer_attributes = True

    def is_leaf_module(self, module, qualified_name):
        return not isinstance(module, CONTAINERS)

    def iter(self, obj):
        """`B, T, C = x.size()` / `out, state = self.lstm(x)`: fx finds the
        unpack count by indexing the bytecode with f_lasti // 2, which Python
        3.11's inline caches break; look the instruction up by its offset."""
        import dis

        frame = user_frame()
        if frame is not None:
            for inst in dis.get_instructions(frame.f_code):
                if inst.offset == frame.f_lasti:
                    if inst.opname == "UNPACK_SEQUENCE":
                        return iter([obj[i] for i in range(inst.argval)])
                    break
        return super().iter(obj)

    def create_proxy(self, kind, target, args, kwargs, *rest, **more):
        proxy = super().create_proxy(kind, target, args, kwargs, *rest, **more)
        proxy.node.meta["loc"] = user_location()
        return proxy

    def call_module(self, module, forward, args, kwargs):
        try:
            self.path_of_module(module)
        except NameError:
            return self._call_forward_created(module, args, kwargs)
        return super().call_module(module, forward, args, kwargs)

    def _call_forward_created(self, module, args, kwargs):
        for name, (known, _) in self.forward_modules.items():
            if known is module:
                return self.create_proxy("call_module", "<forward>." + name, args, kwargs)
        name = None
        frame = user_frame()
        if frame is not None:
            for local, value in frame.f_locals.items():
                if value is module and local != "self":
                    name = local
        name = name or snake_case(type(module).__name__)
        unique, n = name, 1
        while unique in self.forward_modules:
            n += 1
            unique = "%s_%d" % (name, n)
        self.forward_modules[unique] = (module, facts(module).get("created_at"))
        return self.create_proxy("call_module", "<forward>." + unique, args, kwargs)

    def trace_with_factories(self, root, user_globals, concrete_args=None):
        """Traces `root` with torch's factories recorded as nodes; the
        parameters in `concrete_args` take those values (a `mask=None` left
        out)."""
        tracer = self
        patches = [(torch.fx.proxy.Proxy, "__iter__", lambda proxy: tracer.iter(proxy))]
        for name in FACTORY_NAMES:
            original = original_factory(getattr(torch, name))
            wrapper = self._recording_factory(original)
            patches.append((torch, name, wrapper))
            for scope in user_globals:
                for key, value in list(scope.items()):
                    if value is original or value is getattr(torch, name):
                        patches.append((_DictAttr(scope), key, wrapper))
        with patched(patches):
            return self.trace(root, concrete_args=concrete_args or None)

    def _recording_factory(self, original):
        tracer = self

        def factory(*args, **kwargs):
            if called_from_library():
                # torch's own code (a layer's __init__): run it.
                return original(*args, **kwargs)
            return tracer.create_proxy("call_function", original, args, kwargs)

        factory.__wrapped__ = original
        return factory


class _DictAttr:
    """Lets `patched` set a key of a module's globals like an attribute."""

    def __init__(self, scope):
        self.__dict__["_scope"] = scope

    def __getattr__(self, name):
        return self._scope[name]

    def __setattr__(self, name, value):
        self._scope[name] = value


def user_frame():
    import sys
    from locations import is_library_file

    frame = sys._getframe(1)
    while frame is not None:
        if not is_library_file(frame.f_code.co_filename):
            return frame
        frame = frame.f_back
    return None
