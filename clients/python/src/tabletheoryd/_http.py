# SPDX-License-Identifier: Apache-2.0
"""A small pool of persistent http.client connections (TCP or unix socket): the daemon
is built for many small requests over a few keep-alive connections."""
import http.client
import socket
import threading
from urllib.parse import urlsplit


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        try:
            s.connect(self._path)
        except BaseException:
            s.close()
            raise
        self.sock = s


class NotSent(Exception):
    """The request certainly did not reach the daemon (connect failed)."""


class Broken(Exception):
    """The connection failed after the request may have been sent."""

    def __init__(self, cause, reused):
        super().__init__(str(cause))
        self.cause = cause
        self.reused = reused


class Pool:
    """Thread-safe LIFO pool; at most maxsize idle connections are kept."""

    def __init__(self, url, timeout, maxsize=8):
        self.timeout = timeout
        self.maxsize = maxsize
        self._idle = []
        self._lock = threading.Lock()
        if url.startswith("unix:"):
            self._unix = url[len("unix:"):]
            self.base_path = ""
            self.host_header = "localhost"
        else:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https"):
                raise ValueError("TABLETHEORYD_URL must be http://host:port or unix:/path")
            self._unix = None
            self._https = parts.scheme == "https"
            self._host = parts.hostname or "127.0.0.1"
            self._port = parts.port or (443 if self._https else 80)
            self.base_path = parts.path.rstrip("/")
            self.host_header = parts.netloc

    def _new(self):
        if self._unix is not None:
            return _UnixConnection(self._unix, self.timeout)
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        return cls(self._host, self._port, timeout=self.timeout)

    def _get(self):
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        return self._new(), False

    def _put(self, conn):
        with self._lock:
            if len(self._idle) < self.maxsize:
                self._idle.append(conn)
                return
        conn.close()

    def close(self):
        with self._lock:
            idle, self._idle = self._idle, []
        for c in idle:
            c.close()

    def send(self, method, path, body, headers, timeout=None):
        """One exchange. Returns (status, headers lower-cased, body bytes). Raises NotSent
        or Broken (with .reused telling whether a pooled connection was used)."""
        conn, reused = self._get()
        t = self.timeout if timeout is None else timeout
        if conn.timeout != t:
            conn.timeout = t
            if conn.sock is not None:
                conn.sock.settimeout(t)
        try:
            if conn.sock is None:
                try:
                    conn.connect()
                except OSError as e:
                    conn.close()
                    raise NotSent(e) from e
            conn.request(method, self.base_path + path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            raise Broken(e, reused) from e
        hdrs = {k.lower(): v for k, v in resp.getheaders()}
        if resp.will_close:
            conn.close()
        else:
            self._put(conn)
        return resp.status, hdrs, data
