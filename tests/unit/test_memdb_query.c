/* SPDX-License-Identifier: Apache-2.0 */
/* test_memdb_query.c -- Query and Scan on the memory backend: key
 * conditions, order, Limit before the filter, 1 MB pages, LastEvaluatedKey,
 * secondary indexes and projections, scan segments, 100k-item paging and
 * the per-item memory cost. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "backend/memory/internal.h"
#include "test_memdb.h"

#define STR_TABLE                                                                                  \
  "{'TableName':'str','BillingMode':'PAY_PER_REQUEST','AttributeDefinitions':[{'AttributeName':" \
  "'pk','AttributeType':'S'},{'AttributeName':'sk','AttributeType':'S'}],'KeySchema':"           \
  "[{'AttributeName':'pk','KeyType':'HASH'},{'AttributeName':'sk','KeyType':'RANGE'}]}"

/* Starts many calls at once and runs the loop until all completed. */
static void run_all(struct fx *f, enum tt_ddb_op op, json_t **reqs, size_t n) {
  struct tt_backend_call *c = calloc(n, sizeof(*c));
  struct fx_typed *t = calloc(n, sizeof(*t));
  int done = 0;
  for (size_t i = 0; i < n; i++) {
    c[i].op = op;
    ck_assert(fx_typed_in(&c[i], reqs[i], &t[i]));
    c[i].done = fx_done;
    c[i].arg = &done;
    ck_assert_int_eq(f->b->ops->start(f->b, &c[i]), 0);
  }
  uv_run(&f->loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(done, (int)n);
  for (size_t i = 0; i < n; i++) {
    ck_assert_msg(c[i].status == 0, "call %zu failed: %s", i, c[i].error.message);
    fx_typed_out(&c[i], &t[i]);
    json_decref(c[i].response);
    json_decref(reqs[i]);
  }
  free(t);
  free(c);
}

/* Puts items {pk: pk, sk: N i, v: N i%2, d: S of `pad` bytes} for i in [from, to). */
static void put_range(struct fx *f, const char *table, const char *pk, int from, int to,
                      size_t pad) {
  const size_t chunk = 2000;
  char *d = malloc(pad + 1);
  memset(d, 'd', pad);
  d[pad] = '\0';
  json_t **reqs = calloc(chunk, sizeof(*reqs));
  for (int i = from; i < to;) {
    size_t n = 0;
    for (; n < chunk && i < to; n++, i++) {
      char num[32], par[8];
      snprintf(num, sizeof(num), "%d", i);
      snprintf(par, sizeof(par), "%d", i % 2);
      reqs[n] = json_pack("{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}}", "TableName", table,
                          "Item", "pk", "S", pk, "sk", "N", num, "v", "N", par, "d", "S", d);
    }
    run_all(f, TT_DDB_PUT_ITEM, reqs, n);
  }
  free(reqs);
  free(d);
}

/* The sk numbers of a response's Items, as a comma list. */
static char *sks(const json_t *resp) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  size_t i;
  const json_t *it;
  json_array_foreach(json_object_get(resp, "Items"), i, it) {
    const char *s = json_string_value(json_object_get(json_object_get(it, "sk"), "N"));
    if (s == NULL)
      s = json_string_value(json_object_get(json_object_get(it, "sk"), "S"));
    tt_buf_printf(&b, "%s%s", i ? "," : "", s);
  }
  if (b.data == NULL)
    tt_buf_puts(&b, "");
  return tt_buf_steal(&b, NULL);
}

static void expect_sks(struct fx *f, const char *req, const char *want) {
  json_t *r = fx_ok(f, TT_DDB_QUERY, req);
  char *got = sks(r);
  ck_assert_str_eq(got, want);
  free(got);
  json_decref(r);
}

#define Q(cond, extra)                                                                             \
  "{'TableName':'cmp','KeyConditionExpression':'" cond "','ExpressionAttributeValues':{':p':"     \
  "{'S':'a'},':x':{'N':'3'},':y':{'N':'5'}}" extra "}"
#define Q0(cond, extra)                                                                            \
  "{'TableName':'cmp','KeyConditionExpression':'" cond "','ExpressionAttributeValues':{':p':"     \
  "{'S':'a'}}" extra "}"
#define Q1(cond, extra)                                                                            \
  "{'TableName':'cmp','KeyConditionExpression':'" cond "','ExpressionAttributeValues':{':p':"     \
  "{'S':'a'},':x':{'N':'3'}}" extra "}"

START_TEST(query_sort_key_conditions) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, COMPOSITE_TABLE);
  put_range(&f, "cmp", "a", 1, 11, 1);
  put_range(&f, "cmp", "b", 1, 4, 1);
  expect_sks(&f, Q0("pk = :p", ""), "1,2,3,4,5,6,7,8,9,10");
  expect_sks(&f, Q("pk = :p AND sk BETWEEN :x AND :y", ""), "3,4,5");
  expect_sks(&f, Q1("pk = :p AND sk < :x", ""), "1,2");
  expect_sks(&f, Q1("pk = :p AND sk <= :x", ""), "1,2,3");
  expect_sks(&f, Q1("pk = :p AND sk = :x", ""), "3");
  expect_sks(&f, Q1(":x < sk AND pk = :p", ",'ScanIndexForward':false"), "10,9,8,7,6,5,4");
  expect_sks(&f, Q1("pk = :p AND sk >= :x", ",'ScanIndexForward':false,'Limit':2"), "10,9");
  /* Numbers order numerically, not as text (10 > 9). */
  fx_expect(&f, TT_DDB_QUERY,
            "{'TableName':'cmp','KeyConditionExpression':'pk = :p AND sk > :n',"
            "'ExpressionAttributeValues':{':p':{'S':'a'},':n':{'N':'9.5'}},"
            "'ProjectionExpression':'sk'}",
            "{'Count':1,'ScannedCount':1,'Items':[{'sk':{'N':'10'}}]}");
  fx_expect(&f, TT_DDB_QUERY,
            "{'TableName':'cmp','KeyConditionExpression':'pk = :p',"
            "'ExpressionAttributeValues':{':p':{'S':'nobody'}}}",
            "{'Count':0,'ScannedCount':0,'Items':[]}");
  fx_teardown(&f);
}
END_TEST

START_TEST(query_begins_with_and_errors) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, STR_TABLE);
  fx_exec(&f, TT_DDB_CREATE_TABLE, COMPOSITE_TABLE);
  const char *keys[] = {"a", "ab", "abc", "abd", "ac", "b", "aa"};
  for (size_t i = 0; i < 7; i++) {
    char item[128];
    snprintf(item, sizeof(item), "{'pk':{'S':'p'},'sk':{'S':'%s'}}", keys[i]);
    fx_put_in(&f, "str", item);
  }
  const char *q = "{'TableName':'str','KeyConditionExpression':'pk = :p AND begins_with(sk, :b)',"
                  "'ExpressionAttributeValues':{':p':{'S':'p'},':b':{'S':'ab'}}%s}";
  char buf[512];
  snprintf(buf, sizeof(buf), q, "");
  expect_sks(&f, buf, "ab,abc,abd");
  snprintf(buf, sizeof(buf), q, ",'ScanIndexForward':false");
  expect_sks(&f, buf, "abd,abc,ab");
  fx_fail(&f, TT_DDB_QUERY,
          "{'TableName':'cmp','KeyConditionExpression':'pk = :p AND begins_with(sk, :b)',"
          "'ExpressionAttributeValues':{':p':{'S':'p'},':b':{'N':'1'}}}",
          "ValidationException",
          "Invalid KeyConditionExpression: Incorrect operand type for operator or function; "
          "operator or function: begins_with, operand type: N");
  fx_fail(&f, TT_DDB_QUERY,
          "{'TableName':'cmp','KeyConditionExpression':'pk = :p',"
          "'ExpressionAttributeValues':{':p':{'N':'1'}}}",
          "ValidationException",
          "One or more parameter values were invalid: Condition parameter type does not match "
          "schema type");
  fx_fail(&f, TT_DDB_QUERY,
          "{'TableName':'cmp','KeyConditionExpression':'zz = :p',"
          "'ExpressionAttributeValues':{':p':{'S':'a'}}}",
          "ValidationException", "Query condition missed key schema element: pk");
  /* No path may go into a key attribute. */
  fx_fail(&f, TT_DDB_QUERY, Q0("pk = :p", ",'ProjectionExpression':'pk.x'"),
          "ValidationException",
          "Key attributes must be scalars; list random access '[]' and map lookup '.' are not "
          "allowed: Key: pk");
  fx_fail(&f, TT_DDB_SCAN, "{'TableName':'cmp','FilterExpression':'sk[0] = :p',"
                           "'ExpressionAttributeValues':{':p':{'S':'a'}}}",
          "ValidationException",
          "Key attributes must be scalars; list random access '[]' and map lookup '.' are not "
          "allowed: Key: sk");
  /* The partition key value's type is checked before its operator. */
  fx_fail(&f, TT_DDB_QUERY,
          "{'TableName':'cmp','KeyConditionExpression':':n < pk',"
          "'ExpressionAttributeValues':{':n':{'N':'1'}}}",
          "ValidationException",
          "One or more parameter values were invalid: Condition parameter type does not match "
          "schema type");
  fx_fail(&f, TT_DDB_QUERY, "{'TableName':'cmp'}", "ValidationException",
          "Either the KeyConditions or KeyConditionExpression parameter must be specified in the "
          "request.");
  fx_fail(&f, TT_DDB_QUERY, Q0("pk = :p", ",'Limit':0"), "ValidationException",
          "1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: "
          "Member must have value greater than or equal to 1");
  fx_fail(&f, TT_DDB_QUERY, Q0("pk = :p", ",'IndexName':'nope'"), "ValidationException",
          "The table does not have the specified index: nope");
  fx_teardown(&f);
}
END_TEST

START_TEST(binary_sort_keys_order_unsigned) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE,
          "{'TableName':'bin','BillingMode':'PAY_PER_REQUEST','AttributeDefinitions':"
          "[{'AttributeName':'pk','AttributeType':'B'},{'AttributeName':'sk','AttributeType':"
          "'B'}],'KeySchema':[{'AttributeName':'pk','KeyType':'HASH'},{'AttributeName':'sk',"
          "'KeyType':'RANGE'}]}");
  /* 0xff, 0x01, 0x80 0x00, 0x80 */
  const char *sk[] = {"/w==", "AQ==", "gAA=", "gA=="};
  for (int i = 0; i < 4; i++) {
    char item[128];
    snprintf(item, sizeof(item), "{'pk':{'B':'AA=='},'sk':{'B':'%s'}}", sk[i]);
    fx_put_in(&f, "bin", item);
  }
  fx_expect(&f, TT_DDB_QUERY,
            "{'TableName':'bin','KeyConditionExpression':'pk = :p AND sk >= :s',"
            "'ExpressionAttributeValues':{':p':{'B':'AA=='},':s':{'B':'gA=='}},"
            "'ProjectionExpression':'sk'}",
            "{'Count':3,'ScannedCount':3,'Items':[{'sk':{'B':'gA=='}},{'sk':{'B':'gAA='}},"
            "{'sk':{'B':'/w=='}}]}");
  fx_fail(&f, TT_DDB_PUT_ITEM, "{'TableName':'bin','Item':{'pk':{'B':''},'sk':{'B':'AA=='}}}",
          "ValidationException",
          "One or more parameter values are not valid. The AttributeValue for a key attribute "
          "cannot contain an empty binary value. Key: pk");
  fx_teardown(&f);
}
END_TEST

START_TEST(query_limit_counts_before_filter) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, COMPOSITE_TABLE);
  put_range(&f, "cmp", "a", 1, 11, 1);
  /* v = sk % 2: the filter keeps odd sort keys. */
  const char *page1 = "{'TableName':'cmp','KeyConditionExpression':'pk = :p','FilterExpression':"
                      "'v = :one','ExpressionAttributeValues':{':p':{'S':'a'},':one':{'N':'1'}},"
                      "'Limit':4,'ProjectionExpression':'sk'}";
  fx_expect(&f, TT_DDB_QUERY, page1,
            "{'Count':2,'ScannedCount':4,'Items':[{'sk':{'N':'1'}},{'sk':{'N':'3'}}],"
            "'LastEvaluatedKey':{'pk':{'S':'a'},'sk':{'N':'4'}}}");
  const char *page2 = "{'TableName':'cmp','KeyConditionExpression':'pk = :p','FilterExpression':"
                      "'v = :one','ExpressionAttributeValues':{':p':{'S':'a'},':one':{'N':'1'}},"
                      "'Limit':4,'ProjectionExpression':'sk','ExclusiveStartKey':{'pk':{'S':'a'},"
                      "'sk':{'N':'%s'}}}";
  char buf[512];
  snprintf(buf, sizeof(buf), page2, "4");
  fx_expect(&f, TT_DDB_QUERY, buf,
            "{'Count':2,'ScannedCount':4,'Items':[{'sk':{'N':'5'}},{'sk':{'N':'7'}}],"
            "'LastEvaluatedKey':{'pk':{'S':'a'},'sk':{'N':'8'}}}");
  snprintf(buf, sizeof(buf), page2, "8");
  fx_expect(&f, TT_DDB_QUERY, buf,
            "{'Count':1,'ScannedCount':2,'Items':[{'sk':{'N':'9'}}]}");
  /* A start key that does not exist any more still positions the page. */
  snprintf(buf, sizeof(buf), page2, "8.5");
  expect_sks(&f, buf, "9");
  /* A Query's start key of the wrong size, or without one of the keys it
   * reads by, is invalid; one of another type does not match the schema. */
  fx_fail(&f, TT_DDB_QUERY, Q0("pk = :p", ",'ExclusiveStartKey':{'pk':{'S':'a'}}"),
          "ValidationException", "The provided starting key is invalid");
  fx_fail(&f, TT_DDB_QUERY,
          Q0("pk = :p", ",'ExclusiveStartKey':{'pk':{'S':'a'},'x':{'N':'1'}}"),
          "ValidationException", "The provided starting key is invalid");
  fx_fail(&f, TT_DDB_QUERY,
          Q0("pk = :p", ",'ExclusiveStartKey':{'pk':{'S':'a'},'sk':{'S':'1'}}"),
          "ValidationException", "The provided key element does not match the schema");
  /* The partition key's condition is checked before the sort key's place
   * in the start key. */
  fx_fail(&f, TT_DDB_QUERY,
          Q0("zz = :p", ",'ExclusiveStartKey':{'pk':{'S':'a'},'sk':{'S':'1'}}"),
          "ValidationException", "Query condition missed key schema element: pk");
  json_t *r = fx_ok(&f, TT_DDB_QUERY, Q0("pk = :p", ",'Select':'COUNT','Limit':10"));
  /* Limit reached exactly: DynamoDB still returns LastEvaluatedKey. */
  fx_assert_json(r, "{'Count':10,'ScannedCount':10,'LastEvaluatedKey':{'pk':{'S':'a'},'sk':"
                    "{'N':'10'}}}");
  json_decref(r);
  fx_teardown(&f);
}
END_TEST

START_TEST(query_one_megabyte_pages) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, COMPOSITE_TABLE);
  /* Each item: pk(2+1) + sk(2+2) + v(1+2) + d(1+100000) = 100011 bytes; the
   * page stops after the item that reaches 1 MB: 11 items. */
  put_range(&f, "cmp", "a", 0, 15, 100000);
  json_t *r = fx_ok(&f, TT_DDB_QUERY, Q0("pk = :p", ",'Select':'COUNT'"));
  fx_assert_json(r, "{'Count':11,'ScannedCount':11,'LastEvaluatedKey':{'pk':{'S':'a'},'sk':"
                    "{'N':'10'}}}");
  json_decref(r);
  r = fx_ok(&f, TT_DDB_SCAN, "{'TableName':'cmp','Select':'COUNT','ExclusiveStartKey':"
                             "{'pk':{'S':'a'},'sk':{'N':'10'}}}");
  fx_assert_json(r, "{'Count':4,'ScannedCount':4}");
  json_decref(r);
  fx_teardown(&f);
}
END_TEST

/* A Query's or Scan's ConsumedCapacity, by path ("Table", or
 * "LocalSecondaryIndexes.lsi"'s CapacityUnits). */
static double cap_units(json_t *resp, const char *group, const char *index) {
  json_t *c = json_object_get(resp, "ConsumedCapacity");
  ck_assert_ptr_nonnull(c);
  if (group)
    c = json_object_get(c, group);
  if (index)
    c = json_object_get(c, index);
  ck_assert_ptr_nonnull(c);
  return json_number_value(json_object_get(c, "CapacityUnits"));
}

START_TEST(query_and_scan_consumed_capacity) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, FULL_TABLE);
  char big[5200], buf[6000];
  memset(big, 'z', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  snprintf(buf, sizeof(buf), "{'pk':{'S':'p'},'sk':{'N':'1'},'l':{'S':'m'},'a':{'S':'A'},"
                             "'z':{'S':'%s'}}", big);
  fx_put(&f, buf);
  fx_put(&f, "{'pk':{'S':'p'},'sk':{'N':'2'},'l':{'S':'n'}}");
  /* About 5.2 KB read: two 4 KB units, halved unless consistent. */
  json_t *r = fx_ok(&f, TT_DDB_QUERY,
                    "{'TableName':'full','KeyConditionExpression':'pk = :p',"
                    "'ExpressionAttributeValues':{':p':{'S':'p'}},"
                    "'ReturnConsumedCapacity':'TOTAL','ConsistentRead':true}");
  ck_assert_double_eq(cap_units(r, NULL, NULL), 2.0);
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "ConsumedCapacity"),
                                                     "TableName")),
                   "full");
  ck_assert_ptr_null(json_object_get(json_object_get(r, "ConsumedCapacity"), "Table"));
  json_decref(r);
  /* The filter does not change what was read. */
  r = fx_ok(&f, TT_DDB_QUERY,
            "{'TableName':'full','KeyConditionExpression':'pk = :p','FilterExpression':'a = :n',"
            "'ExpressionAttributeValues':{':p':{'S':'p'},':n':{'S':'none'}},"
            "'ReturnConsumedCapacity':'INDEXES'}");
  ck_assert_double_eq(cap_units(r, NULL, NULL), 1.0);
  ck_assert_double_eq(cap_units(r, "Table", NULL), 1.0);
  json_decref(r);
  /* A local index read for ALL_ATTRIBUTES: its projections (one unit) and
   * the items fetched from the table (two). */
  r = fx_ok(&f, TT_DDB_QUERY,
            "{'TableName':'full','IndexName':'lsi','KeyConditionExpression':'pk = :p',"
            "'ExpressionAttributeValues':{':p':{'S':'p'}},'Select':'ALL_ATTRIBUTES',"
            "'ConsistentRead':true,'ReturnConsumedCapacity':'INDEXES'}");
  ck_assert_double_eq(cap_units(r, NULL, NULL), 3.0);
  ck_assert_double_eq(cap_units(r, "Table", NULL), 2.0);
  ck_assert_double_eq(cap_units(r, "LocalSecondaryIndexes", "lsi"), 1.0);
  json_decref(r);
  /* Projected attributes only: the index alone. */
  r = fx_ok(&f, TT_DDB_QUERY,
            "{'TableName':'full','IndexName':'lsi','KeyConditionExpression':'pk = :p',"
            "'ExpressionAttributeValues':{':p':{'S':'p'}},'ReturnConsumedCapacity':'INDEXES'}");
  ck_assert_double_eq(cap_units(r, NULL, NULL), 0.5);
  ck_assert_double_eq(cap_units(r, "Table", NULL), 0.0);
  ck_assert_double_eq(cap_units(r, "LocalSecondaryIndexes", "lsi"), 0.5);
  json_decref(r);
  /* Nothing read still counts one unit; a global index by its name. */
  r = fx_ok(&f, TT_DDB_SCAN,
            "{'TableName':'full','IndexName':'gsi','ReturnConsumedCapacity':'INDEXES'}");
  ck_assert_double_eq(cap_units(r, NULL, NULL), 0.5);
  ck_assert_double_eq(cap_units(r, "GlobalSecondaryIndexes", "gsi"), 0.5);
  json_decref(r);
  r = fx_ok(&f, TT_DDB_SCAN, "{'TableName':'full','ReturnConsumedCapacity':'NONE'}");
  ck_assert_ptr_null(json_object_get(r, "ConsumedCapacity"));
  json_decref(r);
  fx_teardown(&f);
}
END_TEST

START_TEST(gsi_sparse_keys_only) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, FULL_TABLE);
  fx_put(&f, "{'pk':{'S':'p1'},'sk':{'N':'1'},'g':{'S':'x'},'a':{'S':'A'},'z':{'S':'Z'}}");
  fx_put(&f, "{'pk':{'S':'p2'},'sk':{'N':'2'},'g':{'S':'x'},'a':{'S':'A'}}");
  fx_put(&f, "{'pk':{'S':'p3'},'sk':{'N':'3'},'a':{'S':'no g: not in the index'}}");
  fx_put(&f, "{'pk':{'S':'p4'},'sk':{'N':'4'},'g':{'S':'y'}}");
  json_t *r = fx_ok(&f, TT_DDB_QUERY,
                    "{'TableName':'full','IndexName':'gsi','KeyConditionExpression':'g = :g',"
                    "'ExpressionAttributeValues':{':g':{'S':'x'}},'Limit':1}");
  /* Equal index keys: ordered by the hash of the table keys, as DynamoDB
   * orders them (p2/2 hashes below p1/1). */
  fx_assert_json(r, "{'Count':1,'ScannedCount':1,'Items':[{'g':{'S':'x'},'pk':{'S':'p2'},'sk':"
                    "{'N':'2'}}],'LastEvaluatedKey':{'g':{'S':'x'},'pk':{'S':'p2'},'sk':{'N':"
                    "'2'}}}");
  json_t *req = fx_json("{'TableName':'full','IndexName':'gsi','KeyConditionExpression':'g = :g',"
                        "'ExpressionAttributeValues':{':g':{'S':'x'}}}");
  json_object_set(req, "ExclusiveStartKey", json_object_get(r, "LastEvaluatedKey"));
  json_decref(r);
  json_t *resp;
  ck_assert_int_eq(fx_run(&f, TT_DDB_QUERY, req, &resp), 0);
  fx_assert_json(resp, "{'Count':1,'ScannedCount':1,'Items':[{'g':{'S':'x'},'pk':{'S':'p1'},"
                       "'sk':{'N':'1'}}]}");
  json_decref(resp);
  json_decref(req);
  r = fx_ok(&f, TT_DDB_SCAN, "{'TableName':'full','IndexName':'gsi','Select':'COUNT'}");
  fx_assert_json(r, "{'Count':3,'ScannedCount':3}");
  json_decref(r);
  fx_fail(&f, TT_DDB_QUERY,
          "{'TableName':'full','IndexName':'gsi','KeyConditionExpression':'g = :g',"
          "'ExpressionAttributeValues':{':g':{'S':'x'}},'ConsistentRead':true}",
          "ValidationException", "Consistent reads are not supported on global secondary indexes");
  fx_fail(&f, TT_DDB_QUERY,
          "{'TableName':'full','IndexName':'gsi','KeyConditionExpression':'g = :g',"
          "'ExpressionAttributeValues':{':g':{'S':'x'}},'Select':'ALL_ATTRIBUTES'}",
          "ValidationException",
          "One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not "
          "supported for global secondary index gsi because its projection type is not ALL");
  /* Changing the index key moves the item in the index; removing it drops it. */
  fx_exec(&f, TT_DDB_UPDATE_ITEM,
          "{'TableName':'full','Key':{'pk':{'S':'p1'},'sk':{'N':'1'}},'UpdateExpression':"
          "'SET g = :y','ExpressionAttributeValues':{':y':{'S':'y'}}}");
  fx_exec(&f, TT_DDB_UPDATE_ITEM,
          "{'TableName':'full','Key':{'pk':{'S':'p2'},'sk':{'N':'2'}},'UpdateExpression':"
          "'REMOVE g'}");
  r = fx_ok(&f, TT_DDB_QUERY,
            "{'TableName':'full','IndexName':'gsi','KeyConditionExpression':'g = :g',"
            "'ExpressionAttributeValues':{':g':{'S':'y'}},'ProjectionExpression':'pk'}");
  /* p4/4 hashes below p1/1. */
  fx_assert_json(r, "{'Count':2,'ScannedCount':2,'Items':[{'pk':{'S':'p4'}},{'pk':{'S':'p1'}}]}");
  json_decref(r);
  r = fx_ok(&f, TT_DDB_QUERY,
            "{'TableName':'full','IndexName':'gsi','KeyConditionExpression':'g = :g',"
            "'ExpressionAttributeValues':{':g':{'S':'x'}},'Select':'COUNT'}");
  fx_assert_json(r, "{'Count':0,'ScannedCount':0}");
  json_decref(r);
  fx_teardown(&f);
}
END_TEST

START_TEST(lsi_projection_and_fetch) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, FULL_TABLE);
  fx_put(&f, "{'pk':{'S':'p'},'sk':{'N':'1'},'l':{'S':'m'},'a':{'S':'A'},'z':{'S':'Z'}}");
  fx_put(&f, "{'pk':{'S':'p'},'sk':{'N':'2'},'l':{'S':'k'},'a':{'S':'B'}}");
  fx_put(&f, "{'pk':{'S':'p'},'sk':{'N':'3'}}");
  const char *q = "{'TableName':'full','IndexName':'lsi','KeyConditionExpression':'pk = :p',"
                  "'ExpressionAttributeValues':{':p':{'S':'p'}}%s}";
  char buf[512];
  snprintf(buf, sizeof(buf), q, "");
  fx_expect(&f, TT_DDB_QUERY, buf,
            "{'Count':2,'ScannedCount':2,'Items':[{'a':{'S':'B'},'l':{'S':'k'},'pk':{'S':'p'},"
            "'sk':{'N':'2'}},{'a':{'S':'A'},'l':{'S':'m'},'pk':{'S':'p'},'sk':{'N':'1'}}]}");
  snprintf(buf, sizeof(buf), q, ",'Select':'ALL_ATTRIBUTES','ScanIndexForward':false,'Limit':1");
  fx_expect(&f, TT_DDB_QUERY, buf,
            "{'Count':1,'ScannedCount':1,'Items':[{'a':{'S':'A'},'l':{'S':'m'},'pk':{'S':'p'},"
            "'sk':{'N':'1'},'z':{'S':'Z'}}],'LastEvaluatedKey':{'l':{'S':'m'},'pk':{'S':'p'},"
            "'sk':{'N':'1'}}}");
  fx_fail(&f, TT_DDB_QUERY,
          "{'TableName':'full','KeyConditionExpression':'pk = :p','ExpressionAttributeValues':"
          "{':p':{'S':'p'}},'Select':'ALL_PROJECTED_ATTRIBUTES'}",
          "ValidationException",
          "One or more parameter values were invalid: Select type ALL_PROJECTED_ATTRIBUTES is "
          "not supported when querying without an IndexName");
  fx_teardown(&f);
}
END_TEST

START_TEST(scan_segments_partition_the_table) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, COMPOSITE_TABLE);
  for (int p = 0; p < 50; p++) {
    char pk[16];
    snprintf(pk, sizeof(pk), "p%d", p);
    put_range(&f, "cmp", pk, 0, 20, 1);
  }
  int *seen = calloc(50 * 20, sizeof(int));
  size_t total = 0;
  for (int seg = 0; seg < 7; seg++) {
    json_t *esk = NULL;
    for (;;) {
      char buf[256];
      snprintf(buf, sizeof(buf),
               "{'TableName':'cmp','Segment':%d,'TotalSegments':7,'Limit':33,"
               "'FilterExpression':'v = :z','ExpressionAttributeValues':{':z':{'N':'0'}}}",
               seg);
      json_t *req = fx_json(buf), *resp;
      if (esk)
        json_object_set_new(req, "ExclusiveStartKey", esk);
      ck_assert_int_eq(fx_run(&f, TT_DDB_SCAN, req, &resp), 0);
      json_decref(req);
      size_t i;
      json_t *it;
      json_array_foreach(json_object_get(resp, "Items"), i, it) {
        const char *pks = json_string_value(json_object_get(json_object_get(it, "pk"), "S"));
        const char *sks_ = json_string_value(json_object_get(json_object_get(it, "sk"), "N"));
        int p = (int)strtol(pks + 1, NULL, 10);
        int s = (int)strtol(sks_, NULL, 10);
        ck_assert_int_eq(s % 2, 0);
        seen[p * 20 + s]++;
        total++;
      }
      esk = json_incref(json_object_get(resp, "LastEvaluatedKey"));
      json_decref(resp);
      if (esk == NULL)
        break;
    }
  }
  ck_assert_uint_eq(total, 50 * 10);
  for (int i = 0; i < 50 * 20; i++)
    ck_assert_int_eq(seen[i], i % 2 == 0 ? 1 : 0);
  free(seen);
  /* A start key from segment 1 of 2 in segment 0: refused, before the
   * key-path check of the filter. */
  json_t *one =
      fx_ok(&f, TT_DDB_SCAN, "{'TableName':'cmp','Segment':1,'TotalSegments':2,'Limit':1}");
  json_t *req = fx_json("{'TableName':'cmp','Segment':0,'TotalSegments':2,"
                        "'FilterExpression':'attribute_exists(pk.x)'}"), *resp = NULL;
  json_object_set(req, "ExclusiveStartKey", json_object_get(one, "LastEvaluatedKey"));
  ck_assert_int_eq(fx_run(&f, TT_DDB_SCAN, req, &resp), -1);
  ck_assert_str_eq(f.err.message, "The provided starting key is invalid: Invalid "
                                  "ExclusiveStartKey. Please use ExclusiveStartKey with correct "
                                  "Segment. TotalSegments: 2 Segment: 0");
  json_decref(req);
  json_decref(one);
  fx_fail(&f, TT_DDB_SCAN, "{'TableName':'cmp','Segment':1}", "ValidationException",
          "The TotalSegments parameter is required but was not present in the request when "
          "Segment parameter is present");
  fx_fail(&f, TT_DDB_SCAN, "{'TableName':'cmp','Segment':2,'TotalSegments':2}",
          "ValidationException",
          "The Segment parameter is zero-based and must be less than parameter TotalSegments: "
          "Segment: 2 is not less than TotalSegments: 2");
  fx_teardown(&f);
}
END_TEST

/* Pages through every item with `base` (a Query or Scan) and checks each
 * comes back exactly once and, within a partition, in sort-key order. */
static void page_all(struct fx *f, enum tt_ddb_op op, const char *base, int n, bool desc,
                     size_t *pages) {
  char *seen = calloc((size_t)n, 1);
  json_t *esk = NULL;
  long prev = desc ? n : -1;
  int total = 0;
  *pages = 0;
  do {
    json_t *req = fx_json(base), *resp;
    if (esk)
      json_object_set_new(req, "ExclusiveStartKey", esk);
    ck_assert_int_eq(fx_run(f, op, req, &resp), 0);
    json_decref(req);
    (*pages)++;
    size_t i;
    json_t *it;
    json_array_foreach(json_object_get(resp, "Items"), i, it) {
      long s = strtol(json_string_value(json_object_get(json_object_get(it, "sk"), "N")), NULL, 10);
      ck_assert(s >= 0 && s < n);
      ck_assert_int_eq(seen[s], 0);
      seen[s] = 1;
      if (op == TT_DDB_QUERY) {
        ck_assert(desc ? s < prev : s > prev);
        prev = s;
      }
      total++;
    }
    esk = json_incref(json_object_get(resp, "LastEvaluatedKey"));
    json_decref(resp);
  } while (esk);
  ck_assert_int_eq(total, n);
  free(seen);
}

START_TEST(paging_100k_items_exactly_once_in_order) {
  struct fx f;
  const int n = 100000;
  size_t pages;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, COMPOSITE_TABLE);
  /* One partition of 100k items (~123 bytes each): 1 MB pages. */
  put_range(&f, "cmp", "p", 0, n, 110);
  page_all(&f, TT_DDB_QUERY,
           "{'TableName':'cmp','KeyConditionExpression':'pk = :p','ExpressionAttributeValues':"
           "{':p':{'S':'p'}},'ProjectionExpression':'sk'}",
           n, false, &pages);
  /* pk 3 + sk <= 6 + v 3 + d 111 bytes: 8525 items per 1 MB page. */
  ck_assert_uint_eq(pages, 12);
  page_all(&f, TT_DDB_QUERY,
           "{'TableName':'cmp','KeyConditionExpression':'pk = :p','ExpressionAttributeValues':"
           "{':p':{'S':'p'}},'ProjectionExpression':'sk','ScanIndexForward':false,'Limit':7777}",
           n, true, &pages);
  ck_assert_uint_eq(pages, 13); /* 12 full pages + 6676 items; the 13th has no LEK */
  page_all(&f, TT_DDB_SCAN, "{'TableName':'cmp','ProjectionExpression':'sk','Limit':5000}", n,
           false, &pages);
  fx_teardown(&f);
}
END_TEST

START_TEST(memory_per_item) {
  struct fx f;
  const int n = 100000;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  /* 100k items of ~200 bytes, each its own partition (the worst case for
   * per-partition overhead). */
  const size_t chunk = 2000;
  json_t **reqs = calloc(chunk, sizeof(*reqs));
  char pad[177];
  memset(pad, 'x', 176);
  pad[176] = '\0';
  for (int i = 0; i < n;) {
    size_t k = 0;
    for (; k < chunk && i < n; k++, i++) {
      char pk[32];
      snprintf(pk, sizeof(pk), "user#%08d", i);
      reqs[k] = json_pack("{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}}}", "TableName", "tbl", "Item",
                          "pk", "S", pk, "n", "N", "12345", "data", "S", pad);
    }
    run_all(&f, TT_DDB_PUT_ITEM, reqs, k);
  }
  free(reqs);
  struct memdb *m = f.b->impl;
  struct memdb_table *t = memdb_table_get(m, "tbl");
  ck_assert_uint_eq(t->store.count, (size_t)n);
  double item_bytes = (double)t->bytes / n;
  double mem = (double)memdb_table_mem(t) / n;
  /* The slab (slab.c) adds no per-object header: what is allocated is the
   * item (8-byte rounded), its 24-byte partition and its slot in the
   * table's sequence of partitions; the target is the item's DynamoDB size
   * plus 64 bytes. */
  fprintf(stderr, "memdb: %.1f DynamoDB bytes/item, %.1f allocated bytes/item\n", item_bytes,
          mem);
  ck_assert(item_bytes > 195 && item_bytes < 205);
  ck_assert(mem < item_bytes + 64);
  fx_teardown(&f);
}
END_TEST

int main(void) {
  Suite *s = suite_create("memdb_query");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, query_sort_key_conditions);
  tcase_add_test(tc, query_begins_with_and_errors);
  tcase_add_test(tc, binary_sort_keys_order_unsigned);
  tcase_add_test(tc, query_limit_counts_before_filter);
  tcase_add_test(tc, query_one_megabyte_pages);
  tcase_add_test(tc, gsi_sparse_keys_only);
  tcase_add_test(tc, query_and_scan_consumed_capacity);
  tcase_add_test(tc, lsi_projection_and_fetch);
  tcase_add_test(tc, scan_segments_partition_the_table);
  tcase_add_test(tc, paging_100k_items_exactly_once_in_order);
  tcase_add_test(tc, memory_per_item);
  suite_add_tcase(s, tc);
  return fx_run_suite(s);
}
