#!/usr/bin/env python3
"""gen_rect_layer_refs.py - PyTorch float64 references for per-axis (h, w) layer arguments.

Model value parameters declared `(int, int)` take PyTorch's `_pair`
arguments: an int or an (h, w) pair. Each case below is a torch.nn layer
built with rectangular kernels, strides, paddings, dilations or output
paddings; this writes tests/lit/stdlib/Inputs/rect_layers/NAME/ with
weights.safetensors (the layer's state_dict, float32), input.npy (float32)
and output.npy: the layer run in float64 on those float32 weights and
input, rounded to float32. The `--args` of the matching `modelc run` are in
tests/lit/stdlib/rect-layers.test and tests/lit/tuple-params/run.test.

Weights from torch.manual_seed(0), inputs from torch.Generator seed 1234:

    /usr/bin/python3 tools/gen_rect_layer_refs.py
"""

import os
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_stdlib_refs import write_safetensors  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "lit", "stdlib", "Inputs", "rect_layers")


def cases():
    # tests/lit/tuple-params/Inputs/rect_conv.mdl: conv2d with the model's
    # tuple arguments kernel_size=(3,5), stride=(2,1), padding=(1,2),
    # dilation=(1,2), and a bias.
    yield "tuple_conv", nn.Conv2d(3, 4, (3, 5), stride=(2, 1), padding=(1, 2),
                                  dilation=(1, 2)), (2, 3, 9, 8)
    # std.nn's layers, as torch.nn builds them.
    yield "conv2d_groups", nn.Conv2d(6, 4, (3, 5), stride=(2, 1), padding=(1, 2),
                                     dilation=(2, 1), groups=2, bias=False), (2, 6, 11, 9)
    # Inception / torchvision's factorised 1x7 conv.
    yield "conv2d_inception", nn.Conv2d(3, 8, (1, 7), stride=(1, 2), padding=(0, 3)), (2, 3, 5, 12)
    for mode in ("reflect", "replicate", "circular"):
        yield "conv2d_" + mode, nn.Conv2d(3, 4, (3, 2), stride=(1, 2), padding=(1, 2),
                                          padding_mode=mode), (2, 3, 6, 7)
    yield "max_pool2d", nn.MaxPool2d((3, 2), stride=(2, 1), padding=(1, 0)), (2, 3, 9, 8)
    yield "avg_pool2d", nn.AvgPool2d((2, 3), stride=(1, 2), padding=(1, 1)), (2, 3, 7, 9)
    yield "adaptive_avg_pool2d", nn.AdaptiveAvgPool2d((3, 2)), (2, 3, 9, 8)
    yield "conv_transpose2d", nn.ConvTranspose2d(4, 6, (3, 2), stride=(2, 3), padding=(1, 0),
                                                 output_padding=(1, 2), groups=2,
                                                 dilation=(1, 2)), (2, 4, 5, 4)


def main():
    torch.manual_seed(0)
    inputs = torch.Generator().manual_seed(1234)
    for name, layer, shape in cases():
        layer.eval()
        x = torch.randn(*shape, generator=inputs)
        with torch.no_grad():
            y = layer.double()(x.double()).float()
        layer.float()
        out = os.path.join(OUT, name)
        os.makedirs(out, exist_ok=True)
        state = layer.state_dict()
        if state:
            write_safetensors(os.path.join(out, "weights.safetensors"), state)
        if name == "tuple_conv":  # the model Wrapped holds it as `conv`
            write_safetensors(os.path.join(out, "wrapped.safetensors"),
                              {"conv." + k: v for k, v in state.items()})
        np.save(os.path.join(out, "input.npy"), x.numpy())
        np.save(os.path.join(out, "output.npy"), y.numpy())
        print(name, tuple(x.shape), "->", tuple(y.shape))


if __name__ == "__main__":
    main()
