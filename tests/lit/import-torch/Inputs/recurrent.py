# nn.LSTM and nn.GRU as PyTorch users take their results apart: the output
# and h_n unpacked (the cell state left unused), h_n[-1], h_n as a whole,
# `self.rnn(x)[0]`, a time-first (batch_first=False) layer, and a submodule
# that returns a tuple.
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, batch_first=True)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return out, h[-1]


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.gru = nn.GRU(16, 12, batch_first=True)
        self.time_first = nn.LSTM(8, 6)
        self.again = nn.GRU(8, 4, batch_first=True)

    def forward(self, x):
        seq, last = self.encoder(x)
        steps, h_g = self.gru(seq)
        along_time = self.time_first(x.transpose(0, 1))[0]
        h_n = self.again(x)[1].squeeze(0)
        return torch.cat([last, h_g[-1], steps[:, 0], along_time[-1], h_n], dim=1)
