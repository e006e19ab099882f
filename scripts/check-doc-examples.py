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

    python3 scripts/check-doc-examples.py [ROOT]
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


def main(root):
    problems = []
    seen = set()
    docs = os.path.join(root, "docs")
    for name in sorted(os.listdir(docs)):
        if not name.endswith(".md"):
            continue
        path = os.path.join(docs, name)
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
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else
                  os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
