#!/usr/bin/env python3
"""gen_window_refs.py - reference data for per-axis windows of the 2-D built-ins.

PyTorch's conv2d, conv_transpose2d, max_pool2d and avg_pool2d take a pair
(h, w) for each kernel size, stride, padding and dilation; this writes
tests/lit/stdlib/Inputs/rect_windows/ for tests/lit/stdlib/rect-windows.mdl:
a [4, 3, 3, 5] conv weight and bias, a [3, 2, 2, 3] transposed conv weight,
an input [2, 3, 9, 8] and PyTorch's result of

    y = conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2))
    y = max_pool2d(y, (2, 3), stride=(2, 1), padding=(1, 0))
    y = avg_pool2d(y, (1, 2), stride=(1, 2), padding=(0, 1))
    y = conv_transpose2d(y, wt, stride=(2, 1), padding=(0, 1), output_padding=(1, 0))

Weights from torch.manual_seed(0), the input from Generator seed 1234:

    /usr/bin/python3 tools/gen_window_refs.py
"""

import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_stdlib_refs import write_safetensors  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "lit", "stdlib", "Inputs", "rect_windows")


def main():
    torch.manual_seed(0)
    state = {"weight": torch.randn(4, 3, 3, 5) * 0.3, "bias": torch.randn(4) * 0.1,
             "up_weight": torch.randn(4, 3, 2, 3) * 0.3}
    x = torch.randn(2, 3, 9, 8, generator=torch.Generator().manual_seed(1234))
    y = F.conv2d(x, state["weight"], state["bias"], stride=(2, 1), padding=(1, 2), dilation=(1, 2))
    y = F.max_pool2d(y, (2, 3), stride=(2, 1), padding=(1, 0))
    y = F.avg_pool2d(y, (1, 2), stride=(1, 2), padding=(0, 1))
    y = F.conv_transpose2d(y, state["up_weight"], stride=(2, 1), padding=(0, 1),
                           output_padding=(1, 0))
    os.makedirs(OUT, exist_ok=True)
    write_safetensors(os.path.join(OUT, "weights.safetensors"), state)
    np.save(os.path.join(OUT, "input.npy"), x.numpy())
    np.save(os.path.join(OUT, "output.npy"), y.numpy())
    print("output", tuple(y.shape))


if __name__ == "__main__":
    main()
