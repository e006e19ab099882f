# SPDX-License-Identifier: Apache-2.0
"""PUT /v1/models/{m}/table on a table that TableTheory made
(docs/api.md, Models and tables): its EnsureTable creates tables
without TTL, so ensuring the table of a model with a `ttl` attribute turns
TTL on, says so in `changes`, and refuses (409) a table whose TTL is on
another attribute. dynalite has no TTL API: there the table is still
ensured, without `ttl_attribute`."""
import json
import urllib.request
import uuid

import pytest

from daemon import PEER, PEER_ENDPOINT, PEER_ENV, skip_on
from items_fixtures import assert_error

NO_TTL_API = "dynalite has no DescribeTimeToLive/UpdateTimeToLive"


def model(name, table, ttl=None):
    attrs = [{"attribute": "id", "type": "S", "required": True, "roles": ["pk"]},
             {"attribute": "at", "type": "N", "required": True, "roles": ["sk"]}]
    if ttl:
        attrs.append({"attribute": ttl, "type": "N", "format": "unix_seconds",
                      "roles": ["ttl"], "optional": True})
    return {"dms_version": "0.2", "namespace": "tabletheoryd.itest.ttl", "name": name,
            "table": {"name": table},
            "keys": {"partition": {"attribute": "id", "type": "S"},
                     "sort": {"attribute": "at", "type": "N"}},
            "attributes": attrs}


def peer(op, body):
    """One DynamoDB call straight to the peer, as another service would make
    it (dynalite checks no signature, moto only reads the credential scope)."""
    req = urllib.request.Request(PEER_ENDPOINT + "/", data=json.dumps(body).encode(), headers={
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "DynamoDB_20120810." + op,
        "X-Amz-Date": "20200101T000000Z",
        "Authorization": "AWS4-HMAC-SHA256 Credential=%s/20200101/us-east-1/dynamodb/"
                         "aws4_request, SignedHeaders=content-type;host, Signature=00"
                         % PEER_ENV["AWS_ACCESS_KEY_ID"]})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.load(resp)


def register(d, m):
    status, _, body = d.json("PUT", "/v1/models/" + m["name"], body=m)
    return status, body


def table_as_tabletheory_makes_it(d, table):
    """A table with the model's keys and no TTL. On a peer: CreateTable as
    TableTheory's EnsureTable sends it. On the memory backend (which no other
    process reaches): the table of a registered model without a ttl role."""
    if PEER:
        peer("CreateTable", {
            "TableName": table, "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"},
                                     {"AttributeName": "at", "AttributeType": "N"}],
            "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"},
                          {"AttributeName": "at", "KeyType": "RANGE"}]})
        desc = peer("DescribeTimeToLive", {"TableName": table})["TimeToLiveDescription"]
        assert desc["TimeToLiveStatus"] == "DISABLED", desc
    else:
        status, body = register(d, model("Plain" + uuid.uuid4().hex[:8], table))
        assert status == 201, body


def unique_table():
    return "ttl_itest_" + uuid.uuid4().hex[:10]


@skip_on("dynalite", NO_TTL_API)
def test_ensure_turns_ttl_on_for_a_table_made_without_it(fresh_daemon):
    d = fresh_daemon()
    table = unique_table()
    table_as_tabletheory_makes_it(d, table)
    status, body = register(d, model("Expiring", table, ttl="ttl"))
    assert status == 201, body
    status, _, body = d.json("PUT", "/v1/models/Expiring/table")
    assert status == 200, body
    assert set(body) == {"table", "status", "item_count", "indexes", "changes",
                         "ttl_attribute"}, body
    assert body["table"] == table and body["status"] == "ACTIVE"
    assert body["ttl_attribute"] == "ttl"
    # On the memory backend registering the model already ensured its table.
    assert body["changes"] == (["ttl_enabled"] if PEER else []), body
    if PEER:
        desc = peer("DescribeTimeToLive", {"TableName": table})["TimeToLiveDescription"]
        assert desc["TimeToLiveStatus"] in ("ENABLED", "ENABLING"), desc
        assert desc["AttributeName"] == "ttl", desc
    # Ensured already: nothing more to change.
    status, _, body = d.json("PUT", "/v1/models/Expiring/table")
    assert status == 200, body
    assert body["changes"] == [] and body["ttl_attribute"] == "ttl", body
    # GET describes the table as before.
    status, _, body = d.json("GET", "/v1/models/Expiring/table")
    assert status == 200 and set(body) == {"table", "status", "item_count", "indexes"}, body


@skip_on("dynalite", NO_TTL_API)
def test_ttl_on_another_attribute_is_a_conflict(fresh_daemon):
    d = fresh_daemon()
    table = unique_table()
    if PEER:
        table_as_tabletheory_makes_it(d, table)
        peer("UpdateTimeToLive", {"TableName": table, "TimeToLiveSpecification": {
            "Enabled": True, "AttributeName": "expires"}})
    else:
        status, body = register(d, model("OtherTtl", table, ttl="expires"))
        assert status == 201, body
    status, body = register(d, model("Expiring", table, ttl="ttl"))
    if not PEER:
        # The memory backend ensures the table as the model registers, and a
        # registration whose table cannot be ensured leaves no model behind.
        assert status == 409, body
        err = body["error"]
        assert err["code"] == "AlreadyExists", err
        assert "expires" in err["message"] and table in err["message"], err
        status, hdrs, body = d.json("GET", "/v1/models/Expiring")
        assert_error(status, hdrs, body, 404, "ModelNotFound")
        return
    status, hdrs, body = d.json("PUT", "/v1/models/Expiring/table")
    err = assert_error(status, hdrs, body, 409, "AlreadyExists")
    assert "expires" in err["message"] and table in err["message"], err
    assert err["details"]["ttl_attribute"] == "expires"
    assert err["details"]["model_ttl_attribute"] == "ttl"
    if PEER:  # left as it was
        desc = peer("DescribeTimeToLive", {"TableName": table})["TimeToLiveDescription"]
        assert desc["AttributeName"] == "expires", desc


@pytest.mark.skipif(not PEER, reason="the memory backend creates a table when its model loads")
def test_created_table_reports_its_changes(fresh_daemon):
    d = fresh_daemon()
    table = unique_table()
    status, body = register(d, model("Fresh", table, ttl="ttl"))
    assert status == 201, body
    status, _, body = d.json("PUT", "/v1/models/Fresh/table")
    assert status == 201, body
    if PEER == "dynalite":
        # No TTL API: the table is ensured all the same, with a warning.
        assert body["changes"] == ["table_created"] and "ttl_attribute" not in body, body
        d.wait_log(lambda l: l.get("event") == "table.ttl_not_enabled")
    else:
        assert body["changes"] == ["table_created", "ttl_enabled"], body
        assert body["ttl_attribute"] == "ttl"
