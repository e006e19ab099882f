/* SPDX-License-Identifier: Apache-2.0 */
/* test_memdb.h -- fixture shared by the memory backend's check suites: a
 * real loop, one backend, calls run to completion, JSON written with single
 * quotes for readability and compared canonically. GetItem, PutItem,
 * UpdateItem, DeleteItem, Query and Scan cross the port only typed: their
 * JSON is read and their answers written by the DynamoDB listener's
 * conversion (api/ddb_items.h), as a client of the listener sees them; so
 * do the table operations (backend/table_json.h). */
#ifndef TT_TEST_MEMDB_H
#define TT_TEST_MEMDB_H

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "api/ddb_items.h"
#include "backend/backend.h"
#include "backend/memory/memdb.h"
#include "backend/table_json.h"
#include "util/buf.h"
#include "value/json_exact.h"

#define SIMPLE_TABLE                                                                               \
  "{'TableName':'tbl','BillingMode':'PAY_PER_REQUEST','AttributeDefinitions':[{'AttributeName':"   \
  "'pk','AttributeType':'S'}],'KeySchema':[{'AttributeName':'pk','KeyType':'HASH'}]}"
#define COMPOSITE_TABLE                                                                            \
  "{'TableName':'cmp','BillingMode':'PAY_PER_REQUEST','AttributeDefinitions':[{'AttributeName':"   \
  "'pk','AttributeType':'S'},{'AttributeName':'sk','AttributeType':'N'}],'KeySchema':"           \
  "[{'AttributeName':'pk','KeyType':'HASH'},{'AttributeName':'sk','KeyType':'RANGE'}]}"
#define FULL_TABLE                                                                                 \
  "{'TableName':'full','BillingMode':'PAY_PER_REQUEST','AttributeDefinitions':[{'AttributeName':" \
  "'pk','AttributeType':'S'},{'AttributeName':'sk','AttributeType':'N'},{'AttributeName':'g',"   \
  "'AttributeType':'S'},{'AttributeName':'l','AttributeType':'S'}],'KeySchema':[{'AttributeName'" \
  ":'pk','KeyType':'HASH'},{'AttributeName':'sk','KeyType':'RANGE'}],'GlobalSecondaryIndexes':"  \
  "[{'IndexName':'gsi','KeySchema':[{'AttributeName':'g','KeyType':'HASH'}],'Projection':"       \
  "{'ProjectionType':'KEYS_ONLY'}}],'LocalSecondaryIndexes':[{'IndexName':'lsi','KeySchema':"    \
  "[{'AttributeName':'pk','KeyType':'HASH'},{'AttributeName':'l','KeyType':'RANGE'}],"           \
  "'Projection':{'ProjectionType':'INCLUDE','NonKeyAttributes':['a']}}]}"

struct fx {
  uv_loop_t loop;
  struct tt_backend *b;
  struct tt_backend_error err; /* of the last failed call */
};

/* Parses JSON written with ' for ". */
static inline json_t *fx_json(const char *text) {
  size_t n = strlen(text);
  char *s = malloc(n + 1);
  for (size_t i = 0; i <= n; i++)
    s[i] = text[i] == '\'' ? '"' : text[i];
  json_t *j = NULL;
  struct tt_error err;
  struct tt_json_opts o = {.max_bytes = 0, .max_depth = 100};
  int rc = tt_json_parse(s, n, &o, &j, &err);
  free(s);
  ck_assert_msg(rc == 0, "bad test JSON: %s", err.message);
  return j;
}

static inline char *fx_dump(const json_t *j) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_json_dump(j, TT_JSON_SORT_KEYS, &b), 0);
  return tt_buf_steal(&b, NULL);
}

static inline void fx_assert_json(const json_t *got, const char *want) {
  ck_assert_ptr_nonnull(got);
  json_t *w = fx_json(want);
  char *a = fx_dump(got), *b = fx_dump(w);
  ck_assert_str_eq(a, b);
  free(a);
  free(b);
  json_decref(w);
}

static inline void fx_setup(struct fx *f, const struct tt_memdb_options *o) {
  memset(f, 0, sizeof(*f));
  ck_assert_int_eq(uv_loop_init(&f->loop), 0);
  ck_assert_int_eq(tt_memdb_new(&f->loop, o, &f->b), 0);
}

static inline void fx_closed(void *arg) { *(int *)arg = 1; }

/* Closes backend `b` (ownership passes), runs `loop` until its close
 * callback ran, frees it and closes the loop, which must be left empty. For
 * every suite that keeps one backend on its own loop. */
static inline void fx_close_backend(uv_loop_t *loop, struct tt_backend *b) {
  int closed = 0;
  b->ops->close(b, fx_closed, &closed);
  uv_run(loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(closed, 1);
  b->ops->destroy(b);
  ck_assert_int_eq(uv_loop_close(loop), 0);
}

static inline void fx_teardown(struct fx *f) {
  tt_backend_error_clear(&f->err);
  fx_close_backend(&f->loop, f->b);
}

static inline void fx_done(struct tt_backend_call *c) { *(int *)c->arg += 1; }

/* A typed request read from JSON, and what it owns. */
struct fx_typed {
  struct tt_ddbi_request r;
  struct tt_ddbi_owned own;
};

/* Reads a JSON request of one of the six typed operations into *t and
 * points c at it; false (c failed with the listener's refusal) when the
 * conversion refuses it. */
static inline bool fx_typed_in(struct tt_backend_call *c, const json_t *req, struct fx_typed *t) {
  if (tt_ddbi_request_from_json(c->op, req, &t->r, &t->own, &c->error) != 0) {
    c->status = -1;
    return false;
  }
  if (c->op == TT_DDB_QUERY || c->op == TT_DDB_SCAN)
    c->read = &t->r.read;
  else
    c->item = &t->r.item;
  return true;
}

/* The typed answer of a completed call as its JSON response (then freed),
 * and t released. */
static inline void fx_typed_out(struct tt_backend_call *c, struct fx_typed *t) {
  if (c->status == 0) {
    /* Numbers as jansson's, strings marked, as the backend's JSON answers
     * held them. */
    struct tt_buf b;
    tt_buf_init(&b, 0);
    ck_assert_int_eq(tt_ddbi_answer_write(&t->r, c, &b), 0);
    c->response = json_loadb(b.data, b.len, JSON_ALLOW_NUL, NULL);
    ck_assert_ptr_nonnull(c->response);
    ck_assert_int_eq(tt_json_mark_plain_strings(c->response), 0);
    tt_buf_free(&b);
  }
  tt_av_free(&c->item_out);
  tt_ddb_read_result_free(&c->read_out);
  c->item = NULL;
  c->read = NULL;
  tt_ddbi_owned_free(&t->own);
}

static inline void fx_order_cb(struct tt_backend_call *c) {
  int *order = c->arg;
  int i = 0;
  while (order[i] != -1)
    i++;
  /* the call's index is recovered from its request item's pk letter */
  const struct tt_av *pk = tt_av_map_get(c->item->item, "pk");
  order[i] = pk->u.bytes[0] - 'a';
}

/* Runs one backend call (`op` on `req`, borrowed) on `loop` until `b` has
 * answered it into `c`: the caller reads c->status, owns c->response and
 * c->error. Returns how many times the done callback ran before the loop
 * did (the async contract wants 0; suites that check it assert on this). */
static inline int fx_call(uv_loop_t *loop, struct tt_backend *b, enum tt_ddb_op op,
                          const json_t *req, struct tt_backend_call *c) {
  int done = 0;
  struct fx_typed t;
  bool typed = tt_ddbi_typed_op(op);
  struct tt_ddbt_txn txn;
  struct tt_ddbt_batch batch;
  struct tt_ddb_table_request table;
  struct tt_arena arena;
  tt_arena_init(&arena);
  memset(c, 0, sizeof(*c));
  c->op = op;
  c->done = fx_done;
  c->arg = &done;
  /* The item and read operations, transactions and batches cross the
   * port typed: converted as the DynamoDB listener converts them, and their
   * result written back as it answers. */
  if (typed && !fx_typed_in(c, req, &t))
    return 0;
  if (tt_ddbt_is_txn(op) || tt_ddbt_is_batch(op)) {
    if ((tt_ddbt_is_txn(op) ? tt_ddbt_txn_parse(op, req, &txn, &c->error)
                            : tt_ddbt_batch_parse(op, req, &batch, &c->error)) != 0) {
      c->status = -1;
      return 0;
    }
    if (tt_ddbt_is_txn(op))
      c->txn = &txn.req;
    else
      c->batch = &batch.req;
  } else if (!typed) {
    /* The table operations: read as the listener reads them. */
    if (tt_ddb_table_request_read(op, req, &arena, &table, &c->error) != 0) {
      tt_arena_free(&arena);
      c->status = -1;
      return 0;
    }
    c->table = &table;
  }
  ck_assert_int_eq(b->ops->start(b, c), 0);
  int early = done;
  uv_run(loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(done, 1);
  c->arg = NULL; /* `done` ends here */
  if (typed)
    fx_typed_out(c, &t);
  if (c->txn) {
    if (c->status == 0)
      c->response = tt_ddbt_txn_answer(op, &c->txn_out);
    else if (c->txn_out.n_reasons)
      c->error.body = tt_ddbt_txn_reasons(&c->txn_out);
    tt_ddb_txn_result_free(&c->txn_out);
    tt_ddbt_txn_free(&txn);
    c->txn = NULL;
  }
  if (c->table) {
    if (c->status == 0)
      c->response = tt_ddb_table_desc_json(op, c->table_out);
    tt_ddb_table_out_free(&c->table_out);
    tt_arena_free(&arena);
    c->table = NULL;
  }
  if (c->batch) {
    if (c->status == 0)
      c->response = tt_ddbt_batch_answer(op, req, &batch, &c->batch_out);
    tt_ddb_batch_result_free(&c->batch_out);
    tt_ddbt_batch_free(&batch);
    c->batch = NULL;
  }
  return early;
}

/* Runs one call to completion; returns its status. */
static inline int fx_run(struct fx *f, enum tt_ddb_op op, const json_t *req, json_t **resp) {
  struct tt_backend_call c;
  tt_backend_error_clear(&f->err);
  ck_assert_int_eq(fx_call(&f->loop, f->b, op, req, &c), 0);
  *resp = c.response;
  f->err = c.error;
  return c.status;
}

/* Runs every test of `s` (the runner takes it); the exit status of a check
 * program. */
static inline int fx_run_suite(Suite *s) {
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

static inline json_t *fx_ok(struct fx *f, enum tt_ddb_op op, const char *text) {
  json_t *req = fx_json(text), *resp = NULL;
  int st = fx_run(f, op, req, &resp);
  ck_assert_msg(st == 0, "%s failed: %s: %s", tt_ddb_op_name(op), f->err.type, f->err.message);
  json_decref(req);
  ck_assert_ptr_nonnull(resp);
  return resp;
}

/* Runs a call that must succeed, dropping its response. */
static inline void fx_exec(struct fx *f, enum tt_ddb_op op, const char *text) {
  json_decref(fx_ok(f, op, text));
}

static inline void fx_expect(struct fx *f, enum tt_ddb_op op, const char *text,
                             const char *want) {
  json_t *r = fx_ok(f, op, text);
  fx_assert_json(r, want);
  json_decref(r);
}

static inline struct tt_backend_error *fx_fail(struct fx *f, enum tt_ddb_op op, const char *text,
                                               const char *type, const char *message) {
  json_t *req = fx_json(text), *resp = NULL;
  int st = fx_run(f, op, req, &resp);
  json_decref(req);
  ck_assert_msg(st == -1, "%s unexpectedly succeeded", tt_ddb_op_name(op));
  ck_assert_ptr_null(resp);
  ck_assert_str_eq(f->err.type, type);
  ck_assert_str_eq(f->err.message, message);
  ck_assert_uint_eq(f->err.http_status, 400);
  return &f->err;
}

static inline void fx_put_in(struct fx *f, const char *table, const char *item) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  tt_buf_printf(&b, "{'TableName':'%s','Item':%s}", table, item);
  json_t *r = fx_ok(f, TT_DDB_PUT_ITEM, b.data);
  json_decref(r);
  tt_buf_free(&b);
}

static inline void fx_put(struct fx *f, const char *item) {
  /* Items with an 'sk' of N go to the tables that have one. */
  fx_put_in(f, strstr(item, "'sk'") ? "full" : "tbl", item);
}

#endif
