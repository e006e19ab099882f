#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tracing.py -- what tracing costs a GET, as ratios measured in one run.

Three daemons serve run.py's get-item request (the ~1 KB item, memory
backend) side by side:

  off   tracing off (the default);
  on    --otlp-endpoint at a local OTLP/HTTP receiver that reads every
        export and drops it (answers 200), so the daemon pays for recording,
        encoding and sending its spans: bench/otlp_sink.c, built with --cc
        (--receiver python: one in Python, which on a small machine takes CPU
        from the daemon and falls behind it);
  down  --otlp-endpoint at a loopback port nobody listens on: every export
        fails (connection refused, retried, then dropped and counted).

wrk drives each in turn (-t1 -c16 -d, --rounds alternations after a warm-up,
the order rotated every round so that none always runs first); the report is
the median over rounds of the on/off and down/off ratios of requests/s (target
>= 0.9 each) and of daemon CPU per request, each round's ratio against the
same round's off run, with the spread of the off runs and the load average
before and after: on a shared machine the ratios are only as good as the
spread says. The CPU ratio is also split into the daemon's user and kernel
time (stime: TCP, epoll, the export POSTs), each against off's whole CPU per
request, and the native receiver's own CPU per request of the on runs is
reported: it shares the CPUs with the daemon and wrk. The exporter POSTs from a
thread of its own, so the event loop's thread's CPU per GET is reported apart
(its on/off ratio is what requests/s follows while the loop is busy). The on
daemon's spans exported and dropped (tabletheoryd_trace_spans_*_total) are
printed at the end: a ratio bought by dropping spans would show there.
Nothing is pinned. Every daemon is stopped with SIGTERM and must
exit 0; any failed request makes the script exit 1. --otlp-protocol passes
http/json or http/protobuf (the daemon's default) to the traced daemons.

With --tool callgrind the same three daemons run under valgrind instead and
the figures are instructions per GET, every thread's and the loop thread's
(callgrind --separate-threads=yes) (N GETs minus none, as bench/per_get.py
counts them; --warmup W counts N+W minus W, the steady state of a daemon that
has run a while), which the machine's load does not move -- but for the export
timer: --schedule-delay-ms (default 100) fires every ~10-30 GETs at valgrind's
pace, each tick one HTTP POST, where the wrk runs (the daemon's default 5 s)
export when a batch of 512 spans fills; 5000 counts the exports as they are
paid there:

  bench/tracing.py _build/tabletheoryd -d 3 --rounds 7
  bench/tracing.py _build/tabletheoryd --tool callgrind -n 1000
  bench/tracing.py _build/tabletheoryd --tool callgrind -n 1000 --schedule-delay-ms 5000
  bench/tracing.py _build/tabletheoryd --tool callgrind -n 1000 --schedule-delay-ms 5000 \
      --warmup 500
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import die, free_port, http, lua_request, run_wrk_raw, warn_load  # noqa: E402
from run import put_bench_item, write_bench_model  # noqa: E402
import per_get  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PATH = "/v1/models/Bench/items/ITEM%231/A"


class NativeReceiver:
    """bench/otlp_sink.c: the OTLP/HTTP drop receiver in C (one thread,
    epoll), built with the C compiler into the work directory: it reads each
    body, keeps nothing and costs the machine little next to the daemon and
    wrk. Its counts are known once it has stopped (close)."""

    def __init__(self, workdir, cc):
        exe = os.path.join(workdir, "otlp_sink")
        cmd = [cc, "-O2", "-std=gnu11", "-Wall", "-Wextra",
               os.path.join(HERE, "otlp_sink.c"), "-o", exe]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            die("building otlp_sink failed:\n" + " ".join(cmd) + "\n" + r.stderr)
        self.proc = subprocess.Popen([exe, "0"], stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().split()
        if len(line) != 2 or line[0] != "listening":
            die("otlp_sink did not start")
        self.url = "http://127.0.0.1:%s/v1/traces" % line[1]
        self.posts = self.bytes = 0

    def close(self):
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGTERM)
        out = self.proc.communicate(timeout=10)[0].split()
        self.proc = None
        # "requests N bytes B errors E"
        if len(out) == 6 and out[0] == "requests":
            self.posts, self.bytes = int(out[1]), int(out[3])
            if int(out[5]):
                print("otlp_sink: %s requests not answered 200" % out[5])


class DropReceiver:
    """An OTLP/HTTP endpoint in Python that reads each body and keeps
    nothing (--receiver python): on a small machine it competes with the
    daemon and wrk for the CPUs and falls behind, a slow collector."""

    def __init__(self):
        outer = self
        self.posts = 0
        self.bytes = 0

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802
                n = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(n)
                outer.posts += 1
                outer.bytes += n
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d/v1/traces" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def start(daemon, workdir, name, extra):
    port = free_port()
    argv = [daemon, "--listen", "127.0.0.1:%d" % port, "--log-level", "warn"]
    argv += write_bench_model(workdir) + extra
    err = open(os.path.join(workdir, name + ".err"), "w")
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
    base = "http://127.0.0.1:%d" % port
    for _ in range(200):
        try:
            if http("GET", base + "/readyz")[0] == 200:
                break
        except OSError:
            pass
        if p.poll() is not None:
            die("%s: the daemon exited at start (see %s)" % (name, err.name))
        threading.Event().wait(0.05)
    else:
        die("%s: the daemon did not become ready" % name)
    put_bench_item(base)
    return p, base


def loop_ticks(pid):
    """utime + stime of the daemon's main thread, the event loop (the
    exporter's sender is a thread of its own), in clock ticks."""
    with open("/proc/%d/task/%d/stat" % (pid, pid)) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def span_counts(base):
    """(exported, dropped) spans of a daemon, from its /metrics."""
    text = http("GET", base + "/metrics")[1]
    text = text.decode() if isinstance(text, bytes) else text
    exported = dropped = 0.0
    for line in text.splitlines():
        if line.startswith("tabletheoryd_trace_spans_exported_total"):
            exported += float(line.split()[-1])
        elif line.startswith("tabletheoryd_trace_spans_dropped_total"):
            dropped += float(line.split()[-1])
    return exported, dropped


def make_receiver(args, workdir):
    if args.receiver == "python":
        return DropReceiver()
    return NativeReceiver(workdir, args.cc)


def callgrind_threads(args, n, extra):
    """(every thread's, the loop thread's) Ir of a run with n GETs: callgrind
    with --separate-threads=yes writes a profile a thread; the first is the
    main thread, which runs the event loop."""
    with tempfile.TemporaryDirectory() as wd:
        port = free_port()
        log = os.path.join(wd, "vg.log")
        out = os.path.join(wd, "cg.out")
        wrap = ["valgrind", "--tool=callgrind", "--separate-threads=yes", "--log-file=" + log,
                "--callgrind-out-file=" + out] + (["--cache-sim=yes"] if args.cache_sim else [])
        flags, reqs = per_get.daemon_flags(args)
        p = per_get.start(args.daemon, wd, wrap, port, None, list(extra) + flags)
        reqs(port, n)
        per_get.stop(p)
        m = re.search(r"Collected : (\d+)", open(log).read())
        loop = None
        events = ["Ir"]
        with open(out + "-01") as f:
            for line in f:
                if line.startswith("events:"):
                    events = line.split()[1:]
                if line.startswith("totals:") or line.startswith("summary:"):
                    counts = dict(zip(events, map(int, line.split()[1:])))
                    loop = counts["Ir"]
        if args.cache_sim:
            # The loop thread's simulated first-level cache misses: instruction
            # fetches (I1mr), data reads and writes (D1mr + D1mw).
            return int(m.group(1)), loop, counts.get("I1mr", 0), (counts.get("D1mr", 0) +
                                                                  counts.get("D1mw", 0))
        return int(m.group(1)), loop


def instructions(args):
    """Instructions per GET of the three daemons (callgrind): every
    thread's, and the loop thread's alone."""
    receiver = make_receiver(args, tempfile.mkdtemp(prefix="ttd-bench-tracing-"))
    down = "http://127.0.0.1:%d/v1/traces" % free_port()
    args.endpoint = None
    delay = ["--otlp-schedule-delay-ms", str(args.schedule_delay_ms)] + protocol_flags(args)
    configs = {"off": [], "on": ["--otlp-endpoint", receiver.url] + delay,
               "down": ["--otlp-endpoint", down] + delay}
    per, loop, i1, d1 = {}, {}, {}, {}
    try:
        for name, extra in configs.items():
            a = callgrind_threads(args, args.warmup + args.n, extra)
            b = callgrind_threads(args, args.warmup, extra)
            per[name] = (a[0] - b[0]) / args.n
            loop[name] = (a[1] - b[1]) / args.n
            print("%-5s %.0f instructions per GET, %.0f of them on the loop thread"
                  % (name, per[name], loop[name]))
            if args.cache_sim:
                i1[name] = (a[2] - b[2]) / args.n
                d1[name] = (a[3] - b[3]) / args.n
                print("      the loop thread's simulated L1 misses per GET: instruction %.0f, "
                      "data %.0f" % (i1[name], d1[name]))
    finally:
        receiver.close()
    for k in ("on", "down"):
        print("tracing %-4s / off: instructions per GET %.3f, on the loop thread %.3f (the "
              "req/s ratio is about the loop's inverse: target >= 0.9)"
              % (k, per[k] / per["off"], loop[k] / loop["off"]))
    if args.cache_sim:
        for k in ("on", "down"):
            print("tracing %-4s / off: the loop thread's L1 instruction misses per GET %.3f, "
                  "data %.3f" % (k, i1[k] / i1["off"] if i1["off"] else 0,
                                 d1[k] / d1["off"] if d1["off"] else 0))
    print("receiver: %d exports, %.1f MB" % (receiver.posts, receiver.bytes / 1e6))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"all_threads": per, "loop_thread": loop, "loop_i1_misses": i1,
                       "loop_d1_misses": d1}, f, indent=2)


def protocol_flags(args):
    return ["--otlp-protocol", args.otlp_protocol] if args.otlp_protocol else []


def median(values):
    v = sorted(x for x in values if x is not None)
    return v[len(v) // 2] if v else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("daemon")
    ap.add_argument("-d", "--duration", type=int, default=3, help="seconds per wrk run")
    ap.add_argument("-c", "--connections", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--otlp-protocol", choices=["http/protobuf", "http/json"],
                    help="the traced daemons' --otlp-protocol (default: theirs, protobuf)")
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--receiver", choices=["native", "python"], default="native",
                    help="the drop receiver of the `on` daemon: bench/otlp_sink.c, built "
                    "with --cc (default), or one in Python, which falls behind a busy daemon")
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    ap.add_argument("--tool", choices=["wrk", "callgrind"], default="wrk")
    ap.add_argument("-n", type=int, default=2000, help="with --tool callgrind: GETs")
    ap.add_argument("--warmup", type=int, default=0,
                    help="with --tool callgrind: GETs before the N counted ones, in both runs "
                    "(the count is N+W GETs minus W): what a running daemon has paid already "
                    "-- the spans kept for reuse (a batch's worth), the first back-off")
    ap.add_argument("--cache-sim", action="store_true",
                    help="with --tool callgrind: also count the loop thread's first-level "
                    "cache misses per GET (callgrind --cache-sim=yes, a simulation of the "
                    "host's caches): what an instruction costs beyond being executed")
    ap.add_argument("--schedule-delay-ms", type=int, default=100,
                    help="with --tool callgrind: the daemons' --otlp-schedule-delay-ms; "
                    "exports come on this timer at valgrind's pace, where wrk's GET rate "
                    "fills a batch (512 spans) first: 5000 (the default delay, as the wrk "
                    "runs use) counts the export per batch as they pay it")
    args = ap.parse_args()
    if args.tool == "callgrind":
        instructions(args)
        return
    load_before = os.getloadavg()
    warn_load()
    workdir = tempfile.mkdtemp(prefix="ttd-bench-tracing-")
    receiver = make_receiver(args, workdir)
    down = "http://127.0.0.1:%d/v1/traces" % free_port()  # nobody listens there
    servers = {}
    try:
        servers["off"] = start(args.daemon, workdir, "off", [])
        servers["on"] = start(args.daemon, workdir, "on",
                              ["--otlp-endpoint", receiver.url] + protocol_flags(args))
        servers["down"] = start(args.daemon, workdir, "down",
                                ["--otlp-endpoint", down] + protocol_flags(args))
        lua = lua_request(os.path.join(workdir, "get.lua"), "GET", None, {})
        runs = {k: [] for k in servers}
        for name, (p, base) in servers.items():  # warm-up
            run_wrk_raw(base + PATH, lua, 1, args.connections, 1, pid=p.pid)
        names = list(servers)
        for rnd in range(args.rounds):
            for name in names[rnd % 3:] + names[:rnd % 3]:
                p, base = servers[name]
                # The receiver shares the CPUs: its CPU per GET of the same run is
                # reported beside the daemon's (the native one only).
                other = ([receiver.proc.pid] if name == "on" and
                         getattr(receiver, "proc", None) else [])
                l0 = loop_ticks(p.pid)
                r = run_wrk_raw(base + PATH, lua, 1, args.connections, args.duration, pid=p.pid,
                                other_pids=other)
                r["loop_us_per_req"] = ((loop_ticks(p.pid) - l0) * 1e6 /
                                        os.sysconf("SC_CLK_TCK") / r["requests"]
                                        if r["requests"] else None)
                r["receiver_us_per_req"] = (r["cpu_us_per_req_of"].get(other[0])
                                            if other else None)
                if r["non2xx"] or r["socket_errors"]:
                    die("%s: %d non-2xx answers, %d socket errors" %
                        (name, r["non2xx"], r["socket_errors"]))
                runs[name].append(r)
        load_after = os.getloadavg()
        off_rps = [r["rps"] for r in runs["off"]]
        out = {"load_before": load_before, "load_after": load_after,
               "off_rps_spread": [min(off_rps), max(off_rps)],
               "rounds": {k: [{"rps": r["rps"], "cpu_us_per_req": r["cpu_us_per_req"],
                               "sys_us_per_req": r["sys_us_per_req"],
                               "loop_us_per_req": r["loop_us_per_req"],
                               "receiver_us_per_req": r["receiver_us_per_req"],
                               "p99_ms": r["p99_ms"]} for r in v] for k, v in runs.items()}}
        for k in ("on", "down"):
            out["%s_off_rps" % k] = median(a["rps"] / b["rps"]
                                           for a, b in zip(runs[k], runs["off"]))
            out["%s_off_cpu" % k] = median(a["cpu_us_per_req"] / b["cpu_us_per_req"]
                                           for a, b in zip(runs[k], runs["off"])
                                           if a["cpu_us_per_req"] and b["cpu_us_per_req"])
            # The event loop's own thread: what bounds requests/s when the loop is busy.
            out["%s_off_loop" % k] = median(a["loop_us_per_req"] / b["loop_us_per_req"]
                                            for a, b in zip(runs[k], runs["off"])
                                            if a["loop_us_per_req"] and b["loop_us_per_req"])
            # The kernel's part (stime) and the rest (utime), each against off's CPU per GET:
            # how much of the extra is the daemon's own code.
            out["%s_off_user" % k] = median(
                (a["cpu_us_per_req"] - a["sys_us_per_req"]) / b["cpu_us_per_req"]
                for a, b in zip(runs[k], runs["off"])
                if a["cpu_us_per_req"] and b["cpu_us_per_req"] and a["sys_us_per_req"] is not None)
            out["%s_off_sys" % k] = median(
                a["sys_us_per_req"] / b["cpu_us_per_req"] for a, b in zip(runs[k], runs["off"])
                if a["sys_us_per_req"] is not None and b["cpu_us_per_req"])
        out["off_user"] = median((r["cpu_us_per_req"] - r["sys_us_per_req"]) / r["cpu_us_per_req"]
                                 for r in runs["off"]
                                 if r["cpu_us_per_req"] and r["sys_us_per_req"] is not None)
        out["receiver_us_per_req"] = median(r["receiver_us_per_req"] for r in runs["on"])
        out["on_spans"] = span_counts(servers["on"][1])
        for name in servers:
            print("%-5s req/s %s   CPU/req %s us   p99 %s ms" % (
                name, " ".join("%.0f" % r["rps"] for r in runs[name]),
                " ".join("%.1f" % (r["cpu_us_per_req"] or 0) for r in runs[name]),
                " ".join("%.2f" % (r["p99_ms"] or 0) for r in runs[name])))
        for k in ("on", "down"):
            ratio = out["%s_off_rps" % k]
            print("tracing %-4s / off: req/s %.3f (target >= 0.9: %s), CPU per GET %.3f "
                  "(user %.3f + kernel %.3f of off's; off: user %.3f + kernel %.3f), "
                  "the loop thread's CPU per GET %.3f" % (
                      k, ratio, "met" if ratio >= 0.9 else "not met", out["%s_off_cpu" % k] or 0,
                      out["%s_off_user" % k] or 0, out["%s_off_sys" % k] or 0,
                      out["off_user"] or 0, 1 - (out["off_user"] or 0),
                      out["%s_off_loop" % k] or 0))
        if out["receiver_us_per_req"] is not None:
            print("receiver CPU per GET (on runs): %.2f us" % out["receiver_us_per_req"])
        print("on: %.0f spans exported, %.0f dropped" % out["on_spans"])
        print("off req/s spread %.0f-%.0f (%.0f%%); load average before %.2f %.2f %.2f, "
              "after %.2f %.2f %.2f" % (min(off_rps), max(off_rps),
                                        100.0 * (max(off_rps) - min(off_rps)) / max(off_rps),
                                        *load_before, *load_after))
    finally:
        status = 0
        for name, (p, _) in servers.items():
            p.send_signal(signal.SIGTERM)
            try:
                rc = p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                rc = -1
            if rc != 0:
                print("%s: the daemon exited %d" % (name, rc))
                status = 1
        receiver.close()
    print("receiver: %d exports, %.1f MB" % (receiver.posts, receiver.bytes / 1e6))
    out["receiver"] = {"exports": receiver.posts, "bytes": receiver.bytes}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    sys.exit(status)


if __name__ == "__main__":
    main()
