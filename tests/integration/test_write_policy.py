# SPDX-License-Identifier: Apache-2.0
"""DMS write policies, as TableTheory enforces them, before any I/O:

- `write_policy.mode: write_once` (model Entry): items can only be created
  (POST, PUT with If-None-Match: *, a transaction `create`); PUT, PATCH,
  DELETE, transaction put/update/delete and batch-write puts and deletes are
  409 ImmutableModelMutation;
- `protected_attributes` (model Pinned, `pin`): an update that sets or
  removes one, any PUT (a replace could change one: TableTheory refuses
  save/upsert of such a model outright), a transaction put and a batch-write
  put are 409 ProtectedFieldMutation; other updates, creates and deletes
  pass. An update may add its own `protected_attributes` list.

Every refusal is checked to have written nothing, by reading back. Models of
models/policy.yml."""
import os

import pytest

from daemon import skip_on
from items_fixtures import assert_error, item_path, mdaemon  # noqa: F401

no_txn_on_dynalite = skip_on("dynalite", "transactions need TransactWriteItems, which dynalite "
                                         "does not implement; these run on moto and memory")

_seq = iter(range(1, 1 << 30))


def uid(prefix="p"):
    return "%s-%d-%d" % (prefix, os.getpid(), next(_seq))


def get(d, model, *key):
    status, _, body = d.json("GET", item_path(model, *key) + "?consistent=true")
    return body if status == 200 else None


def new_event(d, kind="promoted"):
    stream = uid("s")
    status, _, body = d.json("POST", "/v1/models/Entry/items",
                             body={"stream": stream, "seq": 1, "kind": kind})
    assert status == 201, body
    return stream, body


def new_pinned(d, pin="rel-1", status_="active"):
    pid = uid()
    status, _, body = d.json("POST", "/v1/models/Pinned/items",
                             body={"id": pid, "pin": pin, "status": status_})
    assert status == 201, body
    return pid, body


# ---- write_once ------------------------------------------------------------------------------


def test_write_once_allows_creates_only(mdaemon):
    stream, created = new_event(mdaemon)
    path = item_path("Entry", stream, 1)
    # A second create of the key is the usual failed condition.
    status, hdrs, body = mdaemon.json("POST", "/v1/models/Entry/items",
                                      body={"stream": stream, "seq": 1, "kind": "again"})
    assert_error(status, hdrs, body, 409, "ConditionFailed")
    # PUT with If-None-Match: * is a create, so it is allowed for a new key.
    status, _, body = mdaemon.json("PUT", item_path("Entry", stream, 2),
                                   body={"stream": stream, "seq": 2, "kind": "second"},
                                   headers={"If-None-Match": "*"})
    assert status == 201, body
    for method, extra in (("PATCH", {"body": {"set": {"kind": "mutated"}}}),
                          ("PATCH", {"body": {"fields": ["kind"], "item": {"kind": "x"}}}),
                          ("PATCH", {"body": {"set": {"kind": "x"}, "upsert": True}}),
                          ("PUT", {"body": {"stream": stream, "seq": 1, "kind": "over"}}),
                          ("DELETE", {})):
        status, hdrs, body = mdaemon.json(method, path, **extra)
        err = assert_error(status, hdrs, body, 409, "ImmutableModelMutation")
        assert "write_once" in err["message"], body
    assert get(mdaemon, "Entry", stream, 1) == created


def test_write_once_refusals_do_no_io_for_new_keys(mdaemon):
    stream = uid("s")
    status, hdrs, body = mdaemon.json("PUT", item_path("Entry", stream, 1),
                                      body={"stream": stream, "seq": 1, "kind": "k"})
    assert_error(status, hdrs, body, 409, "ImmutableModelMutation")
    status, hdrs, body = mdaemon.json("PATCH", item_path("Entry", stream, 2),
                                      body={"set": {"kind": "k"}, "upsert": True})
    assert_error(status, hdrs, body, 409, "ImmutableModelMutation")
    assert get(mdaemon, "Entry", stream, 1) is None
    assert get(mdaemon, "Entry", stream, 2) is None


def test_write_once_batch_write(mdaemon):
    stream, created = new_event(mdaemon)
    status, hdrs, body = mdaemon.json("POST", "/v1/models/Entry/batch-write",
                                      body={"put": [{"stream": stream, "seq": 7, "kind": "k"}]})
    assert_error(status, hdrs, body, 409, "ImmutableModelMutation", "put")
    status, hdrs, body = mdaemon.json("POST", "/v1/models/Entry/batch-write",
                                      body={"delete": [{"stream": stream, "seq": 1}]})
    assert_error(status, hdrs, body, 409, "ImmutableModelMutation", "delete")
    assert get(mdaemon, "Entry", stream, 7) is None
    assert get(mdaemon, "Entry", stream, 1) == created


@no_txn_on_dynalite
def test_write_once_in_transactions(mdaemon):
    stream, created = new_event(mdaemon)
    # A create of the write_once model next to an update of another: allowed.
    pid, _ = new_pinned(mdaemon)
    status, _, body = mdaemon.json("POST", "/v1/transactions/write", body={"items": [
        {"op": "update", "model": "Pinned", "key": {"id": pid}, "set": {"status": "warming"},
         "expected_version": 0},
        {"op": "create", "model": "Entry", "item": {"stream": stream, "seq": 2, "kind": "k"}},
        {"op": "check", "model": "Entry", "key": {"stream": stream, "seq": 1},
         "condition": {"attr": "kind", "op": "=", "value": "promoted"}}]})
    assert status == 200, body
    assert get(mdaemon, "Entry", stream, 2)["kind"] == "k"
    assert get(mdaemon, "Pinned", pid)["version"] == 1
    # Each mutation of an Entry item refuses the whole transaction, naming the item.
    other = uid("s")
    for entry in ({"op": "update", "key": {"stream": stream, "seq": 1}, "set": {"kind": "x"}},
                  {"op": "put", "item": {"stream": stream, "seq": 1, "kind": "x"}},
                  {"op": "delete", "key": {"stream": stream, "seq": 1}}):
        entry["model"] = "Entry"
        status, hdrs, body = mdaemon.json("POST", "/v1/transactions/write", body={"items": [
            {"op": "create", "model": "Entry", "item": {"stream": other, "seq": 1}},
            entry]})
        assert_error(status, hdrs, body, 409, "ImmutableModelMutation", "items[1]")
    assert get(mdaemon, "Entry", other, 1) is None
    assert get(mdaemon, "Entry", stream, 1) == created


# ---- protected attributes --------------------------------------------------------------------


def test_protected_attribute_updates_are_refused(mdaemon):
    pid, created = new_pinned(mdaemon)
    path = item_path("Pinned", pid)
    cases = (({"set": {"pin": "rel-2"}}, "set.pin"),
             ({"remove": ["pin"]}, "remove[0]"),
             ({"set_if_not_exists": {"pin": "rel-2"}}, "set_if_not_exists.pin"),
             ({"fields": ["pin"], "item": {"pin": "rel-2", "version": 0}}, None),
             # an empty omit_empty field selected is a REMOVE: refused as well
             ({"fields": ["pin"], "item": {"pin": ""}}, None),
             # no `fields`: every non-empty attribute of the item is written
             ({"item": {"pin": "rel-2", "status": "x"}}, None),
             ({"set": {"pin": "rel-2"}, "upsert": True}, "set.pin"))
    for update, field in cases:
        status, hdrs, body = mdaemon.json("PATCH", path, body=update)
        err = assert_error(status, hdrs, body, 409, "ProtectedFieldMutation", field)
        assert "pin" in err["message"] and "rel-2" not in err["message"], body
    assert get(mdaemon, "Pinned", pid) == created


def test_unprotected_changes_and_deletes_are_allowed(mdaemon):
    pid, _ = new_pinned(mdaemon)
    path = item_path("Pinned", pid)
    status, _, body = mdaemon.json("PATCH", path, body={"set": {"status": "warming",
                                                                "meta": {"pin": "not it"}}})
    assert status == 200 and body["version"] == 1 and body["pin"] == "rel-1", body
    status, _, body = mdaemon.json("PATCH", path, body={"fields": ["status"],
                                                        "item": {"status": "w2", "version": 1}})
    assert status == 200 and body["status"] == "w2" and body["version"] == 2, body
    status, _, body = mdaemon.json("PATCH", path, body={"set": {"meta.pin": "nested"}})
    assert status == 200 and body["meta"] == {"pin": "nested"}, body
    # A create may set the protected attribute, or leave it out.
    status, _, body = mdaemon.json("POST", "/v1/models/Pinned/items", body={"id": uid()})
    assert status == 201, body
    status, _, _ = mdaemon.json("DELETE", path)
    assert status == 204
    assert get(mdaemon, "Pinned", pid) is None


def test_per_request_protected_attributes(mdaemon):
    pid, created = new_pinned(mdaemon)
    path = item_path("Pinned", pid)
    status, hdrs, body = mdaemon.json("PATCH", path, body={
        "fields": ["status"], "item": {"status": "x", "version": 0},
        "protected_attributes": ["status"]})
    assert_error(status, hdrs, body, 409, "ProtectedFieldMutation")
    status, hdrs, body = mdaemon.json("PATCH", path, body={
        "set": {"meta.a": 1}, "protected_attributes": ["meta"]})
    assert_error(status, hdrs, body, 409, "ProtectedFieldMutation", "set.meta.a")
    assert get(mdaemon, "Pinned", pid) == created
    # The list protects only what it names.
    status, _, body = mdaemon.json("PATCH", path, body={"set": {"status": "y"},
                                                        "protected_attributes": ["meta"]})
    assert status == 200 and body["status"] == "y", body
    for bad, field in (("status", "protected_attributes"),
                       ([""], "protected_attributes[0]"),
                       ([1], "protected_attributes[0]")):
        status, hdrs, body = mdaemon.json("PATCH", path, body={"set": {"status": "z"},
                                                               "protected_attributes": bad})
        assert_error(status, hdrs, body, 400, "ValidationError", field)
    # Not part of a whole-item write.
    status, hdrs, body = mdaemon.json("POST", "/v1/transactions/write", body={"items": [
        {"op": "create", "model": "Pinned", "item": {"id": uid()},
         "protected_attributes": ["pin"]}]})
    assert_error(status, hdrs, body, 400, "ValidationError", "items[0].protected_attributes")


def test_protected_model_refuses_puts(mdaemon):
    pid, created = new_pinned(mdaemon)
    # Even a put that keeps the value: a replace is refused outright, as in TableTheory.
    for item in ({"id": pid, "pin": "rel-2", "status": "active"},
                 {"id": pid, "pin": "rel-1", "status": "x"}, {"id": pid, "status": "no pin"}):
        status, hdrs, body = mdaemon.json("PUT", item_path("Pinned", pid), body=item)
        assert_error(status, hdrs, body, 409, "ProtectedFieldMutation")
    assert get(mdaemon, "Pinned", pid) == created
    fresh = uid()
    status, hdrs, body = mdaemon.json("PUT", item_path("Pinned", fresh),
                                      body={"id": fresh, "pin": "p"})
    assert_error(status, hdrs, body, 409, "ProtectedFieldMutation")
    assert get(mdaemon, "Pinned", fresh) is None
    # Create-only PUT is a create.
    status, _, body = mdaemon.json("PUT", item_path("Pinned", fresh),
                                   body={"id": fresh, "pin": "p"},
                                   headers={"If-None-Match": "*"})
    assert status == 201 and body["pin"] == "p", body


def test_protected_model_batch_write(mdaemon):
    pid, created = new_pinned(mdaemon)
    fresh = uid()
    status, hdrs, body = mdaemon.json("POST", "/v1/models/Pinned/batch-write",
                                      body={"put": [{"id": fresh, "status": "s"}],
                                            "delete": [{"id": pid}]})
    assert_error(status, hdrs, body, 409, "ProtectedFieldMutation", "put")
    assert get(mdaemon, "Pinned", fresh) is None
    assert get(mdaemon, "Pinned", pid) == created
    # Deletes alone are fine.
    status, _, body = mdaemon.json("POST", "/v1/models/Pinned/batch-write",
                                   body={"delete": [{"id": pid}]})
    assert status == 200 and body["processed"] == 1, body
    assert get(mdaemon, "Pinned", pid) is None


@no_txn_on_dynalite
def test_protected_attributes_in_transactions(mdaemon):
    pid, created = new_pinned(mdaemon)
    fresh = uid()
    create = {"op": "create", "model": "Pinned", "item": {"id": fresh, "pin": "p"}}
    for entry, field in (
            ({"op": "update", "key": {"id": pid}, "set": {"pin": "rel-2"}}, "items[1].set.pin"),
            ({"op": "update", "key": {"id": pid}, "remove": ["pin"]}, "items[1].remove[0]"),
            ({"op": "update", "key": {"id": pid}, "set": {"status": "s"},
              "protected_attributes": ["status"]}, "items[1].set.status"),
            ({"op": "put", "item": {"id": pid, "pin": "rel-1"}}, "items[1]")):
        entry["model"] = "Pinned"
        status, hdrs, body = mdaemon.json("POST", "/v1/transactions/write",
                                          body={"items": [create, entry]})
        assert_error(status, hdrs, body, 409, "ProtectedFieldMutation", field)
    assert get(mdaemon, "Pinned", fresh) is None
    assert get(mdaemon, "Pinned", pid) == created
    # Unprotected changes, a create and a delete go through.
    other, _ = new_pinned(mdaemon)
    status, _, body = mdaemon.json("POST", "/v1/transactions/write", body={"items": [
        create, {"op": "update", "model": "Pinned", "key": {"id": pid}, "set": {"status": "s"}},
        {"op": "delete", "model": "Pinned", "key": {"id": other}}]})
    assert status == 200, body
    assert get(mdaemon, "Pinned", fresh)["pin"] == "p"
    assert get(mdaemon, "Pinned", pid)["status"] == "s"
    assert get(mdaemon, "Pinned", other) is None


def test_per_request_list_on_a_model_without_policy(mdaemon):
    """The request-level list works on any model (here one without a write policy)."""
    tenant = uid("t")
    status, _, body = mdaemon.json("POST", "/v1/models/Line/items",
                                   body={"tenant": tenant, "n": 1, "label": "a"})
    assert status == 201, body
    status, hdrs, body = mdaemon.json("PATCH", item_path("Line", tenant, 1), body={
        "set": {"label": "b"}, "protected_attributes": ["label"]})
    assert_error(status, hdrs, body, 409, "ProtectedFieldMutation", "set.label")
    status, _, body = mdaemon.json("PUT", item_path("Line", tenant, 1),
                                   body={"tenant": tenant, "n": 1, "label": "c"})
    assert status == 200 and body["label"] == "c", body


def test_models_show_their_write_policy(mdaemon):
    status, _, body = mdaemon.json("GET", "/v1/models/Entry")
    assert status == 200
    assert body["write_policy"] == {"mode": "write_once", "protected_attributes": []}, body
    status, _, body = mdaemon.json("GET", "/v1/models/Pinned")
    assert body["write_policy"] == {"mode": "mutable", "protected_attributes": ["pin"]}, body
