# SPDX-License-Identifier: Apache-2.0
"""Encrypted attributes (DMS `encryption: {v: 1}`), TableTheory's envelope:

- without --kms-key-id every read and write of a model with an encrypted
  attribute is 501 EncryptionNotConfigured, before any I/O (fail closed);
- with a key (moto's KMS), values round-trip through create, put, get,
  update, query, scan, batch and transactions, and what is stored is the
  envelope {v: N 1, edk: B, nonce: B, ct: B}, which this test decrypts on
  its own (KMS Decrypt + AES-256-GCM with the attribute's AAD);
- keys, conditions, filters, add/append and nested paths on an encrypted
  attribute are 400 EncryptedFieldNotQueryable before any KMS call;
- a KMS failure is an error and nothing is written;
- no plaintext reaches the log;
- a model with unique attributes (guard items moved in a transaction with
  the item) seals its encrypted attributes on that path too, and an
  encrypted attribute cannot itself be unique (the model does not load).

KMS is moto's: the suite's peer when it runs on moto, else a moto started
here (tests/peers/start_peer.sh). Models of models/encrypted.yml."""
import base64
import datetime
import hashlib
import hmac
import json
import os
import subprocess
import urllib.parse
import urllib.request

import pytest

from daemon import DAEMON, PEER, PEER_ENDPOINT, SRCDIR, Daemon, broken_model, served
from items_fixtures import MY_MODELS, assert_error, item_path

PEERS = os.path.join(SRCDIR, "tests", "peers")
ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
       "AWS_EC2_METADATA_DISABLED": "true", "AWS_REGION": "us-east-1"}
SENTINEL = "SENTINEL-plaintext-7f3a"

no_txn_on_dynalite = pytest.mark.skipif(
    PEER == "dynalite", reason="dynalite does not implement TransactWriteItems or "
                               "TransactGetItems; these run on moto and memory")

# Every write of a model with unique attributes is a TransactWriteItems with
# its guard items (docs/batch.md), single-item writes too.
unique_path_needs_txn = pytest.mark.skipif(
    PEER == "dynalite", reason="writes of a model with unique attributes run as "
                               "TransactWriteItems (guard items), which dynalite does not "
                               "implement; these run on moto and memory")

_seq = iter(range(1, 1 << 30))


def uid(prefix="e"):
    return "%s-%d-%d" % (prefix, os.getpid(), next(_seq))


def kms_call(endpoint, op, body):
    """One signed KMS call (SigV4, service kms), independent of the daemon."""
    host = urllib.parse.urlparse(endpoint).netloc
    data = json.dumps(body).encode()
    now = datetime.datetime.now(datetime.timezone.utc)
    amz, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    target, ctype = "TrentService." + op, "application/x-amz-json-1.1"
    canon = "content-type:%s\nhost:%s\nx-amz-date:%s\nx-amz-target:%s\n" % (ctype, host, amz,
                                                                            target)
    signed = "content-type;host;x-amz-date;x-amz-target"
    creq = "\n".join(["POST", "/", "", canon, signed, hashlib.sha256(data).hexdigest()])
    scope = "%s/us-east-1/kms/aws4_request" % day
    sts = "\n".join(["AWS4-HMAC-SHA256", amz, scope, hashlib.sha256(creq.encode()).hexdigest()])
    k = b"AWS4testing"
    for part in (day, "us-east-1", "kms", "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    req = urllib.request.Request(endpoint.rstrip("/") + "/", data=data, method="POST", headers={
        "Content-Type": ctype, "X-Amz-Date": amz, "X-Amz-Target": target,
        "Authorization": "AWS4-HMAC-SHA256 Credential=testing/%s, SignedHeaders=%s, Signature=%s"
                         % (scope, signed, sig)})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


@pytest.fixture(scope="module")
def kms():
    """A KMS endpoint (moto) and a fresh symmetric key's ARN."""
    proc_pid = None
    endpoint = PEER_ENDPOINT if PEER == "moto" else None
    if endpoint is None:
        out = subprocess.run(["bash", os.path.join(PEERS, "start_peer.sh"), "moto"],
                             capture_output=True, text=True, timeout=600)
        if out.returncode != 0:
            pytest.skip("moto (KMS) could not be started: %s" % out.stderr[-300:])
        vals = dict(line.split("=", 1) for line in out.stdout.split() if "=" in line)
        endpoint, proc_pid = vals["ENDPOINT"], vals["PID"]
    key = kms_call(endpoint, "CreateKey", {"KeySpec": "SYMMETRIC_DEFAULT",
                                           "KeyUsage": "ENCRYPT_DECRYPT"})["KeyMetadata"]["Arn"]
    yield endpoint, key
    if proc_pid:
        subprocess.run(["bash", os.path.join(PEERS, "stop_peer.sh"), proc_pid], timeout=60)


def start_args(kms_endpoint=None, key=None, extra=()):
    args = ["--models", MY_MODELS] + list(extra)
    if key:
        args += ["--kms-key-id", key, "--kms-endpoint", kms_endpoint]
    return args


def start(kms_endpoint=None, key=None, extra=()):
    return Daemon(*start_args(kms_endpoint, key, extra), env=ENV)


@pytest.fixture(scope="module")
def sd(kms):
    """A daemon with a KMS key, on the suite's backend."""
    yield from served(*start_args(*kms), env=ENV)


def kms_calls(d, op):
    _, _, data = d.request("GET", "/metrics")
    total = 0.0
    for line in data.decode().splitlines():
        if line.startswith("tabletheoryd_backend_calls_total{") and 'op="%s"' % op in line:
            total += float(line.split()[-1])
    return total


def raw(d, *key):
    """The stored item in DynamoDB's shape (?format=dynamodb)."""
    status, _, body = d.json("GET", item_path("Sealed", *key) + "?format=dynamodb&consistent=true")
    assert status == 200, body
    return body


def decrypt_independently(endpoint, attr, env):
    """KMS Decrypt of the edk, then AES-256-GCM with TableTheory's AAD."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    m = env["M"]
    assert m["v"] == {"N": "1"}
    assert set(m) == {"v", "edk", "nonce", "ct"}
    nonce = base64.b64decode(m["nonce"]["B"])
    assert len(nonce) == 12
    key = base64.b64decode(kms_call(endpoint, "Decrypt",
                                    {"CiphertextBlob": m["edk"]["B"]})["Plaintext"])
    assert len(key) == 32
    aad = ("theorydb:encrypted:v1|attr=%s" % attr).encode()
    return json.loads(AESGCM(key).decrypt(nonce, base64.b64decode(m["ct"]["B"]), aad))


# ---- fail closed -----------------------------------------------------------------------------


def test_fail_closed_without_a_key(fresh_daemon):
    d = fresh_daemon("--models", MY_MODELS)
    i = uid()
    calls = [
        ("POST", "/v1/models/Sealed/items", {"id": i, "secret": SENTINEL}),
        ("PUT", item_path("Sealed", i), {"id": i, "secret": SENTINEL}),
        ("GET", item_path("Sealed", i), None),
        ("PATCH", item_path("Sealed", i), {"set": {"note": "n"}}),
        ("POST", "/v1/models/Sealed/query", {"key": [{"attr": "id", "op": "=", "value": i}]}),
        ("POST", "/v1/models/Sealed/scan", {}),
        ("POST", "/v1/models/Sealed/batch-get", {"keys": [{"id": i}]}),
        ("POST", "/v1/models/Sealed/batch-write", {"put": [{"id": i, "secret": SENTINEL}]}),
    ]
    if PEER != "dynalite":
        calls.append(("POST", "/v1/transactions/write",
                      {"items": [{"op": "create", "model": "Sealed",
                                  "item": {"id": i, "secret": SENTINEL}}]}))
    for method, path, body in calls:
        status, hdrs, out = d.json(method, path, body)
        assert_error(status, hdrs, out, 501, "EncryptionNotConfigured")
    # Nothing was written: the same table through the model without encryption.
    status, _, _ = d.json("GET", item_path("SealedView", i))
    assert status == 404
    assert SENTINEL not in d.log_text()


def test_kms_key_needs_a_region():
    out = subprocess.run([DAEMON, "--check-config",
                          "--kms-key-id", "alias/x"], capture_output=True, text=True,
                         env=dict(os.environ, AWS_REGION="", AWS_DEFAULT_REGION=""))
    assert out.returncode == 2, out
    assert "kms-key-id" in out.stderr


# ---- round trips -------------------------------------------------------------------------------


def test_round_trip_and_envelope(sd, kms):
    endpoint, _ = kms
    i = uid()
    card = {"number": SENTINEL, "exp": 12, "tags": ["a", "b"], "ok": True, "none": None}
    before = kms_calls(sd, "GenerateDataKey")
    status, _, body = sd.json("POST", "/v1/models/Sealed/items",
                              {"id": i, "secret": SENTINEL, "card": card,
                               "codes": ["x", "y"], "note": "plain"})
    assert status == 201, body
    assert body["secret"] == SENTINEL and body["card"] == card
    # One GenerateDataKey per encrypted value written.
    assert kms_calls(sd, "GenerateDataKey") - before == 3
    before = kms_calls(sd, "Decrypt")
    status, _, body = sd.json("GET", item_path("Sealed", i) + "?consistent=true")
    assert status == 200, body
    assert body["secret"] == SENTINEL and body["card"] == card
    assert sorted(body["codes"]) == ["x", "y"] and body["note"] == "plain"
    assert kms_calls(sd, "Decrypt") - before == 3
    # What is stored is the envelope, and it decrypts without the daemon.
    stored = raw(sd, i)
    assert stored["note"] == {"S": "plain"}
    assert decrypt_independently(endpoint, "secret", stored["secret"]) == {"t": "S",
                                                                           "s": SENTINEL}
    plain = decrypt_independently(endpoint, "codes", stored["codes"])
    assert plain["t"] == "SS" and sorted(plain["ss"]) == ["x", "y"]
    c = decrypt_independently(endpoint, "card", stored["card"])
    assert c["t"] == "M" and c["m"]["number"] == {"t": "S", "s": SENTINEL}
    assert SENTINEL not in json.dumps(stored)
    # The AAD binds the attribute: another name does not authenticate.
    from cryptography.exceptions import InvalidTag
    with pytest.raises(InvalidTag):
        decrypt_independently(endpoint, "note", stored["secret"])
    # The view without encryption sees the envelope, not the value.
    status, _, view = sd.json("GET", item_path("SealedView", i) + "?consistent=true")
    assert status == 200 and set(view["secret"]) == {"v", "edk", "nonce", "ct"}


def test_put_and_update(sd, kms):
    i = uid()
    status, _, body = sd.json("PUT", item_path("Sealed", i), {"id": i, "secret": "one"})
    assert status == 201, body
    status, _, body = sd.json("PATCH", item_path("Sealed", i), {"set": {"secret": SENTINEL}})
    assert status == 200, body
    assert body["secret"] == SENTINEL
    status, _, body = sd.json("PATCH", item_path("Sealed", i),
                              {"fields": ["secret"], "item": {"secret": "two"}})
    assert status == 200 and body["secret"] == "two", body
    status, _, body = sd.json("PATCH", item_path("Sealed", i), {"remove": ["secret"]})
    assert status == 200 and "secret" not in body, body
    assert decrypt_independently(kms[0], "card", _sealed_card(sd, i)) == {"t": "M"}


def _sealed_card(d, i):
    status, _, _ = d.json("PATCH", item_path("Sealed", i), {"set": {"card": {}}})
    assert status == 200
    return raw(d, i)["card"]


def test_query_scan_and_batches(sd):
    ids = [uid("q") for _ in range(3)]
    status, _, body = sd.json("POST", "/v1/models/Sealed/batch-write",
                              {"put": [{"id": x, "secret": "s-" + x} for x in ids]})
    assert status == 200, body
    status, _, body = sd.json("POST", "/v1/models/Sealed/batch-get",
                              {"keys": [{"id": x} for x in ids], "consistent": True})
    assert status == 200, body
    assert sorted((it["id"], it["secret"]) for it in body["items"]) == sorted(
        (x, "s-" + x) for x in ids)
    status, _, body = sd.json("POST", "/v1/models/Sealed/query",
                              {"key": [{"attr": "id", "op": "=", "value": ids[0]}],
                               "consistent": True})
    assert status == 200, body
    assert [it["secret"] for it in body["items"]] == ["s-" + ids[0]]
    status, _, body = sd.json("POST", "/v1/models/Sealed/scan",
                              {"filter": {"attr": "id", "op": "begins_with", "value": "q-"},
                               "consistent": True, "segments": 2})
    assert status == 200, body
    got = {it["id"]: it.get("secret") for it in body["items"]}
    for x in ids:
        assert got[x] == "s-" + x


@no_txn_on_dynalite
def test_transactions(sd, kms):
    i, j = uid("t"), uid("t")
    status, _, body = sd.json("POST", "/v1/transactions/write", {"items": [
        {"op": "create", "model": "Sealed", "item": {"id": i, "secret": SENTINEL}},
        {"op": "put", "model": "Sealed", "item": {"id": j, "secret": "b"}}]})
    assert status == 200, body
    status, _, body = sd.json("POST", "/v1/transactions/write", {"items": [
        {"op": "update", "model": "Sealed", "key": {"id": j}, "set": {"secret": "c"}}]})
    assert status == 200, body
    status, _, body = sd.json("POST", "/v1/transactions/get", {"items": [
        {"model": "Sealed", "key": {"id": i}}, {"model": "Sealed", "key": {"id": j}}]})
    assert status == 200, body
    assert [it["secret"] for it in body["items"]] == [SENTINEL, "c"]
    assert decrypt_independently(kms[0], "secret", raw(sd, i)["secret"])["s"] == SENTINEL
    status, hdrs, body = sd.json("POST", "/v1/transactions/write", {"client_token": "t1", "items": [
        {"op": "put", "model": "Sealed", "item": {"id": i, "secret": "d"}}]})
    assert_error(status, hdrs, body, 400, "ValidationError", "client_token")


# ---- unique and encrypted attributes in one model -------------------------------------------

MEMBER = "/v1/models/SealedMember/items"


def member_raw(d, i):
    """A SealedMember item as stored (the view has no encryption)."""
    status, _, body = d.json("GET", item_path("SealedMemberView", i) + "?format=dynamodb"
                             "&consistent=true")
    return body if status == 200 else None


def member_guard(d, email):
    """The guard item of an email of SealedMember, or None."""
    return member_raw(d, "UNIQUE#SealedMember#email#" + email)


def test_unique_and_encrypted_fail_closed_without_a_key(fresh_daemon):
    d = fresh_daemon("--models", MY_MODELS)
    i, email = uid("m"), uid("e")
    calls = [
        ("POST", MEMBER, {"id": i, "email": email, "secret": SENTINEL}),
        ("PUT", item_path("SealedMember", i), {"id": i, "email": email, "secret": SENTINEL}),
        ("PATCH", item_path("SealedMember", i), {"set": {"email": email, "secret": SENTINEL}}),
        ("POST", "/v1/transactions/write",
         {"items": [{"op": "create", "model": "SealedMember",
                     "item": {"id": i, "email": email, "secret": SENTINEL}}]}),
    ]
    for method, path, body in calls:
        status, hdrs, out = d.json(method, path, body)
        assert_error(status, hdrs, out, 501, "EncryptionNotConfigured")
    assert member_raw(d, i) is None and member_guard(d, email) is None
    assert SENTINEL not in d.log_text()


def test_an_encrypted_attribute_cannot_be_unique(tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text(broken_model(
        '      - { attribute: "email", type: "S", optional: true, encryption: { v: 1 },\n'
        '          tags: { unique: true } }\n'))
    out = subprocess.run([DAEMON, "--listen", "127.0.0.1:0", "--models", str(bad)],
                         capture_output=True, text=True, timeout=20)
    assert out.returncode == 2, out
    assert ('model Broken: attribute "email": an encrypted attribute cannot be unique'
            in out.stderr), out.stderr


@unique_path_needs_txn
def test_unique_and_encrypted_single_item_writes(sd, kms):
    endpoint = kms[0]
    a, b = uid("m"), uid("m")
    ea, eb = uid("e") + "@example.com", uid("e") + "@example.com"
    card = {"number": SENTINEL, "exp": 12}
    before = kms_calls(sd, "GenerateDataKey")
    status, _, body = sd.json("POST", MEMBER, {"id": a, "email": ea, "secret": SENTINEL,
                                               "card": card, "note": "plain"})
    assert status == 201, body
    assert body["secret"] == SENTINEL and body["card"] == card and body["email"] == ea
    assert kms_calls(sd, "GenerateDataKey") - before == 2
    # Stored: envelopes for the encrypted attributes, the unique one plain,
    # and its guard owned by the item.
    stored = member_raw(sd, a)
    assert stored["email"] == {"S": ea} and stored["note"] == {"S": "plain"}
    assert decrypt_independently(endpoint, "secret", stored["secret"]) == {"t": "S",
                                                                           "s": SENTINEL}
    assert decrypt_independently(endpoint, "card", stored["card"])["m"]["number"] == {
        "t": "S", "s": SENTINEL}
    assert SENTINEL not in json.dumps(stored)
    assert member_guard(sd, ea)["_tt_owner"] == {"M": {"id": {"S": a}}}
    status, _, body = sd.json("GET", item_path("SealedMember", a) + "?consistent=true")
    assert status == 200 and body["secret"] == SENTINEL and body["card"] == card, body
    # A value another item holds: 409 naming the attribute, nothing written.
    status, hdrs, body = sd.json("POST", MEMBER, {"id": b, "email": ea, "secret": "b"})
    assert_error(status, hdrs, body, 409, "ConditionFailed", "email")
    assert member_raw(sd, b) is None
    status, _, body = sd.json("POST", MEMBER, {"id": b, "email": eb, "secret": "b"})
    assert status == 201, body
    # An update moving the unique value and setting an encrypted one.
    ea2 = uid("e") + "@example.com"
    status, _, body = sd.json("PATCH", item_path("SealedMember", a),
                              {"set": {"email": ea2, "secret": "two"}})
    assert status == 200, body
    assert body["email"] == ea2 and body["secret"] == "two" and body["card"] == card
    stored = member_raw(sd, a)
    assert decrypt_independently(endpoint, "secret", stored["secret"])["s"] == "two"
    assert member_guard(sd, ea) is None
    assert member_guard(sd, ea2)["_tt_owner"] == {"M": {"id": {"S": a}}}
    # The same to a taken value: 409, the encrypted value unchanged.
    status, hdrs, body = sd.json("PATCH", item_path("SealedMember", a),
                                 {"set": {"email": eb, "secret": "lost"}})
    assert_error(status, hdrs, body, 409, "ConditionFailed", "email")
    assert decrypt_independently(endpoint, "secret", member_raw(sd, a)["secret"])["s"] == "two"
    # The TableTheory update form, also with a version.
    status, _, body = sd.json("PATCH", item_path("SealedMember", a),
                              {"fields": ["email", "secret"],
                               "item": {"email": ea, "secret": "three"}})
    assert status == 200 and body["email"] == ea and body["secret"] == "three", body
    # A replace moves the guard and seals the new values.
    ea3 = uid("e") + "@example.com"
    status, _, body = sd.json("PUT", item_path("SealedMember", a),
                              {"id": a, "email": ea3, "secret": "four"})
    assert status == 200 and body["secret"] == "four" and "card" not in body, body
    stored = member_raw(sd, a)
    assert decrypt_independently(endpoint, "secret", stored["secret"])["s"] == "four"
    assert "card" not in stored
    assert member_guard(sd, ea) is None and member_guard(sd, ea3) is not None
    # A PUT that creates answers 201 with the plain values.
    c = uid("m")
    status, _, body = sd.json("PUT", item_path("SealedMember", c),
                              {"id": c, "email": uid("e"), "secret": SENTINEL})
    assert status == 201 and body["secret"] == SENTINEL, body
    assert set(member_raw(sd, c)["secret"]["M"]) == {"v", "edk", "nonce", "ct"}
    # Refusals before any KMS call, as on the plain path.
    before = (kms_calls(sd, "GenerateDataKey"), kms_calls(sd, "Decrypt"))
    for patch, field in [
            ({"set": {"email": uid("e")}, "condition": {"attr": "secret", "op": "exists"}},
             "condition"),
            ({"set": {"email": uid("e")}, "append": {"secret": ["x"]}}, "append.secret"),
            ({"set": {"email": uid("e"), "card.number": "1"}}, "set.card.number")]:
        status, hdrs, body = sd.json("PATCH", item_path("SealedMember", a), patch)
        assert_error(status, hdrs, body, 400, "EncryptedFieldNotQueryable", field)
    assert (kms_calls(sd, "GenerateDataKey"), kms_calls(sd, "Decrypt")) == before
    # Delete releases the guard.
    assert sd.json("DELETE", item_path("SealedMember", a))[0] == 204
    assert member_raw(sd, a) is None and member_guard(sd, ea3) is None
    assert SENTINEL not in sd.log_text()


@unique_path_needs_txn
def test_unique_and_encrypted_in_transactions(sd, kms):
    endpoint = kms[0]
    x, y, z = uid("m"), uid("m"), uid("m")
    ex, ey, ey2 = uid("e"), uid("e"), uid("e")
    assert sd.json("POST", MEMBER, {"id": y, "email": ey, "secret": "y1"})[0] == 201
    status, _, body = sd.json("POST", "/v1/transactions/write", {"items": [
        {"op": "create", "model": "SealedMember",
         "item": {"id": x, "email": ex, "secret": SENTINEL}},
        {"op": "update", "model": "SealedMember", "key": {"id": y},
         "set": {"email": ey2, "secret": "y2"}}]})
    assert status == 200, body
    sx, sy = member_raw(sd, x), member_raw(sd, y)
    assert decrypt_independently(endpoint, "secret", sx["secret"])["s"] == SENTINEL
    assert decrypt_independently(endpoint, "secret", sy["secret"])["s"] == "y2"
    assert sx["email"] == {"S": ex} and sy["email"] == {"S": ey2}
    assert member_guard(sd, ex)["_tt_owner"] == {"M": {"id": {"S": x}}}
    assert member_guard(sd, ey2)["_tt_owner"] == {"M": {"id": {"S": y}}}
    assert member_guard(sd, ey) is None
    status, _, body = sd.json("POST", "/v1/transactions/get", {"items": [
        {"model": "SealedMember", "key": {"id": x}}, {"model": "SealedMember", "key": {"id": y}}]})
    assert status == 200, body
    assert [it["secret"] for it in body["items"]] == [SENTINEL, "y2"]
    # A put in a transaction replaces, seals and moves the guard.
    ex2 = uid("e")
    status, _, body = sd.json("POST", "/v1/transactions/write", {"items": [
        {"op": "put", "model": "SealedMember", "item": {"id": x, "email": ex2, "secret": "x2"}}]})
    assert status == 200, body
    assert decrypt_independently(endpoint, "secret", member_raw(sd, x)["secret"])["s"] == "x2"
    assert member_guard(sd, ex) is None and member_guard(sd, ex2) is not None
    # A value another item holds: canceled with the attribute, nothing written.
    status, hdrs, body = sd.json("POST", "/v1/transactions/write", {"items": [
        {"op": "create", "model": "SealedMember", "item": {"id": z, "email": ey2, "secret": "z"}},
        {"op": "update", "model": "SealedMember", "key": {"id": y}, "set": {"secret": "y3"}}]})
    err = assert_error(status, hdrs, body, 409, "TransactionCanceled")
    assert err["details"]["reasons"][0]["code"] == "ConditionalCheckFailed"
    assert err["details"]["reasons"][0]["attribute"] == "email"
    assert member_raw(sd, z) is None
    assert decrypt_independently(endpoint, "secret", member_raw(sd, y)["secret"])["s"] == "y2"
    # Still no client_token with values to seal.
    status, hdrs, body = sd.json("POST", "/v1/transactions/write", {"client_token": "u1", "items": [
        {"op": "update", "model": "SealedMember", "key": {"id": y}, "set": {"secret": "t"}}]})
    assert_error(status, hdrs, body, 400, "ValidationError", "client_token")
    # Deletes release the guards.
    status, _, body = sd.json("POST", "/v1/transactions/write", {"items": [
        {"op": "delete", "model": "SealedMember", "key": {"id": x}},
        {"op": "delete", "model": "SealedMember", "key": {"id": y}}]})
    assert status == 200, body
    assert member_raw(sd, x) is None and member_raw(sd, y) is None
    assert member_guard(sd, ex2) is None and member_guard(sd, ey2) is None


# ---- refusals --------------------------------------------------------------------------------


def test_not_queryable_before_any_io(sd):
    i = uid()
    sd.json("POST", "/v1/models/Sealed/items", {"id": i, "secret": "x"})
    before = (kms_calls(sd, "GenerateDataKey"), kms_calls(sd, "Decrypt"))
    cases = [
        ("PATCH", item_path("Sealed", i), {"add": {"secret": 1}}, "add.secret"),
        ("PATCH", item_path("Sealed", i), {"append": {"secret": ["x"]}}, "append.secret"),
        ("PATCH", item_path("Sealed", i), {"set": {"card.number": "1"}}, "set.card.number"),
        ("PATCH", item_path("Sealed", i),
         {"set": {"note": "n"}, "condition": {"attr": "secret", "op": "=", "value": "x"}},
         "condition"),
        ("POST", "/v1/models/Sealed/scan", {"filter": {"attr": "secret", "op": "exists"}},
         "filter"),
        ("POST", "/v1/models/Sealed/query",
         {"key": [{"attr": "id", "op": "=", "value": i}],
          "filter": {"not": {"attr": "card.number", "op": "=", "value": "1"}}}, "filter"),
        ("GET", item_path("Sealed", i) + "?select=card.number", None, "select"),
    ]
    for method, path, body, field in cases:
        status, hdrs, out = sd.json(method, path, body)
        assert_error(status, hdrs, out, 400, "EncryptedFieldNotQueryable", field)
    assert (kms_calls(sd, "GenerateDataKey"), kms_calls(sd, "Decrypt")) == before


def test_an_attribute_named_condition_is_not_a_condition(sd):
    """A create's or put's body is the item: its `condition` member is an
    attribute, even when its value reads like a condition on an encrypted
    attribute (only an update's body has a condition)."""
    value = {"attr": "secret", "op": "exists"}
    i = uid()
    status, _, out = sd.json("POST", "/v1/models/Sealed/items",
                             {"id": i, "secret": "s", "condition": value})
    assert status == 201, out
    status, _, out = sd.json("PUT", item_path("Sealed", i),
                             {"id": i, "secret": "t", "condition": value})
    assert status == 200, out
    status, _, got = sd.json("GET", item_path("Sealed", i))
    assert status == 200 and got["condition"] == value and got["secret"] == "t", got


def test_kms_failure_writes_nothing(kms):
    endpoint, _ = kms
    d = start(endpoint, "arn:aws:kms:us-east-1:123456789012:key/00000000-0000-0000-0000-000000000000")
    try:
        i = uid()
        status, hdrs, body = d.json("POST", "/v1/models/Sealed/items", {"id": i, "secret": SENTINEL})
        assert_error(status, hdrs, body, 501, "EncryptionNotConfigured")
        assert "GenerateDataKey" in body["error"]["message"]
        status, _, _ = d.json("GET", item_path("SealedView", i) + "?consistent=true")
        assert status == 404
        # An unreachable KMS is retried, then BackendUnavailable; still nothing written.
        d2 = start("http://127.0.0.1:9", "alias/k", extra=("--request-timeout-ms", "20000"))
        try:
            status, hdrs, body = d2.json("POST", "/v1/models/Sealed/items", {"id": i, "secret": "x"})
            assert_error(status, hdrs, body, 503, "BackendUnavailable")
            status, _, _ = d2.json("GET", item_path("SealedView", i) + "?consistent=true")
            assert status == 404
            d2.wait_metric("tabletheoryd_inflight_operations", 0)
            d2.stop()
        finally:
            d2.kill()
        assert SENTINEL not in d.log_text()
        d.wait_metric("tabletheoryd_inflight_operations", 0)
        d.stop()
    finally:
        d.kill()


def test_damaged_envelope(sd):
    """A stored value that is not an envelope (written around the daemon's
    encryption, through the plain view) is InvalidEncryptedEnvelope."""
    i = uid()
    status, _, body = sd.json("POST", "/v1/models/SealedView/items", {"id": i, "secret": "plain"})
    assert status == 201, body
    status, hdrs, body = sd.json("GET", item_path("Sealed", i) + "?consistent=true")
    assert_error(status, hdrs, body, 500, "InvalidEncryptedEnvelope", "secret")


# ---- replacing an encrypted model --------------------------------------------------------------


def test_replace_cannot_remove_encryption(kms):
    """GET the model, take `encryption` off an attribute, PUT ?replace=true: 409
    UnsafeModelChange naming the attribute, and the model, its stored items and
    new writes stay encrypted; likewise for dropping the encrypted attribute and
    for encrypting a plain one. Only ?allow_unsafe=true replaces, logged at warn
    with names, never values. Sealed is loaded from --models."""
    d = start(*kms)
    try:
        i = uid()
        status, _, body = d.json("POST", "/v1/models/Sealed/items", {"id": i, "secret": SENTINEL})
        assert status == 201, body
        status, _, model = d.json("GET", "/v1/models/Sealed")
        assert status == 200, model

        def edited(edit):
            m = json.loads(json.dumps(model))
            attrs = {a["attribute"]: a for a in m["attributes"]}
            edit(m, attrs)
            return m

        def unencrypt(m, attrs):
            del attrs["secret"]["encryption"]

        def drop(m, attrs):
            m["attributes"] = [a for a in m["attributes"] if a["attribute"] != "secret"]
            m["tags"] = {"additional_attributes": True}

        def encrypt_note(m, attrs):
            attrs["note"]["encryption"] = {"v": 1}

        for edit, attr in ((unencrypt, "secret"), (drop, "secret"), (encrypt_note, "note")):
            status, hdrs, body = d.json("PUT", "/v1/models/Sealed?replace=true", edited(edit))
            err = assert_error(status, hdrs, body, 409, "UnsafeModelChange",
                               "attributes." + attr)
            assert '"%s"' % attr in err["message"], err
            if edit is unencrypt:  # the text of docs/models.md "Replacing a model"
                assert err["message"] == (
                    'replacing model Sealed removes the encryption of attribute "secret" (new '
                    'values in plaintext, stored envelopes read as maps); use a new model name, '
                    'or ?replace=true&allow_unsafe=true'), err
            _, _, now = d.json("GET", "/v1/models/Sealed")
            assert now == model, edit.__name__
        # Old items still decrypt; new writes are still sealed.
        status, _, body = d.json("GET", item_path("Sealed", i) + "?consistent=true")
        assert status == 200 and body["secret"] == SENTINEL, body
        j = uid()
        status, _, body = d.json("PUT", item_path("Sealed", j), {"id": j, "secret": SENTINEL})
        assert status in (200, 201), body
        assert "M" in raw(d, j)["secret"]
        assert not [ln for ln in d.log_lines() if ln.get("event") == "model.unsafe_replace"]

        # Explicitly allowed: replaced, one warn line with names only.
        status, _, body = d.json("PUT", "/v1/models/Sealed?replace=true&allow_unsafe=true",
                                 edited(unencrypt))
        assert status == 200, body
        assert "encryption" not in {a["attribute"]: a for a in body["attributes"]}["secret"]
        lines = [ln for ln in d.log_lines() if ln.get("event") == "model.unsafe_replace"]
        assert len(lines) == 1, lines
        assert lines[0]["level"] == "warn" and lines[0]["model"] == "Sealed", lines
        assert lines[0]["changes"] == "encryption_removed:secret", lines
        assert SENTINEL not in d.log_text()
        d.wait_metric("tabletheoryd_inflight_operations", 0)
        d.stop()
    finally:
        d.kill()


def key_sha256(key):
    """docs/errors.md: SHA-256 of the item's key as compact DynamoDB JSON,
    names sorted, first 16 hex digits."""
    text = json.dumps(key, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def test_damaged_envelope_in_a_scan_names_the_item(sd):
    """One damaged envelope fails the whole answer (nothing is answered in
    its place), and the error names the item by its key attribute names and
    key hash, never by the key's value; the operator finds it with a scan
    that selects only the key and repairs it by rewriting the attribute."""
    prefix = uid("dmg") + "-"
    ids = [prefix + "%d\u00e9\"/x" % k for k in range(4)]
    for x in ids[:3]:
        status, _, body = sd.json("POST", "/v1/models/Sealed/items", {"id": x, "secret": "ok"})
        assert status == 201, body
    bad = ids[3]
    status, _, body = sd.json("POST", "/v1/models/SealedView/items", {"id": bad, "secret": "plain"})
    assert status == 201, body
    only = {"attr": "id", "op": "begins_with", "value": prefix}
    for req in ({"filter": only, "consistent": True},
                {"filter": only, "consistent": True, "segments": 3}):
        status, hdrs, body = sd.json("POST", "/v1/models/Sealed/scan", req)
        err = assert_error(status, hdrs, body, 500, "InvalidEncryptedEnvelope", "secret")
        assert err["details"]["key_attributes"] == ["id"], body
        assert err["details"]["model"] == "Sealed", body
        assert err["details"]["key_sha256"] == key_sha256({"id": {"S": bad}}), body
        assert err["details"]["key_sha256"] in err["message"], body
        assert prefix not in json.dumps(body, ensure_ascii=False), body
    line = sd.wait_log(lambda ln: ln.get("event") == "crypt.envelope_invalid"
                       and ln.get("key_sha256") == key_sha256({"id": {"S": bad}}))
    assert line["model"] == "Sealed" and line["attribute"] == "secret", line
    assert line["key_attributes"] == "id", line
    assert prefix not in sd.log_text()
    # docs/errors.md: a scan of the key alone opens no envelope; hash each key.
    status, _, body = sd.json("POST", "/v1/models/Sealed/scan",
                              {"filter": only, "select": ["id"], "consistent": True})
    assert status == 200, body
    found = [it["id"] for it in body["items"]
             if key_sha256({"id": {"S": it["id"]}}) == err["details"]["key_sha256"]]
    assert found == [bad]
    status, _, body = sd.json("PATCH", item_path("Sealed", bad), {"set": {"secret": "fixed"}})
    assert status == 200 and body["secret"] == "fixed", body
    status, _, body = sd.json("POST", "/v1/models/Sealed/scan", {"filter": only,
                                                                 "consistent": True})
    assert status == 200 and len(body["items"]) == 4, body


def test_logs_carry_no_plaintext(sd):
    assert SENTINEL not in sd.log_text()
