# SPDX-License-Identifier: Apache-2.0
"""System endpoints and the conventions every answer follows (docs/api.md, Conventions)."""
import json
import re
import socket

from daemon import SRCDIR, raw_request, STATUS_RE


def test_healthz(daemon):
    status, hdrs, body = daemon.json("GET", "/healthz")
    assert status == 200
    assert body == {"status": "ok"}
    assert hdrs["content-type"] == "application/json"
    assert re.fullmatch(r"[0-9a-f]{32}", hdrs["x-request-id"])


def test_head_healthz_has_no_body(daemon):
    status, hdrs, data = daemon.request("HEAD", "/healthz")
    assert status == 200 and data == b""


def test_readyz_when_serving(daemon):
    status, _, body = daemon.json("GET", "/readyz")
    assert status == 200 and body == {"status": "ready"}


def test_openapi_is_the_project_file(daemon):
    status, hdrs, data = daemon.request("GET", "/openapi.yaml")
    assert status == 200
    assert hdrs["content-type"] == "application/yaml"
    with open(f"{SRCDIR}/openapi.yaml", "rb") as f:
        assert data == f.read()


def test_metrics_exposition(daemon):
    daemon.request("GET", "/healthz")
    status, hdrs, data = daemon.request("GET", "/metrics")
    assert status == 200
    assert hdrs["content-type"].startswith("text/plain; version=0.0.4")
    text = data.decode()
    for family, kind in [("tabletheoryd_http_requests_total", "counter"),
                         ("tabletheoryd_http_request_duration_seconds", "histogram"),
                         ("tabletheoryd_backend_calls_total", "counter"),
                         ("tabletheoryd_backend_call_duration_seconds", "histogram"),
                         ("tabletheoryd_backend_retries_total", "counter"),
                         ("tabletheoryd_inflight_requests", "gauge"),
                         ("tabletheoryd_inflight_operations", "gauge"),
                         ("tabletheoryd_consumed_capacity_total", "counter"),
                         ("process_resident_memory_bytes", "gauge"),
                         ("process_cpu_seconds_total", "counter"),
                         ("process_open_fds", "gauge")]:
        assert f"# TYPE {family} {kind}\n" in text, family
    assert re.search(r'tabletheoryd_http_requests_total\{route="/healthz",method="GET",'
                     r'status="200"\} [1-9]', text)
    assert re.search(r'tabletheoryd_http_request_duration_seconds_bucket\{route="/healthz",'
                     r'le="\+Inf"\} [1-9]', text)
    # Every sample line is NAME{labels} VALUE or NAME VALUE.
    for line in text.splitlines():
        if line and not line.startswith("#"):
            assert re.fullmatch(r'[a-z_:][a-z0-9_:]*(\{.*\})? -?[0-9.e+-]+', line), line
    # This request itself is in flight while the metrics are rendered.
    assert "tabletheoryd_inflight_requests 1\n" in text


def error_of(status, body, code):
    assert body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    assert isinstance(body["error"]["retryable"], bool)
    assert isinstance(body["error"]["details"], dict)
    assert body["request_id"]


def test_route_not_found(daemon):
    status, hdrs, body = daemon.json("GET", "/v1/nothing-here")
    assert status == 404
    error_of(status, body, "RouteNotFound")
    assert body["request_id"] == hdrs["x-request-id"]


def test_method_not_allowed_lists_allow(daemon):
    status, hdrs, body = daemon.json("DELETE", "/healthz")
    assert status == 405
    error_of(status, body, "MethodNotAllowed")
    assert hdrs["allow"] == "GET, HEAD"


def test_unknown_method(daemon):
    status, hdrs, body = daemon.json("BREW", "/healthz")
    assert status == 405
    assert hdrs["allow"] == "GET, HEAD"


def test_request_id_is_echoed(daemon):
    status, hdrs, body = daemon.json("GET", "/nope", headers={"X-Request-Id": "client-id.42"})
    assert hdrs["x-request-id"] == "client-id.42"
    assert body["request_id"] == "client-id.42"
    daemon.wait_log(lambda l: l.get("request_id") == "client-id.42" and l.get("status") == 404)


def test_unsafe_request_id_is_replaced(daemon):
    status, hdrs, _ = daemon.json("GET", "/healthz", headers={"X-Request-Id": "bad id\"{}"})
    assert re.fullmatch(r"[0-9a-f]{32}", hdrs["x-request-id"])


def test_traceparent_reaches_the_log_only_when_valid(daemon):
    tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    daemon.json("GET", "/healthz", headers={"traceparent": tp, "X-Request-Id": "tp-ok"})
    line = daemon.wait_log(lambda l: l.get("request_id") == "tp-ok")
    assert line["traceparent"] == tp
    daemon.json("GET", "/healthz", headers={"traceparent": "junk", "X-Request-Id": "tp-bad"})
    line = daemon.wait_log(lambda l: l.get("request_id") == "tp-bad")
    assert "traceparent" not in line


def test_request_completed_log_fields(daemon):
    daemon.json("GET", "/healthz", headers={"X-Request-Id": "fields-1"})
    line = daemon.wait_log(lambda l: l.get("request_id") == "fields-1")
    assert line["event"] == "request.completed"
    assert line["method"] == "GET" and line["route"] == "/healthz" and line["status"] == 200
    assert line["level"] == "info" and isinstance(line["duration_ms"], float)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", line["ts"])


def test_non_json_body_is_415(daemon):
    status, _, data = daemon.request("POST", "/v1/_test/sleep", body="ops=1",
                                     headers={"Content-Type": "text/plain"})
    assert status == 415
    error_of(status, json.loads(data), "UnsupportedMediaType")


def test_bad_json_is_400_naming_the_body(daemon):
    status, _, data = daemon.request("POST", "/v1/_test/sleep", body="{\"ops\": ",
                                     headers={"Content-Type": "application/json"})
    body = json.loads(data)
    assert status == 400
    error_of(status, body, "ValidationError")
    assert body["error"]["details"]["field"] == "body"


def test_validation_error_names_the_field(daemon):
    status, _, body = daemon.json("POST", "/v1/_test/sleep", body={"ops": 1000})
    assert status == 400
    assert body["error"]["details"]["field"] == "ops"


def test_body_over_limit_is_413(fresh_daemon):
    d = fresh_daemon("--enable-fault-injection", "--max-body-bytes", "100")
    status, _, data = d.request("POST", "/v1/_test/sleep", body=json.dumps({"pad": "x" * 200}),
                                headers={"Content-Type": "application/json"})
    assert status == 413
    error_of(status, json.loads(data), "PayloadTooLarge")
    # Chunked uploads are cut off at the limit too.
    s = socket.create_connection((d.host, d.port))
    chunk = b'{"pad": "' + b"y" * 300 + b'"}'
    s.sendall(b"POST /v1/_test/sleep HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n" % len(chunk) + chunk +
              b"\r\n0\r\n\r\n")
    reply = s.recv(65536)
    s.close()
    assert STATUS_RE.match(reply).group(1) == b"413"
    # A body within the limit still works.
    status, _, _ = d.json("POST", "/v1/_test/sleep", body={"ops": 1})
    assert status == 200


def test_keep_alive_is_kept(daemon):
    conn = daemon.connection()
    for _ in range(3):
        status, _, _ = daemon.request("GET", "/healthz", conn=conn)
        assert status == 200
    # The same socket served all three.
    assert conn.sock is not None
    conn.close()


def test_fault_routes_hidden_without_flag(fresh_daemon):
    d = fresh_daemon()
    status, _, body = d.json("POST", "/v1/_test/sleep", body={"ops": 1})
    assert status == 404 and body["error"]["code"] == "RouteNotFound"


def test_auth_token_guards_v1(fresh_daemon, tmp_path):
    token = "s3cr3t-token-0123456789"
    p = tmp_path / "token"
    p.write_text(token + "\n")
    d = fresh_daemon("--enable-fault-injection", "--auth-token-file", str(p))
    status, _, body = d.json("POST", "/v1/_test/sleep", body={"ops": 1})
    assert status == 401 and body["error"]["code"] == "Unauthorized"
    status, _, _ = d.json("POST", "/v1/_test/sleep", body={"ops": 1},
                          headers={"Authorization": "Bearer wrong-token-0123456789"})
    assert status == 401
    status, _, _ = d.json("POST", "/v1/_test/sleep", body={"ops": 1},
                          headers={"Authorization": "Bearer " + token})
    assert status == 200
    # System endpoints stay open for probes.
    assert d.json("GET", "/healthz")[0] == 200
    assert token not in d.log_text()


def test_unix_socket_listen(fresh_daemon, tmp_path):
    path = str(tmp_path / "ttd.sock")
    d = fresh_daemon(listen="unix:" + path)
    assert d.address == "unix:" + path
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall(raw_request("GET", "/healthz", headers={"Connection": "close"}))
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    assert STATUS_RE.match(data).group(1) == b"200"
    assert data.endswith(b'{"status":"ok"}')
    d.stop()
    import os
    assert not os.path.exists(path)
