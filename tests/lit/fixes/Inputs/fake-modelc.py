#!/usr/bin/env python3
"""A stand-in for `modelc check --format=json FILE` whose one suggestion
turns an E0301 into an E0201: apply_suggestions.py must call it wrong."""
import json
import sys

path = sys.argv[-1]
text = open(path).read()
diags = []


def at(offset):
    return {"line": 1, "column": offset + 1, "offset": offset}


if "BAD" in text:
    start = text.index("BAD")
    diags.append({"code": "E0301", "severity": "error", "message": "bad",
                  "labels": [{"file": path, "primary": True, "message": "",
                              "start": at(start), "end": at(start + 3)}],
                  "notes": [],
                  "suggestions": [{"message": "move it", "applicability": "machine-applicable",
                                   "edits": [{"file": path, "start": at(start),
                                              "end": at(start + 3), "replacement": "WORSE"}]}]})
if "WORSE" in text:
    start = text.index("WORSE")
    diags.append({"code": "E0201", "severity": "error", "message": "worse",
                  "labels": [{"file": path, "primary": True, "message": "",
                              "start": at(start), "end": at(start + 5)}],
                  "notes": [], "suggestions": []})
print(json.dumps({"version": 1, "errors": len(diags), "warnings": 0, "diagnostics": diags}))
sys.exit(1 if diags else 0)
