# SPDX-License-Identifier: Apache-2.0
"""Unique attributes (DMS tags: {unique: true}) kept unique across a table
with guard items "UNIQUE#<Model>#<attr>#<value>", written in the same
transaction as the item: create claims, updates move, deletes release; a
taken value answers 409 ConditionFailed naming the attribute; guards never
show in queries of the model; concurrent writers leave guards consistent.

Models Member (S partition key, unique email and handle) and Account
(composite key, unique N number) of models/batch.yml."""
import json
import os
import random
import threading
import urllib.parse

import pytest

from items_fixtures import assert_error, item_path, mdaemon  # noqa: F401
from daemon import skip_on  # noqa: E402

pytestmark = skip_on("dynalite", "guard items are written in TransactWriteItems, which dynalite does not implement; these run on moto and memory")

MEMBERS = "/v1/models/Member/items"
_seq = iter(range(1, 1 << 30))


def uid(prefix="m"):
    return "%s-%d-%d" % (prefix, os.getpid(), next(_seq))


def guard_path(attr, value, model="Member"):
    return "/v1/models/%s/items/%s" % (
        model, urllib.parse.quote("UNIQUE#%s#%s#%s" % (model, attr, value), safe=""))


def guard(d, attr, value):
    """The stored guard item, or None."""
    status, _, body = d.json("GET", guard_path(attr, value) + "?format=dynamodb")
    return body if status == 200 else None


def create(d, **item):
    return d.json("POST", MEMBERS, body=item)


def test_create_claims_and_duplicate_is_409_naming_the_attribute(mdaemon):
    a, b, email = uid(), uid(), uid("e") + "@example.com"
    status, _, body = create(mdaemon, id=a, email=email, nickname="first")
    assert status == 201, body
    g = guard(mdaemon, "email", email)
    assert g == {"id": {"S": "UNIQUE#Member#email#" + email},
                 "_tt_unique": {"S": "Member#email"},
                 "_tt_owner": {"M": {"id": {"S": a}}}}
    status, hdrs, body = create(mdaemon, id=b, email=email)
    err = assert_error(status, hdrs, body, 409, "ConditionFailed", "email")
    assert email not in json.dumps(body) and "email" in err["message"]
    assert mdaemon.json("GET", item_path("Member", b))[0] == 404
    # Another unique attribute of the same item is independent.
    status, _, body = create(mdaemon, id=b, email=uid("e"), handle=uid("h"))
    assert status == 201, body


def test_update_moves_the_guard(mdaemon):
    a, e1, e2 = uid(), uid("e"), uid("e")
    assert create(mdaemon, id=a, email=e1)[0] == 201
    status, _, body = mdaemon.json("PATCH", item_path("Member", a), body={"set": {"email": e2}})
    assert status == 200 and body["email"] == e2 and body["version"] == 1, body
    assert guard(mdaemon, "email", e1) is None
    assert guard(mdaemon, "email", e2)["_tt_owner"] == {"M": {"id": {"S": a}}}
    # The old value is free again.
    assert create(mdaemon, id=uid(), email=e1)[0] == 201
    # An update that does not touch unique attributes leaves guards alone.
    status, _, body = mdaemon.json("PATCH", item_path("Member", a),
                                   body={"set": {"nickname": "n"}, "expected_version": 1})
    assert status == 200 and body["version"] == 2, body
    assert guard(mdaemon, "email", e2) is not None
    # Removing the value releases it.
    status, _, body = mdaemon.json("PATCH", item_path("Member", a), body={"remove": ["email"]})
    assert status == 200 and "email" not in body
    assert guard(mdaemon, "email", e2) is None


def test_update_to_a_taken_value_is_409_and_changes_nothing(mdaemon):
    a, b, ea, eb = uid(), uid(), uid("e"), uid("e")
    assert create(mdaemon, id=a, email=ea)[0] == 201
    assert create(mdaemon, id=b, email=eb)[0] == 201
    status, hdrs, body = mdaemon.json("PATCH", item_path("Member", b),
                                      body={"set": {"email": ea, "nickname": "x"}})
    assert_error(status, hdrs, body, 409, "ConditionFailed", "email")
    _, _, got = mdaemon.json("GET", item_path("Member", b))
    assert got["email"] == eb and "nickname" not in got and got["version"] == 0
    assert guard(mdaemon, "email", eb) is not None


def test_put_replace_and_delete_release(mdaemon):
    a, e1, e2, h = uid(), uid("e"), uid("e"), uid("h")
    assert create(mdaemon, id=a, email=e1, handle=h)[0] == 201
    status, _, body = mdaemon.json("PUT", item_path("Member", a), body={"id": a, "email": e2})
    assert status == 200, body  # replaced
    assert guard(mdaemon, "email", e1) is None and guard(mdaemon, "handle", h) is None
    assert guard(mdaemon, "email", e2) is not None
    c = uid()
    status, _, body = mdaemon.json("PUT", item_path("Member", c), body={"id": c, "email": e1})
    assert status == 201, body  # created, and e1 was free
    status, _, _ = mdaemon.json("DELETE", item_path("Member", a))
    assert status == 204
    assert guard(mdaemon, "email", e2) is None
    status, hdrs, body = mdaemon.json("DELETE", item_path("Member", a))
    assert_error(status, hdrs, body, 404, "ItemNotFound")


def test_versions_and_conditions_still_apply(mdaemon):
    a, e1 = uid(), uid("e")
    assert create(mdaemon, id=a, email=e1)[0] == 201
    status, hdrs, body = mdaemon.json("PATCH", item_path("Member", a),
                                      body={"set": {"email": uid("e")}, "expected_version": 4})
    err = assert_error(status, hdrs, body, 409, "VersionConflict")
    assert err["details"]["version"] == 0
    status, hdrs, body = mdaemon.json("PUT", item_path("Member", a),
                                      body={"id": a, "email": uid("e")},
                                      headers={"If-None-Match": "*"})
    assert_error(status, hdrs, body, 409, "ConditionFailed", "key")
    status, hdrs, body = mdaemon.json("DELETE", item_path("Member", a),
                                      headers={"If-Match": '"3"'})
    assert_error(status, hdrs, body, 409, "VersionConflict")
    assert guard(mdaemon, "email", e1) is not None
    status, hdrs, body = mdaemon.json("PATCH", item_path("Member", uid()),
                                      body={"set": {"email": uid("e")}})
    assert_error(status, hdrs, body, 404, "ItemNotFound")


def test_guards_are_invisible_in_queries_and_scans(mdaemon):
    email = uid("e")
    a = uid()
    assert create(mdaemon, id=a, email=email, handle=uid("h"))[0] == 201
    status, _, body = mdaemon.json("POST", "/v1/models/Member/scan", body={})
    assert status == 200
    assert all(not it["id"].startswith("UNIQUE#") for it in body["items"]), body
    assert any(it["id"] == a for it in body["items"])
    status, _, body = mdaemon.json("POST", "/v1/models/Member/scan", body={"count": True})
    assert body["scanned_count"] > body["count"]  # guards were read and left out
    status, _, listing = mdaemon.json("POST", "/v1/models/Member/scan", body={})
    assert body["count"] == listing["count"] == len(listing["items"])
    status, _, body = mdaemon.json("POST", "/v1/models/Member/query", body={
        "key": [{"attr": "id", "op": "=", "value": "UNIQUE#Member#email#" + email}]})
    assert status == 200 and body["items"] == [] and body["count"] == 0, body


def test_reserved_keys_and_bad_updates_are_400(mdaemon):
    status, hdrs, body = create(mdaemon, id="UNIQUE#Member#email#x")
    assert_error(status, hdrs, body, 400, "ValidationError", "id")
    status, hdrs, body = mdaemon.json("POST", "/v1/transactions/write", body={"items": [
        {"op": "create", "model": "Member", "item": {"id": "UNIQUE#x"}}]})
    assert_error(status, hdrs, body, 400, "ValidationError", "items[0].id")
    status, hdrs, body = mdaemon.json("POST", "/v1/models/Member/batch-write",
                                      body={"put": [{"id": uid()}]})
    err = assert_error(status, hdrs, body, 400, "ValidationError", "put")
    assert "transactions" in err["message"]


def test_transactions_move_guards_and_report_the_attribute(mdaemon):
    a, b, ea, eb = uid(), uid(), uid("e"), uid("e")
    status, _, body = mdaemon.json("POST", "/v1/transactions/write", body={"items": [
        {"op": "create", "model": "Member", "item": {"id": a, "email": ea}},
        {"op": "create", "model": "Member", "item": {"id": b, "email": eb}}]})
    assert status == 200, body
    assert guard(mdaemon, "email", ea) and guard(mdaemon, "email", eb)
    # Two claims of one value in one transaction.
    status, hdrs, body = mdaemon.json("POST", "/v1/transactions/write", body={"items": [
        {"op": "create", "model": "Member", "item": {"id": uid(), "email": "same" + ea}},
        {"op": "create", "model": "Member", "item": {"id": uid(), "email": "same" + ea}}]})
    assert_error(status, hdrs, body, 409, "ConditionFailed", "items[1].email")
    # A value another item holds: canceled, with the attribute in the reason.
    c = uid()
    status, hdrs, body = mdaemon.json("POST", "/v1/transactions/write", body={"items": [
        {"op": "create", "model": "Member", "item": {"id": c, "email": uid("e")}},
        {"op": "update", "model": "Member", "key": {"id": a}, "set": {"email": eb}}]})
    err = assert_error(status, hdrs, body, 409, "TransactionCanceled")
    assert err["details"]["reasons"][0]["code"] == "None"
    assert err["details"]["reasons"][1]["code"] == "ConditionalCheckFailed"
    assert err["details"]["reasons"][1]["attribute"] == "email"
    assert mdaemon.json("GET", item_path("Member", c))[0] == 404
    # Delete and update together release and move.
    e3 = uid("e")
    status, _, body = mdaemon.json("POST", "/v1/transactions/write", body={"items": [
        {"op": "delete", "model": "Member", "key": {"id": b}},
        {"op": "update", "model": "Member", "key": {"id": a}, "set": {"email": e3}}]})
    assert status == 200, body
    assert guard(mdaemon, "email", eb) is None and guard(mdaemon, "email", ea) is None
    assert guard(mdaemon, "email", e3)["_tt_owner"] == {"M": {"id": {"S": a}}}
    # A swap of two values cannot run in one transaction.
    d2 = uid()
    assert create(mdaemon, id=d2, email=ea)[0] == 201
    status, hdrs, body = mdaemon.json("POST", "/v1/transactions/write", body={"items": [
        {"op": "update", "model": "Member", "key": {"id": a}, "set": {"email": ea}},
        {"op": "update", "model": "Member", "key": {"id": d2}, "set": {"email": e3}}]})
    err = assert_error(status, hdrs, body, 400, "ValidationError")
    assert "email" in err["message"]
    # add cannot be followed by a guard.
    status, hdrs, body = mdaemon.json("POST", "/v1/models/Account/items",
                                      body={"pk": uid("A"), "sk": "S", "number": 7})
    status, hdrs, body = mdaemon.json("PATCH", item_path("Account", body["pk"], "S"),
                                      body={"add": {"number": 1}})
    assert_error(status, hdrs, body, 400, "ValidationError", "add.number")


def test_number_values_and_composite_keys(mdaemon):
    n = random.randint(10 ** 9, 10 ** 12)
    p1, p2 = uid("A"), uid("A")
    status, _, body = mdaemon.json("POST", "/v1/models/Account/items",
                                   body={"pk": p1, "sk": "S", "number": n})
    assert status == 201, body
    status, _, g = mdaemon.json("GET", "/v1/models/Account/items/%s/UNIQUE?format=dynamodb" %
                                urllib.parse.quote("UNIQUE#Account#number#%d" % n, safe=""))
    assert status == 200 and g["sk"] == {"S": "UNIQUE"}, g
    assert g["_tt_owner"] == {"M": {"pk": {"S": p1}, "sk": {"S": "S"}}}
    # "1e3"-style spellings of the same number are the same value.
    status, hdrs, body = mdaemon.json("POST", "/v1/models/Account/items",
                                      body={"pk": p2, "sk": "S", "number": "%d.0" % n})
    assert_error(status, hdrs, body, 409, "ConditionFailed", "number")


def test_concurrent_writers_keep_guards_consistent(mdaemon):
    """Threads create, move, swap-out and delete values from a small pool at
    the same time; afterwards every value is held by at most one item and
    every guard belongs to exactly the item holding its value."""
    ids = [uid("c") for _ in range(8)]
    pool = [uid("v") for _ in range(5)]
    for i in ids[:4]:
        create(mdaemon, id=i)
    # Many creators race for one value: exactly one wins.
    race = uid("race")
    results = []

    def creator():
        results.append(create(mdaemon, id=uid("r"), email=race)[0])

    threads = [threading.Thread(target=creator) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [201] + [409] * 11

    stats = {"ok": 0, "conflict": 0, "other": []}
    lock = threading.Lock()

    def worker(seed):
        rnd = random.Random(seed)
        for _ in range(40):
            i = rnd.choice(ids)
            v = rnd.choice(pool)
            action = rnd.random()
            if action < 0.55:
                status, _, body = mdaemon.json("PATCH", item_path("Member", i),
                                               body={"set": {"email": v}, "upsert": True})
            elif action < 0.75:
                status, _, body = mdaemon.json("PUT", item_path("Member", i),
                                               body={"id": i, "email": v,
                                                     "handle": rnd.choice(pool)})
            elif action < 0.9:
                status, _, body = mdaemon.json("DELETE", item_path("Member", i))
            else:
                status, _, body = mdaemon.json("PATCH", item_path("Member", i),
                                               body={"remove": ["email"], "upsert": True})
            with lock:
                if status in (200, 201, 204):
                    stats["ok"] += 1
                elif status in (404, 409) or (status == 503 and
                                              body["error"]["code"] == "BackendUnavailable"):
                    # Lost a race (taken value, item gone, or a writer kept
                    # changing the item): refused, never half-done.
                    stats["conflict"] += 1
                else:
                    stats["other"].append((status, body))

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert stats["other"] == [], stats["other"][:3]
    assert stats["ok"] > 0 and stats["conflict"] > 0, stats
    mdaemon.wait_metric("tabletheoryd_inflight_operations", 0)

    held = {}
    for i in ids:
        status, _, body = mdaemon.json("GET", item_path("Member", i))
        if status != 200:
            continue
        for attr in ("email", "handle"):
            if attr in body:
                key = (attr, body[attr])
                assert key not in held, ("two items hold", key, held.get(key), i)
                held[key] = i
    for attr in ("email", "handle"):
        for v in pool:
            g = guard(mdaemon, attr, v)
            owner = held.get((attr, v))
            if owner is None:
                assert g is None, ("orphan guard", attr, v, g)
            else:
                assert g is not None, ("missing guard", attr, v, owner)
                assert g["_tt_owner"] == {"M": {"id": {"S": owner}}}, (attr, v, g, owner)
