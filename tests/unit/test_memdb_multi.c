/* SPDX-License-Identifier: Apache-2.0 */
/* test_memdb_multi.c -- BatchGetItem, BatchWriteItem, TransactWriteItems and
 * TransactGetItems on the memory backend: limits, duplicate rules,
 * all-or-nothing with cancellation reasons, client-token idempotency. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "test_memdb.h"

static int64_t fake_now = 1700000000;
static int64_t fake_clock(void *arg) {
  (void)arg;
  return fake_now;
}

/* {"RequestItems":{"tbl":{"Keys":[{pk:k0}..{pk:k(n-1)}]}}} */
static char *batch_get_keys(int n, bool dup) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  tt_buf_puts(&b, "{'RequestItems':{'tbl':{'Keys':[");
  for (int i = 0; i < n; i++)
    tt_buf_printf(&b, "%s{'pk':{'S':'k%d'}}", i ? "," : "", dup && i == n - 1 ? 0 : i);
  tt_buf_puts(&b, "]}}}");
  return tt_buf_steal(&b, NULL);
}

START_TEST(batch_get_rules_and_responses) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  fx_exec(&f, TT_DDB_CREATE_TABLE, COMPOSITE_TABLE);
  fx_put(&f, "{'pk':{'S':'k1'},'v':{'N':'1'},'w':{'S':'x'}}");
  fx_put(&f, "{'pk':{'S':'k2'},'v':{'N':'2'}}");
  fx_put_in(&f, "cmp", "{'pk':{'S':'a'},'sk':{'N':'1'}}");
  fx_expect(&f, TT_DDB_BATCH_GET_ITEM,
            "{'RequestItems':{'tbl':{'Keys':[{'pk':{'S':'k1'}},{'pk':{'S':'k3'}},{'pk':{'S':'k2'}}],"
            "'ProjectionExpression':'#v','ExpressionAttributeNames':{'#v':'v'},"
            "'ConsistentRead':true},'cmp':{'Keys':[{'pk':{'S':'a'},'sk':{'N':'1'}}]}}}",
            "{'Responses':{'tbl':[{'v':{'N':'1'}},{'v':{'N':'2'}}],'cmp':[{'pk':{'S':'a'},'sk':"
            "{'N':'1'}}]},'UnprocessedKeys':{}}");
  char *req = batch_get_keys(101, false);
  fx_fail(&f, TT_DDB_BATCH_GET_ITEM, req, "ValidationException",
          "Too many items requested for the BatchGetItem call");
  free(req);
  req = batch_get_keys(5, true);
  fx_fail(&f, TT_DDB_BATCH_GET_ITEM, req, "ValidationException",
          "Provided list of item keys contains duplicates");
  free(req);
  req = batch_get_keys(100, false);
  json_t *r = fx_ok(&f, TT_DDB_BATCH_GET_ITEM, req);
  ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(r, "Responses"), "tbl")), 2);
  json_decref(r);
  free(req);
  fx_fail(&f, TT_DDB_BATCH_GET_ITEM, "{'RequestItems':{'nope':{'Keys':[{'pk':{'S':'a'}}]}}}",
          "ResourceNotFoundException", "Requested resource not found");
  /* Repeated keys are refused before the table is looked up; the order of
   * a key's attributes does not matter. */
  fx_fail(&f, TT_DDB_BATCH_GET_ITEM,
          "{'RequestItems':{'nope':{'Keys':[{'a':{'S':'x'},'b':{'N':'1'}},"
          "{'b':{'N':'1.0'},'a':{'S':'x'}}]}}}",
          "ValidationException", "Provided list of item keys contains duplicates");
  fx_fail(&f, TT_DDB_BATCH_GET_ITEM, "{'RequestItems':{'tbl':{'Keys':[{'id':{'S':'a'}}]}}}",
          "ValidationException", "The provided key element does not match the schema");
  fx_teardown(&f);
}
END_TEST

START_TEST(batch_get_16mb_leaves_keys_unprocessed) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  /* 50 items of ~390 KB: 16 MB are reached after 43 items. */
  size_t big = 390 * 1024;
  char *pad = malloc(big + 1);
  memset(pad, 'x', big);
  pad[big] = '\0';
  struct tt_buf b;
  tt_buf_init(&b, 0);
  for (int i = 0; i < 50; i++) {
    tt_buf_reset(&b);
    tt_buf_printf(&b, "{'pk':{'S':'k%d'},'d':{'S':'%s'}}", i, pad);
    fx_put(&f, b.data);
  }
  free(pad);
  tt_buf_free(&b);
  char *req = batch_get_keys(50, false);
  json_t *req_j = fx_json(req), *resp;
  /* Ask only for the key so the response stays small to compare. */
  json_object_set_new(json_object_get(json_object_get(req_j, "RequestItems"), "tbl"),
                      "ProjectionExpression", json_string("pk"));
  ck_assert_int_eq(fx_run(&f, TT_DDB_BATCH_GET_ITEM, req_j, &resp), 0);
  size_t got = json_array_size(json_object_get(json_object_get(resp, "Responses"), "tbl"));
  const json_t *u = json_object_get(json_object_get(resp, "UnprocessedKeys"), "tbl");
  size_t left = json_array_size(json_object_get(u, "Keys"));
  /* ceil(16 MiB / 399,366 bytes) = 43 items read before the limit. */
  ck_assert_uint_eq(got, 43);
  ck_assert_uint_eq(left, 7);
  fx_assert_json(json_array_get(json_object_get(u, "Keys"), 0), "{'pk':{'S':'k43'}}");
  ck_assert_str_eq(json_string_value(json_object_get(u, "ProjectionExpression")), "pk");
  json_decref(resp);
  json_decref(req_j);
  free(req);
  fx_teardown(&f);
}
END_TEST

START_TEST(batch_write_rules_and_effects) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  fx_put(&f, "{'pk':{'S':'gone'}}");
  fx_expect(&f, TT_DDB_BATCH_WRITE_ITEM,
            "{'RequestItems':{'tbl':[{'PutRequest':{'Item':{'pk':{'S':'a'},'v':{'N':'1'}}}},"
            "{'PutRequest':{'Item':{'pk':{'S':'b'}}}},{'DeleteRequest':{'Key':{'pk':{'S':'gone'}}}}"
            "]}}",
            "{'UnprocessedItems':{}}");
  fx_expect(&f, TT_DDB_GET_ITEM, "{'TableName':'tbl','Key':{'pk':{'S':'a'}}}",
            "{'Item':{'pk':{'S':'a'},'v':{'N':'1'}}}");
  fx_expect(&f, TT_DDB_GET_ITEM, "{'TableName':'tbl','Key':{'pk':{'S':'gone'}}}", "{}");
  fx_fail(&f, TT_DDB_BATCH_WRITE_ITEM,
          "{'RequestItems':{'tbl':[{'PutRequest':{'Item':{'pk':{'S':'x'}}}},"
          "{'DeleteRequest':{'Key':{'pk':{'S':'x'}}}}]}}",
          "ValidationException", "Provided list of item keys contains duplicates");
  struct tt_buf b;
  tt_buf_init(&b, 0);
  tt_buf_puts(&b, "{'RequestItems':{'tbl':[");
  for (int i = 0; i < 26; i++)
    tt_buf_printf(&b, "%s{'PutRequest':{'Item':{'pk':{'S':'n%d'}}}}", i ? "," : "", i);
  tt_buf_puts(&b, "]}}");
  fx_fail(&f, TT_DDB_BATCH_WRITE_ITEM, b.data, "ValidationException",
          "1 validation error detected: Value at 'requestItems' failed to satisfy constraint: "
          "Map value must satisfy constraint: [Member must have length less than or equal to 25, "
          "Member must have length greater than or equal to 1]");
  tt_buf_free(&b);
  /* One invalid request rejects the whole batch: nothing is written. */
  fx_fail(&f, TT_DDB_BATCH_WRITE_ITEM,
          "{'RequestItems':{'tbl':[{'PutRequest':{'Item':{'pk':{'S':'ok'}}}},"
          "{'PutRequest':{'Item':{'v':{'S':'no key'}}}}]}}",
          "ValidationException", "The provided key element does not match the schema");
  fx_expect(&f, TT_DDB_GET_ITEM, "{'TableName':'tbl','Key':{'pk':{'S':'ok'}}}", "{}");
  fx_teardown(&f);
}
END_TEST

#define TX_OK                                                                                      \
  "{'TransactItems':[{'Put':{'TableName':'tbl','Item':{'pk':{'S':'a'},'v':{'N':'1'}}}},"          \
  "{'Update':{'TableName':'tbl','Key':{'pk':{'S':'c'}},'UpdateExpression':'ADD n :one',"         \
  "'ExpressionAttributeValues':{':one':{'N':'1'}}}},"                                             \
  "{'ConditionCheck':{'TableName':'tbl','Key':{'pk':{'S':'b'}},"                                  \
  "'ConditionExpression':'attribute_exists(pk)'}},"                                               \
  "{'Delete':{'TableName':'tbl','Key':{'pk':{'S':'d'}}}}]}"

START_TEST(transact_write_all_or_nothing) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  fx_put(&f, "{'pk':{'S':'d'}}");
  /* 'b' does not exist: the check fails, nothing is written. */
  struct tt_backend_error *e = fx_fail(
      &f, TT_DDB_TRANSACT_WRITE_ITEMS, TX_OK, "TransactionCanceledException",
      "Transaction cancelled, please refer cancellation reasons for specific reasons [None, "
      "None, ConditionalCheckFailed, None]");
  fx_assert_json(json_object_get(e->body, "CancellationReasons"),
                 "[{'Code':'None'},{'Code':'None'},{'Code':'ConditionalCheckFailed','Message':"
                 "'The conditional request failed'},{'Code':'None'}]");
  fx_expect(&f, TT_DDB_GET_ITEM, "{'TableName':'tbl','Key':{'pk':{'S':'a'}}}", "{}");
  fx_expect(&f, TT_DDB_GET_ITEM, "{'TableName':'tbl','Key':{'pk':{'S':'d'}}}",
            "{'Item':{'pk':{'S':'d'}}}");
  fx_put(&f, "{'pk':{'S':'b'},'x':{'S':'y'}}");
  fx_expect(&f, TT_DDB_TRANSACT_WRITE_ITEMS, TX_OK, "{}");
  fx_expect(&f, TT_DDB_TRANSACT_GET_ITEMS,
            "{'TransactItems':[{'Get':{'TableName':'tbl','Key':{'pk':{'S':'d'}}}},"
            "{'Get':{'TableName':'tbl','Key':{'pk':{'S':'c'}}}},"
            "{'Get':{'TableName':'tbl','Key':{'pk':{'S':'a'}},'ProjectionExpression':'#v',"
            "'ExpressionAttributeNames':{'#v':'v'}}}]}",
            "{'Responses':[{},{'Item':{'n':{'N':'1'},'pk':{'S':'c'}}},{'Item':{'v':{'N':'1'}}}]}");
  /* ALL_OLD on a failed check returns the item in the reason. */
  e = fx_fail(&f, TT_DDB_TRANSACT_WRITE_ITEMS,
              "{'TransactItems':[{'ConditionCheck':{'TableName':'tbl','Key':{'pk':{'S':'b'}},"
              "'ConditionExpression':'attribute_not_exists(pk)',"
              "'ReturnValuesOnConditionCheckFailure':'ALL_OLD'}}]}",
              "TransactionCanceledException",
              "Transaction cancelled, please refer cancellation reasons for specific reasons "
              "[ConditionalCheckFailed]");
  fx_assert_json(json_object_get(e->body, "CancellationReasons"),
                 "[{'Code':'ConditionalCheckFailed','Message':'The conditional request failed',"
                 "'Item':{'pk':{'S':'b'},'x':{'S':'y'}}}]");
  fx_fail(&f, TT_DDB_TRANSACT_WRITE_ITEMS,
          "{'TransactItems':[{'Put':{'TableName':'tbl','Item':{'pk':{'S':'a'}}}},"
          "{'Delete':{'TableName':'tbl','Key':{'pk':{'S':'a'}}}}]}",
          "ValidationException",
          "Transaction request cannot include multiple operations on one item");
  fx_fail(&f, TT_DDB_TRANSACT_GET_ITEMS,
          "{'TransactItems':[{'Get':{'TableName':'tbl','Key':{'pk':{'S':'a'}}}},"
          "{'Get':{'TableName':'tbl','Key':{'pk':{'S':'a'}}}}]}",
          "ValidationException",
          "Transaction request cannot include multiple operations on one item");
  struct tt_buf b;
  tt_buf_init(&b, 0);
  tt_buf_puts(&b, "{'TransactItems':[");
  for (int i = 0; i < 101; i++)
    tt_buf_printf(&b, "%s{'Put':{'TableName':'tbl','Item':{'pk':{'S':'n%d'}}}}", i ? "," : "", i);
  tt_buf_puts(&b, "]}");
  fx_fail(&f, TT_DDB_TRANSACT_WRITE_ITEMS, b.data, "ValidationException",
          "1 validation error detected: Value at 'transactItems' failed to satisfy constraint: "
          "Member must have length less than or equal to 100");
  tt_buf_free(&b);
  /* A runtime update error cancels the transaction with a ValidationError. */
  e = fx_fail(&f, TT_DDB_TRANSACT_WRITE_ITEMS,
              "{'TransactItems':[{'Update':{'TableName':'tbl','Key':{'pk':{'S':'zz'}},"
              "'UpdateExpression':'SET v = v + :one','ExpressionAttributeValues':{':one':"
              "{'N':'1'}}}}]}",
              "TransactionCanceledException",
              "Transaction cancelled, please refer cancellation reasons for specific reasons "
              "[ValidationError]");
  fx_teardown(&f);
}
END_TEST

/* The shape of a transaction, checked where its JSON becomes typed
 * (api/ddb_typed.c) with the messages DynamoDB gives. */
START_TEST(transact_shape_checks) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  fx_fail(&f, TT_DDB_TRANSACT_WRITE_ITEMS, "{}", "ValidationException",
          "1 validation error detected: Value null at 'transactItems' failed to satisfy "
          "constraint: Member must not be null");
  fx_fail(&f, TT_DDB_TRANSACT_WRITE_ITEMS,
          "{'TransactItems':[{'Put':{'TableName':'tbl','Item':{'pk':{'S':'a'}}},"
          "'Delete':{'TableName':'tbl','Key':{'pk':{'S':'a'}}}}]}",
          "ValidationException",
          "TransactItems can only contain one of Check, Put, Update or Delete");
  fx_fail(&f, TT_DDB_TRANSACT_WRITE_ITEMS,
          "{'TransactItems':[{'Delete':{'TableName':'tbl'}}]}", "ValidationException",
          "1 validation error detected: Value null at 'key' failed to satisfy constraint: "
          "Member must not be null");
  fx_fail(&f, TT_DDB_TRANSACT_WRITE_ITEMS,
          "{'ClientRequestToken':7,'TransactItems':[{'Delete':{'TableName':'tbl','Key':"
          "{'pk':{'S':'a'}}}}]}",
          "SerializationException", "ClientRequestToken must be a string");
  fx_fail(&f, TT_DDB_TRANSACT_GET_ITEMS,
          "{'TransactItems':[{'Get':{'TableName':'tbl','Key':{'pk':{'S':'a'}}}},{'Put':{}}]}",
          "ValidationException",
          "1 validation error detected: Value null at 'transactItems.2.member.get' failed to "
          "satisfy constraint: Member must not be null");
  /* 33 levels of M below a top-level attribute: refused before decoding. */
  struct tt_buf b;
  tt_buf_init(&b, 0);
  tt_buf_puts(&b, "{'TransactItems':[{'Put':{'TableName':'tbl','Item':{'pk':{'S':'a'},'d':");
  for (int i = 0; i < 33; i++)
    tt_buf_puts(&b, "{'M':{'x':");
  tt_buf_puts(&b, "{'S':'v'}");
  for (int i = 0; i < 33; i++)
    tt_buf_puts(&b, "}}");
  tt_buf_puts(&b, "}}}]}");
  fx_fail(&f, TT_DDB_TRANSACT_WRITE_ITEMS, b.data, "ValidationException",
          "Nesting Levels have exceeded supported limits: Attributes in the item have nested "
          "levels beyond supported limit");
  tt_buf_free(&b);
  fx_teardown(&f);
}
END_TEST

#define TX_TOKEN(tok, n)                                                                           \
  "{'ClientRequestToken':'" tok "','TransactItems':[{'Update':{'TableName':'tbl','Key':{'pk':"   \
  "{'S':'ctr'}},'UpdateExpression':'ADD n :one','ExpressionAttributeValues':{':one':{'N':'" n    \
  "'}}}}]}"

START_TEST(transact_write_client_token) {
  struct fx f;
  struct tt_memdb_options o = {.clock = fake_clock};
  fake_now = 1700000000;
  fx_setup(&f, &o);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  fx_expect(&f, TT_DDB_TRANSACT_WRITE_ITEMS, TX_TOKEN("tok-1", "1"), "{}");
  fx_expect(&f, TT_DDB_TRANSACT_WRITE_ITEMS, TX_TOKEN("tok-1", "1"), "{}");
  fx_expect(&f, TT_DDB_GET_ITEM, "{'TableName':'tbl','Key':{'pk':{'S':'ctr'}}}",
            "{'Item':{'n':{'N':'1'},'pk':{'S':'ctr'}}}");
  fx_fail(&f, TT_DDB_TRANSACT_WRITE_ITEMS, TX_TOKEN("tok-1", "2"),
          "IdempotentParameterMismatchException",
          "The request uses the same client token as a previous, but non-identical request.");
  fake_now += 599;
  fx_expect(&f, TT_DDB_TRANSACT_WRITE_ITEMS, TX_TOKEN("tok-1", "1"), "{}");
  fx_expect(&f, TT_DDB_GET_ITEM, "{'TableName':'tbl','Key':{'pk':{'S':'ctr'}}}",
            "{'Item':{'n':{'N':'1'},'pk':{'S':'ctr'}}}");
  fake_now += 1; /* ten minutes after the first use: the token is forgotten */
  fx_expect(&f, TT_DDB_TRANSACT_WRITE_ITEMS, TX_TOKEN("tok-1", "1"), "{}");
  fx_expect(&f, TT_DDB_GET_ITEM, "{'TableName':'tbl','Key':{'pk':{'S':'ctr'}}}",
            "{'Item':{'n':{'N':'2'},'pk':{'S':'ctr'}}}");
  /* Another token applies again. */
  fx_expect(&f, TT_DDB_TRANSACT_WRITE_ITEMS, TX_TOKEN("tok-2", "1"), "{}");
  fx_expect(&f, TT_DDB_GET_ITEM, "{'TableName':'tbl','Key':{'pk':{'S':'ctr'}}}",
            "{'Item':{'n':{'N':'3'},'pk':{'S':'ctr'}}}");
  fx_teardown(&f);
}
END_TEST

/* The ConsumedCapacity of `op` on `text`, dumped. */
static char *capacity_of(struct fx *f, enum tt_ddb_op op, const char *text) {
  json_t *r = fx_ok(f, op, text);
  char *d = fx_dump(json_object_get(r, "ConsumedCapacity"));
  json_decref(r);
  return d;
}

#define ASSERT_CAPACITY(f, op, text, want)                                                        \
  do {                                                                                           \
    char *got_ = capacity_of(f, op, text);                                                       \
    json_t *w_ = fx_json(want);                                                                  \
    char *want_ = fx_dump(w_);                                                                   \
    ck_assert_str_eq(got_, want_);                                                               \
    free(got_);                                                                                  \
    free(want_);                                                                                 \
    json_decref(w_);                                                                             \
  } while (0)

START_TEST(consumed_capacity) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  /* A 5,004-byte item: 'pk' + 'a' is 3 bytes, 'v' + 5,000 bytes. */
  struct tt_buf b;
  tt_buf_init(&b, 0);
  tt_buf_puts(&b, "{'TableName':'tbl','ReturnConsumedCapacity':'TOTAL','Item':{'pk':{'S':'a'},"
                  "'v':{'S':'");
  for (int i = 0; i < 5000; i++)
    tt_buf_puts(&b, "x");
  tt_buf_puts(&b, "'}}}");
  /* Writes count 1 KB units of the larger of the old and new item. */
  ASSERT_CAPACITY(&f, TT_DDB_PUT_ITEM, b.data, "{'CapacityUnits':5.0,'TableName':'tbl'}");
  ASSERT_CAPACITY(&f, TT_DDB_PUT_ITEM,
                  "{'TableName':'tbl','ReturnConsumedCapacity':'INDEXES',"
                  "'Item':{'pk':{'S':'a'}}}",
                  "{'CapacityUnits':5.0,'Table':{'CapacityUnits':5.0},'TableName':'tbl'}");
  ASSERT_CAPACITY(&f, TT_DDB_UPDATE_ITEM,
                  "{'TableName':'tbl','ReturnConsumedCapacity':'TOTAL','Key':{'pk':{'S':'a'}},"
                  "'UpdateExpression':'SET n = :n','ExpressionAttributeValues':{':n':{'N':'1'}}}",
                  "{'CapacityUnits':1.0,'TableName':'tbl'}");
  /* Reads count 4 KB units, halved unless consistent; a missing item
   * counts as one. */
  ASSERT_CAPACITY(&f, TT_DDB_PUT_ITEM, b.data, "{'CapacityUnits':5.0,'TableName':'tbl'}");
  ASSERT_CAPACITY(&f, TT_DDB_GET_ITEM,
                  "{'TableName':'tbl','ReturnConsumedCapacity':'TOTAL','Key':{'pk':{'S':'a'}}}",
                  "{'CapacityUnits':1.0,'TableName':'tbl'}");
  ASSERT_CAPACITY(&f, TT_DDB_GET_ITEM,
                  "{'TableName':'tbl','ReturnConsumedCapacity':'TOTAL','ConsistentRead':true,"
                  "'Key':{'pk':{'S':'a'}}}",
                  "{'CapacityUnits':2.0,'TableName':'tbl'}");
  ASSERT_CAPACITY(&f, TT_DDB_GET_ITEM,
                  "{'TableName':'tbl','ReturnConsumedCapacity':'TOTAL','Key':{'pk':{'S':'no'}}}",
                  "{'CapacityUnits':0.5,'TableName':'tbl'}");
  ASSERT_CAPACITY(&f, TT_DDB_BATCH_GET_ITEM,
                  "{'ReturnConsumedCapacity':'TOTAL','RequestItems':{'tbl':{'Keys':["
                  "{'pk':{'S':'a'}},{'pk':{'S':'no'}}]}}}",
                  "[{'CapacityUnits':1.5,'TableName':'tbl'}]");
  ASSERT_CAPACITY(&f, TT_DDB_BATCH_WRITE_ITEM,
                  "{'ReturnConsumedCapacity':'TOTAL','RequestItems':{'tbl':["
                  "{'DeleteRequest':{'Key':{'pk':{'S':'a'}}}},"
                  "{'PutRequest':{'Item':{'pk':{'S':'c'}}}}]}}",
                  "[{'CapacityUnits':6.0,'TableName':'tbl'}]");
  ASSERT_CAPACITY(&f, TT_DDB_DELETE_ITEM,
                  "{'TableName':'tbl','ReturnConsumedCapacity':'TOTAL','Key':{'pk':{'S':'c'}}}",
                  "{'CapacityUnits':1.0,'TableName':'tbl'}");
  /* NONE, or no member: no ConsumedCapacity. */
  json_t *r = fx_ok(&f, TT_DDB_GET_ITEM,
                    "{'TableName':'tbl','ReturnConsumedCapacity':'NONE','Key':{'pk':{'S':'a'}}}");
  ck_assert_ptr_null(json_object_get(r, "ConsumedCapacity"));
  json_decref(r);
  tt_buf_free(&b);
  fx_teardown(&f);
}
END_TEST

int main(void) {
  Suite *s = suite_create("memdb_multi");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, batch_get_rules_and_responses);
  tcase_add_test(tc, batch_get_16mb_leaves_keys_unprocessed);
  tcase_add_test(tc, batch_write_rules_and_effects);
  tcase_add_test(tc, transact_write_all_or_nothing);
  tcase_add_test(tc, transact_shape_checks);
  tcase_add_test(tc, transact_write_client_token);
  tcase_add_test(tc, consumed_capacity);
  suite_add_tcase(s, tc);
  return fx_run_suite(s);
}
