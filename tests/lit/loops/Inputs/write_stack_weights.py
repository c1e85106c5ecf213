"""write_stack_weights.py OUT.safetensors N D: layers.<i>.weight [D, D] and
layers.<i>.bias [D] for i < N, deterministic values (no torch needed)."""
import json
import struct
import sys

out, n, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
header, blobs, offset = {}, [], 0
for i in range(n):
    for name, count, shape in (("weight", d * d, [d, d]), ("bias", d, [d])):
        values = [((7 * i + 3 * k) % 11 - 5) / 10.0 for k in range(count)]
        blob = struct.pack("<%df" % count, *values)
        header["layers.%d.%s" % (i, name)] = {"dtype": "F32", "shape": shape,
                                              "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
