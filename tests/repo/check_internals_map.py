#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_internals_map.py -- fails when docs/internals.md and the source tree disagree.

The map has a section per directory headed "## `dir/`" and one row "| `file` | job |" per
file of that directory (format described at the top of docs/internals.md). Every file
`git ls-files src api daemon` lists with a .c, .h, .inc or .am name must have a row, and
every row must name a file that exists.

Usage: check_internals_map.py [--root DIR] [--no-selftest]
Exit 0 when they agree, 1 with one line per difference, 77 (skip) outside a git checkout.
"""
import os
import re
import subprocess
import sys
import repocheck

DIRS = ("src", "api", "daemon")
EXTS = (".c", ".h", ".inc", ".am")
MAP = os.path.join("docs", "internals.md")


def listed(text):
    """The paths the map lists, with their line numbers."""
    out = {}
    section = None
    for no, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^##\s+`([^`]+?)/?`", line)
        if m:
            section = m.group(1).rstrip("/")
            continue
        if line.startswith("#"):
            section = None
            continue
        m = re.match(r"^\|\s*`([^`]+)`\s*\|", line)
        if m and section:
            out.setdefault(section + "/" + m.group(1), no)
    return out


def git_toplevel_is(root):
    """True when `root` is the top of a git work tree (not a folder inside another one,
    as a distcheck tree inside a clone is)."""
    try:
        top = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return False
    return os.path.realpath(top) == os.path.realpath(root)


def check(root):
    if not git_toplevel_is(root):
        return None
    try:
        files = subprocess.run(["git", "-C", root, "ls-files", "--"] + list(DIRS),
                               capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return None
    sources = {f for f in files if f.endswith(EXTS)}
    try:
        with open(os.path.join(root, MAP)) as f:
            rows = listed(f.read())
    except OSError as e:
        return ["%s: cannot read: %s" % (MAP, e)]
    problems = ["%s: no row for %s (add one to the `%s/` table)"
                % (MAP, f, os.path.dirname(f)) for f in sorted(sources - set(rows))]
    problems += ["%s:%d: row for %s, which is not in the tree" % (MAP, rows[f], f)
                 for f in sorted(set(rows) - sources)]
    return problems


def selftest_cases():
    page = ("# Source map\n\n## `src/util/`\n\n| file | job |\n|---|---|\n"
            "| `buf.c` | buffers. |\n| `buf.h` | buffers. |\n")
    cases = [
        ({"src/util/buf.c": "", "src/util/buf.h": ""}, 0),
        ({"src/util/buf.c": "", "src/util/buf.h": "", "src/util/new.c": ""}, 1),
        ({"src/util/buf.c": ""}, 1),
        ({"src/util/buf.c": "", "src/util/buf.h": "", "api/x.inc": "", "README": ""}, 1),
    ]
    return [(dict(files, **{MAP: page}), want) for files, want in cases]


if __name__ == "__main__":
    sys.exit(repocheck.main(
        __doc__, check, selftest_cases(),
        lambda n: "%d difference(s) between %s and the tree" % (n, MAP),
        "%s lists every source file of src/, api/ and daemon/" % MAP))
