# One construct the importer cannot state in .mdl yet per `what`
# (unsupported-constructs.test; docs/import-torch.md lists them). Input [B, 4, 4, 4].
import torch
import torch.nn as nn
import torch.nn.functional as F

LAYERS = {
    "non_square_conv": lambda: nn.Conv2d(4, 4, (1, 3)),
    "same_padding": lambda: nn.Conv2d(4, 4, 3, padding="same"),
    "layer_norm_2d": lambda: nn.LayerNorm([4, 4]),
    "batch_stats": lambda: nn.BatchNorm2d(4, track_running_stats=False),
    "group_norm_plain": lambda: nn.GroupNorm(2, 4, affine=False),
    "gelu_tanh": lambda: nn.GELU(approximate="tanh"),
    "nested_sequential": lambda: nn.Sequential(nn.Sequential(nn.Conv2d(4, 4, 1)), nn.ReLU()),
    "module_dict": lambda: nn.ModuleDict({"conv": nn.Conv2d(4, 4, 1)}),
    "attention": lambda: nn.MultiheadAttention(4, 2, batch_first=True),
}


class Unsupported(nn.Module):
    def __init__(self, what):
        super().__init__()
        self.what = what
        if what in LAYERS:
            self.layer = LAYERS[what]()

    def forward(self, x):
        what = self.what
        if what == "module_dict":
            return self.layer["conv"](x)
        if what == "attention":
            h = x.flatten(2).transpose(1, 2)
            return self.layer(h, h, h)[0]
        if what in LAYERS:
            return self.layer(x)
        if what == "expand":
            return x[:, :1].expand(-1, 8, -1, -1)
        if what == "chunk":
            return x.chunk(2, dim=1)[0]
        if what == "max_dim":
            return x.max(dim=1)[0]
        if what == "none_index":
            return x[:, None]
        if what == "tensor_list":
            return x * torch.tensor([1.0, 2.0, 3.0, 4.0])
        if what == "infinity":
            return x + float("-inf")
        if what == "bicubic":
            return F.interpolate(x, scale_factor=2, mode="bicubic")
        if what == "nested_tuple":
            return x, (x, x)
        raise ValueError(what)
