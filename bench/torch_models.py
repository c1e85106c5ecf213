"""The benchmark models: their .mdl, arguments, PyTorch twins and input shapes.

Shared by bench/cpu_vs_pytorch.py and bench/gpu_vs_pytorch.py, so both time
the same models with the same weights (torch.manual_seed(0) before the
constructor).
"""

import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The std.nn parity tests' PyTorch twins (torchvision's BasicBlock) and their
# randomisation of the state PyTorch initialises to constants.
sys.path.insert(0, os.path.join(ROOT, "tools"))
from gen_stdlib_refs import BasicBlock, randomise_biases, randomise_norm  # noqa: E402


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        a = F.max_pool2d(F.relu(self.conv1(x)), 2)
        b = F.max_pool2d(F.relu(self.conv2(a)), 2)
        h = F.relu(self.fc2(F.relu(self.fc1(torch.flatten(b, 1)))))
        return self.fc3(h)


class MlpBlock(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


def resnet_block(in_planes, planes, stride):
    """torchvision's ResNet BasicBlock with its downsampling shortcut (1x1
    conv + BatchNorm2d), as ResNet._make_layer builds the first block of a
    stage, with trained-looking BatchNorm statistics; state names as
    torchvision's (conv1.weight, bn1.running_var, downsample.0.weight, ...)."""
    block = BasicBlock(in_planes, planes, stride)
    for m in block.modules():
        if isinstance(m, nn.BatchNorm2d):
            randomise_norm(m)
    return block


def encoder_layer(d_model, nhead, dim_feedforward):
    """nn.TransformerEncoderLayer, batch first, post-norm, ReLU; its biases
    and norms (zero and the identity at construction) randomised."""
    layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, batch_first=True)
    randomise_biases(layer)
    return layer


# Sizes of the two larger blocks (docs/performance.md says why these).
RESNET_BLOCK = dict(in_planes=64, planes=128, stride=2, size=16)
ENCODER_LAYER = dict(d_model=256, nhead=4, dim_feedforward=1024, tokens=32)

# name: .mdl, model, --args, torch constructor, input shape for a batch
MODELS = {
    "mlp": ("examples/mlp.mdl", "Mlp", "in=784,hidden=256,out=10", Mlp,
            lambda b: (b, 784)),
    "lenet5": ("examples/lenet5.mdl", "LeNet5", "", LeNet5,
               lambda b: (b, 1, 28, 28)),
    "mlp_block": ("examples/mlp_block.mdl", "MlpBlock", "dim=1024,hidden=4096",
                  lambda: MlpBlock(1024, 4096), lambda b: (b, 1, 1024)),
    "resnet_block": ("examples/resnet_basic_block.mdl", "BasicBlock",
                     "in_planes=%(in_planes)d,planes=%(planes)d,stride=%(stride)d" % RESNET_BLOCK,
                     lambda: resnet_block(RESNET_BLOCK["in_planes"], RESNET_BLOCK["planes"],
                                         RESNET_BLOCK["stride"]),
                     lambda b: (b, RESNET_BLOCK["in_planes"], RESNET_BLOCK["size"],
                                RESNET_BLOCK["size"])),
    # std.nn's own layer, instantiated straight from the library file: its
    # state names are PyTorch's (self_attn.in_proj_weight, linear1.bias, ...).
    "encoder_layer": ("stdlib/nn.mdl", "TransformerEncoderLayer",
                      "d_model=%(d_model)d,nhead=%(nhead)d,dim_feedforward=%(dim_feedforward)d"
                      % ENCODER_LAYER,
                      lambda: encoder_layer(ENCODER_LAYER["d_model"], ENCODER_LAYER["nhead"],
                                            ENCODER_LAYER["dim_feedforward"]),
                      lambda b: (b, ENCODER_LAYER["tokens"], ENCODER_LAYER["d_model"])),
    # The MLP block at the width of the GPU table's middle rows (issue 13).
    "mlp_block_256": ("examples/mlp_block.mdl", "MlpBlock", "dim=256,hidden=1024",
                      lambda: MlpBlock(256, 1024), lambda b: (b, 8, 256)),
}
