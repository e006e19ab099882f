# SPDX-License-Identifier: Apache-2.0
"""Fault injection over HTTP (docs/api.md, Fault injection; docs/design.md, Retries):
the /v1/_faults endpoints, and what injected backend faults do to real
requests: retries by reason, the retry budget, Throttled with Retry-After,
deadlines that cancel a delayed call, and errors that are never retried.

Throttling retries back off with a 1 s base (full jitter), so the rules here
use few `times`: the slowest test (4 throttled attempts) waits at most
1 + 2 + 4 s and about half that on average."""
import os
import re
import threading

import pytest

from daemon import Daemon

HERE = os.path.dirname(os.path.abspath(__file__))
MY_MODELS = os.path.join(HERE, "models")
WALLETS = "/v1/models/Wallet/items"
FAULTS = "/v1/_faults"

METRIC_RE = re.compile(r'^([a-z_]+)(?:\{(.*)\})? (\S+)$')


def metric(d, name, **labels):
    """The value of one sample of `name` whose labels include `labels`
    (0 when the sample does not exist yet: counters start at their first
    increment)."""
    status, _, data = d.request("GET", "/metrics")
    assert status == 200
    for line in data.decode().splitlines():
        m = METRIC_RE.match(line)
        if not m or m.group(1) != name:
            continue
        have = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
        if all(have.get(k) == v for k, v in labels.items()):
            return float(m.group(3))
    return 0.0


def retries(d, op, reason):
    return metric(d, "tabletheoryd_backend_retries_total", op=op, reason=reason)


def add_fault(d, **rule):
    status, _, body = d.json("POST", FAULTS, body=rule)
    assert status == 201, body
    return body


def rules(d):
    status, _, body = d.json("GET", FAULTS)
    assert status == 200, body
    return body["faults"]


def fired(d, rule_id):
    return next(r["fired"] for r in rules(d) if r["id"] == rule_id)


def assert_error(status, hdrs, body, http, code, field=None):
    assert status == http, (status, body)
    assert body["error"]["code"] == code, body
    assert body["request_id"] == hdrs["x-request-id"], body
    if field is not None:
        assert body["error"]["details"].get("field") == field, body
    return body["error"]


_keys = iter(range(1, 1 << 30))


def new_key(prefix="w"):
    return "%s-%d-%d" % (prefix, os.getpid(), next(_keys))


@pytest.fixture(scope="module")
def fdaemon():
    # A generous deadline: four throttled attempts may back off up to 7 s.
    d = Daemon("--enable-fault-injection", "--models", MY_MODELS, "--request-timeout-ms", "20000")
    yield d
    try:
        d.json("DELETE", FAULTS)
        d.wait_metric("tabletheoryd_inflight_operations", 0)
        d.stop()
    finally:
        d.kill()


@pytest.fixture(autouse=True)
def clear_faults(request):
    yield
    if "fdaemon" in request.fixturenames:
        d = request.getfixturevalue("fdaemon")
        status, _, _ = d.request("DELETE", FAULTS)
        assert status == 204


# ---- the endpoints ---------------------------------------------------------

def test_routes_are_404_without_the_flag(fresh_daemon):
    d = fresh_daemon("--models", MY_MODELS)
    for method in ("POST", "GET", "DELETE"):
        body = {"op": "PutItem", "error": "Timeout"} if method == "POST" else None
        status, hdrs, got = d.json(method, FAULTS, body=body)
        assert_error(status, hdrs, got, 404, "RouteNotFound")
    # And nothing is injected: a create works.
    status, _, got = d.json("POST", WALLETS, body={"id": new_key()})
    assert status == 201, got


def test_post_get_delete(fdaemon):
    got = add_fault(fdaemon, op="PutItem", model="Wallet",
                    error="ProvisionedThroughputExceededException", times=2, latency_ms=5)
    assert got["id"] >= 1
    assert got["op"] == "PutItem" and got["model"] == "Wallet"
    assert got["table"] == "wallets_itest"
    assert got["error"] == "ProvisionedThroughputExceededException"
    assert (got["times"], got["latency_ms"], got["fired"], got["remaining"]) == (2, 5, 0, 2)
    assert got["active"] is True
    second = add_fault(fdaemon, op="*", latency_ms=1, times=1)
    assert second["error"] is None and second["id"] > got["id"]
    assert "model" not in second and "table" not in second
    assert [r["id"] for r in rules(fdaemon)] == [got["id"], second["id"]]
    status, hdrs, data = fdaemon.request("DELETE", FAULTS)
    assert status == 204 and data == b""
    assert hdrs["x-request-id"]
    assert rules(fdaemon) == []


@pytest.mark.parametrize("body,field", [
    ({"error": "Timeout"}, "op"),
    ({"op": 3, "error": "Timeout"}, "op"),
    ({"op": "Putitem", "error": "Timeout"}, "op"),
    ({"op": "PutItem", "error": "Boom"}, "error"),
    ({"op": "PutItem", "error": 500}, "error"),
    ({"op": "PutItem"}, "error"),  # neither an error nor a latency
    ({"op": "PutItem", "latency_ms": 0}, "error"),
    ({"op": "PutItem", "error": "Unprocessed"}, "error"),
    ({"op": "PutItem", "error": "Timeout", "times": 0}, "times"),
    ({"op": "PutItem", "error": "Timeout", "times": "2"}, "times"),
    ({"op": "PutItem", "error": "Timeout", "times": 1.5}, "times"),
    ({"op": "PutItem", "error": "Timeout", "latency_ms": -1}, "latency_ms"),
    ({"op": "PutItem", "error": "Timeout", "latency_ms": 10 ** 9}, "latency_ms"),
    ({"op": "PutItem", "error": "Timeout", "model": "NoSuchModel"}, "model"),
    ({"op": "PutItem", "error": "Timeout", "model": 1}, "model"),
    ({"op": "PutItem", "error": "Timeout", "model": "Wallet", "table": "t"}, "table"),
    ({"op": "PutItem", "error": "Timeout", "unprocessed": 2}, "unprocessed"),
    ({"op": "BatchWriteItem", "error": "Unprocessed", "unprocessed": 0}, "unprocessed"),
    ({"op": "PutItem", "error": "Timeout", "tims": 2}, "tims"),
])
def test_validation(fdaemon, body, field):
    status, hdrs, got = fdaemon.json("POST", FAULTS, body=body)
    err = assert_error(status, hdrs, got, 400, "ValidationError", field)
    assert err["retryable"] is False
    assert rules(fdaemon) == []


def test_body_must_be_json(fdaemon):
    status, hdrs, got = fdaemon.json("POST", FAULTS, body=b"{not json",
                                     headers={"Content-Type": "application/json"})
    assert_error(status, hdrs, got, 400, "ValidationError")


# ---- retries ----------------------------------------------------------------

def test_throttled_twice_then_created(fdaemon):
    before = retries(fdaemon, "PutItem", "throttled")
    rule = add_fault(fdaemon, op="PutItem", model="Wallet",
                     error="ProvisionedThroughputExceededException", times=2)
    key = new_key()
    status, _, got = fdaemon.json("POST", WALLETS, body={"id": key})
    assert status == 201, got
    assert retries(fdaemon, "PutItem", "throttled") == before + 2
    assert fired(fdaemon, rule["id"]) == 2
    status, _, got = fdaemon.json("GET", WALLETS + "/" + key)
    assert status == 200 and got["id"] == key


def test_throttled_past_the_budget_is_429(fdaemon):
    before = retries(fdaemon, "PutItem", "throttled")
    rule = add_fault(fdaemon, op="PutItem", model="Wallet",
                     error="ProvisionedThroughputExceededException", times=10)
    key = new_key()
    status, hdrs, got = fdaemon.json("POST", WALLETS, body={"id": key})
    err = assert_error(status, hdrs, got, 429, "Throttled")
    assert err["retryable"] is True
    assert int(hdrs["retry-after"]) >= 1
    # Four attempts (the first and three retries), then the answer.
    assert fired(fdaemon, rule["id"]) == 4
    assert retries(fdaemon, "PutItem", "throttled") == before + 3
    status, _, _ = fdaemon.json("GET", WALLETS + "/" + key)
    assert status == 404


def test_huge_retry_after_fails_at_once_with_retry_after(fdaemon):
    """An x-amz-retry-after beyond the longest backoff (20 s) is not waited
    out: 429 at once, with the advice as Retry-After (seconds, rounded up)."""
    before = retries(fdaemon, "PutItem", "throttled")
    rule = add_fault(fdaemon, op="PutItem", model="Wallet",
                     error="ProvisionedThroughputExceededException", times=10,
                     retry_after_ms=3599001)
    assert rule["retry_after_ms"] == 3599001
    status, hdrs, got = fdaemon.json("POST", WALLETS, body={"id": new_key()})
    err = assert_error(status, hdrs, got, 429, "Throttled")
    assert err["retryable"] is True
    assert hdrs["retry-after"] == "3600"
    assert fired(fdaemon, rule["id"]) == 1
    assert retries(fdaemon, "PutItem", "throttled") == before


def test_retry_after_past_the_deadline_fails_at_once(tmp_path):
    """A wait the backend advises that would end after the request's
    deadline is not started: 429 with Retry-After at once, not at the
    deadline."""
    d = Daemon("--enable-fault-injection", "--models", MY_MODELS, "--request-timeout-ms", "3000")
    try:
        rule = add_fault(d, op="PutItem", model="Wallet",
                         error="ProvisionedThroughputExceededException", times=10,
                         retry_after_ms=4500)
        status, hdrs, got = d.json("POST", WALLETS, body={"id": new_key()})
        err = assert_error(status, hdrs, got, 429, "Throttled")
        assert err["retryable"] is True
        assert hdrs["retry-after"] == "5"
        assert fired(d, rule["id"]) == 1  # one attempt, no wait
        # Advice that fits the deadline is followed.
        d.json("DELETE", FAULTS)
        rule = add_fault(d, op="PutItem", model="Wallet",
                         error="ProvisionedThroughputExceededException", times=1,
                         retry_after_ms=50)
        status, _, got = d.json("POST", WALLETS, body={"id": new_key()})
        assert status == 201, got
        assert fired(d, rule["id"]) == 1
        d.json("DELETE", FAULTS)
        d.wait_metric("tabletheoryd_inflight_operations", 0)
        d.stop()
    finally:
        d.kill()


def test_backend_413_is_not_retried(fdaemon):
    """A 413 from the backend (the body is too large for it, possibly said
    before it read the body) would only repeat: not retried, 413."""
    before = retries(fdaemon, "PutItem", "transient")
    rule = add_fault(fdaemon, op="PutItem", model="Wallet", error="RequestEntityTooLarge",
                     times=5)
    status, hdrs, got = fdaemon.json("POST", WALLETS, body={"id": new_key()})
    err = assert_error(status, hdrs, got, 413, "PayloadTooLarge")
    assert err["retryable"] is False
    assert fired(fdaemon, rule["id"]) == 1
    assert retries(fdaemon, "PutItem", "transient") == before


@pytest.mark.parametrize("error", ["InternalServerError", "ServiceUnavailable", "Timeout",
                                   "ConnectionReset"])
def test_transient_errors_are_retried(fdaemon, error):
    before = retries(fdaemon, "PutItem", "transient")
    throttled = retries(fdaemon, "PutItem", "throttled")
    rule = add_fault(fdaemon, op="PutItem", error=error, times=2)
    status, _, got = fdaemon.json("POST", WALLETS, body={"id": new_key()})
    assert status == 201, got
    assert retries(fdaemon, "PutItem", "transient") == before + 2
    assert retries(fdaemon, "PutItem", "throttled") == throttled
    assert fired(fdaemon, rule["id"]) == 2


@pytest.mark.parametrize("error,http,code", [
    ("InternalServerError", 503, "BackendUnavailable"),
    ("Timeout", 504, "BackendTimeout"),
])
def test_transient_past_the_budget(fdaemon, error, http, code):
    rule = add_fault(fdaemon, op="PutItem", error=error, times=10)
    status, hdrs, got = fdaemon.json("POST", WALLETS, body={"id": new_key()})
    err = assert_error(status, hdrs, got, http, code)
    assert err["retryable"] is True
    assert fired(fdaemon, rule["id"]) == 4


def test_condition_failures_are_never_retried(fdaemon):
    key = new_key()
    status, _, got = fdaemon.json("POST", WALLETS, body={"id": key})
    assert status == 201, got
    counts = [retries(fdaemon, "PutItem", r) for r in ("throttled", "transient")]
    # A real condition failure: the key exists.
    status, hdrs, got = fdaemon.json("POST", WALLETS, body={"id": key})
    assert_error(status, hdrs, got, 409, "ConditionFailed")
    # An injected one: one attempt only, though the rule would fire thrice.
    rule = add_fault(fdaemon, op="PutItem", error="ConditionalCheckFailedException", times=3)
    status, hdrs, got = fdaemon.json("POST", WALLETS, body={"id": new_key()})
    assert_error(status, hdrs, got, 409, "ConditionFailed")
    assert fired(fdaemon, rule["id"]) == 1
    assert [retries(fdaemon, "PutItem", r) for r in ("throttled", "transient")] == counts


# ---- matching and clearing ----------------------------------------------------

def test_model_and_op_scoping(fdaemon):
    rule = add_fault(fdaemon, op="PutItem", model="Counter", error="ConditionalCheckFailedException",
                     times=1)
    # Another model's table: untouched.
    status, _, got = fdaemon.json("POST", WALLETS, body={"id": new_key()})
    assert status == 201, got
    # Another op on the model's table: untouched.
    status, _, got = fdaemon.json("GET", "/v1/models/Counter/items/12345")
    assert status == 404 and got["error"]["code"] == "ItemNotFound", got
    assert fired(fdaemon, rule["id"]) == 0
    status, _, got = fdaemon.json("POST", "/v1/models/Counter/items", body={"n": 7})
    assert status == 409, got
    assert fired(fdaemon, rule["id"]) == 1
    # Expired: the next create works.
    status, _, got = fdaemon.json("POST", "/v1/models/Counter/items", body={"n": 7})
    assert status == 201, got
    [listed] = rules(fdaemon)
    assert listed["active"] is False and listed["remaining"] == 0


def test_any_op(fdaemon):
    key = new_key()
    status, _, _ = fdaemon.json("POST", WALLETS, body={"id": key})
    assert status == 201
    before = retries(fdaemon, "GetItem", "transient")
    add_fault(fdaemon, op="*", model="Wallet", error="ServiceUnavailable", times=1)
    status, _, got = fdaemon.json("GET", WALLETS + "/" + key)
    assert status == 200 and got["id"] == key
    assert retries(fdaemon, "GetItem", "transient") == before + 1


def test_delete_clears(fdaemon):
    rule = add_fault(fdaemon, op="PutItem", error="ConditionalCheckFailedException", times=100)
    status, _, _ = fdaemon.json("POST", WALLETS, body={"id": new_key()})
    assert status == 409
    assert fired(fdaemon, rule["id"]) == 1
    status, _, _ = fdaemon.request("DELETE", FAULTS)
    assert status == 204
    status, _, got = fdaemon.json("POST", WALLETS, body={"id": new_key()})
    assert status == 201, got


# ---- latency and the deadline ------------------------------------------------

def test_latency_delays_a_call(fdaemon):
    rule = add_fault(fdaemon, op="PutItem", latency_ms=1000, times=1)
    key = new_key()
    result = {}
    t = threading.Thread(target=lambda: result.setdefault(
        "r", fdaemon.json("POST", WALLETS, body={"id": key})))
    t.start()
    # The delayed call is in flight and has not written yet.
    fdaemon.wait_metric("tabletheoryd_inflight_operations", 1)
    assert fired(fdaemon, rule["id"]) == 1
    t.join()
    status, _, got = result["r"]
    assert status == 201, got
    assert fdaemon.json("GET", WALLETS + "/" + key)[0] == 200


def test_latency_past_the_deadline_is_504(fresh_daemon):
    # A deadline the checks below (one GetItem each) meet on a loaded peer,
    # and a delay no request waits for.
    d = fresh_daemon("--enable-fault-injection", "--models", MY_MODELS,
                     "--request-timeout-ms", "1000")
    rule = add_fault(d, op="PutItem", model="Wallet", latency_ms=600000, times=1)
    key = new_key()
    status, hdrs, got = d.json("POST", WALLETS, body={"id": key})
    err = assert_error(status, hdrs, got, 504, "BackendTimeout")
    assert err["retryable"] is True
    # Answered at the deadline, not after the delay: the delayed call was
    # cancelled and joined, and never ran (below).
    d.wait_metric("tabletheoryd_inflight_operations", 0)
    assert fired(d, rule["id"]) == 1
    status, _, got = d.json("GET", WALLETS + "/" + key)
    assert status == 404, got
    assert metric(d, "tabletheoryd_backend_calls_total", op="PutItem", outcome="canceled") == 1
    d.stop()


# ---- unprocessed batch items (needs the batch endpoints) ----------------------

def batch_write_exists(d):
    status, _, _ = d.json("POST", "/v1/models/Wallet/batch-write", body={"put": []})
    return status != 404


def test_unprocessed_items_are_retried_until_written(fdaemon):
    if not batch_write_exists(fdaemon):
        pytest.skip("POST /v1/models/{m}/batch-write is not served by this build")
    keys = [new_key("b") for _ in range(6)]
    rule = add_fault(fdaemon, op="BatchWriteItem", model="Wallet", error="Unprocessed", times=2)
    status, _, got = fdaemon.json("POST", "/v1/models/Wallet/batch-write",
                                  body={"put": [{"id": k} for k in keys]})
    assert status == 200, got
    assert got["processed"] == 6
    assert fired(fdaemon, rule["id"]) == 2
    for k in keys:
        status, _, got = fdaemon.json("GET", WALLETS + "/" + k)
        assert status == 200, (k, got)


def test_never_processed_is_batch_incomplete(fresh_daemon):
    d = fresh_daemon("--enable-fault-injection", "--models", MY_MODELS,
                     "--request-timeout-ms", "2000")
    if not batch_write_exists(d):
        pytest.skip("POST /v1/models/{m}/batch-write is not served by this build")
    keys = [new_key("b") for _ in range(3)]
    add_fault(d, op="BatchWriteItem", model="Wallet", error="Unprocessed", unprocessed=1,
              times=1000)
    status, hdrs, got = d.json("POST", "/v1/models/Wallet/batch-write",
                               body={"put": [{"id": k} for k in keys]})
    assert_error(status, hdrs, got, 503, "BatchIncomplete")
    assert got["error"]["retryable"] is True
    assert got["error"]["details"]["unprocessed"], got
    d.wait_metric("tabletheoryd_inflight_operations", 0)
    d.stop()
