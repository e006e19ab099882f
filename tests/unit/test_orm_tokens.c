/* SPDX-License-Identifier: Apache-2.0 */
/* test_orm_tokens.c -- the client-token memo of transactions: identical
 * retries keep their time, the 10-minute window on an injected clock, the
 * bound, and whole transactions retried on the memory backend. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "backend/memory/memdb.h"
#include "model/registry.h"
#include "orm/tokens.h"
#include "api/item_io.h"
#include "orm/txn.h"
#include "test_memdb.h"

#define SEC INT64_C(1000000000)
#define T0 (INT64_C(1700000000) * SEC)

static uint64_t hash_of(const char *text) {
  json_t *j = json_loads(text, 0, NULL);
  ck_assert_ptr_nonnull(j);
  uint64_t h = 0;
  ck_assert_int_eq(tt_orm_tokens_hash(j, &h), 0);
  json_decref(j);
  return h;
}

START_TEST(identical_retry_keeps_its_time) {
  struct tt_orm orm;
  memset(&orm, 0, sizeof(orm));
  struct tt_error err;
  uint32_t ra = 0;
  uint64_t a = hash_of("{\"items\":[1],\"client_token\":\"t\"}");
  uint64_t same = hash_of("{\"client_token\":\"t\",\"items\":[1]}"); /* member order */
  uint64_t other = hash_of("{\"items\":[2],\"client_token\":\"t\"}");
  ck_assert(a == same);
  ck_assert(a != other);
  ck_assert_int_eq(tt_orm_tokens_time(&orm, "t", a, T0), T0); /* unknown: now */
  ck_assert_int_eq(tt_orm_tokens_remember(&orm, "t", a, T0, T0, &ra, &err), 0);
  ck_assert_uint_eq(tt_orm_tokens_count(&orm), 1);
  /* The retry 5 minutes later builds the request with the first time. */
  ck_assert_int_eq(tt_orm_tokens_time(&orm, "t", a, T0 + 300 * SEC), T0);
  /* Another body with the token gets the current time; the backend then
   * refuses the mismatch. Remembering it changes nothing. */
  ck_assert_int_eq(tt_orm_tokens_time(&orm, "t", other, T0 + 300 * SEC), T0 + 300 * SEC);
  ck_assert_int_eq(tt_orm_tokens_remember(&orm, "t", other, T0 + 300 * SEC, T0 + 300 * SEC, &ra,
                                          &err),
                   0);
  ck_assert_int_eq(tt_orm_tokens_time(&orm, "t", a, T0 + 301 * SEC), T0);
  ck_assert_uint_eq(tt_orm_tokens_count(&orm), 1);
  tt_orm_cleanup(&orm);
  ck_assert_uint_eq(tt_orm_tokens_count(&orm), 0);
}
END_TEST

START_TEST(forgotten_after_ten_minutes) {
  struct tt_orm orm;
  memset(&orm, 0, sizeof(orm));
  struct tt_error err;
  uint32_t ra = 0;
  ck_assert_int_eq(tt_orm_tokens_remember(&orm, "old", 1, T0, T0, &ra, &err), 0);
  ck_assert_int_eq(tt_orm_tokens_remember(&orm, "new", 1, T0 + 60 * SEC, T0 + 60 * SEC, &ra, &err),
                   0);
  int64_t edge = T0 + TT_ORM_TOKENS_WINDOW_NS;
  ck_assert_int_eq(tt_orm_tokens_time(&orm, "old", 1, edge - 1), T0); /* still inside */
  ck_assert_int_eq(tt_orm_tokens_time(&orm, "old", 1, edge), edge);   /* forgotten */
  ck_assert_uint_eq(tt_orm_tokens_count(&orm), 1);
  ck_assert_int_eq(tt_orm_tokens_time(&orm, "new", 1, edge), T0 + 60 * SEC);
  /* The forgotten token is new again: a new first use. */
  ck_assert_int_eq(tt_orm_tokens_remember(&orm, "old", 2, edge, edge, &ra, &err), 0);
  ck_assert_int_eq(tt_orm_tokens_time(&orm, "old", 2, edge + SEC), edge);
  tt_orm_cleanup(&orm);
}
END_TEST

START_TEST(bound_refuses_new_tokens_never_forgets_young_ones) {
  struct tt_orm orm;
  memset(&orm, 0, sizeof(orm));
  orm.token_limit = 3;
  struct tt_error err;
  uint32_t ra = 0;
  const char *toks[] = {"a", "b", "c"};
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(
        tt_orm_tokens_remember(&orm, toks[i], 7, T0 + i * 100 * SEC, T0 + i * 100 * SEC, &ra, &err),
        0);
  int64_t now = T0 + 250 * SEC;
  ck_assert_int_eq(tt_orm_tokens_remember(&orm, "d", 7, now, now, &ra, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_THROTTLED);
  ck_assert(tt_error_code_retryable(err.code));
  ck_assert_str_eq(err.field, "client_token");
  ck_assert_uint_eq(ra, 350); /* "a" expires at T0 + 600 s */
  /* Every young token still answers its retry, also at the bound. */
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(tt_orm_tokens_time(&orm, toks[i], 7, now), T0 + i * 100 * SEC);
    ck_assert_int_eq(tt_orm_tokens_remember(&orm, toks[i], 7, now, now, &ra, &err), 0);
  }
  /* Once "a" is 10 minutes old there is room again. */
  now = T0 + 600 * SEC;
  ck_assert_int_eq(tt_orm_tokens_remember(&orm, "d", 7, now, now, &ra, &err), 0);
  ck_assert_int_eq(tt_orm_tokens_time(&orm, "b", 7, now), T0 + 100 * SEC);
  ck_assert_uint_eq(tt_orm_tokens_count(&orm), 3);
  tt_orm_cleanup(&orm);
}
END_TEST

START_TEST(many_tokens_keep_every_retry) {
  /* The old memo was a 256-slot ring: a retry after 256 other tokens lost
   * its time. Now every token younger than the window keeps it. */
  struct tt_orm orm;
  memset(&orm, 0, sizeof(orm));
  struct tt_error err;
  uint32_t ra = 0;
  char tok[40];
  for (int i = 0; i < 5000; i++) {
    snprintf(tok, sizeof(tok), "tok-%d", i);
    ck_assert_int_eq(tt_orm_tokens_remember(&orm, tok, (uint64_t)i, T0 + i, T0 + i, &ra, &err),
                     0);
  }
  for (int i = 0; i < 5000; i++) {
    snprintf(tok, sizeof(tok), "tok-%d", i);
    ck_assert_int_eq(tt_orm_tokens_time(&orm, tok, (uint64_t)i, T0 + 5000), T0 + i);
  }
  /* All of them expire together with the window. */
  ck_assert_int_eq(tt_orm_tokens_time(&orm, "x", 0, T0 + 5000 + TT_ORM_TOKENS_WINDOW_NS),
                   T0 + 5000 + TT_ORM_TOKENS_WINDOW_NS);
  ck_assert_uint_eq(tt_orm_tokens_count(&orm), 0);
  tt_orm_cleanup(&orm);
}
END_TEST

/* ---- whole transactions on the memory backend ----------------------------- */

static const char wallet_dms[] =
    "{\"dms_version\":\"0.2\",\"models\":[{\"name\":\"Wallet\",\"table\":{\"name\":\"wallets\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},\"attributes\":["
    "{\"attribute\":\"id\",\"type\":\"S\",\"required\":true,\"roles\":[\"pk\"]},"
    "{\"attribute\":\"n\",\"type\":\"N\",\"optional\":true},"
    "{\"attribute\":\"updated_at\",\"type\":\"S\",\"format\":\"rfc3339nano\","
    "\"roles\":[\"updated_at\"]},"
    "{\"attribute\":\"version\",\"type\":\"N\",\"format\":\"int\",\"roles\":[\"version\"]}]}]}";

struct tfx {
  uv_loop_t loop;
  struct tt_backend *b;
  struct tt_client client;
  struct tt_model_registry *models;
  struct tt_orm orm;
  int64_t now_ns;
};

static struct tfx F;

static int64_t orm_clock(void *arg) { return ((struct tfx *)arg)->now_ns; }
static int64_t memdb_clock(void *arg) { return ((struct tfx *)arg)->now_ns / SEC; }
static void op_done(struct tt_orm_ctx *ctx) { *(int *)ctx->arg = 1; }
static void join_done(struct tt_join *j, void *arg) {
  (void)j;
  (void)arg;
}

static int start_txn(struct tt_orm_ctx *ctx, void *arg);

/* Runs one ORM operation started by `start` on `ctx` to its end; a
 * transaction answers as its route does. */
static void run_ctx(struct tt_orm_ctx *ctx, const struct tt_model *m, struct tt_orm_result *res,
                    int (*start)(struct tt_orm_ctx *, void *), void *arg) {
  struct tt_arena arena;
  tt_arena_init(&arena);
  struct tt_join join;
  tt_join_init(&join, NULL, join_done, NULL);
  int done = 0;
  memset(res, 0, sizeof(*res));
  tt_orm_ctx_init(ctx, &F.orm, &join, &arena, "test", m, res, op_done, &done);
  if (start(ctx, arg) != 0)
    done = 1; /* finished inside its start: done never runs */
  else
    ck_assert_int_eq(done, 0); /* never inside the start */
  tt_join_release(&join);
  uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(done, 1);
  if (start == start_txn) {
    struct tt_buf b;
    tt_buf_init(&b, 0);
    tt_api_txn_answer((struct tt_orm_txn_op *)ctx, res, &b);
    tt_buf_free(&b);
  }
  tt_arena_free(&arena);
}

static int start_table(struct tt_orm_ctx *ctx, void *arg) {
  (void)arg;
  return tt_orm_table_ensure(ctx);
}

static int start_txn(struct tt_orm_ctx *ctx, void *arg) {
  struct tt_orm_txn_op *op = (struct tt_orm_txn_op *)ctx;
  op->get = false;
  return tt_api_txn_start(op, arg);
}

static void tsetup(void) {
  memset(&F, 0, sizeof(F));
  ck_assert_int_eq(uv_loop_init(&F.loop), 0);
  struct tt_memdb_options o;
  memset(&o, 0, sizeof(o));
  o.clock = memdb_clock;
  o.clock_arg = &F;
  ck_assert_int_eq(tt_memdb_new(&F.loop, &o, &F.b), 0);
  tt_client_init(&F.client, F.b, &F.loop, NULL);
  F.models = tt_model_registry_new();
  struct tt_error err;
  ck_assert_int_eq(
      tt_model_registry_load_text(F.models, wallet_dms, sizeof(wallet_dms) - 1, "w.json", &err),
      0);
  F.now_ns = T0;
  F.orm.models = F.models;
  F.orm.client = &F.client;
  F.orm.now_ns = orm_clock;
  F.orm.clock_arg = &F;
  struct tt_orm_ctx ctx;
  struct tt_orm_result res;
  run_ctx(&ctx, tt_model_registry_get(F.models, "Wallet"), &res, start_table, NULL);
  ck_assert_int_eq(res.status, 0);
  tt_orm_result_free(&res);
  /* The wallet, with n = 0 (no token). */
  json_t *body = json_pack("{s:[{s:s, s:s, s:{s:s, s:i}}]}", "items", "op", "create", "model",
                           "Wallet", "item", "id", "w", "n", 0);
  struct tt_orm_txn_op op;
  memset(&op, 0, sizeof(op));
  run_ctx(&op.ctx, NULL, &res, start_txn, body);
  json_decref(body);
  ck_assert_msg(res.status == 0, "%s", res.err.message);
  tt_orm_result_free(&res);
}

static void tteardown(void) {
  fx_close_backend(&F.loop, F.b);
  tt_orm_cleanup(&F.orm);
  tt_model_registry_free(F.models);
}

/* POST /v1/transactions/write adding `n` to wallet "w" under `token`. */
static struct tt_orm_result add(const char *token, int n) {
  json_t *body = json_pack("{s:s, s:[{s:s, s:s, s:{s:s}, s:{s:i}}]}", "client_token", token,
                           "items", "op", "update", "model", "Wallet", "key", "id", "w", "add",
                           "n", n);
  struct tt_orm_txn_op op;
  memset(&op, 0, sizeof(op));
  struct tt_orm_result res;
  run_ctx(&op.ctx, NULL, &res, start_txn, body);
  json_decref(body);
  return res;
}

/* The stored n of wallet "w", read through the backend port. */
static long long wallet_n(void) {
  json_t *req = json_pack("{s:s, s:{s:{s:s}}, s:b}", "TableName", "wallets", "Key", "id", "S", "w",
                          "ConsistentRead", 1);
  struct tt_backend_call c;
  fx_call(&F.loop, F.b, TT_DDB_GET_ITEM, req, &c);
  ck_assert_int_eq(c.status, 0);
  const char *n = json_string_value(
      json_object_get(json_object_get(json_object_get(c.response, "Item"), "n"), "N"));
  ck_assert_ptr_nonnull(n);
  long long v = strtoll(n, NULL, 10);
  json_decref(c.response);
  json_decref(req);
  return v;
}

START_TEST(txn_retry_after_many_tokens_applies_once) {
  struct tt_orm_result r = add("first", 5);
  ck_assert_msg(r.status == 0, "%s: %s", tt_error_code_name(r.err.code), r.err.message);
  tt_orm_result_free(&r);
  /* 300 other transactions with their own tokens: more than the old ring. */
  char tok[40];
  for (int i = 0; i < 300; i++) {
    F.now_ns += SEC / 100;
    snprintf(tok, sizeof(tok), "other-%d", i);
    r = add(tok, 1);
    ck_assert_int_eq(r.status, 0);
    tt_orm_result_free(&r);
  }
  ck_assert_uint_eq(tt_orm_tokens_count(&F.orm), 301);
  ck_assert_int_eq(wallet_n(), 305);
  /* The client's retry of the first one, 9 minutes later: accepted,
   * not applied again. */
  F.now_ns = T0 + 540 * SEC;
  r = add("first", 5);
  ck_assert_msg(r.status == 0, "retry refused: %s", r.err.message);
  tt_orm_result_free(&r);
  ck_assert_int_eq(wallet_n(), 305); /* applied once */
  /* Same token, another request: the backend's mismatch. */
  r = add("first", 6);
  ck_assert_int_eq(r.status, -1);
  ck_assert_int_eq(r.err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(r.err.field, "client_token");
  tt_orm_result_free(&r);
  /* After the window the token is forgotten on both sides: a new request. */
  F.now_ns = T0 + 700 * SEC;
  r = add("first", 6);
  ck_assert_msg(r.status == 0, "after the window: %s", r.err.message);
  tt_orm_result_free(&r);
  ck_assert_int_eq(wallet_n(), 311);
}
END_TEST

START_TEST(txn_at_the_bound_is_throttled) {
  F.orm.token_limit = 2;
  struct tt_orm_result r = add("a", 1);
  ck_assert_int_eq(r.status, 0);
  tt_orm_result_free(&r);
  F.now_ns += 10 * SEC;
  r = add("b", 1);
  ck_assert_int_eq(r.status, 0);
  tt_orm_result_free(&r);
  r = add("c", 1);
  ck_assert_int_eq(r.status, -1);
  ck_assert_int_eq(r.err.code, TT_ERR_THROTTLED);
  ck_assert_uint_eq(r.retry_after_s, 590);
  tt_orm_result_free(&r);
  r = add("a", 1); /* a known token's retry still goes through */
  ck_assert_int_eq(r.status, 0);
  tt_orm_result_free(&r);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("orm_tokens");
  TCase *tc = tcase_create("memo");
  tcase_add_test(tc, identical_retry_keeps_its_time);
  tcase_add_test(tc, forgotten_after_ten_minutes);
  tcase_add_test(tc, bound_refuses_new_tokens_never_forgets_young_ones);
  tcase_add_test(tc, many_tokens_keep_every_retry);
  suite_add_tcase(s, tc);
  tc = tcase_create("txn");
  tcase_add_checked_fixture(tc, tsetup, tteardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, txn_retry_after_many_tokens_applies_once);
  tcase_add_test(tc, txn_at_the_bound_is_throttled);
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
