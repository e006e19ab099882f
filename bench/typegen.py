# SPDX-License-Identifier: Apache-2.0
"""typegen.py -- how long tools/typegen takes for many models (target: 100 models < 1 s).

Writes N models (examples/models/user.yml renamed Model000..., each with its own table)
into a temporary directory, then times the whole generation of the four languages, the
daemon's parsing (tabletheoryd --print-models) included, as a user runs it:

    python3 bench/typegen.py [--models N] [--runs R] [--daemon PATH]

Prints the median wall time of R runs, and checks that a second run changes no file.
"""
import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--daemon", default=os.environ.get("TT_DAEMON") or
                    os.path.join(ROOT, "_build", "tabletheoryd"))
    args = ap.parse_args()
    with open(os.path.join(ROOT, "examples", "models", "user.yml")) as f:
        user = f.read()
    with tempfile.TemporaryDirectory() as d:
        models = os.path.join(d, "models")
        out = os.path.join(d, "out")
        os.mkdir(models)
        for i in range(args.models):
            with open(os.path.join(models, "m%03d.yml" % i), "w") as f:
                f.write(user.replace('name: "User"', 'name: "Model%03d"' % i)
                        .replace('name: "users_contract"', 'name: "table_%03d"' % i))
        cmd = [sys.executable, os.path.join(ROOT, "tools", "typegen", "typegen.py"),
               "--daemon", args.daemon, "--models", models, "--out-dir", out]
        times = []
        digests = set()
        for _ in range(args.runs):
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True)
            times.append(time.perf_counter() - t0)
            h = hashlib.sha256()
            for name in sorted(os.listdir(out)):
                with open(os.path.join(out, name), "rb") as f:
                    h.update(name.encode() + b"\0" + f.read())
            digests.add(h.hexdigest())
        sizes = sum(os.path.getsize(os.path.join(out, n)) for n in os.listdir(out))
    print("typegen: %d models, 4 languages (%d bytes): median %.3f s, min %.3f s over %d runs "
          "(target < 1 s)" % (args.models, sizes, statistics.median(times), min(times), args.runs))
    print("typegen: regenerating the same models %s" % (
        "changed nothing" if len(digests) == 1 else "CHANGED the output"))
    return 0 if len(digests) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
