# nn.LSTM / nn.GRU with what std.nn's forward_state and forward_from give:
# bidirectional layers, h_n of every layer and direction, the cell state
# c_n, initial states given as inputs, and proj_size.
import torch
import torch.nn as nn


class BiLstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 6, num_layers=2, bidirectional=True, batch_first=True)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return torch.cat([out[:, -1], h[0], h[-1], c[1]], dim=1)


class FromState(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(8, 6, num_layers=2)
        self.lstm = nn.LSTM(8, 5, num_layers=3, batch_first=True)

    def forward(self, x, h0):
        out, h = self.gru(x.transpose(0, 1), h0)
        seq, (h_l, c_l) = self.lstm(x)
        return torch.cat([out[-1], h[0], h_l[1], c_l[2], seq[:, 0]], dim=1)


class ProjLstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 6, num_layers=2, bidirectional=True, proj_size=3, batch_first=True)
        self.time_first = nn.LSTM(8, 6, proj_size=4)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        seq, (h_t, _) = self.time_first(x.transpose(0, 1))
        return torch.cat([out[:, -1], h[0], c[-1], seq[-1], h_t[-1]], dim=1)
