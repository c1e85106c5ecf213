import torch
import torch.nn as nn


class TensorLiteral(nn.Module):
    """torch.tensor of (nested) Python lists inside forward, created where
    the input is: a projection, a bias with a negative entry, integer
    offsets, a bool mask."""

    def forward(self, x):
        w = torch.tensor([[1, 2, 3, 4], [5, 6, 7, 8]], dtype=torch.float32, device=x.device)
        shift = torch.tensor([0.5, -1.5], device=x.device)
        steps = torch.tensor([3, -2], device=x.device)
        keep = torch.tensor([True, False], device=x.device)
        y = x @ w.t() + shift + steps.float()
        return y * keep.float()
