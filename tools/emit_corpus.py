#!/usr/bin/env python3
"""Writes what `modelc emit` prints for a corpus of models, one file per model
and stage, so that a change to mlirgen or the lowering can be shown to leave
the IR byte-identical (or to change exactly what it meant to change):

    tools/emit_corpus.py build/bin/modelc /tmp/before
    ... change, rebuild ...
    tools/emit_corpus.py build/bin/modelc /tmp/after
    diff -r /tmp/before /tmp/after

The corpus: every model of every file under examples/ (zoo included) with its
default arguments, and every model a lit test compiles (`%modelc run|build|emit
FILE.mdl --model M --args ... --fn F --device D`), with that test's arguments.
Each file holds the exit status, stderr and stdout of one
`modelc emit --stage=mdl|linalg`, so errors are compared too.
"""

import argparse
import concurrent.futures
import hashlib
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAGES = ("mdl", "linalg")


def models_in(path):
    with open(path, encoding="utf-8") as f:
        return re.findall(r"^\s*model\s+(\w+)", f.read(), re.MULTILINE)


def example_jobs():
    jobs = []
    for dirpath, _, files in os.walk(os.path.join(ROOT, "examples")):
        for name in sorted(files):
            if name.endswith(".mdl"):
                path = os.path.join(dirpath, name)
                jobs += [(path, ("--model", m)) for m in models_in(path)]
    return jobs


def run_lines(test):
    """The RUN lines of a lit test, continuations joined."""
    lines, current = [], ""
    with open(test, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.search(r"RUN:(.*)$", line)
            if not m:
                continue
            text = m.group(1).rstrip()
            if text.endswith("\\"):
                current += text[:-1] + " "
                continue
            lines.append(current + text)
            current = ""
    return lines


def lit_jobs():
    lit = os.path.join(ROOT, "tests", "lit")
    subst = {"%examples": os.path.join(ROOT, "examples"), "%stdlib": os.path.join(ROOT, "stdlib")}
    kept = ("--model", "--args", "--fn", "--device", "--stdlib")
    jobs = []
    for dirpath, _, files in os.walk(lit):
        for name in sorted(files):
            if not name.endswith((".test", ".mdl")):
                continue
            test = os.path.join(dirpath, name)
            for line in run_lines(test):
                for command in line.split("|"):
                    m = re.search(r"%modelc\s+(run|build|emit)\s+(.*)", command)
                    if not m:
                        continue
                    text = m.group(2)
                    for key, value in subst.items():
                        text = text.replace(key, value)
                    text = text.replace("%S", dirpath).replace("%s", test)
                    try:
                        words = shlex.split(text)
                    except ValueError:
                        continue
                    source, options = None, []
                    i = 0
                    while i < len(words):
                        w = words[i]
                        if w.endswith(".mdl") and not w.startswith("-") and source is None:
                            source = w
                        elif w in kept and i + 1 < len(words):
                            options += [w, words[i + 1]]
                            i += 1
                        elif any(w.startswith(k + "=") for k in kept) or w.startswith("-I"):
                            options.append(w)
                        i += 1
                    if source and os.path.exists(source) and "--model" in options:
                        jobs.append((source, tuple(options)))
    return jobs


def emit(modelc, out, job, stage):
    source, options = job
    key = os.path.relpath(source, ROOT) + " " + " ".join(options) + " " + stage
    name = re.sub(r"[^A-Za-z0-9_.=,-]+", "_", key)
    if len(name) > 150:
        name = name[:120] + "-" + hashlib.sha1(key.encode()).hexdigest()[:12]
    result = subprocess.run(
        [modelc, "emit", source, "--stage=" + stage, "--color=never", *options],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
        f.write(f"# {key}\n# exit {result.returncode}\n")
        f.write(result.stderr.replace(ROOT, "<root>"))
        f.write(result.stdout.replace(ROOT, "<root>"))
    return result.returncode == 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modelc")
    parser.add_argument("out")
    parser.add_argument("-j", type=int, default=2)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    # One job per file and options, however a test spells the file's path.
    jobs = sorted({(os.path.normpath(s), o) for s, o in example_jobs() + lit_jobs()})
    work = [(job, stage) for job in jobs for stage in STAGES]
    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        ok = list(pool.map(lambda w: emit(os.path.abspath(args.modelc), args.out, *w), work))
    print(f"{len(jobs)} models, {len(work)} emits, {sum(ok)} compiled, "
          f"{len(work) - sum(ok)} errors (kept in their files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
