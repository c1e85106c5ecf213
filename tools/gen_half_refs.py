#!/usr/bin/env python3
"""gen_half_refs.py - PyTorch's f16 and bf16 results for tests/lit/cuda/half-parity.test.

For each model of tests/lit/cuda/Inputs/half/models.mdl (std.nn layers built
with `dtype: dtype`: an MLP, a small conv net with batch norm, an embedding
-> layer norm -> linear -> softmax block, a transformer encoder layer), writes
tests/lit/cuda/Inputs/half/NAME/ with input.npy (f32; the model rounds it to
the half type first) and, for DTYPE in f16 and bf16, DTYPE.safetensors
(PyTorch's state_dict converted to DTYPE: F16 / BF16 tensors) and
output_DTYPE.npy.

The reference is PyTorch's eager computation with the half weights: each
layer (nn.Linear's addmm, conv2d with its bias, batch_norm, layer_norm,
adaptive_avg_pool2d, softmax, log_softmax; in attention the scaled query,
the scores, their softmax and the weighted values; residual sums) computes
from its half inputs and
rounds its result to DTYPE once, round to nearest even, as PyTorch's CUDA
kernels do with their f32 arithmetic; here the arithmetic is float64
(PyTorch 1.13 on the cpu has no f16 conv or addmm), so the reference carries
no accumulation error of its own. ReLU, max pooling and embedding are exact.

Run it once with the Debian torch (the tests themselves do not need torch):

    /usr/bin/python3 tools/gen_half_refs.py
"""

import math
import os

import numpy as np
import torch
import torch.nn.functional as F

from gen_stdlib_refs import write_safetensors

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "lit", "cuda", "Inputs", "half")
DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}


def linear(g, name, fan_in, fan_out):
    bound = fan_in ** -0.5
    return {name + ".weight": (torch.rand(fan_out, fan_in, generator=g) * 2 - 1) * bound,
            name + ".bias": (torch.rand(fan_out, generator=g) * 2 - 1) * bound}


def conv(g, name, cin, cout, k):
    bound = (cin * k * k) ** -0.5
    return {name + ".weight": (torch.rand(cout, cin, k, k, generator=g) * 2 - 1) * bound,
            name + ".bias": (torch.rand(cout, generator=g) * 2 - 1) * bound}


def models():
    g = torch.Generator().manual_seed(13)
    mlp = {**linear(g, "fc1", 64, 128), **linear(g, "fc2", 128, 10)}
    yield "mlp", mlp, torch.randn(4, 64, generator=g), forward_mlp

    net = {**conv(g, "conv1", 3, 8, 3), **conv(g, "conv2", 8, 16, 3), **linear(g, "fc", 16, 10),
           "bn1.weight": 1 + 0.2 * torch.randn(8, generator=g),
           "bn1.bias": 0.1 * torch.randn(8, generator=g),
           "bn1.running_mean": 0.1 * torch.randn(8, generator=g),
           "bn1.running_var": 0.5 + torch.rand(8, generator=g)}
    yield "convnet", net, torch.randn(2, 3, 12, 12, generator=g), forward_convnet

    block = {"embed.weight": torch.randn(50, 32, generator=g),
             "norm.weight": 1 + 0.1 * torch.randn(32, generator=g),
             "norm.bias": 0.1 * torch.randn(32, generator=g), **linear(g, "proj", 32, 24)}
    ids = torch.randint(0, 50, (2, 5), generator=g)
    yield "block", block, ids, forward_block

    # nn.TransformerEncoderLayer(32, 2, dim_feedforward=64, batch_first=True):
    # heads of 16 features, so the query's scale 1 / sqrt(16) is exact.
    e, ff = ENCODER_E, 64
    encoder = {"layer.self_attn.in_proj_weight": (torch.rand(3 * e, e, generator=g) * 2 - 1) * e ** -0.5,
               "layer.self_attn.in_proj_bias": 0.1 * torch.randn(3 * e, generator=g),
               **linear(g, "layer.self_attn.out_proj", e, e), **linear(g, "layer.linear1", e, ff),
               **linear(g, "layer.linear2", ff, e),
               "layer.norm1.weight": 1 + 0.1 * torch.randn(e, generator=g),
               "layer.norm1.bias": 0.1 * torch.randn(e, generator=g),
               "layer.norm2.weight": 1 + 0.1 * torch.randn(e, generator=g),
               "layer.norm2.bias": 0.1 * torch.randn(e, generator=g)}
    yield "encoder", encoder, torch.randn(2, 5, e, generator=g), forward_encoder


ENCODER_E, ENCODER_HEADS = 32, 2


def forward_mlp(w, x, r):
    h = torch.relu(r(F.linear(r(x), w["fc1.weight"], w["fc1.bias"])))
    return r(F.linear(h, w["fc2.weight"], w["fc2.bias"]))


def forward_convnet(w, x, r):
    h = r(F.conv2d(r(x), w["conv1.weight"], w["conv1.bias"], padding=1))
    h = r(F.batch_norm(h, w["bn1.running_mean"], w["bn1.running_var"], w["bn1.weight"],
                       w["bn1.bias"], training=False, eps=1e-5))
    h = F.max_pool2d(torch.relu(h), 2)
    h = torch.relu(r(F.conv2d(h, w["conv2.weight"], w["conv2.bias"])))
    p = r(F.adaptive_avg_pool2d(h, (1, 1))).flatten(1)
    return r(F.linear(p, w["fc.weight"], w["fc.bias"]))


def forward_block(w, ids, r):
    e = F.embedding(ids, w["embed.weight"])
    n = r(F.layer_norm(e, (32,), w["norm.weight"], w["norm.bias"], eps=1e-5))
    logits = r(F.linear(n, w["proj.weight"], w["proj.bias"]))
    return r(torch.softmax(logits, -1)) + r(torch.log_softmax(logits, -1))


def forward_encoder(w, x, r):
    """PyTorch 1.13's TransformerEncoderLayer (post-norm, relu, eval) through
    F.multi_head_attention_forward's steps, each result rounded, except where
    modelc fuses: a residual sum is the epilogue of the GEMM that makes its
    right operand, in f32, as a cuBLASLt or CUTLASS epilogue keeps it (eager
    PyTorch rounds the product first, which moves some outputs by 1-2 ulp:
    24 of 320 f16 elements beyond rtol 1e-3, up to 0.0039 absolute)."""
    def p(name):
        return w["layer." + name]
    e, h = ENCODER_E, ENCODER_HEADS
    b, t, _ = x.shape
    x = r(x)
    q, k, v = r(F.linear(x, p("self_attn.in_proj_weight"), p("self_attn.in_proj_bias"))).split(e, -1)

    def heads(z):
        return z.reshape(b, t, h, e // h).transpose(1, 2)
    q = r(q / math.sqrt(e // h))
    probs = r(torch.softmax(r(heads(q) @ heads(k).transpose(-2, -1)), -1))
    o = r(probs @ heads(v)).transpose(1, 2).reshape(b, t, e)
    # The residual sums are fused into the epilogues of the out_proj and
    # linear2 GEMMs, in f32: their products are not rounded before the sum.
    attn = F.linear(o, p("self_attn.out_proj.weight"), p("self_attn.out_proj.bias"))
    x = r(F.layer_norm(r(x + attn), (e,), p("norm1.weight"), p("norm1.bias"), eps=1e-5))
    hidden = torch.relu(r(F.linear(x, p("linear1.weight"), p("linear1.bias"))))
    y = F.linear(hidden, p("linear2.weight"), p("linear2.bias"))
    return r(F.layer_norm(r(x + y), (e,), p("norm2.weight"), p("norm2.bias"), eps=1e-5))


def check_encoder(state, x):
    """The steps above are torch.nn's layer: compare in float64."""
    layer = torch.nn.TransformerEncoderLayer(ENCODER_E, ENCODER_HEADS, 64, dropout=0.0,
                                             batch_first=True).double().eval()
    layer.load_state_dict({k[len("layer."):]: v.double() for k, v in state.items()})
    with torch.no_grad():
        want = layer(x.double())
    got = forward_encoder({k: v.double() for k, v in state.items()}, x.double(), lambda z: z)
    assert torch.allclose(want, got, atol=1e-12), (want - got).abs().max()


def main():
    for name, state, x, forward in models():
        if forward is forward_encoder:
            check_encoder(state, x)
        folder = os.path.join(OUT, name)
        os.makedirs(folder, exist_ok=True)
        np.save(os.path.join(folder, "input.npy"), x.numpy())
        for key, dtype in DTYPES.items():
            half = {k: v.to(dtype) for k, v in state.items()}
            write_safetensors(os.path.join(folder, key + ".safetensors"), half)

            def r(t, dtype=dtype):  # a layer's result, rounded to the half type
                return t.to(dtype).to(torch.float64)

            wide = {k: v.to(torch.float64) for k, v in half.items()}
            inputs = x if x.dtype == torch.int64 else x.to(torch.float64)
            y = forward(wide, inputs, r)
            np.save(os.path.join(folder, "output_%s.npy" % key), y.to(torch.float32).numpy())


if __name__ == "__main__":
    main()
