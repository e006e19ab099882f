# SPDX-License-Identifier: Apache-2.0
"""Release-state provenance: the deploy-authority check (TableTheory's
ValidateDeployAuthorityMetadata), asked for per write with
`?deploy_authority=true` (POST, PUT) or `"deploy_authority": true` (a
transaction create/put). Accepted evidence is stored; a shape error is 400
ValidationError; evidence that cannot authorize a deploy is 422
RejectedDeployAuthorityEvidence. Every refusal is checked to have written
nothing. Models: the TableTheory fixture release-state.yml."""
import copy
import os

import pytest

from daemon import skip_on
from items_fixtures import assert_error, item_path, mdaemon  # noqa: F401

no_txn_on_dynalite = skip_on("dynalite", "transactions need TransactWriteItems, which dynalite "
                                         "does not implement; these run on moto and memory")

_seq = iter(range(1, 1 << 30))

ITEMS = "/v1/models/ReleaseStateActual/items"

GOOD_PROVENANCE = {
    "mode": "native",
    "system": "release-control-plane",
    "kind": "operator_command",
    "ref": "operator://deploy/service-a/rel_001",
    "observed_at": "2026-04-24T19:00:00Z",
    "recorded_at": "2026-04-24T19:00:01Z",
    "evidence": [{"kind": "operator_command", "source": "release-control-plane",
                  "ref": "operator://deploy/service-a/rel_001",
                  "observed_at": "2026-04-24T19:00:00Z"}],
}
GOOD_CONFIDENCE = {"level": "high", "reasons": ["operator_command_authority"]}

# The refused item of the TableTheory scenario p0/09: two evidence entries
# that disagree, low confidence.
CONFLICTING_PROVENANCE = {
    "mode": "imported",
    "system": "partner-factory",
    "kind": "factory_batch_manifest",
    "ref": "s3://factory/manifests/ambiguous.json",
    "observed_at": "2026-04-24T19:10:00Z",
    "recorded_at": "2026-04-24T19:10:01Z",
    "evidence": [
        {"kind": "factory_batch_manifest", "source": "partner-factory",
         "ref": "s3://factory/manifests/a.json", "observed_at": "2026-04-24T19:09:59Z"},
        {"kind": "submodule_pin", "source": "service-ci",
         "ref": "https://github.com/acme/service-b/tree/conflicting",
         "observed_at": "2026-04-24T19:09:59Z"},
    ],
}


def actual(provenance=GOOD_PROVENANCE, confidence=GOOD_CONFIDENCE):
    item = {"PK": "RELEASE#svc-%d-%d" % (os.getpid(), next(_seq)), "SK": "ACTUAL",
            "status": "active", "pinnedReleaseId": "rel_001"}
    if provenance is not None:
        item["provenance"] = copy.deepcopy(provenance)
    if confidence is not None:
        item["confidence"] = copy.deepcopy(confidence)
    return item


@pytest.fixture(scope="module")
def d(mdaemon):  # noqa: F811
    status, _, body = mdaemon.json("PUT", "/v1/models/ReleaseStateActual/table")
    assert status in (200, 201), body
    return mdaemon


def stored(d, item):
    status, _, body = d.json("GET", item_path("ReleaseStateActual", item["PK"], item["SK"]) +
                             "?consistent=true")
    return body if status == 200 else None


def assert_refused(d, change, status_want, code, field):
    """Posts a good item after `change` (a function that edits it) with the
    check asked for, requires the error (status_want, code, field), and that
    nothing was stored."""
    item = actual()
    change(item)
    status, hdrs, body = d.json("POST", ITEMS + "?deploy_authority=true", body=item)
    assert_error(status, hdrs, body, status_want, code, field)
    assert stored(d, item) is None


def test_accepted_evidence_is_stored(d):
    item = actual()
    status, _, body = d.json("POST", ITEMS + "?deploy_authority=true", body=item)
    assert status == 201, body
    got = stored(d, item)
    assert got["provenance"] == GOOD_PROVENANCE and got["confidence"] == GOOD_CONFIDENCE
    # Without provenance and confidence there is nothing to check.
    plain = actual(None, None)
    status, _, body = d.json("POST", ITEMS + "?deploy_authority=true", body=plain)
    assert status == 201, body


def test_conflicting_low_confidence_is_refused(d):
    item = actual(CONFLICTING_PROVENANCE, {"level": "low", "reasons": ["conflicting_evidence"]})
    status, hdrs, body = d.json("POST", ITEMS + "?deploy_authority=true", body=item)
    assert_error(status, hdrs, body, 422, "RejectedDeployAuthorityEvidence",
                 "provenance.evidence[1]")
    assert stored(d, item) is None
    # The check is asked for: without it the daemon stores what it is given,
    # as TableTheory's create does when the helper is not called.
    status, _, body = d.json("POST", ITEMS, body=item)
    assert status == 201, body


@pytest.mark.parametrize("change, field", [
    (lambda i: i["confidence"].update(level="medium"), "confidence.level"),
    (lambda i: i["confidence"].update(reasons=["unique_submodule_pin_match"]),
     "confidence.reasons"),
    (lambda i: i["provenance"].update(evidence=[]), "provenance.evidence"),
    (lambda i: i["provenance"].update(ref="operator://deploy/service-a/rel_999"), "provenance"),
    (lambda i: i["provenance"]["evidence"][0].update(source="service-ci"),
     "provenance.evidence[0]"),
])
def test_evidence_that_cannot_authorize_is_refused(d, change, field):
    assert_refused(d, change, 422, "RejectedDeployAuthorityEvidence", field)


@pytest.mark.parametrize("change, field", [
    (lambda i: i.pop("confidence"), "confidence"),
    (lambda i: i["provenance"].update(notes="free form"), "provenance.notes"),
    (lambda i: i["provenance"].update(mode="guessed"), "provenance.mode"),
    (lambda i: i["provenance"].update(observed_at="2026-02-30T00:00:00Z"),
     "provenance.observed_at"),
])
def test_malformed_metadata_is_a_validation_error(d, change, field):
    assert_refused(d, change, 400, "ValidationError", field)


def test_query_parameter_is_a_boolean(d):
    status, hdrs, body = d.json("POST", ITEMS + "?deploy_authority=maybe", body=actual())
    assert_error(status, hdrs, body, 400, "ValidationError", "deploy_authority")


def test_put_create_only_is_checked(d):
    # ReleaseStateActual protects pinnedReleaseId, so only a create-only PUT
    # is allowed at all; the check runs on it too.
    item = actual(CONFLICTING_PROVENANCE, {"level": "low", "reasons": ["conflicting_evidence"]})
    path = item_path("ReleaseStateActual", item["PK"], item["SK"]) + "?deploy_authority=true"
    status, hdrs, body = d.json("PUT", path, body=item, headers={"If-None-Match": "*"})
    assert_error(status, hdrs, body, 422, "RejectedDeployAuthorityEvidence")
    assert stored(d, item) is None
    good = actual()
    path = item_path("ReleaseStateActual", good["PK"], good["SK"]) + "?deploy_authority=true"
    status, _, body = d.json("PUT", path, body=good, headers={"If-None-Match": "*"})
    assert status == 201, body


@no_txn_on_dynalite
def test_transaction_refusal_writes_nothing(d):
    good = actual()
    bad = actual(CONFLICTING_PROVENANCE, {"level": "low", "reasons": ["conflicting_evidence"]})
    txn = {"items": [
        {"op": "create", "model": "ReleaseStateActual", "item": good, "deploy_authority": True},
        {"op": "create", "model": "ReleaseStateActual", "item": bad, "deploy_authority": True},
    ]}
    status, hdrs, body = d.json("POST", "/v1/transactions/write", body=txn)
    assert_error(status, hdrs, body, 422, "RejectedDeployAuthorityEvidence",
                 "items[1].item.provenance.evidence[1]")
    assert stored(d, good) is None and stored(d, bad) is None
    txn["items"].pop()
    status, _, body = d.json("POST", "/v1/transactions/write", body=txn)
    assert status == 200, body
    assert stored(d, good)["confidence"] == GOOD_CONFIDENCE
    # Only create and put carry the member.
    status, hdrs, body = d.json("POST", "/v1/transactions/write", body={"items": [
        {"op": "update", "model": "ReleaseStateActual",
         "key": {"PK": good["PK"], "SK": "ACTUAL"}, "set": {"status": "x"},
         "deploy_authority": True}]})
    assert_error(status, hdrs, body, 400, "ValidationError", "items[0].deploy_authority")
