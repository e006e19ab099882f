# SPDX-License-Identifier: Apache-2.0
"""The join rule over HTTP: a request answers only after every operation it
started finished -- on success, on the first error, at the deadline and when
the client goes away -- and the in-flight gauges return to 0."""
import socket
import struct
import threading
import time

from daemon import raw_request, STATUS_RE


def test_answers_after_all_operations(daemon):
    t0 = time.monotonic()
    status, _, body = daemon.json("POST", "/v1/_test/sleep", body={"ops": 8, "ms": 150})
    elapsed = time.monotonic() - t0
    assert status == 200
    assert body == {"completed": 8, "canceled": 0}
    assert elapsed >= 0.15
    assert daemon.metric("tabletheoryd_inflight_operations") == 0


def test_operations_are_counted_while_running(daemon):
    result = {}

    def slow():
        result["r"] = daemon.json("POST", "/v1/_test/sleep", body={"ops": 5, "ms": 600})

    t = threading.Thread(target=slow)
    t.start()
    seen = 0
    deadline = time.time() + 3
    while time.time() < deadline and seen != 5:
        seen = daemon.metric("tabletheoryd_inflight_operations")
        time.sleep(0.02)
    t.join()
    assert seen == 5
    assert result["r"][0] == 200
    assert daemon.metric("tabletheoryd_inflight_operations") == 0


def test_first_error_cancels_the_others_and_joins(daemon):
    t0 = time.monotonic()
    status, _, body = daemon.json("POST", "/v1/_test/sleep",
                                  body={"ops": 6, "ms": 2000, "fail_op": 3})
    elapsed = time.monotonic() - t0
    assert status == 503
    assert body["error"]["code"] == "BackendUnavailable"
    assert body["error"]["retryable"] is True
    assert 0.9 <= elapsed < 1.9  # the failing op fires at ms/2; the rest are canceled
    assert daemon.metric("tabletheoryd_inflight_operations") == 0


def test_deadline_answers_504_after_joining(fresh_daemon):
    d = fresh_daemon("--enable-fault-injection", "--request-timeout-ms", "200")
    t0 = time.monotonic()
    status, _, body = d.json("POST", "/v1/_test/sleep", body={"ops": 4, "ms": 5000})
    elapsed = time.monotonic() - t0
    assert status == 504
    assert body["error"]["code"] == "BackendTimeout"
    assert 0.2 <= elapsed < 2.0
    assert d.metric("tabletheoryd_inflight_operations") == 0
    assert d.metric("tabletheoryd_inflight_requests") == 1  # only /metrics itself


def send_and_vanish(d, ops, ms):
    s = socket.create_connection((d.host, d.port))
    s.sendall(raw_request("POST", "/v1/_test/sleep",
                          body=b'{"ops": %d, "ms": %d}' % (ops, ms),
                          headers={"X-Request-Id": "gone-%d" % ops}))
    # A reset drops what the daemon has not read yet: give it time to read.
    time.sleep(0.2)
    # Vanish with a reset: a FIN alone may be a half-close by a client that
    # still reads its answer (test_slow_clients.py), so it cancels nothing.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def test_client_disconnect_cancels_and_joins(daemon):
    send_and_vanish(daemon, 7, 5000)
    # The request is canceled well before 5 s and still fully joined.
    line = daemon.wait_log(lambda l: l.get("request_id") == "gone-7", timeout=30)
    assert line["status"] == 499
    assert line["error_code"] in ("ClientClosed", "BackendTimeout")
    assert line["duration_ms"] < 3000
    daemon.wait_metric("tabletheoryd_inflight_operations", 0)
    daemon.wait_metric("tabletheoryd_inflight_requests", 1)


def test_many_disconnects_leave_nothing_behind(daemon):
    fds_before = daemon.metric("process_open_fds")
    threads = [threading.Thread(target=send_and_vanish, args=(daemon, 3, 3000))
               for _ in range(100)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    daemon.wait_metric("tabletheoryd_inflight_operations", 0, timeout=30)
    daemon.wait_metric("tabletheoryd_inflight_requests", 1, timeout=30)
    # Sockets of vanished clients are closed too.
    deadline = time.time() + 5
    while time.time() < deadline and daemon.metric("process_open_fds") > fds_before:
        time.sleep(0.05)
    assert daemon.metric("process_open_fds") <= fds_before
    status, _, _ = daemon.json("GET", "/healthz")
    assert status == 200


def test_pipelined_keepalive_after_async(daemon):
    conn = daemon.connection()
    for i in range(3):
        status, _, _ = daemon.request("POST", "/v1/_test/sleep", body={"ops": 2, "ms": 10},
                                      conn=conn)
        assert status == 200
        status, _, _ = daemon.request("GET", "/healthz", conn=conn)
        assert status == 200
    conn.close()
