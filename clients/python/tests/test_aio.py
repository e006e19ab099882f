# SPDX-License-Identifier: Apache-2.0
"""The asyncio client (tabletheoryd.aio) against a real daemon on the memory backend."""
import asyncio
import os
import time
import uuid
from decimal import Decimal

import pytest

import tabletheoryd as tt
from tabletheoryd import Update, attr
from tabletheoryd.aio import AsyncClient


def uid(prefix="t"):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:12])


def run(daemon, fn, **kw):
    """Runs the coroutine function fn(client) on a fresh event loop."""
    async def main():
        async with AsyncClient(daemon.url, backoff=(0.01, 0.2), **kw) as c:
            return await fn(c)
    return asyncio.run(main())


def test_item_lifecycle_and_errors(daemon):
    async def body(c):
        users = c.model("User")
        pk = "USER#" + uid()
        created = await users.create({"PK": pk, "SK": "PROFILE", "nickname": "al",
                                      "tags": {"a", "b"}})
        assert created["version"] == 0 and created["tags"] == {"a", "b"}
        with pytest.raises(tt.ConditionFailed):
            await users.create({"PK": pk, "SK": "PROFILE"})
        assert (await users.get(pk, "PROFILE"))["nickname"] == "al"
        assert (await users.get({"PK": pk, "SK": "PROFILE"}, select=["nickname"])) == {
            "nickname": "al"}
        patched = await users.patch({"PK": pk, "SK": "PROFILE"},
                                    Update().set("nickname", "bo"))
        assert patched["nickname"] == "bo" and patched["version"] == 1
        with pytest.raises(tt.VersionConflict):
            await users.delete(pk, "PROFILE", expected_version=0)
        await users.put({"PK": pk, "SK": "PROFILE", "nickname": "cy"}, if_match=1)
        assert (await users.find(pk, "PROFILE"))["nickname"] == "cy"
        await users.delete(pk, "PROFILE")
        assert await users.find(pk, "PROFILE") is None
        with pytest.raises(tt.ItemNotFound) as e:
            await users.get(pk, "PROFILE")
        assert e.value.status == 404 and e.value.request_id
        with pytest.raises(tt.ModelNotFound):
            await c.model("NoSuchModel").get("x")
        w = await c.model("Wallet").create({"id": uid("w"), "balance": Decimal("1e30")})
        assert w["balance"] == Decimal("1e30")
    run(daemon, body)


def test_connections_are_reused_and_concurrent_calls_share_the_pool(daemon):
    async def body(c):
        m = c.model("Wallet")
        wid = uid("w")
        await m.create({"id": wid})
        for _ in range(10):
            await m.get(wid)
        assert len(c._pool._idle) == 1
        got = await asyncio.gather(*(m.get(wid) for _ in range(20)))
        assert all(g["id"] == wid for g in got)
        assert 1 <= len(c._pool._idle) <= 8
    run(daemon, body)


def test_query_scan_count_and_cursors(daemon):
    async def body(c):
        users = c.model("User")
        pk = "USER#" + uid()
        for i in range(7):
            await users.create({"PK": pk, "SK": "S%02d" % i, "nickname": "n%d" % i})
        got = [u["SK"] async for u in users.query({"PK": pk}, page_size=3)]
        assert got == ["S%02d" % i for i in range(7)]
        got = [u["SK"] async for u in users.query([attr("PK").eq(pk),
                                                    attr("SK").begins_with("S0")],
                                                   limit=4, order="desc")]
        assert got == ["S06", "S05", "S04", "S03"]
        page = await users.query_page({"PK": pk}, limit=2)
        assert len(page.items) == 2 and page.cursor
        assert await users.count({"PK": pk}) == 7
        assert await users.count({"PK": pk}, filter=attr("nickname").eq("n3")) == 1
        seen = [u async for u in users.scan(filter=attr("PK").eq(pk), page_size=50)]
        assert len(seen) == 7
    run(daemon, body)


def test_batches_and_transactions(daemon):
    async def body(c):
        wallets = c.model("Wallet")
        ids = [uid("b") for _ in range(4)]
        assert await wallets.batch_write(put=[{"id": i, "balance": n}
                                              for n, i in enumerate(ids)]) == 4
        items, missing = await wallets.batch_get([ids[2], {"id": "missing-" + ids[0]},
                                                  (ids[1],)])
        assert [i["balance"] for i in items] == [2, 1]
        assert missing == [{"id": "missing-" + ids[0]}]
        wid, pk = uid("w"), "USER#" + uid()
        tx = c.transaction()
        tx.create("Wallet", {"id": wid, "balance": 1})
        tx.create("User", {"PK": pk, "SK": "P", "nickname": "t"})
        await tx.commit()
        await tx.commit()  # the same client_token: applied once
        got = await c.transact_get([("Wallet", {"id": wid}),
                                    ("User", {"PK": pk, "SK": "P"}, ["nickname"]),
                                    ("Wallet", {"id": "absent-" + wid})])
        assert got[0]["balance"] == 1 and got[1] == {"nickname": "t"} and got[2] is None
        tx = c.transaction().create("Wallet", {"id": wid, "balance": 2})
        with pytest.raises(tt.TransactionCanceled):
            await tx.commit()
    run(daemon, body)


def test_request_ids_and_system_calls(daemon):
    async def body(c):
        assert (await c.health())["status"] == "ok"
        assert await c.ready()
        assert "User" in {m["name"] for m in await c.models()}
        assert "JobMeta" not in {m["name"] for m in await c.models()}
        with tt.request_id("rid-from-context-aio"):
            _, headers, _ = await c.request("GET", "/v1/models", idempotent=True)
        assert headers["x-request-id"] == "rid-from-context-aio"
        with pytest.raises(tt.ItemNotFound) as e:
            await c.model("Wallet").get(uid("none"), request_id="rid-given-aio")
        assert e.value.request_id == "rid-given-aio"
        with pytest.raises(ValueError):
            await c.request("GET", "/healthz", request_id="a\r\nX-Evil: 1")
    run(daemon, body)


def test_retries_retryable_answers(daemon):
    async def body(c):
        wallets = c.model("Wallet")
        wid = uid("r")
        await wallets.create({"id": wid})
        await c.with_faults(op="GetItem", error="ServiceUnavailable", times=4)
        try:
            assert (await wallets.get(wid))["id"] == wid
            async with AsyncClient(daemon.url, max_attempts=1) as once:
                await c.with_faults(op="GetItem", error="ServiceUnavailable", times=4)
                with pytest.raises(tt.BackendUnavailable) as e:
                    await once.model("Wallet").get(wid)
                assert e.value.retryable and e.value.status == 503
        finally:
            await c.clear_faults()
    run(daemon, body)


def test_jobs_transition_records_and_worker(daemon):
    async def body(c):
        jobs = c.jobs
        await jobs.ensure_table()
        tenant = uid("tenant")
        job = await jobs.create(tenant, job_id=uid("job"))
        assert job["version"] == 1 and job["status"] == "PENDING"
        running = await jobs.transition(job["job_id"], 1, "PENDING", "RUNNING")
        assert running["version"] == 2
        with pytest.raises(tt.VersionConflict):
            await jobs.transition(job["job_id"], 1, None, "SUCCEEDED")
        for i in range(3):
            await jobs.put_record(job["job_id"], "r%d" % i, "PENDING")
        assert [r["record_id"] async for r in jobs.records(job["job_id"], page_size=2)] == [
            "r0", "r1", "r2"]
        assert [j["job_id"] async for j in jobs.list(tenant_id=tenant)] == [job["job_id"]]
        first = await jobs.begin_request(job["job_id"], "k1")
        assert first.created
        done = await jobs.complete_request(job["job_id"], "k1", result={"n": 1})
        assert done.result == {"n": 1}

        async def work(lease):
            first = lease.expires_at
            daemon.advance_clock(1000)  # the next refresh moves the expiry a second on
            deadline = time.monotonic() + 30  # polls; the refresh runs every 0.1 s
            while lease.expires_at == first and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            assert lease.expires_at > first, "the refresh task never ran"
            with pytest.raises(tt.LeaseHeld):
                await jobs.acquire_lease(job["job_id"], "other", 60)
            lease.check()
            return "done"
        assert await jobs.work(job["job_id"], work, owner="w1", duration_seconds=30,
                               refresh_every=0.1) == "done"
        assert (await jobs.acquire_lease(job["job_id"], "other", 60))["owner"] == "other"
    run(daemon, body)


def test_unix_socket_and_unreachable_daemon(make_daemon, tmp_path):
    sock = str(tmp_path / "d.sock")
    d = make_daemon("--listen", "unix:" + sock)

    async def over_unix():
        async with AsyncClient("unix:" + sock) as c:
            return await c.health()
    assert asyncio.run(over_unix())["status"] == "ok"
    assert d.proc.poll() is None

    async def unreachable():
        async with AsyncClient("http://127.0.0.1:9", max_attempts=2,
                               backoff=(0.01, 0.01)) as c:
            await c.models()
    with pytest.raises(tt.TransportError) as e:
        asyncio.run(unreachable())
    assert e.value.retryable


def test_a_connection_the_daemon_closed_is_replaced(make_daemon):
    d = make_daemon()

    async def body():
        async with AsyncClient(d.url) as c:
            await c.health()
            conn = c._pool._idle[0]
            conn.writer.transport.abort()  # as if the daemon closed it while idle
            await asyncio.sleep(0)
            assert (await c.health())["status"] == "ok"
    asyncio.run(body())


@pytest.mark.skipif(os.name != "posix", reason="posix only")
def test_timeout_is_a_transport_error(daemon):
    async def body(c):
        with pytest.raises(tt.TransportError):
            await c.request("POST", "/v1/_test/sleep", {"ops": 1, "ms": 2000}, timeout=0.1)
    run(daemon, body, max_attempts=1)
