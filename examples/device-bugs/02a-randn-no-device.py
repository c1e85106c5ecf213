# PyTorch twin of 02a-randn-no-device.mdl: torch.randn(...) inside forward
# lands on the CPU by default; reduced and added to x, it meets the GPU.
import torch
import torch.nn as nn


class Noisy(nn.Module):
    def __init__(self, n=4):
        super().__init__()
        self.n = n

    def forward(self, x):
        noise = torch.randn(4, self.n)
        scale = noise.sum(0)
        return x + scale
