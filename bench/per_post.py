#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""per_post.py -- what a POST of a new item costs the daemon in an empty table and
in one that already holds many items (memory backend).

The daemon (bench/load.py's model of 199-byte items) first gets --preload items
through batch-write from 4 clients, as load.py sends them, with
--per-partition items per partition key (1: every item its own partition, the
worst case for the partition index). Then one keep-alive connection POSTs -n
new items, each with a new partition key, and

  --tool callgrind  runs the daemon under `valgrind --tool=callgrind
                    --instr-atstart=no --cache-sim=yes --LL=8388608,16,64`
                    (an 8 MiB last-level cache: valgrind would take the host's
                    figure, 512 MiB on the build machine, which holds any
                    store), turns instrumentation on for the N POSTs only
                    (`callgrind_control -i on`, then `-d`), and prints per
                    POST: instructions (Ir), first-level and last-level data
                    misses, and callgrind's cycle estimate
                    Ir + 10 (I1mr + D1mr + D1mw) + 100 (ILmr + DLmr + DLmw)
                    of the daemon's process (a snapshot's forked child, which
                    valgrind runs too, writes its own dump and is not counted);
  --tool cpu        runs it natively and prints the daemon's user and system
                    CPU time (utime, stime from /proc) per POST; the ratio is
                    of user time (system time is mostly the loopback and, on a
                    shared VM, lock contention in the kernel). Noisy on a busy
                    machine: run it several times.

For every value of --preload (default 0 and 300000) in one run, then the ratio
of the last to the first. With --fsync, the files of the data dir before and
after the N POSTs are printed too: a snapshot (a log.* file of a new generation,
a new snapshot) taken during the N POSTs is in their figure; with the 64 MiB
bound about 280,000 items preloaded put the log's first snapshot into the next
20,000 POSTs.

  bench/per_post.py _build/tabletheoryd --tool callgrind -n 2000
  bench/per_post.py _build/tabletheoryd --tool cpu -n 20000 --preload 0,300000
  bench/per_post.py _build/tabletheoryd --preload 0 --fsync everysec   # with a data dir
  bench/per_post.py _build/tabletheoryd --preload 280000 -n 20000 --fsync everysec  # a snapshot
"""

import argparse
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (Client, CLK_TCK, PAYLOAD, batch_bodies, bulk_load, die,  # noqa: E402
                      free_port, http, item_json, write_models)

VALGRIND = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--cache-sim=yes",
            "--LL=8388608,16,64"]
POST_TMPL = '{"PK":"Q#%%07d","SK":"S#0000","payload":"%s","count":%%d}' % PAYLOAD


def start(daemon, workdir, wrap, fsync=None):
    port = free_port()
    argv = wrap + [daemon, "--listen", "127.0.0.1:%d" % port, "--log-level", "warn",
                   "--models", write_models(workdir, [("Load", "load")]),
                   "--max-body-bytes", str(16 << 20), "--request-timeout-ms", "600000"]
    if fsync:
        argv += ["--data-dir", os.path.join(workdir, "data"), "--fsync", fsync]
    err = open(os.path.join(workdir, "daemon.err"), "w")
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
    base = "http://127.0.0.1:%d" % port
    for _ in range(1200):  # valgrind starts slowly
        if http("GET", base + "/healthz")[0] == 200:
            return p, base
        if p.poll() is not None:
            break
        time.sleep(0.05)
    p.kill()
    die("the daemon did not become ready")


def preload(base, n, per_partition):
    if n:
        bodies = batch_bodies(n, 25, lambda i: item_json(i, per_partition))
        _, _, errors = bulk_load(base, "Load", bodies, 4, 3600)
        if errors:
            die("preload failed: %s" % errors[:2])


def posts(c, first, n):
    for i in range(first, first + n):
        status, body = c.request("POST", "/v1/models/Load/items", (POST_TMPL % (i, i)).encode())
        if status != 201:
            die("POST answered %d %s" % (status, body[:200]))


def data_files(wd, fsync):
    """The data dir's files and their sizes, as one line (with --fsync)."""
    if not fsync:
        return ""
    d = os.path.join(wd, "data")
    return "data dir: " + ", ".join("%s %d" % (f, os.path.getsize(os.path.join(d, f)))
                                    for f in sorted(os.listdir(d)) if f != "LOCK")


def user_sys(pid):
    """utime and stime of pid, in clock ticks."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])


def stop(p):
    p.send_signal(15)
    if p.wait(timeout=600) != 0:
        die("the daemon exited %d" % p.returncode)


def run_callgrind(args, n_preload):
    with tempfile.TemporaryDirectory() as wd:
        out = os.path.join(wd, "cg.out")
        # %p: a forked child writes its own dump, never over the daemon's.
        p, base = start(args.daemon, wd, VALGRIND + ["--callgrind-out-file=" + out + ".%p"],
                        args.fsync)
        preload(base, n_preload, args.per_partition)
        c = Client(base, timeout=600)
        posts(c, 9000000, 20)  # warm-up, not counted
        time.sleep(1.0)  # the daemon's heap trim, due 200 ms after a burst, is not a POST's
        # ... nor later: a request whose body never ends keeps the daemon from
        # being idle until the dump (callgrind_control takes longer than 200 ms).
        hold = socket.create_connection(("127.0.0.1", int(base.rsplit(":", 1)[1])))
        hold.sendall(b"POST /v1/models/Load/items HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
        posts(c, 9000100, 1)
        subprocess.run(["callgrind_control", "-i", "on", str(p.pid)], check=True,
                       capture_output=True)
        before = data_files(wd, args.fsync)
        posts(c, 0, args.n)
        subprocess.run(["callgrind_control", "-d", str(p.pid)], check=True, capture_output=True)
        after = data_files(wd, args.fsync)
        subprocess.run(["callgrind_control", "-i", "off", str(p.pid)], check=True,
                       capture_output=True)
        hold.close()
        c.close()
        stop(p)
        dump = glob.glob("%s.%d.1" % (out, p.pid))[0]
        events = totals = None
        for line in open(dump):
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("totals:") or line.startswith("summary:"):
                totals = [int(x) for x in line.split()[1:]]
        if args.keep:
            shutil.copy(dump, "per_post-%d.callgrind" % n_preload)
        v = {k: t / args.n for k, t in zip(events, totals)}
        v["cycles"] = (v["Ir"] + 10 * (v["I1mr"] + v["D1mr"] + v["D1mw"]) +
                       100 * (v["ILmr"] + v["DLmr"] + v["DLmw"]))
        if args.fsync:
            print("before the POSTs, %s\nafter them,      %s" % (before, after))
        print("preload %7d (%d/partition): Ir %.0f, D1 misses %.0f, LL misses %.0f, "
              "cycle estimate %.0f per POST"
              % (n_preload, args.per_partition, v["Ir"], v["D1mr"] + v["D1mw"],
                 v["ILmr"] + v["DLmr"] + v["DLmw"], v["cycles"]), flush=True)
        return v["cycles"]


def run_cpu(args, n_preload):
    with tempfile.TemporaryDirectory() as wd:
        p, base = start(args.daemon, wd, [], args.fsync)
        preload(base, n_preload, args.per_partition)
        c = Client(base)
        posts(c, 9000000, 200)  # warm-up
        time.sleep(1.0)
        u0, s0 = user_sys(p.pid)
        before = data_files(wd, args.fsync)
        posts(c, 0, args.n)
        u1, s1 = user_sys(p.pid)
        after = data_files(wd, args.fsync)
        c.close()
        stop(p)
        user = (u1 - u0) * 1e6 / CLK_TCK / args.n
        if args.fsync:
            print("before the POSTs, %s\nafter them,      %s" % (before, after))
        print("preload %7d (%d/partition): daemon CPU per POST: user %.1f us, system %.1f us"
              % (n_preload, args.per_partition, user, (s1 - s0) * 1e6 / CLK_TCK / args.n),
              flush=True)
        return user


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("daemon")
    ap.add_argument("--tool", choices=["callgrind", "cpu"], default="callgrind")
    ap.add_argument("-n", type=int, default=2000, help="POSTs measured (default 2000)")
    ap.add_argument("--preload", default="0,300000", help="items already stored, comma-separated")
    ap.add_argument("--per-partition", type=int, default=1)
    ap.add_argument("--fsync", choices=["always", "everysec", "no"],
                    help="with a data dir (in the temporary directory) and this --fsync")
    ap.add_argument("--keep", action="store_true", help="keep the callgrind dumps here")
    args = ap.parse_args()
    args.daemon = os.path.abspath(args.daemon)
    run = run_callgrind if args.tool == "callgrind" else run_cpu
    figures = [run(args, int(n)) for n in args.preload.split(",")]
    if len(figures) > 1 and figures[0]:
        print("ratio last/first: %.3f" % (figures[-1] / figures[0]))


if __name__ == "__main__":
    main()
