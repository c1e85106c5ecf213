#!/usr/bin/env python3
"""check_examples.py - every example does what it is there to show.

    check_examples.py MODELC EXAMPLES_DIR

Under EXAMPLES_DIR, `device-bugs/NAME.mdl` files are bugs: `modelc check
-W error` must reject them (exit 1: an error, or a warning such as a
redundant transfer); every other .mdl file, `*.fixed.mdl` twins included,
must check clean (`modelc check -W error` exits 0: no warning either). Prints one line per file and fails
listing the files that did otherwise.
"""

import os
import subprocess
import sys


def expected_exit(relative):
    parts = relative.split(os.sep)
    is_bug = "device-bugs" in parts[:-1] and not parts[-1].endswith(".fixed.mdl")
    return 1 if is_bug else 0


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    modelc, root = argv
    failures = []
    for folder, _dirs, files in sorted(os.walk(root)):
        for name in sorted(files):
            if not name.endswith(".mdl"):
                continue
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root)
            want = expected_exit(relative)
            result = subprocess.run(
                [modelc, "check", "--color=never", "-W", "error", path],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=20,
            )
            verdict = "ok" if result.returncode == want else "WRONG"
            print("%s %s (exit %d, expected %d)" % (verdict, relative, result.returncode, want))
            if result.returncode != want:
                failures.append((relative, result.stderr.decode(errors="replace")))
    for relative, stderr in failures:
        sys.stderr.write("\n--- %s\n%s" % (relative, stderr))
    if failures:
        sys.stderr.write("\n%d example(s) do not check as they should\n" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
