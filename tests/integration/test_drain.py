# SPDX-License-Identifier: Apache-2.0
"""SIGTERM: stop accepting, readyz 503, in-flight requests finish within the
drain timeout, every handle closed, exit 0."""
import json
import signal
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
    t0 = time.monotonic()
    d.send_signal(signal.SIGTERM)
    t.join()
    assert result["r"][0] == 503
    assert result["r"][2]["error"]["code"] == "Draining"
    d.stop()
    assert time.monotonic() - t0 < 5
    assert '"event":"daemon.drain_timeout"' in d.log_text()


def test_sigint_also_drains(fresh_daemon):
    d = fresh_daemon()
    d.stop(sig=signal.SIGINT)
