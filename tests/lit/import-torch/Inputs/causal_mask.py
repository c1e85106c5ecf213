import math

import torch
import torch.nn as nn


class CausalMask(nn.Module):
    """nanoGPT's causal mask and the PyTorch tutorial's positional encoding:
    buffers sliced by a size read from the input in forward."""

    def __init__(self, d=8, block_size=16):
        super().__init__()
        self.qk = nn.Linear(d, d)
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size))
                             .view(1, block_size, block_size))
        position = torch.arange(block_size).unsqueeze(1)
        div = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
        pe = torch.zeros(1, block_size, d)
        pe[0, :, 0::2] = torch.sin(position * div)
        pe[0, :, 1::2] = torch.cos(position * div)
        self.register_buffer("pe", pe)

    def forward(self, x):
        B, T, C = x.size()
        x = x + self.pe[:, :x.size(1)]
        att = self.qk(x) @ x.transpose(1, 2)
        att = att.masked_fill(self.bias[:, :T, :T] == 0, float("-inf"))
        return torch.softmax(att, dim=-1) @ x
