#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""internals-map.py -- regenerates docs/internals.md from the one-sentence
purpose comment at the top of every source file."""
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


def purpose(path):
    with open(path, errors="replace") as f:
        text = f.read(2000)
    m = re.search(r"/\*\s*[\w./-]+\s+--\s+(.*?)\*/", text, re.S)
    if not m:
        return ""
    return " ".join(line.strip(" *") for line in m.group(1).splitlines()).strip()


def main():
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.chdir(top)
    files = subprocess.run(["git", "ls-files", "src", "api", "daemon"], capture_output=True,
                           text=True, check=True).stdout.split()
    groups = {}
    for f in files:
        if f.endswith(".c"):
            groups.setdefault(os.path.dirname(f), []).append((os.path.basename(f), purpose(f)))
    out = ["# Source map", "",
           "One line per source file (headers declare what the file of the same name "
           "implements). Data flows one way:",
           "`daemon` -> `api` -> `orm`/`ledger` -> `client` -> `backend`; lower layers never "
           "include upper ones, and `src/` never includes libmicrohttpd. Notes per module: "
           "`docs/internals/<module>.md`. Regenerate with `scripts/internals-map.py`.", ""]
    for d in ORDER + sorted(g for g in groups if g not in ORDER):
        if d not in groups:
            continue
        out += ["## `%s/`" % d, ""]
        if d in INTRO:
            out += [INTRO[d], ""]
        out += ["| file | job |", "|---|---|"]
        out += ["| `%s` | %s |" % (n, p.replace("|", "\\|")) for n, p in sorted(groups[d])]
        out.append("")
    with open("docs/internals.md", "w") as f:
        f.write("\n".join(out))


if __name__ == "__main__":
    main()
