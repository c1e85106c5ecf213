# PyTorch twin of 02b-randn-device-conflict.mdl: the noise is created on the
# CPU explicitly while x is on the GPU.
import torch
import torch.nn as nn


class Noisy(nn.Module):
    def forward(self, x):
        noise = torch.randn(x.shape, device="cpu")
        return x + noise
