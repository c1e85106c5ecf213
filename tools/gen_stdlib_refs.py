#!/usr/bin/env python3
"""gen_stdlib_refs.py - reference data for the std.nn parity tests.

Builds each std.nn layer (and two small models composed of them) in PyTorch
1.13, in eval mode, and writes into tests/lit/stdlib/Inputs/<name>/:

    weights.safetensors   the module's state_dict() under PyTorch's names
                          (absent for layers without state)
    input.npy [input2.npy ...]  the inputs, in the order of the entry fn's
                          parameters
    output.npy [output_<variant>.npy ...]  PyTorch's float32 output

Weights come from torch.manual_seed(0) at construction (then the parameters
PyTorch initialises to constants - norm weights, biases, BatchNorm running
statistics - are randomised so they are tested), inputs from
torch.Generator().manual_seed(1234).

Run it once with the Debian torch (it is not needed by the tests):

    /usr/bin/python3 tools/gen_stdlib_refs.py [NAME...]

The safetensors package is not required: the writer below produces the
standard layout (8-byte little-endian header length, JSON header, raw data).
"""

import json
import os
import struct
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "lit", "stdlib", "Inputs")

# `gen_stdlib_refs.py NAME...` writes only those folders.
ONLY = set(sys.argv[1:])

ST_DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64",
             torch.int32: "I32", torch.bool: "BOOL", torch.float16: "F16",
             torch.bfloat16: "BF16"}


def write_safetensors(path, state):
    header, blobs, offset = {}, [], 0
    for name, t in state.items():
        t = t.detach().contiguous().cpu()
        # NumPy has no bf16: its bits travel as int16.
        blob = (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy().tobytes()
        header[name] = {"dtype": ST_DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def save(name, module=None, inputs=(), outputs=None):
    """outputs: {"output": tensor, "output_gelu": tensor, ...}"""
    if ONLY and name not in ONLY:
        return
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    for f in os.listdir(folder):
        os.remove(os.path.join(folder, f))
    if module is not None and len(module.state_dict()) > 0:
        write_safetensors(os.path.join(folder, "weights.safetensors"), module.state_dict())
    for i, x in enumerate(inputs):
        fname = "input.npy" if i == 0 else "input%d.npy" % (i + 1)
        np.save(os.path.join(folder, fname), x.detach().numpy())
    for key, y in outputs.items():
        np.save(os.path.join(folder, key + ".npy"), y.detach().numpy().astype(np.float32))


def gen():
    return torch.Generator().manual_seed(1234)


def randn(*shape):
    return torch.randn(*shape, generator=GEN)


def randomise_norm(m):
    """Norm layers start as weight=1, bias=0 (and BatchNorm with mean 0,
    var 1): give them values that test every term."""
    with torch.no_grad():
        if getattr(m, "weight", None) is not None:
            m.weight.copy_(1 + 0.5 * torch.randn(m.weight.shape))
        if getattr(m, "bias", None) is not None:
            m.bias.copy_(0.5 * torch.randn(m.bias.shape))
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(0.5 * torch.randn(m.running_mean.shape))
            m.running_var.copy_(0.5 + torch.rand(m.running_var.shape))
            m.num_batches_tracked.fill_(10)


def randomise_biases(module):
    """MultiheadAttention starts with zero in_proj_bias and out_proj.bias."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape))
    for m in module.modules():
        if isinstance(m, (nn.LayerNorm, nn.BatchNorm2d)):
            randomise_norm(m)


def causal_float_mask(t):
    # What nn.Transformer.generate_square_subsequent_mask gives.
    return torch.triu(torch.full((t, t), float("-inf")), diagonal=1)


class Cnn(nn.Module):
    """Conv-BN-ReLU-MaxPool twice, global average pool, flatten, linear."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.gap = nn.AdaptiveAvgPool2d((1, 1))
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = self.pool(F.relu(self.bn2(self.conv2(x))))
        return self.fc(self.flatten(self.gap(x)))


class BasicBlock(nn.Module):
    """torchvision's ResNet BasicBlock: 3x3 convs without bias, each followed
    by BatchNorm2d, and a 1x1 conv + BatchNorm2d on the shortcut when the
    stride or width changes."""

    def __init__(self, in_planes, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = nn.Sequential(
            nn.Conv2d(in_planes, planes, 1, stride=stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.downsample(x))


class WithoutBatchCounts:
    """A module's state_dict less BatchNorm's num_batches_tracked, as files
    written from older PyTorch versions or by hand are."""

    def __init__(self, module):
        self.module = module

    def state_dict(self):
        return {k: v for k, v in self.module.state_dict().items()
                if not k.endswith("num_batches_tracked")}


class Encoder(nn.Module):
    """A 2-layer nn.TransformerEncoder; its state names are
    layers.0.self_attn.in_proj_weight, ..."""

    def __init__(self, d_model, nhead, d_ff, num_layers):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model, nhead, d_ff, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)


def main():
    global GEN
    torch.set_grad_enabled(False)

    # --- pooling -----------------------------------------------------------
    GEN = gen()
    x = randn(2, 3, 9, 9)
    save("maxpool2d", inputs=[x], outputs={
        "output": nn.MaxPool2d(3, stride=2, padding=1).eval()(x),
        "output_k2": nn.MaxPool2d(2, 2).eval()(x)})
    save("avgpool2d", inputs=[x], outputs={
        "output": nn.AvgPool2d(3, stride=2, padding=1).eval()(x),
        "output_k2": nn.AvgPool2d(2, 2).eval()(x)})
    GEN = gen()
    x = randn(2, 3, 8, 6)
    y = randn(2, 3, 7, 7)
    save("adaptive_avgpool2d", inputs=[x, y], outputs={
        "output": nn.AdaptiveAvgPool2d((4, 3)).eval()(x),
        "output_1x1": nn.AdaptiveAvgPool2d(1).eval()(x),
        "output_uneven": nn.AdaptiveAvgPool2d((3, 3)).eval()(y)})

    # --- BatchNorm2d -------------------------------------------------------
    torch.manual_seed(0)
    bn = nn.BatchNorm2d(4, eps=1e-5).eval()
    randomise_norm(bn)
    GEN = gen()
    x = randn(2, 4, 5, 5)
    save("batchnorm2d", bn, [x], {"output": bn(x)})

    # --- shape-only and elementwise layers ---------------------------------
    GEN = gen()
    x = randn(2, 3, 4, 4)
    save("flatten", inputs=[x], outputs={"output": nn.Flatten().eval()(x)})
    GEN = gen()
    x = 3 * randn(2, 5, 7)
    save("activations", inputs=[x], outputs={
        "output_relu": nn.ReLU()(x), "output_gelu": nn.GELU()(x), "output_silu": nn.SiLU()(x),
        "output_tanh": nn.Tanh()(x), "output_sigmoid": nn.Sigmoid()(x),
        "output_dropout": nn.Dropout(0.3).eval()(x)})

    # --- MultiheadAttention ------------------------------------------------
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(32, 4, batch_first=True).eval()
    randomise_biases(mha)
    GEN = gen()
    x = randn(2, 8, 32)
    kv = randn(2, 5, 32)
    mask = causal_float_mask(8)
    # Batch 0 uses all 8 positions, batch 1 only the first 5.
    padding = torch.arange(8).unsqueeze(0) >= torch.tensor([[8], [5]])
    save("multihead_attention", mha, [x, mask, kv, padding], {
        "output": mha(x, x, x, need_weights=False)[0],
        "output_padded": mha(x, x, x, key_padding_mask=padding, need_weights=False)[0],
        "output_masked": mha(x, x, x, attn_mask=mask, need_weights=False)[0],
        "output_cross": mha(x, kv, kv, need_weights=False)[0]})

    # --- TransformerEncoderLayer: every activation / norm_first variant ----
    # The four variants share their state (same names, same shapes), so one
    # weights file serves all of them.
    variants = {"output": ("relu", False), "output_gelu": ("gelu", False),
                "output_norm_first": ("relu", True), "output_norm_first_gelu": ("gelu", True)}
    outputs, state = {}, None
    GEN = gen()
    x = randn(2, 8, 32)
    mask = causal_float_mask(8)
    for key, (act, norm_first) in variants.items():
        torch.manual_seed(0)
        layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, activation=act,
                                           batch_first=True, norm_first=norm_first).eval()
        randomise_biases(layer)
        if state is None:
            state = layer
        outputs[key] = layer(x)
        if key == "output":
            outputs["output_masked"] = layer(x, src_mask=mask)
    save("transformer_encoder_layer", state, [x, mask], outputs)

    # --- composed models ---------------------------------------------------
    torch.manual_seed(0)
    cnn = Cnn().eval()
    for m in cnn.modules():
        if isinstance(m, nn.BatchNorm2d):
            randomise_norm(m)
    GEN = gen()
    x = randn(2, 3, 16, 16)
    save("cnn_bn", cnn, [x], {"output": cnn(x)})

    torch.manual_seed(0)
    enc = Encoder(32, 4, 64, 2).eval()
    randomise_biases(enc)
    GEN = gen()
    x = randn(2, 8, 32)
    # state_dict names without the wrapper's `encoder.` prefix: exactly
    # nn.TransformerEncoder's own names (layers.0.self_attn.in_proj_weight).
    mask = causal_float_mask(8)
    save("transformer_encoder", enc.encoder, [x, mask],
         {"output": enc(x), "output_masked": enc.encoder(x, mask=mask)})

    # --- optional state and options (bias=False, elementwise_affine, ...) ---
    torch.manual_seed(0)
    linear = nn.Linear(8, 6, bias=False).eval()
    GEN = gen()
    x = randn(3, 8)
    save("linear_no_bias", linear, [x], {"output": linear(x)})

    torch.manual_seed(0)
    conv = nn.Conv2d(3, 4, 3, stride=2, padding=1, bias=False).eval()
    dilated = nn.Conv2d(3, 4, 3, padding=2, dilation=2).eval()
    GEN = gen()
    x = randn(2, 3, 9, 9)
    save("conv2d_no_bias", conv, [x], {"output": conv(x)})
    save("conv2d_dilated", dilated, [x], {"output": dilated(x)})

    norm = nn.LayerNorm(8, elementwise_affine=False).eval()
    GEN = gen()
    x = randn(2, 5, 8)
    save("layernorm_no_affine", norm, [x], {"output": norm(x)})

    torch.manual_seed(0)
    bn = nn.BatchNorm2d(4, affine=False).eval()
    randomise_norm(bn)
    GEN = gen()
    x = randn(2, 4, 5, 5)
    save("batchnorm2d_no_affine", bn, [x], {"output": bn(x)})

    # PyTorch's default batch_first=False: [T, B, d_model] in and out.
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(32, 4, 64, activation="gelu", norm_first=True).eval()
    randomise_biases(layer)
    GEN = gen()
    x = randn(8, 2, 32)
    save("transformer_encoder_layer_seq_first", layer, [x], {"output": layer(x)})

    # A ResNet basic block whose file has no num_batches_tracked.
    torch.manual_seed(0)
    block = BasicBlock(16, 32, 2).eval()
    for m in block.modules():
        if isinstance(m, nn.BatchNorm2d):
            randomise_norm(m)
    GEN = gen()
    x = randn(2, 16, 8, 8)
    save("resnet_basic_block", WithoutBatchCounts(block), [x], {"output": block(x)})
    # Stride 1, equal widths: no downsample, as ResNet._make_layer builds it.
    torch.manual_seed(0)
    block = BasicBlock(16, 16, 1).eval()
    del block.downsample
    block.downsample = lambda x: x
    for m in block.modules():
        if isinstance(m, nn.BatchNorm2d):
            randomise_norm(m)
    GEN = gen()
    x = randn(2, 16, 8, 8)
    save("resnet_basic_block_identity", block, [x], {"output": block(x)})

    # --- grouped and depthwise Conv2d, ReLU6 (MobileNetV2's blocks) --------
    torch.manual_seed(0)
    grouped = nn.Conv2d(6, 4, 3, stride=2, padding=1, groups=2, bias=False).eval()
    depthwise = nn.Conv2d(6, 6, 3, padding=1, groups=6).eval()
    GEN = gen()
    x = randn(2, 6, 7, 7)
    save("conv2d_grouped", grouped, [x], {"output": grouped(x)})
    save("conv2d_depthwise", depthwise, [x], {"output": depthwise(x)})
    GEN = gen()
    x = 4 * randn(2, 3, 8)  # wide enough that some values pass 6
    save("relu6", inputs=[x], outputs={"output": nn.ReLU6()(x)})
    # --- a stack of num_layers layers (std.nn TransformerEncoder) ----------
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(32, 4, 48, activation="gelu", norm_first=True,
                                       batch_first=True)
    stack = nn.TransformerEncoder(layer, 3, norm=nn.LayerNorm(32),
                                  enable_nested_tensor=False).eval()
    randomise_biases(stack)
    GEN = gen()
    x = randn(2, 6, 32)
    mask = causal_float_mask(6)
    save("transformer_encoder_stack", stack, [x, mask],
         {"output": stack(x), "output_masked": stack(x, mask=mask)})

    # --- PyTorch's options on the ported layers ------------------------------
    torch.manual_seed(0)
    depthwise = nn.Conv2d(6, 12, 3, padding=1, groups=6, bias=False).eval()
    conv1d = nn.Conv1d(4, 6, 3, padding=1, bias=False).eval()
    convt = nn.ConvTranspose2d(4, 6, 2, stride=2, bias=False).eval()
    gn = nn.GroupNorm(3, 6, affine=False).eval()
    bn1 = nn.BatchNorm1d(6).eval()
    randomise_norm(bn1)
    bn1.running_mean.copy_(0.5 * torch.randn(6))
    bn1.running_var.copy_(0.5 + torch.rand(6))
    GEN = gen()
    x = randn(2, 6, 5, 5)
    save("conv2d_depthwise_no_bias", depthwise, [x], {"output": depthwise(x)})
    x = randn(2, 4, 7)
    save("conv1d_no_bias", conv1d, [x], {"output": conv1d(x)})
    x = randn(2, 4, 3, 3)
    save("conv_transpose2d_no_bias", convt, [x], {"output": convt(x)})
    x = randn(2, 6, 4, 4)
    save("group_norm_no_affine", gn, [x], {"output": gn(x)})
    x, xs = randn(3, 6), randn(3, 6, 5)
    save("batchnorm1d", bn1, [x, xs], {"output": bn1(x), "output_seq": bn1(xs)})

    total = 0
    for dirpath, _, files in os.walk(OUT):
        for f in files:
            total += os.path.getsize(os.path.join(dirpath, f))
    print("wrote %s (%d KB)" % (OUT, total // 1024))


if __name__ == "__main__":
    sys.exit(main())
