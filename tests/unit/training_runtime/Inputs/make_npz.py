#!/usr/bin/env python3
"""Writes the .npz fixtures of DataSetTest (run from this folder; committed).

stored.npz: np.savez (members stored, zip64 fields as NumPy writes them);
deflated.npz: np.savez_compressed; both hold x: f32[5, 3] = arange and
y: i64[5] = [4, 3, 2, 1, 0]. mismatch.npz: x f32[5, 3], y i64[4].
"""
import numpy as np

x = np.arange(15, dtype=np.float32).reshape(5, 3)
y = np.array([4, 3, 2, 1, 0], dtype=np.int64)
np.savez("stored.npz", x=x, y=y)
np.savez_compressed("deflated.npz", x=x, y=y)
np.savez("mismatch.npz", x=x, y=y[:4])
