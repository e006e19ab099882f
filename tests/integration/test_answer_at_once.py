# SPDX-License-Identifier: Apache-2.0
"""Answers without suspending (backend.h run_ready; docs/internals/completions.md): on the
memory backend a request whose work the backend can finish at once is
answered inside the access callback, its connection never suspended
(tabletheoryd_http_suspensions_total stays put); work that waits -- an
injected latency, a dynamodb peer -- still suspends and is joined; a
10,000-page query and a 10,000-item batch run flat, on a daemon whose stack
is limited to 256 KiB, and leave no operation in flight."""
import resource

import pytest

from daemon import PEER, Daemon, skip_on_peer
from items_fixtures import FIXTURE_MODELS, MY_MODELS

SUSPENSIONS = "tabletheoryd_http_suspensions_total"
INFLIGHT = "tabletheoryd_inflight_operations"
EVENTS = "/v1/models/Event"
DEEP = 10000


def small_stack():
    # The main thread's stack is sized from RLIMIT_STACK at exec. A chain
    # of completions that recursed would need far more than this for 10,000
    # pages; the trampoline needs a few frames.
    resource.setrlimit(resource.RLIMIT_STACK, (256 * 1024, 256 * 1024))


@pytest.fixture(scope="module")
def daemon():
    d = Daemon("--models", FIXTURE_MODELS, "--models", MY_MODELS, "--allow-table-delete",
               "--enable-fault-injection", preexec_fn=small_stack)
    yield d
    try:
        d.wait_metric(INFLIGHT, 0)
        d.stop()
    finally:
        d.kill()


def item(i, kind="a"):
    return {"tenant": "T", "sk": "EV#%05d" % i, "kind": kind, "score": i}


def test_suspension_counter_is_exported(daemon):
    assert daemon.metric(SUSPENSIONS) >= 0


@skip_on_peer("the dynamodb backend answers from the network: every call suspends")
def test_memory_requests_are_answered_without_suspending(daemon):
    status, _, body = daemon.json("POST", EVENTS + "/items", body=item(1))
    assert status == 201, body
    before = daemon.metric(SUSPENSIONS)
    conn = daemon.connection()
    for _ in range(20):
        status, _, body = daemon.request("GET", EVENTS + "/items/T/EV%2300001", conn=conn)
        assert status == 200, body
    status, _, body = daemon.request(
        "POST", EVENTS + "/query", conn=conn,
        body={"key": [{"attr": "tenant", "op": "=", "value": "T"}], "limit": 5})
    assert status == 200, body
    status, _, body = daemon.request(
        "POST", EVENTS + "/batch-get", conn=conn, body={"keys": [{"tenant": "T", "sk": "EV#00001"}]})
    assert status == 200, body
    conn.close()
    assert daemon.metric(SUSPENSIONS) == before
    assert daemon.metric(INFLIGHT) == 0


def test_work_that_waits_still_suspends_and_joins(daemon):
    status, _, body = daemon.json("POST", "/v1/_faults",
                                  body={"op": "GetItem", "latency_ms": 30, "times": 1})
    assert status in (200, 201), body
    before = daemon.metric(SUSPENSIONS)
    status, _, body = daemon.json("GET", EVENTS + "/items/T/EV%2300001")
    assert status in (200, 404), body
    assert daemon.metric(SUSPENSIONS) == before + 1
    daemon.json("DELETE", "/v1/_faults")
    daemon.wait_metric(INFLIGHT, 0)


@skip_on_peer("10,000 items on a peer take minutes")
def test_ten_thousand_pages_and_items_run_flat(daemon):
    # One batch-write of 10,000 puts: 400 BatchWriteItem chunks in lanes.
    puts = [item(i, "x") for i in range(2, DEEP)] + [item(DEEP, "y")]
    status, _, body = daemon.json("POST", EVENTS + "/batch-write", body={"put": puts})
    assert status == 200, body
    assert body["processed"] == len(puts)
    # limit 1 with a filter that only the last item passes: DynamoDB's Limit
    # counts items before the filter, so the ORM reads one page per item.
    status, _, body = daemon.json("POST", EVENTS + "/query", body={
        "key": [{"attr": "tenant", "op": "=", "value": "T"}], "limit": 1,
        "filter": {"attr": "kind", "op": "=", "value": "y"}})
    assert status == 200, body
    assert [i["sk"] for i in body["items"]] == ["EV#%05d" % DEEP]
    assert body["scanned_count"] >= DEEP - 1
    assert daemon.metric(INFLIGHT) == 0
