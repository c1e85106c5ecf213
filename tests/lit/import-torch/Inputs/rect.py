# torch.nn layers with PyTorch's per-axis (h, w) arguments, which std.nn's
# layers take as tuples (`kernel_size: (int, int)`): a factorised (1, 7) /
# (7, 1) conv pair as Inception's, a grouped rectangular conv with dilation
# and bias=False, a reflect-padded conv, rectangular MaxPool2d and
# AvgPool2d layers, F.avg_pool2d and F.conv2d with pairs, a rectangular
# ConvTranspose2d with output_padding. Input [B, 4, 12, 12].
import torch
import torch.nn as nn
import torch.nn.functional as F


class Rect(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(2)
        self.conv_1x7 = nn.Conv2d(4, 6, (1, 7), padding=(0, 3))
        self.conv_7x1 = nn.Conv2d(6, 6, (7, 1), padding=(3, 0), bias=False)
        self.grouped = nn.Conv2d(6, 4, (3, 5), stride=(2, 1), padding=(1, 2), dilation=(2, 1),
                                 groups=2)
        self.reflect = nn.Conv2d(4, 4, (3, 2), padding=(1, 2), padding_mode="reflect")
        self.pool = nn.MaxPool2d((2, 1), stride=(2, 1))
        self.avg = nn.AvgPool2d((1, 2), stride=(1, 2), padding=(0, 1))
        self.weight = nn.Parameter(torch.randn(4, 4, 1, 3) * 0.2)
        self.up = nn.ConvTranspose2d(4, 3, (3, 2), stride=(2, 1), padding=(1, 0),
                                     output_padding=(1, 0))

    def forward(self, x):
        h = self.conv_7x1(torch.relu(self.conv_1x7(x)))
        h = self.reflect(self.grouped(h))
        h = self.avg(self.pool(h))
        h = F.conv2d(h, self.weight, stride=(1, 2), padding=(0, 1))
        h = F.avg_pool2d(h, (2, 1), stride=(1, 1))
        return self.up(h)
