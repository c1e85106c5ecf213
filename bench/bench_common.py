"""What both PyTorch benchmarks use: child processes that time on request,
medians, and the parity measure."""

import json
import subprocess
import sys
import time

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


def check_parity(outputs, reference, children, what, limit):
    """The normalised error of each side against the float64 reference; a
    side over `limit` stops the benchmark (its children closed first)."""
    errors = {side: normalised_error(out, reference) for side, out in outputs.items()}
    failed = {side: err for side, err in errors.items() if err > limit}
    if failed:
        for child in children:
            child.close()
        sys.exit("parity failure, %s: %s (normalised error against float64, limit %g)"
                 % (what, ", ".join("%s %.2e" % kv for kv in failed.items()), limit))
    return errors


def interleaved_samples(sides, per_call, rounds, block_ms, pause_s=0.0):
    """Per-call times of each side, timed in blocks of ~block_ms that rotate
    their order every round, so that load from the rest of the machine hits
    every side alike."""
    samples = {side: [] for side in sides}
    order = list(sides)
    for r in range(rounds):
        for side in order[r % len(order):] + order[:r % len(order)]:
            count = max(3, int(block_ms * 1000 / per_call[side]))
            samples[side] += sides[side](count)
            if pause_s:
                time.sleep(pause_s)
    return samples
