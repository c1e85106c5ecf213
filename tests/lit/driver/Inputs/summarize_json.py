"""Prints a JSON diagnostics document as lines FileCheck can match; fails
unless the file holds exactly one JSON document."""
import json
import os
import sys

with open(sys.argv[1], encoding="utf-8") as f:
    document = json.load(f)  # raises on a second document ("Extra data")
print("version=%d errors=%d warnings=%d"
      % (document["version"], document["errors"], document["warnings"]))
for diag in document["diagnostics"]:
    files = sorted({os.path.basename(label["file"]) for label in diag["labels"]})
    print(diag["code"], diag["severity"], " ".join(files))
