#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""peer.py -- the latency the daemon adds in front of a DynamoDB peer (dynalite).

    bench/peer.py [./tabletheoryd] [--peer dynalite|moto | --endpoint URL] [--json FILE]

In one run, on one peer and one item (the ~1 KB item of run.py's get-item):
  - "peer":   wrk POSTs GetItem straight to the peer (X-Amz-Target
              DynamoDB_20120810.GetItem, application/x-amz-json-1.0, a dummy
              Authorization header: dynalite checks no signature);
  - "daemon": wrk GETs /v1/models/Peer/items/ITEM%231/A from the daemon
              (--backend dynamodb --endpoint <peer>), which makes the same
              GetItem on a kept-alive connection and answers logical JSON.
For each connection count (default 1 and 8) the two alternate for --rounds
rounds of -d seconds; then both run at a fixed rate (--rate req/s, -c4).
Printed: requests/s, p50/p99 of each, added latency (daemon - peer, per round,
median over rounds) and the CPU µs per request of the daemon and of the peer
process. Exit 1 when a request failed or the daemon did not exit 0.
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

from benchlib import (BENCH_ITEM, Client, Daemon, Peer, PEER_ENV, die, fmt, lua_request, mem_kb,
                      peer_getitem, run_wrk_raw, warn_load, write_models)

GET_PATH = "/v1/models/Peer/items/ITEM%231/A"


def duration_sums(c):
    """(HTTP seconds, HTTP count, backend seconds, backend count) from /metrics.

    The /metrics scrapes themselves are left out; in a daemon run every
    request is one GET making one GetItem, so the difference of the two
    means is the time a request spends in the daemon outside the backend
    call (parsing, routing, signing, curl, JSON), without the client's hops."""
    st, data = c.request("GET", "/metrics")
    out = [0.0, 0, 0.0, 0]
    for line in data.decode().splitlines():
        if 'route="/metrics"' in line:
            continue
        for i, name in ((0, "tabletheoryd_http_request_duration_seconds"),
                        (2, "tabletheoryd_backend_call_duration_seconds")):
            if line.startswith(name + "_sum"):
                out[i] += float(line.rsplit(" ", 1)[1])
            elif line.startswith(name + "_count"):
                out[i + 1] += int(float(line.rsplit(" ", 1)[1]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("daemon", nargs="?", default="./tabletheoryd")
    ap.add_argument("--peer", default="dynalite", choices=["dynalite", "moto"],
                    help="peer to start with tests/peers/start_peer.sh (default dynalite)")
    ap.add_argument("--endpoint", help="use this running peer instead of starting one")
    ap.add_argument("-d", "--duration", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--connections", default="1,8", help="comma-separated wrk -c values")
    ap.add_argument("--rate", type=int, default=500, help="fixed-rate run, req/s (0: skip)")
    ap.add_argument("--rate-duration", type=int, default=20)
    ap.add_argument("--pin", metavar="SERVER_CPU,WRK_CPU",
                    help="daemon on SERVER_CPU, wrk on WRK_CPU (the peer is not pinned)")
    ap.add_argument("--daemon-arg", action="append", default=[])
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if not os.access(args.daemon, os.X_OK):
        die("%s is not an executable" % args.daemon)
    if shutil.which("wrk") is None:
        die("wrk not found: apt-get install wrk")
    srv_prefix, wrk_prefix = [], []
    if args.pin:
        a, b = args.pin.split(",")
        srv_prefix, wrk_prefix = ["taskset", "-c", a], ["taskset", "-c", b]
    conns = [int(x) for x in args.connections.split(",")]

    l1 = warn_load()
    os.environ.update(PEER_ENV)
    workdir = tempfile.mkdtemp(prefix="tt-peer-")
    table = "bench-peer-%x" % time.time_ns()
    res = {"config": vars(args) | {"load1_before": l1, "nproc": os.cpu_count(), "table": table},
           "runs": {}}
    peer = daemon = None
    failed = False
    try:
        if args.endpoint:
            endpoint, peer_pid = args.endpoint, None
        else:
            peer = Peer(args.peer)
            endpoint, peer_pid = peer.endpoint, peer.pid
        print("peer %s at %s" % (args.peer if peer else "(given)", endpoint))
        models = write_models(workdir, [("Peer", table)])
        daemon = Daemon(args.daemon, ["--log-level", "warn", "--backend", "dynamodb",
                                      "--endpoint", endpoint, "--region", "us-east-1",
                                      "--models", models, "--allow-table-delete",
                                      *args.daemon_arg], workdir, prefix=srv_prefix)
        c = Client(daemon.base)
        st, data = c.request("PUT", "/v1/models/Peer/table")
        if st not in (200, 201):
            die("PUT table answered %d %s" % (st, data[:300]))
        st, data = c.request("PUT", GET_PATH, BENCH_ITEM)
        if st not in (200, 201):
            die("PUT item answered %d %s" % (st, data[:300]))
        st, data = c.request("GET", GET_PATH)
        if st != 200 or json.loads(data).get("payload") != BENCH_ITEM["payload"]:
            die("GET item answered %d %s" % (st, data[:200]))

        peer_headers, peer_body = peer_getitem(table)
        pc = Client(endpoint)
        st, data = pc.request("POST", "/", peer_body.encode(), peer_headers)
        if st != 200 or "Item" not in json.loads(data):
            die("the peer's GetItem answered %d %s" % (st, data[:300]))
        pc.close()

        targets = {"peer": (endpoint + "/", "POST", peer_body, peer_headers, peer_pid),
                   "daemon": (daemon.base + GET_PATH, "GET", None, {}, daemon.pid)}

        def one(label, connections, duration, rate=None):
            url, method, body, headers, pid = targets[label]
            lua = lua_request(os.path.join(workdir, "%s-%d-%s.lua" % (label, connections, rate)),
                              method, body, headers, rate=rate, connections=connections)
            m0 = duration_sums(c) if label == "daemon" else None
            r = run_wrk_raw(url, lua, 1, connections, duration, wrk_prefix, pid)
            r["in_daemon_mean_ms"] = None
            if m0:
                m1 = duration_sums(c)
                n_http, n_be = m1[1] - m0[1], m1[3] - m0[3]
                if n_http and n_be:
                    r["in_daemon_mean_ms"] = 1e3 * ((m1[0] - m0[0]) / n_http
                                                    - (m1[2] - m0[2]) / n_be)
            if args.verbose:
                print(r["wrk_out"])
            r.pop("wrk_out")
            return r

        idle = mem_kb(daemon.pid)
        for label in ("peer", "daemon"):  # warm-up: JIT of the peer, connections of the daemon
            one(label, 4, 2)
        hdr = "   %-7s %9s %9s %9s %13s %13s %7s %13s" % (
            "server", "req/s", "p50 ms", "p99 ms", "daemon us/req", "peer us/req", "errors",
            "in-daemon ms")
        for n in conns:
            rounds = []
            print("== GetItem, wrk -t1 -c%d -d%ds, %d rounds" % (n, args.duration, args.rounds))
            print(hdr)
            for _ in range(args.rounds):
                rr = {}
                for label in ("peer", "daemon"):
                    r = one(label, n, args.duration)
                    rr[label] = r
                    errs = r["non2xx"] + r["socket_errors"]
                    failed |= errs > 0
                    # CPU of the daemon only means something for the daemon's own run;
                    # the peer's CPU is read in both (it serves both).
                    print("   %-7s %9.0f %9s %9s %13s %13s %7d %13s" % (
                        label, r["rps"], fmt(r["p50_ms"], ".3f"), fmt(r["p99_ms"], ".3f"),
                        fmt(r["cpu_us_per_req"], ".1f") if label == "daemon" else "",
                        fmt(r["cpu_us_per_req"], ".1f") if label == "peer" else "", errs,
                        fmt(r["in_daemon_mean_ms"], ".3f") if label == "daemon" else ""))
                rounds.append(rr)
            summary = {
                "added_p50_ms": statistics.median(r["daemon"]["p50_ms"] - r["peer"]["p50_ms"]
                                                  for r in rounds),
                "added_p99_ms": statistics.median(r["daemon"]["p99_ms"] - r["peer"]["p99_ms"]
                                                  for r in rounds),
                "peer_p50_ms": statistics.median(r["peer"]["p50_ms"] for r in rounds),
                "peer_p99_ms": statistics.median(r["peer"]["p99_ms"] for r in rounds),
                "daemon_p50_ms": statistics.median(r["daemon"]["p50_ms"] for r in rounds),
                "daemon_p99_ms": statistics.median(r["daemon"]["p99_ms"] for r in rounds),
                "daemon_cpu_us_per_req": statistics.median(r["daemon"]["cpu_us_per_req"]
                                                           for r in rounds),
                "in_daemon_mean_ms": statistics.median(r["daemon"]["in_daemon_mean_ms"] or 0
                                                       for r in rounds),
            }
            res["runs"]["c%d" % n] = {"rounds": rounds, "summary": summary}
            print("   median of rounds: peer p50 %.3f p99 %.3f ms; daemon p50 %.3f p99 %.3f ms; "
                  "added p50 %.3f ms, p99 %.3f ms; daemon CPU %.1f us/req; "
                  "in-daemon mean %.3f ms"
                  % (summary["peer_p50_ms"], summary["peer_p99_ms"], summary["daemon_p50_ms"],
                     summary["daemon_p99_ms"], summary["added_p50_ms"], summary["added_p99_ms"],
                     summary["daemon_cpu_us_per_req"], summary["in_daemon_mean_ms"]))
            sys.stdout.flush()
        if args.rate:
            print("== GetItem at ~%d req/s, wrk -t1 -c4 -d%ds" % (args.rate, args.rate_duration))
            print(hdr)
            rr = {}
            for label in ("peer", "daemon"):
                r = one(label, 4, args.rate_duration, rate=args.rate)
                rr[label] = r
                errs = r["non2xx"] + r["socket_errors"]
                failed |= errs > 0
                print("   %-7s %9.0f %9s %9s %13s %13s %7d %13s" % (
                    label, r["rps"], fmt(r["p50_ms"], ".3f"), fmt(r["p99_ms"], ".3f"),
                    fmt(r["cpu_us_per_req"], ".1f") if label == "daemon" else "",
                    fmt(r["cpu_us_per_req"], ".1f") if label == "peer" else "", errs,
                    fmt(r["in_daemon_mean_ms"], ".3f") if label == "daemon" else ""))
            print("   added p50 %.3f ms, p99 %.3f ms" % (rr["daemon"]["p50_ms"] - rr["peer"]["p50_ms"],
                                                       rr["daemon"]["p99_ms"] - rr["peer"]["p99_ms"]))
            res["runs"]["rate"] = rr
        m = mem_kb(daemon.pid)
        res["daemon_rss_kb"] = {"idle": idle["VmRSS"], "after": m["VmRSS"], "hwm": m["VmHWM"]}
        print("daemon RSS: idle %d KiB, after %d KiB, peak %d KiB"
              % (idle["VmRSS"], m["VmRSS"], m["VmHWM"]))
        st, _ = c.request("DELETE", "/v1/models/Peer/table")
        c.close()
    finally:
        if daemon is not None:
            status = daemon.stop()
            res["exit_status"] = status
            print("daemon exit status after SIGTERM: %s" % status)
            failed |= status != 0
        if peer is not None:
            peer.stop()
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
