# A two-layer perceptron, as a PyTorch user writes it.
import torch.nn as nn
import torch.nn.functional as F


class Mlp(nn.Module):
    def __init__(self, d_in=784, hidden=256, d_out=10):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, d_out)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(h), dim=1)


class NotAModel:
    """A class that is not a torch.nn.Module."""

    hidden = 16
