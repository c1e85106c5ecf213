# A text classifier: token embeddings, a one-layer LSTM, a linear head on the
# last hidden state.
import torch.nn as nn


class LstmClassifier(nn.Module):
    def __init__(self, vocab=100, embed=32, hidden=64, classes=5):
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, tokens):
        out, _ = self.lstm(self.embedding(tokens))
        return self.head(out[:, -1])
