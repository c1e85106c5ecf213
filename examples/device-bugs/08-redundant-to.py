# PyTorch twin of 08-redundant-to.mdl: a `.to` to the device the tensor is
# already on costs nothing but hides intent; modelc warns.
import torch
import torch.nn as nn


class Scale(nn.Module):
    def __init__(self, n=4):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(n))

    def forward(self, x):
        return x.to(self.gain.device) * self.gain
