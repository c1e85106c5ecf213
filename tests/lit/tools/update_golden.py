#!/usr/bin/env python3
"""update_golden.py - write the exact expected output into golden .mdl tests.

    update_golden.py [--modelc PATH] [--dry-run] FILE.mdl...

For each file, runs `modelc check --color=never FILE` (with the extra
arguments of an `// ARGS: ...` line, if any) and replaces the file's
trailing block of `// CHECK` lines with the output, line for line:

    // CHECK:error[E0301]: operands of `+` are on different devices
    // CHECK-NEXT: --> {{.*}}bias.mdl:8:26
    // CHECK-EMPTY:

The file's own path becomes `{{.*}}NAME.mdl`; `{{` and `[[` in the output
are escaped. A file without a RUN line gets the standard one:

    // RUN: not %modelc check --color=never %s 2>&1 | FileCheck %s --strict-whitespace --match-full-lines

(without `not` when the file checks clean). CHECK lines go at the end of
the file so that they never move the source lines the output quotes. Review
the diff before committing: this writes what modelc does, not what it should.
"""

import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
CHECK_LINE = re.compile(r"^\s*//\s*CHECK(-NEXT|-EMPTY|-SAME|-NOT|-DAG)?:")
RUN_LINE = re.compile(r"^\s*//\s*RUN:")
ARGS_LINE = re.compile(r"^\s*//\s*ARGS:(.*)$")
FILECHECK_FLAGS = "--strict-whitespace --match-full-lines"


def escape(text):
    return text.replace("{{", "{{\\{\\{}}").replace("[[", "{{\\[\\[}}")


def check_lines(output, path):
    abs_path = os.path.abspath(path)
    stdlib = os.path.join(SOURCE_ROOT, "stdlib") + os.sep
    lines = []
    for i, line in enumerate(output.splitlines()):
        pattern = escape(line)
        # Paths depend on where the tree is; the file name does not.
        for full in sorted({abs_path, path}, key=len, reverse=True):
            if escape(full) in pattern:
                pattern = pattern.replace(escape(full), "{{.*}}" + os.path.basename(path))
                break
        pattern = pattern.replace(escape(stdlib), "{{.*}}stdlib/")
        if not line:
            lines.append("// CHECK-EMPTY:")
        elif i == 0:
            lines.append("// CHECK:" + pattern)
        else:
            lines.append("// CHECK-NEXT:" + pattern)
    return lines


def run_modelc(modelc, path, extra):
    return subprocess.run(
        [modelc, "check", "--color=never"] + extra + [path],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=dict(os.environ, NO_COLOR="1", MODELC_STDLIB=os.path.join(SOURCE_ROOT, "stdlib")),
    )


def update(path, modelc, dry_run):
    with open(path, encoding="utf-8") as f:
        source = f.read().splitlines()
    extra = []
    for line in source:
        match = ARGS_LINE.match(line)
        if match:
            extra = match.group(1).split()

    # The source without its CHECK lines, and with a RUN line: written back
    # first, so the output quotes the lines where they will finally be.
    body = [line for line in source if not CHECK_LINE.match(line)]
    while body and not body[-1].strip():
        body.pop()
    if not any(RUN_LINE.match(line) for line in body):
        command = "%modelc check --color=never" + "".join(" " + a for a in extra)
        if run_modelc(modelc, path, extra).returncode:
            command = "not " + command
        body.insert(0, "// RUN: %s %%s 2>&1 | FileCheck %%s %s" % (command, FILECHECK_FLAGS))
    target = path
    if dry_run:
        target = path + ".update-golden.tmp"
    with open(target, "w", encoding="utf-8") as f:
        f.write("\n".join(body) + "\n")
    result = run_modelc(modelc, target, extra)
    if dry_run:
        os.remove(target)
    if result.returncode not in (0, 1):
        sys.stderr.write("%s: modelc exited with %d, not updated\n" % (path, result.returncode))
        return False

    output = result.stderr.decode("utf-8", errors="replace")
    text = "\n".join(body + [""] + check_lines(output, target)) + "\n"
    if dry_run:
        sys.stdout.write(text.replace(os.path.basename(target), os.path.basename(path)))
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--modelc",
        default=os.environ.get("MODELC", os.path.join(SOURCE_ROOT, "build", "bin", "modelc")),
    )
    parser.add_argument("--dry-run", action="store_true", help="print instead of writing")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    ok = all([update(path, args.modelc, args.dry_run) for path in args.files])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
