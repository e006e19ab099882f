#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""internals-map.py -- regenerates docs/internals.md from the one-sentence
purpose comment at the top of every source file, keeping the jobs the page already has."""
import os
import re
import subprocess

INTRO = {
    "daemon": "`main()` and what only a process needs: configuration, sockets, the loop, "
              "signals, systemd.",
    "api": "The HTTP layer: libmicrohttpd callbacks, request contexts, routing, handlers, "
           "error envelopes.",
    "src/orm": "Model operations over the backend port: what handlers call.",
    "src/ledger": "The job ledger, built on the ORM, and its sanitizer.",
    "src/client": "Backend calls as joined request operations: metrics, retries, cancellation.",
    "src/backend": "The backend port (one async call per DynamoDB operation) and decorators.",
    "src/backend/memory": "The embedded backend with DynamoDB's semantics.",
    "src/backend/dynamodb": "The dynamodb backend: SigV4, HTTP on the loop, credentials.",
    "src/backend/kms": "AWS KMS for encrypted attributes, on the dynamodb backend's transport.",
    "src/model": "DMS documents: loading, validation, the registry.",
    "src/value": "AttributeValues, exact numbers, JSON codecs, cursors.",
    "src/expr": "DynamoDB expressions: parser, evaluator, builder from the REST conditions.",
    "src/obs": "Logs and metrics.",
    "src/util": "Small shared pieces: errors, buffers, arenas.",
}
ORDER = list(INTRO)


MAP = "docs/internals.md"
HEADER = """# Source map

Every file of the daemon's source tree (`src/`, `api/`, `daemon/`: `.c`, `.h`, `.inc` and the
`.am` automake fragments), one table row each. Data flows one way:
`daemon` -> `api` -> `orm`/`ledger` -> `client` -> `backend`; lower layers never include upper
ones, and `src/` never includes libmicrohttpd (docs/design.md). Notes per module:
`docs/internals/<module>.md`.

Format, checked by `tests/repo/check_internals_map.py` in `make check`: a section per
directory headed ``## `dir/` `` and, under it, one row ``| `file` | job |`` per file of that
directory (the file name only). The check fails when a file of the tree has no row or a row
names a file that does not exist. A new file gets one row in its directory's table (keep
rows sorted); `scripts/internals-map.py` regenerates the page from the purpose comment at
the top of each file, keeping the jobs already written here.
"""


def purpose(path):
    with open(path, errors="replace") as f:
        text = f.read(2000)
    m = re.search(r"/\*\s*[\w./-]+\s+--\s+(.*?)\*/", text, re.S)
    if m:
        return " ".join(line.strip(" *") for line in m.group(1).splitlines()).strip()
    if path.endswith(".am"):
        m = re.search(r"^# [\w/]+: (.*)$", text, re.M)
        if m:
            return "automake fragment: " + m.group(1).strip()
        return "automake fragment: the sources and unit tests of this directory."
    return ""


def known_jobs():
    """The jobs already written in the map, by path."""
    jobs = {}
    if not os.path.exists(MAP):
        return jobs
    section = None
    with open(MAP) as f:
        for line in f:
            m = re.match(r"^## `([^`]+)/`", line)
            if m:
                section = m.group(1)
                continue
            m = re.match(r"^\| `([^`]+)` \| (.*) \|\s*$", line)
            if m and section:
                jobs[section + "/" + m.group(1)] = m.group(2)
    return jobs


def main():
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.chdir(top)
    files = subprocess.run(["git", "ls-files", "src", "api", "daemon"], capture_output=True,
                           text=True, check=True).stdout.split()
    jobs = known_jobs()
    groups = {}
    for f in files:
        if f.endswith((".c", ".h", ".inc", ".am")):
            job = jobs.get(f) or purpose(f).replace("|", "\\|")
            groups.setdefault(os.path.dirname(f), []).append((os.path.basename(f), job))
    out = [HEADER]
    for d in ORDER + sorted(g for g in groups if g not in ORDER):
        if d not in groups:
            continue
        out += ["## `%s/`" % d, ""]
        if d in INTRO:
            out += [INTRO[d], ""]
        out += ["| file | job |", "|---|---|"]
        out += ["| `%s` | %s |" % (n, p) for n, p in sorted(groups[d])]
        out.append("")
    with open(MAP, "w") as f:
        f.write("\n".join(out))


if __name__ == "__main__":
    main()
