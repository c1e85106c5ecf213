"""Sizes as polynomials over the symbolic input dims (`B`, `T`).

The importer runs the traced model on sample inputs several times: once at
base sizes, once with each symbol one larger, once with each pair one larger,
and once with every symbol two larger to verify. A number seen in every run
(a dim of a tensor, a `x.size(0)`) is fitted as a polynomial with at most
pairwise products (B, 4 * B, B * T + 1); one the fit does not reproduce is
not expressible.
"""

import itertools
import re


class SampleConfig:
    def __init__(self, values):
        self.values = dict(values)  # symbol -> int


def sample_configs(base):
    """The runs for symbols with base sizes `base` (ordered dict)."""
    symbols = list(base)
    configs = [SampleConfig(base)]
    for s in symbols:
        configs.append(SampleConfig({**base, s: base[s] + 1}))
    for s, t in itertools.combinations(symbols, 2):
        configs.append(SampleConfig({**base, s: base[s] + 1, t: base[t] + 1}))
    configs.append(SampleConfig({s: v + 2 for s, v in base.items()}))
    return configs


class Poly:
    """A polynomial: {monomial (sorted tuple of symbols): int coefficient}."""

    def __init__(self, terms=None):
        self.terms = {k: v for k, v in (terms or {}).items() if v != 0}

    @staticmethod
    def const(value):
        return Poly({(): value})

    def __add__(self, other):
        terms = dict(self.terms)
        for k, v in other.terms.items():
            terms[k] = terms.get(k, 0) + v
        return Poly(terms)

    def scale(self, factor):
        return Poly({k: v * factor for k, v in self.terms.items()})

    def times(self, other):
        result = Poly()
        for k1, v1 in self.terms.items():
            for k2, v2 in other.terms.items():
                result = result + Poly({tuple(sorted(k1 + k2)): v1 * v2})
        return result

    def evaluate(self, values):
        total = 0
        for monomial, coef in self.terms.items():
            term = coef
            for s in monomial:
                term *= values[s]
            total += term
        return total

    def constant(self):
        if all(k == () for k in self.terms):
            return self.terms.get((), 0)
        return None

    def text(self):
        if not self.terms:
            return "0"
        parts = []
        ordered = sorted(self.terms.items(), key=lambda kv: (-len(kv[0]), kv[0]))
        for monomial, coef in ordered:
            if monomial == ():
                body = str(abs(coef))
            else:
                body = " * ".join(monomial)
                if abs(coef) != 1:
                    body = "%d * %s" % (abs(coef), body)
            if not parts:
                parts.append(("-" if coef < 0 else "") + body)
            else:
                parts.append(("- " if coef < 0 else "+ ") + body)
        return " ".join(parts)


def fit(values, configs, base):
    """The polynomial through `values` (one per config), or None."""
    symbols = list(base)
    if len(set(values)) == 1:
        return Poly.const(values[0])
    offset = {s: Poly({(s,): 1}) + Poly.const(-base[s]) for s in symbols}
    c0 = values[0]
    linear = {s: values[1 + i] - c0 for i, s in enumerate(symbols)}
    poly = Poly.const(c0)
    for s in symbols:
        poly = poly + offset[s].scale(linear[s])
    index = 1 + len(symbols)
    for s, t in itertools.combinations(symbols, 2):
        pair = values[index] - c0 - linear[s] - linear[t]
        index += 1
        poly = poly + offset[s].times(offset[t]).scale(pair)
    for config, value in zip(configs, values):
        if poly.evaluate(config.values) != value:
            return None
    return poly


_DIM_RE = re.compile(r"^\s*(?:([A-Za-z_][A-Za-z0-9_]*)\s*(?:=\s*(\d+))?|(\d+))\s*$")


def parse_input_spec(spec):
    """`f32[B, 3, 32, 32]` or `i64[B=4, T=8]` -> (dtype, [dim], {symbol: base})."""
    match = re.fullmatch(r"\s*([a-z0-9]+)\s*\[(.*)\]\s*", spec)
    if not match:
        raise ValueError("expected a type like `f32[B, 784]`, found `%s`" % spec)
    dtype, body = match.group(1), match.group(2)
    dims, bases = [], {}
    for part in filter(None, (p.strip() for p in body.split(","))):
        m = _DIM_RE.match(part)
        if not m:
            raise ValueError("`%s` is not a dim (a size like 784 or a name like B)" % part)
        if m.group(3):
            dims.append(int(m.group(3)))
        else:
            dims.append(m.group(1))
            if m.group(2):
                bases[m.group(1)] = int(m.group(2))
    return dtype, dims, bases
