#!/usr/bin/env python3
"""Differential testing of modelc against PyTorch (docs/difftest.md).

    difftest.py campaign [--seconds N | --programs N] [--seed S] [--batch K]
                         [--paths jit-cpu,aot-cpu,jit-cuda,aot-cuda] [--cuda emulate|driver]
                         [--modelc BIN] [--out DIR] [--max-ops N] [--mutants N]
    difftest.py replay CASE.json [--modelc BIN] [--paths ...]
    difftest.py minimize CASE.json --path P [--modelc BIN] -o OUT.test
    difftest.py show CASE.json            the .mdl program and its PyTorch twin's outputs

A campaign generates random well-typed programs (gen.py), writes many of them
as one model whose `forward` returns every program's results (one modelc
process per path per batch), runs each path and compares every result with
the float64 PyTorch twin and with the cpu JIT. A failing batch is split in
halves until the failing programs are alone. Every finding (a mismatch, a
crash, a program the checker rejects) is written to OUT/findings/ as a
replayable case.
"""
import argparse
import collections
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402
from model import FLOAT, HALF, INT, Program  # noqa: E402

PATHS = ["jit-cpu", "aot-cpu", "jit-cuda", "aot-cuda"]

# Tolerances per dtype, |actual - expected| <= atol * scale + rtol * |expected|
# elementwise, scale = max(1, max |expected|) of that result. f32 is tighter
# than NNSmith's rtol 1e-2 / atol 1e-3; f16 and bf16 are PyTorch's
# torch.testing defaults (rtol 1e-3 / 1.6e-2, atol 1e-5) widened by the
# ulps a chain of rounded ops may differ by (docs/difftest.md).
TOL = {"f64": (1e-9, 1e-9), "f32": (1e-4, 1e-5), "f16": (4e-3, 1e-3), "bf16": (3.2e-2, 8e-3)}


# ------------------------------------------------------------------ files

def write_npy(path, t):
    np.save(path, t.numpy() if not isinstance(t, np.ndarray) else t)


ST_DT = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.float64: "F64",
         torch.int32: "I32", torch.int64: "I64", torch.bool: "BOOL"}


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        raw = (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy().tobytes()
        header[name] = {"dtype": ST_DT[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def load_npy(path):
    return torch.from_numpy(np.load(path))


# ------------------------------------------------------------------ one batch on one path

class Batch:
    """Programs written as one model, with their inputs, weights and twins."""

    def __init__(self, progs, twins, inputs, envs, workdir):
        self.progs, self.twins, self.inputs, self.envs = progs, twins, inputs, envs
        self.dir = workdir
        os.makedirs(workdir, exist_ok=True)
        # the twin names state after the program's index in the batch
        self.twins = [gen.Twin(p, k) if tw.k != k else tw for k, (p, tw) in enumerate(zip(progs, twins))]
        self.text, self.in_ids, self.out_ids = gen.write_batch(progs)
        self.mdl = os.path.join(workdir, "batch.mdl")
        with open(self.mdl, "w") as f:
            f.write(self.text)
        state = {}
        for tw in self.twins:
            state.update(tw.state)
        self.weights = None
        if state:
            self.weights = os.path.join(workdir, "weights.safetensors")
            write_safetensors(self.weights, state)
        self.input_files = []
        for j, (k, nid) in enumerate(self.in_ids):
            ty = progs[k].node(nid).ty
            v = inputs[k][nid]
            v = v.to(torch.float32 if ty.dtype == "bf16" else gen.TORCH[ty.dtype])
            path = os.path.join(workdir, "in%d.npy" % j)
            write_npy(path, v)
            self.input_files.append(path)


# The library choices modelc measures per shape class when left on `auto`
# (docs/running.md): each batch pins one at random, so a campaign runs every
# kernel family and spends no time measuring.
GEMMS = ["onednn-matmul", "onednn-sgemm", "openblas", "tiles", "loops"]
CONVS = ["onednn", "nChw16c", "nChw8c", "winograd", "rows"]
ENV = dict(os.environ)


def pin_libraries(rng):
    ENV["MODELC_GEMM"] = rng.choice(GEMMS)
    ENV["MODELC_CONV_LAYOUT"] = rng.choice(CONVS)
    return "MODELC_GEMM=%s MODELC_CONV_LAYOUT=%s" % (ENV["MODELC_GEMM"], ENV["MODELC_CONV_LAYOUT"])


def run(cmd, timeout):
    t0 = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, env=ENV)
        return p.returncode, p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace"), time.time() - t0
    except subprocess.TimeoutExpired:
        return "timeout", "timed out after %ds" % timeout, time.time() - t0


def run_path(args, batch, path):
    """Runs one path; returns (None, outputs) or (failure kind, message)."""
    m = args.modelc
    d = batch.dir
    outs = [os.path.join(d, "%s.out%d.npy" % (path, j)) for j in range(len(batch.out_ids))]
    for o in outs:
        if os.path.exists(o):
            os.remove(o)
    dev = "cpu" if path.endswith("cpu") else "cuda:0"
    cuda = [] if dev == "cpu" else ["--cuda=%s" % args.cuda]
    tail = (["--weights", batch.weights] if batch.weights else [])
    for f in batch.input_files:
        tail += ["--input", f]
    for o in outs:
        tail += ["--output", o]
    steps = []
    if path.startswith("jit"):
        steps.append(("run", [m, "run", batch.mdl, "--model", "Batch", "--device", dev] + cuda + tail))
    else:
        art = os.path.join(d, "%s.mdlc" % path)
        build = [m, "build", batch.mdl, "--model", "Batch", "--device", dev, "-o", art]
        if dev != "cpu":
            build.append("--gpu-arch=%s" % args.gpu_arch)
        steps.append(("build", build))
        steps.append(("run", [m, "run", art] + cuda + tail))
    for what, cmd in steps:
        rc, text, _ = run(cmd, args.timeout)
        if rc != 0:
            env = "MODELC_GEMM=%s MODELC_CONV_LAYOUT=%s " % (ENV.get("MODELC_GEMM"), ENV.get("MODELC_CONV_LAYOUT"))
            return classify(rc, text, what), "%s: exit %s\n$ %s%s\n%s" % (what, rc, env, " ".join(cmd), text[-4000:])
    return None, [load_npy(o) for o in outs]


def classify(rc, text, what):
    if rc == "timeout":
        return "timeout"
    if isinstance(rc, int) and (rc < 0 or rc > 2):
        return "crash"
    if re.search(r"LLVM ERROR|Assertion|Segmentation|AddressSanitizer|runtime error:|Aborted|stack dump",
                 text):
        return "crash"
    if "E0601" in text:
        return "unsupported"
    if re.search(r"error\[E0[0-5]", text):
        return "rejected"
    return "error"


# ------------------------------------------------------------------ comparison

def compare(actual, expected, dtype):
    """(ok, description) for one result."""
    if tuple(actual.shape) != tuple(expected.shape):
        return False, "shape %s, expected %s" % (list(actual.shape), list(expected.shape))
    if dtype in INT or dtype == "bool":
        a = actual.to(torch.int64)
        e = expected.to(torch.int64)
        bad = (a != e)
        if bool(bad.any()):
            i = int(bad.reshape(-1).nonzero()[0])
            return False, "%d of %d elements differ; first at flat %d: %d, expected %d" % (
                int(bad.sum()), bad.numel(), i, int(a.reshape(-1)[i]), int(e.reshape(-1)[i]))
        return True, ""
    a = actual.to(torch.float64)
    e = expected.to(torch.float64)
    rtol, atol = TOL[dtype]
    scale = max(1.0, float(e.abs().max())) if e.numel() else 1.0
    fin = torch.isfinite(e)
    if not bool((torch.isfinite(a) == fin).all()):
        return False, "non-finite values differ"
    err = (a - e).abs()
    err = torch.where(fin, err, torch.zeros_like(err))
    bound = atol * scale + rtol * e.abs()
    bad = err > bound
    if bool(bad.any()):
        i = int((err - bound).reshape(-1).argmax())
        return False, "%d of %d elements beyond rtol %g atol %g*%g; worst at flat %d: %r, expected %r (|diff| %.3g)" % (
            int(bad.sum()), bad.numel(), rtol, atol, scale, i, float(a.reshape(-1)[i]), float(e.reshape(-1)[i]),
            float(err.reshape(-1)[i]))
    return True, ""


def out_dtype(prog, nid):
    t = prog.node(nid).ty
    return t.dtype


def check_outputs(batch, path, outs, ref_outs=None):
    """Mismatches [(program index, description)] of one path's results
    against the twin (and, for results the twin cannot compute, the cpu JIT's)."""
    bad = collections.defaultdict(list)
    for j, (k, nid) in enumerate(batch.out_ids):
        prog = batch.progs[k]
        val, exact, unknown = batch.envs[k][nid]
        dt = out_dtype(prog, nid)
        expected = val
        if dt == "bf16":
            expected = val
        if unknown:
            if ref_outs is None:
                continue
            expected = ref_outs[j].to(torch.float64 if dt in FLOAT else torch.int64)
        ok, why = compare(outs[j], expected, dt)
        if not ok:
            bad[k].append("result %d (node %d, %s %s): %s" % (prog.outputs.index(nid), nid, dt,
                                                              list(prog.node(nid).ty.shape), why))
    return bad


# ------------------------------------------------------------------ the checker as an oracle

def check_clean(args, batch):
    rc, text, _ = run([args.modelc, "check", "--color=never", batch.mdl], args.timeout)
    return rc, text


MUTABLE = {"binary", "compare", "minmax2", "where", "matmul", "concat", "logic"}


def mutate(rng, prog, k):
    """One device or dtype mistake in a program: an input leaf that one
    operator's operand reads is moved to the other device or given another
    dtype. Returns (program, expected code, node id whose line must carry it)."""
    uses = collections.Counter(i for n in prog.nodes for i in n.ins)
    cands = []
    for n in prog.nodes:
        if n.kind != "op" or n.op not in MUTABLE:
            continue
        for pos, i in enumerate(n.ins):
            leaf = prog.node(i)
            if leaf.kind != "input" or uses[i] != 1 or leaf.ty.dtype == "bf16":
                continue
            others = [prog.node(j).ty for q, j in enumerate(n.ins) if q != pos]
            if not others:
                continue
            cands.append((n, i))
    if not cands:
        return None
    n, i = rng.choice(cands)
    m = Program.from_json(prog.to_json())
    leaf = m.node(i)
    if rng.random() < 0.5:
        leaf.ty.dev = "cpu" if leaf.ty.dev == "D" else "D"
        code = "E0301"
    else:
        swap = {"f32": "f64", "f64": "f32", "f16": "f32", "i32": "i64", "i64": "i32", "bool": None}
        if not swap.get(leaf.ty.dtype):
            return None
        leaf.ty.dtype = swap[leaf.ty.dtype]
        code = "E0201"
    return m, code, n.id


def check_mutant(args, workdir, prog, code, nid):
    text, _, _ = gen.write_batch([prog])
    path = os.path.join(workdir, "mutant.mdl")
    with open(path, "w") as f:
        f.write(text)
    line = 1 + next(i for i, l in enumerate(text.split("\n")) if l.strip().startswith("let p0_n%d =" % nid))
    rc, out, _ = run([args.modelc, "check", "--color=never", path], args.timeout)
    first = re.search(r"error\[(E\d+)\][^\n]*\n\s*--> [^:]+:(\d+):", out)
    if rc == 1 and first and first.group(1) == code and int(first.group(2)) == line:
        return True, ""
    # a matmul or concat of mismatched operands may legitimately report the operand's own code
    return False, "expected %s on line %d, got exit %s:\n%s" % (code, line, rc, out[-3000:])


# ------------------------------------------------------------------ the campaign

class Stats:
    def __init__(self):
        self.programs = 0
        self.rejected_inputs = 0
        self.compared = 0
        self.path_runs = collections.Counter()
        self.path_time = collections.Counter()
        self.findings = collections.Counter()
        self.coverage = collections.Counter()
        self.mutants = 0
        self.mutants_ok = 0
        self.t0 = time.time()


def save_case(args, prog, kind, path, detail):
    os.makedirs(os.path.join(args.out, "findings"), exist_ok=True)
    name = "%s-%s-%d" % (kind, path, prog.seed)
    case = {"program": prog.to_json(), "kind": kind, "path": path, "detail": detail}
    with open(os.path.join(args.out, "findings", name + ".json"), "w") as f:
        json.dump(case, f, indent=1)
    return name


def make_program(rng, args, cov):
    while True:
        p = gen.generate(rng, max_ops=args.max_ops, coverage=cov)
        if p is not None:
            return p


def prepare(progs, stats, args_out=None):
    """Twins and finite inputs; programs without such inputs are dropped."""
    keep, twins, inputs, envs = [], [], [], []
    for p in progs:
        try:
            tw = gen.Twin(p, len(keep))
            x, env = gen.finite_inputs(tw)
        except gen.Resample:
            stats.rejected_inputs += 1
            continue
        except Exception as e:  # PyTorch cannot run the twin: a generator bug, kept as a finding
            stats.findings["twin"] += 1
            if args_out:
                save_case(args_out, p, "twin", "torch", "%s: %s" % (type(e).__name__, e))
            continue
        keep.append(p)
        twins.append(tw)
        inputs.append(x)
        envs.append(env)
    return keep, twins, inputs, envs


def run_group(args, stats, progs, twins, inputs, envs, path, workdir, results, depth=0):
    """Runs `path` over the programs, splitting the group where it fails.
    results[seed][path] = outputs list, or a failure."""
    batch = Batch(progs, twins, inputs, envs, os.path.join(workdir, "%s-%d-%d" % (path, depth, progs[0].seed)))
    stats.path_runs[path] += 1
    t0 = time.time()
    kind, res = run_path(args, batch, path)
    stats.path_time[path] += time.time() - t0
    if kind is None:
        per = collections.defaultdict(list)
        for j, (k, nid) in enumerate(batch.out_ids):
            per[k].append(res[j])
        for k, p in enumerate(progs):
            results[p.seed][path] = (batch, k, per[k])
        if not args.keep:
            shutil.rmtree(batch.dir, ignore_errors=True)
        return
    if args.verbose:
        print("  %s failed on %d programs (%s), splitting: %s" % (path, len(progs), kind, res[-300:]), flush=True)
    if len(progs) == 1:
        results[progs[0].seed][path] = (kind, res)
        return
    shutil.rmtree(batch.dir, ignore_errors=True)
    h = len(progs) // 2
    for part in (slice(0, h), slice(h, None)):
        run_group(args, stats, progs[part], twins[part], inputs[part], envs[part], path, workdir, results, depth + 1)


def single(prog, k=0):
    return prog


def evaluate(args, stats, progs, envs, results, log):
    for k, p in enumerate(progs):
        r = results[p.seed]
        ref = None
        jc = r.get("jit-cpu")
        if jc and not isinstance(jc[0], str):
            ref = jc[2]
        counted = False
        for path in args.paths:
            got = r.get(path)
            if got is None:
                continue
            if isinstance(got[0], str):
                kind, msg = got
                if kind == "unsupported":
                    stats.findings["unsupported"] += 1
                    continue
                name = save_case(args, p, kind, path, msg)
                stats.findings[kind] += 1
                log("%s on %s: %s\n%s" % (kind, path, name, msg[-1500:]))
                continue
            _, kk, outs = got
            fake = Batch.__new__(Batch)
            fake.progs, fake.envs = [p], [envs[k]]
            fake.out_ids = [(0, o) for o in p.outputs]
            bad = check_outputs(fake, path, outs, ref)
            stats.compared += 1
            counted = True
            if bad:
                msg = "\n".join(bad[0])
                name = save_case(args, p, "mismatch", path, msg)
                stats.findings["mismatch"] += 1
                log("mismatch on %s: %s\n%s" % (path, name, msg))
        if counted:
            for n in p.ops():
                for c in gen.BY_NAME[n.op].covered(n.attrs):
                    stats.coverage[c] += 1


def campaign(args):
    rng = random.Random(args.seed)
    stats = Stats()
    os.makedirs(args.out, exist_ok=True)
    logf = open(os.path.join(args.out, "log.txt"), "a")

    def log(msg):
        logf.write(msg + "\n")
        logf.flush()
        if args.verbose:
            print(msg, flush=True)

    cov = {}
    deadline = stats.t0 + args.seconds if args.seconds else None
    workdir = tempfile.mkdtemp(prefix="difftest-", dir=args.out)
    nb = 0
    while True:
        if deadline and time.time() > deadline:
            break
        if args.programs and stats.programs >= args.programs:
            break
        n = args.batch if not args.programs else min(args.batch, args.programs - stats.programs)
        progs = [make_program(rng, args, cov) for _ in range(n)]
        pin_libraries(rng)
        b = rng.choice([1, 2, 3])  # one size of `B` for the whole batch
        for p in progs:
            p.b = b
        stats.programs += len(progs)
        progs, twins, inputs, envs = prepare(progs, stats, args)
        if not progs:
            continue
        nb += 1
        # the checker as an oracle: generated programs check clean ...
        batch = Batch(progs, twins, inputs, envs, os.path.join(workdir, "check"))
        rc, text = check_clean(args, batch)
        if rc != 0 or "warning" in text:
            # find the programs the checker rejects, one by one
            for k, p in enumerate(progs):
                b1 = Batch([p], [twins[k]], [inputs[k]], [envs[k]], os.path.join(workdir, "check1"))
                rc1, t1 = check_clean(args, b1)
                if rc1 != 0 or "warning" in t1:
                    kind = "crash" if classify(rc1, t1, "check") == "crash" else "check"
                    stats.findings[kind] += 1
                    log("%s: %s\n%s" % (kind, save_case(args, p, kind, "check", t1[-3000:]), t1[-1500:]))
            good = [k for k, p in enumerate(progs)
                    if run([args.modelc, "check", "--color=never",
                            Batch([p], [twins[k]], [inputs[k]], [envs[k]], os.path.join(workdir, "c2")).mdl],
                           args.timeout)[0] == 0]
            progs = [progs[k] for k in good]
            twins = [twins[k] for k in good]
            inputs = [inputs[k] for k in good]
            envs = [envs[k] for k in good]
            if not progs:
                continue
        # ... and one device or dtype mistake is rejected at its line.
        for _ in range(args.mutants):
            k = rng.randrange(len(progs))
            mut = mutate(rng, progs[k], k)
            if mut:
                stats.mutants += 1
                ok, why = check_mutant(args, workdir, *mut)
                if ok:
                    stats.mutants_ok += 1
                else:
                    stats.findings["checker-mutant"] += 1
                    log("checker-mutant: %s\n%s" % (save_case(args, mut[0], "mutant", "check", why), why[-1500:]))
        results = collections.defaultdict(dict)
        for path in args.paths:
            run_group(args, stats, progs, twins, inputs, envs, path, workdir, results)
        evaluate(args, stats, progs, envs, results, log)
        if args.verbose or nb % 10 == 0:
            print(summary_line(stats), flush=True)
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    text = summary(args, stats)
    print(text)
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write(text + "\n")
    return 1 if any(stats.findings[k] for k in stats.findings if k != "unsupported") else 0


def summary_line(s):
    return "[%5.0fs] %d programs, %d compared, findings %s" % (time.time() - s.t0, s.programs, s.compared,
                                                                dict(s.findings))


def summary(args, s):
    covered = [c for c in gen.ALL_COVERS if s.coverage.get(c)]
    missing = [c for c in gen.ALL_COVERS if not s.coverage.get(c)]
    lines = [
        "difftest: seed %d, paths %s (cuda: %s)" % (args.seed, ",".join(args.paths), args.cuda),
        "programs generated:   %d (%d dropped: no finite inputs found)" % (s.programs, s.rejected_inputs),
        "ops covered:          %d of %d (built-ins, operators, std.nn layers)" % (len(covered), len(gen.ALL_COVERS)),
        "paths compared:       %d program runs (%s modelc runs: %s)" % (
            s.compared, sum(s.path_runs.values()),
            ", ".join("%s %d in %.0f s" % (k, v, s.path_time[k]) for k, v in sorted(s.path_runs.items()))),
        "checker mutants:      %d rejected at the right line of %d" % (s.mutants_ok, s.mutants),
        "mismatches:           %d" % s.findings["mismatch"],
        "crashes:              %d (timeouts %d)" % (s.findings["crash"], s.findings["timeout"]),
        "other findings:       %s" % ({k: v for k, v in s.findings.items()
                                        if k not in ("mismatch", "crash", "timeout", "unsupported")} or "none"),
        "unsupported (E0601):  %d" % s.findings["unsupported"],
        "time:                 %.0f s" % (time.time() - s.t0),
    ]
    if missing:
        lines.append("not covered:          %s" % " ".join(missing))
    return "\n".join(lines)


# ------------------------------------------------------------------ one case: replay, minimize

def load_case(path):
    with open(path) as f:
        j = json.load(f)
    return Program.from_json(j["program"] if "program" in j else j), j


def outcome(args, prog, paths, workdir):
    """{path: None (agrees) | description} for one program."""
    stats = Stats()
    progs, twins, inputs, envs = prepare([prog], stats)
    if not progs:
        return {p: "no finite inputs" for p in paths}
    results = collections.defaultdict(dict)
    res = {}
    for path in ["jit-cpu"] + [p for p in paths if p != "jit-cpu"]:
        run_group(args, stats, progs, twins, inputs, envs, path, workdir, results)
    r = results[prog.seed]
    ref = None if isinstance(r["jit-cpu"][0], str) else r["jit-cpu"][2]
    for path in paths:
        got = r[path]
        if isinstance(got[0], str):
            res[path] = "%s: %s" % got
            continue
        fake = Batch.__new__(Batch)
        fake.progs, fake.envs, fake.out_ids = [prog], envs, [(0, o) for o in prog.outputs]
        bad = check_outputs(fake, path, got[2], ref)
        res[path] = "mismatch: " + "\n".join(bad[0]) if bad else None
    return res


def replay(args):
    prog, _ = load_case(args.case)
    workdir = tempfile.mkdtemp(prefix="difftest-replay-")
    res = outcome(args, prog, args.paths, workdir)
    shutil.rmtree(workdir, ignore_errors=True)
    failed = 0
    for path in args.paths:
        print("%s: %s" % (path, "agrees" if res[path] is None else res[path]))
        failed += res[path] is not None
    print("PASS" if not failed else "FAIL")
    return 1 if failed else 0


def cut(prog, nid, env):
    """The program with node nid replaced by an input holding the twin's value."""
    m = Program.from_json(prog.to_json())
    n = m.node(nid)
    n.kind, n.op, n.ins, n.attrs = "input", None, [], {}
    n.init = {"value": env[nid][0].tolist()}
    return m.prune()


def minimize(args):
    """Delta debugging: drop results, cut ops into inputs (holding the values
    the twin computed for them), shrink the batch dim, while the failure on
    --path stays of the same kind."""
    prog, case = load_case(args.case)
    workdir = tempfile.mkdtemp(prefix="difftest-min-")
    paths = [args.path]

    def kind_of(p):
        r = outcome(args, p, paths, workdir)[args.path]
        return None if r is None else r.split(":")[0]

    want = kind_of(prog)
    if want is None:
        print("the case does not fail on %s" % args.path)
        return 1
    print("minimizing a %s on %s: %d ops" % (want, args.path, len(prog.ops())))
    changed = True
    while changed:
        changed = False
        if len(prog.outputs) > 1:
            for o in list(prog.outputs):
                cand = Program.from_json(prog.to_json())
                cand.outputs = [x for x in cand.outputs if x != o]
                if kind_of(cand.prune()) == want:
                    prog, changed = cand, True
                    break
        stats = Stats()
        _, twins, inputs, envs = prepare([prog], stats)
        if not envs:
            break
        for n in list(prog.ops()):
            if n.id in prog.outputs:
                continue
            cand = cut(prog, n.id, envs[0])
            if len(cand.ops()) < len(prog.ops()) and kind_of(cand) == want:
                prog, changed = cand, True
                print("  cut node %d: %d ops" % (n.id, len(prog.ops())))
                break
        if not changed and prog.b > 1:
            cand = Program.from_json(prog.to_json())
            cand.b = 1
            if kind_of(cand) == want:
                prog, changed = cand, True
    shutil.rmtree(workdir, ignore_errors=True)
    text, _, _ = gen.write_batch([prog])
    case = {"program": prog.to_json(), "kind": want, "path": args.path}
    base = os.path.splitext(args.output)[0]
    with open(base + ".json", "w") as f:
        json.dump(case, f, indent=1)
    name = os.path.basename(base)
    paths = ",".join(sorted(set(["jit-cpu", args.path])))
    test = ["# Found by tools/difftest.sh (%s on %s), minimized by difftest.py minimize." % (want, args.path),
            "# The program, as generated:"]
    test += [("#   " + l).rstrip() for l in text.rstrip("\n").split("\n")]
    test += ["RUN: %%python %%difftest replay %%S/%s.json --modelc %%modelc --paths %s | FileCheck %%s" % (name, paths),
             "CHECK: PASS"]
    with open(args.output, "w") as f:
        f.write("\n".join(test) + "\n")
    print("wrote %s and %s.json (%d ops)" % (args.output, base, len(prog.ops())))
    return 0


def show(args):
    prog, _ = load_case(args.case)
    text, _, _ = gen.write_batch([prog])
    print(text)
    tw = gen.Twin(prog)
    inputs, env = gen.finite_inputs(tw)
    for o in prog.outputs:
        print("result node %d: %s" % (o, env[o][0]))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    def common(p):
        p.add_argument("--modelc", default=os.environ.get("MODELC", os.path.join(root, "build", "bin", "modelc")))
        p.add_argument("--paths", default=",".join(PATHS))
        p.add_argument("--cuda", default="emulate", choices=["emulate", "driver"],
                       help="cuda:0 on the CPU emulator (default) or on a real GPU through the driver")
        p.add_argument("--gpu-arch", default="sm_90")
        p.add_argument("--timeout", type=int, default=600)
        p.add_argument("--keep", action="store_true", help="keep every batch's files")
        p.add_argument("--verbose", "-v", action="store_true")

    c = sub.add_parser("campaign")
    common(c)
    c.add_argument("--seconds", type=float, default=0)
    c.add_argument("--programs", type=int, default=0)
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("--batch", type=int, default=24)
    c.add_argument("--max-ops", type=int, default=20)
    c.add_argument("--mutants", type=int, default=2, help="checker mutants per batch")
    c.add_argument("--out", default="difftest-out")
    r = sub.add_parser("replay")
    common(r)
    r.add_argument("case")
    m = sub.add_parser("minimize")
    common(m)
    m.add_argument("case")
    m.add_argument("--path", required=True)
    m.add_argument("-o", "--output", required=True)
    s = sub.add_parser("show")
    s.add_argument("case")
    args = ap.parse_args()
    if hasattr(args, "paths"):
        args.paths = [p for p in args.paths.split(",") if p]
        if hasattr(args, "path") and args.cmd == "minimize":
            pass
    torch.set_num_threads(1)
    return {"campaign": campaign, "replay": replay, "minimize": minimize, "show": show}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
