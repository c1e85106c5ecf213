# Models the importer must reject with one clear error each.
import torch
import torch.nn as nn


class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        if x.sum() > 0:
            return self.fc(x)
        return x


class Cumulative(nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=1)


class Shuffle(nn.Module):
    def __init__(self):
        super().__init__()
        self.shuffle = nn.PixelShuffle(2)
        self.conv = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        return self.shuffle(self.conv(x))


class NeedsHidden(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.fc = nn.Linear(4, hidden)

    def forward(self, x):
        return self.fc(x)


class UpNoBias(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 2, 2, stride=2, bias=False)

    def forward(self, x):
        return self.up(x)


class Recurrent(nn.Module):
    def __init__(self, use="output", **options):
        super().__init__()
        self.use = use
        self.lstm = nn.LSTM(4, 8, batch_first=True, **options)

    def forward(self, x):
        if self.use == "initial_state":
            h0 = x.new_zeros(1, x.size(0), 8)
            return self.lstm(x, (h0, h0))[0]
        out, (h, c) = self.lstm(x)
        if self.use == "cell_state":
            return c[0]
        return out


class InPlace(nn.Module):
    """An assignment into a tensor: tensors are values in .mdl."""

    def forward(self, x):
        y = x.clone()
        y[:, 0] = 0.0
        return y
