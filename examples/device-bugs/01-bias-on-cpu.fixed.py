# Fixed: the bias is a parameter, which model.to() moves with the weight.
import torch
import torch.nn as nn


class Affine(nn.Module):
    def __init__(self, d_in=4, d_out=3):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d_out, d_in))
        self.bias = nn.Parameter(torch.zeros(d_out))

    def forward(self, x):
        return x @ self.weight.T + self.bias
