import torch
import torch.nn as nn


class HalfMlp(nn.Module):
    """Layers built with PyTorch's dtype=, and one converted afterwards."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16, dtype=torch.bfloat16)
        self.act = nn.ReLU()
        self.norm = nn.LayerNorm(16).to(torch.bfloat16)
        self.fc2 = nn.Linear(16, 4, dtype=torch.bfloat16)

    def forward(self, x):
        return self.fc2(self.norm(self.act(self.fc1(x))))

