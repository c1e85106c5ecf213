#!/usr/bin/env python3
"""gen_large_model.py - write a realistic, clean .mdl file of about N lines.

    gen_large_model.py [--lines 10000] [--seed 1] [-o FILE]

The file is made of families of device-generic models such as a real
project has: dense layers with their own weights, blocks that compose
them and stdlib layers as submodels, normalisations with state, attention-
like mixers with matmuls, and heads with reductions. Functions are 5-30 lines
of let chains, calls, broadcasting arithmetic, matmuls and reductions. The
output type-checks clean (`modelc check` exits 0) and is deterministic for a
given seed.
"""

import argparse
import random
import sys

ACTIVATIONS = ["relu", "gelu", "silu", "tanh", "sigmoid"]


class Writer:
    def __init__(self, rng):
        self.rng = rng
        self.lines = []
        self.dense = []  # names of generated dense models: Name(n_in, n_out)
        self.blocks = []  # names of residual blocks: Name(d, h), f32[B, d] -> f32[B, d]
        self.counter = 0

    def emit(self, text=""):
        self.lines.extend(text.split("\n") if text else [""])

    def fresh(self, prefix):
        self.counter += 1
        return "%s%d" % (prefix, self.counter)

    def let_chain(self, start, depth, indent="    "):
        """Elementwise let chain over a f32[B, width] value; returns the last name."""
        current = start
        out = []
        for i in range(depth):
            name = "t%d" % i
            kind = self.rng.randrange(6)
            if kind == 0:
                expr = "%s(%s)" % (self.rng.choice(ACTIVATIONS), current)
            elif kind == 1:
                expr = "%s * %s + %s" % (current, self.rng.choice(["0.5", "2", "1.25"]), current)
            elif kind == 2:
                expr = "%s - %s.mean(dim: 1, keepdim: true)" % (current, current)
            elif kind == 3:
                expr = "%s / (abs(%s) + 1.0)" % (current, current)
            elif kind == 4:
                expr = "%s + %s.sum(dim: 1, keepdim: true) * 0.01" % (current, current)
            else:
                expr = "where(%s > 0.0, %s, %s * 0.1)" % (current, current, current)
            out.append("%slet %s = %s" % (indent, name, expr))
            current = name
        return out, current

    def dense_model(self):
        name = self.fresh("Dense")
        act = self.rng.choice(ACTIVATIONS)
        depth = self.rng.randrange(2, 8)
        chain, last = self.let_chain("a", depth)
        self.emit("/// A dense layer with its own weights (%s)." % act)
        self.emit("model %s<D: device>(n_in: int, n_out: int) {" % name)
        self.emit("  param weight: f32[n_out, n_in]")
        self.emit("  param bias: f32[n_out]")
        self.emit("  buffer scale: f32[n_out] = ones([n_out])")
        self.emit("")
        self.emit("  fn forward(x: f32[B, n_in] @ D) -> f32[B, n_out] @ D {")
        self.emit("    let z = x @ weight.T + bias")
        self.emit("    let a = %s(z) * scale" % act)
        self.lines.extend(chain)
        self.emit("    return %s" % last)
        self.emit("  }")
        self.emit("")
        self.emit("  fn energy(x: f32[B, n_in] @ D) -> f32[B] @ D {")
        self.emit("    let y = forward(x)")
        self.emit("    let sq = y * y")
        self.emit("    return sq.sum(dim: 1)")
        self.emit("  }")
        self.emit("}")
        self.emit("")
        self.dense.append(name)

    def norm_model(self):
        name = self.fresh("Norm")
        self.emit("/// Layer normalisation written out by hand, with learned state.")
        self.emit("model %s<D: device>(d: int, eps: float = 0.00001) {" % name)
        self.emit("  param gamma: f32[d]")
        self.emit("  param beta: f32[d]")
        self.emit("")
        self.emit("  fn forward(x: f32[B, d] @ D) -> f32[B, d] @ D {")
        self.emit("    let mu = x.mean(dim: 1, keepdim: true)")
        self.emit("    let centered = x - mu")
        self.emit("    let var = (centered * centered).mean(dim: 1, keepdim: true)")
        self.emit("    let normed = centered / sqrt(var + eps)")
        self.emit("    return normed * gamma + beta")
        self.emit("  }")
        self.emit("}")
        self.emit("")
        return name

    def block_model(self, norm):
        name = self.fresh("Block")
        up = self.rng.choice(self.dense)
        down = self.rng.choice(self.dense)
        depth = self.rng.randrange(3, 14)
        chain, last = self.let_chain("u", depth)
        self.emit("/// A residual block: expand, mix, project back, normalise.")
        self.emit("model %s<D: device>(d: int, h: int) {" % name)
        self.emit("  up = %s(d, h)" % up)
        self.emit("  down = %s(h, d)" % down)
        self.emit("  gate = nn.Linear(d, h)")
        self.emit("  norm = %s(d)" % norm)
        self.emit("  param residual_scale: f32[d]")
        self.emit("")
        self.emit("  fn forward(x: f32[B, d] @ D) -> f32[B, d] @ D {")
        self.emit("    let u = up(x) * sigmoid(gate(x))")
        self.lines.extend(chain)
        self.emit("    let back = down(%s)" % last)
        self.emit("    let noise = randn([B, d], seed: %d) * 0.001" % self.rng.randrange(1000))
        self.emit("    let y = x + back * residual_scale + noise")
        self.emit("    return norm(y)")
        self.emit("  }")
        self.emit("")
        self.emit("  fn score(x: f32[B, d] @ D) -> f32[B, 1] @ D {")
        self.emit("    let y = forward(x)")
        self.emit("    return y.max(dim: 1, keepdim: true) - y.min(dim: 1, keepdim: true)")
        self.emit("  }")
        self.emit("}")
        self.emit("")
        self.blocks.append(name)

    def mixer_model(self):
        name = self.fresh("Mixer")
        self.emit("/// Attention-like token mixing with batched matmuls and softmax.")
        self.emit("model %s<D: device>(d: int) {" % name)
        self.emit("  q = nn.Linear(d, d)")
        self.emit("  k = nn.Linear(d, d)")
        self.emit("  v = nn.Linear(d, d)")
        self.emit("  param temperature: f32[1]")
        self.emit("")
        self.emit("  fn forward(x: f32[N, T, d] @ D) -> f32[N, T, d] @ D {")
        self.emit("    let queries = q(x)")
        self.emit("    let keys = k(x)")
        self.emit("    let values = v(x)")
        self.emit("    let logits = queries @ transpose(keys, 1, 2) / temperature")
        self.emit("    let weights = softmax(logits, dim: 2)")
        self.emit("    let mixed = weights @ values")
        self.emit("    return x + mixed")
        self.emit("  }")
        self.emit("}")
        self.emit("")
        return name

    def network_model(self, mixer):
        name = self.fresh("Net")
        blocks = [self.rng.choice(self.blocks) for _ in range(self.rng.randrange(2, 5))]
        self.emit("/// A network that stacks blocks and ends in a classifier head.")
        self.emit("model %s<D: device>(d: int, h: int, classes: int) {" % name)
        for i, block in enumerate(blocks):
            self.emit("  b%d = %s(d, h)" % (i, block))
        self.emit("  mix = %s(d)" % mixer)
        self.emit("  head = nn.Linear(d, classes)")
        self.emit("  buffer class_weight: f32[classes] = ones([classes])")
        self.emit("")
        self.emit("  fn features(x: f32[B, d] @ D) -> f32[B, d] @ D {")
        current = "x"
        for i in range(len(blocks)):
            self.emit("    let f%d = b%d(%s)" % (i, i, current))
            current = "f%d" % i
        self.emit("    return %s" % current)
        self.emit("  }")
        self.emit("")
        self.emit("  fn forward(x: f32[B, d] @ D) -> f32[B, classes] @ D {")
        self.emit("    let f = features(x)")
        self.emit("    let tokens = unsqueeze(f, 1)")
        self.emit("    let mixed = mix(tokens)")
        self.emit("    let pooled = mixed.mean(dim: 1)")
        self.emit("    return log_softmax(head(pooled), dim: 1)")
        self.emit("  }")
        self.emit("")
        self.emit("  fn loss(x: f32[B, d] @ D, target: i64[B] @ D) -> f32[] @ D {")
        self.emit("    let logits = forward(x)")
        self.emit("    return nll_loss(logits, target, weight: class_weight)")
        self.emit("  }")
        self.emit("}")
        self.emit("")


def generate(target_lines, seed):
    rng = random.Random(seed)
    w = Writer(rng)
    w.emit("// Generated by bench/gen_large_model.py (seed %d): a large, clean model file." % seed)
    w.emit("import std.nn")
    w.emit("")
    while len(w.lines) < target_lines:
        for _ in range(3):
            w.dense_model()
        norm = w.norm_model()
        for _ in range(2):
            w.block_model(norm)
        mixer = w.mixer_model()
        w.network_model(mixer)
    return "\n".join(w.lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=10000, help="approximate line count")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("-o", "--output", help="output file (default: stdout)")
    args = parser.parse_args()
    text = generate(args.lines, args.seed)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
