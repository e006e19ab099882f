#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""run.py -- compares tabletheoryd with a bare libmicrohttpd server in one run.

It builds bench/bare_mhd.c with gcc into a temporary directory, starts it and
the daemon on free loopback ports, drives both with wrk and prints, per
scenario: requests/s, the daemon/bare ratio, p50/p99 latency, CPU time of the
server process per request (utime+stime from /proc/<pid>/stat), and the
daemon's RSS idle and under load (VmRSS/VmHWM from /proc/<pid>/status).

    bench/run.py [./tabletheoryd] [--duration 10] [--connections 16] ...
    bench/run.py --self-test          # the bare server against itself

Numbers are for one machine and one run: compare the two servers measured
side by side, never figures from different runs. A scenario is a few lines
in SCENARIOS below (see bench/README.md, "Adding a scenario").

The ratio scenarios (-s query, scan, post-growth, footprint,
peer-get; in targets.py) need no bare server: each measures its figure and
the reference its target is stated against (a GET, an empty table, the
item's size, dynalite) in the same run and prints the ratio next to the
target. load.py, peer.py and batch.py next to this file measure more of what
a fixed-body baseline cannot stand for (a large store, a DynamoDB peer,
batches and scans).

    bench/run.py ./tabletheoryd -s query -s scan -s post-growth -s footprint -s peer-get
    bench/run.py ./tabletheoryd -s query --items 20000 -d 2 --rounds 1   # a quick check
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# BENCH_ITEM, free_port, http and write_bench_model stay importable from here
# (per_get.py takes them from run).
from benchlib import (BENCH_ITEM, CLK_TCK, MODEL_YML, POST_LUA, Server, die, fmt,  # noqa: E402,F401
                      free_port, http, parse_wrk)
import targets  # noqa: E402


# ---------------------------------------------------------------- scenarios
class Scenario:
    """One request shape driven against both servers.

    setup(base_url, workdir) runs once against the daemon before its load
    (create a model, put an item); it is never run against the bare server,
    which answers the same fixed body whatever it is asked.
    daemon_args are extra command-line arguments the daemon needs for this
    scenario (e.g. --models DIR, written by a setup_files hook).
    targets: [(key of a wrk result, op, limit)]: the median over rounds of
    daemon/bare of that figure is printed next to `op limit` (never judged)."""

    def __init__(self, name, path, method="GET", body=None, headers=None,
                 setup=None, setup_files=None, expect_status=200, doc="", lua="", targets=()):
        self.lua = lua
        self.targets = targets
        self.name = name
        self.path = path
        self.method = method
        self.body = body
        self.headers = headers or {}
        self.setup = setup
        self.setup_files = setup_files
        self.expect_status = expect_status
        self.doc = doc

    def daemon_args(self, workdir):
        """Extra daemon flags; setup_files(workdir) writes files and returns them."""
        return self.setup_files(workdir) if self.setup_files else []


# The ~1 KB item of get-item (BENCH_ITEM, in benchlib) in a model of the same
# attributes as load.py's ~200-byte items.
BENCH_MODEL = MODEL_YML % {"name": "Bench", "table": "bench"}


def write_bench_model(workdir):
    path = os.path.join(workdir, "bench-models")
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "bench.yml"), "w") as f:
        f.write(BENCH_MODEL)
    return ["--models", path]


def put_bench_item(base):
    status, body = http("POST", base + "/v1/models/Bench/items", BENCH_ITEM)
    if status != 201:
        die("setup: creating the bench item answered %d %s" % (status, body[:200]))


SCENARIOS = {
    s.name: s
    for s in [
        Scenario("healthz", "/healthz",
                 doc="GET /healthz: the HTTP path alone (router, request id, "
                     "metrics, log line) against a fixed-body baseline"),
        Scenario("readyz", "/readyz", doc="GET /readyz"),
        Scenario("metrics", "/metrics",
                 doc="GET /metrics: the exposition (a larger body than the baseline's)"),
        Scenario("join", "/v1/_test/sleep", method="POST", body={"ops": 1, "ms": 0},
                 setup_files=lambda workdir: ["--enable-fault-injection"],
                 doc="POST /v1/_test/sleep with one 0 ms operation: a JSON body, a "
                     "suspended connection, one joined operation, resume"),
        Scenario("get-item", "/v1/models/Bench/items/ITEM%231/A",
                 setup_files=write_bench_model, setup=lambda base, workdir: put_bench_item(base),
                 doc="GET of a ~1 KB item on the memory backend: routing, GetItem through "
                     "the port, decoding, logical JSON",
                 targets=[("rps", ">=", 0.6), ("cpu_us_per_req", "<=", 2),
                          ("p99_ms", "<=", 3)]),
        # The body is what the one check request before the load sends (a valid
        # item); during the load POST_LUA gives every request a new key.
        Scenario("post-item", "/v1/models/Bench/items", method="POST",
                 body={"PK": "CHECK#1", "SK": "A", "payload": "y" * 900, "count": 1},
                 setup_files=write_bench_model, expect_status=201, lua=POST_LUA,
                 doc="POST of a new ~1 KB item (a new key every request): validation, "
                     "lifecycle fields, conditional PutItem",
                 targets=[("rps", ">=", 0.4)]),
    ]
}


# ---------------------------------------------------------------- helpers
def build_bare(workdir, cc):
    out = os.path.join(workdir, "bare_mhd")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libmicrohttpd"],
                           check=True, capture_output=True, text=True).stdout.split()
    cmd = [cc, "-O2", "-std=gnu11", "-Wall", "-Wextra", os.path.join(HERE, "bare_mhd.c"),
           *flags, "-o", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        die("building bare_mhd failed:\n" + " ".join(cmd) + "\n" + r.stderr)
    return out


def wrk_script(workdir, sc, rate, connections):
    """A Lua script for wrk: the request shape and, at a fixed rate, a delay.

    wrk has no rate option (wrk2 does); a per-request delay of
    connections/rate seconds on every connection approximates `rate`
    requests/s while the server keeps up. The achieved rate is reported."""
    lines = ['wrk.method = %s' % json.dumps(sc.method)]
    if sc.body is not None:
        body = sc.body if isinstance(sc.body, str) else json.dumps(sc.body)
        lines.append("wrk.body = %s" % json.dumps(body))
        lines.append('wrk.headers["Content-Type"] = "application/json"')
    for k, v in sc.headers.items():
        lines.append("wrk.headers[%s] = %s" % (json.dumps(k), json.dumps(v)))
    if sc.lua:
        lines.append(sc.lua.replace("__NONCE__", "%x" % time.time_ns()))
    if rate:
        lines.append("function delay() return %d end" % max(1, round(1000.0 * connections / rate)))
    path = os.path.join(workdir, "%s-%s.lua" % (sc.name, rate or "max"))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def run_wrk(server, sc, args, workdir, duration, rate=None):
    script = wrk_script(workdir, sc, rate, args.connections)
    cmd = args.wrk_prefix + ["wrk", "-t%d" % args.threads, "-c%d" % args.connections, "-d%ds" % duration,
           "--latency", "-s", script, server.base + sc.path]
    t0 = server.cpu_ticks()
    r = subprocess.run(cmd, capture_output=True, text=True)
    t1 = server.cpu_ticks()
    if r.returncode != 0:
        die("wrk failed: %s\n%s" % (" ".join(cmd), r.stderr))
    res = parse_wrk(r.stdout)
    if res["requests"] is None or res["rps"] is None:
        die("cannot read wrk's output:\n" + r.stdout)
    res["cpu_us_per_req"] = ((t1 - t0) * 1e6 / CLK_TCK / res["requests"]
                             if res["requests"] else None)
    res["cpu_s"] = (t1 - t0) / CLK_TCK
    res["wrk_cmd"] = " ".join(cmd)
    res["wrk_out"] = r.stdout
    return res


# ---------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("daemon", nargs="?", default="./tabletheoryd",
                    help="tabletheoryd binary (default ./tabletheoryd)")
    ap.add_argument("--self-test", action="store_true",
                    help="run a second bare server in the daemon's place (tests the harness)")
    ap.add_argument("-s", "--scenario", action="append",
                    help="scenario to run (repeatable; default healthz). Against the bare "
                         "server: %s. Ratio targets (targets.py): %s"
                         % (", ".join(SCENARIOS), ", ".join(targets.SCENARIOS)))
    ap.add_argument("-d", "--duration", type=int, default=10, help="seconds per measured run")
    ap.add_argument("-c", "--connections", type=int, default=16)
    ap.add_argument("-t", "--threads", type=int, default=1, help="wrk threads")
    ap.add_argument("--warmup", type=int, default=1, help="seconds of unmeasured load first")
    ap.add_argument("--rounds", type=int, default=3,
                    help="alternate bare/daemon (query, scan: reference/figure; peer-get: "
                         "dynalite/daemon) this many times (default 3); the report shows the "
                         "best round of each and the median of the per-round ratios")
    ap.add_argument("--pin", metavar="SERVER_CPU,WRK_CPU",
                    help="pin the servers and wrk to these CPUs with taskset (e.g. 0,1)")
    ap.add_argument("--rate", type=int, default=1000,
                    help="also run each scenario at about this many req/s (0: skip) for "
                         "CPU/request and RSS at a steady rate")
    ap.add_argument("--rate-duration", type=int, default=20,
                    help="seconds of the fixed-rate run (CPU time is read in clock ticks of "
                         "10 ms: 20 s at 1000 req/s resolves 0.5 us/request)")
    ap.add_argument("--log-level", default="warn",
                    help="daemon --log-level (default warn: no access log line per request)")
    ap.add_argument("--daemon-arg", action="append", default=[],
                    help="extra argument for the daemon (repeatable)")
    g = ap.add_argument_group("ratio scenarios (query, scan, post-growth, footprint, "
                              "peer-get)")
    g.add_argument("--items", type=int, default=300000,
                   help="items of ~200 bytes in the query and scan table, 1,000 a partition "
                        "(default 300000)")
    g.add_argument("--footprint-items", type=int, default=1000000,
                   help="items of ~200 bytes loaded by footprint (default 1000000)")
    g.add_argument("--growth-items", type=int, default=300000,
                   help="~1 KB items in the table of post-growth's second probe (default 300000)")
    g.add_argument("--probe", type=int, default=30000,
                   help="POSTs per post-growth probe (default 30000)")
    g.add_argument("--segments", type=int, default=1, help="scan segments (default 1)")
    g.add_argument("--clients", type=int, default=4,
                   help="parallel keep-alive batch-write clients of a bulk load (default 4)")
    g.add_argument("--time-limit", type=int, default=600,
                   help="seconds a bulk load, a scan walk or a probe may take (default 600)")
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("-v", "--verbose", action="store_true", help="print wrk's own output")
    args = ap.parse_args()

    names = args.scenario or ["healthz"]
    for n in names:
        if n not in SCENARIOS and n not in targets.SCENARIOS:
            die("unknown scenario %r (known: %s)"
                % (n, ", ".join(list(SCENARIOS) + list(targets.SCENARIOS))))
    if args.self_test and any(n in targets.SCENARIOS for n in names):
        die("--self-test runs only the scenarios against the bare server")
    if shutil.which("wrk") is None:
        die("wrk not found: apt-get install wrk")
    if not args.self_test and not os.access(args.daemon, os.X_OK):
        die("%s is not an executable (give the daemon binary, or --self-test)" % args.daemon)

    args.server_prefix, args.wrk_prefix = [], []
    if args.pin:
        cpus = args.pin.split(",")
        if len(cpus) != 2 or shutil.which("taskset") is None:
            die("--pin needs SERVER_CPU,WRK_CPU and taskset (util-linux)")
        args.server_prefix = ["taskset", "-c", cpus[0]]
        args.wrk_prefix = ["taskset", "-c", cpus[1]]
    load1 = load_average()
    if load1 > 0.5:
        print("warning: load average %.2f before the run: other work on this machine "
              "will distort the figures" % load1)

    workdir = tempfile.mkdtemp(prefix="tt-bench-")
    results = {"config": {"duration_s": args.duration, "connections": args.connections,
                          "threads": args.threads, "rate": args.rate,
                          "rate_duration_s": args.rate_duration,
                          "daemon": "bare_mhd (self-test)" if args.self_test
                          else os.path.abspath(args.daemon),
                          "log_level": args.log_level, "nproc": os.cpu_count(),
                          "pin": args.pin, "rounds": args.rounds, "load1_before": load1,
                          "kernel": os.uname().release, "items": args.items,
                          "footprint_items": args.footprint_items,
                          "growth_items": args.growth_items, "probe": args.probe,
                          "segments": args.segments, "clients": args.clients},
               "scenarios": {}}
    servers = []
    failed = False
    try:
        bare = None
        for n in names:
            load_before = load_average()
            print("-- %s: load average %.2f before" % (n, load_before))
            if n in targets.SCENARIOS:
                res, ok = targets.SCENARIOS[n][0](args, workdir)
                res["load1_before"] = load_before
                res["load1_after"] = load_average()
                results["scenarios"][n] = res
                failed |= not ok
                print("   load average after: %.2f" % res["load1_after"])
                continue
            if bare is None:
                bare_bin = build_bare(workdir, args.cc)
                bare = Server("bare", lambda p: args.server_prefix + [bare_bin, str(p)], workdir)
                servers.append(bare)
            sc = SCENARIOS[n]
            if args.self_test:
                argv = lambda p: args.server_prefix + [bare_bin, str(p)]
            else:
                extra = sc.daemon_args(workdir)
                argv = (lambda p, extra=extra: args.server_prefix + [
                    os.path.abspath(args.daemon), "--listen", "127.0.0.1:%d" % p,
                    "--log-level", args.log_level, *extra, *args.daemon_arg])
            daemon = Server("daemon-" + n, argv, workdir)
            servers.append(daemon)
            if sc.setup and not args.self_test:
                sc.setup(daemon.base, workdir)
            status, _ = http(sc.method, daemon.base + sc.path, sc.body, sc.headers)
            if status != sc.expect_status:
                die("%s: the daemon answered %d, expected %d" % (n, status, sc.expect_status))
            time.sleep(0.5)
            idle = daemon.mem_kb()

            if args.warmup:
                run_wrk(bare, sc, args, workdir, args.warmup)
                run_wrk(daemon, sc, args, workdir, args.warmup)
            best = {"bare": None, "daemon": None}
            ratios = []
            rounds = []
            errors = 0
            for _ in range(args.rounds):
                this = {}
                for label, srv in (("bare", bare), ("daemon", daemon)):
                    res = run_wrk(srv, sc, args, workdir, args.duration)
                    if args.verbose:
                        print("--- %s %s\n%s" % (n, label, res["wrk_out"]))
                    this[label] = res
                    errors += res["non2xx"] + res["socket_errors"]
                    if best[label] is None or res["rps"] > best[label]["rps"]:
                        best[label] = res
                ratios.append(this["daemon"]["rps"] / this["bare"]["rps"])
                rounds.append(this)
            loaded = daemon.mem_kb()

            steady = None
            if args.rate:
                steady = {lab: run_wrk(srv, sc, args, workdir, args.rate_duration,
                                       rate=args.rate)
                          for lab, srv in (("bare", bare), ("daemon", daemon))}
                steady["daemon_mem_kb"] = daemon.mem_kb()
                errors += sum(steady[k]["non2xx"] + steady[k]["socket_errors"]
                              for k in ("bare", "daemon"))

            exit_status = daemon.stop()
            servers.remove(daemon)
            for r in list(best.values()) + ([steady["bare"], steady["daemon"]] if steady else []):
                r.pop("wrk_out", None)
            results["scenarios"][n] = {
                "max": best, "steady": steady,
                "ratio": best["daemon"]["rps"] / best["bare"]["rps"],
                "round_ratios": ratios,
                "median_ratio": statistics.median(ratios),
                "daemon_mem_kb": {"idle_rss": idle.get("VmRSS"),
                                  "after_load_rss": loaded.get("VmRSS"),
                                  "peak_hwm": loaded.get("VmHWM")},
                "daemon_exit_status": exit_status,
                "errors": errors,
            }
            if errors or exit_status != 0:
                failed = True
            report(n, sc, results["scenarios"][n], args)
            results["scenarios"][n]["targets"] = report_targets(sc, rounds)
            results["scenarios"][n]["load1_before"] = load_before
            results["scenarios"][n]["load1_after"] = load_average()
            print("   load average after: %.2f" % results["scenarios"][n]["load1_after"])
        if bare is not None:
            bare_status = bare.stop()
            servers.remove(bare)
            if bare_status != 0:
                print("bare_mhd exited with %d" % bare_status)
                failed = True
    finally:
        for s in servers:
            s.stop()
        if args.keep:
            print("kept %s" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 1 if failed else 0


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def report_targets(sc, rounds):
    """Prints each target of sc as the median over rounds of daemon/bare."""
    out = {}
    names = {"rps": "throughput", "cpu_us_per_req": "CPU per request", "p99_ms": "p99"}
    for key, op, limit in sc.targets:
        pairs = [(r["daemon"][key], r["bare"][key]) for r in rounds
                 if r["daemon"][key] is not None and r["bare"][key]]
        if not pairs:
            continue
        d = statistics.median(p[0] for p in pairs)
        b = statistics.median(p[1] for p in pairs)
        ratio = statistics.median(p[0] / p[1] for p in pairs)
        met = ratio >= limit if op == ">=" else ratio <= limit
        spec = ".0f" if key == "rps" else ".3f"
        print("   target: %s daemon/bare %.3f (median of per-round ratios; medians %s / %s)"
              "  (target %s %g: %s)" % (names.get(key, key), ratio, format(d, spec),
                                       format(b, spec), op, limit, "met" if met else "not met"))
        out[key] = {"ratio": ratio, "daemon_median": d, "bare_median": b,
                    "target": "%s %g" % (op, limit), "met": met}
    return out


def report(name, sc, r, args):
    b, d = r["max"]["bare"], r["max"]["daemon"]
    print("== %s: %s %s  (wrk -t%d -c%d -d%ds --latency)" % (name, sc.method, sc.path, args.threads,
                                                           args.connections, args.duration))
    print("   %-8s %12s %9s %9s %12s %8s" % ("server", "requests/s", "p50 ms", "p99 ms",
                                              "CPU us/req", "errors"))
    for label, x in (("bare", b), ("daemon", d)):
        print("   %-8s %12s %9s %9s %12s %8d" % (label, fmt(x["rps"], ".0f"), fmt(x["p50_ms"], ".3f"),
                                                 fmt(x["p99_ms"], ".3f"),
                                                 fmt(x["cpu_us_per_req"], ".2f"),
                                                 x["non2xx"] + x["socket_errors"]))
    print("   ratio daemon/bare: %.3f best/best, %.3f median of %d rounds (%s)"
          % (r["ratio"], r["median_ratio"], len(r["round_ratios"]),
             " ".join("%.3f" % x for x in r["round_ratios"])))
    st = r["steady"]
    if st:
        print("   at ~%d req/s for %d s:" % (args.rate, args.rate_duration))
        for label in ("bare", "daemon"):
            x = st[label]
            print("   %-8s %12s %9s %9s %12s %8d" % (label, fmt(x["rps"], ".0f"),
                                                     fmt(x["p50_ms"], ".3f"),
                                                     fmt(x["p99_ms"], ".3f"),
                                                     fmt(x["cpu_us_per_req"], ".2f"),
                                                     x["non2xx"] + x["socket_errors"]))
    m = r["daemon_mem_kb"]
    line = "   daemon RSS: idle %s KiB, after max load %s KiB, peak (VmHWM) %s KiB" % (
        m["idle_rss"], m["after_load_rss"], m["peak_hwm"])
    if st:
        line += ", at ~%d req/s %s KiB" % (args.rate, st["daemon_mem_kb"].get("VmRSS"))
    print(line)
    print("   daemon exit status after SIGTERM: %s" % r["daemon_exit_status"])
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
