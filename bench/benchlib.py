# SPDX-License-Identifier: Apache-2.0
"""benchlib.py -- what run.py, targets.py, load.py, peer.py and batch.py share.

A server process on a free loopback port (the daemon, memory or dynamodb
backend, or the bare baseline), a test peer started with
tests/peers/start_peer.sh, a keep-alive HTTP client for the driving loops,
bulk loading through batch-write, wrk runs and their parsing, /proc readings
(CPU ticks, VmRSS/VmHWM), percentiles and model files of ~200-byte and ~1 KB
items.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import http.client as httpclient

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLK_TCK = os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- processes and HTTP
def die(msg):
    print(os.path.basename(sys.argv[0]) + ": " + msg, file=sys.stderr)
    sys.exit(1)


def free_port():
    """A loopback port that was free a moment ago (the servers bind it next)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, body=None, headers=None, timeout=2.0):
    """(status, body bytes) of one request; status 0 when nothing answered.

    body: bytes, str or a JSON-able value (sent as application/json)."""
    headers = dict(headers or {})
    data = body
    if body is not None and not isinstance(body, (bytes, str)):
        data = json.dumps(body)
    if isinstance(data, str):
        data = data.encode()
    if data is not None:
        headers.setdefault("Content-Type", "application/json")
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (urllib.error.URLError, OSError):
        return 0, b""


class Server:
    """A server process under test, started on a free loopback port.

    env: the whole environment of the process (None: this process's)."""

    def __init__(self, label, argv_for_port, workdir, ready_path="/healthz", env=None):
        self.label = label
        self.port = free_port()
        self.base = "http://127.0.0.1:%d" % self.port
        self.log_path = os.path.join(workdir, label + ".log")
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(argv_for_port(self.port), stdout=subprocess.DEVNULL,
                                     stderr=self.log, env=env)
        deadline = time.monotonic() + 10.0
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.log.close()
                with open(self.log_path, "rb") as f:
                    tail = f.read()[-2000:].decode(errors="replace")
                die("%s exited with %d before it was ready:\n%s"
                    % (label, self.proc.returncode, tail))
            if http("GET", self.base + ready_path)[0] == 200:
                return
            time.sleep(0.05)
        self.stop()
        die("%s did not answer %s within 10 s" % (label, ready_path))

    def cpu_ticks(self):
        with open("/proc/%d/stat" % self.proc.pid) as f:
            # The command name may hold spaces or parentheses: split after the last ')'.
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)

    def mem_kb(self):
        out = {}
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    out[key] = int(rest.split()[0])
        return out

    def stop(self):
        """SIGTERM, then wait; returns the exit status (a drain must end in 0)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3, "h": 3600e3}


def to_ms(text):
    m = re.fullmatch(r"([0-9.]+)(us|ms|s|m|h)", text)
    return float(m.group(1)) * UNITS[m.group(2)] if m else None


def parse_wrk(out):
    res = {"requests": None, "rps": None, "p50_ms": None, "p90_ms": None, "p99_ms": None,
           "non2xx": 0, "socket_errors": 0}
    m = re.search(r"^\s*(\d+) requests in ([0-9.]+\w+)", out, re.M)
    if m:
        res["requests"] = int(m.group(1))
    m = re.search(r"^Requests/sec:\s+([0-9.]+)", out, re.M)
    if m:
        res["rps"] = float(m.group(1))
    for pct, key in (("50", "p50_ms"), ("90", "p90_ms"), ("99", "p99_ms")):
        m = re.search(r"^\s+%s%%\s+(\S+)" % pct, out, re.M)
        if m:
            res[key] = to_ms(m.group(1))
    m = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    if m:
        res["non2xx"] = int(m.group(1))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if m:
        res["socket_errors"] = sum(int(x) for x in m.groups())
    return res



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

# About 1 KB stored: keys, lifecycle fields and this payload (run.py's get-item).
BENCH_ITEM = {"PK": "ITEM#1", "SK": "A", "payload": "x" * 900, "count": 42}


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

    It inherits this process's environment (load.py, peer.py and batch.py
    export PEER_ENV with os.environ.update before they start one), or gets
    env (e.g. dict(os.environ, **PEER_ENV))."""

    def __init__(self, binary, argv, workdir, label="daemon", prefix=None, env=None):
        binary = os.path.abspath(binary)
        prefix = prefix or []
        super().__init__(label, lambda p: prefix + [binary, "--listen", "127.0.0.1:%d" % p,
                                                    *argv], workdir, env=env)
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


def cpu_ticks(pid, sys_only=False):
    """utime + stime of pid in clock ticks (stime alone: the kernel's share)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[12]) + (0 if sys_only else int(fields[11]))


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


def run_wrk_raw(url, lua_path, threads, connections, duration, prefix=None, pid=None,
                other_pids=()):
    """wrk against url with a Lua script; returns parse_wrk() plus CPU of pid.

    other_pids: more processes whose CPU µs per request of the same run are
    wanted (a peer behind the daemon): res["cpu_us_per_req_of"][pid]."""
    cmd = (prefix or []) + ["wrk", "-t%d" % threads, "-c%d" % connections, "-d%ds" % duration,
                            "--latency", "-s", lua_path, url]
    pids = ([pid] if pid else []) + list(other_pids)
    t0 = {p: cpu_ticks(p) for p in pids}
    s0 = cpu_ticks(pid, sys_only=True) if pid else 0
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + 60)
    t1 = {p: cpu_ticks(p) for p in pids}
    s1 = cpu_ticks(pid, sys_only=True) if pid else 0
    if r.returncode != 0:
        die("wrk failed: %s\n%s" % (" ".join(cmd), r.stderr))
    res = parse_wrk(r.stdout)
    if res["requests"] is None:
        die("cannot read wrk's output:\n" + r.stdout)
    per = {p: ((t1[p] - t0[p]) * 1e6 / CLK_TCK / res["requests"] if res["requests"] else None)
           for p in pids}
    res["cpu_us_per_req"] = per.get(pid) if pid else None
    # The kernel's part of it (stime): TCP, epoll; what no user-space change removes.
    res["sys_us_per_req"] = ((s1 - s0) * 1e6 / CLK_TCK / res["requests"]
                             if pid and res["requests"] else None)
    res["cpu_us_per_req_of"] = {p: per[p] for p in other_pids}
    res["wrk_cmd"] = " ".join(cmd)
    res["wrk_out"] = r.stdout
    return res


# A wrk Lua tail that makes the run exactly `count` requests: wrk has no
# request-count option and its main thread sleeps for the whole -d, so the
# script reports what it saw and ends the process itself at the count
# (responses of the other connections still in flight then, at most -c - 1,
# are served but not counted). Only for -t1: each wrk thread has its own Lua state.
COUNT_LUA = """
local seen, bad = 0, 0
response = function(status, headers, body)
  seen = seen + 1
  if status >= 300 then bad = bad + 1 end
  if seen >= %(count)d then
    io.write(string.format("COUNTED %%d %%d\\n", seen, bad))
    io.stdout:flush()
    os.exit(0)
  end
end
"""


def run_wrk_count(url, lua_path, connections, count, time_limit, pid):
    """`count` requests from wrk -t1 -c`connections` (lua_path must end with COUNT_LUA).

    Returns {"requests", "errors", "seconds", "rps", "cpu_us_per_req"} (CPU of pid);
    a run that does not reach the count within time_limit seconds ends with
    wrk's own report, and its errors then include the requests that were missing."""
    cmd = ["wrk", "-t1", "-c%d" % connections, "-d%ds" % time_limit, "-s", lua_path, url]
    c0, t = cpu_ticks(pid), time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=time_limit + 60)
    c1, dt = cpu_ticks(pid), time.monotonic() - t
    m = re.search(r"^COUNTED (\d+) (\d+)$", r.stdout, re.M)
    if m:
        n, errors = int(m.group(1)), int(m.group(2))
    else:
        res = parse_wrk(r.stdout)
        n = res["requests"] or 0
        errors = res["non2xx"] + res["socket_errors"] + max(0, count - n)
    return {"requests": n, "errors": errors, "seconds": dt, "rps": n / dt if dt else None,
            "cpu_us_per_req": (c1 - c0) * 1e6 / CLK_TCK / n if n else None,
            "wrk_cmd": " ".join(cmd)}


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


# POST of a new ~1 KB item per request (run.py's post-item, targets.py's post-growth).
# Each wrk thread has its own Lua state: a random prefix keeps keys unique
# between threads, and __NONCE__ (replaced by wrk_script with a new value for
# every wrk run) between runs: wrk's math.random starts from the same seed in
# every process, so without it the second run would only create duplicates
# (409 ConditionFailed).
POST_LUA = """
local prefix = "__NONCE__-" .. tostring(math.random(1, 1000000000))
local n = 0
request = function()
  n = n + 1
  local body = '{"PK":"NEW#' .. prefix .. '-' .. n .. '","SK":"A","payload":"' ..
               string.rep("y", 900) .. '","count":' .. n .. '}'
  return wrk.format(nil, nil, nil, body)
end
"""

# ---------------------------------------------------------------- bulk loading
def item_json(i, per_partition=1000):
    """The JSON text of ~200-byte item number i (as item()), built fast for bulk bodies."""
    return '{"PK":"P#%06d","SK":"S#%04d","payload":"%s","count":%d}' % (
        i // per_partition, i % per_partition, PAYLOAD, i)


def batch_bodies(n, batch, put_json=item_json, first=0):
    """[(count, body bytes)] of batch-write calls putting items first..first+n-1.

    put_json(i) is the JSON text of item i. Built before a load starts, so that
    the client's own work is not timed."""
    bodies = []
    for start in range(first, first + n, batch):
        end = min(first + n, start + batch)
        puts = ",".join(put_json(i) for i in range(start, end))
        bodies.append((end - start, ('{"put":[' + puts + ']}').encode()))
    return bodies


def bulk_load(base, model, bodies, clients, time_limit):
    """Sends every batch-write body from `clients` threads, each on its own
    keep-alive connection: the fastest way in. Returns (seconds, per-call
    seconds, errors); an answer other than 200 with every put processed is an error."""
    lock = threading.Lock()
    queue = list(reversed(bodies))
    call_s, errors = [], []
    deadline = time.monotonic() + time_limit
    path = "/v1/models/%s/batch-write" % model

    def worker():
        c = Client(base, timeout=120)
        while True:
            with lock:
                if not queue or errors or time.monotonic() > deadline:
                    break
                n, body = queue.pop()
            t = time.monotonic()
            try:
                status, data = c.request("POST", path, body)
            except OSError as e:
                with lock:
                    errors.append("connection: %s" % e)
                break
            dt = time.monotonic() - t
            ok = status == 200 and json.loads(data).get("processed") == n
            with lock:
                call_s.append(dt)
                if not ok:
                    errors.append("%d %s" % (status, data[:300]))
        c.close()

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t0
    if queue and not errors:
        errors.append("time limit of %d s reached with %d calls left" % (time_limit, len(queue)))
    return elapsed, call_s, errors


# Flags a daemon needs for bulk loading: 10,000 puts of ~200 bytes are ~1.8 MB
# of JSON a call, 5,000 of ~1 KB about 5 MB.
BULK_DAEMON_ARGS = ["--max-body-bytes", str(16 << 20), "--request-timeout-ms", "120000"]


# ---------------------------------------------------------------- a DynamoDB peer
def peer_getitem(table, pk="ITEM#1", sk="A"):
    """(headers, body text) of a GetItem sent straight to a peer.

    dynalite checks no signature but wants a date next to a SigV4
    Authorization header; these are dummies."""
    headers = {"Content-Type": "application/x-amz-json-1.0",
               "X-Amz-Target": "DynamoDB_20120810.GetItem",
               "X-Amz-Date": "20200101T000000Z",
               "Authorization": "AWS4-HMAC-SHA256 Credential=x/20200101/us-east-1/"
                                "dynamodb/aws4_request, SignedHeaders=content-type;host;"
                                "x-amz-date;x-amz-target, Signature=00"}
    body = json.dumps({"TableName": table, "Key": {"PK": {"S": pk}, "SK": {"S": sk}}})
    return headers, body


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def now():
    return time.monotonic()


# A Query of a random one of the table's 1,000-item partitions per request
# (wrk Lua; format with the partition count and the limit).
QUERY_LUA = """
local parts = %d
request = function()
  local body = '{"key":[{"attr":"PK","op":"=","value":"P#' ..
               string.format("%%06d", math.random(0, parts - 1)) .. '"}],"limit":%d}'
  return wrk.format(nil, nil, nil, body)
end
"""
