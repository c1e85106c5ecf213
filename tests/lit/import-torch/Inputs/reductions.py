import torch
import torch.nn as nn


class Reductions(nn.Module):
    """max/min with a dim (values, indices, .values), argmax/argmin, amax,
    clamp/clip/clamp_min, maximum, and a sum of bools, as ported code writes
    them."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 6)

    def forward(self, x):
        h = self.fc(x).clamp(min=-1.0, max=1.5)
        _, pred = torch.max(h, 1)
        v = h.max(dim=1, keepdim=True)[0]
        low = h.min(dim=1).values.unsqueeze(1)
        s = (h - v + low + torch.maximum(h, torch.zeros_like(h)) + torch.clip(h, -0.5, 0.5)
             + h.clamp_min(0.1))
        idx = (torch.argmax(h, dim=-1) + h.argmin(1) + pred).float()
        positive = (h > 0).sum(dim=1).float()
        return torch.cat([s, idx.unsqueeze(1), positive.unsqueeze(1),
                          h.amax(dim=1, keepdim=True)], 1)
