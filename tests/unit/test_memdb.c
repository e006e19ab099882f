/* SPDX-License-Identifier: Apache-2.0 */
/* test_memdb.c -- the memory backend on a real loop: FIFO completion (from
 * the loop, or from run_ready: once, never inside start, flat) and
 * cancellation, tables, single-item operations and their
 * DynamoDB errors, TTL. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

#include "backend/memory/memdb.h"
#include "test_memdb.h"

START_TEST(completes_async_in_order_and_cancels) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  struct tt_backend_call c[3];
  int order[3] = {-1, -1, -1};
  const char *reqs[3] = {
      "{'TableName':'tbl','Item':{'pk':{'S':'a'},'v':{'N':'1'}}}",
      "{'TableName':'tbl','Item':{'pk':{'S':'b'},'v':{'N':'2'}}}",
      "{'TableName':'tbl','Item':{'pk':{'S':'c'},'v':{'N':'3'}}}",
  };
  json_t *r[3];
  struct fx_typed t[3];
  for (int i = 0; i < 3; i++) {
    memset(&c[i], 0, sizeof(c[i]));
    c[i].op = TT_DDB_PUT_ITEM;
    r[i] = fx_json(reqs[i]);
    ck_assert(fx_typed_in(&c[i], r[i], &t[i]));
    c[i].done = fx_order_cb;
    c[i].arg = order;
    ck_assert_int_eq(f.b->ops->start(f.b, &c[i]), 0);
  }
  /* Nothing completes inside start(). */
  ck_assert_int_eq(order[0], -1);
  f.b->ops->cancel(f.b, &c[1]);
  ck_assert_int_eq(order[0], -1);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  /* The canceled call completes first (it does not wait its turn), the
   * others in the order they were started. */
  ck_assert_int_eq(order[0], 1);
  ck_assert_int_eq(order[1], 0);
  ck_assert_int_eq(order[2], 2);
  ck_assert_int_eq(c[1].status, -1);
  ck_assert_str_eq(c[1].error.type, "RequestCanceled");
  ck_assert_int_eq(c[0].status, 0);
  ck_assert_int_eq(c[2].status, 0);
  for (int i = 0; i < 3; i++) {
    fx_typed_out(&c[i], &t[i]);
    json_decref(c[i].response);
    tt_backend_error_clear(&c[i].error);
    json_decref(r[i]);
  }
  /* The canceled put was never executed. */
  fx_expect(&f, TT_DDB_GET_ITEM, "{'TableName':'tbl','Key':{'pk':{'S':'b'}}}", "{}");
  fx_expect(&f, TT_DDB_GET_ITEM, "{'TableName':'tbl','Key':{'pk':{'S':'c'}}}",
            "{'Item':{'pk':{'S':'c'},'v':{'N':'3'}}}");
  fx_teardown(&f);
}
END_TEST

static void longest_due(uv_handle_t *h, void *arg) {
  uint64_t *longest = arg;
  if (h->type == UV_TIMER && uv_is_active(h) && uv_timer_get_due_in((uv_timer_t *)h) > *longest)
    *longest = uv_timer_get_due_in((uv_timer_t *)h);
}

START_TEST(latency_option_delays_completion) {
  struct fx f;
  struct tt_memdb_options o = {.latency_ms = 30};
  fx_setup(&f, &o);
  static const struct tt_ddb_attr_def defs[] = {{"pk", TT_AV_S}};
  struct tt_ddb_table_request req = {.table = "tbl", .defs = defs, .n_defs = 1,
                                     .keys = {"pk", NULL},
                                     .billing = TT_DDB_BILLING_PAY_PER_REQUEST};
  struct tt_backend_call c;
  int done = 0;
  memset(&c, 0, sizeof(c));
  c.op = TT_DDB_CREATE_TABLE;
  c.table = &req;
  c.done = fx_done;
  c.arg = &done;
  ck_assert_int_eq(f.b->ops->start(f.b, &c), 0);
  /* Not ready now: the trampoline leaves it to a timer due after the latency. */
  ck_assert_uint_eq(f.b->ops->run_ready(f.b, 0), 0);
  ck_assert_int_eq(done, 0);
  uint64_t due_in = 0;
  uv_walk(&f.loop, longest_due, &due_in);
  ck_assert_uint_ge(due_in, 30);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(done, 1);
  ck_assert_int_eq(c.status, 0);
  tt_ddb_table_out_free(&c.table_out);
  fx_teardown(&f);
}
END_TEST

/* ---- run_ready: the port's trampoline (backend.h) ------------------------ */

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

START_TEST(run_ready_completes_once_after_start) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  json_t *req = fx_json("{'TableName':'tbl','Item':{'pk':{'S':'a'}}}");
  struct tt_backend_call c;
  struct fx_typed t;
  int done = 0;
  memset(&c, 0, sizeof(c));
  c.op = TT_DDB_PUT_ITEM;
  ck_assert(fx_typed_in(&c, req, &t));
  c.done = fx_done;
  c.arg = &done;
  ck_assert_int_eq(f.b->ops->start(f.b, &c), 0);
  ck_assert_int_eq(done, 0); /* never inside start() */
  ck_assert_uint_eq(f.b->ops->run_ready(f.b, 0), 1);
  ck_assert_int_eq(done, 1);
  ck_assert_int_eq(c.status, 0);
  /* Nothing is left for the loop: the idle handle stopped, so the loop has
   * no active handle and would block in epoll rather than spin. */
  ck_assert_int_eq(uv_run(&f.loop, UV_RUN_NOWAIT), 0);
  ck_assert_int_eq(done, 1); /* exactly once */
  ck_assert_uint_eq(f.b->ops->run_ready(f.b, 0), 0);
  fx_typed_out(&c, &t);
  json_decref(c.response);
  json_decref(req);
  fx_teardown(&f);
}
END_TEST

/* A chain: each completion starts the next GetItem, like query pages. */
struct chain {
  struct tt_backend *b;
  struct tt_backend_call c;
  json_t *req;
  struct fx_typed t; /* req, typed */
  int left, completed, depth, max_depth;
  uintptr_t lo, hi; /* addresses of a local in the callback */
  size_t nested;    /* what run_ready answered from inside a completion */
};

static void chain_cb(struct tt_backend_call *c) {
  struct chain *ch = c->arg;
  int here = 0;
  uintptr_t a = (uintptr_t)&here;
  if (ch->lo == 0 || a < ch->lo)
    ch->lo = a;
  if (a > ch->hi)
    ch->hi = a;
  ch->depth++;
  if (ch->depth > ch->max_depth)
    ch->max_depth = ch->depth;
  ck_assert_int_eq(c->status, 0);
  tt_av_free(&c->item_out);
  ch->completed++;
  ch->nested += ch->b->ops->run_ready(ch->b, 0); /* not re-entrant: 0 */
  if (ch->left-- > 0) {
    memset(c, 0, sizeof(*c));
    c->op = TT_DDB_GET_ITEM;
    c->item = &ch->t.r.item;
    c->done = chain_cb;
    c->arg = ch;
    ck_assert_int_eq(ch->b->ops->start(ch->b, c), 0);
  }
  ch->depth--;
}

static void chain_start(struct fx *f, struct chain *ch, int length) {
  memset(ch, 0, sizeof(*ch));
  ch->b = f->b;
  ch->req = fx_json("{'TableName':'tbl','Key':{'pk':{'S':'a'}}}");
  ch->left = length - 1;
  ch->c.op = TT_DDB_GET_ITEM;
  ck_assert(fx_typed_in(&ch->c, ch->req, &ch->t));
  ch->c.done = chain_cb;
  ch->c.arg = ch;
  ck_assert_int_eq(f->b->ops->start(f->b, &ch->c), 0);
}

START_TEST(run_ready_runs_a_long_chain_flat) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  struct chain ch;
  chain_start(&f, &ch, 10000);
  /* All 10,000 calls in one run_ready, none nested in another: the stack
   * does not grow with the chain. */
  ck_assert_uint_eq(f.b->ops->run_ready(f.b, 0), 10000);
  ck_assert_int_eq(ch.completed, 10000);
  ck_assert_int_eq(ch.max_depth, 1);
  ck_assert_uint_lt(ch.hi - ch.lo, 256);
  ck_assert_uint_eq(ch.nested, 0);
  ck_assert_int_eq(uv_run(&f.loop, UV_RUN_NOWAIT), 0);
  tt_ddbi_owned_free(&ch.t.own);
  json_decref(ch.req);
  fx_teardown(&f);
}
END_TEST

START_TEST(run_ready_slice_leaves_the_rest_to_the_loop) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  struct chain ch;
  chain_start(&f, &ch, 50);
  /* A slice already over still makes progress: one call. */
  ck_assert_uint_eq(f.b->ops->run_ready(f.b, mono_ns()), 1);
  ck_assert_int_eq(ch.completed, 1);
  /* The loop finishes the chain, one call per iteration, still flat. */
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(ch.completed, 50);
  ck_assert_int_eq(ch.max_depth, 1);
  ck_assert_uint_eq(ch.nested, 0);
  tt_ddbi_owned_free(&ch.t.own);
  json_decref(ch.req);
  fx_teardown(&f);
}
END_TEST

START_TEST(run_ready_leaves_delayed_and_completes_canceled) {
  struct fx f;
  struct tt_memdb_options o = {.latency_ms = 20};
  fx_setup(&f, &o);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  json_t *req = fx_json("{'TableName':'tbl','Key':{'pk':{'S':'a'}}}");
  struct tt_backend_call c[2];
  struct fx_typed t[2];
  int done[2] = {0, 0};
  for (int i = 0; i < 2; i++) {
    memset(&c[i], 0, sizeof(c[i]));
    c[i].op = TT_DDB_GET_ITEM;
    ck_assert(fx_typed_in(&c[i], req, &t[i]));
    c[i].done = fx_done;
    c[i].arg = &done[i];
    ck_assert_int_eq(f.b->ops->start(f.b, &c[i]), 0);
  }
  /* latency_ms: not ready, they wait for the timer. */
  ck_assert_uint_eq(f.b->ops->run_ready(f.b, 0), 0);
  ck_assert_int_eq(done[0] + done[1], 0);
  /* A canceled call is ready at once. */
  f.b->ops->cancel(f.b, &c[1]);
  ck_assert_uint_eq(f.b->ops->run_ready(f.b, 0), 1);
  ck_assert_int_eq(done[1], 1);
  ck_assert_str_eq(c[1].error.type, "RequestCanceled");
  ck_assert_int_eq(done[0], 0);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(done[0], 1);
  ck_assert_int_eq(done[1], 1);
  ck_assert_int_eq(c[0].status, 0);
  for (int i = 0; i < 2; i++) {
    fx_typed_out(&c[i], &t[i]);
    json_decref(c[i].response);
    tt_backend_error_clear(&c[i].error);
  }
  json_decref(req);
  fx_teardown(&f);
}
END_TEST

START_TEST(create_and_describe_table) {
  struct fx f;
  fx_setup(&f, NULL);
  json_t *r = fx_ok(&f, TT_DDB_CREATE_TABLE, FULL_TABLE);
  json_t *d = json_object_get(r, "TableDescription");
  ck_assert_str_eq(json_string_value(json_object_get(d, "TableStatus")), "ACTIVE");
  json_decref(r);
  fx_put(&f, "{'pk':{'S':'p'},'sk':{'N':'1'},'g':{'S':'x'}}");
  r = fx_ok(&f, TT_DDB_DESCRIBE_TABLE, "{'TableName':'full'}");
  d = json_object_get(r, "Table");
  fx_assert_json(json_object_get(d, "KeySchema"),
                 "[{'AttributeName':'pk','KeyType':'HASH'},{'AttributeName':'sk','KeyType':'RANGE'}]");
  fx_assert_json(json_object_get(d, "BillingModeSummary"), "{'BillingMode':'PAY_PER_REQUEST'}");
  ck_assert_int_eq(json_integer_value(json_object_get(d, "ItemCount")), 1);
  ck_assert_str_eq(json_string_value(json_object_get(d, "TableStatus")), "ACTIVE");
  json_t *g = json_array_get(json_object_get(d, "GlobalSecondaryIndexes"), 0);
  ck_assert_str_eq(json_string_value(json_object_get(g, "IndexName")), "gsi");
  ck_assert_str_eq(json_string_value(json_object_get(g, "IndexStatus")), "ACTIVE");
  fx_assert_json(json_object_get(g, "Projection"), "{'ProjectionType':'KEYS_ONLY'}");
  ck_assert_int_eq(json_integer_value(json_object_get(g, "ItemCount")), 1);
  json_t *l = json_array_get(json_object_get(d, "LocalSecondaryIndexes"), 0);
  fx_assert_json(json_object_get(l, "Projection"),
                 "{'NonKeyAttributes':['a'],'ProjectionType':'INCLUDE'}");
  json_decref(r);
  fx_fail(&f, TT_DDB_CREATE_TABLE, FULL_TABLE, "ResourceInUseException",
          "Table already exists: full");
  fx_teardown(&f);
}
END_TEST

START_TEST(create_table_validation) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_fail(&f, TT_DDB_CREATE_TABLE,
          "{'TableName':'tt1','BillingMode':'PAY_PER_REQUEST','AttributeDefinitions':"
          "[{'AttributeName':'pk','AttributeType':'S'}],'KeySchema':[{'AttributeName':'id',"
          "'KeyType':'HASH'}]}",
          "ValidationException",
          "One or more parameter values were invalid: Some index key attributes are not defined "
          "in AttributeDefinitions. Keys: [id]");
  fx_fail(&f, TT_DDB_CREATE_TABLE,
          "{'TableName':'tt1','BillingMode':'PAY_PER_REQUEST','AttributeDefinitions':"
          "[{'AttributeName':'pk','AttributeType':'S'},{'AttributeName':'x','AttributeType':'S'}],"
          "'KeySchema':[{'AttributeName':'pk','KeyType':'HASH'}]}",
          "ValidationException",
          "One or more parameter values were invalid: Number of attributes in KeySchema does not "
          "exactly match number of attributes defined in AttributeDefinitions");
  fx_fail(&f, TT_DDB_CREATE_TABLE,
          "{'TableName':'tt1','BillingMode':'PAY_PER_REQUEST','AttributeDefinitions':"
          "[{'AttributeName':'pk','AttributeType':'X'}],'KeySchema':[{'AttributeName':'pk',"
          "'KeyType':'HASH'}]}",
          "ValidationException",
          "1 validation error detected: Value at 'attributeDefinitions.1.member.attributeType' "
          "failed to satisfy constraint: Member must satisfy enum value set: [B, N, S]");
  fx_fail(&f, TT_DDB_CREATE_TABLE,
          "{'TableName':'tt1','BillingMode':'PAY_PER_REQUEST','AttributeDefinitions':"
          "[{'AttributeName':'pk','AttributeType':'S'},{'AttributeName':'l','AttributeType':'S'}],"
          "'KeySchema':[{'AttributeName':'pk','KeyType':'HASH'}],'LocalSecondaryIndexes':"
          "[{'IndexName':'lsi','KeySchema':[{'AttributeName':'pk','KeyType':'HASH'},"
          "{'AttributeName':'l','KeyType':'RANGE'}],'Projection':{'ProjectionType':'ALL'}}]}",
          "ValidationException",
          "One or more parameter values were invalid: Table KeySchema does not have a range key, "
          "which is required when specifying a LocalSecondaryIndex");
  fx_fail(&f, TT_DDB_CREATE_TABLE,
          "{'TableName':'tt1','AttributeDefinitions':[{'AttributeName':'pk','AttributeType':'S'}],"
          "'KeySchema':[{'AttributeName':'pk','KeyType':'HASH'}]}",
          "ValidationException",
          "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits "
          "must both be specified when BillingMode is PROVISIONED");
  /* Provisioned with capacities is fine and echoed. */
  json_t *r = fx_ok(&f, TT_DDB_CREATE_TABLE,
                    "{'TableName':'tt1','AttributeDefinitions':[{'AttributeName':'pk',"
                    "'AttributeType':'S'}],'KeySchema':[{'AttributeName':'pk','KeyType':'HASH'}],"
                    "'ProvisionedThroughput':{'ReadCapacityUnits':5,'WriteCapacityUnits':7}}");
  json_t *pt = json_object_get(json_object_get(r, "TableDescription"), "ProvisionedThroughput");
  ck_assert_int_eq(json_integer_value(json_object_get(pt, "WriteCapacityUnits")), 7);
  json_decref(r);
  fx_teardown(&f);
}
END_TEST

START_TEST(unknown_and_deleted_tables) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_fail(&f, TT_DDB_DESCRIBE_TABLE, "{'TableName':'nope'}", "ResourceNotFoundException",
          "Requested resource not found: Table: nope not found");
  fx_fail(&f, TT_DDB_GET_ITEM, "{'TableName':'nope','Key':{'pk':{'S':'a'}}}",
          "ResourceNotFoundException", "Requested resource not found");
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  fx_put(&f, "{'pk':{'S':'a'}}");
  json_t *r = fx_ok(&f, TT_DDB_DELETE_TABLE, "{'TableName':'tbl'}");
  ck_assert_str_eq(
      json_string_value(json_object_get(json_object_get(r, "TableDescription"), "TableStatus")),
      "DELETING");
  json_decref(r);
  fx_fail(&f, TT_DDB_SCAN, "{'TableName':'tbl'}", "ResourceNotFoundException",
          "Requested resource not found");
  fx_teardown(&f);
}
END_TEST

START_TEST(put_get_roundtrip_and_projection) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  fx_expect(&f, TT_DDB_PUT_ITEM,
            "{'TableName':'tbl','Item':{'pk':{'S':'a'},'n':{'N':'1.50'},'m':{'M':{'x':{'L':"
            "[{'S':'y'},{'BOOL':true},{'NULL':true}]}}},'ss':{'SS':['b','a']},'b':{'B':'AAE='}}}",
            "{}");
  fx_expect(&f, TT_DDB_GET_ITEM, "{'TableName':'tbl','Key':{'pk':{'S':'a'}},'ConsistentRead':true}",
            "{'Item':{'b':{'B':'AAE='},'m':{'M':{'x':{'L':[{'S':'y'},{'BOOL':true},{'NULL':true}]}}},"
            "'n':{'N':'1.5'},'pk':{'S':'a'},'ss':{'SS':['a','b']}}}");
  fx_expect(&f, TT_DDB_GET_ITEM,
            "{'TableName':'tbl','Key':{'pk':{'S':'a'}},'ProjectionExpression':'#m.x[1], n',"
            "'ExpressionAttributeNames':{'#m':'m'}}",
            "{'Item':{'m':{'M':{'x':{'L':[{'BOOL':true}]}}},'n':{'N':'1.5'}}}");
  fx_expect(&f, TT_DDB_GET_ITEM, "{'TableName':'tbl','Key':{'pk':{'S':'zz'}}}", "{}");
  fx_teardown(&f);
}
END_TEST

START_TEST(key_must_match_schema) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, COMPOSITE_TABLE);
  const char *bad[] = {
      "{'TableName':'cmp','Key':{'pk':{'S':'a'}}}",
      "{'TableName':'cmp','Key':{'pk':{'S':'a'},'sk':{'S':'1'}}}",
      "{'TableName':'cmp','Key':{'pk':{'S':'a'},'sk':{'N':'1'},'x':{'S':'y'}}}",
      "{'TableName':'cmp','Key':{'pk':{'S':'a'},'other':{'N':'1'}}}",
  };
  for (size_t i = 0; i < 4; i++)
    fx_fail(&f, TT_DDB_GET_ITEM, bad[i], "ValidationException",
            "The provided key element does not match the schema");
  fx_fail(&f, TT_DDB_DELETE_ITEM, bad[0], "ValidationException",
          "The provided key element does not match the schema");
  fx_fail(&f, TT_DDB_GET_ITEM, "{'TableName':'cmp','Key':{'pk':{'S':''},'sk':{'N':'1'}}}",
          "ValidationException",
          "One or more parameter values were invalid: The AttributeValue for a key attribute "
          "cannot contain an empty string value. Key: pk");
  fx_teardown(&f);
}
END_TEST

/* UpdateItem and the table's index keys, as DynamoDB checks them: the
 * types the expression's text gives before the item is read, nested paths
 * into key attributes, then the types a SET copies from the item. */
START_TEST(update_checks_index_keys) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, FULL_TABLE);
  fx_fail(&f, TT_DDB_UPDATE_ITEM,
          "{'TableName':'full','Key':{'pk':{'S':'a'},'sk':{'N':'1'}},'UpdateExpression':"
          "'SET x.y = pk ADD g :n','ExpressionAttributeValues':{':n':{'N':'1'}}}",
          "ValidationException",
          "One or more parameter values were invalid: Type mismatch for Index Key g Expected: S "
          "Actual: N IndexName: gsi");
  fx_fail(&f, TT_DDB_UPDATE_ITEM,
          "{'TableName':'full','Key':{'pk':{'S':'a'},'sk':{'N':'1'}},'UpdateExpression':"
          "'SET l = x + :n','ExpressionAttributeValues':{':n':{'N':'1'}}}",
          "ValidationException",
          "One or more parameter values were invalid: Type mismatch for Index Key l Expected: S "
          "Actual: N IndexName: lsi");
  fx_fail(&f, TT_DDB_UPDATE_ITEM,
          "{'TableName':'full','Key':{'pk':{'S':'a'},'sk':{'N':'1'}},'UpdateExpression':"
          "'SET x = g[1]'}",
          "ValidationException",
          "Key attributes must be scalars; list random access '[]' and map lookup '.' are not "
          "allowed: IndexKey: g");
  fx_fail(&f, TT_DDB_UPDATE_ITEM,
          "{'TableName':'full','Key':{'pk':{'S':'a'},'sk':{'N':'1'}},'UpdateExpression':"
          "'SET x = pk.y'}",
          "ValidationException",
          "Key attributes must be scalars; list random access '[]' and map lookup '.' are not "
          "allowed: Key: pk");
  fx_put_in(&f, "full", "{'pk':{'S':'a'},'sk':{'N':'1'},'n':{'N':'5'},'s':{'S':'v'}}");
  fx_fail(&f, TT_DDB_UPDATE_ITEM,
          "{'TableName':'full','Key':{'pk':{'S':'a'},'sk':{'N':'1'}},'UpdateExpression':"
          "'SET g = n'}",
          "ValidationException",
          "The update expression attempted to update the secondary index key to unsupported "
          "type");
  json_decref(fx_ok(&f, TT_DDB_UPDATE_ITEM,
                    "{'TableName':'full','Key':{'pk':{'S':'a'},'sk':{'N':'1'}},"
                    "'UpdateExpression':'SET g = s'}"));
  fx_teardown(&f);
}
END_TEST

START_TEST(put_validates_keys_and_size) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, FULL_TABLE);
  fx_fail(&f, TT_DDB_PUT_ITEM, "{'TableName':'full','Item':{'pk':{'S':'a'}}}",
          "ValidationException",
          "One or more parameter values were invalid: Missing the key sk in the item");
  fx_fail(&f, TT_DDB_PUT_ITEM, "{'TableName':'full','Item':{'pk':{'N':'1'},'sk':{'N':'1'}}}",
          "ValidationException",
          "One or more parameter values were invalid: Type mismatch for key pk expected: S "
          "actual: N");
  fx_fail(&f, TT_DDB_PUT_ITEM, "{'TableName':'full','Item':{'pk':{'S':''},'sk':{'N':'1'}}}",
          "ValidationException",
          "One or more parameter values are not valid. The AttributeValue for a key attribute "
          "cannot contain an empty string value. Key: pk");
  fx_fail(&f, TT_DDB_PUT_ITEM,
          "{'TableName':'full','Item':{'pk':{'S':'a'},'sk':{'N':'1'},'g':{'N':'5'}}}",
          "ValidationException",
          "One or more parameter values were invalid: Type mismatch for Index Key g Expected: S "
          "Actual: N IndexName: gsi");
  fx_fail(&f, TT_DDB_PUT_ITEM,
          "{'TableName':'full','Item':{'pk':{'S':'a'},'sk':{'N':'1'},'g':{'S':''}}}",
          "ValidationException",
          "One or more parameter values are not valid. A value specified for a secondary index "
          "key is not supported. The AttributeValue for a key attribute cannot contain an empty "
          "string value. IndexName: gsi, IndexKey: g");
  /* 400 KB: name + value bytes. pk(2+1) + sk(2+2) + "big"(3) + value. */
  size_t room = 400 * 1024 - 3 - 4 - 3;
  char *big = malloc(room + 2);
  memset(big, 'x', room + 1);
  big[room + 1] = '\0';
  struct tt_buf b;
  tt_buf_init(&b, 0);
  tt_buf_printf(&b, "{'TableName':'full','Item':{'pk':{'S':'a'},'sk':{'N':'1'},'big':{'S':'%s'}}}",
                big);
  fx_fail(&f, TT_DDB_PUT_ITEM, b.data, "ValidationException",
          "Item size has exceeded the maximum allowed size");
  big[room] = '\0';
  tt_buf_reset(&b);
  tt_buf_printf(&b, "{'TableName':'full','Item':{'pk':{'S':'a'},'sk':{'N':'1'},'big':{'S':'%s'}}}",
                big);
  fx_expect(&f, TT_DDB_PUT_ITEM, b.data, "{}");
  /* An update that grows it past the limit. */
  fx_fail(&f, TT_DDB_UPDATE_ITEM,
          "{'TableName':'full','Key':{'pk':{'S':'a'},'sk':{'N':'1'}},'UpdateExpression':'SET z = "
          ":z','ExpressionAttributeValues':{':z':{'S':'yy'}}}",
          "ValidationException", "Item size to update has exceeded the maximum allowed size");
  tt_buf_free(&b);
  free(big);
  fx_teardown(&f);
}
END_TEST

START_TEST(condition_failed_with_all_old) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  fx_put(&f, "{'pk':{'S':'a'},'v':{'N':'1'}}");
  struct tt_backend_error *e = fx_fail(
      &f, TT_DDB_PUT_ITEM,
      "{'TableName':'tbl','Item':{'pk':{'S':'a'}},'ConditionExpression':'attribute_not_exists(pk)'}",
      "ConditionalCheckFailedException", "The conditional request failed");
  ck_assert_ptr_null(e->body);
  e = fx_fail(&f, TT_DDB_DELETE_ITEM,
              "{'TableName':'tbl','Key':{'pk':{'S':'a'}},'ConditionExpression':'v = :two',"
              "'ExpressionAttributeValues':{':two':{'N':'2'}},"
              "'ReturnValuesOnConditionCheckFailure':'ALL_OLD'}",
              "ConditionalCheckFailedException", "The conditional request failed");
  fx_assert_json(json_object_get(e->body, "Item"), "{'pk':{'S':'a'},'v':{'N':'1'}}");
  /* Conditions on a missing item see no attributes. */
  fx_fail(&f, TT_DDB_UPDATE_ITEM,
          "{'TableName':'tbl','Key':{'pk':{'S':'new'}},'UpdateExpression':'SET v = :one',"
          "'ConditionExpression':'attribute_exists(pk)','ExpressionAttributeValues':{':one':"
          "{'N':'1'}}}",
          "ConditionalCheckFailedException", "The conditional request failed");
  fx_expect(&f, TT_DDB_DELETE_ITEM,
            "{'TableName':'tbl','Key':{'pk':{'S':'a'}},'ConditionExpression':'v = :one',"
            "'ExpressionAttributeValues':{':one':{'N':'1'}},'ReturnValues':'ALL_OLD'}",
            "{'Attributes':{'pk':{'S':'a'},'v':{'N':'1'}}}");
  fx_expect(&f, TT_DDB_GET_ITEM, "{'TableName':'tbl','Key':{'pk':{'S':'a'}}}", "{}");
  fx_teardown(&f);
}
END_TEST

START_TEST(return_values) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  fx_expect(&f, TT_DDB_PUT_ITEM,
            "{'TableName':'tbl','Item':{'pk':{'S':'a'},'v':{'N':'1'},'w':{'S':'k'}},"
            "'ReturnValues':'ALL_OLD'}",
            "{}");
  fx_expect(&f, TT_DDB_PUT_ITEM,
            "{'TableName':'tbl','Item':{'pk':{'S':'a'},'v':{'N':'2'},'w':{'S':'k'}},"
            "'ReturnValues':'ALL_OLD'}",
            "{'Attributes':{'pk':{'S':'a'},'v':{'N':'1'},'w':{'S':'k'}}}");
  fx_fail(&f, TT_DDB_PUT_ITEM,
          "{'TableName':'tbl','Item':{'pk':{'S':'a'}},'ReturnValues':'ALL_NEW'}",
          "ValidationException", "ReturnValues can only be ALL_OLD or NONE");
  fx_fail(&f, TT_DDB_DELETE_ITEM,
          "{'TableName':'tbl','Key':{'pk':{'S':'a'}},'ReturnValues':'UPDATED_NEW'}",
          "ValidationException", "ReturnValues can only be ALL_OLD or NONE");
  const char *upd = "{'TableName':'tbl','Key':{'pk':{'S':'a'}},'UpdateExpression':'SET v = v + "
                    ":one','ExpressionAttributeValues':{':one':{'N':'1'}},'ReturnValues':'%s'}";
  char buf[512];
  snprintf(buf, sizeof(buf), upd, "UPDATED_NEW");
  fx_expect(&f, TT_DDB_UPDATE_ITEM, buf, "{'Attributes':{'v':{'N':'3'}}}");
  snprintf(buf, sizeof(buf), upd, "UPDATED_OLD");
  fx_expect(&f, TT_DDB_UPDATE_ITEM, buf, "{'Attributes':{'v':{'N':'3'}}}");
  snprintf(buf, sizeof(buf), upd, "ALL_NEW");
  fx_expect(&f, TT_DDB_UPDATE_ITEM, buf,
            "{'Attributes':{'pk':{'S':'a'},'v':{'N':'5'},'w':{'S':'k'}}}");
  snprintf(buf, sizeof(buf), upd, "ALL_OLD");
  fx_expect(&f, TT_DDB_UPDATE_ITEM, buf,
            "{'Attributes':{'pk':{'S':'a'},'v':{'N':'5'},'w':{'S':'k'}}}");
  snprintf(buf, sizeof(buf), upd, "NONE");
  fx_expect(&f, TT_DDB_UPDATE_ITEM, buf, "{}");
  fx_fail(&f, TT_DDB_UPDATE_ITEM,
          "{'TableName':'tbl','Key':{'pk':{'S':'a'}},'ReturnValues':'SOME'}", "ValidationException",
          "1 validation error detected: Value 'SOME' at 'returnValues' failed to satisfy "
          "constraint: Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, "
          "UPDATED_NEW]");
  fx_teardown(&f);
}
END_TEST

START_TEST(update_upserts_and_protects_keys) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, COMPOSITE_TABLE);
  fx_expect(&f, TT_DDB_UPDATE_ITEM,
            "{'TableName':'cmp','Key':{'pk':{'S':'a'},'sk':{'N':'7'}},'UpdateExpression':'SET #n = "
            ":v ADD cnt :one','ExpressionAttributeNames':{'#n':'name'},"
            "'ExpressionAttributeValues':{':v':{'S':'x'},':one':{'N':'1'}},'ReturnValues':'ALL_NEW'}",
            "{'Attributes':{'cnt':{'N':'1'},'name':{'S':'x'},'pk':{'S':'a'},'sk':{'N':'7'}}}");
  /* No UpdateExpression: creates the item with its key only. */
  fx_expect(&f, TT_DDB_UPDATE_ITEM,
            "{'TableName':'cmp','Key':{'pk':{'S':'b'},'sk':{'N':'1'}},'ReturnValues':'ALL_NEW'}",
            "{'Attributes':{'pk':{'S':'b'},'sk':{'N':'1'}}}");
  fx_fail(&f, TT_DDB_UPDATE_ITEM,
          "{'TableName':'cmp','Key':{'pk':{'S':'a'},'sk':{'N':'7'}},'UpdateExpression':'SET sk = "
          ":v','ExpressionAttributeValues':{':v':{'N':'8'}}}",
          "ValidationException",
          "One or more parameter values were invalid: Cannot update attribute sk. This attribute "
          "is part of the key");
  fx_fail(&f, TT_DDB_UPDATE_ITEM,
          "{'TableName':'cmp','Key':{'pk':{'S':'a'},'sk':{'N':'7'}},'UpdateExpression':'REMOVE pk'}",
          "ValidationException",
          "One or more parameter values were invalid: Cannot update attribute pk. This attribute "
          "is part of the key");
  fx_fail(&f, TT_DDB_UPDATE_ITEM,
          "{'TableName':'cmp','Key':{'pk':{'S':'z'},'sk':{'N':'7'}},'UpdateExpression':'SET v = "
          "v + :one','ExpressionAttributeValues':{':one':{'N':'1'}}}",
          "ValidationException",
          "The provided expression refers to an attribute that does not exist in the item");
  fx_teardown(&f);
}
END_TEST

START_TEST(placeholder_rules) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  fx_fail(&f, TT_DDB_PUT_ITEM,
          "{'TableName':'tbl','Item':{'pk':{'S':'a'}},'ConditionExpression':'attribute_not_exists(pk)',"
          "'ExpressionAttributeValues':{':x':{'S':'1'}}}",
          "ValidationException",
          "Value provided in ExpressionAttributeValues unused in expressions: keys: {:x}");
  fx_fail(&f, TT_DDB_PUT_ITEM,
          "{'TableName':'tbl','Item':{'pk':{'S':'a'}},'ConditionExpression':'attribute_not_exists(pk)',"
          "'ExpressionAttributeNames':{'#x':'x'}}",
          "ValidationException",
          "Value provided in ExpressionAttributeNames unused in expressions: keys: {#x}");
  fx_fail(&f, TT_DDB_PUT_ITEM,
          "{'TableName':'tbl','Item':{'pk':{'S':'a'}},'ExpressionAttributeNames':{'#x':'x'}}",
          "ValidationException",
          "ExpressionAttributeNames can only be specified when using expressions");
  fx_fail(&f, TT_DDB_PUT_ITEM,
          "{'TableName':'tbl','Item':{'pk':{'S':'a'}},'ConditionExpression':'v = :nope'}",
          "ValidationException",
          "Invalid ConditionExpression: An expression attribute value used in expression is not "
          "defined; attribute value: :nope");
  /* Legacy parameters are refused rather than silently ignored (the table
   * operations, which the backend still takes as JSON; the typed ones have
   * none). */
  fx_fail(&f, TT_DDB_DESCRIBE_TABLE, "{'TableName':'tbl','Expected':{'pk':{'Exists':false}}}",
          "ValidationException",
          "The memory backend does not support the legacy parameter Expected: use expressions");
  fx_teardown(&f);
}
END_TEST

static int64_t fake_now;
static int64_t fake_clock(void *arg) {
  (void)arg;
  return fake_now;
}

START_TEST(ttl_hides_expired_items) {
  struct fx f;
  struct tt_memdb_options o = {.clock = fake_clock, .hide_expired = true};
  fake_now = 1700000000;
  fx_setup(&f, &o);
  fx_exec(&f, TT_DDB_CREATE_TABLE, COMPOSITE_TABLE);
  /* DescribeTimeToLive names no attribute while TTL is off, as DynamoDB. */
  fx_expect(&f, TT_DDB_DESCRIBE_TIME_TO_LIVE, "{'TableName':'cmp'}",
            "{'TimeToLiveDescription':{'TimeToLiveStatus':'DISABLED'}}");
  fx_fail(&f, TT_DDB_DESCRIBE_TIME_TO_LIVE, "{'TableName':'nope'}", "ResourceNotFoundException",
          "Requested resource not found: Table: nope not found");
  fx_expect(&f, TT_DDB_UPDATE_TIME_TO_LIVE,
            "{'TableName':'cmp','TimeToLiveSpecification':{'AttributeName':'ttl','Enabled':true}}",
            "{'TimeToLiveSpecification':{'AttributeName':'ttl','Enabled':true}}");
  fx_expect(&f, TT_DDB_DESCRIBE_TIME_TO_LIVE, "{'TableName':'cmp'}",
            "{'TimeToLiveDescription':{'TimeToLiveStatus':'ENABLED','AttributeName':'ttl'}}");
  fx_fail(&f, TT_DDB_UPDATE_TIME_TO_LIVE,
          "{'TableName':'cmp','TimeToLiveSpecification':{'AttributeName':'ttl','Enabled':true}}",
          "ValidationException", "TimeToLive is already enabled");
  fx_put_in(&f, "cmp", "{'pk':{'S':'a'},'sk':{'N':'1'},'ttl':{'N':'1700000100'}}");
  fx_put_in(&f, "cmp", "{'pk':{'S':'a'},'sk':{'N':'2'},'ttl':{'N':'1700000200'}}");
  fx_put_in(&f, "cmp", "{'pk':{'S':'a'},'sk':{'N':'3'},'ttl':{'S':'not a number'}}");
  json_t *r = fx_ok(&f, TT_DDB_QUERY,
                    "{'TableName':'cmp','KeyConditionExpression':'pk = :p',"
                    "'ExpressionAttributeValues':{':p':{'S':'a'}},'Select':'COUNT'}");
  fx_assert_json(r, "{'Count':3,'ScannedCount':3}");
  json_decref(r);
  fake_now = 1700000150; /* the first item is now in the past */
  r = fx_ok(&f, TT_DDB_QUERY,
            "{'TableName':'cmp','KeyConditionExpression':'pk = :p',"
            "'ExpressionAttributeValues':{':p':{'S':'a'}},'Select':'COUNT'}");
  fx_assert_json(r, "{'Count':2,'ScannedCount':2}");
  json_decref(r);
  fx_expect(&f, TT_DDB_GET_ITEM, "{'TableName':'cmp','Key':{'pk':{'S':'a'},'sk':{'N':'1'}}}", "{}");
  r = fx_ok(&f, TT_DDB_SCAN, "{'TableName':'cmp','Select':'COUNT'}");
  fx_assert_json(r, "{'Count':2,'ScannedCount':2}");
  json_decref(r);
  /* An expired item is absent for conditions too. */
  fx_expect(&f, TT_DDB_PUT_ITEM,
            "{'TableName':'cmp','Item':{'pk':{'S':'a'},'sk':{'N':'1'}},"
            "'ConditionExpression':'attribute_not_exists(pk)','ReturnValues':'ALL_OLD'}",
            "{}");
  fx_expect(&f, TT_DDB_GET_ITEM, "{'TableName':'cmp','Key':{'pk':{'S':'a'},'sk':{'N':'1'}}}",
            "{'Item':{'pk':{'S':'a'},'sk':{'N':'1'}}}");
  fx_expect(&f, TT_DDB_UPDATE_TIME_TO_LIVE,
            "{'TableName':'cmp','TimeToLiveSpecification':{'AttributeName':'ttl','Enabled':false}}",
            "{'TimeToLiveSpecification':{'AttributeName':'ttl','Enabled':false}}");
  fx_teardown(&f);
}
END_TEST

int main(void) {
  Suite *s = suite_create("memdb");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, completes_async_in_order_and_cancels);
  tcase_add_test(tc, latency_option_delays_completion);
  tcase_add_test(tc, run_ready_completes_once_after_start);
  tcase_add_test(tc, run_ready_runs_a_long_chain_flat);
  tcase_add_test(tc, run_ready_slice_leaves_the_rest_to_the_loop);
  tcase_add_test(tc, run_ready_leaves_delayed_and_completes_canceled);
  tcase_add_test(tc, create_and_describe_table);
  tcase_add_test(tc, create_table_validation);
  tcase_add_test(tc, unknown_and_deleted_tables);
  tcase_add_test(tc, put_get_roundtrip_and_projection);
  tcase_add_test(tc, key_must_match_schema);
  tcase_add_test(tc, put_validates_keys_and_size);
  tcase_add_test(tc, update_checks_index_keys);
  tcase_add_test(tc, condition_failed_with_all_old);
  tcase_add_test(tc, return_values);
  tcase_add_test(tc, update_upserts_and_protects_keys);
  tcase_add_test(tc, placeholder_rules);
  tcase_add_test(tc, ttl_hides_expired_items);
  suite_add_tcase(s, tc);
  return fx_run_suite(s);
}
