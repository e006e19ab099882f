# SPDX-License-Identifier: Apache-2.0
"""The DynamoDB listener (docs/local-dynamodb.md): boto3 against
--dynamodb-listen, on the tables the REST API serves. The listener serves
the embedded (memory) backend only, so the module is skipped on peers."""
import json
import os
import signal
import urllib.error
import urllib.request

import pytest

from daemon import PEER, Daemon
from items_fixtures import MY_MODELS

boto3 = pytest.importorskip("boto3")
from botocore.config import Config  # noqa: E402
from botocore.exceptions import ClientError  # noqa: E402

pytestmark = pytest.mark.skipif(
    bool(PEER), reason="the DynamoDB listener serves the embedded (memory) backend")


@pytest.fixture(scope="module")
def dd():
    d = Daemon("--models", MY_MODELS, "--dynamodb-listen", "127.0.0.1:0")
    line = d.wait_log(lambda l: l.get("event") == "daemon.ready")
    d.ddb_url = "http://" + line["dynamodb_listen"]
    yield d
    try:
        d.stop()
    finally:
        d.kill()


def client(d, **kw):
    return boto3.client("dynamodb", endpoint_url=d.ddb_url, region_name="eu-west-3",
                        aws_access_key_id="anything", aws_secret_access_key="anything",
                        config=Config(retries={"max_attempts": 1}), **kw)


@pytest.fixture(scope="module")
def ddb(dd):
    return client(dd)


def code(exc):
    return exc.value.response["Error"]["Code"]


def make_table(ddb, name, gsi=False):
    kw = {}
    defs = [{"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"}]
    if gsi:
        defs.append({"AttributeName": "g", "AttributeType": "S"})
        kw["GlobalSecondaryIndexes"] = [{
            "IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}]
    return ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST", AttributeDefinitions=defs,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}], **kw)


def test_table_lifecycle(ddb):
    desc = make_table(ddb, "ddbl_life", gsi=True)["TableDescription"]
    assert desc["TableStatus"] == "ACTIVE"
    assert desc["TableArn"].endswith(":table/ddbl_life")
    assert desc["GlobalSecondaryIndexes"][0]["IndexStatus"] == "ACTIVE"
    ddb.get_waiter("table_exists").wait(TableName="ddbl_life")
    got = ddb.describe_table(TableName="ddbl_life")["Table"]
    assert got["KeySchema"][0] == {"AttributeName": "pk", "KeyType": "HASH"}
    assert got["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert got["ItemCount"] == 0
    assert "ddbl_life" in ddb.list_tables()["TableNames"]
    with pytest.raises(ClientError) as e:
        make_table(ddb, "ddbl_life")
    assert code(e) == "ResourceInUseException"
    ddb.delete_table(TableName="ddbl_life")
    with pytest.raises(ClientError) as e:
        ddb.describe_table(TableName="ddbl_life")
    assert code(e) == "ResourceNotFoundException"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_list_tables_pages(ddb):
    for i in range(3):
        make_table(ddb, "ddbl_list_%d" % i)
    names = []
    start = {}
    while True:
        page = ddb.list_tables(Limit=2, **start)
        assert len(page["TableNames"]) <= 2
        names += page["TableNames"]
        if "LastEvaluatedTableName" not in page:
            break
        start = {"ExclusiveStartTableName": page["LastEvaluatedTableName"]}
    assert names == sorted(names)
    assert {"ddbl_list_0", "ddbl_list_1", "ddbl_list_2", "loose_itest"} <= set(names)


def test_put_get_update_delete_with_conditions(ddb):
    make_table(ddb, "ddbl_items")
    key = {"pk": {"S": "a"}, "sk": {"N": "1"}}
    assert ddb.get_item(TableName="ddbl_items", Key=key).get("Item") is None
    ddb.put_item(TableName="ddbl_items", Item={**key, "v": {"N": "5"}},
                 ConditionExpression="attribute_not_exists(pk)")
    with pytest.raises(ClientError) as e:
        ddb.put_item(TableName="ddbl_items", Item=key,
                     ConditionExpression="attribute_not_exists(pk)")
    assert code(e) == "ConditionalCheckFailedException"
    out = ddb.update_item(TableName="ddbl_items", Key=key, UpdateExpression="ADD v :one",
                          ExpressionAttributeValues={":one": {"N": "1"}},
                          ReturnValues="ALL_NEW")
    assert out["Attributes"]["v"] == {"N": "6"}
    old = ddb.put_item(TableName="ddbl_items", Item={**key, "v": {"N": "7"}},
                       ReturnValues="ALL_OLD")
    assert old["Attributes"]["v"] == {"N": "6"}
    got = ddb.get_item(TableName="ddbl_items", Key=key, ConsistentRead=True,
                       ProjectionExpression="v")
    assert got["Item"] == {"v": {"N": "7"}}
    with pytest.raises(ClientError) as e:
        ddb.delete_item(TableName="ddbl_items", Key=key, ConditionExpression="v = :x",
                        ExpressionAttributeValues={":x": {"N": "1"}},
                        ReturnValuesOnConditionCheckFailure="ALL_OLD")
    assert code(e) == "ConditionalCheckFailedException"
    assert e.value.response["Item"]["v"] == {"N": "7"}
    ddb.delete_item(TableName="ddbl_items", Key=key)
    assert "Item" not in ddb.get_item(TableName="ddbl_items", Key=key)


def test_query_pages_and_scan(ddb):
    make_table(ddb, "ddbl_query", gsi=True)
    for i in range(7):
        ddb.put_item(TableName="ddbl_query", Item={"pk": {"S": "p"}, "sk": {"N": str(i)},
                                                    "g": {"S": "x"}})
    ddb.put_item(TableName="ddbl_query", Item={"pk": {"S": "other"}, "sk": {"N": "0"}})
    seen, start, pages = [], {}, 0
    while True:
        page = ddb.query(TableName="ddbl_query", KeyConditionExpression="pk = :p",
                         ExpressionAttributeValues={":p": {"S": "p"}}, Limit=3, **start)
        pages += 1
        assert page["Count"] == len(page["Items"]) <= 3
        seen += [int(it["sk"]["N"]) for it in page["Items"]]
        if "LastEvaluatedKey" not in page:
            break
        start = {"ExclusiveStartKey": page["LastEvaluatedKey"]}
    assert seen == list(range(7)) and pages >= 3
    back = ddb.query(TableName="ddbl_query", KeyConditionExpression="pk = :p",
                     ExpressionAttributeValues={":p": {"S": "p"}}, ScanIndexForward=False)
    assert [int(it["sk"]["N"]) for it in back["Items"]] == list(range(6, -1, -1))
    by_g = ddb.query(TableName="ddbl_query", IndexName="byG", KeyConditionExpression="g = :g",
                     ExpressionAttributeValues={":g": {"S": "x"}})
    assert by_g["Count"] == 7
    scan = ddb.scan(TableName="ddbl_query", FilterExpression="sk > :z",
                    ExpressionAttributeValues={":z": {"N": "4"}})
    assert scan["Count"] == 2 and scan["ScannedCount"] == 8
    assert ddb.scan(TableName="ddbl_query", Select="COUNT")["Count"] == 8


def test_batch_write_and_get(ddb):
    make_table(ddb, "ddbl_batch")
    puts = [{"PutRequest": {"Item": {"pk": {"S": "b"}, "sk": {"N": str(i)}}}}
            for i in range(25)]
    out = ddb.batch_write_item(RequestItems={"ddbl_batch": puts})
    assert out["UnprocessedItems"] == {}
    keys = [{"pk": {"S": "b"}, "sk": {"N": str(i)}} for i in range(0, 30, 3)]
    got = ddb.batch_get_item(RequestItems={"ddbl_batch": {"Keys": keys}})
    assert got["UnprocessedKeys"] == {}
    assert sorted(int(i["sk"]["N"]) for i in got["Responses"]["ddbl_batch"]) == \
        list(range(0, 25, 3))
    out = ddb.batch_write_item(RequestItems={"ddbl_batch": [
        {"DeleteRequest": {"Key": {"pk": {"S": "b"}, "sk": {"N": "0"}}}}]})
    assert out["UnprocessedItems"] == {}
    assert ddb.scan(TableName="ddbl_batch", Select="COUNT")["Count"] == 24


def test_strings_beginning_with_nul_come_back_whole(ddb):
    # U+0000 may begin a string; the daemon's trees mark such strings
    # internally ("\0S", and "\0N" for numbers), so "\0N12" must neither be
    # refused as no string nor "\0Sabc" lose its first two bytes.
    make_table(ddb, "ddbl_nul")
    labels = ["\x00Sabc", "\x00N12", "\x00", "\x00\x00S"]
    for i, v in enumerate(labels):
        ddb.put_item(TableName="ddbl_nul", Item={
            "pk": {"S": v}, "sk": {"N": str(i)}, "label": {"S": v}, "ss": {"SS": [v]}})
    for i, v in enumerate(labels):
        key = {"pk": {"S": v}, "sk": {"N": str(i)}}
        got = ddb.get_item(TableName="ddbl_nul", Key=key)["Item"]
        assert got == dict(key, label={"S": v}, ss={"SS": [v]})
        got = ddb.get_item(TableName="ddbl_nul", Key=key, ProjectionExpression="label")["Item"]
        assert got == {"label": {"S": v}}
    keys = [{"pk": {"S": v}, "sk": {"N": str(i)}} for i, v in enumerate(labels)]
    got = ddb.batch_get_item(RequestItems={"ddbl_nul": {"Keys": keys}})["Responses"]["ddbl_nul"]
    assert sorted((i["sk"]["N"], i["label"]["S"]) for i in got) == \
        [(str(i), v) for i, v in enumerate(labels)]
    with pytest.raises(ClientError) as e:
        ddb.put_item(TableName="ddbl_nul", Item=keys[1], ConditionExpression="attribute_not_exists(pk)",
                     ReturnValuesOnConditionCheckFailure="ALL_OLD")
    assert e.value.response["Item"]["label"] == {"S": labels[1]}
    got = ddb.query(TableName="ddbl_nul", KeyConditionExpression="pk = :p",
                    ExpressionAttributeValues={":p": {"S": labels[0]}})["Items"]
    assert [i["label"]["S"] for i in got] == [labels[0]]

def test_transactions_and_cancellation_reasons(ddb):
    make_table(ddb, "ddbl_txn")
    a = {"pk": {"S": "t"}, "sk": {"N": "1"}}
    b = {"pk": {"S": "t"}, "sk": {"N": "2"}}
    ddb.transact_write_items(TransactItems=[
        {"Put": {"TableName": "ddbl_txn", "Item": {**a, "n": {"N": "1"}}}},
        {"Put": {"TableName": "ddbl_txn", "Item": {**b, "n": {"N": "2"}}}}])
    got = ddb.transact_get_items(TransactItems=[{"Get": {"TableName": "ddbl_txn", "Key": a}},
                                                {"Get": {"TableName": "ddbl_txn", "Key": b}}])
    assert [r["Item"]["n"]["N"] for r in got["Responses"]] == ["1", "2"]
    with pytest.raises(ClientError) as e:
        ddb.transact_write_items(TransactItems=[
            {"Update": {"TableName": "ddbl_txn", "Key": a, "UpdateExpression": "SET n = :v",
                        "ExpressionAttributeValues": {":v": {"N": "9"}}}},
            {"ConditionCheck": {"TableName": "ddbl_txn", "Key": b,
                                "ConditionExpression": "n = :x",
                                "ExpressionAttributeValues": {":x": {"N": "0"}}}}])
    assert code(e) == "TransactionCanceledException"
    reasons = [r["Code"] for r in e.value.response["CancellationReasons"]]
    assert reasons == ["None", "ConditionalCheckFailed"]
    item = ddb.get_item(TableName="ddbl_txn", Key=a)["Item"]
    assert item["n"] == {"N": "1"}  # all or nothing


def test_ttl_describe_and_update(ddb):
    make_table(ddb, "ddbl_ttl")
    desc = ddb.describe_time_to_live(TableName="ddbl_ttl")["TimeToLiveDescription"]
    assert desc["TimeToLiveStatus"] == "DISABLED"
    out = ddb.update_time_to_live(TableName="ddbl_ttl", TimeToLiveSpecification={
        "Enabled": True, "AttributeName": "exp"})
    assert out["TimeToLiveSpecification"] == {"Enabled": True, "AttributeName": "exp"}
    desc = ddb.describe_time_to_live(TableName="ddbl_ttl")["TimeToLiveDescription"]
    assert desc["TimeToLiveStatus"] == "ENABLED" and desc["AttributeName"] == "exp"


def test_update_table_adds_gsi(ddb):
    make_table(ddb, "ddbl_upd")
    out = ddb.update_table(TableName="ddbl_upd", AttributeDefinitions=[
        {"AttributeName": "g", "AttributeType": "S"}], GlobalSecondaryIndexUpdates=[
        {"Create": {"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "KEYS_ONLY"}}}])
    names = [g["IndexName"] for g in out["TableDescription"]["GlobalSecondaryIndexes"]]
    assert names == ["byG"]


def test_update_table_index_deletes(ddb):
    # DynamoDB counts every index action against its limit before anything
    # else; an index Delete is the one action the memory backend refuses.
    make_table(ddb, "ddbl_del", gsi=True)
    deletes = [{"Delete": {"IndexName": "idx%d" % i}} for i in range(6)]
    with pytest.raises(ClientError) as e:
        ddb.update_table(TableName="ddbl_del", GlobalSecondaryIndexUpdates=deletes)
    assert code(e) == "LimitExceededException"
    with pytest.raises(ClientError) as e:
        ddb.update_table(TableName="ddbl_del", GlobalSecondaryIndexUpdates=deletes[:1])
    assert code(e) == "ValidationException"
    assert "Delete actions" in e.value.response["Error"]["Message"]
    names = [g["IndexName"] for g in
             ddb.describe_table(TableName="ddbl_del")["Table"]["GlobalSecondaryIndexes"]]
    assert names == ["byG"]


def test_errors(ddb):
    with pytest.raises(ClientError) as e:
        ddb.get_item(TableName="ddbl_missing", Key={"pk": {"S": "a"}})
    assert code(e) == "ResourceNotFoundException"
    make_table(ddb, "ddbl_err")
    with pytest.raises(ClientError) as e:
        ddb.get_item(TableName="ddbl_err", Key={"pk": {"S": "a"}})  # no sort key
    assert code(e) == "ValidationException"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert e.value.response["Error"]["Message"]


def raw(d, target, body, headers=None, method="POST"):
    """One request by hand: (status, headers, parsed body or text)."""
    h = {"Content-Type": "application/x-amz-json-1.0",
         "X-Amz-Target": target, "X-Amz-Date": "20260101T000000Z",
         "Authorization": "AWS4-HMAC-SHA256 Credential=k/20260101/us-east-1/dynamodb/"
                          "aws4_request, SignedHeaders=host, Signature=abc"}
    h.update(headers or {})
    h = {k: v for k, v in h.items() if v is not None}
    req = urllib.request.Request(d.ddb_url + "/", data=body, headers=h, method=method)
    try:
        with urllib.request.urlopen(req) as r:
            status, hdrs, data = r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        status, hdrs, data = e.code, dict(e.headers), e.read()
    try:
        data = json.loads(data)
    except ValueError:
        data = data.decode()
    return status, {k.lower(): v for k, v in hdrs.items()}, data


def test_wire_errors_and_headers(dd):
    import zlib
    st, h, body = raw(dd, "DynamoDB_20120810.ListTables", b"{}")
    assert st == 200 and "TableNames" in body
    assert len(h["x-amzn-requestid"]) == 52
    # x-amz-crc32 is the CRC32 of the body, as DynamoDB sends it.
    st, h, data = raw(dd, "DynamoDB_20120810.ListTables", b"{}")
    assert int(h["x-amz-crc32"]) == zlib.crc32(json.dumps(data, separators=(",", ":")).encode())
    st, _, body = raw(dd, "DynamoDB_20120810.Nope", b"{}")
    assert (st, body["__type"]) == (400, "com.amazon.coral.service#UnknownOperationException")
    st, _, body = raw(dd, "DynamoDB_20120810.ListTables", b"{not json")
    assert (st, body["__type"]) == (400, "com.amazon.coral.service#SerializationException")
    st, _, body = raw(dd, "DynamoDB_20120810.ListTables", b"{}", {"Authorization": None})
    assert (st, body["__type"]) == (
        400, "com.amazon.coral.service#MissingAuthenticationTokenException")
    st, _, body = raw(dd, "DynamoDB_20120810.ListTables", b"{}",
                      {"Authorization": "AWS4-HMAC-SHA256 Signature=x"})
    assert body["__type"] == "com.amazon.coral.service#IncompleteSignatureException"
    assert "'Credential'" in body["message"]
    st, _, body = raw(dd, "DynamoDB_20120810.DescribeTable", b'{}')
    assert body["__type"] == "com.amazon.coral.validate#ValidationException"
    st, _, body = raw(dd, "DynamoDB_20120810.DescribeTable", b'{"TableName":"nosuch"}')
    assert body["__type"] == "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException"
    st, _, text = raw(dd, "DynamoDB_20120810.ListTables", b"{}", {"Content-Type": "text/plain"})
    assert st == 404 and "UnknownOperationException" in text


def test_body_limit(fresh_daemon):
    # The listener's own limit (DynamoDB's 16 MiB by default), not the
    # REST API's --max-body-bytes; the 413 is sent chunked, as DynamoDB's.
    d = fresh_daemon("--dynamodb-listen", "127.0.0.1:0", "--max-body-bytes", "100",
                     "--dynamodb-max-body-bytes", "1024")
    d.ddb_url = "http://" + d.wait_log(
        lambda l: l.get("event") == "daemon.ready")["dynamodb_listen"]
    st, hdrs, body = raw(d, "DynamoDB_20120810.ListTables", b'{"x":"' + b"a" * 2000 + b'"}')
    assert st == 413 and "1024" in body["message"]
    assert hdrs.get("transfer-encoding") == "chunked"
    st, _, body = raw(d, "DynamoDB_20120810.ListTables", b'{"x":"' + b"a" * 900 + b'"}')
    assert st == 200 and "TableNames" in body


def test_tags_and_throughput(ddb):
    ddb.create_table(
        TableName="ddbl_prov", AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
    arn = ddb.describe_table(TableName="ddbl_prov")["Table"]["TableArn"]
    assert ddb.list_tags_of_resource(ResourceArn=arn)["Tags"] == []
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "team", "Value": "a"},
                                            {"Key": "env", "Value": "dev"}])
    ddb.untag_resource(ResourceArn=arn, TagKeys=["env"])
    assert ddb.list_tags_of_resource(ResourceArn=arn)["Tags"] == [{"Key": "team", "Value": "a"}]
    with pytest.raises(ClientError) as e:
        ddb.list_tags_of_resource(ResourceArn=arn + "x")
    assert code(e) == "ResourceNotFoundException"
    # Throughput: stored and described; an unchanged value is refused.
    desc = ddb.update_table(TableName="ddbl_prov", ProvisionedThroughput={
        "ReadCapacityUnits": 10, "WriteCapacityUnits": 5})["TableDescription"]
    assert desc["ProvisionedThroughput"]["ReadCapacityUnits"] == 10
    assert "LastIncreaseDateTime" in desc["ProvisionedThroughput"]
    with pytest.raises(ClientError) as e:
        ddb.update_table(TableName="ddbl_prov", ProvisionedThroughput={
            "ReadCapacityUnits": 10, "WriteCapacityUnits": 5})
    assert "will not change" in e.value.response["Error"]["Message"]
    desc = ddb.update_table(TableName="ddbl_prov",
                            BillingMode="PAY_PER_REQUEST")["TableDescription"]
    assert desc["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert desc["ProvisionedThroughput"]["ReadCapacityUnits"] == 0
    ddb.delete_table(TableName="ddbl_prov")


def test_cors(dd):
    st, hdrs, body = raw(dd, "DynamoDB_20120810.ListTables", b"{}", {"Origin": "http://x"})
    assert st == 200 and hdrs["access-control-allow-origin"] == "*"
    st, hdrs, body = raw(dd, "", None, {"Origin": "http://x", "Access-Control-Request-Headers":
                                        "a, b", "Access-Control-Request-Method": "POST"},
                         method="OPTIONS")
    assert st == 200 and body == ""
    assert hdrs["access-control-allow-headers"] == "a, b"
    assert hdrs["access-control-allow-methods"] == "POST"
    assert hdrs["access-control-max-age"] == "172800"


def rest_item(d, model, key):
    return d.json("GET", "/v1/models/%s/items/%s" % (model, key))


def test_cross_visibility_with_the_rest_api(dd, ddb):
    # An item written with boto3 is read by GET /v1/models/... (model Loose,
    # table loose_itest, additional attributes allowed) ...
    ddb.put_item(TableName="loose_itest", Item={"id": {"S": "from-boto3"},
                                                 "label": {"S": "hello"}})
    status, _, body = rest_item(dd, "Loose", "from-boto3")
    assert status == 200, body
    assert body["id"] == "from-boto3" and body["label"] == "hello"
    # ... and the reverse.
    status, _, body = dd.json("POST", "/v1/models/Loose/items",
                              body={"id": "from-rest", "label": "world"})
    assert status == 201, body
    got = ddb.get_item(TableName="loose_itest", Key={"id": {"S": "from-rest"}})["Item"]
    assert got["label"] == {"S": "world"}


def test_metrics_and_payload_free_logs(dd, ddb):
    ddb.put_item(TableName="loose_itest", Item={"id": {"S": "secret-key-value"},
                                                 "label": {"S": "secret-item-value"}})
    status, _, data = dd.request("GET", "/metrics")
    text = data.decode()
    assert 'tabletheoryd_dynamodb_requests_total{operation="PutItem",status="200"}' in text
    assert "secret-key-value" not in dd.log_text()
    assert "secret-item-value" not in dd.log_text()
    line = dd.wait_log(lambda l: l.get("event") == "dynamodb.request"
                       and l.get("operation") == "PutItem")
    assert line["status"] == 200 and len(line["request_id"]) == 52


def test_verify_mode(fresh_daemon):
    d = fresh_daemon("--dynamodb-listen", "127.0.0.1:0", "--dynamodb-auth", "verify",
                     env={"TABLETHEORYD_DYNAMODB_ACCESS_KEY_ID": "AKIDEXAMPLE",
                          "TABLETHEORYD_DYNAMODB_SECRET_ACCESS_KEY": "s3cr3t"})
    d.ddb_url = "http://" + d.wait_log(
        lambda l: l.get("event") == "daemon.ready")["dynamodb_listen"]
    good = boto3.client("dynamodb", endpoint_url=d.ddb_url, region_name="us-east-1",
                        aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="s3cr3t")
    assert "TableNames" in good.list_tables()
    bad = boto3.client("dynamodb", endpoint_url=d.ddb_url, region_name="us-east-1",
                       aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="wrong",
                       config=Config(retries={"max_attempts": 1}))
    with pytest.raises(ClientError) as e:
        bad.list_tables()
    assert code(e) == "InvalidSignatureException"
    other = boto3.client("dynamodb", endpoint_url=d.ddb_url, region_name="us-east-1",
                         aws_access_key_id="someone", aws_secret_access_key="s3cr3t",
                         config=Config(retries={"max_attempts": 1}))
    with pytest.raises(ClientError) as e:
        other.list_tables()
    assert code(e) == "UnrecognizedClientException"
    assert "s3cr3t" not in d.log_text()


def test_network_listen_needs_verify(fresh_daemon, tmp_path):
    import subprocess
    from daemon import DAEMON
    p = subprocess.run([DAEMON, "--dynamodb-listen", "0.0.0.0:0", "--check-config"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "dynamodb-listen" in p.stderr


def test_drain_finishes_and_stops(fresh_daemon):
    d = fresh_daemon("--dynamodb-listen", "127.0.0.1:0")
    d.ddb_url = "http://" + d.wait_log(
        lambda l: l.get("event") == "daemon.ready")["dynamodb_listen"]
    c = client(d)
    c.list_tables()  # a keep-alive connection stays open
    d.stop(signal.SIGTERM)


def test_documented_examples_run(dd):
    """docs/local-dynamodb.md copies tests/ddb_compat/boto3_quickstart.py
    (scripts/check-doc-examples.py keeps them equal): it must run."""
    import subprocess
    import sys
    from daemon import SRCDIR
    script = os.path.join(SRCDIR, "tests", "ddb_compat", "boto3_quickstart.py")
    p = subprocess.run([sys.executable, script], env={**os.environ, "DDB_ENDPOINT": dd.ddb_url},
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "Ada" in p.stdout


def test_legacy_parameters_become_expressions(ddb):
    make_table(ddb, "ddbl_legacy")
    key = {"pk": {"S": "l"}, "sk": {"N": "1"}}
    ddb.put_item(TableName="ddbl_legacy", Item={**key, "v": {"N": "1"}, "w": {"S": "x"}},
                 Expected={"pk": {"Exists": False}})
    with pytest.raises(ClientError) as e:
        ddb.put_item(TableName="ddbl_legacy", Item=key, Expected={"pk": {"Exists": False}})
    assert code(e) == "ConditionalCheckFailedException"
    ddb.update_item(TableName="ddbl_legacy", Key=key, AttributeUpdates={
        "v": {"Action": "ADD", "Value": {"N": "2"}}, "w": {"Action": "DELETE"}},
        Expected={"v": {"ComparisonOperator": "EQ", "AttributeValueList": [{"N": "1"}]}})
    got = ddb.get_item(TableName="ddbl_legacy", Key=key, AttributesToGet=["v", "w"])["Item"]
    assert got == {"v": {"N": "3"}}
    q = ddb.query(TableName="ddbl_legacy", KeyConditions={
        "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "l"}]},
        "sk": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"N": "0"}, {"N": "5"}]}},
        QueryFilter={"v": {"ComparisonOperator": "GT", "AttributeValueList": [{"N": "2"}]}})
    assert q["Count"] == 1
    s = ddb.scan(TableName="ddbl_legacy", ScanFilter={
        "v": {"ComparisonOperator": "IN", "AttributeValueList": [{"N": "7"}, {"N": "8"}]}},
        ConditionalOperator="OR")
    assert s["Count"] == 0 and s["ScannedCount"] == 1
    with pytest.raises(ClientError) as e:
        ddb.get_item(TableName="ddbl_legacy", Key=key, AttributesToGet=["v"],
                     ProjectionExpression="v")
    assert code(e) == "ValidationException"
    assert e.value.response["Error"]["Message"].startswith(
        "Can not use both expression and non-expression parameters")
    with pytest.raises(ClientError) as e:
        ddb.delete_item(TableName="ddbl_legacy", Key=key,
                        Expected={"v": {"ComparisonOperator": "EQ"}})
    assert "Value or AttributeValueList must be used" in e.value.response["Error"]["Message"]
    # An ADD or DELETE of another type than the attribute's is worded as
    # DynamoDB words it for AttributeUpdates, not as for an expression.
    with pytest.raises(ClientError) as e:
        ddb.update_item(TableName="ddbl_legacy", Key=key,
                        AttributeUpdates={"v": {"Action": "ADD", "Value": {"NS": ["1"]}}})
    assert e.value.response["Error"]["Message"] == "Type mismatch for attribute to update"
    with pytest.raises(ClientError) as e:
        ddb.update_item(TableName="ddbl_legacy", Key=key, UpdateExpression="ADD v :s",
                        ExpressionAttributeValues={":s": {"NS": ["1"]}})
    assert e.value.response["Error"]["Message"] == (
        "An operand in the update expression has an incorrect data type")
    # A legacy IN has no operand limit of its own: repeated values are fine.
    s = ddb.scan(TableName="ddbl_legacy", ScanFilter={
        "v": {"ComparisonOperator": "IN", "AttributeValueList": [{"N": "3"}] * 27500}})
    assert s["Count"] == 1
    # A member-constraint message shows the whole value of a long list.
    writes = [{"PutRequest": {"Item": {"pk": {"S": str(i)}, "sk": {"N": "1"}}}}
              for i in range(26)]
    with pytest.raises(ClientError) as e:
        ddb.batch_write_item(RequestItems={"ddbl_legacy": writes})
    msg = e.value.response["Error"]["Message"]
    assert '{"PutRequest":{"Item":{"pk":{"S":"25"},"sk":{"N":"1"}}}}]}\' at \'requestItems\'' in msg


def test_verify_mode_refuses_unsigned_and_stale(fresh_daemon):
    d = fresh_daemon("--dynamodb-listen", "127.0.0.1:0", "--dynamodb-auth", "verify",
                     env={"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "s3cr3t"})
    d.ddb_url = "http://" + d.wait_log(
        lambda l: l.get("event") == "daemon.ready")["dynamodb_listen"]
    # A well-formed header with a made-up signature, dated 2026-01-01.
    st, _, body = raw(d, "DynamoDB_20120810.ListTables", b"{}",
                      {"Authorization": "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/"
                       "us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, "
                       "Signature=" + "0" * 64})
    assert st == 400 and body["__type"] == "com.amazon.coral.service#InvalidSignatureException"
    # A presigned request missing parameters is refused as DynamoDB does; a
    # complete one is not verified, so verify mode refuses it.
    for query, want in (("X-Amz-Algorithm=AWS4-HMAC-SHA256", "IncompleteSignatureException"),
                        ("X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F"
                         "20260101%2Fus-east-1%2Fdynamodb%2Faws4_request&X-Amz-Signature=00"
                         "&X-Amz-SignedHeaders=host&X-Amz-Date=20260101T000000Z",
                         "MissingAuthenticationTokenException")):
        req = urllib.request.Request(d.ddb_url + "/?" + query, data=b"{}",
                                     headers={"Content-Type": "application/x-amz-json-1.0",
                                              "X-Amz-Target": "DynamoDB_20120810.ListTables"})
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req)
        assert json.loads(e.value.read())["__type"].endswith(want)


def test_drain_closes_a_stalled_request(fresh_daemon):
    """A client that stops sending mid-body cannot hold the drain open past
    the drain timeout (plus the listener's one-second grace)."""
    import socket
    d = fresh_daemon("--dynamodb-listen", "127.0.0.1:0", "--drain-timeout-ms", "100")
    host, _, port = d.wait_log(
        lambda l: l.get("event") == "daemon.ready")["dynamodb_listen"].rpartition(":")
    s = socket.create_connection((host, int(port)))
    s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.0\r\n"
              b"X-Amz-Target: DynamoDB_20120810.ListTables\r\nContent-Length: 100\r\n\r\n{")
    try:
        d.stop(timeout=15)  # MHD's own idle timeout (30 s) would exceed this
    finally:
        s.close()


def test_endless_oversized_body_is_cut_off(fresh_daemon):
    """An oversized body is dropped up to 16 MiB, then the connection closes."""
    import socket
    d = fresh_daemon("--dynamodb-listen", "127.0.0.1:0", "--max-body-bytes", "1024")
    host, _, port = d.wait_log(
        lambda l: l.get("event") == "daemon.ready")["dynamodb_listen"].rpartition(":")
    s = socket.create_connection((host, int(port)), timeout=30)
    s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.0\r\n"
              b"X-Amz-Target: DynamoDB_20120810.ListTables\r\nContent-Length: 100000000\r\n\r\n")
    chunk = b"a" * (1 << 20)
    sent = 0
    with pytest.raises(OSError):
        for _ in range(100):
            s.sendall(chunk)
            sent += len(chunk)
    s.close()
    assert 16 << 20 <= sent < 100 << 20


def test_get_is_a_health_check(dd):
    with urllib.request.urlopen(dd.ddb_url + "/") as r:
        assert r.status == 200
        assert r.read() == b"healthy: dynamodb.us-east-1.amazonaws.com "
        assert r.headers["x-amz-crc32"] == "3128867991"  # DynamoDB's, for this text


def test_expression_errors_as_dynamodb_words_them(dd, ddb):
    """BETWEEN bounds and attribute_type's type name are printed as values
    in the answer (never in the log); legacy parameters get their own
    wording; the key-condition rules come after the other expressions
    parse."""
    make_table(ddb, "ddbl_exprerr")
    key = {"pk": {"S": "k"}, "sk": {"N": "1"}}

    def message(call, **kw):
        with pytest.raises(ClientError) as e:
            call(TableName="ddbl_exprerr", **kw)
        assert code(e) == "ValidationException"
        return e.value.response["Error"]["Message"]

    assert message(ddb.delete_item, Key=key, ConditionExpression="v between :b and :a",
                   ExpressionAttributeValues={":a": {"S": "sekrit-a"}, ":b": {"N": "1"}}) == (
        "Invalid ConditionExpression: The BETWEEN operator requires same data type for lower "
        "and upper bounds; lower bound operand: AttributeValue: {N:1}, upper bound operand: "
        "AttributeValue: {S:sekrit-a}")
    assert message(ddb.query, KeyConditionExpression="pk = :a and sk between :b and :a",
                   ExpressionAttributeValues={":a": {"N": "1"}, ":b": {"N": "2"}}) == (
        "Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be "
        "greater than or equal to lower bound; lower bound operand: AttributeValue: {N:2}, "
        "upper bound operand: AttributeValue: {N:1}")
    assert message(ddb.scan, FilterExpression="attribute_type(v, :t)",
                   ExpressionAttributeValues={":t": {"S": "X"}}) == (
        "Invalid FilterExpression: Invalid attribute type name found; type: X, valid types: "
        "{B,NULL,SS,BOOL,L,BS,N,NS,S,M}")
    assert message(ddb.delete_item, Key=key, Expected={"v": {
        "ComparisonOperator": "BETWEEN", "AttributeValueList": [{"S": "b"}, {"S": "a"}]}}) == (
        "The BETWEEN condition was provided a range where the lower bound is greater than the "
        "upper bound")
    assert message(ddb.query, KeyConditions={
        "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "k"}]}},
        QueryFilter={"sk": {"ComparisonOperator": "NOT_NULL"}}) == (
        "QueryFilter can only contain non-primary key attributes: Primary key attribute: sk")
    assert message(ddb.query, KeyConditionExpression="attribute_exists(pk)",
                   FilterExpression=" ") == (
        "Invalid FilterExpression: The expression can not be empty;")
    assert "sekrit-a" not in dd.log_text()
