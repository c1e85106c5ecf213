"""Writes tensors as a .safetensors file without the `safetensors` package.

The format (https://github.com/huggingface/safetensors): an 8-byte
little-endian header length, a JSON header mapping each name to its dtype,
shape and byte range, then the raw little-endian data of every tensor.
"""

import json
import struct

import torch

_DTYPE_NAMES = {
    torch.float32: "F32",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.float64: "F64",
    torch.int64: "I64",
    torch.int32: "I32",
    torch.bool: "BOOL",
}


def tensor_bytes(tensor):
    """The raw little-endian bytes of `tensor` in row-major order."""
    tensor = tensor.detach().to("cpu").contiguous()
    if tensor.dtype == torch.bfloat16:
        # numpy has no bfloat16: reinterpret the same bits as int16.
        return tensor.view(torch.int16).numpy().astype("<i2").tobytes()
    array = tensor.numpy()
    return array.astype(array.dtype.newbyteorder("<")).tobytes()


def write_safetensors(path, tensors):
    """Writes `tensors` (an ordered mapping name -> torch.Tensor) to `path`."""
    header = {}
    chunks = []
    offset = 0
    for name, tensor in tensors.items():
        if tensor.dtype not in _DTYPE_NAMES:
            raise ValueError("cannot store `%s`: dtype %s" % (name, tensor.dtype))
        data = tensor_bytes(tensor)
        header[name] = {
            "dtype": _DTYPE_NAMES[tensor.dtype],
            "shape": list(tensor.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        chunks.append(data)
        offset += len(data)
    encoded = json.dumps(header, separators=(",", ":")).encode("utf-8")
    # The data starts 8-aligned: pad the header with spaces, as the reference
    # implementation does.
    encoded += b" " * (-len(encoded) % 8)
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(encoded)))
        out.write(encoded)
        for chunk in chunks:
            out.write(chunk)
