# SPDX-License-Identifier: Apache-2.0
"""The job ledger over HTTP (docs/ledger.md): the jobs table and its
built-in models, jobs and optimistic transitions, per-record status with
sanitized errors, lists through the GSIs, leases, idempotency records, and
logs that carry none of the values."""
import json
import os
import re
import shutil
import subprocess
import urllib.parse
import urllib.request
import uuid

import pytest

from daemon import DAEMON, PEER, PEER_ENDPOINT, PEER_ENV, SRCDIR
from items_fixtures import assert_error, time_key

UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
LEDGER_MODELS = {"JobMeta", "JobRecord", "JobLock", "JobRequest", "SemaphoreLease"}


def stored_item(pk, sk, table="tabletheory-jobs"):
    """The stored item in DynamoDB's wire form, read straight from the peer:
    the model routes refuse the ledger's models (docs/ledger.md "Reserved
    models"). None on the memory backend, whose stored ledger items
    tests/unit/test_ledger.c reads through the backend port."""
    if not PEER:
        return None
    # A plain GetItem over HTTP (the tests use the standard library only):
    # dynalite checks no signature, moto only reads the credential scope.
    body = json.dumps({"TableName": table, "Key": {"pk": {"S": pk}, "sk": {"S": sk}},
                       "ConsistentRead": True}).encode()
    req = urllib.request.Request(PEER_ENDPOINT + "/", data=body, headers={
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "DynamoDB_20120810.GetItem",
        "X-Amz-Date": "20200101T000000Z",
        "Authorization": "AWS4-HMAC-SHA256 Credential=%s/20200101/us-east-1/dynamodb/"
                         "aws4_request, SignedHeaders=content-type;host, Signature=00"
                         % PEER_ENV["AWS_ACCESS_KEY_ID"]})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.load(resp)["Item"]


def seg(value):
    return urllib.parse.quote(str(value), safe="")


def job_path(job_id, *rest):
    return "/v1/jobs/" + "/".join([seg(job_id)] + [seg(r) for r in rest])


def new_id(prefix="job"):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:12])


def create_job(d, job_id=None, tenant="acme", **extra):
    body = {"tenant_id": tenant}
    if job_id is not None:
        body["job_id"] = job_id
    body.update(extra)
    status, _, job = d.json("POST", "/v1/jobs", body=body)
    assert status == 201, job
    return job


def transition(d, job_id, expected, to, frm=None):
    body = {"expected_version": expected, "to": to}
    if frm:
        body["from"] = frm
    return d.json("POST", job_path(job_id, "transition"), body=body)


def lease(d, job_id, owner, seconds=30, refresh=False):
    path = job_path(job_id, "lease", "refresh") if refresh else job_path(job_id, "lease")
    return d.json("POST", path, body={"owner": owner, "duration_seconds": seconds})


def release(d, job_id, owner):
    return d.request("DELETE", job_path(job_id, "lease") + "?owner=" + seg(owner))


# ---- the table and the built-in models ----------------------------------------

def test_jobs_table_exists_on_memory(ld):
    status, _, body = ld.json("PUT", "/v1/jobs/table")
    assert status == 200, body  # the memory backend created it at start
    assert body["table"] == "tabletheory-jobs" and body["status"] == "ACTIVE"
    assert sorted(ix["name"] for ix in body["indexes"]) == [
        "status-created-index", "tenant-created-index"]
    assert {ix["kind"] for ix in body["indexes"]} == {"GSI"}


def test_builtin_models_are_readable_not_listed(ld):
    # The ledger's models are its own: GET /v1/models lists the user's only.
    status, _, body = ld.json("GET", "/v1/models")
    assert status == 200
    assert not LEDGER_MODELS & {m["name"] for m in body["models"]}
    status, _, meta = ld.json("GET", "/v1/models/JobMeta")
    assert status == 200
    assert meta["table"]["name"] == "tabletheory-jobs"
    assert meta["keys"]["partition"] == {"attribute": "pk", "type": "S"}
    assert meta["keys"]["sort"] == {"attribute": "sk", "type": "S"}
    indexes = {ix["name"]: ix for ix in meta["indexes"]}
    assert indexes["status-created-index"]["partition"]["attribute"] == "status"
    assert indexes["status-created-index"]["sort"]["attribute"] == "created_at"
    assert indexes["tenant-created-index"]["partition"]["attribute"] == "tenant_id"
    assert all(ix["projection"]["type"] == "ALL" for ix in indexes.values())
    for name in LEDGER_MODELS:
        _, _, m = ld.json("GET", "/v1/models/" + name)
        attrs = {a["attribute"]: a for a in m["attributes"]}
        assert attrs["ttl"]["roles"] == ["ttl"], name
        assert "created_at" in attrs and "updated_at" in attrs, name


def test_jobs_table_flag(fresh_daemon):
    d = fresh_daemon("--jobs-table", "acme-ledger")
    _, _, meta = d.json("GET", "/v1/models/JobRequest")
    assert meta["table"]["name"] == "acme-ledger"
    status, _, body = d.json("PUT", "/v1/jobs/table")
    assert status == 200 and body["table"] == "acme-ledger", body
    job = create_job(d, "j1")
    assert job["version"] == 1


def test_bad_jobs_table_exits_2():
    p = subprocess.run([DAEMON, "--jobs-table", "x", "--check-config"], capture_output=True,
                       timeout=10)
    assert p.returncode == 2, p
    assert b"jobs-table" in p.stderr


# ---- jobs -------------------------------------------------------------------

def test_create_and_get_job(ld):
    jid = new_id()
    now_s, now_ns = ld.clock()
    job = create_job(ld, jid, tenant="t-create", ttl_seconds=3600)
    assert job["job_id"] == jid and job["tenant_id"] == "t-create"
    assert job["status"] == "PENDING" and job["version"] == 1
    assert job["ttl"] == now_s + 3600
    assert time_key(job["created_at"]) == (now_s, now_ns % 10**9)
    assert job["created_at"] == job["updated_at"]
    assert "pk" not in job and "sk" not in job
    status, _, got = ld.json("GET", job_path(jid))
    assert status == 200 and got == job
    # What is stored: the key layout of docs/ledger.md.
    raw = stored_item("JOB#" + jid, "META")
    if raw is not None:
        assert raw["pk"] == {"S": "JOB#" + jid} and raw["sk"] == {"S": "META"}
        assert raw["version"] == {"N": "1"}


def test_create_generates_uuid4_and_takes_status(ld):
    job = create_job(ld, tenant="t-gen", status="RUNNING")
    assert UUID4.fullmatch(job["job_id"]), job
    assert job["status"] == "RUNNING"
    other = create_job(ld, tenant="t-gen")
    assert other["job_id"] != job["job_id"]


def test_create_existing_is_409(ld):
    jid = new_id()
    create_job(ld, jid)
    status, hdrs, body = ld.json("POST", "/v1/jobs", body={"job_id": jid, "tenant_id": "x"})
    assert_error(status, hdrs, body, 409, "AlreadyExists", "job_id")
    assert jid not in body["error"]["message"]


def test_integer_members_accept_whole_numbers_in_any_spelling(ld):
    """ttl_seconds and duration_seconds are JSON Schema integers: 3600.0 and
    3.6e3 are 3600; 3600.5 is refused."""
    for text in ("3600.0", "3.6e3"):
        status, _, out = ld.request("POST", "/v1/jobs",
                                    body='{"tenant_id": "t-int", "ttl_seconds": %s}' % text,
                                    headers={"Content-Type": "application/json"})
        assert status == 201, out
        assert json.loads(out)["ttl"] == ld.clock()[0] + 3600
    status, hdrs, out = ld.request("POST", "/v1/jobs",
                                   body='{"tenant_id": "t-int", "ttl_seconds": 3600.5}',
                                   headers={"Content-Type": "application/json"})
    assert_error(status, hdrs, json.loads(out), 400, "ValidationError", "ttl_seconds")
    jid = create_job(ld, tenant="t-int")["job_id"]
    status, _, out = ld.request("POST", job_path(jid, "lease"),
                                body='{"owner": "w1", "duration_seconds": 3.0e1}',
                                headers={"Content-Type": "application/json"})
    assert status == 200, out


@pytest.mark.parametrize("body,field", [
    ({}, "tenant_id"),
    ({"tenant_id": ""}, "tenant_id"),
    ({"tenant_id": "t", "status": "DONE"}, "status"),
    ({"tenant_id": "t", "ttl_seconds": -5}, "ttl_seconds"),
    ({"tenant_id": "t", "job_id": "a\nb"}, "job_id"),
    ({"tenant_id": "t", "version": 7}, "version"),
])
def test_create_validation(ld, body, field):
    status, hdrs, err = ld.json("POST", "/v1/jobs", body=body)
    assert_error(status, hdrs, err, 400, "ValidationError", field)


def test_get_unknown_job_is_404(ld):
    status, hdrs, body = ld.json("GET", job_path("no-such-job"))
    assert_error(status, hdrs, body, 404, "JobNotFound", "job_id")


def test_job_ids_with_slashes_and_unicode(ld):
    jid = "imports/2024-01-01/f\u00fcr.csv"
    create_job(ld, jid)
    status, _, got = ld.json("GET", job_path(jid))
    assert status == 200 and got["job_id"] == jid


# ---- transitions ---------------------------------------------------------------

def test_transitions_with_optimistic_versions(ld):
    jid = new_id()
    create_job(ld, jid)
    status, _, job = transition(ld, jid, 1, "RUNNING", "PENDING")
    assert status == 200, job
    assert job["status"] == "RUNNING" and job["version"] == 2
    status, hdrs, body = transition(ld, jid, 1, "SUCCEEDED")
    err = assert_error(status, hdrs, body, 409, "VersionConflict", "expected_version")
    assert err["details"]["version"] == 2 and err["details"]["expected_version"] == 1
    status, hdrs, body = transition(ld, jid, 2, "SUCCEEDED", "PENDING")
    err = assert_error(status, hdrs, body, 409, "InvalidTransition", "from")
    assert err["details"]["status"] == "RUNNING"
    status, _, job = transition(ld, jid, 2, "FAILED", "RUNNING")
    assert status == 200 and job["version"] == 3
    for expected in (3, 1):
        status, hdrs, body = transition(ld, jid, expected, "PENDING")
        err = assert_error(status, hdrs, body, 409, "InvalidTransition")
        assert err["details"]["status"] == "FAILED"
    _, _, job = ld.json("GET", job_path(jid))
    assert job["status"] == "FAILED" and job["version"] == 3


def test_transition_from_terminal_is_refused_without_reading(ld):
    # The job does not exist: a read would have said JobNotFound.
    status, hdrs, body = transition(ld, new_id(), 1, "RUNNING", "CANCELED")
    assert_error(status, hdrs, body, 409, "InvalidTransition", "from")


def test_transition_unknown_job_and_bad_bodies(ld):
    status, hdrs, body = transition(ld, new_id(), 1, "RUNNING")
    assert_error(status, hdrs, body, 404, "JobNotFound")
    jid = new_id()
    create_job(ld, jid)
    for bad, field in [({"to": "RUNNING"}, "expected_version"),
                       ({"expected_version": "1", "to": "RUNNING"}, "expected_version"),
                       ({"expected_version": 1}, "to"),
                       ({"expected_version": 1, "to": "DONE"}, "to")]:
        status, hdrs, body = ld.json("POST", job_path(jid, "transition"), body=bad)
        assert_error(status, hdrs, body, 400, "ValidationError", field)


# ---- records -----------------------------------------------------------------

SECRET_ERROR = {
    "type": "HttpError", "code": "E401",
    "message": "upstream said: password=hunter2\r\nAuthorization: Bearer eyJhbGciOi.xyz.abc",
    "retryable": True,
    "fields": {"api_key": "AKIA-SECRET", "card_number": "4111 1111 1111 1111",
               "account_number": "DE89370400440532013000", "row": 12},
}


def test_record_upsert_sanitizes_the_error(ld):
    jid = new_id()
    create_job(ld, jid)
    path = job_path(jid, "records", "row-1")
    status, _, rec = ld.json("PUT", path, body={"status": "PROCESSING"})
    assert status == 200, rec
    assert rec["job_id"] == jid and rec["record_id"] == "row-1"
    assert rec["status"] == "PROCESSING" and rec["version"] == 1
    created = rec["created_at"]
    status, _, rec = ld.json("PUT", path, body={"status": "FAILED", "error": SECRET_ERROR})
    assert status == 200, rec
    assert rec["version"] == 2 and rec["created_at"] == created
    err = rec["error"]
    assert err["type"] == "HttpError" and err["code"] == "E401" and err["retryable"] is True
    assert err["message"] == ("upstream said: password=[REDACTED] Authorization: Bearer "
                              "[REDACTED]")
    assert err["fields"] == {"api_key": "[REDACTED]", "card_number": "4111 11** **** 1111",
                             "account_number": "******************3000", "row": 12}
    # The stored item itself holds only the sanitized envelope.
    raw = stored_item("JOB#" + jid, "REC#row-1")
    text = json.dumps(raw) if raw is not None else json.dumps(rec)
    for secret in ("hunter2", "AKIA-SECRET", "eyJhbGciOi", "4111 1111 1111 1111",
                   "DE89370400440532013000"):
        assert secret not in text
    status, _, got = ld.json("GET", path)
    assert status == 200 and got == rec
    # No error given: the stored one is removed.
    status, _, rec = ld.json("PUT", path, body={"status": "SUCCEEDED"})
    assert status == 200 and "error" not in rec and rec["version"] == 3


def test_record_errors(ld):
    jid = new_id()
    status, hdrs, body = ld.json("GET", job_path(jid, "records", "nope"))
    assert_error(status, hdrs, body, 404, "ItemNotFound", "record_id")
    for bad, field in [({"status": "RUNNING"}, "status"),
                       ({"status": "FAILED", "error": ["x"]}, "error"),
                       ({"status": "FAILED", "error": {"message": 3}}, "error.message"),
                       ({"status": "FAILED", "error": {"fields": "x"}}, "error.fields")]:
        status, hdrs, body = ld.json("PUT", job_path(jid, "records", "r"), body=bad)
        assert_error(status, hdrs, body, 400, "ValidationError", field)


def test_records_list_by_status_with_cursor(ld):
    jid = new_id()
    create_job(ld, jid)
    for i in range(7):
        status, _, _ = ld.json("PUT", job_path(jid, "records", "r%02d" % i),
                               body={"status": "FAILED" if i % 3 == 0 else "SUCCEEDED"})
        assert status == 200
    status, _, page = ld.json("GET", job_path(jid, "records"))
    assert status == 200 and page["cursor"] is None
    assert [r["record_id"] for r in page["records"]] == ["r%02d" % i for i in range(7)]
    seen, cursor = [], None
    while True:
        q = "?status=SUCCEEDED&limit=2" + ("&cursor=" + seg(cursor) if cursor else "")
        status, _, page = ld.json("GET", job_path(jid, "records") + q)
        assert status == 200, page
        assert len(page["records"]) <= 2
        seen += [r["record_id"] for r in page["records"]]
        cursor = page["cursor"]
        if cursor is None:
            break
    assert seen == ["r01", "r02", "r04", "r05"]
    status, _, page = ld.json("GET", job_path(jid, "records") + "?status=FAILED&order=desc")
    assert [r["record_id"] for r in page["records"]] == ["r06", "r03", "r00"]
    status, hdrs, body = ld.json("GET", job_path(jid, "records") + "?status=NOPE")
    assert_error(status, hdrs, body, 400, "ValidationError", "status")


# ---- job lists -----------------------------------------------------------------

def test_jobs_by_status_and_tenant(ld):
    tenant = new_id("tenant")
    ids = []
    for i in range(5):
        jid = new_id()
        create_job(ld, jid, tenant=tenant, status="CANCELED" if i < 3 else "PENDING")
        ids.append(jid)
        # Records carry the same statuses: they must not show up as jobs.
        ld.json("PUT", job_path(jid, "records", "x"), body={"status": "PENDING"})
        ld.advance_clock(1)  # the lists sort by created_at
    status, _, page = ld.json("GET", "/v1/jobs?tenant_id=" + seg(tenant))
    assert status == 200, page
    assert [j["job_id"] for j in page["jobs"]] == ids and page["cursor"] is None
    status, _, page = ld.json("GET", "/v1/jobs?order=desc&tenant_id=" + seg(tenant))
    assert [j["job_id"] for j in page["jobs"]] == ids[::-1]
    status, _, page = ld.json("GET", "/v1/jobs?status=PENDING&tenant_id=" + seg(tenant))
    assert [j["job_id"] for j in page["jobs"]] == ids[3:]
    # By status alone, page by page (other tests' jobs are there too).
    seen, cursor = [], None
    while True:
        q = "/v1/jobs?status=CANCELED&limit=2" + ("&cursor=" + seg(cursor) if cursor else "")
        status, _, page = ld.json("GET", q)
        assert status == 200, page
        assert all(j["status"] == "CANCELED" and "record_id" not in j for j in page["jobs"])
        seen += [j["job_id"] for j in page["jobs"]]
        cursor = page["cursor"]
        if cursor is None:
            break
    assert [j for j in seen if j in ids] == ids[:3]


@pytest.mark.parametrize("query,field,code", [
    ("", "status", "ValidationError"),
    ("?status=WAITING", "status", "ValidationError"),
    ("?status=PENDING&limit=0", "limit", "ValidationError"),
    ("?status=PENDING&limit=5000", "limit", "ValidationError"),
    ("?status=PENDING&order=sideways", "order", "ValidationError"),
    ("?status=PENDING&cursor=not-a-cursor", None, "InvalidCursor"),
])
def test_job_list_refusals(ld, query, field, code):
    status, hdrs, body = ld.json("GET", "/v1/jobs" + query)
    assert_error(status, hdrs, body, 400, code, field)


# ---- leases ------------------------------------------------------------------

def test_lease_acquire_refresh_release(ld):
    jid = new_id()
    create_job(ld, jid)
    now = ld.clock()[0]
    status, _, body = lease(ld, jid, "w1", 30)
    assert status == 200, body
    assert body["owner"] == "w1" and body["job_id"] == jid
    assert body["expires_at"] == now + 30
    status, hdrs, body = lease(ld, jid, "w2", 30)
    assert_error(status, hdrs, body, 409, "LeaseHeld", "owner")
    assert "w1" not in body["error"]["message"]
    status, _, body = lease(ld, jid, "w1", 60)  # already ours
    assert status == 200 and body["expires_at"] == now + 60
    status, _, body = lease(ld, jid, "w1", 90, refresh=True)
    assert status == 200 and body["expires_at"] == now + 90
    status, hdrs, body = lease(ld, jid, "w2", 30, refresh=True)
    assert_error(status, hdrs, body, 409, "LeaseNotOwned", "owner")
    status, hdrs, data = release(ld, jid, "w2")
    assert_error(status, hdrs, json.loads(data), 409, "LeaseNotOwned", "owner")
    status, _, data = release(ld, jid, "w1")
    assert status == 204 and data == b""
    status, _, data = release(ld, jid, "w1")  # already gone
    assert status == 204
    status, _, body = lease(ld, jid, "w2", 30)
    assert status == 200, body


def test_expired_lease_moves_and_cannot_be_refreshed(ld):
    jid = new_id()
    create_job(ld, jid)
    status, _, _ = lease(ld, jid, "slow", 1)
    assert status == 200
    ld.advance_clock(1000)  # expires_at == now: still held
    status, hdrs, body = lease(ld, jid, "fast", 30)
    assert_error(status, hdrs, body, 409, "LeaseHeld", "owner")
    ld.advance_clock(1000)  # expired means expires_at < now
    status, _, body = lease(ld, jid, "fast", 30)
    assert status == 200, body
    status, hdrs, body = lease(ld, jid, "slow", 30, refresh=True)
    assert_error(status, hdrs, body, 409, "LeaseNotOwned")
    status, hdrs, data = release(ld, jid, "slow")
    assert_error(status, hdrs, json.loads(data), 409, "LeaseNotOwned")


def test_expired_lease_without_taker_cannot_be_refreshed(ld):
    jid = new_id()
    create_job(ld, jid)
    assert lease(ld, jid, "w", 1)[0] == 200
    ld.advance_clock(2000)
    status, hdrs, body = lease(ld, jid, "w", 30, refresh=True)
    assert_error(status, hdrs, body, 409, "LeaseNotOwned")
    assert lease(ld, jid, "w", 30)[0] == 200  # acquiring again works


def test_lease_refusals(ld):
    status, hdrs, body = lease(ld, new_id(), "w", 10)
    assert_error(status, hdrs, body, 404, "JobNotFound")
    jid = new_id()
    create_job(ld, jid)
    for bad, field in [({"duration_seconds": 5}, "owner"),
                       ({"owner": "w"}, "duration_seconds"),
                       ({"owner": "w", "duration_seconds": 0}, "duration_seconds"),
                       ({"owner": "w", "duration_seconds": 86401}, "duration_seconds")]:
        status, hdrs, body = ld.json("POST", job_path(jid, "lease"), body=bad)
        assert_error(status, hdrs, body, 400, "ValidationError", field)
    status, hdrs, data = ld.request("DELETE", job_path(jid, "lease"))
    assert_error(status, hdrs, json.loads(data), 400, "ValidationError", "owner")


# ---- idempotency -----------------------------------------------------------------

def test_idempotency_records(ld):
    jid = new_id()
    key = "charge-" + new_id()
    path = job_path(jid, "requests", key)
    status, _, body = ld.json("POST", path)
    assert status == 201 and body == {"outcome": "created"}, body
    status, _, body = ld.json("POST", path, body={})
    assert status == 200 and body == {"outcome": "already_in_progress"}, body
    result = {"charge_id": "ch_1", "amount": 12345678901234567890123, "client_secret": "cs_x"}
    status, _, body = ld.json("POST", path + "/complete", body={"result": result})
    assert status == 200, body
    assert body["outcome"] == "completed" and body["error"] is None
    stored = {"charge_id": "ch_1", "amount": 12345678901234567890123,
              "client_secret": "[REDACTED]"}
    assert body["result"] == stored
    status, _, body = ld.json("POST", path + "/complete",
                              body={"result": "second", "error": {"code": "late"}})
    assert status == 200
    assert body == {"outcome": "already_completed", "result": stored, "error": None}
    status, _, body = ld.json("POST", path)
    assert status == 200
    assert body == {"outcome": "already_completed", "result": stored, "error": None}
    # The stored record.
    raw = stored_item("JOB#" + jid, "REQ#" + key)
    if raw is not None:
        assert raw["status"] == {"S": "COMPLETED"} and raw["idempotency_key"] == {"S": key}
        now_s, now_ns = ld.clock()
        assert int(raw["ttl"]["N"]) == now_s + 86400  # 24 h by default
        assert time_key(raw["completed_at"]["S"]) == (now_s, now_ns % 10**9)


def test_idempotency_error_completion_and_unknown_key(ld):
    jid = new_id()
    path = job_path(jid, "requests", "k")
    status, _, body = ld.json("POST", path, body={"ttl_seconds": 120})
    assert status == 201
    status, _, body = ld.json("POST", path + "/complete",
                              body={"error": {"type": "Declined", "message": "cvv: 123 rejected",
                                              "fields": {"cvv": "123"}}})
    assert status == 200, body
    assert body["result"] is None
    assert body["error"] == {"type": "Declined", "message": "cvv: [REDACTED] rejected",
                             "fields": {"cvv": "[REDACTED]"}}
    status, hdrs, body = ld.json("POST", job_path(jid, "requests", "never", "complete"),
                                 body={"result": 1})
    assert_error(status, hdrs, body, 404, "ItemNotFound", "key")
    status, hdrs, body = ld.json("POST", path, body={"ttl_seconds": 0})
    assert_error(status, hdrs, body, 400, "ValidationError", "ttl_seconds")


def test_idempotency_expired_record_is_created_again(ld):
    jid = new_id()
    path = job_path(jid, "requests", "k")
    assert ld.json("POST", path, body={"ttl_seconds": 1})[0] == 201
    assert ld.json("POST", path + "/complete", body={"result": 1})[0] == 200
    ld.advance_clock(1000)  # ttl == now: not yet expired
    assert ld.json("POST", path)[2]["outcome"] == "already_completed"
    ld.advance_clock(1000)  # expired; DynamoDB would still return it until TTL deletes it
    status, _, body = ld.json("POST", path)
    assert status == 201 and body == {"outcome": "created"}, body


# ---- protocol -------------------------------------------------------------------

def test_routes_and_methods(ld):
    status, hdrs, body = ld.json("PATCH", "/v1/jobs")
    assert_error(status, hdrs, body, 405, "MethodNotAllowed")
    assert "GET" in hdrs["allow"] and "POST" in hdrs["allow"]
    status, hdrs, data = ld.request("POST", "/v1/jobs", body="{", headers={
        "Content-Type": "application/json"})
    assert_error(status, hdrs, json.loads(data), 400, "ValidationError")
    status, hdrs, data = ld.request("POST", "/v1/jobs", body="tenant_id=x", headers={
        "Content-Type": "text/plain"})
    assert_error(status, hdrs, json.loads(data), 415, "UnsupportedMediaType")


def test_logs_carry_no_values(fresh_daemon):
    d = fresh_daemon("--log-level", "debug")
    sentinels = ["SentinelJob7731", "SentinelTenant7731", "SentinelOwner7731",
                 "SentinelRecord7731", "SentinelKey7731", "SentinelSecret7731"]
    jid, tenant, owner, rid, key, secret = sentinels
    create_job(d, jid, tenant=tenant)
    transition(d, jid, 1, "RUNNING")
    transition(d, jid, 1, "RUNNING")  # a conflict is logged too
    lease(d, jid, owner)
    lease(d, jid, "other-" + owner)
    d.json("PUT", job_path(jid, "records", rid),
           body={"status": "FAILED", "error": {"message": "password=" + secret,
                                               "fields": {"note": secret}}})
    d.json("POST", job_path(jid, "requests", key))
    d.json("POST", job_path(jid, "requests", key, "complete"), body={"result": secret})
    d.json("GET", "/v1/jobs?tenant_id=" + tenant)
    release(d, jid, owner)
    d.wait_metric("tabletheoryd_inflight_operations", 0)
    text = d.log_text()
    assert '"event":"ledger.op"' in text
    for s in sentinels:
        assert s not in text, s


# ---- the worker loop of docs/ledger.md runs as written ---------------------------

def doc_snippet(lang):
    with open(os.path.join(SRCDIR, "docs", "ledger.md")) as f:
        text = f.read()
    blocks = re.findall(r"```%s\n(.*?)```" % lang, text, re.S)
    worker = [b for b in blocks if "def process" in b or "async function processJob" in b]
    assert worker, "no worker example for %s in docs/ledger.md" % lang
    return worker[0]


def seed_for_doc(d, tenant):
    ids = []
    for _ in range(3):
        jid = new_id()
        create_job(d, jid, tenant=tenant)
        for r in ("a", "b"):
            d.json("PUT", job_path(jid, "records", r), body={"status": "PENDING"})
        ids.append(jid)
    return ids


def check_doc_run(d, ids):
    for jid in ids:
        _, _, job = d.json("GET", job_path(jid))
        assert job["status"] == "SUCCEEDED", job
        _, _, recs = d.json("GET", job_path(jid, "records"))
        assert [r["status"] for r in recs["records"]] == ["SUCCEEDED", "SUCCEEDED"]
        assert all(r["version"] == 3 for r in recs["records"]), recs  # PENDING + 2 writes
        status, _, _ = release(d, jid, "probe")  # lease released by the worker
        assert status == 204


def test_python_worker_example_runs(ld, tmp_path):
    tenant = new_id("doc-py")
    ids = seed_for_doc(ld, tenant)
    script = tmp_path / "worker.py"
    script.write_text(doc_snippet("python"))
    env = dict(os.environ, TABLETHEORYD_URL="http://%s:%d" % (ld.host, ld.port),
               TENANT=tenant)
    p = subprocess.run(["python3", str(script)], env=env, capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode()
    check_doc_run(ld, ids)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_worker_example_runs(ld, tmp_path):
    tenant = new_id("doc-node")
    ids = seed_for_doc(ld, tenant)
    script = tmp_path / "worker.mjs"
    script.write_text(doc_snippet("js"))
    env = dict(os.environ, TABLETHEORYD_URL="http://%s:%d" % (ld.host, ld.port),
               TENANT=tenant)
    p = subprocess.run(["node", str(script)], env=env, capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode()
    check_doc_run(ld, ids)
