#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""run.py -- runs the TableTheory contract scenarios against tabletheoryd's HTTP API.

Usage:
  python3 tests/conformance/run.py [--daemon PATH | --url URL] [--scenarios DIR]
                                   [--models DIR] [-k SUBSTRING] [-v]

Each scenario is first translated completely (every step into its HTTP request and every
`expect` key into a check); anything the runner or the HTTP API cannot express makes the scenario
SKIP with the reason. Then the tables of the models it uses are recreated and the steps run.
One line per scenario (PASS/FAIL/SKIP), then `N passed, N failed, N skipped`; exit 1 if any
failed, 2 on a usage or start-up error. See docs/conformance.md.

Standard library only, plus PyYAML for the fixtures.
"""
import argparse
import base64
import binascii
import http.client
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
from decimal import Decimal, InvalidOperation

try:
    import yaml
except ImportError:  # pragma: no cover - depends on the machine
    sys.stderr.write("run.py needs PyYAML: install the Debian package python3-yaml "
                     "(or `pip install pyyaml`)\n")
    sys.exit(2)

# What this daemon build can do. A scenario whose requires_capabilities are not all listed
# here is skipped. Edit as the daemon grows (encryption.deterministic_interop needs
# TableTheory's deterministic test provider, whose key derivation is not in the fixtures:
# see docs/conformance.md).
CAPABILITIES = [
    "crud",
    "query.basic",
    "scan.basic",
    "count.native",
    "get.optional",
    "transact_get",
    "transact.write",
    "batch.get",
    "batch.write",
    "type.matrix",
    "number.precision.exact",
    "error.version_conflict",
    # DMS write policies (write_once, protected_attributes) and the release-state
    # transition, which is one transaction of an update and a create.
    "release_state.write_policy",
    "release_state.transactional_transition",
    # The deploy-authority check of provenance/confidence, asked for per write
    # (?deploy_authority=true) as TableTheory's drivers call the helper: see
    # DEPLOY_AUTHORITY_MODELS.
    "release_state.provenance_confidence",
    # Encrypted attributes fail closed: the runner's daemon has no --kms-key-id.
    "encryption.fail_closed",
]

# dynalite implements neither TransactWriteItems nor TransactGetItems (docs/design.md,
# known pitfalls): against it, the transaction scenarios are skipped; they run
# on memory and moto. The release-state transition is one such transaction.
if os.environ.get("TT_PEER") == "dynalite":
    CAPABILITIES = [c for c in CAPABILITIES if not c.startswith("transact")
                    and c != "release_state.transactional_transition"]

# TableTheory's release-state check (ValidateDeployAuthorityMetadata) is a library helper
# that its Go and TypeScript contract drivers call themselves, on create and save of the
# deploy-authoritative "actual" model when the item carries provenance or confidence
# (validateReleaseStateMetadataIfPresent). The daemon's equivalent is the per-write opt-in
# ?deploy_authority=true, which the runner sends in the same cases.
DEPLOY_AUTHORITY_MODELS = ("ReleaseStateActual",)


def deploy_authority_query(model, item):
    if model.name in DEPLOY_AUTHORITY_MODELS and isinstance(item, dict) and (
            "provenance" in item or "confidence" in item):
        return {"deploy_authority": "true"}
    return None


# DMS versions of the model files we load (tests/data/dms/v0.2/models).
SUPPORTED_DMS_VERSIONS = ("0.2",)

# How a transact_write `update` action with `set` is sent: "operator" -> {"op": "update",
# "key", "set": {...}} (docs/api.md operator form); "fields" -> the TableTheory form
# {"op": "update", "fields": [...], "item": {key + set}}.
TRANSACT_UPDATE_FORM = "operator"

# Interop scenarios (seed_runtime): "seed" = we are the seeding runtime (recreate the table,
# run seed_steps then read_steps); "read" = run only read_steps against data another runtime
# already wrote; "skip" = skip them.
DEFAULT_INTEROP_MODE = "seed"

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

HTTP_TIMEOUT = 60.0
AV_TYPES = ("S", "N", "B", "BOOL", "NULL", "L", "M", "SS", "NS", "BS")
SET_TYPES = ("SS", "NS", "BS")


# --------------------------------------------------------------------------------------------
# Outcomes


class Unsupported(Exception):
    """The runner or the HTTP API cannot express this: the scenario is skipped."""


class StepFailure(Exception):
    """An expectation did not hold, or the fixture is malformed: the scenario fails."""


class ApiError:
    """A non-2xx answer, with the TableTheory error codes it stands for."""

    def __init__(self, status, code, message, body, tt_codes):
        self.status = status
        self.code = code
        self.message = message
        self.body = body
        self.tt_codes = set(tt_codes)

    def describe(self):
        codes = ", ".join(sorted(self.tt_codes)) or "no TableTheory code"
        return "%d %s (%s): %s" % (self.status, self.code, codes, self.message)


# --------------------------------------------------------------------------------------------
# YAML: the JSON-compatible subset. Timestamps stay strings (DMS forbids implicit timestamps).


class _FixtureLoader(yaml.SafeLoader):
    pass


_FixtureLoader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_yaml(path):
    with open(path, "r", encoding="utf-8") as f:
        return yaml.load(f, Loader=_FixtureLoader)  # noqa: S506 - SafeLoader subclass


# --------------------------------------------------------------------------------------------
# Error mapping (docs/conformance.md has the table)

# Daemon code -> TableTheory codes it satisfies. Besides this table, a daemon code `X`
# always satisfies `ErrX` (so a daemon that grows ImmutableModelMutation, ProtectedFieldMutation,
# EncryptionNotConfigured... is mapped without editing the runner).
ERROR_MAP = {
    "ConditionFailed": {"ErrConditionFailed"},
    # VersionConflict is the specific form of a failed condition; the fixtures accept it
    # in place of ErrConditionFailed (FORMAT.md section 4).
    "VersionConflict": {"ErrVersionConflict", "ErrConditionFailed"},
    "ItemNotFound": {"ErrItemNotFound"},
    # Requests refused before they are sent: consistent read on a GSI, > 100 transaction
    # items (ErrInvalidOperator); lifecycle fields in a transactional update (ErrInvalidModel).
    "ValidationError": {"ErrInvalidOperator", "ErrInvalidModel", "ErrMissingPrimaryKey",
                        "ErrInvalidTag", "ErrEncryptedFieldNotQueryable"},
    "InvalidCursor": {"ErrInvalidOperator"},
}

# Per op additions. TableTheory's update is a write conditioned on the item existing (and
# on the version); it reports a missing item as a failed condition, the daemon as 404.
OP_ERROR_MAP = {
    "update": {"ItemNotFound": {"ErrConditionFailed"}},
}

# TransactionCanceled reasons -> TableTheory codes.
REASON_MAP = {
    "ConditionalCheckFailed": {"ErrConditionFailed"},
    "ConditionFailed": {"ErrConditionFailed"},
    "VersionConflict": {"ErrVersionConflict", "ErrConditionFailed"},
}


def tt_codes_for(op, status, body):
    err = body.get("error") if isinstance(body, dict) else None
    code = err.get("code") if isinstance(err, dict) else None
    codes = set()
    if not code:
        return None, codes
    codes |= ERROR_MAP.get(code, set())
    codes |= OP_ERROR_MAP.get(op, {}).get(code, set())
    codes.add("Err" + code)
    if code == "TransactionCanceled":
        details = err.get("details") or {}
        for reason in details.get("reasons") or []:
            rcode = reason.get("code") if isinstance(reason, dict) else None
            codes |= REASON_MAP.get(rcode, set())
            if rcode and rcode != "None":
                codes.add("Err" + rcode)
    return code, codes


# --------------------------------------------------------------------------------------------
# Models


class Model:
    def __init__(self, doc):
        self.doc = doc
        self.name = doc["name"]
        self.table = (doc.get("table") or {}).get("name")
        keys = doc.get("keys") or {}
        self.pk = keys["partition"]["attribute"]
        self.pk_type = keys["partition"].get("type", "S")
        sort = keys.get("sort")
        self.sk = sort["attribute"] if sort else None
        self.sk_type = sort.get("type", "S") if sort else None
        self.attrs = {}
        for a in doc.get("attributes") or []:
            self.attrs[a["attribute"]] = a

    def attr_type(self, name):
        a = self.attrs.get(name)
        if a is None:
            return None
        if a.get("json") and a.get("type") == "S":
            return None  # a JSON document stored as a string: compare the document
        return a.get("type")

    def key_names(self):
        return [self.pk] + ([self.sk] if self.sk else [])

    def key_of(self, obj, where):
        """The key attributes of obj (a key or a whole item)."""
        if not isinstance(obj, dict):
            raise StepFailure("%s: a key must be a map" % where)
        key = {}
        for name in self.key_names():
            if name not in obj:
                raise StepFailure("%s: key attribute %s missing for model %s"
                                  % (where, name, self.name))
            key[name] = obj[name]
        return key

    def key_path(self, obj, where):
        """`/v1/models/{m}/items/{key}` path for obj."""
        key = self.key_of(obj, where)
        parts = [_key_segment(key[self.pk], self.pk_type)]
        if self.sk:
            parts.append(_key_segment(key[self.sk], self.sk_type))
        return "/v1/models/%s/items/%s" % (_q(self.name), "/".join(parts))


def _q(text):
    return urllib.parse.quote(str(text), safe="")


def _key_segment(value, typ):
    if typ == "N":
        text = _decimal_text(value)
    elif typ == "B":
        raw = _b64decode(value)
        if raw is None:
            raise StepFailure("binary key value is not base64")
        text = base64.urlsafe_b64encode(raw).decode()
    else:
        text = value if isinstance(value, str) else json.dumps(value)
    return _q(text)


class ModelRegistry:
    def __init__(self, models_dir):
        self.models = {}
        self.versions = set()
        self.errors = []
        if models_dir and os.path.isdir(models_dir):
            for fn in sorted(os.listdir(models_dir)):
                if not fn.endswith((".yml", ".yaml", ".json")):
                    continue
                path = os.path.join(models_dir, fn)
                try:
                    doc = load_yaml(path)
                    self.versions.add(str(doc.get("dms_version")))
                    for m in doc.get("models") or []:
                        self.models[m["name"]] = Model(m)
                except Exception as e:  # noqa: BLE001 - report any broken file
                    self.errors.append("%s: %s" % (path, e))

    def get(self, name, client=None):
        if name in self.models:
            return self.models[name]
        if client is not None:
            status, body = client.call("GET", "/v1/models/%s" % _q(name))
            if status == 200 and isinstance(body, dict):
                doc = body.get("model", body)
                try:
                    self.models[name] = Model(doc)
                    return self.models[name]
                except (KeyError, TypeError):
                    pass
        raise StepFailure("model %s is in neither the models dir nor the daemon" % name)


# --------------------------------------------------------------------------------------------
# HTTP


class _DecimalEncoder(json.JSONEncoder):
    def default(self, o):
        if isinstance(o, Decimal):
            return float(o) if _double_exact(o) else str(o)
        return super().default(o)


class Client:
    def __init__(self, url, token=None, verbose=False):
        u = urllib.parse.urlsplit(url)
        if u.scheme != "http" or not u.hostname:
            raise ValueError("URL must look like http://127.0.0.1:8737")
        self.host = u.hostname
        self.port = u.port or 80
        self.prefix = u.path.rstrip("/")
        self.token = token
        self.verbose = verbose
        self.conn = None
        self.test_clock = None  # whether GET /v1/_test/clock answers; None = not asked yet

    def _connect(self):
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=HTTP_TIMEOUT)
        return self.conn

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def call(self, method, path, body=None, query=None):
        """Returns (status, parsed JSON body or None). Numbers are parsed exactly (Decimal)."""
        if query:
            path += "?" + urllib.parse.urlencode(query)
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body, cls=_DecimalEncoder).encode()
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        last = None
        for attempt in range(2):
            try:
                conn = self._connect()
                conn.request(method, self.prefix + path, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
                if resp.getheader("Connection", "").lower() == "close":
                    self.close()
                break
            except (OSError, http.client.HTTPException) as e:
                self.close()
                last = e
                if attempt == 1:
                    raise StepFailure("%s %s: connection failed: %s" % (method, path, e)) from e
        else:  # pragma: no cover
            raise StepFailure(str(last))
        parsed = None
        if raw:
            try:
                parsed = json.loads(raw, parse_float=Decimal)
            except ValueError:
                parsed = {"_non_json": raw[:200].decode("utf-8", "replace")}
        if self.verbose:
            sys.stderr.write("  %s %s -> %d %s\n" % (method, path, resp.status,
                                                     raw[:300].decode("utf-8", "replace")))
        return resp.status, parsed


# --------------------------------------------------------------------------------------------
# Values


def _b64decode(text):
    if not isinstance(text, str):
        return None
    t = text.strip()
    t += "=" * (-len(t) % 4)
    try:
        if "-" in t or "_" in t:
            return base64.urlsafe_b64decode(t)
        return base64.b64decode(t, validate=True)
    except (binascii.Error, ValueError):
        return None


def _to_decimal(v):
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return Decimal(v)
    if isinstance(v, float):
        return Decimal(repr(v))
    if isinstance(v, Decimal):
        return v
    if isinstance(v, str):
        try:
            d = Decimal(v.strip())
        except InvalidOperation:
            return None
        return d if d.is_finite() else None
    return None


def _decimal_text(v):
    d = _to_decimal(v)
    if d is None:
        raise StepFailure("not a number: %r" % (v,))
    if isinstance(v, str):
        return v.strip()
    return str(v) if isinstance(v, int) else format(d, "f")


def _double_exact(d):
    """True when a JSON number with this value survives a parse into an IEEE double."""
    try:
        f = float(d)
    except (OverflowError, ValueError):
        return False
    if f != f or f in (float("inf"), float("-inf")):
        return False
    return Decimal(repr(f)) == Decimal(d)


def _is_number(v):
    return isinstance(v, (int, float, Decimal)) and not isinstance(v, bool)


def _is_empty(v):
    return v is None or v == "" or (isinstance(v, (list, dict)) and len(v) == 0)


def _is_zero_deep(v):
    """Go's zero value, used for the sparse field selection of an update without `fields`:
    "", 0, false, null, [], {} and maps (records) whose values are all zero."""
    if v is None or v is False or v == "":
        return True
    if _is_number(v):
        return _to_decimal(v) == 0
    if isinstance(v, list):
        return len(v) == 0
    if isinstance(v, dict):
        return all(_is_zero_deep(x) for x in v.values())
    return False


def _short(v):
    try:
        text = json.dumps(v, cls=_DecimalEncoder, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(v)
    return text if len(text) <= 120 else text[:117] + "..."


def match_value(expected, actual, typ, path):
    """None when actual (a daemon JSON value) equals expected (a fixture value) under the
    attribute's DMS type `typ` (None = inferred); else a reason."""
    bad = "%s: expected %s, got %s" % (path, _short(expected), _short(actual))
    if typ in ("N",):
        de, da = _to_decimal(expected), _to_decimal(actual)
        if de is None or da is None or de != da:
            return bad
        if _is_number(actual) and not _double_exact(da):
            return ("%s: %s came back as a JSON number, which a double cannot carry exactly "
                    "(docs/api.md: return it as a string)" % (path, _short(actual)))
        return None
    if typ in SET_TYPES:
        if not isinstance(expected, list) or not isinstance(actual, list):
            return bad
        if len(expected) != len(actual):
            return bad
        elem = {"SS": "S", "NS": "N", "BS": "B"}[typ]
        remaining = list(actual)
        for e in expected:
            for i, a in enumerate(remaining):
                if match_value(e, a, elem, path) is None:
                    del remaining[i]
                    break
            else:
                return bad + " (sets compared without order)"
        return None
    if typ == "B":
        be, ba = _b64decode(expected), _b64decode(actual)
        if be is None or ba is None or be != ba:
            return bad
        return None
    if typ == "S" and isinstance(expected, str):
        return None if isinstance(actual, str) and actual == expected else bad
    # Inferred (nested values, M, L, BOOL, NULL, undeclared attributes, json documents).
    if expected is None:
        return None if actual is None else bad
    if isinstance(expected, bool):
        return None if isinstance(actual, bool) and actual == expected else bad
    if _is_number(expected):
        if _is_number(actual):
            return None if _to_decimal(actual) == _to_decimal(expected) else bad
        if isinstance(actual, str):
            # A nested number that a double cannot carry comes back as a string.
            da = _to_decimal(actual)
            if da is not None and da == _to_decimal(expected) and not _double_exact(da):
                return None
        return bad
    if isinstance(expected, str):
        return None if isinstance(actual, str) and actual == expected else bad
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return bad
        for i, (e, a) in enumerate(zip(expected, actual)):
            r = match_value(e, a, None, "%s[%d]" % (path, i))
            if r:
                return r
        return None
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return bad
        if set(expected) != set(actual):
            return "%s: expected keys %s, got %s" % (path, sorted(expected), sorted(actual))
        for k in expected:
            r = match_value(expected[k], actual[k], None, "%s.%s" % (path, k))
            if r:
                return r
        return None
    return bad


def match_av(expected, av, path):
    """None when the raw AttributeValue `av`, read as a plain JSON document (numbers as
    strings, binary as base64, sets without order), equals expected."""
    bad = "%s: expected %s, stored %s" % (path, _short(expected), _short(av))
    if not isinstance(av, dict) or len(av) != 1:
        return "%s: stored value %s is not an AttributeValue" % (path, _short(av))
    (t, v), = av.items()
    if t == "S":
        return None if isinstance(expected, str) and expected == v else bad
    if t == "N":
        de, dv = _to_decimal(expected), _to_decimal(v)
        return None if de is not None and de == dv and not isinstance(expected, bool) else bad
    if t == "B":
        be, bv = _b64decode(expected), _b64decode(v)
        return None if be is not None and be == bv else bad
    if t == "BOOL":
        return None if isinstance(expected, bool) and expected == v else bad
    if t == "NULL":
        return None if expected is None else bad
    if t in SET_TYPES:
        return match_value(expected, v, t, path)
    if t == "L":
        if not isinstance(expected, list) or not isinstance(v, list) or len(v) != len(expected):
            return bad
        for i, (e, a) in enumerate(zip(expected, v)):
            r = match_av(e, a, "%s[%d]" % (path, i))
            if r:
                return r
        return None
    if t == "M":
        if not isinstance(expected, dict) or not isinstance(v, dict):
            return bad
        if set(expected) != set(v):
            return "%s: expected keys %s, stored %s" % (path, sorted(expected), sorted(v))
        for k in expected:
            r = match_av(expected[k], v[k], "%s.%s" % (path, k))
            if r:
                return r
        return None
    return "%s: unknown stored type %s" % (path, t)


def values_same(a, b):
    """Equality of two daemon values (saved variables): numbers by value, else exact."""
    if _is_number(a) or _is_number(b):
        da, db = _to_decimal(a), _to_decimal(b)
        return da is not None and da == db and not isinstance(a, bool) and not isinstance(b, bool)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(values_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return set(a) == set(b) and all(values_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


# --------------------------------------------------------------------------------------------
# Conditions: fixture operators and condition expressions -> the condition language of docs/api.md

OPERATORS = {
    "=": "=", "==": "=", "eq": "=",
    "<>": "<>", "!=": "<>", "ne": "<>",
    "<": "<", "lt": "<",
    "<=": "<=", "le": "<=", "lte": "<=",
    ">": ">", "gt": ">",
    ">=": ">=", "ge": ">=", "gte": ">=",
    "between": "between",
    "in": "in",
    "begins_with": "begins_with", "beginswith": "begins_with", "begins": "begins_with",
    "contains": "contains",
    "not_contains": "not_contains", "notcontains": "not_contains",
    "exists": "exists", "attribute_exists": "exists",
    "not_exists": "not_exists", "notexists": "not_exists", "attribute_not_exists": "not_exists",
}


def fixture_condition(c, where):
    """{attribute, operator, value | values} -> {"attr", "op", "value"}."""
    if not isinstance(c, dict) or "attribute" not in c:
        raise StepFailure("%s: a condition needs `attribute`" % where)
    raw_op = str(c.get("operator", "=")).strip()
    op = OPERATORS.get(raw_op.lower())
    if op is None:
        raise Unsupported("%s: operator %r has no HTTP API form" % (where, raw_op))
    out = {"attr": c["attribute"], "op": op}
    if op in ("exists", "not_exists"):
        return out
    if op in ("between", "in"):
        vals = c.get("values", c.get("value"))
        if not isinstance(vals, list) or (op == "between" and len(vals) != 2):
            raise StepFailure("%s: %s needs a list of values" % (where, op))
        out["value"] = vals
        return out
    if "value" not in c:
        raise StepFailure("%s: operator %s needs `value`" % (where, raw_op))
    out["value"] = c["value"]
    return out


_TOKEN_RE = re.compile(r"""\s*(?:
    (?P<cmp><>|<=|>=|=|<|>)
  | (?P<punct>[(),])
  | (?P<value>:[A-Za-z0-9_]+)
  | (?P<path>(?:\#[A-Za-z0-9_]+|[A-Za-z_][A-Za-z0-9_\-]*)(?:\[\d+\])*
              (?:\.(?:\#[A-Za-z0-9_]+|[A-Za-z_][A-Za-z0-9_\-]*)(?:\[\d+\])*)*)
)""", re.X)

_KEYWORDS = {"AND", "OR", "NOT", "BETWEEN", "IN"}
_FLIP = {"=": "=", "<>": "<>", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


class ConditionExpression:
    """A recursive-descent translator for the DynamoDB condition-expression subset:
    comparisons, BETWEEN, IN, AND/OR/NOT, parentheses, attribute_exists/not_exists,
    attribute_type, begins_with, contains, size(). Names resolve through
    expression_attribute_names, values through expression_attribute_values."""

    def __init__(self, text, names, values):
        self.names = names or {}
        self.values = values or {}
        self.toks = self._lex(text)
        self.i = 0

    @staticmethod
    def _lex(text):
        toks, pos = [], 0
        text = text.strip()
        while pos < len(text):
            m = _TOKEN_RE.match(text, pos)
            if not m or m.end() == pos:
                raise Unsupported("condition expression: cannot read %r" % text[pos:pos + 20])
            kind = m.lastgroup
            val = m.group(kind)
            if kind == "path" and val.upper() in _KEYWORDS:
                toks.append(("kw", val.upper()))
            elif kind == "path" and val.lower() in (
                    "attribute_exists", "attribute_not_exists", "attribute_type",
                    "begins_with", "contains", "size") and text[m.end():].lstrip().startswith("("):
                toks.append(("func", val.lower()))
            else:
                toks.append((kind, val))
            pos = m.end()
            while pos < len(text) and text[pos].isspace():
                pos += 1
        return toks

    def translate(self):
        c = self._or()
        if self.i != len(self.toks):
            raise Unsupported("condition expression: unexpected %r" % (self.toks[self.i][1],))
        return c

    def _peek(self, kind=None, val=None):
        if self.i >= len(self.toks):
            return None
        t = self.toks[self.i]
        if (kind and t[0] != kind) or (val and t[1] != val):
            return None
        return t

    def _take(self, kind=None, val=None):
        t = self._peek(kind, val)
        if t is None:
            got = self.toks[self.i][1] if self.i < len(self.toks) else "end"
            raise Unsupported("condition expression: expected %s, got %r" % (val or kind, got))
        self.i += 1
        return t

    def _or(self):
        parts = [self._and()]
        while self._peek("kw", "OR"):
            self.i += 1
            parts.append(self._and())
        return parts[0] if len(parts) == 1 else {"or": parts}

    def _and(self):
        parts = [self._not()]
        while self._peek("kw", "AND"):
            self.i += 1
            parts.append(self._not())
        return parts[0] if len(parts) == 1 else {"and": parts}

    def _not(self):
        if self._peek("kw", "NOT"):
            self.i += 1
            return {"not": self._not()}
        return self._primary()

    def _path(self, text):
        out = []
        for part in text.split("."):
            m = re.match(r"(#?[A-Za-z0-9_\-]+)((?:\[\d+\])*)$", part)
            name, idx = m.group(1), m.group(2)
            if name.startswith("#"):
                if name not in self.names:
                    raise Unsupported("condition expression: name %s not defined" % name)
                name = self.names[name]
            out.append(name + idx)
        return ".".join(out)

    def _value(self, text):
        for k in (text, text[1:]):
            if k in self.values:
                return _plain_value(self.values[k])
        raise Unsupported("condition expression: value %s not defined" % text)

    def _operand(self):
        """('path', name) | ('value', v) | ('size', name)"""
        t = self._peek()
        if t is None:
            raise Unsupported("condition expression ends early")
        if t[0] == "func" and t[1] == "size":
            self.i += 1
            self._take("punct", "(")
            p = self._path(self._take("path")[1])
            self._take("punct", ")")
            return ("size", p)
        if t[0] == "path":
            self.i += 1
            return ("path", self._path(t[1]))
        if t[0] == "value":
            self.i += 1
            return ("value", self._value(t[1]))
        raise Unsupported("condition expression: unexpected %r" % (t[1],))

    def _primary(self):
        if self._peek("punct", "("):
            self.i += 1
            c = self._or()
            self._take("punct", ")")
            return c
        t = self._peek("func")
        if t and t[1] != "size":
            self.i += 1
            self._take("punct", "(")
            p = self._path(self._take("path")[1])
            fn = t[1]
            if fn in ("attribute_exists", "attribute_not_exists"):
                self._take("punct", ")")
                return {"attr": p, "op": "exists" if fn == "attribute_exists" else "not_exists"}
            self._take("punct", ",")
            v = self._value(self._take("value")[1])
            self._take("punct", ")")
            op = {"attribute_type": "type", "begins_with": "begins_with",
                  "contains": "contains"}[fn]
            return {"attr": p, "op": op, "value": v}
        left = self._operand()
        if self._peek("kw", "BETWEEN"):
            self.i += 1
            lo = self._operand()
            self._take("kw", "AND")
            hi = self._operand()
            if left[0] == "value" or lo[0] != "value" or hi[0] != "value":
                raise Unsupported("condition expression: BETWEEN needs an attribute and values")
            return self._cmp(left, "between", [lo[1], hi[1]])
        if self._peek("kw", "IN"):
            self.i += 1
            self._take("punct", "(")
            vals = [self._operand()]
            while self._peek("punct", ","):
                self.i += 1
                vals.append(self._operand())
            self._take("punct", ")")
            if left[0] == "value" or any(v[0] != "value" for v in vals):
                raise Unsupported("condition expression: IN needs an attribute and values")
            return self._cmp(left, "in", [v[1] for v in vals])
        op = self._take("cmp")[1]
        right = self._operand()
        if left[0] != "value" and right[0] == "value":
            return self._cmp(left, op, right[1])
        if left[0] == "value" and right[0] != "value":
            return self._cmp(right, _FLIP[op], left[1])
        raise Unsupported("condition expression: the HTTP API compares an attribute with a value "
                          "only (no attribute-to-attribute or value-to-value comparisons)")

    @staticmethod
    def _cmp(operand, op, value):
        if operand[0] == "size":
            return {"attr": operand[1], "size": op, "value": value}
        return {"attr": operand[1], "op": op, "value": value}


def _plain_value(v):
    """An expression value: a logical JSON value, or a single-type DynamoDB AttributeValue."""
    if isinstance(v, dict) and len(v) == 1:
        (t, x), = v.items()
        if t in ("S", "BOOL", "B", "SS", "BS"):
            return x
        if t == "N":
            return x
        if t == "NULL":
            return None
        if t == "NS":
            return list(x)
        if t == "L":
            return [_plain_value(e) for e in x]
        if t == "M":
            return {k: _plain_value(e) for k, e in x.items()}
    return v


def translate_condition_expression(text, names=None, values=None):
    return ConditionExpression(str(text), names, values).translate()


# --------------------------------------------------------------------------------------------
# Step translation


class StepResult:
    def __init__(self):
        self.error = None      # ApiError
        self.item = None       # returned item (dict) for single-item ops
        self.raw_fetch = None  # callable -> raw AttributeValue map, for get ops
        self._raw = None
        self.items = None      # list for query/scan/count/batch/transact_get
        self.cursor = None
        self.count = None
        self.absent = None

    def raw(self):
        if self._raw is None and self.raw_fetch is not None:
            self._raw = self.raw_fetch()
        return self._raw


READ_EXPECTS = ("item_contains", "item_equals", "item_has_fields", "item_missing_fields",
                "raw_attribute_types", "raw_item_contains", "item_field_equals_var",
                "item_field_not_equals_var", "item_absent", "item_count", "items_contains",
                "items_missing_fields", "cursor_equals", "count")
KNOWN_EXPECTS = ("ok", "error", "errors") + READ_EXPECTS


class Ctx:
    """What a scenario's translation needs: the models, the client, the variables."""

    def __init__(self, registry, client, default_model):
        self.registry = registry
        self.client = client
        self.default_model = default_model
        self.vars = {}
        self.models_used = []

    def model(self, name):
        name = name or self.default_model
        m = self.registry.get(name, self.client)
        if name not in self.models_used:
            self.models_used.append(name)
        return m


def _api_call(ctx, op, method, path, body=None, query=None, ok=(200, 201, 204)):
    status, parsed = ctx.client.call(method, path, body, query)
    if status in ok:
        return status, parsed, None
    code, codes = tt_codes_for(op, status, parsed)
    msg = ""
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
        msg = str(parsed["error"].get("message", ""))
    elif isinstance(parsed, dict) and "_non_json" in parsed:
        msg = "non-JSON body: " + parsed["_non_json"]
    return status, parsed, ApiError(status, code or "(no code)", msg, parsed, codes)


def _need(step, field, where):
    if field not in step:
        raise StepFailure("%s: missing `%s`" % (where, field))
    return step[field]


def _raw_fetcher(ctx, model, key, where):
    path = model.key_path(key, where)

    def fetch():
        status, body, err = _api_call(ctx, "get", "GET", path,
                                      query={"format": "dynamodb", "consistent": "true"})
        if err:
            raise StepFailure("%s: raw read (?format=dynamodb) failed: %s"
                              % (where, err.describe()))
        if not isinstance(body, dict) or not all(
                isinstance(v, dict) and len(v) == 1 and next(iter(v)) in AV_TYPES
                for v in body.values()):
            raise StepFailure("%s: ?format=dynamodb did not return an AttributeValue map: %s"
                              % (where, _short(body)))
        return body
    return fetch


def _dict_body(body, where, field):
    if not isinstance(body, dict):
        raise StepFailure("%s: answer is not a JSON object: %s" % (where, _short(body)))
    if field is not None and field not in body:
        raise StepFailure("%s: answer has no `%s`: %s" % (where, field, _short(body)))
    return body


def compile_create(step, ctx, where):
    model = ctx.model(step.get("model"))
    item = _need(step, "item", where)
    model.key_of(item, where)
    path = "/v1/models/%s/items" % _q(model.name)

    def run():
        r = StepResult()
        _, body, r.error = _api_call(ctx, "create", "POST", path, item,
                                     query=deploy_authority_query(model, item), ok=(201, 200))
        if not r.error:
            r.item = _dict_body(body, where, None)
        return r
    return run


def compile_save(step, ctx, where):
    model = ctx.model(step.get("model"))
    item = _need(step, "item", where)
    path = model.key_path(item, where)

    def run():
        r = StepResult()
        _, body, r.error = _api_call(ctx, "save", "PUT", path, item,
                                     query=deploy_authority_query(model, item), ok=(200, 201))
        if not r.error:
            r.item = _dict_body(body, where, None)
        return r
    return run


def compile_get(step, ctx, where, optional=False):
    model = ctx.model(step.get("model"))
    key = _need(step, "key", where)
    path = model.key_path(key, where)
    op = "get_optional" if optional else "get"

    def run():
        r = StepResult()
        status, body, err = _api_call(ctx, op, "GET", path, query={"consistent": "true"},
                                      ok=(200,))
        if optional and err and err.status == 404 and err.code == "ItemNotFound":
            r.absent = True
            return r
        r.error = err
        if not err:
            r.item = _dict_body(body, where, None)
            r.absent = False
            r.raw_fetch = _raw_fetcher(ctx, model, key, where)
        return r
    return run


def compile_update(step, ctx, where):
    model = ctx.model(step.get("model"))
    item = _need(step, "item", where)
    if not isinstance(item, dict):
        raise StepFailure("%s: item must be a map" % where)
    extra = step.get("protected_attributes")
    if extra is not None and not isinstance(extra, list):
        raise StepFailure("%s: protected_attributes must be a list" % where)
    path = model.key_path(item, where)
    keys = set(model.key_names())
    if "fields" in step:
        fields = list(step["fields"] or [])
    else:
        # No `fields`: empty values count as not selected (Go's sparse selection; TS and
        # Python send no change for them). The version still goes up.
        fields = [k for k, v in item.items()
                  if k not in keys and k != "version" and not _is_zero_deep(v)]
    body = {"fields": fields, "item": item}
    if extra:
        # TableTheory's per-call update option: the daemon's update member of the same name.
        body["protected_attributes"] = list(extra)

    def run():
        r = StepResult()
        _, resp, r.error = _api_call(ctx, "update", "PATCH", path, body, ok=(200,))
        if not r.error:
            r.item = _dict_body(resp, where, None)
        return r
    return run


def compile_delete(step, ctx, where):
    model = ctx.model(step.get("model"))
    key = _need(step, "key", where)
    path = model.key_path(key, where)

    def run():
        r = StepResult()
        _, _, r.error = _api_call(ctx, "delete", "DELETE", path, ok=(204, 200))
        return r
    return run


def compile_sleep(step, ctx, where):
    ms = _need(step, "ms", where)
    if not _is_number(ms) or ms < 0:
        raise StepFailure("%s: ms must be a non-negative number" % where)

    def run():
        if not _advance_test_clock(ctx.client, ms, where):
            time.sleep(float(ms) / 1000.0)
        return StepResult()
    return run


def _advance_test_clock(client, ms, where):
    """Moves the frozen clock of a daemon run with --test-clock, which dates `createdAt` and
    `updatedAt`, `ms` forward (rounded up to whole ms). False when the daemon has no such
    clock: the caller waits instead."""
    if client.test_clock is None:
        status, _ = client.call("GET", "/v1/_test/clock")
        client.test_clock = status == 200
    if not client.test_clock:
        return False
    advance = math.ceil(ms)
    if advance > 0:
        status, body = client.call("POST", "/v1/_test/clock", {"advance_ms": advance})
        if status != 200:
            raise StepFailure("%s: POST /v1/_test/clock answered %d: %s"
                              % (where, status, _short(body)))
    return True


def read_request(req, where, kind):
    """A fixture read request -> the body of POST .../query or .../scan."""
    if not isinstance(req, dict):
        raise StepFailure("%s: the %s request must be a map" % (where, kind))
    known = {"index", "partition", "sort", "filter", "sort_direction", "limit", "projection",
             "cursor", "consistent_read"}
    extra = set(req) - known
    if extra:
        raise Unsupported("%s: read request fields %s are not handled" % (where, sorted(extra)))
    body = {}
    if req.get("index"):
        body["index"] = req["index"]
    if kind == "query":
        part = req.get("partition")
        if part is None:
            raise StepFailure("%s: a query needs `partition`" % where)
        pc = fixture_condition(part, where + " partition")
        if pc["op"] != "=":
            raise StepFailure("%s: the partition condition must be `=`" % where)
        key = [pc]
        if req.get("sort") is not None:
            key.append(fixture_condition(req["sort"], where + " sort"))
        body["key"] = key
    elif "partition" in req or "sort" in req:
        raise StepFailure("%s: a scan has no partition/sort" % where)
    if req.get("filter"):
        flt = req["filter"]
        if not isinstance(flt, list):
            flt = [flt]
        body["filter"] = [fixture_condition(c, where + " filter") for c in flt]
    if req.get("sort_direction"):
        d = str(req["sort_direction"]).upper()
        if d not in ("ASC", "DESC"):
            raise StepFailure("%s: sort_direction must be ASC or DESC" % where)
        body["order"] = d.lower()
    if req.get("limit") is not None:
        body["limit"] = req["limit"]
    if req.get("projection"):
        body["select"] = list(req["projection"])
    if req.get("cursor"):
        body["cursor"] = req["cursor"]
    if req.get("consistent_read") is not None:
        body["consistent"] = bool(req["consistent_read"])
    return body


def _run_read(ctx, op, model, kind, body, where, counting):
    path = "/v1/models/%s/%s" % (_q(model.name), kind)
    r = StepResult()
    _, resp, r.error = _api_call(ctx, op, "POST", path, body, ok=(200,))
    if r.error:
        return r
    resp = _dict_body(resp, where, None if counting else "items")
    items = resp.get("items")
    if counting:
        items = items or []
        if "count" not in resp:
            raise StepFailure("%s: a count answer needs `count`: %s" % (where, _short(resp)))
    if not isinstance(items, list):
        raise StepFailure("%s: `items` is not a list" % where)
    r.items = items
    r.count = resp.get("count")
    r.cursor = resp.get("cursor")
    return r


def compile_query(step, ctx, where, kind):
    model = ctx.model(step.get("model"))
    body = read_request(_need(step, kind, where), where, kind)

    def run():
        return _run_read(ctx, kind, model, kind, body, where, False)
    return run


def compile_count(step, ctx, where):
    model = ctx.model(step.get("model"))
    spec = _need(step, "count", where)
    if not isinstance(spec, dict) or len([k for k in ("query", "scan") if k in spec]) != 1:
        raise StepFailure("%s: count needs exactly one of query/scan" % where)
    kind = "query" if "query" in spec else "scan"
    body = read_request(spec[kind], where, kind)
    body["count"] = True

    def run():
        return _run_read(ctx, "count", model, kind, body, where, True)
    return run


def compile_batch_get(step, ctx, where):
    model = ctx.model(step.get("model"))
    spec = _need(step, "batch_get", where)
    keys = [model.key_of(k, where) for k in (spec.get("keys") or [])]
    body = {"keys": keys, "consistent": True}
    if spec.get("projection"):
        body["select"] = list(spec["projection"])
    path = "/v1/models/%s/batch-get" % _q(model.name)

    def run():
        r = StepResult()
        _, resp, r.error = _api_call(ctx, "batch_get", "POST", path, body, ok=(200,))
        if not r.error:
            items = _dict_body(resp, where, "items")["items"]
            if not isinstance(items, list):
                raise StepFailure("%s: `items` is not a list" % where)
            r.items = items
        return r
    return run


def compile_batch_write(step, ctx, where):
    model = ctx.model(step.get("model"))
    spec = _need(step, "batch_write", where)
    puts = list(spec.get("puts") or [])
    deletes = [model.key_of(k, where) for k in (spec.get("deletes") or [])]
    for p in puts:
        model.key_of(p, where)
    body = {}
    if puts:
        body["put"] = puts
    if deletes:
        body["delete"] = deletes
    path = "/v1/models/%s/batch-write" % _q(model.name)

    def run():
        r = StepResult()
        _, _, r.error = _api_call(ctx, "batch_write", "POST", path, body, ok=(200,))
        return r
    return run


def compile_transact_get(step, ctx, where):
    spec = _need(step, "transact_get", where)
    entries = []
    for i, e in enumerate(spec.get("items") or []):
        w = "%s item %d" % (where, i)
        m = ctx.model(e.get("model") or step.get("model"))
        entry = {"model": m.name, "key": m.key_of(_need(e, "key", w), w)}
        if e.get("projection"):
            entry["select"] = list(e["projection"])
        entries.append(entry)
    body = {"items": entries}

    def run():
        r = StepResult()
        _, resp, r.error = _api_call(ctx, "transact_get", "POST", "/v1/transactions/get",
                                     body, ok=(200,))
        if not r.error:
            items = _dict_body(resp, where, "items")["items"]
            if not isinstance(items, list):
                raise StepFailure("%s: `items` is not a list" % where)
            if len(items) != len(entries):
                raise StepFailure("%s: %d answers for %d requested items"
                                  % (where, len(items), len(entries)))
            # TableTheory leaves missing keys out of the result; the HTTP API answers null.
            r.items = [x for x in items if x is not None]
        return r
    return run


def _and(a, b):
    if a is None:
        return b
    return {"and": [a, b]}


def transact_action(a, ctx, step, where):
    if not isinstance(a, dict) or not a.get("kind"):
        raise StepFailure("%s: an action needs `kind`" % where)
    kind = str(a["kind"]).lower()
    m = ctx.model(a.get("model") or step.get("model"))
    entry = {"model": m.name}
    cond = None
    if a.get("condition_expression"):
        cond = translate_condition_expression(a["condition_expression"],
                                              a.get("expression_attribute_names"),
                                              a.get("expression_attribute_values"))
    if kind in ("put", "create"):
        entry["op"] = "create" if kind == "create" or a.get("if_not_exists") else "put"
        entry["item"] = _need(a, "item", where)
        m.key_of(entry["item"], where)
    elif kind == "update":
        entry["op"] = "update"
        src = a.get("key") if a.get("key") is not None else a.get("item")
        if src is None:
            raise StepFailure("%s: an update needs `key` or `item`" % where)
        key = m.key_of(src, where)
        if "fields" in a or ("item" in a and "set" not in a):
            entry["key"] = key
            entry["item"] = a.get("item") or dict(key, **(a.get("set") or {}))
            entry["fields"] = list(a.get("fields") or
                                   [k for k in entry["item"] if k not in key])
        elif TRANSACT_UPDATE_FORM == "fields":
            sets = dict(a.get("set") or {})
            entry["key"] = key
            entry["item"] = dict(key, **sets)
            entry["fields"] = list(sets)
        else:
            entry["key"] = key
            for f in ("set", "set_if_not_exists", "remove", "add", "delete", "append",
                      "prepend"):
                if a.get(f) is not None:
                    entry[f] = a[f]
        if a.get("if_not_exists"):
            cond = _and(cond, {"attr": m.pk, "op": "not_exists"})
    elif kind in ("condition", "check", "condition_check"):
        entry["op"] = "check"
        entry["key"] = m.key_of(_need(a, "key", where), where)
        if cond is None:
            raise StepFailure("%s: a condition action needs condition_expression" % where)
    elif kind == "delete":
        entry["op"] = "delete"
        entry["key"] = m.key_of(a.get("key") or _need(a, "item", where), where)
        if a.get("if_not_exists"):
            raise Unsupported("%s: if_not_exists on a delete" % where)
    else:
        raise Unsupported("%s: transact_write action kind %r has no HTTP API form" % (where, kind))
    if cond is not None:
        entry["condition"] = cond
    if a.get("expected_version") is not None:
        entry["expected_version"] = a["expected_version"]
    return entry


def compile_transact_write(step, ctx, where):
    spec = _need(step, "transact_write", where)
    actions = spec.get("actions") or []
    entries = [transact_action(a, ctx, step, "%s action %d" % (where, i))
               for i, a in enumerate(actions)]
    body = {"items": entries}
    return _transaction_runner(ctx, "transact_write", body, where)


def _transaction_runner(ctx, op, body, where):
    def run():
        r = StepResult()
        _, _, r.error = _api_call(ctx, op, "POST", "/v1/transactions/write", body, ok=(200,))
        return r
    return run


def compile_transition_append_event(step, ctx, where):
    # One transaction: the optimistic update of the "actual" row plus the write-once event.
    actual = _need(step, "actual", where)
    event = _need(step, "event", where)
    am = ctx.model(actual.get("model") or step.get("model"))
    em = ctx.model(event.get("model"))
    upd = {"op": "update", "model": am.name, "key": am.key_of(_need(actual, "key", where), where),
           "set": dict(actual.get("set") or {})}
    if actual.get("expected_version") is not None:
        upd["expected_version"] = actual["expected_version"]
    ev_item = _need(event, "item", where)
    em.key_of(ev_item, where)
    body = {"items": [upd, {"op": "create", "model": em.name, "item": ev_item}]}
    return _transaction_runner(ctx, "transition_append_event", body, where)


COMPILERS = {
    "create": compile_create,
    "save": compile_save,
    "get": compile_get,
    "get_optional": lambda s, c, w: compile_get(s, c, w, optional=True),
    "update": compile_update,
    "delete": compile_delete,
    "sleep": compile_sleep,
    "query": lambda s, c, w: compile_query(s, c, w, "query"),
    "scan": lambda s, c, w: compile_query(s, c, w, "scan"),
    "count": compile_count,
    "batch_get": compile_batch_get,
    "batch_write": compile_batch_write,
    "transact_get": compile_transact_get,
    "transact_write": compile_transact_write,
    "transition_append_event": compile_transition_append_event,
}


# --------------------------------------------------------------------------------------------
# Expectations


def compile_expect(step, ctx, where):
    exp = step.get("expect") or {}
    if not isinstance(exp, dict):
        raise StepFailure("%s: expect must be a map" % where)
    unknown = set(exp) - set(KNOWN_EXPECTS)
    if unknown:
        raise Unsupported("%s: expectation %s not supported by the runner"
                          % (where, ", ".join(sorted(unknown))))
    wanted_errors = None
    if "error" in exp:
        wanted_errors = [exp["error"]]
    if "errors" in exp:
        wanted_errors = (wanted_errors or []) + list(exp["errors"] or [])
    expect_failure = wanted_errors is not None or exp.get("ok") is False
    save = step.get("save") or {}
    op = step["op"]
    model = None
    if any(k in exp for k in READ_EXPECTS) or save:
        model = ctx.model(step.get("model"))

    def check(r):
        if r.error is not None:
            if not expect_failure:
                raise StepFailure("%s: unexpected error %s" % (where, r.error.describe()))
            if wanted_errors is not None and not (r.error.tt_codes & set(wanted_errors)):
                raise StepFailure("%s: expected %s, got %s"
                                  % (where, " or ".join(wanted_errors), r.error.describe()))
            return
        if expect_failure:
            raise StepFailure("%s: expected %s, but the call succeeded"
                              % (where, " or ".join(wanted_errors or ["an error"])))
        for var, attr in save.items():
            if r.item is None or attr not in r.item:
                raise StepFailure("%s: save: attribute %s not in the result" % (where, attr))
            ctx.vars[var] = r.item[attr]
        for key in READ_EXPECTS:
            if key in exp:
                CHECKS[key](exp[key], r, model, ctx, "%s %s" % (where, key))
    return check


def _need_item(r, where):
    if r.item is None:
        raise StepFailure("%s: the step returned no item" % where)
    return r.item


def _need_items(r, where):
    if r.items is None:
        raise StepFailure("%s: the step returned no item list" % where)
    return r.items


def _raw_or_none(r):
    return r.raw() if r.raw_fetch is not None else None


def chk_item_contains(exp, r, model, ctx, where):
    item = _need_item(r, where)
    _contains(exp, item, model, where)


def _contains(exp, item, model, where):
    if not isinstance(item, dict):
        raise StepFailure("%s: result is not an item: %s" % (where, _short(item)))
    for attr, want in exp.items():
        if attr not in item:
            raise StepFailure("%s: attribute %s missing" % (where, attr))
        reason = match_value(want, item[attr], model.attr_type(attr), attr)
        if reason:
            raise StepFailure("%s: %s" % (where, reason))


def chk_item_equals(exp, r, model, ctx, where):
    item = _need_item(r, where)
    extra = sorted(set(item) - set(exp))
    missing = sorted(set(exp) - set(item))
    if extra or missing:
        raise StepFailure("%s: attributes differ (extra %s, missing %s)" % (where, extra, missing))
    _contains(exp, item, model, where)
    raw = _raw_or_none(r)
    if raw is not None and set(raw) != set(exp):
        raise StepFailure("%s: stored attributes %s, expected exactly %s"
                          % (where, sorted(raw), sorted(exp)))


def chk_item_has_fields(exp, r, model, ctx, where):
    item = _need_item(r, where)
    missing = [f for f in exp if f not in item]
    if missing:
        raise StepFailure("%s: missing %s" % (where, missing))


def chk_item_missing_fields(exp, r, model, ctx, where):
    raw = _raw_or_none(r)
    target = raw if raw is not None else _need_item(r, where)
    present = [f for f in exp if f in target]
    if present:
        raise StepFailure("%s: %s present in the %s item" % (
            where, present, "stored" if raw is not None else "returned"))


def chk_raw_attribute_types(exp, r, model, ctx, where):
    raw = _raw_or_none(r)
    if raw is None:
        raise StepFailure("%s: no raw item for this op" % where)
    for attr, typ in exp.items():
        if attr not in raw:
            raise StepFailure("%s: %s not stored" % (where, attr))
        got = next(iter(raw[attr]))
        if got != typ:
            raise StepFailure("%s: %s stored as %s, expected %s" % (where, attr, got, typ))


def chk_raw_item_contains(exp, r, model, ctx, where):
    raw = _raw_or_none(r)
    if raw is None:
        raise StepFailure("%s: no raw item for this op" % where)
    for attr, want in exp.items():
        if attr not in raw:
            raise StepFailure("%s: %s not stored" % (where, attr))
        reason = match_av(want, raw[attr], attr)
        if reason:
            raise StepFailure("%s: %s" % (where, reason))


def _var_checks(exp, r, ctx, where, equal):
    item = _need_item(r, where)
    for attr, var in exp.items():
        if var not in ctx.vars:
            raise StepFailure("%s: variable %s was never saved" % (where, var))
        if attr not in item:
            raise StepFailure("%s: attribute %s missing" % (where, attr))
        same = values_same(item[attr], ctx.vars[var])
        if same != equal:
            raise StepFailure("%s: %s is %s, %s %s (%s)" % (
                where, attr, _short(item[attr]), "expected" if equal else "must differ from",
                var, _short(ctx.vars[var])))


def chk_item_field_equals_var(exp, r, model, ctx, where):
    _var_checks(exp, r, ctx, where, True)


def chk_item_field_not_equals_var(exp, r, model, ctx, where):
    _var_checks(exp, r, ctx, where, False)


def chk_item_absent(exp, r, model, ctx, where):
    if r.absent is None:
        raise StepFailure("%s: only get_optional reports absence" % where)
    if bool(exp) != r.absent:
        raise StepFailure("%s: item %s" % (where, "was returned" if r.absent is False
                                           else "was not found"))


def chk_item_count(exp, r, model, ctx, where):
    items = _need_items(r, where)
    if len(items) != exp:
        raise StepFailure("%s: %d items, expected %s" % (where, len(items), exp))


def chk_items_contains(exp, r, model, ctx, where):
    items = _need_items(r, where)
    if len(items) < len(exp):
        raise StepFailure("%s: %d items, expected at least %d" % (where, len(items), len(exp)))
    for i, want in enumerate(exp):
        _contains(want, items[i], model, "%s[%d]" % (where, i))


def chk_items_missing_fields(exp, r, model, ctx, where):
    items = _need_items(r, where)
    for i, it in enumerate(items):
        for f in exp:
            if isinstance(it, dict) and f in it and not _is_empty(it[f]):
                raise StepFailure("%s: item %d has %s" % (where, i, f))


def chk_cursor_equals(exp, r, model, ctx, where):
    got = r.cursor or ""
    if got != (exp or ""):
        raise StepFailure("%s: cursor %r, expected %r" % (where, got, exp or ""))


def chk_count(exp, r, model, ctx, where):
    if r.count is None or not _is_number(r.count) or _to_decimal(r.count) != _to_decimal(exp):
        raise StepFailure("%s: count %s, expected %s" % (where, _short(r.count), exp))


CHECKS = {
    "item_contains": chk_item_contains,
    "item_equals": chk_item_equals,
    "item_has_fields": chk_item_has_fields,
    "item_missing_fields": chk_item_missing_fields,
    "raw_attribute_types": chk_raw_attribute_types,
    "raw_item_contains": chk_raw_item_contains,
    "item_field_equals_var": chk_item_field_equals_var,
    "item_field_not_equals_var": chk_item_field_not_equals_var,
    "item_absent": chk_item_absent,
    "item_count": chk_item_count,
    "items_contains": chk_items_contains,
    "items_missing_fields": chk_items_missing_fields,
    "cursor_equals": chk_cursor_equals,
    "count": chk_count,
}


# --------------------------------------------------------------------------------------------
# Scenarios


class Scenario:
    def __init__(self, path, rel, doc):
        self.path = path
        self.rel = rel
        self.doc = doc
        self.name = (doc or {}).get("name") or rel


def discover(scenarios_dir):
    files = []
    for root, _, names in os.walk(scenarios_dir):
        for fn in names:
            if fn.endswith((".yml", ".yaml")):
                path = os.path.join(root, fn)
                files.append((os.path.relpath(path, scenarios_dir), path))
    tier = {"p0": 0, "p1": 1, "p2": 2}
    files.sort(key=lambda rp: (tier.get(rp[0].split(os.sep)[0], 9), rp[0]))
    return files


def plan(sc, ctx, interop_mode):
    """Translates every step; returns (do_reset, [(where, run, check)]). Raises Unsupported
    (skip) or StepFailure (fail)."""
    doc = sc.doc
    if not isinstance(doc, dict):
        raise StepFailure("not a scenario map")
    missing = [c for c in doc.get("requires_capabilities") or [] if c not in CAPABILITIES]
    if missing:
        raise Unsupported("requires capabilities not advertised: " + ", ".join(missing))
    ver = str(doc.get("dms_version", ""))
    if ver not in SUPPORTED_DMS_VERSIONS:
        raise Unsupported("dms_version %r (the runner loads DMS %s models)"
                          % (ver, "/".join(SUPPORTED_DMS_VERSIONS)))
    if not doc.get("model"):
        raise StepFailure("scenario has no `model`")
    reset = True
    if doc.get("seed_runtime"):
        if interop_mode == "skip":
            raise Unsupported("interop scenario seeded by %s (--interop skip)"
                              % doc["seed_runtime"])
        if interop_mode == "read":
            steps = [("read_steps", s) for s in doc.get("read_steps") or []]
            reset = False
        else:
            steps = ([("seed_steps", s) for s in doc.get("seed_steps") or []]
                     + [("read_steps", s) for s in doc.get("read_steps") or []])
    else:
        steps = [("steps", s) for s in doc.get("steps") or []]
    if not steps:
        raise StepFailure("scenario has no steps")
    model = ctx.model(doc["model"])
    tname = (doc.get("table") or {}).get("name")
    if tname and model.table and tname != model.table:
        raise Unsupported("table %s differs from model %s's table %s; the HTTP API cannot bind a "
                          "model to another table" % (tname, model.name, model.table))
    compiled = []
    for i, (group, step) in enumerate(steps):
        if not isinstance(step, dict) or "op" not in step:
            raise StepFailure("%s[%d]: a step needs `op`" % (group, i))
        where = "step %d (%s)" % (i + 1, step["op"])
        comp = COMPILERS.get(step["op"])
        if comp is None:
            raise Unsupported("%s: op %s has no HTTP API mapping" % (where, step["op"]))
        run = comp(step, ctx, where)
        check = compile_expect(step, ctx, where)
        compiled.append((where, run, check))
    return reset, compiled


def reset_tables(ctx, models):
    tables = []
    for name in models:
        status, body, err = _api_call(ctx, "reset", "DELETE",
                                      "/v1/models/%s/table" % _q(name), ok=(200, 202, 204))
        if err and err.status == 403:
            raise StepFailure("table reset refused (start the daemon with --allow-table-delete)")
        if err and err.status != 404:
            raise StepFailure("DELETE table of %s: %s" % (name, err.describe()))
        tables.append(name)
    for name in tables:
        status, body, err = _api_call(ctx, "reset", "PUT", "/v1/models/%s/table" % _q(name),
                                      ok=(200, 201))
        if err:
            raise StepFailure("PUT table of %s: %s" % (name, err.describe()))


def run_scenario(sc, registry, client, interop_mode):
    """Returns ("PASS"|"FAIL"|"SKIP", reason)."""
    ctx = Ctx(registry, client, (sc.doc or {}).get("model") if isinstance(sc.doc, dict) else None)
    try:
        reset, steps = plan(sc, ctx, interop_mode)
    except Unsupported as e:
        return "SKIP", str(e)
    except StepFailure as e:
        return "FAIL", "fixture: %s" % e
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        return "FAIL", "fixture: malformed (%s: %s)" % (type(e).__name__, e)
    try:
        if reset:
            reset_tables(ctx, ctx.models_used)
        for where, run, check in steps:
            r = run()
            check(r)
    except StepFailure as e:
        return "FAIL", str(e)
    except Exception as e:  # noqa: BLE001 - one broken scenario must not stop the run
        return "FAIL", "runner error: %s: %s" % (type(e).__name__, e)
    return "PASS", ""


def _one_line(text):
    return " ".join(str(text).split())


# --------------------------------------------------------------------------------------------
# The daemon process


class DaemonProcess:
    def __init__(self, path, models_dir, ready_timeout):
        self.log = tempfile.NamedTemporaryFile(prefix="tt-conformance-", suffix=".log",
                                               delete=False)
        argv = [path, "--listen", "127.0.0.1:0", "--models", models_dir,
                "--allow-table-delete", "--enable-fault-injection", "--test-clock"]
        env = {k: v for k, v in os.environ.items() if not k.startswith("TABLETHEORYD_")}
        # tests/integration/run.sh and run-daemon.sh point us at a DynamoDB
        # peer (dynalite, moto) this way; tables are reset per scenario anyway.
        if os.environ.get("TT_PEER_ENDPOINT"):
            argv += ["--backend", "dynamodb", "--endpoint", os.environ["TT_PEER_ENDPOINT"],
                     "--region", "us-east-1"]
            env.setdefault("AWS_ACCESS_KEY_ID", "testing")
            env.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=self.log,
                                     stdin=subprocess.DEVNULL, env=env)
        self.listen = self._wait_ready(ready_timeout)

    def log_text(self):
        with open(self.log.name, "r", errors="replace") as f:
            return f.read()

    def _wait_ready(self, timeout):
        deadline = time.time() + timeout
        while True:
            for line in self.log_text().splitlines():
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue
                if isinstance(ev, dict) and ev.get("event") == "daemon.ready":
                    return ev.get("listen")
            if self.proc.poll() is not None:
                raise RuntimeError("daemon exited with status %d before daemon.ready:\n%s"
                                   % (self.proc.returncode, self.log_text()[-4000:]))
            if time.time() > deadline:
                self.kill()
                raise RuntimeError("no daemon.ready log line within %.0fs:\n%s"
                                   % (timeout, self.log_text()[-4000:]))
            time.sleep(0.02)

    def stop(self, timeout=30):
        """SIGTERM, then the exit status (None if it had to be killed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def cleanup(self):
        try:
            os.unlink(self.log.name)
        except OSError:
            pass


# --------------------------------------------------------------------------------------------
# Command line


def default_scenarios_dir():
    return os.path.join(REPO_ROOT, "tests", "data", "tabletheory", "scenarios")


def default_models_dir():
    return os.path.join(REPO_ROOT, "tests", "data", "tabletheory", "dms", "v0.2", "models")


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="run.py", description="Run the TableTheory contract scenarios against tabletheoryd.")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--daemon", help="path of the tabletheoryd binary to start (env TT_DAEMON)")
    g.add_argument("--url", help="URL of a running daemon, e.g. http://127.0.0.1:8737 "
                                 "(env TT_URL)")
    p.add_argument("--scenarios", help="scenario directory (default: the vendored "
                                       "tests/data/tabletheory/scenarios)")
    p.add_argument("--models", help="DMS model directory (default: "
                                    "tests/data/tabletheory/dms/v0.2/models)")
    p.add_argument("-k", dest="select", help="run only scenarios whose name or file contains "
                                             "this substring")
    p.add_argument("--interop", choices=("seed", "read", "skip"), default=DEFAULT_INTEROP_MODE,
                   help="interop scenarios: act as the seeding runtime (seed, default), run "
                        "only read_steps on data another runtime seeded (read), or skip")
    p.add_argument("--ready-timeout", type=float, default=30.0,
                   help="seconds to wait for the daemon.ready log line")
    p.add_argument("-v", "--verbose", action="store_true", help="log every HTTP exchange "
                                                                "to stderr")
    return p.parse_args(argv)


def main(argv=None, out=None):
    out = out or sys.stdout
    args = parse_args(argv)
    daemon_path = args.daemon
    url = args.url
    if not daemon_path and not url:
        daemon_path = os.environ.get("TT_DAEMON") or None
        url = None if daemon_path else (os.environ.get("TT_URL") or None)
    if not daemon_path and not url:
        sys.stderr.write("run.py: give --daemon PATH or --url URL (or TT_DAEMON / TT_URL)\n")
        return 2
    scenarios_dir = args.scenarios or default_scenarios_dir()
    if not os.path.isdir(scenarios_dir):
        sys.stderr.write("run.py: scenario directory %s does not exist (give --scenarios)\n"
                         % scenarios_dir)
        return 2
    models_dir = os.path.abspath(args.models or default_models_dir())
    if not os.path.isdir(models_dir):
        sys.stderr.write("run.py: models directory %s does not exist\n" % models_dir)
        return 2
    registry = ModelRegistry(models_dir)
    if registry.errors:
        sys.stderr.write("run.py: cannot load models:\n  %s\n" % "\n  ".join(registry.errors))
        return 2

    daemon = None
    if daemon_path:
        if not os.access(daemon_path, os.X_OK):
            sys.stderr.write("run.py: %s is not an executable\n" % daemon_path)
            return 2
        try:
            daemon = DaemonProcess(daemon_path, models_dir, args.ready_timeout)
        except (OSError, RuntimeError) as e:
            sys.stderr.write("run.py: cannot start the daemon: %s\n" % e)
            return 2
        url = "http://" + daemon.listen
    try:
        client = Client(url, os.environ.get("TT_AUTH_TOKEN"), args.verbose)
    except ValueError as e:
        sys.stderr.write("run.py: %s\n" % e)
        if daemon:
            daemon.kill()
        return 2

    passed = failed = skipped = 0
    try:
        for rel, path in discover(scenarios_dir):
            try:
                doc = load_yaml(path)
            except (OSError, yaml.YAMLError) as e:
                sc = Scenario(path, rel, None)
                result, reason = "FAIL", "cannot load %s: %s" % (rel, e)
            else:
                sc = Scenario(path, rel, doc)
                if args.select and args.select not in sc.name and args.select not in rel:
                    continue
                result, reason = run_scenario(sc, registry, client, args.interop)
            if args.select and args.select not in sc.name and args.select not in rel:
                continue
            if result == "PASS":
                passed += 1
                out.write("PASS %s\n" % sc.name)
            elif result == "SKIP":
                skipped += 1
                out.write("SKIP %s: %s\n" % (sc.name, _one_line(reason)))
            else:
                failed += 1
                out.write("FAIL %s: %s\n" % (sc.name, _one_line(reason)))
            out.flush()
    finally:
        client.close()
        if daemon is not None:
            rc = daemon.stop()
            if rc != 0:
                failed += 1
                out.write("FAIL daemon.shutdown: %s after SIGTERM\n"
                          % ("no exit within 30s" if rc is None else "exit status %d" % rc))
                sys.stderr.write("daemon log (tail):\n%s\n" % daemon.log_text()[-4000:])
            daemon.cleanup()
    out.write("%d passed, %d failed, %d skipped\n" % (passed, failed, skipped))
    out.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
