# Fixed: the bias is registered (a buffer here), so it follows the model.
import torch
import torch.nn as nn


class Affine(nn.Module):
    def __init__(self, d_in=4, d_out=3):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d_out, d_in))
        self.register_buffer("bias", torch.zeros(d_out))

    def forward(self, x):
        return x @ self.weight.T + self.bias
