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

  bench/per_get.py _build/tabletheoryd --tool strace -n 2000
  bench/per_get.py _build/tabletheoryd --tool callgrind -n 2000
"""

import argparse
import http.client as httpclient
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import BENCH_ITEM, free_port, http, write_bench_model  # noqa: E402

PATH = "/v1/models/Bench/items/ITEM%231/A"


def start(daemon, workdir, wrap, port):
    argv = [daemon, "--listen", "127.0.0.1:%d" % port, "--log-level", "warn"]
    argv += write_bench_model(workdir)
    argv = wrap + argv
    err = open(os.path.join(workdir, "daemon.err"), "w")
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
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
    status, body = http("POST", base + "/v1/models/Bench/items", BENCH_ITEM)
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
        p = start(args.daemon, wd, [], port)
        gets(port, 50)  # warm: allocator, connection pool
        out = os.path.join(wd, "strace.txt")
        st = subprocess.Popen(["strace", "-c", "-f", "-o", out, "-p", str(p.pid)],
                              stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # attached
        gets(port, args.n)
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


def callgrind_ir(args, n):
    with tempfile.TemporaryDirectory() as wd:
        port = free_port()
        log = os.path.join(wd, "vg.log")
        wrap = ["valgrind", "--tool=callgrind", "--log-file=" + log,
                "--callgrind-out-file=" + os.path.join(wd, "cg.out")]
        p = start(args.daemon, wd, wrap, port)
        gets(port, n)
        stop(p)
        m = re.search(r"Collected : (\d+)", open(log).read())
        return int(m.group(1))


def run_callgrind(args):
    with_n = callgrind_ir(args, args.n)
    none = callgrind_ir(args, 0)
    print("Ir with %d GETs %d, with none %d: %.0f instructions per GET"
          % (args.n, with_n, none, (with_n - none) / args.n))


def run_suspend(args):
    with tempfile.TemporaryDirectory() as wd:
        port = free_port()
        p = start(args.daemon, wd, [], port)
        before = metric(port, "tabletheoryd_http_suspensions_total")
        gets(port, args.n)
        after = metric(port, "tabletheoryd_http_suspensions_total")
        stop(p)
        print("suspensions per GET: %.3f" % ((after - before) / args.n))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("daemon")
    ap.add_argument("--tool", choices=["strace", "callgrind", "suspend"], default="strace")
    ap.add_argument("-n", type=int, default=2000, help="GETs (default 2000)")
    args = ap.parse_args()
    args.daemon = os.path.abspath(args.daemon)
    {"strace": run_strace, "callgrind": run_callgrind, "suspend": run_suspend}[args.tool](args)


if __name__ == "__main__":
    main()
