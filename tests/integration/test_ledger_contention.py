# SPDX-License-Identifier: Apache-2.0
"""The job ledger under contention: 8 worker threads race for the leases of
50 jobs and process every leased job's records through idempotency keys.
Proves that every job is processed exactly once, that no record is written
twice, that a worker which loses its lease mid-job cannot refresh it, and that
every job ends SUCCEEDED. Runs on the memory backend with one daemon, and
against a DynamoDB peer (dynalite, moto) with two daemons sharing its endpoint,
the workers spread over both."""
import collections
import random
import threading
import time
import urllib.parse
import uuid

import pytest

from daemon import PEER, KeepAliveClient as Client, run_threads, served_on_one_table

WORKERS = 8
JOBS = 50
RECORDS = 4
LEASE_SECONDS = 30
STALL_LEASE_SECONDS = 1


def q(text):
    return urllib.parse.quote(text, safe="")


@pytest.fixture(scope="module")
def daemons():
    # With a peer, two daemons on the same tables: leases and idempotency
    # records must hold across processes, not just inside one. On the test
    # clock, so that the stalled worker's lease expires without a sleep.
    yield from served_on_one_table("--test-clock")


class Ledger:
    """What the workers did, as seen by the test (guarded by one lock)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.holders = {}                          # job -> worker holding a 30 s lease
        self.overlaps = []                         # (job, holder, intruder)
        self.effects = collections.Counter()       # (job, record) -> effects performed
        self.finished = collections.Counter()      # job -> SUCCEEDED transitions made
        self.stall_refresh = None                  # status of the stalled worker's refresh
        self.lease_held = 0                        # 409 LeaseHeld answers seen
        self.errors = []

    def hold(self, job, worker):
        with self.lock:
            other = self.holders.get(job)
            if other is not None and other != worker:
                self.overlaps.append((job, other, worker))
            self.holders[job] = worker

    def unhold(self, job, worker):
        with self.lock:
            if self.holders.get(job) == worker:
                del self.holders[job]


def expect(ledger, cond, what):
    if not cond:
        with ledger.lock:
            ledger.errors.append(what)
    return cond


def process(c, ledger, wid, job_id, stall, clocks=()):
    """The worker loop of docs/ledger.md. With `stall`, the worker takes a
    short lease, does half the records, moves the daemons' clocks (`clocks`)
    past the lease's expiry and must then fail to refresh it."""
    job = "/v1/jobs/" + q(job_id)
    owner = "w%d" % wid
    seconds = STALL_LEASE_SECONDS if stall else LEASE_SECONDS
    lease = {"owner": owner, "duration_seconds": seconds}
    status, body = c.call("POST", job + "/lease", lease)
    if status == 409:
        expect(ledger, body["error"]["code"] == "LeaseHeld", ("acquire", body))
        with ledger.lock:
            ledger.lease_held += 1
        return False
    if not expect(ledger, status == 200, ("acquire", status, body)):
        return False
    if not stall:
        ledger.hold(job_id, owner)
    try:
        status, meta = c.call("GET", job)
        expect(ledger, status == 200, ("get", status, meta))
        if meta["status"] == "SUCCEEDED":
            return False
        if meta["status"] == "PENDING":
            status, meta = c.call("POST", job + "/transition",
                                  {"expected_version": meta["version"], "from": "PENDING",
                                   "to": "RUNNING"})
            if not expect(ledger, status == 200, ("start", status, meta)):
                return False
        status, page = c.call("GET", job + "/records?status=PENDING&limit=100")
        expect(ledger, status == 200, ("records", status, page))
        for i, record in enumerate(page["records"]):
            if stall and i == RECORDS // 2:
                # Far less than the other workers' 30 s leases.
                for d in clocks:
                    d.advance_clock((STALL_LEASE_SECONDS + 1) * 1000)
            status, body = c.call("POST", job + "/lease/refresh", lease)
            if status != 200:
                expect(ledger, status == 409 and body["error"]["code"] == "LeaseNotOwned",
                       ("refresh", status, body))
                if stall:
                    with ledger.lock:
                        ledger.stall_refresh = status
                return False                   # lost the job: stop at once
            rid = record["record_id"]
            rec = job + "/records/" + q(rid)
            key = job + "/requests/" + q("record:" + rid)
            status, claim = c.call("POST", key)
            expect(ledger, status in (200, 201), ("claim", status, claim))
            if claim["outcome"] != "created":
                expect(ledger, claim["outcome"] == "already_completed", ("claim", claim))
                continue
            with ledger.lock:
                ledger.effects[(job_id, rid)] += 1
            status, body = c.call("PUT", rec, {"status": "PROCESSING"})
            expect(ledger, status == 200, ("processing", status, body))
            status, body = c.call("PUT", rec, {"status": "SUCCEEDED"})
            expect(ledger, status == 200, ("succeeded", status, body))
            status, body = c.call("POST", key + "/complete",
                                  {"result": {"by": owner, "record": rid}})
            expect(ledger, status == 200 and body["outcome"] == "completed", ("complete", body))
        if stall:
            return False
        status, meta = c.call("POST", job + "/transition",
                              {"expected_version": meta["version"], "from": "RUNNING",
                               "to": "SUCCEEDED"})
        if expect(ledger, status == 200, ("finish", status, meta)):
            with ledger.lock:
                ledger.finished[job_id] += 1
        return True
    finally:
        if not stall:
            ledger.unhold(job_id, owner)
        status, body = c.call("DELETE", job + "/lease?owner=" + q(owner))
        expect(ledger, status in (204, 409), ("release", status, body))
        if status == 409:
            expect(ledger, stall, ("release lost", owner, job_id))


def worker(addr, ledger, wid, job_ids, deadline, clocks):
    c = Client(*addr)
    rng = random.Random(wid)
    stall_pending = wid == 0
    try:
        while time.time() < deadline:
            open_jobs = []
            for job_id in job_ids:
                status, meta = c.call("GET", "/v1/jobs/" + q(job_id))
                if meta["status"] != "SUCCEEDED":
                    open_jobs.append(job_id)
            if not open_jobs:
                return
            rng.shuffle(open_jobs)
            for job_id in open_jobs:
                process(c, ledger, wid, job_id, stall_pending, clocks)
                if stall_pending:
                    with ledger.lock:  # stalled once, on a job it really held
                        stall_pending = ledger.stall_refresh is None
    except Exception as exc:  # pragma: no cover - reported below
        with ledger.lock:
            ledger.errors.append(("worker %d" % wid, repr(exc)))
    finally:
        c.close()


def test_eight_workers_fifty_jobs(daemons):
    tenant = "contention-" + uuid.uuid4().hex[:8]
    d = daemons[0]
    assert len(daemons) == (2 if PEER else 1)
    setup = Client(d.host, d.port)
    job_ids = []
    for n in range(JOBS):
        status, job = setup.call("POST", "/v1/jobs", {"tenant_id": tenant})
        assert status == 201, job
        job_ids.append(job["job_id"])
        for r in range(RECORDS):
            status, rec = setup.call("PUT", "/v1/jobs/%s/records/r%d" % (q(job["job_id"]), r),
                                     {"status": "PENDING"})
            assert status == 200 and rec["version"] == 1, rec
    # Workers spread over the daemons (one today; two on one endpoint later).
    addrs = [(x.host, x.port) for x in daemons]
    ledger = Ledger()
    deadline = time.time() + 120
    run_threads([threading.Thread(target=worker,
                                  args=(addrs[i % len(addrs)], ledger, i, job_ids, deadline,
                                        daemons))
                 for i in range(WORKERS)], 150)
    assert ledger.errors == []
    assert ledger.overlaps == [], "two workers held one lease at once"
    assert ledger.lease_held > 0, "the workers never raced for a lease"
    # The stalled worker lost its lease and could not refresh it.
    assert ledger.stall_refresh == 409
    # Every job processed exactly once, every record's effect exactly once.
    assert sorted(ledger.finished) == sorted(job_ids)
    assert set(ledger.finished.values()) == {1}
    assert len(ledger.effects) == JOBS * RECORDS
    assert set(ledger.effects.values()) == {1}
    # The setup connection sat idle through the run, longer than the daemon's
    # 30 s connection timeout on a slow peer: read back on a new one.
    setup.close()
    setup = Client(d.host, d.port)
    for job_id in job_ids:
        status, job = setup.call("GET", "/v1/jobs/" + q(job_id))
        assert status == 200 and job["status"] == "SUCCEEDED", job
        assert job["version"] == 3, job  # PENDING -> RUNNING -> SUCCEEDED, nothing else
        status, page = setup.call("GET", "/v1/jobs/%s/records" % q(job_id))
        assert [r["status"] for r in page["records"]] == ["SUCCEEDED"] * RECORDS
        # PENDING (seed), PROCESSING, SUCCEEDED: no record was written twice.
        assert [r["version"] for r in page["records"]] == [3] * RECORDS, page
        for r in page["records"]:
            status, claim = setup.call("POST", "/v1/jobs/%s/requests/%s" % (
                q(job_id), q("record:" + r["record_id"])))
            assert status == 200 and claim["outcome"] == "already_completed", claim
    # The tenant's list agrees, through the GSI.
    status, page = setup.call("GET", "/v1/jobs?tenant_id=%s&limit=1000" % q(tenant))
    assert status == 200 and len(page["jobs"]) == JOBS
    assert {j["status"] for j in page["jobs"]} == {"SUCCEEDED"}
    setup.close()
