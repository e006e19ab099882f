# SPDX-License-Identifier: Apache-2.0
"""Partner accounts (TableTheory's NewMultiAccount): the config
file's "partners" map, the X-TableTheory-Partner header that runs a request's
backend calls with STS AssumeRole credentials of the partner's role (session
theorydb-<partner>), UnknownPartner before any I/O, exit 2 on a bad entry,
and no secret in the log.

On moto the partners really are other accounts: moto files the credentials
AssumeRole returns under the role ARN's account, so a table created through
one partner does not exist for another -- which fails unless the daemon
signed with the assumed credentials. dynalite has no STS (it skips the
AssumeRole tests); on the memory backend every partner shares the one
in-memory account (docs/configuration.md), which a test asserts."""
import concurrent.futures
import json
import os
import subprocess
import uuid

import pytest

from daemon import DAEMON, PEER, PEER_ENDPOINT, Daemon
from items_fixtures import assert_error, item_path

ACME_ROLE = "arn:aws:iam::111111111111:role/tabletheory-acme"
BETA_ROLE = "arn:aws:iam::222222222222:role/tabletheory-beta"
EXTERNAL_ID = "ext-id-" + uuid.uuid4().hex  # must never reach the log
NEEDS_STS = pytest.mark.skipif(PEER != "moto", reason="needs STS AssumeRole (moto only)")


def config(tmp_path, partners):
    path = tmp_path / "partners.json"
    path.write_text(json.dumps({"partners": partners}))
    return str(path)


def two_partners(tmp_path):
    return config(tmp_path, {
        "acme": {"role_arn": ACME_ROLE, "external_id": EXTERNAL_ID, "region": "us-east-1"},
        "beta": {"role_arn": BETA_ROLE, "session_duration_seconds": 900},
    })


def start(fresh_daemon, tmp_path):
    args = ["--config", two_partners(tmp_path)]
    if PEER == "moto":
        args += ["--sts-endpoint", PEER_ENDPOINT]  # moto serves STS on the same port
    return fresh_daemon(*args)


def model(name):
    return {"dms_version": "0.2", "namespace": "tabletheoryd.itest.partners", "name": name,
            "table": {"name": "partners_" + name.lower()},
            "keys": {"partition": {"attribute": "id", "type": "S"}},
            "attributes": [{"attribute": "id", "type": "S", "required": True, "roles": ["pk"]},
                           {"attribute": "v", "type": "S", "optional": True}]}


def as_partner(partner):
    return {"X-TableTheory-Partner": partner} if partner else {}


def register(d, name, partners):
    """The model (one registry for all) and its table in each partner's account."""
    status, _, body = d.json("PUT", "/v1/models/" + name, body=model(name))
    assert status in (200, 201), body
    for p in partners:
        status, _, body = d.json("PUT", "/v1/models/%s/table" % name, headers=as_partner(p))
        assert status in (200, 201), (p, body)


def backend_calls(d):
    status, _, data = d.request("GET", "/metrics")
    assert status == 200
    total = 0.0
    for line in data.decode().splitlines():
        if line.startswith("tabletheoryd_backend_calls_total{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def assumed_lines(d, partner):
    return [line for line in d.log_lines() if line.get("event") == "credentials"
            and "session theorydb-%s," % partner in line.get("message", "")]


@NEEDS_STS
def test_each_partner_reads_and_writes_its_own_account(fresh_daemon, tmp_path):
    d = start(fresh_daemon, tmp_path)
    name = "Acct" + uuid.uuid4().hex[:8]
    register(d, name, ["acme", "beta"])
    for p in ("acme", "beta"):
        status, _, body = d.json("POST", "/v1/models/%s/items" % name,
                                 body={"id": "same-key", "v": "written by " + p},
                                 headers=as_partner(p))
        assert status == 201, (p, body)
    for p in ("acme", "beta"):
        status, _, body = d.json("GET", item_path(name, "same-key"), headers=as_partner(p))
        assert status == 200 and body["v"] == "written by " + p, (p, body)
    # The default account never got the table: the partners' calls were
    # signed with their own credentials, not the daemon's.
    status, _, body = d.json("GET", item_path(name, "same-key"))
    assert status == 404, body
    # One AssumeRole per partner, cached for every later call.
    for p in ("acme", "beta"):
        lines = assumed_lines(d, p)
        assert len(lines) == 1, d.log_text()
        assert lines[0]["message"].startswith("credentials: partner %s: assumed arn:aws:iam::" % p)
    assert '"partner":"acme"' in d.log_text()


@NEEDS_STS
def test_concurrent_requests_share_one_assume_role(fresh_daemon, tmp_path):
    d = start(fresh_daemon, tmp_path)
    name = "Conc" + uuid.uuid4().hex[:8]
    status, _, body = d.json("PUT", "/v1/models/" + name, body=model(name))
    assert status in (200, 201), body

    def get(_):
        return d.json("GET", item_path(name, "k"), headers=as_partner("acme"))[0]

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(get, range(8)))
    assert all(s == 404 for s in statuses), statuses  # no table in acme's account yet
    assert len(assumed_lines(d, "acme")) == 1, d.log_text()
    d.wait_metric("tabletheoryd_inflight_operations", 0)


@NEEDS_STS
def test_log_carries_no_secret(fresh_daemon, tmp_path):
    d = start(fresh_daemon, tmp_path)
    name = "Sec" + uuid.uuid4().hex[:8]
    register(d, name, ["acme"])
    status, _, body = d.json("POST", "/v1/models/%s/items" % name, body={"id": "a"},
                             headers=as_partner("acme"))
    assert status == 201, body
    d.stop()
    text = d.log_text()
    assert assumed_lines(d, "acme"), text
    assert EXTERNAL_ID not in text
    # moto's session tokens start like AWS's; secrets are 40 characters.
    assert "FQoGZXIvYXdzE" not in text and "SessionToken" not in text
    assert "SecretAccessKey" not in text and "ASIA" not in text


def test_unknown_partner_is_refused_before_any_io(fresh_daemon, tmp_path):
    d = start(fresh_daemon, tmp_path)
    name = "Unk" + uuid.uuid4().hex[:8]
    status, _, body = d.json("PUT", "/v1/models/" + name, body=model(name))
    assert status in (200, 201), body
    before = backend_calls(d)
    for path, method, payload in ((item_path(name, "a"), "GET", None),
                                  ("/v1/models/%s/items" % name, "POST", {"id": "a"}),
                                  ("/v1/models/%s/table" % name, "PUT", None)):
        status, hdrs, body = d.json(method, path, body=payload,
                                    headers=as_partner("nobody"))
        err = assert_error(status, hdrs, body, 400, "UnknownPartner", "X-TableTheory-Partner")
        assert "nobody" not in err["message"]
        assert err["retryable"] is False
    assert backend_calls(d) == before
    assert_no_assume_role(d)


def assert_no_assume_role(d):
    assert not [line for line in d.log_lines() if "theorydb-" in line.get("message", "")]


def test_partner_header_without_partners_is_refused(fresh_daemon):
    d = fresh_daemon()
    status, hdrs, body = d.json("GET", "/v1/models", headers=as_partner("acme"))
    err = assert_error(status, hdrs, body, 400, "UnknownPartner", "X-TableTheory-Partner")
    assert "no partner accounts are configured" in err["message"]


@pytest.mark.skipif(bool(PEER), reason="the memory backend's documented behaviour")
def test_memory_backend_partners_share_its_one_account(fresh_daemon, tmp_path):
    d = start(fresh_daemon, tmp_path)
    assert d.wait_log(lambda line: line.get("event") == "daemon.partners_shared")
    name = "Mem" + uuid.uuid4().hex[:8]
    register(d, name, ["acme"])
    status, _, body = d.json("POST", "/v1/models/%s/items" % name, body={"id": "a", "v": "x"},
                             headers=as_partner("acme"))
    assert status == 201, body
    for p in ("beta", None):
        status, _, body = d.json("GET", item_path(name, "a"), headers=as_partner(p))
        assert status == 200 and body["v"] == "x", body


def run(*args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLETHEORYD_")}
    return subprocess.run([DAEMON, *args], capture_output=True, text=True, env=env, timeout=10)


@pytest.mark.parametrize("partners,field", [
    ({"acme": {}}, "partners.acme.role_arn"),
    ({"acme": {"role_arn": "not-an-arn"}}, "partners.acme.role_arn"),
    ({"acme": {"role_arn": ACME_ROLE, "session_duration_seconds": 60}},
     "partners.acme.session_duration_seconds"),
    ({"acme": {"role_arn": ACME_ROLE, "region": "Mars 1"}}, "partners.acme.region"),
    ({"acme": {"role_arn": ACME_ROLE, "external_id": "x"}}, "partners.acme.external_id"),
    ({"acme": {"role_arn": ACME_ROLE, "rolearn": ACME_ROLE}}, "partners.acme"),
    ({"acme": "arn"}, "partners.acme"),
    ({"bad id!": {"role_arn": ACME_ROLE}}, "partners"),
    ({"x" * 56: {"role_arn": ACME_ROLE}}, "partners"),
])
def test_bad_partner_entry_stops_the_start_with_exit_2(tmp_path, partners, field):
    r = run("--config", config(tmp_path, partners), "--check-config")
    assert r.returncode == 2, (partners, r.stdout, r.stderr)
    # The message names the partner and the field, never an external id.
    name = field.split(".")[1] if field.count(".") else None
    if name:
        assert 'partner "%s"' % name in r.stderr, r.stderr
        last = field.split(".")[-1]
        if last != name:
            assert last in r.stderr, r.stderr


def test_good_partners_pass_check_config(tmp_path):
    r = run("--config", two_partners(tmp_path), "--check-config")
    assert r.returncode == 0, r.stderr
    assert EXTERNAL_ID not in r.stdout + r.stderr


class FakeSts:
    """A local STS that answers every AssumeRole with `status` and an
    ErrorResponse of `code`, counting the calls."""

    def __init__(self, status, code):
        import http.server
        import threading
        fake = self
        self.calls = 0
        self.status, self.code = status, code

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                fake.calls += 1
                body = ("<ErrorResponse><Error><Type>Sender</Type><Code>%s</Code>"
                        "<Message>not allowed</Message></Error></ErrorResponse>"
                        % fake.code).encode()
                self.send_response(fake.status)
                self.send_header("Content-Type", "text/xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_sts():
    made = []

    def make(status, code):
        s = FakeSts(status, code)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


def start_with_sts(fresh_daemon, tmp_path, sts):
    # The dynamodb backend at an endpoint nobody serves: the credentials
    # fail before any DynamoDB call would be made.
    return fresh_daemon("--config", config(tmp_path, {"acme": {"role_arn": ACME_ROLE}}),
                        "--backend", "dynamodb", "--endpoint", "http://127.0.0.1:1",
                        "--region", "us-east-1", "--sts-endpoint", sts.url,
                        env={"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                             "AWS_EC2_METADATA_DISABLED": "true"})


@pytest.mark.skipif(bool(PEER), reason="runs its own daemon and STS; once is enough")
def test_assume_role_refusal_is_explained_and_not_retried(fresh_daemon, tmp_path, fake_sts):
    sts = fake_sts(403, "AccessDenied")
    d = start_with_sts(fresh_daemon, tmp_path, sts)
    name = "Deny" + uuid.uuid4().hex[:8]
    status, _, body = d.json("PUT", "/v1/models/" + name, body=model(name))
    assert status in (200, 201), body
    for _ in range(10):
        status, hdrs, body = d.json("GET", item_path(name, "a"), headers=as_partner("acme"))
        err = assert_error(status, hdrs, body, 403, "Forbidden")
        assert err["retryable"] is False, body
        assert "partner acme" in err["message"] and "AccessDenied" in err["message"], body
    # Ten requests, not ten AssumeRole calls: the refusal is answered again
    # during a back-off of 1 s doubling to 60 s (at most one call per
    # doubling however slow this machine is), and logged once.
    assert 1 <= sts.calls <= 4, sts.calls
    warned = [line for line in d.log_lines() if line.get("event") == "credentials"
              and "(AccessDenied)" in line.get("message", "")]
    assert len(warned) == 1, d.log_text()


@pytest.mark.skipif(bool(PEER), reason="runs its own daemon and STS; once is enough")
def test_assume_role_outage_is_retryable(fresh_daemon, tmp_path, fake_sts):
    sts = fake_sts(503, "ServiceUnavailable")
    d = start_with_sts(fresh_daemon, tmp_path, sts)
    name = "Down" + uuid.uuid4().hex[:8]
    status, _, body = d.json("PUT", "/v1/models/" + name, body=model(name))
    assert status in (200, 201), body
    status, hdrs, body = d.json("GET", item_path(name, "a"), headers=as_partner("acme"))
    err = assert_error(status, hdrs, body, 503, "BackendUnavailable")
    assert err["retryable"] is True, body
    assert "partner acme" in err["message"] and "ServiceUnavailable" in err["message"], body
