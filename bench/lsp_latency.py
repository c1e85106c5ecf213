#!/usr/bin/env python3
"""lsp_latency.py - how fast `modelc lsp` answers edits with diagnostics.

    lsp_latency.py [--modelc build/bin/modelc] [--lines 1000] [--edits 200]
                   [--max-p95-ms 50] [--log]

Generates a clean file of about --lines lines (gen_large_model.py), opens it
in `modelc lsp` over stdio (Content-Length framing, as an editor does), and
plays a scripted session of --edits incremental didChange notifications:
typing a comment one character at a time, and appending `.to(cpu)` to a
`return` (a device error) and deleting it again. After each edit it waits
for the textDocument/publishDiagnostics of that version and records the time
from sending the change to receiving them. Prints the median and p95; with
--max-p95-ms the exit status says whether p95 met the target. With --log
the server logs each check's wall and CPU time, and the CPU figures are
printed too: on a loaded machine they tell the check's own cost apart from
time spent waiting for a core.
"""

import argparse
import json
import os
import queue
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


class LspClient:
    """A minimal LSP client over a child process's stdin/stdout."""

    def __init__(self, argv, stderr=None):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=stderr)
        self.messages = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.messages.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            body = out.read(length)
            self.messages.put((time.perf_counter(), json.loads(body)))

    def send(self, message):
        data = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.proc.stdin.flush()
        return time.perf_counter()

    def notify(self, method, params):
        return self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.wait_for(lambda m: m.get("id") == self.next_id)[1]

    def wait_for(self, predicate, timeout=60):
        deadline = time.perf_counter() + timeout
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError("no matching message within %d s" % timeout)
            item = self.messages.get(timeout=left)
            if item is None:
                raise EOFError("the server exited (status %s)" % self.proc.wait())
            if predicate(item[1]):
                return item

    def close(self):
        self.request("shutdown", None)
        self.notify("exit", None)
        return self.proc.wait(timeout=30)


def diagnostics_of(uri, version):
    def match(message):
        params = message.get("params") or {}
        return (message.get("method") == "textDocument/publishDiagnostics"
                and params.get("uri") == uri and params.get("version") == version)
    return match


def scripted_edits(lines, count):
    """Yields (range, text) didChange edits in LSP (line, UTF-16) terms."""
    returns = [i for i, line in enumerate(lines) if line.lstrip().startswith("return ")]
    if not returns:
        raise SystemExit("the generated file has no `return` to edit")
    comment_line = 0
    lines.insert(0, "// ")  # the comment typed into (sent as the first edit)
    yield ((0, 0), (0, 0)), "// \n"
    typed = "diagnostics should keep up with typing "
    n, step = 1, 0
    while n < count:
        if step % 3 == 2:
            # Introduce a device error, then fix it.
            target = returns[(step // 3) % len(returns)] + 1
            end = len(lines[target])
            yield ((target, end), (target, end)), ".to(cpu)"
            n += 1
            if n < count:
                yield ((target, end), (target, end + len(".to(cpu)"))), ""
                n += 1
        else:
            column = len(lines[comment_line])
            ch = typed[step % len(typed)]
            lines[comment_line] += ch
            yield ((comment_line, column), (comment_line, column)), ch
            n += 1
        step += 1


def percentile95(sorted_values):
    return sorted_values[min(len(sorted_values) - 1, int(round(0.95 * len(sorted_values))) - 1)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modelc", default=os.path.join(HERE, "..", "build", "bin", "modelc"))
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-p95-ms", type=float)
    parser.add_argument("--log", action="store_true", help="pass --log=info (check times on stderr)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "session.mdl")
        subprocess.run([sys.executable, os.path.join(HERE, "gen_large_model.py"),
                        "--lines", str(args.lines), "--seed", str(args.seed), "-o", path],
                       check=True)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        uri = "file://" + path
        log_path = os.path.join(tmp, "server.log")
        log = open(log_path, "w") if args.log else None
        client = LspClient([args.modelc, "lsp"] + (["--log=info"] if args.log else []), log)
        client.request("initialize", {"processId": os.getpid(), "rootUri": "file://" + tmp,
                                      "capabilities": {}})
        client.notify("initialized", {})
        sent = client.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "mdl", "version": 1, "text": text}})
        received, message = client.wait_for(diagnostics_of(uri, 1))
        opened_ms = (received - sent) * 1000
        initial = len(message["params"]["diagnostics"])
        if initial:
            print("warning: the generated file has %d diagnostics" % initial)

        latencies, with_errors = [], 0
        version = 1
        for (start, end), new_text in scripted_edits(text.split("\n"), args.edits):
            version += 1
            sent = client.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {
                    "start": {"line": start[0], "character": start[1]},
                    "end": {"line": end[0], "character": end[1]}}, "text": new_text}]})
            received, message = client.wait_for(diagnostics_of(uri, version))
            latencies.append((received - sent) * 1000)
            if message["params"]["diagnostics"]:
                with_errors += 1
        status = client.close()
        check_cpu = []
        if log:
            log.close()
            with open(log_path, encoding="utf-8") as f:
                check_cpu = [float(ms) for ms in re.findall(r"\(([0-9.]+) ms of CPU\)", f.read())]

    latencies.sort()
    p95 = percentile95(latencies)
    print("file: %d lines; didOpen -> diagnostics: %.1f ms" % (args.lines, opened_ms))
    print("edits: %d (%d answered with errors, as scripted)" % (len(latencies), with_errors))
    print("edit -> diagnostics: median %.1f ms, p95 %.1f ms, max %.1f ms"
          % (statistics.median(latencies), p95, latencies[-1]))
    if check_cpu:
        check_cpu.sort()
        print("one check (server log): median %.1f ms, p95 %.1f ms of CPU"
              % (statistics.median(check_cpu), percentile95(check_cpu)))
    print("load average while measuring: %.1f (on %d cores)" % (os.getloadavg()[0], os.cpu_count()))
    print("server exit status: %d" % status)
    if with_errors == 0:
        print("error: no edit produced a diagnostic; the script no longer exercises errors")
        return 1
    if args.max_p95_ms is not None and p95 > args.max_p95_ms:
        print("p95 %.1f ms is over the %.1f ms target" % (p95, args.max_p95_ms))
        return 1
    return 0 if status == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
