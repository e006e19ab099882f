# SPDX-License-Identifier: Apache-2.0
"""Single items over HTTP (docs/api.md, Items and Values): create, get, put,
patch in both forms, delete, key encoding in paths, value encodings,
lifecycle fields and the error answers."""
import base64
import json
import time
from decimal import Decimal

import pytest

from items_fixtures import (assert_error, assert_now, b64, b64url, exact_json,  # noqa: F401
                            item_path, kseg, mdaemon, time_key)

USERS = "/v1/models/User/items"


def under(field, attr):
    """details.field names attr itself or a path inside it (tags[0])."""
    return field == attr or field.startswith(attr + "[") or field.startswith(attr + ".")


def assert_field_under(body, attr):
    assert under(body["error"]["details"].get("field", ""), attr), body


def create_user(d, pk, sk="PROFILE", **attrs):
    item = {"PK": pk, "SK": sk}
    item.update(attrs)
    status, hdrs, body = d.json("POST", USERS, body=item)
    assert status == 201, body
    return body


def raw_item(d, model, *key):
    status, _, body = d.json("GET", item_path(model, *key) + "?format=dynamodb")
    assert status == 200, body
    return body


# ---- create ------------------------------------------------------------------

def test_create_fills_lifecycle_fields(mdaemon):
    status, hdrs, body = mdaemon.json("POST", USERS,
                                      body={"PK": "USER#c1", "SK": "PROFILE", "nickname": "al"})
    assert status == 201, body
    assert hdrs["content-type"] == "application/json"
    assert set(body) == {"PK", "SK", "nickname", "createdAt", "updatedAt", "version"}
    assert body["PK"] == "USER#c1" and body["SK"] == "PROFILE" and body["nickname"] == "al"
    assert_now(mdaemon, body["createdAt"])
    assert body["createdAt"] == body["updatedAt"]
    assert body["version"] == 0
    raw = raw_item(mdaemon, "User", "USER#c1", "PROFILE")
    assert raw["version"] == {"N": "0"}
    assert raw["createdAt"] == {"S": body["createdAt"]}
    assert raw["updatedAt"] == {"S": body["updatedAt"]}


def test_create_keeps_ttl_epoch_seconds(mdaemon):
    ttl = int(time.time()) + 3600
    body = create_user(mdaemon, "USER#c2", ttl=ttl)
    assert body["ttl"] == ttl
    assert raw_item(mdaemon, "User", "USER#c2", "PROFILE")["ttl"] == {"N": str(ttl)}


def test_create_existing_key_is_409(mdaemon):
    first = create_user(mdaemon, "USER#c3", nickname="first")
    status, hdrs, body = mdaemon.json("POST", USERS,
                                      body={"PK": "USER#c3", "SK": "PROFILE", "nickname": "2nd"})
    assert_error(status, hdrs, body, 409, "ConditionFailed")
    assert body["error"]["retryable"] is False
    assert "first" not in body["error"]["message"] and "USER#c3" not in body["error"]["message"]
    _, _, got = mdaemon.json("GET", item_path("User", "USER#c3", "PROFILE"))
    assert got == first


def test_create_missing_sort_key_is_400(mdaemon):
    status, hdrs, body = mdaemon.json("POST", USERS, body={"PK": "USER#c4"})
    assert_error(status, hdrs, body, 400, "ValidationError", "SK")


def test_create_body_must_be_an_object(mdaemon):
    status, hdrs, body = mdaemon.json("POST", USERS, body=["PK", "SK"])
    assert_error(status, hdrs, body, 400, "ValidationError")


def test_create_bad_json(mdaemon):
    status, hdrs, data = mdaemon.request("POST", USERS, body='{"PK": "x", ',
                                         headers={"Content-Type": "application/json"})
    assert_error(status, hdrs, json.loads(data), 400, "ValidationError", "body")


# ---- get -----------------------------------------------------------------------

def test_get_returns_item_and_etag(mdaemon):
    created = create_user(mdaemon, "USER#g1", nickname="gg", tags=["b", "a"])
    status, hdrs, body = mdaemon.json("GET", item_path("User", "USER#g1", "PROFILE"))
    assert status == 200
    assert hdrs["etag"] == '"0"'
    assert sorted(body.pop("tags")) == ["a", "b"]
    created.pop("tags")
    assert body == created


def test_get_absent_is_404(mdaemon):
    status, hdrs, body = mdaemon.json("GET", item_path("User", "USER#nobody", "PROFILE"))
    err = assert_error(status, hdrs, body, 404, "ItemNotFound")
    assert "USER#nobody" not in err["message"]


def test_get_with_percent_encoded_key(mdaemon):
    create_user(mdaemon, "USER#1", "PROFILE", nickname="one")
    status, _, body = mdaemon.json("GET", "/v1/models/User/items/USER%231/PROFILE")
    assert status == 200, body
    assert body["PK"] == "USER#1" and body["nickname"] == "one"


def test_slash_inside_key_value(mdaemon):
    create_user(mdaemon, "ORG/7#USER/1", "A/B", nickname="slashy")
    status, _, body = mdaemon.json("GET", "/v1/models/User/items/ORG%2F7%23USER%2F1/A%2FB")
    assert status == 200, body
    assert body["PK"] == "ORG/7#USER/1" and body["SK"] == "A/B"
    # The unencoded slash splits the key differently: that item does not exist.
    status, hdrs, body = mdaemon.json("GET", "/v1/models/User/items/ORG%2F7%23USER%2F1/A/B")
    assert status in (400, 404), body
    assert body["error"]["code"] in ("ValidationError", "ItemNotFound")


def test_unicode_and_space_in_key(mdaemon):
    create_user(mdaemon, "USER#ü ñ", "P?x=1&y", nickname="u")
    status, _, body = mdaemon.json("GET", item_path("User", "USER#ü ñ", "P?x=1&y"))
    assert status == 200, body
    assert body["PK"] == "USER#ü ñ" and body["SK"] == "P?x=1&y"


def test_key_path_with_wrong_number_of_parts(mdaemon):
    status, hdrs, body = mdaemon.json("GET", "/v1/models/User/items/USER%231")
    assert_error(status, hdrs, body, 400, "ValidationError")
    status, hdrs, body = mdaemon.json("GET", "/v1/models/User/items/a/b/c")
    assert_error(status, hdrs, body, 400, "ValidationError")
    status, hdrs, body = mdaemon.json("GET", "/v1/models/Wallet/items/a/b")
    assert_error(status, hdrs, body, 400, "ValidationError")


def test_get_select_projects(mdaemon):
    create_user(mdaemon, "USER#s1", nickname="sel", emailHash="h")
    status, _, body = mdaemon.json("GET", item_path("User", "USER#s1", "PROFILE") +
                                   "?select=PK,nickname")
    assert status == 200, body
    assert body == {"PK": "USER#s1", "nickname": "sel"}


def test_get_select_unknown_attribute(mdaemon):
    create_user(mdaemon, "USER#s2")
    status, hdrs, body = mdaemon.json("GET", item_path("User", "USER#s2", "PROFILE") +
                                      "?select=PK,bogus")
    err = assert_error(status, hdrs, body, 400, "ValidationError")
    assert "bogus" in err["details"]["field"]


def test_get_consistent(mdaemon):
    created = create_user(mdaemon, "USER#cons", nickname="c")
    status, _, body = mdaemon.json("GET", item_path("User", "USER#cons", "PROFILE") +
                                   "?consistent=true")
    assert status == 200 and body == created
    status, hdrs, body = mdaemon.json("GET", item_path("User", "USER#cons", "PROFILE") +
                                      "?consistent=maybe")
    assert_error(status, hdrs, body, 400, "ValidationError", "consistent")


def test_get_format_dynamodb_is_the_stored_item(mdaemon):
    created = create_user(mdaemon, "USER#raw", nickname="r", tags=["x"],
                          profile={"b": 1, "a": [True]})
    raw = raw_item(mdaemon, "User", "USER#raw", "PROFILE")
    assert raw == {
        "PK": {"S": "USER#raw"}, "SK": {"S": "PROFILE"}, "nickname": {"S": "r"},
        "tags": {"SS": ["x"]},
        "profile": {"M": {"a": {"L": [{"BOOL": True}]}, "b": {"N": "1"}}},
        "createdAt": {"S": created["createdAt"]}, "updatedAt": {"S": created["updatedAt"]},
        "version": {"N": "0"}}
    status, hdrs, body = mdaemon.json("GET", item_path("User", "USER#raw", "PROFILE") +
                                      "?format=xml")
    assert_error(status, hdrs, body, 400, "ValidationError", "format")


# ---- put -----------------------------------------------------------------------

def test_put_creates_then_replaces(mdaemon):
    path = item_path("User", "USER#p1", "PROFILE")
    status, _, first = mdaemon.json("PUT", path, body={"PK": "USER#p1", "SK": "PROFILE",
                                                       "nickname": "one", "emailHash": "e"})
    assert status == 201, first
    assert first["version"] == 0 and first["createdAt"] == first["updatedAt"]
    assert_now(mdaemon, first["createdAt"])
    mdaemon.advance_clock(1)
    status, _, second = mdaemon.json("PUT", path, body={"PK": "USER#p1", "SK": "PROFILE",
                                                        "nickname": "two"})
    assert status == 200, second
    # A replace, not a merge: emailHash is gone.
    assert "emailHash" not in second and second["nickname"] == "two"
    # Lifecycle fields are written as on create (TableTheory's save).
    assert second["version"] == 0 and second["createdAt"] == second["updatedAt"]
    assert time_key(second["updatedAt"]) > time_key(first["updatedAt"])
    status, _, got = mdaemon.json("GET", path)
    assert got == second
    assert "emailHash" not in raw_item(mdaemon, "User", "USER#p1", "PROFILE")


def test_put_key_from_path_must_match_body(mdaemon):
    path = item_path("User", "USER#p2", "PROFILE")
    status, hdrs, body = mdaemon.json("PUT", path, body={"PK": "USER#other", "SK": "PROFILE"})
    assert_error(status, hdrs, body, 400, "ValidationError", "PK")
    status, hdrs, body = mdaemon.json("GET", item_path("User", "USER#other", "PROFILE"))
    assert_error(status, hdrs, body, 404, "ItemNotFound")


def test_put_if_none_match_star(mdaemon):
    path = item_path("User", "USER#p3", "PROFILE")
    item = {"PK": "USER#p3", "SK": "PROFILE", "nickname": "a"}
    status, _, body = mdaemon.json("PUT", path, body=item, headers={"If-None-Match": "*"})
    assert status == 201, body
    item["nickname"] = "b"
    status, hdrs, body = mdaemon.json("PUT", path, body=item, headers={"If-None-Match": "*"})
    assert_error(status, hdrs, body, 409, "ConditionFailed")
    _, _, got = mdaemon.json("GET", path)
    assert got["nickname"] == "a"


def test_put_if_none_match_other_than_star(mdaemon):
    path = item_path("User", "USER#p3b", "PROFILE")
    status, hdrs, body = mdaemon.json("PUT", path, body={"PK": "USER#p3b", "SK": "PROFILE"},
                                      headers={"If-None-Match": '"3"'})
    assert_error(status, hdrs, body, 400, "ValidationError", "If-None-Match")
    status, hdrs, body = mdaemon.json("GET", path)
    assert_error(status, hdrs, body, 404, "ItemNotFound")


def test_put_if_match_version(mdaemon):
    path = item_path("User", "USER#p4", "PROFILE")
    create_user(mdaemon, "USER#p4", nickname="v0")
    item = {"PK": "USER#p4", "SK": "PROFILE", "nickname": "v1"}
    status, hdrs, body = mdaemon.json("PUT", path, body=item, headers={"If-Match": '"0"'})
    assert status == 200, body
    assert body["version"] == 1 and body["nickname"] == "v1"
    status, hdrs, _ = mdaemon.json("GET", path)
    assert hdrs["etag"] == '"1"'
    # The stale version is refused and changes nothing.
    item["nickname"] = "stale"
    status, hdrs, body = mdaemon.json("PUT", path, body=item, headers={"If-Match": '"0"'})
    err = assert_error(status, hdrs, body, 409, "VersionConflict")
    assert err["retryable"] is False
    _, _, got = mdaemon.json("GET", path)
    assert got["nickname"] == "v1" and got["version"] == 1
    item["nickname"] = "v2"
    status, _, body = mdaemon.json("PUT", path, body=item, headers={"If-Match": '"1"'})
    assert status == 200 and body["version"] == 2


def test_put_if_match_on_absent_item(mdaemon):
    path = item_path("User", "USER#p5", "PROFILE")
    status, hdrs, body = mdaemon.json("PUT", path, body={"PK": "USER#p5", "SK": "PROFILE"},
                                      headers={"If-Match": '"0"'})
    assert status in (404, 409), body
    assert body["error"]["code"] in ("ItemNotFound", "VersionConflict"), body
    status, hdrs, body = mdaemon.json("GET", path)
    assert_error(status, hdrs, body, 404, "ItemNotFound")


def test_put_bad_if_match(mdaemon):
    path = item_path("User", "USER#p6", "PROFILE")
    status, hdrs, body = mdaemon.json("PUT", path, body={"PK": "USER#p6", "SK": "PROFILE"},
                                      headers={"If-Match": '"abc"'})
    assert_error(status, hdrs, body, 400, "ValidationError", "If-Match")


def test_put_if_match_on_model_without_version(mdaemon):
    path = item_path("Counter", "1")
    status, hdrs, body = mdaemon.json("PUT", path, body={"n": 1}, headers={"If-Match": '"0"'})
    assert_error(status, hdrs, body, 400, "ValidationError", "If-Match")


# ---- patch: TableTheory form ---------------------------------------------------

def test_patch_fields_form(mdaemon):
    created = create_user(mdaemon, "USER#u1", nickname="old", emailHash="e1")
    mdaemon.advance_clock(1)
    path = item_path("User", "USER#u1", "PROFILE")
    status, hdrs, body = mdaemon.json("PATCH", path, body={
        "fields": ["nickname"], "item": {"nickname": "new", "emailHash": "ignored", "version": 0}})
    assert status == 200, body
    assert body["nickname"] == "new" and body["emailHash"] == "e1"
    assert body["version"] == 1
    assert body["createdAt"] == created["createdAt"]
    assert time_key(body["updatedAt"]) > time_key(created["updatedAt"])
    status, hdrs, got = mdaemon.json("GET", path)
    assert got == body and hdrs["etag"] == '"1"'


def test_patch_fields_form_wrong_version(mdaemon):
    create_user(mdaemon, "USER#u2", nickname="old")
    path = item_path("User", "USER#u2", "PROFILE")
    status, hdrs, body = mdaemon.json("PATCH", path, body={
        "fields": ["nickname"], "item": {"nickname": "new", "version": 7}})
    assert_error(status, hdrs, body, 409, "VersionConflict")
    _, _, got = mdaemon.json("GET", path)
    assert got["nickname"] == "old" and got["version"] == 0


def test_patch_item_without_fields_writes_every_present_attribute(mdaemon):
    create_user(mdaemon, "USER#u3", nickname="a", emailHash="e")
    path = item_path("User", "USER#u3", "PROFILE")
    status, _, body = mdaemon.json("PATCH", path, body={
        "item": {"PK": "USER#u3", "SK": "PROFILE", "nickname": "b", "tags": ["t"]}})
    assert status == 200, body
    assert body["nickname"] == "b" and body["tags"] == ["t"] and body["emailHash"] == "e"
    assert body["version"] == 1


def test_patch_selected_empty_omit_empty_attribute_is_removed(mdaemon):
    create_user(mdaemon, "USER#u4", nickname="gone-soon", emailHash="e")
    path = item_path("User", "USER#u4", "PROFILE")
    status, _, body = mdaemon.json("PATCH", path, body={
        "fields": ["nickname"], "item": {"nickname": ""}})
    assert status == 200, body
    assert "nickname" not in body
    assert "nickname" not in raw_item(mdaemon, "User", "USER#u4", "PROFILE")


# ---- patch: operator form ------------------------------------------------------

def make_wallet(d, wid, **attrs):
    item = {"id": wid, "owner": "ann", "balance": 10, "labels": ["a", "b"], "history": [1, 2]}
    item.update(attrs)
    status, _, body = d.json("POST", "/v1/models/Wallet/items", body=item)
    assert status == 201, body
    return body


def test_patch_operators(mdaemon):
    created = make_wallet(mdaemon, "w1")
    mdaemon.advance_clock(1)
    status, hdrs, body = mdaemon.json("PATCH", item_path("Wallet", "w1"), body={
        "set": {"owner": "bob"},
        "add": {"balance": 5, "labels": ["c"]},
        "append": {"history": [3, 4]},
        "set_if_not_exists": {"note": "first"}})
    assert status == 200, body
    assert body["owner"] == "bob"
    assert body["balance"] == 15
    assert sorted(body["labels"]) == ["a", "b", "c"]
    assert body["history"] == [1, 2, 3, 4]
    assert body["note"] == "first"
    assert body["version"] == 1
    assert body["createdAt"] == created["createdAt"]
    assert time_key(body["updatedAt"]) > time_key(created["updatedAt"])
    status, hdrs, got = mdaemon.json("GET", item_path("Wallet", "w1"))
    assert hdrs["etag"] == '"1"'
    assert sorted(got.pop("labels")) == ["a", "b", "c"]
    body.pop("labels")
    assert got == body


def test_patch_delete_from_set_and_remove(mdaemon):
    make_wallet(mdaemon, "w2", note="n")
    status, _, body = mdaemon.json("PATCH", item_path("Wallet", "w2"), body={
        "delete": {"labels": ["a"]}, "remove": ["note", "history"]})
    assert status == 200, body
    assert body["labels"] == ["b"]
    assert "note" not in body and "history" not in body
    raw = raw_item(mdaemon, "Wallet", "w2")
    assert "note" not in raw and "history" not in raw
    assert raw["labels"] == {"SS": ["b"]}


def test_patch_prepend(mdaemon):
    make_wallet(mdaemon, "w-pre")
    status, _, body = mdaemon.json("PATCH", item_path("Wallet", "w-pre"),
                                   body={"prepend": {"history": [-1, 0]}})
    assert status == 200, body
    assert body["history"] == [-1, 0, 1, 2]


def test_patch_set_if_not_exists_keeps_existing(mdaemon):
    make_wallet(mdaemon, "w3", note="keep")
    status, _, body = mdaemon.json("PATCH", item_path("Wallet", "w3"), body={
        "set_if_not_exists": {"note": "other", "owner": "zed"}})
    assert status == 200, body
    assert body["note"] == "keep" and body["owner"] == "ann"
    assert body["version"] == 1


def test_patch_condition(mdaemon):
    make_wallet(mdaemon, "w4")
    path = item_path("Wallet", "w4")
    status, hdrs, body = mdaemon.json("PATCH", path, body={
        "set": {"owner": "carl"}, "condition": {"attr": "balance", "op": ">", "value": 100}})
    err = assert_error(status, hdrs, body, 409, "ConditionFailed")
    assert err["retryable"] is False
    _, _, got = mdaemon.json("GET", path)
    assert got["owner"] == "ann" and got["version"] == 0
    status, _, body = mdaemon.json("PATCH", path, body={
        "set": {"owner": "carl"},
        "condition": {"and": [{"attr": "balance", "op": "between", "value": [5, 10]},
                              {"attr": "labels", "op": "contains", "value": "a"},
                              {"attr": "note", "op": "not_exists"}]}})
    assert status == 200, body
    assert body["owner"] == "carl" and body["version"] == 1


# Conditions over the wallet {"owner": "ann", "balance": 10, "labels": ["a", "b"],
# "history": [1, 2]}: each pair is (true, false).
CONDITIONS = [
    ({"attr": "owner", "op": "=", "value": "ann"}, {"attr": "owner", "op": "=", "value": "bob"}),
    ({"attr": "owner", "op": "<>", "value": "bob"}, {"attr": "owner", "op": "<>", "value": "ann"}),
    ({"attr": "balance", "op": "<", "value": 11}, {"attr": "balance", "op": "<", "value": 10}),
    ({"attr": "balance", "op": "<=", "value": 10}, {"attr": "balance", "op": "<=", "value": 9.5}),
    ({"attr": "balance", "op": ">", "value": 9}, {"attr": "balance", "op": ">", "value": 10}),
    ({"attr": "balance", "op": ">=", "value": 10}, {"attr": "balance", "op": ">=", "value": 11}),
    ({"attr": "balance", "op": "between", "value": [10, 10]},
     {"attr": "balance", "op": "between", "value": [11, 20]}),
    ({"attr": "owner", "op": "in", "value": ["x", "ann"]},
     {"attr": "owner", "op": "in", "value": ["x", "y"]}),
    ({"attr": "owner", "op": "begins_with", "value": "an"},
     {"attr": "owner", "op": "begins_with", "value": "nn"}),
    ({"attr": "labels", "op": "contains", "value": "b"},
     {"attr": "labels", "op": "contains", "value": "c"}),
    ({"attr": "labels", "op": "not_contains", "value": "c"},
     {"attr": "labels", "op": "not_contains", "value": "a"}),
    ({"attr": "owner", "op": "exists"}, {"attr": "note", "op": "exists"}),
    ({"attr": "note", "op": "not_exists"}, {"attr": "owner", "op": "not_exists"}),
    ({"attr": "labels", "op": "type", "value": "SS"}, {"attr": "labels", "op": "type",
                                                      "value": "L"}),
    ({"attr": "history[1]", "op": "=", "value": 2}, {"attr": "history[0]", "op": "=", "value": 2}),
    ({"attr": "labels", "size": "=", "value": 2}, {"attr": "labels", "size": ">", "value": 2}),
    ({"attr": "owner", "size": "<=", "value": 3}, {"attr": "owner", "size": "<", "value": 3}),
    ({"or": [{"attr": "owner", "op": "=", "value": "x"},
             {"attr": "balance", "op": "=", "value": 10}]},
     {"or": [{"attr": "owner", "op": "=", "value": "x"},
             {"attr": "balance", "op": "=", "value": 11}]}),
    ({"not": {"attr": "owner", "op": "=", "value": "x"}},
     {"not": {"attr": "owner", "op": "=", "value": "ann"}}),
    ([{"attr": "owner", "op": "=", "value": "ann"}, {"attr": "balance", "op": "=", "value": 10}],
     [{"attr": "owner", "op": "=", "value": "ann"}, {"attr": "balance", "op": "=", "value": 1}]),
]


@pytest.mark.parametrize("n", range(len(CONDITIONS)))
def test_patch_condition_language(mdaemon, n):
    true_cond, false_cond = CONDITIONS[n]
    wid = "w-cond-%d" % n
    make_wallet(mdaemon, wid)
    status, hdrs, body = mdaemon.json("PATCH", item_path("Wallet", wid),
                                      body={"set": {"note": "f"}, "condition": false_cond})
    assert_error(status, hdrs, body, 409, "ConditionFailed", "condition")
    assert_wallet_unchanged(mdaemon, wid)
    status, _, body = mdaemon.json("PATCH", item_path("Wallet", wid),
                                   body={"set": {"note": "t"}, "condition": true_cond})
    assert status == 200, body
    assert body["note"] == "t" and body["version"] == 1


def test_patch_expected_version(mdaemon):
    make_wallet(mdaemon, "w5")
    path = item_path("Wallet", "w5")
    status, hdrs, body = mdaemon.json("PATCH", path, body={"set": {"owner": "x"},
                                                          "expected_version": 3})
    assert_error(status, hdrs, body, 409, "VersionConflict")
    status, _, body = mdaemon.json("PATCH", path, body={"set": {"owner": "x"},
                                                       "expected_version": 0})
    assert status == 200 and body["version"] == 1
    status, hdrs, body = mdaemon.json("PATCH", path, body={"set": {"owner": "y"}},
                                      headers={"If-Match": '"0"'})
    assert_error(status, hdrs, body, 409, "VersionConflict")
    status, _, body = mdaemon.json("PATCH", path, body={"set": {"owner": "y"}},
                                   headers={"If-Match": '"1"'})
    assert status == 200 and body["version"] == 2 and body["owner"] == "y"


def test_patch_absent_is_404_unless_upsert(mdaemon):
    path = item_path("Wallet", "w-none")
    status, hdrs, body = mdaemon.json("PATCH", path, body={"set": {"owner": "x"}})
    assert_error(status, hdrs, body, 404, "ItemNotFound")
    status, hdrs, body = mdaemon.json("GET", path)
    assert_error(status, hdrs, body, 404, "ItemNotFound")
    status, _, body = mdaemon.json("PATCH", path, body={"set": {"owner": "x"}, "upsert": True})
    assert status in (200, 201), body
    assert body["id"] == "w-none" and body["owner"] == "x"
    status, _, got = mdaemon.json("GET", path)
    assert status == 200 and got["owner"] == "x"
    assert_now(mdaemon, got["updatedAt"])


def test_patch_upsert_creates_with_lifecycle_fields(mdaemon):
    path = item_path("Wallet", "w-ups")
    status, _, body = mdaemon.json("PATCH", path, body={"set": {"owner": "x"}, "upsert": True})
    assert status in (200, 201), body
    assert isinstance(body["version"], int)
    assert "createdAt" in body, body
    assert body["createdAt"] == body["updatedAt"]
    raw = raw_item(mdaemon, "Wallet", "w-ups")
    assert raw["createdAt"] == {"S": body["createdAt"]}


def test_patch_upsert_on_existing_item_keeps_created_at(mdaemon):
    created = make_wallet(mdaemon, "w-ups2")
    status, _, body = mdaemon.json("PATCH", item_path("Wallet", "w-ups2"),
                                   body={"set": {"owner": "y"}, "upsert": True})
    assert status == 200, body
    assert body["createdAt"] == created["createdAt"] and body["version"] == 1
    status, hdrs, body = mdaemon.json("PATCH", item_path("Wallet", "w-ups2"),
                                      body={"set": {"owner": "y"}, "upsert": "yes"})
    assert_error(status, hdrs, body, 400, "ValidationError", "upsert")


def test_patch_body_key_must_match_path(mdaemon):
    create_user(mdaemon, "USER#pk1")
    status, hdrs, body = mdaemon.json("PATCH", item_path("User", "USER#pk1", "PROFILE"), body={
        "item": {"PK": "USER#other", "SK": "PROFILE", "nickname": "k"}})
    assert_error(status, hdrs, body, 400, "ValidationError", "PK")
    _, _, got = mdaemon.json("GET", item_path("User", "USER#pk1", "PROFILE"))
    assert "nickname" not in got and got["version"] == 0


def test_patch_if_match_and_expected_version_disagree(mdaemon):
    make_wallet(mdaemon, "w-dis")
    status, hdrs, body = mdaemon.json("PATCH", item_path("Wallet", "w-dis"),
                                      body={"set": {"owner": "q"}, "expected_version": 0},
                                      headers={"If-Match": '"5"'})
    assert_error(status, hdrs, body, 400, "ValidationError", "expected_version")
    assert_wallet_unchanged(mdaemon, "w-dis")


def test_condition_in_takes_at_most_100_values(mdaemon):
    make_wallet(mdaemon, "w-in")
    status, hdrs, body = mdaemon.json("PATCH", item_path("Wallet", "w-in"), body={
        "set": {"owner": "q"},
        "condition": {"attr": "owner", "op": "in", "value": ["v%d" % i for i in range(101)]}})
    assert_error(status, hdrs, body, 400, "ValidationError", "condition.value")
    status, _, body = mdaemon.json("PATCH", item_path("Wallet", "w-in"), body={
        "set": {"owner": "q"},
        "condition": {"attr": "owner", "op": "in", "value": ["v%d" % i for i in range(99)] +
                      ["ann"]}})
    assert status == 200 and body["owner"] == "q"


def test_malformed_key_paths(mdaemon):
    for path in ("/v1/models/User/items/X%ZZ/Y", "/v1/models/User/items//Y",
                 "/v1/models/User/items/X/"):
        status, hdrs, body = mdaemon.json("GET", path)
        err = assert_error(status, hdrs, body, 400, "ValidationError")
        assert err["details"]["field"] == "key", (path, body)
    status, hdrs, body = mdaemon.json("POST", USERS, body={"PK": "", "SK": "Y"})
    assert_error(status, hdrs, body, 400, "ValidationError", "PK")


def test_delete_bad_if_match(mdaemon):
    create_user(mdaemon, "USER#d4")
    status, hdrs, body = mdaemon.json("DELETE", item_path("User", "USER#d4", "PROFILE"),
                                      headers={"If-Match": "zz"})
    assert_error(status, hdrs, body, 400, "ValidationError", "If-Match")
    status, _, _ = mdaemon.json("GET", item_path("User", "USER#d4", "PROFILE"))
    assert status == 200


def test_patch_fields_form_absent_is_404(mdaemon):
    path = item_path("User", "USER#none", "PROFILE")
    status, hdrs, body = mdaemon.json("PATCH", path, body={"fields": ["nickname"],
                                                          "item": {"nickname": "x"}})
    assert_error(status, hdrs, body, 404, "ItemNotFound")


@pytest.mark.parametrize("upd,field,attr", [
    ({"set": {"createdAt": "2020-01-01T00:00:00Z"}}, "set.createdAt", "createdAt"),
    ({"set": {"updatedAt": "2020-01-01T00:00:00Z"}}, "set.updatedAt", "updatedAt"),
    ({"set": {"version": 9}}, "set.version", "version"),
    ({"add": {"version": 1}}, "add.version", "version"),
    ({"set": {"id": "other"}}, "set.id", "id"),
    ({"set_if_not_exists": {"createdAt": "2020-01-01T00:00:00Z"}},
     "set_if_not_exists.createdAt", "createdAt"),
    ({"remove": ["id"]}, "remove[0]", "id"),
    ({"remove": ["note", "version"]}, "remove[1]", "version"),
])
def test_patch_cannot_set_lifecycle_or_keys(mdaemon, upd, field, attr):
    wid = "w-ro-" + field
    make_wallet(mdaemon, wid)
    status, hdrs, body = mdaemon.json("PATCH", item_path("Wallet", wid), body=upd)
    err = assert_error(status, hdrs, body, 400, "ValidationError", field)
    assert attr in err["message"]
    _, _, got = mdaemon.json("GET", item_path("Wallet", wid))
    assert got["version"] == 0 and got["id"] == wid


@pytest.mark.parametrize("attr,value", [("createdAt", "2020-01-01T00:00:00Z"),
                                        ("updatedAt", "2020-01-01T00:00:00Z"),
                                        ("version", 5), ("SK", "OTHER")])
def test_patch_fields_form_cannot_write_lifecycle_or_keys(mdaemon, attr, value):
    pk = "USER#ro-" + attr
    create_user(mdaemon, pk)
    status, hdrs, body = mdaemon.json("PATCH", item_path("User", pk, "PROFILE"), body={
        "fields": [attr], "item": {attr: value}})
    err = assert_error(status, hdrs, body, 400, "ValidationError")
    assert err["details"]["field"] in ("fields[0]", "item." + attr), body
    assert attr in err["message"]
    _, _, got = mdaemon.json("GET", item_path("User", pk, "PROFILE"))
    assert got["version"] == 0


def assert_wallet_unchanged(d, wid):
    _, _, got = d.json("GET", item_path("Wallet", wid))
    assert got["version"] == 0 and got["owner"] == "ann", got


def test_patch_unknown_attribute(mdaemon):
    make_wallet(mdaemon, "w6a")
    status, hdrs, body = mdaemon.json("PATCH", item_path("Wallet", "w6a"),
                                      body={"set": {"bogus": 1}})
    err = assert_error(status, hdrs, body, 400, "ValidationError")
    assert under(err["details"]["field"], "set.bogus") or under(err["details"]["field"], "bogus")
    assert_wallet_unchanged(mdaemon, "w6a")


def test_patch_unknown_operator(mdaemon):
    make_wallet(mdaemon, "w6b")
    status, hdrs, body = mdaemon.json("PATCH", item_path("Wallet", "w6b"),
                                      body={"multiply": {"balance": 2}})
    err = assert_error(status, hdrs, body, 400, "ValidationError")
    assert "multiply" in err["details"]["field"]
    assert_wallet_unchanged(mdaemon, "w6b")


def test_patch_wrong_type(mdaemon):
    make_wallet(mdaemon, "w6c")
    status, hdrs, body = mdaemon.json("PATCH", item_path("Wallet", "w6c"),
                                      body={"set": {"balance": "ten"}})
    err = assert_error(status, hdrs, body, 400, "ValidationError")
    assert "balance" in err["details"]["field"]
    assert "ten" not in err["message"]
    assert_wallet_unchanged(mdaemon, "w6c")


def test_patch_bad_condition(mdaemon):
    make_wallet(mdaemon, "w6d")
    status, hdrs, body = mdaemon.json("PATCH", item_path("Wallet", "w6d"),
                                      body={"set": {"owner": "q"},
                                            "condition": {"attr": "owner", "op": "~~",
                                                          "value": 1}})
    err = assert_error(status, hdrs, body, 400, "ValidationError")
    assert err["details"]["field"].startswith("condition")
    assert_wallet_unchanged(mdaemon, "w6d")


# ---- delete ------------------------------------------------------------------

def test_delete(mdaemon):
    create_user(mdaemon, "USER#d1")
    path = item_path("User", "USER#d1", "PROFILE")
    status, hdrs, data = mdaemon.request("DELETE", path)
    assert status == 204 and data == b""
    status, hdrs, body = mdaemon.json("GET", path)
    assert_error(status, hdrs, body, 404, "ItemNotFound")
    status, hdrs, body = mdaemon.json("DELETE", path)
    assert_error(status, hdrs, body, 404, "ItemNotFound")


def test_delete_if_match(mdaemon):
    create_user(mdaemon, "USER#d2")
    path = item_path("User", "USER#d2", "PROFILE")
    status, hdrs, body = mdaemon.json("DELETE", path, headers={"If-Match": '"4"'})
    assert_error(status, hdrs, body, 409, "VersionConflict")
    status, _, _ = mdaemon.json("GET", path)
    assert status == 200
    status, hdrs, body = mdaemon.json("DELETE", path + "?expected_version=1")
    assert_error(status, hdrs, body, 409, "VersionConflict")
    status, _, _ = mdaemon.request("DELETE", path, headers={"If-Match": '"0"'})
    assert status == 204
    status, _, _ = mdaemon.json("GET", path)
    assert status == 404


def test_delete_expected_version_query(mdaemon):
    create_user(mdaemon, "USER#d3")
    path = item_path("User", "USER#d3", "PROFILE")
    status, _, _ = mdaemon.request("DELETE", path + "?expected_version=0")
    assert status == 204


# ---- values --------------------------------------------------------------------

def test_unknown_attribute_is_400(mdaemon):
    status, hdrs, body = mdaemon.json("POST", USERS, body={"PK": "USER#v1", "SK": "P",
                                                          "favouriteColour": "red"})
    err = assert_error(status, hdrs, body, 400, "ValidationError", "favouriteColour")
    assert "favouriteColour" in err["message"] and "red" not in err["message"]
    status, hdrs, body = mdaemon.json("GET", item_path("User", "USER#v1", "P"))
    assert_error(status, hdrs, body, 404, "ItemNotFound")


def test_additional_attributes_model_accepts_unknown(mdaemon):
    status, _, body = mdaemon.json("POST", "/v1/models/Loose/items",
                                   body={"id": "l1", "label": "x", "extra": {"n": 1.5},
                                         "more": [1, "two"]})
    assert status == 201, body
    raw = raw_item(mdaemon, "Loose", "l1")
    assert raw["extra"] == {"M": {"n": {"N": "1.5"}}}
    assert raw["more"] == {"L": [{"N": "1"}, {"S": "two"}]}


@pytest.mark.parametrize("attr,value", [
    ("nickname", 5), ("nickname", True), ("tags", "one"), ("tags", [1, 2]),
    ("profile", "not-a-map"), ("ttl", "soon"), ("PK", 7)])
def test_wrong_type_is_400(mdaemon, attr, value):
    item = {"PK": "USER#wt", "SK": "P-" + attr}
    item[attr] = value
    status, hdrs, body = mdaemon.json("POST", USERS, body=item)
    assert_error(status, hdrs, body, 400, "ValidationError")
    assert_field_under(body, attr)


@pytest.mark.parametrize("attr,value", [
    ("flag", "true"), ("nothing", False), ("items", {"a": 1}), ("metadata", [1]),
    ("numberSet", ["x"]), ("binaryBlob", "!!not base64!!"), ("binarySet", [5])])
def test_wrong_type_is_400_type_matrix(mdaemon, attr, value):
    status, hdrs, body = mdaemon.json("POST", "/v1/models/TypeMatrix/items",
                                      body={"PK": "TM#wt", "SK": attr, attr: value})
    assert_error(status, hdrs, body, 400, "ValidationError")
    assert_field_under(body, attr)


NUMBERS = [
    "12345678901234567890123456789012345678",
    "-12345678901234567890123456789012345678",
    "0.12345678901234567890123456789012345678",
    "3.1415926535897932384626433832795028841",
    "1E+125",
    "-1E-130",
]


def test_38_digit_numbers_exact_as_strings(mdaemon):
    for i, n in enumerate(NUMBERS):
        sk = "S%d" % i
        status, _, data = mdaemon.request("POST", "/v1/models/NumberPrecision/items",
                                          body=json.dumps({"PK": "NUM", "SK": sk,
                                                           "largeInteger": n}),
                                          headers={"Content-Type": "application/json"})
        assert status == 201, data
        raw = raw_item(mdaemon, "NumberPrecision", "NUM", sk)
        # Decimal compares exactly, whatever the notation.
        assert Decimal(raw["largeInteger"]["N"]) == Decimal(n), (n, raw)
        status, _, data = mdaemon.request("GET", item_path("NumberPrecision", "NUM", sk))
        got = exact_json(data)["largeInteger"]
        assert Decimal(got) == Decimal(n), (n, got)


def test_numbers_exact_in_a_plain_n_attribute(mdaemon):
    for i, n in enumerate(["12345678901234567890123456789012345678", "9007199254740993",
                           "-0.00000000000000000000000000000000000123"]):
        wid = "w-num-%d" % i
        status, _, data = mdaemon.request("POST", "/v1/models/Wallet/items",
                                          body='{"id": "%s", "balance": %s}' % (wid, n),
                                          headers={"Content-Type": "application/json"})
        assert status == 201, data
        assert Decimal(exact_json(data)["balance"]) == Decimal(n)
        assert Decimal(raw_item(mdaemon, "Wallet", wid)["balance"]["N"]) == Decimal(n)
        status, _, data = mdaemon.request("GET", item_path("Wallet", wid))
        assert Decimal(exact_json(data)["balance"]) == Decimal(n), data


def test_add_is_decimal_exact(mdaemon):
    status, _, _ = mdaemon.json("POST", "/v1/models/Wallet/items",
                                body={"id": "w-add", "balance": "0.1"})
    assert status == 201
    status, _, data = mdaemon.request("PATCH", item_path("Wallet", "w-add"),
                                      body='{"add": {"balance": 0.2}}',
                                      headers={"Content-Type": "application/json"})
    assert status == 200, data
    assert raw_item(mdaemon, "Wallet", "w-add")["balance"] == {"N": "0.3"}
    assert Decimal(exact_json(data)["balance"]) == Decimal("0.3")


def test_38_digit_integer_is_exact(mdaemon):
    n = "12345678901234567890123456789012345678"
    status, _, data = mdaemon.request("POST", "/v1/models/NumberPrecision/items",
                                      body='{"PK": "NUM", "SK": "int38", "largeInteger": %s}' % n,
                                      headers={"Content-Type": "application/json"})
    assert status == 201, data
    assert exact_json(data)["largeInteger"] == n
    assert raw_item(mdaemon, "NumberPrecision", "NUM", "int38")["largeInteger"] == {"N": n}
    status, _, data = mdaemon.request("GET", item_path("NumberPrecision", "NUM", "int38"))
    assert exact_json(data)["largeInteger"] == n


def test_2_pow_53_plus_1_as_json_number(mdaemon):
    body = '{"PK": "NUM", "SK": "p53", "largeInteger": 9007199254740993, ' \
           '"preciseDecimal": 0.1000000000000000055511151231257827}'
    status, _, data = mdaemon.request("POST", "/v1/models/NumberPrecision/items", body=body,
                                      headers={"Content-Type": "application/json"})
    assert status == 201, data
    raw = raw_item(mdaemon, "NumberPrecision", "NUM", "p53")
    assert raw["largeInteger"] == {"N": "9007199254740993"}
    assert raw["preciseDecimal"] == {"N": "0.1000000000000000055511151231257827"}
    status, _, data = mdaemon.request("GET", item_path("NumberPrecision", "NUM", "p53"))
    got = exact_json(data)
    assert got["largeInteger"] == "9007199254740993"
    assert got["preciseDecimal"] == "0.1000000000000000055511151231257827"


def test_39_digit_number_is_400(mdaemon):
    status, hdrs, body = mdaemon.json("POST", "/v1/models/NumberPrecision/items", body={
        "PK": "NUM", "SK": "d39", "largeInteger": "123456789012345678901234567890123456789"})
    assert_error(status, hdrs, body, 400, "ValidationError", "largeInteger")


def test_number_key_in_path(mdaemon):
    status, _, body = mdaemon.json("POST", "/v1/models/Counter/items",
                                   body={"n": 12345678901234567890, "label": "big"})
    assert status == 201, body
    status, _, body = mdaemon.json("GET", "/v1/models/Counter/items/12345678901234567890")
    assert status == 200, body
    assert body["label"] == "big" and str(body["n"]) == "12345678901234567890"
    # The same number in another notation is the same key.
    status, _, body = mdaemon.json("GET", "/v1/models/Counter/items/12345678901234567890.00")
    assert status == 200 and body["label"] == "big"
    status, _, body = mdaemon.json("GET", "/v1/models/Counter/items/1.234567890123456789E19")
    assert status == 200 and body["label"] == "big"
    status, hdrs, body = mdaemon.json("GET", "/v1/models/Counter/items/twelve")
    assert_error(status, hdrs, body, 400, "ValidationError")


def test_binary_key_in_path_is_base64url(mdaemon):
    key = bytes([0xfb, 0xff, 0xfe, 0x00, 0x3e])
    status, _, body = mdaemon.json("POST", "/v1/models/Blob/items",
                                   body={"bid": b64(key), "label": "bin"})
    assert status == 201, body
    assert base64.b64decode(body["bid"]) == key
    status, _, body = mdaemon.json("GET", "/v1/models/Blob/items/" + kseg(b64url(key)))
    assert status == 200, body
    assert base64.b64decode(body["bid"]) == key and body["label"] == "bin"


def test_sets_reject_duplicates(mdaemon):
    status, hdrs, body = mdaemon.json("POST", USERS, body={"PK": "USER#dup", "SK": "P",
                                                          "tags": ["a", "b", "a"]})
    assert_error(status, hdrs, body, 400, "ValidationError", "tags")
    status, hdrs, body = mdaemon.json("POST", "/v1/models/TypeMatrix/items", body={
        "PK": "TM#dup", "SK": "ns", "numberSet": [1, 2, 1]})
    assert_error(status, hdrs, body, 400, "ValidationError", "numberSet")
    status, hdrs, body = mdaemon.json("POST", "/v1/models/TypeMatrix/items", body={
        "PK": "TM#dup", "SK": "bs", "binarySet": [b64(b"x"), b64(b"x")]})
    assert_error(status, hdrs, body, 400, "ValidationError", "binarySet")


def test_sets_round_trip_and_empty_set_reads_back_empty(mdaemon):
    status, _, body = mdaemon.json("POST", "/v1/models/TypeMatrix/items", body={
        "PK": "TM#sets", "SK": "1", "numberSet": [3, 1.5, "12345678901234567890"],
        "binarySet": [b64(b"\x00\x01"), b64(b"\xff")],
        "emptyNumberSet": [], "emptyBinarySet": []})
    assert status == 201, body
    status, _, got = mdaemon.json("GET", item_path("TypeMatrix", "TM#sets", "1"))
    assert status == 200
    assert sorted(str(x) for x in got["numberSet"]) == ["1.5", "12345678901234567890", "3"]
    assert sorted(base64.b64decode(x) for x in got["binarySet"]) == [b"\x00\x01", b"\xff"]
    assert got["emptyNumberSet"] == [] and got["emptyBinarySet"] == []
    raw = raw_item(mdaemon, "TypeMatrix", "TM#sets", "1")
    assert sorted(raw["numberSet"]["NS"]) == ["1.5", "12345678901234567890", "3"]
    assert raw["emptyNumberSet"] == {"NULL": True}
    assert raw["emptyBinarySet"] == {"NULL": True}


def test_binary_round_trip(mdaemon):
    blob = bytes(range(256)) * 3
    status, _, body = mdaemon.json("POST", "/v1/models/TypeMatrix/items", body={
        "PK": "TM#bin", "SK": "1", "binaryBlob": b64(blob)})
    assert status == 201, body
    status, _, got = mdaemon.json("GET", item_path("TypeMatrix", "TM#bin", "1"))
    assert base64.b64decode(got["binaryBlob"]) == blob
    assert got["binaryBlob"] == b64(blob)
    raw = raw_item(mdaemon, "TypeMatrix", "TM#bin", "1")
    assert raw["binaryBlob"] == {"B": b64(blob)}


def test_type_matrix_round_trip(mdaemon):
    item = {"PK": "TM#all", "SK": "1", "flag": False, "nothing": None,
            "items": [1, "two", {"three": [3.5]}, None, True],
            "metadata": {"k": "v", "n": -2, "nested": {"list": []}},
            "optionalString": ""}
    status, _, body = mdaemon.json("POST", "/v1/models/TypeMatrix/items", body=item)
    assert status == 201, body
    status, _, got = mdaemon.json("GET", item_path("TypeMatrix", "TM#all", "1"))
    assert got == item
    raw = raw_item(mdaemon, "TypeMatrix", "TM#all", "1")
    assert raw["flag"] == {"BOOL": False}
    assert raw["nothing"] == {"NULL": True}
    assert raw["items"] == {"L": [{"N": "1"}, {"S": "two"}, {"M": {"three": {"L": [{"N": "3.5"}]}}},
                                  {"NULL": True}, {"BOOL": True}]}
    assert raw["metadata"] == {"M": {"k": {"S": "v"}, "n": {"N": "-2"},
                                     "nested": {"M": {"list": {"L": []}}}}}
    assert raw["optionalString"] == {"S": ""}


def test_omit_empty_attributes_are_not_stored(mdaemon):
    body = create_user(mdaemon, "USER#oe", nickname="", tags=[], profile={}, emailHash="")
    for a in ("nickname", "tags", "profile", "emailHash"):
        assert a not in body, body
    raw = raw_item(mdaemon, "User", "USER#oe", "PROFILE")
    assert set(raw) == {"PK", "SK", "createdAt", "updatedAt", "version"}
    status, _, body = mdaemon.json("POST", "/v1/models/Order/items",
                                   body={"PK": "ORD#oe", "SK": "1", "status": "", "amount": 0})
    assert status == 201, body
    raw = raw_item(mdaemon, "Order", "ORD#oe", "1")
    assert "status" not in raw and "amount" not in raw


def test_json_true_string_attribute_is_deterministic(mdaemon):
    status, _, body = mdaemon.json("POST", "/v1/models/Wallet/items", body={
        "id": "wj", "settings": {"z": 1, "a": {"y": [True, None], "b": "x"}}})
    assert status == 201, body
    raw = raw_item(mdaemon, "Wallet", "wj")
    assert raw["settings"] == {"S": '{"a":{"b":"x","y":[true,null]},"z":1}'}
    status, _, got = mdaemon.json("GET", item_path("Wallet", "wj"))
    assert got["settings"] == {"z": 1, "a": {"y": [True, None], "b": "x"}}


def test_json_true_map_is_stored_natively(mdaemon):
    create_user(mdaemon, "USER#jm", profile={"city": "Oslo", "zip": 150})
    raw = raw_item(mdaemon, "User", "USER#jm", "PROFILE")
    assert raw["profile"] == {"M": {"city": {"S": "Oslo"}, "zip": {"N": "150"}}}


def test_item_over_400kb_is_413(mdaemon):
    status, hdrs, body = mdaemon.json("POST", USERS, body={"PK": "USER#big", "SK": "P",
                                                          "nickname": "x" * (401 * 1024)})
    err = assert_error(status, hdrs, body, 413, "PayloadTooLarge")
    assert err["retryable"] is False
    status, hdrs, body = mdaemon.json("GET", item_path("User", "USER#big", "P"))
    assert_error(status, hdrs, body, 404, "ItemNotFound")
    # Just under the limit is fine.
    status, _, body = mdaemon.json("POST", USERS, body={"PK": "USER#big", "SK": "P",
                                                       "nickname": "x" * (390 * 1024)})
    assert status == 201


def test_patch_making_item_too_large_is_413(mdaemon):
    create_user(mdaemon, "USER#grow", nickname="x" * (300 * 1024))
    status, hdrs, body = mdaemon.json("PATCH", item_path("User", "USER#grow", "PROFILE"), body={
        "set": {"emailHash": "y" * (200 * 1024)}})
    assert_error(status, hdrs, body, 413, "PayloadTooLarge")


def test_errors_carry_the_request_id(mdaemon):
    status, hdrs, body = mdaemon.json("GET", item_path("User", "USER#rid", "P"),
                                      headers={"X-Request-Id": "items-rid-1"})
    assert_error(status, hdrs, body, 404, "ItemNotFound")
    assert body["request_id"] == "items-rid-1"


def test_inflight_operations_return_to_zero(mdaemon):
    mdaemon.wait_metric("tabletheoryd_inflight_operations", 0)


def test_wrong_method_on_item_routes(mdaemon):
    status, hdrs, body = mdaemon.json("POST", item_path("User", "X", "Y"), body={})
    assert_error(status, hdrs, body, 405, "MethodNotAllowed")
    assert hdrs["allow"] == "GET, HEAD, PUT, PATCH, DELETE"
    status, hdrs, body = mdaemon.json("GET", "/v1/models/User/query")
    assert_error(status, hdrs, body, 405, "MethodNotAllowed")
    assert hdrs["allow"] == "POST"
    status, hdrs, body = mdaemon.json("DELETE", "/v1/models/User")
    assert_error(status, hdrs, body, 405, "MethodNotAllowed")
    assert hdrs["allow"] == "GET, HEAD, PUT"


def test_head_of_an_item(mdaemon):
    create_user(mdaemon, "USER#head")
    status, hdrs, data = mdaemon.request("HEAD", item_path("User", "USER#head", "PROFILE"))
    assert status == 200 and data == b"" and hdrs["etag"] == '"0"'
    status, hdrs, data = mdaemon.request("HEAD", item_path("User", "USER#headless", "PROFILE"))
    assert status == 404 and data == b""
