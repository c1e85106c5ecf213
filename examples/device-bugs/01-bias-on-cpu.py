# PyTorch twin of 01-bias-on-cpu.mdl: the bias is a plain tensor attribute
# (torch.zeros, not nn.Parameter), so model.to("cuda") leaves it on the CPU:
#   RuntimeError: Expected all tensors to be on the same device, but found
#   at least two devices, cuda:0 and cpu!
import torch
import torch.nn as nn


class Affine(nn.Module):
    def __init__(self, d_in=4, d_out=3):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d_out, d_in))
        self.bias = torch.zeros(d_out)

    def forward(self, x):
        return x @ self.weight.T + self.bias
