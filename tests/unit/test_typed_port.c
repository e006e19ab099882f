/* SPDX-License-Identifier: Apache-2.0 */
/* test_typed_port.c -- the typed form of the backend port: typed_wire's
 * request text (parsed back with jansson, member by member) and answer
 * reading; the memory backend answering a typed request as it answers the
 * same request in DynamoDB's JSON read and answered by the DynamoDB
 * listener's conversion (test_memdb.h; results, ReturnValues, condition
 * failures, validation errors, Query/Scan paging, segments, Select=COUNT); the
 * dynamodb backend sending a typed GetItem and Query to a canned server;
 * the table operations' codec (table_json.h) and their typed calls on both
 * backends. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "backend/backend.h"
#include "backend/dynamodb/credentials.h"
#include "backend/dynamodb/ddb.h"
#include "backend/dynamodb/typed_wire.h"
#include "backend/dynamodb/wire_reader.h"
#include "backend/table_json.h"
#include "http_test_server.h"
#include "test_memdb.h"
#include "value/codec_ddb.h"

/* ---- values ---- */

/* An attribute map from DynamoDB JSON written with ' for ". */
static struct tt_av av_map(const char *text) {
  json_t *j = fx_json(text);
  struct tt_av v;
  struct tt_error err;
  ck_assert_msg(tt_ddb_item_from_json(j, "test", &v, &err) == 0, "bad test map: %s",
                err.message);
  json_decref(j);
  return v;
}

/* Asserts an attribute map as DynamoDB JSON; want NULL: no value (type 0). */
static void assert_av(const struct tt_av *v, const char *want) {
  if (want == NULL) {
    ck_assert_int_eq(v->type, 0);
    return;
  }
  ck_assert_int_eq(v->type, TT_AV_M);
  json_t *j = tt_ddb_item_to_json(v);
  fx_assert_json(j, want);
  json_decref(j);
}

/* Parses text with plain jansson (NUL allowed in strings); must succeed. */
static json_t *jparse(const char *text, size_t len) {
  json_error_t e;
  json_t *j = json_loadb(text, len, JSON_ALLOW_NUL, &e);
  ck_assert_msg(j != NULL, "not JSON (%s): %.*s", e.text, (int)len, text);
  return j;
}

/* Plain jansson from JSON written with ' for ". */
static json_t *jq(const char *text) {
  char *s = strdup(text);
  for (char *p = s; *p; p++)
    if (*p == '\'')
      *p = '"';
  json_t *j = jparse(s, strlen(s));
  free(s);
  return j;
}

/* Asserts two jansson trees equal (objects: the same members exactly). */
static void assert_json_equal(const json_t *got, const json_t *want) {
  if (!json_equal(got, want)) {
    char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
    char *w = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);
    ck_abort_msg("JSON differs:\n got  %s\n want %s", g, w);
  }
}

/* A jansson string member's bytes equal s[0..len). */
static void assert_jstr(const json_t *j, const char *s, size_t len) {
  ck_assert_msg(json_is_string(j), "not a string");
  ck_assert_uint_eq(json_string_length(j), len);
  ck_assert_int_eq(memcmp(json_string_value(j), s, len), 0);
}

/* ---- 1. typed_wire ------------------------------------------------------- */

/* The request text of `r` for `op`, parsed back. */
static json_t *item_wire(enum tt_ddb_op op, const struct tt_ddb_item_request *r) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_ddb_item_request_write(&b, op, r), 0);
  json_t *j = jparse(b.data, b.len);
  tt_buf_free(&b);
  return j;
}

static json_t *read_wire(const struct tt_ddb_read_request *r) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_ddb_read_request_write(&b, r), 0);
  json_t *j = jparse(b.data, b.len);
  tt_buf_free(&b);
  return j;
}

START_TEST(wire_item_request_every_member) {
  struct tt_av key = av_map("{'pk':{'S':'a'},'sk':{'N':'1.5'}}");
  struct tt_av item = av_map("{'pk':{'S':'a'},'b':{'B':'AAE='},'l':{'L':[{'NULL':true},"
                             "{'BOOL':false}]},'ss':{'SS':['y','x']}}");
  struct tt_av names = av_map("{'#v':{'S':'v'},'#w':{'S':'w'}}");
  struct tt_av values = av_map("{':one':{'N':'1'},':m':{'M':{'x':{'NS':['2','1']}}}}");
  struct tt_ddb_item_request r = {
      .table = "t",
      .key = &key,
      .item = &item,
      .condition = "attribute_exists(#v)",
      .update = "SET #w = :one, #v = :m",
      .projection = "#v, #w",
      .names = &names,
      .values = &values,
      .return_values = TT_DDB_RETURN_UPDATED_NEW,
      .old_on_condition_failure = true,
      .consistent_read = true,
  };
  /* UpdateItem writes Key, not Item, and every member UpdateItem has; a
   * GetItem's ProjectionExpression and ConsistentRead are not among them. */
  json_t *got = item_wire(TT_DDB_UPDATE_ITEM, &r);
  json_t *want = jq(
      "{'TableName':'t','Key':{'pk':{'S':'a'},'sk':{'N':'1.5'}},"
      "'ConditionExpression':'attribute_exists(#v)','UpdateExpression':'SET #w = :one, #v = :m',"
      "'ExpressionAttributeNames':{'#v':'v','#w':'w'},"
      "'ExpressionAttributeValues':{':one':{'N':'1'},':m':{'M':{'x':{'NS':['1','2']}}}},"
      "'ReturnValues':'UPDATED_NEW','ReturnValuesOnConditionCheckFailure':'ALL_OLD'}");
  assert_json_equal(got, want);
  json_decref(got);
  json_decref(want);

  /* GetItem: Key, projection, maps and ConsistentRead; no write members. */
  got = item_wire(TT_DDB_GET_ITEM, &r);
  want = jq("{'TableName':'t','Key':{'pk':{'S':'a'},'sk':{'N':'1.5'}},"
            "'ProjectionExpression':'#v, #w','ExpressionAttributeNames':{'#v':'v','#w':'w'},"
            "'ExpressionAttributeValues':{':one':{'N':'1'},':m':{'M':{'x':{'NS':['1','2']}}}},"
            "'ConsistentRead':true}");
  assert_json_equal(got, want);
  json_decref(got);
  json_decref(want);

  /* PutItem writes Item (sets sorted, binary as base64), not Key. */
  got = item_wire(TT_DDB_PUT_ITEM, &r);
  ck_assert_ptr_null(json_object_get(got, "Key"));
  want = jq("{'pk':{'S':'a'},'b':{'B':'AAE='},'l':{'L':[{'NULL':true},{'BOOL':false}]},"
            "'ss':{'SS':['x','y']}}");
  assert_json_equal(json_object_get(got, "Item"), want);
  json_decref(got);
  json_decref(want);

  /* Each ReturnValues by its name; NONE is not written. */
  static const char *const rv[] = {NULL, "ALL_OLD", "UPDATED_OLD", "ALL_NEW", "UPDATED_NEW"};
  for (int i = 0; i < 5; i++) {
    r.return_values = (enum tt_ddb_return_values)i;
    got = item_wire(TT_DDB_DELETE_ITEM, &r);
    if (rv[i] == NULL)
      ck_assert_ptr_null(json_object_get(got, "ReturnValues"));
    else
      ck_assert_str_eq(json_string_value(json_object_get(got, "ReturnValues")), rv[i]);
    json_decref(got);
  }

  /* Absent members are absent, false flags too. */
  struct tt_ddb_item_request min = {.table = "t", .key = &key};
  got = item_wire(TT_DDB_GET_ITEM, &min);
  want = jq("{'TableName':'t','Key':{'pk':{'S':'a'},'sk':{'N':'1.5'}}}");
  assert_json_equal(got, want);
  json_decref(got);
  json_decref(want);
  /* No table, no key: an empty object, still valid JSON. */
  struct tt_ddb_item_request none = {0};
  got = item_wire(TT_DDB_GET_ITEM, &none);
  ck_assert_uint_eq(json_object_size(got), 0);
  json_decref(got);
  /* Names alone: the first member written carries no comma. */
  struct tt_ddb_item_request only_names = {.names = &names};
  got = item_wire(TT_DDB_GET_ITEM, &only_names);
  want = jq("{'ExpressionAttributeNames':{'#v':'v','#w':'w'}}");
  assert_json_equal(got, want);
  json_decref(got);
  json_decref(want);

  tt_av_free(&key);
  tt_av_free(&item);
  tt_av_free(&names);
  tt_av_free(&values);
}
END_TEST

/* Quotes, backslashes, every kind of control character, DEL, non-ASCII
 * (2, 3 and 4 UTF-8 bytes), U+2028 and markup. */
static const char NASTY[] = "q\"uo\\te/\n\t\r\b\f\x01\x1f\x7f \xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac "
                            "\xf0\x9f\x98\x80 \xe2\x80\xa8 </script>&";

/* A one-member M whose member name and S value are given by length. */
static void one_member(struct tt_av *m, const char *name, size_t name_len, const char *s,
                       size_t len) {
  ck_assert_int_eq(tt_av_map(m, 1), 0);
  m->u.members[0].name = malloc(name_len + 1);
  memcpy(m->u.members[0].name, name, name_len);
  m->u.members[0].name[name_len] = '\0';
  m->u.members[0].name_len = name_len;
  ck_assert_int_eq(tt_av_string(&m->u.members[0].value, s, len), 0);
}

START_TEST(wire_strings_needing_escapes_round_trip) {
  const size_t n = sizeof(NASTY) - 1;
  /* A value with a NUL inside: S values are counted bytes. */
  char withnul[sizeof(NASTY) + 2];
  memcpy(withnul, "a\0b", 3);
  memcpy(withnul + 3, NASTY, n);
  const size_t wn = n + 3;
  static const char kname[] = "p\"k\\\n\x02\xc3\xa9";
  static const char nname[] = "#\"n\x01";
  struct tt_av key, names, values;
  one_member(&key, kname, sizeof(kname) - 1, NASTY, n);
  one_member(&names, nname, sizeof(nname) - 1, NASTY, n);
  one_member(&values, ":v", 2, withnul, wn);
  struct tt_ddb_item_request r = {.table = "t\"\\\x03", .key = &key, .condition = NASTY,
                                  .update = NASTY, .projection = NASTY, .names = &names,
                                  .values = &values};
  json_t *got = item_wire(TT_DDB_UPDATE_ITEM, &r);
  assert_jstr(json_object_get(got, "TableName"), "t\"\\\x03", 4);
  assert_jstr(json_object_get(got, "ConditionExpression"), NASTY, n);
  assert_jstr(json_object_get(got, "UpdateExpression"), NASTY, n);
  const json_t *k = json_object_get(got, "Key");
  ck_assert_uint_eq(json_object_size(k), 1);
  assert_jstr(json_object_get(json_object_get(k, kname), "S"), NASTY, n);
  const json_t *nm = json_object_get(got, "ExpressionAttributeNames");
  ck_assert_uint_eq(json_object_size(nm), 1);
  assert_jstr(json_object_get(nm, nname), NASTY, n);
  assert_jstr(json_object_get(json_object_get(json_object_get(got, "ExpressionAttributeValues"),
                                              ":v"),
                              "S"),
              withnul, wn);
  json_decref(got);

  /* The same strings in a read request. */
  struct tt_ddb_read_request q = {.table = NASTY, .index = NASTY, .key_condition = NASTY,
                                  .filter = NASTY, .projection = NASTY, .names = &names,
                                  .values = &values, .start_key = &key};
  got = read_wire(&q);
  static const char *const members[] = {"TableName", "IndexName", "KeyConditionExpression",
                                        "FilterExpression", "ProjectionExpression"};
  for (size_t i = 0; i < 5; i++)
    assert_jstr(json_object_get(got, members[i]), NASTY, n);
  assert_jstr(json_object_get(json_object_get(got, "ExpressionAttributeNames"), nname), NASTY, n);
  assert_jstr(
      json_object_get(json_object_get(json_object_get(got, "ExclusiveStartKey"), kname), "S"),
      NASTY, n);
  json_decref(got);
  tt_av_free(&key);
  tt_av_free(&names);
  tt_av_free(&values);
}
END_TEST

START_TEST(wire_read_request_every_member) {
  struct tt_av names = av_map("{'#p':{'S':'pk'},'#v':{'S':'v'}}");
  struct tt_av values = av_map("{':p':{'S':'a'},':one':{'N':'1'}}");
  struct tt_av esk = av_map("{'pk':{'S':'a'},'sk':{'N':'3'},'g':{'S':'G'}}");
  struct tt_ddb_read_request r = {
      .table = "t",
      .index = "gsi",
      .key_condition = "#p = :p",
      .filter = "#v >= :one",
      .projection = "#p, #v",
      .names = &names,
      .values = &values,
      .start_key = &esk,
      .limit = 25,
      .select = TT_DDB_SELECT_SPECIFIC_ATTRIBUTES,
      .backward = true,
      .consistent_read = true,
      .segment = 2,
      .total_segments = 4,
  };
  json_t *got = read_wire(&r);
  json_t *want =
      jq("{'TableName':'t','IndexName':'gsi','KeyConditionExpression':'#p = :p',"
         "'FilterExpression':'#v >= :one','ProjectionExpression':'#p, #v',"
         "'ExpressionAttributeNames':{'#p':'pk','#v':'v'},"
         "'ExpressionAttributeValues':{':p':{'S':'a'},':one':{'N':'1'}},"
         "'ExclusiveStartKey':{'pk':{'S':'a'},'sk':{'N':'3'},'g':{'S':'G'}},"
         "'Select':'SPECIFIC_ATTRIBUTES','Limit':25,'ScanIndexForward':false,"
         "'ConsistentRead':true,'Segment':2,'TotalSegments':4}");
  assert_json_equal(got, want);
  json_decref(got);
  json_decref(want);

  /* Each Select by its name; the default is not written. */
  static const char *const sel[] = {NULL, "ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES",
                                    "SPECIFIC_ATTRIBUTES", "COUNT"};
  for (int i = 0; i < 5; i++) {
    struct tt_ddb_read_request s = {.table = "t", .select = (enum tt_ddb_select)i};
    got = read_wire(&s);
    if (sel[i] == NULL)
      ck_assert_ptr_null(json_object_get(got, "Select"));
    else
      ck_assert_str_eq(json_string_value(json_object_get(got, "Select")), sel[i]);
    json_decref(got);
  }

  /* Only the table: nothing else, forward order and eventual reads are
   * DynamoDB's defaults. Segment 0 is written when the scan is parallel;
   * a Limit past 32 bits is written exactly. */
  struct tt_ddb_read_request min = {.table = "t"};
  got = read_wire(&min);
  want = jq("{'TableName':'t'}");
  assert_json_equal(got, want);
  json_decref(got);
  json_decref(want);
  struct tt_ddb_read_request seg0 = {.table = "t", .segment = 0, .total_segments = 3,
                                     .limit = (int64_t)1 << 40};
  got = read_wire(&seg0);
  want = jq("{'TableName':'t','Segment':0,'TotalSegments':3,'Limit':1099511627776}");
  assert_json_equal(got, want);
  json_decref(got);
  json_decref(want);

  tt_av_free(&names);
  tt_av_free(&values);
  tt_av_free(&esk);
}
END_TEST

/* The dynamodb backend's readers of an answer, on the text of `resp`. */
static int item_response(enum tt_ddb_op op, const json_t *resp, struct tt_av *out,
                         struct tt_backend_error *e) {
  char *text = json_dumps(resp, JSON_COMPACT);
  ck_assert_ptr_nonnull(text);
  int rc = tt_ddb_item_response_parse(op, text, strlen(text), out, e);
  free(text);
  return rc;
}

static int read_response(const json_t *resp, struct tt_ddb_read_result *out,
                         struct tt_backend_error *e) {
  char *text = json_dumps(resp, JSON_COMPACT);
  ck_assert_ptr_nonnull(text);
  int rc = tt_ddb_read_response_parse(text, strlen(text), out, e);
  free(text);
  return rc;
}

START_TEST(wire_read_response_into_typed_values) {
  struct tt_ddb_read_result out;
  struct tt_backend_error e;
  memset(&e, 0, sizeof(e));
  json_t *resp = jq("{'Items':[{'pk':{'S':'a'},'n':{'N':'1.50'}},{'pk':{'S':'b'},"
                    "'s':{'SS':['z','y']}}],'Count':2,'ScannedCount':5,"
                    "'LastEvaluatedKey':{'pk':{'S':'b'}},'ConsumedCapacity':{'TableName':'t'}}");
  ck_assert_int_eq(read_response(resp, &out, &e), 0);
  ck_assert_uint_eq(out.n_items, 2);
  assert_av(&out.items[0], "{'pk':{'S':'a'},'n':{'N':'1.5'}}");
  assert_av(&out.items[1], "{'pk':{'S':'b'},'s':{'SS':['y','z']}}");
  ck_assert_uint_eq(out.count, 2);
  ck_assert_uint_eq(out.scanned_count, 5);
  assert_av(&out.last_key, "{'pk':{'S':'b'}}");
  ck_assert_str_eq(e.type, "");
  tt_ddb_read_result_free(&out);
  ck_assert_ptr_null(out.items);
  ck_assert_uint_eq(out.n_items, 0);
  json_decref(resp);

  /* The last page: no LastEvaluatedKey (absent, null or empty), type 0. A
   * Select=COUNT answer has no Items. */
  static const char *const ends[] = {
      "{'Items':[],'Count':0,'ScannedCount':0}",
      "{'Items':[{'pk':{'S':'a'}}],'Count':1,'ScannedCount':1,'LastEvaluatedKey':null}",
      "{'Items':[{'pk':{'S':'a'}}],'Count':1,'ScannedCount':1,'LastEvaluatedKey':{}}",
      "{'Count':7,'ScannedCount':9}",
  };
  static const size_t n_items[] = {0, 1, 1, 0};
  for (size_t i = 0; i < 4; i++) {
    resp = jq(ends[i]);
    ck_assert_int_eq(read_response(resp, &out, &e), 0);
    ck_assert_uint_eq(out.n_items, n_items[i]);
    ck_assert_int_eq(out.last_key.type, 0);
    tt_ddb_read_result_free(&out);
    json_decref(resp);
  }
  resp = jq("{'Count':7,'ScannedCount':9}");
  ck_assert_int_eq(read_response(resp, &out, &e), 0);
  ck_assert_ptr_null(out.items);
  ck_assert_uint_eq(out.count, 7);
  ck_assert_uint_eq(out.scanned_count, 9);
  tt_ddb_read_result_free(&out);
  json_decref(resp);
}
END_TEST

START_TEST(wire_item_response_into_typed_values) {
  struct tt_av out;
  struct tt_backend_error e;
  memset(&e, 0, sizeof(e));
  json_t *resp = jq("{'Item':{'pk':{'S':'a'},'m':{'M':{'x':{'NULL':true}}}}}");
  ck_assert_int_eq(item_response(TT_DDB_GET_ITEM, resp, &out, &e), 0);
  assert_av(&out, "{'pk':{'S':'a'},'m':{'M':{'x':{'NULL':true}}}}");
  tt_av_free(&out);
  /* A write reads Attributes, never Item. */
  ck_assert_int_eq(item_response(TT_DDB_PUT_ITEM, resp, &out, &e), 0);
  ck_assert_int_eq(out.type, 0);
  json_decref(resp);
  resp = jq("{'Attributes':{'v':{'N':'2'}}}");
  ck_assert_int_eq(item_response(TT_DDB_UPDATE_ITEM, resp, &out, &e), 0);
  assert_av(&out, "{'v':{'N':'2'}}");
  tt_av_free(&out);
  ck_assert_int_eq(item_response(TT_DDB_GET_ITEM, resp, &out, &e), 0);
  ck_assert_int_eq(out.type, 0);
  json_decref(resp);
  /* An absent or null Item: type 0 (the key is not there). */
  static const char *const absent[] = {"{}", "{'Item':null}",
                                       "{'ConsumedCapacity':{'TableName':'t'}}"};
  for (size_t i = 0; i < 3; i++) {
    resp = jq(absent[i]);
    out.type = TT_AV_S; /* overwritten */
    ck_assert_int_eq(item_response(TT_DDB_GET_ITEM, resp, &out, &e), 0);
    ck_assert_int_eq(out.type, 0);
    json_decref(resp);
  }
  ck_assert_str_eq(e.type, "");
  /* Invalid: InvalidResponse, and out holds nothing. */
  static const char *const bad[] = {"{'Item':'x'}", "{'Item':[]}", "{'Item':{'pk':{'N':'x'}}}",
                                    "{'Item':{'pk':{'S':'a'},'b':{'B':'not base64!'}}}",
                                    "{'Item':{'pk':{'S':'a'},'s':{'SS':[]}}}"};
  for (size_t i = 0; i < 5; i++) {
    resp = jq(bad[i]);
    memset(&e, 0, sizeof(e));
    ck_assert_int_eq(item_response(TT_DDB_GET_ITEM, resp, &out, &e), -1);
    ck_assert_str_eq(e.type, "InvalidResponse");
    ck_assert(!e.retryable);
    ck_assert_int_eq(out.type, 0);
    tt_av_free(&out); /* harmless; under ASan any leak would show */
    tt_backend_error_clear(&e);
    json_decref(resp);
  }
}
END_TEST

START_TEST(wire_invalid_read_responses) {
  /* Each must be refused with InvalidResponse, leaving out empty; the
   * later ones fail after items were already decoded (leaks show under
   * ASan). */
  static const char *const bad[] = {
      "{'Items':{},'Count':0}",
      "{'Items':'x'}",
      "{'Items':[{'pk':{'S':'a'}},{'pk':{'X':'1'}}],'Count':2}",
      "{'Items':[{'pk':{'S':'a'}},{'pk':{'S':'b'}},7],'Count':3}",
      "{'Items':[],'Count':-1}",
      "{'Items':[],'Count':0,'ScannedCount':-5}",
      "{'Items':[],'Count':'2'}",
      "{'Items':[],'Count':1.5}",
      "{'Items':[{'pk':{'S':'a'}}],'Count':1,'LastEvaluatedKey':{'pk':{'N':'1e999'}}}",
      "{'Items':[{'pk':{'S':'a'}}],'Count':1,'LastEvaluatedKey':'pk'}",
      "{'Items':[{'pk':{'S':'a'}}],'Count':1,'LastEvaluatedKey':[{'pk':{'S':'a'}}]}",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    struct tt_ddb_read_result out;
    struct tt_backend_error e;
    memset(&e, 0, sizeof(e));
    json_t *resp = jq(bad[i]);
    ck_assert_msg(read_response(resp, &out, &e) == -1, "accepted: %s", bad[i]);
    ck_assert_msg(strcmp(e.type, "InvalidResponse") == 0, "%s: %s", bad[i], e.type);
    ck_assert_ptr_null(out.items);
    ck_assert_uint_eq(out.n_items, 0);
    ck_assert_int_eq(out.last_key.type, 0);
    tt_backend_error_clear(&e);
    json_decref(resp);
  }
}
END_TEST

/* ---- 2. the memory backend: typed and JSON forms agree -------------------- */

/* Runs a typed call (`ir` or `rr`, borrowed) on f's backend to completion
 * into *c; the error (if any) moves to f->err. Returns the status. */
static int typed_call(struct fx *f, enum tt_ddb_op op, const struct tt_ddb_item_request *ir,
                      const struct tt_ddb_read_request *rr, struct tt_backend_call *c) {
  int done = 0;
  memset(c, 0, sizeof(*c));
  c->op = op;
  c->item = ir;
  c->read = rr;
  c->done = fx_done;
  c->arg = &done;
  ck_assert(tt_backend_call_typed(c));
  ck_assert_int_eq(f->b->ops->start(f->b, c), 0);
  ck_assert_int_eq(done, 0); /* never inside start */
  uv_run(&f->loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(done, 1);
  c->arg = NULL;
  ck_assert_ptr_null(c->response); /* typed answers come typed */
  tt_backend_error_clear(&f->err);
  f->err = c->error;
  memset(&c->error, 0, sizeof(c->error));
  if (c->status == 0)
    ck_assert_str_eq(f->err.type, "");
  else {
    /* A failed call owns nothing. */
    ck_assert_int_eq(c->item_out.type, 0);
    ck_assert_ptr_null(c->read_out.items);
    ck_assert_int_eq(c->read_out.last_key.type, 0);
  }
  return c->status;
}

/* The table the JSON twin of a typed request runs on: "two" for "tbl" (the
 * tests keep both in the same state), else the same name. */
static const char *twin_table(const char *t) {
  return t && strcmp(t, "tbl") == 0 ? "two" : t;
}

/* The JSON form of a typed item request (as typed_wire writes it: part 1
 * checks that text), on the twin table. */
static json_t *item_json_form(enum tt_ddb_op op, const struct tt_ddb_item_request *r) {
  struct tt_ddb_item_request tw = *r;
  tw.table = twin_table(r->table);
  struct tt_buf b;
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_ddb_item_request_write(&b, op, &tw), 0);
  json_t *j = NULL;
  struct tt_error err;
  ck_assert_int_eq(tt_json_parse(b.data, b.len, NULL, &j, &err), 0);
  tt_buf_free(&b);
  return j;
}

static json_t *read_json_form(const struct tt_ddb_read_request *r) {
  struct tt_ddb_read_request tw = *r;
  tw.table = twin_table(r->table);
  struct tt_buf b;
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_ddb_read_request_write(&b, &tw), 0);
  json_t *j = NULL;
  struct tt_error err;
  ck_assert_int_eq(tt_json_parse(b.data, b.len, NULL, &j, &err), 0);
  tt_buf_free(&b);
  return j;
}

/* A typed item answer as the JSON form's answer ({"Item"}/{"Attributes"}). */
static json_t *item_answer_json(enum tt_ddb_op op, const struct tt_av *v) {
  json_t *o = json_object();
  if (v->type == TT_AV_M)
    json_object_set_new(o, op == TT_DDB_GET_ITEM ? "Item" : "Attributes",
                        tt_ddb_item_to_json(v));
  return o;
}

/* Runs `r` typed and its JSON form on the twin table; both succeed and
 * answer `want` (the JSON form's answer). */
static void both_ok(struct fx *f, enum tt_ddb_op op, const struct tt_ddb_item_request *r,
                    const char *want) {
  struct tt_backend_call c;
  int st = typed_call(f, op, r, NULL, &c);
  ck_assert_msg(st == 0, "typed %s failed: %s: %s", tt_ddb_op_name(op), f->err.type,
                f->err.message);
  json_t *typed = item_answer_json(op, &c.item_out);
  tt_av_free(&c.item_out);
  json_t *req = item_json_form(op, r), *resp = NULL;
  st = fx_run(f, op, req, &resp);
  ck_assert_msg(st == 0, "JSON %s failed: %s: %s", tt_ddb_op_name(op), f->err.type,
                f->err.message);
  fx_assert_json(typed, want);
  fx_assert_json(resp, want);
  json_decref(typed);
  json_decref(resp);
  json_decref(req);
}

/* Runs `r` typed and in JSON form; both fail alike (type, message, status,
 * body), with error type `type`. Returns the typed error's body (owned by
 * the caller, may be NULL). */
static json_t *both_fail(struct fx *f, enum tt_ddb_op op, const struct tt_ddb_item_request *r,
                         const char *type) {
  struct tt_backend_call c;
  ck_assert_msg(typed_call(f, op, r, NULL, &c) == -1, "typed %s succeeded", tt_ddb_op_name(op));
  struct tt_backend_error te = f->err;
  memset(&f->err, 0, sizeof(f->err));
  json_t *req = item_json_form(op, r), *resp = NULL;
  ck_assert_int_eq(fx_run(f, op, req, &resp), -1);
  ck_assert_ptr_null(resp);
  ck_assert_str_eq(te.type, type);
  ck_assert_str_eq(f->err.type, te.type);
  ck_assert_str_eq(f->err.message, te.message);
  ck_assert_uint_eq(f->err.http_status, te.http_status);
  ck_assert_uint_eq(te.http_status, 400);
  if (te.body == NULL) {
    ck_assert_ptr_null(f->err.body);
  } else {
    ck_assert_ptr_nonnull(f->err.body);
    char *a = fx_dump(te.body), *b = fx_dump(f->err.body);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
  }
  json_decref(req);
  json_t *body = te.body;
  te.body = NULL;
  return body;
}

static void setup_twins(struct fx *f) {
  fx_setup(f, NULL);
  fx_exec(f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  fx_exec(f, TT_DDB_CREATE_TABLE,
          "{'TableName':'two','BillingMode':'PAY_PER_REQUEST','AttributeDefinitions':"
          "[{'AttributeName':'pk','AttributeType':'S'}],'KeySchema':[{'AttributeName':'pk',"
          "'KeyType':'HASH'}]}");
}

START_TEST(memdb_typed_put_then_get) {
  struct fx f;
  setup_twins(&f);
  struct tt_av item = av_map("{'pk':{'S':'a'},'n':{'N':'10'},'s':{'SS':['x','y']},"
                             "'m':{'M':{'l':{'L':[{'S':'deep'},{'NULL':true}]}}},"
                             "'b':{'B':'AAEC'}}");
  struct tt_av key = av_map("{'pk':{'S':'a'}}");
  struct tt_av missing = av_map("{'pk':{'S':'zz'}}");
  struct tt_ddb_item_request put = {.table = "tbl", .item = &item};
  both_ok(&f, TT_DDB_PUT_ITEM, &put, "{}");
  struct tt_ddb_item_request get = {.table = "tbl", .key = &key, .consistent_read = true};
  struct tt_backend_call c;
  ck_assert_int_eq(typed_call(&f, TT_DDB_GET_ITEM, &get, NULL, &c), 0);
  ck_assert(tt_av_equal(&c.item_out, &item));
  tt_av_free(&c.item_out);
  both_ok(&f, TT_DDB_GET_ITEM, &get,
          "{'Item':{'pk':{'S':'a'},'n':{'N':'10'},'s':{'SS':['x','y']},"
          "'m':{'M':{'l':{'L':[{'S':'deep'},{'NULL':true}]}}},'b':{'B':'AAEC'}}}");
  /* A projection with a placeholder. */
  struct tt_av names = av_map("{'#m':{'S':'m'}}");
  struct tt_ddb_item_request proj = {.table = "tbl", .key = &key, .projection = "#m.l[0], n",
                                     .names = &names};
  both_ok(&f, TT_DDB_GET_ITEM, &proj,
          "{'Item':{'n':{'N':'10'},'m':{'M':{'l':{'L':[{'S':'deep'}]}}}}}");
  /* No item: status 0 and type 0. */
  struct tt_ddb_item_request none = {.table = "tbl", .key = &missing};
  ck_assert_int_eq(typed_call(&f, TT_DDB_GET_ITEM, &none, NULL, &c), 0);
  ck_assert_int_eq(c.item_out.type, 0);
  both_ok(&f, TT_DDB_GET_ITEM, &none, "{}");
  /* A typed delete, then the item is gone. */
  both_ok(&f, TT_DDB_DELETE_ITEM, &get, "{}");
  both_ok(&f, TT_DDB_GET_ITEM, &get, "{}");
  tt_av_free(&item);
  tt_av_free(&key);
  tt_av_free(&missing);
  tt_av_free(&names);
  fx_teardown(&f);
}
END_TEST

START_TEST(memdb_typed_return_values) {
  struct fx f;
  setup_twins(&f);
  struct tt_av v1 = av_map("{'pk':{'S':'a'},'v':{'N':'1'},'w':{'S':'x'}}");
  struct tt_av v2 = av_map("{'pk':{'S':'a'},'v':{'N':'2'}}");
  struct tt_av key = av_map("{'pk':{'S':'a'}}");
  struct tt_av inc = av_map("{':inc':{'N':'5'}}");
  struct tt_av vals = av_map("{':inc':{'N':'5'},':z':{'S':'z'}}");
  /* ALL_OLD of a new item: nothing; of an existing one: the old item. */
  struct tt_ddb_item_request put = {.table = "tbl", .item = &v1,
                                    .return_values = TT_DDB_RETURN_ALL_OLD};
  both_ok(&f, TT_DDB_PUT_ITEM, &put, "{}");
  put.item = &v2;
  both_ok(&f, TT_DDB_PUT_ITEM, &put,
          "{'Attributes':{'pk':{'S':'a'},'v':{'N':'1'},'w':{'S':'x'}}}");
  /* UpdateItem: ALL_NEW, UPDATED_NEW, UPDATED_OLD, ALL_OLD. */
  struct tt_ddb_item_request up = {.table = "tbl", .key = &key, .update = "SET v = v + :inc",
                                   .values = &inc, .return_values = TT_DDB_RETURN_ALL_NEW};
  both_ok(&f, TT_DDB_UPDATE_ITEM, &up, "{'Attributes':{'pk':{'S':'a'},'v':{'N':'7'}}}");
  up.return_values = TT_DDB_RETURN_UPDATED_NEW;
  up.update = "SET v = v + :inc, z = :z";
  up.values = &vals;
  both_ok(&f, TT_DDB_UPDATE_ITEM, &up, "{'Attributes':{'v':{'N':'12'},'z':{'S':'z'}}}");
  up.return_values = TT_DDB_RETURN_UPDATED_OLD;
  /* z existed: both are old values; v was 12. */
  both_ok(&f, TT_DDB_UPDATE_ITEM, &up, "{'Attributes':{'v':{'N':'12'},'z':{'S':'z'}}}");
  up.return_values = TT_DDB_RETURN_ALL_OLD;
  up.update = "REMOVE z";
  up.values = NULL;
  both_ok(&f, TT_DDB_UPDATE_ITEM, &up,
          "{'Attributes':{'pk':{'S':'a'},'v':{'N':'17'},'z':{'S':'z'}}}");
  /* UPDATED_NEW of a REMOVE: nothing left to return, so no Attributes. */
  up.return_values = TT_DDB_RETURN_UPDATED_NEW;
  up.update = "REMOVE w";
  both_ok(&f, TT_DDB_UPDATE_ITEM, &up, "{}");
  /* DeleteItem ALL_OLD. */
  struct tt_ddb_item_request del = {.table = "tbl", .key = &key,
                                    .return_values = TT_DDB_RETURN_ALL_OLD};
  both_ok(&f, TT_DDB_DELETE_ITEM, &del, "{'Attributes':{'pk':{'S':'a'},'v':{'N':'17'}}}");
  both_ok(&f, TT_DDB_DELETE_ITEM, &del, "{}");
  tt_av_free(&v1);
  tt_av_free(&v2);
  tt_av_free(&key);
  tt_av_free(&vals);
  tt_av_free(&inc);
  fx_teardown(&f);
}
END_TEST

START_TEST(memdb_typed_condition_failure) {
  struct fx f;
  setup_twins(&f);
  struct tt_av item = av_map("{'pk':{'S':'a'},'v':{'N':'1'}}");
  struct tt_av other = av_map("{'pk':{'S':'a'},'v':{'N':'99'}}");
  struct tt_av key = av_map("{'pk':{'S':'a'}}");
  struct tt_av nokey = av_map("{'pk':{'S':'nobody'}}");
  struct tt_av vals = av_map("{':two':{'N':'2'}}");
  struct tt_ddb_item_request put = {.table = "tbl", .item = &item};
  both_ok(&f, TT_DDB_PUT_ITEM, &put, "{}");
  /* With ALL_OLD on failure: the old item in error.body. */
  struct tt_ddb_item_request cput = {.table = "tbl", .item = &other,
                                     .condition = "attribute_not_exists(pk)",
                                     .old_on_condition_failure = true};
  json_t *body = both_fail(&f, TT_DDB_PUT_ITEM, &cput, "ConditionalCheckFailedException");
  ck_assert_ptr_nonnull(body);
  fx_assert_json(json_object_get(body, "Item"), "{'pk':{'S':'a'},'v':{'N':'1'}}");
  json_decref(body);
  ck_assert_str_eq(f.err.message, "The conditional request failed");
  /* Without it: no body. */
  cput.old_on_condition_failure = false;
  ck_assert_ptr_null(both_fail(&f, TT_DDB_PUT_ITEM, &cput, "ConditionalCheckFailedException"));
  /* An update's condition on a value, and a delete's. */
  struct tt_ddb_item_request cup = {.table = "tbl", .key = &key, .update = "SET v = :two",
                                    .condition = "v = :two", .values = &vals,
                                    .old_on_condition_failure = true};
  body = both_fail(&f, TT_DDB_UPDATE_ITEM, &cup, "ConditionalCheckFailedException");
  fx_assert_json(json_object_get(body, "Item"), "{'pk':{'S':'a'},'v':{'N':'1'}}");
  json_decref(body);
  struct tt_ddb_item_request cdel = {.table = "tbl", .key = &key, .condition = "v = :two",
                                     .values = &vals, .old_on_condition_failure = true};
  json_decref(both_fail(&f, TT_DDB_DELETE_ITEM, &cdel, "ConditionalCheckFailedException"));
  /* No old item to return when the key is absent. */
  struct tt_ddb_item_request cnew = {.table = "tbl", .key = &nokey,
                                     .condition = "attribute_exists(pk)",
                                     .old_on_condition_failure = true};
  ck_assert_ptr_null(
      both_fail(&f, TT_DDB_UPDATE_ITEM, &cnew, "ConditionalCheckFailedException"));
  /* None of them wrote. */
  struct tt_ddb_item_request get = {.table = "tbl", .key = &key};
  both_ok(&f, TT_DDB_GET_ITEM, &get, "{'Item':{'pk':{'S':'a'},'v':{'N':'1'}}}");
  struct tt_ddb_item_request get2 = {.table = "tbl", .key = &nokey};
  both_ok(&f, TT_DDB_GET_ITEM, &get2, "{}");
  tt_av_free(&item);
  tt_av_free(&other);
  tt_av_free(&key);
  tt_av_free(&nokey);
  tt_av_free(&vals);
  fx_teardown(&f);
}
END_TEST

START_TEST(memdb_typed_validation_errors_match_json) {
  struct fx f;
  setup_twins(&f);
  struct tt_av item = av_map("{'pk':{'S':'a'},'v':{'N':'1'}}");
  struct tt_av key = av_map("{'pk':{'S':'a'}}");
  struct tt_av badkey = av_map("{'pk':{'N':'1'}}");
  struct tt_av names = av_map("{'#u':{'S':'u'}}");
  struct tt_av vals = av_map("{':x':{'N':'1'}}");
  static const enum tt_ddb_op keyed[] = {TT_DDB_GET_ITEM, TT_DDB_UPDATE_ITEM,
                                         TT_DDB_DELETE_ITEM};
  /* A NULL key (item for PutItem). */
  for (size_t i = 0; i < 3; i++) {
    struct tt_ddb_item_request r = {.table = "tbl"};
    json_decref(both_fail(&f, keyed[i], &r, "ValidationException"));
    ck_assert_str_eq(f.err.message, "1 validation error detected: Value null at 'key' failed "
                                    "to satisfy constraint: Member must not be null");
  }
  struct tt_ddb_item_request r = {.table = "tbl"};
  json_decref(both_fail(&f, TT_DDB_PUT_ITEM, &r, "ValidationException"));
  ck_assert_str_eq(f.err.message, "1 validation error detected: Value null at 'item' failed "
                                  "to satisfy constraint: Member must not be null");
  /* A NULL table, an unknown table. */
  static const enum tt_ddb_op all[] = {TT_DDB_GET_ITEM, TT_DDB_PUT_ITEM, TT_DDB_UPDATE_ITEM,
                                       TT_DDB_DELETE_ITEM};
  for (size_t i = 0; i < 4; i++) {
    struct tt_ddb_item_request nt = {.key = &key, .item = &item};
    json_decref(both_fail(&f, all[i], &nt, "ValidationException"));
    ck_assert_str_eq(f.err.message, "1 validation error detected: Value null at 'tableName' "
                                    "failed to satisfy constraint: Member must not be null");
    struct tt_ddb_item_request ut = {.table = "nope", .key = &key, .item = &item};
    json_decref(both_fail(&f, all[i], &ut, "ResourceNotFoundException"));
  }
  /* Unused placeholders, and maps without any expression (GetItem's
   * expression is its projection, the writes' their condition). */
  for (size_t i = 0; i < 4; i++) {
    struct tt_ddb_item_request un = {.table = "tbl", .key = &key, .item = &item,
                                     .condition = "attribute_exists(pk)", .projection = "pk",
                                     .names = &names};
    json_decref(both_fail(&f, all[i], &un, "ValidationException"));
    ck_assert_ptr_nonnull(strstr(f.err.message, "#u"));
    un.names = NULL;
    un.values = &vals;
    json_decref(both_fail(&f, all[i], &un, "ValidationException"));
    ck_assert_ptr_nonnull(strstr(f.err.message, ":x"));
    un.condition = NULL;
    un.projection = NULL;
    json_decref(both_fail(&f, all[i], &un, "ValidationException"));
    ck_assert_str_eq(f.err.message,
                     "ExpressionAttributeValues can only be specified when using expressions");
  }
  /* ReturnValues a PutItem or DeleteItem cannot have. */
  struct tt_ddb_item_request rv = {.table = "tbl", .item = &item, .key = &key,
                                   .return_values = TT_DDB_RETURN_ALL_NEW};
  json_decref(both_fail(&f, TT_DDB_PUT_ITEM, &rv, "ValidationException"));
  ck_assert_str_eq(f.err.message, "ReturnValues can only be ALL_OLD or NONE");
  rv.return_values = TT_DDB_RETURN_UPDATED_OLD;
  json_decref(both_fail(&f, TT_DDB_DELETE_ITEM, &rv, "ValidationException"));
  ck_assert_str_eq(f.err.message, "ReturnValues can only be ALL_OLD or NONE");
  /* A key of the wrong type. */
  struct tt_ddb_item_request bk = {.table = "tbl", .key = &badkey};
  json_decref(both_fail(&f, TT_DDB_GET_ITEM, &bk, "ValidationException"));
  /* An update of the key. */
  struct tt_ddb_item_request uk = {.table = "tbl", .key = &key, .update = "SET pk = :x",
                                   .values = &vals};
  json_decref(both_fail(&f, TT_DDB_UPDATE_ITEM, &uk, "ValidationException"));
  /* Nothing was written by any of them. */
  struct tt_ddb_item_request get = {.table = "tbl", .key = &key};
  both_ok(&f, TT_DDB_GET_ITEM, &get, "{}");
  tt_av_free(&item);
  tt_av_free(&key);
  tt_av_free(&badkey);
  tt_av_free(&names);
  tt_av_free(&vals);
  fx_teardown(&f);
}
END_TEST

/* ---- Query and Scan ---- */

/* A typed read answer as the JSON form's answer. */
static json_t *read_answer_json(const struct tt_ddb_read_result *p, bool count_only) {
  json_t *o = json_pack("{s:I, s:I}", "Count", (json_int_t)p->count, "ScannedCount",
                        (json_int_t)p->scanned_count);
  if (!count_only) {
    json_t *items = json_array();
    for (size_t i = 0; i < p->n_items; i++)
      json_array_append_new(items, tt_ddb_item_to_json(&p->items[i]));
    json_object_set_new(o, "Items", items);
  }
  if (p->last_key.type == TT_AV_M)
    json_object_set_new(o, "LastEvaluatedKey", tt_ddb_item_to_json(&p->last_key));
  return o;
}

/* Runs a typed read into *out (the caller frees it) and checks its JSON
 * form answers the same page. */
static void read_both(struct fx *f, enum tt_ddb_op op, const struct tt_ddb_read_request *r,
                      struct tt_ddb_read_result *out) {
  struct tt_backend_call c;
  int st = typed_call(f, op, NULL, r, &c);
  ck_assert_msg(st == 0, "typed %s failed: %s: %s", tt_ddb_op_name(op), f->err.type,
                f->err.message);
  ck_assert_int_eq(c.item_out.type, 0);
  *out = c.read_out;
  if (r->select == TT_DDB_SELECT_COUNT) {
    ck_assert_uint_eq(out->n_items, 0);
    ck_assert_ptr_null(out->items);
  }
  json_t *typed = read_answer_json(out, r->select == TT_DDB_SELECT_COUNT);
  json_t *req = read_json_form(r), *resp = NULL;
  st = fx_run(f, op, req, &resp);
  ck_assert_msg(st == 0, "JSON %s failed: %s: %s", tt_ddb_op_name(op), f->err.type,
                f->err.message);
  char *a = fx_dump(typed), *b = fx_dump(resp);
  ck_assert_str_eq(a, b);
  free(a);
  free(b);
  json_decref(typed);
  json_decref(resp);
  json_decref(req);
}

/* The N member `name` of an item as an integer. */
static long n_of(const struct tt_av *item, const char *name) {
  const struct tt_av *v = tt_av_map_get(item, name);
  ck_assert_ptr_nonnull(v);
  ck_assert_int_eq(v->type, TT_AV_N);
  return strtol(v->u.bytes, NULL, 10);
}

/* Reads every page of `base` with `limit`; each sk read is appended to
 * got[] (cap 64). Asserts that a page has a LastEvaluatedKey exactly when
 * it stopped at the limit, and that the key is the last item's. Returns
 * the number of pages. */
static int read_pages(struct fx *f, enum tt_ddb_op op, const struct tt_ddb_read_request *base,
                      int64_t limit, long *got, size_t *n_got, const char *seq_attr) {
  struct tt_av lek = {0};
  int pages = 0;
  *n_got = 0;
  for (;;) {
    struct tt_ddb_read_request r = *base;
    r.limit = limit;
    r.start_key = lek.type == TT_AV_M ? &lek : NULL;
    struct tt_ddb_read_result out;
    read_both(f, op, &r, &out);
    pages++;
    ck_assert_int_lt(pages, 100);
    ck_assert_uint_le(out.scanned_count, (uint64_t)limit);
    bool stopped = out.scanned_count == (uint64_t)limit;
    ck_assert_msg((out.last_key.type == TT_AV_M) == stopped,
                  "page %d: %llu scanned of limit %lld, last key %s", pages,
                  (unsigned long long)out.scanned_count, (long long)limit,
                  out.last_key.type ? "set" : "absent");
    for (size_t i = 0; i < out.n_items; i++) {
      ck_assert_uint_lt(*n_got, 64);
      got[(*n_got)++] = n_of(&out.items[i], seq_attr);
    }
    if (stopped && out.n_items > 0 && base->projection == NULL) {
      /* Without a filter, the key is the last item's own key. */
      const struct tt_av *last = &out.items[out.n_items - 1];
      for (size_t i = 0; i < out.last_key.len; i++) {
        const struct tt_av_member *m = &out.last_key.u.members[i];
        const struct tt_av *v = tt_av_map_get(last, m->name);
        ck_assert_ptr_nonnull(v);
        ck_assert(tt_av_equal(v, &m->value));
      }
    }
    tt_av_free(&lek);
    lek = out.last_key;
    memset(&out.last_key, 0, sizeof(out.last_key));
    tt_ddb_read_result_free(&out);
    if (lek.type != TT_AV_M)
      break;
  }
  return pages;
}

static void setup_query(struct fx *f) {
  fx_setup(f, NULL);
  fx_exec(f, TT_DDB_CREATE_TABLE, COMPOSITE_TABLE);
  char item[128];
  for (int i = 0; i < 10; i++) {
    snprintf(item, sizeof(item), "{'pk':{'S':'p'},'sk':{'N':'%d'},'v':{'N':'%d'}}", i, i % 2);
    fx_put_in(f, "cmp", item);
    snprintf(item, sizeof(item), "{'pk':{'S':'q'},'sk':{'N':'%d'},'v':{'N':'0'}}", i);
    fx_put_in(f, "cmp", item);
  }
}

START_TEST(memdb_typed_query_pages) {
  struct fx f;
  setup_query(&f);
  struct tt_av vals = av_map("{':p':{'S':'p'}}");
  struct tt_ddb_read_request q = {.table = "cmp", .key_condition = "pk = :p", .values = &vals};
  long got[64];
  size_t n;
  /* 4 + 4 + 2: the short page is the last and has no key. */
  ck_assert_int_eq(read_pages(&f, TT_DDB_QUERY, &q, 4, got, &n, "sk"), 3);
  ck_assert_uint_eq(n, 10);
  for (size_t i = 0; i < n; i++)
    ck_assert_int_eq(got[i], (long)i);
  /* 5 + 5 + 0: a page that stops exactly at the end still has a key (as
   * DynamoDB), and the next one is empty without. */
  ck_assert_int_eq(read_pages(&f, TT_DDB_QUERY, &q, 5, got, &n, "sk"), 3);
  ck_assert_uint_eq(n, 10);
  for (size_t i = 0; i < n; i++)
    ck_assert_int_eq(got[i], (long)i);
  /* A limit past the data: one page, no key. */
  ck_assert_int_eq(read_pages(&f, TT_DDB_QUERY, &q, 11, got, &n, "sk"), 1);
  ck_assert_uint_eq(n, 10);
  /* Backward, one at a time: 9 .. 0, each once. */
  q.backward = true;
  ck_assert_int_eq(read_pages(&f, TT_DDB_QUERY, &q, 1, got, &n, "sk"), 11);
  ck_assert_uint_eq(n, 10);
  for (size_t i = 0; i < n; i++)
    ck_assert_int_eq(got[i], 9 - (long)i);
  /* A key range and a projection. */
  struct tt_av vals2 = av_map("{':p':{'S':'p'},':lo':{'N':'3'},':hi':{'N':'8'}}");
  struct tt_ddb_read_request rq = {.table = "cmp", .values = &vals2,
                                   .key_condition = "pk = :p AND sk BETWEEN :lo AND :hi",
                                   .projection = "sk"};
  ck_assert_int_eq(read_pages(&f, TT_DDB_QUERY, &rq, 4, got, &n, "sk"), 2);
  ck_assert_uint_eq(n, 6);
  for (size_t i = 0; i < n; i++)
    ck_assert_int_eq(got[i], 3 + (long)i);
  tt_av_free(&vals);
  tt_av_free(&vals2);
  fx_teardown(&f);
}
END_TEST

/* A page the store keeps whole is decoded into the result's arena; a
 * projected one is not; own_items turns arena items into owned clones. */
START_TEST(memdb_typed_page_in_arena) {
  struct fx f;
  setup_query(&f);
  struct tt_av vals = av_map("{':p':{'S':'p'},':one':{'N':'1'}}");
  struct tt_ddb_read_request q = {.table = "cmp", .key_condition = "pk = :p", .values = &vals,
                                  .filter = "v = :one", .limit = 6};
  struct tt_backend_call c;
  ck_assert_int_eq(typed_call(&f, TT_DDB_QUERY, NULL, &q, &c), 0);
  /* The filter dropped three of six: their memory went back to the arena. */
  ck_assert(c.read_out.items_in_arena);
  ck_assert_ptr_nonnull(c.read_out.arena.chunks);
  ck_assert_uint_eq(c.read_out.n_items, 3);
  ck_assert_uint_eq(c.read_out.scanned_count, 6);
  assert_av(&c.read_out.items[1], "{'pk':{'S':'p'},'sk':{'N':'3'},'v':{'N':'1'}}");
  ck_assert_int_eq(tt_ddb_read_result_own_items(&c.read_out), 0);
  ck_assert(!c.read_out.items_in_arena);
  ck_assert_ptr_null(c.read_out.arena.chunks);
  for (size_t i = 0; i < 3; i++) {
    char want[96];
    snprintf(want, sizeof(want), "{'pk':{'S':'p'},'sk':{'N':'%zu'},'v':{'N':'1'}}", 2 * i + 1);
    assert_av(&c.read_out.items[i], want);
  }
  /* Owned items may be changed and freed one by one. */
  tt_av_free(&c.read_out.items[0]);
  ck_assert_int_eq(tt_av_clone(&c.read_out.items[0], &c.read_out.items[2]), 0);
  tt_ddb_read_result_free(&c.read_out);

  q.projection = "sk";
  ck_assert_int_eq(typed_call(&f, TT_DDB_QUERY, NULL, &q, &c), 0);
  ck_assert(!c.read_out.items_in_arena);
  ck_assert_uint_eq(c.read_out.n_items, 3);
  assert_av(&c.read_out.items[0], "{'sk':{'N':'1'}}");
  tt_ddb_read_result_free(&c.read_out);
  tt_av_free(&vals);
  fx_teardown(&f);
}
END_TEST

START_TEST(memdb_typed_query_filter_and_errors) {
  struct fx f;
  setup_query(&f);
  struct tt_av vals = av_map("{':p':{'S':'p'},':one':{'N':'1'}}");
  /* Limit counts before the filter: pages of 3 scanned, odd sk kept. */
  struct tt_ddb_read_request q = {.table = "cmp", .key_condition = "pk = :p",
                                  .filter = "v = :one", .values = &vals};
  struct tt_av lek = {0};
  long seen[10];
  size_t n = 0;
  int pages = 0;
  uint64_t scanned = 0;
  do {
    struct tt_ddb_read_request r = q;
    r.limit = 3;
    r.start_key = lek.type ? &lek : NULL;
    struct tt_ddb_read_result out;
    read_both(&f, TT_DDB_QUERY, &r, &out);
    pages++;
    scanned += out.scanned_count;
    ck_assert_uint_eq(out.count, out.n_items);
    for (size_t i = 0; i < out.n_items; i++)
      seen[n++] = n_of(&out.items[i], "sk");
    tt_av_free(&lek);
    lek = out.last_key;
    memset(&out.last_key, 0, sizeof(out.last_key));
    tt_ddb_read_result_free(&out);
  } while (lek.type == TT_AV_M);
  ck_assert_int_eq(pages, 4);
  ck_assert_uint_eq(scanned, 10);
  ck_assert_uint_eq(n, 5);
  for (size_t i = 0; i < n; i++)
    ck_assert_int_eq(seen[i], 2 * (long)i + 1);
  /* Errors come typed as in JSON: no key condition, a start key of another
   * partition, an unused value. */
  struct tt_backend_call c;
  struct tt_ddb_read_request nokc = {.table = "cmp", .values = &vals, .filter = "v = :one"};
  ck_assert_int_eq(typed_call(&f, TT_DDB_QUERY, NULL, &nokc, &c), -1);
  ck_assert_str_eq(f.err.type, "ValidationException");
  struct tt_av other = av_map("{'pk':{'S':'q'},'sk':{'N':'1'}}");
  struct tt_ddb_read_request outside = {.table = "cmp", .key_condition = "pk = :p",
                                        .filter = "v = :one", .values = &vals,
                                        .start_key = &other};
  ck_assert_int_eq(typed_call(&f, TT_DDB_QUERY, NULL, &outside, &c), -1);
  ck_assert_str_eq(f.err.message, "The provided starting key is outside query boundaries based "
                                  "on provided conditions");
  struct tt_ddb_read_request unused = {.table = "cmp", .key_condition = "pk = :p",
                                       .values = &vals};
  ck_assert_int_eq(typed_call(&f, TT_DDB_QUERY, NULL, &unused, &c), -1);
  ck_assert_str_eq(f.err.type, "ValidationException");
  ck_assert_ptr_nonnull(strstr(f.err.message, ":one"));
  struct tt_ddb_read_request nt = {.table = "nope", .key_condition = "pk = :p",
                                   .filter = "v = :one", .values = &vals};
  ck_assert_int_eq(typed_call(&f, TT_DDB_QUERY, NULL, &nt, &c), -1);
  ck_assert_str_eq(f.err.type, "ResourceNotFoundException");
  tt_av_free(&lek);
  tt_av_free(&vals);
  tt_av_free(&other);
  fx_teardown(&f);
}
END_TEST

/* Scans tbl (items pk "k00".."k39", n = index) with `total` segments in
 * pages of `limit`; returns how many segments were non-empty. Every item
 * must be read exactly once. */
static int scan_segments(struct fx *f, int64_t total, int64_t limit) {
  int seen[40] = {0}, nonempty = 0;
  for (int64_t s = 0; s < total; s++) {
    struct tt_ddb_read_request r = {.table = "tbl", .segment = s, .total_segments = total};
    long got[64];
    size_t n;
    read_pages(f, TT_DDB_SCAN, &r, limit, got, &n, "n");
    nonempty += n > 0;
    for (size_t i = 0; i < n; i++) {
      ck_assert(got[i] >= 0 && got[i] < 40);
      seen[got[i]]++;
    }
  }
  for (int i = 0; i < 40; i++)
    ck_assert_msg(seen[i] == 1, "item %d read %d times with %lld segments", i, seen[i],
                  (long long)total);
  return nonempty;
}

START_TEST(memdb_typed_scan_segments) {
  struct fx f;
  setup_twins(&f);
  char item[96];
  for (int i = 0; i < 40; i++) {
    snprintf(item, sizeof(item), "{'pk':{'S':'k%02d'},'n':{'N':'%d'}}", i, i);
    fx_put_in(&f, "tbl", item);
    fx_put_in(&f, "two", item);
  }
  ck_assert_int_eq(scan_segments(&f, 1, 64), 1);
  ck_assert_int_eq(scan_segments(&f, 1, 7), 1);
  ck_assert_int_ge(scan_segments(&f, 4, 5), 2);
  ck_assert_int_ge(scan_segments(&f, 7, 3), 2);
  scan_segments(&f, 64, 2); /* more segments than some hold */
  /* A segment out of range is refused. */
  struct tt_backend_call c;
  struct tt_ddb_read_request bad = {.table = "tbl", .segment = 4, .total_segments = 4};
  ck_assert_int_eq(typed_call(&f, TT_DDB_SCAN, NULL, &bad, &c), -1);
  ck_assert_str_eq(f.err.type, "ValidationException");
  bad.segment = -1;
  ck_assert_int_eq(typed_call(&f, TT_DDB_SCAN, NULL, &bad, &c), -1);
  ck_assert_str_eq(f.err.type, "ValidationException");
  fx_teardown(&f);
}
END_TEST

START_TEST(memdb_typed_select_count) {
  struct fx f;
  setup_query(&f);
  struct tt_av vals = av_map("{':p':{'S':'p'}}");
  struct tt_av vals1 = av_map("{':p':{'S':'p'},':one':{'N':'1'}}");
  struct tt_ddb_read_request q = {.table = "cmp", .key_condition = "pk = :p", .values = &vals,
                                  .select = TT_DDB_SELECT_COUNT};
  struct tt_ddb_read_result out;
  read_both(&f, TT_DDB_QUERY, &q, &out);
  ck_assert_uint_eq(out.count, 10);
  ck_assert_uint_eq(out.scanned_count, 10);
  ck_assert_int_eq(out.last_key.type, 0);
  tt_ddb_read_result_free(&out);
  /* With a filter: counted after it, scanned before. */
  q.values = &vals1;
  q.filter = "v = :one";
  read_both(&f, TT_DDB_QUERY, &q, &out);
  ck_assert_uint_eq(out.count, 5);
  ck_assert_uint_eq(out.scanned_count, 10);
  tt_ddb_read_result_free(&out);
  /* With a limit: a page of counts, with a key to go on. */
  q.limit = 4;
  read_both(&f, TT_DDB_QUERY, &q, &out);
  ck_assert_uint_eq(out.count, 2);
  ck_assert_uint_eq(out.scanned_count, 4);
  ck_assert_int_eq(out.last_key.type, TT_AV_M);
  tt_ddb_read_result_free(&out);
  /* A Scan. */
  struct tt_ddb_read_request s = {.table = "cmp", .select = TT_DDB_SELECT_COUNT};
  read_both(&f, TT_DDB_SCAN, &s, &out);
  ck_assert_uint_eq(out.count, 20);
  ck_assert_uint_eq(out.scanned_count, 20);
  tt_ddb_read_result_free(&out);
  /* COUNT with a projection is refused, as in JSON. */
  struct tt_backend_call c;
  s.projection = "pk";
  ck_assert_int_eq(typed_call(&f, TT_DDB_SCAN, NULL, &s, &c), -1);
  ck_assert_str_eq(f.err.message,
                   "Cannot specify the ProjectionExpression when choosing to get COUNT");
  tt_av_free(&vals);
  tt_av_free(&vals1);
  fx_teardown(&f);
}
END_TEST

/* ---- 3. the dynamodb backend against a canned server ---------------------- */

static const char *g_answer; /* the canned body; status 200 */

static void canned(void *arg, const struct tts_request *r, struct tts_response *resp) {
  (void)arg;
  (void)r;
  resp->headers = "Content-Type: application/x-amz-json-1.0\r\nx-amzn-RequestId: TYPED1\r\n";
  resp->body = g_answer;
}

struct dfx {
  uv_loop_t loop;
  struct tts_server srv;
  struct tt_creds_provider *creds;
  struct tt_backend *b;
};

static void dfx_setup(struct dfx *d) {
  char endpoint[64];
  struct tt_error err;
  memset(d, 0, sizeof(*d));
  ck_assert_int_eq(uv_loop_init(&d->loop), 0);
  ck_assert_int_eq(tts_start(&d->srv, &d->loop, canned, NULL), 0);
  snprintf(endpoint, sizeof(endpoint), "http://127.0.0.1:%d", d->srv.port);
  ck_assert_int_eq(
      tt_creds_static_new(&d->loop, "AKIDTESTONLY", "secret/TESTONLY", NULL, &d->creds, &err), 0);
  struct tt_ddb_options o = {.region = "us-east-1", .endpoint = endpoint, .creds = d->creds,
                             .timeout_ms = 5000};
  ck_assert_msg(tt_ddb_backend_new(&d->loop, &o, &d->b, &err) == 0, "backend: %s", err.message);
}

static void dfx_teardown(struct dfx *d) {
  int closed = 0;
  ck_assert_uint_eq(tt_ddb_backend_outstanding(d->b), 0);
  d->b->ops->close(d->b, fx_closed, &closed);
  tt_creds_close(d->creds, NULL, NULL);
  tts_close(&d->srv);
  uv_run(&d->loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(closed, 1);
  d->b->ops->destroy(d->b);
  tt_creds_destroy(d->creds);
  ck_assert_int_eq(uv_loop_close(&d->loop), 0);
}

/* Runs one typed call on the ddb backend until done ran once. */
static void d_run(struct dfx *d, enum tt_ddb_op op, const struct tt_ddb_item_request *ir,
                  const struct tt_ddb_read_request *rr, struct tt_backend_call *c) {
  int done = 0;
  memset(c, 0, sizeof(*c));
  c->op = op;
  c->item = ir;
  c->read = rr;
  c->done = fx_done;
  c->arg = &done;
  ck_assert_int_eq(d->b->ops->start(d->b, c), 0);
  ck_assert_int_eq(done, 0);
  while (done == 0 && uv_run(&d->loop, UV_RUN_ONCE) != 0)
    ;
  ck_assert_int_eq(done, 1);
  c->arg = NULL;
  ck_assert_ptr_null(c->response);
}

/* Asserts the last request the server saw: target, and a body that is valid
 * JSON and exactly the text typed_wire writes for `want_body`. */
static json_t *assert_sent(struct dfx *d, const char *target, const char *want_text) {
  char v[128];
  const struct tts_request *q = &d->srv.last;
  ck_assert_str_eq(q->method, "POST");
  ck_assert_str_eq(tts_header(q, "x-amz-target", v, sizeof(v)), target);
  ck_assert_str_eq(tts_header(q, "content-type", v, sizeof(v)), "application/x-amz-json-1.0");
  ck_assert_uint_eq(q->body_len, strlen(want_text));
  ck_assert_int_eq(memcmp(q->body, want_text, q->body_len), 0);
  return jparse(q->body, q->body_len);
}

START_TEST(ddb_typed_get_item_over_the_wire) {
  struct dfx d;
  dfx_setup(&d);
  struct tt_av key = av_map("{'pk':{'S':'a'}}");
  struct tt_av names = av_map("{'#n':{'S':'n'}}");
  struct tt_ddb_item_request r = {.table = "t", .key = &key, .projection = "pk, #n",
                                  .names = &names, .consistent_read = true};
  struct tt_buf want;
  tt_buf_init(&want, 0);
  ck_assert_int_eq(tt_ddb_item_request_write(&want, TT_DDB_GET_ITEM, &r), 0);
  g_answer = "{\"Item\":{\"pk\":{\"S\":\"a\"},\"n\":{\"N\":\"1.50\"},\"s\":{\"S\":\"\\u00e9\\n\"}},"
             "\"ConsumedCapacity\":{\"TableName\":\"t\",\"CapacityUnits\":0.5}}";
  struct tt_backend_call c;
  d_run(&d, TT_DDB_GET_ITEM, &r, NULL, &c);
  ck_assert_msg(c.status == 0, "%s: %s", c.error.type, c.error.message);
  json_t *sent = assert_sent(&d, "DynamoDB_20120810.GetItem", want.data);
  json_t *exp = jq("{'TableName':'t','Key':{'pk':{'S':'a'}},'ProjectionExpression':'pk, #n',"
                   "'ExpressionAttributeNames':{'#n':'n'},'ConsistentRead':true}");
  assert_json_equal(sent, exp);
  json_decref(sent);
  json_decref(exp);
  struct tt_av item = av_map("{'pk':{'S':'a'},'n':{'N':'1.5'},'s':{'S':'\xc3\xa9\\n'}}");
  ck_assert_int_eq(c.item_out.type, TT_AV_M);
  ck_assert(tt_av_equal(&c.item_out, &item));
  tt_av_free(&c.item_out);
  tt_av_free(&item);
  tt_buf_free(&want);

  /* No Item: type 0, status 0. */
  g_answer = "{}";
  d_run(&d, TT_DDB_GET_ITEM, &r, NULL, &c);
  ck_assert_int_eq(c.status, 0);
  ck_assert_int_eq(c.item_out.type, 0);

  /* A malformed Item: InvalidResponse, nothing kept. */
  g_answer = "{\"Item\":{\"pk\":{\"N\":\"not a number\"}}}";
  d_run(&d, TT_DDB_GET_ITEM, &r, NULL, &c);
  ck_assert_int_eq(c.status, -1);
  ck_assert_str_eq(c.error.type, "InvalidResponse");
  ck_assert_int_eq(c.item_out.type, 0);
  ck_assert_str_eq(c.error.message, "the DynamoDB endpoint answered an invalid Item");
  tt_backend_error_clear(&c.error);

  /* A 200 that is not a JSON object: the classify path's error, with the
   * status and the request id (wire_reader.c reads the text, errors.c
   * words the answer). */
  g_answer = "{\"Item\":{\"pk\":{\"S\":\"a\"}}";
  d_run(&d, TT_DDB_GET_ITEM, &r, NULL, &c);
  ck_assert_int_eq(c.status, -1);
  ck_assert_str_eq(c.error.type, "InvalidResponse");
  ck_assert_str_eq(c.error.message, "the DynamoDB endpoint answered 200 without a JSON object");
  ck_assert_str_eq(c.error.request_id, "TYPED1");
  ck_assert_uint_eq(c.error.http_status, 200);
  ck_assert_int_eq(c.item_out.type, 0);
  tt_backend_error_clear(&c.error);

  /* A PutItem's Attributes. */
  struct tt_av it = av_map("{'pk':{'S':'a'},'v':{'N':'2'}}");
  struct tt_ddb_item_request put = {.table = "t", .item = &it,
                                    .return_values = TT_DDB_RETURN_ALL_OLD};
  tt_buf_init(&want, 0);
  ck_assert_int_eq(tt_ddb_item_request_write(&want, TT_DDB_PUT_ITEM, &put), 0);
  g_answer = "{\"Attributes\":{\"pk\":{\"S\":\"a\"},\"v\":{\"N\":\"1\"}}}";
  d_run(&d, TT_DDB_PUT_ITEM, &put, NULL, &c);
  ck_assert_int_eq(c.status, 0);
  json_decref(assert_sent(&d, "DynamoDB_20120810.PutItem", want.data));
  assert_av(&c.item_out, "{'pk':{'S':'a'},'v':{'N':'1'}}");
  tt_av_free(&c.item_out);
  tt_buf_free(&want);
  tt_av_free(&it);
  tt_av_free(&key);
  tt_av_free(&names);
  dfx_teardown(&d);
}
END_TEST

START_TEST(ddb_typed_query_over_the_wire) {
  struct dfx d;
  dfx_setup(&d);
  struct tt_av vals = av_map("{':p':{'S':'a'}}");
  struct tt_av esk = av_map("{'pk':{'S':'a'},'sk':{'N':'1'}}");
  struct tt_ddb_read_request q = {.table = "t", .key_condition = "pk = :p", .values = &vals,
                                  .start_key = &esk, .limit = 2, .backward = true};
  struct tt_buf want;
  tt_buf_init(&want, 0);
  ck_assert_int_eq(tt_ddb_read_request_write(&want, &q), 0);
  g_answer = "{\"Items\":[{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"0\"}}],\"Count\":1,"
             "\"ScannedCount\":2,\"LastEvaluatedKey\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"0\"}}}";
  struct tt_backend_call c;
  d_run(&d, TT_DDB_QUERY, NULL, &q, &c);
  ck_assert_msg(c.status == 0, "%s: %s", c.error.type, c.error.message);
  json_decref(assert_sent(&d, "DynamoDB_20120810.Query", want.data));
  ck_assert_uint_eq(c.read_out.n_items, 1);
  assert_av(&c.read_out.items[0], "{'pk':{'S':'a'},'sk':{'N':'0'}}");
  ck_assert_uint_eq(c.read_out.count, 1);
  ck_assert_uint_eq(c.read_out.scanned_count, 2);
  assert_av(&c.read_out.last_key, "{'pk':{'S':'a'},'sk':{'N':'0'}}");
  tt_ddb_read_result_free(&c.read_out);
  /* An answer whose Items is no array: InvalidResponse, nothing kept. */
  g_answer = "{\"Items\":{},\"Count\":0}";
  d_run(&d, TT_DDB_SCAN, NULL, &q, &c);
  ck_assert_int_eq(c.status, -1);
  ck_assert_str_eq(c.error.type, "InvalidResponse");
  ck_assert_ptr_null(c.read_out.items);
  tt_backend_error_clear(&c.error);
  tt_buf_free(&want);
  tt_av_free(&vals);
  tt_av_free(&esk);
  dfx_teardown(&d);
}
END_TEST

/* ---- 4. table operations ------------------------------------------------- */

static const struct tt_ddb_attr_def T_DEFS[] = {
    {"pk", TT_AV_S}, {"sk", TT_AV_N}, {"g", TT_AV_B}, {"l", TT_AV_S}};
static const char *const T_INC[] = {"a", "b"};
static const struct tt_ddb_index T_IXS[] = {
    {.name = "gsi", .global = true, .keys = {"g", "sk"}, .projection = TT_DDB_PROJECT_INCLUDE,
     .include = T_INC, .n_include = 2, .throughput = {.set = true, .read = 3, .write = 4}},
    {.name = "lsi", .keys = {"pk", "l"}, .projection = TT_DDB_PROJECT_KEYS_ONLY}};

START_TEST(wire_table_requests) {
  struct tt_ddb_table_request r = {.table = "tt", .defs = T_DEFS, .n_defs = 4,
                                   .keys = {"pk", "sk"}, .indexes = T_IXS, .n_indexes = 2,
                                   .billing = TT_DDB_BILLING_PROVISIONED,
                                   .throughput = {.set = true, .read = 1, .write = 2}};
  json_t *j = tt_ddb_table_request_json(TT_DDB_CREATE_TABLE, &r);
  json_t *w = jq(
      "{'TableName':'tt','AttributeDefinitions':[{'AttributeName':'pk','AttributeType':'S'},"
      "{'AttributeName':'sk','AttributeType':'N'},{'AttributeName':'g','AttributeType':'B'},"
      "{'AttributeName':'l','AttributeType':'S'}],'KeySchema':[{'AttributeName':'pk','KeyType':"
      "'HASH'},{'AttributeName':'sk','KeyType':'RANGE'}],'BillingMode':'PROVISIONED',"
      "'ProvisionedThroughput':{'ReadCapacityUnits':1,'WriteCapacityUnits':2},"
      "'GlobalSecondaryIndexes':[{'IndexName':'gsi','KeySchema':[{'AttributeName':'g','KeyType':"
      "'HASH'},{'AttributeName':'sk','KeyType':'RANGE'}],'Projection':{'ProjectionType':"
      "'INCLUDE','NonKeyAttributes':['a','b']},'ProvisionedThroughput':{'ReadCapacityUnits':3,"
      "'WriteCapacityUnits':4}}],'LocalSecondaryIndexes':[{'IndexName':'lsi','KeySchema':"
      "[{'AttributeName':'pk','KeyType':'HASH'},{'AttributeName':'l','KeyType':'RANGE'}],"
      "'Projection':{'ProjectionType':'KEYS_ONLY'}}]}");
  assert_json_equal(j, w);
  json_decref(j);
  json_decref(w);
  /* UpdateTable: each index a Create action; no KeySchema without keys. */
  struct tt_ddb_table_request u = {.table = "tt", .defs = T_DEFS, .n_defs = 1,
                                   .indexes = T_IXS, .n_indexes = 1};
  j = tt_ddb_table_request_json(TT_DDB_UPDATE_TABLE, &u);
  ck_assert_ptr_null(json_object_get(j, "KeySchema"));
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(json_array_get(
                       json_object_get(j, "GlobalSecondaryIndexUpdates"), 0), "Create"),
                                                     "IndexName")),
                   "gsi");
  json_decref(j);
  struct tt_ddb_table_request t = {.table = "tt", .ttl_attribute = "exp", .ttl_enabled = true};
  j = tt_ddb_table_request_json(TT_DDB_UPDATE_TIME_TO_LIVE, &t);
  w = jq("{'TableName':'tt','TimeToLiveSpecification':{'Enabled':true,'AttributeName':'exp'}}");
  assert_json_equal(j, w);
  json_decref(j);
  json_decref(w);
  j = tt_ddb_table_request_json(TT_DDB_DESCRIBE_TABLE, &t);
  w = jq("{'TableName':'tt'}");
  assert_json_equal(j, w);
  json_decref(j);
  json_decref(w);
}
END_TEST

START_TEST(wire_table_answers) {
  json_t *a = jq(
      "{'Table':{'TableName':'tt','TableStatus':'ACTIVE','TableArn':'arn:t','TableId':'id',"
      "'ItemCount':7,'TableSizeBytes':70,'CreationDateTime':1.5,'KeySchema':[{'AttributeName':"
      "'pk','KeyType':'HASH'}],'AttributeDefinitions':[{'AttributeName':'pk','AttributeType':"
      "'S'},{'AttributeName':'g','AttributeType':'N'}],'BillingModeSummary':{'BillingMode':"
      "'PAY_PER_REQUEST'},'ProvisionedThroughput':{'NumberOfDecreasesToday':1,"
      "'ReadCapacityUnits':0,'WriteCapacityUnits':0},'GlobalSecondaryIndexes':[{'IndexName':"
      "'gsi','KeySchema':[{'AttributeName':'g','KeyType':'HASH'}],'Projection':"
      "{'ProjectionType':'INCLUDE','NonKeyAttributes':['x',1,'y']},'IndexStatus':'CREATING',"
      "'ItemCount':3}],'LocalSecondaryIndexes':[{'IndexName':'lsi','Projection':"
      "{'ProjectionType':'KEYS_ONLY'}}]}}");
  struct tt_ddb_table_desc d;
  ck_assert_int_eq(tt_ddb_table_answer_read(TT_DDB_DESCRIBE_TABLE, a, &d), 0);
  ck_assert_str_eq(d.table, "tt");
  ck_assert_str_eq(d.status, "ACTIVE");
  ck_assert_str_eq(d.arn, "arn:t");
  ck_assert_str_eq(d.keys.hash, "pk");
  ck_assert_ptr_null(d.keys.range);
  ck_assert_uint_eq(d.n_defs, 2);
  ck_assert_int_eq(d.defs[1].type, TT_AV_N);
  ck_assert_int_eq(d.item_count, 7);
  ck_assert(d.created == 1.5);
  ck_assert_int_eq(d.billing, TT_DDB_BILLING_PAY_PER_REQUEST);
  ck_assert(d.throughput.set);
  ck_assert_int_eq(d.throughput.decreases_today, 1);
  ck_assert_uint_eq(d.n_indexes, 2);
  ck_assert(d.indexes[0].global);
  ck_assert_str_eq(d.indexes[0].status, "CREATING");
  ck_assert_int_eq(d.indexes[0].projection, TT_DDB_PROJECT_INCLUDE);
  ck_assert_uint_eq(d.indexes[0].n_include, 2); /* the non-string is dropped */
  ck_assert_str_eq(d.indexes[0].include[1], "y");
  ck_assert(!d.indexes[1].global);
  ck_assert_ptr_null(d.indexes[1].status);
  ck_assert_int_eq(d.indexes[1].projection, TT_DDB_PROJECT_KEYS_ONLY);
  tt_ddb_table_desc_free(&d);
  /* A CreateTable's answer is under TableDescription; Table is not read. */
  ck_assert_int_eq(tt_ddb_table_answer_read(TT_DDB_CREATE_TABLE, a, &d), 0);
  ck_assert_ptr_null(d.table);
  tt_ddb_table_desc_free(&d);
  json_decref(a);
  a = jq("{'TimeToLiveDescription':{'TimeToLiveStatus':'ENABLED','AttributeName':'exp'}}");
  ck_assert_int_eq(tt_ddb_table_answer_read(TT_DDB_DESCRIBE_TIME_TO_LIVE, a, &d), 0);
  ck_assert_str_eq(d.ttl_status, "ENABLED");
  ck_assert_str_eq(d.ttl_attribute, "exp");
  tt_ddb_table_desc_free(&d);
  json_decref(a);
}
END_TEST

/* Runs a typed table call on the memory backend. */
static int table_call(struct fx *f, enum tt_ddb_op op, const struct tt_ddb_table_request *r,
                      struct tt_backend_call *c) {
  int done = 0;
  memset(c, 0, sizeof(*c));
  c->op = op;
  c->table = r;
  c->done = fx_done;
  c->arg = &done;
  ck_assert(tt_backend_call_typed(c));
  ck_assert_int_eq(f->b->ops->start(f->b, c), 0);
  ck_assert_int_eq(done, 0);
  uv_run(&f->loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(done, 1);
  ck_assert_ptr_null(c->response);
  return c->status;
}

START_TEST(memdb_typed_table_ops) {
  struct fx f;
  fx_setup(&f, NULL);
  struct tt_backend_call c;
  struct tt_ddb_table_request r = {.table = "tab", .defs = T_DEFS, .n_defs = 2,
                                   .keys = {"pk", "sk"},
                                   .billing = TT_DDB_BILLING_PAY_PER_REQUEST};
  table_call(&f, TT_DDB_CREATE_TABLE, &r, &c);
  ck_assert_msg(c.status == 0, "%s: %s", c.error.type, c.error.message);
  ck_assert_str_eq(c.table_out->table, "tab");
  ck_assert_str_eq(c.table_out->status, "ACTIVE");
  ck_assert_str_eq(c.table_out->keys.range, "sk");
  ck_assert_int_eq(c.table_out->billing, TT_DDB_BILLING_PAY_PER_REQUEST);
  tt_ddb_table_out_free(&c.table_out);
  /* Refused as the JSON form is. */
  ck_assert_int_eq(table_call(&f, TT_DDB_CREATE_TABLE, &r, &c), -1);
  ck_assert_str_eq(c.error.type, "ResourceInUseException");
  ck_assert_str_eq(c.error.message, "Table already exists: tab");
  tt_backend_error_clear(&c.error);
  /* One GSI added with UpdateTable, then described. */
  struct tt_ddb_index gsi = {.name = "gsi", .global = true, .keys = {"g", NULL},
                             .projection = TT_DDB_PROJECT_ALL};
  struct tt_ddb_attr_def defs[] = {{"pk", TT_AV_S}, {"sk", TT_AV_N}, {"g", TT_AV_B}};
  struct tt_ddb_table_request u = {.table = "tab", .defs = defs, .n_defs = 3, .indexes = &gsi,
                                   .n_indexes = 1};
  ck_assert_int_eq(table_call(&f, TT_DDB_UPDATE_TABLE, &u, &c), 0);
  tt_ddb_table_out_free(&c.table_out);
  struct tt_ddb_table_request n = {.table = "tab"};
  ck_assert_int_eq(table_call(&f, TT_DDB_DESCRIBE_TABLE, &n, &c), 0);
  ck_assert_uint_eq(c.table_out->n_defs, 3);
  ck_assert_uint_eq(c.table_out->n_indexes, 1);
  ck_assert_str_eq(c.table_out->indexes[0].name, "gsi");
  ck_assert_str_eq(c.table_out->indexes[0].status, "ACTIVE");
  ck_assert_str_eq(c.table_out->indexes[0].keys.hash, "g");
  tt_ddb_table_out_free(&c.table_out);
  /* TTL on, then described. */
  struct tt_ddb_table_request t = {.table = "tab", .ttl_attribute = "exp", .ttl_enabled = true};
  ck_assert_int_eq(table_call(&f, TT_DDB_UPDATE_TIME_TO_LIVE, &t, &c), 0);
  ck_assert(c.table_out->ttl_enabled);
  ck_assert_str_eq(c.table_out->ttl_attribute, "exp");
  tt_ddb_table_out_free(&c.table_out);
  ck_assert_int_eq(table_call(&f, TT_DDB_DESCRIBE_TIME_TO_LIVE, &n, &c), 0);
  ck_assert_str_eq(c.table_out->ttl_status, "ENABLED");
  tt_ddb_table_out_free(&c.table_out);
  ck_assert_int_eq(table_call(&f, TT_DDB_DELETE_TABLE, &n, &c), 0);
  ck_assert_str_eq(c.table_out->status, "DELETING");
  tt_ddb_table_out_free(&c.table_out);
  ck_assert_int_eq(table_call(&f, TT_DDB_DESCRIBE_TABLE, &n, &c), -1);
  ck_assert_str_eq(c.error.message, "Requested resource not found: Table: tab not found");
  ck_assert_ptr_null(c.table_out);
  tt_backend_error_clear(&c.error);
  fx_teardown(&f);
}
END_TEST

START_TEST(ddb_typed_table_over_the_wire) {
  struct dfx d;
  dfx_setup(&d);
  struct tt_ddb_table_request r = {.table = "tt", .defs = T_DEFS, .n_defs = 1,
                                   .keys = {"pk", NULL},
                                   .billing = TT_DDB_BILLING_PAY_PER_REQUEST};
  g_answer = "{\"TableDescription\":{\"TableName\":\"tt\",\"TableStatus\":\"CREATING\","
             "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}]}}";
  struct tt_backend_call c;
  int done = 0;
  memset(&c, 0, sizeof(c));
  c.op = TT_DDB_CREATE_TABLE;
  c.table = &r;
  c.done = fx_done;
  c.arg = &done;
  ck_assert_int_eq(d.b->ops->start(d.b, &c), 0);
  while (done == 0 && uv_run(&d.loop, UV_RUN_ONCE) != 0)
    ;
  ck_assert_msg(c.status == 0, "%s: %s", c.error.type, c.error.message);
  ck_assert_ptr_null(c.response);
  const struct tts_request *q = &d.srv.last;
  json_t *sent = jparse(q->body, q->body_len), *want = tt_ddb_table_request_json(c.op, &r);
  assert_json_equal(sent, want);
  json_decref(sent);
  json_decref(want);
  ck_assert_str_eq(c.table_out->status, "CREATING");
  ck_assert_str_eq(c.table_out->keys.hash, "pk");
  tt_ddb_table_out_free(&c.table_out);
  dfx_teardown(&d);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("typed_port");
  TCase *w = tcase_create("typed_wire");
  tcase_add_test(w, wire_item_request_every_member);
  tcase_add_test(w, wire_strings_needing_escapes_round_trip);
  tcase_add_test(w, wire_read_request_every_member);
  tcase_add_test(w, wire_read_response_into_typed_values);
  tcase_add_test(w, wire_item_response_into_typed_values);
  tcase_add_test(w, wire_invalid_read_responses);
  suite_add_tcase(s, w);
  TCase *m = tcase_create("memory");
  tcase_add_test(m, memdb_typed_put_then_get);
  tcase_add_test(m, memdb_typed_return_values);
  tcase_add_test(m, memdb_typed_condition_failure);
  tcase_add_test(m, memdb_typed_validation_errors_match_json);
  tcase_add_test(m, memdb_typed_query_pages);
  tcase_add_test(m, memdb_typed_page_in_arena);
  tcase_add_test(m, memdb_typed_query_filter_and_errors);
  tcase_add_test(m, memdb_typed_scan_segments);
  tcase_add_test(m, memdb_typed_select_count);
  suite_add_tcase(s, m);
  TCase *d = tcase_create("dynamodb");
  tcase_add_test(d, ddb_typed_get_item_over_the_wire);
  tcase_add_test(d, ddb_typed_query_over_the_wire);
  suite_add_tcase(s, d);
  TCase *t = tcase_create("tables");
  tcase_add_test(t, wire_table_requests);
  tcase_add_test(t, wire_table_answers);
  tcase_add_test(t, memdb_typed_table_ops);
  tcase_add_test(t, ddb_typed_table_over_the_wire);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return fx_run_suite(suite()); }
