# SPDX-License-Identifier: Apache-2.0
"""SIGTERM: stop accepting, readyz 503, in-flight requests finish within the
drain timeout, every handle closed, exit 0."""
import json
import signal
import socket
import threading
import time

import pytest


def test_sigterm_under_load_answers_everything(fresh_daemon):
    d = fresh_daemon("--enable-fault-injection")
    results = []
    lock = threading.Lock()

    def slow(i):
        try:
            r = d.json("POST", "/v1/_test/sleep", body={"ops": 2, "ms": 700})
            out = r[0]
        except (ConnectionError, OSError) as e:  # refused cleanly after the listen closed
            out = type(e).__name__
        with lock:
            results.append(out)

    threads = [threading.Thread(target=slow, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    d.wait_metric("tabletheoryd_inflight_requests", 33, timeout=30)
    d.send_signal(signal.SIGTERM)
    for t in threads:
        t.join()
    assert len(results) == 32
    assert results.count(200) == 32, results
    d.stop()
    assert '"event":"daemon.draining"' in d.log_text()


def test_readyz_503_and_new_requests_refused_while_draining(fresh_daemon):
    d = fresh_daemon("--enable-fault-injection")
    keep = d.connection()
    assert d.request("GET", "/readyz", conn=keep)[0] == 200
    result = {}
    t = threading.Thread(target=lambda: result.setdefault(
        "r", d.json("POST", "/v1/_test/sleep", body={"ops": 1, "ms": 800})))
    t.start()
    d.wait_metric("tabletheoryd_inflight_operations", 1)
    d.send_signal(signal.SIGTERM)
    d.wait_log(lambda l: l.get("event") == "daemon.draining")
    status, hdrs, data = d.request("GET", "/readyz", conn=keep)
    assert status == 503
    assert json.loads(data)["error"]["code"] == "Draining"
    assert hdrs.get("connection", "").lower() == "close"
    keep.close()
    # The listen socket is closed: new connections are refused.
    with pytest.raises(OSError):
        d.json("GET", "/healthz")
    t.join()
    assert result["r"][0] == 200
    d.stop()


def test_drain_timeout_cancels_and_joins(fresh_daemon):
    d = fresh_daemon("--enable-fault-injection", "--drain-timeout-ms", "200")
    result = {}
    t = threading.Thread(target=lambda: result.setdefault(
        "r", d.json("POST", "/v1/_test/sleep", body={"ops": 3, "ms": 20000})))
    t.start()
    d.wait_metric("tabletheoryd_inflight_operations", 3)
    d.send_signal(signal.SIGTERM)
    t.join()
    # Draining, not the 10 s request deadline's 504 nor the timers' 200: the
    # drain timeout canceled the operations.
    assert result["r"][0] == 503
    assert result["r"][2]["error"]["code"] == "Draining"
    d.stop()
    assert '"event":"daemon.drain_timeout"' in d.log_text()


def test_sigint_also_drains(fresh_daemon):
    d = fresh_daemon()
    d.stop(sig=signal.SIGINT)


# ---- drain under load, and connections that would hold it open ----

def _write_one(d, tenant_id, n):
    return d.json("POST", "/v1/models/Line/batch-write",
                  body={"put": [{"tenant": tenant_id, "n": n}]})


def test_drain_under_load_loses_no_acknowledged_write(fresh_daemon):
    from daemon import Daemon, PEER
    from items_fixtures import MY_MODELS
    d = fresh_daemon("--enable-fault-injection", "--models", MY_MODELS, "--drain-timeout-ms",
                     "5000")
    # Every write takes a while, so some are in flight when SIGTERM comes.
    status, _, _ = d.json("POST", "/v1/_faults", body={"op": "BatchWriteItem", "model": "Line",
                                                       "latency_ms": 100, "times": 1000000})
    if status != 201:
        pytest.skip("POST /v1/_faults is not served by this build")
    tenant_id = "drain-%d" % time.monotonic_ns()
    acked, outcomes = [], []
    lock = threading.Lock()

    def writer(w):
        for k in range(100000):
            n = w * 100000 + k
            try:
                status, _, body = _write_one(d, tenant_id, n)
                out = "ok" if status == 200 and body == {"processed": 1} else \
                    (status, (body or {}).get("error", {}).get("code"))
            except (ConnectionRefusedError, ConnectionResetError):
                out = "refused"  # after the listen socket closed: never accepted
            with lock:
                outcomes.append(out)
                if out == "ok":
                    acked.append(n)
            if out != "ok":
                return

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    end = time.monotonic() + 30
    while len(acked) < 24 and time.monotonic() < end:
        time.sleep(0.02)
    assert len(acked) >= 24
    d.send_signal(signal.SIGTERM)
    for t in threads:
        t.join(timeout=60)
    d.stop()
    text = d.log_text()
    # Everything in flight finished within the drain timeout.
    assert '"event":"daemon.drain_timeout"' not in text
    # Each request was answered (200), refused with Draining, or never
    # accepted; each one the daemon answered 200 is one the client counted.
    assert set(outcomes) <= {"ok", (503, "Draining"), "refused"}, set(outcomes)
    logged_ok = [l for l in d.log_lines() if l.get("route") == "/v1/models/{model}/batch-write"
                 and l.get("status") == 200]
    assert len(logged_ok) == len(acked)
    if not PEER:
        return  # the memory backend's tables end with its process
    # Every acknowledged write is in the table afterwards.
    d2 = Daemon("--models", MY_MODELS, fresh=False)
    try:
        for i in range(0, len(acked), 100):
            keys = [{"tenant": tenant_id, "n": n} for n in acked[i:i + 100]]
            status, _, body = d2.json("POST", "/v1/models/Line/batch-get", body={"keys": keys})
            assert status == 200, body
            assert body["missing"] == [], body["missing"]
        d2.stop()
    finally:
        d2.kill()


def test_drain_timeout_closes_requests_still_arriving(fresh_daemon):
    from test_slow_clients import closed_by_peer
    d = fresh_daemon("--enable-fault-injection", "--drain-timeout-ms", "300",
                     "--header-timeout-ms", "60000", "--request-timeout-ms", "60000")
    body = socket.create_connection((d.host, d.port))
    body.sendall(b"POST /v1/_test/sleep HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"X-Request-Id: drain-body\r\nContent-Length: 100000\r\n\r\n{")
    headers = socket.create_connection((d.host, d.port))
    headers.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    # Both requests have begun (the /metrics request is the third).
    d.wait_metric("tabletheoryd_inflight_requests", 3)
    d.send_signal(signal.SIGTERM)
    got = {}
    th = threading.Thread(target=lambda: got.setdefault("h", closed_by_peer(headers, b"X: 1\r\n")))
    th.start()
    assert closed_by_peer(body, b" ")
    th.join()
    assert got["h"]
    body.close()
    headers.close()
    d.stop()
    line = d.wait_log(lambda l: l.get("request_id") == "drain-body")
    assert line["status"] == 503 and line["error_code"] == "Draining"
    assert '"event":"daemon.drain_timeout"' in d.log_text()
