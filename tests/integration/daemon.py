# SPDX-License-Identifier: Apache-2.0
"""daemon.py -- starts a real tabletheoryd process for integration tests and
speaks HTTP to it with the standard library only."""
import concurrent.futures
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time

DAEMON = os.environ.get("TT_DAEMON") or os.path.join(os.getcwd(), "tabletheoryd")
# When run.sh runs the suite against a DynamoDB peer (dynalite, moto, or
# ddb-listener: a second tabletheoryd serving --dynamodb-listen), every daemon
# uses the dynamodb backend on it, and starts from empty tables the way the
# memory backend does.
PEER = os.environ.get("TT_PEER")  # "dynalite" | "moto" | "ddb-listener" | None (memory)
PEER_ENDPOINT = os.environ.get("TT_PEER_ENDPOINT")
PEER_ARGS = ["--backend", "dynamodb", "--endpoint", PEER_ENDPOINT or "", "--region", "us-east-1",
             "--allow-table-delete"]
PEER_ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_EC2_METADATA_DISABLED": "true"}
SRCDIR = os.environ.get("TT_SRCDIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))



class Daemon:
    """One daemon process. Its stderr (the JSON log) goes to a file that the
    test can read; stop() asserts a clean exit (status 0, loop closed)."""

    def __init__(self, *args, env=None, listen="127.0.0.1:0", pass_fds=(), wrapper=None,
                 preexec_fn=None, fresh=True):
        self.signaled = False
        self.log_file = tempfile.NamedTemporaryFile(prefix="ttd-log-", delete=False)
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("TABLETHEORYD_")}
        self.args = list(args)
        self.on_peer = bool(PEER) and "--backend" not in args
        if self.on_peer:
            full_env.update(PEER_ENV)
        full_env.update(env or {})
        argv = [DAEMON]
        if listen:
            argv += ["--listen", listen]
        argv += list(args)
        if self.on_peer:
            argv += PEER_ARGS
        if wrapper:
            argv = wrapper + argv
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=self.log_file,
                                     env=full_env, pass_fds=pass_fds,
                                     preexec_fn=preexec_fn)
        try:
            self.address = self._wait_ready()
            if self.address.startswith("unix:"):
                self.host, self.port = None, None
            else:
                host, _, port = self.address.rpartition(":")
                self.host, self.port = host.strip("[]"), int(port)
            if self.on_peer and self.host and fresh:
                self.fresh_tables()
        except BaseException:
            self.kill()  # no fixture holds this daemon yet: it would outlive the test
            raise

    def fresh_tables(self):
        """Empty tables for every model, as the memory backend starts with."""
        headers = {}
        if "--auth-token-file" in self.args:
            with open(self.args[self.args.index("--auth-token-file") + 1]) as f:
                headers["Authorization"] = "Bearer " + f.read().strip()
        status, _, body = self.json("GET", "/v1/models", headers=headers)
        assert status == 200, body
        tables = {}
        for m in body["models"]:
            tables.setdefault(m["table"]["name"], "/v1/models/%s/table" % m["name"])

        # GET /v1/models lists the user's models only; the ledger's table is
        # reserved, and only /v1/jobs/table reaches it.
        def renew(path):
            for method, ok in (("DELETE", (204, 404)), ("PUT", (200, 201))):
                # A daemon started with a short --request-timeout-ms may time
                # out waiting for the peer; the table operation goes on, so ask again.
                deadline = time.monotonic() + 60
                while True:
                    status, _, body = self.json(method, path, headers=headers)
                    if status not in (503, 504) or time.monotonic() > deadline:
                        break
                    time.sleep(0.02)
                assert status in ok, (method, path, body)

        # Every table at once: a daemon start costs one table's delete and
        # create, not the sum over all models. map() raises what a table raised.
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(renew, list(tables.values()) + ["/v1/jobs/table"]))

    def _wait_ready(self, timeout=10.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for line in self.log_lines():
                if line.get("event") == "daemon.ready":
                    return line["listen"]
            if self.proc.poll() is not None:
                raise AssertionError("daemon exited early: %s" % self.log_text())
            time.sleep(0.02)
        raise AssertionError("daemon not ready: %s" % self.log_text())

    def log_text(self):
        with open(self.log_file.name, "r", errors="replace") as f:
            return f.read()

    def log_lines(self):
        out = []
        for raw in self.log_text().splitlines():
            try:
                out.append(json.loads(raw))
            except ValueError:
                out.append({"event": "non-json", "raw": raw})
        return out

    # Waits return as soon as their condition holds, so their limits are
    # generous: a loaded 2-core CI machine must never fail them by chance.
    def wait_log(self, predicate, timeout=30.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for line in self.log_lines():
                if predicate(line):
                    return line
            time.sleep(0.02)
        raise AssertionError("log line not found in: %s" % self.log_text())

    # Longer than the daemon's default request deadline (10 s), so a slow
    # call shows the daemon's own answer (504 Timeout), not a client timeout.
    def connection(self, timeout=60):
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None, conn=None, timeout=60):
        """Returns (status, headers dict lower-cased, body bytes)."""
        own = conn is None
        conn = conn or self.connection(timeout)
        hdrs = dict(headers or {})
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
            hdrs.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=body, headers=hdrs)
        resp = conn.getresponse()
        data = resp.read()
        result = (resp.status, {k.lower(): v for k, v in resp.getheaders()}, data)
        if own:
            conn.close()
        return result

    def json(self, method, path, body=None, headers=None, timeout=60):
        status, hdrs, data = self.request(method, path, body, headers, timeout=timeout)
        return status, hdrs, (json.loads(data) if data else None)

    def metric(self, name):
        status, _, data = self.request("GET", "/metrics")
        assert status == 200
        for line in data.decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
        raise AssertionError("metric %s missing" % name)

    def clock(self):
        """The clock of a daemon started with --test-clock: (now_s, now_ns).
        It is frozen; only advance_clock() moves it."""
        status, _, body = self.json("GET", "/v1/_test/clock")
        assert status == 200, body
        return body["now_s"], body["now_ns"]

    def advance_clock(self, ms):
        """Moves a --test-clock daemon's clock `ms` milliseconds forward:
        how tests let leases and records expire without sleeping."""
        status, _, body = self.json("POST", "/v1/_test/clock", body={"advance_ms": ms})
        assert status == 200, body
        return body["now_s"], body["now_ns"]

    def wait_metric(self, name, value, timeout=30.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.metric(name) == value:
                return
            time.sleep(0.02)
        raise AssertionError("%s never reached %s (now %s)" % (name, value, self.metric(name)))

    def send_signal(self, sig):
        self.signaled = True
        self.proc.send_signal(sig)

    def stop(self, sig=signal.SIGTERM, timeout=15):
        """SIGTERM and require a clean exit: status 0 and daemon.stopped,
        which the daemon logs only when uv_loop_close() returned 0."""
        if self.proc.poll() is None and not self.signaled:
            self.send_signal(sig)
        rc = self.proc.wait(timeout=timeout)
        text = self.log_text()
        assert rc == 0, "exit status %d; log:\n%s" % (rc, text)
        assert '"event":"daemon.stopped"' in text, text
        assert "loop_not_closed" not in text, text
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def stop_clean(d):
    """Waits until no operation is in flight and requires a clean stop,
    killing the process in any case."""
    try:
        d.wait_metric("tabletheoryd_inflight_operations", 0)
        d.stop()
    finally:
        d.kill()


def served(*args, **kw):
    """The body of a module-scoped daemon fixture (`yield from served(...)`):
    yields Daemon(*args, **kw); afterwards stops it (stop_clean)."""
    d = Daemon(*args, **kw)
    yield d
    stop_clean(d)


def served_on_one_table(*args):
    """The body of a module-scoped fixture for tests that race
    (`yield from served_on_one_table()`): yields a list of one daemon, and
    against a DynamoDB peer a second one on the same tables, so that what the
    test proves holds across processes, not just inside one; each started
    with `args`. Afterwards stops each (stop_clean)."""
    ds = [Daemon(*args)]
    if PEER:
        ds.append(Daemon(*args, fresh=False))
    yield ds
    for d in ds:
        stop_clean(d)


class KeepAliveClient:
    """One keep-alive connection per worker thread (http.client is not
    thread-safe); JSON in, (status, parsed JSON or None) out."""

    def __init__(self, host, port):
        self.conn = http.client.HTTPConnection(host, port, timeout=60)
        self.used_at = None

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body)
        headers = {"Content-Type": "application/json"} if data is not None else {}
        # The daemon closes a keep-alive connection idle for its connection
        # timeout (30 s); a setup connection may idle while workers run.
        # Reconnect first, as HTTP client libraries do, instead of sending a
        # request that the closed connection would lose.
        if self.used_at is not None and time.monotonic() - self.used_at > 10:
            self.conn.close()
        self.conn.request(method, path, body=data, headers=headers)
        resp = self.conn.getresponse()
        raw = resp.read()
        self.used_at = time.monotonic()
        return resp.status, (json.loads(raw) if raw else None)

    def close(self):
        self.conn.close()


def run_threads(threads, timeout):
    """Starts the threads, joins each for at most `timeout` seconds and
    requires that all of them finished."""
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeout)
    assert not any(t.is_alive() for t in threads)


def broken_model(attributes):
    """The text of a DMS file with one model, Broken (table broken_itest, a
    string pk `id`), whose attribute list ends with `attributes` (YAML list
    entries, verbatim): for tests that the daemon refuses it at start-up."""
    return """dms_version: "0.2"
namespace: "tabletheoryd.itest.bad"
models:
  - name: "Broken"
    table: { name: "broken_itest" }
    keys:
      partition: { attribute: "id", type: "S" }
    attributes:
      - { attribute: "id", type: "S", required: true, roles: ["pk"] }
""" + attributes


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def raw_request(method, path, body=b"", headers=None):
    """Builds the bytes of an HTTP/1.1 request."""
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: localhost"]
    hdrs = dict(headers or {})
    if body:
        hdrs.setdefault("Content-Type", "application/json")
        hdrs["Content-Length"] = str(len(body))
    for k, v in hdrs.items():
        lines.append("%s: %s" % (k, v))
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


# For tests of what only the memory backend does (a table exists as soon as a
# model loads, fault-free timing), or what a peer lacks.
def skip_on_peer(reason):
    import pytest
    return pytest.mark.skipif(bool(PEER), reason="on %s: %s" % (PEER, reason))


def skip_on(peer, reason):
    import pytest
    return pytest.mark.skipif(PEER == peer, reason="%s: %s" % (peer, reason))


STATUS_RE = re.compile(rb"HTTP/1\.1 (\d{3})")
