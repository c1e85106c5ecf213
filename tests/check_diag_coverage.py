#!/usr/bin/env python3
"""check_diag_coverage.py - every diagnostic code needs a golden lit test.

    check_diag_coverage.py [--def PATH] [--tests DIR]

Reads the codes declared in compiler/diagnostics/Diagnostics.def and looks
for each `[CODE]` (as in `error[E0301]:`) on a positive FileCheck line (a
CHECK-style directive, not CHECK-NOT) in the golden tests under tests/lit/.
Exits 1 and lists the codes that have none.
"""

import argparse
import os
import re
import sys

SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIAG_ENTRY = re.compile(r'^\s*DIAG\(\s*(\w+)\s*,\s*"([A-Z]\d{4})"\s*,\s*(\w+)\s*,\s*"(.*)"\s*\)')
# A FileCheck directive with CHECK in its prefix: CHECK:, CHECK-NEXT:,
# JSON-CHECK-SAME:, ... but never a -NOT directive.
CHECK_DIRECTIVE = re.compile(r"\b([\w-]*CHECK[\w-]*):(.*)")
TEST_SUFFIXES = (".mdl", ".test")


def read_codes(def_path):
    codes = {}
    with open(def_path, encoding="utf-8") as f:
        for line in f:
            match = DIAG_ENTRY.match(line)
            if match:
                name, code, _severity, headline = match.groups()
                codes[code] = (name, headline)
    return codes


def tested_codes(tests_dir):
    found = {}
    code_ref = re.compile(r"\[([A-Z]\d{4})\]")
    for root, _dirs, files in os.walk(tests_dir):
        for name in sorted(files):
            if not name.endswith(TEST_SUFFIXES):
                continue
            path = os.path.join(root, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                for line in f:
                    directive = CHECK_DIRECTIVE.search(line)
                    if not directive or directive.group(1).endswith("-NOT"):
                        continue
                    for code in code_ref.findall(directive.group(2)):
                        found.setdefault(code, os.path.relpath(path, tests_dir))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--def",
        dest="def_path",
        default=os.path.join(SOURCE_ROOT, "compiler", "diagnostics", "Diagnostics.def"),
    )
    parser.add_argument("--tests", default=os.path.join(SOURCE_ROOT, "tests", "lit"))
    args = parser.parse_args()

    codes = read_codes(args.def_path)
    if not codes:
        print("error: no DIAG(...) entries found in %s" % args.def_path)
        return 1
    found = tested_codes(args.tests)
    missing = [code for code in sorted(codes) if code not in found]

    print("%d of %d diagnostic codes have a golden test under %s" % (
        len(codes) - len(missing), len(codes), os.path.relpath(args.tests, SOURCE_ROOT)))
    if not missing:
        return 0
    print("error: %d code(s) have no golden test (no `[CODE]` on a CHECK line):" % len(missing))
    for code in missing:
        name, headline = codes[code]
        print("  %s  %-24s %s" % (code, name, headline))
    return 1


if __name__ == "__main__":
    sys.exit(main())
