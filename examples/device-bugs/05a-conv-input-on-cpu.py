# PyTorch twin of 05a-conv-input-on-cpu.mdl: the batch went to the CPU for a
# preprocessing step and was never moved back: "Input type
# (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the
# same".
import torch
import torch.nn as nn
import torch.nn.functional as F


class Stem(nn.Module):
    def __init__(self, cin=3, cout=8):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(cout, cin, 3, 3))
        self.bias = nn.Parameter(torch.zeros(cout))

    def forward(self, x):
        x = x.cpu()
        return F.conv2d(x, self.weight, self.bias, padding=1)
