"""Checks that a file is a CUBIN: an ELF image for NVIDIA GPUs (e_machine
EM_CUDA = 190). Prints `cubin: ELF64, EM_CUDA` or why not."""
import struct
import sys

data = open(sys.argv[1], "rb").read()
if data[:4] != b"\x7fELF":
    print("not an ELF image")
elif data[4] != 2:
    print("not ELF64")
else:
    machine = struct.unpack_from("<H", data, 18)[0]
    print("cubin: ELF64, EM_CUDA" if machine == 190 else "ELF for machine %d" % machine)
