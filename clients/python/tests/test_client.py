# SPDX-License-Identifier: Apache-2.0
"""The Python client against a real daemon on the memory backend."""
import threading
import time
import uuid
from decimal import Decimal

import pytest

import tabletheoryd as tt
from tabletheoryd import Update, attr


def uid(prefix="t"):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:12])


# -- configuration -------------------------------------------------------------------------

def test_from_env_reads_url_and_token_file(make_daemon, tmp_path, monkeypatch):
    token = tmp_path / "token"
    token.write_text("s3cret-token-0123456789\n")
    d = make_daemon("--auth-token-file", str(token))
    monkeypatch.setenv("TABLETHEORYD_URL", d.url)
    monkeypatch.delenv("TABLETHEORYD_TOKEN_FILE", raising=False)
    with tt.Client.from_env() as anonymous:
        with pytest.raises(tt.Unauthorized) as e:
            anonymous.models()
        assert e.value.status == 401 and not e.value.retryable
    monkeypatch.setenv("TABLETHEORYD_TOKEN_FILE", str(token))
    with tt.Client.from_env() as c:
        assert "User" in {m["name"] for m in c.models()}


def test_connections_are_reused(client, daemon):
    m = client.model("Wallet")
    wid = uid("w")
    m.create({"id": wid})
    for _ in range(20):
        m.get(wid)
    # One thread, sequential calls: one pooled connection serves them all.
    assert len(client._pool._idle) == 1


def test_unreachable_daemon_is_a_transport_error():
    c = tt.Client("http://127.0.0.1:9", max_attempts=2, backoff=(0.01, 0.01), timeout=5)
    with pytest.raises(tt.TransportError) as e:
        c.models()
    assert e.value.retryable


# -- items ---------------------------------------------------------------------------------

def test_item_lifecycle(client):
    users = client.model("User")
    pk = "USER#" + uid()
    created = users.create({"PK": pk, "SK": "PROFILE", "nickname": "al", "tags": {"a", "b"}})
    assert created["version"] == 0 and created["tags"] == {"a", "b"}
    assert created["createdAt"] == created["updatedAt"]
    with pytest.raises(tt.ConditionFailed) as e:
        users.create({"PK": pk, "SK": "PROFILE"})
    assert e.value.status == 409 and e.value.request_id
    got = users.get(pk, "PROFILE")
    assert got == created
    assert users.get({"PK": pk, "SK": "PROFILE"}, select=["nickname"]) == {"nickname": "al"}

    replaced = users.put({"PK": pk, "SK": "PROFILE", "nickname": "bo"}, if_match=0)
    assert replaced["version"] == 1 and replaced["nickname"] == "bo"
    with pytest.raises(tt.VersionConflict) as e:
        users.put({"PK": pk, "SK": "PROFILE", "nickname": "cy"}, if_match=0)
    assert e.value.details.get("version") == 1
    with pytest.raises(tt.ConditionFailed):
        users.put({"PK": pk, "SK": "PROFILE"}, if_none_match=True)
    fresh = users.put({"PK": pk, "SK": "OTHER", "nickname": "x"}, if_none_match=True)
    assert fresh["version"] == 0

    users.delete(pk, "OTHER")
    with pytest.raises(tt.ItemNotFound):
        users.get(pk, "OTHER")
    assert users.find(pk, "OTHER") is None
    with pytest.raises(tt.VersionConflict):
        users.delete(pk, "PROFILE", expected_version=0)
    users.delete(pk, "PROFILE", expected_version=1)
    with pytest.raises(tt.ItemNotFound):
        users.delete(pk, "PROFILE")


def test_update_builder(client):
    wallets = client.model("Wallet")
    wid = uid("w")
    wallets.create({"id": wid, "balance": Decimal("10.5"), "labels": {"a"},
                    "history": [2], "owner": "o", "note": "n"})
    upd = (Update().set("owner", "p").add("balance", Decimal("0.25")).add("labels", {"b", "c"})
           .append("history", [3]).remove("note").set_if_not_exists("settings", '{"x":1}'))
    new = wallets.patch(wid, upd, expected_version=0, condition=attr("owner").eq("o"))
    assert new["owner"] == "p"
    assert new["balance"] == Decimal("10.75") and isinstance(new["balance"], Decimal)
    assert new["labels"] == {"a", "b", "c"}
    assert new["history"] == [2, 3]
    assert "note" not in new and new["version"] == 1
    new = wallets.patch(wid, Update().delete("labels", {"a", "c"}).prepend("history", [1]))
    assert new["labels"] == {"b"} and new["history"] == [1, 2, 3]
    with pytest.raises(tt.VersionConflict):
        wallets.patch(wid, Update().set("owner", "q"), expected_version=1)
    with pytest.raises(tt.ConditionFailed):
        wallets.patch(wid, Update().set("owner", "q"), condition=attr("owner").eq("zz"))
    with pytest.raises(tt.ItemNotFound):
        wallets.patch(uid("absent"), Update().set("owner", "q"))
    up = wallets.patch(uid("w"), Update().set("owner", "u"), upsert=True)
    assert up["owner"] == "u" and "createdAt" in up
    with pytest.raises(tt.ValidationError) as e:
        wallets.patch(wid, Update().set("nope", 1))
    assert "nope" in e.value.details.get("field", "")


def test_update_fields_form(client):
    users = client.model("User")
    pk = "USER#" + uid()
    users.create({"PK": pk, "SK": "P", "nickname": "a", "emailHash": "h"})
    new = users.update_fields({"PK": pk, "SK": "P", "nickname": "b", "emailHash": "zz",
                               "version": 0}, fields=["nickname"])
    assert new["nickname"] == "b" and new["emailHash"] == "h" and new["version"] == 1


def test_exact_numbers_sets_binary(client):
    x = client.model("XItem")
    xid = uid("x")
    blob = bytes(range(256))
    item = {"id": xid, "n_big": Decimal("12345678901234567890123456789012345678"),
            "n_frac": Decimal("0.12345678901234567890123456789012345678"),
            "n_neg_small": Decimal("-1E-130"), "tags": {"alpha", "beta"},
            "nums": {Decimal(1), Decimal("2.5"), Decimal("1E+37")}, "bins": {b"\x00\x01", b"\xff"},
            "blob": blob, "flag": False, "nothing": None,
            "list": [1, "two", {"three": Decimal("3.25")}], "map": {"deep": {"x": [True, None]}}}
    x.create(item)
    got = x.get(xid)
    for k, v in item.items():
        assert got[k] == v, k
    assert str(got["n_big"]) == "12345678901234567890123456789012345678"
    assert got["n_frac"].as_tuple().digits == Decimal(
        "0.12345678901234567890123456789012345678").as_tuple().digits


def test_number_and_binary_keys(client):
    counters = client.model("Counter")
    counters.put({"n": Decimal("12.5"), "label": "a"})
    assert counters.get(Decimal("12.5"))["label"] == "a"
    blobs = client.model("Blob")
    bid = b"\x00\x01\xfe\xff" + uuid.uuid4().bytes
    blobs.put({"bid": bid, "label": "b"})
    assert blobs.get(bid) == {"bid": bid, "label": "b"}


def test_percent_encoded_keys(client):
    users = client.model("User")
    pk = "USER#" + uid() + "/a b?c%"
    users.create({"PK": pk, "SK": "S/K#1"})
    assert users.get(pk, "S/K#1")["PK"] == pk


# -- query, scan, count --------------------------------------------------------------------

def test_query_iterates_over_cursors(client):
    events = client.model("Event")
    tenant = uid("ten")
    events.batch_write(put=[{"tenant": tenant, "sk": "E#%03d" % i, "score": i}
                            for i in range(25)])
    items = list(events.query({"tenant": tenant}, page_size=4))
    assert [i["sk"] for i in items] == ["E#%03d" % i for i in range(25)]
    assert items[3]["score"] == Decimal(3)
    desc = list(events.query([attr("tenant").eq(tenant), attr("sk").begins_with("E#01")],
                             order="desc", page_size=3))
    assert [i["sk"] for i in desc] == ["E#%03d" % i for i in range(19, 9, -1)]
    assert len(list(events.query({"tenant": tenant}, limit=7, page_size=3))) == 7
    page = events.query_page({"tenant": tenant}, limit=5)
    assert len(page.items) == 5 and page.cursor
    nxt = events.query_page({"tenant": tenant}, limit=5, cursor=page.cursor)
    assert nxt.items[0]["sk"] == "E#005"
    assert events.count({"tenant": tenant}) == 25
    assert events.count({"tenant": tenant}, filter=attr("score").ge(20)) == 5
    with pytest.raises(tt.InvalidCursor):
        events.query_page({"tenant": tenant}, cursor="bm9wZQ==")


def test_scan_and_count(client):
    counters = client.model("Counter")
    base = Decimal(uuid.uuid4().int % 10**9) * 1000
    counters.batch_write(put=[{"n": base + i, "label": "scan"} for i in range(30)])
    cond = attr("n").between(base, base + 29)
    seen = [i["n"] for i in counters.scan(filter=cond, page_size=7)]
    assert sorted(seen) == [base + i for i in range(30)]
    seen2 = [i["n"] for i in counters.scan(filter=cond, segments=3, page_size=5)]
    assert sorted(seen2) == sorted(seen)
    assert counters.count(filter=cond) == 30


# -- batches and transactions --------------------------------------------------------------

def test_batch_get_and_write(client):
    wallets = client.model("Wallet")
    ids = [uid("b") for _ in range(5)]
    assert wallets.batch_write(put=[{"id": i, "balance": n} for n, i in enumerate(ids)]) == 5
    keys = [{"id": ids[3]}, {"id": "missing-" + ids[0]}, {"id": ids[1]}]
    items, missing = wallets.batch_get(keys, consistent=True)
    assert [i["id"] for i in items] == [ids[3], ids[1]]
    assert items[0]["balance"] == 3
    assert missing == [{"id": "missing-" + ids[0]}]
    assert wallets.batch_write(delete=[{"id": i} for i in ids[:2]]) == 2
    items, missing = wallets.batch_get([{"id": i} for i in ids])
    assert len(items) == 3 and len(missing) == 2


def test_batch_get_takes_every_key_form_of_get(client):
    users, wallets = client.model("User"), client.model("Wallet")
    pk = "USER#" + uid()
    stored = [users.create({"PK": pk, "SK": sk, "nickname": sk}) for sk in "ABCD"]
    # A key dict, a whole item, a (pk, sk) tuple and a list: each form get accepts.
    items, missing = users.batch_get([{"PK": pk, "SK": "A"}, stored[1], (pk, "C"), [pk, "D"],
                                      (pk, "absent")])
    assert [i["nickname"] for i in items] == ["A", "B", "C", "D"]
    assert missing == [{"PK": pk, "SK": "absent"}]
    assert users.get(pk, "C") == users.get(stored[2]) == items[2]
    # A model without a sort key also takes the bare partition key value.
    wids = [uid("w") for _ in range(3)]
    for n, wid in enumerate(wids):
        wallets.create({"id": wid, "balance": n})
    items, missing = wallets.batch_get([wids[0], (wids[1],), {"id": wids[2]}])
    assert [i["balance"] for i in items] == [0, 1, 2] and missing == []
    with pytest.raises(ValueError):
        users.batch_get([pk])  # no sort key
    with pytest.raises(ValueError):
        users.batch_get([{"SK": "P"}])


def test_item_and_job_versions_start_where_documented(client):
    # Items start at version 0 (a DMS version attribute), jobs at version 1.
    item = client.model("Wallet").create({"id": uid("v"), "balance": 1})
    assert item["version"] == 0
    client.jobs.ensure_table()
    assert client.jobs.create("t", job_id=uid("job"))["version"] == 1


def test_transactions(client):
    wid, pk = uid("w"), "USER#" + uid()
    tx = client.transaction()
    tx.create("Wallet", {"id": wid, "balance": 1})
    tx.create("User", {"PK": pk, "SK": "P", "nickname": "t"})
    tx.commit()
    tx.commit()  # the same client_token again: applied once, no error
    got = client.transact_get([("Wallet", {"id": wid}), ("User", {"PK": pk, "SK": "P"},
                                                         ["nickname"]),
                               ("Wallet", {"id": "absent-" + wid})])
    assert got[0]["balance"] == 1 and got[0]["version"] == 0
    assert got[1] == {"nickname": "t"} and got[2] is None

    tx = client.transaction()
    tx.update("Wallet", {"id": wid}, Update().add("balance", 5), expected_version=0)
    tx.check("User", {"PK": pk, "SK": "P"}, condition=attr("nickname").eq("nope"))
    with pytest.raises(tt.TransactionCanceled) as e:
        tx.commit()
    assert [r["code"] for r in e.value.reasons] == ["None", "ConditionalCheckFailed"]
    tx = client.transaction()
    tx.update("Wallet", {"id": wid}, Update().add("balance", 5), expected_version=0)
    tx.delete("User", {"PK": pk, "SK": "P"})
    tx.commit()
    assert client.model("Wallet").get(wid)["balance"] == 6


# -- errors, retries, request ids ----------------------------------------------------------

def test_request_id_is_propagated(client):
    with tt.request_id("trace-abc.1"):
        status, headers, _ = client.request("GET", "/v1/models", idempotent=True)
        assert headers["x-request-id"] == "trace-abc.1"
        with pytest.raises(tt.ItemNotFound) as e:
            client.model("Wallet").get(uid("absent"))
    assert e.value.request_id == "trace-abc.1"
    with pytest.raises(tt.ModelNotFound) as e:
        client.model("Nope").get("x", request_id="call-7")
    assert e.value.request_id == "call-7" and e.value.code == "ModelNotFound"
    assert isinstance(e.value, tt.NotFoundError)


def test_retryable_errors_are_retried(client):
    wallets = client.model("Wallet")
    wid = uid("w")
    wallets.create({"id": wid})
    # The daemon retries the backend 4 times itself; the 4 faults exhaust that budget
    # once, so the client sees one 503 and must retry.
    client.with_faults(op="GetItem", error="ServiceUnavailable", times=4)
    assert wallets.get(wid)["id"] == wid
    once = tt.Client(client.url, max_attempts=1)
    client.with_faults(op="GetItem", error="ServiceUnavailable", times=4)
    with pytest.raises(tt.BackendUnavailable) as e:
        once.model("Wallet").get(wid)
    assert e.value.retryable and e.value.status == 503
    client.with_faults(op="GetItem", error="ProvisionedThroughputExceededException", times=4)
    with pytest.raises(tt.Throttled) as e:
        once.model("Wallet").get(wid)
    assert e.value.headers.get("retry-after")
    client.clear_faults()


def test_non_idempotent_writes_are_not_retried(client):
    wallets = client.model("Wallet")
    client.with_faults(op="PutItem", error="ServiceUnavailable", times=4)
    with pytest.raises(tt.BackendUnavailable):
        wallets.create({"id": uid("w")})
    client.with_faults(op="PutItem", error="ServiceUnavailable", times=4)
    wid = uid("w")
    assert wallets.put({"id": wid, "owner": "o"})["owner"] == "o"  # unconditional: retried
    client.clear_faults()


def test_batch_write_resends_unprocessed(client):
    wallets = client.model("Wallet")
    client.with_faults(op="BatchWriteItem", error="Unprocessed", times=6)
    ids = [uid("u") for _ in range(30)]
    assert wallets.batch_write(put=[{"id": i} for i in ids]) == 30
    client.clear_faults()
    items, missing = wallets.batch_get([{"id": i} for i in ids])
    assert len(items) == 30 and not missing


# -- job ledger ----------------------------------------------------------------------------

def test_jobs_records_and_idempotency(client, daemon):
    jobs = client.jobs
    tenant = uid("tenant")
    job = jobs.create(tenant, job_id=uid("job"))
    assert job["status"] == "PENDING" and job["version"] == 1
    with pytest.raises(tt.AlreadyExists):
        jobs.create(tenant, job_id=job["job_id"])
    with pytest.raises(tt.JobNotFound):
        jobs.get(uid("nojob"))
    daemon.advance_clock(1)  # the list is in created_at order; the clock is frozen
    other = jobs.create(tenant)
    assert [j["job_id"] for j in jobs.list(tenant_id=tenant, page_size=1)] == [
        job["job_id"], other["job_id"]]
    running = jobs.transition(job["job_id"], 1, "PENDING", "RUNNING")
    assert running["version"] == 2
    with pytest.raises(tt.VersionConflict):
        jobs.transition(job["job_id"], 1, None, "SUCCEEDED")
    for i in range(5):
        jobs.put_record(job["job_id"], "r%d" % i, "PENDING")
    rec = jobs.put_record(job["job_id"], "r1", "FAILED",
                          error={"type": "E", "message": "password=hunter2", "retryable": False})
    assert "hunter2" not in str(rec["error"])
    assert jobs.get_record(job["job_id"], "r1")["status"] == "FAILED"
    pending = [r["record_id"] for r in jobs.records(job["job_id"], status="PENDING", page_size=2)]
    assert pending == ["r0", "r2", "r3", "r4"]

    first = jobs.begin_request(job["job_id"], "charge-1")
    assert first.created
    assert jobs.begin_request(job["job_id"], "charge-1").outcome == "already_in_progress"
    done = jobs.complete_request(job["job_id"], "charge-1",
                                 result={"amount": Decimal("12345678901234567890.5")})
    assert done.result == {"amount": Decimal("12345678901234567890.5")}
    again = jobs.begin_request(job["job_id"], "charge-1")
    assert again.outcome == "already_completed" and again.result == done.result
    done = jobs.transition(job["job_id"], 2, None, "SUCCEEDED")
    with pytest.raises(tt.InvalidTransition):
        jobs.transition(job["job_id"], done["version"], None, "RUNNING")


def test_leases(client, daemon):
    jobs = client.jobs
    jid = jobs.create("t", job_id=uid("job"))["job_id"]
    got = jobs.acquire_lease(jid, "a", 60)
    assert got["owner"] == "a" and got["expires_at"] == daemon.now_s() + 60
    assert jobs.acquire_lease(jid, "a", 60)["owner"] == "a"  # ours: extended
    with pytest.raises(tt.LeaseHeld):
        jobs.acquire_lease(jid, "b", 60)
    with pytest.raises(tt.LeaseNotOwned):
        jobs.refresh_lease(jid, "b", 60)
    jobs.refresh_lease(jid, "a", 60)
    with pytest.raises(tt.LeaseNotOwned):
        jobs.release_lease(jid, "b")
    jobs.release_lease(jid, "a")
    jobs.release_lease(jid, "a")  # already gone: fine
    assert jobs.acquire_lease(jid, "b", 60)["owner"] == "b"


def test_worker_holds_refreshes_and_releases_the_lease(client, daemon):
    jobs = client.jobs
    jid = jobs.create("t", job_id=uid("job"))["job_id"]

    def work(lease):
        first = lease.expires_at
        daemon.advance_clock(1000)  # the next refresh moves the expiry a second on
        deadline = time.time() + 30
        while lease.expires_at == first and time.time() < deadline:
            time.sleep(0.02)
        assert lease.expires_at > first, "the background refresh never ran"
        with pytest.raises(tt.LeaseHeld):
            jobs.acquire_lease(jid, "other", 60)
        lease.check()
        return "done"

    assert jobs.work(jid, work, owner="worker-1", duration_seconds=30,
                     refresh_every=0.1) == "done"
    assert jobs.acquire_lease(jid, "other", 60)["owner"] == "other"  # released at the end


def test_worker_learns_that_its_lease_was_lost(client, daemon):
    jobs = client.jobs
    jid = jobs.create("t", job_id=uid("job"))["job_id"]
    with jobs.lease(jid, owner="slow", duration_seconds=1, refresh_every=3600) as lease:
        daemon.advance_clock(2000)  # past the lease's expiry on the daemon's clock
        jobs.acquire_lease(jid, "fast", 60)
        with pytest.raises(tt.LeaseNotOwned):
            lease.refresh()
        lease.refresh_every = 0.05
        lease._stop.set()
        lease._thread.join()
        lease._stop.clear()
        lease._thread = threading.Thread(target=lease._refresher, daemon=True)
        lease._thread.start()
        assert lease.lost.wait(20)
        with pytest.raises(tt.LeaseNotOwned):
            lease.check()
    # The lost lease was not released: "fast" still holds it.
    with pytest.raises(tt.LeaseHeld):
        jobs.acquire_lease(jid, "third", 60)


# -- models and tables ---------------------------------------------------------------------

def test_models_and_tables(client):
    name = "Note" + uuid.uuid4().hex[:8]
    doc = {"dms_version": "0.2", "name": name, "table": {"name": name.lower() + "_t"},
           "keys": {"partition": {"attribute": "id", "type": "S"}},
           "attributes": [{"attribute": "id", "type": "S", "roles": ["pk"]},
                          {"attribute": "n", "type": "N", "optional": True}]}
    assert client.register_model(doc) is True
    assert client.register_model(doc) is False  # identical: nothing changed
    assert name in {m["name"] for m in client.models()}
    notes = client.model(name)
    assert notes.definition()["keys"]["partition"]["attribute"] == "id"
    assert notes.ensure_table() is False  # the memory backend made it with the model
    info = notes.table()
    assert info["status"] == "ACTIVE" and info["item_count"] == 0
    notes.put({"id": "a", "n": Decimal("1.50")})
    assert notes.get("a")["n"] == Decimal("1.5")
    changed = dict(doc, attributes=doc["attributes"] + [{"attribute": "s", "type": "S",
                                                         "optional": True}])
    with pytest.raises(tt.AlreadyExists):
        client.register_model(changed)
    retyped = dict(doc, attributes=[doc["attributes"][0],
                                    {"attribute": "n", "type": "S", "optional": True}])
    with pytest.raises(tt.UnsafeModelChange) as e:
        client.register_model(retyped, replace=True)
    assert e.value.details["field"] == "attributes.n"
    assert client.register_model(retyped, replace=True, allow_unsafe=True) is False
    assert notes.definition()["attributes"][1]["type"] == "S"
    with pytest.raises(tt.ModelNotFound):
        client.model("Absent" + name).table()


def test_a_connection_closed_by_the_daemon_is_replaced(client):
    wallets = client.model("Wallet")
    wid = uid("w")
    wallets.create({"id": wid})
    for conn in client._pool._idle:  # as if the daemon had closed them while idle
        conn.sock.shutdown(2)
    # A create is not idempotent, but it never reached the daemon: sent again, once.
    assert wallets.create({"id": uid("w")})["version"] == 0
    assert wallets.get(wid)["id"] == wid
