#!/usr/bin/env python3
"""apply_suggestions.py - every suggested edit parses, and the safe ones fix.

    apply_suggestions.py MODELC PATH...

Like rustfix's UI tests. For every .mdl file under PATH (files or folders,
`*.fixed.mdl` twins skipped), runs `modelc check --format=json` and, for each
suggestion that carries edits, applies them to a copy of the file and checks
the copy again:

- every suggestion (except `has-placeholders` ones, whose text the user must
  complete) must leave a file that parses: no syntax error (E00xx) appears;
- a `machine-applicable` suggestion must remove the diagnostic it belongs to
  and add none: after the edit, no (code, line) pair occurs more often than
  before, lines mapped back through the edits, and the fixed diagnostic's
  pair occurs less often.

Prints (on stdout) one line per suggestion (`ok` or `WRONG`) and then, for
each wrong one, the patched lines and what modelc said about them. Exits 1 when any
suggestion is wrong, 2 on a usage error.
"""

import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile


def check_json(modelc, path, import_dir):
    result = subprocess.run(
        [modelc, "check", "--format=json", "--color=never", "-I", import_dir, path],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
    )
    if result.returncode not in (0, 1):
        raise RuntimeError("modelc check %s exited %d: %s"
                           % (path, result.returncode, result.stderr.decode(errors="replace")))
    return json.loads(result.stdout.decode())["diagnostics"]


def primary_offset(diag, path):
    for label in diag["labels"]:
        if label["primary"] and os.path.abspath(label["file"]) == os.path.abspath(path):
            return label["start"]["offset"]
    return None


def line_of(text, offset):
    return text.count(b"\n", 0, offset) + 1


def to_original(offset, edits):
    """The offset in the unedited file of `offset` in the edited one."""
    shift = 0
    for start, end, replacement in edits:
        new_start = start + shift
        new_end = new_start + len(replacement)
        if offset < new_start:
            break
        if offset < new_end:
            return start  # inside the inserted text: blame the edit's place
        shift += len(replacement) - (end - start)
    return offset - shift


def keys(diags, path, text, edits=()):
    """(code, line in the original file) of each diagnostic, counted."""
    counted = collections.Counter()
    for d in diags:
        offset = primary_offset(d, path)
        line = 0 if offset is None else line_of(text, to_original(offset, edits))
        counted[(d["code"], line)] += 1
    return counted


def apply_edits(text, edits):
    out = []
    at = 0
    for start, end, replacement in edits:
        out.append(text[at:start])
        out.append(replacement)
        at = end
    out.append(text[at:])
    return b"".join(out)


def describe(diags):
    return "; ".join("%s line %s: %s" % (d["code"], d["labels"][0]["start"]["line"]
                                          if d["labels"] else "-", d["message"])
                     for d in diags) or "no diagnostics"


def check_file(modelc, path, scratch):
    """Yields (ok, line of report, details) for each suggestion of `path`."""
    with open(path, "rb") as f:
        text = f.read()
    import_dir = os.path.dirname(os.path.abspath(path))
    diags = check_json(modelc, path, import_dir)
    before = keys(diags, path, text)
    copy = os.path.join(scratch, os.path.basename(path))
    for diag in diags:
        key = (diag["code"], line_of(text, primary_offset(diag, path) or 0))
        for suggestion in diag["suggestions"]:
            if not suggestion["edits"] or suggestion["applicability"] == "has-placeholders":
                continue
            name = "%s %s %s: %s" % (os.path.basename(path), diag["code"],
                                     suggestion["applicability"], suggestion["message"])
            if any(os.path.abspath(e["file"]) != os.path.abspath(path)
                   for e in suggestion["edits"]):
                yield False, name, "an edit changes another file than the one checked"
                continue
            edits = sorted((e["start"]["offset"], e["end"]["offset"],
                            e["replacement"].encode()) for e in suggestion["edits"])
            if any(a[1] > b[0] for a, b in zip(edits, edits[1:])):
                yield False, name, "edits overlap"
                continue
            patched = apply_edits(text, edits)
            with open(copy, "wb") as f:
                f.write(patched)
            after_diags = check_json(modelc, copy, import_dir)
            for d in after_diags:
                for label in d["labels"]:
                    if os.path.abspath(label["file"]) == os.path.abspath(copy):
                        label["file"] = path
            problems = []
            syntax = [d for d in after_diags if d["code"].startswith("E00")]
            if syntax:
                problems.append("does not parse: " + describe(syntax))
            if suggestion["applicability"] == "machine-applicable":
                after = keys(after_diags, path, text, edits)
                added = [k for k in after if after[k] > before[k]]
                if after[key] >= before[key]:
                    problems.append("%s on line %d is still there" % key)
                if added:
                    problems.append("adds " + ", ".join("%s on line %d" % k for k in sorted(added)))
            if problems:
                lines = sorted({line_of(text, s) for s, _, _ in edits})
                patched_lines = patched.decode(errors="replace").split("\n")
                shown = "\n".join("    %d | %s" % (n, patched_lines[n - 1]) for n in lines
                                  if n - 1 < len(patched_lines))
                yield False, name, "%s\n%s\n    after: %s" % (
                    "; ".join(problems), shown, describe(after_diags))
            else:
                yield True, name, ""


def mdl_files(paths):
    for path in paths:
        if os.path.isfile(path):
            yield path
            continue
        for folder, _dirs, files in sorted(os.walk(path)):
            if os.path.basename(folder) == "Inputs":
                continue
            for name in sorted(files):
                if name.endswith(".mdl") and not name.endswith(".fixed.mdl"):
                    yield os.path.join(folder, name)


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    modelc, paths = argv[0], argv[1:]
    scratch = tempfile.mkdtemp(prefix="modelc-fixes-")
    wrong = []
    total = 0
    try:
        for path in mdl_files(paths):
            for ok, name, details in check_file(modelc, path, scratch):
                total += 1
                print("%s %s" % ("ok" if ok else "WRONG", name))
                if not ok:
                    wrong.append((name, details))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for name, details in wrong:
        print("\n--- %s\n    %s" % (name, details))
    print("%d suggestion(s) applied, %d wrong" % (total, len(wrong)))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
