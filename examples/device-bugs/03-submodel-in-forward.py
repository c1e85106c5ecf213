# PyTorch twin of 03-submodel-in-forward.mdl: a layer created lazily in
# forward after model.to("cuda") is never moved: "Input type
# (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the
# same" (and state_dict() never saves it).
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, d_in=4, d_out=3):
        super().__init__()
        self.d_in, self.d_out = d_in, d_out

    def forward(self, x):
        proj = nn.Linear(self.d_in, self.d_out)
        return nn.ReLU()(proj(x))
