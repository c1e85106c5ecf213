#!/usr/bin/python3
"""modelc against PyTorch (eager and TorchScript) on the CPU, one table.

    /usr/bin/python3 bench/cpu_vs_pytorch.py --build build-perf

For each model x batch x threads: the same random weights (torch.manual_seed(0),
written once as .safetensors) and the same input go to modelc (bench/modelc_bench,
a subprocess that compiled the model once) and to PyTorch in this process.
Blocks of forwards run interleaved modelc / eager / TorchScript, rotating the
order every round, so that load from the rest of the machine hits all three
alike. Times are per forward: median and min over every timed forward.

PyTorch uses OpenBLAS (the OpenMP build) with the environment that
docs/performance.md and ../shared/notes/peers.md describe; the script re-runs
itself with it. Never use that environment in tests. modelc calls oneDNN.

--skylakex-peer adds a column: eager in a second process with
OPENBLAS_CORETYPE=SkylakeX (OpenBLAS's AVX-512 kernels; this VM's CPU is
otherwise detected as Prescott). Informational: the targets use the peer
that peers.md defines.
"""

import argparse
import json
import os
import struct
import subprocess
import sys
import time

OPENBLAS_DIR = "/usr/lib/x86_64-linux-gnu/openblas-openmp"
ENV_MARK = "MODELC_BENCH_ENV"


def reexec_with_bench_env():
    """Same BLAS conditions on both sides: OpenMP OpenBLAS, no safety caps."""
    if os.environ.get(ENV_MARK) == "1":
        return
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OPENBLAS_L2_SIZE", None)
    env["LD_LIBRARY_PATH"] = OPENBLAS_DIR + (
        ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env[ENV_MARK] = "1"
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


reexec_with_bench_env()

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        a = F.max_pool2d(F.relu(self.conv1(x)), 2)
        b = F.max_pool2d(F.relu(self.conv2(a)), 2)
        h = F.relu(self.fc2(F.relu(self.fc1(torch.flatten(b, 1)))))
        return self.fc3(h)


class MlpBlock(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


# name, .mdl, model, --args, torch constructor, input shape for a batch
MODELS = {
    "mlp": ("examples/mlp.mdl", "Mlp", "in=784,hidden=256,out=10", Mlp,
            lambda b: (b, 784)),
    "lenet5": ("examples/lenet5.mdl", "LeNet5", "", LeNet5,
               lambda b: (b, 1, 28, 28)),
    "mlp_block": ("examples/mlp_block.mdl", "MlpBlock", "dim=1024,hidden=4096",
                  lambda: MlpBlock(1024, 4096), lambda b: (b, 1, 1024)),
}


def write_safetensors(path, state):
    header, blobs, offset = {}, [], 0
    for name, tensor in state.items():
        data = tensor.detach().contiguous().numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


class ModelcProcess:
    """bench/modelc_bench: compiled once, times forwards on request."""

    def __init__(self, exe, mdl, model, args, weights, input_path, output_path,
                 threads, no_blas=False):
        env = dict(os.environ)
        env["OMP_NUM_THREADS"] = str(threads)
        cmd = [exe, os.path.join(ROOT, mdl), "--model", model, "--weights", weights,
               "--input", input_path, "--output", output_path, "--blas-threads", str(threads)]
        if args:
            cmd += ["--args", args]
        if no_blas:
            cmd.append("--no-blas")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=env, text=True)
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("modelc-bench failed: " + " ".join(cmd))
        self.info = json.loads(line)

    def time(self, count):
        self.proc.stdin.write("time %d\n" % count)
        self.proc.stdin.flush()
        return [int(t) / 1000.0 for t in self.proc.stdout.readline().split()]

    def close(self):
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        self.proc.wait()


class SkylakeXEagerProcess:
    """Eager PyTorch in a child with OPENBLAS_CORETYPE=SkylakeX, same protocol."""

    def __init__(self, name, input_path, threads):
        env = dict(os.environ)
        env["OPENBLAS_CORETYPE"] = "SkylakeX"
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--serve-eager",
             "%s,%s,%d" % (name, input_path, threads)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the SkylakeX eager peer did not start")

    time = ModelcProcess.time
    close = ModelcProcess.close


def serve_eager(spec):
    """The child side of SkylakeXEagerProcess: times eager on request."""
    name, input_path, threads = spec.split(",")
    torch.set_num_threads(int(threads))
    torch.manual_seed(0)
    module = MODELS[name][3]().eval()
    x = torch.from_numpy(np.load(input_path))
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if words[0] == "quit":
            return
        times = time_torch(module, x, int(words[1]))
        print(" ".join("%d" % (t * 1000) for t in times), flush=True)


def time_torch(fn, x, count):
    times = []
    with torch.inference_mode():
        for _ in range(count):
            start = time.perf_counter_ns()
            fn(x)
            times.append((time.perf_counter_ns() - start) / 1000.0)
    return times


def median(values):
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def build_peers(module, x):
    with torch.inference_mode():
        pass
    with torch.no_grad():
        script = torch.jit.freeze(torch.jit.trace(module, x))
        try:
            script = torch.jit.optimize_for_inference(script)
        except Exception:  # some builds lack the passes; frozen is still fine
            pass
    return module, script


def bench_config(opts, work, name, batch, threads, compile_ms):
    mdl, model_name, args, ctor, shape = MODELS[name]
    torch.manual_seed(0)
    module = ctor().eval()
    weights = os.path.join(work, name + ".safetensors")
    if not os.path.exists(weights):
        write_safetensors(weights, module.state_dict())
    gen = torch.Generator().manual_seed(1234)
    x = torch.randn(*shape(batch), generator=gen)
    input_path = os.path.join(work, "%s_b%d.npy" % (name, batch))
    output_path = os.path.join(work, "%s_b%d_t%d_out.npy" % (name, batch, threads))
    np.save(input_path, x.numpy())

    torch.set_num_threads(threads)
    modelc = ModelcProcess(opts.modelc_bench, mdl, model_name, args, weights, input_path,
                           output_path, threads, opts.no_blas)
    if batch == 1 and threads == 1:
        compile_ms[name] = modelc.info["compile_ms"]
    eager, script = build_peers(module, x)
    with torch.inference_mode():
        reference = eager(x).numpy()
    got = np.load(output_path)
    err = float(np.max(np.abs(got - reference)) / max(1e-30, np.max(np.abs(reference))))
    if err > 1e-4:
        print("warning: %s batch %d: modelc differs from eager (normalised %.2e)"
              % (name, batch, err), file=sys.stderr)

    sides = {
        "modelc": lambda n: modelc.time(n),
        "eager": lambda n: time_torch(eager, x, n),
        "script": lambda n: time_torch(script, x, n),
    }
    skylakex = None
    if opts.skylakex_peer:
        skylakex = SkylakeXEagerProcess(name, input_path, threads)
        sides["eager_skx"] = lambda n: skylakex.time(n)
    # Warm up every side and size blocks to ~opts.block_ms of work.
    per_call = {}
    for side, run in sides.items():
        run(5)
        per_call[side] = max(1.0, median(run(10)))
    samples = {side: [] for side in sides}
    order = list(sides)
    for r in range(opts.rounds):
        for side in order[r % len(order):] + order[:r % len(order)]:
            count = max(3, int(opts.block_ms * 1000 / per_call[side]))
            samples[side] += sides[side](count)
            time.sleep(0.01)  # let spinning BLAS/OpenMP workers park
    modelc.close()
    if skylakex:
        skylakex.close()
    row = {"model": name, "batch": batch, "threads": threads, "err": err}
    for side in sides:
        row[side] = (median(samples[side]), min(samples[side]))
    return row


def weight_read_floor(opts):
    out = subprocess.run([opts.gemm_bench, "--floor-bytes", str((784 * 256 + 256 + 256 * 10 + 10) * 4)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"),
                        help="build folder with bin/modelc-bench")
    parser.add_argument("--models", default="mlp,lenet5,mlp_block")
    parser.add_argument("--batches", default="1,64,256")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--block-ms", type=float, default=60.0,
                        help="work per interleaved block and side")
    parser.add_argument("--work", default="/tmp/modelc-bench", help="weights, inputs, outputs")
    parser.add_argument("--no-blas", action="store_true", help="modelc without OpenBLAS")
    parser.add_argument("--json", help="also write the rows here")
    parser.add_argument("--skylakex-peer", action="store_true",
                        help="add eager with OPENBLAS_CORETYPE=SkylakeX (informational)")
    parser.add_argument("--serve-eager", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.serve_eager:
        serve_eager(opts.serve_eager)
        return
    opts.modelc_bench = os.path.join(opts.build, "bin", "modelc-bench")
    opts.gemm_bench = os.path.join(opts.build, "bin", "modelc-gemm-bench")
    os.makedirs(opts.work, exist_ok=True)

    load = os.getloadavg()
    print("load average %.2f %.2f %.2f; torch %s; OpenBLAS %s" % (
        load[0], load[1], load[2], torch.__version__, OPENBLAS_DIR))
    rows, compile_ms = [], {}
    header = ("| model | batch | thr | modelc med / min µs | eager med / min µs "
              "| script med / min µs | eager/modelc | script/modelc |")
    if opts.skylakex_peer:
        header += " eager SkylakeX med / min µs | eager SkylakeX/modelc |"
    print(header)
    print("|---" * header.count(" | ") + "|---|")
    for name in opts.models.split(","):
        for batch in [int(b) for b in opts.batches.split(",")]:
            for threads in [int(t) for t in opts.threads.split(",")]:
                row = bench_config(opts, opts.work, name, batch, threads, compile_ms)
                rows.append(row)
                m, e, s = row["modelc"], row["eager"], row["script"]
                line = ("| %s | %d | %d | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %.2f | %.2f |"
                        % (name, batch, threads, m[0], m[1], e[0], e[1], s[0], s[1],
                           e[0] / m[0], s[0] / m[0]))
                if "eager_skx" in row:
                    k = row["eager_skx"]
                    line += " %.1f / %.1f | %.2f |" % (k[0], k[1], k[0] / m[0])
                print(line, flush=True)
    print()
    for name, ms in compile_ms.items():
        print("cold compile (parse+check+lower+JIT), %s: %.0f ms" % (name, ms))
    if os.path.exists(opts.gemm_bench) and "mlp" in compile_ms:
        floor = weight_read_floor(opts)
        mlp = next(r for r in rows if r["model"] == "mlp" and r["batch"] == 1
                   and r["threads"] == 1)
        print("MLP batch 1 weight-read floor (%.2f MB): warm %.1f µs, cold %.1f µs; "
              "modelc median %.1f µs = %.1fx warm floor, %.1fx cold floor"
              % (floor["bytes"] / 1e6, floor["warm_us"], floor["cold_us"], mlp["modelc"][0],
                 mlp["modelc"][0] / floor["warm_us"], mlp["modelc"][0] / floor["cold_us"]))
    load = os.getloadavg()
    print("load average after: %.2f %.2f %.2f" % load)
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"rows": rows, "compile_ms": compile_ms}, f, indent=1)


if __name__ == "__main__":
    main()
