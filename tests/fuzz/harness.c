/* SPDX-License-Identifier: Apache-2.0 */
/* harness.c -- the shared fuzz environment: models, per-input backends and
 * running one ORM operation to its checked answer (harness.h). */
#include "harness.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/item_io.h"
#include "api/item_io.h"
#include "backend/memory/memdb.h"
#include "ledger/ledger.h"
#include "orm/batch.h"
#include "orm/item.h"
#include "orm/items.h"
#include "orm/query.h"
#include "orm/unique.h"
#include "value/json_exact.h"

#ifndef FUZZ_SRCDIR
#define FUZZ_SRCDIR "."
#endif

struct fz_env FZ;
static int ready;

/* A model with unique attributes (guard items through transactions), an
 * undeclared-attribute tag, a json: true map, a binary and sets: the paths
 * the example models do not take. */
static const char MEMBER[] =
    "{\"dms_version\":\"0.2\",\"models\":[{\"name\":\"Member\",\"table\":{\"name\":\"members\"},"
    "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},"
    "\"tags\":{\"additional_attributes\":true},"
    "\"attributes\":[{\"attribute\":\"id\",\"type\":\"S\",\"required\":true},"
    "{\"attribute\":\"email\",\"type\":\"S\",\"optional\":true,\"tags\":{\"unique\":true}},"
    "{\"attribute\":\"num\",\"type\":\"N\",\"optional\":true,\"tags\":{\"unique\":true}},"
    "{\"attribute\":\"raw\",\"type\":\"B\",\"optional\":true},"
    "{\"attribute\":\"doc\",\"type\":\"S\",\"json\":true,\"optional\":true},"
    "{\"attribute\":\"nums\",\"type\":\"NS\",\"optional\":true,\"omit_empty\":true},"
    "{\"attribute\":\"list\",\"type\":\"L\",\"optional\":true},"
    "{\"attribute\":\"flag\",\"type\":\"BOOL\",\"optional\":true}]}]}";

static int64_t fixed_ns(void *arg) {
  (void)arg;
  return FZ_T0_NS;
}

static int64_t fixed_s(void *arg) {
  (void)arg;
  return FZ_T0_NS / 1000000000;
}

size_t fz_model_count(void) { return tt_model_registry_count(FZ.models); }

const struct tt_model *fz_model(size_t i) {
  return tt_model_registry_at(FZ.models, i % fz_model_count());
}

void fz_init(void) {
  struct tt_error err;
  if (ready)
    return;
  if (uv_loop_init(&FZ.loop) != 0)
    abort();
  FZ.models = tt_model_registry_new();
  if (FZ.models == NULL || tt_ledger_register_models(FZ.models, NULL, &err) != 0 ||
      tt_model_registry_load_path(FZ.models, FUZZ_SRCDIR "/examples/models", &err) != 0 ||
      tt_model_registry_load_text(FZ.models, MEMBER, sizeof(MEMBER) - 1, "member.json", &err) !=
          0) {
    fprintf(stderr, "fuzz harness: models: %s\n", err.message);
    abort();
  }
  FZ.orm.models = FZ.models;
  FZ.orm.client = &FZ.client;
  FZ.orm.now_ns = fixed_ns;
  FZ.orm.batch_concurrency = 2;
  ready = 1;
}

void fz_backend_use(struct tt_backend *b) {
  FZ.b = b;
  tt_client_init(&FZ.client, b, &FZ.loop, NULL);
  /* One attempt: a retry would sleep on the loop for real milliseconds. */
  FZ.client.retry.max_attempts = 1;
}

static void created_cb(struct tt_backend_call *call) {
  if (call->status != 0)
    abort();
  tt_ddb_table_out_free(&call->table_out);
  *(int *)call->arg = 1;
}

void fz_backend_memory(void) { fz_backend_memory_table(NULL); }

void fz_backend_memory_table(const char *only) {
  struct tt_memdb_options o = {.clock = fixed_s};
  struct tt_backend *b = NULL;
  if (tt_memdb_new(&FZ.loop, &o, &b) != 0)
    abort();
  fz_backend_use(b);
  FZ.orm.auto_create_tables = true;
  /* Each table once, straight through the port: the ORM's ensure path
   * (Describe, Create, wait, TTL per model) would cost most of an input. */
  for (size_t i = 0; i < fz_model_count(); i++) {
    const struct tt_model *m = fz_model(i);
    bool seen = false;
    for (size_t k = 0; k < i; k++)
      seen = seen || strcmp(fz_model(k)->table, m->table) == 0;
    if (seen || (only && strcmp(m->table, only) != 0))
      continue;
    struct tt_backend_call call;
    int done = 0;
    memset(&call, 0, sizeof(call));
    struct tt_arena a;
    struct tt_ddb_table_request req;
    tt_arena_init(&a);
    call.op = TT_DDB_CREATE_TABLE;
    call.table = &req;
    call.done = created_cb;
    call.arg = &done;
    if (tt_orm_create_table_request(&a, FZ.models, m, &req) != 0 || b->ops->start(b, &call) != 0)
      abort();
    uv_run(&FZ.loop, UV_RUN_DEFAULT);
    tt_arena_free(&a);
    if (!done)
      abort();
  }
}

static void closed_cb(void *arg) { *(int *)arg = 1; }

void fz_backend_close(void) {
  int closed = 0;
  FZ.b->ops->close(FZ.b, closed_cb, &closed);
  uv_run(&FZ.loop, UV_RUN_DEFAULT);
  if (!closed)
    abort();
  FZ.b->ops->destroy(FZ.b);
  FZ.b = NULL;
}

static void run_done_cb(struct tt_orm_ctx *ctx) { ((struct fz_run *)ctx->arg)->done++; }
static void ledger_done_cb(struct tt_ledger_op *op) { ((struct fz_run *)op->arg)->done++; }

/* What a start returned: done never runs inside it, and never at all when
 * the operation finished there (-1). */
static void run_started(struct fz_run *r, int rc) {
  if (r->done != 0)
    abort();
  if (rc != 0)
    r->done++;
}

static void joined_cb(struct tt_join *j, void *arg) {
  (void)j;
  ((struct fz_run *)arg)->joined++;
}

static void run_prepare(struct fz_run *r) {
  memset(r, 0, sizeof(*r));
  tt_arena_init(&r->arena);
  tt_join_init(&r->join, NULL, joined_cb, r);
  tt_buf_init(&r->lres.body, 0);
  tt_buf_init(&r->rendered, 0);
}

void fz_run_begin(struct fz_run *r, struct tt_orm_ctx *ctx, const struct tt_model *m) {
  run_prepare(r);
  tt_orm_ctx_init(ctx, &FZ.orm, &r->join, &r->arena, "fuzz", m, &r->res, run_done_cb, r);
}

void fz_ledger_begin(struct fz_run *r, struct tt_ledger_op *op) {
  run_prepare(r);
  memset(op, 0, sizeof(*op));
  op->orm = &FZ.orm;
  op->join = &r->join;
  op->arena = &r->arena;
  op->request_id = "fuzz";
  op->result = &r->lres;
  r->ledger = true;
  op->done = ledger_done_cb;
  op->arg = r;
}

void fz_ledger_end(struct fz_run *r, struct tt_ledger_op *op) {
  run_started(r, tt_ledger_start(op));
  fz_run_end(r);
}

/* Whether b holds one JSON text. */
static bool is_json(const struct tt_buf *b) {
  json_t *j = NULL;
  struct tt_error err;
  struct tt_json_opts o = {0, 200};
  if (tt_json_parse(b->data, b->len, &o, &j, &err) != 0)
    return false;
  json_decref(j);
  return true;
}

void fz_run_end(struct fz_run *r) {
  tt_join_release(&r->join);
  uv_run(&FZ.loop, UV_RUN_DEFAULT);
  if (r->done != 1 || r->joined != 1 || tt_join_pending(&r->join) != 0)
    abort();
  if (r->txn)
    tt_api_txn_answer(r->txn, &r->res, &r->rendered);
  if (r->batch)
    tt_api_batch_answer(r->batch, &r->res, &r->rendered);
  if (r->ledger) {
    /* A ledger answer: a 2xx with a JSON body (or none), or an error. */
    const struct tt_ledger_result *l = &r->lres;
    if (l->status == 0 && (l->http_status < 200 || l->http_status > 299 ||
                           (l->body.len != 0 && !is_json(&l->body))))
      abort();
    if (l->status != 0 && (l->status != -1 || l->err.code == TT_OK ||
                           l->err.code >= TT_ERR__COUNT || l->err.message[0] == '\0'))
      abort(); /* every failure names its code and explains itself */
  } else if ((r->txn || r->batch) && r->res.status == 0) {
    if (!is_json(&r->rendered))
      abort(); /* our answer must be JSON */
  } else if (r->res.status == 0 && r->res.answer == TT_ORM_ANSWER_TABLE) {
    json_t *t = tt_orm_table_to_json(&r->res.table);
    if (t == NULL)
      abort();
    json_decref(t);
  } else if (r->res.status == 0 && r->res.answer == TT_ORM_ANSWER_ITEM) {
    /* A typed item renders as the item routes render it. */
    struct tt_buf b;
    struct tt_error err;
    char etag[TT_API_ETAG_MAX];
    tt_buf_init(&b, 0);
    if (r->res.item.type != TT_AV_M || r->res.model == NULL)
      abort();
    if (tt_api_item_write(&b, &r->res, NULL, false, etag, &err) != 0 &&
        (err.code != TT_ERR_INTERNAL || err.message[0] == '\0'))
      abort();
    tt_buf_free(&b);
  } else if (r->res.status == 0 && r->res.answer == TT_ORM_ANSWER_PAGE) {
    /* A typed page renders as the query routes render it. */
    struct tt_buf b;
    struct tt_error err;
    tt_buf_init(&b, 0);
    if (r->res.model == NULL || (r->res.page.n_items > 0 && r->res.page.count_only) ||
        (!r->res.page.count_only && r->res.page.count != r->res.page.n_items))
      abort();
    for (size_t i = 0; i < r->res.page.n_items; i++) {
      tt_buf_reset(&b);
      if (tt_orm_item_write(&b, r->res.model, &r->res.page.items[i], NULL, &err) != 0 &&
          (err.code != TT_ERR_INTERNAL || err.message[0] == '\0'))
        abort();
    }
    tt_buf_free(&b);
  } else if (r->res.status == 0) {
    if (r->res.answer != TT_ORM_ANSWER_NONE)
      abort(); /* every other answer is rendered above */
  } else if (r->res.status != -1 || r->res.err.code == TT_OK ||
             r->res.err.code >= TT_ERR__COUNT || r->res.err.message[0] == '\0') {
    abort(); /* every failure names its code and explains itself */
  }
  tt_orm_result_free(&r->res);
  tt_ledger_result_free(&r->lres);
  tt_buf_free(&r->rendered);
  tt_arena_free(&r->arena);
}

json_t *fz_body(const char *data, size_t len) {
  struct tt_json_opts o = {.max_bytes = 0, .max_depth = 40};
  struct tt_error err;
  json_t *v = NULL;
  if (len == 0)
    return json_object();
  if (tt_json_parse(data, len, &o, &v, &err) != 0)
    return NULL;
  if (!json_is_object(v)) {
    json_decref(v);
    return NULL;
  }
  return v;
}

void fz_split_line(const char *data, size_t len, const char **line, size_t *line_len,
                   const char **rest, size_t *rest_len) {
  const char *nl = memchr(data, '\n', len);
  *line = data;
  *line_len = nl ? (size_t)(nl - data) : len;
  *rest = nl ? nl + 1 : data + len;
  *rest_len = nl ? len - *line_len - 1 : 0;
}

enum fz_op_kind fz_op_kind_of(uint8_t c) {
  static const char names[] = "cpgudqsGWTtED";
  const char *p = c ? strchr(names, c) : NULL;
  return p ? (enum fz_op_kind)(p - names) : (enum fz_op_kind)(c % FZ__COUNT);
}

void fz_op(enum fz_op_kind kind, const struct tt_model *m, unsigned flags, const char *raw_key,
           size_t raw_key_len, const json_t *body, uint64_t deadline_ns) {
  static const enum tt_orm_item_kind item_kinds[] = {TT_ORM_OP_CREATE, TT_ORM_OP_PUT,
                                                     TT_ORM_OP_GET, TT_ORM_OP_UPDATE,
                                                     TT_ORM_OP_DELETE};
  struct fz_run r;
  json_t *empty = body ? NULL : json_object();
  if (body == NULL)
    body = empty;
  switch (kind) {
  case FZ_CREATE:
  case FZ_PUT:
  case FZ_GET:
  case FZ_PATCH:
  case FZ_DELETE: {
    struct tt_orm_item_op op;
    memset(&op, 0, sizeof(op));
    fz_run_begin(&r, &op.ctx, m);
    op.kind = item_kinds[kind];
    /* The key as the handler types it; one that does not decode is no key,
     * which the ORM refuses. */
    struct tt_av key;
    struct tt_error kerr;
    if (kind != FZ_CREATE && tt_api_item_key(m, raw_key, raw_key_len, &key, &kerr) == 0)
      op.item_key = &key;
    /* A get's select as the handler types ?select=: its strings, in the
     * op's arena. */
    const json_t *select = json_object_get(body, "select");
    size_t ns = kind == FZ_GET ? json_array_size(select) : 0;
    const char **paths = ns ? tt_arena_alloc(op.ctx.arena, ns * sizeof(*paths)) : NULL;
    for (size_t i = 0; paths && i < ns; i++)
      if ((paths[op.select.n] = json_string_value(json_array_get(select, i))) != NULL)
        op.select.n++;
    op.select.paths = paths;
    op.consistent = flags & FZ_FLAG_CONSISTENT;
    op.raw_format = flags & FZ_FLAG_RAW;
    op.if_none_match = kind == FZ_PUT && (flags & FZ_FLAG_IF_NONE_MATCH);
    op.upsert = kind == FZ_PATCH && (flags & FZ_FLAG_UPSERT);
    if ((flags & FZ_FLAG_IF_MATCH) && !op.if_none_match && kind != FZ_CREATE && kind != FZ_GET) {
      op.expected.present = true;
      op.expected.version = flags >> 5;
    }
    run_started(&r, tt_api_item_start(&op, kind == FZ_GET || kind == FZ_DELETE ? NULL : body));
    fz_run_end(&r);
    if (op.item_key)
      tt_av_free(&key);
    break;
  }
  case FZ_QUERY:
  case FZ_SCAN: {
    struct tt_orm_query_op op;
    memset(&op, 0, sizeof(op));
    fz_run_begin(&r, &op.ctx, m);
    op.scan = kind == FZ_SCAN;
    run_started(&r, tt_api_query_start(&op, body));
    fz_run_end(&r);
    break;
  }
  case FZ_BATCH_GET:
  case FZ_BATCH_WRITE: {
    struct tt_orm_batch_op op;
    memset(&op, 0, sizeof(op));
    fz_run_begin(&r, &op.ctx, m);
    op.write = kind == FZ_BATCH_WRITE;
    op.deadline_ns = deadline_ns;
    run_started(&r, tt_api_batch_start(&op, body));
    r.batch = &op; /* answered as the batch routes answer */
    fz_run_end(&r);
    break;
  }
  case FZ_TXN_WRITE:
  case FZ_TXN_GET: {
    struct tt_orm_txn_op op;
    memset(&op, 0, sizeof(op));
    fz_run_begin(&r, &op.ctx, NULL);
    op.get = kind == FZ_TXN_GET;
    run_started(&r, tt_api_txn_start(&op, body));
    r.txn = &op; /* answered as the transaction routes answer */
    fz_run_end(&r);
    break;
  }
  case FZ_TABLE_ENSURE:
  case FZ_TABLE_DESCRIBE: {
    struct tt_orm_ctx ctx;
    fz_run_begin(&r, &ctx, m);
    if (kind == FZ_TABLE_ENSURE)
      run_started(&r, tt_orm_table_ensure(&ctx));
    else
      run_started(&r, tt_orm_table_describe(&ctx));
    fz_run_end(&r);
    break;
  }
  case FZ__COUNT:
    break;
  }
  json_decref(empty);
}
