# SPDX-License-Identifier: Apache-2.0
"""Logs never carry bodies, item or key values, query values or credentials:
sentinel values go through every route and must not reach the log."""
import socket

from daemon import raw_request

SENTINEL = "SENTINEL-7f3a9c"


def test_sentinels_never_reach_the_log(fresh_daemon, tmp_path):
    token = "TOKEN-" + SENTINEL + "-abcdef"
    tf = tmp_path / "token"
    tf.write_text(token)
    d = fresh_daemon("--enable-fault-injection", "--log-level", "debug", "--auth-token-file",
                     str(tf))
    auth = {"Authorization": "Bearer " + token}
    bodies = [
        {"ops": 1, "ms": 1, "password": SENTINEL, "item": {"pk": SENTINEL}},
        {"ops": SENTINEL},  # a validation error about a sentinel value
        {"ops": 1, "fail_op": 0, "note": SENTINEL},
    ]
    for b in bodies:
        d.json("POST", "/v1/_test/sleep", body=b, headers=auth)
        d.json("POST", "/v1/_test/sleep", body=b)  # unauthorized
    d.request("POST", "/v1/_test/sleep", body='{"broken": "%s' % SENTINEL,
              headers=dict(auth, **{"Content-Type": "application/json"}))
    d.request("POST", "/v1/_test/sleep", body=SENTINEL,
              headers={"Content-Type": "text/plain"})
    d.json("GET", "/v1/models/%s/items/%s?select=%s" % (SENTINEL, SENTINEL, SENTINEL))
    d.json("GET", "/healthz?x=" + SENTINEL, headers={"X-Request-Id": "bad " + SENTINEL,
                                                       "traceparent": SENTINEL,
                                                       "User-Agent": SENTINEL})
    d.json("DELETE", "/healthz", headers={"Cookie": SENTINEL})
    # A client that vanishes mid-request.
    s = socket.create_connection((d.host, d.port))
    s.sendall(raw_request("POST", "/v1/_test/sleep",
                          body=('{"ops":1,"ms":2000,"secret":"%s"}' % SENTINEL).encode(),
                          headers=auth))
    s.close()
    d.wait_metric("tabletheoryd_inflight_operations", 0)
    d.stop()
    text = d.log_text()
    assert text.count("request.completed") >= 12
    assert SENTINEL not in text
    assert token not in text
