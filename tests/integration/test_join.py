# SPDX-License-Identifier: Apache-2.0
"""The join rule over HTTP: a request answers only after every operation it
started finished -- on success, on the first error, at the deadline and when
the client goes away -- and the in-flight gauges return to 0."""
import socket
import struct
import time

from daemon import raw_request, STATUS_RE


def test_answers_after_all_operations(daemon):
    status, _, body = daemon.json("POST", "/v1/_test/sleep", body={"ops": 8, "ms": 150})
    assert status == 200
    assert body == {"completed": 8, "canceled": 0}  # every timer ran to its end
    assert daemon.metric("tabletheoryd_inflight_operations") == 0


def send(d, ops, ms, rid):
    """Sends a /v1/_test/sleep request on a new connection, reads nothing."""
    s = socket.create_connection((d.host, d.port))
    s.sendall(raw_request("POST", "/v1/_test/sleep",
                          body=b'{"ops": %d, "ms": %d}' % (ops, ms),
                          headers={"X-Request-Id": rid}))
    return s


def vanish(s):
    """Vanishes with a reset: a FIN alone may be a half-close by a client
    that still reads its answer (test_slow_clients.py), so it cancels nothing."""
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def test_operations_are_counted_while_running(daemon):
    # Timers far longer than the request deadline: only the client's reset
    # (or, failing that, the deadline) ends them.
    s = send(daemon, 5, 60000, "counted-5")
    daemon.wait_metric("tabletheoryd_inflight_operations", 5)
    vanish(s)
    daemon.wait_metric("tabletheoryd_inflight_operations", 0)


def test_first_error_cancels_the_others_and_joins(daemon):
    status, _, body = daemon.json("POST", "/v1/_test/sleep",
                                  body={"ops": 6, "ms": 2000, "fail_op": 3})
    assert status == 503
    assert body["error"]["code"] == "BackendUnavailable"
    assert body["error"]["retryable"] is True
    # The failing op fired at ms/2 and the rest were canceled, not awaited.
    assert body["error"]["details"] == {"completed": 1, "canceled": 5}
    assert daemon.metric("tabletheoryd_inflight_operations") == 0


def test_deadline_answers_504_after_joining(fresh_daemon):
    d = fresh_daemon("--enable-fault-injection", "--request-timeout-ms", "200")
    status, _, body = d.json("POST", "/v1/_test/sleep", body={"ops": 4, "ms": 5000})
    # Only the deadline answers 504: the timers would have answered 200.
    assert status == 504
    assert body["error"]["code"] == "BackendTimeout"
    assert "200 ms" in body["error"]["message"]
    assert d.metric("tabletheoryd_inflight_operations") == 0
    assert d.metric("tabletheoryd_inflight_requests") == 1  # only /metrics itself


def test_client_disconnect_cancels_and_joins(daemon):
    # Timers longer than the request deadline (10 s): a 499 means the reset
    # canceled them, not the deadline (which answers 504).
    s = send(daemon, 7, 60000, "gone-7")
    daemon.wait_metric("tabletheoryd_inflight_operations", 7)  # read and running
    vanish(s)
    line = daemon.wait_log(lambda l: l.get("request_id") == "gone-7", timeout=30)
    assert line["status"] == 499
    assert line["error_code"] in ("ClientClosed", "BackendTimeout")
    daemon.wait_metric("tabletheoryd_inflight_operations", 0)
    daemon.wait_metric("tabletheoryd_inflight_requests", 1)


def test_many_disconnects_leave_nothing_behind(daemon):
    fds_before = daemon.metric("process_open_fds")
    socks = [send(daemon, 3, 60000, "many-%d" % i) for i in range(100)]
    daemon.wait_metric("tabletheoryd_inflight_operations", 300)  # all read and running
    for s in socks:
        vanish(s)
    daemon.wait_metric("tabletheoryd_inflight_operations", 0, timeout=30)
    daemon.wait_metric("tabletheoryd_inflight_requests", 1, timeout=30)
    # Sockets of vanished clients are closed too.
    deadline = time.time() + 30
    while time.time() < deadline and daemon.metric("process_open_fds") > fds_before:
        time.sleep(0.02)
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
