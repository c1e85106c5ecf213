#!/usr/bin/env python3
"""check_speed.py - how fast `modelc check` is on a large model file.

    check_speed.py [--modelc PATH] [--runs 15] [--lines 10000] [--file FILE]
                   [--max-median-ms MS]

Generates a clean ~10,000-line file with gen_large_model.py (unless --file
is given), runs `modelc check` on it once to warm the page cache, then
--runs times, and prints lines, median and min wall time, lines per second,
the median CPU time (user + sys: steadier than wall time on a busy machine)
and the peak RSS of the checker. With --max-median-ms, exits 1 when the
median is slower than that.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MODELC = os.path.join(os.path.dirname(HERE), "build", "bin", "modelc")


def run_once(modelc, path):
    """Returns (wall s, CPU s, peak RSS KiB) of one `modelc check PATH`."""
    with tempfile.TemporaryFile() as stderr:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [modelc, "check", "--color=never", path], stdout=subprocess.DEVNULL, stderr=stderr
        )
        # wait4 gives this child's own resource usage, peak RSS included.
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            stderr.seek(0)
            sys.stderr.write(stderr.read()[-4000:].decode(errors="replace"))
            raise SystemExit(
                "check_speed.py: `modelc check %s` exited with %d; the benchmark file must "
                "check clean" % (path, proc.returncode)
            )
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modelc", default=os.environ.get("MODELC", DEFAULT_MODELC))
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--lines", type=int, default=10000)
    parser.add_argument("--file", help="check this file instead of a generated one")
    parser.add_argument("--max-median-ms", type=float, help="fail when the median is slower")
    args = parser.parse_args()

    if not os.access(args.modelc, os.X_OK):
        raise SystemExit("check_speed.py: no modelc at %s (build it, or pass --modelc)" % args.modelc)

    with tempfile.TemporaryDirectory() as tmp:
        path = args.file
        if not path:
            path = os.path.join(tmp, "large.mdl")
            subprocess.run(
                [sys.executable, os.path.join(HERE, "gen_large_model.py"),
                 "--lines", str(args.lines), "-o", path],
                check=True,
            )
        with open(path, "rb") as f:
            lines = f.read().count(b"\n")

        run_once(args.modelc, path)  # warm-up: page cache, dynamic loader
        samples = [run_once(args.modelc, path) for _ in range(args.runs)]

    walls_ms = [wall * 1000 for wall, _, _ in samples]
    median_ms = statistics.median(walls_ms)
    min_ms = min(walls_ms)
    cpu_ms = statistics.median(cpu * 1000 for _, cpu, _ in samples)
    peak_rss_mib = max(rss for _, _, rss in samples) / 1024

    rows = [
        ("file", os.path.basename(path)),
        ("lines", "%d" % lines),
        ("runs", "%d" % args.runs),
        ("median wall", "%.1f ms" % median_ms),
        ("min wall", "%.1f ms" % min_ms),
        ("median CPU (user+sys)", "%.1f ms" % cpu_ms),
        ("lines/s (median)", "{:,.0f}".format(lines / (median_ms / 1000))),
        ("peak RSS", "%.1f MiB" % peak_rss_mib),
    ]
    width = max(len(name) for name, _ in rows)
    print("modelc check: %s" % args.modelc)
    for name, value in rows:
        print("  %-*s  %s" % (width, name, value))

    if args.max_median_ms is not None:
        verdict = "within" if median_ms <= args.max_median_ms else "OVER"
        print("  %-*s  %s the %.0f ms target" % (width, "result", verdict, args.max_median_ms))
        return 0 if median_ms <= args.max_median_ms else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
