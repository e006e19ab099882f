/* SPDX-License-Identifier: Apache-2.0 */
/* test_orm_txn.c -- the ORM's transactions as a typed library, on the
 * memory backend in process: typed actions written and read back, a failed
 * condition cancelling everything with a reason per action, two actions on
 * one item refused before any I/O, expected versions, taken unique values,
 * client-token retries, and the order of refusals of a request whose input
 * failed to type. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "orm/cond.h"
#include "orm/item.h"
#include "orm/txn.h"
#include "orm_fixture.h"

static const char dms[] =
    "{\"dms_version\":\"0.2\",\"models\":["
    "{\"name\":\"Account\",\"table\":{\"name\":\"accounts\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},\"attributes\":["
    "{\"attribute\":\"id\",\"type\":\"S\",\"required\":true,\"roles\":[\"pk\"]},"
    "{\"attribute\":\"balance\",\"type\":\"N\",\"optional\":true},"
    "{\"attribute\":\"email\",\"type\":\"S\",\"optional\":true,\"tags\":{\"unique\":true}},"
    "{\"attribute\":\"updated_at\",\"type\":\"S\",\"format\":\"rfc3339nano\","
    "\"roles\":[\"updated_at\"]},"
    "{\"attribute\":\"version\",\"type\":\"N\",\"format\":\"int\",\"roles\":[\"version\"]}]},"
    "{\"name\":\"Log\",\"table\":{\"name\":\"logs\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},\"attributes\":["
    "{\"attribute\":\"id\",\"type\":\"S\",\"required\":true,\"roles\":[\"pk\"]},"
    "{\"attribute\":\"msg\",\"type\":\"S\",\"optional\":true}]}]}";

/* One action as a caller types it; JSON written with ' for ". */
struct act {
  enum tt_orm_txn_kind kind;
  const char *model;
  const char *key;    /* all but create and put */
  const char *item;   /* create, put */
  const char *update; /* update */
  const char *condition;
  int64_t expected; /* 0: none, else the expected version + 1 */
};

#define MAX_ACTS 4

/* What a transaction answered, copied out before its arena goes. */
static struct seen {
  struct tt_orm_txn_reason reasons[MAX_ACTS]; /* code and message left out */
  bool has_reasons;
  struct tt_av items[MAX_ACTS];
  bool has_items;
} S;

static size_t n_acts;

static void free_items(void) {
  for (size_t i = 0; i < MAX_ACTS; i++)
    tt_av_free(&S.items[i]);
}

static void capture(struct tt_orm_ctx *ctx) {
  struct tt_orm_txn_op *op = (struct tt_orm_txn_op *)ctx;
  S.has_reasons = op->reasons != NULL;
  S.has_items = op->items != NULL;
  for (size_t i = 0; i < n_acts; i++) {
    if (op->reasons) {
      S.reasons[i] = op->reasons[i];
      S.reasons[i].code = S.reasons[i].message = NULL; /* in the arena */
    }
    if (op->items)
      S.items[i] = op->items[i]; /* moved */
  }
}

/* Types action x into a as a handler does, at `now`. */
static void type_action(const struct act *x, size_t i, int64_t now, json_t **keep,
                        struct tt_orm_txn_action *a) {
  const struct tt_model *m = ofx_model(x->model);
  struct tt_error err = {0};
  a->kind = x->kind;
  a->model = m;
  snprintf(a->field, sizeof(a->field), "items[%u]", (unsigned)i);
  if (x->key)
    a->key = ofx_key(m, x->key);
  if (x->item) {
    json_t *j = fx_json(x->item);
    ck_assert_msg(tt_orm_item_from_json(m, j, x->kind == TT_ORM_TXN_CREATE ? TT_ORM_CREATE
                                                                            : TT_ORM_PUT,
                                        now, NULL, &a->item, NULL, &err) == 0,
                  "%s", err.message);
    json_decref(j);
  }
  if (x->update) {
    json_t *j = fx_json(x->update);
    ck_assert_msg(tt_orm_update_from_json(m, j, now, a->field, &a->upd, &err) == 0, "%s",
                  err.message);
    json_decref(j);
  }
  if (x->condition) {
    *keep = fx_json(x->condition);
    ck_assert_msg(tt_orm_cond_from_json(m, *keep, "condition", &a->condition, &err) == 0, "%s",
                  err.message);
  }
  a->expected.present = x->expected > 0;
  a->expected.version = x->expected - 1;
}

struct txn {
  bool get;
  const struct act *acts;
  size_t n;
  const char *token;
  uint64_t hash;
  const struct tt_error *input; /* fail the input after n_typed actions */
  size_t n_typed;
};

static int start_txn(struct tt_orm_ctx *ctx, void *arg) {
  struct tt_orm_txn_op *op = (struct tt_orm_txn_op *)ctx;
  const struct txn *t = arg;
  return t->input ? tt_orm_txn_fail_input(op, t->n_typed, t->input) : tt_orm_txn_start(op);
}

/* Runs t and returns its result (the caller frees it); S holds the answer. */
static struct tt_orm_result run(struct txn t) {
  struct tt_orm_txn_action acts[MAX_ACTS];
  json_t *conds[MAX_ACTS] = {0};
  struct tt_orm_txn_op op;
  struct tt_orm_result res;
  memset(&op, 0, sizeof(op));
  memset(acts, 0, sizeof(acts));
  free_items();
  memset(&S, 0, sizeof(S));
  op.get = t.get;
  op.client_token = t.token;
  op.token_hash = t.hash;
  op.now = tt_orm_now_ns(&OFX.orm);
  if (t.token)
    op.now = tt_orm_tokens_time(&OFX.orm, t.token, t.hash, op.now);
  for (size_t i = 0; i < t.n; i++)
    type_action(&t.acts[i], i, op.now, &conds[i], &acts[i]);
  op.actions = acts;
  op.n_actions = t.n;
  n_acts = t.n;
  OFX.inspect = capture;
  ofx_run(&op.ctx, NULL, &res, start_txn, &t);
  for (size_t i = 0; i < t.n; i++) {
    json_decref(conds[i]);
    /* The op took every input. */
    ck_assert_int_ne(acts[i].key.type, TT_AV_M);
    ck_assert_int_ne(acts[i].item.type, TT_AV_M);
    ck_assert_uint_eq(acts[i].upd.n_actions, 0);
  }
  return res;
}

/* Checks that r succeeded, and frees it. */
static void expect_ok(struct tt_orm_result r) {
  ck_assert_msg(r.status == 0, "%s: %s (%s)", tt_error_code_name(r.err.code), r.err.message,
                r.err.field);
  ck_assert_int_eq(r.answer, TT_ORM_ANSWER_NONE);
  tt_orm_result_free(&r);
}

/* The items of `keys` (of model `model`) read in one read transaction;
 * S.items holds them until the next run (or the teardown). */
static void read_back(const char *model, const char *const *keys, size_t n) {
  struct act acts[MAX_ACTS];
  memset(acts, 0, sizeof(acts));
  for (size_t i = 0; i < n; i++)
    acts[i] = (struct act){.kind = TT_ORM_TXN_GET, .model = model, .key = keys[i]};
  expect_ok(run((struct txn){.get = true, .acts = acts, .n = n}));
  ck_assert(S.has_items);

}

/* Attribute `name` (S or N) of read item i; NULL if absent. */
static const char *attr(size_t i, const char *name) {
  ck_assert_int_eq(S.items[i].type, TT_AV_M);
  const struct tt_av *v = tt_av_map_get(&S.items[i], name);
  return v && (v->type == TT_AV_S || v->type == TT_AV_N) ? v->u.bytes : NULL;
}

/* Reads the item of `key` of `model` into S.items[0]; the text of its
 * attribute `name`, or NULL when the item is absent. */
static const char *read_attr(const char *model, const char *key, const char *name) {
  read_back(model, &key, 1);
  return S.items[0].type == TT_AV_M ? attr(0, name) : NULL;
}

static void seed(void) {
  static const struct act acts[] = {
      {.kind = TT_ORM_TXN_CREATE,
       .model = "Account",
       .item = "{'id':'a','balance':10,'email':'a@x'}"},
      {.kind = TT_ORM_TXN_CREATE, .model = "Log", .item = "{'id':'l1','msg':'open'}"}};
  expect_ok(run((struct txn){.acts = acts, .n = 2}));
  ck_assert(!S.has_reasons);

}

/* Every test starts with account a (balance 10, email a@x) and log l1. */
static void setup(void) {
  static const char *const tables[] = {"Account", "Log", NULL};
  ofx_setup(dms, tables);
  seed();
}

static void teardown(void) {
  free_items();
  ofx_teardown();
}

START_TEST(writes_every_action_and_reads_them_back) {
  static const char *const keys[] = {"{'id':'a'}", "{'id':'nobody'}"};
  read_back("Account", keys, 2);
  ck_assert_str_eq(attr(0, "balance"), "10");
  ck_assert_str_eq(attr(0, "version"), "0");
  ck_assert_int_eq(S.items[1].type, TT_AV_NULL);
  ck_assert_str_eq(read_attr("Log", "{'id':'l1'}", "msg"), "open");
}
END_TEST

START_TEST(a_failed_condition_cancels_with_a_reason_per_action) {
  static const struct act acts[] = {
      {.kind = TT_ORM_TXN_UPDATE,
       .model = "Account",
       .key = "{'id':'a'}",
       .update = "{'set':{'balance':0}}",
       .condition = "{'attr':'balance','op':'>','value':100}"},
      {.kind = TT_ORM_TXN_CREATE, .model = "Log", .item = "{'id':'l2','msg':'drain'}"},
      {.kind = TT_ORM_TXN_CHECK,
       .model = "Log",
       .key = "{'id':'l1'}",
       .condition = "{'attr':'msg','op':'=','value':'open'}"}};
  ofx_expect_error(run((struct txn){.acts = acts, .n = 3}), TT_ERR_TRANSACTION_CANCELED, "", NULL);
  ck_assert(S.has_reasons);
  ck_assert_int_eq(S.reasons[0].v, TT_ORM_TXN_CONDITION);
  ck_assert_int_eq(S.reasons[1].v, TT_ORM_TXN_NONE);
  ck_assert_int_eq(S.reasons[2].v, TT_ORM_TXN_NONE);
  /* Nothing was written. */
  ck_assert_ptr_null(read_attr("Log", "{'id':'l2'}", "id"));
  ck_assert_str_eq(read_attr("Account", "{'id':'a'}", "balance"), "10");
}
END_TEST

START_TEST(two_actions_on_one_item_are_refused_before_any_io) {
  static const struct act acts[] = {
      {.kind = TT_ORM_TXN_DELETE, .model = "Log", .key = "{'id':'l1'}"},
      {.kind = TT_ORM_TXN_PUT, .model = "Log", .item = "{'id':'l1','msg':'again'}"}};
  ofx_expect_error(run((struct txn){.acts = acts, .n = 2}),
                   TT_ERR_VALIDATION, "items[1]", "name the same item");
  ck_assert(!S.has_reasons);
  ck_assert_str_eq(read_attr("Log", "{'id':'l1'}", "msg"), "open");
}
END_TEST

START_TEST(expected_versions_lock_optimistically) {
  /* Version 0 is stored: expecting 4 cancels with both versions. */
  struct act acts[] = {{.kind = TT_ORM_TXN_UPDATE,
                        .model = "Account",
                        .key = "{'id':'a'}",
                        .update = "{'set':{'balance':1}}",
                        .expected = 4 + 1}};
  ofx_expect_error(run((struct txn){.acts = acts, .n = 1}), TT_ERR_TRANSACTION_CANCELED, "", NULL);
  ck_assert_int_eq(S.reasons[0].v, TT_ORM_TXN_VERSION);
  ck_assert(S.reasons[0].has_version);
  ck_assert_int_eq(S.reasons[0].version, 0);
  /* Expecting 0 applies and moves the version to 1. */
  acts[0].expected = 0 + 1;
  expect_ok(run((struct txn){.acts = acts, .n = 1}));
  ck_assert_str_eq(read_attr("Account", "{'id':'a'}", "balance"), "1");
  ck_assert_str_eq(attr(0, "version"), "1");
}
END_TEST

START_TEST(a_taken_unique_value_names_its_attribute) {
  static const struct act acts[] = {
      {.kind = TT_ORM_TXN_CREATE, .model = "Log", .item = "{'id':'l3'}"},
      {.kind = TT_ORM_TXN_CREATE, .model = "Account", .item = "{'id':'b','email':'a@x'}"}};
  ofx_expect_error(run((struct txn){.acts = acts, .n = 2}), TT_ERR_TRANSACTION_CANCELED, "", NULL);
  ck_assert_int_eq(S.reasons[0].v, TT_ORM_TXN_NONE);
  ck_assert_int_eq(S.reasons[1].v, TT_ORM_TXN_UNIQUE);
  ck_assert_str_eq(S.reasons[1].attr->name, "email");
}
END_TEST

START_TEST(a_client_token_retry_applies_once) {
  static const struct act acts[] = {{.kind = TT_ORM_TXN_UPDATE,
                                     .model = "Account",
                                     .key = "{'id':'a'}",
                                     .update = "{'add':{'balance':5}}"}};
  expect_ok(run((struct txn){.acts = acts, .n = 1, .token = "t-1", .hash = 7}));
  /* The same request later: the memo gives it the first time, so the
   * backend sees the same request and does not apply it again. */
  OFX.now_ns += 3 * OFX_SEC;
  expect_ok(run((struct txn){.acts = acts, .n = 1, .token = "t-1", .hash = 7}));
  ck_assert_str_eq(read_attr("Account", "{'id':'a'}", "balance"), "15");
  ck_assert_str_eq(attr(0, "version"), "1");
  /* Another request under the token is refused. */
  ofx_expect_error(run((struct txn){.acts = acts, .n = 1, .token = "t-1", .hash = 8}),
                   TT_ERR_VALIDATION, "client_token", NULL);
}
END_TEST

START_TEST(refusals_keep_the_order_of_the_actions) {
  /* A check with nothing to check comes before the input error of a later
   * action; without it, the input error stands. */
  static const struct act acts[] = {
      {.kind = TT_ORM_TXN_CHECK, .model = "Log", .key = "{'id':'l1'}"},
      {.kind = TT_ORM_TXN_CREATE, .model = "Log", .item = "{'id':'l4'}"}};
  struct tt_error input;
  tt_error_set(&input, TT_ERR_VALIDATION, "items[1].item", "items[1].item is bad");
  ofx_expect_error(run((struct txn){.acts = acts, .n = 2, .input = &input, .n_typed = 1}),
                   TT_ERR_VALIDATION, "items[0]", "a check needs a condition");
  ofx_expect_error(run((struct txn){.acts = acts + 1, .n = 1, .input = &input, .n_typed = 0}),
                   TT_ERR_VALIDATION, "items[1].item", NULL);
  /* A model without a version has nothing to expect. */
  struct act log[] = {{.kind = TT_ORM_TXN_DELETE, .model = "Log", .key = "{'id':'l1'}",
                       .expected = 1}};
  ofx_expect_error(run((struct txn){.acts = log, .n = 1}),
                   TT_ERR_VALIDATION, "items[0].expected_version", NULL);
  /* A read transaction holds only reads. */
  ofx_expect_error(run((struct txn){.get = true, .acts = acts + 1, .n = 1}),
                   TT_ERR_VALIDATION, "items[0]", NULL);
}
END_TEST

int main(void) {
  const TTest *const tests[] = {
      writes_every_action_and_reads_them_back,
      a_failed_condition_cancels_with_a_reason_per_action,
      two_actions_on_one_item_are_refused_before_any_io,
      expected_versions_lock_optimistically,
      a_taken_unique_value_names_its_attribute,
      a_client_token_retry_applies_once,
      refusals_keep_the_order_of_the_actions};
  return ofx_main("orm_txn", setup, teardown, tests, sizeof(tests) / sizeof(tests[0]));
}
