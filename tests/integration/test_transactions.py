# SPDX-License-Identifier: Apache-2.0
"""Transactions over HTTP (docs/batch.md, Transactions): transactions/write with
create/put/update/delete/check across models, all or nothing, per-item
cancellation reasons, version checks and lifecycle fields, client tokens;
transactions/get in request order with null for missing items. Everything
that is wrong in a body is refused before any I/O.

dynalite does not implement TransactWriteItems/TransactGetItems; on the
dynamodb backend these tests need moto or DynamoDB itself."""
import os
import re

import pytest

from items_fixtures import assert_error, item_path, mdaemon  # noqa: F401
from daemon import skip_on  # noqa: E402

pytestmark = skip_on("dynalite", "dynalite does not implement TransactWriteItems or TransactGetItems (docs/design.md, Peers); these run on moto and memory")

WRITE = "/v1/transactions/write"
GET = "/v1/transactions/get"
METRIC_RE = re.compile(r'^([a-z_]+)(?:\{(.*)\})? (\S+)$')

_seq = iter(range(1, 1 << 30))


def uid(prefix="x"):
    return "%s-%d-%d" % (prefix, os.getpid(), next(_seq))


def calls(d, op):
    status, _, data = d.request("GET", "/metrics")
    total = 0.0
    for line in data.decode().splitlines():
        m = METRIC_RE.match(line)
        if m and m.group(1) == "tabletheoryd_backend_calls_total" and \
                'op="%s"' % op in (m.group(2) or ""):
            total += float(m.group(3))
    return total


def tx(d, items, **extra):
    body = {"items": items}
    body.update(extra)
    return d.json("POST", WRITE, body=body)


def get_item(d, model, *key):
    status, _, body = d.json("GET", item_path(model, *key))
    return body if status == 200 else None


def create(d, model, item):
    status, _, body = d.json("POST", "/v1/models/%s/items" % model, body=item)
    assert status == 201, body
    return body


# ---- write ------------------------------------------------------------------------

def test_write_across_models_all_kinds(mdaemon):
    pk = uid("USER#tx")
    t = uid("tenant")
    create(mdaemon, "User", {"PK": pk, "SK": "A", "nickname": "a"})
    create(mdaemon, "User", {"PK": pk, "SK": "D", "nickname": "d"})
    create(mdaemon, "Line", {"tenant": t, "n": 1, "label": "check-me"})
    mdaemon.advance_clock(1)  # the update's updatedAt follows A's createdAt
    status, _, body = tx(mdaemon, [
        {"op": "create", "model": "User", "item": {"PK": pk, "SK": "B", "nickname": "b"}},
        {"op": "put", "model": "Line", "item": {"tenant": t, "n": 2, "label": "put"}},
        {"op": "update", "model": "User", "key": {"PK": pk, "SK": "A"},
         "set": {"nickname": "a2"}, "expected_version": 0},
        {"op": "delete", "model": "User", "key": {"PK": pk, "SK": "D"}},
        {"op": "check", "model": "Line", "key": {"tenant": t, "n": 1},
         "condition": {"attr": "label", "op": "=", "value": "check-me"}},
    ])
    assert status == 200 and body == {"ok": True}, body
    b = get_item(mdaemon, "User", pk, "B")
    assert b["nickname"] == "b" and b["version"] == 0 and b["createdAt"] == b["updatedAt"]
    assert get_item(mdaemon, "Line", t, 2)["label"] == "put"
    a = get_item(mdaemon, "User", pk, "A")
    assert a["nickname"] == "a2" and a["version"] == 1 and a["updatedAt"] > a["createdAt"]
    assert get_item(mdaemon, "User", pk, "D") is None


def test_cancellation_has_a_reason_per_item_and_writes_nothing(mdaemon):
    pk = uid("USER#tc")
    create(mdaemon, "User", {"PK": pk, "SK": "A", "nickname": "a"})
    create(mdaemon, "User", {"PK": pk, "SK": "E", "nickname": "e"})
    create(mdaemon, "User", {"PK": pk, "SK": "V", "nickname": "v"})
    create(mdaemon, "User", {"PK": pk, "SK": "W", "nickname": "w"})
    before = get_item(mdaemon, "User", pk, "A")
    status, hdrs, body = tx(mdaemon, [
        {"op": "update", "model": "User", "key": {"PK": pk, "SK": "A"}, "set": {"nickname": "z"}},
        {"op": "create", "model": "User", "item": {"PK": pk, "SK": "E"}},
        {"op": "update", "model": "User", "key": {"PK": pk, "SK": "V"},
         "set": {"nickname": "w"}, "expected_version": 7},
        {"op": "check", "model": "User", "key": {"PK": pk, "SK": "W"},
         "condition": {"attr": "nickname", "op": "=", "value": "nope"}},
        {"op": "update", "model": "User", "key": {"PK": pk, "SK": "MISSING"},
         "set": {"nickname": "m"}},
        {"op": "create", "model": "User", "item": {"PK": pk, "SK": "NEW"}},
    ])
    err = assert_error(status, hdrs, body, 409, "TransactionCanceled")
    assert err["retryable"] is False
    reasons = err["details"]["reasons"]
    assert [r["index"] for r in reasons] == list(range(6))
    assert [r["code"] for r in reasons] == ["None", "ConditionalCheckFailed", "VersionConflict",
                                            "ConditionalCheckFailed", "ConditionalCheckFailed",
                                            "None"]
    assert reasons[2]["expected_version"] == 7 and reasons[2]["version"] == 0
    assert "exists" in reasons[1]["message"] and "no item" in reasons[4]["message"]
    assert pk not in body["error"]["message"]
    assert get_item(mdaemon, "User", pk, "A") == before
    assert get_item(mdaemon, "User", pk, "NEW") is None


def test_put_and_delete_check_versions(mdaemon):
    t = uid("tenant")
    create(mdaemon, "Line", {"tenant": t, "n": 1, "label": "a"})
    status, _, body = tx(mdaemon, [{"op": "put", "model": "Line",
                                    "item": {"tenant": t, "n": 1, "label": "b", "version": 0}}])
    assert status == 200, body
    assert get_item(mdaemon, "Line", t, 1)["version"] == 1
    status, hdrs, body = tx(mdaemon, [{"op": "put", "model": "Line", "expected_version": 0,
                                       "item": {"tenant": t, "n": 1, "label": "c"}}])
    err = assert_error(status, hdrs, body, 409, "TransactionCanceled")
    assert err["details"]["reasons"][0]["code"] == "VersionConflict"
    status, hdrs, body = tx(mdaemon, [{"op": "delete", "model": "Line",
                                       "key": {"tenant": t, "n": 1}, "expected_version": 5}])
    err = assert_error(status, hdrs, body, 409, "TransactionCanceled")
    assert err["details"]["reasons"][0] == {"index": 0, "code": "VersionConflict",
                                            "expected_version": 5, "version": 1,
                                            "message": err["details"]["reasons"][0]["message"]}
    status, _, body = tx(mdaemon, [{"op": "delete", "model": "Line",
                                    "key": {"tenant": t, "n": 1}, "expected_version": 1}])
    assert status == 200, body
    assert get_item(mdaemon, "Line", t, 1) is None


def test_update_forms_upsert_and_condition(mdaemon):
    t = uid("tenant")
    status, _, body = tx(mdaemon, [{"op": "update", "model": "Line", "key": {"tenant": t, "n": 1},
                                    "set": {"label": "up"}, "upsert": True}])
    assert status == 200, body
    got = get_item(mdaemon, "Line", t, 1)
    assert got["label"] == "up" and got["version"] == 1 and "createdAt" in got
    # TableTheory form; the key may come from the item.
    status, _, body = tx(mdaemon, [{"op": "update", "model": "Line", "fields": ["note"],
                                    "item": {"tenant": t, "n": 1, "note": "n", "version": 1}}])
    assert status == 200, body
    assert get_item(mdaemon, "Line", t, 1)["note"] == "n"
    # omit_empty: a set of "" removes the attribute.
    status, _, body = tx(mdaemon, [{"op": "update", "model": "Line", "key": {"tenant": t, "n": 1},
                                    "set": {"note": ""},
                                    "condition": {"attr": "label", "op": "=", "value": "up"}}])
    assert status == 200, body
    assert "note" not in get_item(mdaemon, "Line", t, 1)
    status, hdrs, body = tx(mdaemon, [{"op": "update", "model": "Line",
                                       "key": {"tenant": t, "n": 1}, "set": {"label": "x"},
                                       "condition": {"attr": "label", "op": "=", "value": "no"}}])
    err = assert_error(status, hdrs, body, 409, "TransactionCanceled")
    assert err["details"]["reasons"][0]["code"] == "ConditionalCheckFailed"


@pytest.mark.parametrize("entry,field", [
    ({"op": "update", "key": {"PK": "P", "SK": "S"}, "set": {"createdAt": "2026-01-01T00:00:00Z"}},
     "items[1].set.createdAt"),
    ({"op": "update", "key": {"PK": "P", "SK": "S"}, "set": {"updatedAt": "2026-01-01T00:00:00Z"}},
     "items[1].set.updatedAt"),
    ({"op": "update", "key": {"PK": "P", "SK": "S"}, "set": {"version": 9}},
     "items[1].set.version"),
    ({"op": "create", "item": {"PK": "P", "SK": "S", "createdAt": "2026-01-01T00:00:00Z"}},
     "items[1].item.createdAt"),
    ({"op": "create", "item": {"PK": "P", "SK": "S", "version": 1}}, "items[1].item.version"),
    ({"op": "put", "item": {"PK": "P", "SK": "S", "updatedAt": "2026-01-01T00:00:00Z"}},
     "items[1].item.updatedAt"),
])
def test_lifecycle_fields_by_hand_are_400(mdaemon, entry, field):
    entry = dict(entry, model="User")
    before = calls(mdaemon, "TransactWriteItems")
    status, hdrs, body = tx(mdaemon, [{"op": "create", "model": "User",
                                       "item": {"PK": uid("P"), "SK": "S"}}, entry])
    err = assert_error(status, hdrs, body, 400, "ValidationError")
    assert err["details"]["field"] == field, body
    assert calls(mdaemon, "TransactWriteItems") == before


def test_two_actions_on_one_item_are_400_before_io(mdaemon):
    pk = uid("USER#dup")
    before = calls(mdaemon, "TransactWriteItems")
    status, hdrs, body = tx(mdaemon, [
        {"op": "create", "model": "User", "item": {"PK": pk, "SK": "A"}},
        {"op": "create", "model": "User", "item": {"PK": pk, "SK": "B"}},
        {"op": "check", "model": "User", "key": {"PK": pk, "SK": "A"},
         "condition": {"attr": "PK", "op": "exists"}},
    ])
    err = assert_error(status, hdrs, body, 400, "ValidationError", "items[2]")
    assert "items[0]" in err["message"]
    assert calls(mdaemon, "TransactWriteItems") == before
    assert get_item(mdaemon, "User", pk, "B") is None


def test_bad_item_anywhere_refuses_before_io(mdaemon):
    before = calls(mdaemon, "TransactWriteItems")
    items = [{"op": "create", "model": "Line", "item": {"tenant": uid("t"), "n": i}}
             for i in range(60)]
    items[57] = {"op": "update", "model": "Line", "key": {"tenant": "t", "n": 1},
                 "set": {"label": "x"}, "condition": {"attr": "label", "op": "~", "value": 1}}
    status, hdrs, body = tx(mdaemon, items)
    err = assert_error(status, hdrs, body, 400, "ValidationError")
    assert err["details"]["field"].startswith("items[57].condition"), body
    items[57] = {"op": "update", "model": "Line", "key": {"tenant": "t", "n": 1},
                 "set": {"label": "x", "label.y": 1}}
    status, hdrs, body = tx(mdaemon, items)
    err = assert_error(status, hdrs, body, 400, "ValidationError")
    assert err["details"]["field"].startswith("items[57]"), body
    assert calls(mdaemon, "TransactWriteItems") == before
    assert get_item(mdaemon, "Line", items[0]["item"]["tenant"], 0) is None


@pytest.mark.parametrize("body,code,field", [
    ({"items": []}, "ValidationError", "items"),
    ({}, "ValidationError", "items"),
    ({"items": [{"op": "check", "model": "User", "key": {"PK": "a", "SK": "b"},
                 "condition": {"attr": "PK", "op": "exists"}}] * 101}, "ValidationError", "items"),
    ({"items": [{"op": "merge", "model": "User"}]}, "ValidationError", "items[0].op"),
    ({"items": [{"op": "create", "model": "Nope", "item": {}}]}, "ModelNotFound",
     "items[0].model"),
    ({"items": [{"op": "check", "model": "User", "key": {"PK": "a", "SK": "b"}}]},
     "ValidationError", "items[0]"),
    ({"items": [{"op": "delete", "model": "User", "item": {"PK": "a", "SK": "b"}}]},
     "ValidationError", "items[0].item"),
    ({"items": [{"op": "create", "model": "User", "item": {"PK": "a", "SK": "b"},
                 "expected_version": 1}]}, "ValidationError", "items[0].expected_version"),
    ({"items": [{"op": "delete", "model": "User", "key": {"PK": "a"}}]}, "ValidationError",
     "items[0].key.SK"),
    ({"items": [{"op": "delete", "model": "Counter", "key": {"n": 1}, "expected_version": 1}]},
     "ValidationError", "items[0].expected_version"),
    ({"client_token": "x" * 37, "items": [{"op": "delete", "model": "Counter", "key": {"n": 1}}]},
     "ValidationError", "client_token"),
    ({"retry_conflicts": "yes", "items": [{"op": "delete", "model": "Counter", "key": {"n": 1}}]},
     "ValidationError", "retry_conflicts"),
    ({"items": [{"op": "delete", "model": "Counter", "key": {"n": 1}, "extra": 1}]},
     "ValidationError", "items[0].extra"),
    ({"atomic": True, "items": []}, "ValidationError", "atomic"),
])
def test_malformed_bodies(mdaemon, body, code, field):
    before = calls(mdaemon, "TransactWriteItems")
    status, hdrs, got = mdaemon.json("POST", WRITE, body=body)
    assert_error(status, hdrs, got, 404 if code == "ModelNotFound" else 400, code, field)
    assert calls(mdaemon, "TransactWriteItems") == before


@skip_on("moto", "moto's server does not implement ClientRequestToken idempotency for "
                 "TransactWriteItems (DynamoDB does, for 10 minutes)")
def test_client_token_makes_a_retry_idempotent(mdaemon):
    wid = uid("w")
    create(mdaemon, "Wallet", {"id": wid, "balance": 0})
    body = {"client_token": uid("tok")[:36], "items": [
        {"op": "update", "model": "Wallet", "key": {"id": wid}, "add": {"balance": 5}}]}
    status, _, got = mdaemon.json("POST", WRITE, body=body)
    assert status == 200, got
    status, _, got = mdaemon.json("POST", WRITE, body=body)  # the client's retry
    assert status == 200, got
    w = get_item(mdaemon, "Wallet", wid)
    assert w["balance"] == 5 and w["version"] == 1  # applied once
    body["items"][0]["add"]["balance"] = 6  # same token, another request
    status, hdrs, got = mdaemon.json("POST", WRITE, body=body)
    assert_error(status, hdrs, got, 400, "ValidationError", "client_token")
    assert get_item(mdaemon, "Wallet", wid)["balance"] == 5


def test_conformance_atomicity_scenario(mdaemon):
    """p2.transact_write_atomicity: a failed condition rolls back a put."""
    pk = uid("USER#TXW")
    create(mdaemon, "User", {"PK": pk, "SK": "ITEM#001", "nickname": "seed"})
    status, hdrs, body = tx(mdaemon, [
        {"op": "update", "model": "User", "key": {"PK": pk, "SK": "ITEM#001"},
         "set": {"nickname": "no"}, "condition": {"attr": "PK", "op": "not_exists"}},
        {"op": "put", "model": "User", "item": {"PK": pk, "SK": "ITEM#003", "nickname": "rb"}},
    ])
    err = assert_error(status, hdrs, body, 409, "TransactionCanceled")
    assert [r["code"] for r in err["details"]["reasons"]] == ["ConditionalCheckFailed", "None"]
    assert get_item(mdaemon, "User", pk, "ITEM#003") is None
    assert get_item(mdaemon, "User", pk, "ITEM#001")["nickname"] == "seed"


# ---- get ----------------------------------------------------------------------------

def test_get_in_request_order_with_null(mdaemon):
    pk = uid("USER#tg")
    t = uid("tenant")
    create(mdaemon, "User", {"PK": pk, "SK": "1", "nickname": "one"})
    create(mdaemon, "Line", {"tenant": t, "n": 2, "label": "two", "note": "n"})
    status, _, body = mdaemon.json("POST", GET, body={"items": [
        {"model": "Line", "key": {"tenant": t, "n": 2}, "select": ["label"]},
        {"model": "User", "key": {"PK": pk, "SK": "missing"}},
        {"model": "User", "key": {"PK": pk, "SK": "1"}},
    ]})
    assert status == 200, body
    assert body["items"][0] == {"label": "two"}
    assert body["items"][1] is None
    assert body["items"][2]["nickname"] == "one" and body["items"][2]["version"] == 0


@pytest.mark.parametrize("body,code,field", [
    ({"items": [{"model": "User", "key": {"PK": "a", "SK": "b"}}] * 101}, "ValidationError",
     "items"),
    ({"items": [{"model": "User", "key": {"PK": "a", "SK": "b"}},
                {"model": "User", "key": {"PK": "a", "SK": "b"}}]}, "ValidationError", "items[1]"),
    ({"items": [{"model": "User", "key": {"PK": "a"}}]}, "ValidationError", "items[0].key.SK"),
    ({"items": [{"model": "User", "key": {"PK": "a", "SK": "b"}, "select": ["zzz"]}]},
     "ValidationError", "items[0].select.zzz"),
    ({"items": [{"model": "User", "key": {"PK": "a", "SK": "b"}, "select": []}]},
     "ValidationError", "items[0].select"),
    ({"items": [{"model": "User", "key": {"PK": "a", "SK": "b"}, "select": "PK"}]},
     "ValidationError", "items[0].select"),
    ({"items": [{"model": "Nope", "key": {}}]}, "ModelNotFound", "items[0].model"),
    ({"items": [{"op": "get", "model": "User", "key": {"PK": "a", "SK": "b"}}]},
     "ValidationError", "items[0].op"),
    ({"client_token": "a", "items": [{"model": "User", "key": {"PK": "a", "SK": "b"}}]},
     "ValidationError", "client_token"),
])
def test_get_malformed_bodies(mdaemon, body, code, field):
    before = calls(mdaemon, "TransactGetItems")
    status, hdrs, got = mdaemon.json("POST", GET, body=body)
    assert_error(status, hdrs, got, 404 if code == "ModelNotFound" else 400, code, field)
    assert calls(mdaemon, "TransactGetItems") == before
