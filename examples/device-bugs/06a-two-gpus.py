# PyTorch twin of 06a-two-gpus.mdl (model parallel): "Expected all tensors to
# be on the same device, but found at least two devices, cuda:0 and cuda:1!"
import torch.nn as nn


class TwoTowers(nn.Module):
    def __init__(self, d=4):
        super().__init__()
        self.left = nn.Linear(d, d).to("cuda:0")
        self.right = nn.Linear(d, d).to("cuda:1")

    def forward(self, x):
        a = self.left(x)
        b = self.right(x.to("cuda:1"))
        return a + b
