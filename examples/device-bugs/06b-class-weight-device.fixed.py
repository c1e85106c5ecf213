# Fixed: the class weights are a buffer, placed with the model.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("class_weight", torch.tensor([1.0, 2.0, 0.5]))

    def forward(self, logits, target):
        return F.cross_entropy(logits, target, weight=self.class_weight)
