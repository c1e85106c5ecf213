#!/usr/bin/env python3
"""Checks editors/vscode/syntaxes/mdl.tmLanguage.json.

The grammar must be valid JSON whose regexes compile (Python's `re`, and
JavaScript's RegExp when node is installed), and tokenizing every
examples/**/*.mdl and stdlib/**/*.mdl with it must give keywords, types and
comments the right scopes -- and nothing else those scopes. A small
TextMate engine (match, begin/end, captures, includes) stands in for
vscode-textmate, which is not installed here.

Usage: check_grammar.py [REPO_ROOT]
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

KEYWORDS = {"import", "model", "param", "buffer", "fn", "let", "return", "for", "if", "else",
            "and", "or", "not"}
TYPES = {"f16", "bf16", "f32", "f64", "i32", "i64", "int", "float", "bool", "device"}
OTHER_RESERVED = {"cpu", "cuda", "true", "false", "inf", "in"}


def load_grammar(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def all_regexes(node):
    """Yields every regex string in the grammar."""
    if isinstance(node, dict):
        for key in ("match", "begin", "end"):
            if key in node:
                yield node[key]
        for value in node.values():
            yield from all_regexes(value)
    elif isinstance(node, list):
        for value in node:
            yield from all_regexes(value)


class Rule:
    def __init__(self, spec, grammar):
        self.name = spec.get("name")
        self.captures = {int(k): v.get("name") for k, v in spec.get("captures", {}).items()}
        self.match = re.compile(spec["match"]) if "match" in spec else None
        self.begin = re.compile(spec["begin"]) if "begin" in spec else None
        self.end = re.compile(spec["end"]) if "end" in spec else None
        self.patterns = flatten(spec.get("patterns", []), grammar)


def flatten(patterns, grammar, seen=None):
    """Resolves `include`s into a flat, ordered list of rules."""
    rules = []
    for spec in patterns:
        if "include" in spec:
            ref = spec["include"]
            assert ref.startswith("#"), "only repository includes are used: " + ref
            rules += flatten(grammar["repository"][ref[1:]].get("patterns", []), grammar)
        elif "match" in spec or "begin" in spec:
            rules.append(Rule(spec, grammar))
        else:
            rules += flatten(spec.get("patterns", []), grammar)
    return rules


def tokenize(text, grammar):
    """Returns one list of scope names per character of `text`."""
    top = flatten(grammar["patterns"], grammar)
    scopes = [[] for _ in text]
    stack = []  # open begin/end rules
    offset = 0
    for line in text.split("\n"):
        pos = 0
        while pos <= len(line):
            candidates = []
            if stack:
                end = stack[-1].end.search(line, pos)
                if end:
                    candidates.append((end.start(), 0, "end", stack[-1], end))
            rules = stack[-1].patterns if stack else top
            for order, rule in enumerate(rules):
                regex = rule.match or rule.begin
                m = regex.search(line, pos)
                if m:
                    candidates.append((m.start(), order + 1, "rule", rule, m))
            if not candidates:
                break
            start, _, kind, rule, m = min(candidates, key=lambda c: (c[0], c[1]))
            outer = [r.name for r in stack if r.name]
            for i in range(pos, start):  # text inside an open begin/end rule
                scopes[offset + i] += outer
            if kind == "end":
                for i in range(m.start(), m.end()):
                    scopes[offset + i] += outer
                stack.pop()
            else:
                names = outer + ([rule.name] if rule.name else [])
                for i in range(m.start(), m.end()):
                    scopes[offset + i] += names
                for group, name in rule.captures.items():
                    if name and m.group(group) is not None:
                        for i in range(m.start(group), m.end(group)):
                            scopes[offset + i].append(name)
                if rule.begin:
                    stack.append(rule)
            if m.end() == pos and kind == "rule" and not rule.begin:
                pos += 1  # an empty match must not loop
            else:
                pos = max(m.end(), pos + (1 if m.end() == m.start() else 0))
        outer = [r.name for r in stack if r.name]
        for i in range(pos, len(line)):
            scopes[offset + i] += outer
        offset += len(line) + 1
    return scopes


def reference_lex(text):
    """Yields (kind, start, end) for comments and words outside strings."""
    i, n = 0, len(text)
    previous_words = []
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            yield ("comment", i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            yield ("comment", i, j)
            i = j
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] not in '"\n':
                j += 2 if text[j] == "\\" else 1
            i = min(j + 1, n)
        elif text[i].isalpha() or text[i] == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            # `in` is a keyword only in `for x in xs`.
            if word == "in" and len(previous_words) >= 2 and previous_words[-2] == "for":
                yield ("loop-in", i, j)
            # `as` is a keyword only before a submodel's state names: `as "{}_l0"`.
            elif word == "as" and text[j:].lstrip(" \t").startswith('"'):
                yield ("loop-in", i, j)
            else:
                yield ("word", i, j)
            previous_words.append(word)
            i = j
        elif text[i].isdigit():
            while i < n and (text[i].isalnum() or text[i] == "."):
                i += 1
        else:
            i += 1


def has(scopes, prefix):
    return any(s.startswith(prefix) for s in scopes)


def check_file(path, grammar, counts):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    scopes = tokenize(text, grammar)
    problems = []

    def where(pos):
        line = text.count("\n", 0, pos) + 1
        col = pos - (text.rfind("\n", 0, pos) + 1) + 1
        return "%s:%d:%d" % (path, line, col)

    for kind, start, end in reference_lex(text):
        token = text[start:end]
        first = scopes[start]
        if kind == "comment":
            counts["comment"] += 1
            for i in range(start, end):
                if not text[i].isspace() and not has(scopes[i], "comment."):
                    problems.append("%s: comment text %r not scoped as a comment (%s)"
                                    % (where(i), text[i], scopes[i]))
                    break
        elif kind == "loop-in" or token in KEYWORDS:
            counts["keyword"] += 1
            if not has(first, "keyword."):
                problems.append("%s: keyword `%s` has scopes %s" % (where(start), token, first))
        elif token in TYPES:
            counts["type"] += 1
            if not has(first, "storage.type."):
                problems.append("%s: type `%s` has scopes %s" % (where(start), token, first))
        elif token not in OTHER_RESERVED or token == "in":
            counts["name"] += 1
            if has(first, "keyword.") or has(first, "storage.type.") or has(first, "comment."):
                problems.append("%s: name `%s` wrongly scoped %s" % (where(start), token, first))
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "..")
    grammar_path = os.path.join(root, "editors", "vscode", "syntaxes", "mdl.tmLanguage.json")
    grammar = load_grammar(grammar_path)
    assert grammar.get("scopeName") == "source.mdl", "scopeName must be source.mdl"

    regexes = list(all_regexes(grammar))
    for regex in regexes:
        re.compile(regex)
    node = shutil.which("node")
    if node:
        script = "for (const r of JSON.parse(require('fs').readFileSync(0, 'utf8'))) new RegExp(r);"
        subprocess.run([node, "-e", script], input=json.dumps(regexes), text=True, check=True)

    files = sorted(glob.glob(os.path.join(root, "examples", "**", "*.mdl"), recursive=True)
                   + glob.glob(os.path.join(root, "stdlib", "**", "*.mdl"), recursive=True))
    counts = {"comment": 0, "keyword": 0, "type": 0, "name": 0}
    problems = []
    for path in files:
        problems += check_file(path, grammar, counts)
    for problem in problems[:50]:
        print(problem)
    print("checked %d regexes, %d files: %s" % (len(regexes), len(files), counts))
    if not files or min(counts.values()) == 0:
        print("error: the examples exercise too little of the grammar")
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
