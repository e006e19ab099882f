/* SPDX-License-Identifier: Apache-2.0 */
/* table.c -- a model's table: build CreateTable from the DMS, ensure it
 * exists (waiting for ACTIVE) with the GSIs its models gained, describe it,
 * delete it. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "client/sleep_op.h"
#include "obs/log.h"
#include "orm/evolve.h"
#include "orm/orm.h"

/* Starts ctx's next call; a refused start fails as its completion would. */
static void start_call(struct tt_orm_ctx *ctx, enum tt_ddb_op op,
                       const struct tt_ddb_table_request *req, tt_client_done_cb cb) {
  if (req == NULL || tt_orm_call_table(ctx, op, req, cb) != 0)
    cb(&ctx->call);
}

/* A request naming the model's table only, in the arena (NULL: out of memory). */
static const struct tt_ddb_table_request *name_only(struct tt_orm_ctx *ctx) {
  struct tt_ddb_table_request *r = tt_arena_alloc(ctx->arena, sizeof(*r));
  if (r)
    r->table = ctx->model->table;
  return r;
}

#define ACTIVE_POLL_MS 250
#define ACTIVE_MAX_POLLS 240 /* a minute */

static int add_definition(struct tt_arena *a, struct tt_ddb_attr_def *defs, size_t *n,
                          const struct tt_model_attr *attr) {
  for (size_t i = 0; i < *n; i++)
    if (strcmp(defs[i].name, attr->name) == 0)
      return 0;
  defs[*n].name = tt_arena_strndup(a, attr->name, strlen(attr->name));
  defs[*n].type = attr->type == TT_AV_N || attr->type == TT_AV_B ? attr->type : TT_AV_S;
  return defs[(*n)++].name ? 0 : -1;
}

static const char *copy_str(struct tt_arena *a, const char *s, bool *bad) {
  const char *c = s ? tt_arena_strndup(a, s, strlen(s)) : NULL;
  *bad = *bad || (s && c == NULL);
  return c;
}

int tt_orm_create_table_request(struct tt_arena *a, const struct tt_model_registry *models,
                                const struct tt_model *m, struct tt_ddb_table_request *out) {
  /* Models sharing a table share its indexes: declare all of them. */
  size_t n = models ? tt_model_registry_count(models) : 0, most = m->n_indexes;
  for (size_t k = 0; k < n; k++)
    most += tt_model_registry_at(models, k)->n_indexes;
  struct tt_ddb_attr_def *defs = tt_arena_alloc(a, (2 + 2 * most) * sizeof(*defs));
  struct tt_ddb_index *ixs = tt_arena_alloc(a, (most ? most : 1) * sizeof(*ixs));
  bool bad = defs == NULL || ixs == NULL;
  *out = (struct tt_ddb_table_request){.table = copy_str(a, m->table, &bad),
                                       .defs = defs,
                                       .indexes = ixs,
                                       .billing = TT_DDB_BILLING_PAY_PER_REQUEST};
  if (bad || add_definition(a, defs, &out->n_defs, m->pk) != 0 ||
      (m->sk && add_definition(a, defs, &out->n_defs, m->sk) != 0))
    return -1;
  out->keys.hash = defs[0].name;
  out->keys.range = m->sk ? defs[1].name : NULL;
  for (size_t k = 0; k <= n; k++) {
    const struct tt_model *o = k < n ? tt_model_registry_at(models, k) : m;
    if (strcmp(o->table, m->table) != 0)
      continue;
    /* A model about to replace its registered version stands for its name. */
    if (o != m && strcmp(o->name, m->name) == 0)
      continue;
    for (size_t i = 0; i < o->n_indexes; i++) {
      const struct tt_model_index *ix = &o->indexes[i];
      bool seen = false;
      for (size_t j = 0; j < out->n_indexes; j++)
        seen = seen || strcmp(ixs[j].name, ix->name) == 0;
      if (seen)
        continue;
      struct tt_ddb_index *x = &ixs[out->n_indexes++];
      const char **inc = ix->n_include ? tt_arena_alloc(a, ix->n_include * sizeof(*inc)) : NULL;
      bad = bad || (ix->n_include && inc == NULL);
      for (size_t j = 0; inc && j < ix->n_include; j++)
        inc[j] = copy_str(a, ix->include[j], &bad);
      *x = (struct tt_ddb_index){
          .name = copy_str(a, ix->name, &bad),
          .global = ix->kind == TT_INDEX_GSI,
          .keys = {copy_str(a, ix->partition->name, &bad), ix->sort ? copy_str(a, ix->sort->name, &bad) : NULL},
          .projection = ix->projection == TT_PROJECTION_INCLUDE     ? TT_DDB_PROJECT_INCLUDE
                        : ix->projection == TT_PROJECTION_KEYS_ONLY ? TT_DDB_PROJECT_KEYS_ONLY
                                                                    : TT_DDB_PROJECT_ALL,
          .include = inc,
          .n_include = ix->n_include};
      if (bad || add_definition(a, defs, &out->n_defs, ix->partition) != 0 ||
          (ix->sort && add_definition(a, defs, &out->n_defs, ix->sort) != 0))
        return -1;
    }
  }
  return 0;
}

/* What PUT .../table found and did beyond DescribeTable (ctx->state). */
#define GSI_MAX 20 /* DynamoDB's GSIs per table */

struct ensure_state {
  const char *pending; /* the GSI this call is creating (arena), or NULL */
  const char *created[GSI_MAX]; /* GSIs this call created, in order (arena) */
  size_t n_created;
  const char *adding;     /* the GSI of the UpdateTable in flight (arena) */
  const char *gsi_failed; /* the GSI whose UpdateTable failed once (arena) */
  struct tt_backend_error gsi_error; /* that failure; body NULL */
  bool ttl_checked; /* DescribeTimeToLive was asked (once per ensure) */
  bool ttl_retried; /* asked again after UpdateTimeToLive failed */
  bool ttl_on;      /* TTL is known to be on the model's ttl attribute */
  bool ttl_enabled; /* this call turned it on */
  bool create_tried; /* CreateTable was asked (once per ensure) */
  bool created_table; /* and this call's made the table */
  struct tt_backend_error update_error; /* the failed update; body NULL */
};

/* A string of a DescribeTable answer copied into the arena (dflt when
 * absent); NULL when memory ran out. */
static const char *desc_str(struct tt_orm_ctx *ctx, const char *s, const char *dflt) {
  return s ? tt_arena_strndup(ctx->arena, s, strlen(s)) : dflt;
}

/* Fills the result's table description from a DescribeTable answer, plus
 * what an ensure changed (st non-NULL). Returns 0, or -1 when memory ran
 * out (nothing partial is left to answer with). */
static int describe_table(struct tt_orm_ctx *ctx, const struct tt_ddb_table_desc *t,
                          const struct ensure_state *st) {
  struct tt_orm_table_desc *d = &ctx->result->table;
  size_t n = t->n_indexes;
  struct tt_orm_table_index *ixs = n ? tt_arena_alloc(ctx->arena, n * sizeof(*ixs)) : NULL;
  *d = (struct tt_orm_table_desc){.table = desc_str(ctx, t->table, ctx->model->table),
                                  .status = desc_str(ctx, t->status, "UNKNOWN"),
                                  .item_count = t->item_count,
                                  .indexes = ixs};
  if (d->table == NULL || d->status == NULL || (n && ixs == NULL))
    return -1;
  for (size_t i = 0; i < n; i++) {
    struct tt_orm_table_index *x = &ixs[d->n_indexes++];
    x->global = t->indexes[i].global;
    x->name = desc_str(ctx, t->indexes[i].name, "");
    x->status = desc_str(ctx, t->indexes[i].status, "ACTIVE");
    if (x->name == NULL || x->status == NULL)
      return -1;
  }
  if (st) {
    const struct tt_model_attr *ttl = tt_model_lifecycle(ctx->model, TT_LC_TTL);
    d->ensured = true;
    d->created = st->created_table;
    d->gsis_created = st->created;
    d->n_gsis_created = st->n_created;
    d->ttl_enabled = st->ttl_enabled;
    /* A copy: the model may be replaced once the operation drops it. */
    if (st->ttl_on && ttl &&
        (d->ttl_attribute = tt_arena_strndup(ctx->arena, ttl->name, strlen(ttl->name))) == NULL)
      return -1;
  }
  ctx->result->answer = TT_ORM_ANSWER_TABLE;
  return 0;
}

json_t *tt_orm_table_to_json(const struct tt_orm_table_desc *d) {
  json_t *out = json_pack("{s:s,s:s,s:I}", "table", d->table, "status", d->status,
                          "item_count", (json_int_t)d->item_count);
  json_t *ixs = json_array();
  int rc = out && ixs ? 0 : -1;
  for (size_t i = 0; rc == 0 && i < d->n_indexes; i++) {
    const struct tt_orm_table_index *x = &d->indexes[i];
    rc = json_array_append_new(ixs, json_pack("{s:s,s:s,s:s}", "name", x->name, "kind",
                                              x->global ? "GSI" : "LSI", "status", x->status));
  }
  if (rc == 0)
    rc = json_object_set(out, "indexes", ixs);
  json_decref(ixs);
  if (rc == 0 && d->ensured) {
    /* TableTheory's EnsureTable leaves TTL off: "ttl_enabled" on such a table. */
    json_t *changes = json_array();
    rc = changes && (!d->created ||
                     json_array_append_new(changes, json_string("table_created")) == 0)
             ? 0
             : -1;
    for (size_t i = 0; rc == 0 && i < d->n_gsis_created; i++) {
      char change[300];
      snprintf(change, sizeof(change), "gsi_created:%s", d->gsis_created[i]);
      rc = json_array_append_new(changes, json_string(change));
    }
    if (rc == 0 && d->ttl_enabled)
      rc = json_array_append_new(changes, json_string("ttl_enabled"));
    /* set_new takes `changes` even when it fails. */
    if (rc == 0)
      rc = json_object_set_new(out, "changes", changes);
    else
      json_decref(changes);
    if (rc == 0 && d->ttl_attribute)
      rc = json_object_set_new(out, "ttl_attribute", json_string(d->ttl_attribute));
  }
  if (rc != 0) {
    json_decref(out);
    return NULL;
  }
  return out;
}

/* Ends the operation with an error of `code` (field NULL). */
static void fail(struct tt_orm_ctx *ctx, enum tt_err_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(struct tt_orm_ctx *ctx, enum tt_err_code code, const char *fmt, ...) {
  struct tt_error e;
  va_list ap;
  va_start(ap, fmt);
  tt_error_vset(&e, code, NULL, fmt, ap);
  va_end(ap);
  tt_orm_fail(ctx->result, &e);
  tt_orm_ctx_finish(ctx);
}

/* Poll `step` of the operation: a joined sleep of `ms` that runs on_done.
 * False when the polls ran out (past `max`) or the sleep did not start. */
static bool poll_later(struct tt_orm_ctx *ctx, unsigned max, uint64_t ms,
                       void (*on_done)(struct tt_sleep_op *s)) {
  struct tt_sleep_op *s = ++ctx->step <= max ? tt_arena_alloc(ctx->arena, sizeof(*s)) : NULL;
  if (s == NULL)
    return false;
  s->on_done = on_done;
  s->arg = ctx;
  return tt_sleep_op_start(s, ctx->orm->client->loop, ctx->join, ms, false) == 0;
}

/* Ends the operation with a backend call's error. */
static void fail_backend(struct tt_orm_ctx *ctx, const struct tt_backend_error *be) {
  tt_orm_fail_backend(ctx->result, be, ctx->model->name);
  tt_orm_ctx_finish(ctx);
}

/* Answers from a DescribeTable response (or Internal when out of memory);
 * st as for describe_table. */
static void answer_described(struct tt_orm_ctx *ctx, const struct tt_ddb_table_desc *desc,
                             const struct ensure_state *st) {
  if (describe_table(ctx, desc, st) != 0) {
    fail(ctx, TT_ERR_INTERNAL, "out of memory");
    return;
  }
  ctx->result->status = 0;
  tt_orm_ctx_finish(ctx);
}

/* ---- ensure: Describe -> (Create -> poll until ACTIVE) -> (UpdateTable
 *      adding one missing GSI -> poll until the index is ACTIVE, for each)
 *      -> DescribeTimeToLive -> (UpdateTimeToLive) -> Describe again, for
 *      the answer ------------------------------------------------------- */

static void ensure_described(struct tt_client_call *call);

static void describe_again(struct tt_orm_ctx *ctx) {
  start_call(ctx, TT_DDB_DESCRIBE_TABLE, name_only(ctx), ensure_described);
}

static void poll_wait_done(struct tt_sleep_op *s) {
  struct tt_orm_ctx *ctx = s->arg;
  if (s->canceled) {
    const struct ensure_state *st = ctx->state;
    if (st->pending)
      fail(ctx, TT_ERR_BACKEND_TIMEOUT,
           "the request deadline passed while index %s was being created (DynamoDB goes on "
           "backfilling it: PUT .../table again later)",
           st->pending);
    else
      fail(ctx, TT_ERR_BACKEND_TIMEOUT,
           "the request deadline passed while the table was being created");
    return;
  }
  describe_again(ctx);
}

/* A table that is not ACTIVE yet: wait, as a joined operation, and look
 * again; give up after a minute. */
static void wait_for_active(struct tt_orm_ctx *ctx) {
  if (poll_later(ctx, ACTIVE_MAX_POLLS + 2, ACTIVE_POLL_MS, poll_wait_done))
    return;
  const struct ensure_state *st = ctx->state;
  if (st->pending)
    fail(ctx, TT_ERR_BACKEND_TIMEOUT,
         "index %s did not become ACTIVE in time (DynamoDB goes on backfilling it: PUT "
         ".../table again later)",
         st->pending);
  else
    fail(ctx, TT_ERR_BACKEND_TIMEOUT, "the table did not become ACTIVE in time");
}

/* A peer without the TTL operations (dynalite answers
 * UnknownOperationException): the table is usable, so warn instead of
 * failing the ensure. */
static bool ttl_unsupported(const struct tt_backend_error *e) {
  return strcmp(e->type, "UnknownOperationException") == 0;
}

static void warn_ttl_not_enabled(struct tt_orm_ctx *ctx, const struct tt_backend_error *e) {
  struct tt_log_line l;
  tt_log_begin(&l, TT_LOG_WARN, "table.ttl_not_enabled");
  tt_log_str(&l, "request_id", ctx->request_id);
  tt_log_str(&l, "model", ctx->model->name);
  tt_log_str(&l, "error_code", e->type);
  tt_log_end(&l);
}

static void ttl_described(struct tt_client_call *call);

static void describe_ttl(struct tt_orm_ctx *ctx) {
  start_call(ctx, TT_DDB_DESCRIBE_TIME_TO_LIVE, name_only(ctx), ttl_described);
}

static void ttl_updated(struct tt_client_call *call) {
  struct tt_orm_ctx *ctx = call->arg;
  struct ensure_state *st = ctx->state;
  if (call->bc.status == 0) {
    st->ttl_on = st->ttl_enabled = true;
    describe_again(ctx);
    return;
  }
  if (ttl_unsupported(&call->bc.error)) {
    warn_ttl_not_enabled(ctx, &call->bc.error);
    describe_again(ctx);
    return;
  }
  /* Another ensure of the same table may have enabled it in between
   * (models sharing a table load together): look once more before
   * failing with this error. */
  st->ttl_retried = true;
  st->update_error = call->bc.error;
  st->update_error.body = NULL; /* the call keeps and frees its own */
  describe_ttl(ctx);
}

static void ttl_described(struct tt_client_call *call) {
  struct tt_orm_ctx *ctx = call->arg;
  struct ensure_state *st = ctx->state;
  const struct tt_model_attr *ttl = tt_model_lifecycle(ctx->model, TT_LC_TTL);
  if (call->bc.status != 0) {
    if (ttl_unsupported(&call->bc.error) && !st->ttl_retried) {
      warn_ttl_not_enabled(ctx, &call->bc.error);
      describe_again(ctx);
      return;
    }
    fail_backend(ctx, &call->bc.error);
    return;
  }
  const char *status = call->bc.table_out->ttl_status;
  const char *attr = call->bc.table_out->ttl_attribute;
  bool on = status && (strcmp(status, "ENABLED") == 0 || strcmp(status, "ENABLING") == 0);
  if (on && attr && strcmp(attr, ttl->name) != 0) {
    /* DynamoDB allows one TTL attribute per table; moving it would change
     * which items of the table's other users expire. */
    struct tt_error e;
    tt_error_set(&e, TT_ERR_ALREADY_EXISTS, NULL,
                 "table %s has TTL enabled on attribute %s, not on the model's ttl attribute "
                 "%s; DynamoDB allows one TTL attribute per table: disable it or use it in the "
                 "model",
                 ctx->model->table, attr, ttl->name);
    tt_orm_fail(ctx->result, &e);
    ctx->result->details = json_pack("{s:s,s:s}", "ttl_attribute", attr, "model_ttl_attribute",
                                     ttl->name);
    tt_orm_ctx_finish(ctx);
    return;
  }
  if (on) {
    st->ttl_on = true;
    describe_again(ctx);
    return;
  }
  if (st->ttl_retried) {
    fail_backend(ctx, &st->update_error);
    return;
  }
  struct tt_ddb_table_request *req = tt_arena_alloc(ctx->arena, sizeof(*req));
  if (req)
    *req = (struct tt_ddb_table_request){
        .table = ctx->model->table, .ttl_attribute = ttl->name, .ttl_enabled = true};
  start_call(ctx, TT_DDB_UPDATE_TIME_TO_LIVE, req, ttl_updated);
}

/* ---- evolution: one UpdateTable per missing GSI (DynamoDB takes one
 * index creation per call), each waited for until ACTIVE ------------------ */

static void gsi_updated(struct tt_client_call *call) {
  struct tt_orm_ctx *ctx = call->arg;
  struct ensure_state *st = ctx->state;
  const char *copy = st->adding;
  if (call->bc.status == 0) {
    st->pending = copy;
    ctx->step = 0; /* each index gets its own wait, within the deadline */
    describe_again(ctx);
    return;
  }
  if (st->gsi_failed && strcmp(st->gsi_failed, copy) == 0) {
    fail_backend(ctx, &call->bc.error);
    return;
  }
  /* Another ensure of this table may be adding the same index (models
   * sharing a table): look once more before failing with this error. */
  st->gsi_failed = copy;
  st->gsi_error = call->bc.error;
  st->gsi_error.body = NULL; /* the call keeps and frees its own */
  describe_again(ctx);
}

/* The index this ensure is creating, in a DescribeTable's table: returns 1
 * when it is ACTIVE (recorded as created), 0 while it is being built, -1
 * (result failed) when the table does not have it: the backend accepted
 * UpdateTable without creating it (dynalite ignores GSI creation). */
static int pending_state(struct tt_orm_ctx *ctx, const struct tt_ddb_table_desc *t) {
  struct ensure_state *st = ctx->state;
  const struct tt_ddb_index *ix = NULL;
  for (size_t i = 0; i < t->n_indexes && ix == NULL; i++)
    if (t->indexes[i].global && t->indexes[i].name &&
        strcmp(t->indexes[i].name, st->pending) == 0)
      ix = &t->indexes[i];
  if (ix != NULL) {
    const char *status = ix->status;
    if (status && strcmp(status, "ACTIVE") != 0)
      return 0;
    if (st->n_created < GSI_MAX)
      st->created[st->n_created++] = st->pending;
    st->pending = NULL;
    return 1;
  }
  fail(ctx, TT_ERR_INTERNAL,
       "the backend accepted UpdateTable adding index %s to table %s but does not describe the "
       "index: it does not implement GSI creation",
       st->pending, ctx->model->table);
  return -1;
}

/* Compares the ACTIVE table `t` with what the models want. Returns true
 * when nothing is missing, false when an UpdateTable was started or the
 * ensure answered (409 or failure). */
static bool evolve(struct tt_orm_ctx *ctx, const struct tt_ddb_table_desc *t) {
  struct ensure_state *st = ctx->state;
  struct tt_ddb_table_request want, *req = tt_arena_alloc(ctx->arena, sizeof(*req));
  const struct tt_ddb_index *next = NULL;
  json_t *details = NULL;
  struct tt_error e;
  if (req == NULL || tt_orm_create_table_request(ctx->arena, ctx->orm->models, ctx->model, &want) != 0) {
    fail(ctx, TT_ERR_INTERNAL, "out of memory");
    return false;
  }
  if (tt_orm_table_diff(&want, t, &next, &details, &e) != 0) {
    tt_orm_fail(ctx->result, &e);
    ctx->result->details = details;
    tt_orm_ctx_finish(ctx);
    return false;
  }
  if (next == NULL)
    return true;
  if (st->gsi_failed && strcmp(st->gsi_failed, next->name) == 0) {
    /* Still missing after its UpdateTable failed: that error stands. */
    fail_backend(ctx, &st->gsi_error);
    return false;
  }
  st->adding = next->name; /* in the arena, as all of want */
  if (tt_orm_add_gsi_request(ctx->arena, &want, t, next, req) != 0) {
    fail(ctx, TT_ERR_INTERNAL, "out of memory");
    return false;
  }
  if (tt_orm_call_table(ctx, TT_DDB_UPDATE_TABLE, req, gsi_updated) != 0)
    fail_backend(ctx, &ctx->call.bc.error);
  return false;
}

static void created(struct tt_client_call *call) {
  struct tt_orm_ctx *ctx = call->arg;
  if (call->bc.status != 0 && strcmp(call->bc.error.type, "ResourceInUseException") != 0) {
    fail_backend(ctx, &call->bc.error);
    return;
  }
  /* ResourceInUse: another writer created it first, so it "existed". */
  ((struct ensure_state *)ctx->state)->created_table = call->bc.status == 0;
  describe_again(ctx);
}

static void ensure_described(struct tt_client_call *call) {
  struct tt_orm_ctx *ctx = call->arg;
  if (call->bc.status != 0) {
    struct ensure_state *st = ctx->state;
    if (strcmp(call->bc.error.type, "ResourceNotFoundException") == 0 && !st->create_tried) {
      st->create_tried = true;
      struct tt_ddb_table_request *req = tt_arena_alloc(ctx->arena, sizeof(*req));
      if (req && tt_orm_create_table_request(ctx->arena, ctx->orm->models, ctx->model, req) != 0)
        req = NULL;
      start_call(ctx, TT_DDB_CREATE_TABLE, req, created);
      return;
    }
    fail_backend(ctx, &call->bc.error);
    return;
  }
  const struct tt_ddb_table_desc *t = call->bc.table_out;
  const char *status = t->status;
  if (status && strcmp(status, "ACTIVE") != 0) {
    wait_for_active(ctx);
    return;
  }
  struct ensure_state *st = ctx->state;
  if (st->pending) {
    int p = pending_state(ctx, t);
    if (p < 0)
      return;
    if (p == 0) {
      wait_for_active(ctx);
      return;
    }
  }
  /* Before TTL: a table that cannot take the model is refused unchanged. */
  if (!st->ttl_checked && !evolve(ctx, t))
    return;
  /* Created or not: a table made by TableTheory's EnsureTable has no TTL. */
  if (!st->ttl_checked && tt_model_lifecycle(ctx->model, TT_LC_TTL) != NULL) {
    st->ttl_checked = true;
    describe_ttl(ctx);
    return;
  }
  answer_described(ctx, t, st);
}

static int table_ensure_run(struct tt_orm_ctx *ctx) {
  ctx->step = 0;
  ctx->state = tt_arena_alloc(ctx->arena, sizeof(struct ensure_state));
  if (ctx->state == NULL) {
    fail(ctx, TT_ERR_INTERNAL, "out of memory");
    return 0;
  }
  memset(ctx->state, 0, sizeof(struct ensure_state));
  describe_again(ctx);
  return 0;
}

int tt_orm_table_ensure(struct tt_orm_ctx *ctx) {
  return tt_orm_ctx_start(ctx, table_ensure_run);
}

/* ---- describe and delete ------------------------------------------------- */

static void described(struct tt_client_call *call) {
  struct tt_orm_ctx *ctx = call->arg;
  if (call->bc.status != 0) {
    fail_backend(ctx, &call->bc.error);
    return;
  }
  answer_described(ctx, call->bc.table_out, NULL);
}

static int table_describe_run(struct tt_orm_ctx *ctx) {
  start_call(ctx, TT_DDB_DESCRIBE_TABLE, name_only(ctx), described);
  return 0;
}

int tt_orm_table_describe(struct tt_orm_ctx *ctx) {
  return tt_orm_ctx_start(ctx, table_describe_run);
}

/* ---- delete: DeleteTable, then wait until it is gone ------------------------ */

static void delete_poll(struct tt_orm_ctx *ctx);

static void gone_checked(struct tt_client_call *call) {
  struct tt_orm_ctx *ctx = call->arg;
  if (call->bc.status != 0 && strcmp(call->bc.error.type, "ResourceNotFoundException") == 0) {
    ctx->result->status = 0;
    ctx->result->answer = TT_ORM_ANSWER_NONE;
    tt_orm_ctx_finish(ctx);
    return;
  }
  if (call->bc.status != 0) {
    fail_backend(ctx, &call->bc.error);
    return;
  }
  /* Still DELETING: DynamoDB removes tables asynchronously. */
  delete_poll(ctx);
}

static void delete_wait_done(struct tt_sleep_op *s) {
  struct tt_orm_ctx *ctx = s->arg;
  if (s->canceled) {
    fail(ctx, TT_ERR_BACKEND_TIMEOUT,
         "the request deadline passed while the table was being deleted");
    return;
  }
  start_call(ctx, TT_DDB_DESCRIBE_TABLE, name_only(ctx), gone_checked);
}

static void delete_poll(struct tt_orm_ctx *ctx) {
  if (!poll_later(ctx, ACTIVE_MAX_POLLS, ACTIVE_POLL_MS / 5, delete_wait_done))
    fail(ctx, TT_ERR_BACKEND_TIMEOUT, "the table was not deleted in time");
}

static void deleted(struct tt_client_call *call) {
  struct tt_orm_ctx *ctx = call->arg;
  if (call->bc.status != 0) {
    fail_backend(ctx, &call->bc.error);
    return;
  }
  /* Answer only once the table is gone, so a following PUT .../table or a
   * second DELETE behaves the same on every backend. */
  ctx->step = 0;
  start_call(ctx, TT_DDB_DESCRIBE_TABLE, name_only(ctx), gone_checked);
}

static int table_delete_run(struct tt_orm_ctx *ctx) {
  if (!ctx->orm->allow_table_delete) {
    fail(ctx, TT_ERR_FORBIDDEN,
         "table deletion is disabled; start the daemon with --allow-table-delete");
    return 0;
  }
  start_call(ctx, TT_DDB_DELETE_TABLE, name_only(ctx), deleted);
  return 0;
}

int tt_orm_table_delete(struct tt_orm_ctx *ctx) {
  return tt_orm_ctx_start(ctx, table_delete_run);
}
