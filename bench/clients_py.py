# SPDX-License-Identifier: Apache-2.0
"""clients_py.py -- the Python client's overhead per call against raw HTTP.

Starts a daemon on the memory backend, stores one User item, then times N GETs of it
through raw http.client (one keep-alive connection, json.loads of the body) and N through
tabletheoryd.Client.model("User").get() (which adds the request id, retries, error
mapping and the Decimal/set decoding) and N through the typed layer
(TypedClient.model(USER).get(UserKey(...)) -> User, with examples/python/models_gen.py),
alternating call by call; prints the median and 10th percentile time per call of each
and their ratios (target <= 1.3).

    python3 bench/clients_py.py [--calls N] [--daemon PATH]
"""
import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "clients", "python", "src"))
sys.path.insert(0, os.path.join(ROOT, "examples", "python"))
import tabletheoryd  # noqa: E402
from models_gen import USER, UserKey  # noqa: E402
from tabletheoryd.typed import TypedClient  # noqa: E402


def start(binary):
    log = tempfile.NamedTemporaryFile(prefix="ttd-bench-", delete=False)
    proc = subprocess.Popen([binary, "--listen", "127.0.0.1:0", "--backend", "memory",
                             "--models", os.path.join(ROOT, "examples", "models"),
                             ],
                            stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.time() + 20
    while time.time() < deadline:
        with open(log.name) as f:
            for raw in f:
                try:
                    line = json.loads(raw)
                except ValueError:
                    continue
                if line.get("event") == "daemon.ready":
                    return proc, line["listen"]
        time.sleep(0.02)
    proc.kill()
    sys.exit("daemon did not start")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--daemon", default=os.environ.get("TT_DAEMON") or
                    os.path.join(ROOT, "_build", "tabletheoryd"))
    args = ap.parse_args()
    proc, listen = start(args.daemon)
    try:
        host, port = listen.rsplit(":", 1)
        client = tabletheoryd.Client("http://" + listen)
        users = client.model("User")
        users.put({"PK": "USER#1", "SK": "PROFILE", "nickname": "al", "tags": {"a", "b"}})
        path = "/v1/models/User/items/USER%231/PROFILE"
        conn = http.client.HTTPConnection(host, int(port), timeout=10)

        def raw():
            conn.request("GET", path)
            resp = conn.getresponse()
            body = json.loads(resp.read())
            assert resp.status == 200 and body["nickname"] == "al"

        def typed():
            item = users.get("USER#1", "PROFILE")
            assert item["nickname"] == "al"

        tt = TypedClient("http://" + listen)
        gen_users = tt.model(USER)
        gen_key = UserKey(PK="USER#1", SK="PROFILE")

        def generated():
            item = gen_users.get(gen_key)
            assert item is not None and item.nickname == "al"

        for fn in (raw, typed, generated):  # warm up both paths
            for _ in range(200):
                fn()
        # One call of each, alternately (the order swapped every time), each timed alone:
        # the machine's load changes both sides alike, and the medians ignore outliers.
        per = {"raw": [], "client": [], "typed": []}
        clock = time.perf_counter_ns
        for i in range(args.calls):
            order = ((("raw", raw), ("client", typed), ("typed", generated)) if i % 2 else
                     (("typed", generated), ("client", typed), ("raw", raw)))
            for name, fn in order:
                t0 = clock()
                fn()
                per[name].append((clock() - t0) / 1000)
        print("python %s: GET one item, %d calls each way, alternating" % (
            sys.version.split()[0], args.calls))
        print("                                 median       p10   (us/call)")
        q = {n: statistics.quantiles(v, n=10) for n, v in per.items()}
        for label, name in (("raw http.client + json.loads", "raw"),
                            ("tabletheoryd client .get()  ", "client"),
                            ("typed .get(UserKey) -> User ", "typed")):
            print("  %s %8.1f  %8.1f" % (label, statistics.median(per[name]), q[name][0]))
        for name in ("client", "typed"):
            print("  %-29s%8.2f  %8.2f  (target <= 1.3)" % (
                "ratio %s/raw" % name, statistics.median(per[name]) / statistics.median(per["raw"]),
                q[name][0] / q["raw"][0]))
        client.close()
        tt.close()
        conn.close()
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
