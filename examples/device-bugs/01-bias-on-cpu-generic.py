# PyTorch twin of 01-bias-on-cpu-generic.mdl, checked for every device
# (--check D): the bias tensor stays on the CPU wherever the model goes.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Affine(nn.Module):
    def __init__(self, d_in=4, d_out=3):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d_out, d_in))
        self.bias = torch.zeros(d_out)

    def forward(self, x):
        return x @ self.weight.T + self.bias
