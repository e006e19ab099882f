# SPDX-License-Identifier: Apache-2.0
"""--test-clock: a frozen clock for tests, moved only by POST /v1/_test/clock.
It is a flag only (no environment variable, no config file key), refused with
a non-loopback listen address, and its routes exist only with the flag."""
import json
import subprocess

import pytest

from daemon import DAEMON, free_port, served
from items_fixtures import assert_error, time_key


@pytest.fixture(scope="module")
def clocked():
    yield from served("--test-clock")


def test_the_clock_is_frozen_and_moves_forward_only_when_asked(clocked):
    now_s, now_ns = clocked.clock()
    assert now_ns % 10**9 == 123456789 and now_s == now_ns // 10**9
    assert clocked.clock() == (now_s, now_ns)  # frozen
    assert clocked.advance_clock(2500) == (now_s + 2, now_ns + 2500 * 10**6)
    assert clocked.advance_clock(0) == (now_s + 2, now_ns + 2500 * 10**6)
    assert clocked.clock() == (now_s + 2, now_ns + 2500 * 10**6)


def test_item_timestamps_come_from_the_clock(clocked):
    now_s, now_ns = clocked.advance_clock(1)
    status, _, job = clocked.json("POST", "/v1/jobs", body={"tenant_id": "t-clock",
                                                           "ttl_seconds": 60})
    assert status == 201, job
    assert time_key(job["created_at"]) == (now_s, now_ns % 10**9)
    assert job["ttl"] == now_s + 60


@pytest.mark.parametrize("body,field", [
    ({}, "advance_ms"),
    ({"advance_ms": -1}, "advance_ms"),
    ({"advance_ms": 1.5}, "advance_ms"),
    ({"advance_ms": "10"}, "advance_ms"),
    ({"advance_ms": 315360000001}, "advance_ms"),
    ({"advance_ms": 1, "set_ms": 0}, "set_ms"),
])
def test_bad_moves_are_refused(clocked, body, field):
    before = clocked.clock()
    status, hdrs, got = clocked.json("POST", "/v1/_test/clock", body=body)
    assert_error(status, hdrs, got, 400, "ValidationError", field)
    assert clocked.clock() == before


def test_without_the_flag_there_is_no_clock_route(fresh_daemon):
    for args, env in ((("--enable-fault-injection",), None),
                      ((), {"TABLETHEORYD_TEST_CLOCK": "true"})):
        d = fresh_daemon(*args, env=env)
        for method in ("GET", "POST"):
            status, hdrs, body = d.json(method, "/v1/_test/clock",
                                        body={"advance_ms": 1} if method == "POST" else None)
            assert_error(status, hdrs, body, 404, "RouteNotFound")


def test_the_config_file_cannot_turn_it_on(tmp_path):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"test-clock": True}))
    p = subprocess.run([DAEMON, "--config", str(cfg), "--check-config"], capture_output=True,
                       timeout=10)
    assert p.returncode == 2, p
    assert b"test-clock: unknown setting" in p.stderr


def test_refused_with_a_network_listen_address():
    p = subprocess.run([DAEMON, "--test-clock", "--listen", "0.0.0.0:%d" % free_port(),
                        "--allow-unauthenticated-network"], capture_output=True, timeout=10)
    assert p.returncode == 2, p
    assert b"--test-clock is for tests" in p.stderr
