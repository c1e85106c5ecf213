# `.to(other)` and `.type_as(other)`, the fixes PyTorch users write for
# "Expected all tensors to be on the same device": both give the tensor
# other's device and dtype (to-like.test).
import torch
import torch.nn as nn


class ToLike(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.offset = torch.ones(4)

    def forward(self, x):
        mask = (x > 0).to(x)
        shift = self.offset.to(x)
        steps = torch.arange(4).type_as(x)
        return self.fc(x) * mask + shift + steps + x.type_as(x)
