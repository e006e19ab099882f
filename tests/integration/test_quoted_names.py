# SPDX-License-Identifier: Apache-2.0
"""Attribute names with '.', '[' or ']' (only undeclared attributes of a
model with additional attributes can have them) are addressed in paths
between backticks (docs/api.md "Attribute paths"): `a.b` is the one
attribute named "a.b", while a.b is b inside a. Filter, select, conditions
and updates take them; on memory, dynalite and moto."""
import urllib.parse

from items_fixtures import assert_error, item_path, mdaemon  # noqa: F401


def put(d, item):
    status, _, body = d.json("POST", "/v1/models/Loose/items", item)
    assert status == 201, body
    return body


def scan(d, body):
    status, _, got = d.json("POST", "/v1/models/Loose/scan", dict(body, consistent=True))
    assert status == 200, got
    return got["items"]


def test_a_dotted_name_is_filtered_and_selected(mdaemon):
    put(mdaemon, {"id": "q-dot-1", "a.b": "flat", "a": {"b": "nested"}, "x[0]": 7})
    put(mdaemon, {"id": "q-dot-2", "a.b": "other"})
    only = {"attr": "id", "op": "begins_with", "value": "q-dot-"}
    # The attribute "a.b" itself, not b inside a.
    items = scan(mdaemon, {"filter": [only, {"attr": "`a.b`", "op": "=", "value": "flat"}]})
    assert [it["id"] for it in items] == ["q-dot-1"]
    items = scan(mdaemon, {"filter": [only, {"attr": "a.b", "op": "=", "value": "nested"}]})
    assert [it["id"] for it in items] == ["q-dot-1"]
    items = scan(mdaemon, {"filter": [only, {"attr": "`x[0]`", "op": "=", "value": 7}]})
    assert [it["id"] for it in items] == ["q-dot-1"]
    items = scan(mdaemon, {"filter": [only, {"attr": "`a.b`", "op": "exists"}],
                           "select": ["id", "`a.b`"]})
    assert sorted((it["id"], it["a.b"]) for it in items) == [("q-dot-1", "flat"),
                                                             ("q-dot-2", "other")]
    assert all(set(it) == {"id", "a.b"} for it in items), items
    # docs/api.md's example, as written there.
    status, _, got = mdaemon.json("POST", "/v1/models/Loose/scan",
                                  {"filter": {"attr": "`a.b`", "op": "=", "value": "flat"},
                                   "select": ["id", "`a.b`"]})
    assert status == 200, got
    assert got["items"] == [{"a.b": "flat", "id": "q-dot-1"}] and got["count"] == 1, got
    assert got["cursor"] is None, got
    # A nested path under a quoted name, and the quoted name of a plain one.
    items = scan(mdaemon, {"filter": [only, {"attr": "`a`.`b`", "op": "=", "value": "nested"}],
                           "select": ["`a`.b", "`id`"]})
    assert items == [{"id": "q-dot-1", "a": {"b": "nested"}}], items


def test_a_dotted_name_is_updated_and_read(mdaemon):
    put(mdaemon, {"id": "q-dot-3", "a.b": 1})
    status, _, body = mdaemon.json("PATCH", item_path("Loose", "q-dot-3"),
                                   {"set": {"`a.b`": 2, "`c]`": "z"},
                                    "condition": {"attr": "`a.b`", "op": "=", "value": 1}})
    assert status == 200, body
    assert body["a.b"] == 2 and body["c]"] == "z" and "a" not in body, body
    sel = urllib.parse.quote("`a.b`,id", safe="")
    status, _, body = mdaemon.json("GET", item_path("Loose", "q-dot-3") + "?select=" + sel)
    assert status == 200 and body == {"id": "q-dot-3", "a.b": 2}, body
    status, _, body = mdaemon.json("PATCH", item_path("Loose", "q-dot-3"),
                                   {"remove": ["`a.b`"]})
    assert status == 200 and "a.b" not in body, body


def test_bad_quoting_is_refused_before_any_io(mdaemon):
    for attr in ("`a.b", "``", "`a`b", "a.`b"):
        status, hdrs, body = mdaemon.json("POST", "/v1/models/Loose/scan",
                                          {"filter": {"attr": attr, "op": "exists"}})
        assert_error(status, hdrs, body, 400, "ValidationError")
    # The same attribute twice, quoted and not, overlaps.
    status, hdrs, body = mdaemon.json("POST", "/v1/models/Loose/scan",
                                      {"select": ["label", "`label`"]})
    assert_error(status, hdrs, body, 400, "ValidationError", "select[1]")


def test_quoting_a_declared_name_still_finds_it(mdaemon):
    # A quoted declared attribute is that attribute: typed as declared.
    status, _, body = mdaemon.json("POST", "/v1/models/Wallet/items",
                                   {"id": "q-dot-w", "balance": 5})
    assert status == 201, body
    status, _, got = mdaemon.json("POST", "/v1/models/Wallet/scan",
                                  {"filter": {"attr": "`balance`", "op": "=", "value": 5},
                                   "select": ["`id`"], "consistent": True})
    assert status == 200 and {"id": "q-dot-w"} in got["items"], got
