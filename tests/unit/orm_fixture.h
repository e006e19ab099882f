/* SPDX-License-Identifier: Apache-2.0 */
/* orm_fixture.h -- fixture of the ORM's check suites: a real loop, the
 * memory backend in process, a client and an ORM on an injected clock, the
 * tables of a DMS document's models, and operations run to their end
 * without a daemon. */
#ifndef TT_TEST_ORM_FIXTURE_H
#define TT_TEST_ORM_FIXTURE_H

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "backend/memory/memdb.h"
#include "client/client.h"
#include "model/registry.h"
#include "orm/key.h"
#include "orm/orm.h"
#include "orm/tokens.h"
#include "test_memdb.h"

#define OFX_SEC INT64_C(1000000000)
#define OFX_T0 (INT64_C(1700000000) * OFX_SEC) /* 2023-11-14T22:13:20Z */

struct ofx {
  uv_loop_t loop;
  struct tt_backend *b;
  struct tt_client client;
  struct tt_model_registry *models;
  struct tt_orm orm;
  int64_t now_ns; /* the ORM's and the backend's clock */
  /* When set: runs once at the end of the next ofx_run, before the
   * operation's arena is freed (answers kept in it). */
  void (*inspect)(struct tt_orm_ctx *ctx);
};

static struct ofx OFX;

static int64_t ofx_orm_clock(void *arg) { return ((struct ofx *)arg)->now_ns; }
static int64_t ofx_memdb_clock(void *arg) { return ((struct ofx *)arg)->now_ns / OFX_SEC; }
static void ofx_op_done(struct tt_orm_ctx *ctx) { (*(int *)ctx->arg)++; }
static void ofx_join_done(struct tt_join *j, void *arg) {
  (void)j;
  (void)arg;
}

static inline const struct tt_model *ofx_model(const char *name) {
  const struct tt_model *m = tt_model_registry_get(OFX.models, name);
  ck_assert_msg(m != NULL, "fixture model %s", name);
  return m;
}

/* Runs one operation started by start(ctx, arg) on `ctx` (the first member
 * of an op) to its end, checking the completion contract: done never runs
 * inside the start, and exactly once unless the start returned -1. The
 * result is the caller's to free. */
static inline void ofx_run(struct tt_orm_ctx *ctx, const struct tt_model *m,
                           struct tt_orm_result *res, int (*start)(struct tt_orm_ctx *, void *),
                           void *arg) {
  struct tt_arena arena;
  struct tt_join join;
  int done = 0;
  tt_arena_init(&arena);
  tt_join_init(&join, NULL, ofx_join_done, NULL);
  memset(res, 0, sizeof(*res));
  tt_orm_ctx_init(ctx, &OFX.orm, &join, &arena, "test", m, res, ofx_op_done, &done);
  if (start(ctx, arg) != 0) {
    ck_assert_int_eq(done, 0);
    done = 1; /* finished inside its start: done never runs */
  } else {
    ck_assert_int_eq(done, 0); /* never inside the start */
  }
  tt_join_release(&join);
  uv_run(&OFX.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(done, 1);
  ck_assert_int_eq(tt_join_pending(&join), 0);
  if (OFX.inspect)
    OFX.inspect(ctx);
  OFX.inspect = NULL;
  tt_arena_free(&arena);
}

static int ofx_start_table(struct tt_orm_ctx *ctx, void *arg) {
  (void)arg;
  return tt_orm_table_ensure(ctx);
}

/* Loads `dms` and creates the table of each of the NULL-terminated models. */
static inline void ofx_setup(const char *dms, const char *const *tables) {
  memset(&OFX, 0, sizeof(OFX));
  ck_assert_int_eq(uv_loop_init(&OFX.loop), 0);
  struct tt_memdb_options o;
  memset(&o, 0, sizeof(o));
  o.clock = ofx_memdb_clock;
  o.clock_arg = &OFX;
  ck_assert_int_eq(tt_memdb_new(&OFX.loop, &o, &OFX.b), 0);
  tt_client_init(&OFX.client, OFX.b, &OFX.loop, NULL);
  OFX.models = tt_model_registry_new();
  struct tt_error err = {0};
  ck_assert_msg(tt_model_registry_load_text(OFX.models, dms, strlen(dms), "t.json", &err) == 0,
                "%s", err.message);
  OFX.now_ns = OFX_T0;
  OFX.orm.models = OFX.models;
  OFX.orm.client = &OFX.client;
  OFX.orm.now_ns = ofx_orm_clock;
  OFX.orm.clock_arg = &OFX;
  for (size_t i = 0; tables[i] != NULL; i++) {
    struct tt_orm_ctx ctx;
    struct tt_orm_result res;
    ofx_run(&ctx, ofx_model(tables[i]), &res, ofx_start_table, NULL);
    ck_assert_msg(res.status == 0, "table of %s: %s", tables[i], res.err.message);
    tt_orm_result_free(&res);
  }
}

static inline void ofx_teardown(void) {
  fx_close_backend(&OFX.loop, OFX.b);
  tt_orm_cleanup(&OFX.orm);
  tt_model_registry_free(OFX.models);
}

/* The typed key of model `m` from JSON written with ' for " ("{'id':'a'}"). */
static inline struct tt_av ofx_key(const struct tt_model *m, const char *json) {
  json_t *j = fx_json(json);
  struct tt_av key;
  struct tt_error err = {0};
  ck_assert_msg(tt_orm_key_from_json(m, j, NULL, &key, &err) == 0, "%s", err.message);
  json_decref(j);
  return key;
}

/* A typed select of a JSON list of strings written with ' for " ("['a']");
 * its paths live until the next call. */
static inline struct tt_select ofx_select(const char *json) {
  static json_t *kept;
  static const char *paths[16];
  json_decref(kept);
  kept = fx_json(json);
  size_t n = json_array_size(kept);
  ck_assert_uint_le(n, 16);
  for (size_t i = 0; i < n; i++)
    ck_assert_ptr_nonnull(paths[i] = json_string_value(json_array_get(kept, i)));
  return (struct tt_select){.paths = paths, .n = n};
}

/* Checks that r failed with code, field and (unless NULL) a message
 * holding `says`, and frees it. */
static inline void ofx_expect_error(struct tt_orm_result r, enum tt_err_code code,
                                    const char *field, const char *says) {
  ck_assert_msg(r.status == -1, "succeeded");
  ck_assert_msg(r.err.code == code, "%s: %s", tt_error_code_name(r.err.code), r.err.message);
  ck_assert_str_eq(r.err.field, field);
  ck_assert_msg(says == NULL || strstr(r.err.message, says), "%s", r.err.message);
  tt_orm_result_free(&r);
}

/* The main of a suite: runs `tests` (n of them), each between `setup` and
 * `teardown` (which calls ofx_teardown). Returns the exit status. */
static inline int ofx_main(const char *name, void (*setup)(void), void (*teardown)(void),
                           const TTest *const *tests, size_t n) {
  Suite *s = suite_create(name);
  TCase *tc = tcase_create(name);
  suite_add_tcase(s, tc);
  tcase_add_checked_fixture(tc, setup, teardown);
  for (size_t i = 0; i < n; i++)
    tcase_add_test(tc, tests[i]);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
