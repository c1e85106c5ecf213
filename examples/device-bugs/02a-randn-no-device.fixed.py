# Fixed: the noise is created on the input's device.
import torch
import torch.nn as nn


class Noisy(nn.Module):
    def __init__(self, n=4):
        super().__init__()
        self.n = n

    def forward(self, x):
        noise = torch.randn(4, self.n, device=x.device)
        scale = noise.sum(0)
        return x + scale
