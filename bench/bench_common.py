"""What both PyTorch benchmarks use: child processes that time on request,
medians, and the parity measure."""

import json
import subprocess

import numpy as np


class ChildSide:
    """A child process that answers `<command> N` with N times in ns."""

    def __init__(self, cmd, env, command="time"):
        self.command = command
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=env, text=True)
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("failed to start: " + " ".join(cmd))
        self.info = json.loads(line)

    def time(self, count):
        self.proc.stdin.write("%s %d\n" % (self.command, count))
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("a benchmark child stopped")
        return [int(t) / 1000.0 for t in line.split()]

    def close(self):
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        self.proc.wait()


def median(values):
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def normalised_error(got, reference):
    got = np.asarray(got, dtype=np.float64).reshape(reference.shape)
    return float(np.max(np.abs(got - reference)) / max(1e-30, np.max(np.abs(reference))))
