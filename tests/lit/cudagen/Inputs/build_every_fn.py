"""Builds every entry fn of one model in a .mdl file for cuda:0 with
`modelc build`, as PTX and CUBIN for sm_80 and sm_90, and runs ptxas on
each PTX file, so every kernel the cuda tests generate is proven by NVRTC
and ptxas, not only the examples'.

usage: build_every_fn.py MODELC PTXAS OUTDIR FILE.mdl MODEL [ARGS]
Prints one summary line; exits 1 with the failing command's output.
"""
import os
import re
import subprocess
import sys

ARCHS = ("sm_80", "sm_90")


def fns_of(path, model):
    """The fn names declared in `model`'s block (up to the next model)."""
    fns, inside = [], False
    for line in open(path, encoding="utf-8"):
        header = re.match(r"\s*model\s+(\w+)", line)
        if header:
            inside = header.group(1) == model
            continue
        match = re.match(r"\s*fn\s+(\w+)\s*\(", line)
        if inside and match:
            fns.append(match.group(1))
    return fns


def run(command):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write("failed: %s\n%s%s" % (" ".join(command), done.stdout, done.stderr))
        sys.exit(1)


def main():
    modelc, ptxas, outdir, path, model = sys.argv[1:6]
    args = sys.argv[6] if len(sys.argv) > 6 else ""
    fns = fns_of(path, model)
    if not fns:
        sys.exit("no fns found in model %s of %s" % (model, path))
    ptx_files = 0
    for fn in fns:
        for arch in ARCHS:
            for emit in ("ptx", "cubin"):
                out = os.path.join(outdir, model, fn, arch)
                command = [modelc, "build", path, "--model", model, "--fn", fn,
                           "--device", "cuda:0", "--emit=" + emit, "--gpu-arch=" + arch, "-o", out]
                if args:
                    command[5:5] = ["--args", args]
                run(command)
            for name in sorted(os.listdir(out)):
                if name.endswith(".ptx"):
                    run([ptxas, "-arch=" + arch, os.path.join(out, name),
                         "-o", os.path.join(out, name + ".ptxas.cubin")])
                    ptx_files += 1
    print("%s: %d fns built for %s; %d PTX files accepted by ptxas"
          % (model, len(fns), " and ".join(ARCHS), ptx_files))


main()
