#!/usr/bin/env python3
"""check_symbolic.py - the importer's size fitting (importers/torch/symbolic.py).

Prints one line per case; symbolic-sizes.test checks them.
"""

import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "..", "importers", "torch"))

from symbolic import fit, parse_input_spec, sample_configs  # noqa: E402

base = {"B": 2, "T": 3}
configs = sample_configs(base)
cases = {
    "batch": lambda v: v["B"],
    "affine": lambda v: 4 * v["B"] + 1,
    "product": lambda v: v["B"] * v["T"],
    "mixed": lambda v: 2 * v["B"] * v["T"] - v["T"] + 7,
    "constant": lambda v: 64,
    "floor": lambda v: v["B"] // 2,
    "square": lambda v: v["B"] * v["B"],
}
for name, size in cases.items():
    poly = fit([size(c.values) for c in configs], configs, base)
    print("%s: %s" % (name, poly.text() if poly is not None else "not a polynomial"))
print("spec: %s" % (parse_input_spec("i64[B=4, T, 8]"),))
try:
    parse_input_spec("f32[B, 3.5]")
except ValueError as error:
    print("bad spec: %s" % error)
