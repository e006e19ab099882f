# SPDX-License-Identifier: Apache-2.0
"""Leased semaphores (docs/ledger.md "Semaphores"): at most `limit` owners
hold a scope/subject at once, each on one SLOT# item of the jobs table,
acquired, refreshed and released under the job leases' owner and expiry
rules. Checks limits, idempotent re-acquire, expiry, wrong owners, input
checks before any I/O, and contention: worker threads spread over two daemons
on one peer (one daemon on memory, whose tables are per process) never hold
more than `limit` slots, and exactly `limit` of them win when all try at
once. Runs on memory, dynalite and moto."""
import json
import re
import threading
import time
import urllib.parse
import uuid

import pytest

from daemon import PEER, KeepAliveClient as Client, run_threads, served_on_one_table
from items_fixtures import assert_error
from test_ledger import stored_item

METRIC_RE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$")


def seg(value):
    return urllib.parse.quote(str(value), safe="")


def new_subject():
    return "subj-" + uuid.uuid4().hex[:12]


def sem_path(scope, subject, *rest):
    return "/".join(["/v1/semaphores", seg(scope), seg(subject)] + list(rest))


def acquire(d, subject, owner, limit, seconds=30, scope="imports"):
    return d.json("POST", sem_path(scope, subject, "lease"),
                  body={"owner": owner, "limit": limit, "duration_seconds": seconds})


def refresh(d, subject, owner, slot, seconds=30, scope="imports"):
    return d.json("POST", sem_path(scope, subject, "lease", "refresh"),
                  body={"owner": owner, "slot": slot, "duration_seconds": seconds})


def release(d, subject, owner, slot, scope="imports"):
    status, hdrs, data = d.request("DELETE", sem_path(scope, subject, "lease") +
                                   "?owner=%s&slot=%s" % (seg(owner), seg(slot)))
    return status, hdrs, (json.loads(data) if data else None)


def inspect(d, subject, scope="imports"):
    status, _, body = d.json("GET", sem_path(scope, subject))
    assert status == 200, body
    return body


def backend_calls(d):
    """Every backend call the daemon made so far (all operations, outcomes)."""
    status, _, data = d.request("GET", "/metrics")
    assert status == 200
    total = 0.0
    for line in data.decode().splitlines():
        m = METRIC_RE.match(line)
        if m and m.group(1) == "tabletheoryd_backend_calls_total":
            total += float(m.group(3))
    return total


# ---- acquire, refresh, release, inspect ---------------------------------------

def test_limit_and_idempotent_acquire(ld):
    subject = new_subject()
    now = ld.clock()[0]
    status, _, a = acquire(ld, subject, "w1", 2)
    assert status == 200, a
    assert a["scope"] == "imports" and a["subject"] == subject and a["owner"] == "w1"
    assert a["slot"] in (0, 1)
    assert a["expires_at"] == now + 30
    status, _, again = acquire(ld, subject, "w1", 2, 60)  # ours: same slot, extended
    assert status == 200 and again["slot"] == a["slot"], again
    assert again["expires_at"] == now + 60
    status, _, b = acquire(ld, subject, "w2", 2)
    assert status == 200 and b["slot"] == 1 - a["slot"], b
    status, hdrs, body = acquire(ld, subject, "w3", 2)
    err = assert_error(status, hdrs, body, 409, "LeaseHeld", "limit")
    assert err["details"]["limit"] == 2
    assert "w1" not in err["message"] and "w2" not in err["message"]
    body = inspect(ld, subject)
    assert body["scope"] == "imports" and body["subject"] == subject and body["count"] == 2
    holders = sorted((h["slot"], h["owner"]) for h in body["holders"])
    assert holders == sorted([(a["slot"], "w1"), (b["slot"], "w2")])
    assert [h["slot"] for h in body["holders"]] == [0, 1]  # in slot order
    # AppTheory's item layout, straight from the peer.
    raw = stored_item("SEM#imports#" + subject, "SLOT#%09d" % a["slot"])
    if raw is not None:
        assert raw["owner"] == {"S": "w1"} and raw["scope"] == {"S": "imports"}
        assert raw["subject"] == {"S": subject} and raw["slot"] == {"N": str(a["slot"])}
        assert raw["lease_expires_at"] == {"N": str(again["expires_at"])}
        assert raw["version"] == {"N": "2"}  # acquired twice
        assert int(raw["ttl"]["N"]) == again["expires_at"] + 86400


def test_unknown_semaphore_has_no_holders(ld):
    subject = new_subject()
    body = inspect(ld, subject)
    assert body == {"scope": "imports", "subject": subject, "count": 0, "holders": []}


def test_identifiers_with_slashes_and_unicode(ld):
    scope, subject = "tenant/acme", "imports/2024-01-01.csv \u00e9#1"
    status, _, a = acquire(ld, subject, "w", 1, scope=scope)
    assert status == 200 and a["scope"] == scope and a["subject"] == subject, a
    assert inspect(ld, subject, scope=scope)["holders"][0]["owner"] == "w"
    assert release(ld, subject, "w", a["slot"], scope=scope)[0] == 204


def test_refresh_and_release_only_by_the_holder(ld):
    subject = new_subject()
    status, _, a = acquire(ld, subject, "w1", 1)
    assert status == 200 and a["slot"] == 0, a
    status, _, body = refresh(ld, subject, "w1", 0, 90)
    assert status == 200 and body["slot"] == 0, body
    assert body["expires_at"] == ld.clock()[0] + 90
    status, hdrs, body = refresh(ld, subject, "w2", 0)
    assert_error(status, hdrs, body, 409, "LeaseNotOwned", "owner")
    status, hdrs, body = refresh(ld, subject, "w1", 1)  # not its slot
    assert_error(status, hdrs, body, 409, "LeaseNotOwned", "owner")
    status, hdrs, body = release(ld, subject, "w2", 0)
    assert_error(status, hdrs, body, 409, "LeaseNotOwned", "owner")
    status, _, body = release(ld, subject, "w1", 0)
    assert status == 204 and body is None
    assert release(ld, subject, "w1", 0)[0] == 204  # already gone
    status, hdrs, body = refresh(ld, subject, "w1", 0)  # released: not owned any more
    assert_error(status, hdrs, body, 409, "LeaseNotOwned", "owner")
    assert inspect(ld, subject)["count"] == 0
    status, _, b = acquire(ld, subject, "w2", 1)
    assert status == 200 and b["slot"] == 0, b


def test_expiry_frees_a_slot(ld):
    subject = new_subject()
    status, _, a = acquire(ld, subject, "slow", 1, 1)
    assert status == 200, a
    status, hdrs, body = acquire(ld, subject, "fast", 1)
    assert_error(status, hdrs, body, 409, "LeaseHeld")
    ld.advance_clock(1000)  # expires_at == now: still held
    assert inspect(ld, subject)["count"] == 1
    ld.advance_clock(1000)  # expired means expires_at < now
    assert inspect(ld, subject)["count"] == 0  # expired holders are not listed
    status, hdrs, body = refresh(ld, subject, "slow", 0)
    assert_error(status, hdrs, body, 409, "LeaseNotOwned")
    status, _, b = acquire(ld, subject, "fast", 1)
    assert status == 200 and b["slot"] == 0, b
    status, hdrs, body = refresh(ld, subject, "slow", 0)
    assert_error(status, hdrs, body, 409, "LeaseNotOwned")
    status, hdrs, body = release(ld, subject, "slow", 0)
    assert_error(status, hdrs, body, 409, "LeaseNotOwned")
    assert [h["owner"] for h in inspect(ld, subject)["holders"]] == ["fast"]


def test_expired_own_slot_is_acquired_again(ld):
    subject = new_subject()
    status, _, a = acquire(ld, subject, "w", 3, 1)
    assert status == 200, a
    ld.advance_clock(2000)
    status, _, b = acquire(ld, subject, "w", 3)
    assert status == 200 and b["slot"] == a["slot"], (a, b)  # its own slot, not another


# ---- input checks, before any I/O ------------------------------------------------

ACQUIRE_BAD = [
    ({"limit": 2, "duration_seconds": 5}, "owner"),
    ({"owner": "", "limit": 2, "duration_seconds": 5}, "owner"),
    ({"owner": "w", "duration_seconds": 5}, "limit"),
    ({"owner": "w", "limit": 0, "duration_seconds": 5}, "limit"),
    ({"owner": "w", "limit": 257, "duration_seconds": 5}, "limit"),
    ({"owner": "w", "limit": 1.5, "duration_seconds": 5}, "limit"),
    ({"owner": "w", "limit": "2", "duration_seconds": 5}, "limit"),
    ({"owner": "w", "limit": 2}, "duration_seconds"),
    ({"owner": "w", "limit": 2, "duration_seconds": 0}, "duration_seconds"),
    ({"owner": "w", "limit": 2, "duration_seconds": 86401}, "duration_seconds"),
    ({"owner": "w", "limit": 2, "duration_seconds": 5, "slot": 0}, "slot"),
]


def test_refusals_come_before_any_io(ld):
    subject = new_subject()
    before = backend_calls(ld)
    for body, field in ACQUIRE_BAD:
        status, hdrs, out = ld.json("POST", sem_path("imports", subject, "lease"), body=body)
        assert_error(status, hdrs, out, 400, "ValidationError", field)
    for body, field in [({"owner": "w", "duration_seconds": 5}, "slot"),
                        ({"owner": "w", "slot": 256, "duration_seconds": 5}, "slot"),
                        ({"owner": "w", "slot": -1, "duration_seconds": 5}, "slot"),
                        ({"slot": 0, "duration_seconds": 5}, "owner"),
                        ({"owner": "w", "slot": 0}, "duration_seconds")]:
        status, hdrs, out = ld.json("POST", sem_path("imports", subject, "lease", "refresh"),
                                    body=body)
        assert_error(status, hdrs, out, 400, "ValidationError", field)
    base = sem_path("imports", subject, "lease")
    for query, field in [("", "owner"), ("?slot=0", "owner"), ("?owner=w", "slot"),
                         ("?owner=w&slot=256", "slot"), ("?owner=w&slot=-1", "slot"),
                         ("?owner=w&slot=x", "slot")]:
        status, hdrs, data = ld.request("DELETE", base + query)
        assert_error(status, hdrs, json.loads(data), 400, "ValidationError", field)
    for scope, subj, field in [("a%23b", "t", "scope"), ("s", "%01", "subject"),
                               ("s", "x" * 257, "subject"), ("x" * 257, "t", "scope")]:
        status, hdrs, out = ld.json("GET", "/v1/semaphores/%s/%s" % (scope, subj))
        assert_error(status, hdrs, out, 400, "ValidationError", field)
    status, hdrs, out = ld.json("POST", sem_path("imports", subject, "lease"), body=[1])
    assert status == 400, out
    assert backend_calls(ld) == before
    # A valid call does reach the backend (the counter is the right one).
    assert acquire(ld, subject, "w", 1)[0] == 200
    assert backend_calls(ld) > before


# ---- contention ------------------------------------------------------------------

LIMIT = 3
WORKERS = 12
ROUNDS = 6


@pytest.fixture(scope="module")
def daemons():
    # With a peer, two daemons on the same table: the limit must hold across
    # processes, not just inside one.
    yield from served_on_one_table()


def test_exactly_limit_win_when_all_try_at_once(daemons):
    assert len(daemons) == (2 if PEER else 1)
    subject = new_subject()
    path = sem_path("imports", subject, "lease")
    start = threading.Barrier(WORKERS)
    results = [None] * WORKERS

    def run(i):
        d = daemons[i % len(daemons)]
        c = Client(d.host, d.port)
        try:
            start.wait(timeout=30)
            results[i] = c.call("POST", path, {"owner": "w%d" % i, "limit": LIMIT,
                                               "duration_seconds": 60})
        except Exception as exc:  # pragma: no cover - reported below
            results[i] = ("error", repr(exc))
        finally:
            c.close()

    run_threads([threading.Thread(target=run, args=(i,)) for i in range(WORKERS)], 120)
    won = [(i, body) for i, (status, body) in enumerate(results) if status == 200]
    lost = [body for status, body in results if status != 200]
    assert len(won) == LIMIT, results
    assert sorted(body["slot"] for _, body in won) == list(range(LIMIT)), won
    assert all(b["error"]["code"] == "LeaseHeld" for b in lost), lost
    # Both daemons see the same holders.
    expect = sorted(("w%d" % i, body["slot"]) for i, body in won)
    for d in daemons:
        body = inspect(d, subject)
        assert sorted((h["owner"], h["slot"]) for h in body["holders"]) == expect


def test_never_more_than_limit_holders(daemons):
    """Workers acquire, hold a little, release, and acquire again; a shared
    tally checks at every moment that at most LIMIT hold a slot, and that no
    two hold one slot."""
    subject = new_subject()
    path = sem_path("imports", subject, "lease")
    lock = threading.Lock()
    holding = {}                   # slot -> owner
    peak = [0]
    wins = [0]
    full = [0]
    errors = []

    def run(i):
        d = daemons[i % len(daemons)]
        c = Client(d.host, d.port)
        owner = "w%d" % i
        try:
            for _ in range(ROUNDS):
                status, body = c.call("POST", path, {"owner": owner, "limit": LIMIT,
                                                     "duration_seconds": 60})
                if status == 409:
                    if body["error"]["code"] != "LeaseHeld":
                        errors.append(body)
                    with lock:
                        full[0] += 1
                    time.sleep(0.01)
                    continue
                if status != 200:
                    errors.append((status, body))
                    return
                slot = body["slot"]
                with lock:
                    if slot in holding:
                        errors.append(("two holders", slot, holding[slot], owner))
                    holding[slot] = owner
                    wins[0] += 1
                    peak[0] = max(peak[0], len(holding))
                    if len(holding) > LIMIT:
                        errors.append(("over the limit", dict(holding)))
                time.sleep(0.02)
                status, body = c.call("POST", path + "/refresh",
                                      {"owner": owner, "slot": slot, "duration_seconds": 60})
                if status != 200:
                    errors.append(("refresh", status, body))
                # Forget the slot before releasing it: another worker may get
                # it as soon as the release is written.
                with lock:
                    del holding[slot]
                status, _ = c.call("DELETE", path + "?owner=%s&slot=%d" % (seg(owner), slot))
                if status != 204:
                    errors.append(("release", status))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(("worker %d" % i, repr(exc)))
        finally:
            c.close()

    run_threads([threading.Thread(target=run, args=(i,)) for i in range(WORKERS)], 300)
    assert errors == []
    assert peak[0] <= LIMIT
    assert wins[0] >= LIMIT and full[0] > 0, (wins, full)  # they did race
    for d in daemons:
        assert inspect(d, subject)["count"] == 0  # every slot released
