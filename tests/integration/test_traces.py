# SPDX-License-Identifier: Apache-2.0
"""Traces (docs/operations.md, "Traces"): the daemon's spans arrive at an
OTLP/HTTP receiver, decoded with the official opentelemetry-proto
definitions; they continue the caller's traceparent, nest backend attempts
under the request, never carry a value, and a collector that is down, slow
or failing costs requests nothing."""
import json
import os
import socket
import time

import pytest

pytest.importorskip("opentelemetry.proto.collector.trace.v1.trace_service_pb2")

from daemon import PEER, raw_request  # noqa: E402
from otlp_receiver import Receiver, attrs  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models")
SERVER, CLIENT, INTERNAL = 2, 3, 1
STATUS_ERROR = 2
CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
SENTINEL = "SENTINEL-0tel-5c1e"


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def traced(fresh_daemon, receiver, *args, env=None):
    return fresh_daemon("--models", MODELS, "--otlp-endpoint", receiver.url,
                        "--otlp-schedule-delay-ms", "50", *args, env=env)


def by_name(spans, name):
    return [s for s in spans if s.name == name]


def children(spans, parent):
    return [s for s in spans if s.parent_span_id == parent.span_id]


def has_server(name):
    return lambda spans: any(s.name == name and s.kind == SERVER for s in spans)


def test_get_span_tree_continues_the_callers_trace(fresh_daemon, receiver):
    d = traced(fresh_daemon, receiver)
    status, _, body = d.json("POST", "/v1/models/Wallet/items", body={"id": "w1", "owner": "o"})
    assert status == 201, body
    tp = "00-%s-%s-01" % (CALLER_TRACE, CALLER_SPAN)
    status, hdrs, body = d.json("GET", "/v1/models/Wallet/items/w1",
                                headers={"traceparent": tp, "tracestate": "vendor=abc"})
    assert status == 200, body
    # The answer names the server span, in the caller's trace.
    tr = hdrs["traceresponse"]
    version, trace_id, span_id, flags = tr.split("-")
    assert (version, trace_id, flags) == ("00", CALLER_TRACE, "01")
    route = "GET /v1/models/{model}/items/{key+}"
    spans = receiver.wait_spans(has_server(route))
    server = by_name(spans, route)[0]
    assert server.trace_id.hex() == CALLER_TRACE
    assert server.parent_span_id.hex() == CALLER_SPAN
    assert server.span_id.hex() == span_id
    assert server.trace_state == "vendor=abc"
    a = attrs(server)
    assert a["http.request.method"] == "GET"
    assert a["http.route"] == "/v1/models/{model}/items/{key+}"
    assert a["http.response.status_code"] == 200
    assert a["tabletheoryd.model"] == "Wallet"
    assert a["tabletheoryd.request_id"] == hdrs["x-request-id"]
    assert "url.path" not in a
    spans = receiver.wait_spans(lambda sp: any(
        s.parent_span_id == server.span_id and s.kind == CLIENT for s in sp))
    (call,) = children(spans, server)
    assert call.kind == CLIENT and call.name == "DynamoDB.GetItem"
    assert call.trace_id.hex() == CALLER_TRACE
    ca = attrs(call)
    assert ca["rpc.system"] == "aws-api" and ca["rpc.service"] == "DynamoDB"
    assert ca["rpc.method"] == "GetItem" and ca["db.system"] == "dynamodb"
    assert ca["aws.dynamodb.table_names"] == ["wallets_itest"]
    assert ca["tabletheoryd.attempt"] == 1
    assert call.start_time_unix_nano >= server.start_time_unix_nano
    _, res = receiver.spans()[0]
    assert res["service.name"] == "tabletheoryd"
    # The log line carries the same ids, and the model.
    line = d.wait_log(lambda l: l.get("event") == "request.completed" and
                      l.get("route") == "/v1/models/{model}/items/{key+}" and
                      l.get("method") == "GET")
    assert line["trace_id"] == CALLER_TRACE and line["span_id"] == span_id
    assert line["model"] == "Wallet"


def test_new_trace_without_traceparent_and_unsampled_parent(fresh_daemon, receiver):
    d = traced(fresh_daemon, receiver)
    status, hdrs, _ = d.json("GET", "/healthz")
    assert status == 200
    _, trace_id, span_id, flags = hdrs["traceresponse"].split("-")
    assert flags == "01" and trace_id != CALLER_TRACE
    spans = receiver.wait_spans(has_server("GET /healthz"))
    s = by_name(spans, "GET /healthz")[0]
    assert s.trace_id.hex() == trace_id and not s.parent_span_id
    # parentbased: a caller that did not sample is followed.
    tp = "00-%s-%s-00" % (CALLER_TRACE, CALLER_SPAN)
    status, hdrs, _ = d.json("GET", "/v1/models", headers={"traceparent": tp})
    assert status == 200
    assert hdrs["traceresponse"].startswith("00-%s-" % CALLER_TRACE)
    assert hdrs["traceresponse"].endswith("-00")
    d.json("GET", "/readyz")
    receiver.wait_spans(has_server("GET /readyz"))
    assert not any(s.trace_id.hex() == CALLER_TRACE for s, _ in receiver.spans())


def test_ratio_sampler(fresh_daemon, receiver):
    d = traced(fresh_daemon, receiver, "--traces-sampler", "traceidratio",
               "--traces-sampler-arg", "0.5")
    # traceidratio decides by the trace id's last 8 bytes: low ones are in.
    low = "00-%s-%s-00" % ("a" * 16 + "0" * 16, CALLER_SPAN)
    high = "00-%s-%s-01" % ("b" * 16 + "f" * 16, CALLER_SPAN)
    assert d.json("GET", "/v1/models", headers={"traceparent": high})[2] is not None
    assert d.json("GET", "/healthz", headers={"traceparent": low})[0] == 200
    spans = receiver.wait_spans(has_server("GET /healthz"))
    assert not by_name(spans, "GET /v1/models")


def test_sentinels_never_reach_a_span(fresh_daemon, receiver, tmp_path):
    token = "TOKEN-" + SENTINEL + "-abcdef"
    tf = tmp_path / "token"
    tf.write_text(token)
    d = traced(fresh_daemon, receiver, "--auth-token-file", str(tf), "--enable-fault-injection")
    auth = {"Authorization": "Bearer " + token}
    base = "/v1/models/Wallet/items/"
    d.json("POST", "/v1/models/Wallet/items", body={"id": SENTINEL, "owner": SENTINEL,
                                                    "note": SENTINEL}, headers=auth)
    d.json("GET", base + SENTINEL + "?select=" + SENTINEL, headers=auth)
    d.json("PATCH", base + SENTINEL, body={"set": {"owner": SENTINEL + "x"},
                                           "if": {"owner": SENTINEL}}, headers=auth)
    d.json("POST", "/v1/models/Wallet/query", body={"pk": SENTINEL}, headers=auth)
    d.json("POST", "/v1/models/Wallet/batch-write",
           body={"put": [{"id": SENTINEL + str(i), "owner": SENTINEL} for i in range(3)]},
           headers=auth)
    d.json("GET", "/v1/models/%s/items/%s" % (SENTINEL, SENTINEL), headers=auth)
    d.json("DELETE", base + SENTINEL, headers=auth)
    d.json("GET", "/healthz?x=" + SENTINEL, headers={"X-Request-Id": "bad " + SENTINEL,
                                                       "traceparent": SENTINEL,
                                                       "tracestate": "k=" + SENTINEL,
                                                       "User-Agent": SENTINEL})
    d.json("GET", base + "w", headers={"Authorization": "Bearer " + SENTINEL})
    # A failing backend call (its message may quote the request).
    d.json("POST", "/v1/_faults", body={"op": "PutItem", "error": "InternalServerError",
                                        "times": 8}, headers=auth)
    d.json("POST", "/v1/models/Wallet/items", body={"id": SENTINEL + "2", "owner": SENTINEL},
           headers=auth)
    receiver.wait_spans(lambda sp: sum(1 for s in sp if s.kind == SERVER) >= 11)
    d.stop()
    raw = receiver.raw()
    assert raw, "nothing was exported"
    assert SENTINEL.encode() not in raw
    assert token.encode() not in raw
    assert b"testing" not in raw  # the peer's credentials, when on a peer
