# SPDX-License-Identifier: Apache-2.0
"""benchlib.py -- what load.py, peer.py and batch.py share.

A daemon started on a free loopback port (memory or dynamodb backend), a
test peer started with tests/peers/start_peer.sh, a keep-alive HTTP client
for the driving loops, /proc readings (CPU ticks, VmRSS/VmHWM), percentiles
and a model file of ~200-byte items. run.py keeps its own copies so that it
stays a single file; the Server class and http() are imported from it.
"""

import json
import os
import subprocess
import sys
import time
import http.client as httpclient

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from run import Server, http, free_port, die, parse_wrk, CLK_TCK  # noqa: E402,F401

# Dummy credentials for the peers: dynalite checks no signature, moto only
# the region in the credential scope. Never real ones.
PEER_ENV = {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x",
            "AWS_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null"}

# Items of about 200 bytes (DynamoDB's size rule: attribute names plus values):
# PK "P#000123" + SK "S#0456" + payload + count + createdAt/updatedAt
# (RFC 3339 with milliseconds) + version; see item_size().
MODEL_YML = """dms_version: "0.2"
models:
  - name: "%(name)s"
    table: { name: "%(table)s" }
    keys:
      partition: { attribute: "PK", type: "S" }
      sort: { attribute: "SK", type: "S" }
    attributes:
      - { attribute: "PK", type: "S", roles: ["pk"] }
      - { attribute: "SK", type: "S", roles: ["sk"] }
      - { attribute: "payload", type: "S", optional: true }
      - { attribute: "count", type: "N", optional: true }
      - { attribute: "createdAt", type: "S", roles: ["created_at"] }
      - { attribute: "updatedAt", type: "S", roles: ["updated_at"] }
      - { attribute: "version", type: "N", roles: ["version"] }
"""

PAYLOAD = "p" * 80


def write_models(workdir, models):
    """models: [(model name, table name)]; returns the directory for --models."""
    path = os.path.join(workdir, "models")
    os.makedirs(path, exist_ok=True)
    for name, table in models:
        with open(os.path.join(path, name + ".yml"), "w") as f:
            f.write(MODEL_YML % {"name": name, "table": table})
    return path


def item(i, per_partition=1000, prefix="P"):
    """Item number i: partition i // per_partition, sort key i % per_partition."""
    return {"PK": "%s#%06d" % (prefix, i // per_partition),
            "SK": "S#%04d" % (i % per_partition), "payload": PAYLOAD, "count": i}


def key(i, per_partition=1000, prefix="P"):
    return {"PK": "%s#%06d" % (prefix, i // per_partition), "SK": "S#%04d" % (i % per_partition)}


def item_size(stored):
    """DynamoDB's item size of a stored item (format=dynamodb), for S/N/BOOL values."""
    n = 0
    for name, av in stored.items():
        n += len(name.encode())
        (t, v), = av.items()
        if t == "S":
            n += len(v.encode())
        elif t == "N":
            digits = v.lstrip("-").replace(".", "").lstrip("0") or "0"
            n += (len(digits) + 1) // 2 + 1
        else:
            n += 1
    return n


class Daemon(Server):
    """tabletheoryd on a free loopback port; argv is everything after --listen.

    It inherits this process's environment: the peer scripts export
    PEER_ENV (os.environ.update) before they start one."""

    def __init__(self, binary, argv, workdir, label="daemon", prefix=None):
        binary = os.path.abspath(binary)
        prefix = prefix or []
        super().__init__(label, lambda p: prefix + [binary, "--listen", "127.0.0.1:%d" % p,
                                                    *argv], workdir)
        self.pid = self.proc.pid


class Client:
    """One keep-alive HTTP/1.1 connection to host:port (one per thread)."""

    def __init__(self, base, timeout=60.0):
        hostport = base.split("//", 1)[1]
        host, port = hostport.rsplit(":", 1)
        self.host, self.port, self.timeout = host, int(port), timeout
        self.conn = None

    def request(self, method, path, body=None, headers=None):
        """(status, body bytes). body: bytes or a JSON-able value."""
        hdrs = dict(headers or {})
        if body is not None and not isinstance(body, (bytes, bytearray)):
            body = json.dumps(body, separators=(",", ":")).encode()
        if body is not None:
            hdrs.setdefault("Content-Type", "application/json")
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = httpclient.HTTPConnection(self.host, self.port, timeout=self.timeout)
            try:
                self.conn.request(method, path, body=body, headers=hdrs)
                r = self.conn.getresponse()
                data = r.read()
                if r.getheader("Connection", "").lower() == "close":
                    self.close()
                return r.status, data
            except (httpclient.HTTPException, ConnectionError, OSError):
                self.close()
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def mem_kb(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, rest = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                out[k] = int(rest.split()[0])
    return out


def percentile(sorted_values, p):
    """Nearest-rank percentile of an ascending list (p in 0..100)."""
    if not sorted_values:
        return None
    k = max(0, min(len(sorted_values) - 1, int(round(p / 100.0 * len(sorted_values) + 0.5)) - 1))
    return sorted_values[k]


def load1():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def warn_load():
    v = load1()
    if v > 0.5:
        print("warning: load average %.2f before the run: other work on this machine "
              "will distort the figures" % v)
    return v


class Peer:
    """A dynalite or moto started by tests/peers/start_peer.sh (stopped by stop())."""

    def __init__(self, kind):
        script = os.path.join(ROOT, "tests", "peers", "start_peer.sh")
        r = subprocess.run(["bash", script, kind], capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            die("start_peer.sh %s failed:\n%s" % (kind, r.stderr[-2000:]))
        vals = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)
        self.kind = kind
        self.endpoint = vals["ENDPOINT"]
        self.pid = int(vals["PID"])
        self.log = vals.get("LOG")

    def stop(self):
        script = os.path.join(ROOT, "tests", "peers", "stop_peer.sh")
        subprocess.run(["bash", script, str(self.pid)], timeout=30)


def run_wrk_raw(url, lua_path, threads, connections, duration, prefix=None, pid=None):
    """wrk against url with a Lua script; returns parse_wrk() plus CPU of pid."""
    cmd = (prefix or []) + ["wrk", "-t%d" % threads, "-c%d" % connections, "-d%ds" % duration,
                            "--latency", "-s", lua_path, url]
    t0 = cpu_ticks(pid) if pid else None
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + 60)
    t1 = cpu_ticks(pid) if pid else None
    if r.returncode != 0:
        die("wrk failed: %s\n%s" % (" ".join(cmd), r.stderr))
    res = parse_wrk(r.stdout)
    if res["requests"] is None:
        die("cannot read wrk's output:\n" + r.stdout)
    if pid and res["requests"]:
        res["cpu_us_per_req"] = (t1 - t0) * 1e6 / CLK_TCK / res["requests"]
    else:
        res["cpu_us_per_req"] = None
    res["wrk_cmd"] = " ".join(cmd)
    res["wrk_out"] = r.stdout
    return res


def lua_request(path, method, body, headers, rate=None, connections=1, extra=""):
    """A wrk Lua script: fixed method/body/headers; rate adds a per-connection delay."""
    lines = ["wrk.method = %s" % json.dumps(method)]
    if body is not None:
        lines.append("wrk.body = %s" % json.dumps(body))
    for k, v in (headers or {}).items():
        lines.append("wrk.headers[%s] = %s" % (json.dumps(k), json.dumps(v)))
    if extra:
        lines.append(extra)
    if rate:
        lines.append("function delay() return %d end" % max(1, round(1000.0 * connections / rate)))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def now():
    return time.monotonic()
