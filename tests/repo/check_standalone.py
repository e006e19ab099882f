#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_standalone.py -- fails when a tracked file reaches outside the repository.

Every file `git ls-files` lists is read (binary files skipped) and two rules apply:

1. No relative path leaves the repository. Each `../` path in a file is resolved against
   the file's own directory (a leading `$here/`, `$(dirname "$0")/`, `$PWD/`, `${X}/` or
   `__dir__/` stands for that directory) and reported when it climbs above the repository
   root. Absolute paths (`/a/../b`, URL paths) and ellipses (`.../items`) are not relative
   paths and are left alone.
2. No file names a document or location that is not in the repository: the words in
   FORBIDDEN below (outside documents, a sibling `shared` folder, its environment variable,
   machine-specific absolute paths, system paths read by tests).

Usage: check_standalone.py [--root DIR] [--no-selftest]
  --root      the repository to check (default: TT_SRCDIR, else this file's ../..)
  --no-selftest  skip the self-test, which first proves on throwaway trees that each
                 rule catches a violation
Exit 0 when clean, 1 with one line per violation, 77 (skip) outside a git checkout.
"""
import os
import re
import subprocess
import sys
import repocheck

# Words no file may contain. They are built from pieces so that this file does not
# contain them itself.
FORBIDDEN = [
    ("DESIGN" + ".md", "a document outside the repository: cite docs/design.md"),
    ("STYLE" + ".md", "a document outside the repository: cite CONTRIBUTING.md"),
    ("API" + ".md", "a document outside the repository: cite docs/api.md"),
    ("../" + "shared", "a folder beside the clone: vendor the file into the repository"),
    ("TT_" + "SHARED", "a folder beside the clone: vendor the file into the repository"),
    ("/" + "work/", "a path of one machine"),
    ("/" + "home/", "a path of one machine"),
]
# A system path that tests and build files must not read. Keys are path prefixes of the
# files the rule covers; the files listed in SYSTEM_PATH_ALLOWED only check text that
# names such a path (the systemd unit's contents), they do not read it.
SYSTEM_PATH = re.compile(r"(?<![\w.-])/etc/")
SYSTEM_PATH_SCOPE = ("tests/", "scripts/test", "scripts/build", "Makefile.am", "configure.ac")
SYSTEM_PATH_ALLOWED = ("tests/integration/verify_systemd.sh",)
SYSTEM_PATH_SCOPE_EXCLUDE = ("tests/data/", "tests/repo/")

# One path token around a `../`: anything but whitespace, quotes, brackets and separators.
TOKEN_CHARS = r"[^\s\"'`()\[\]<>,;|=]"
DOTDOT = re.compile(r"(?<!\.)\.\./")
# A leading variable or command substitution that stands for the file's directory.
DIR_PREFIX = re.compile(r"^(?:-?\$\{?\w+\}?|\$\(dirname \"?\$0\"?\)|__dir(?:name)?__|\)+)/")


def git_toplevel_is(root):
    """True when `root` is the top of a git work tree (not a folder inside another one,
    as a distcheck tree inside a clone is)."""
    try:
        top = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return False
    return os.path.realpath(top) == os.path.realpath(root)


def tracked_files(root):
    if not git_toplevel_is(root):
        return None
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return [p for p in out.decode("utf-8", "replace").split("\0") if p]


def read_text(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if b"\0" in data:
        return None
    return data.decode("utf-8", "replace")


def tokens_with_dotdot(line):
    """The path tokens of a line that contain a `../` that is not part of `.../`."""
    seen = set()
    for m in DOTDOT.finditer(line):
        start = m.start()
        while start > 0 and re.match(TOKEN_CHARS, line[start - 1]):
            start -= 1
        end = m.end()
        while end < len(line) and re.match(TOKEN_CHARS, line[end]):
            end += 1
        if start not in seen:
            seen.add(start)
            # "$(dirname "$0")/..": the token starts after a ")", the file's directory.
            lead = ")" if start > 0 and line[start - 1] in ")}" else ""
            yield lead + line[start:end]


def leaves_root(rel_file, token):
    """True when `token`, written in repository file `rel_file`, resolves above the root."""
    if token.startswith("/"):
        return False  # absolute: a URL path or a system path, not a relative one
    token = DIR_PREFIX.sub("", token)
    if "://" in token:
        return False
    base = os.path.dirname(rel_file)
    path = os.path.normpath(os.path.join(base, token))
    return path == ".." or path.startswith("../")


def check(root):
    files = tracked_files(root)
    if files is None:
        return None
    me = os.path.relpath(os.path.abspath(__file__), os.path.abspath(root))
    problems = []
    for rel in sorted(files):
        if rel == me:
            continue
        text = read_text(os.path.join(root, rel))
        if text is None:
            continue
        sys_scope = (rel.startswith(SYSTEM_PATH_SCOPE) and rel not in SYSTEM_PATH_ALLOWED
                     and not rel.startswith(SYSTEM_PATH_SCOPE_EXCLUDE))
        for no, line in enumerate(text.splitlines(), 1):
            for word, why in FORBIDDEN:
                if word in line:
                    problems.append("%s:%d: names %s: %s" % (rel, no, word, why))
            if "../" in line:
                for tok in tokens_with_dotdot(line):
                    if leaves_root(rel, tok):
                        problems.append("%s:%d: path %s leaves the repository (resolved "
                                        "from %s/)" % (rel, no, tok, os.path.dirname(rel) or "."))
            if sys_scope and SYSTEM_PATH.search(line):
                problems.append("%s:%d: a test or build file names a system path (/etc/): "
                                "use a file under tests/data" % (rel, no))
    return problems


def selftest_cases():
    """Each rule catches a planted violation, and legitimate paths pass."""
    cases = [
        ("tests/x/run.sh", 'peers="$here/../peers"\n', 0),
        ("tests/x/run.sh", 'top=$(cd "$(dirname "$0")/../.." && pwd)\n', 0),
        ("tests/x/run.sh", 'top=$(cd "$(dirname "$0")/../../.." && pwd)\n', 1),
        ("docs/a.md", "see [b](../bench/README.md) and GET .../items\n", 0),
        ("docs/a.md", "fixtures in ../../other/thing.yml\n", 1),
        ("docs/a.md", "read " + "DESIGN" + ".md first\n", 1),
        ("src/a.c", "/* as " + "API" + ".md says */\n", 1),
        ("tests/x/t.py", 'os.environ["TT_' + 'SHARED"]\n', 1),
        ("tests/x/t.py", 'open("/etc/passwd")\n', 1),
        ("tests/x/t.py", 'canonical("/a/./b/../c//d/")\n', 0),
        ("bench/README.md", "TT_DAEMON=$PWD/../_build/tabletheoryd\n", 0),
        ("bench/README.md", "TT_DAEMON=$PWD/../../_build/tabletheoryd\n", 1),
    ]
    return [({rel: text}, want) for rel, text, want in cases]


if __name__ == "__main__":
    sys.exit(repocheck.main(
        __doc__, check, selftest_cases(),
        lambda n: "%d reference(s) outside the repository" % n,
        "standalone: no file reaches outside the repository"))
