#!/usr/bin/env python3
"""npy.py - write, print and compare .npy files without NumPy.

    npy.py write OUT DTYPE SHAPE VALUES   DTYPE f32|f64|i32|i64|bool; SHAPE like 2x3
                                          (or "scalar"); VALUES comma-separated, or
                                          "iota" (0, 1, 2, ...) or "iota/K" (i / K)
    npy.py print FILE...                  dtype, shape, then every value (%.6g), per file
    npy.py safetensors OUT NAME=FILE.npy...   bundle arrays into a .safetensors file;
                                          NAME=FILE.npy:bf16 stores an f32 array as
                                          BF16 (rounded to nearest even)
    npy.py compare ACTUAL EXPECTED [ABS [REL]]
        Parity check: max |a - b| <= ABS (default 1e-4) and the normalised error
        max |a - b| / max |b| <= REL (default 1e-5), both over the whole tensor.
        Prints both errors; exits 1 when a bound or the shape is violated.
"""

import ast
import json
import math
import struct
import sys

CODES = {"f32": ("<f4", "f", 4), "f64": ("<f8", "d", 8), "i32": ("<i4", "i", 4),
         "i64": ("<i8", "q", 8), "bool": ("|b1", "?", 1), "f16": ("<f2", "e", 2)}
BY_DESCR = {v[0]: (k, v[1], v[2]) for k, v in CODES.items()}


def write(path, dtype, shape_text, values_text):
    shape = () if shape_text == "scalar" else tuple(int(d) for d in shape_text.split("x"))
    count = 1
    for d in shape:
        count *= d
    if values_text.startswith("iota"):
        scale = float(values_text.split("/")[1]) if "/" in values_text else 1.0
        values = [i / scale for i in range(count)]
    else:
        values = [float(v) for v in values_text.split(",")] if values_text else []
    if len(values) != count:
        sys.exit("npy.py: %d values for shape %s" % (len(values), shape))
    write_array(path, dtype, shape, values)


def write_array(path, dtype, shape, values):
    count = len(values)
    descr, fmt, _ = CODES[dtype]
    if fmt in "iq?":
        values = [int(v) for v in values]
    shape_text = "(%d,)" % shape[0] if len(shape) == 1 else "(%s)" % ", ".join(map(str, shape))
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_text)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (count, fmt), *values))


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        sys.exit("npy.py: %s is not a .npy file" % path)
    major = data[6]
    if major == 1:
        (hlen,), start = struct.unpack("<H", data[8:10]), 10
    else:
        (hlen,), start = struct.unpack("<I", data[8:12]), 12
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    name, fmt, size = BY_DESCR[header["descr"]]
    shape = tuple(header["shape"])
    count = 1
    for d in shape:
        count *= d
    body = data[start + hlen:]
    values = list(struct.unpack("<%d%s" % (count, fmt), body[:count * size]))
    return name, shape, values


def safetensors(out, pairs):
    names = {"f32": "F32", "f64": "F64", "i32": "I32", "i64": "I64", "bool": "BOOL", "f16": "F16"}
    header, blobs, offset = {}, [], 0
    for pair in pairs:
        name, path = pair.split("=", 1)
        path, _, convert = path.partition(":")
        dtype, shape, values = read(path)
        _, fmt, size = CODES[dtype]
        blob = struct.pack("<%d%s" % (len(values), fmt), *values)
        stored = names[dtype]
        if convert == "bf16" and dtype == "f32":
            words = struct.unpack("<%dI" % len(values), blob)
            blob = struct.pack("<%dH" % len(values),
                               *(((w + 0x7FFF + ((w >> 16) & 1)) >> 16) & 0xFFFF for w in words))
            stored = "BF16"
        elif convert:
            sys.exit("npy.py: cannot store %s as %s" % (dtype, convert))
        header[name] = {"dtype": stored, "shape": list(shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(out, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main(argv):
    if len(argv) >= 3 and argv[1] == "safetensors":
        safetensors(argv[2], argv[3:])
        return 0
    if len(argv) >= 5 and argv[1] == "write":
        write(argv[2], argv[3], argv[4], argv[5] if len(argv) > 5 else "")
        return 0
    if len(argv) >= 3 and argv[1] == "print":
        for path in argv[2:]:
            name, shape, values = read(path)
            print("%s %s" % (name, list(shape)))
            print(" ".join("%.6g" % float(v) for v in values))
        return 0
    if len(argv) >= 4 and argv[1] == "compare":
        abs_bound = float(argv[4]) if len(argv) > 4 else 1e-4
        rel_bound = float(argv[5]) if len(argv) > 5 else 1e-5
        _, a_shape, a = read(argv[2])
        _, b_shape, b = read(argv[3])
        if a_shape != b_shape:
            print("shape mismatch: %s vs %s" % (list(a_shape), list(b_shape)))
            return 1
        if any(math.isnan(x) for x in a):
            print("output has NaN")
            return 1
        max_abs = max((abs(x - y) for x, y in zip(a, b)), default=0.0)
        scale = max((abs(y) for y in b), default=0.0)
        normalised = max_abs / scale if scale else max_abs
        print("max abs error %.3g, normalised error %.3g" % (max_abs, normalised))
        if max_abs > abs_bound or normalised > rel_bound:
            print("FAIL: bounds are abs %.3g, normalised %.3g" % (abs_bound, rel_bound))
            return 1
        print("PASS")
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
