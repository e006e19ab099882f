/* SPDX-License-Identifier: Apache-2.0 */
/* batch.c -- typed batch-get and batch-write over BatchGetItem/BatchWriteItem:
 * check everything, split into chunks, run a bounded number of chunks at
 * once, retry unprocessed keys and items with backoff, join every worker,
 * answer per entry. */
#include "orm/batch.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/sleep_op.h"
#include "obs/log.h"
#include "orm/crypt.h"
#include "orm/key.h"
#include "orm/policy.h"
#include "orm/query.h"
#include "orm/unique.h"
#include "util/hash.h"
#include "value/codec_ddb.h"

/* Unprocessed work is not retried when the backoff would end closer than
 * this to the request deadline: the answer would come too late. */
#define DEADLINE_MARGIN_NS (50u * 1000000u)
/* Room for the RequestItems wrapper of a BatchWriteItem call. */
#define WRITE_ENVELOPE_BYTES 1024u

/* ---- keys as canonical text, for duplicates and for matching answers ---- */

struct kslot {
  char *text; /* NULL when free */
  size_t len;
  size_t index;
};

struct keymap {
  struct kslot *slots;
  size_t cap; /* a power of two */
};

static int keymap_init(struct keymap *km, size_t n) {
  km->cap = 16;
  while (km->cap < n * 2)
    km->cap *= 2;
  km->slots = calloc(km->cap, sizeof(*km->slots));
  return km->slots ? 0 : -1;
}

static void keymap_free(struct keymap *km) {
  for (size_t i = 0; km->slots && i < km->cap; i++)
    free(km->slots[i].text);
  free(km->slots);
  km->slots = NULL;
}

static struct kslot *keymap_slot(const struct keymap *km, const char *text, size_t len) {
  size_t i = (size_t)tt_fnv1a(text, len) & (km->cap - 1);
  for (;;) {
    struct kslot *s = &km->slots[i];
    if (s->text == NULL || (s->len == len && memcmp(s->text, text, len) == 0))
      return s;
    i = (i + 1) & (km->cap - 1);
  }
}

/* The canonical text of a key (an M): DynamoDB JSON, names sorted, numbers
 * canonical. Returns 0 or -1 (out of memory). */
static int key_text(const struct tt_av *key, struct tt_buf *out) {
  tt_buf_reset(out);
  return tt_ddb_item_write(out, key, 0);
}

/* Adds key -> index. Returns 0, 1 when the key is already there (*dup gets
 * its index), -1 when out of memory. */
static int keymap_add(struct keymap *km, const struct tt_av *key, size_t index, size_t *dup,
                      struct tt_buf *scratch) {
  if (key_text(key, scratch) != 0)
    return -1;
  struct kslot *s = keymap_slot(km, scratch->data, scratch->len);
  if (s->text) {
    *dup = s->index;
    return 1;
  }
  if ((s->text = malloc(scratch->len + 1)) == NULL)
    return -1;
  memcpy(s->text, scratch->data, scratch->len + 1);
  s->len = scratch->len;
  s->index = index;
  return 0;
}

/* Index of `key`, or -1 when it was not requested. */
static long keymap_find(const struct keymap *km, const struct tt_av *key, struct tt_buf *scratch) {
  if (key_text(key, scratch) != 0)
    return -1;
  const struct kslot *s = keymap_slot(km, scratch->data, scratch->len);
  return s->text ? (long)s->index : -1;
}

/* ---- state ------------------------------------------------------------------ */

/* What the batch keeps of each entry. */
struct breq {
  size_t pos;        /* index inside `keys`, `put` or `delete` */
  size_t wire_bytes; /* size of its DynamoDB JSON (writes) */
};

struct chunk {
  struct tt_orm_batch_state *st;
  size_t *pending; /* request indexes not yet done */
  size_t npending;
  unsigned round; /* unprocessed retries so far */
  struct tt_client_call call; /* its rounds, one after another */
  struct tt_sleep_op sleep;
  struct tt_span *span; /* the chunk's span, over its rounds; NULL when not traced */
  /* The round's typed request: its pending entries, borrowing the keys
   * and items of the requests. */
  struct tt_ddb_batch_request req;
  struct tt_ddb_batch_table table;
  struct tt_ddb_batch_entry *entries;
};

struct tt_orm_batch_state {
  struct tt_orm_batch_op *op;
  struct tt_orm_batch_entry *ents; /* op->entries */
  struct breq *reqs;
  size_t n;
  struct keymap keys;
  struct tt_buf scratch;
  struct chunk *chunks;
  size_t nchunks, next_chunk;
  unsigned running; /* chunks started and not finished, + 1 while starting */
  /* batch-get */
  char *projection;
  struct tt_av proj_names; /* M; NULL-typed or empty when none */
  /* outcome */
  bool failed; /* a backend error: stop starting chunks */
  struct tt_error first_err;
  json_t *first_details;
  uint32_t retry_after_s;
  bool gave_up; /* unprocessed work left at the deadline */
  bool opened;  /* encrypted model: the items found were decrypted */
};

unsigned tt_orm_batch_concurrency(const struct tt_orm *orm) {
  unsigned c = orm ? orm->batch_concurrency : 0;
  return c ? c : TT_ORM_BATCH_DEFAULT_CONCURRENCY;
}

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void state_free(struct tt_orm_batch_state *st) {
  free(st->reqs);
  st->reqs = NULL;
  keymap_free(&st->keys);
  tt_buf_free(&st->scratch);
  free(st->projection);
  st->projection = NULL;
  tt_av_free(&st->proj_names);
  for (size_t i = 0; st->chunks && i < st->nchunks; i++) {
    free(st->chunks[i].entries);
    st->chunks[i].entries = NULL;
  }
  json_decref(st->first_details);
  st->first_details = NULL;
}

static void op_finish(struct tt_orm_batch_op *op) {
  if (op->st)
    state_free(op->st);
  tt_orm_ctx_finish(&op->ctx);
}

static int fail_now(struct tt_orm_batch_op *op, const struct tt_error *err) {
  tt_orm_fail(op->ctx.result, err);
  op_finish(op);
  return 0;
}

/* ---- validation ------------------------------------------------------------- */

static const char *list_name(const struct tt_orm_batch_state *st, size_t i) {
  return !st->op->write ? "keys" : st->ents[i].put ? "put" : "delete";
}

int tt_orm_batch_check_counts(const struct tt_model *m, bool write, size_t n_puts,
                              size_t n_deletes, struct tt_error *err) {
  size_t np = write ? n_puts : 0, nd = n_deletes;
  if (!write && nd > TT_ORM_BATCH_MAX)
    return tt_error_set(err, TT_ERR_VALIDATION, "keys",
                        "a batch-get takes at most %d keys; split the request",
                        TT_ORM_BATCH_MAX);
  if (!write)
    return 0;
  if (np + nd > TT_ORM_BATCH_MAX)
    return tt_error_set(err, TT_ERR_VALIDATION, np ? "put" : "delete",
                        "a batch-write takes at most %d requests (puts and deletes together); "
                        "split the request",
                        TT_ORM_BATCH_MAX);
  if (np + nd > 0 && tt_unique_model_has(m)) {
    for (size_t i = 0; i < m->n_attrs; i++)
      if (m->attrs[i].unique)
        return tt_error_set(err, TT_ERR_VALIDATION, np ? "put" : "delete",
                            "model %s keeps %s unique, which a batch-write cannot do (it has "
                            "no conditions); use POST /v1/transactions/write or the item "
                            "endpoints",
                            m->name, m->attrs[i].name);
  }
  /* A BatchWriteItem put has no condition: it can only ever be a blind
   * create-or-replace, which TableTheory refuses for write_once models and
   * models with protected attributes. */
  if ((np > 0 && tt_orm_policy_check_write(m, TT_ORM_POLICY_PUT, "put", err) != 0) ||
      (nd > 0 && tt_orm_policy_check_write(m, TT_ORM_POLICY_DELETE, "delete", err) != 0))
    return -1;
  return 0;
}

/* The projection of a batch-get: the caller's paths plus the key
 * attributes, without which found items could not be matched to keys. */
static int build_projection(struct tt_orm_batch_state *st, struct tt_error *err) {
  const struct tt_model *m = st->op->ctx.model;
  const char *keys[2] = {m->pk->name, m->sk ? m->sk->name : NULL};
  struct tt_select all;
  struct tt_av values;
  if (st->op->select.n == 0)
    return 0;
  struct tt_expr_builder *b = tt_expr_builder_new();
  int rc = b ? tt_orm_select_with_keys(st->op->ctx.arena, &st->op->select, keys, m->sk ? 2 : 1,
                                       false, &all, err)
             : tt_orm_oom(err);
  if (rc == 0 && (rc = tt_expr_build_projection(b, &all, "select", &st->projection, err)) == 0 &&
      (rc = tt_expr_builder_take(b, &st->proj_names, &values, err)) == 0)
    tt_av_free(&values);
  tt_expr_builder_free(b);
  return rc;
}

static int wire_size(const struct tt_av *v, struct tt_buf *scratch, size_t *out) {
  tt_buf_reset(scratch);
  if (tt_ddb_item_write(scratch, v, 0) != 0)
    return -1;
  *out = scratch->len + 32; /* {"PutRequest":{"Item": ... }}, */
  return 0;
}

/* Checks entry i -- its key (a put's, taken from its item, which checks
 * it), its size -- and registers its key; counts[put] numbers it inside
 * its list. */
static int check_entry(struct tt_orm_batch_state *st, size_t i, size_t counts[2],
                       struct tt_error *err) {
  const struct tt_model *m = st->op->ctx.model;
  struct tt_orm_batch_entry *e = &st->ents[i];
  bool put = st->op->write && e->put;
  char field[32];
  st->reqs[i].pos = counts[put]++;
  snprintf(field, sizeof(field), "%s[%zu]", list_name(st, i), st->reqs[i].pos);
  if (put)
    tt_av_free(&e->key);
  if (put ? tt_orm_key_of_item(m, &e->item, field, &e->key, err) != 0
          : tt_orm_key_check(m, &e->key, field, err) != 0)
    return -1;
  if (st->op->write &&
      wire_size(put ? &e->item : &e->key, &st->scratch, &st->reqs[i].wire_bytes) != 0)
    return tt_orm_oom(err);
  /* A key named twice is a ValidationError that names both places (never
   * the key itself). */
  size_t dup = 0;
  int rc = keymap_add(&st->keys, &e->key, i, &dup, &st->scratch);
  if (rc < 0)
    return tt_orm_oom(err);
  if (rc == 1)
    return tt_error_set(err, TT_ERR_VALIDATION, field,
                        "%s names the same item as %s[%zu]; a batch may name each item once",
                        field, list_name(st, dup), st->reqs[dup].pos);
  return 0;
}

/* The refusals tt_orm_batch_start makes before its entries, then those of
 * entries [0, n), in order, into a new op->st. Returns 0 or -1. */
static int check_batch(struct tt_orm_batch_op *op, size_t n, struct tt_error *err) {
  const struct tt_model *m = op->ctx.model;
  const struct tt_select *select = op->write ? NULL : &op->select;
  struct tt_orm_batch_state *st = op->st = tt_arena_alloc(op->ctx.arena, sizeof(*op->st));
  if (st == NULL)
    return tt_orm_oom(err);
  st->op = op;
  st->ents = op->entries;
  tt_buf_init(&st->scratch, 0);
  op->processed = 0;
  op->incomplete = false;
  op->cause = TT_OK;
  size_t np = 0;
  for (size_t i = 0; op->write && i < op->n_entries; i++)
    np += op->entries[i].put;
  if (tt_orm_query_check_crypt(op->ctx.orm, m, NULL, NULL, select, err) != 0 ||
      tt_orm_batch_check_counts(m, op->write, np, op->n_entries - np, err) != 0 ||
      tt_orm_check_select(m, select, "select", err) != 0)
    return -1;
  if (keymap_init(&st->keys, n) != 0 || (n && (st->reqs = calloc(n, sizeof(*st->reqs))) == NULL))
    return tt_orm_oom(err);
  st->n = n;
  size_t counts[2] = {0, 0};
  for (size_t i = 0; i < n; i++)
    if (check_entry(st, i, counts, err) != 0)
      return -1;
  return 0;
}

/* Splits the requests, in order, into chunks of DynamoDB's sizes. */
static int make_chunks(struct tt_orm_batch_state *st, struct tt_error *err) {
  size_t per = st->op->write ? TT_ORM_BATCH_WRITE_CHUNK : TT_ORM_BATCH_GET_CHUNK;
  size_t max = st->n; /* at most one chunk per request */
  st->chunks = tt_arena_alloc(st->op->ctx.arena, (max ? max : 1) * sizeof(*st->chunks));
  if (st->chunks == NULL)
    return tt_orm_oom(err);
  size_t i = 0;
  while (i < st->n) {
    struct chunk *ch = &st->chunks[st->nchunks++];
    ch->st = st;
    ch->pending = tt_arena_alloc(st->op->ctx.arena, per * sizeof(*ch->pending));
    if (ch->pending == NULL)
      return tt_orm_oom(err);
    size_t bytes = WRITE_ENVELOPE_BYTES;
    while (i < st->n && ch->npending < per) {
      size_t b = st->op->write ? st->reqs[i].wire_bytes : 0;
      if (ch->npending > 0 && bytes + b > TT_ORM_BATCH_REQUEST_BYTES)
        break; /* the 16 MB request limit */
      bytes += b;
      ch->pending[ch->npending++] = i++;
    }
  }
  return 0;
}

/* ---- running chunks --------------------------------------------------------- */

static void start_chunk(struct chunk *ch);
static void finish_all(struct tt_orm_batch_state *st);

static bool stopping(const struct tt_orm_batch_state *st) {
  return st->failed || st->op->ctx.join->canceled;
}

/* A chunk finished (done, failed or gave up): its lane takes the next one. */
static void chunk_done(struct chunk *ch) {
  struct tt_orm_batch_state *st = ch->st;
  if (ch->span) {
    tt_span_int(ch->span, "tabletheoryd.batch.unprocessed_rounds", ch->round);
    tt_span_int(ch->span, "tabletheoryd.batch.left", (int64_t)ch->npending);
    if (st->failed || st->op->ctx.join->canceled)
      tt_span_status(ch->span, TT_SPAN_ERROR,
                     st->op->ctx.join->canceled && !st->failed ? "RequestCanceled" : "Failed");
    tt_span_end(ch->span);
    ch->span = NULL;
  }
  if (!stopping(st) && st->next_chunk < st->nchunks) {
    start_chunk(&st->chunks[st->next_chunk++]);
    return;
  }
  if (--st->running == 0)
    finish_all(st);
}

/* The typed request of the chunk's round: its pending requests. Returns
 * 0 or -1 (memory). */
static int chunk_request(struct chunk *ch) {
  struct tt_orm_batch_state *st = ch->st;
  free(ch->entries);
  ch->entries = calloc(ch->npending ? ch->npending : 1, sizeof(*ch->entries));
  if (ch->entries == NULL)
    return -1;
  for (size_t i = 0; i < ch->npending; i++) {
    const struct tt_orm_batch_entry *e = &st->ents[ch->pending[i]];
    ch->entries[i].put = st->op->write && e->put;
    ch->entries[i].value = ch->entries[i].put ? &e->item : &e->key;
  }
  ch->table = (struct tt_ddb_batch_table){.table = st->op->ctx.model->table};
  if (!st->op->write) {
    ch->table.consistent_read = st->op->consistent;
    ch->table.projection = st->projection;
    if (st->projection && st->proj_names.type == TT_AV_M && st->proj_names.len)
      ch->table.names = &st->proj_names;
  }
  ch->req = (struct tt_ddb_batch_request){
      .tables = &ch->table, .n_tables = 1, .entries = ch->entries, .n_entries = ch->npending};
  return 0;
}

static void chunk_cb(struct tt_client_call *call);

static void start_chunk(struct chunk *ch) {
  struct tt_orm_batch_state *st = ch->st;
  struct tt_orm_batch_op *op = st->op;
  int built = chunk_request(ch);
  struct tt_client_call *call = &ch->call;
  call->request_id = op->ctx.request_id;
  call->model = op->ctx.model->name;
  enum tt_ddb_op dop = op->write ? TT_DDB_BATCH_WRITE_ITEM : TT_DDB_BATCH_GET_ITEM;
  struct tt_join *join = op->ctx.join;
  if (ch->span == NULL && ch->round == 0) {
    /* One span per chunk, over its unprocessed rounds: the attempts nest in it. */
    ch->span = tt_span_start(&join->trace, op->write ? "batch-write chunk" : "batch-get chunk",
                             TT_SPAN_INTERNAL);
    tt_span_int(ch->span, "tabletheoryd.batch.chunk", (int64_t)(ch - st->chunks));
    tt_span_int(ch->span, "tabletheoryd.batch.requests", (int64_t)ch->npending);
    tt_span_str(ch->span, "tabletheoryd.model", op->ctx.model->name);
  }
  struct tt_trace_ctx outer = join->trace;
  if (ch->span)
    join->trace = ch->span->ctx;
  /* Without its request (out of memory) the start is refused. */
  int started = tt_client_start_batch(op->ctx.orm->client, join, call, dop,
                                      built == 0 ? &ch->req : NULL, chunk_cb, ch);
  join->trace = outer;
  if (started != 0)
    chunk_cb(call); /* refused: the chunk fails as its completion would */
}

/* Records the first backend failure and stops the other chunks. */
static void chunk_failed(struct tt_orm_batch_state *st, const struct tt_backend_error *e) {
  if (st->failed)
    return;
  struct tt_orm_result scratch;
  memset(&scratch, 0, sizeof(scratch));
  tt_orm_fail_backend(&scratch, e, st->op->ctx.model->name);
  st->failed = true;
  st->first_err = scratch.err;
  st->retry_after_s = scratch.retry_after_s;
  st->first_details = scratch.details;
  /* The others stop too; they are still joined before the answer. */
  tt_join_cancel(st->op->ctx.join);
}

/* The entry an answer's item (found, or an unprocessed request) is of, or
 * -1 when it holds no key that was requested. */
static long answer_index(struct tt_orm_batch_state *st, const struct tt_av *v) {
  struct tt_av key;
  struct tt_error err;
  long at = tt_orm_key_of_item(st->op->ctx.model, v, NULL, &key, &err) == 0
                ? keymap_find(&st->keys, &key, &st->scratch)
                : -1;
  tt_av_free(&key);
  return at;
}

/* Marks the requests that came back unprocessed; every other pending
 * request is done; the items read are kept (moved out of r). Returns 0 or
 * -1 (an answer we cannot match). */
static int settle(struct chunk *ch, struct tt_ddb_batch_result *r) {
  struct tt_orm_batch_state *st = ch->st;
  bool *keep = calloc(ch->npending ? ch->npending : 1, sizeof(bool));
  if (keep == NULL)
    return -1;
  int rc = -1;
  for (size_t i = 0; !st->op->write && i < r->n_items; i++) {
    long at = answer_index(st, &r->items[i].value);
    if (at < 0)
      goto done;
    tt_av_free(&st->ents[at].found);
    st->ents[at].found = r->items[i].value;
    memset(&r->items[i].value, 0, sizeof(r->items[i].value));
  }
  for (size_t i = 0; i < r->n_left; i++) {
    long at = answer_index(st, &r->left[i].value);
    if (at < 0)
      goto done;
    for (size_t k = 0; k < ch->npending; k++)
      if (ch->pending[k] == (size_t)at)
        keep[k] = true;
  }
  size_t n = 0;
  for (size_t k = 0; k < ch->npending; k++) {
    if (keep[k]) {
      ch->pending[n++] = ch->pending[k];
    } else {
      st->ents[ch->pending[k]].done = true;
      st->op->processed++;
    }
  }
  ch->npending = n;
  rc = 0;
done:
  free(keep);
  return rc;
}

static void sleep_done(struct tt_sleep_op *s) {
  struct chunk *ch = s->arg;
  if (s->canceled || stopping(ch->st)) {
    chunk_done(ch);
    return;
  }
  start_chunk(ch);
}

static void log_unprocessed(struct chunk *ch, uint64_t wait_ms, bool giving_up) {
  struct tt_orm_batch_state *st = ch->st;
  const char *op = st->op->write ? "BatchWriteItem" : "BatchGetItem";
  struct tt_families *fams = st->op->ctx.orm->client->fams;
  if (fams && !giving_up) {
    const char *labels[2] = {op, "unprocessed"};
    tt_metric_add(fams->backend_retries, labels, 1);
  }
  struct tt_log_line l;
  tt_log_begin(&l, TT_LOG_WARN, giving_up ? "batch.unprocessed_left" : "batch.unprocessed_retry");
  tt_log_str(&l, "request_id", st->op->ctx.request_id);
  tt_log_str(&l, "op", op);
  tt_log_str(&l, "model", st->op->ctx.model->name);
  tt_log_int(&l, "attempt", (int64_t)ch->round + 1);
  tt_log_int(&l, "unprocessed", (int64_t)ch->npending);
  if (!giving_up)
    tt_log_int(&l, "backoff_ms", (int64_t)wait_ms);
  tt_log_end(&l);
}

static void chunk_cb(struct tt_client_call *call) {
  struct chunk *ch = call->arg;
  struct tt_orm_batch_state *st = ch->st;
  struct tt_orm_batch_op *op = st->op;
  if (call->bc.status != 0) {
    chunk_failed(st, &call->bc.error);
    chunk_done(ch);
    return;
  }
  if (settle(ch, &call->bc.batch_out) != 0) {
    struct tt_backend_error e;
    memset(&e, 0, sizeof(e));
    tt_backend_error_set(&e, "InternalFailure", 500,
                         "the backend answered keys that were not requested");
    e.retryable = false;
    chunk_failed(st, &e);
    tt_backend_error_clear(&e);
    chunk_done(ch);
    return;
  }
  if (ch->npending == 0 || stopping(st)) {
    chunk_done(ch);
    return;
  }
  /* Unprocessed work: back off (full jitter, growing) and send the rest
   * again, unless the deadline would pass first. */
  struct tt_backend_error synthetic;
  memset(&synthetic, 0, sizeof(synthetic));
  uint64_t wait = tt_client_backoff_ms(op->ctx.orm->client, &synthetic, ch->round + 1);
  if (op->deadline_ns && mono_ns() + wait * 1000000u + DEADLINE_MARGIN_NS >= op->deadline_ns) {
    st->gave_up = true;
    log_unprocessed(ch, wait, true);
    chunk_done(ch);
    return;
  }
  log_unprocessed(ch, wait, false);
  ch->round++;
  ch->sleep.on_done = sleep_done;
  ch->sleep.arg = ch;
  if (tt_sleep_op_start(&ch->sleep, op->ctx.orm->client->loop, op->ctx.join, wait, false) != 0) {
    st->gave_up = true;
    chunk_done(ch);
  }
}

/* ---- the answer ----------------------------------------------------------- */

static void found_opened_cb(void *arg, const struct tt_error *err);

static void finish_all(struct tt_orm_batch_state *st) {
  struct tt_orm_batch_op *op = st->op;
  struct tt_orm_result *r = op->ctx.result;
  struct tt_error err;
  if (op->processed == st->n) {
    if (!op->write && !st->opened && tt_orm_crypt_model(op->ctx.model)) {
      /* The items found hold envelopes: open them, then come back. */
      struct tt_orm_crypt *c = tt_orm_crypt_new(&op->ctx, false);
      int rc = c == NULL ? tt_orm_oom(&err) : 0;
      for (size_t i = 0; rc == 0 && i < st->n; i++)
        if (st->ents[i].found.type == TT_AV_M)
          rc = tt_orm_crypt_add_item_of(c, op->ctx.model, &st->ents[i].found, &err);
      if (rc == 0) {
        tt_orm_crypt_run_then(c, found_opened_cb, st);
        return;
      }
      tt_orm_fail(r, &err);
    } else {
      r->status = 0;
      r->answer = TT_ORM_ANSWER_BATCH;
      r->model = tt_model_ref(op->ctx.model);
    }
    op_finish(op);
    return;
  }
  op->incomplete = true;
  if (st->failed && (!op->write || op->processed == 0)) {
    /* Nothing written (or a read): the backend's own answer says most. */
    tt_orm_fail(r, &st->first_err);
    r->retry_after_s = st->retry_after_s;
    r->details = st->first_details;
    st->first_details = NULL;
  } else {
    if (st->failed)
      op->cause = st->first_err.code;
    tt_error_set(&err, TT_ERR_BATCH_INCOMPLETE, NULL,
                 op->write ? "%zu of %zu writes were not done; resend exactly those named in "
                             "details.unprocessed"
                           : "%zu of %zu keys were not read; request exactly those named in "
                             "details.unprocessed again",
                 st->n - op->processed, st->n);
    tt_orm_fail(r, &err);
  }
  op_finish(op);
}

/* Chunks and lanes: each lane runs chunks one after another; a lane that
 * finishes takes the next chunk, so at most `concurrency` chunks are in
 * flight. The extra count holds the batch open while the lanes start. */
static void run_chunks(struct tt_orm_batch_state *st) {
  struct tt_orm_batch_op *op = st->op;
  struct tt_error err;
  if (make_chunks(st, &err) != 0) {
    fail_now(op, &err);
    return;
  }
  unsigned lanes = tt_orm_batch_concurrency(op->ctx.orm);
  st->running = 1;
  while (st->next_chunk < st->nchunks && st->running <= lanes && !stopping(st)) {
    st->running++;
    start_chunk(&st->chunks[st->next_chunk++]);
  }
  if (--st->running == 0)
    finish_all(st);
}

/* The puts of an encrypted model are sealed, then sized again (chunks
 * follow DynamoDB's request size). */
static void puts_sealed_cb(void *arg, const struct tt_error *err) {
  struct tt_orm_batch_state *st = arg;
  if (err != NULL) {
    fail_now(st->op, err);
    return;
  }
  for (size_t i = 0; i < st->n; i++) {
    struct tt_error e;
    if (st->ents[i].put &&
        wire_size(&st->ents[i].item, &st->scratch, &st->reqs[i].wire_bytes) != 0) {
      fail_now(st->op, (tt_orm_oom(&e), &e));
      return;
    }
  }
  run_chunks(st);
}

static void found_opened_cb(void *arg, const struct tt_error *err) {
  struct tt_orm_batch_state *st = arg;
  if (err != NULL) {
    fail_now(st->op, err);
    return;
  }
  st->opened = true;
  finish_all(st);
}

static int batch_start_run(struct tt_orm_ctx *ctx) {
  struct tt_orm_batch_op *op = (struct tt_orm_batch_op *)ctx;
  struct tt_error err;
  tt_error_clear(&err);
  if (check_batch(op, op->n_entries, &err) != 0 ||
      (!op->write && build_projection(op->st, &err) != 0))
    return fail_now(op, &err);
  struct tt_orm_batch_state *st = op->st;
  if (op->write && tt_orm_crypt_model(op->ctx.model)) {
    struct tt_orm_crypt *c = tt_orm_crypt_new(&op->ctx, true);
    if (c == NULL)
      return fail_now(op, (tt_orm_oom(&err), &err));
    for (size_t i = 0; i < st->n; i++)
      if (st->ents[i].put &&
          tt_orm_crypt_add_item_of(c, op->ctx.model, &st->ents[i].item, &err) != 0)
        return fail_now(op, &err);
    tt_orm_crypt_run_then(c, puts_sealed_cb, st);
    return 0;
  }
  run_chunks(st);
  return 0;
}

int tt_orm_batch_start(struct tt_orm_batch_op *op) {
  return tt_orm_ctx_start(&op->ctx, batch_start_run);
}

int tt_orm_batch_fail_input(struct tt_orm_batch_op *op, size_t n_typed,
                            const struct tt_error *input) {
  struct tt_error first;
  int rc = check_batch(op, n_typed, &first);
  if (op->st)
    state_free(op->st);
  return tt_orm_ctx_refuse(&op->ctx, rc != 0 ? &first : input);
}

void tt_orm_batch_entries_free(struct tt_orm_batch_op *op) {
  for (size_t i = 0; op->entries && i < op->n_entries; i++) {
    tt_av_free(&op->entries[i].key);
    tt_av_free(&op->entries[i].item);
    tt_av_free(&op->entries[i].found);
  }
}
