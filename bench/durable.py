#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""durable.py -- what --data-dir costs the memory backend (docs/local-dynamodb.md).

Figures, each against its anchor measured in the same run:

  post       POST of a new ~1 KB item (run.py's post-item request), wrk -c16 and -c1:
             --fsync everysec and --fsync always, against the memory backend without a
             data dir; --rounds rounds, each a daemon without a data dir (the anchor)
             and then every variant, in an order rotated from round to round; medians of
             the per-round ratios of req/s, and of daemon CPU per request (the anchor's /
             the variant's: steadier than req/s on a loaded machine, and what bounds a
             CPU-bound -c16), the load average at each round's start, and records per
             fdatasync under always (from memdb.data_dir_closed). --before DAEMON measures
             a second build's variants in the same rounds, against the same anchors.
  startup    N (--items, 100,000) 199-byte items (load.py's) through batch-write from 4
             clients into a daemon with --data-dir; then SIGTERM, and a new daemon on the
             same data dir: its time from exec to answering /healthz, against the time the
             load took (this start also compacts the logs into a snapshot when they passed
             64 MiB); then once more (from the snapshot).
  rss        VmRSS of the second restarted daemon after its load, against the live daemon's after
             the batch-write load.
  size       bytes of the data dir after the restarts (the logs as written, or the snapshot
             and an empty log once they were compacted), against N x the items' DynamoDB
             size.

  bench/durable.py _build/tabletheoryd
  bench/durable.py _build/tabletheoryd --items 1000000 -d 5 --rounds 3
  bench/durable.py /tmp/ttd-new --before /tmp/ttd-old -d 3 --rounds 7 --skip-startup
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (BULK_DAEMON_ARGS, POST_LUA, Client, Daemon, batch_bodies,  # noqa: E402
                      bulk_load, http, item_size, load1, mem_kb, run_wrk_raw,
                      warn_load,
                      write_models)


def post_script(workdir, nonce):
    path = os.path.join(workdir, "post-%d.lua" % nonce)
    with open(path, "w") as f:
        f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n')
        f.write(POST_LUA.replace("__NONCE__", "n%d" % nonce))
    return path


def dir_bytes(path):
    return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("daemon")
    ap.add_argument("-d", type=int, default=5, help="seconds per wrk run")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--items", type=int, default=100000)
    ap.add_argument("--skip-post", action="store_true")
    ap.add_argument("--skip-startup", action="store_true")
    ap.add_argument("--before", metavar="DAEMON",
                    help="another build measured in the same rounds against the same anchor")
    ap.add_argument("--json")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (logs)")
    args = ap.parse_args()
    warn_load()
    work = tempfile.mkdtemp(prefix="ttd-bench-durable-")
    models = write_models(work, [("Bench", "bench"), ("Load", "load")])
    out = {}
    nonce = [0]

    def post_run(binary, extra, conns):
        nonce[0] += 1
        data = os.path.join(work, "post-data-%d" % nonce[0])
        label = "post-%d" % nonce[0]
        argv = ["--models", models, "--log-level", "warn"] + \
            (["--data-dir", data] + extra if extra is not None else [])
        d = Daemon(binary, argv, work, label=label)
        try:
            res = run_wrk_raw(d.base + "/v1/models/Bench/items", post_script(work, nonce[0]), 1,
                              conns, args.d, pid=d.pid)
        finally:
            d.stop()
        shutil.rmtree(data, ignore_errors=True)
        bad = res["non2xx"] + res["socket_errors"]
        if bad:
            print("warning: %d failed requests in %s" % (bad, res["wrk_cmd"]))
        per_sync = None
        with open(os.path.join(work, label + ".log")) as f:
            for line in f:
                if "memdb.data_dir_closed" in line:
                    st = json.loads(line)
                    per_sync = st["records"] / max(st["fsyncs"], 1)
        return res["rps"], res["cpu_us_per_req"], per_sync

    # The builds and modes measured: (label, binary, --fsync mode).
    variants = [("", args.daemon, "everysec"), ("", args.daemon, "always")]
    if args.before:
        variants += [("before ", args.before, "everysec"), ("before ", args.before, "always")]

    try:
        if not args.skip_post:
            for conns in (16, 1):
                ratios = {v: [] for v in variants}
                cpu = {v: [] for v in variants}
                syncs = {v: [] for v in variants}
                for r in range(args.rounds):
                    # One round: the anchor, then every variant, in an order that
                    # rotates from round to round (a burst of load on the machine
                    # does not always hit the same variant).
                    load = load1()
                    base, base_cpu, _ = post_run(args.daemon, None, conns)
                    k = r % len(variants)
                    for v in variants[k:] + variants[:k]:
                        rps, cpu_us, per_sync = post_run(v[1], ["--fsync", v[2]], conns)
                        ratios[v].append(rps / base)
                        cpu[v].append(base_cpu / cpu_us)
                        if per_sync is not None:
                            syncs[v].append(per_sync)
                    print("post -c%d round %d (load average %.2f): memory %.0f req/s, %s"
                          % (conns, r + 1, load, base,
                             ", ".join("%s%s %.3f x" % (v[0], v[2], ratios[v][-1])
                                       for v in variants)))
                for v in variants:
                    rs = ratios[v]
                    med = statistics.median(rs)
                    key = "post_c%d_%s%s" % (conns, "before_" if v[0] else "", v[2])
                    out[key] = med
                    out[key + "_rounds"] = rs
                    out[key + "_cpu"] = statistics.median(cpu[v])
                    sync_txt = ""
                    if v[2] == "always" and syncs[v]:
                        out[key + "_records_per_fsync"] = statistics.median(syncs[v])
                        sync_txt = ", %.1f records per fdatasync" % statistics.median(syncs[v])
                    target = {(16, "everysec"): 0.8, (16, "always"): 0.3}.get((conns, v[2]))
                    print("POST -c%d %s--fsync %s / memory without a data dir: %.3f (median of %d:"
                          " %s)%s%s; daemon CPU per request, memory / this: %.3f"
                          % (conns, v[0], v[2], med, len(rs), ", ".join("%.2f" % x for x in rs),
                             sync_txt, " target >= %.1f" % target if target else "",
                             statistics.median(cpu[v])))
            print("load average after the POST rounds: %.2f" % load1())
        if args.skip_startup:
            if args.json:
                with open(args.json, "w") as f:
                    json.dump(out, f, indent=1)
            return

        data = os.path.join(work, "data")
        argv = ["--models", models, "--log-level", "info", "--data-dir", data] + BULK_DAEMON_ARGS
        bodies = batch_bodies(args.items, 25)
        live = Daemon(args.daemon, argv, work, label="live")
        idle = mem_kb(live.pid)["VmRSS"]
        secs, _, errors = bulk_load(live.base, "Load", bodies, 4, 3600)
        if errors:
            sys.exit("load failed: %s" % errors[:3])
        live_rss = mem_kb(live.pid)["VmRSS"]
        status, body = http("GET", live.base + "/v1/models/Load/items/P%23000000/S%230000"
                            "?format=dynamodb")
        size = item_size(json.loads(body))
        if live.stop() != 0:
            sys.exit("the live daemon did not exit 0")
        starts = []
        for label in ("restarted", "restarted-again"):
            t0 = time.monotonic()
            back = Daemon(args.daemon, argv, work, label=label)
            starts.append(time.monotonic() - t0)
            back_rss = mem_kb(back.pid)["VmRSS"]
            c = Client(back.base)
            st, got = c.request("GET", "/v1/models/Load/items/P%23000000/S%230000")
            c.close()
            if st != 200:
                back.stop()
                sys.exit("an item is missing after the restart: %d %s" % (st, got[:300]))
            if back.stop() != 0:
                sys.exit("the restarted daemon did not exit 0")
        loaded = [json.loads(line) for line in open(os.path.join(work, "restarted.log"))
                  if "memdb.data_dir_loaded" in line][0]
        disk = dir_bytes(data)
        start_s = starts[0]
        out.update(items=args.items, load_s=secs, startup_s=start_s, startup_again_s=starts[1],
                   startup_ratio=start_s / secs, rss_live_kb=live_rss, rss_loaded_kb=back_rss,
                   rss_idle_kb=idle, rss_ratio=back_rss / live_rss, item_size=size,
                   disk_bytes=disk, size_ratio=disk / (args.items * size),
                   first_load=loaded)
        print("load of %d items through batch-write: %.2f s; start-up from the data dir: "
              "%.2f s (log %d bytes, snapshot %d bytes; compacted at this start when the log "
              "passed 64 MiB), then %.2f s; ratio %.3f (target <= 0.5)"
              % (args.items, secs, start_s, loaded["log_bytes"], loaded["snapshot_bytes"],
                 starts[1], start_s / secs))
        print("RSS after the load: live %d KiB, restarted %d KiB; ratio %.3f (target <= 1.1)"
              % (live_rss, back_rss, back_rss / live_rss))
        print("data dir %d bytes for %d items of %d bytes: ratio %.3f (target <= 1.5)"
              % (disk, args.items, size, disk / (args.items * size)))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(out, f, indent=1)
    finally:
        if args.keep:
            print("kept", work)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
