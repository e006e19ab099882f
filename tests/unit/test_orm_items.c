/* SPDX-License-Identifier: Apache-2.0 */
/* test_orm_items.c -- the ORM's single-item operations as a typed library,
 * on the memory backend in process: create, put, get, update and delete
 * with their typed keys and answers, lifecycle fields on the injected
 * clock, versions and expected versions, If-None-Match, upserts and
 * conditions, and the refusals made before any I/O. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "orm/cond.h"
#include "orm/item.h"
#include "orm/items.h"
#include "orm_fixture.h"

static const char dms[] =
    "{\"dms_version\":\"0.2\",\"models\":["
    "{\"name\":\"Note\",\"table\":{\"name\":\"notes\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"PK\",\"type\":\"S\"},"
    "\"sort\":{\"attribute\":\"SK\",\"type\":\"S\"}},\"attributes\":["
    "{\"attribute\":\"PK\",\"type\":\"S\",\"required\":true,\"roles\":[\"pk\"]},"
    "{\"attribute\":\"SK\",\"type\":\"S\",\"required\":true,\"roles\":[\"sk\"]},"
    "{\"attribute\":\"title\",\"type\":\"S\",\"optional\":true},"
    "{\"attribute\":\"n\",\"type\":\"N\",\"optional\":true},"
    "{\"attribute\":\"created_at\",\"type\":\"S\",\"format\":\"rfc3339nano\","
    "\"roles\":[\"created_at\"]},"
    "{\"attribute\":\"updated_at\",\"type\":\"S\",\"format\":\"rfc3339nano\","
    "\"roles\":[\"updated_at\"]},"
    "{\"attribute\":\"version\",\"type\":\"N\",\"format\":\"int\",\"roles\":[\"version\"]}]},"
    "{\"name\":\"Plain\",\"table\":{\"name\":\"plain\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},\"attributes\":["
    "{\"attribute\":\"id\",\"type\":\"S\",\"required\":true,\"roles\":[\"pk\"]},"
    "{\"attribute\":\"v\",\"type\":\"S\",\"optional\":true}]}]}";

static void setup(void) {
  static const char *const tables[] = {"Note", "Plain", NULL};
  ofx_setup(dms, tables);
}

/* One item request: what a handler fills in. */
struct req {
  enum tt_orm_item_kind kind;
  const char *model; /* "Note" when NULL */
  const char *key;   /* JSON with ' for "; NULL: none */
  const char *body;  /* JSON with ' for "; NULL: none */
  bool if_none_match, upsert, raw;
  int64_t expected; /* If-Match; -1: none */
  const char *select; /* JSON array with ' for "; NULL: none */
};

/* Types the body `arg` (NULL: none) as a handler does, at the op's time:
 * the item of a create or put, the update of a patch; then starts op. */
static int start_item(struct tt_orm_ctx *ctx, void *arg) {
  struct tt_orm_item_op *op = (struct tt_orm_item_op *)ctx;
  const json_t *body = arg;
  struct tt_error err;
  int rc = 0;
  op->now = tt_orm_now_ns(ctx->orm);
  if (body != NULL) {
    const json_t *c = json_object_get(body, "condition");
    if (op->kind == TT_ORM_OP_UPDATE)
      rc = tt_orm_update_from_json(ctx->model, body, op->now, "", &op->upd, &err) ||
           (c && tt_orm_cond_from_json(ctx->model, c, "condition", &op->condition, &err));
    else
      rc = tt_orm_item_from_json(ctx->model, body,
                                 op->kind == TT_ORM_OP_PUT ? TT_ORM_PUT : TT_ORM_CREATE, op->now,
                                 NULL, &op->item, &op->item_expected, &err);
  }
  return rc != 0 ? tt_orm_item_fail_input(op, &err) : tt_orm_item_start(op);
}

/* Runs q and returns its result (the caller frees it). */
static struct tt_orm_result run(struct req q) {
  const struct tt_model *m = ofx_model(q.model ? q.model : "Note");
  struct tt_orm_item_op op;
  struct tt_orm_result res;
  struct tt_av key = {0};
  json_t *body = q.body ? fx_json(q.body) : NULL;
  memset(&op, 0, sizeof(op));
  if (q.key)
    key = ofx_key(m, q.key);
  op.kind = q.kind;
  op.item_key = q.key ? &key : NULL;
  if (q.select)
    op.select = ofx_select(q.select);
  op.if_none_match = q.if_none_match;
  op.upsert = q.upsert;
  op.raw_format = q.raw;
  op.consistent = true;
  op.expected.present = q.expected >= 0;
  op.expected.version = q.expected;
  ofx_run(&op.ctx, m, &res, start_item, body);
  tt_av_free(&key);
  json_decref(body);
  return res;
}

/* The text of attribute `name` (S or N) of a typed answer; NULL if absent. */
static const char *attr(const struct tt_orm_result *r, const char *name) {
  ck_assert_int_eq(r->answer, TT_ORM_ANSWER_ITEM);
  const struct tt_av *v = tt_av_map_get(&r->item, name);
  return v && (v->type == TT_AV_S || v->type == TT_AV_N) ? v->u.bytes : NULL;
}

static void expect_ok(const struct tt_orm_result *r) {
  ck_assert_msg(r->status == 0, "%s: %s (%s)", tt_error_code_name(r->err.code), r->err.message,
                r->err.field);
}

static void expect_error(const struct tt_orm_result *r, enum tt_err_code code, const char *field) {
  ck_assert_msg(r->status == -1, "succeeded");
  ck_assert_msg(r->err.code == code, "%s: %s", tt_error_code_name(r->err.code), r->err.message);
  ck_assert_str_eq(r->err.field, field);
}

static char *stamp(int64_t ns) {
  static char out[TT_ORM_TIME_MAX];
  ck_assert_int_gt(tt_orm_format_rfc3339nano(ns, out, sizeof(out)), 0);
  return out;
}

#define NOTE_KEY "{'PK':'u#1','SK':'n#1'}"
#define NOTE_ITEM "{'PK':'u#1','SK':'n#1','title':'first','n':1}"

static void create_note(void) {
  struct tt_orm_result r = run((struct req){.kind = TT_ORM_OP_CREATE, .body = NOTE_ITEM,
                                            .expected = -1});
  expect_ok(&r);
  tt_orm_result_free(&r);
}

START_TEST(create_answers_the_typed_item_with_lifecycle_fields) {
  struct tt_orm_result r = run((struct req){.kind = TT_ORM_OP_CREATE, .body = NOTE_ITEM,
                                            .expected = -1});
  expect_ok(&r);
  ck_assert(r.created);
  ck_assert_ptr_eq(r.model, ofx_model("Note"));
  ck_assert_str_eq(attr(&r, "title"), "first");
  ck_assert_str_eq(attr(&r, "n"), "1");
  ck_assert_str_eq(attr(&r, "version"), "0");
  ck_assert_str_eq(attr(&r, "created_at"), "2023-11-14T22:13:20Z");
  ck_assert_str_eq(attr(&r, "updated_at"), "2023-11-14T22:13:20Z");
  ck_assert_str_eq(tt_orm_item_version(r.model, &r.item)->u.bytes, "0");
  tt_orm_result_free(&r);
  /* The same key again: the create's condition fails. */
  r = run((struct req){.kind = TT_ORM_OP_CREATE, .body = NOTE_ITEM, .expected = -1});
  expect_error(&r, TT_ERR_CONDITION_FAILED, "key");
  tt_orm_result_free(&r);
}
END_TEST

START_TEST(create_refuses_a_version_and_lifecycle_fields) {
  struct tt_orm_result r = run((struct req){
      .kind = TT_ORM_OP_CREATE, .body = "{'PK':'a','SK':'b','version':3}", .expected = -1});
  expect_error(&r, TT_ERR_VALIDATION, "version");
  tt_orm_result_free(&r);
  r = run((struct req){.kind = TT_ORM_OP_CREATE,
                       .body = "{'PK':'a','SK':'b','created_at':'2020-01-01T00:00:00Z'}",
                       .expected = -1});
  expect_error(&r, TT_ERR_VALIDATION, "created_at");
  tt_orm_result_free(&r);
}
END_TEST

START_TEST(get_reads_the_item_or_says_not_found) {
  struct tt_orm_result r = run((struct req){.kind = TT_ORM_OP_GET, .key = NOTE_KEY,
                                            .expected = -1});
  expect_error(&r, TT_ERR_ITEM_NOT_FOUND, "key");
  tt_orm_result_free(&r);
  create_note();
  r = run((struct req){.kind = TT_ORM_OP_GET, .key = NOTE_KEY, .expected = -1});
  expect_ok(&r);
  ck_assert(!r.created);
  ck_assert_str_eq(attr(&r, "PK"), "u#1");
  ck_assert_str_eq(attr(&r, "title"), "first");
  tt_orm_result_free(&r);
  /* A projection reads only what it names. */
  r = run((struct req){.kind = TT_ORM_OP_GET, .key = NOTE_KEY, .select = "['title']",
                       .expected = -1});
  expect_ok(&r);
  ck_assert_str_eq(attr(&r, "title"), "first");
  ck_assert_ptr_null(attr(&r, "n"));
  ck_assert_ptr_null(attr(&r, "version"));
  tt_orm_result_free(&r);
}
END_TEST

/* Adds S attribute name = text to the M *key. */
static void put_s(struct tt_av *key, const char *name, const char *text) {
  struct tt_av s;
  ck_assert_int_eq(tt_av_string(&s, text, strlen(text)), 0);
  ck_assert_int_eq(tt_av_map_put(key, name, strlen(name), &s), 0);
}

START_TEST(keys_are_checked_before_any_io) {
  const struct tt_model *m = ofx_model("Note");
  struct tt_error err = {0};
  struct tt_av key, n;
  /* A key attribute missing, then one too many. */
  ck_assert_int_eq(tt_av_map(&key, 0), 0);
  put_s(&key, "PK", "u#1");
  ck_assert_int_eq(tt_orm_key_check(m, &key, "key", &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err.field, "key");
  ck_assert_str_eq(err.message, "missing key attribute SK");
  put_s(&key, "SK", "n#1");
  ck_assert_int_eq(tt_orm_key_check(m, &key, "key", &err), 0);
  put_s(&key, "title", "x");
  ck_assert_int_eq(tt_orm_key_check(m, &key, "key", &err), -1);
  ck_assert_str_eq(err.field, "key");
  tt_av_free(&key);
  /* Of the wrong type. */
  ck_assert_int_eq(tt_av_map(&key, 0), 0);
  put_s(&key, "PK", "x");
  ck_assert_int_eq(tt_av_number_int(&n, 7), 0);
  ck_assert_int_eq(tt_av_map_put(&key, "SK", 2, &n), 0);
  ck_assert_int_eq(tt_orm_key_check(m, &key, NULL, &err), -1);
  ck_assert_msg(strstr(err.message, "must be of type S") != NULL, "%s", err.message);
  tt_av_free(&key);
  /* No key at all: the operation refuses it and reads nothing. */
  struct tt_orm_result r = run((struct req){.kind = TT_ORM_OP_GET, .expected = -1});
  expect_error(&r, TT_ERR_VALIDATION, "key");
  tt_orm_result_free(&r);
  /* If-Match on a model without a version. */
  r = run((struct req){.kind = TT_ORM_OP_DELETE, .model = "Plain", .key = "{'id':'a'}",
                       .expected = 1});
  expect_error(&r, TT_ERR_VALIDATION, "If-Match");
  tt_orm_result_free(&r);
}
END_TEST

START_TEST(put_creates_then_replaces_under_expected_versions) {
  struct tt_orm_result r = run((struct req){.kind = TT_ORM_OP_PUT, .key = NOTE_KEY,
                                            .body = "{'PK':'u#1','SK':'n#1','title':'a'}",
                                            .expected = -1});
  expect_ok(&r);
  ck_assert(r.created);
  ck_assert_str_eq(attr(&r, "PK"), "u#1");
  ck_assert_str_eq(attr(&r, "version"), "0");
  tt_orm_result_free(&r);
  OFX.now_ns += 5 * OFX_SEC;
  r = run((struct req){.kind = TT_ORM_OP_PUT, .key = NOTE_KEY, .body = "{'PK':'u#1','SK':'n#1','title':'b'}",
                       .expected = 0});
  expect_ok(&r);
  ck_assert(!r.created); /* replaced */
  ck_assert_str_eq(attr(&r, "title"), "b");
  ck_assert_str_eq(attr(&r, "version"), "1");
  ck_assert_str_eq(attr(&r, "updated_at"), stamp(OFX_T0 + 5 * OFX_SEC));
  tt_orm_result_free(&r);
  /* A stale expected version: VersionConflict, with both versions. */
  r = run((struct req){.kind = TT_ORM_OP_PUT, .key = NOTE_KEY, .body = "{'PK':'u#1','SK':'n#1','title':'c'}",
                       .expected = 0});
  expect_error(&r, TT_ERR_VERSION_CONFLICT, "expected_version");
  ck_assert_int_eq(json_integer_value(json_object_get(r.details, "expected_version")), 0);
  ck_assert_int_eq(json_integer_value(json_object_get(r.details, "version")), 1);
  tt_orm_result_free(&r);
  /* The body's version and If-Match must agree. */
  r = run((struct req){.kind = TT_ORM_OP_PUT, .key = NOTE_KEY,
                       .body = "{'PK':'u#1','SK':'n#1','title':'c','version':0}",
                       .expected = 1});
  expect_error(&r, TT_ERR_VALIDATION, "version");
  tt_orm_result_free(&r);
  /* A body key that differs from the path's. */
  r = run((struct req){.kind = TT_ORM_OP_PUT, .key = NOTE_KEY,
                       .body = "{'PK':'u#2','SK':'n#1','title':'c'}",
                       .expected = -1});
  expect_error(&r, TT_ERR_VALIDATION, "PK");
  tt_orm_result_free(&r);
}
END_TEST

START_TEST(if_none_match_creates_only) {
  struct tt_orm_result r = run((struct req){.kind = TT_ORM_OP_PUT, .key = NOTE_KEY,
                                            .body = "{'PK':'u#1','SK':'n#1','title':'a'}",
                                            .if_none_match = true,
                                            .expected = -1});
  expect_ok(&r);
  ck_assert(r.created);
  tt_orm_result_free(&r);
  r = run((struct req){.kind = TT_ORM_OP_PUT, .key = NOTE_KEY, .body = "{'PK':'u#1','SK':'n#1','title':'b'}",
                       .if_none_match = true, .expected = -1});
  expect_error(&r, TT_ERR_CONDITION_FAILED, "key");
  tt_orm_result_free(&r);
  r = run((struct req){.kind = TT_ORM_OP_GET, .key = NOTE_KEY, .expected = -1});
  ck_assert_str_eq(attr(&r, "title"), "a"); /* unchanged */
  tt_orm_result_free(&r);
}
END_TEST

START_TEST(update_moves_version_and_updated_at) {
  create_note();
  OFX.now_ns += 2 * OFX_SEC + 500000000;
  struct tt_orm_result r =
      run((struct req){.kind = TT_ORM_OP_UPDATE, .key = NOTE_KEY,
                       .body = "{'set':{'title':'second'},'add':{'n':2}}", .expected = -1});
  expect_ok(&r);
  ck_assert(!r.created);
  ck_assert_str_eq(attr(&r, "title"), "second");
  ck_assert_str_eq(attr(&r, "n"), "3");
  ck_assert_str_eq(attr(&r, "version"), "1");
  ck_assert_str_eq(attr(&r, "created_at"), "2023-11-14T22:13:20Z");
  ck_assert_str_eq(attr(&r, "updated_at"), "2023-11-14T22:13:22.5Z");
  tt_orm_result_free(&r);
  /* expected_version in the body, stale. */
  r = run((struct req){.kind = TT_ORM_OP_UPDATE, .key = NOTE_KEY,
                       .body = "{'set':{'title':'x'},'expected_version':0}", .expected = -1});
  expect_error(&r, TT_ERR_VERSION_CONFLICT, "expected_version");
  tt_orm_result_free(&r);
  /* The right one. */
  r = run((struct req){.kind = TT_ORM_OP_UPDATE, .key = NOTE_KEY,
                       .body = "{'set':{'title':'x'}}", .expected = 1});
  expect_ok(&r);
  ck_assert_str_eq(attr(&r, "version"), "2");
  tt_orm_result_free(&r);
  /* Lifecycle fields cannot be set. */
  r = run((struct req){.kind = TT_ORM_OP_UPDATE, .key = NOTE_KEY,
                       .body = "{'set':{'version':9}}", .expected = -1});
  expect_error(&r, TT_ERR_VALIDATION, "set.version");
  tt_orm_result_free(&r);
}
END_TEST

START_TEST(update_conditions_and_missing_items) {
  struct tt_orm_result r = run((struct req){.kind = TT_ORM_OP_UPDATE, .key = NOTE_KEY,
                                            .body = "{'set':{'title':'x'}}", .expected = -1});
  expect_error(&r, TT_ERR_ITEM_NOT_FOUND, "key");
  tt_orm_result_free(&r);
  create_note();
  r = run((struct req){.kind = TT_ORM_OP_UPDATE, .key = NOTE_KEY,
                       .body = "{'set':{'title':'x'},'condition':{'attr':'n','op':'=','value':5}}",
                       .expected = -1});
  expect_error(&r, TT_ERR_CONDITION_FAILED, "condition");
  tt_orm_result_free(&r);
  r = run((struct req){.kind = TT_ORM_OP_UPDATE, .key = NOTE_KEY,
                       .body = "{'set':{'title':'x'},'condition':{'attr':'n','op':'=','value':1}}",
                       .expected = -1});
  expect_ok(&r);
  ck_assert_str_eq(attr(&r, "title"), "x");
  tt_orm_result_free(&r);
}
END_TEST

/* A typed comparison of Note built by hand, as a caller without JSON does:
 * `path op` one N value (NULL: none). */
static struct tt_cond *cmp(const char *path, enum tt_cond_op op, const char *n) {
  struct tt_cond *c = calloc(1, sizeof(*c));
  ck_assert_ptr_nonnull(c);
  *c = (struct tt_cond){.kind = TT_COND_CMP, .path = strdup(path), .op = op};
  if (n) {
    c->values = calloc(1, sizeof(*c->values));
    c->n_values = 1;
    ck_assert_int_eq(tt_av_number_text(&c->values[0], n, strlen(n), "n", NULL), 0);
  }
  return c;
}

/* NOT c (c's node moved in). */
static struct tt_cond *not_of(struct tt_cond *c) {
  struct tt_cond *out = calloc(1, sizeof(*out));
  *out = (struct tt_cond){.kind = TT_COND_NOT, .kids = c, .n_kids = 1};
  return out;
}

/* A PATCH of NOTE_KEY setting title to `title` under typed condition c
 * (the op's from its start on). */
static struct tt_orm_result update_when(const char *title, struct tt_cond *c) {
  const struct tt_model *m = ofx_model("Note");
  struct tt_orm_item_op op;
  struct tt_orm_result res;
  struct tt_av key = ofx_key(m, NOTE_KEY);
  char text[64];
  snprintf(text, sizeof(text), "{'set':{'title':'%s'}}", title);
  json_t *body = fx_json(text);
  memset(&op, 0, sizeof(op));
  op.kind = TT_ORM_OP_UPDATE;
  op.item_key = &key;
  op.condition = c;
  ofx_run(&op.ctx, m, &res, start_item, body);
  tt_av_free(&key);
  json_decref(body);
  return res;
}

START_TEST(update_takes_a_typed_condition) {
  create_note(); /* n = 1 */
  struct tt_orm_result r = update_when("eq", cmp("n", TT_COND_EQ, "1"));
  expect_ok(&r);
  ck_assert_str_eq(attr(&r, "title"), "eq");
  tt_orm_result_free(&r);
  r = update_when("gt", cmp("n", TT_COND_GT, "5"));
  expect_error(&r, TT_ERR_CONDITION_FAILED, "condition");
  tt_orm_result_free(&r);
  r = update_when("not", not_of(cmp("n", TT_COND_GT, "5")));
  expect_ok(&r);
  ck_assert_str_eq(attr(&r, "title"), "not");
  tt_orm_result_free(&r);
  /* A malformed typed condition is refused before any I/O, naming it. */
  r = update_when("bad", cmp("a..b", TT_COND_EXISTS, NULL));
  expect_error(&r, TT_ERR_VALIDATION, "condition.op");
  tt_orm_result_free(&r);
  r = update_when("bad", cmp("n", TT_COND_BETWEEN, "1")); /* one value of two */
  expect_error(&r, TT_ERR_INTERNAL, "condition");
  tt_orm_result_free(&r);
  r = run((struct req){.kind = TT_ORM_OP_GET, .key = NOTE_KEY, .expected = -1});
  ck_assert_str_eq(attr(&r, "title"), "not"); /* the refused ones wrote nothing */
  tt_orm_result_free(&r);
}
END_TEST

START_TEST(upsert_creates_with_created_at) {
  OFX.now_ns += 7 * OFX_SEC;
  struct tt_orm_result r =
      run((struct req){.kind = TT_ORM_OP_UPDATE, .key = "{'PK':'u#9','SK':'n#9'}",
                       .body = "{'set':{'title':'new'}}", .upsert = true, .expected = -1});
  expect_ok(&r);
  ck_assert_str_eq(attr(&r, "title"), "new");
  ck_assert_str_eq(attr(&r, "created_at"), stamp(OFX_T0 + 7 * OFX_SEC));
  ck_assert_str_eq(attr(&r, "version"), "1");
  tt_orm_result_free(&r);
  /* A second upsert keeps the creation time. */
  OFX.now_ns += OFX_SEC;
  r = run((struct req){.kind = TT_ORM_OP_UPDATE, .key = "{'PK':'u#9','SK':'n#9'}",
                       .body = "{'set':{'title':'newer'}}", .upsert = true, .expected = -1});
  expect_ok(&r);
  ck_assert_str_eq(attr(&r, "created_at"), stamp(OFX_T0 + 7 * OFX_SEC));
  ck_assert_str_eq(attr(&r, "updated_at"), stamp(OFX_T0 + 8 * OFX_SEC));
  ck_assert_str_eq(attr(&r, "version"), "2");
  tt_orm_result_free(&r);
}
END_TEST

START_TEST(delete_answers_nothing_and_checks_versions) {
  struct tt_orm_result r = run((struct req){.kind = TT_ORM_OP_DELETE, .key = NOTE_KEY,
                                            .expected = -1});
  expect_error(&r, TT_ERR_ITEM_NOT_FOUND, "key");
  tt_orm_result_free(&r);
  create_note();
  r = run((struct req){.kind = TT_ORM_OP_DELETE, .key = NOTE_KEY, .expected = 4});
  expect_error(&r, TT_ERR_VERSION_CONFLICT, "expected_version");
  tt_orm_result_free(&r);
  r = run((struct req){.kind = TT_ORM_OP_DELETE, .key = NOTE_KEY, .expected = 0});
  expect_ok(&r);
  ck_assert_int_eq(r.answer, TT_ORM_ANSWER_NONE);
  ck_assert_int_ne(r.item.type, TT_AV_M);
  tt_orm_result_free(&r);
  r = run((struct req){.kind = TT_ORM_OP_GET, .key = NOTE_KEY, .expected = -1});
  expect_error(&r, TT_ERR_ITEM_NOT_FOUND, "key");
  tt_orm_result_free(&r);
}
END_TEST

START_TEST(models_without_versions) {
  struct tt_orm_result r = run((struct req){.kind = TT_ORM_OP_PUT, .model = "Plain",
                                            .key = "{'id':'a'}", .body = "{'id':'a','v':'x'}",
                                            .expected = -1});
  expect_ok(&r);
  ck_assert(r.created);
  ck_assert_ptr_null(tt_orm_item_version(r.model, &r.item));
  tt_orm_result_free(&r);
  r = run((struct req){.kind = TT_ORM_OP_PUT, .model = "Plain", .key = "{'id':'a'}",
                       .body = "{'id':'a','v':'y'}", .expected = -1});
  expect_ok(&r);
  ck_assert(!r.created);
  ck_assert_str_eq(attr(&r, "v"), "y");
  tt_orm_result_free(&r);
}
END_TEST

int main(void) {
  const TTest *const tests[] = {
      create_answers_the_typed_item_with_lifecycle_fields,
      create_refuses_a_version_and_lifecycle_fields,
      get_reads_the_item_or_says_not_found,
      keys_are_checked_before_any_io,
      put_creates_then_replaces_under_expected_versions,
      if_none_match_creates_only,
      update_moves_version_and_updated_at,
      update_conditions_and_missing_items,
      update_takes_a_typed_condition,
      upsert_creates_with_created_at,
      delete_answers_nothing_and_checks_versions,
      models_without_versions};
  return ofx_main("orm_items", setup, ofx_teardown, tests, sizeof(tests) / sizeof(tests[0]));
}
