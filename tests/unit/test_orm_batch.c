/* SPDX-License-Identifier: Apache-2.0 */
/* test_orm_batch.c -- check suite of batches and unique constraints: guard
 * keys, guard actions, reserved keys, the query filter, the batch
 * concurrency default; and typed batches on the memory backend in process
 * behind the fault decorator: chunks, unprocessed work retried or left at
 * the deadline, backend errors before and after a write, and the refusals
 * of a typed batch before any I/O. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/fault.h"
#include "model/model.h"
#include "orm/batch.h"
#include "orm/item.h"
#include "orm/unique.h"
#include "orm_fixture.h"
#include "value/codec_ddb.h"

/* S partition key, unique S and N attributes, a unique B. */
static const char *const MEMBER =
    "{\"name\":\"Member\",\"table\":{\"name\":\"members\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},"
    "\"attributes\":[{\"attribute\":\"id\",\"type\":\"S\",\"required\":true},"
    "{\"attribute\":\"email\",\"type\":\"S\",\"optional\":true,\"tags\":{\"unique\":true}},"
    "{\"attribute\":\"num\",\"type\":\"N\",\"optional\":true,\"tags\":{\"unique\":true}},"
    "{\"attribute\":\"raw\",\"type\":\"B\",\"optional\":true,\"tags\":{\"unique\":true}},"
    "{\"attribute\":\"nick\",\"type\":\"S\",\"optional\":true}]}";
/* Composite key with an N sort key. */
static const char *const ACCOUNT =
    "{\"name\":\"Account\",\"table\":{\"name\":\"accounts\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"pk\",\"type\":\"S\"},"
    "\"sort\":{\"attribute\":\"sk\",\"type\":\"N\"}},"
    "\"attributes\":[{\"attribute\":\"pk\",\"type\":\"S\",\"required\":true},"
    "{\"attribute\":\"sk\",\"type\":\"N\",\"required\":true},"
    "{\"attribute\":\"code\",\"type\":\"S\",\"optional\":true,\"tags\":{\"unique\":true}}]}";
/* A number partition key cannot hold guards; a BOOL cannot be unique. */
static const char *const NUMKEY =
    "{\"name\":\"NumKey\",\"table\":{\"name\":\"numkeys\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"N\"}},"
    "\"attributes\":[{\"attribute\":\"id\",\"type\":\"N\",\"required\":true},"
    "{\"attribute\":\"email\",\"type\":\"S\",\"optional\":true,\"tags\":{\"unique\":true}}]}";
static const char *const BOOLUNIQUE =
    "{\"name\":\"Flag\",\"table\":{\"name\":\"flags\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},"
    "\"attributes\":[{\"attribute\":\"id\",\"type\":\"S\",\"required\":true},"
    "{\"attribute\":\"on\",\"type\":\"BOOL\",\"optional\":true,\"tags\":{\"unique\":true}}]}";
static const char *const PLAIN =
    "{\"name\":\"Plain\",\"table\":{\"name\":\"plain\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},"
    "\"attributes\":[{\"attribute\":\"id\",\"type\":\"S\",\"required\":true}]}";

static struct tt_model *model(const char *text) {
  json_error_t jerr;
  json_t *obj = json_loads(text, 0, &jerr);
  ck_assert_msg(obj != NULL, "test JSON: %s", jerr.text);
  struct tt_model *m = NULL;
  struct tt_error err = {0};
  ck_assert_msg(tt_model_from_json(obj, NULL, &m, &err) == 0, "%s", err.message);
  json_decref(obj);
  return m;
}

/* An M from DynamoDB JSON text. */
static struct tt_av item(const char *text) {
  json_error_t jerr;
  json_t *j = json_loads(text, 0, &jerr);
  ck_assert_msg(j != NULL, "test JSON: %s", jerr.text);
  struct tt_av v;
  struct tt_error err = {0};
  ck_assert_msg(tt_ddb_item_from_json(j, "item", &v, &err) == 0, "%s", err.message);
  json_decref(j);
  return v;
}

static char *dump(const json_t *j) { return json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS); }

static char *guard_key_text(const struct tt_model *m, const char *attr, const char *value_json) {
  const struct tt_model_attr *a = tt_model_attr_find(m, attr, strlen(attr));
  ck_assert_ptr_nonnull(a);
  json_t *vj = json_loads(value_json, 0, NULL);
  struct tt_av v, key;
  struct tt_error err = {0};
  ck_assert_int_eq(tt_ddb_value_from_json(vj, "v", &v, &err), 0);
  ck_assert_msg(tt_unique_guard_key(m, a, &v, &key, &err) == 0, "%s", err.message);
  json_t *kj = tt_ddb_item_to_json(&key);
  char *text = dump(kj);
  json_decref(kj);
  json_decref(vj);
  tt_av_free(&v);
  tt_av_free(&key);
  return text;
}

START_TEST(guard_keys_by_type) {
  struct tt_model *m = model(MEMBER);
  char *t = guard_key_text(m, "email", "{\"S\":\"a@b.c\"}");
  ck_assert_str_eq(t, "{\"id\":{\"S\":\"UNIQUE#Member#email#a@b.c\"}}");
  free(t);
  t = guard_key_text(m, "num", "{\"N\":\"0012.50\"}");
  ck_assert_str_eq(t, "{\"id\":{\"S\":\"UNIQUE#Member#num#12.5\"}}");
  free(t);
  t = guard_key_text(m, "raw", "{\"B\":\"AP8=\"}");
  ck_assert_str_eq(t, "{\"id\":{\"S\":\"UNIQUE#Member#raw#AP8=\"}}");
  free(t);
  tt_model_unref(m);
  m = model(ACCOUNT);
  t = guard_key_text(m, "code", "{\"S\":\"X\"}");
  ck_assert_str_eq(t, "{\"pk\":{\"S\":\"UNIQUE#Account#code#X\"},\"sk\":{\"N\":\"0\"}}");
  free(t);
  tt_model_unref(m);
}
END_TEST

START_TEST(guard_key_too_long) {
  struct tt_model *m = model(MEMBER);
  const struct tt_model_attr *a = tt_model_attr_find(m, "email", 5);
  char *big = malloc(2100);
  memset(big, 'x', 2099);
  big[2099] = '\0';
  struct tt_av v, key;
  struct tt_error err = {0};
  ck_assert_int_eq(tt_av_string(&v, big, 2099), 0);
  ck_assert_int_eq(tt_unique_guard_key(m, a, &v, &key, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err.field, "email");
  ck_assert_ptr_null(strstr(err.message, "xxxx"));
  ck_assert_int_eq(key.type, TT_AV_NULL);
  tt_av_free(&v);
  free(big);
  tt_model_unref(m);
}
END_TEST

START_TEST(model_checks) {
  struct tt_error err = {0};
  struct tt_model *m = model(MEMBER);
  ck_assert(tt_unique_model_has(m));
  ck_assert_uint_eq(tt_unique_count(m), 3);
  ck_assert_int_eq(tt_unique_model_check(m, &err), 0);
  tt_model_unref(m);
  m = model(NUMKEY);
  ck_assert_int_eq(tt_unique_model_check(m, &err), -1);
  ck_assert_str_eq(err.field, "id");
  tt_model_unref(m);
  m = model(BOOLUNIQUE);
  ck_assert_int_eq(tt_unique_model_check(m, &err), -1);
  ck_assert_str_eq(err.field, "on");
  tt_model_unref(m);
  m = model(PLAIN);
  ck_assert(!tt_unique_model_has(m));
  ck_assert_int_eq(tt_unique_model_check(m, &err), 0);
  struct tt_cond g;
  ck_assert(!tt_unique_query_filter(m, &g));
  tt_model_unref(m);
}
END_TEST

START_TEST(reserved_keys_and_guarded_values) {
  struct tt_model *m = model(MEMBER), *p = model(PLAIN);
  struct tt_av a = item("{\"id\":{\"S\":\"UNIQUE#Member#email#x\"}}");
  struct tt_av b = item("{\"id\":{\"S\":\"UNIQUE\"}}");
  struct tt_av c = item("{\"id\":{\"S\":\"user#UNIQUE#\"}}");
  ck_assert(tt_unique_key_reserved(m, &a));
  ck_assert(!tt_unique_key_reserved(m, &b));
  ck_assert(!tt_unique_key_reserved(m, &c));
  ck_assert(!tt_unique_key_reserved(p, &a)); /* no unique attributes: nothing reserved */
  struct tt_av e = item("{\"s\":{\"S\":\"\"},\"n\":{\"N\":\"0\"},\"z\":{\"NULL\":true},"
                        "\"b\":{\"B\":\"\"}}");
  ck_assert(!tt_unique_value_guarded(tt_av_map_get(&e, "s")));
  ck_assert(tt_unique_value_guarded(tt_av_map_get(&e, "n")));
  ck_assert(!tt_unique_value_guarded(tt_av_map_get(&e, "z")));
  ck_assert(!tt_unique_value_guarded(tt_av_map_get(&e, "b")));
  ck_assert(!tt_unique_value_guarded(NULL));
  struct tt_cond g;
  ck_assert(tt_unique_query_filter(m, &g));
  ck_assert_int_eq(g.kind, TT_COND_CMP);
  ck_assert_str_eq(g.path, "_tt_unique");
  ck_assert_int_eq(g.op, TT_COND_NOT_EXISTS);
  ck_assert_uint_eq(g.n_values, 0);
  tt_av_free(&a);
  tt_av_free(&b);
  tt_av_free(&c);
  tt_av_free(&e);
  tt_model_unref(m);
  tt_model_unref(p);
}
END_TEST

/* Runs tt_unique_guard_actions and returns the actions as text. */
static char *actions(const struct tt_model *m, const char *old_text, const char *new_text,
                     struct tt_unique_guard *g, size_t *ng) {
  struct tt_av key = item("{\"id\":{\"S\":\"m1\"}}");
  struct tt_av old = {.type = TT_AV_NULL}, neu = {.type = TT_AV_NULL};
  if (old_text)
    old = item(old_text);
  if (new_text)
    neu = item(new_text);
  struct tt_error err = {0};
  *ng = 0;
  ck_assert_msg(tt_unique_guard_actions(m, &key, old_text ? &old : NULL,
                                        new_text ? &neu : NULL, g, ng, &err) == 0,
                "%s", err.message);
  /* The actions as the DynamoDB request spells them. */
  json_t *arr = json_array();
  for (size_t i = 0; i < *ng; i++) {
    json_t *body = json_pack("{s:s, s:o}", "TableName", m->table, g[i].claim ? "Item" : "Key",
                             tt_ddb_item_to_json(&g[i].item));
    if (g[i].claim) {
      json_t *names = json_object();
      for (size_t k = 0; k < g[i].names.len; k++)
        json_object_set_new(names, g[i].names.u.members[k].name,
                            json_string(g[i].names.u.members[k].value.u.bytes));
      json_object_set_new(body, "ConditionExpression", json_string(TT_UNIQUE_CLAIM_CONDITION));
      json_object_set_new(body, "ExpressionAttributeNames", names);
      json_object_set_new(body, "ExpressionAttributeValues", tt_ddb_item_to_json(&g[i].values));
    }
    json_array_append_new(arr, json_pack("{s:o}", g[i].claim ? "Put" : "Delete", body));
    tt_unique_guard_free(&g[i]);
  }
  char *t = dump(arr);
  json_decref(arr);
  tt_av_free(&key);
  tt_av_free(&old);
  tt_av_free(&neu);
  return t;
}

START_TEST(guard_actions_claim_move_release) {
  struct tt_model *m = model(MEMBER);
  struct tt_unique_guard g[6];
  size_t ng;
  /* Create: one claim, with the marker, the owner and the condition. */
  char *t = actions(
      m, NULL, "{\"id\":{\"S\":\"m1\"},\"email\":{\"S\":\"a\"},\"nick\":{\"S\":\"n\"}}", g,
      &ng);
  ck_assert_str_eq(
      t, "[{\"Put\":{\"ConditionExpression\":\"attribute_not_exists(#p) OR #o = :o\","
         "\"ExpressionAttributeNames\":{\"#o\":\"_tt_owner\",\"#p\":\"id\"},"
         "\"ExpressionAttributeValues\":{\":o\":{\"M\":{\"id\":{\"S\":\"m1\"}}}},"
         "\"Item\":{\"_tt_owner\":{\"M\":{\"id\":{\"S\":\"m1\"}}},"
         "\"_tt_unique\":{\"S\":\"Member#email\"},\"id\":{\"S\":\"UNIQUE#Member#email#a\"}},"
         "\"TableName\":\"members\"}}]");
  ck_assert_uint_eq(ng, 1);
  ck_assert_str_eq(g[0].attr->name, "email");
  ck_assert(g[0].claim);
  free(t);
  /* Unchanged values need nothing; a changed one is released and claimed. */
  t = actions(m, "{\"email\":{\"S\":\"a\"},\"num\":{\"N\":\"1\"}}",
              "{\"email\":{\"S\":\"a\"},\"num\":{\"N\":\"1.0\"}}", g, &ng);
  ck_assert_str_eq(t, "[]");
  free(t);
  t = actions(m, "{\"email\":{\"S\":\"a\"}}", "{\"email\":{\"S\":\"b\"}}", g, &ng);
  ck_assert_uint_eq(ng, 2);
  ck_assert(!g[0].claim && g[1].claim);
  ck_assert_ptr_nonnull(strstr(t, "{\"Delete\":{\"Key\":{\"id\":{\"S\":\"UNIQUE#Member#email#a\"}},"
                                  "\"TableName\":\"members\"}}"));
  ck_assert_ptr_nonnull(strstr(t, "\"id\":{\"S\":\"UNIQUE#Member#email#b\"}"));
  free(t);
  /* Delete: every old guarded value is released; an empty one has none. */
  t = actions(m, "{\"email\":{\"S\":\"a\"},\"num\":{\"N\":\"7\"},\"raw\":{\"B\":\"\"}}", NULL, g,
              &ng);
  ck_assert_uint_eq(ng, 2);
  ck_assert(!g[0].claim && !g[1].claim);
  ck_assert_str_eq(g[0].attr->name, "email");
  ck_assert_str_eq(g[1].attr->name, "num");
  free(t);
  tt_model_unref(m);
}
END_TEST

START_TEST(concurrency_default) {
  struct tt_orm orm;
  memset(&orm, 0, sizeof(orm));
  ck_assert_uint_eq(tt_orm_batch_concurrency(&orm), TT_ORM_BATCH_DEFAULT_CONCURRENCY);
  ck_assert_uint_eq(tt_orm_batch_concurrency(NULL), 4);
  orm.batch_concurrency = 9;
  ck_assert_uint_eq(tt_orm_batch_concurrency(&orm), 9);
}
END_TEST

/* ---- typed batches on the memory backend ------------------------------------ */

static const char typed_dms[] =
    "{\"dms_version\":\"0.2\",\"models\":["
    "{\"name\":\"Thing\",\"table\":{\"name\":\"things\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},\"attributes\":["
    "{\"attribute\":\"id\",\"type\":\"S\",\"required\":true,\"roles\":[\"pk\"]},"
    "{\"attribute\":\"n\",\"type\":\"N\",\"optional\":true},"
    "{\"attribute\":\"tag\",\"type\":\"S\",\"optional\":true}]},"
    "{\"name\":\"Account\",\"table\":{\"name\":\"accounts\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},\"attributes\":["
    "{\"attribute\":\"id\",\"type\":\"S\",\"required\":true,\"roles\":[\"pk\"]},"
    "{\"attribute\":\"email\",\"type\":\"S\",\"optional\":true,\"tags\":{\"unique\":true}}]}]}";

#define MAX_ENTRIES 300

static struct tt_fault_backend *FB;
static struct tt_orm_batch_entry E[MAX_ENTRIES];
static struct tt_orm_batch_op OP;

static double no_jitter(void *arg) {
  (void)arg;
  return 0.0; /* every backoff is 0 ms */
}

static void typed_setup(void) {
  static const char *const tables[] = {"Thing", NULL};
  ofx_setup(typed_dms, tables);
  struct tt_backend *fb;
  ck_assert_int_eq(tt_fault_backend_new(OFX.b, &OFX.loop, &fb), 0);
  OFX.b = OFX.client.backend = fb;
  FB = tt_fault_backend_of(fb);
  OFX.client.random01 = no_jitter;
  OFX.orm.batch_concurrency = 2;
}

/* Frees what the entries hold and zeroes them. */
static void reset(void) {
  OP.entries = E;
  OP.n_entries = MAX_ENTRIES;
  tt_orm_batch_entries_free(&OP);
  memset(E, 0, sizeof(E));
}

static void typed_teardown(void) {
  reset();
  ofx_teardown();
}

static unsigned fault(const char *op, const char *error, unsigned unprocessed, unsigned times,
                      uint64_t latency_ms) {
  struct tt_fault_spec spec = {.op = op,
                               .error = error,
                               .unprocessed = unprocessed,
                               .times = times,
                               .latency_ms = latency_ms};
  struct tt_error err = {0};
  unsigned id = 0;
  ck_assert_msg(tt_fault_add(FB, &spec, &id, &err) == 0, "%s", err.message);
  return id;
}

static void key_entry(size_t i, const char *id) {
  char j[64];
  snprintf(j, sizeof(j), "{'id':'%s'}", id);
  E[i].key = ofx_key(ofx_model("Thing"), j);
}

/* A put of {id, n, tag: "x"}, or of {id} alone when n < 0. */
static void put_entry(size_t i, const char *model, const char *id, int n) {
  char j[96];
  if (n < 0)
    snprintf(j, sizeof(j), "{'id':'%s'}", id);
  else
    snprintf(j, sizeof(j), "{'id':'%s','n':%d,'tag':'x'}", id, n);
  json_t *v = fx_json(j);
  struct tt_error err = {0};
  E[i].put = true;
  ck_assert_msg(tt_orm_item_from_json(ofx_model(model), v, TT_ORM_PUT, OFX.now_ns, NULL,
                                      &E[i].item, NULL, &err) == 0,
                "%s", err.message);
  json_decref(v);
}

/* The ids t<from> .. t<to - 1> as entries [from, to): puts or keys. */
static void entries(size_t from, size_t to, bool put) {
  for (size_t i = from; i < to; i++) {
    char id[16];
    snprintf(id, sizeof(id), "t%zu", i);
    if (put)
      put_entry(i, "Thing", id, (int)i);
    else
      key_entry(i, id);
  }
}

/* The inputs of a batch (a struct tt_orm_batch_op). */
#define BATCH(...) ((struct tt_orm_batch_op){__VA_ARGS__})

/* An input that failed to type after n_typed entries. */
struct input {
  const struct tt_error *err;
  size_t n_typed;
};

static int start_batch(struct tt_orm_ctx *ctx, void *arg) {
  const struct input *in = arg;
  struct tt_orm_batch_op *op = (struct tt_orm_batch_op *)ctx;
  return in ? tt_orm_batch_fail_input(op, in->n_typed, in->err) : tt_orm_batch_start(op);
}

/* Runs `op` (its inputs) over the entries E on model `model`; OP and E
 * hold its answer. */
static struct tt_orm_result run_as(const char *model, struct tt_orm_batch_op op,
                                   const struct input *in) {
  struct tt_orm_result res;
  OP = op;
  OP.entries = E;
  ofx_run(&OP.ctx, ofx_model(model), &res, start_batch, (void *)in);
  return res;
}

static struct tt_orm_result run(struct tt_orm_batch_op op) { return run_as("Thing", op, NULL); }

static void expect_done(struct tt_orm_result r, size_t n) {
  ck_assert_msg(r.status == 0, "%s: %s (%s)", tt_error_code_name(r.err.code), r.err.message,
                r.err.field);
  ck_assert_int_eq(r.answer, TT_ORM_ANSWER_BATCH);
  ck_assert_ptr_eq(r.model, ofx_model("Thing"));
  ck_assert(!OP.incomplete);
  ck_assert_uint_eq(OP.processed, n);
  for (size_t i = 0; i < n; i++)
    ck_assert(E[i].done);
  tt_orm_result_free(&r);
}

static size_t undone(size_t n) {
  size_t left = 0;
  for (size_t i = 0; i < n; i++)
    left += !E[i].done;
  return left;
}

/* Attribute `name` (S or N) of the item found for entry i; NULL if absent. */
static const char *found_attr(size_t i, const char *name) {
  ck_assert_int_eq(E[i].found.type, TT_AV_M);
  const struct tt_av *v = tt_av_map_get(&E[i].found, name);
  return v && (v->type == TT_AV_S || v->type == TT_AV_N) ? v->u.bytes : NULL;
}

/* Reads t0 .. t<n - 1> back and checks that every one was written. */
static void expect_stored(size_t n) {
  reset();
  entries(0, n, false);
  expect_done(run(BATCH(.n_entries = n)), n);
  for (size_t i = 0; i < n; i++)
    ck_assert_int_eq(E[i].found.type, TT_AV_M);
}

START_TEST(writes_and_reads_in_chunks) {
  unsigned w = fault("BatchWriteItem", NULL, 0, 1000, 1);
  unsigned g = fault("BatchGetItem", NULL, 0, 1000, 1);
  entries(0, 60, true);
  expect_done(run(BATCH(.write = true, .n_entries = 60)), 60);
  ck_assert_uint_eq(tt_fault_fired(FB, w), 3); /* 25 + 25 + 10 */
  /* 250 keys in 3 chunks; the 60 written are found in key order. */
  reset();
  entries(0, 250, false);
  expect_done(run(BATCH(.n_entries = 250)), 250);
  ck_assert_uint_eq(tt_fault_fired(FB, g), 3); /* 100 + 100 + 50 */
  for (size_t i = 0; i < 250; i++)
    ck_assert(E[i].found.type == TT_AV_M ? i < 60 : i >= 60);
  ck_assert_str_eq(found_attr(7, "id"), "t7");
  ck_assert_str_eq(found_attr(59, "n"), "59");
  /* Deletes: what was deleted is missing afterwards. */
  reset();
  entries(0, 30, false);
  expect_done(run(BATCH(.write = true, .n_entries = 30)), 30);
  reset();
  entries(0, 60, false);
  expect_done(run(BATCH(.n_entries = 60)), 60);
  for (size_t i = 0; i < 60; i++)
    ck_assert(E[i].found.type == TT_AV_M ? i >= 30 : i < 30);
}
END_TEST

START_TEST(a_select_keeps_its_paths_and_the_keys) {
  entries(0, 2, true);
  expect_done(run(BATCH(.write = true, .n_entries = 2)), 2);
  reset();
  entries(0, 2, false);
  expect_done(run(BATCH(.n_entries = 2, .select = ofx_select("['tag']"))), 2);
  ck_assert_str_eq(found_attr(1, "tag"), "x");
  ck_assert_str_eq(found_attr(1, "id"), "t1"); /* keys are read to match the answer */
  ck_assert_ptr_null(found_attr(1, "n"));
}
END_TEST

START_TEST(unprocessed_work_is_retried_until_done) {
  /* 10 of 25 left twice: three calls, everything written. */
  unsigned w = fault("BatchWriteItem", "Unprocessed", 10, 2, 0);
  entries(0, 25, true);
  expect_done(run(BATCH(.write = true, .n_entries = 25)), 25);
  ck_assert_uint_eq(tt_fault_fired(FB, w), 2);
  unsigned g = fault("BatchGetItem", "Unprocessed", 3, 1, 0);
  expect_stored(25);
  ck_assert_uint_eq(tt_fault_fired(FB, g), 1);
}
END_TEST

START_TEST(work_left_at_the_deadline_is_incomplete) {
  fault("BatchWriteItem", "Unprocessed", 5, 1, 0);
  entries(0, 25, true);
  /* A deadline long past: no retry. */
  ofx_expect_error(run(BATCH(.write = true, .n_entries = 25, .deadline_ns = 1)),
                   TT_ERR_BATCH_INCOMPLETE, "", "5 of 25 writes were not done");
  ck_assert(OP.incomplete);
  ck_assert_uint_eq(OP.processed, 20);
  ck_assert_int_eq(OP.cause, TT_OK);
  ck_assert_uint_eq(undone(25), 5);
  /* A batch-get likewise names the keys it did not read. */
  fault("BatchGetItem", "Unprocessed", 7, 1, 0);
  reset();
  entries(0, 25, false);
  ofx_expect_error(run(BATCH(.n_entries = 25, .deadline_ns = 1)), TT_ERR_BATCH_INCOMPLETE, "",
                   "7 of 25 keys were not read");
  ck_assert_uint_eq(undone(25), 7);
  for (size_t i = 0; i < 25; i++)
    ck_assert(!E[i].done || E[i].found.type == TT_AV_M);
}
END_TEST

START_TEST(a_backend_error_before_any_write_is_that_error) {
  fault("BatchWriteItem", "ConditionalCheckFailedException", 0, 1, 0);
  entries(0, 3, true);
  ofx_expect_error(run(BATCH(.write = true, .n_entries = 3)), TT_ERR_CONDITION_FAILED, "", NULL);
  ck_assert(OP.incomplete);
  ck_assert_uint_eq(OP.processed, 0);
  ck_assert_int_eq(OP.cause, TT_OK);
  ck_assert_uint_eq(undone(3), 3);
  /* Transient errors are retried by the client until its attempts end. */
  unsigned g = fault("BatchGetItem", "InternalServerError", 0, 1000, 0);
  reset();
  entries(0, 3, false);
  ofx_expect_error(run(BATCH(.n_entries = 3)), TT_ERR_BACKEND_UNAVAILABLE, "", NULL);
  ck_assert_uint_eq(tt_fault_fired(FB, g), tt_client_default_retry.max_attempts);
  ck_assert(OP.incomplete);
}
END_TEST

START_TEST(a_backend_error_after_a_write_is_incomplete_with_its_cause) {
  OFX.orm.batch_concurrency = 1; /* chunks one after another */
  fault("BatchWriteItem", NULL, 0, 1, 1);                           /* the first passes */
  fault("BatchWriteItem", "ConditionalCheckFailedException", 0, 1, 0); /* the second fails */
  entries(0, 30, true);
  ofx_expect_error(run(BATCH(.write = true, .n_entries = 30)), TT_ERR_BATCH_INCOMPLETE, "",
                   "5 of 30 writes were not done");
  ck_assert_uint_eq(OP.processed, 25);
  ck_assert_int_eq(OP.cause, TT_ERR_CONDITION_FAILED);
  for (size_t i = 0; i < 30; i++)
    ck_assert(E[i].done == (i < 25));
  expect_stored(25);
}
END_TEST

START_TEST(refusals_before_any_io_keep_their_order) {
  struct tt_error input, err = {0};
  tt_error_set(&input, TT_ERR_VALIDATION, "keys[2].id", "keys[2].id is bad");
  const struct input typed2 = {&input, 2};
  /* A key named twice names both places. */
  key_entry(0, "a");
  key_entry(1, "b");
  key_entry(2, "a");
  ofx_expect_error(run(BATCH(.n_entries = 3)), TT_ERR_VALIDATION, "keys[2]",
                   "names the same item as keys[0]");
  /* Entry 2 failed to type: its own duplicate is never seen, the input
   * error stands; a duplicate among the entries before it comes first. */
  ofx_expect_error(run_as("Thing", BATCH(.n_entries = 3), &typed2),
                   TT_ERR_VALIDATION, "keys[2].id", NULL);
  reset();
  key_entry(0, "a");
  key_entry(1, "a");
  ofx_expect_error(run_as("Thing", BATCH(.n_entries = 3), &typed2),
                   TT_ERR_VALIDATION, "keys[1]", "same item as keys[0]");
  /* A put and a delete of one item; the lists count apart. */
  reset();
  put_entry(0, "Thing", "a", 1);
  key_entry(1, "b");
  key_entry(2, "a");
  ofx_expect_error(run(BATCH(.write = true, .n_entries = 3)), TT_ERR_VALIDATION, "delete[1]",
                   "same item as put[0]");
  /* A typed key of the wrong type. */
  reset();
  E[0].key = item("{\"id\":{\"N\":\"1\"}}");
  ofx_expect_error(run(BATCH(.n_entries = 1)), TT_ERR_VALIDATION, "keys[0]", "id");
  /* Counts come before the entries. */
  reset();
  ofx_expect_error(run(BATCH(.n_entries = TT_ORM_BATCH_MAX + 1)), TT_ERR_VALIDATION, "keys",
                   "at most 10000 keys");
  ck_assert_int_eq(tt_orm_batch_check_counts(ofx_model("Thing"), true, 1, TT_ORM_BATCH_MAX, &err),
                   -1);
  ck_assert_str_eq(err.field, "put");
  ck_assert_int_eq(tt_orm_batch_check_counts(ofx_model("Thing"), true, 0, 3, &err), 0);
  /* A batch-write cannot keep a value unique. */
  put_entry(0, "Account", "a", -1);
  ofx_expect_error(run_as("Account", BATCH(.write = true, .n_entries = 1), NULL),
                   TT_ERR_VALIDATION, "put", "keeps email unique");
  /* A select path must start with a declared attribute. */
  reset();
  key_entry(0, "a");
  ofx_expect_error(run(BATCH(.n_entries = 1, .select = ofx_select("['nope']"))),
                   TT_ERR_VALIDATION, "select.nope", NULL);
  ck_assert_uint_eq(tt_fault_fired_total(FB), 0);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("orm_batch");
  TCase *tc = tcase_create("unique");
  tcase_add_test(tc, guard_keys_by_type);
  tcase_add_test(tc, guard_key_too_long);
  tcase_add_test(tc, model_checks);
  tcase_add_test(tc, reserved_keys_and_guarded_values);
  tcase_add_test(tc, guard_actions_claim_move_release);
  suite_add_tcase(s, tc);
  tc = tcase_create("batch");
  tcase_add_test(tc, concurrency_default);
  suite_add_tcase(s, tc);
  tc = tcase_create("typed");
  tcase_add_checked_fixture(tc, typed_setup, typed_teardown);
  tcase_add_test(tc, writes_and_reads_in_chunks);
  tcase_add_test(tc, a_select_keeps_its_paths_and_the_keys);
  tcase_add_test(tc, unprocessed_work_is_retried_until_done);
  tcase_add_test(tc, work_left_at_the_deadline_is_incomplete);
  tcase_add_test(tc, a_backend_error_before_any_write_is_that_error);
  tcase_add_test(tc, a_backend_error_after_a_write_is_incomplete_with_its_cause);
  tcase_add_test(tc, refusals_before_any_io_keep_their_order);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
