#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""load.py -- loads N items through batch-write on the memory backend, then
measures the daemon's memory and the latency of a Query on a 1,000-item partition.

    bench/load.py [./tabletheoryd] [--items 1000000] [--clients 4] [--json FILE]
    bench/load.py [./tabletheoryd] --per-partition 1 --no-query   # unique partition keys

Steps (every one bounded: HTTP timeouts, wrk durations, --time-limit for the load):
 1. start the daemon (memory backend, one model of ~200-byte items, --max-body-bytes
    large enough for 10,000 puts per call) and read its idle VmRSS;
 2. build the batch-write bodies first (so the client's JSON work is not timed),
    then send them from --clients threads, each with its own keep-alive
    connection: load rate (items/s), the daemon's CPU µs per item, VmRSS/VmHWM
    after the load, and the table's item_count as a check;
 3. Query {"key": [PK = one partition], "limit": 100} with wrk, each request on
    a random one of the N/1000 partitions (each holds 1,000 items): once with one
    connection (latency of a lone client) and once with 16 (throughput), p50/p99
    and CPU µs per query (skipped with --no-query, which a --per-partition below
    the query limit needs);
 4. SIGTERM, exit status must be 0.
Exit 1 when a call failed, the count is wrong or the daemon did not exit 0.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

from benchlib import (BULK_DAEMON_ARGS, CLK_TCK, Client, Daemon, batch_bodies, bulk_load,
                      cpu_ticks, die, fmt, item_json, item_size, lua_request, mem_kb, QUERY_LUA, run_wrk_raw,
                      warn_load, write_models)





def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("daemon", nargs="?", default="./tabletheoryd")
    ap.add_argument("--items", type=int, default=1000000)
    ap.add_argument("--per-partition", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=10000, help="puts per batch-write call (<= 10000)")
    ap.add_argument("--clients", type=int, default=4, help="parallel batch-write clients")
    ap.add_argument("--time-limit", type=int, default=600, help="seconds the load may take")
    ap.add_argument("--query-limit", type=int, default=100)
    ap.add_argument("--no-query", action="store_true", help="load and measure memory only")
    ap.add_argument("-d", "--duration", type=int, default=10, help="seconds per wrk query run")
    ap.add_argument("--pin", metavar="SERVER_CPU,WRK_CPU")
    ap.add_argument("--daemon-arg", action="append", default=[])
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    if not os.access(args.daemon, os.X_OK):
        die("%s is not an executable" % args.daemon)
    if shutil.which("wrk") is None and not args.no_query:
        die("wrk not found: apt-get install wrk")
    srv_prefix, wrk_prefix = [], []
    if args.pin:
        a, b = args.pin.split(",")
        srv_prefix, wrk_prefix = ["taskset", "-c", a], ["taskset", "-c", b]

    l1 = warn_load()
    workdir = tempfile.mkdtemp(prefix="tt-load-")
    res = {"config": vars(args) | {"load1_before": l1, "nproc": os.cpu_count()}}
    daemon = None
    failed = False
    try:
        models = write_models(workdir, [("Load", "load")])
        daemon = Daemon(args.daemon, ["--log-level", "warn", "--models", models,
                                      *BULK_DAEMON_ARGS, *args.daemon_arg],
                        workdir, prefix=srv_prefix)
        time.sleep(0.5)
        idle = mem_kb(daemon.pid)
        print("daemon RSS idle: %d KiB (VmHWM %d KiB)" % (idle["VmRSS"], idle["VmHWM"]))

        t = time.monotonic()
        bodies = batch_bodies(args.items, args.batch,
                              lambda i: item_json(i, args.per_partition))
        print("built %d batch-write bodies (%.1f MB) in %.1f s"
              % (len(bodies), sum(len(b) for _, b in bodies) / 1e6, time.monotonic() - t))
        c0 = cpu_ticks(daemon.pid)
        elapsed, call_s, errors = bulk_load(daemon.base, "Load", bodies, args.clients,
                                            args.time_limit)
        c1 = cpu_ticks(daemon.pid)
        del bodies
        time.sleep(0.5)
        after = mem_kb(daemon.pid)
        c = Client(daemon.base)
        st, data = c.request("GET", "/v1/models/Load/table")
        count = json.loads(data).get("item_count") if st == 200 else None
        st, data = c.request("GET", "/v1/models/Load/items/P%%23%06d/S%%23%04d?format=dynamodb"
                             % (1 // args.per_partition, 1 % args.per_partition))
        size = item_size(json.loads(data)) if st == 200 else None
        call_s.sort()
        res["load"] = {"items": args.items, "seconds": elapsed, "items_per_s": args.items / elapsed,
                       "daemon_cpu_s": (c1 - c0) / CLK_TCK,
                       "daemon_cpu_us_per_item": (c1 - c0) * 1e6 / CLK_TCK / args.items,
                       "calls": len(call_s), "call_p50_s": call_s[len(call_s) // 2] if call_s else None,
                       "call_max_s": call_s[-1] if call_s else None,
                       "rss_idle_kb": idle["VmRSS"], "rss_after_kb": after["VmRSS"],
                       "hwm_after_kb": after["VmHWM"], "item_count": count,
                       "stored_item_bytes": size, "errors": errors[:5]}
        L = res["load"]
        print("load: %d items in %.1f s = %.0f items/s with %d clients of %d puts/call "
              "(call p50 %.2f s, max %.2f s); daemon CPU %.1f s = %.2f us/item"
              % (args.items, elapsed, L["items_per_s"], args.clients, args.batch,
                 L["call_p50_s"] or 0, L["call_max_s"] or 0, L["daemon_cpu_s"],
                 L["daemon_cpu_us_per_item"]))
        print("      stored item %s bytes (DynamoDB size); table item_count %s" % (size, count))
        print("daemon RSS after the load: VmRSS %d KiB (%.1f MiB), VmHWM %d KiB (%.1f MiB); "
              "%.0f bytes/item above idle"
              % (after["VmRSS"], after["VmRSS"] / 1024, after["VmHWM"], after["VmHWM"] / 1024,
                 (after["VmRSS"] - idle["VmRSS"]) * 1024.0 / args.items))
        if errors or count != args.items:
            print("LOAD FAILED: %s (item_count %s)" % (errors[:3], count))
            failed = True
            return 1

        if args.no_query:
            c.close()
            return 0
        parts = args.items // args.per_partition
        qbody = {"key": [{"attr": "PK", "op": "=", "value": "P#000000"}], "limit": args.query_limit}
        st, data = c.request("POST", "/v1/models/Load/query", qbody)
        c.close()
        got = json.loads(data) if st == 200 else {}
        if st != 200 or got.get("count") != args.query_limit or not got.get("cursor"):
            die("query check answered %d %s" % (st, data[:300]))
        lua = lua_request(os.path.join(workdir, "query.lua"), "POST", None,
                          {"Content-Type": "application/json"},
                          extra=QUERY_LUA % (parts, args.query_limit))
        url = daemon.base + "/v1/models/Load/query"
        run_wrk_raw(url, lua, 1, 4, 1, wrk_prefix, daemon.pid)  # warm-up
        res["query"] = {}
        print("== query: POST /v1/models/Load/query limit %d on a random 1,000-item partition "
              "of %d" % (args.query_limit, parts))
        print("   %-12s %10s %9s %9s %9s %12s %7s" % ("wrk", "req/s", "p50 ms", "p90 ms", "p99 ms",
                                                   "CPU us/req", "errors"))
        for conns in (1, 16):
            r = run_wrk_raw(url, lua, 1, conns, args.duration, wrk_prefix, daemon.pid)
            r.pop("wrk_out")
            res["query"]["c%d" % conns] = r
            errs = r["non2xx"] + r["socket_errors"]
            failed |= errs > 0
            print("   %-12s %10.0f %9s %9s %9s %12s %7d" % (
                "-t1 -c%d -d%d" % (conns, args.duration), r["rps"], fmt(r["p50_ms"], ".3f"),
                fmt(r["p90_ms"], ".3f"), fmt(r["p99_ms"], ".3f"), fmt(r["cpu_us_per_req"], ".1f"),
                errs))
        m = mem_kb(daemon.pid)
        res["rss_after_queries_kb"] = m["VmRSS"]
        print("daemon RSS after the queries: %d KiB" % m["VmRSS"])
    finally:
        if daemon is not None:
            t = time.monotonic()
            status = daemon.stop()
            res["exit_status"] = status
            res["stop_seconds"] = time.monotonic() - t
            print("daemon exit status after SIGTERM: %s (%.1f s)" % (status, res["stop_seconds"]))
            failed |= status != 0
        if args.keep:
            print("kept %s" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(res, f, indent=2)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
