#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""batch.py -- batch-write / batch-get throughput and parallel scan, memory and dynalite.

    bench/batch.py [./tabletheoryd] [--backends memory,dynalite] [--concurrency 1,4,8]
                   [--items 10000] [--reps 3] [--scan-items 100000] [--segments 1,4,8]

Part 1, for every backend and every --batch-concurrency value (a fresh daemon
and a fresh table each): --reps times, one batch-write call of --items new
~200-byte items, then one batch-get call of the same keys (every item must
come back, none missing). items/s = items / wall time of the call, seen by
the client (keep-alive connection, body built before the clock starts); the
daemon's CPU µs per item is read from /proc.

Part 2, on every --scan-backends backend: --scan-items items are loaded
(batch-write, 10,000 per call), then for each --segments value the whole table
is read by walking the scan cursor (POST /v1/models/{m}/scan {"segments": S,
"cursor": ...}, no limit: each segment reads one backend page per call) until
it is null; time to read everything, calls, and a check that every item came
back exactly once.

Every call has a timeout and every walk a --time-limit; peers are stopped at
the end. Exit 1 when a call failed or a check did not hold.
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

from benchlib import (CLK_TCK, Client, Daemon, Peer, PEER_ENV, cpu_ticks, die, item, key,
                      warn_load, write_models)


def body_of(obj):
    return json.dumps(obj, separators=(",", ":")).encode()


def timed(c, method, path, body):
    t = time.monotonic()
    st, data = c.request(method, path, body)
    return st, data, time.monotonic() - t


def start_daemon(args, workdir, backend, endpoint, concurrency, models, label):
    argv = ["--log-level", "warn", "--models", models, "--max-body-bytes", str(16 << 20),
            "--request-timeout-ms", "120000", "--batch-concurrency", str(concurrency),
            *args.daemon_arg]
    if backend != "memory":
        argv += ["--backend", "dynamodb", "--endpoint", endpoint, "--region", "us-east-1",
                 "--allow-table-delete"]
    return Daemon(args.daemon, argv, workdir, label=label)


def ensure_table(c, model, backend):
    if backend == "memory":
        return
    st, data = c.request("PUT", "/v1/models/%s/table" % model)
    if st not in (200, 201):
        die("PUT table %s answered %d %s" % (model, st, data[:300]))


def drop_table(c, model, backend):
    if backend != "memory":
        c.request("DELETE", "/v1/models/%s/table" % model)


def part1(args, workdir, backend, endpoint, nonce, out):
    failed = False
    print("== batch-write / batch-get of %d items, %s backend, %d reps (items/s: median, best)"
          % (args.items, backend, args.reps))
    print("   %-11s %14s %14s %12s %14s %14s %12s" % (
        "concurrency", "write items/s", "best", "write us/it", "get items/s", "best",
        "get us/it"))
    for conc in args.concurrency:
        model = "B%s%d" % (backend[:3].capitalize(), conc)
        table = "bench-batch-%s-c%d-%s" % (backend, conc, nonce)
        models = write_models(os.path.join(workdir, model), [(model, table)])
        d = start_daemon(args, workdir, backend, endpoint, conc, models, "daemon-" + model)
        c = Client(d.base, timeout=180)
        try:
            ensure_table(c, model, backend)
            w_rate, g_rate, w_cpu, g_cpu = [], [], [], []
            for rep in range(args.reps):
                items = [item(i, 1000, "R%d" % rep) for i in range(args.items)]
                keys = [key(i, 1000, "R%d" % rep) for i in range(args.items)]
                wbody, gbody = body_of({"put": items}), body_of({"keys": keys})
                c0 = cpu_ticks(d.pid)
                st, data, dt = timed(c, "POST", "/v1/models/%s/batch-write" % model, wbody)
                c1 = cpu_ticks(d.pid)
                if st != 200 or json.loads(data).get("processed") != args.items:
                    print("   batch-write answered %d %s" % (st, data[:300]))
                    failed = True
                    break
                w_rate.append(args.items / dt)
                w_cpu.append((c1 - c0) * 1e6 / CLK_TCK / args.items)
                st, data, dt = timed(c, "POST", "/v1/models/%s/batch-get" % model, gbody)
                c2 = cpu_ticks(d.pid)
                got = json.loads(data) if st == 200 else {}
                if st != 200 or len(got.get("items", [])) != args.items or got.get("missing"):
                    print("   batch-get answered %d, %d items, %d missing %s"
                          % (st, len(got.get("items", [])), len(got.get("missing", [])),
                             data[:200] if st != 200 else b""))
                    failed = True
                    break
                g_rate.append(args.items / dt)
                g_cpu.append((c2 - c1) * 1e6 / CLK_TCK / args.items)
            drop_table(c, model, backend)
        finally:
            c.close()
            status = d.stop()
            failed |= status != 0
        if not w_rate or not g_rate:
            continue
        row = {"write_items_per_s": statistics.median(w_rate), "write_best": max(w_rate),
               "write_cpu_us_per_item": statistics.median(w_cpu),
               "get_items_per_s": statistics.median(g_rate), "get_best": max(g_rate),
               "get_cpu_us_per_item": statistics.median(g_cpu),
               "write_all": w_rate, "get_all": g_rate, "exit_status": status}
        out.setdefault(backend, {})["c%d" % conc] = row
        print("   %-11d %14.0f %14.0f %12.1f %14.0f %14.0f %12.1f" % (
            conc, row["write_items_per_s"], row["write_best"], row["write_cpu_us_per_item"],
            row["get_items_per_s"], row["get_best"], row["get_cpu_us_per_item"]))
        sys.stdout.flush()
    return failed


def part2(args, workdir, backend, endpoint, nonce, out):
    failed = False
    model = "S%s" % backend[:3].capitalize()
    table = "bench-scan-%s-%s" % (backend, nonce)
    models = write_models(os.path.join(workdir, model), [(model, table)])
    d = start_daemon(args, workdir, backend, endpoint, args.load_concurrency, models,
                     "daemon-" + model)
    c = Client(d.base, timeout=180)
    try:
        ensure_table(c, model, backend)
        t0 = time.monotonic()
        for start in range(0, args.scan_items, 10000):
            end = min(args.scan_items, start + 10000)
            st, data = c.request("POST", "/v1/models/%s/batch-write" % model,
                                 body_of({"put": [item(i) for i in range(start, end)]}))
            if st != 200:
                die("loading the scan table: batch-write answered %d %s" % (st, data[:300]))
        load_s = time.monotonic() - t0
        print("== parallel scan of %d items, %s backend (loaded in %.1f s, %.0f items/s, "
              "--batch-concurrency %d)" % (args.scan_items, backend, load_s,
                                           args.scan_items / load_s, args.load_concurrency))
        print("   %-8s %9s %12s %7s %12s" % ("segments", "seconds", "items/s", "calls",
                                              "CPU us/item"))
        for seg in args.segments:
            seen = set()
            dup = calls = 0
            cursor = None
            c0 = cpu_ticks(d.pid)
            t = time.monotonic()
            deadline = t + args.time_limit
            ok = True
            while True:
                body = {"segments": seg}
                if cursor:
                    body["cursor"] = cursor
                st, data = c.request("POST", "/v1/models/%s/scan" % model, body_of(body))
                calls += 1
                if st != 200:
                    print("   scan answered %d %s" % (st, data[:300]))
                    ok = False
                    break
                page = json.loads(data)
                for it in page["items"]:
                    k = (it["PK"], it["SK"])
                    dup += k in seen
                    seen.add(k)
                cursor = page.get("cursor")
                if not cursor:
                    break
                if time.monotonic() > deadline:
                    print("   time limit of %d s reached" % args.time_limit)
                    ok = False
                    break
            dt = time.monotonic() - t
            cpu = (cpu_ticks(d.pid) - c0) * 1e6 / CLK_TCK / max(1, len(seen))
            if len(seen) != args.scan_items or dup:
                print("   %d segments: %d distinct items, %d duplicates (expected %d)"
                      % (seg, len(seen), dup, args.scan_items))
                ok = False
            failed |= not ok
            out.setdefault(backend, {})["segments_%d" % seg] = {
                "seconds": dt, "items_per_s": len(seen) / dt, "calls": calls,
                "cpu_us_per_item": cpu, "ok": ok}
            print("   %-8d %9.2f %12.0f %7d %12.1f" % (seg, dt, len(seen) / dt, calls, cpu))
            sys.stdout.flush()
        drop_table(c, model, backend)
    finally:
        c.close()
        failed |= d.stop() != 0
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("daemon", nargs="?", default="./tabletheoryd")
    ap.add_argument("--backends", default="memory,dynalite",
                    help="memory, dynalite and/or moto (part 1)")
    ap.add_argument("--scan-backends", default="dynalite,memory", help="part 2 (empty: skip)")
    ap.add_argument("--endpoint", help="a running peer to use instead of starting dynalite/moto")
    ap.add_argument("--concurrency", default="1,4,8", help="--batch-concurrency values")
    ap.add_argument("--items", type=int, default=10000, help="items per batch call (<= 10000)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--scan-items", type=int, default=100000)
    ap.add_argument("--segments", default="1,4,8")
    ap.add_argument("--load-concurrency", type=int, default=8,
                    help="--batch-concurrency of the daemon that loads and scans (part 2)")
    ap.add_argument("--time-limit", type=int, default=300, help="seconds per scan walk")
    ap.add_argument("--daemon-arg", action="append", default=[])
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    if not os.access(args.daemon, os.X_OK):
        die("%s is not an executable" % args.daemon)
    args.concurrency = [int(x) for x in args.concurrency.split(",")]
    args.segments = [int(x) for x in args.segments.split(",")]
    backends = [b for b in args.backends.split(",") if b]
    scan_backends = [b for b in args.scan_backends.split(",") if b]

    l1 = warn_load()
    os.environ.update(PEER_ENV)
    nonce = "%x" % time.time_ns()
    workdir = tempfile.mkdtemp(prefix="tt-batch-")
    res = {"config": {k: v for k, v in vars(args).items()} | {"load1_before": l1,
                                                              "nproc": os.cpu_count()},
           "batch": {}, "scan": {}}
    peers = {}
    failed = False
    try:
        for backend in dict.fromkeys(backends + scan_backends):
            if backend == "memory":
                continue
            if args.endpoint:
                peers[backend] = (None, args.endpoint)
            else:
                p = Peer(backend)
                peers[backend] = (p, p.endpoint)
                print("peer %s at %s" % (backend, p.endpoint))
        for backend in backends:
            failed |= part1(args, workdir, backend, peers.get(backend, (None, None))[1], nonce,
                            res["batch"])
        for backend in scan_backends:
            failed |= part2(args, workdir, backend, peers.get(backend, (None, None))[1], nonce,
                            res["scan"])
    finally:
        for p, _ in peers.values():
            if p is not None:
                p.stop()
        shutil.rmtree(workdir, ignore_errors=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(res, f, indent=2)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
