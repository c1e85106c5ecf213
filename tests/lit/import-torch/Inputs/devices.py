# PyTorch's device rules, each in one line of forward; the import states
# them in .mdl types (device-semantics.test).
import torch
import torch.nn as nn


class Devices(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.offset = torch.ones(4)
        self.temperature = torch.tensor(0.5)
        self.register_buffer("scale", torch.ones(4))
        self.pinned = nn.Linear(4, 4).to("cuda:1")

    def forward(self, x):
        a = torch.zeros(x.size(0), 4)
        b = torch.ones(x.shape, device=x.device)
        c = torch.zeros_like(x) + x.new_ones(x.shape[0], 4)
        d = torch.randn(4, device="cuda")
        e = x.cuda() + x.to("cuda:0") + x.to(x.device) + x.cpu().to(x.device)
        f = self.fc(x) * torch.tensor(2.0) * self.temperature
        g = self.pinned(x.to("cuda:1")).to(x.device)
        h = nn.ReLU()(x)
        return a + b + c + d + e + f + g + h + self.offset + self.scale
