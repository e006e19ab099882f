# SPDX-License-Identifier: Apache-2.0
"""moto_server.py -- moto's server with DynamoDB's isolation, for the test peers.

Usage: python moto_server.py -H 127.0.0.1 -p PORT

`python -m moto.server` answers each request on its own thread, and moto's
DynamoDB backend takes no lock around a conditional write or a transaction:
two TransactWriteItems (or a transaction and a conditional PutItem) can both
pass their conditions before either applies. DynamoDB never allows that --
transactions are serializable with respect to each other and to single-item
writes, and a conditional write is atomic -- and the contention tests rely
on it (unique guards, leases, the job ledger). So this server keeps moto's
threads (many connections stay open at once, as they do against DynamoDB)
but runs the application under one lock: each request is handled whole,
body read and answer built, before the next one starts.
"""
import argparse
import os
import signal
import sys
import threading

from werkzeug.serving import run_simple
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app


class Serialized:
    """WSGI middleware: one request at a time through the wrapped app."""

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        captured = {}

        def capture(status, headers, exc_info=None):
            captured["args"] = (status, headers, exc_info)
            return lambda data: captured.setdefault("early", []).append(data)

        with self.lock:
            result = self.app(environ, capture)
            try:
                body = b"".join(captured.get("early", [])) + b"".join(result)
            finally:
                if hasattr(result, "close"):
                    result.close()
        status, headers, exc_info = captured["args"]
        start_response(status, headers, exc_info)
        return [body]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-H", "--host", default="127.0.0.1")
    ap.add_argument("-p", "--port", type=int, required=True)
    args = ap.parse_args()
    os.environ.setdefault("MOTO_PORT", str(args.port))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    app = DomainDispatcherApplication(create_backend_app)
    run_simple(args.host, args.port, Serialized(app), threaded=True)


if __name__ == "__main__":
    main()
