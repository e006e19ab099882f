/* SPDX-License-Identifier: Apache-2.0 */
/* txn_run.c -- running a transaction: the reads before the write,
 * TransactWriteItems/TransactGetItems calls, cancellation reasons mapped
 * per item, retries of races and conflicts, and the answers. */
#include "orm/txn_internal.h"

/* ---- finishing ------------------------------------------------------------------- */

struct tt_orm_txn_state *txn_state_new(struct tt_orm_ctx *ctx, size_t n,
                                       struct tt_orm_txn_action *in) {
  struct tt_orm_txn_state *st = tt_arena_alloc(ctx->arena, sizeof(*st));
  if (in == NULL)
    in = tt_arena_alloc(ctx->arena, (n ? n : 1) * sizeof(*in));
  if (st == NULL || in == NULL)
    return NULL;
  st->ctx = ctx;
  st->acts = tt_arena_alloc(ctx->arena, (n ? n : 1) * sizeof(*st->acts));
  st->read_of = tt_arena_alloc(ctx->arena, (n ? n : 1) * sizeof(*st->read_of));
  if (st->acts == NULL || st->read_of == NULL)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    struct action *a = &st->acts[i];
    a->in = &in[i];
    a->plain.type = a->old.type = a->newvals.type = TT_AV_NULL;
  }
  st->now = tt_orm_now_ns(ctx->orm);
  return st;
}

void txn_state_free(struct tt_orm_txn_state *st) {
  for (size_t i = 0; i < st->n; i++) {
    struct action *a = &st->acts[i];
    if (st->got)
      tt_av_free(&st->got[i]);
    tt_av_free(&a->in->key);
    tt_av_free(&a->in->item);
    tt_orm_update_free(&a->in->upd);
    tt_cond_free(a->in->condition);
    a->in->condition = NULL;
    tt_av_free(&a->plain);
    tt_av_free(&a->old);
    tt_av_free(&a->newvals);
    for (size_t g = 0; g < a->n_guards; g++)
      tt_unique_guard_free(&a->guards[g]);
    a->n_guards = 0;
    if (a->m)
      tt_model_unref(a->m);
    a->m = NULL;
  }
  st->n = 0;
  txn_plan_free(&st->plan);
  txn_plan_free(&st->reads);
}

/* Ends the span of the attempt that ran, if any. */
static void attempt_span_end(struct tt_orm_txn_state *st, const char *retry_reason) {
  if (st->span == NULL)
    return;
  if (retry_reason)
    tt_span_str(st->span, "tabletheoryd.txn.retry_reason", retry_reason);
  else if (st->ctx->join->canceled)
    tt_span_status(st->span, TT_SPAN_ERROR, "RequestCanceled");
  tt_span_end(st->span);
  st->span = NULL;
}

static void finish(struct tt_orm_txn_state *st) {
  attempt_span_end(st, NULL);
  txn_state_free(st);
  tt_orm_ctx_finish(st->ctx);
}

void txn_fail(struct tt_orm_txn_state *st, const struct tt_error *err) {
  tt_orm_fail(st->ctx->result, err);
  finish(st);
}

static void fail_code(struct tt_orm_txn_state *st, enum tt_err_code code, const char *field,
                      const char *msg) {
  struct tt_error e;
  tt_error_set(&e, code, field, "%s", msg);
  txn_fail(st, &e);
}

static void fail_backend(struct tt_orm_txn_state *st, const struct tt_backend_error *e) {
  if (strcmp(e->type, "IdempotentParameterMismatchException") == 0) {
    fail_code(st, TT_ERR_VALIDATION, "client_token",
              "client_token was used in the last 10 minutes for a different request; use a "
              "new token for a new request");
    return;
  }
  const char *model = st->n == 1 ? st->acts[0].m->name : NULL;
  tt_orm_fail_backend(st->ctx->result, e, model);
  finish(st);
}

/* ---- running ---------------------------------------------------------------------- */

static void start_write(struct tt_orm_txn_state *st);

void txn_call(struct tt_orm_txn_state *st, enum tt_ddb_op op, const struct tt_ddb_txn_request *txn,
              tt_client_done_cb cb) {
  struct tt_client_call *c = &st->call;
  c->request_id = st->ctx->request_id;
  c->model = st->n ? st->acts[0].m->name : NULL;
  c->retry_conflicts = st->op && st->op->retry_conflicts;
  struct tt_join *join = st->ctx->join;
  struct tt_trace_ctx outer = join->trace;
  if (st->span)
    join->trace = st->span->ctx;
  struct tt_client *cl = st->ctx->orm->client;
  int started = txn ? tt_client_start_txn(cl, join, c, op, txn, cb, st)
                    : tt_client_start_item(cl, join, c, op, &st->reread, cb, st);
  join->trace = outer;
  if (started != 0)
    cb(c); /* refused: the step fails as its completion would */
}

/* Moves item i of a TransactGetItems' answer into *out: 0 found, 1 not
 * (*out a NULL value). */
static int take_item(struct tt_ddb_txn_result *r, size_t i, struct tt_av *out) {
  memset(out, 0, sizeof(*out));
  if (i < r->n_items && r->items[i].type == TT_AV_M) {
    *out = r->items[i];
    memset(&r->items[i], 0, sizeof(r->items[i]));
    return 0;
  }
  out->type = TT_AV_NULL;
  return 1;
}

static void read_cb(struct tt_client_call *c) {
  struct tt_orm_txn_state *st = c->arg;
  if (c->bc.status != 0) {
    fail_backend(st, &c->bc.error);
    return;
  }
  for (size_t r = 0; r < st->n_reads; r++) {
    struct action *a = &st->acts[st->read_of[r]];
    tt_av_free(&a->old);
    a->old_found = take_item(&c->bc.txn_out, r, &a->old) == 0;
  }
  if (st->single) {
    struct action *a = &st->acts[0];
    if (!a->old_found && ((a->in->kind == K_UPDATE && !a->in->upsert) || a->in->kind == K_DELETE)) {
      fail_code(st, TT_ERR_ITEM_NOT_FOUND, "key", "no item has this key");
      return;
    }
  }
  start_write(st);
}

void txn_start_attempt(struct tt_orm_txn_state *st) {
  st->n_reads = 0;
  /* One span per attempt: its guard reads and its write nest in it. */
  attempt_span_end(st, NULL);
  st->span = tt_span_start(&st->ctx->join->trace, "transaction attempt", TT_SPAN_INTERNAL);
  tt_span_int(st->span, "tabletheoryd.txn.attempt", (int64_t)st->attempts + 1);
  tt_span_int(st->span, "tabletheoryd.txn.actions", (int64_t)st->n);
  if (st->n)
    tt_span_str(st->span, "tabletheoryd.model", st->acts[0].m->name);
  txn_plan_free(&st->reads);
  for (size_t i = 0; i < st->n; i++) {
    struct action *a = &st->acts[i];
    struct txn_own *own;
    if (!a->needs_old)
      continue;
    struct tt_ddb_txn_step *s = txn_plan_add(&st->reads, TT_DDB_TXN_GET, a->m->table, &own);
    if (s == NULL) {
      fail_code(st, TT_ERR_INTERNAL, NULL, "out of memory");
      return;
    }
    s->r.key = &a->in->key;
    st->read_of[st->n_reads++] = i;
  }
  if (st->n_reads == 0) {
    start_write(st);
    return;
  }
  txn_call(st, TT_DDB_TRANSACT_GET_ITEMS, &st->reads.req, read_cb);
}

static void reread_opened_cb(void *arg, const struct tt_error *err) {
  struct tt_orm_txn_state *st = arg;
  if (err != NULL) {
    txn_fail(st, err);
    return;
  }
  tt_orm_item_answer(st->single, &st->acts[0].in->item, false);
  finish(st);
}

static void reread_cb(struct tt_client_call *c) {
  struct tt_orm_txn_state *st = c->arg;
  struct action *a = &st->acts[0];
  struct tt_error err;
  if (c->bc.status != 0) {
    fail_backend(st, &c->bc.error);
    return;
  }
  if (c->bc.item_out.type != TT_AV_M) {
    fail_code(st, TT_ERR_ITEM_NOT_FOUND, "key", "the item was deleted right after the update");
    return;
  }
  /* The new item holds envelopes: open them before answering (kept in the
   * action, which the KMS calls borrow it from). */
  tt_av_free(&a->in->item);
  a->in->item = c->bc.item_out;
  memset(&c->bc.item_out, 0, sizeof(c->bc.item_out));
  struct tt_orm_crypt *cr = tt_orm_crypt_new(st->ctx, false);
  if (cr == NULL || tt_orm_crypt_add_item_of(cr, a->m, &a->in->item, &err) != 0) {
    txn_fail(st, cr == NULL ? (tt_orm_oom(&err), &err) : &err);
    return;
  }
  tt_orm_crypt_run_then(cr, reread_opened_cb, st);
}

static void succeeded(struct tt_orm_txn_state *st) {
  struct tt_orm_result *r = st->ctx->result;
  struct action *a = st->single ? &st->acts[0] : NULL;
  if (a && a->in->kind == K_UPDATE) {
    /* TransactWriteItems returns no item: read the new one. */
    st->reread = (struct tt_ddb_item_request){
        .table = a->m->table, .key = &a->in->key, .consistent_read = true};
    txn_call(st, TT_DDB_GET_ITEM, NULL, reread_cb);
    return;
  }
  if (a && (a->in->kind == K_CREATE || a->in->kind == K_PUT)) {
    /* The item as sent, not its envelopes. */
    const struct tt_av *shown = a->plain.type == TT_AV_M ? &a->plain : &a->in->item;
    tt_orm_item_answer(st->single, shown, a->in->kind == K_CREATE || !a->old_found);
  } else {
    r->status = 0;
    r->answer = TT_ORM_ANSWER_NONE;
  }
  finish(st);
}

/* ---- cancellation ------------------------------------------------------------------ */

/* Whether the item DynamoDB found differs from what the read saw in what
 * the guards depend on (a concurrent writer came in between). */
static bool raced(const struct action *a, const struct tt_ddb_txn_reason *reason) {
  if (!a->needs_old)
    return false;
  const struct tt_av *cur = &reason->item;
  bool found = cur->type == TT_AV_M;
  bool differs = found != a->old_found;
  for (size_t i = 0; !differs && found && i < a->m->n_attrs; i++) {
    const struct tt_model_attr *u = &a->m->attrs[i];
    if (!u->unique)
      continue;
    const struct tt_av *x = tt_av_map_get(cur, u->name), *y = tt_av_map_get(&a->old, u->name);
    differs = (x == NULL) != (y == NULL) || (x && !tt_av_equal(x, y));
  }
  return differs;
}

/* Reason i of a cancellation, or NULL when the answer has none. */
static const struct tt_ddb_txn_reason *reason_at(const struct tt_ddb_txn_result *r, size_t i) {
  return i < r->n_reasons ? &r->reasons[i] : NULL;
}

static void judge(const struct action *a, const struct tt_ddb_txn_result *reasons,
                  struct tt_orm_txn_reason *out) {
  memset(out, 0, sizeof(*out));
  const struct tt_ddb_txn_reason *main = reason_at(reasons, a->main_at);
  const char *code = main ? main->code : NULL;
  if (code && strcmp(code, "ConditionalCheckFailed") == 0) {
    bool current = main->item.type == TT_AV_M;
    const struct tt_model_attr *v = tt_model_lifecycle(a->m, TT_LC_VERSION);
    const struct tt_av *have = current ? tt_orm_item_version(a->m, &main->item) : NULL;
    if (have) {
      out->has_version = true;
      out->version = strtoll(have->u.bytes, NULL, 10);
    }
    if (a->in->kind == K_CREATE || (a->create_only && current))
      out->v = TT_ORM_TXN_EXISTS;
    else if (a->in->expected.present && v &&
             (!out->has_version || out->version != a->in->expected.version))
      out->v = TT_ORM_TXN_VERSION;
    else if (!current && ((a->in->kind == K_UPDATE && !a->in->upsert) ||
                          (a->in->kind == K_DELETE && a->must_exist)))
      out->v = TT_ORM_TXN_MISSING; /* the existence the action implies */
    else
      out->v = TT_ORM_TXN_CONDITION;
    return;
  }
  if (code && strcmp(code, "None") != 0) {
    out->v = TT_ORM_TXN_OTHER;
    out->code = code;
    out->message = main->message;
    return;
  }
  for (size_t g = 0; g < a->n_guards; g++) {
    const struct tt_ddb_txn_reason *gr = reason_at(reasons, a->guard_at + g);
    const char *gc = gr ? gr->code : NULL;
    if (gc && strcmp(gc, "ConditionalCheckFailed") == 0 && a->guards[g].claim) {
      out->v = TT_ORM_TXN_UNIQUE;
      out->attr = a->guards[g].attr;
      return;
    }
    if (gc && strcmp(gc, "None") != 0) {
      out->v = TT_ORM_TXN_OTHER;
      out->code = gc;
      out->message = gr->message;
      return;
    }
  }
  out->v = TT_ORM_TXN_NONE;
}

/* The single-item answer of a failed write. */
static void fail_single(struct tt_orm_txn_state *st, const struct tt_orm_txn_reason *r) {
  struct action *a = &st->acts[0];
  struct tt_error e;
  switch (r->v) {
  case TT_ORM_TXN_EXISTS:
    fail_code(st, TT_ERR_CONDITION_FAILED, "key", "an item with this key already exists");
    return;
  case TT_ORM_TXN_MISSING:
    fail_code(st, TT_ERR_ITEM_NOT_FOUND, "key", "no item has this key");
    return;
  case TT_ORM_TXN_VERSION:
    tt_orm_fail_version(st->ctx->result, a->in->expected.version,
                        r->has_version ? &r->version : NULL);
    finish(st);
    return;
  case TT_ORM_TXN_UNIQUE:
    tt_error_set(&e, TT_ERR_CONDITION_FAILED, r->attr->name,
                 "another item already has this value of unique attribute %s", r->attr->name);
    txn_fail(st, &e);
    return;
  case TT_ORM_TXN_OTHER:
    if (strcmp(r->code, "TransactionConflict") == 0)
      tt_error_set(&e, TT_ERR_BACKEND_UNAVAILABLE, NULL,
                   "another transaction changed the item at the same time; retry");
    else if (strcmp(r->code, "ValidationError") == 0)
      tt_error_set(&e, TT_ERR_VALIDATION, NULL, "%s",
                   r->message ? r->message : "the backend refused the write");
    else
      tt_error_set(&e, TT_ERR_BACKEND_UNAVAILABLE, NULL, "the backend canceled the write (%s)",
                   r->code);
    txn_fail(st, &e);
    return;
  default:
    break;
  }
  fail_code(st, TT_ERR_CONDITION_FAILED, "condition", "the condition evaluated to false");
}

/* Every retry is a metric and a log line (docs/design.md, "Retries"); no values. */
static void note_retry(struct tt_orm_txn_state *st, const char *reason) {
  attempt_span_end(st, reason);
  struct tt_families *fams = st->ctx->orm->client->fams;
  if (fams) {
    const char *labels[2] = {"TransactWriteItems", reason};
    tt_metric_add(fams->backend_retries, labels, 1);
  }
  struct tt_log_line l;
  tt_log_begin(&l, TT_LOG_WARN, "txn.retry");
  tt_log_str(&l, "request_id", st->ctx->request_id);
  tt_log_str(&l, "op", "TransactWriteItems");
  tt_log_str(&l, "model", st->n ? st->acts[0].m->name : NULL);
  tt_log_str(&l, "reason", reason);
  tt_log_int(&l, "attempt", (int64_t)st->attempts + 1);
  tt_log_end(&l);
}

static void retry_sleep_done(struct tt_sleep_op *s) {
  struct tt_orm_txn_state *st = s->arg;
  if (s->canceled || st->ctx->join->canceled) {
    fail_code(st, TT_ERR_BACKEND_TIMEOUT, NULL,
              "the request ended while waiting to retry a conflicting transaction");
    return;
  }
  txn_start_attempt(st);
}

static void canceled(struct tt_orm_txn_state *st, const struct tt_ddb_txn_result *reasons) {
  /* A race with another writer between our read and our write: read again. */
  bool race = false, conflict_only = true, any = false;
  for (size_t i = 0; i < st->n; i++) {
    struct action *a = &st->acts[i];
    const struct tt_ddb_txn_reason *mr = reason_at(reasons, a->main_at);
    a->raced = mr && strcmp(mr->code, "ConditionalCheckFailed") == 0 && raced(a, mr);
    race |= a->raced;
  }
  if (race && st->attempts < TT_ORM_TXN_MAX_ATTEMPTS) {
    note_retry(st, "race");
    txn_start_attempt(st);
    return;
  }
  struct tt_orm_txn_reason *rs = tt_arena_alloc(st->ctx->arena, st->n * sizeof(*rs));
  if (rs == NULL) {
    fail_code(st, TT_ERR_INTERNAL, NULL, "out of memory");
    return;
  }
  for (size_t i = 0; i < st->n; i++) {
    struct action *a = &st->acts[i];
    judge(a, reasons, &rs[i]);
    if (a->raced) {
      /* Still racing after every attempt: as DynamoDB says of conflicts. */
      rs[i].v = TT_ORM_TXN_OTHER;
      rs[i].code = "TransactionConflict";
      rs[i].message = "another writer kept changing the item; retry";
    }
    if (rs[i].v == TT_ORM_TXN_NONE)
      continue;
    any = true;
    if (rs[i].v != TT_ORM_TXN_OTHER || strcmp(rs[i].code, "TransactionConflict") != 0)
      conflict_only = false;
  }
  if (any && conflict_only && st->op && st->op->retry_conflicts &&
      st->conflicts + 1 < st->ctx->orm->client->retry.max_attempts) {
    struct tt_backend_error synthetic;
    memset(&synthetic, 0, sizeof(synthetic));
    uint64_t wait = tt_client_backoff_ms(st->ctx->orm->client, &synthetic, ++st->conflicts);
    note_retry(st, "conflict");
    st->sleep.on_done = retry_sleep_done;
    st->sleep.arg = st;
    if (tt_sleep_op_start(&st->sleep, st->ctx->orm->client->loop, st->ctx->join, wait, false) !=
        0)
      fail_code(st, TT_ERR_INTERNAL, NULL, "could not arm the retry timer");
    return;
  }
  if (st->single) {
    fail_single(st, &rs[0]);
    return;
  }
  struct tt_error err;
  tt_error_set(&err, TT_ERR_TRANSACTION_CANCELED, NULL,
               "the transaction was canceled and nothing was written; see details.reasons");
  for (size_t i = 0; i < st->n; i++) { /* the op keeps DynamoDB's words past its answer */
    const char *code = rs[i].code, *msg = rs[i].message;
    if (rs[i].v != TT_ORM_TXN_OTHER)
      continue;
    rs[i].code = tt_arena_strndup(st->ctx->arena, code, strlen(code));
    rs[i].message = msg ? tt_arena_strndup(st->ctx->arena, msg, strlen(msg)) : NULL;
    if (rs[i].code == NULL || (msg && rs[i].message == NULL))
      tt_orm_oom(&err);
  }
  if (err.code != TT_ERR_INTERNAL)
    st->op->reasons = rs;
  txn_fail(st, &err);
}

static void write_cb(struct tt_client_call *c) {
  struct tt_orm_txn_state *st = c->arg;
  if (c->bc.status == 0) {
    succeeded(st);
    return;
  }
  if (strcmp(c->bc.error.type, "TransactionCanceledException") == 0) {
    canceled(st, &c->bc.txn_out);
    return;
  }
  fail_backend(st, &c->bc.error);
}

static void start_write(struct tt_orm_txn_state *st) {
  struct tt_error err;
  if (txn_build_request(st, true, &err) != 0) {
    txn_fail(st, &err);
    return;
  }
  st->attempts++;
  txn_call(st, TT_DDB_TRANSACT_WRITE_ITEMS, &st->plan.req, write_cb);
}

/* ---- transactions/get ----------------------------------------------------------------- */

/* The answer of a TransactGetItems: st->got, opened, handed to the op. */
static void got_opened_cb(void *arg, const struct tt_error *err) {
  struct tt_orm_txn_state *st = arg;
  if (err != NULL) {
    txn_fail(st, err);
    return;
  }
  st->op->items = st->got;
  st->got = NULL;
  st->ctx->result->status = 0;
  st->ctx->result->answer = TT_ORM_ANSWER_NONE;
  finish(st);
}

void txn_get_cb(struct tt_client_call *c) {
  struct tt_orm_txn_state *st = c->arg;
  if (c->bc.status != 0) {
    fail_backend(st, &c->bc.error);
    return;
  }
  struct tt_error err;
  struct tt_orm_crypt *cr = tt_orm_crypt_new(st->ctx, false);
  st->got = tt_arena_alloc(st->ctx->arena, st->n * sizeof(*st->got));
  if (cr == NULL || st->got == NULL) {
    txn_fail(st, (tt_orm_oom(&err), &err));
    return;
  }
  for (size_t i = 0; i < st->n; i++) {
    if (take_item(&c->bc.txn_out, i, &st->got[i]) == 0 &&
        tt_orm_crypt_add_item_of(cr, st->acts[i].m, &st->got[i], &err) != 0) {
      txn_fail(st, &err);
      return;
    }
  }
  tt_orm_crypt_run_then(cr, got_opened_cb, st);
}

/* ---- sealing ------------------------------------------------------------------------- */

/* After sealing: the transaction fails, or goes on with st->sealed_next. */
static void sealed_cb(void *arg, const struct tt_error *err) {
  struct tt_orm_txn_state *st = arg;
  if (err != NULL)
    txn_fail(st, err);
  else
    st->sealed_next(st);
}

/* Seals in place the items of creates and puts and the values updates set
 * (item.c refused every other action on an encrypted attribute); a single
 * create or put keeps a plain copy of its item for the answer. Unique
 * attributes are never encrypted (the model does not load), so the guards,
 * the snapshot conditions and the race checks see plain values. */
int txn_seal_actions(struct tt_orm_txn_state *st, void (*next)(struct tt_orm_txn_state *st),
                     struct tt_error *err) {
  struct tt_orm_crypt *c = tt_orm_crypt_new(st->ctx, true);
  if (c == NULL)
    return tt_orm_oom(err);
  for (size_t i = 0; i < st->n; i++) {
    struct action *a = &st->acts[i];
    if (!tt_orm_crypt_model(a->m))
      continue;
    if (st->single && a->in->item.type == TT_AV_M && tt_av_clone(&a->plain, &a->in->item) != 0)
      return tt_orm_oom(err);
    if (tt_orm_crypt_add_item_of(c, a->m, &a->in->item, err) != 0)
      return -1;
    if (a->in->kind == K_UPDATE && tt_orm_crypt_add_update(c, a->m, &a->in->upd, err) != 0)
      return -1;
  }
  st->sealed_next = next;
  tt_orm_crypt_run_then(c, sealed_cb, st);
  return 0;
}
