# PyTorch twin of 07-embedding-table-on-cpu.mdl: an embedding table kept on
# the CPU (to save GPU memory) indexed by token ids on the GPU.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Embed(nn.Module):
    def __init__(self, vocab=10, dim=4):
        super().__init__()
        self.table = torch.randn(vocab, dim)

    def forward(self, tokens):
        return F.embedding(tokens, self.table)
