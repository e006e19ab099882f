# SPDX-License-Identifier: Apache-2.0
"""The job ledger's models and table are reserved (docs/ledger.md "Reserved
models"): every generic model route refuses them with 403 ReservedModel, a
model may not be registered on the jobs table, and the ledger itself keeps
working. Runs on memory, dynalite and moto."""
import json
import os
import subprocess
import tempfile
import urllib.parse
import uuid

import pytest

from daemon import DAEMON, PEER
from items_fixtures import assert_error

LEDGER = ["JobMeta", "JobRecord", "JobLock", "JobRequest", "SemaphoreLease"]
# A key of each model in the form of the item routes (pk/sk).
KEYS = {"JobMeta": {"pk": "JOB#j1", "sk": "META"},
        "JobRecord": {"pk": "JOB#j1", "sk": "REC#r1"},
        "JobLock": {"pk": "JOB#j1", "sk": "LOCK"},
        "JobRequest": {"pk": "JOB#j1", "sk": "REQ#k1"},
        "SemaphoreLease": {"pk": "SEM#s1#t1", "sk": "SLOT#000000000"}}


def seg(value):
    return urllib.parse.quote(str(value), safe="")


def key_path(model):
    k = KEYS[model]
    return "/v1/models/%s/items/%s/%s" % (model, seg(k["pk"]), seg(k["sk"]))


def new_id():
    return "seal-%s" % uuid.uuid4().hex[:12]


def definition(d, model):
    status, _, body = d.json("GET", "/v1/models/" + model)
    assert status == 200, body
    return body


def generic_calls(model, definition_body):
    """(method, path, body, field) of every generic route for `model`."""
    k = KEYS[model]
    item = dict(k, job_id="j1")
    base = "/v1/models/" + model
    return [
        ("PUT", base, definition_body, "name"),
        ("PUT", base + "?replace=true", definition_body, "name"),
        ("PUT", base + "/table", None, "model"),
        ("GET", base + "/table", None, "model"),
        ("DELETE", base + "/table", None, "model"),
        ("POST", base + "/items", item, "model"),
        ("PUT", key_path(model), item, "model"),
        ("GET", key_path(model), None, "model"),
        ("GET", key_path(model) + "?consistent=true", None, "model"),
        ("PATCH", key_path(model), {"set": {"job_id": "x"}}, "model"),
        ("PATCH", key_path(model), {"set": {"job_id": "x"}, "upsert": True}, "model"),
        ("DELETE", key_path(model), None, "model"),
        ("POST", base + "/query", {"partition": k["pk"]}, "model"),
        ("POST", base + "/scan", {}, "model"),
        ("POST", base + "/batch-get", {"keys": [k]}, "model"),
        ("POST", base + "/batch-write", {"put": [item]}, "model"),
        ("POST", base + "/batch-write", {"delete": [k]}, "model"),
        ("POST", "/v1/transactions/write",
         {"items": [{"model": model, "op": "put", "item": item}]}, "items[0].model"),
        ("POST", "/v1/transactions/write",
         {"items": [{"model": model, "op": "delete", "key": k}]}, "items[0].model"),
        ("POST", "/v1/transactions/write",
         {"items": [{"model": model, "op": "check", "key": k,
                     "condition": {"attribute_exists": "pk"}}]}, "items[0].model"),
        ("POST", "/v1/transactions/get",
         {"items": [{"model": model, "key": k}]}, "items[0].model"),
    ]


@pytest.mark.parametrize("model", LEDGER)
def test_every_generic_route_refuses_ledger_models(ld, model):
    body = definition(ld, model)  # reading the definition stays allowed
    assert body["name"] == model
    for method, path, req, field in generic_calls(model, body):
        status, hdrs, got = ld.json(method, path, body=req)
        err = assert_error(status, hdrs, got, 403, "ReservedModel", field)
        assert err["retryable"] is False, (method, path, got)
        assert "/v1/jobs" in err["message"] or "job ledger" in err["message"], got
    # The definition did not change.
    assert definition(ld, model) == body


def test_reserved_refusal_is_the_same_for_a_mixed_transaction(ld):
    """A transaction naming one ledger model among others is refused as a
    whole, before any I/O."""
    status, hdrs, body = ld.json("POST", "/v1/transactions/write", body={
        "items": [{"model": "JobMeta", "op": "check", "key": KEYS["JobMeta"],
                   "condition": {"attribute_exists": "pk"}}]})
    assert_error(status, hdrs, body, 403, "ReservedModel", "items[0].model")


def register(d, name, table, additional=False):
    model = {
        "name": name,
        "table": {"name": table},
        "keys": {"partition": {"attribute": "pk", "type": "S"},
                 "sort": {"attribute": "sk", "type": "S"}},
        "attributes": [
            {"attribute": "pk", "type": "S", "required": True, "roles": ["pk"]},
            {"attribute": "sk", "type": "S", "required": True, "roles": ["sk"]},
        ],
    }
    if additional:
        model["tags"] = {"additional_attributes": True}
    return d.json("PUT", "/v1/models/" + name, body=model)


def test_no_new_model_on_the_jobs_table(ld):
    for additional in (False, True):
        name = "Spy%d" % additional
        status, hdrs, body = register(ld, name, "tabletheory-jobs", additional)
        assert_error(status, hdrs, body, 403, "ReservedModel", "table")
        status, hdrs, body = ld.json("GET", "/v1/models/" + name)
        assert_error(status, hdrs, body, 404, "ModelNotFound")
    _, _, listing = ld.json("GET", "/v1/models")
    # The listing shows the user's models only: none is on the jobs table.
    on_jobs = {m["name"] for m in listing["models"]
               if m["table"]["name"] == "tabletheory-jobs"}
    assert on_jobs == set()


def test_probe_attacks_leave_the_ledger_intact(ld):
    """The scenarios of the report: none of them changes anything."""
    jid = new_id()
    status, _, job = ld.json("POST", "/v1/jobs", body={"job_id": jid, "tenant_id": "acme"})
    assert status == 201, job
    path = "/v1/jobs/" + seg(jid)
    status, _, lease = ld.json("POST", path + "/lease",
                               body={"owner": "w1", "duration_seconds": 60})
    assert status == 200, lease
    pk = seg("JOB#" + jid)

    # Steal the lease.
    status, hdrs, body = ld.json("PATCH", "/v1/models/JobLock/items/%s/LOCK" % pk,
                                 body={"set": {"owner": "x"}})
    assert_error(status, hdrs, body, 403, "ReservedModel")
    status, hdrs, body = ld.json("POST", path + "/lease",
                                 body={"owner": "x", "duration_seconds": 60})
    assert_error(status, hdrs, body, 409, "LeaseHeld")

    # Move a finished job back without a version bump.
    for frm, to, v in (("PENDING", "RUNNING", 1), ("RUNNING", "SUCCEEDED", 2)):
        status, _, job = ld.json("POST", path + "/transition",
                                 body={"expected_version": v, "from": frm, "to": to})
        assert status == 200, job
    status, hdrs, body = ld.json("PATCH", "/v1/models/JobMeta/items/%s/META" % pk,
                                 body={"set": {"status": "PENDING"}})
    assert_error(status, hdrs, body, 403, "ReservedModel")
    status, _, now = ld.json("GET", path)
    assert status == 200 and now["status"] == "SUCCEEDED" and now["version"] == 3, now

    # Store an unsanitized error.
    status, hdrs, body = ld.json("POST", "/v1/models/JobRecord/items", body={
        "pk": "JOB#" + jid, "sk": "REC#r1", "job_id": jid, "record_id": "r1",
        "status": "FAILED", "error": {"message": "password=hunter2"}})
    assert_error(status, hdrs, body, 403, "ReservedModel")
    status, hdrs, body = ld.json("GET", path + "/records/r1")
    assert_error(status, hdrs, body, 404, "ItemNotFound")

    # Replace JobMeta's definition, then create jobs.
    meta = definition(ld, "JobMeta")
    broken = json.loads(json.dumps(meta))
    broken["attributes"].append({"attribute": "extra", "type": "S", "optional": True})
    status, hdrs, body = ld.json("PUT", "/v1/models/JobMeta?replace=true", body=broken)
    assert_error(status, hdrs, body, 403, "ReservedModel", "name")
    # An invalid body gets the same answer: the name alone is refused.
    broken["attributes"] = [a for a in broken["attributes"] if a["attribute"] != "tenant_id"]
    status, hdrs, body = ld.json("PUT", "/v1/models/JobMeta?replace=true", body=broken)
    assert_error(status, hdrs, body, 403, "ReservedModel", "name")
    assert definition(ld, "JobMeta") == meta
    status, _, job = ld.json("POST", "/v1/jobs", body={"job_id": new_id(), "tenant_id": "acme"})
    assert status == 201 and job["version"] == 1, job

    # The ledger's own writes still work, sanitizer included.
    status, _, rec = ld.json("PUT", path + "/records/r1", body={
        "status": "FAILED", "error": {"type": "E", "code": "1",
                                      "message": "login failed: password=hunter2",
                                      "retryable": False, "fields": {}}})
    assert status == 200, rec
    assert "hunter2" not in json.dumps(rec)
    status, _, req = ld.json("POST", path + "/requests/k1", body={})
    assert status in (200, 201), req
    assert ld.request("DELETE", path + "/lease?owner=w1")[0] == 204


def test_jobs_table_delete_route(fresh_daemon):
    """DELETE /v1/jobs/table replaces the refused model route, and needs
    --allow-table-delete like it."""
    d = fresh_daemon()
    if not PEER:
        status, hdrs, body = d.json("DELETE", "/v1/jobs/table")
        assert_error(status, hdrs, body, 403, "Forbidden")
    d2 = fresh_daemon("--allow-table-delete", "--jobs-table", "seal-ledger-%s" % uuid.uuid4().hex[:8])
    status, hdrs, body = d2.request("DELETE", "/v1/jobs/table")
    assert status == 204, body
    status, hdrs, body = d2.json("POST", "/v1/jobs", body={"tenant_id": "acme"})
    assert_error(status, hdrs, body, 404, "TableNotFound")
    status, _, body = d2.json("PUT", "/v1/jobs/table")
    assert status == 201, body
    status, _, job = d2.json("POST", "/v1/jobs", body={"tenant_id": "acme"})
    assert status == 201, job
    assert d2.request("DELETE", "/v1/jobs/table")[0] == 204


def test_user_file_on_the_jobs_table_is_a_startup_error():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "spy.json")
        with open(path, "w") as f:
            json.dump({"dms_version": "0.2", "models": [{
                "name": "Spy", "table": {"name": "acme-ledger"},
                "keys": {"partition": {"attribute": "pk", "type": "S"},
                         "sort": {"attribute": "sk", "type": "S"}},
                "attributes": [
                    {"attribute": "pk", "type": "S", "required": True, "roles": ["pk"]},
                    {"attribute": "sk", "type": "S", "required": True, "roles": ["sk"]}],
                "tags": {"additional_attributes": True}}]}, f)
        p = subprocess.run([DAEMON, "--jobs-table", "acme-ledger", "--models", path,
                            "--check-config"], capture_output=True, timeout=10)
        assert p.returncode == 2, p
        assert b"reserved" in p.stderr and b"acme-ledger" in p.stderr, p.stderr
        # The same file with another jobs table is fine.
        p = subprocess.run([DAEMON, "--jobs-table", "other-ledger", "--models", path,
                            "--check-config"], capture_output=True, timeout=10)
        assert p.returncode == 0, p
