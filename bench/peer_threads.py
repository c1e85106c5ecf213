#!/usr/bin/python3
"""How many cores PyTorch's GEMM really uses after torch.set_num_threads(N).

    /usr/bin/python3 bench/peer_threads.py [--threads 1] [--shape 256,784,256]

Times torch.mm on the shape twice: with torch.set_num_threads alone, then
with openblas_set_num_threads(N) as well (cpu_vs_pytorch.py's
set_peer_threads), and prints per call the time, GFLOP/s and the process's
CPU time over wall time (the cores kept busy). With the pthreads OpenBLAS
(Debian's default when libopenblas0-openmp is not installed) the first line
shows 2 cores busy on a 2-core machine: that is not a 1-thread peer.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from cpu_vs_pytorch import openblas_core, set_peer_threads  # noqa: E402


def measure(a, b, seconds=0.5):
    for _ in range(20):
        torch.mm(a, b)
    cpu, wall, calls = time.process_time(), time.perf_counter(), 0
    while time.perf_counter() - wall < seconds:
        torch.mm(a, b)
        calls += 1
    wall_s = time.perf_counter() - wall
    return wall_s / calls, (time.process_time() - cpu) / wall_s


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--shape", default="256,784,256", help="M,K,N")
    opts = parser.parse_args()
    m, k, n = (int(d) for d in opts.shape.split(","))
    a, b = torch.randn(m, k), torch.randn(k, n)
    core, lib = openblas_core()
    print("OpenBLAS %s (core %s); %d thread(s) asked; %dx%dx%d" % (lib, core, opts.threads,
                                                                  m, n, k))
    torch.set_num_threads(opts.threads)
    for label in ["torch.set_num_threads only", "and openblas_set_num_threads"]:
        if label.startswith("and"):
            set_peer_threads(opts.threads)
        seconds, cores = measure(a, b)
        print("%-30s %8.1f us  %6.1f GFLOP/s  %.2f cores busy"
              % (label, seconds * 1e6, 2.0 * m * n * k / seconds / 1e9, cores))


if __name__ == "__main__":
    main()
