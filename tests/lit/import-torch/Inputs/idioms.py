"""PyTorch idioms from real models that the importer once refused
(idioms-parity.test): each imports, and `modelc run` matches
PyTorch."""

import torch
import torch.nn as nn


class DictOutput(nn.Module):
    """Hugging Face style: forward returns a dict."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return {"logits": self.fc(x)}


class MeanBySize(nn.Module):
    """A mean by hand and a width from the shape, as operators and methods."""

    def forward(self, x):
        B, T, C = x.shape
        mean = x.sum(-1) / x.size(-1)
        return mean.unsqueeze(-1) * C + x / T + x.sum(-1, keepdim=True).div(x.size(-1)).mul(T)


class OptionalMask(nn.Module):
    """`mask=None` left out: traced at its default."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x, mask=None):
        y = self.fc(x)
        return y if mask is None else y * mask


class SplitHeads(nn.Module):
    """nanoGPT's `q, k, v = self.c_attn(x).split(n_embd, dim=2)`, a chunk,
    and boolean masks with `~`, `&`, `|`."""

    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(8, 24)

    def forward(self, x):
        q, k, v = self.c_attn(x).split(8, dim=2)
        a, b = torch.chunk(v, 2, dim=-1)
        positive = q > 0
        keep = ~positive & (k > 0) | (k > 1)
        return torch.where(keep, q * k, torch.cat([b, a], dim=-1))


class Norms1d(nn.Module):
    """nn.BatchNorm1d on [N, C] and on [N, C, L]."""

    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(8)
        self.seq = nn.BatchNorm1d(4)
        for bn in (self.bn, self.seq):
            bn.running_mean.uniform_(-1, 1)
            bn.running_var.uniform_(0.5, 2)

    def forward(self, x):
        y = self.bn(x)
        return self.seq(y.reshape(-1, 4, 2)).reshape(-1, 8)


class Encoder(nn.Module):
    """nn.TransformerEncoder with a final LayerNorm (the PyTorch tutorial)."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(16),
                                             enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)


class Upsampled(nn.Module):
    """FPN / segmentation heads: `F.interpolate(x, size=y.shape[-2:])`."""

    def forward(self, x, y):
        return nn.functional.interpolate(x, size=y.shape[-2:], mode="bilinear",
                                         align_corners=False) + y
