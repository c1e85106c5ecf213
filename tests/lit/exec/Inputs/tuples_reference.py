#!/usr/bin/env python3
"""tuples_reference.py - the results of Inputs/tuples.mdl in plain Python.

    tuples_reference.py MODEL OUT_PREFIX X.npy Y.npy W.npy B.npy

Computes, in float64 with Python's math module, what `forward` of MODEL
(Classifier or Trainer) returns for inputs X (f32[B, n]) and Y (i64[B]) with
the nn.Linear weight W and bias B, and writes result i to OUT_PREFIX.i.npy.
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import npy  # noqa: E402


def load(path):
    _, shape, values = npy.read(path)
    return shape, values


def linear(x, rows, w, b):
    k = len(b)
    n = len(x) // rows
    return [[sum(x[i * n + p] * w[j * n + p] for p in range(n)) + b[j] for j in range(k)]
            for i in range(rows)]


def cross_entropy(logits, y):
    # torch.nn.functional.cross_entropy, reduction "mean".
    total = 0.0
    for row, target in zip(logits, y):
        top = max(row)
        log_sum = top + math.log(sum(math.exp(v - top) for v in row))
        total += log_sum - row[int(target)]
    return total / len(logits)


def softmax(row):
    top = max(row)
    e = [math.exp(v - top) for v in row]
    s = sum(e)
    return [v / s for v in e]


def main(argv):
    if len(argv) != 7:
        sys.stderr.write(__doc__)
        return 2
    model, prefix = argv[1], argv[2]
    (x_shape, x), (_, y), (_, w), (_, b) = (load(p) for p in argv[3:7])
    rows, k = x_shape[0], len(b)
    logits = linear(x, rows, w, b)
    loss = cross_entropy(logits, y)
    if model == "Classifier":
        results = [([rows, k], [v for r in logits for v in r]), ([], [loss])]
    else:
        doubled = cross_entropy(linear([2.0 * v for v in x], rows, w, b), y)
        results = [([], [loss + doubled]),
                   ([rows, k], [v for r in logits for v in softmax(r)]),
                   ([rows], [sum(r) for r in logits])]
    for i, (shape, values) in enumerate(results):
        npy.write_array("%s.%d.npy" % (prefix, i), "f32", shape, values)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
