# SPDX-License-Identifier: Apache-2.0
"""The asyncio client: the surface of tabletheoryd.Client with coroutines, on asyncio
streams (standard library only) with a small pool of HTTP/1.1 keep-alive connections.

    async with tabletheoryd.aio.AsyncClient.from_env() as c:
        users = c.model("User")
        await users.create({"PK": "USER#1", "SK": "PROFILE", "nickname": "al"})
        async for u in users.query({"PK": "USER#1"}):
            ...
"""
import asyncio
import ssl as _ssl
import uuid
from urllib.parse import quote, urlsplit

from . import errors
from .client import (_NOT_APPLIED, DEFAULT_URL, Model, Page, Transaction, _answer_error,
                     _backoff_delay, _prepare)
from .expr import Update, _cond_json
from .ledger import Outcome, _q, default_owner
from .values import ModelTypes, decode

__all__ = ["AsyncClient", "AsyncModel", "AsyncTransaction", "AsyncJobs", "AsyncLease"]

_MAX_HEADER_LINE = 65536


class _NotSent(Exception):
    """The connection could not be made: the request never left."""


class _Broken(Exception):
    """The connection failed after the request may have been sent."""

    def __init__(self, cause, reused, stale):
        super().__init__(str(cause))
        self.cause = cause
        self.reused = reused
        self.stale = stale  # failed before any byte of an answer: the daemon closed it idle


class _Conn:
    __slots__ = ("reader", "writer")

    def __init__(self, reader, writer):
        self.reader = reader
        self.writer = writer

    def close(self):
        try:
            self.writer.close()
        except Exception:  # noqa: BLE001 -- the loop may already be closed
            pass


async def _read_response(reader):
    """(status, headers lower-cased, body bytes, keep_alive) of one HTTP/1.1 answer."""
    line = await reader.readline()
    if not line:
        raise ConnectionResetError("connection closed before an answer")
    parts = line.decode("latin-1").split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
        raise ValueError("not an HTTP/1.x answer: %r" % line[:80])
    status = int(parts[1])
    headers = {}
    while True:
        h = await reader.readline()
        if len(h) > _MAX_HEADER_LINE:
            raise ValueError("header line too long")
        if h in (b"\r\n", b"\n"):
            break
        if not h:
            raise ConnectionResetError("connection closed in the headers")
        name, _, value = h.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    conn_hdr = headers.get("connection", "").lower()
    keep_alive = parts[0] != "HTTP/1.0" and "close" not in conn_hdr
    if status in (204, 304) or 100 <= status < 200:
        return status, headers, b"", keep_alive
    if "chunked" in headers.get("transfer-encoding", "").lower():
        chunks = []
        while True:
            size_line = await reader.readline()
            size = int(size_line.split(b";", 1)[0].strip(), 16)
            if size == 0:
                while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                    pass
                break
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)
        return status, headers, b"".join(chunks), keep_alive
    if "content-length" in headers:
        n = int(headers["content-length"])
        return status, headers, (await reader.readexactly(n)) if n else b"", keep_alive
    return status, headers, await reader.read(), False


class _AsyncPool:
    """LIFO pool of idle keep-alive connections (at most maxsize kept)."""

    def __init__(self, url, timeout, maxsize=8):
        self.timeout = timeout
        self.maxsize = maxsize
        self._idle = []
        if url.startswith("unix:"):
            self._unix = url[len("unix:"):]
            self.base_path = ""
            self.host_header = "localhost"
            self._ssl = None
        else:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https"):
                raise ValueError("TABLETHEORYD_URL must be http://host:port or unix:/path")
            self._unix = None
            self._ssl = _ssl.create_default_context() if parts.scheme == "https" else None
            self._host = parts.hostname or "127.0.0.1"
            self._port = parts.port or (443 if self._ssl else 80)
            self.base_path = parts.path.rstrip("/")
            self.host_header = parts.netloc

    async def _new(self):
        if self._unix is not None:
            r, w = await asyncio.open_unix_connection(self._unix)
        else:
            r, w = await asyncio.open_connection(self._host, self._port, ssl=self._ssl,
                                                 limit=_MAX_HEADER_LINE * 2)
        return _Conn(r, w)

    def close(self):
        idle, self._idle = self._idle, []
        for c in idle:
            c.close()

    async def send(self, method, path, body, headers, timeout=None):
        t = self.timeout if timeout is None else timeout
        head = ["%s %s HTTP/1.1" % (method, self.base_path + path),
                "Host: " + self.host_header, "Connection: keep-alive",
                "Content-Length: %d" % (len(body) if body else 0)]
        for k, v in headers.items():
            if any(c in str(k) + str(v) for c in "\r\n\0"):
                raise ValueError("invalid header %r" % (k,))  # as http.client refuses it
            head.append("%s: %s" % (k, v))
        data = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (body or b"")
        reused = bool(self._idle)
        if reused:
            conn = self._idle.pop()
        else:
            try:
                conn = await asyncio.wait_for(self._new(), t)
            except (OSError, asyncio.TimeoutError) as e:
                raise _NotSent(e) from e
        try:
            conn.writer.write(data)
            await asyncio.wait_for(conn.writer.drain(), t)
            status, hdrs, payload, keep = await asyncio.wait_for(
                _read_response(conn.reader), t)
        except asyncio.CancelledError:
            conn.close()
            raise
        except (OSError, EOFError, ValueError, asyncio.TimeoutError,
                asyncio.LimitOverrunError) as e:
            conn.close()
            # A connection the daemon closed while it was idle fails before any byte of
            # an answer (never a timeout, which may mean the daemon is still working).
            stale = isinstance(e, (BrokenPipeError, ConnectionAbortedError,
                                   ConnectionResetError)) and not isinstance(
                                       e, asyncio.TimeoutError)
            raise _Broken(e, reused, stale) from e
        if keep and len(self._idle) < self.maxsize:
            self._idle.append(conn)
        else:
            conn.close()
        return status, hdrs, payload


class AsyncClient:
    """An asyncio connection to one tabletheoryd: the options, methods and errors of
    tabletheoryd.Client, each call a coroutine. Use it from one event loop."""

    def __init__(self, url=None, *, token=None, token_file=None, timeout=30.0, max_attempts=4,
                 backoff=(0.05, 2.0), pool_size=8):
        import os
        self.url = url or os.environ.get("TABLETHEORYD_URL") or DEFAULT_URL
        if token is None:
            token_file = token_file or os.environ.get("TABLETHEORYD_TOKEN_FILE")
            if token_file:
                with open(token_file, encoding="utf-8") as f:
                    token = f.read().strip()
        self._auth = "Bearer " + token if token else None
        self.timeout = timeout
        self.max_attempts = max(1, int(max_attempts))
        self.backoff = backoff
        self._pool = _AsyncPool(self.url, timeout, pool_size)
        self._models = {}
        self.jobs = AsyncJobs(self)

    @classmethod
    def from_env(cls, **kw):
        """A client configured from TABLETHEORYD_URL and TABLETHEORYD_TOKEN_FILE."""
        return cls(**kw)

    async def close(self):
        self._pool.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()

    # -- transport ---------------------------------------------------------------------

    async def request(self, method, path, body=None, *, query=None, headers=None,
                      idempotent=False, request_id=None, timeout=None):
        """As Client.request: (status, headers, parsed body), with the same retries."""
        rid, path, payload, hdrs = _prepare(self._auth, path, body, query, headers, request_id)
        attempt = 1
        stale_retry = True
        while True:
            try:
                status, rh, data = await self._pool.send(method, path, payload, hdrs, timeout)
            except _NotSent as e:
                err = errors.TransportError("cannot connect to %s: %s" % (self.url, e),
                                            request_id=rid)
                if attempt < self.max_attempts:
                    await self._sleep(attempt, None)
                    attempt += 1
                    continue
                raise err from e
            except _Broken as e:
                if e.reused and e.stale and stale_retry:
                    stale_retry = False
                    continue
                err = errors.TransportError("connection to %s failed: %s" % (self.url, e.cause),
                                            request_id=rid)
                if idempotent and attempt < self.max_attempts:
                    await self._sleep(attempt, None)
                    attempt += 1
                    continue
                raise err from e.cause
            if status < 300:
                return status, rh, (decode(data) if data else None)
            err = _answer_error(status, rh, data, rid)
            if err.retryable and attempt < self.max_attempts and (
                    idempotent or err.code in _NOT_APPLIED):
                await self._sleep(attempt, rh.get("retry-after"))
                attempt += 1
                continue
            raise err

    async def _sleep(self, attempt, retry_after):
        await asyncio.sleep(_backoff_delay(self.backoff, attempt, retry_after))

    # -- system and models -------------------------------------------------------------

    async def health(self):
        return (await self.request("GET", "/healthz", idempotent=True))[2]

    async def ready(self):
        """True when the daemon answers /readyz with 200."""
        try:
            await self.request("GET", "/readyz")
            return True
        except errors.TableTheoryError:
            return False

    async def models(self):
        """Every user model (normalized DMS documents)."""
        return (await self.request("GET", "/v1/models", idempotent=True))[2]["models"]

    async def register_model(self, doc, replace=False):
        """PUT a DMS model; True when it was new or replaced, False if identical."""
        status, _, _ = await self.request("PUT", "/v1/models/" + quote(doc["name"], safe=""),
                                          doc, query={"replace": "true" if replace else None},
                                          idempotent=True)
        self._models.pop(doc["name"], None)
        return status == 201

    def model(self, name):
        return AsyncModel(self, name)

    async def _load_types(self, name, request_id=None):
        t = self._models.get(name)
        if t is None:
            doc = (await self.request("GET", "/v1/models/" + quote(name, safe=""),
                                      idempotent=True, request_id=request_id))[2]
            t = self._models[name] = ModelTypes(doc)
        return t

    def _types(self, name, request_id=None):
        # The synchronous Model helpers read the cache; AsyncModel loads it first.
        return self._models[name]

    # -- transactions --------------------------------------------------------------------

    def transaction(self, client_token=None, retry_conflicts=False):
        return AsyncTransaction(self, client_token, retry_conflicts)

    async def transact_get(self, gets, request_id=None):
        """gets: [(model, key) or (model, key, select)]; items or None, in order."""
        body, names = [], []
        for g in gets:
            entry = {"model": g[0], "key": g[1]}
            if len(g) > 2 and g[2]:
                entry["select"] = list(g[2])
            body.append(entry)
            names.append(g[0])
        items = (await self.request("POST", "/v1/transactions/get", {"items": body},
                                    idempotent=True, request_id=request_id))[2]["items"]
        out = []
        for n, it in zip(names, items):
            out.append(None if it is None else (await self._load_types(n)).decode_item(it))
        return out

    async def with_faults(self, **spec):
        return (await self.request("POST", "/v1/_faults", spec))[2]

    async def clear_faults(self):
        await self.request("DELETE", "/v1/_faults")


class AsyncModel(Model):
    """Items of one model: the methods of Model, as coroutines (query and scan are
    async iterators)."""

    async def _ready(self, request_id=None):
        await self.client._load_types(self.name, request_id)

    @property
    def types(self):
        return self.client._models.get(self.name)

    async def definition(self):
        return (await self.client._load_types(self.name)).doc

    async def ensure_table(self):
        return (await self.client.request("PUT", self._base + "/table", idempotent=True))[0] == 201

    async def table(self):
        return (await self.client.request("GET", self._base + "/table", idempotent=True))[2]

    async def delete_table(self):
        await self.client.request("DELETE", self._base + "/table", idempotent=True)

    async def _item(self, method, path, body=None, **kw):
        r = (await self.client.request(method, path, body, **kw))[2]
        return self._decode(r)

    async def create(self, item, request_id=None):
        await self._ready(request_id)
        return await self._item("POST", self._base + "/items", item, request_id=request_id)

    async def put(self, item, *, if_match=None, if_none_match=False, request_id=None):
        await self._ready(request_id)
        headers = {}
        if if_none_match:
            headers["If-None-Match"] = "*"
        if if_match is not None:
            headers["If-Match"] = '"%d"' % int(if_match)
        return await self._item("PUT", self._key_path(item, None, request_id), item,
                                headers=headers, idempotent=not headers, request_id=request_id)

    async def get(self, key, sk=None, *, select=None, consistent=False, request_id=None):
        await self._ready(request_id)
        q = {"select": ",".join(select) if select else None,
             "consistent": "true" if consistent else None}
        return await self._item("GET", self._key_path(key, sk, request_id), query=q,
                                idempotent=True, request_id=request_id)

    async def find(self, key, sk=None, **kw):
        try:
            return await self.get(key, sk, **kw)
        except errors.ItemNotFound:
            return None

    async def patch(self, key, update=None, *, sk=None, condition=None, expected_version=None,
                    upsert=False, request_id=None, **ops):
        await self._ready(request_id)
        body = update.to_json() if isinstance(update, Update) else dict(update or {})
        body.update(ops)
        if condition is not None:
            body["condition"] = _cond_json(condition)
        if expected_version is not None:
            body["expected_version"] = expected_version
        if upsert:
            body["upsert"] = True
        return await self._item("PATCH", self._key_path(key, sk, request_id), body,
                                request_id=request_id)

    async def update_fields(self, item, fields=None, request_id=None):
        await self._ready(request_id)
        body = {"item": item}
        if fields is not None:
            body["fields"] = list(fields)
        return await self._item("PATCH", self._key_path(item, None, request_id), body,
                                request_id=request_id)

    async def delete(self, key, sk=None, *, expected_version=None, request_id=None):
        await self._ready(request_id)
        headers = {}
        if expected_version is not None:
            headers["If-Match"] = '"%d"' % int(expected_version)
        await self.client.request("DELETE", self._key_path(key, sk, request_id),
                                  headers=headers, request_id=request_id)

    # -- query and scan ------------------------------------------------------------------

    async def query_page(self, key, *, index=None, filter=None, select=None, limit=None,
                         order=None, consistent=False, cursor=None, request_id=None):
        body = self._read_body(filter, select, consistent, order, index)
        body["key"] = self._key_conds(key)
        return await self._apage("query", body, limit, cursor, request_id)

    async def scan_page(self, *, filter=None, select=None, limit=None, consistent=False,
                        segments=None, cursor=None, request_id=None):
        body = self._read_body(filter, select, consistent)
        if segments:
            body["segments"] = segments
        return await self._apage("scan", body, limit, cursor, request_id)

    async def _apage(self, op, body, limit, cursor, request_id):
        await self._ready(request_id)
        if limit is not None:
            body["limit"] = limit
        if cursor:
            body["cursor"] = cursor
        r = (await self.client.request("POST", self._base + "/" + op, body, idempotent=True,
                                       request_id=request_id))[2]
        return Page([self._decode(i) for i in r.get("items", [])], r.get("cursor"),
                    r.get("count"), r.get("scanned_count"))

    def query(self, key, *, limit=None, page_size=None, cursor=None, **kw):
        """Async iterator over every matching item, following cursors."""
        return self._aiterate(lambda c, n: self.query_page(key, cursor=c, limit=n, **kw),
                              limit, page_size, cursor)

    def scan(self, *, limit=None, page_size=None, cursor=None, **kw):
        return self._aiterate(lambda c, n: self.scan_page(cursor=c, limit=n, **kw),
                              limit, page_size, cursor)

    @staticmethod
    async def _aiterate(fetch, limit, page_size, cursor):
        left = limit
        while True:
            n = page_size
            if left is not None:
                n = left if n is None else min(n, left)
            page = await fetch(cursor, n)
            for item in page.items:
                yield item
            if left is not None:
                left -= len(page.items)
                if left <= 0:
                    return
            cursor = page.cursor
            if not cursor:
                return

    async def count(self, key=None, *, index=None, filter=None, consistent=False, segments=None,
                    request_id=None):
        total, cursor = 0, None
        while True:
            body = self._read_body(filter, None, consistent, None, index)
            body["count"] = True
            if key is not None:
                body["key"] = self._key_conds(key)
                op = "query"
            else:
                op = "scan"
                if segments:
                    body["segments"] = segments
            if cursor:
                body["cursor"] = cursor
            r = (await self.client.request("POST", self._base + "/" + op, body,
                                           idempotent=True, request_id=request_id))[2]
            total += r.get("count", 0)
            cursor = r.get("cursor")
            if not cursor:
                return total

    # -- batches -----------------------------------------------------------------------

    async def batch_get(self, keys, *, select=None, consistent=False, request_id=None):
        """(items found in the order of keys, missing keys); keys in any form get takes."""
        await self._ready(request_id)
        keys = [self._key_object(k, request_id) for k in keys]
        items, missing = [], []
        for i in range(0, len(keys), 10000):
            body = {"keys": keys[i:i + 10000]}
            if select is not None:
                body["select"] = list(select)
            if consistent:
                body["consistent"] = True
            r = (await self.client.request("POST", self._base + "/batch-get", body,
                                           idempotent=True, request_id=request_id))[2]
            items.extend(self._decode(it) for it in r["items"])
            missing.extend(r["missing"])
        return items, missing

    async def batch_write(self, put=(), delete=(), *, request_id=None):
        """Puts and deletes in batches; the number processed (see Model.batch_write)."""
        put, delete = list(put), list(delete)
        processed = 0
        for i in range(0, max(len(put), len(delete)), 10000):
            processed += await self._batch_write_chunk_async(
                put[i:i + 10000], delete[i:i + 10000], request_id)
        return processed

    async def _batch_write_chunk_async(self, put, delete, request_id):
        processed = 0
        attempt = 1
        while put or delete:
            try:
                r = (await self.client.request("POST", self._base + "/batch-write",
                                               {"put": put, "delete": delete}, idempotent=True,
                                               request_id=request_id))[2]
                return processed + r["processed"]
            except errors.BatchIncomplete as e:
                un = e.details.get("unprocessed") or {}
                processed += e.details.get("processed", 0)
                if attempt >= self.client.max_attempts or not un:
                    raise
                put = [put[i] for i in un.get("put", [])]
                delete = [delete[i] for i in un.get("delete", [])]
                await self.client._sleep(attempt, None)
                attempt += 1
        return processed


class AsyncTransaction(Transaction):
    """Transaction with `await tx.commit()`; the same builder methods."""

    def __init__(self, client, client_token=None, retry_conflicts=False):
        super().__init__(client, client_token or str(uuid.uuid4()), retry_conflicts)

    async def commit(self, request_id=None):
        body = {"client_token": self.client_token, "items": self.items}
        if self.retry_conflicts:
            body["retry_conflicts"] = True
        await self.client.request("POST", "/v1/transactions/write", body, idempotent=True,
                                  request_id=request_id)


class AsyncJobs:
    """client.jobs of AsyncClient: the methods of Jobs, as coroutines."""

    def __init__(self, client):
        self.client = client

    async def _r(self, method, path, body=None, **kw):
        return (await self.client.request(method, "/v1/jobs" + path, body, **kw))[2]

    async def ensure_table(self):
        return (await self.client.request("PUT", "/v1/jobs/table", idempotent=True))[0] == 201

    async def create(self, tenant_id, job_id=None, status=None, ttl_seconds=None,
                     request_id=None):
        body = {"tenant_id": tenant_id}
        for k, v in (("job_id", job_id), ("status", status), ("ttl_seconds", ttl_seconds)):
            if v is not None:
                body[k] = v
        return await self._r("POST", "", body, request_id=request_id)

    async def get(self, job_id, request_id=None):
        return await self._r("GET", "/" + _q(job_id), idempotent=True, request_id=request_id)

    def list(self, status=None, tenant_id=None, order=None, page_size=None, request_id=None):
        return self._pages("", "jobs", {"status": status, "tenant_id": tenant_id,
                                        "order": order, "limit": page_size}, request_id)

    async def _pages(self, path, member, query, request_id):
        cursor = None
        while True:
            page = (await self.client.request("GET", "/v1/jobs" + path,
                                              query=dict(query, cursor=cursor),
                                              idempotent=True, request_id=request_id))[2]
            for x in page[member]:
                yield x
            cursor = page.get("cursor")
            if not cursor:
                return

    async def transition(self, job_id, expected_version, from_, to, request_id=None):
        body = {"expected_version": expected_version, "to": to}
        if from_ is not None:
            body["from"] = from_
        return await self._r("POST", "/%s/transition" % _q(job_id), body, request_id=request_id)

    async def put_record(self, job_id, record_id, status, error=None, ttl_seconds=None,
                         request_id=None):
        body = {"status": status}
        if error is not None:
            body["error"] = error
        if ttl_seconds is not None:
            body["ttl_seconds"] = ttl_seconds
        return await self._r("PUT", "/%s/records/%s" % (_q(job_id), _q(record_id)), body,
                             idempotent=True, request_id=request_id)

    async def get_record(self, job_id, record_id, request_id=None):
        return await self._r("GET", "/%s/records/%s" % (_q(job_id), _q(record_id)),
                             idempotent=True, request_id=request_id)

    def records(self, job_id, status=None, order=None, page_size=None, request_id=None):
        return self._pages("/%s/records" % _q(job_id), "records",
                           {"status": status, "order": order, "limit": page_size}, request_id)

    async def acquire_lease(self, job_id, owner, duration_seconds=60, request_id=None):
        return await self._r("POST", "/%s/lease" % _q(job_id),
                             {"owner": owner, "duration_seconds": duration_seconds},
                             idempotent=True, request_id=request_id)

    async def refresh_lease(self, job_id, owner, duration_seconds=60, request_id=None):
        return await self._r("POST", "/%s/lease/refresh" % _q(job_id),
                             {"owner": owner, "duration_seconds": duration_seconds},
                             idempotent=True, request_id=request_id)

    async def release_lease(self, job_id, owner, request_id=None):
        await self.client.request("DELETE", "/v1/jobs/%s/lease" % _q(job_id),
                                  query={"owner": owner}, idempotent=True,
                                  request_id=request_id)

    def lease(self, job_id, owner=None, duration_seconds=60, refresh_every=None):
        """An async context manager holding the lease, refreshed by a task:

            async with client.jobs.lease("import-42") as lease:
                lease.check()
        """
        return AsyncLease(self, job_id, owner or default_owner(), duration_seconds,
                          refresh_every)

    async def work(self, job_id, fn, owner=None, duration_seconds=60, refresh_every=None):
        """Awaits fn(lease) (a coroutine function, or a plain one) while holding the lease."""
        async with self.lease(job_id, owner, duration_seconds, refresh_every) as lease:
            r = fn(lease)
            if asyncio.iscoroutine(r):
                r = await r
            return r

    async def begin_request(self, job_id, key, ttl_seconds=None, request_id=None):
        body = {} if ttl_seconds is None else {"ttl_seconds": ttl_seconds}
        return Outcome(await self._r("POST", "/%s/requests/%s" % (_q(job_id), _q(key)), body,
                                     request_id=request_id))

    async def complete_request(self, job_id, key, result=None, error=None, request_id=None):
        body = {}
        if result is not None:
            body["result"] = result
        if error is not None:
            body["error"] = error
        return Outcome(await self._r("POST", "/%s/requests/%s/complete" % (_q(job_id), _q(key)),
                                     body, request_id=request_id))


class AsyncLease:
    """A held lease (see AsyncJobs.lease); lost is set once a refresh was refused."""

    def __init__(self, jobs, job_id, owner, duration_seconds, refresh_every):
        self.jobs = jobs
        self.job_id = job_id
        self.owner = owner
        self.duration_seconds = duration_seconds
        self.refresh_every = refresh_every or max(duration_seconds / 3.0, 0.05)
        self.expires_at = None
        self.lost = asyncio.Event()
        self.error = None
        self._task = None

    async def __aenter__(self):
        r = await self.jobs.acquire_lease(self.job_id, self.owner, self.duration_seconds)
        self.expires_at = r.get("expires_at")
        self._task = asyncio.ensure_future(self._refresher())
        return self

    async def _refresher(self):
        while True:
            await asyncio.sleep(self.refresh_every)
            try:
                await self.refresh()
            except errors.LeaseNotOwned as e:
                self.error = e
                self.lost.set()
                return
            except errors.TableTheoryError as e:
                self.error = e  # transient: keep trying until the lease really is lost

    async def refresh(self):
        r = await self.jobs.refresh_lease(self.job_id, self.owner, self.duration_seconds)
        self.expires_at = r.get("expires_at")
        return r

    def check(self):
        """Raises LeaseNotOwned when the lease was lost: stop working on the job."""
        if self.lost.is_set():
            raise self.error

    async def __aexit__(self, *exc):
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        if not self.lost.is_set():
            try:
                await self.jobs.release_lease(self.job_id, self.owner)
            except errors.LeaseNotOwned:
                pass
        return False
