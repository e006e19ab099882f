# SPDX-License-Identifier: Apache-2.0
"""Builders for the daemon's condition language and operator-form updates (docs/api.md).
Values are always sent as values; the daemon binds them as placeholders."""


class Cond:
    """A condition; combine with & (and), | (or), ~ (not). Plain dicts work too."""

    def __init__(self, doc):
        self.doc = doc

    def to_json(self):
        return self.doc

    def __and__(self, other):
        return Cond({"and": [self.doc, _cond_json(other)]})

    def __or__(self, other):
        return Cond({"or": [self.doc, _cond_json(other)]})

    def __invert__(self):
        return Cond({"not": self.doc})

    def __repr__(self):
        return "Cond(%r)" % (self.doc,)


def _cond_json(c):
    if c is None:
        return None
    if isinstance(c, Cond):
        return c.doc
    if isinstance(c, (list, tuple)):
        return [_cond_json(x) for x in c]
    return c


class _Size:
    def __init__(self, path):
        self.path = path

    def _op(self, op, n):
        return Cond({"attr": self.path, "size": op, "value": n})

    def eq(self, n): return self._op("=", n)
    def ne(self, n): return self._op("<>", n)
    def lt(self, n): return self._op("<", n)
    def le(self, n): return self._op("<=", n)
    def gt(self, n): return self._op(">", n)
    def ge(self, n): return self._op(">=", n)


class attr:  # noqa: N801 -- reads like the condition language: attr("a").eq(1)
    """An attribute path (`a.b[0]`) to build conditions on."""

    def __init__(self, path):
        self.path = path

    def _op(self, op, value=None, has_value=True):
        doc = {"attr": self.path, "op": op}
        if has_value:
            doc["value"] = value
        return Cond(doc)

    def eq(self, v): return self._op("=", v)
    def ne(self, v): return self._op("<>", v)
    def lt(self, v): return self._op("<", v)
    def le(self, v): return self._op("<=", v)
    def gt(self, v): return self._op(">", v)
    def ge(self, v): return self._op(">=", v)
    def between(self, lo, hi): return self._op("between", [lo, hi])
    def is_in(self, values): return self._op("in", list(values))
    def begins_with(self, prefix): return self._op("begins_with", prefix)
    def contains(self, v): return self._op("contains", v)
    def not_contains(self, v): return self._op("not_contains", v)
    def exists(self): return self._op("exists", has_value=False)
    def not_exists(self): return self._op("not_exists", has_value=False)
    def is_type(self, t): return self._op("type", t)

    @property
    def size(self):
        return _Size(self.path)


class Update:
    """An operator-form update: Update().set("a", 1).remove("b").add("n", 2)...

    set/set_if_not_exists/add/delete/append/prepend take (path, value) or a dict;
    remove takes paths. add on a number adds, on a set adds members; delete removes set
    members; append/prepend extend a list."""

    _OPS = ("set", "set_if_not_exists", "add", "delete", "append", "prepend")

    def __init__(self):
        self.doc = {}

    def _put(self, op, path, value, more):
        d = self.doc.setdefault(op, {})
        if isinstance(path, dict):
            d.update(path)
        else:
            d[path] = value
        d.update(more)
        return self

    def set(self, path=None, value=None, **more): return self._put("set", path or {}, value, more)

    def set_if_not_exists(self, path=None, value=None, **more):
        return self._put("set_if_not_exists", path or {}, value, more)

    def add(self, path=None, value=None, **more): return self._put("add", path or {}, value, more)

    def delete(self, path=None, value=None, **more):
        return self._put("delete", path or {}, value, more)

    def append(self, path=None, value=None, **more):
        return self._put("append", path or {}, value, more)

    def prepend(self, path=None, value=None, **more):
        return self._put("prepend", path or {}, value, more)

    def remove(self, *paths):
        self.doc.setdefault("remove", []).extend(paths)
        return self

    def to_json(self):
        return dict(self.doc)

    def __repr__(self):
        return "Update(%r)" % (self.doc,)
