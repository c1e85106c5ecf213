# Fixed: the redundant transfer is gone.
import torch
import torch.nn as nn


class Scale(nn.Module):
    def __init__(self, n=4):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(n))

    def forward(self, x):
        return x * self.gain
