# SPDX-License-Identifier: Apache-2.0
"""What the repository checks share: a throwaway git tree for their self-tests,
and the command line (--root, --no-selftest) with automake's exit codes."""

import argparse
import os
import subprocess
import tempfile


def count_in_tree(check, files):
    """check() on a fresh git tree holding `files` ({path: text}), all added."""
    with tempfile.TemporaryDirectory() as d:
        for rel, text in files.items():
            os.makedirs(os.path.join(d, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(d, rel), "w") as f:
                f.write(text)
        subprocess.run(["git", "init", "-q", d], check=True)
        subprocess.run(["git", "-C", d, "add", "-A"], check=True)
        return check(d)


def selftest(check, cases):
    """cases: (files, number of problems wanted). True when each gives that many."""
    ok = True
    for files, want in cases:
        got = count_in_tree(check, files)
        if got is None or len(got) != want:
            ok = False
            print("selftest: %r: want %d problem(s), got %r" % (sorted(files.items()), want, got))
    return ok


def main(doc, check, cases, failed, passed):
    """Runs the self-test, then check() on the repository: 0, 1, or 77 (skip)
    outside a git checkout. failed(n) and passed are the closing lines."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--root", default=os.environ.get("TT_SRCDIR") or
                   os.path.join(here, "..", ".."))
    p.add_argument("--no-selftest", dest="selftest", action="store_false",
                   help="skip the self-test on throwaway trees")
    args = p.parse_args()
    if args.selftest and not selftest(check, cases):
        return 1
    problems = check(args.root)
    if problems is None:
        print("not the top of a git checkout (a dist tree?): nothing to check")
        return 77
    for line in problems:
        print(line)
    if problems:
        print(failed(len(problems)))
        return 1
    print(passed)
    return 0
