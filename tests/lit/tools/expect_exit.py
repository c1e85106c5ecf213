#!/usr/bin/env python3
"""expect_exit.py - run a command and require an exact exit code.

    expect_exit.py CODE [--timeout SECONDS] COMMAND [ARG...]

Standard input, output and error pass through, so the output can still be
piped into FileCheck. Fails (exit 1, with a message on stderr) when COMMAND
exits with another code, is killed by a signal (a crash), or runs longer
than the timeout (default 20 s; a hang). This is stricter than `not`, which
accepts any non-zero code.
"""

import signal
import subprocess
import sys


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    expected = int(argv[0])
    rest = argv[1:]
    timeout = 20.0
    if rest[0] == "--timeout":
        timeout = float(rest[1])
        rest = rest[2:]
    if not rest:
        sys.stderr.write("expect_exit.py: no command given\n")
        return 2
    try:
        code = subprocess.run(rest, timeout=timeout).returncode
    except OSError as error:
        sys.stderr.write("expect_exit.py: cannot run %s: %s\n" % (rest[0], error.strerror))
        return 1
    except subprocess.TimeoutExpired:
        sys.stderr.write("expect_exit.py: %s did not finish within %g s\n" % (rest[0], timeout))
        return 1
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "signal %d" % -code
        sys.stderr.write("expect_exit.py: %s crashed (%s)\n" % (rest[0], name))
        return 1
    if code != expected:
        sys.stderr.write(
            "expect_exit.py: %s exited with %d, expected %d\n" % (rest[0], code, expected)
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
