#!/usr/bin/env python3
"""Static instruction counts of the GEMM main loop of generated kernels.

A figure for code that cannot be timed without a GPU: for each kernel of a
PTX file (`modelc build --emit=ptx -o DIR`) whose name contains the filter,
the innermost loop that holds at least MIN_OPS of the tile's product
instructions (fma.rn.f32, or mma.sync with --op mma for the TF32 and half
tiles: the k loop, unrolled over one slice), and in it the PTX instructions,
those product instructions and 64-/32-bit integer divisions and remainders (ptxas expands each
into a subroutine of tens of instructions). Blocks the compiler placed out
of line (a branch's rare side) are not counted.

    tools/ptx-loop-stats.py DIR/cuda0.ptx [--filter conv2d] [--op fma|mma] [--min-ops 256]
"""

import argparse
import re
import sys

INSTRUCTION = re.compile(r"\s+(@!?%p\d+\s+)?[a-z]")


def entries(text):
    for match in re.finditer(r"\.entry (\w+)\((.*?)\n\}\n", text, re.S):
        yield match.group(1), match.group(0).split("\n")


PRODUCT = {"fma": r"\bfma\.rn\.f32\b", "mma": r"\bmma\.sync\b"}


def counts(lines, op):
    instructions = [l.strip() for l in lines if INSTRUCTION.match(l)]

    def count(pattern):
        return sum(1 for l in instructions if re.search(pattern, l))

    return {
        "instructions": len(instructions),
        "product": count(PRODUCT[op]),
        "div64": count(r"\b(div|rem)\.[su]64\b"),
        "div32": count(r"\b(div|rem)\.[su]32\b"),
    }


def main_loop(lines, op, min_ops):
    """The shortest backward-branch region with at least min_ops products."""
    labels = {}
    for i, line in enumerate(lines):
        found = re.match(r"(\$L__\w+):", line.strip())
        if found:
            labels[found.group(1)] = i
    loops = []
    for i, line in enumerate(lines):
        found = re.search(r"\bbra(\.uni)?\s+(\$L__\w+);", line)
        if found and labels.get(found.group(2), i) < i:
            loops.append((labels[found.group(2)], i))
    loops = [(a, b) for a, b in loops if counts(lines[a:b + 1], op)["product"] >= min_ops]
    if not loops:
        return None
    a, b = min(loops, key=lambda ab: ab[1] - ab[0])
    return counts(lines[a:b + 1], op)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("ptx")
    parser.add_argument("--filter", default="conv2d")
    parser.add_argument("--op", choices=sorted(PRODUCT), default="fma")
    parser.add_argument("--min-ops", type=int, help="default: 256 fma (one 128x128 slice's "
                        "half), 16 mma")
    opts = parser.parse_args()
    if opts.min_ops is None:
        opts.min_ops = 256 if opts.op == "fma" else 16
    text = open(opts.ptx).read()
    print("| kernel | loop PTX instructions | %s | div/rem .64 | div/rem .32 |" % opts.op)
    print("|---|---|---|---|---|")
    found = False
    for name, lines in entries(text):
        if opts.filter not in name:
            continue
        loop = main_loop(lines, opts.op, opts.min_ops)
        if loop is None:
            continue
        found = True
        print("| %s | %d | %d | %d | %d |" % (name, loop["instructions"], loop["product"],
                                            loop["div64"], loop["div32"]))
    if not found:
        sys.exit("no kernel matching %r with a loop of %d %s" % (opts.filter, opts.min_ops, opts.op))


if __name__ == "__main__":
    main()
