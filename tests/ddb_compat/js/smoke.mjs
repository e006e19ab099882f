// SPDX-License-Identifier: Apache-2.0
// Smoke test of the DynamoDB listener with the AWS SDK for JavaScript v3:
// create a table, put, get, query, transact. Endpoint from DDB_ENDPOINT;
// any region and dummy credentials. Exits non-zero on the first surprise.
import {
  CreateTableCommand, DescribeTableCommand, DynamoDBClient, GetItemCommand, PutItemCommand,
  QueryCommand, ResourceNotFoundException, TransactWriteItemsCommand,
  TransactionCanceledException, waitUntilTableExists,
} from "@aws-sdk/client-dynamodb";
import assert from "node:assert/strict";

const db = new DynamoDBClient({
  endpoint: process.env.DDB_ENDPOINT, region: "ap-southeast-2",
  credentials: { accessKeyId: "dummy", secretAccessKey: "dummy" },
});
const TableName = "js_smoke";
await db.send(new CreateTableCommand({
  TableName, BillingMode: "PAY_PER_REQUEST",
  AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" },
                         { AttributeName: "sk", AttributeType: "N" }],
  KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }, { AttributeName: "sk", KeyType: "RANGE" }],
}));
await waitUntilTableExists({ client: db, maxWaitTime: 60, minDelay: 1 }, { TableName });
const Key = { pk: { S: "a" }, sk: { N: "1" } };
await db.send(new PutItemCommand({ TableName, Item: { ...Key, v: { S: "hello" } } }));
const got = await db.send(new GetItemCommand({ TableName, Key }));
assert.deepEqual(got.Item.v, { S: "hello" });
const q = await db.send(new QueryCommand({
  TableName, KeyConditionExpression: "pk = :p", ExpressionAttributeValues: { ":p": { S: "a" } },
}));
assert.equal(q.Count, 1);
try {
  await db.send(new TransactWriteItemsCommand({ TransactItems: [{ Put: {
    TableName, Item: Key, ConditionExpression: "attribute_not_exists(pk)" } }] }));
  assert.fail("the transaction should have been cancelled");
} catch (e) {
  assert.ok(e instanceof TransactionCanceledException, String(e));
  assert.equal(e.CancellationReasons[0].Code, "ConditionalCheckFailed");
}
try {
  await db.send(new DescribeTableCommand({ TableName: "nope_nope" }));
  assert.fail("DescribeTable of a missing table should fail");
} catch (e) {
  assert.ok(e instanceof ResourceNotFoundException, String(e));
}
console.log("js v3 smoke: ok");
