# SPDX-License-Identifier: Apache-2.0
"""The client: configuration, requests with retries and request ids, models and items,
query/scan iterators, batches and transactions."""
import contextvars
import http.client
import os
import random
import threading
import time
import uuid
from urllib.parse import quote, urlencode

from . import errors
from ._http import Broken, NotSent, Pool
from .expr import Update, _cond_json
from .values import ModelTypes, decode, encode, key_segment

DEFAULT_URL = "http://127.0.0.1:8737"
_request_id = contextvars.ContextVar("tabletheoryd_request_id", default=None)

# How a pooled connection that the daemon closed while it was idle fails (never a timeout,
# which may mean the daemon is still working on the request).
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
          ConnectionAbortedError)

# Codes that mean the daemon did not apply the request: any request may be resent.
_NOT_APPLIED = frozenset(("Throttled", "Draining"))


def _prepare(auth, path, body, query, headers, request_id):
    """What every try of one call sends: (request id, path with its query, body bytes or
    None, headers). Shared by Client and the asyncio client."""
    # A request id needs to be unique, not secret: no system call per request.
    rid = request_id or _request_id.get() or "%032x" % random.getrandbits(128)
    hdrs = {"X-Request-Id": rid}
    if auth:
        hdrs["Authorization"] = auth
    if headers:
        hdrs.update(headers)
    payload = None
    if body is not None:
        payload = encode(body).encode("utf-8")
        hdrs["Content-Type"] = "application/json"
    if query:
        q = {k: v for k, v in query.items() if v is not None}
        if q:
            path += "?" + urlencode(q, quote_via=quote)
    return rid, path, payload, hdrs


def _answer_error(status, rh, data, rid):
    """The error class of a non-2xx answer, from its envelope (None when it is no JSON)."""
    try:
        parsed = decode(data)
    except ValueError:
        parsed = None
    return errors.from_envelope(status, parsed, rh, rid)


def _backoff_delay(backoff, attempt, retry_after):
    """Full-jitter delay before try `attempt + 1`, at least the daemon's Retry-After
    (capped at 30 s)."""
    base, cap = backoff
    delay = random.uniform(0, min(cap, base * (2 ** (attempt - 1))))
    if retry_after:
        try:
            delay = max(delay, min(float(retry_after), 30.0))
        except ValueError:
            pass
    return delay


class request_id:  # noqa: N801 -- used as `with request_id("abc"):`
    """Context manager: every request made inside it (in this thread or task) carries
    this X-Request-Id, e.g. the id of the request your service is handling."""

    def __init__(self, rid):
        self.rid = rid
        self._token = None

    def __enter__(self):
        self._token = _request_id.set(self.rid)
        return self.rid

    def __exit__(self, *exc):
        _request_id.reset(self._token)


class Page:
    """One answer of query/scan: items, cursor (None at the end), counts."""

    def __init__(self, items, cursor, count, scanned_count):
        self.items = items
        self.cursor = cursor
        self.count = count
        self.scanned_count = scanned_count

    def __repr__(self):
        return "Page(%d items, cursor=%r)" % (len(self.items), self.cursor)


class Client:
    """A connection to one tabletheoryd. Thread-safe; share one per process.

    url          -- http://host:port or unix:/path (default $TABLETHEORYD_URL, then
                    http://127.0.0.1:8737)
    token        -- bearer token; default: the contents of $TABLETHEORYD_TOKEN_FILE
    timeout      -- seconds per HTTP exchange (connect, send, answer)
    max_attempts -- tries of a retryable failure (1 = no retries)
    backoff      -- (base, cap) seconds of the full-jitter exponential backoff
    pool_size    -- idle keep-alive connections kept
    """

    def __init__(self, url=None, *, token=None, token_file=None, timeout=30.0, max_attempts=4,
                 backoff=(0.05, 2.0), pool_size=8):
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
        self._pool = Pool(self.url, timeout, pool_size)
        self._models = {}
        self._models_lock = threading.Lock()
        from .ledger import Jobs
        self.jobs = Jobs(self)

    @classmethod
    def from_env(cls, **kw):
        """A client configured from TABLETHEORYD_URL and TABLETHEORYD_TOKEN_FILE."""
        return cls(**kw)

    def close(self):
        self._pool.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- transport ---------------------------------------------------------------------

    def request(self, method, path, body=None, *, query=None, headers=None, idempotent=False,
                request_id=None, timeout=None):
        """Sends one API call; returns (status, headers, parsed body). Raises the error
        class of the answer's code. Retryable failures are retried with backoff when the
        call is idempotent, and always when the daemon says it did not apply the request
        (Throttled, Draining, or a connection that could not be made)."""
        rid, path, payload, hdrs = _prepare(self._auth, path, body, query, headers, request_id)
        attempt = 1
        stale_retry = True
        while True:
            try:
                status, rh, data = self._pool.send(method, path, payload, hdrs, timeout)
            except NotSent as e:
                err = errors.TransportError("cannot connect to %s: %s" % (self.url, e),
                                            request_id=rid)
                if attempt < self.max_attempts:
                    self._sleep(attempt, None)
                    attempt += 1
                    continue
                raise err from e
            except Broken as e:
                # A pooled connection the daemon closed while idle fails at once: send
                # again on a new connection (once; the request never reached a handler).
                if e.reused and stale_retry and isinstance(e.cause, _STALE):
                    stale_retry = False
                    continue
                err = errors.TransportError("connection to %s failed: %s" % (self.url, e.cause),
                                            request_id=rid)
                if idempotent and attempt < self.max_attempts:
                    self._sleep(attempt, None)
                    attempt += 1
                    continue
                raise err from e.cause
            if status < 300:
                return status, rh, (decode(data) if data else None)
            err = _answer_error(status, rh, data, rid)
            if err.retryable and attempt < self.max_attempts and (
                    idempotent or err.code in _NOT_APPLIED):
                self._sleep(attempt, rh.get("retry-after"))
                attempt += 1
                continue
            raise err

    def _sleep(self, attempt, retry_after):
        time.sleep(_backoff_delay(self.backoff, attempt, retry_after))

    # -- system and models -------------------------------------------------------------

    def health(self):
        return self.request("GET", "/healthz", idempotent=True)[2]

    def ready(self):
        """True when the daemon answers /readyz with 200."""
        try:
            self.request("GET", "/readyz", idempotent=False)
            return True
        except errors.TableTheoryError:
            return False

    def models(self):
        """Every registered model (normalized DMS documents)."""
        return self.request("GET", "/v1/models", idempotent=True)[2]["models"]

    def register_model(self, doc, replace=False, allow_unsafe=False):
        """PUT a DMS model; returns True when it was new or replaced, False if identical.
        allow_unsafe=True (with replace) lets through a replace that stored items do not
        survive (UnsafeModelChange otherwise; docs/models.md "Replacing a model")."""
        status, _, _ = self.request("PUT", "/v1/models/" + quote(doc["name"], safe=""), doc,
                                    query={"replace": "true" if replace else None,
                                           "allow_unsafe": "true" if allow_unsafe else None},
                                    idempotent=True)
        self._models.pop(doc["name"], None)
        return status == 201

    def model(self, name):
        """The handle of one model (its definition is fetched once, when first needed)."""
        return Model(self, name)

    def _types(self, name, request_id=None):
        t = self._models.get(name)
        if t is None:
            doc = self.request("GET", "/v1/models/" + quote(name, safe=""), idempotent=True,
                               request_id=request_id)[2]
            t = ModelTypes(doc)
            with self._models_lock:
                self._models[name] = t
        return t

    # -- transactions --------------------------------------------------------------------

    def transaction(self, client_token=None, retry_conflicts=False):
        """A write transaction to fill and commit(); see Transaction."""
        return Transaction(self, client_token, retry_conflicts)

    def transact_get(self, gets, request_id=None):
        """gets: [(model, key) or (model, key, select)]; returns items or None, in order,
        all read at one point in time."""
        body, names = [], []
        for g in gets:
            model, key = g[0], g[1]
            entry = {"model": model, "key": key}
            if len(g) > 2 and g[2]:
                entry["select"] = list(g[2])
            body.append(entry)
            names.append(model)
        items = self.request("POST", "/v1/transactions/get", {"items": body}, idempotent=True,
                             request_id=request_id)[2]["items"]
        return [None if it is None else self._types(n).decode_item(it)
                for n, it in zip(names, items)]

    def with_faults(self, **spec):
        """Test helper: POST /v1/_faults (daemon started with --enable-fault-injection)."""
        return self.request("POST", "/v1/_faults", spec)[2]

    def clear_faults(self):
        self.request("DELETE", "/v1/_faults")


class Model:
    """Items of one model. Keys are given as a dict ({"PK": ..., "SK": ...}), as
    (pk, sk) arguments, or as an item (its key attributes are used)."""

    def __init__(self, client, name):
        self.client = client
        self.name = name
        self._base = "/v1/models/" + quote(name, safe="")

    @property
    def types(self):
        return self.client._types(self.name)

    def definition(self):
        return self.types.doc

    def _key_path(self, key, sk=None, request_id=None):
        t = self.client._types(self.name, request_id)
        if isinstance(key, dict):
            pk_v = key[t.pk]
            sk_v = key.get(t.sk) if t.sk else None
        else:
            pk_v, sk_v = key, sk
        path = self._base + "/items/" + key_segment(pk_v)
        if t.sk is not None:
            if sk_v is None:
                raise ValueError("model %s needs a sort key (%s)" % (self.name, t.sk))
            path += "/" + key_segment(sk_v)
        return path

    def _key_object(self, key, request_id=None):
        """A key in any form that get accepts -- a dict (a key or a whole item: its key
        attributes are used), a (pk, sk) tuple or list, or the partition key value of a
        model without a sort key -- as the key object that batch-get takes."""
        t = self.client._types(self.name, request_id)
        if isinstance(key, dict):
            if t.pk not in key:
                raise ValueError("the key of %s needs %s" % (self.name, t.pk))
            pk_v, sk_v = key[t.pk], key.get(t.sk) if t.sk else None
        elif isinstance(key, (tuple, list)):
            if len(key) != (2 if t.sk else 1):
                raise ValueError("a key of %s is (%s)" % (self.name, ", ".join(
                    n for n in (t.pk, t.sk) if n)))
            pk_v, sk_v = key[0], key[1] if t.sk else None
        else:
            pk_v, sk_v = key, None
        out = {t.pk: pk_v}
        if t.sk is not None:
            if sk_v is None:
                raise ValueError("model %s needs a sort key (%s)" % (self.name, t.sk))
            out[t.sk] = sk_v
        return out

    def _decode(self, item):
        return self.types.decode_item(item)

    # -- tables ------------------------------------------------------------------------

    def ensure_table(self):
        """Creates the table (and its indexes, TTL) if missing; True when it was created."""
        return self.client.request("PUT", self._base + "/table", idempotent=True)[0] == 201

    def table(self):
        return self.client.request("GET", self._base + "/table", idempotent=True)[2]

    def delete_table(self):
        self.client.request("DELETE", self._base + "/table", idempotent=True)

    # -- items -------------------------------------------------------------------------

    def create(self, item, request_id=None):
        """Creates the item; ConditionFailed if its key exists. Returns the stored item
        (with created_at/updated_at/version filled)."""
        self.client._types(self.name, request_id)  # load it first: decoding needs it
        return self._decode(self.client.request("POST", self._base + "/items", item,
                                                request_id=request_id)[2])

    def put(self, item, *, if_match=None, if_none_match=False, request_id=None):
        """Creates or replaces the whole item. if_none_match=True: only create;
        if_match=<version>: only replace that version (the new one is version + 1)."""
        headers = {}
        if if_none_match:
            headers["If-None-Match"] = "*"
        if if_match is not None:
            headers["If-Match"] = '"%d"' % int(if_match)
        # An unconditional put is idempotent (the same whole item again); a conditional
        # one may have been applied already, so it is not resent after an ambiguous error.
        return self._decode(self.client.request(
            "PUT", self._key_path(item, None, request_id), item, headers=headers,
            idempotent=not headers, request_id=request_id)[2])

    def get(self, key, sk=None, *, select=None, consistent=False, request_id=None):
        """The item; raises ItemNotFound when absent."""
        q = {"select": ",".join(select) if select else None,
             "consistent": "true" if consistent else None}
        return self._decode(self.client.request("GET", self._key_path(key, sk, request_id), query=q,
                                                idempotent=True, request_id=request_id)[2])

    def find(self, key, sk=None, **kw):
        """Like get, but None when the item is absent."""
        try:
            return self.get(key, sk, **kw)
        except errors.ItemNotFound:
            return None

    def patch(self, key, update=None, *, sk=None, condition=None, expected_version=None,
              upsert=False, request_id=None, **ops):
        """Applies an Update (or set=/remove=/add=/... keyword dicts); returns the new
        item. ItemNotFound when absent (unless upsert), VersionConflict, ConditionFailed."""
        body = update.to_json() if isinstance(update, Update) else dict(update or {})
        for op, v in ops.items():
            body[op] = v
        if condition is not None:
            body["condition"] = _cond_json(condition)
        if expected_version is not None:
            body["expected_version"] = expected_version
        if upsert:
            body["upsert"] = True
        return self._decode(self.client.request("PATCH", self._key_path(key, sk, request_id), body,
                                                request_id=request_id)[2])

    def update_fields(self, item, fields=None, request_id=None):
        """The TableTheory form: writes `fields` (default: every non-key attribute present)
        from item; a `version` in item is the expected version."""
        body = {"item": item}
        if fields is not None:
            body["fields"] = list(fields)
        return self._decode(self.client.request("PATCH", self._key_path(item, None, request_id), body,
                                                request_id=request_id)[2])

    def delete(self, key, sk=None, *, expected_version=None, request_id=None):
        """Deletes the item; ItemNotFound when absent, VersionConflict on a version
        mismatch when expected_version is given."""
        headers = {}
        if expected_version is not None:
            headers["If-Match"] = '"%d"' % int(expected_version)
        self.client.request("DELETE", self._key_path(key, sk, request_id), headers=headers,
                            request_id=request_id)

    # -- query and scan ------------------------------------------------------------------

    @staticmethod
    def _key_conds(key):
        if isinstance(key, dict) and "attr" not in key:
            return [{"attr": k, "op": "=", "value": v} for k, v in key.items()]
        return _cond_json(key if isinstance(key, (list, tuple)) else [key])

    def _read_body(self, filter, select, consistent, order=None, index=None):
        body = {}
        if index is not None:
            body["index"] = index
        if filter is not None:
            body["filter"] = _cond_json(filter)
        if select is not None:
            body["select"] = list(select)
        if consistent:
            body["consistent"] = True
        if order is not None:
            body["order"] = order
        return body

    def query_page(self, key, *, index=None, filter=None, select=None, limit=None, order=None,
                   consistent=False, cursor=None, request_id=None):
        """One page of a query. key: {"PK": v} (equalities) or conditions
        ([attr("PK").eq(v), attr("SK").begins_with("A")])."""
        body = self._read_body(filter, select, consistent, order, index)
        body["key"] = self._key_conds(key)
        return self._page("query", body, limit, cursor, request_id)

    def scan_page(self, *, filter=None, select=None, limit=None, consistent=False,
                  segments=None, cursor=None, request_id=None):
        body = self._read_body(filter, select, consistent)
        if segments:
            body["segments"] = segments
        return self._page("scan", body, limit, cursor, request_id)

    def _page(self, op, body, limit, cursor, request_id):
        if limit is not None:
            body["limit"] = limit
        if cursor:
            body["cursor"] = cursor
        r = self.client.request("POST", self._base + "/" + op, body, idempotent=True,
                                request_id=request_id)[2]
        return Page([self._decode(i) for i in r.get("items", [])], r.get("cursor"),
                    r.get("count"), r.get("scanned_count"))

    def query(self, key, *, limit=None, page_size=None, cursor=None, **kw):
        """Iterates over every matching item, following cursors; stops after `limit`
        items when given. page_size is the items asked for per request."""
        return self._iterate(lambda c, n: self.query_page(key, cursor=c, limit=n, **kw),
                             limit, page_size, cursor)

    def scan(self, *, limit=None, page_size=None, cursor=None, **kw):
        """Iterates over every item of the model (scan), following cursors."""
        return self._iterate(lambda c, n: self.scan_page(cursor=c, limit=n, **kw),
                             limit, page_size, cursor)

    @staticmethod
    def _iterate(fetch, limit, page_size, cursor):
        left = limit
        while True:
            n = page_size
            if left is not None:
                n = left if n is None else min(n, left)
            page = fetch(cursor, n)
            for item in page.items:
                yield item
            if left is not None:
                left -= len(page.items)
                if left <= 0:
                    return
            cursor = page.cursor
            if not cursor:
                return

    def count(self, key=None, *, index=None, filter=None, consistent=False, segments=None,
              request_id=None):
        """The number of matching items: a query when key is given, else a scan;
        follows cursors until the data ends."""
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
            r = self.client.request("POST", self._base + "/" + op, body, idempotent=True,
                                    request_id=request_id)[2]
            total += r.get("count", 0)
            cursor = r.get("cursor")
            if not cursor:
                return total

    # -- batches -----------------------------------------------------------------------

    def batch_get(self, keys, *, select=None, consistent=False, request_id=None):
        """Returns (items found in the order of keys, missing keys). A key takes any form
        get accepts: a dict (a key, or an item whose key attributes are used), a (pk, sk)
        tuple, or the partition key value of a model without a sort key."""
        items, missing = [], []
        keys = [self._key_object(k, request_id) for k in keys]
        for i in range(0, len(keys), 10000):
            body = {"keys": keys[i:i + 10000]}
            if select is not None:
                body["select"] = list(select)
            if consistent:
                body["consistent"] = True
            r = self.client.request("POST", self._base + "/batch-get", body, idempotent=True,
                                    request_id=request_id)[2]
            items.extend(self._decode(it) for it in r["items"])
            missing.extend(r["missing"])
        return items, missing

    def batch_write(self, put=(), delete=(), *, request_id=None):
        """Puts and deletes (whole items / keys) in batches; returns the number processed.
        BatchIncomplete is handled by resending exactly the unprocessed requests (batch
        puts and deletes may be repeated); raised when attempts run out."""
        put, delete = list(put), list(delete)
        processed = 0
        for i in range(0, max(len(put), len(delete)), 10000):
            processed += self._batch_write_chunk(put[i:i + 10000], delete[i:i + 10000],
                                                 request_id)
        return processed

    def _batch_write_chunk(self, put, delete, request_id):
        processed = 0
        attempt = 1
        while put or delete:
            try:
                r = self.client.request("POST", self._base + "/batch-write",
                                        {"put": put, "delete": delete}, idempotent=True,
                                        request_id=request_id)[2]
                return processed + r["processed"]
            except errors.BatchIncomplete as e:
                un = e.details.get("unprocessed") or {}
                processed += e.details.get("processed", 0)
                if attempt >= self.client.max_attempts or not un:
                    raise
                put = [put[i] for i in un.get("put", [])]
                delete = [delete[i] for i in un.get("delete", [])]
                self.client._sleep(attempt, None)
                attempt += 1
        return processed


class Transaction:
    """Collects up to 100 writes and commits them all or none:

        tx = client.transaction()
        tx.create("Order", {...}); tx.update("User", key, Update().add("n", 1))
        tx.commit()

    A client_token (generated when not given) makes the commit idempotent for 10 minutes,
    so the client may resend it after an ambiguous failure."""

    def __init__(self, client, client_token=None, retry_conflicts=False):
        self.client = client
        self.client_token = client_token or str(uuid.uuid4())
        self.retry_conflicts = retry_conflicts
        self.items = []

    def _add(self, entry, condition, expected_version):
        if condition is not None:
            entry["condition"] = _cond_json(condition)
        if expected_version is not None:
            entry["expected_version"] = expected_version
        self.items.append(entry)
        return self

    def create(self, model, item, condition=None):
        return self._add({"op": "create", "model": model, "item": item}, condition, None)

    def put(self, model, item, condition=None, expected_version=None):
        return self._add({"op": "put", "model": model, "item": item}, condition,
                         expected_version)

    def update(self, model, key, update=None, condition=None, expected_version=None,
               upsert=False, **ops):
        entry = {"op": "update", "model": model, "key": key}
        entry.update(update.to_json() if isinstance(update, Update) else (update or {}))
        entry.update(ops)
        if upsert:
            entry["upsert"] = True
        return self._add(entry, condition, expected_version)

    def delete(self, model, key, condition=None, expected_version=None):
        return self._add({"op": "delete", "model": model, "key": key}, condition,
                         expected_version)

    def check(self, model, key, condition=None, expected_version=None):
        return self._add({"op": "check", "model": model, "key": key}, condition,
                         expected_version)

    def commit(self, request_id=None):
        """Writes everything; raises TransactionCanceled (see .reasons) otherwise."""
        body = {"client_token": self.client_token, "items": self.items}
        if self.retry_conflicts:
            body["retry_conflicts"] = True
        self.client.request("POST", "/v1/transactions/write", body, idempotent=True,
                            request_id=request_id)
