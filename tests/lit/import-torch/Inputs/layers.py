# torch.nn layers with the options std.nn states as arguments: a transposed
# convolution with padding and output_padding, GroupNorm, Upsample and
# F.interpolate, BatchNorm2d without affine, Conv1d, LayerNorm without
# elementwise_affine, Linear without bias. The normalisation statistics are
# not the defaults, so that a mapping that ignores them shows.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Layers(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.up = nn.Upsample(scale_factor=2)
        self.deconv = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)
        self.gn = nn.GroupNorm(2, 6, eps=1e-3)
        self.bn = nn.BatchNorm2d(6, affine=False)
        self.bn.running_mean.uniform_(-0.5, 0.5)
        self.bn.running_var.uniform_(0.5, 2.0)
        self.conv1d = nn.Conv1d(6, 3, 3, padding=1)
        self.norm = nn.LayerNorm(64, elementwise_affine=False)
        self.proj = nn.Linear(64, 5, bias=False)
        with torch.no_grad():
            self.gn.weight.uniform_(0.5, 1.5)
            self.gn.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        h = self.deconv(self.up(x))
        h = self.gn(h)
        h = F.interpolate(h, size=(8, 8), mode="bilinear", align_corners=False)
        h = self.bn(h)
        h = self.conv1d(h.flatten(2))
        return self.proj(self.norm(h))
