/* SPDX-License-Identifier: Apache-2.0 */
/* test_orm_query.c -- Query and Scan as a typed library, on the memory
 * backend in process: typed pages, limits, orders and counts, cursors that
 * page through every item exactly once (also across parallel scan
 * segments and when the byte budget ends a page early), and cursors that
 * do not fit the request. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/item_io.h"
#include "orm/cond.h"
#include "orm/items.h"
#include "orm/query.h"
#include "orm_fixture.h"

static const char dms[] =
    "{\"dms_version\":\"0.2\",\"models\":["
    "{\"name\":\"Msg\",\"table\":{\"name\":\"msgs\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"room\",\"type\":\"S\"},"
    "\"sort\":{\"attribute\":\"seq\",\"type\":\"N\"}},\"attributes\":["
    "{\"attribute\":\"room\",\"type\":\"S\",\"required\":true,\"roles\":[\"pk\"]},"
    "{\"attribute\":\"seq\",\"type\":\"N\",\"required\":true,\"roles\":[\"sk\"]},"
    "{\"attribute\":\"text\",\"type\":\"S\",\"optional\":true}]}]}";

#define N_MSGS 12


static int start_item(struct tt_orm_ctx *ctx, void *arg) {
  return tt_api_item_start((struct tt_orm_item_op *)ctx, arg);
}

/* Rooms "a" (N_MSGS messages, seq 1..N_MSGS) and "b" (3 messages). */
static void setup(void) {
  static const char *const tables[] = {"Msg", NULL};
  ofx_setup(dms, tables);
  for (int i = 0; i < N_MSGS + 3; i++) {
    char text[128];
    snprintf(text, sizeof(text), "{'room':'%s','seq':%d,'text':'message %d'}",
             i < N_MSGS ? "a" : "b", i < N_MSGS ? i + 1 : i - N_MSGS + 1, i);
    json_t *body = fx_json(text);
    struct tt_orm_item_op op;
    struct tt_orm_result res;
    memset(&op, 0, sizeof(op));
    op.kind = TT_ORM_OP_CREATE;
    ofx_run(&op.ctx, ofx_model("Msg"), &res, start_item, body);
    ck_assert_msg(res.status == 0, "%s", res.err.message);
    tt_orm_result_free(&res);
    json_decref(body);
  }
}

static int start_query(struct tt_orm_ctx *ctx, void *arg) {
  (void)arg;
  return tt_orm_query_start((struct tt_orm_query_op *)ctx);
}

/* Runs a query (or a scan) of the typed request `rq` and, when `cursor` is
 * not NULL, that cursor, its items going to `sink` (NULL: kept in the
 * page). The result is the caller's. */
static struct tt_orm_result run_sink(bool scan, struct tt_orm_query_request rq, const char *cursor,
                                     const struct tt_orm_page_sink *sink) {
  struct tt_orm_query_op op;
  struct tt_orm_result res;
  memset(&op, 0, sizeof(op));
  op.scan = scan;
  op.rq = rq;
  op.rq.cursor = cursor;
  op.rq.cursor_len = cursor ? strlen(cursor) : 0;
  op.sink = sink;
  ofx_run(&op.ctx, ofx_model("Msg"), &res, start_query, NULL);
  return res;
}

static struct tt_orm_result run(bool scan, struct tt_orm_query_request rq, const char *cursor) {
  struct tt_orm_result r = run_sink(scan, rq, cursor, NULL);
  if (r.status == 0 && !r.page.count_only)
    ck_assert_uint_eq(r.page.count, r.page.n_items); /* the page holds them all */
  return r;
}

static void expect_page(const struct tt_orm_result *r) {
  ck_assert_msg(r->status == 0, "%s: %s (%s)", tt_error_code_name(r->err.code), r->err.message,
                r->err.field);
  ck_assert_int_eq(r->answer, TT_ORM_ANSWER_PAGE);
}

/* "room/seq" of item i of a page. */
static const char *id_of(const struct tt_orm_result *r, size_t i, char *out, size_t cap) {
  const struct tt_av *room = tt_av_map_get(&r->page.items[i], "room");
  const struct tt_av *seq = tt_av_map_get(&r->page.items[i], "seq");
  ck_assert_ptr_nonnull(room);
  ck_assert_ptr_nonnull(seq);
  snprintf(out, cap, "%s/%s", room->u.bytes, seq->u.bytes);
  return out;
}

#define RQ(...) ((struct tt_orm_query_request){__VA_ARGS__})
/* Typed key conditions and filters of Msg (the op frees them), from JSON
 * with ' for ". */
static struct tt_key_cond key_of(const char *text) {
  json_t *j = fx_json(text);
  struct tt_key_cond k;
  struct tt_error err;
  ck_assert_msg(tt_orm_key_cond_shape(j, &k, &err) == 0 &&
                    tt_orm_key_cond_type(ofx_model("Msg"), j, &k, &err) == 0,
                "%s", err.message);
  json_decref(j);
  return k;
}

static struct tt_cond *cond_of(const char *text) {
  json_t *j = fx_json(text);
  struct tt_cond *c;
  struct tt_error err;
  ck_assert_msg(tt_orm_cond_from_json(ofx_model("Msg"), j, "filter", &c, &err) == 0, "%s",
                err.message);
  json_decref(j);
  return c;
}

#define ROOM_A .key = key_of("[{'attr':'room','op':'=','value':'a'}]")

static void teardown(void) { ofx_teardown(); }

START_TEST(query_pages_with_limits_and_cursors) {
  char *cursor = NULL;
  int want = 1, pages = 0;
  do {
    struct tt_orm_result r = run(false, RQ(ROOM_A, .has_limit = true, .limit = 5), cursor);
    expect_page(&r);
    free(cursor);
    cursor = r.page.cursor ? strdup(r.page.cursor) : NULL;
    for (size_t i = 0; i < r.page.n_items; i++) {
      char id[32], wanted[32];
      snprintf(wanted, sizeof(wanted), "a/%d", want++);
      ck_assert_str_eq(id_of(&r, i, id, sizeof(id)), wanted);
    }
    ck_assert_uint_le(r.page.n_items, 5);
    ck_assert_uint_eq(r.page.scanned, r.page.n_items); /* no filter */
    ck_assert_ptr_eq(r.model, ofx_model("Msg"));
    tt_orm_result_free(&r);
    pages++;
  } while (cursor != NULL);
  ck_assert_int_eq(want, N_MSGS + 1); /* every item once, in order */
  ck_assert_int_eq(pages, 3);          /* 5 + 5 + 2 */
}
END_TEST

START_TEST(query_descending_and_filtered) {
  struct tt_orm_result r = run(false, RQ(ROOM_A, .order = TT_ORDER_DESC, .has_limit = true, .limit = 3), NULL);
  expect_page(&r);
  char id[32];
  ck_assert_uint_eq(r.page.n_items, 3);
  ck_assert_str_eq(id_of(&r, 0, id, sizeof(id)), "a/12");
  ck_assert_str_eq(id_of(&r, 2, id, sizeof(id)), "a/10");
  ck_assert_ptr_nonnull(r.page.cursor);
  /* A descending cursor does not fit an ascending query. */
  struct tt_orm_result bad = run(false, RQ(ROOM_A, .order = TT_ORDER_ASC, .has_limit = true, .limit = 3),
                                 r.page.cursor);
  ck_assert_int_eq(bad.status, -1);
  ck_assert_int_eq(bad.err.code, TT_ERR_INVALID_CURSOR);
  ck_assert_str_eq(bad.err.field, "cursor");
  tt_orm_result_free(&bad);
  tt_orm_result_free(&r);
  /* A filter reads more than it answers. */
  struct tt_cond *filter = cond_of("{'attr':'text','op':'begins_with','value':'message 1'}");
  r = run(false, RQ(ROOM_A, .filter = filter), NULL); /* message 1, 10 and 11 */
  expect_page(&r);
  ck_assert_uint_eq(r.page.n_items, 3);
  ck_assert_uint_eq(r.page.scanned, N_MSGS);
  ck_assert_ptr_null(r.page.cursor);
  tt_orm_result_free(&r);
  /* A select: the backend projects what it names plus the keys the cursor
   * needs; the answer's text keeps only what it names. */
  r = run(false, RQ(ROOM_A, .select = ofx_select("['text']"), .has_limit = true, .limit = 1),
          NULL);
  expect_page(&r);
  ck_assert_uint_eq(r.page.items[0].len, 3);
  ck_assert_ptr_nonnull(tt_av_map_get(&r.page.items[0], "text"));
  ck_assert_ptr_nonnull(tt_av_map_get(&r.page.items[0], "seq"));
  tt_orm_result_free(&r);
}
END_TEST

START_TEST(counts_carry_a_cursor_at_their_limit) {
  struct tt_orm_result r = run(false, RQ(ROOM_A, .count_only = true), NULL);
  expect_page(&r);
  ck_assert(r.page.count_only);
  ck_assert_uint_eq(r.page.n_items, 0);
  ck_assert_uint_eq(r.page.count, N_MSGS);
  ck_assert_ptr_null(r.page.cursor);
  tt_orm_result_free(&r);
  r = run(false, RQ(ROOM_A, .count_only = true, .has_limit = true, .limit = 4), NULL);
  expect_page(&r);
  ck_assert_uint_eq(r.page.count, 4);
  ck_assert_ptr_nonnull(r.page.cursor);
  struct tt_orm_result rest = run(false, RQ(ROOM_A, .count_only = true), r.page.cursor);
  expect_page(&rest);
  ck_assert_uint_eq(rest.page.count, N_MSGS - 4);
  tt_orm_result_free(&rest);
  tt_orm_result_free(&r);
}
END_TEST

/* Pages a scan of `rq` to its end; every item of the table must come
 * exactly once. Returns the number of pages. */
static int scan_all(struct tt_orm_query_request rq) {
  bool seen[2][N_MSGS + 1];
  memset(seen, 0, sizeof(seen));
  size_t total = 0;
  int pages = 0;
  char *cursor = NULL;
  do {
    struct tt_orm_result r = run(true, rq, cursor);
    expect_page(&r);
    free(cursor);
    cursor = r.page.cursor ? strdup(r.page.cursor) : NULL;
    for (size_t i = 0; i < r.page.n_items; i++) {
      const struct tt_av *room = tt_av_map_get(&r.page.items[i], "room");
      const struct tt_av *seq = tt_av_map_get(&r.page.items[i], "seq");
      int s = (int)strtol(seq->u.bytes, NULL, 10);
      int k = room->u.bytes[0] == 'a' ? 0 : 1;
      ck_assert_msg(!seen[k][s], "%s/%d twice", room->u.bytes, s);
      seen[k][s] = true;
      total++;
    }
    tt_orm_result_free(&r);
    ck_assert_int_lt(++pages, 100);
  } while (cursor != NULL);
  ck_assert_uint_eq(total, N_MSGS + 3);
  return pages;
}

START_TEST(parallel_scan_segments_page_every_item_once) {
  ck_assert_int_ge(scan_all(RQ(.segments = 3, .has_limit = true, .limit = 4)), 4);
  ck_assert_int_eq(scan_all(RQ(.segments = 2)), 1);
  /* A segment cursor does not fit another number of segments. */
  struct tt_orm_result r = run(true, RQ(.segments = 3, .has_limit = true, .limit = 2), NULL);
  expect_page(&r);
  ck_assert_ptr_nonnull(r.page.cursor);
  struct tt_orm_result bad = run(true, RQ(.segments = 2), r.page.cursor);
  ck_assert_int_eq(bad.status, -1);
  ck_assert_int_eq(bad.err.code, TT_ERR_INVALID_CURSOR);
  tt_orm_result_free(&bad);
  tt_orm_result_free(&r);
}
END_TEST

START_TEST(the_byte_budget_ends_pages_early) {
  /* Room for about two items' answer text: every page ends early, with a
   * cursor right after its last item; the first item always comes. */
  OFX.orm.max_response_bytes = 100;
  struct tt_orm_result r = run(false, RQ(ROOM_A), NULL);
  expect_page(&r);
  ck_assert_uint_ge(r.page.n_items, 1);
  ck_assert_uint_lt(r.page.n_items, N_MSGS);
  ck_assert_ptr_nonnull(r.page.cursor);
  tt_orm_result_free(&r);
  OFX.orm.max_response_bytes = 1;
  ck_assert_int_eq(scan_all(RQ(.segments = 1)), N_MSGS + 3); /* one item a page */
  ck_assert_int_ge(scan_all(RQ(.segments = 2)), N_MSGS + 3);
}
END_TEST

/* A sink that sizes every item at 40 bytes and counts what it holds. */
struct counting_sink {
  size_t held[3], taken_back, reserved;
  char last[32];
};

static int sink_add(void *arg, size_t reader, size_t n_readers, const struct tt_av *item,
                    size_t *size, struct tt_error *err) {
  struct counting_sink *s = arg;
  (void)err;
  ck_assert_uint_lt(reader, n_readers);
  ck_assert_uint_le(n_readers, 3);
  s->held[reader]++;
  snprintf(s->last, sizeof(s->last), "%s", tt_av_map_get(item, "seq")->u.bytes);
  *size = 40;
  return 0;
}

static void sink_take_back(void *arg, size_t reader) {
  struct counting_sink *s = arg;
  s->held[reader]--;
  s->taken_back++;
}

static void sink_reserve(void *arg, size_t reader, size_t bytes) {
  struct counting_sink *s = arg;
  (void)reader;
  s->reserved += bytes;
}

START_TEST(a_sink_takes_the_items_and_sizes_them_for_the_budget) {
  struct counting_sink s;
  memset(&s, 0, sizeof(s));
  const struct tt_orm_page_sink sink = {sink_add, sink_take_back, sink_reserve, &s};
  /* 100 bytes hold two items of 40: the third is taken back, and the
   * cursor points right after the second. */
  OFX.orm.max_response_bytes = 100;
  struct tt_orm_result r = run_sink(false, RQ(ROOM_A), NULL, &sink);
  expect_page(&r);
  ck_assert_uint_eq(r.page.n_items, 0); /* the sink has them */
  ck_assert_ptr_null(r.page.items);
  ck_assert_uint_eq(r.page.count, 2);
  ck_assert_uint_eq(s.held[0], 2);
  ck_assert_uint_eq(s.taken_back, 1);
  ck_assert_uint_gt(s.reserved, 0);
  ck_assert_ptr_nonnull(r.page.cursor);
  struct tt_orm_result next = run(false, RQ(ROOM_A, .has_limit = true, .limit = 1), r.page.cursor);
  expect_page(&next);
  char id[32];
  ck_assert_str_eq(id_of(&next, 0, id, sizeof(id)), "a/3");
  tt_orm_result_free(&next);
  tt_orm_result_free(&r);
}
END_TEST

START_TEST(bad_requests_are_refused_before_any_io) {
  struct {
    bool scan;
    struct tt_orm_query_request rq;
    const char *field;
  } bad[] = {
      /* No index has this key. */
      {false, RQ(.key = key_of("[{'attr':'text','op':'=','value':'a'}]")), "index"},
      {false, RQ(ROOM_A, .has_limit = true, .limit = 0), "limit"},
      {false, RQ(ROOM_A, .has_limit = true, .limit = TT_ORM_MAX_LIMIT + 1), "limit"},
      {false, RQ(ROOM_A, .index = "nope"), "index"},
      /* What only a typed request can ask. */
      {false, RQ(ROOM_A, .segments = 2), "segments"},
      {true, RQ(ROOM_A), "key"},
      {true, RQ(.order = TT_ORDER_DESC), "order"},
      {true, RQ(.segments = TT_ORM_MAX_SEGMENTS + 1), "segments"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    struct tt_orm_result r = run(bad[i].scan, bad[i].rq, NULL);
    ck_assert_msg(r.status == -1, "request %zu accepted", i);
    ck_assert_int_eq(r.err.code, TT_ERR_VALIDATION);
    ck_assert_str_eq(r.err.field, bad[i].field);
    tt_orm_result_free(&r);
  }
  struct tt_orm_result r = run(false, RQ(ROOM_A), "not a cursor");
  ck_assert_int_eq(r.status, -1);
  ck_assert_int_eq(r.err.code, TT_ERR_INVALID_CURSOR);
  tt_orm_result_free(&r);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("orm_query");
  TCase *tc = tcase_create("query");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, query_pages_with_limits_and_cursors);
  tcase_add_test(tc, query_descending_and_filtered);
  tcase_add_test(tc, counts_carry_a_cursor_at_their_limit);
  tcase_add_test(tc, parallel_scan_segments_page_every_item_once);
  tcase_add_test(tc, the_byte_budget_ends_pages_early);
  tcase_add_test(tc, a_sink_takes_the_items_and_sizes_them_for_the_budget);
  tcase_add_test(tc, bad_requests_are_refused_before_any_io);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
