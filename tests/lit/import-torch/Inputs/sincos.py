import torch
import torch.nn as nn


class SinCos(nn.Module):
    """sin and cos in forward (a sinusoidal feature map, a rotary angle), as
    function and as method."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 6)

    def forward(self, x):
        angle = self.fc(x) * 3.0
        return torch.cat([torch.sin(angle), angle.cos(), torch.cos(angle) * angle.sin()], 1)
