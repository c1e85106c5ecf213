"""The importer's pure helpers: input types, constructor arguments, .mdl
literals and the .safetensors writer."""

import json
import os
import struct
import tempfile
import unittest

import torch

import emitter
from errors import ImportError_
from import_torch import parse_constructor_args
from safetensors_writer import write_safetensors
from symbolic import parse_input_spec


class InputSpecTest(unittest.TestCase):
    def test_sizes_names_and_traced_sizes(self):
        self.assertEqual(parse_input_spec("f32[B, 3, 32, 32]"), ("f32", ["B", 3, 32, 32], {}))
        self.assertEqual(parse_input_spec(" i64[B=4, T=8] "), ("i64", ["B", "T"], {"B": 4, "T": 8}))

    def test_rejects_what_is_not_a_type(self):
        for bad in ("f32", "f32[B, 3 + 1]", "[B]"):
            with self.assertRaises(ValueError, msg=bad):
                parse_input_spec(bad)


class ConstructorArgsTest(unittest.TestCase):
    def test_python_literals_and_bare_words(self):
        self.assertEqual(parse_constructor_args("hidden=256, bias=false, act=gelu, p=0.5"),
                         {"hidden": 256, "bias": False, "act": "gelu", "p": 0.5})

    def test_a_part_without_a_value_is_an_error(self):
        with self.assertRaises(ImportError_):
            parse_constructor_args("hidden")


class LiteralTest(unittest.TestCase):
    def test_mdl_literals(self):
        self.assertEqual(emitter.scalar_text(True), "true")
        self.assertEqual(emitter.scalar_text(-3), "(-3)")
        self.assertEqual(emitter.scalar_text(1e-05), "1e-05")
        self.assertEqual(emitter.scalar_text(float("-inf")), "(-inf)")
        self.assertEqual(emitter.keyword_args(("eps", 1e-05, 1e-05), ("dim", 1, -1)), ", dim: 1")


class SafetensorsTest(unittest.TestCase):
    def test_header_and_data(self):
        tensors = {"w": torch.arange(6, dtype=torch.float32).reshape(2, 3),
                   "b": torch.tensor([True, False])}
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "t.safetensors")
            write_safetensors(path, tensors)
            with open(path, "rb") as f:
                data = f.read()
        (length,) = struct.unpack("<Q", data[:8])
        self.assertEqual((8 + length) % 8, 0, "the data starts 8-aligned")
        header = json.loads(data[8:8 + length])
        self.assertEqual(header["w"], {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]})
        self.assertEqual(header["b"], {"dtype": "BOOL", "shape": [2], "data_offsets": [24, 26]})
        body = data[8 + length:]
        self.assertEqual(struct.unpack("<6f", body[:24]), (0.0, 1.0, 2.0, 3.0, 4.0, 5.0))
        self.assertEqual(body[24:], b"\x01\x00")


if __name__ == "__main__":
    unittest.main()
