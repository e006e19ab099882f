#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that the code blocks of the docs that copy an example file are that file, byte
for byte. A copied block is announced by a comment line just before its fence:

    <!-- example: examples/python/quickstart.py -->
    ```python
    ...the file's content...
    ```

Every file named must exist and equal the block; every examples/*/ quickstart must be
copied somewhere. Exit 0 when all agree, 1 with one line per difference otherwise.
--fix copies the files into the blocks instead.

    python3 scripts/check-doc-examples.py [--fix] [ROOT]
"""
import os
import re
import sys

MARK = re.compile(r"^<!-- example: (\S+) -->$")
QUICKSTARTS = ["examples/python/quickstart.py", "examples/typescript/quickstart.ts",
               "examples/go/quickstart/main.go", "examples/java/Quickstart.java"]


def blocks(path):
    """(example path, block text, line number) of every announced block of a Markdown file."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i])
        if m and i + 1 < len(lines) and lines[i + 1].startswith("```"):
            fence = re.match(r"^(`{3,})", lines[i + 1]).group(1)
            j = i + 2
            while j < len(lines) and lines[j] != fence:
                j += 1
            yield m.group(1), "\n".join(lines[i + 2:j]) + "\n", i + 1
            i = j
        elif m:
            yield m.group(1), None, i + 1
        i += 1


def fix(path):
    """Replaces every announced block of a Markdown file with its file's content."""
    root = os.path.dirname(os.path.dirname(path))
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, i = [], 0
    while i < len(lines):
        out.append(lines[i])
        m = MARK.match(lines[i])
        if m and i + 1 < len(lines) and lines[i + 1].startswith("```"):
            fence = re.match(r"^(`{3,})", lines[i + 1]).group(1)
            j = i + 2
            while j < len(lines) and lines[j] != fence:
                j += 1
            with open(os.path.join(root, m.group(1)), encoding="utf-8") as f:
                body = f.read()
            out.append(lines[i + 1])
            out.extend(body[:-1].split("\n") if body.endswith("\n") else body.split("\n"))
            out.append(fence)
            i = j
        i += 1
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out))


def main(root, do_fix=False):
    problems = []
    seen = set()
    docs = os.path.join(root, "docs")
    for name in sorted(os.listdir(docs)):
        if not name.endswith(".md"):
            continue
        path = os.path.join(docs, name)
        if do_fix:
            fix(path)
        for example, text, line in blocks(path):
            where = "docs/%s:%d" % (name, line)
            seen.add(example)
            if text is None:
                problems.append("%s: no code block after the mark of %s" % (where, example))
                continue
            try:
                with open(os.path.join(root, example), encoding="utf-8") as f:
                    want = f.read()
            except OSError as e:
                problems.append("%s: %s: %s" % (where, example, e.strerror))
                continue
            if text != want:
                problems.append("%s: the block differs from %s" % (where, example))
    for q in QUICKSTARTS:
        if q not in seen:
            problems.append("docs: %s is copied into no doc" % q)
    for p in problems:
        print("check-doc-examples: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    argv = sys.argv[1:]
    do_fix = "--fix" in argv
    argv = [a for a in argv if a != "--fix"]
    sys.exit(main(argv[0] if argv else
                  os.path.dirname(os.path.dirname(os.path.abspath(__file__))), do_fix))
