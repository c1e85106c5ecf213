#!/usr/bin/env python3
"""lsp_session.py - build LSP sessions for the language server's lit tests.

    lsp_session.py frame [--cut BYTES] < DELIMITED
        Turns messages separated by `// -----` lines (comment lines are
        dropped) into Content-Length framed messages, as editors send them.
        --cut drops the last BYTES bytes of the stream: a client that goes
        away in the middle of a message.
    lsp_session.py open FILE
        A `// -----`-delimited session that opens FILE, asks for its symbols
        and a hover, edits its last line, asks again, and shuts down.
"""
import json
import sys


def delimited_messages(text):
    messages, current = [], []
    for line in text.split("\n"):
        if line.strip().startswith("//"):
            if line.strip() == "// -----" and current:
                messages.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if "".join(current).strip():
        messages.append("\n".join(current))
    return messages


def frame(args):
    cut = int(args[1]) if args[:1] == ["--cut"] else 0
    out = bytearray()
    for message in delimited_messages(sys.stdin.read()):
        body = message.strip().encode("utf-8")
        out += b"Content-Length: %d\r\n\r\n" % len(body) + body
    sys.stdout.buffer.write(bytes(out[: len(out) - cut]))


def open_session(args):
    path = args[0]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    uri = "file://" + path
    last = text.rstrip("\n").count("\n")
    messages = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "mdl", "version": 1, "text": text}}},
        {"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": uri}, "position": {"line": 5, "character": 8}}},
        {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{
                "range": {"start": {"line": last + 1, "character": 0},
                          "end": {"line": last + 1, "character": 0}},
                "text": "model Extra {\n  param p: f32[2] @ cpu\n  fn f(x: f32[2] @ cuda:0) -> f32[2] @ cuda:0 {\n    return x + p\n  }\n}\n"}]}},
        {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": uri}, "position": {"line": last + 4, "character": 15}}},
        {"jsonrpc": "2.0", "id": 3, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    sys.stdout.write("\n// -----\n".join(json.dumps(m) for m in messages) + "\n")


if __name__ == "__main__":
    {"frame": frame, "open": open_session}[sys.argv[1]](sys.argv[2:])
