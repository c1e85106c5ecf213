#!/usr/bin/env python3
"""Runs headless Neovim as an LSP client of `modelc lsp` (see init.lua).

Copies EXAMPLE to a temporary folder, lets Neovim open it, wait for the
diagnostic CODE, apply the server's quick fix and save, then checks that
`modelc check` accepts the saved file (exit 0). Skips (exit 77) without
nvim.

Usage: run_nvim_test.py MODELC EXAMPLE CODE
"""
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    modelc, example, code = sys.argv[1:4]
    nvim = shutil.which("nvim")
    if not nvim:
        print("nvim is not installed (tools/install-deps.sh installs it): skipped")
        return 77
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as tmp:
        target = os.path.join(tmp, os.path.basename(example))
        shutil.copy(example, target)
        env = dict(os.environ, MODELC=modelc, MDL_FILE=target, EXPECTED_CODE=code,
                   XDG_STATE_HOME=tmp, XDG_DATA_HOME=tmp, XDG_CONFIG_HOME=tmp)
        result = subprocess.run(
            [nvim, "--headless", "--clean", "-n", "-u", os.path.join(here, "init.lua")],
            env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        print(result.stdout, end="")
        print(result.stderr, end="", file=sys.stderr)
        if result.returncode != 0:
            print("nvim exited with %d" % result.returncode)
            return 1
        with open(target, encoding="utf-8") as f:
            fixed = f.read()
        print("--- the file after the quick fix ---\n" + fixed)
        check = subprocess.run([modelc, "check", "--color=never", target],
                               capture_output=True, text=True, timeout=60)
        print(check.stderr, end="")
        if check.returncode != 0:
            print("modelc check exited with %d after the fix" % check.returncode)
            return 1
    print("ok: diagnostic %s, quick fix applied, file checks clean" % code)
    return 0


if __name__ == "__main__":
    sys.exit(main())
