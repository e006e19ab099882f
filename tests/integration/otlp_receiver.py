# SPDX-License-Identifier: Apache-2.0
"""otlp_receiver.py -- a small OTLP/HTTP collector for the trace tests: it
listens on a free loopback port, keeps the raw body of every POST to
/v1/traces, and decodes it with the official opentelemetry-proto
definitions, as its Content-Type says: application/x-protobuf (the
daemon's default) with ParseFromString, application/json with
json_format.Parse. OTLP/JSON writes trace and span ids as hex, where
protobuf's JSON mapping expects base64 for bytes fields: ids are converted
before json_format.Parse, as the OTLP specification tells receivers to."""
import base64
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def _no_unknown_fields(msg):
    """Fails on a field number the official definitions do not have."""
    try:
        from google.protobuf import unknown_fields  # protobuf >= 4.22
        unknown = len(unknown_fields.UnknownFieldSet(msg))
    except ImportError:  # older protobuf: the message's own accessor
        unknown = len(msg.UnknownFields())
    assert not unknown, "unknown protobuf fields"
    for fd, value in msg.ListFields():
        if fd.type == fd.TYPE_MESSAGE:
            for v in (value if fd.label == fd.LABEL_REPEATED else [value]):
                _no_unknown_fields(v)


def _hex_ids_to_base64(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ID_FIELDS and isinstance(v, str):
                node[k] = base64.b64encode(bytes.fromhex(v)).decode()
            else:
                _hex_ids_to_base64(v)
    elif isinstance(node, list):
        for v in node:
            _hex_ids_to_base64(v)


def decode(body, content_type="application/json"):
    """An OTLP body as an ExportTraceServiceRequest. JSON ignores no field
    (an unknown one fails the test); protobuf must leave no unknown field
    either."""
    if content_type.split(";")[0].strip() == "application/x-protobuf":
        req = ExportTraceServiceRequest()
        req.ParseFromString(body)
        _no_unknown_fields(req)
        return req
    tree = json.loads(body)
    _hex_ids_to_base64(tree)
    return json_format.Parse(json.dumps(tree), ExportTraceServiceRequest())


class _Server(ThreadingHTTPServer):
    # May bind beside a socket of reserve_port() holding the same port.
    allow_reuse_port = True


def reserve_port():
    """A socket bound to a free loopback port and not listening: a
    connection to the port is refused, as from a collector that is down,
    and no other socket (another test's outgoing connection) can take the
    port until a Receiver(port=...) listens on it beside this socket."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    s.bind(("127.0.0.1", 0))
    return s


class Receiver:
    """mode: "ok" (200), "fail" (500), "slow" (answers after `delay` s),
    "drop" (200, keeps nothing: the bench's sink). `port` 0 picks a free
    one."""

    def __init__(self, mode="ok", delay=5.0, port=0):
        self.mode = mode
        self.delay = delay
        self.bodies = []
        self.headers = []
        self.posts = 0
        self.lock = threading.Lock()
        self.closing = threading.Event()  # a slow answer ends when the receiver closes
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 (http.server's name)
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n)
                with outer.lock:
                    outer.posts += 1
                    if outer.mode != "drop":
                        outer.bodies.append(body)
                        outer.headers.append(dict(self.headers))
                if outer.mode == "slow":
                    outer.closing.wait(outer.delay)
                status = 500 if outer.mode == "fail" else 200
                out = b"{}"
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out)
                except OSError:
                    pass

            def log_message(self, *args):
                pass

        self.server = _Server(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = "http://127.0.0.1:%d/v1/traces" % self.port
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()

    def raw(self):
        with self.lock:
            return b"".join(self.bodies)

    def spans(self):
        """Every span received so far, as (span, resource attributes dict)."""
        with self.lock:
            bodies = list(self.bodies)
            types = [h.get("Content-Type", "application/json") for h in self.headers]
        out = []
        for body, ctype in zip(bodies, types):
            req = decode(body, ctype)
            for rs in req.resource_spans:
                res = {a.key: attr_value(a.value) for a in rs.resource.attributes}
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        out.append((s, res))
        return out

    def wait_spans(self, predicate, timeout=30.0):
        """Waits until predicate(list of spans) is true; returns the spans."""
        deadline = time.time() + timeout
        while True:
            spans = [s for s, _ in self.spans()]
            if predicate(spans):
                return spans
            if time.time() > deadline:
                raise AssertionError("spans never matched: %s" % [
                    (s.name, s.span_id.hex(), s.parent_span_id.hex()) for s in spans])
            time.sleep(0.02)


def attr_value(v):
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [attr_value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


def attrs(span):
    return {a.key: attr_value(a.value) for a in span.attributes}
