# SPDX-License-Identifier: Apache-2.0
"""Logs never carry bodies, item or key values, query values or credentials:
sentinel values go through every route and must not reach the log."""
import json
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
    # Ledger operations log a debug line each (ledger.op): error messages
    # that quote a member name the client sent must stay out of it.
    for method, path, body in (("POST", "/v1/jobs", {SENTINEL: 1}),
                               ("POST", "/v1/jobs", {"job_id": "j-" + SENTINEL[:8],
                                                     "tenant_id": "t", SENTINEL: True}),
                               ("POST", "/v1/jobs/j1/lease", {"owner": "o", SENTINEL: 1}),
                               ("POST", "/v1/jobs/j1/transition", {SENTINEL: "x"})):
        status, _, answer = d.json(method, path, body=body, headers=auth)
        assert status == 400, answer
        assert SENTINEL in json.dumps(answer)  # the client is told which member
    d.wait_log(lambda line: line.get("event") == "ledger.op" and
               line.get("error_code") == "ValidationError")
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


def test_item_routes_keep_values_out_of_the_log(fresh_daemon):
    import os
    from daemon import SRCDIR
    models = os.path.join(SRCDIR, "tests", "data", "dms", "v0.2", "models")
    d = fresh_daemon("--models", models, "--log-level", "debug", "--allow-table-delete")
    pk = "USER#" + SENTINEL
    key = "/v1/models/User/items/USER%23" + SENTINEL + "/PROFILE"
    item = {"PK": pk, "SK": "PROFILE", "nickname": SENTINEL, "emailHash": SENTINEL,
            "tags": [SENTINEL]}
    assert d.json("POST", "/v1/models/User/items", body=item)[0] == 201
    assert d.json("POST", "/v1/models/User/items", body=item)[0] == 409
    assert d.json("GET", key + "?select=nickname")[0] == 200
    assert d.json("GET", key + "?format=dynamodb")[0] == 200
    assert d.json("PUT", key, body=dict(item, nickname=SENTINEL + "2"))[0] == 200
    assert d.json("PATCH", key, body={"set": {"nickname": SENTINEL + "3"},
                                      "condition": {"attr": "nickname", "op": "=",
                                                    "value": SENTINEL}})[0] == 409
    assert d.json("PATCH", key, body={"set": {"nickname": 5}})[0] == 400
    assert d.json("PATCH", key, body={"set": {SENTINEL: 1}})[0] == 400
    assert d.json("POST", "/v1/models/User/query",
                  body={"key": [{"attr": "PK", "op": "=", "value": pk}],
                        "filter": {"attr": "nickname", "op": "begins_with", "value": SENTINEL}}
                  )[0] == 200
    assert d.json("POST", "/v1/models/User/query",
                  body={"key": [{"attr": "emailHash", "op": "=", "value": SENTINEL}]})[0] == 200
    assert d.json("POST", "/v1/models/User/query",
                  body={"key": [{"attr": "PK", "op": "=", "value": pk}],
                        "cursor": SENTINEL})[0] == 400
    assert d.json("POST", "/v1/models/User/scan",
                  body={"filter": {"attr": "tags", "op": "contains", "value": SENTINEL},
                        "segments": 3})[0] == 200
    assert d.json("DELETE", key)[0] == 204
    assert d.json("DELETE", key)[0] == 404
    assert d.json("GET", "/v1/models/" + SENTINEL)[0] == 404
    d.wait_metric("tabletheoryd_inflight_operations", 0)
    d.stop()
    text = d.log_text()
    assert text.count("request.completed") >= 15
    assert SENTINEL not in text


def test_lifecycle_lines_at_every_level(fresh_daemon):
    # The ready line names the listen address (found by supervisors and by this suite
    # with --listen 127.0.0.1:0), so it is written at every level; requests are not.
    d = fresh_daemon("--log-level", "error")
    assert d.request("GET", "/healthz")[0] == 200
    d.stop()
    events = [(x["event"], x["level"]) for x in d.log_lines()]
    assert ("daemon.ready", "notice") in events
    assert ("daemon.draining", "notice") in events and ("daemon.stopped", "notice") in events
    assert all(lv in ("notice", "error") for _, lv in events), events
