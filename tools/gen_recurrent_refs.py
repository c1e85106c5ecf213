#!/usr/bin/env python3
"""gen_recurrent_refs.py - reference data for loops and recurrent layers.

Builds torch.nn.RNN / LSTM / GRU (batch_first=True, eval mode) and the LSTM
text classifier of examples/lstm_classifier.mdl in PyTorch, and writes
their state_dict()s (PyTorch's names: weight_ih_l0, ...), inputs and
outputs as gen_stdlib_refs.py does:

    tests/lit/loops/Inputs/<name>/     loops written out by hand
    tests/lit/stdlib/Inputs/<name>/    std.nn LSTM and GRU

Weights come from torch.manual_seed(0) at construction, inputs from
torch.Generator().manual_seed(1234). Run it once with the Debian torch:

    /usr/bin/python3 tools/gen_recurrent_refs.py [multi-layer]

(`multi-layer` writes only the num_layers / bias / batch_first cases,
`directions` only the bidirectional / h_n / c_n / initial-state ones,
`deep` only the 9- and 10-layer ones, `proj` only the proj_size ones.)
"""

import os
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_stdlib_refs import write_safetensors  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIT = os.path.join(ROOT, "tests", "lit")


def save(folder, module, inputs, outputs):
    os.makedirs(folder, exist_ok=True)
    for f in os.listdir(folder):
        os.remove(os.path.join(folder, f))
    if module is not None:
        write_safetensors(os.path.join(folder, "weights.safetensors"), module.state_dict())
    for i, x in enumerate(inputs):
        fname = "input.npy" if i == 0 else "input%d.npy" % (i + 1)
        np.save(os.path.join(folder, fname), x.detach().numpy())
    for key, y in outputs.items():
        np.save(os.path.join(folder, key + ".npy"), y.detach().numpy().astype(np.float32))


class LstmClassifier(nn.Module):
    """examples/lstm_classifier.mdl: embedding -> LSTM -> last step -> linear."""

    def __init__(self, vocab, embed_dim, hidden, classes):
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed_dim)
        self.lstm = nn.LSTM(embed_dim, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, tokens):
        out, _ = self.lstm(self.embedding(tokens))
        return self.fc(out[:, -1])


class Repeat(nn.Module):
    """h = tanh(h @ w) + x, `steps` times (examples of a compile-time range)."""

    def __init__(self, n, steps):
        super().__init__()
        self.w = nn.Parameter(torch.randn(n, n) / n ** 0.5)
        self.steps = steps

    def forward(self, x):
        h = x
        for _ in range(self.steps):
            h = torch.tanh(h @ self.w) + x
        return h


def seeded_case(cls, kwargs):
    """torch.nn.<cls>(8, 16, **kwargs) from seed 0, an input [3, 6, 8] from
    seed 1234, the generator (for further inputs) and the layer's result."""
    torch.manual_seed(0)
    layer = cls(8, 16, **kwargs).eval()
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(3, 6, 8, generator=g)
    return layer, g, x, layer(x)


def multi_layer():
    """std.nn LSTM/GRU with num_layers, bias=False and batch_first=False."""
    torch.set_grad_enabled(False)
    cases = (("lstm_3_layers", nn.LSTM, dict(num_layers=3, batch_first=True)),
             ("gru_2_layers_no_bias", nn.GRU, dict(num_layers=2, bias=False, batch_first=True)),
             ("lstm_seq_first", nn.LSTM, dict(num_layers=2)))
    for name, cls, kwargs in cases:
        layer, _, x, (out, state) = seeded_case(cls, kwargs)
        h_n = state[0] if cls is nn.LSTM else state
        outputs = {"output": out}
        if kwargs.get("batch_first"):
            outputs["output_last"] = h_n[-1]
        save(os.path.join(LIT, "stdlib", "Inputs", name), layer, [x], outputs)


def directions():
    """std.nn LSTM/GRU bidirectional, with more than 4 layers, with h_n / c_n
    and with initial states (forward_state, forward_from)."""
    torch.set_grad_enabled(False)
    cases = (("lstm_bidirectional", nn.LSTM, dict(num_layers=2, bidirectional=True, batch_first=True)),
             ("gru_bidirectional_seq_first", nn.GRU, dict(bidirectional=True, bias=False)),
             ("lstm_6_layers", nn.LSTM, dict(num_layers=6, batch_first=True)),
             ("gru_3_layers_bidirectional", nn.GRU, dict(num_layers=3, bidirectional=True, batch_first=True)))
    for name, cls, kwargs in cases:
        layer, g, x, (out, state) = seeded_case(cls, kwargs)
        outputs = {"output": out}
        if cls is nn.LSTM:
            outputs.update(h_n=state[0], c_n=state[1], output_last=state[0][-1])
        else:
            outputs.update(h_n=state, output_last=state[-1])
        inputs = [x]
        if name == "lstm_bidirectional":
            # From given initial states: lstm(x, (h_0, c_0)).
            h_0 = torch.randn(4, 3, 16, generator=g)
            c_0 = torch.randn(4, 3, 16, generator=g)
            out0, (h0_n, c0_n) = layer(x, (h_0, c_0))
            inputs += [h_0, c_0]
            outputs.update(output_from=out0, h_n_from=h0_n, c_n_from=c0_n)
        save(os.path.join(LIT, "stdlib", "Inputs", name), layer, inputs, outputs)


def deep():
    """std.nn LSTM/GRU with more layers than the earlier unrolled std.nn
    had (8), from given initial states: every layer's state must come from
    and go to its own rows of h_0 / h_n."""
    torch.set_grad_enabled(False)
    cases = (("lstm_10_layers", nn.LSTM, dict(num_layers=10, batch_first=True)),
             ("gru_9_layers_bidirectional", nn.GRU,
              dict(num_layers=9, bias=False, bidirectional=True, batch_first=True)))
    for name, cls, kwargs in cases:
        layer, g, x, _ = seeded_case(cls, kwargs)
        rows = kwargs["num_layers"] * (2 if kwargs.get("bidirectional") else 1)
        h_0 = torch.randn(rows, 3, 16, generator=g)
        if cls is nn.LSTM:
            c_0 = torch.randn(rows, 3, 16, generator=g)
            out, (h_n, c_n) = layer(x, (h_0, c_0))
            outputs = dict(output_from=out, h_n_from=h_n, c_n_from=c_n)
            inputs = [x, h_0, c_0]
        else:
            out, h_n = layer(x, h_0)
            outputs = dict(output_from=out, h_n_from=h_n)
            inputs = [x, h_0]
        save(os.path.join(LIT, "stdlib", "Inputs", name), layer, inputs, outputs)


def proj():
    """std.nn LSTM with proj_size (h projected by weight_hr_l<k> to proj_size
    features, c keeping hidden_size): 2 bidirectional layers from zeros, and
    one layer from given initial states."""
    torch.set_grad_enabled(False)
    layer, _, x, (out, (h_n, c_n)) = seeded_case(
        nn.LSTM, dict(num_layers=2, bidirectional=True, proj_size=5, batch_first=True))
    save(os.path.join(LIT, "stdlib", "Inputs", "lstm_proj_bidirectional"), layer, [x],
         dict(output=out, h_n=h_n, c_n=c_n, output_last=h_n[-1]))
    layer, g, x, _ = seeded_case(nn.LSTM, dict(proj_size=4, batch_first=True))
    # lstm(x, (h_0, c_0)): h_0 has proj_size features, c_0 hidden_size.
    h_0 = torch.randn(1, 3, 4, generator=g)
    c_0 = torch.randn(1, 3, 16, generator=g)
    out, (h_n, c_n) = layer(x, (h_0, c_0))
    save(os.path.join(LIT, "stdlib", "Inputs", "lstm_proj_from"), layer, [x, h_0, c_0],
         dict(output_from=out, h_n_from=h_n, c_n_from=c_n))


def main():
    if sys.argv[1:] == ["multi-layer"]:
        return multi_layer()
    if sys.argv[1:] == ["directions"]:
        return directions()
    if sys.argv[1:] == ["deep"]:
        return deep()
    if sys.argv[1:] == ["proj"]:
        return proj()
    torch.set_grad_enabled(False)

    # --- an Elman RNN written out by hand (tests/lit/loops/Inputs/rnn.mdl) --
    torch.manual_seed(0)
    rnn = nn.RNN(4, 6, batch_first=True).eval()
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(2, 5, 4, generator=g)
    x7 = torch.randn(3, 7, 4, generator=g)
    out, h_n = rnn(x)
    back, _ = rnn(x.flip(1))
    save(os.path.join(LIT, "loops", "Inputs", "rnn"), rnn, [x, x7], {
        "output": out, "output_last": h_n[0], "output_backward": back.flip(1),
        "output_t7": rnn(x7)[0]})

    for steps in (3, 20):
        torch.manual_seed(0)
        rep = Repeat(5, steps).eval()
        x = torch.randn(2, 5, generator=torch.Generator().manual_seed(1234))
        save(os.path.join(LIT, "loops", "Inputs", "repeat%d" % steps), rep, [x],
             {"output": rep(x)})


    # --- std.nn LSTM and GRU ---------------------------------------------
    for name, cls in (("lstm", nn.LSTM), ("gru", nn.GRU)):
        torch.manual_seed(0)
        layer = cls(8, 16, batch_first=True).eval()
        g = torch.Generator().manual_seed(1234)
        x = torch.randn(3, 6, 8, generator=g)
        x20 = torch.randn(2, 20, 8, generator=g)
        out, state = layer(x)
        h_n = state[0] if name == "lstm" else state
        save(os.path.join(LIT, "stdlib", "Inputs", name), layer, [x, x20], {
            "output": out, "output_last": h_n[0], "output_t20": layer(x20)[0]})

    # --- the LSTM text classifier (examples/lstm_classifier.mdl) ----------
    torch.manual_seed(0)
    clf = LstmClassifier(50, 16, 32, 4).eval()
    g = torch.Generator().manual_seed(1234)
    tokens = torch.randint(0, 50, (4, 12), generator=g)
    save(os.path.join(LIT, "examples", "Inputs", "lstm_classifier"), clf, [tokens],
         {"output": clf(tokens)})

    multi_layer()
    directions()
    deep()
    proj()


if __name__ == "__main__":
    main()
