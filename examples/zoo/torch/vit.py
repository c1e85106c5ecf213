# A Vision Transformer encoder (Dosovitskiy et al. 2020) as torch.nn code:
# a strided-conv patch embedding, learned position embeddings, pre-norm
# encoder layers with GELU, mean pooling over the tokens, a linear head.
import torch
import torch.nn as nn


class ViT(nn.Module):
    def __init__(self, image=32, patch=8, dim=64, depth=2, heads=4, mlp=128, classes=10):
        super().__init__()
        tokens = (image // patch) ** 2
        self.patch_embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.pos_embed = nn.Parameter(torch.randn(1, tokens, dim) * 0.02)
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(dim, heads, mlp, dropout=0.0, activation="gelu",
                                       batch_first=True, norm_first=True)
            for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = x + self.pos_embed
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x).mean(dim=1))
