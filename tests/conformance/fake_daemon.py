#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""fake_daemon.py -- a small in-memory stand-in for tabletheoryd, used only by the runner's
self-test (test_runner_selftest.py). It serves the subset of docs/api.md the TableTheory scenarios
need: tables, items (create/put/get/patch/delete, ?format=dynamodb), query/scan/count with
cursors, batch get/write and transactions. It is deliberately simple (one lock, no backend
semantics beyond what the scenarios observe) and is NOT a reference implementation.

Run as a program it mimics the daemon's command line, logs the daemon.ready JSON line on
stderr and exits 0 on SIGTERM (FAKE_EXIT_STATUS overrides the status, for the self-test).
"""
import argparse
import base64
import datetime
import json
import os
import signal
import socket
import sys
import threading
import urllib.parse
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as runner  # noqa: E402  (the runner's model loader and number helpers)

LIFECYCLE_ROLES = ("created_at", "updated_at", "version")


def check_deploy_authority(item, query):
    """?deploy_authority=true: only the refusals the scenarios observe (no evidence,
    disagreeing evidence, confidence other than high), not the daemon's full check."""
    if query.get("deploy_authority") != "true" or not isinstance(item, dict):
        return
    if "provenance" not in item and "confidence" not in item:
        return
    evidence = (item.get("provenance") or {}).get("evidence") or []
    sigs = {tuple(e.get(k) for k in ("kind", "source", "ref", "digest")) for e in evidence}
    if len(sigs) != 1 or (item.get("confidence") or {}).get("level") != "high":
        raise HttpError(422, "RejectedDeployAuthorityEvidence",
                        "the evidence cannot authorize a deploy", "provenance")


class HttpError(Exception):
    def __init__(self, status, code, message, field=None, details=None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = dict(details or {})
        if field:
            self.details["field"] = field


def _num_out(text):
    d = Decimal(text)
    if not runner._double_exact(d):
        return text
    if d == d.to_integral_value():
        return int(d)
    return float(d)


def _empty(v):
    return v is None or v == "" or v is False or v == 0 and not isinstance(v, bool) \
        or (isinstance(v, (list, dict)) and len(v) == 0)


def infer_av(v):
    if v is None:
        return {"NULL": True}
    if isinstance(v, bool):
        return {"BOOL": v}
    if runner._is_number(v):
        return {"N": runner._decimal_text(v)}
    if isinstance(v, str):
        return {"S": v}
    if isinstance(v, list):
        return {"L": [infer_av(x) for x in v]}
    if isinstance(v, dict):
        return {"M": {k: infer_av(x) for k, x in v.items()}}
    raise HttpError(400, "ValidationError", "unsupported value")


def av_plain(av):
    (t, v), = av.items()
    if t == "N":
        return _num_out(v)
    if t == "NULL":
        return None
    if t == "NS":
        return [_num_out(x) for x in v]
    if t == "L":
        return [av_plain(x) for x in v]
    if t == "M":
        return {k: av_plain(x) for k, x in v.items()}
    return v


class FakeModel:
    def __init__(self, m):
        self.m = m
        self.name = m.name
        self.table = m.table
        self.roles = {}
        for name, spec in m.attrs.items():
            for r in spec.get("roles") or []:
                self.roles[r] = name
        self.indexes = {ix["name"]: ix for ix in m.doc.get("indexes") or []}
        wp = m.doc.get("write_policy") or {}
        self.write_once = wp.get("mode") == "write_once"
        self.protected = set(wp.get("protected_attributes") or [])
        # Like the daemon without --kms-key-id: encrypted models fail closed.
        self.encrypted = any(spec.get("encryption") for spec in m.attrs.values())

    def check_policy(self, kind, field=None, body=None):
        """The daemon's DMS write policies (src/orm/policy.c), before anything is written."""
        if kind in ("put", "update", "delete") and self.write_once:
            raise HttpError(409, "ImmutableModelMutation", "the model is write_once", field)
        if kind == "put" and self.protected:
            raise HttpError(409, "ProtectedFieldMutation", "a put could overwrite", field)
        if kind == "update":
            prot = self.protected | set(body.get("protected_attributes") or [])
            touched = list(body.get("fields") or []) + [
                p for op in ("set", "set_if_not_exists", "add", "delete", "append", "prepend")
                for p in (body.get(op) or {})] + list(body.get("remove") or [])
            for p in touched:
                if p.split(".")[0].split("[")[0] in prot:
                    raise HttpError(409, "ProtectedFieldMutation", "protected attribute", field)

    def spec(self, attr, field):
        s = self.m.attrs.get(attr)
        if s is None:
            if (self.m.doc.get("tags") or {}).get("additional_attributes"):
                return {"attribute": attr}
            raise HttpError(400, "ValidationError", "unknown attribute for this model", field)
        return s

    def lifecycle(self, attr):
        return attr in [self.roles.get(r) for r in LIFECYCLE_ROLES]

    def to_av(self, attr, v, field):
        s = self.spec(attr, field)
        t = s.get("type")
        if t is None:
            return infer_av(v)
        if v is None:
            return {"NULL": True}
        if t == "S":
            if isinstance(v, str):
                return {"S": v}
            if s.get("json"):
                return {"S": json.dumps(v, sort_keys=True, separators=(",", ":"),
                                        cls=runner._DecimalEncoder)}
            raise HttpError(400, "ValidationError", "expected a string", field)
        if t == "N":
            if runner._to_decimal(v) is None:
                raise HttpError(400, "ValidationError", "expected a number", field)
            return {"N": runner._decimal_text(v)}
        if t in ("SS", "NS", "BS"):
            if not isinstance(v, list):
                raise HttpError(400, "ValidationError", "expected an array", field)
            if not v:
                return {"NULL": True}
            if t == "NS":
                return {"NS": [runner._decimal_text(x) for x in v]}
            return {t: list(v)}
        if t == "BOOL":
            return {"BOOL": bool(v)}
        if t == "NULL":
            return {"NULL": True}
        if t == "B":
            return {"B": v}
        return infer_av(v)

    def from_av(self, attr, av):
        s = self.m.attrs.get(attr) or {}
        t = s.get("type")
        (at, v), = av.items()
        if at == "NULL" and t in ("SS", "NS", "BS"):
            return []
        if at == "S" and t == "S" and s.get("json"):
            try:
                return json.loads(v, parse_float=Decimal)
            except ValueError:
                return v
        return av_plain(av)

    def logical(self, stored, select=None):
        return {k: self.from_av(k, v) for k, v in stored.items()
                if select is None or k in select}

    def key_tuple(self, obj, field="key"):
        key = []
        for name, t in ((self.m.pk, self.m.pk_type), (self.m.sk, self.m.sk_type)):
            if name is None:
                continue
            if name not in obj:
                raise HttpError(400, "ValidationError", "missing key attribute", field)
            v = obj[name]
            key.append(av_plain(v) if isinstance(v, dict) and len(v) == 1
                       and next(iter(v)) in runner.AV_TYPES else v)
        return tuple(str(k) for k in key)

    def key_from_path(self, parts):
        names = self.m.key_names()
        if len(parts) != len(names):
            raise HttpError(400, "ValidationError", "wrong number of key parts", "key")
        return {n: urllib.parse.unquote(p) for n, p in zip(names, parts)}

    def build(self, item, now, field="item"):
        if not isinstance(item, dict):
            raise HttpError(400, "ValidationError", "item must be an object", field)
        self.key_tuple(item, field)
        out = {}
        for k, v in item.items():
            s = self.spec(k, "%s.%s" % (field, k))
            if self.lifecycle(k):
                continue
            if s.get("omit_empty") and _empty(v):
                continue
            out[k] = self.to_av(k, v, "%s.%s" % (field, k))
        if "created_at" in self.roles:
            out[self.roles["created_at"]] = {"S": now}
        if "updated_at" in self.roles:
            out[self.roles["updated_at"]] = {"S": now}
        if "version" in self.roles:
            out[self.roles["version"]] = {"N": "0"}
        return out


def _cmp_key(v):
    d = runner._to_decimal(v) if runner._is_number(v) else None
    return (0, d, "") if d is not None else (1, Decimal(0), str(v))


def _compare(a, op, b):
    if runner._is_number(a) or runner._is_number(b):
        a, b = runner._to_decimal(a), runner._to_decimal(b)
        if a is None or b is None:
            return False
    try:
        return {"=": a == b, "<>": a != b, "<": a < b, "<=": a <= b, ">": a > b,
                ">=": a >= b}[op]
    except TypeError:
        return False


def evaluate(cond, item):
    """docs/api.md conditions on a logical item."""
    if cond is None:
        return True
    if isinstance(cond, list):
        return all(evaluate(c, item) for c in cond)
    if "and" in cond:
        return all(evaluate(c, item) for c in cond["and"])
    if "or" in cond:
        return any(evaluate(c, item) for c in cond["or"])
    if "not" in cond:
        return not evaluate(cond["not"], item)
    attr = cond.get("attr")
    present = attr in item
    v = item.get(attr)
    if "size" in cond:
        return present and _compare(len(v), cond["size"], cond["value"])
    op = cond.get("op")
    if op == "exists":
        return present
    if op == "not_exists":
        return not present
    if not present:
        return False
    if op in ("=", "<>", "<", "<=", ">", ">="):
        return _compare(v, op, cond["value"])
    if op == "between":
        lo, hi = cond["value"]
        return _compare(v, ">=", lo) and _compare(v, "<=", hi)
    if op == "in":
        return any(_compare(v, "=", x) for x in cond["value"])
    if op == "begins_with":
        return isinstance(v, str) and v.startswith(cond["value"])
    if op == "contains":
        return cond["value"] in v if isinstance(v, (str, list)) else False
    if op == "not_contains":
        return not (cond["value"] in v if isinstance(v, (str, list)) else False)
    raise HttpError(400, "ValidationError", "unknown operator", "condition")


class FakeState:
    def __init__(self, models_dir):
        reg = runner.ModelRegistry(models_dir)
        self.models = {n: FakeModel(m) for n, m in reg.models.items()}
        self.tables = {m.table: {} for m in self.models.values()}
        self.lock = threading.Lock()
        self.tamper = None  # callable(method, path, status, body) -> (status, body)
        self.requests = []  # (method, path, body) of every request, for the self-test
        self.clock = None  # --test-clock: the frozen time (a datetime); None = the real clock

    def now(self):
        t = self.clock or datetime.datetime.now(datetime.timezone.utc)
        return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def test_clock(self, method, body):
        """GET and POST /v1/_test/clock, as the daemon serves them under --test-clock."""
        if method == "POST":
            ms = body.get("advance_ms") if isinstance(body, dict) else None
            if not isinstance(ms, int) or isinstance(ms, bool) or ms < 0:
                raise HttpError(400, "ValidationError", "advance_ms must be an integer >= 0",
                                "advance_ms")
            self.clock += datetime.timedelta(milliseconds=ms)
        ns = int(self.clock.timestamp()) * 1000000000 + self.clock.microsecond * 1000
        return 200, {"now_ns": ns, "now_s": ns // 1000000000}

    def model(self, name):
        m = self.models.get(name)
        if m is None:
            raise HttpError(404, "ModelNotFound", "no such model")
        return m

    def table(self, m):
        t = self.tables.get(m.table)
        if t is None:
            raise HttpError(404, "TableNotFound", "the model's table does not exist")
        return t

    # -- dispatch ---------------------------------------------------------------------------

    def handle(self, method, path, query, body):
        parts = [p for p in path.split("/") if p != ""]
        if parts[:1] != ["v1"]:
            if path == "/healthz":
                return 200, {"status": "ok"}
            raise HttpError(404, "RouteNotFound", "no route matches this path")
        rest = parts[1:]
        if rest == ["_test", "clock"] and self.clock is not None and method in ("GET", "POST"):
            return self.test_clock(method, body)
        if rest[:1] == ["transactions"] and len(rest) == 2 and method == "POST":
            return self.tx_get(body) if rest[1] == "get" else self.tx_write(body)
        if rest[:1] != ["models"] or len(rest) < 3:
            raise HttpError(404, "RouteNotFound", "no route matches this path")
        m = self.model(urllib.parse.unquote(rest[1]))
        what = rest[2]
        if what == "table" and len(rest) == 3:
            return self.table_op(method, m)
        if m.encrypted and not (what == "items" and method == "DELETE"):
            raise HttpError(501, "EncryptionNotConfigured", "no KMS key is configured")
        if what == "items":
            if len(rest) == 3 and method == "POST":
                return self.create(m, body, query)
            key = m.key_from_path(rest[3:])
            return {"GET": self.get, "PUT": self.put, "PATCH": self.patch,
                    "DELETE": self.delete}[method](m, key, query, body)
        if what in ("query", "scan") and method == "POST":
            return self.read(m, what, body)
        if what == "batch-get" and method == "POST":
            return self.batch_get(m, body)
        if what == "batch-write" and method == "POST":
            return self.batch_write(m, body)
        raise HttpError(404, "RouteNotFound", "no route matches this path")

    def table_op(self, method, m):
        if method == "DELETE":
            if m.table not in self.tables:
                raise HttpError(404, "TableNotFound", "the model's table does not exist")
            del self.tables[m.table]
            return 204, None
        if method == "PUT":
            if m.table in self.tables:
                return 200, {"table": m.table, "status": "ACTIVE"}
            self.tables[m.table] = {}
            return 201, {"table": m.table, "status": "ACTIVE"}
        raise HttpError(405, "MethodNotAllowed", "method not allowed")

    # -- items ------------------------------------------------------------------------------

    def create(self, m, body, query):
        check_deploy_authority(body, query)
        t = self.table(m)
        stored = m.build(body, self.now())
        k = m.key_tuple(body, "item")
        if k in t:
            raise HttpError(409, "ConditionFailed", "an item with this key exists")
        t[k] = stored
        return 201, m.logical(stored)

    def get(self, m, key, query, body):
        t = self.table(m)
        stored = t.get(m.key_tuple(key))
        if stored is None:
            raise HttpError(404, "ItemNotFound", "no item has this key")
        if query.get("format") == "dynamodb":
            return 200, stored
        return 200, m.logical(stored)

    def put(self, m, key, query, body):
        m.check_policy("put")
        check_deploy_authority(body, query)
        t = self.table(m)
        stored = m.build(body, self.now())
        k = m.key_tuple(key)
        status = 200 if k in t else 201
        t[k] = stored
        return status, m.logical(stored)

    def delete(self, m, key, query, body):
        m.check_policy("delete")
        t = self.table(m)
        k = m.key_tuple(key)
        if k not in t:
            raise HttpError(404, "ItemNotFound", "no item has this key")
        del t[k]
        return 204, None

    def apply_update(self, m, stored, body, field, now, operator_lifecycle_check=True):
        """Returns the new stored item; raises HttpError."""
        new = dict(stored)
        keys = set(m.m.key_names())
        if "item" in body or "fields" in body:
            item = body.get("item") or {}
            fields = body.get("fields")
            if fields is None:
                fields = [k for k in item if k not in keys and not m.lifecycle(k)]
            for f in fields:
                if f in keys or m.lifecycle(f):
                    raise HttpError(400, "ValidationError", "cannot set this attribute",
                                    "%s.fields" % field)
                s = m.spec(f, "%s.item.%s" % (field, f))
                v = item.get(f)
                if (f not in item or _empty(v)) and s.get("omit_empty"):
                    new.pop(f, None)
                elif f in item:
                    new[f] = m.to_av(f, v, "%s.item.%s" % (field, f))
        else:
            for f, v in (body.get("set") or {}).items():
                if f in keys or m.lifecycle(f):
                    raise HttpError(400, "ValidationError", "cannot set this attribute",
                                    "%s.set.%s" % (field, f))
                s = m.spec(f, "%s.set.%s" % (field, f))
                if s.get("omit_empty") and _empty(v):
                    new.pop(f, None)
                else:
                    new[f] = m.to_av(f, v, "%s.set.%s" % (field, f))
            for f in body.get("remove") or []:
                new.pop(f, None)
        if "updated_at" in m.roles:
            new[m.roles["updated_at"]] = {"S": now}
        if "version" in m.roles:
            cur = int(Decimal(stored.get(m.roles["version"], {"N": "0"})["N"]))
            new[m.roles["version"]] = {"N": str(cur + 1)}
        return new

    def expected_version(self, m, body):
        if "version" not in m.roles:
            return None
        if body.get("expected_version") is not None:
            return body["expected_version"]
        item = body.get("item")
        if isinstance(item, dict) and item.get(m.roles["version"]) is not None:
            return item[m.roles["version"]]
        return None

    def version_ok(self, m, stored, expected):
        if expected is None:
            return True
        cur = stored.get(m.roles["version"], {"N": "0"})["N"]
        return Decimal(cur) == runner._to_decimal(expected)

    def patch(self, m, key, query, body):
        m.check_policy("update", body=body)
        t = self.table(m)
        k = m.key_tuple(key)
        stored = t.get(k)
        if stored is None:
            raise HttpError(404, "ItemNotFound", "no item has this key")
        if not self.version_ok(m, stored, self.expected_version(m, body)):
            raise HttpError(409, "VersionConflict", "the item's version is not the expected one")
        if not evaluate(body.get("condition"), m.logical(stored)):
            raise HttpError(409, "ConditionFailed", "the condition is false")
        t[k] = self.apply_update(m, stored, body, "body", self.now())
        return 200, m.logical(t[k])

    # -- query / scan -----------------------------------------------------------------------

    def read(self, m, kind, body):
        t = self.table(m)
        index = body.get("index")
        ix = None
        if index:
            ix = m.indexes.get(index)
            if ix is None:
                raise HttpError(400, "ValidationError", "no such index", "index")
            if ix.get("type", "GSI") == "GSI" and body.get("consistent"):
                raise HttpError(400, "ValidationError",
                                "a consistent read is not possible on a GSI", "consistent")
        pk = ix["partition"]["attribute"] if ix else m.m.pk
        sk = (ix.get("sort") or {}).get("attribute") if ix else m.m.sk
        rows = []
        for stored in t.values():
            item = m.logical(stored)
            if ix and (pk not in item or (sk and sk not in item)):
                continue
            rows.append((stored, item))
        if kind == "query":
            conds = body.get("key") or []
            if not conds or conds[0].get("attr") != pk or conds[0].get("op") != "=":
                raise HttpError(400, "ValidationError", "key needs the partition equality", "key")
            for c in conds[1:]:
                if c.get("attr") != sk:
                    raise HttpError(400, "ValidationError", "not the sort key", "key")
            rows = [r for r in rows if all(evaluate(c, r[1]) for c in conds)]
        table_keys = m.m.key_names()
        rows.sort(key=lambda r: ([_cmp_key(r[1].get(sk))] if sk else [])
                  + [_cmp_key(r[1][k]) for k in table_keys])
        if body.get("order") == "desc":
            rows.reverse()
        key_attrs = sorted(set(table_keys + ([pk] + ([sk] if sk else []) if ix else [])))
        if body.get("cursor"):
            try:
                cur = json.loads(base64.urlsafe_b64decode(body["cursor"]))
                last = {k: av_plain(v) for k, v in cur["lastKey"].items()}
            except (ValueError, KeyError, TypeError):
                raise HttpError(400, "InvalidCursor", "the cursor does not decode", "cursor")
            for i, r in enumerate(rows):
                if all(str(r[1].get(k)) == str(last.get(k)) for k in key_attrs):
                    rows = rows[i + 1:]
                    break
        scanned = len(rows)
        rows = [r for r in rows if evaluate(body.get("filter"), r[1])]
        limit = body.get("limit")
        more = False
        if limit is not None and len(rows) > limit:
            rows, more = rows[:limit], True
        cursor = None
        if more:
            last = rows[-1][0]
            doc = {"lastKey": {k: last[k] for k in key_attrs}}
            if ix:
                doc["index"] = index
            if body.get("order"):
                doc["sort"] = body["order"].upper()
            cursor = base64.urlsafe_b64encode(
                json.dumps(doc, separators=(",", ":")).encode()).decode()
        if body.get("count"):
            return 200, {"count": len(rows), "scanned_count": scanned, "cursor": cursor}
        items = []
        for stored, item in rows:
            if ix:
                proj = ix.get("projection") or {"type": "ALL"}
                if proj.get("type") == "KEYS_ONLY":
                    item = {k: v for k, v in item.items() if k in key_attrs}
                elif proj.get("type") == "INCLUDE":
                    keep = set(key_attrs) | set(proj.get("fields") or [])
                    item = {k: v for k, v in item.items() if k in keep}
            if body.get("select"):
                item = {k: v for k, v in item.items() if k in body["select"]}
            items.append(item)
        return 200, {"items": items, "count": len(items), "scanned_count": scanned,
                     "cursor": cursor}

    # -- batches ----------------------------------------------------------------------------

    def batch_get(self, m, body):
        t = self.table(m)
        items, missing = [], []
        for key in body.get("keys") or []:
            stored = t.get(m.key_tuple(key))
            if stored is None:
                missing.append(key)
            else:
                items.append(m.logical(stored, body.get("select")))
        return 200, {"items": items, "missing": missing}

    def batch_write(self, m, body):
        if body.get("put"):
            m.check_policy("put", "put")
        if body.get("delete"):
            m.check_policy("delete", "delete")
        t = self.table(m)
        now = self.now()
        puts = [(m.key_tuple(p, "put"), m.build(p, now, "put")) for p in body.get("put") or []]
        dels = [m.key_tuple(k, "delete") for k in body.get("delete") or []]
        for k, stored in puts:
            t[k] = stored
        for k in dels:
            t.pop(k, None)
        return 200, {"processed": len(puts) + len(dels)}

    # -- transactions -----------------------------------------------------------------------

    def tx_get(self, body):
        entries = body.get("items") or []
        if len(entries) > 100:
            raise HttpError(400, "ValidationError", "at most 100 items", "items")
        out = []
        for e in entries:
            m = self.model(e.get("model"))
            stored = self.table(m).get(m.key_tuple(e.get("key") or {}))
            out.append(None if stored is None else m.logical(stored, e.get("select")))
        return 200, {"items": out}

    def tx_write(self, body):
        entries = body.get("items") or []
        if len(entries) > 100:
            raise HttpError(400, "ValidationError", "at most 100 items", "items")
        now = self.now()
        writes, reasons, failed = [], [], False
        for i, e in enumerate(entries):
            m = self.model(e.get("model"))
            t = self.table(m)
            op = e.get("op")
            field = "items[%d]" % i
            m.check_policy(op, field, e)
            src = e.get("item") if op in ("create", "put") else e.get("key")
            if src is None:
                raise HttpError(400, "ValidationError", "item or key missing", field)
            k = m.key_tuple(src, field)
            stored = t.get(k)
            current = m.logical(stored) if stored else {}
            reason = "None"
            new = None
            if op in ("create", "put"):
                new = m.build(e["item"], now, field + ".item")
                if op == "create" and stored is not None:
                    reason = "ConditionalCheckFailed"
            elif op == "update":
                new = self.apply_update(m, stored or {k2: m.to_av(k2, v, field)
                                                      for k2, v in e["key"].items()},
                                        e, field, now)
            elif op not in ("check", "delete"):
                raise HttpError(400, "ValidationError", "unknown op", field + ".op")
            if reason == "None" and stored is not None and op != "create" and \
                    not self.version_ok(m, stored, self.expected_version(m, e)):
                reason = "VersionConflict"
            if reason == "None" and not evaluate(e.get("condition"), current):
                reason = "ConditionalCheckFailed"
            if reason != "None":
                failed = True
            reasons.append({"index": i, "code": reason})
            writes.append((t, k, op, new))
        if failed:
            raise HttpError(409, "TransactionCanceled", "the transaction was canceled",
                            details={"reasons": reasons})
        for t, k, op, new in writes:
            if op == "delete":
                t.pop(k, None)
            elif new is not None:
                t[k] = new
        return 200, {"ok": True}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        # Headers and body go out in two writes; without this, Nagle plus delayed ACK
        # costs 40 ms per request.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, fmt, *args):  # quiet
        pass

    def _serve(self):
        state = self.server.state
        u = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(u.query))
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw, parse_float=Decimal) if raw else {}
            state.requests.append((self.command, self.path, body))
            with state.lock:
                status, out = state.handle(self.command, u.path, query, body)
        except HttpError as e:
            status, out = e.status, {"error": {"code": e.code, "message": e.message,
                                               "retryable": False, "details": e.details},
                                     "request_id": "fake"}
        except ValueError:
            status, out = 400, {"error": {"code": "ValidationError", "message": "bad JSON",
                                          "retryable": False, "details": {"field": "body"}},
                                "request_id": "fake"}
        if state.tamper is not None:
            status, out = state.tamper(self.command, self.path, status, out)
        data = b"" if out is None else json.dumps(out, cls=runner._DecimalEncoder).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve


class FakeDaemon:
    """In-process fake: `with FakeDaemon(models_dir) as f: f.url`."""

    def __init__(self, models_dir, host="127.0.0.1", port=0, test_clock=False):
        self.state = FakeState(models_dir)
        if test_clock:
            self.state.clock = datetime.datetime.now(datetime.timezone.utc)
        self.server = ThreadingHTTPServer((host, port), _Handler)
        self.server.daemon_threads = True
        self.server.state = self.state
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--listen", default="127.0.0.1:0")
    p.add_argument("--models", required=True)
    p.add_argument("--allow-table-delete", action="store_true")
    p.add_argument("--enable-fault-injection", action="store_true")
    p.add_argument("--test-clock", action="store_true")
    args = p.parse_args(argv)
    host, _, port = args.listen.rpartition(":")
    fake = FakeDaemon(args.models, host, int(port), test_clock=args.test_clock)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    with fake:
        sys.stderr.write(json.dumps({"event": "daemon.ready", "listen": "127.0.0.1:%d"
                                     % fake.server.server_address[1]}) + "\n")
        sys.stderr.flush()
        while not stop.wait(0.1):
            pass
    return int(os.environ.get("FAKE_EXIT_STATUS", "0"))


if __name__ == "__main__":
    sys.exit(main())
