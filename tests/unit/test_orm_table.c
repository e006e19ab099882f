/* SPDX-License-Identifier: Apache-2.0 */
/* test_orm_table.c -- a model's table as a typed library, on the memory
 * backend in process: an ensure that creates the table (its indexes, TTL
 * turned on, what it changed), one that finds it ready, a describe, a
 * delete (refused unless allowed, then the table gone), and the
 * description's JSON. */
#include <check.h>
#include <string.h>

#include "orm_fixture.h"
#include "value/json_exact.h"

static const char dms[] =
    "{\"dms_version\":\"0.2\",\"models\":["
    "{\"name\":\"Order\",\"table\":{\"name\":\"orders\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},"
    "\"attributes\":["
    "{\"attribute\":\"id\",\"type\":\"S\",\"required\":true,\"roles\":[\"pk\"]},"
    "{\"attribute\":\"status\",\"type\":\"S\",\"optional\":true},"
    "{\"attribute\":\"ttl\",\"type\":\"N\",\"format\":\"unix_seconds\",\"optional\":true,"
    "\"roles\":[\"ttl\"]}],"
    "\"indexes\":[{\"name\":\"by-status\",\"type\":\"GSI\","
    "\"partition\":{\"attribute\":\"status\",\"type\":\"S\"}}]}]}";

static void setup(void) {
  static const char *const none[] = {NULL};
  ofx_setup(dms, none);
}

static void teardown(void) { ofx_teardown(); }

/* A table answer's JSON, taken while the operation's arena holds it. */
static char answer[1024];

static void keep_answer(struct tt_orm_ctx *ctx) {
  if (ctx->result->status != 0 || ctx->result->answer != TT_ORM_ANSWER_TABLE)
    return;
  struct tt_buf b;
  tt_buf_init(&b, 0);
  json_t *j = tt_orm_table_to_json(&ctx->result->table);
  ck_assert_ptr_nonnull(j);
  ck_assert_int_eq(tt_json_dump(j, 0, &b), 0);
  ck_assert_uint_lt(b.len, sizeof(answer));
  memcpy(answer, b.data, b.len);
  answer[b.len] = '\0';
  json_decref(j);
  tt_buf_free(&b);
}

static int start_ensure(struct tt_orm_ctx *ctx, void *arg) {
  (void)arg;
  return tt_orm_table_ensure(ctx);
}

static int start_describe(struct tt_orm_ctx *ctx, void *arg) {
  (void)arg;
  return tt_orm_table_describe(ctx);
}

static int start_delete(struct tt_orm_ctx *ctx, void *arg) {
  (void)arg;
  return tt_orm_table_delete(ctx);
}

/* Runs start on Order's table; the JSON of a table answer lands in `answer`. */
static struct tt_orm_result run(int (*start)(struct tt_orm_ctx *, void *)) {
  struct tt_orm_ctx ctx;
  struct tt_orm_result res;
  answer[0] = '\0';
  OFX.inspect = start == start_delete ? NULL : keep_answer;
  ofx_run(&ctx, ofx_model("Order"), &res, start, NULL);
  OFX.inspect = NULL;
  return res;
}

START_TEST(ensure_creates_then_finds_ready) {
  struct tt_orm_result r = run(start_ensure);
  ck_assert_msg(r.status == 0, "%s", r.err.message);
  ck_assert_int_eq(r.answer, TT_ORM_ANSWER_TABLE);
  ck_assert(r.table.ensured && r.table.created && r.table.ttl_enabled);
  ck_assert_uint_eq(r.table.n_gsis_created, 0); /* created with the table */
  ck_assert_str_eq(answer, "{\"table\":\"orders\",\"status\":\"ACTIVE\",\"item_count\":0,"
                           "\"indexes\":[{\"name\":\"by-status\",\"kind\":\"GSI\","
                           "\"status\":\"ACTIVE\"}],\"changes\":[\"table_created\","
                           "\"ttl_enabled\"],\"ttl_attribute\":\"ttl\"}");
  tt_orm_result_free(&r);

  /* Again: the table is there with TTL on; nothing changes. */
  r = run(start_ensure);
  ck_assert_msg(r.status == 0, "%s", r.err.message);
  ck_assert(r.table.ensured && !r.table.created && !r.table.ttl_enabled);
  ck_assert_str_eq(answer, "{\"table\":\"orders\",\"status\":\"ACTIVE\",\"item_count\":0,"
                           "\"indexes\":[{\"name\":\"by-status\",\"kind\":\"GSI\","
                           "\"status\":\"ACTIVE\"}],\"changes\":[],\"ttl_attribute\":\"ttl\"}");
  tt_orm_result_free(&r);
}
END_TEST

START_TEST(describe_has_no_changes) {
  struct tt_orm_result r = run(start_describe);
  ofx_expect_error(r, TT_ERR_TABLE_NOT_FOUND, "", "Order");
  r = run(start_ensure);
  tt_orm_result_free(&r);
  r = run(start_describe);
  ck_assert_msg(r.status == 0, "%s", r.err.message);
  ck_assert_int_eq(r.answer, TT_ORM_ANSWER_TABLE);
  ck_assert(!r.table.ensured && !r.table.created);
  ck_assert_str_eq(answer, "{\"table\":\"orders\",\"status\":\"ACTIVE\",\"item_count\":0,"
                           "\"indexes\":[{\"name\":\"by-status\",\"kind\":\"GSI\","
                           "\"status\":\"ACTIVE\"}]}");
  tt_orm_result_free(&r);
}
END_TEST

START_TEST(delete_needs_leave_then_the_table_is_gone) {
  struct tt_orm_result r = run(start_ensure);
  tt_orm_result_free(&r);
  r = run(start_delete);
  ofx_expect_error(r, TT_ERR_FORBIDDEN, "", "--allow-table-delete");
  OFX.orm.allow_table_delete = true;
  r = run(start_delete);
  ck_assert_msg(r.status == 0, "%s", r.err.message);
  ck_assert_int_eq(r.answer, TT_ORM_ANSWER_NONE);
  tt_orm_result_free(&r);
  r = run(start_describe);
  ofx_expect_error(r, TT_ERR_TABLE_NOT_FOUND, "", NULL);
}
END_TEST

int main(void) {
  const TTest *const tests[] = {ensure_creates_then_finds_ready, describe_has_no_changes,
                                       delete_needs_leave_then_the_table_is_gone};
  return ofx_main("orm_table", setup, teardown, tests, sizeof(tests) / sizeof(tests[0]));
}
