# SPDX-License-Identifier: Apache-2.0
"""items_fixtures.py -- shared helpers of the model, item and query tests: a
daemon per module that loads the TableTheory fixture models and the small
models of tests/integration/models, the error-envelope check, key paths."""
import base64
import datetime
import json
import os
import re
import urllib.parse

import pytest

from daemon import SRCDIR, served

HERE = os.path.dirname(os.path.abspath(__file__))
MY_MODELS = os.path.join(HERE, "models")
FIXTURE_MODELS = os.path.join(SRCDIR, "tests", "data", "dms", "v0.2", "models")

# Go's time.RFC3339Nano: trailing zeros of the fraction are trimmed.
RFC3339NANO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{0,8}[1-9])?Z")


@pytest.fixture(scope="module")
def mdaemon():
    """One daemon for a test module, with both model directories and table
    deletion allowed, on the test clock (Daemon.clock, Daemon.advance_clock);
    stopped cleanly (inflight operations back to 0)."""
    yield from served("--models", FIXTURE_MODELS, "--models", MY_MODELS, "--allow-table-delete",
                      "--test-clock")


def assert_error(status, hdrs, body, http, code, field=None):
    """The error envelope of docs/errors.md, with the exact status, code and
    (when given) details.field; the request id of the body is the header's."""
    assert status == http, (status, body)
    assert isinstance(body, dict) and set(body) >= {"error", "request_id"}, body
    err = body["error"]
    assert err["code"] == code, body
    assert isinstance(err["message"], str) and err["message"], body
    assert isinstance(err["retryable"], bool), body
    assert isinstance(err["details"], dict), body
    assert body["request_id"] and body["request_id"] == hdrs["x-request-id"], body
    if field is not None:
        assert err["details"].get("field") == field, body
    return err


def kseg(value):
    """One key segment of a path, percent-encoded ('/' too)."""
    return urllib.parse.quote(str(value), safe="")


def item_path(model, *key):
    return "/v1/models/%s/items/%s" % (model, "/".join(kseg(k) for k in key))


def parse_time(text):
    """An RFC3339Nano UTC time -> (datetime to the microsecond, nanoseconds)."""
    assert RFC3339NANO.fullmatch(text), text
    main, _, frac = text[:-1].partition(".")
    dt = datetime.datetime.strptime(main, "%Y-%m-%dT%H:%M:%S").replace(
        tzinfo=datetime.timezone.utc)
    return dt, int((frac + "000000000")[:9])


def time_key(text):
    dt, ns = parse_time(text)
    return (int(dt.timestamp()), ns)


def assert_now(d, text):
    """`text` (RFC3339Nano) is the time of `d`'s test clock, exactly."""
    now_s, now_ns = d.clock()
    assert time_key(text) == (now_s, now_ns % 10**9), (text, now_ns)


def exact_json(data):
    """Parses a body keeping every number as its text, so that digits a
    double would lose stay visible."""
    return json.loads(data, parse_int=str, parse_float=str)


def b64(data):
    return base64.b64encode(data).decode()


def b64url(data):
    return base64.urlsafe_b64encode(data).decode()


def decode_cursor(cursor):
    """The DMS cursor: base64url (padded) of JSON with sorted keys."""
    raw = base64.urlsafe_b64decode(cursor.encode())
    return raw, json.loads(raw)
