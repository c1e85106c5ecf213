#!/usr/bin/env python3
"""gen_ported_refs.py - PyTorch's results for tests/lit/exec/Inputs/ported_ops.mdl.

Each fn NAME of the `Ported` model gets tests/lit/exec/Inputs/ported/NAME/
with input.npy (and input2.npy, ...) in the order of the fn's parameters and
output.npy, PyTorch's float32 result of the same computation written with
torch / torch.nn.functional. Inputs come from torch.Generator().manual_seed(7).

The std.nn layers built on them (Conv1d, ConvTranspose2d, GroupNorm,
Upsample) get Inputs/ported/layers/NAME/ with weights.safetensors (PyTorch's
state_dict), input.npy and output.npy, for tests/lit/stdlib/ported_layers.test.

Run it once with the Debian torch (the tests themselves do not need torch):

    /usr/bin/python3 tools/gen_ported_refs.py
"""

import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from gen_stdlib_refs import write_safetensors

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "lit", "exec", "Inputs", "ported")
B = 2


def cases():
    g = torch.Generator().manual_seed(7)

    def rand(*shape):
        return torch.randn(*shape, generator=g)

    x = rand(B, 6)
    a = torch.arange(6, dtype=torch.float32) + torch.arange(2, 14, 2, dtype=torch.float32)
    yield "arange_", [x], x * torch.arange(3, -3, -1, dtype=torch.float32) + a + torch.arange(
        0.0, 1.5, 0.25)

    x = rand(B, 6)
    yield "slice_", [x], torch.cat([x[:, 1:5:2], x[:, -3:-1], x[:, 3:100]], dim=1)

    x = rand(B, 6, 4)
    parts = torch.chunk(x, 3, dim=1)
    yield "chunk_", [x], torch.cat([parts[2], parts[0], parts[-2]], dim=1)

    x = rand(B, 6, 4)
    yield "chunk_uneven", [x], torch.cat(torch.chunk(x, 4, dim=1), dim=2)

    x = rand(B, 6, 4)
    parts = torch.split(x, [1, 3, 2], dim=1)
    yield "split_", [x], torch.cat([parts[2], parts[1], parts[0]], 1) + torch.cat(
        [torch.split(x, 4, 1)[1], torch.split(x, 4, 1)[0]], 1)

    x = rand(B, 4, 4)
    causal = torch.triu(torch.ones(4, 4), diagonal=1) > 0.5
    yield "masked_fill_", [x], x.masked_fill(causal, -1000.0).masked_fill(x > 0.5, 0.25)

    x = rand(B, 4, 5)
    yield "triangles", [x], (torch.tril(x, -1) + 2.0 * torch.triu(x, diagonal=2) + 3.0 * x.tril()
                             - x.triu(1))

    x = rand(B, 3, 4)
    yield "pad_constant", [x], F.pad(F.pad(x, [1, 2], value=0.5), [0, 0, 2, 1])
    x = rand(B, 3, 4)
    yield "pad_crop", [x], F.pad(x, [-2, 1])
    for mode in ("reflect", "replicate", "circular"):
        x = rand(B, 2, 4, 5)
        yield "pad_" + mode, [x], F.pad(x, [2, 1, 1, 2], mode=mode)

    x, w, b = rand(B, 4, 9), rand(6, 2, 3), rand(6)
    yield "conv1d_", [x, w, b], F.conv1d(x, w, b, stride=2, padding=1, dilation=2, groups=2)
    x, w, b = rand(B, 4, 5, 4), rand(4, 3, 3, 2), rand(6)
    yield "conv_transpose2d_", [x, w, b], F.conv_transpose2d(
        x, w, b, stride=(2, 3), padding=(1, 0), output_padding=1, groups=2)
    x, w = rand(B, 3, 4, 4), rand(3, 2, 3, 3)
    yield "conv_transpose2d_dilated", [x, w], F.conv_transpose2d(x, w, dilation=2, padding=1,
                                                                 stride=1)
    x, w, b = rand(B, 6, 3, 4), rand(6), rand(6)
    yield "group_norm_", [x, w, b], F.group_norm(x, 3, w, b, eps=1e-5) + F.group_norm(x, 2)
    x = rand(B, 2, 3, 5)
    yield "nearest", [x], F.interpolate(x, size=[7, 10])
    yield "nearest_scale", [x], F.interpolate(x, scale_factor=[2, 1.5], mode="nearest")
    yield "bilinear", [x], F.interpolate(x, size=[7, 4], mode="bilinear")
    yield "bilinear_aligned", [x], F.interpolate(x, scale_factor=2, mode="bilinear",
                                                 align_corners=True)
    x = rand(B, 2, 5)
    yield "linear_", [x], F.interpolate(x, scale_factor=2.5, mode="linear")


def layers():
    """The std.nn layers built on these built-ins, as torch.nn modules."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1234)
    specs = [
        ("conv1d", nn.Conv1d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2), (B, 4, 9),
         "in_channels=4,out_channels=6,kernel_size=3,stride=2,padding=1,dilation=2,groups=2"),
        ("conv_transpose2d", nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1,
                                                groups=2), (B, 4, 5, 5),
         "in_channels=4,out_channels=6,kernel_size=3,stride=2,padding=1,output_padding=1,groups=2"),
        ("group_norm", nn.GroupNorm(3, 6), (B, 6, 3, 4), "num_groups=3,num_channels=6"),
        ("upsample", nn.Upsample(scale_factor=2), (B, 3, 2, 3), "scale_factor=2"),
    ]
    for name, module, shape, args in specs:
        module.eval()
        with torch.no_grad():
            for p in module.parameters():  # norm weights and biases are not all ones/zeros
                p.copy_(torch.randn(p.shape, generator=g))
            x = torch.randn(*shape, generator=g)
            yield name, module, x, module(x), args


def main():
    for name, module, x, output, args in layers():
        folder = os.path.join(OUT, "layers", name)
        os.makedirs(folder, exist_ok=True)
        if module.state_dict():
            write_safetensors(os.path.join(folder, "weights.safetensors"), module.state_dict())
        np.save(os.path.join(folder, "input.npy"), x.numpy())
        np.save(os.path.join(folder, "output.npy"), output.numpy())
        print("layer", name, args, tuple(output.shape))
    for name, inputs, output in cases():
        folder = os.path.join(OUT, name)
        os.makedirs(folder, exist_ok=True)
        for i, t in enumerate(inputs):
            suffix = "" if i == 0 else str(i + 1)
            np.save(os.path.join(folder, "input%s.npy" % suffix), t.numpy())
        np.save(os.path.join(folder, "output.npy"), output.numpy())
        print(name, tuple(output.shape))


if __name__ == "__main__":
    main()
