import torch
import torch.nn as nn


class Net(nn.Module):
    """The "submodel left behind": layers in a python list are not
    registered, so model.to() never moves them."""

    def __init__(self, d=8, n=2):
        super().__init__()
        self.layers = [nn.Linear(d, d) for _ in range(n)]
        self.head = nn.Linear(d, 2)

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return self.head(x)


class DictNet(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.heads = {"a": nn.Linear(d, 2)}

    def forward(self, x):
        return self.heads["a"](x)
