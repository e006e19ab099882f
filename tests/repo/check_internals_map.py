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
import argparse
import os
import re
import subprocess
import sys
import tempfile

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


def selftest():
    page = ("# Source map\n\n## `src/util/`\n\n| file | job |\n|---|---|\n"
            "| `buf.c` | buffers. |\n| `buf.h` | buffers. |\n")
    cases = [
        ({"src/util/buf.c": "", "src/util/buf.h": ""}, page, 0),
        ({"src/util/buf.c": "", "src/util/buf.h": "", "src/util/new.c": ""}, page, 1),
        ({"src/util/buf.c": ""}, page, 1),
        ({"src/util/buf.c": "", "src/util/buf.h": "", "api/x.inc": "", "README": ""}, page, 1),
    ]
    ok = True
    for files, text, want in cases:
        with tempfile.TemporaryDirectory() as d:
            files = dict(files, **{MAP: text})
            for rel, body in files.items():
                os.makedirs(os.path.join(d, os.path.dirname(rel)), exist_ok=True)
                with open(os.path.join(d, rel), "w") as f:
                    f.write(body)
            subprocess.run(["git", "init", "-q", d], check=True)
            subprocess.run(["git", "-C", d, "add", "-A"], check=True)
            got = check(d)
            if got is None or len(got) != want:
                ok = False
                print("selftest: %s: want %d difference(s), got %r" % (sorted(files), want, got))
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--root", default=os.environ.get("TT_SRCDIR") or
                   os.path.join(here, "..", ".."))
    p.add_argument("--no-selftest", dest="selftest", action="store_false",
                   help="skip the self-test on throwaway trees")
    args = p.parse_args()
    if args.selftest and not selftest():
        return 1
    problems = check(args.root)
    if problems is None:
        print("not the top of a git checkout (a dist tree?): nothing to check")
        return 77
    for line in problems:
        print(line)
    if problems:
        print("%d difference(s) between %s and the tree" % (len(problems), MAP))
        return 1
    print("%s lists every source file of src/, api/ and daemon/" % MAP)
    return 0


if __name__ == "__main__":
    sys.exit(main())
