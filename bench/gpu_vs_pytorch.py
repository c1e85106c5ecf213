#!/usr/bin/python3
"""modelc against PyTorch on a GPU, one table (issue 13).

    /usr/bin/python3 bench/gpu_vs_pytorch.py --build build [--device cuda:0]

Where no GPU is usable (no CUDA build of torch, no driver, no device) it says
which and exits 0 without a table: this machine's CI has no GPU. On a GPU
machine without LLVM, run it from a build packed with
../shared/tools/gpu-pack.sh (LD_LIBRARY_PATH as that script says).

For each model x input the same random weights (torch.manual_seed(0), written
once as .safetensors) and the same input go to every side. fp32 with TF32 off
on both sides (--tf32: on, on both sides). The input is already on the GPU;
every timed forward reads its result back to host memory (which waits for
the GPU), on both sides:

  modelc         api: Function::call of the embedding API on the CUDA driver
                 (modelc-api-bench --device cuda:N), plus Tensor::copyToHost;
                 --gemm own,cublaslt,auto gives one column per way the
                 matrix products run (MODELC_CUDA_GEMM: modelc's own kernels,
                 cuBLASLt wherever it can, or the faster by measurement, the
                 default); each column's run report (which products cuBLASLt
                 ran, and the timings that chose it) is printed after the table
  PyTorch        eager: module(x).cpu() under inference_mode
                 graph: the eager forward captured once in a CUDA graph
                   (torch.cuda.CUDAGraph), replayed, then out.cpu()
                 compile: torch.compile (inductor, default mode), then .cpu()
                   (--compile picks the rows: each takes 10-20 s to compile)
                 compile-max: torch.compile(mode="max-autotune-no-cudagraphs")
                   with --max-autotune (minutes of autotuning per model)

With --dtype bf16 or f16 (the MLP blocks only) both sides compute in that
dtype with f32 at the edges: modelc runs bench/mlp_block_dtype.mdl, PyTorch
module.to(dtype) between x.to(dtype) and .float(); the weights are the same
rounded values on both sides.

Every side's output is checked against the model run in float64 on the CPU
(with the dtype's rounded weights) first: normalised max error <= 1e-4 in f32,
<= 1e-2 in f16 and 5e-2 in bf16 (a guard against wrong results, not
PyTorch's per-element tolerance); a failure stops the benchmark. Blocks of
forwards run interleaved, the order rotating every round. Times are per
forward: median and min over every timed forward; ratios are of medians from
the same run. The table names the GPU, driver, torch and commit.
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from bench_common import ChildSide, check_parity, interleaved_samples, median  # noqa: E402

PARITY = {"f32": 1e-4, "f16": 1e-2, "bf16": 5e-2}
# The models --dtype applies to: bench/mlp_block_dtype.mdl's MlpBlock.
HALF_MODELS = ("mlp_block_256", "mlp_block_4096_tokens")

# (model, batch, label): issue 13's rows. mlp_block_256 takes (b, 8, 256);
# mlp_block at batch 8 is 8 x 512 tokens of 1024 (the "4096 tokens" row).
CONFIGS = [
    ("mlp", 1), ("mlp", 64), ("mlp", 256),
    ("lenet5", 1), ("lenet5", 64), ("lenet5", 256),
    ("mlp_block_256", 1), ("mlp_block_256", 64),
    ("mlp_block_4096_tokens", 8),
    ("resnet_block", 1), ("resnet_block", 64), ("resnet_block", 256),
    ("encoder_layer", 1), ("encoder_layer", 64), ("encoder_layer", 256),
]


def skip(reason):
    print("gpu_vs_pytorch: skipped: %s" % reason)
    sys.exit(0)


def commit():
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def time_forward(torch, fn, count):
    """Per-call µs of fn() (which returns a host tensor: the read waits)."""
    times = []
    with torch.inference_mode():
        for _ in range(count):
            start = time.perf_counter_ns()
            fn()
            times.append((time.perf_counter_ns() - start) / 1000.0)
    return times


def cuda_graph_forward(torch, module, x):
    """Captures module(x) once; the returned fn replays it and reads back."""
    static_x = x.clone()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream), torch.inference_mode():
        for _ in range(3):  # warm up outside the capture, as the docs ask
            module(static_x)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.inference_mode(), torch.cuda.graph(graph):
        static_out = module(static_x)

    def replay():
        graph.replay()
        return static_out.cpu()
    return replay


class AtDtype:
    """`module` (in `dtype`) between f32 edges: what bench/mlp_block_dtype.mdl does."""

    def __init__(self, module, dtype):
        self.module = module
        self.dtype = dtype

    def __call__(self, x):
        return self.module(x.to(self.dtype)).float()


def wants_compile(opts, name, batch):
    return opts.compile == "all" or "%s:%d" % (name, batch) in opts.compile.split(",")


def modelc_side(opts, gemm):
    """The column of modelc with MODELC_CUDA_GEMM=`gemm`."""
    return "modelc api" if opts.gemm == ["auto"] else "modelc %s" % gemm


def bench_config(opts, torch, models, name, batch):
    from gen_stdlib_refs import write_safetensors
    key = "mlp_block" if name == "mlp_block_4096_tokens" else name
    mdl, model_name, args, ctor, shape = models[key]
    if name == "mlp_block_4096_tokens":
        shape = lambda b: (b, 512, 1024)  # noqa: E731
    device = torch.device(opts.device)
    dtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[opts.dtype]
    torch.manual_seed(0)
    module = ctor().eval()
    if opts.dtype != "f32":
        # The rounded weights are the model: the reference uses them too.
        module = module.to(dtype).float()
        mdl, args = "bench/mlp_block_dtype.mdl", args + ",dtype=" + opts.dtype
    weights = os.path.join(opts.work, "%s_%s.safetensors" % (key, opts.dtype))
    if not os.path.exists(weights):
        write_safetensors(weights, module.to(dtype).state_dict())
        module.float()
    gen = torch.Generator().manual_seed(1234)
    x = torch.randn(*shape(batch), generator=gen)
    stem = os.path.join(opts.work, "%s_b%d" % (name, batch))
    x.numpy().astype("<f4").tofile(stem + ".f32")
    with torch.no_grad():
        reference = module.double()(x.double()).numpy()
        module.float()
    module = module.to(device)
    if opts.dtype != "f32":
        module = AtDtype(module.to(dtype), dtype)
    xd = x.to(device)

    sides, outputs, children, reports, compile_ms = {}, {}, [], {}, {}
    for gemm in opts.gemm:
        side = modelc_side(opts, gemm)
        env = dict(os.environ, MODELC_CUDA="driver", MODELC_CUDA_GEMM=gemm)
        out = "%s_api_%s.f32" % (stem, gemm)
        api = ChildSide([opts.api_bench, os.path.join(ROOT, mdl), model_name, args or "-",
                         weights, stem + ".f32"] + [str(d) for d in x.shape]
                        + ["--output", out, "--device", opts.device, "--warmup", "10"]
                        + (["--tf32"] if opts.tf32 else []), env)
        children.append(api)
        outputs[side] = np.fromfile(out, dtype="<f4")
        sides[side] = api.time
        reports[side] = api.info.get("run_report", "")
        compile_ms[side] = api.info.get("compile_ms")

    with torch.inference_mode():
        outputs["eager"] = module(xd).cpu().numpy()
    sides["eager"] = lambda n: time_forward(torch, lambda: module(xd).cpu(), n)
    replay = cuda_graph_forward(torch, module, xd)
    outputs["graph"] = replay().numpy()
    sides["graph"] = lambda n: time_forward(torch, replay, n)
    compile_modes = [("compile", {})] if wants_compile(opts, name, batch) else []
    if opts.max_autotune and compile_modes:
        compile_modes.append(("compile-max", {"mode": "max-autotune-no-cudagraphs"}))
    compile_s = {}
    for label, kwargs in compile_modes:
        if isinstance(module, AtDtype):
            compiled = AtDtype(torch.compile(module.module, **kwargs), dtype)
        else:
            compiled = torch.compile(module, **kwargs)
        start = time.perf_counter()
        with torch.inference_mode():
            outputs[label] = compiled(xd).cpu().numpy()
        compile_s[label] = time.perf_counter() - start
        sides[label] = (lambda c: lambda n: time_forward(torch, lambda: c(xd).cpu(), n))(compiled)

    errors = check_parity(outputs, reference, children, "%s batch %d" % (name, batch),
                          PARITY[opts.dtype])

    per_call = {}
    for side, run in sides.items():
        run(3)
        per_call[side] = max(1.0, median(run(10)))
    samples = interleaved_samples(sides, per_call, opts.rounds, opts.block_ms)
    for child in children:
        child.close()
    row = {"model": name, "batch": batch, "input": "x".join(str(d) for d in x.shape),
           "errors": errors, "compile_s": compile_s, "modelc_compile_ms": compile_ms,
           "run_reports": reports}
    for side in sides:
        row[side] = (median(samples[side]), min(samples[side]))
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"),
                        help="build folder with bin/modelc-api-bench")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--models", default="",
                        help="comma-separated subset of: " + ", ".join(sorted({m for m, _ in CONFIGS})))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--block-ms", type=float, default=50.0,
                        help="work per interleaved block and side")
    parser.add_argument("--max-autotune", action="store_true",
                        help="also torch.compile(mode='max-autotune-no-cudagraphs')")
    parser.add_argument("--gemm", default="auto",
                        help="comma-separated MODELC_CUDA_GEMM values, one modelc column each: "
                             "auto (measured, the default), own, cublaslt")
    parser.add_argument("--compile", default="all",
                        help="the rows torch.compile runs: all, none, or MODEL:BATCH,... "
                             "(mlp_block_4096_tokens:8,mlp:64)")
    parser.add_argument("--dtype", default="f32", choices=("f32", "bf16", "f16"),
                        help="both sides in this dtype (rows of %s only)" % ", ".join(HALF_MODELS))
    parser.add_argument("--tf32", action="store_true",
                        help="f32 matmuls and convolutions on TF32 tensor cores on both sides "
                             "(modelc --tf32; torch allow_tf32); the parity limit becomes 1e-2")
    parser.add_argument("--work", default="/tmp/modelc-gpu-bench")
    parser.add_argument("--json", help="also write the rows here")
    opts = parser.parse_args()
    opts.gemm = [g for g in opts.gemm.split(",") if g]
    if not opts.gemm or any(g not in ("auto", "own", "cublaslt") for g in opts.gemm):
        parser.error("--gemm takes auto, own and cublaslt, comma-separated")
    if opts.dtype != "f32":
        opts.models = ",".join(m for m in (opts.models.split(",") if opts.models else HALF_MODELS)
                               if m in HALF_MODELS)
        if not opts.models:
            parser.error("--dtype %s runs %s only" % (opts.dtype, ", ".join(HALF_MODELS)))

    try:
        import torch
    except ImportError:
        skip("PyTorch is not installed")
    if not torch.cuda.is_available():
        skip("torch.cuda.is_available() is False (torch %s, CUDA build %s): no GPU, no driver, "
             "or a CPU-only torch" % (torch.__version__, torch.version.cuda))
    opts.api_bench = os.path.join(opts.build, "bin", "modelc-api-bench")
    if not os.path.exists(opts.api_bench):
        sys.exit("no %s: build modelc first (--build)" % opts.api_bench)
    torch.backends.cuda.matmul.allow_tf32 = opts.tf32
    torch.backends.cudnn.allow_tf32 = opts.tf32
    if opts.tf32:
        PARITY["f32"] = 1e-2
    from torch_models import MODELS
    os.makedirs(opts.work, exist_ok=True)

    index = torch.device(opts.device).index or 0
    props = torch.cuda.get_device_properties(index)
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version",
                                 "--format=csv,noheader", "-i", str(index)],
                                capture_output=True, text=True).stdout.strip()
    except OSError:
        driver = ""
    load = os.getloadavg()
    print("%s (%d SMs, %.0f GiB), driver %s; torch %s (CUDA %s); modelc %s; %s; "
          "load %.2f" % (props.name, props.multi_processor_count, props.total_memory / 2**30,
                         driver or "?", torch.__version__, torch.version.cuda, commit(),
                         opts.dtype + (", TF32 on" if opts.tf32 else ", TF32 off"), load[0]))
    wanted = set(filter(None, opts.models.split(",")))
    rows = []
    if not hasattr(torch, "compile"):
        sys.exit("torch %s has no torch.compile: the peer needs PyTorch 2" % torch.__version__)
    ours_col = modelc_side(opts, opts.gemm[0])
    cols = ([modelc_side(opts, g) for g in opts.gemm] + ["eager", "graph", "compile"]
            + (["compile-max"] if opts.max_autotune else []))
    header = ("| model | input | " + " | ".join("%s med / min µs" % c for c in cols)
              + " | eager/modelc | graph/modelc | compile/modelc |")
    cell = lambda row, c: "%.1f / %.1f" % row[c] if c in row else "-"  # noqa: E731
    ratio = lambda row, c: "%.2f" % (row[c][0] / row[ours_col][0]) if c in row else "-"  # noqa
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    for name, batch in CONFIGS:
        if wanted and name not in wanted:
            continue
        row = bench_config(opts, torch, MODELS, name, batch)
        rows.append(row)
        print("| %s | %s | %s | %s | %s | %s |"
              % (name, row["input"], " | ".join(cell(row, c) for c in cols),
                 ratio(row, "eager"), ratio(row, "graph"), ratio(row, "compile")), flush=True)
    print()
    if len(opts.gemm) > 1:
        print("(ratios against %s)" % ours_col)
    for row in rows:
        print("compile, %s b%d: modelc %s (parse to loaded kernels); torch.compile %s"
              % (row["model"], row["batch"],
                 ", ".join("%s %.0f ms" % (side, ms or 0)
                           for side, ms in row["modelc_compile_ms"].items()),
                 ", ".join("%s %.1f s" % kv for kv in row["compile_s"].items())))
    for row in rows:
        for side, report in row["run_reports"].items():
            if report:
                print("\nhow %s ran %s b%d:\n%s" % (side, row["model"], row["batch"],
                                                     report.rstrip()))
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
