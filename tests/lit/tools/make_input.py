#!/usr/bin/env python3
"""make_input.py - write hostile or huge .mdl inputs for robustness tests.

    make_input.py garbage SEED SIZE     SIZE random bytes (with NULs) from SEED
    make_input.py garbage-ascii SEED SIZE   the same, but only bytes 0-127 (valid
                                        UTF-8, so the lexer and parser see it)
    make_input.py invalid-utf8          a model whose comment has bad UTF-8
    make_input.py nest CHAR DEPTH       an expression nested DEPTH deep in CHAR
    make_input.py big MEGABYTES         a valid file of many small models

Writes to stdout. Deterministic: the same arguments give the same bytes.
"""

import random
import sys


def garbage(seed, size, ascii_only=False):
    data = bytearray(random.Random(seed).randbytes(size))
    if ascii_only:
        data = bytearray(b & 0x7F for b in data)
    # Make sure the interesting bytes are there whatever the seed gives.
    for offset in range(0, size, 512):
        data[offset] = 0
    return bytes(data)


def invalid_utf8():
    return (
        b"model M<D: device>(n: int) {\n"
        b"  // caf\xe9 \xff\xfe and a lone continuation \x80\n"
        b"  param w: f32[n]\n"
        b"}\n"
    )


def nest(char, depth):
    closing = {"(": ")", "[": "]"}[char]
    body = char * depth + "x" + closing * depth
    return (
        "model M<D: device>(n: int) {\n"
        "  fn forward(x: f32[n]) -> f32[n] {\n"
        "    return %s\n"
        "  }\n"
        "}\n" % body
    ).encode()


def big(megabytes):
    target = int(megabytes * 1024 * 1024)
    chunks, size, index = [], 0, 0
    while size < target:
        chunk = (
            "/// Block %d of a generated file.\n"
            "model Block%d<D: device>(n: int) {\n"
            "  param weight: f32[n, n]\n"
            "  param bias: f32[n]\n"
            "  fn forward(x: f32[B, n] @ D) -> f32[B, n] @ D {\n"
            "    let h = x @ weight.T + bias\n"
            "    return relu(h) * 0.5 + h\n"
            "  }\n"
            "}\n\n" % (index, index)
        )
        chunks.append(chunk)
        size += len(chunk)
        index += 1
    return "".join(chunks).encode()


def main(argv):
    if not argv:
        sys.stderr.write(__doc__)
        return 2
    kind, args = argv[0], argv[1:]
    if kind == "garbage":
        data = garbage(int(args[0]), int(args[1]))
    elif kind == "garbage-ascii":
        data = garbage(int(args[0]), int(args[1]), ascii_only=True)
    elif kind == "invalid-utf8":
        data = invalid_utf8()
    elif kind == "nest":
        data = nest(args[0], int(args[1]))
    elif kind == "big":
        data = big(float(args[0]))
    else:
        sys.stderr.write("make_input.py: unknown kind %r\n%s" % (kind, __doc__))
        return 2
    sys.stdout.buffer.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
