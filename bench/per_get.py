#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""per_get.py -- syscalls and instructions the daemon spends per GET.

Counts, not times, so the figures hold on a busy machine: the daemon serves
N GETs of the ~1 KB bench item (run.py's get-item scenario, memory backend)
over one keep-alive connection from a plain Python loop, and

  --tool strace    attaches `strace -c -f` to the daemon for the N GETs only
                   and prints the syscalls per GET by name;
  --tool callgrind runs the daemon under `valgrind --tool=callgrind` twice,
                   with N GETs and with none (same start-up, setup PUT and
                   shutdown), and prints (Ir(N) - Ir(0)) / N;
  --tool suspend   prints tabletheoryd_http_suspensions_total per GET.

With --endpoint URL the daemon uses the dynamodb backend on that peer
(dynalite or moto: tests/peers/start_peer.sh) instead, on a fresh Bench
table. With --function NAME, --tool callgrind also prints NAME's inclusive
instructions per GET (e.g. tt_sigv4_sign). With --ddb-listener the daemon also
listens with --dynamodb-listen on a free loopback port and the N requests are
GetItems of the same item there (POST / with X-Amz-Target
DynamoDB_20120810.GetItem, a well-formed SigV4 Authorization header: the
listener's default accept mode) instead of REST GETs.

  bench/per_get.py _build/tabletheoryd --tool strace -n 2000
  bench/per_get.py _build/tabletheoryd --tool callgrind -n 2000
  bench/per_get.py _build/tabletheoryd --tool callgrind -n 2000 --ddb-listener
  bench/per_get.py _build/tabletheoryd --tool callgrind -n 1000 \
      --endpoint $ENDPOINT --function tt_sigv4_sign
  bench/per_get.py _build/tabletheoryd --tool callgrind -n 1000 \
      --endpoint $ENDPOINT --callgrind-out /tmp/cg.out   # keeps both profiles
"""

import argparse
import http.client as httpclient
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import peer_getitem  # noqa: E402
from run import BENCH_ITEM, free_port, http, write_bench_model  # noqa: E402

PATH = "/v1/models/Bench/items/ITEM%231/A"


# The dynamodb backend on a peer, with the credentials the peers accept.
PEER_ARGS = ["--backend", "dynamodb", "--region", "us-east-1", "--allow-table-delete"]
PEER_ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_EC2_METADATA_DISABLED": "true"}


def start(daemon, workdir, wrap, port, endpoint=None, extra=()):
    argv = [daemon, "--listen", "127.0.0.1:%d" % port, "--log-level", "warn"]
    argv += write_bench_model(workdir) + list(extra)
    env = dict(os.environ)
    if endpoint:
        argv += PEER_ARGS + ["--endpoint", endpoint]
        env.update(PEER_ENV)
    argv = wrap + argv
    err = open(os.path.join(workdir, "daemon.err"), "w")
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env)
    base = "http://127.0.0.1:%d" % port
    for _ in range(600):  # valgrind starts slowly
        try:
            if http("GET", base + "/readyz")[0] == 200:
                break
        except OSError:
            pass
        time.sleep(0.05)
    else:
        p.kill()
        sys.exit("the daemon did not become ready")
    if endpoint:  # a fresh table, so the item can be created
        for method, ok in (("DELETE", (204, 404)), ("PUT", (200, 201))):
            status, body = http(method, base + "/v1/models/Bench/table", timeout=60)
            if status not in ok:
                sys.exit("setup %s table answered %d %s" % (method, status, body[:200]))
    status, body = http("POST", base + "/v1/models/Bench/items", BENCH_ITEM, timeout=60)
    if status != 201:
        sys.exit("setup PUT answered %d %s" % (status, body[:200]))
    return p


def gets(port, n):
    conn = httpclient.HTTPConnection("127.0.0.1", port, timeout=10)
    for _ in range(n):
        conn.request("GET", PATH)
        r = conn.getresponse()
        r.read()
        if r.status != 200:
            sys.exit("GET answered %d" % r.status)
    conn.close()


def ddb_gets(port, n):
    """n GetItems of the bench item (table "bench") on the DynamoDB listener."""
    headers, body = peer_getitem("bench")
    conn = httpclient.HTTPConnection("127.0.0.1", port, timeout=10)
    for _ in range(n):
        conn.request("POST", "/", body, headers)
        r = conn.getresponse()
        data = r.read()
        if r.status != 200 or b'"Item"' not in data:
            sys.exit("GetItem answered %d %s" % (r.status, data[:200]))
    conn.close()


def daemon_flags(args):
    """(extra daemon flags, function making n requests on the REST port)."""
    if not getattr(args, "ddb_listener", False):  # bench/tracing.py has no such flag
        return [], gets
    lport = free_port()
    return (["--dynamodb-listen", "127.0.0.1:%d" % lport],
            lambda port, n: ddb_gets(lport, n))


def stop(p):
    p.send_signal(signal.SIGTERM)
    rc = p.wait(timeout=120)
    if rc != 0:
        sys.exit("the daemon exited %d" % rc)


def metric(port, name):
    _, body = http("GET", "http://127.0.0.1:%d/metrics" % port)
    text = body.decode() if isinstance(body, bytes) else body
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name):
            total += float(line.split()[-1])
    return total


def run_strace(args):
    with tempfile.TemporaryDirectory() as wd:
        port = free_port()
        flags, reqs = daemon_flags(args)
        p = start(args.daemon, wd, [], port, args.endpoint, flags)
        reqs(port, 50)  # warm: allocator, connection pool
        out = os.path.join(wd, "strace.txt")
        st = subprocess.Popen(["strace", "-c", "-f", "-o", out, "-p", str(p.pid)],
                              stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # attached
        reqs(port, args.n)
        time.sleep(0.2)
        st.send_signal(signal.SIGINT)
        st.wait()
        stop(p)
        total = 0
        print("%-20s %10s" % ("syscall", "per GET"))
        for line in open(out):
            f = line.split()
            if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
                calls = int(f[3])
                total += calls
                print("%-20s %10.2f" % (f[-1], calls / args.n))
        print("%-20s %10.2f" % ("total", total / args.n))


def inclusive_ir(cg_out, function):
    """NAME's inclusive Ir in a callgrind output file (0 when never called)."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", cg_out],
                          capture_output=True, text=True, check=True).stdout
    m = re.search(r"^\s*([\d,]+) .*:%s(?: |$)" % re.escape(function), text, re.M)
    return int(m.group(1).replace(",", "")) if m else 0


def callgrind_ir(args, n, keep=None, extra=()):
    """(program total, --function's inclusive) Ir of a run with n GETs;
    the profile is copied to `keep` when given; `extra` are more daemon flags
    (bench/tracing.py)."""
    with tempfile.TemporaryDirectory() as wd:
        port = free_port()
        log = os.path.join(wd, "vg.log")
        out = os.path.join(wd, "cg.out")
        wrap = ["valgrind", "--tool=callgrind", "--log-file=" + log, "--callgrind-out-file=" + out]
        flags, reqs = daemon_flags(args)
        p = start(args.daemon, wd, wrap, port, args.endpoint, list(extra) + flags)
        reqs(port, n)
        stop(p)
        if keep:
            shutil.copyfile(out, keep)
        m = re.search(r"Collected : (\d+)", open(log).read())
        return int(m.group(1)), inclusive_ir(out, args.function) if getattr(args, "function", None) else 0


def run_callgrind(args):
    keep = args.callgrind_out
    with_n, fn_n = callgrind_ir(args, args.n, keep)
    none, fn_none = callgrind_ir(args, 0, keep + ".0" if keep else None)
    print("Ir with %d GETs %d, with none %d: %.0f instructions per GET"
          % (args.n, with_n, none, (with_n - none) / args.n))
    if args.function:
        print("%s: %.0f instructions per GET (inclusive)"
              % (args.function, (fn_n - fn_none) / args.n))


def run_suspend(args):
    with tempfile.TemporaryDirectory() as wd:
        port = free_port()
        flags, reqs = daemon_flags(args)
        p = start(args.daemon, wd, [], port, args.endpoint, flags)
        before = metric(port, "tabletheoryd_http_suspensions_total")
        reqs(port, args.n)
        after = metric(port, "tabletheoryd_http_suspensions_total")
        stop(p)
        print("suspensions per GET: %.3f" % ((after - before) / args.n))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("daemon")
    ap.add_argument("--tool", choices=["strace", "callgrind", "suspend"], default="strace")
    ap.add_argument("-n", type=int, default=2000, help="GETs (default 2000)")
    ap.add_argument("--endpoint", help="dynamodb backend on this peer (default: memory backend)")
    ap.add_argument("--function", help="with --tool callgrind: also this function's share")
    ap.add_argument("--callgrind-out", metavar="FILE",
                    help="with --tool callgrind: keep the profiles (FILE: N GETs, FILE.0: none)")
    ap.add_argument("--ddb-listener", action="store_true",
                    help="GetItems on the DynamoDB listener (--dynamodb-listen) instead of GETs")
    args = ap.parse_args()
    args.daemon = os.path.abspath(args.daemon)
    {"strace": run_strace, "callgrind": run_callgrind, "suspend": run_suspend}[args.tool](args)


if __name__ == "__main__":
    main()
