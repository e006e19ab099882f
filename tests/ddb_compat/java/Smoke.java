// SPDX-License-Identifier: Apache-2.0
// Smoke test of the DynamoDB listener with the AWS SDK for Java v2: table
// lifecycle, put and get, a conditional failure, a query in pages, batches,
// a transaction with its cancellation reasons, TTL. Endpoint from
// DDB_ENDPOINT; any region and dummy credentials. Exits non-zero on the first
// surprise.

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.waiters.WaiterResponse;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableResponse;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.KeysAndAttributes;
import software.amazon.awssdk.services.dynamodb.model.PutRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;
import software.amazon.awssdk.services.dynamodb.model.TimeToLiveDescription;
import software.amazon.awssdk.services.dynamodb.model.TimeToLiveStatus;
import software.amazon.awssdk.services.dynamodb.model.TransactGetItem;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;
import software.amazon.awssdk.services.dynamodb.waiters.DynamoDbWaiter;

public final class Smoke {
  private static final String TABLE = "java_smoke";

  private Smoke() {}

  public static void main(String[] args) {
    String endpoint = System.getenv("DDB_ENDPOINT");
    check(endpoint != null && !endpoint.isEmpty(), "DDB_ENDPOINT is set", endpoint);
    try (DynamoDbClient db =
            DynamoDbClient.builder()
                .endpointOverride(URI.create(endpoint))
                .region(Region.EU_CENTRAL_1)
                .credentialsProvider(
                    StaticCredentialsProvider.create(AwsBasicCredentials.create("dummy", "dummy")))
                .httpClient(UrlConnectionHttpClient.create())
                .build();
        DynamoDbWaiter waiter = DynamoDbWaiter.builder().client(db).build()) {
      lifecycleStart(db, waiter);
      putGetAndCondition(db);
      queryInPages(db);
      batches(db);
      transactions(db);
      ttl(db);
      lifecycleEnd(db, waiter);
    }
    System.out.println("java v2 smoke: ok");
  }

  private static void lifecycleStart(DynamoDbClient db, DynamoDbWaiter waiter) {
    db.createTable(
        b ->
            b.tableName(TABLE)
                .billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(
                    AttributeDefinition.builder()
                        .attributeName("pk")
                        .attributeType(ScalarAttributeType.S)
                        .build(),
                    AttributeDefinition.builder()
                        .attributeName("sk")
                        .attributeType(ScalarAttributeType.N)
                        .build())
                .keySchema(
                    KeySchemaElement.builder().attributeName("pk").keyType(KeyType.HASH).build(),
                    KeySchemaElement.builder().attributeName("sk").keyType(KeyType.RANGE).build()));
    WaiterResponse<DescribeTableResponse> ready = waiter.waitUntilTableExists(b -> b.tableName(TABLE));
    TableDescription t = ready.matched().response().orElseThrow().table();
    check(t.tableStatus() == TableStatus.ACTIVE, "the new table is ACTIVE", t.tableStatus());
    check(t.keySchema().get(0).attributeName().equals("pk"), "the key schema", t.keySchema());
    check(db.listTables().tableNames().contains(TABLE), "ListTables names the table", null);
    try {
      db.createTable(
          b ->
              b.tableName(TABLE)
                  .billingMode(BillingMode.PAY_PER_REQUEST)
                  .attributeDefinitions(
                      AttributeDefinition.builder()
                          .attributeName("pk")
                          .attributeType(ScalarAttributeType.S)
                          .build())
                  .keySchema(
                      KeySchemaElement.builder().attributeName("pk").keyType(KeyType.HASH).build()));
      fail("a second CreateTable of the table succeeded");
    } catch (ResourceInUseException expected) {
      // DynamoDB's answer to a table that exists
    }
  }

  private static void lifecycleEnd(DynamoDbClient db, DynamoDbWaiter waiter) {
    db.deleteTable(b -> b.tableName(TABLE));
    waiter.waitUntilTableNotExists(b -> b.tableName(TABLE));
    try {
      db.describeTable(b -> b.tableName(TABLE));
      fail("DescribeTable of a deleted table succeeded");
    } catch (ResourceNotFoundException expected) {
      // gone
    }
  }

  private static Map<String, AttributeValue> key(String pk, int sk) {
    return Map.of("pk", s(pk), "sk", n(sk));
  }

  private static void putGetAndCondition(DynamoDbClient db) {
    db.putItem(
        b ->
            b.tableName(TABLE)
                .item(
                    Map.of(
                        "pk", s("a"), "sk", n(1), "v", s("hello"),
                        "tags", AttributeValue.builder().ss("x", "y").build())));
    Map<String, AttributeValue> got =
        db.getItem(b -> b.tableName(TABLE).key(key("a", 1)).consistentRead(true)).item();
    check("hello".equals(got.get("v").s()), "GetItem returns the item", got);
    check(got.get("tags").ss().size() == 2, "a string set comes back", got);
    check(
        !db.getItem(b -> b.tableName(TABLE).key(key("a", 2))).hasItem(),
        "GetItem of a missing item has no Item",
        null);
    try {
      db.putItem(
          b ->
              b.tableName(TABLE)
                  .item(Map.of("pk", s("a"), "sk", n(1), "v", s("again")))
                  .conditionExpression("attribute_not_exists(pk)")
                  .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD));
      fail("a PutItem whose condition fails succeeded");
    } catch (ConditionalCheckFailedException e) {
      check(e.hasItem() && "hello".equals(e.item().get("v").s()), "the failure's old item", e.item());
    }
    var updated =
        db.updateItem(
            b ->
                b.tableName(TABLE)
                    .key(key("a", 1))
                    .updateExpression("SET #v = :new ADD n :one")
                    .conditionExpression("#v = :old")
                    .expressionAttributeNames(Map.of("#v", "v"))
                    .expressionAttributeValues(
                        Map.of(":new", s("world"), ":old", s("hello"), ":one", n(1)))
                    .returnValues("ALL_NEW"));
    check("world".equals(updated.attributes().get("v").s()), "UpdateItem's new image", updated);
    check("1".equals(updated.attributes().get("n").n()), "ADD on a missing number", updated);
  }

  private static void queryInPages(DynamoDbClient db) {
    for (int i = 1; i <= 5; i++) {
      Map<String, AttributeValue> item = key("q", i);
      db.putItem(b -> b.tableName(TABLE).item(item));
    }
    QueryRequest q =
        QueryRequest.builder()
            .tableName(TABLE)
            .keyConditionExpression("pk = :p")
            .expressionAttributeValues(Map.of(":p", s("q")))
            .limit(2)
            .build();
    List<String> seen = new ArrayList<>();
    int pages = 0;
    for (QueryResponse page : db.queryPaginator(q)) {
      pages++;
      check(page.count() <= 2, "a page holds at most Limit items", page.count());
      page.items().forEach(it -> seen.add(it.get("sk").n()));
    }
    check(seen.equals(List.of("1", "2", "3", "4", "5")), "the pages hold every item in order", seen);
    check(pages == 3, "5 items at 2 a page are 3 pages", pages);
    QueryResponse desc =
        db.query(q.toBuilder().limit(null).scanIndexForward(false).select("COUNT").build());
    check(desc.count() == 5, "a COUNT query", desc.count());
  }

  private static void batches(DynamoDbClient db) {
    List<WriteRequest> puts = new ArrayList<>();
    for (int i = 0; i < 25; i++) {
      puts.add(
          WriteRequest.builder().putRequest(PutRequest.builder().item(key("b", i)).build()).build());
    }
    BatchWriteItemResponse w = db.batchWriteItem(b -> b.requestItems(Map.of(TABLE, puts)));
    check(w.unprocessedItems().isEmpty(), "BatchWriteItem processed everything", w);
    List<Map<String, AttributeValue>> keys = new ArrayList<>();
    for (int i = 0; i < 30; i += 3) {
      keys.add(key("b", i));
    }
    BatchGetItemResponse g =
        db.batchGetItem(
            b -> b.requestItems(Map.of(TABLE, KeysAndAttributes.builder().keys(keys).build())));
    check(g.unprocessedKeys().isEmpty(), "BatchGetItem answered every key", g);
    check(g.responses().get(TABLE).size() == 9, "BatchGetItem found the 9 that exist", g);
  }

  private static void transactions(DynamoDbClient db) {
    db.transactWriteItems(
        b ->
            b.transactItems(
                TransactWriteItem.builder()
                    .put(p -> p.tableName(TABLE).item(Map.of("pk", s("t"), "sk", n(1), "v", s("one"))))
                    .build(),
                TransactWriteItem.builder()
                    .put(p -> p.tableName(TABLE).item(Map.of("pk", s("t"), "sk", n(2), "v", s("two"))))
                    .build()));
    var got =
        db.transactGetItems(
            b ->
                b.transactItems(
                    TransactGetItem.builder().get(g -> g.tableName(TABLE).key(key("t", 1))).build(),
                    TransactGetItem.builder().get(g -> g.tableName(TABLE).key(key("t", 2))).build()));
    check(
        "two".equals(got.responses().get(1).item().get("v").s()), "TransactGetItems in order", got);
    try {
      db.transactWriteItems(
          b ->
              b.transactItems(
                  TransactWriteItem.builder()
                      .put(p -> p.tableName(TABLE).item(key("t", 3)))
                      .build(),
                  TransactWriteItem.builder()
                      .conditionCheck(
                          c ->
                              c.tableName(TABLE)
                                  .key(key("t", 1))
                                  .conditionExpression("attribute_not_exists(pk)")
                                  .returnValuesOnConditionCheckFailure(
                                      ReturnValuesOnConditionCheckFailure.ALL_OLD))
                      .build()));
      fail("a transaction whose condition fails succeeded");
    } catch (TransactionCanceledException e) {
      List<CancellationReason> r = e.cancellationReasons();
      check(r.size() == 2, "one cancellation reason per action", r);
      check("None".equals(r.get(0).code()), "the first action's reason is None", r);
      check("ConditionalCheckFailed".equals(r.get(1).code()), "the failed condition's reason", r);
      check("one".equals(r.get(1).item().get("v").s()), "the failed condition's old item", r);
    }
    check(
        !db.getItem(b -> b.tableName(TABLE).key(key("t", 3))).hasItem(),
        "a cancelled transaction wrote nothing",
        null);
  }

  private static void ttl(DynamoDbClient db) {
    TimeToLiveDescription before =
        db.describeTimeToLive(b -> b.tableName(TABLE)).timeToLiveDescription();
    check(
        before.timeToLiveStatus() == TimeToLiveStatus.DISABLED,
        "TTL is off on a new table",
        before);
    db.updateTimeToLive(
        b -> b.tableName(TABLE).timeToLiveSpecification(s -> s.attributeName("expires").enabled(true)));
    TimeToLiveDescription after =
        db.describeTimeToLive(b -> b.tableName(TABLE)).timeToLiveDescription();
    check(
        (after.timeToLiveStatus() == TimeToLiveStatus.ENABLED
                || after.timeToLiveStatus() == TimeToLiveStatus.ENABLING)
            && "expires".equals(after.attributeName()),
        "TTL is on, on the attribute asked for",
        after);
  }

  private static AttributeValue s(String v) {
    return AttributeValue.builder().s(v).build();
  }

  private static AttributeValue n(int v) {
    return AttributeValue.builder().n(Integer.toString(v)).build();
  }

  private static void check(boolean ok, String what, Object got) {
    if (!ok) {
      fail(what + (got == null ? "" : ": got " + got));
    }
  }

  private static void fail(String why) {
    System.err.println("java v2 smoke: " + why);
    System.exit(1);
  }
}
