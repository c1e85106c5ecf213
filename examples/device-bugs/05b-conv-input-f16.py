# PyTorch twin of 05b-conv-input-f16.mdl: a half-precision batch meets f32
# weights: "Input type (torch.cuda.HalfTensor) and weight type
# (torch.cuda.FloatTensor) should be the same".
import torch
import torch.nn as nn
import torch.nn.functional as F


class Stem(nn.Module):
    def __init__(self, cin=3, cout=8):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(cout, cin, 3, 3))
        self.bias = nn.Parameter(torch.zeros(cout))

    def forward(self, x):
        return F.conv2d(x, self.weight, self.bias, padding=1)
