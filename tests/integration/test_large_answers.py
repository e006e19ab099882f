# SPDX-License-Identifier: Apache-2.0
"""Answers with a byte budget (--max-response-bytes, docs/api.md "Query and
scan"): a query or scan answer whose items reach the budget ends early, also
inside a backend page and across parallel scan segments, with the cursor the
API returns for `limit`; paging with that cursor returns every item exactly
once. A single item larger than the budget is still answered (one item per
page). On memory, dynalite and moto.

The memory test at the end holds the daemon's peak RSS under concurrent
large scans to a bound computed from connections x budget."""
import json
import os
import threading

import pytest

from daemon import PEER, Daemon, KeepAliveClient, run_threads, skip_on_peer, stop_clean
from items_fixtures import MY_MODELS, assert_error

BUDGET = 65536
NOTE = 3000  # bytes of each item's note: ~21 items fill the budget
N_ITEMS = 90
TENANT = "t-large"


@pytest.fixture(scope="module")
def bd():
    """A daemon with a 64 KiB budget and 90 items of ~3 KB in one partition
    of Event (270 KB: five answers or more, each ending inside a page)."""
    d = Daemon("--models", MY_MODELS, "--max-response-bytes", str(BUDGET))
    try:
        items = [{"tenant": TENANT, "sk": "%04d" % i, "note": ("n%04d" % i) * (NOTE // 5)}
                 for i in range(N_ITEMS)]
        for k in range(0, N_ITEMS, 25):
            status, _, body = d.json("POST", "/v1/models/Event/batch-write",
                                     {"put": items[k:k + 25]})
            assert status == 200, body
        yield d
    finally:
        stop_clean(d)


def walk(d, path, body, max_calls=200):
    """Pages through an answer with its cursor: (items in order, pages)."""
    items, pages, cursor = [], [], None
    for _ in range(max_calls):
        req = dict(body)
        if cursor is not None:
            req["cursor"] = cursor
        status, _, data = d.request("POST", path, req)
        assert status == 200, data[:300]
        page = json.loads(data)
        pages.append((len(data), page))
        items.extend(page["items"])
        cursor = page["cursor"]
        if cursor is None:
            return items, pages
        # An answer that ends early holds at least one item.
        assert page["items"], page
    raise AssertionError("the cursor never ended")


def assert_bounded(pages, largest_item):
    """Every answer's items fit the budget, or the answer is one item."""
    for size, page in pages:
        if len(page["items"]) > 1:
            items_text = len(json.dumps(page["items"], separators=(",", ":")))
            assert items_text <= BUDGET, (size, len(page["items"]))
        assert size <= BUDGET + largest_item + 512, size


def sks(items):
    return [it["sk"] for it in items]


EXPECTED = ["%04d" % i for i in range(N_ITEMS)]
KEY = [{"attr": "tenant", "op": "=", "value": TENANT}]


@pytest.mark.parametrize("limit", [None, 1000, 40])
def test_query_pages_through_everything_once(bd, limit):
    body = {"key": KEY, "consistent": True}
    if limit:
        body["limit"] = limit
    items, pages = walk(bd, "/v1/models/Event/query", body)
    assert sks(items) == EXPECTED
    assert len(pages) >= 5, [len(p["items"]) for _, p in pages]
    assert_bounded(pages, NOTE + 200)
    if limit:
        assert all(len(p["items"]) <= limit for _, p in pages)


def test_query_descending_pages_once(bd):
    items, pages = walk(bd, "/v1/models/Event/query",
                        {"key": KEY, "order": "desc", "limit": 100000, "consistent": True})
    assert sks(items) == EXPECTED[::-1]
    assert len(pages) >= 5


def test_query_with_select_pages_once(bd):
    # The key attribute `tenant` is not selected: the answer leaves it out,
    # yet the cursor of an answer that ends inside a page needs it.
    items, pages = walk(bd, "/v1/models/Event/query",
                        {"key": KEY, "select": ["sk", "note"], "consistent": True})
    assert sks(items) == EXPECTED
    assert all(set(it) == {"sk", "note"} for it in items), items[0].keys()
    assert len(pages) >= 5


def test_select_into_a_key_attribute_is_refused(bd):
    status, hdrs, body = bd.json("POST", "/v1/models/Event/query",
                                 {"key": KEY, "select": ["tenant.x", "note"]})
    assert_error(status, hdrs, body, 400, "ValidationError", "select")


@pytest.mark.parametrize("segments,limit", [(1, None), (1, 100000), (4, None), (4, 100000),
                                            (8, 30), (3, 7)])
def test_scan_pages_through_everything_once(bd, segments, limit):
    body = {"filter": {"attr": "tenant", "op": "=", "value": TENANT}, "consistent": True}
    if segments > 1:
        body["segments"] = segments
    if limit:
        body["limit"] = limit
    items, pages = walk(bd, "/v1/models/Event/scan", body)
    got = sks(items)
    assert len(got) == len(set(got)), "an item came twice"
    assert sorted(got) == EXPECTED
    assert_bounded(pages, NOTE + 200)
    if limit is None or limit * (NOTE + 100) > BUDGET:
        assert len(pages) >= 5, [len(p["items"]) for _, p in pages]


def test_an_item_larger_than_the_budget_is_answered_alone(bd):
    big = 100000  # > BUDGET, < DynamoDB's 400 KB
    ids = ["big-%d" % i for i in range(3)]
    for i in ids:
        status, _, body = bd.json("POST", "/v1/models/Loose/items", {"id": i, "blob": "b" * big})
        assert status == 201, body
    for req in ({"consistent": True}, {"consistent": True, "segments": 2},
                {"consistent": True, "limit": 1000}):
        items, pages = walk(bd, "/v1/models/Loose/scan", req)
        assert sorted(it["id"] for it in items) == ids
        # Every answer holds one of them: none fits next to another.
        assert [len(p["items"]) for _, p in pages if p["items"]] == [1, 1, 1], req


# ---- memory bound ------------------------------------------------------------------------------

MIB = 1 << 20


def vm(pid, field):
    """A /proc/<pid>/status figure (VmRSS, VmHWM) in bytes."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise AssertionError(field)


# What is buffered is the daemon's own (answer text, pages being read), the
# same on every backend; the memory backend lets the daemon's RSS show it
# without a peer's sockets and timing in the way.
@skip_on_peer("RSS of the daemon: its buffering does not depend on the backend")
def test_rss_under_concurrent_large_scans_is_bounded(fresh_daemon):
    budget, conns, segments = MIB, 6, 8
    n, size = 300, 100 * 1000  # 30 MB of items
    d = fresh_daemon("--models", MY_MODELS, "--max-response-bytes", str(budget))
    with open("/proc/%d/maps" % d.proc.pid) as f:
        if "libasan" in f.read():
            pytest.skip("AddressSanitizer keeps freed memory in quarantine: RSS says nothing")
    blob = "r" * size
    loader = KeepAliveClient(d.host, d.port)
    for i in range(n):
        status, body = loader.call("POST", "/v1/models/Loose/items",
                                   {"id": "rss-%04d" % i, "blob": blob})
        assert status == 201, body
    loader.close()
    before = vm(d.proc.pid, "VmHWM")
    seen = [[] for _ in range(conns)]
    calls = [0] * conns

    def walker(k):
        c = KeepAliveClient(d.host, d.port)
        cursor = None
        while True:
            req = {"segments": segments, "limit": 100000}
            if cursor:
                req["cursor"] = cursor
            status, body = c.call("POST", "/v1/models/Loose/scan", req)
            assert status == 200, body
            seen[k].extend(it["id"] for it in body["items"])
            calls[k] += 1
            cursor = body["cursor"]
            if cursor is None:
                break
        c.close()

    run_threads([threading.Thread(target=walker, args=(k,)) for k in range(conns)], timeout=300)
    for k in range(conns):
        assert sorted(seen[k]) == ["rss-%04d" % i for i in range(n)], calls[k]
        assert calls[k] >= n * size // budget, calls[k]
    growth = vm(d.proc.pid, "VmHWM") - before
    # Per connection: the answer's items (the budget) and their copy into the
    # body, and the one page being read (a budget of 1 MiB lets one start at
    # a time), decoded (~1.5x its DynamoDB size); plus a fixed allowance for
    # the allocator and connection buffers. Unbounded, each of the six
    # answers held all 30 MB, two or three times over.
    bound = conns * (2 * budget + 2 * MIB) + 24 * MIB
    assert growth < bound, "peak RSS grew %.1f MiB, bound %.1f MiB" % (growth / MIB, bound / MIB)
