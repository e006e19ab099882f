# SPDX-License-Identifier: Apache-2.0
"""boto3 against the DynamoDB listener: any region, dummy credentials."""
import os

import boto3

ddb = boto3.client("dynamodb", endpoint_url=os.environ.get("DDB_ENDPOINT", "http://127.0.0.1:8000"),
                   region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
ddb.create_table(TableName="quickstart", BillingMode="PAY_PER_REQUEST",
                 AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                 KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}])
ddb.put_item(TableName="quickstart", Item={"id": {"S": "1"}, "name": {"S": "Ada"}})
item = ddb.get_item(TableName="quickstart", Key={"id": {"S": "1"}})["Item"]
assert item["name"] == {"S": "Ada"}
print(item)
