# SPDX-License-Identifier: Apache-2.0
"""Hostile inputs: select lists of the wrong shape, texts whose cut
would split a UTF-8 character, NUL and control characters in query strings
and path parameters, literal routes shadowed by parameters, the bearer
scheme, the token file and a network --listen without a token."""
import json
import os
import re
import subprocess

import pytest

from daemon import DAEMON, Daemon
from items_fixtures import mdaemon  # noqa: F401

A119 = "a" * 119


def strict(status_hdrs_data):
    """(status, headers, body) with the body decoded as strict UTF-8 JSON."""
    status, hdrs, data = status_hdrs_data
    return status, hdrs, json.loads(data.decode("utf-8"))


def assert_envelope(status, hdrs, body, http, code):
    assert status == http, (status, body)
    assert body["error"]["code"] == code, body
    assert body["request_id"] and body["request_id"] == hdrs["x-request-id"], body
    return body["error"]


def backend_calls(d):
    """Every backend call so far, whatever its operation or outcome."""
    status, _, data = d.request("GET", "/metrics")
    assert status == 200
    total = 0.0
    for line in data.decode().splitlines():
        m = re.match(r'^tabletheoryd_backend_calls_total(?:\{.*\})? (\S+)$', line)
        if m:
            total += float(m.group(1))
    return total


# ---- select lists -------------------------------------------------------------

@pytest.mark.parametrize("path,body,field", [
    ("/v1/models/Loose/batch-get", {"keys": [{"id": "a"}], "select": [True]}, "select"),
    ("/v1/models/Loose/batch-get", {"keys": [{"id": "a"}], "select": ["id", None]}, "select"),
    ("/v1/models/Loose/scan", {"select": [True]}, "select"),
    ("/v1/models/Loose/query", {"key": [{"attr": "id", "op": "=", "value": "a"}],
                                "select": [{"a": 1}]}, "select"),
    ("/v1/transactions/get", {"items": [{"model": "Loose", "key": {"id": "a"},
                                         "select": [7]}]}, "items[0].select"),
])
def test_select_of_non_strings_is_400_on_models_with_additional_attributes(mdaemon, path,  # noqa: F811
                                                                           body, field):
    before = backend_calls(mdaemon)
    status, hdrs, got = strict(mdaemon.request("POST", path, body=body))
    err = assert_envelope(status, hdrs, got, 400, "ValidationError")
    assert err["details"]["field"].startswith(field), got
    assert backend_calls(mdaemon) == before
    # The daemon is still there.
    assert mdaemon.request("GET", "/healthz")[0] == 200


# ---- UTF-8 in error bodies ------------------------------------------------------

@pytest.mark.parametrize("path,body", [
    ("/v1/models/Counter/scan", {"select": [A119 + "\u00e9"]}),
    ("/v1/models/Counter/batch-get", {"keys": [{"n": 1}], "select": [A119 + "\u00e9"]}),
    ("/v1/models/Counter/scan", {"select": ["b" * 118 + "\u20ac"]}),
    ("/v1/models/Counter/items", {"n": 1, A119 + A119 + "\u00e9": 1}),
    ("/v1/models/Counter/items", {"n": 1, "c" * 126 + "\U0001f600": 1}),
    ("/v1/models/Counter/items", {"n": 1, "d" * 99 + "\u00e9": 1}),  # a 100-byte cut
])
def test_cut_texts_stay_utf8_with_request_id(mdaemon, path, body):  # noqa: F811
    status, hdrs, got = strict(mdaemon.request("POST", path, body=body))
    err = assert_envelope(status, hdrs, got, 400, "ValidationError")
    field = err["details"]["field"]
    # Cut on a character boundary: no replacement characters, a prefix of
    # what the client named.
    assert "?" not in field and "\ufffd" not in field, got
    assert len(field.encode()) <= 127, got
    assert "?" not in err["message"], got


def test_model_messages_cut_names_on_characters(mdaemon):  # noqa: F811
    """DMS messages cut a quoted name to 64 bytes: never half an é."""
    model = {"name": "Cut", "table": {"name": "cut_itest"},
             "keys": {"partition": {"attribute": "id", "type": "S"}},
             "attributes": [{"attribute": "id", "type": "S", "required": True, "roles": ["pk"],
                             "x" * 63 + "\u00e9": 1}]}
    status, hdrs, got = strict(mdaemon.request("PUT", "/v1/models/Cut", body=model))
    err = assert_envelope(status, hdrs, got, 400, "ValidationError")
    assert 'unknown field "' + "x" * 63 + '"' in err["message"], got


# ---- NUL and control characters in query strings and path parameters ---------

@pytest.mark.parametrize("method,path", [
    ("DELETE", "/v1/jobs/j1/lease?owner=mallory%00junk"),
    ("DELETE", "/v1/jobs/j1/lease?owner=%00"),
    ("POST", "/v1/jobs/j1/lease?owner=ok&x=%01"),
    ("GET", "/v1/jobs?status=queued%0Ajunk"),
    ("GET", "/v1/jobs?tenant_id=t%7F"),
    ("GET", "/v1/jobs?tenant_id=t%C3"),  # half a character
    ("GET", "/v1/models/Loose/items/a?select=id%00junk"),
    ("GET", "/v1/models/Loose/items/a?se%00lect=id"),
    ("GET", "/v1/jobs/j1%00junk"),
    ("GET", "/v1/jobs/j1%09"),
    ("GET", "/v1/models/Loose%00junk"),
    ("POST", "/v1/models/Lo%1Bose/scan"),
])
def test_nul_and_control_characters_are_400_before_io(mdaemon, method, path):  # noqa: F811
    before = backend_calls(mdaemon)
    status, hdrs, got = strict(mdaemon.request(method, path, body={} if method == "POST"
                                               else None))
    assert_envelope(status, hdrs, got, 400, "ValidationError")
    assert backend_calls(mdaemon) == before


def test_clean_query_values_still_work(mdaemon):  # noqa: F811
    status, _, body = mdaemon.json("POST", "/v1/models/Loose/items",
                                   body={"id": "q1", "label": "x y"})
    assert status == 201, body
    status, _, body = mdaemon.json("GET", "/v1/models/Loose/items/q1?select=label%2Cid")
    assert status == 200 and body == {"id": "q1", "label": "x y"}, body


# ---- literal route segments win over parameters ---------------------------------

@pytest.mark.parametrize("method", ["GET", "HEAD", "POST", "PATCH"])
def test_jobs_table_is_not_a_job_id(mdaemon, method):  # noqa: F811
    status, hdrs, data = mdaemon.request(method, "/v1/jobs/table",
                                         body="{}" if method in ("POST", "PATCH") else None,
                                         headers={"Content-Type": "application/json"})
    assert status == 405, (status, data)
    assert hdrs["allow"] == "PUT, DELETE", hdrs
    if method != "HEAD":
        assert json.loads(data)["error"]["code"] == "MethodNotAllowed"


# ---- the bearer token -------------------------------------------------------------

def token_file(tmp_path, data):
    f = tmp_path / "token"
    f.write_bytes(data)
    return str(f)


def test_bearer_scheme_is_case_insensitive(fresh_daemon, tmp_path):
    token = "k" * 24
    d = fresh_daemon("--auth-token-file", token_file(tmp_path, (token + "\t\n").encode()))
    for scheme in ("Bearer ", "bearer ", "BEARER ", "bEaReR   "):
        status, _, body = d.json("GET", "/v1/models", headers={"Authorization": scheme + token})
        assert status == 200, (scheme, body)
    for value in ("Bearer ", "Bearer", "Basic " + token, "Bearer " + token[:16],
                  "Bearer " + token + "\t"):
        assert d.json("GET", "/v1/models", headers={"Authorization": value})[0] == 401, value


def refused_start(*args, env=None):
    """Runs the daemon expecting it to refuse to start; returns stderr."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("TABLETHEORYD_")}
    full_env.update(env or {})
    p = subprocess.run([DAEMON] + list(args), env=full_env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=20)
    assert p.returncode == 2, p.stderr
    return p.stderr.decode("utf-8", "replace")


@pytest.mark.parametrize("data,says", [
    (b"\0" + b"t" * 32, "control byte (0x00) at offset 0"),
    (b"abc\0" + b"t" * 32, "control byte (0x00) at offset 3"),
    (b"t" * 20 + b"\x1b" + b"t" * 20, "control byte (0x1b)"),
    (b"t" * 20 + b"\n" + b"second line\n", "control byte (0x0a)"),
    (b"t" * 1024, "longer than 1023 bytes"),
    (b"t" * 15 + b" \t\r\n", "at least 16 characters"),
])
def test_bad_token_files_refuse_to_start(tmp_path, data, says):
    err = refused_start("--listen", "127.0.0.1:0", "--auth-token-file",
                        token_file(tmp_path, data))
    assert "auth-token-file" in err and says in err, err
    assert "tttttttttt" not in err  # the token is never quoted


# ---- a network --listen needs a token or an explicit flag --------------------------

@pytest.mark.parametrize("listen", ["0.0.0.0:0", "[::]:0"])
def test_network_listen_without_token_refuses_to_start(listen):
    err = refused_start("--listen", listen)
    assert "--allow-unauthenticated-network" in err and "auth-token-file" in err, err
    err = refused_start(env={"TABLETHEORYD_LISTEN": listen})
    assert "reachable from the network" in err, err


def test_network_listen_with_token_or_flag_starts(fresh_daemon, tmp_path):
    d = fresh_daemon("--allow-unauthenticated-network", listen="0.0.0.0:0")
    assert d.request("GET", "/healthz")[0] == 200
    d.stop()
    d = Daemon(listen="0.0.0.0:0", env={"TABLETHEORYD_ALLOW_UNAUTHENTICATED_NETWORK": "1"})
    try:
        assert d.request("GET", "/healthz")[0] == 200
        d.stop()
    finally:
        d.kill()
    token = "n" * 20
    d = fresh_daemon("--auth-token-file", token_file(tmp_path, token.encode()),
                     listen="0.0.0.0:0")
    assert d.json("GET", "/v1/models")[0] == 401
    assert d.json("GET", "/v1/models", headers={"Authorization": "Bearer " + token})[0] == 200


def test_socket_activation_on_the_network_is_judged_too():
    """A socket systemd passes is checked once adopted (--listen is ignored)."""
    import socket
    lsock = socket.socket()
    lsock.bind(("0.0.0.0", 0))
    lsock.listen(4)
    fd = lsock.fileno()
    wrapper = ["sh", "-c", 'LISTEN_PID=$$ LISTEN_FDS=1 exec "$@"', "sh"]
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("TABLETHEORYD_")}
    try:
        p = subprocess.run(wrapper + [DAEMON], env=full_env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, pass_fds=(3,), timeout=20,
                           preexec_fn=lambda: os.dup2(fd, 3))
        assert p.returncode == 2, p.stderr
        assert b"reachable from the network" in p.stderr, p.stderr
        d = Daemon("--allow-unauthenticated-network", listen=None, pass_fds=(3,),
                   wrapper=wrapper, preexec_fn=lambda: os.dup2(fd, 3), fresh=False)
        try:
            assert d.address.startswith("0.0.0.0:")
            d.stop()
        finally:
            d.kill()
    finally:
        lsock.close()
