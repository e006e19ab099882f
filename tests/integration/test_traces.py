# SPDX-License-Identifier: Apache-2.0
"""Traces (docs/operations.md, "Traces"): the daemon's spans arrive at an
OTLP/HTTP receiver, decoded with the official opentelemetry-proto
definitions; they continue the caller's traceparent, nest backend attempts
under the request, never carry a value, and a collector that is down, slow
or failing costs requests nothing."""
import json
import os
import socket
import struct
import time

import pytest

pytest.importorskip("opentelemetry.proto.collector.trace.v1.trace_service_pb2")

from daemon import PEER, raw_request  # noqa: E402
from otlp_receiver import Receiver, attrs, reserve_port  # noqa: E402
from test_encryption import kms  # noqa: E402,F401 (the moto KMS fixture)

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
    assert any(s.trace_id.hex() == "a" * 16 + "0" * 16 for s in spans)
    assert not any(s.trace_id.hex() == "b" * 16 + "f" * 16 for s in spans)


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


# ---- fan-out, retries, cancellation ---------------------------------------------


def fault(d, **rule):
    status, _, body = d.json("POST", "/v1/_faults", body=rule)
    assert status == 201, body
    return body


def server_tree(receiver, name):
    """The server span called `name` and every span under it, once they all
    arrived (the server span ends last but one: its calls may end after)."""
    spans = receiver.wait_spans(has_server(name))
    root = by_name(spans, name)[0]
    return root, [s for s in receiver.wait_spans(lambda sp: True)
                  if s.trace_id == root.trace_id]


def test_query_pages_are_attempts_under_the_request(fresh_daemon, receiver):
    d = traced(fresh_daemon, receiver)
    for i in range(6):
        assert d.json("POST", "/v1/models/Wallet/items",
                      body={"id": "q%d" % i, "owner": "o"})[0] == 201
    # Nothing matches the filter: with limit 1 every page asks for one item,
    # so the whole table is read a page at a time.
    status, _, body = d.json("POST", "/v1/models/Wallet/scan", body={
        "limit": 1, "filter": {"attr": "owner", "op": "=", "value": "nobody"}})
    assert status == 200 and body["items"] == [], body
    root, tree = server_tree(receiver, "POST /v1/models/{model}/scan")
    scans = [s for s in tree if s.name == "DynamoDB.Scan"]
    assert len(scans) >= 6, [s.name for s in tree]
    assert all(s.parent_span_id == root.span_id for s in scans)
    assert all(attrs(s)["tabletheoryd.attempt"] == 1 for s in scans)
    assert attrs(root)["tabletheoryd.model"] == "Wallet"
    # A parallel scan: one span per segment, its pages inside.
    status, _, body = d.json("POST", "/v1/models/Wallet/scan", body={"segments": 3})
    assert status == 200, body
    segs = receiver.wait_spans(lambda sp: len(by_name(sp, "scan segment")) >= 3)
    segs = by_name(segs, "scan segment")
    assert sorted(attrs(s)["tabletheoryd.scan.segment"] for s in segs) == [0, 1, 2]
    spans = receiver.wait_spans(lambda sp: all(children(sp, s) for s in segs))
    for seg in segs:
        (page,) = children(spans, seg)
        assert page.name == "DynamoDB.Scan" and page.kind == CLIENT


def test_batch_write_chunks_and_unprocessed_retry(fresh_daemon, receiver):
    d = traced(fresh_daemon, receiver, "--enable-fault-injection")
    fault(d, op="BatchWriteItem", model="Wallet", error="Unprocessed", times=1)
    items = [{"id": "b%02d" % i} for i in range(30)]  # two chunks of 25 and 5
    status, _, body = d.json("POST", "/v1/models/Wallet/batch-write", body={"put": items})
    assert status == 200, body
    name = "POST /v1/models/{model}/batch-write"
    receiver.wait_spans(has_server(name))
    spans = receiver.wait_spans(lambda sp: len(by_name(sp, "batch-write chunk")) == 2 and
                                len(by_name(sp, "DynamoDB.BatchWriteItem")) >= 3)
    root = by_name(spans, name)[0]
    chunks = by_name(spans, "batch-write chunk")
    assert all(c.parent_span_id == root.span_id for c in chunks)
    assert sorted(attrs(c)["tabletheoryd.batch.requests"] for c in chunks) == [5, 25]
    calls = {c.span_id: children(spans, c) for c in chunks}
    rounds = sorted(len(v) for v in calls.values())
    assert rounds == [1, 2], rounds  # the unprocessed chunk was sent again
    retried = [c for c in chunks if len(calls[c.span_id]) == 2][0]
    assert attrs(retried)["tabletheoryd.batch.unprocessed_rounds"] == 1


@pytest.mark.skipif(PEER == "dynalite", reason="dynalite does not implement transactions")
def test_transaction_attempt_span(fresh_daemon, receiver):
    d = traced(fresh_daemon, receiver)
    body = {"items": [{"op": "create", "model": "Wallet", "item": {"id": "t1"}},
                      {"op": "create", "model": "Wallet", "item": {"id": "t2"}}]}
    status, _, answer = d.json("POST", "/v1/transactions/write", body=body)
    assert status == 200, answer
    name = "POST /v1/transactions/write"
    spans = receiver.wait_spans(lambda sp: by_name(sp, name) and
                                by_name(sp, "DynamoDB.TransactWriteItems"))
    root = by_name(spans, name)[0]
    (attempt,) = by_name(spans, "transaction attempt")
    assert attempt.parent_span_id == root.span_id
    assert attrs(attempt)["tabletheoryd.txn.actions"] == 2
    (write,) = by_name(spans, "DynamoDB.TransactWriteItems")
    assert write.parent_span_id == attempt.span_id


def test_throttled_call_retried_twice(fresh_daemon, receiver):
    d = traced(fresh_daemon, receiver, "--enable-fault-injection")
    fault(d, op="GetItem", model="Wallet", error="ProvisionedThroughputExceededException", times=2)
    status, _, body = d.json("GET", "/v1/models/Wallet/items/nobody")
    assert status == 404, body
    name = "GET /v1/models/{model}/items/{key+}"
    spans = receiver.wait_spans(lambda sp: len(by_name(sp, "DynamoDB.GetItem")) >= 3 and
                                by_name(sp, name))
    root = by_name(spans, name)[0]
    gets = sorted(by_name(spans, "DynamoDB.GetItem"), key=lambda s: attrs(s)["tabletheoryd.attempt"])
    assert [attrs(s)["tabletheoryd.attempt"] for s in gets] == [1, 2, 3]
    assert all(s.parent_span_id == root.span_id for s in gets)
    for s in gets[:2]:
        a = attrs(s)
        assert s.status.code == STATUS_ERROR
        assert a["error.type"] == "ProvisionedThroughputExceededException"
        assert a["tabletheoryd.throttled"] is True
        assert a["tabletheoryd.retry.reason"] == "throttled"
        assert a["tabletheoryd.retry.backoff_ms"] >= 0
    assert gets[2].status.code != STATUS_ERROR
    assert "tabletheoryd.retry.reason" not in attrs(gets[2])
    assert gets[1].start_time_unix_nano >= gets[0].end_time_unix_nano


def test_client_disconnect_ends_spans_with_a_status(fresh_daemon, receiver):
    d = traced(fresh_daemon, receiver, "--enable-fault-injection")
    fault(d, op="GetItem", model="Wallet", error="InternalServerError", latency_ms=3000, times=1)
    s = socket.create_connection((d.host, d.port))
    s.sendall(raw_request("GET", "/v1/models/Wallet/items/gone"))
    d.wait_metric("tabletheoryd_inflight_operations", 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()  # a reset: the daemon notices at once
    d.wait_metric("tabletheoryd_inflight_operations", 0)
    name = "GET /v1/models/{model}/items/{key+}"
    spans = receiver.wait_spans(lambda sp: by_name(sp, name) and by_name(sp, "DynamoDB.GetItem"))
    root = by_name(spans, name)[0]
    assert attrs(root)["http.response.status_code"] == 499
    assert root.status.code == STATUS_ERROR and root.status.message == "ClientClosed"
    (call,) = by_name(spans, "DynamoDB.GetItem")
    assert call.status.code == STATUS_ERROR
    assert attrs(call)["error.type"] == "RequestCanceled"


# ---- the collector costs requests nothing -----------------------------------------


@pytest.mark.parametrize("mode", ["down", "fail", "slow"])
def test_collector_trouble_costs_requests_nothing(fresh_daemon, mode):
    if mode == "down":  # refused, on a port nothing else can take meanwhile
        r = reserve_port()
        url = "http://127.0.0.1:%d/v1/traces" % r.getsockname()[1]
    else:
        r = Receiver(mode=mode, delay=30.0)
        url = r.url
    try:
        d = fresh_daemon("--models", MODELS, "--otlp-endpoint", url,
                         "--otlp-schedule-delay-ms", "20", "--otlp-timeout-ms", "500",
                         "--drain-timeout-ms", "1000")
        for i in range(40):
            status, _, body = d.json("POST", "/v1/models/Wallet/items", body={"id": "c%d" % i})
            assert status == 201, body
            assert d.json("GET", "/v1/models/Wallet/items/c%d" % i)[0] == 200
        deadline = time.time() + 30
        while time.time() < deadline:
            _, _, data = d.request("GET", "/metrics")
            text = data.decode()
            if 'tabletheoryd_trace_spans_dropped_total{reason="export_failed"}' in text:
                break
            time.sleep(0.02)
        assert 'tabletheoryd_trace_spans_dropped_total{reason="export_failed"}' in text, text
        d.stop()  # the drain ends within its timeout: the export is joined
    finally:
        r.close()


def dropped(d, reason):
    _, _, data = d.request("GET", "/metrics")
    for line in data.decode().splitlines():
        if line.startswith('tabletheoryd_trace_spans_dropped_total{reason="%s"} ' % reason):
            return float(line.split()[-1])
    return 0.0


def test_recording_paused_while_the_collector_is_down(fresh_daemon):
    """A failed batch pauses recording: requests keep their trace context
    and the spans are only counted; when the collector is back, spans
    arrive again."""
    down = reserve_port()
    port = down.getsockname()[1]
    d = fresh_daemon("--models", MODELS, "--otlp-endpoint",
                     "http://127.0.0.1:%d/v1/traces" % port, "--otlp-schedule-delay-ms", "20",
                     "--otlp-timeout-ms", "500")
    deadline = time.time() + 30
    while dropped(d, "export_failed") == 0 and time.time() < deadline:
        assert d.json("GET", "/healthz")[0] == 200
        time.sleep(0.02)
    assert dropped(d, "export_failed") > 0
    status, hdrs, _ = d.json("GET", "/healthz", headers={
        "traceparent": "00-%s-%s-01" % (CALLER_TRACE, CALLER_SPAN)})
    assert status == 200
    assert hdrs["traceresponse"].startswith("00-%s-" % CALLER_TRACE)
    assert hdrs["traceresponse"].endswith("-01")
    while dropped(d, "paused") == 0 and time.time() < deadline:
        assert d.json("GET", "/healthz")[0] == 200
        time.sleep(0.02)
    assert dropped(d, "paused") > 0
    back = Receiver(port=port)
    down.close()
    try:
        deadline = time.time() + 60
        while not any(s.name == "GET /healthz" for s, _ in back.spans()):
            assert time.time() < deadline, "no span after the collector came back"
            assert d.json("GET", "/healthz")[0] == 200
            time.sleep(0.02)
        d.stop()
    finally:
        back.close()


@pytest.mark.parametrize("protocol", ["http/json", "http/protobuf"])
def test_otlp_protocol(fresh_daemon, receiver, protocol):
    """OTEL_EXPORTER_OTLP_PROTOCOL picks the encoding; protobuf is the
    default. Both decode to the same spans with the official definitions."""
    env = dict(os.environ, OTEL_EXPORTER_OTLP_PROTOCOL=protocol)
    if protocol == "http/protobuf":
        env.pop("OTEL_EXPORTER_OTLP_PROTOCOL")
    d = traced(fresh_daemon, receiver, env=env)
    tp = "00-%s-%s-01" % (CALLER_TRACE, CALLER_SPAN)
    status, hdrs, _ = d.json("GET", "/healthz?x=1", headers={"traceparent": tp,
                                                             "tracestate": "k=v"})
    assert status == 200
    spans = receiver.wait_spans(has_server("GET /healthz"))
    s = by_name(spans, "GET /healthz")[0]
    assert s.trace_id.hex() == CALLER_TRACE and s.parent_span_id.hex() == CALLER_SPAN
    assert s.span_id.hex() == hdrs["traceresponse"].split("-")[2]
    assert s.trace_state == "k=v" and s.kind == SERVER
    assert s.end_time_unix_nano >= s.start_time_unix_nano > 1_600_000_000 * 10**9
    assert attrs(s)["http.response.status_code"] == 200
    ctype = receiver.headers[0]["Content-Type"]
    assert ctype == ("application/json" if protocol == "http/json" else
                     "application/x-protobuf")
    if protocol == "http/json":
        json.loads(receiver.bodies[0])


def test_drain_flushes_what_is_queued(fresh_daemon, receiver):
    d = fresh_daemon("--models", MODELS, "--otlp-endpoint", receiver.url,
                     "--otlp-schedule-delay-ms", "600000")
    assert d.json("GET", "/healthz")[0] == 200
    # The span is queued (the gauge) and nothing was sent before the drain.
    assert d.metric("tabletheoryd_trace_queue_spans") >= 1
    assert not receiver.spans()
    d.stop()
    assert by_name([s for s, _ in receiver.spans()], "GET /healthz")


# ---- KMS -----------------------------------------------------------------------------


def test_kms_encrypted_write_has_kms_client_spans(fresh_daemon, receiver, request):
    kms = request.getfixturevalue("kms")  # test_encryption's moto KMS (skips without moto)
    endpoint, key = kms
    from test_encryption import ENV
    d = traced(fresh_daemon, receiver, "--kms-key-id", key, "--kms-endpoint", endpoint,
               env=ENV)
    status, _, body = d.json("POST", "/v1/models/Sealed/items",
                             body={"id": "k1", "secret": SENTINEL})
    assert status == 201, body
    name = "POST /v1/models/{model}/items"
    spans = receiver.wait_spans(lambda sp: by_name(sp, name) and
                                by_name(sp, "KMS.GenerateDataKey"))
    root = by_name(spans, name)[0]
    (gdk,) = by_name(spans, "KMS.GenerateDataKey")
    assert gdk.kind == CLIENT and gdk.trace_id == root.trace_id
    a = attrs(gdk)
    assert a["rpc.service"] == "KMS" and a["rpc.method"] == "GenerateDataKey"
    assert "db.system" not in a
    d.stop()
    assert SENTINEL.encode() not in receiver.raw()
    assert key.encode() not in receiver.raw()


# ---- metrics joined to traces ------------------------------------------------------


def test_openmetrics_exemplars_name_exported_traces(fresh_daemon, receiver):
    d = traced(fresh_daemon, receiver)
    tp = "00-%s-%s-01" % (CALLER_TRACE, CALLER_SPAN)
    status, hdrs, _ = d.json("GET", "/healthz", headers={"traceparent": tp})
    assert status == 200
    span_id = hdrs["traceresponse"].split("-")[2]
    status, mh, data = d.request("GET", "/metrics",
                                 headers={"Accept": "application/openmetrics-text"})
    assert status == 200
    assert mh["content-type"].startswith("application/openmetrics-text; version=1.0.0")
    text = data.decode()
    assert text.endswith("# EOF\n")
    assert "# TYPE tabletheoryd_http_requests counter" in text
    assert "# TYPE process_cpu_seconds counter" in text
    ex = [line for line in text.splitlines() if line.startswith("tabletheoryd_http_request_")
          and 'route="/healthz"' in line and "# {" in line]
    assert ex, text
    assert 'trace_id="%s",span_id="%s"' % (CALLER_TRACE, span_id) in ex[0]
    # The Prometheus format is unchanged, without exemplars.
    _, ph, plain = d.request("GET", "/metrics")
    assert ph["content-type"].startswith("text/plain; version=0.0.4")
    assert b"# {" not in plain and b"# EOF" not in plain
    receiver.wait_spans(has_server("GET /healthz"))


def test_log_line_ids_without_tracing(fresh_daemon):
    d = fresh_daemon("--models", MODELS)
    tp = "00-%s-%s-01" % (CALLER_TRACE, CALLER_SPAN)
    status, hdrs, _ = d.json("GET", "/v1/models/Wallet/items/none", headers={"traceparent": tp})
    assert status == 404
    assert "traceresponse" not in hdrs  # tracing is off
    line = d.wait_log(lambda l: l.get("event") == "request.completed" and l.get("status") == 404)
    assert line["trace_id"] == CALLER_TRACE
    assert len(line["span_id"]) == 16 and line["span_id"] != CALLER_SPAN
    assert line["model"] == "Wallet"


# ---- STS -------------------------------------------------------------------------------


@pytest.mark.skipif(PEER != "moto", reason="needs STS AssumeRole (moto only)")
def test_sts_assume_role_has_a_client_span(fresh_daemon, receiver, tmp_path):
    import test_partners as tp
    d = traced(fresh_daemon, receiver, "--config", tp.two_partners(tmp_path),
               "--sts-endpoint", tp.PEER_ENDPOINT)
    name = "Tr" + os.urandom(4).hex()
    tp.register(d, name, ["acme"])
    spans = receiver.wait_spans(lambda sp: by_name(sp, "STS.AssumeRole"))
    (sts,) = by_name(spans, "STS.AssumeRole")
    a = attrs(sts)
    assert sts.kind == CLIENT and not sts.parent_span_id  # a fetch of no request
    assert a["rpc.service"] == "STS" and a["rpc.method"] == "AssumeRole"
    assert sts.status.code != STATUS_ERROR
    d.stop()
    raw = receiver.raw()
    assert tp.EXTERNAL_ID.encode() not in raw and tp.ACME_ROLE.encode() not in raw


# ---- the job ledger ------------------------------------------------------------------


def test_ledger_steps_nest_their_calls(fresh_daemon, receiver):
    d = traced(fresh_daemon, receiver)
    status, _, job = d.json("POST", "/v1/jobs", body={"tenant_id": "acme"})
    assert status == 201, job
    name = "POST /v1/jobs"
    spans = receiver.wait_spans(lambda sp: by_name(sp, name) and by_name(sp, "ledger step"))
    root = by_name(spans, name)[0]
    steps = [s for s in by_name(spans, "ledger step") if s.trace_id == root.trace_id]
    assert steps and all(s.parent_span_id == root.span_id for s in steps)
    spans = receiver.wait_spans(lambda sp: all(children(sp, s) for s in steps))
    for step in steps:
        calls = children(spans, step)
        assert all(c.kind in (CLIENT, INTERNAL) for c in calls)
        assert attrs(step)["tabletheoryd.model"].startswith("Job")
