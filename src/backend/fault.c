/* SPDX-License-Identifier: Apache-2.0 */
/* fault.c -- the fault-injecting decorator: passes calls to the wrapped
 * backend unless a rule matches, then fails, splits or delays the call on
 * one loop timer, completing it asynchronously like a real call. */
#include "backend/fault.h"

#include <assert.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAULT_MAGIC 0x74746661u /* "ttfa" */

enum fault_kind {
  FAULT_DELAY,       /* latency only: the call runs after the delay */
  FAULT_ERROR,       /* the call fails without running */
  FAULT_UNPROCESSED, /* a batch call runs on part of its items */
};

/* The errors a rule may inject, with DynamoDB's HTTP status; the
 * classification (throttling, retryable) comes from the port's one
 * classifier in tt_backend_error_set. */
static const struct {
  const char *type;
  unsigned http_status;
} fault_errors[] = {
    {"ProvisionedThroughputExceededException", 400},
    {"InternalServerError", 500},
    {"ServiceUnavailable", 503},
    {"Timeout", 0},         /* transport: no HTTP answer */
    {"ConnectionReset", 0}, /* transport: no HTTP answer */
    {"ConditionalCheckFailedException", 400},
    {"RequestEntityTooLarge", 413}, /* what answers a body too large for the endpoint */
};
static const char unprocessed_name[] = "Unprocessed";

struct fault_rule {
  unsigned id;
  int op; /* enum tt_ddb_op, or -1 for "*" */
  const char *op_name;
  char *table; /* NULL = any */
  char *model;
  enum fault_kind kind;
  const char *error; /* static; NULL for FAULT_DELAY */
  unsigned http_status;
  unsigned times, fired;
  uint64_t latency_ms;
  unsigned unprocessed;
  uint32_t retry_after_ms; /* x-amz-retry-after of the injected error; 0 = none */
};

/* A call a rule took over, from start() until the caller's done. */
struct fault_call {
  struct tt_fault_backend *fb;
  struct tt_backend_call *outer; /* the caller's; borrowed */
  struct tt_backend_call sub;    /* what the inner backend runs */
  enum fault_kind kind;
  const char *error; /* static */
  unsigned http_status;
  uint32_t retry_after_ms;
  /* Unprocessed: the request without the left-out entries (run when
   * n_entries > 0), and the left-out entries, which the answer adds. */
  struct tt_ddb_batch_request processed;
  struct tt_ddb_batch_entry *kept;
  struct tt_ddb_batch_value *left;
  size_t n_left;
  uint64_t due, seq;
  bool in_inner; /* sub is running on the inner backend */
  bool canceled;
  struct fault_call *prev, *next; /* fb->live */
  struct fault_call *qnext;       /* fb->queue, while waiting */
};

struct tt_fault_backend {
  struct tt_backend base; /* first: the port's functions get &base */
  uint32_t magic;
  struct tt_backend *inner; /* owned */
  uv_timer_t timer;
  struct fault_rule rules[TT_FAULT_MAX_RULES];
  size_t nrules;
  unsigned next_id;
  uint64_t fired_total;
  uint64_t seq;
  struct fault_call *live;  /* every taken call */
  struct fault_call *queue; /* waiting calls by due time, then start order */
  bool closing;
  int close_pending;
  void (*closed)(void *arg);
  void *closed_arg;
};

static const struct tt_backend_ops fault_ops;

static struct tt_fault_backend *fb_of(struct tt_backend *b) {
  struct tt_fault_backend *fb = b->impl;
  assert(fb->magic == FAULT_MAGIC);
  return fb;
}

/* ---- matching ------------------------------------------------------------ */

static bool is_batch(int op) { return op == TT_DDB_BATCH_WRITE_ITEM || op == TT_DDB_BATCH_GET_ITEM; }

/* Whether a call names `table`: a typed call's table, a table of its batch
 * or a step of its transaction; a JSON request's TableName. */
static bool touches_table(const struct tt_backend_call *c, const char *table) {
  if (!tt_backend_call_typed(c) || c->item || c->read || c->table) {
    const char *t = c->item    ? c->item->table
                    : c->read  ? c->read->table
                    : c->table ? c->table->table
                               : json_string_value(json_object_get(c->request, "TableName"));
    return t != NULL && strcmp(t, table) == 0;
  }
  if (c->batch) {
    for (size_t i = 0; i < c->batch->n_tables; i++)
      if (strcmp(c->batch->tables[i].table, table) == 0)
        return true;
    return false;
  }
  for (size_t i = 0; i < c->txn->n_steps; i++)
    if (c->txn->steps[i].r.table && strcmp(c->txn->steps[i].r.table, table) == 0)
      return true;
  return false;
}

/* The number of batch entries a rule may leave out (those of its table). */
static size_t eligible_count(const struct tt_ddb_batch_request *b, const char *table) {
  size_t n = 0;
  for (size_t i = 0; i < b->n_entries; i++)
    n += table == NULL || strcmp(b->tables[b->entries[i].table].table, table) == 0;
  return n;
}

static bool rule_matches(const struct fault_rule *r, const struct tt_backend_call *c) {
  if (r->fired >= r->times)
    return false;
  if (r->op >= 0 && r->op != (int)c->op)
    return false;
  if (r->kind == FAULT_UNPROCESSED)
    return is_batch((int)c->op) && c->batch && eligible_count(c->batch, r->table) > 0;
  if (r->table == NULL)
    return true;
  return touches_table(c, r->table);
}

/* ---- Unprocessed: splitting a batch -------------------------------------- */

/* Leaves the last `k` eligible entries of call `c` out: fc->processed is
 * the request the inner backend runs (no entries when nothing is left to
 * run), fc->left the entries left out (cloned). Returns 0 or -1 (out of
 * memory). */
static int split_batch(struct fault_call *fc, const struct tt_backend_call *c, const char *table,
                       size_t k) {
  const struct tt_ddb_batch_request *b = c->batch;
  size_t n = eligible_count(b, table), seen = 0;
  fc->processed = *b;
  fc->processed.n_entries = 0;
  fc->kept = calloc(b->n_entries ? b->n_entries : 1, sizeof(*fc->kept));
  fc->left = calloc(k ? k : 1, sizeof(*fc->left));
  if (fc->kept == NULL || fc->left == NULL)
    return -1;
  fc->processed.entries = fc->kept;
  for (size_t i = 0; i < b->n_entries; i++) {
    const struct tt_ddb_batch_entry *x = &b->entries[i];
    bool eligible = table == NULL || strcmp(b->tables[x->table].table, table) == 0;
    if (!(eligible && seen++ >= n - k)) {
      fc->kept[fc->processed.n_entries++] = *x;
      continue;
    }
    struct tt_ddb_batch_value *v = &fc->left[fc->n_left];
    v->table = x->table;
    v->put = x->put;
    if (x->value && tt_av_clone(&v->value, x->value) != 0)
      return -1;
    fc->n_left++;
  }
  return 0;
}

static void split_free(struct fault_call *fc) {
  for (size_t i = 0; i < fc->n_left; i++)
    tt_av_free(&fc->left[i].value);
  free(fc->left);
  free(fc->kept);
  fc->left = NULL;
  fc->kept = NULL;
  fc->n_left = 0;
}

/* Adds the left-out entries to a result's unprocessed ones, after whatever
 * the inner backend left unprocessed itself (moved). Returns 0 or -1. */
static int merge_unprocessed(struct fault_call *fc, struct tt_ddb_batch_result *r) {
  if (fc->n_left == 0)
    return 0;
  struct tt_ddb_batch_value *grown = realloc(r->left, (r->n_left + fc->n_left) * sizeof(*grown));
  if (grown == NULL)
    return -1;
  r->left = grown;
  memcpy(&grown[r->n_left], fc->left, fc->n_left * sizeof(*grown));
  r->n_left += fc->n_left;
  fc->n_left = 0;
  return 0;
}

/* ---- the queue of waiting calls ------------------------------------------ */

static void queue_insert(struct tt_fault_backend *fb, struct fault_call *fc) {
  struct fault_call **pp = &fb->queue;
  while (*pp && (*pp)->due <= fc->due)
    pp = &(*pp)->qnext;
  fc->qnext = *pp;
  *pp = fc;
}

static bool queue_remove(struct tt_fault_backend *fb, struct fault_call *fc) {
  for (struct fault_call **pp = &fb->queue; *pp; pp = &(*pp)->qnext)
    if (*pp == fc) {
      *pp = fc->qnext;
      fc->qnext = NULL;
      return true;
    }
  return false;
}

static void arm_timer(struct tt_fault_backend *fb);

/* Ends a taken call: releases our record, then tells the caller. */
static void complete(struct fault_call *fc) {
  struct tt_fault_backend *fb = fc->fb;
  struct tt_backend_call *outer = fc->outer;
  if (fc->prev)
    fc->prev->next = fc->next;
  else
    fb->live = fc->next;
  if (fc->next)
    fc->next->prev = fc->prev;
  split_free(fc);
  tt_backend_call_results_free(&fc->sub);
  free(fc);
  outer->done(outer); /* may free `outer` or start another call */
}

static void fail_call(struct fault_call *fc, const char *type, unsigned status, const char *msg) {
  struct tt_backend_call *c = fc->outer;
  tt_backend_error_set(&c->error, type, status, "%s", msg);
  c->error.retry_after_ms = fc->canceled ? 0 : fc->retry_after_ms;
  snprintf(c->error.request_id, sizeof(c->error.request_id), "tt-fault-%llu",
           (unsigned long long)fc->seq);
  c->status = -1;
  json_decref(c->response);
  c->response = NULL;
  complete(fc);
}

/* The inner backend finished our sub-call: hand its outcome to the caller. */
static void sub_done_cb(struct tt_backend_call *sub) {
  struct fault_call *fc = sub->arg;
  struct tt_backend_call *c = fc->outer;
  fc->in_inner = false;
  c->status = sub->status;
  c->response = sub->response;
  c->item_out = sub->item_out;
  c->read_out = sub->read_out;
  c->txn_out = sub->txn_out;
  c->batch_out = sub->batch_out;
  c->table_out = sub->table_out;
  tt_backend_error_clear(&c->error);
  c->error = sub->error; /* moves the body too */
  memset(sub, 0, sizeof(*sub)); /* everything moved: nothing left to free */
  if (c->status == 0 && merge_unprocessed(fc, &c->batch_out) != 0) {
    tt_ddb_batch_result_free(&c->batch_out);
    fail_call(fc, "InternalFailure", 0, "out of memory merging unprocessed items");
    return;
  }
  complete(fc);
}

static void run_inner(struct fault_call *fc, const struct tt_ddb_batch_request *batch) {
  struct tt_fault_backend *fb = fc->fb;
  const struct tt_backend_call *o = fc->outer;
  fc->sub = (struct tt_backend_call){.op = o->op, .account = o->account, .request = o->request,
                                     .item = o->item, .read = o->read, .txn = o->txn,
                                     .batch = batch, .table = o->table, .done = sub_done_cb,
                                     .arg = fc};
  if (fb->inner->ops->start(fb->inner, &fc->sub) != 0) {
    fail_call(fc, "InternalFailure", 0, "the backend refused the call");
    return;
  }
  fc->in_inner = true;
}

/* A waiting call is due (or was canceled): do what its rule said. */
static void run(struct fault_call *fc) {
  if (fc->canceled) {
    fail_call(fc, "RequestCanceled", 0, "Request canceled");
    return;
  }
  switch (fc->kind) {
  case FAULT_ERROR:
    fail_call(fc, fc->error, fc->http_status, "injected fault");
    return;
  case FAULT_DELAY:
    run_inner(fc, fc->outer->batch);
    return;
  case FAULT_UNPROCESSED:
    if (fc->processed.n_entries > 0) {
      run_inner(fc, &fc->processed);
      return;
    }
    /* None of its entries ran: all come back unprocessed. */
    fc->outer->status = 0;
    if (merge_unprocessed(fc, &fc->outer->batch_out) != 0) {
      fail_call(fc, "InternalFailure", 0, "out of memory building unprocessed items");
      return;
    }
    complete(fc);
    return;
  }
}

static void timer_cb(uv_timer_t *t) {
  struct tt_fault_backend *fb = t->data;
  uint64_t now = uv_now(fb->base.loop);
  /* Calls started from inside a completion wait for the next tick, so a
   * caller that restarts at once cannot keep this callback busy. */
  uint64_t last = fb->seq;
  while (fb->queue && fb->queue->due <= now && fb->queue->seq <= last) {
    struct fault_call *fc = fb->queue;
    fb->queue = fc->qnext;
    fc->qnext = NULL;
    run(fc);
  }
  arm_timer(fb);
}

static void arm_timer(struct tt_fault_backend *fb) {
  if (fb->closing)
    return;
  if (fb->queue == NULL) {
    uv_timer_stop(&fb->timer);
    return;
  }
  uint64_t now = uv_now(fb->base.loop), due = fb->queue->due;
  uv_timer_start(&fb->timer, timer_cb, due > now ? due - now : 0, 0);
}

/* ---- the port ------------------------------------------------------------ */

static int fault_start(struct tt_backend *b, struct tt_backend_call *c) {
  struct tt_fault_backend *fb = fb_of(b);
  if (fb->closing || c == NULL || c->done == NULL || (unsigned)c->op >= TT_DDB_OP__COUNT)
    return UV_EINVAL;
  struct fault_rule *r = NULL;
  for (size_t i = 0; i < fb->nrules && r == NULL; i++)
    if (rule_matches(&fb->rules[i], c))
      r = &fb->rules[i];
  if (r == NULL)
    return fb->inner->ops->start(fb->inner, c);
  struct fault_call *fc = calloc(1, sizeof(*fc));
  if (fc == NULL)
    return UV_ENOMEM;
  fc->fb = fb;
  fc->outer = c;
  fc->kind = r->kind;
  fc->error = r->error;
  fc->http_status = r->http_status;
  fc->retry_after_ms = r->retry_after_ms;
  if (r->kind == FAULT_UNPROCESSED) {
    /* Split now: the rule may be cleared while the call waits. */
    size_t n = eligible_count(c->batch, r->table);
    size_t k = r->unprocessed ? r->unprocessed : (n + 1) / 2;
    if (k > n)
      k = n;
    if (split_batch(fc, c, r->table, k) != 0) {
      split_free(fc);
      free(fc);
      return UV_ENOMEM;
    }
  }
  r->fired++;
  fb->fired_total++;
  c->status = 0;
  c->response = NULL;
  c->canceled = false;
  c->next = NULL;
  fc->seq = ++fb->seq;
  /* +1: the loop's clock is truncated to whole milliseconds, so a delay of
   * latency_ms could otherwise end up to 1 ms of real time early. */
  fc->due = uv_now(fb->base.loop) + r->latency_ms + (r->latency_ms ? 1 : 0);
  fc->next = fb->live;
  if (fb->live)
    fb->live->prev = fc;
  fb->live = fc;
  queue_insert(fb, fc);
  arm_timer(fb);
  return 0;
}

static void fault_cancel(struct tt_backend *b, struct tt_backend_call *c) {
  struct tt_fault_backend *fb = fb_of(b);
  struct fault_call *fc = fb->live;
  while (fc && fc->outer != c)
    fc = fc->next;
  if (fc == NULL) { /* passed through, or already completed */
    if (fb->inner->ops->cancel)
      fb->inner->ops->cancel(fb->inner, c);
    return;
  }
  if (fc->in_inner) {
    if (fb->inner->ops->cancel)
      fb->inner->ops->cancel(fb->inner, &fc->sub);
    return;
  }
  if (fc->canceled)
    return;
  /* Waiting on our timer: finish now, without running the call. */
  fc->canceled = true;
  c->canceled = true;
  queue_remove(fb, fc);
  fc->due = 0;
  queue_insert(fb, fc);
  arm_timer(fb);
}

static void close_step(struct tt_fault_backend *fb) {
  if (--fb->close_pending == 0 && fb->closed)
    fb->closed(fb->closed_arg);
}

static void timer_closed_cb(uv_handle_t *h) { close_step(h->data); }

static void inner_closed_cb(void *arg) { close_step(arg); }

static void fault_close(struct tt_backend *b, void (*closed)(void *arg), void *arg) {
  struct tt_fault_backend *fb = fb_of(b);
  fb->closing = true;
  fb->closed = closed;
  fb->closed_arg = arg;
  /* One for the timer, one for the inner backend, one held until both
   * were asked, in case the inner backend reports closed at once. */
  fb->close_pending = 3;
  uv_close((uv_handle_t *)&fb->timer, timer_closed_cb);
  if (fb->inner->ops->close)
    fb->inner->ops->close(fb->inner, inner_closed_cb, fb);
  else
    fb->close_pending--;
  close_step(fb);
}

static void free_rule(struct fault_rule *r) {
  free(r->table);
  free(r->model);
  memset(r, 0, sizeof(*r));
}

static void fault_destroy(struct tt_backend *b) {
  struct tt_fault_backend *fb = fb_of(b);
  if (fb->inner->ops->destroy)
    fb->inner->ops->destroy(fb->inner);
  for (size_t i = 0; i < fb->nrules; i++)
    free_rule(&fb->rules[i]);
  /* The port forbids closing with calls outstanding; free what a buggy
   * caller left rather than leak it. */
  while (fb->live) {
    struct fault_call *fc = fb->live;
    fb->live = fc->next;
    split_free(fc);
    free(fc);
  }
  fb->magic = 0;
  free(fb);
}

/* Calls a rule took wait for our timer, like a real delayed or failed call;
 * calls that passed through complete as the inner backend completes them. */
static size_t fault_run_ready(struct tt_backend *b, uint64_t until_ns) {
  struct tt_fault_backend *fb = fb_of(b);
  if (fb->closing || fb->inner->ops->run_ready == NULL)
    return 0;
  return fb->inner->ops->run_ready(fb->inner, until_ns);
}

static const struct tt_backend_ops fault_ops = {
    .name = "fault",
    .start = fault_start,
    .cancel = fault_cancel,
    .close = fault_close,
    .destroy = fault_destroy,
    .run_ready = fault_run_ready,
};

int tt_fault_backend_new(struct tt_backend *inner, uv_loop_t *loop, struct tt_backend **out) {
  if (inner == NULL || inner->ops == NULL || inner->ops->start == NULL || loop == NULL)
    return UV_EINVAL;
  struct tt_fault_backend *fb = calloc(1, sizeof(*fb));
  if (fb == NULL)
    return UV_ENOMEM;
  int rc = uv_timer_init(loop, &fb->timer);
  if (rc != 0) {
    free(fb);
    return rc;
  }
  fb->timer.data = fb;
  fb->magic = FAULT_MAGIC;
  fb->inner = inner;
  fb->next_id = 1;
  fb->base.ops = &fault_ops;
  fb->base.loop = loop;
  fb->base.impl = fb;
  *out = &fb->base;
  return 0;
}

struct tt_fault_backend *tt_fault_backend_of(struct tt_backend *b) {
  return b != NULL && b->ops == &fault_ops ? fb_of(b) : NULL;
}

/* ---- rules --------------------------------------------------------------- */

static int parse_op(const char *name) {
  for (int op = 0; op < TT_DDB_OP__COUNT; op++)
    if (strcmp(name, tt_ddb_op_name((enum tt_ddb_op)op)) == 0)
      return op;
  return -2;
}

int tt_fault_add(struct tt_fault_backend *fb, const struct tt_fault_spec *spec, unsigned *id,
                 struct tt_error *err) {
  struct fault_rule r = {0};
  if (spec->op == NULL)
    return tt_error_set(err, TT_ERR_VALIDATION, "op", "op is required: a DynamoDB operation "
                                                      "name such as PutItem, or \"*\"");
  r.op = strcmp(spec->op, "*") == 0 ? -1 : parse_op(spec->op);
  if (r.op == -2)
    return tt_error_set(err, TT_ERR_VALIDATION, "op",
                        "op must be a DynamoDB operation name such as PutItem, or \"*\"");
  r.op_name = r.op < 0 ? "*" : tt_ddb_op_name((enum tt_ddb_op)r.op);
  r.kind = FAULT_DELAY;
  if (spec->error != NULL) {
    if (strcmp(spec->error, unprocessed_name) == 0) {
      if (r.op >= 0 && !is_batch(r.op))
        return tt_error_set(err, TT_ERR_VALIDATION, "error",
                            "error Unprocessed applies only to BatchWriteItem and BatchGetItem");
      r.kind = FAULT_UNPROCESSED;
      r.error = unprocessed_name;
    } else {
      for (size_t i = 0; i < sizeof(fault_errors) / sizeof(fault_errors[0]); i++)
        if (strcmp(spec->error, fault_errors[i].type) == 0) {
          r.kind = FAULT_ERROR;
          r.error = fault_errors[i].type;
          r.http_status = fault_errors[i].http_status;
        }
      if (r.kind != FAULT_ERROR)
        return tt_error_set(err, TT_ERR_VALIDATION, "error",
                            "error must be one of ProvisionedThroughputExceededException, "
                            "InternalServerError, ServiceUnavailable, Timeout, "
                            "ConnectionReset, ConditionalCheckFailedException, "
                            "RequestEntityTooLarge, Unprocessed");
    }
  }
  if (spec->times < 1 || spec->times > TT_FAULT_MAX_TIMES)
    return tt_error_set(err, TT_ERR_VALIDATION, "times", "times must be an integer from 1 to %u",
                        TT_FAULT_MAX_TIMES);
  if (spec->latency_ms > TT_FAULT_MAX_LATENCY_MS)
    return tt_error_set(err, TT_ERR_VALIDATION, "latency_ms",
                        "latency_ms must be an integer from 0 to %u", TT_FAULT_MAX_LATENCY_MS);
  if (r.kind == FAULT_DELAY && spec->latency_ms == 0)
    return tt_error_set(err, TT_ERR_VALIDATION, "error",
                        "a fault needs an error, a latency_ms above 0, or both");
  if (spec->unprocessed > 0 && r.kind != FAULT_UNPROCESSED)
    return tt_error_set(err, TT_ERR_VALIDATION, "unprocessed",
                        "unprocessed applies only to error Unprocessed");
  if (spec->unprocessed > TT_FAULT_MAX_UNPROCESSED)
    return tt_error_set(err, TT_ERR_VALIDATION, "unprocessed",
                        "unprocessed must be an integer from 1 to %u", TT_FAULT_MAX_UNPROCESSED);
  if (spec->retry_after_ms > TT_FAULT_MAX_RETRY_AFTER_MS)
    return tt_error_set(err, TT_ERR_VALIDATION, "retry_after_ms",
                        "retry_after_ms must be an integer from 1 to %u",
                        TT_FAULT_MAX_RETRY_AFTER_MS);
  if (spec->retry_after_ms > 0 && r.kind != FAULT_ERROR)
    return tt_error_set(err, TT_ERR_VALIDATION, "retry_after_ms",
                        "retry_after_ms applies only to an injected error");
  if (spec->table != NULL && (spec->table[0] == '\0' || strlen(spec->table) > 255))
    return tt_error_set(err, TT_ERR_VALIDATION, "table",
                        "table must be a table name of 1 to 255 characters");
  if (fb->nrules == TT_FAULT_MAX_RULES) {
    /* Make room by forgetting the oldest expired rule. */
    size_t i = 0;
    while (i < fb->nrules && fb->rules[i].fired < fb->rules[i].times)
      i++;
    if (i == fb->nrules)
      return tt_error_set(err, TT_ERR_VALIDATION, "faults",
                          "at most %d fault rules can be active; clear them with DELETE "
                          "/v1/_faults",
                          TT_FAULT_MAX_RULES);
    free_rule(&fb->rules[i]);
    memmove(&fb->rules[i], &fb->rules[i + 1], (fb->nrules - i - 1) * sizeof(fb->rules[0]));
    fb->nrules--;
  }
  r.times = spec->times;
  r.latency_ms = spec->latency_ms;
  r.unprocessed = spec->unprocessed;
  r.retry_after_ms = spec->retry_after_ms;
  r.table = spec->table ? strdup(spec->table) : NULL;
  r.model = spec->model ? strdup(spec->model) : NULL;
  if ((spec->table && r.table == NULL) || (spec->model && r.model == NULL)) {
    free_rule(&r);
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
  }
  r.id = fb->next_id++;
  fb->rules[fb->nrules++] = r;
  if (id)
    *id = r.id;
  return 0;
}

void tt_fault_clear(struct tt_fault_backend *fb) {
  for (size_t i = 0; i < fb->nrules; i++)
    free_rule(&fb->rules[i]);
  fb->nrules = 0;
}

size_t tt_fault_rule_count(const struct tt_fault_backend *fb) { return fb->nrules; }

int tt_fault_rule_get(const struct tt_fault_backend *fb, size_t i, struct tt_fault_rule_info *out) {
  if (i >= fb->nrules)
    return -1;
  const struct fault_rule *r = &fb->rules[i];
  *out = (struct tt_fault_rule_info){
      .id = r->id,
      .op = r->op_name,
      .table = r->table,
      .model = r->model,
      .error = r->error,
      .times = r->times,
      .fired = r->fired,
      .latency_ms = r->latency_ms,
      .unprocessed = r->unprocessed,
      .retry_after_ms = r->retry_after_ms,
  };
  return 0;
}

unsigned tt_fault_fired(const struct tt_fault_backend *fb, unsigned id) {
  for (size_t i = 0; i < fb->nrules; i++)
    if (fb->rules[i].id == id)
      return fb->rules[i].fired;
  return 0;
}

uint64_t tt_fault_fired_total(const struct tt_fault_backend *fb) { return fb->fired_total; }
