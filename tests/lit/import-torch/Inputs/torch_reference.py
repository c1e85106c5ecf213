#!/usr/bin/env python3
"""torch_reference.py - what PyTorch computes for an imported model.

    torch_reference.py FILE.py CLASS WEIGHTS.safetensors OUT_DIR [--args K=V,...]
                       --input TYPE...

Constructs CLASS(**args) with PyTorch, loads WEIGHTS (the file `modelc
import-torch --weights` wrote: the state_dict, plus plain tensor attributes
by their attribute path), makes one seeded input per --input (a type with
concrete sizes, e.g. 'f32[2, 784]'; integer inputs are in [0, 4)), runs the
model in eval mode on the CPU and writes OUT_DIR/input0.npy, ... and
OUT_DIR/expected.npy.
"""

import argparse
import json
import os
import re
import struct
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "importers", "torch"))

from import_torch import parse_constructor_args  # noqa: E402

NUMPY = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "I64": np.int64,
         "I32": np.int32, "BOOL": np.bool_}
TORCH = {"f32": torch.float32, "f64": torch.float64, "i64": torch.int64, "i32": torch.int32,
         "bool": torch.bool}


def read_safetensors(path):
    with open(path, "rb") as source:
        (length,) = struct.unpack("<Q", source.read(8))
        header = json.loads(source.read(length))
        data = source.read()
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        array = np.frombuffer(data[begin:end], dtype=NUMPY[info["dtype"]]).reshape(info["shape"])
        tensors[name] = torch.from_numpy(array.copy())
    return tensors


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("source")
    parser.add_argument("class_name")
    parser.add_argument("weights")
    parser.add_argument("out_dir")
    parser.add_argument("--args", default="")
    parser.add_argument("--input", action="append", default=[])
    options = parser.parse_args()

    sys.path.insert(0, os.path.dirname(os.path.abspath(options.source)))
    scope = {"__name__": "__torch_reference__", "__file__": options.source}
    with open(options.source) as source:
        exec(compile(source.read(), options.source, "exec"), scope)
    torch.manual_seed(0)
    model = scope[options.class_name](**parse_constructor_args(options.args)).eval()

    state = read_safetensors(options.weights)
    own = model.state_dict()
    for name, tensor in state.items():
        if name in own:
            own[name] = tensor
        else:  # a plain tensor attribute
            owner, _, leaf = name.rpartition(".")
            setattr(model.get_submodule(owner) if owner else model, leaf, tensor)
    model.load_state_dict(own)

    generator = torch.Generator().manual_seed(1)
    inputs = []
    for index, spec in enumerate(options.input):
        match = re.fullmatch(r"\s*(\w+)\s*\[(.*)\]\s*", spec)
        dtype = TORCH[match.group(1)]
        shape = [int(d) for d in match.group(2).split(",") if d.strip()]
        if dtype.is_floating_point:
            value = torch.randn(shape, generator=generator).to(dtype)
        else:
            value = torch.randint(0, 4, shape, generator=generator).to(dtype)
        inputs.append(value)
        np.save(os.path.join(options.out_dir, "input%d.npy" % index), value.numpy())
    with torch.no_grad():
        expected = model(*inputs)
    if isinstance(expected, dict) and len(expected) == 1:
        expected = next(iter(expected.values()))  # imported as its one value
    np.save(os.path.join(options.out_dir, "expected.npy"), expected.numpy())


if __name__ == "__main__":
    main()
