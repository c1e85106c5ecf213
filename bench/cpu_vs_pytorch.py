#!/usr/bin/python3
"""modelc against PyTorch at its best on the CPU, one table.

    /usr/bin/python3 bench/cpu_vs_pytorch.py --build build

For each model x batch x threads the same random weights (torch.manual_seed(0),
written once as .safetensors) and the same input go to every side:

  modelc   api: Function::call of the embedding API (modelc-api-bench: input
                checks, descriptors, output allocation; batch dynamic, as the
                API keeps it) -- the path users call, and the one compared
           run: exec::CompiledModel::call, `modelc run`'s executor (batch
                specialised to the input, as run does) (modelc-bench)
           raw: the compiled entry point with prebuilt descriptors
  PyTorch  eager under inference_mode and TorchScript (trace -> freeze ->
           optimize_for_inference, i.e. mkldnn convolutions), each with the
           OpenBLAS kernels autodetected here (in this process) and with
           OPENBLAS_CORETYPE forced to each AVX-512 / AVX2 core type that
           this machine runs (one child process per core type, serving both
           modes: where detection fails, TorchScript's linear layers run on
           the forced kernels too); the peer is the fastest of them.

Every side's output is checked against the model run in float64 first
(normalised max error <= 1e-4); a failure stops the benchmark. Blocks of
forwards run interleaved, the order rotating every round, so that load from
the rest of the machine hits every side alike. Times are per forward: median
and min over every timed forward; ratios are of medians from the same run.

PyTorch runs with the OpenMP OpenBLAS and without the OPENBLAS_CORETYPE /
OPENBLAS_L2_SIZE caps this environment may set (../shared/notes/peers.md);
the script re-runs itself so. Never use that environment in tests.
"""

import argparse
import ctypes
import json
import os
import struct
import subprocess
import sys
import time

OPENBLAS_DIR = "/usr/lib/x86_64-linux-gnu/openblas-openmp"
ENV_MARK = "MODELC_BENCH_ENV"
# OpenBLAS core types with AVX-512 or AVX2 kernels (OpenBLAS 0.3.21 names).
FORCED_CORE_TYPES = ["SkylakeX", "Cooperlake", "SapphireRapids", "Zen", "Haswell"]
PARITY = 1e-4
# Forwards slower than this get short warm-ups (the C++ sides too).
SLOW_CALL_US = 20000


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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
# The benchmark models and their PyTorch twins, shared with gpu_vs_pytorch.py.
from torch_models import LeNet5, MODELS  # noqa: E402
from bench_common import ChildSide, check_parity, interleaved_samples, median  # noqa: E402
from gen_stdlib_refs import write_safetensors  # noqa: E402


def openblas_core():
    """(core name, library path) of the OpenBLAS this process loaded."""
    with open("/proc/self/maps") as maps:
        paths = sorted({line.split()[-1] for line in maps if "openblas" in line and "/" in line})
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            return lib.openblas_get_corename().decode(), path
        except (OSError, AttributeError):
            continue
    return "none", ""


def set_peer_threads(threads):
    """torch.set_num_threads limits OpenMP (oneDNN, the OpenMP OpenBLAS); the
    pthreads OpenBLAS (what torch loads where libopenblas0-openmp is not
    installed) keeps a thread per core unless told, so the 1-thread peer ran
    on 2 cores."""
    torch.set_num_threads(threads)
    path = openblas_core()[1]
    if path:
        try:
            ctypes.CDLL(path).openblas_set_num_threads(ctypes.c_int(threads))
        except AttributeError:
            pass


def cores_used(fn, x):
    """Process CPU time over wall time across ~0.1 s of forwards: the cores
    the peer really keeps busy."""
    with torch.inference_mode():
        fn(x)
        cpu, wall, calls = time.process_time(), time.perf_counter(), 0
        while calls < 3 or time.perf_counter() - wall < 0.1:
            fn(x)
            calls += 1
        return (time.process_time() - cpu) / (time.perf_counter() - wall)


def warn_without_openmp_openblas():
    """Said before and after the table, where it cannot be missed."""
    if not os.path.isdir(OPENBLAS_DIR):
        print("warning: %s is missing (install libopenblas0-openmp, tools/install-deps.sh): "
              "torch runs the pthreads OpenBLAS, limited to the row's threads through "
              "openblas_set_num_threads, whose workers fight torch's OpenMP pool on 2 threads "
              "(the MLP at batch 256: 3-4.5 ms against ~0.9 ms); the 2-thread peer is then "
              "not at its best" % OPENBLAS_DIR)


def check_cores(used, threads, what):
    """A peer on more cores than the row's thread count is not that row's peer."""
    if used > threads + 0.35:
        sys.exit("cpu_vs_pytorch.py: %s kept %.2f cores busy with %d thread(s) asked; "
                 "the comparison would be unfair" % (what, used, threads))


def cpu_model():
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


class CommandOn:
    """Another command of the same child (modelc-bench's `time-run`)."""

    def __init__(self, child, command):
        self.child, self.command = child, command

    def time(self, count):
        saved = self.child.command
        self.child.command = self.command
        try:
            return self.child.time(count)
        finally:
            self.child.command = saved


def serve_eager(spec):
    """Child side of a forced-core-type peer: times eager (`time N`) and
    TorchScript (`time-script N`) with this process's OpenBLAS kernels."""
    name, input_path, output_path, threads = spec.split(",")
    set_peer_threads(int(threads))
    torch.manual_seed(0)
    module = MODELS[name][3]().eval()
    x = torch.from_numpy(np.load(input_path))
    script = torchscript(module, x)
    with torch.inference_mode():
        np.save(output_path, module(x).numpy())
        np.save(script_output(output_path), script(x).numpy())
    print(json.dumps({"core": openblas_core()[0],
                      "cores_used": [cores_used(module, x), cores_used(script, x)]}), flush=True)
    for line in sys.stdin:
        words = line.split()
        if words[0] == "quit":
            return
        times = time_torch(script if words[0] == "time-script" else module, x, int(words[1]))
        print(" ".join("%d" % (t * 1000) for t in times), flush=True)


def script_output(eager_output):
    return eager_output[:-len(".npy")] + "_script.npy"


def time_torch(fn, x, count):
    times = []
    with torch.inference_mode():
        for _ in range(count):
            start = time.perf_counter_ns()
            fn(x)
            times.append((time.perf_counter_ns() - start) / 1000.0)
    return times


def torchscript(module, x):
    with torch.no_grad():
        script = torch.jit.freeze(torch.jit.trace(module, x))
        try:
            script = torch.jit.optimize_for_inference(script)
        except Exception:  # some builds lack the passes; frozen is still fine
            pass
    return script


def bench_config(opts, name, batch, threads, compile_ms, core_types):
    mdl, model_name, args, ctor, shape = MODELS[name]
    work = opts.work
    torch.manual_seed(0)
    module = ctor().eval()
    weights = os.path.join(work, name + ".safetensors")
    if not os.path.exists(weights):
        write_safetensors(weights, module.state_dict())
    gen = torch.Generator().manual_seed(1234)
    x = torch.randn(*shape(batch), generator=gen)
    stem = os.path.join(work, "%s_b%d" % (name, batch))
    np.save(stem + ".npy", x.numpy())
    x.numpy().astype("<f4").tofile(stem + ".f32")
    out_stem = "%s_t%d" % (stem, threads)
    with torch.no_grad():
        reference = module.double()(x.double()).numpy()
        module.float()

    set_peer_threads(threads)
    with torch.inference_mode():
        module(x)
        start = time.perf_counter_ns()
        module(x)
        slow = (time.perf_counter_ns() - start) / 1000.0 > SLOW_CALL_US
    # modelc-bench and modelc-api-bench warm up before they answer.
    warmup = "2" if slow else "20"
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    sides, outputs, children = {}, {}, []
    raw = ChildSide([opts.modelc_bench, os.path.join(ROOT, mdl), "--model", model_name,
                     "--weights", weights, "--input", stem + ".npy",
                     "--output", out_stem + "_raw.npy", "--blas-threads", str(threads),
                     "--warmup", warmup]
                    + (["--args", args] if args else []), env)
    children.append(raw)
    if batch == 1 and threads == 1:
        compile_ms[name] = raw.info["compile_ms"]
    outputs["modelc raw"] = np.load(out_stem + "_raw.npy")
    if os.path.exists(opts.api_bench):
        api = ChildSide([opts.api_bench, os.path.join(ROOT, mdl), model_name, args or "-", weights,
                         stem + ".f32"] + [str(d) for d in x.shape]
                        + ["--output", out_stem + "_api.f32", "--threads", str(threads),
                           "--warmup", warmup], env)
        children.append(api)
        outputs["modelc api"] = np.fromfile(out_stem + "_api.f32", dtype="<f4")
        sides["modelc api"] = api.time
    sides["modelc run"] = CommandOn(raw, "time-run").time
    sides["modelc raw"] = raw.time

    script = torchscript(module, x)
    with torch.inference_mode():
        outputs["eager"] = module(x).numpy()
        outputs["script"] = script(x).numpy()
    sides["eager"] = lambda n: time_torch(module, x, n)
    sides["script"] = lambda n: time_torch(script, x, n)
    check_cores(cores_used(module, x), threads, "eager")
    check_cores(cores_used(script, x), threads, "script")
    for core in core_types:
        child_env = dict(env)
        child_env["OPENBLAS_CORETYPE"] = core
        out_path = "%s_%s.npy" % (out_stem, core)
        peer = ChildSide([sys.executable, os.path.abspath(__file__), "--serve-eager",
                          "%s,%s,%s,%d" % (name, stem + ".npy", out_path, threads)], child_env)
        children.append(peer)
        for mode, used in zip(["eager ", "script "], peer.info["cores_used"]):
            check_cores(used, threads, mode + core)
        outputs["eager " + core] = np.load(out_path)
        outputs["script " + core] = np.load(script_output(out_path))
        sides["eager " + core] = peer.time
        sides["script " + core] = CommandOn(peer, "time-script").time

    errors = check_parity(outputs, reference, children, "%s batch %d" % (name, batch), PARITY)

    # Warm up every side and size blocks to ~opts.block_ms of work; a side
    # slower than SLOW_CALL_US (the ResNet block and the encoder layer at
    # batch 256) warms up on 4 forwards instead of 15.
    per_call = {}
    for side, run in sides.items():
        if median(run(2)) < SLOW_CALL_US:
            run(3)
            per_call[side] = max(1.0, median(run(10)))
        else:
            per_call[side] = median(run(2))
    # The pause lets spinning BLAS/OpenMP workers park between blocks: the
    # pthreads OpenBLAS's workers spin for 2^28 cycles (~75 ms) after a call,
    # and on 2 threads they took the second core from the next side's block
    # (peer medians 2x their minima, up to 10x in some rows).
    pause_s = 0.01 if threads == 1 else 0.12
    samples = interleaved_samples(sides, per_call, opts.rounds, opts.block_ms, pause_s=pause_s)
    for child in children:
        child.close()
    row = {"model": name, "batch": batch, "threads": threads, "errors": errors}
    for side in sides:
        row[side] = (median(samples[side]), min(samples[side]))
    peers = [s for s in sides if not s.startswith("modelc")]
    row["peer"] = min(peers, key=lambda s: row[s][0])
    return row


def peak_rss(opts):
    """Peak RSS (ru_maxrss of a fresh process, through /usr/bin/time) of
    `modelc run` on LeNet-5 and of PyTorch loading the same weights and
    running the same forward."""
    rows = []
    mdl, model_name, _, _, shape = MODELS["lenet5"]
    weights = os.path.join(opts.work, "lenet5.safetensors")
    for batch in (1, 64):
        stem = os.path.join(opts.work, "lenet5_b%d" % batch)
        if not os.path.exists(stem + ".npy"):
            np.save(stem + ".npy", np.random.default_rng(0).standard_normal(shape(batch))
                    .astype("<f4"))
        cmds = {
            "modelc run": [opts.modelc, "run", os.path.join(ROOT, mdl), "--model", model_name,
                           "--device", "cpu", "--weights", weights, "--input", stem + ".npy",
                           "--output", stem + "_rss.npy"],
            "PyTorch eager": [sys.executable, os.path.abspath(__file__), "--rss-peer",
                              stem + ".npy"],
        }
        for what, cmd in cmds.items():
            # GNU time forks the command from its own small process: ru_maxrss
            # of a child forked from this Python (torch loaded) would start at
            # this process's RSS.
            rss_file = os.path.join(opts.work, "rss.txt")
            start = time.perf_counter()
            proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file] + cmd,
                                  stdout=subprocess.DEVNULL)
            wall = time.perf_counter() - start
            if proc.returncode != 0:
                sys.exit("%s failed: %s" % (what, " ".join(cmd)))
            with open(rss_file) as f:
                kib = int(f.read().split()[-1])
            rows.append((what, batch, kib / 1024.0, wall * 1000))
    return rows


def rss_peer(input_path):
    """What a PyTorch user runs for the same forward (the RSS comparison)."""
    set_peer_threads(1)
    module = LeNet5().eval()
    from_file = {}
    path = os.path.join(os.path.dirname(input_path), "lenet5.safetensors")
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    for key, meta in header.items():
        begin, end = meta["data_offsets"]
        from_file[key] = torch.from_numpy(
            np.frombuffer(data[begin:end], dtype="<f4").reshape(meta["shape"]).copy())
    module.load_state_dict(from_file)
    with torch.inference_mode():
        module(torch.from_numpy(np.load(input_path)))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"),
                        help="build folder with bin/modelc-bench and bin/modelc-api-bench")
    parser.add_argument("--models", default="mlp,lenet5,mlp_block,resnet_block,encoder_layer")
    parser.add_argument("--batches", default="1,64,256")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--block-ms", type=float, default=60.0,
                        help="work per interleaved block and side")
    parser.add_argument("--core-types", default=",".join(FORCED_CORE_TYPES),
                        help="OpenBLAS core types to force for eager (those that run here)")
    parser.add_argument("--work", default="/tmp/modelc-bench", help="weights, inputs, outputs")
    parser.add_argument("--rss", action="store_true",
                        help="also the peak RSS of `modelc run` and PyTorch on LeNet-5")
    parser.add_argument("--json", help="also write the rows here")
    parser.add_argument("--serve-eager", help=argparse.SUPPRESS)
    parser.add_argument("--rss-peer", help=argparse.SUPPRESS)
    parser.add_argument("--probe-core", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.probe_core:
        torch.mm(torch.ones(64, 64), torch.ones(64, 64))
        print(openblas_core()[0])
        return
    if opts.serve_eager:
        serve_eager(opts.serve_eager)
        return
    if opts.rss_peer:
        rss_peer(opts.rss_peer)
        return
    bin_dir = os.path.join(opts.build, "bin")
    opts.modelc = os.path.join(bin_dir, "modelc")
    opts.modelc_bench = os.path.join(bin_dir, "modelc-bench")
    opts.api_bench = os.path.join(bin_dir, "modelc-api-bench")
    os.makedirs(opts.work, exist_ok=True)

    core, lib = openblas_core()
    # A forced core type "runs" when OpenBLAS takes it (it silently keeps its
    # own pick for names it does not know) and it does not crash here.
    core_types = []
    for wanted in [c for c in opts.core_types.split(",") if c]:
        env = dict(os.environ, OPENBLAS_CORETYPE=wanted)
        probe = subprocess.run([sys.executable, os.path.abspath(__file__), "--probe-core"],
                               capture_output=True, text=True, env=env)
        got = probe.stdout.strip().splitlines()[-1] if probe.stdout.strip() else ""
        if probe.returncode == 0 and got.lower() == wanted.lower():
            core_types.append(wanted)
    warn_without_openmp_openblas()
    load = os.getloadavg()
    print("load average %.2f %.2f %.2f; %s; torch %s; OpenBLAS %s, core %s autodetected; "
          "forced core types that run: %s" % (load[0], load[1], load[2], cpu_model(),
                                              torch.__version__, lib, core,
                                              ", ".join(core_types) or "none"))
    rows, compile_ms = [], {}
    peer_cols = (["eager", "script"] + ["eager " + c for c in core_types]
                 + ["script " + c for c in core_types])
    header = ("| model | batch | thr | modelc api med / min µs | run med / min | raw med / min | "
              + " | ".join("%s med / min" % c for c in peer_cols)
              + " | fastest peer | peer/modelc api | peer/modelc raw |")
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    for name in opts.models.split(","):
        for batch in [int(b) for b in opts.batches.split(",")]:
            for threads in [int(t) for t in opts.threads.split(",")]:
                row = bench_config(opts, name, batch, threads, compile_ms, core_types)
                rows.append(row)
                cells = ["%.1f / %.1f" % row[s] if s in row else "-"
                         for s in ["modelc api", "modelc run", "modelc raw"] + peer_cols]
                peer = row[row["peer"]][0]
                api = row.get("modelc api", row["modelc raw"])[0]
                print("| %s | %d | %d | %s | %s | %.2f | %.2f |"
                      % (name, batch, threads, " | ".join(cells), row["peer"], peer / api,
                         peer / row["modelc raw"][0]), flush=True)
    print()
    for name, ms in compile_ms.items():
        print("cold compile (parse+check+lower+JIT, fresh process), %s: %.0f ms" % (name, ms))
    if opts.rss:
        for what, batch, mib, wall in peak_rss(opts):
            print("peak RSS, LeNet-5 batch %d, %s: %.1f MiB (process wall %.0f ms)"
                  % (batch, what, mib, wall))
    warn_without_openmp_openblas()
    load = os.getloadavg()
    print("load average after: %.2f %.2f %.2f" % load)
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"rows": rows, "compile_ms": compile_ms, "core": core}, f, indent=1)


if __name__ == "__main__":
    main()
