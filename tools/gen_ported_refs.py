#!/usr/bin/env python3
"""gen_ported_refs.py - PyTorch's results for tests/lit/exec/Inputs/ported_ops.mdl.

Each fn NAME of the `Ported` model gets tests/lit/exec/Inputs/ported/NAME/
with input.npy (and input2.npy, ...) in the order of the fn's parameters and
output.npy, PyTorch's float32 result of the same computation written with
torch / torch.nn.functional. Inputs come from torch.Generator().manual_seed(7).

Run it once with the Debian torch (the tests themselves do not need torch):

    /usr/bin/python3 tools/gen_ported_refs.py
"""

import os

import numpy as np
import torch
import torch.nn.functional as F

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


def main():
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
