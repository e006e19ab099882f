# SPDX-License-Identifier: Apache-2.0
"""Exact JSON for the daemon: Decimal travels as a JSON number, never through a float;
bytes as base64; sets as arrays. Reading turns a model's N/B/SS/NS/BS attributes back
into Decimal, bytes and sets."""
import base64
import functools
import json
from decimal import Decimal
from urllib.parse import quote

_encode_str = json.encoder.encode_basestring_ascii  # the C escaper json.dumps uses


def encode(obj):
    """Returns the JSON text of obj (str). Decimal is written as its exact number,
    bytes as standard base64, set/frozenset as an array (sorted when it can be, so
    that equal sets give equal bodies)."""
    out = []
    _enc(obj, out.append)
    return "".join(out)


def _enc(obj, emit):
    if isinstance(obj, str):
        emit(_encode_str(obj))
    elif obj is None:
        emit("null")
    elif obj is True:
        emit("true")
    elif obj is False:
        emit("false")
    elif isinstance(obj, int):
        emit(int.__repr__(obj))
    elif isinstance(obj, Decimal):
        if not obj.is_finite():
            raise ValueError("a number must be finite, not %s" % obj)
        emit(str(obj))
    elif isinstance(obj, float):
        if obj != obj or obj in (float("inf"), float("-inf")):
            raise ValueError("a number must be finite")
        emit(float.__repr__(obj))
    elif isinstance(obj, dict):
        emit("{")
        first = True
        for k, v in obj.items():
            if not isinstance(k, str):
                raise TypeError("object keys must be strings, not %s" % type(k).__name__)
            if not first:
                emit(",")
            first = False
            emit(_encode_str(k))
            emit(":")
            _enc(v, emit)
        emit("}")
    elif isinstance(obj, (list, tuple)):
        emit("[")
        for i, v in enumerate(obj):
            if i:
                emit(",")
            _enc(v, emit)
        emit("]")
    elif isinstance(obj, (set, frozenset)):
        _enc(_sorted_set(obj), emit)
    elif isinstance(obj, (bytes, bytearray, memoryview)):
        emit('"' + base64.b64encode(bytes(obj)).decode("ascii") + '"')
    elif hasattr(obj, "to_json"):
        _enc(obj.to_json(), emit)
    else:
        raise TypeError("cannot send a %s as JSON" % type(obj).__name__)


def _sorted_set(s):
    try:
        return sorted(s)
    except TypeError:
        return list(s)


_decoder = json.JSONDecoder(parse_float=Decimal)


def decode(data):
    """Parses JSON (UTF-8 bytes) with fractions as Decimal (integers are int): exact."""
    if not data:
        return None
    return _decoder.decode(data.decode("utf-8") if isinstance(data, (bytes, bytearray))
                           else data)


def to_decimal(v):
    if isinstance(v, Decimal):
        return v
    if isinstance(v, (int, str)):
        return Decimal(v)
    raise TypeError("not a number: %r" % (v,))


class ModelTypes:
    """What the reader needs of a model: attribute -> (type, format, roles)."""

    def __init__(self, doc):
        self.name = doc["name"]
        self.doc = doc
        self.types = {}
        self.ints = set()
        for a in doc.get("attributes", []):
            self.types[a["attribute"]] = a["type"]
            roles = a.get("roles") or []
            if a.get("format") in ("int", "unix_seconds") or "version" in roles or "ttl" in roles:
                self.ints.add(a["attribute"])
        # Only these need converting from their JSON form.
        self.special = {k: t for k, t in self.types.items() if t in ("N", "B", "SS", "NS", "BS")}
        keys = doc["keys"]
        self.pk = keys["partition"]["attribute"]
        self.sk = keys["sort"]["attribute"] if keys.get("sort") else None

    def decode_item(self, item):
        """Converts a wire item (parsed JSON) in place to native Python values."""
        if not isinstance(item, dict):
            return item
        special = self.special
        for name, value in item.items():
            t = special.get(name)
            if t is None or value is None:
                continue
            if t == "N":
                if name in self.ints and isinstance(value, int):
                    continue
                d = to_decimal(value)
                if name in self.ints and d == d.to_integral_value():
                    item[name] = int(d)
                else:
                    item[name] = d
            elif t == "B":
                item[name] = base64.b64decode(value)
            elif t == "SS":
                item[name] = set(value)
            elif t == "NS":
                item[name] = {to_decimal(v) for v in value}
            elif t == "BS":
                item[name] = {base64.b64decode(v) for v in value}
        return item

    def key_of(self, item):
        """The key object of an item (or of a key given as a dict)."""
        key = {self.pk: item[self.pk]}
        if self.sk is not None:
            key[self.sk] = item[self.sk]
        return key


def key_segment(value):
    """One percent-encoded path segment for a key value: str as is, numbers as decimal
    text, bytes as base64url (docs/api.md)."""
    from urllib.parse import quote
    if type(value) is str:  # the common case first
        return _quote_str(value)
    if isinstance(value, (bytes, bytearray)):
        text = base64.urlsafe_b64encode(bytes(value)).decode("ascii")
    elif isinstance(value, bool):
        raise TypeError("a key cannot be a bool")
    elif isinstance(value, (int, Decimal)):
        text = str(value)
    elif isinstance(value, str):
        text = value
    else:
        raise TypeError("a key must be str, int, Decimal or bytes, not %s" % type(value).__name__)
    return quote(text, safe="")


@functools.lru_cache(maxsize=4096)
def _quote_str(text):
    # Keys repeat (the same items are read again and again): quoting is cached.
    return quote(text, safe="")
