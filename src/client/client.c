/* SPDX-License-Identifier: Apache-2.0 */
/* client.c -- backend calls as joined operations, with metrics and retries. */
#include "client/client.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "obs/log.h"
#include "obs/otlp.h"
#include "obs/trace.h"

const struct tt_client_retry_policy tt_client_default_retry = {
    .max_attempts = 4,
    .transient_base_ms = 25,
    .throttle_base_ms = 1000,
    .max_backoff_ms = 20000,
    .quota = 500,
    .retry_cost = 5,
    .timeout_retry_cost = 10,
};

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Each operation's client span name, "DynamoDB.GetItem" or "KMS.Decrypt",
 * and its attributes rpc.system, rpc.service, rpc.method (and db.system)
 * encoded once: written by tt_client_init (before any call, the same
 * bytes each time), pointed at by the spans. */
static struct {
  char name[48];
  uint8_t len;
  struct tt_span_group group;
} op_spans[TT_DDB_OP__COUNT];

static void op_span_init(enum tt_ddb_op op) {
  bool kms = op >= TT_KMS_GENERATE_DATA_KEY;
  const char *svc = kms ? "KMS" : "DynamoDB", *name = tt_ddb_op_name(op);
  struct tt_span_attr a[4] = {
      {TT_SPAN_KEY("rpc.system"), .type = TT_ATTR_STR, .v.s = {"aws-api", 7}},
      {TT_SPAN_KEY("rpc.service"), .type = TT_ATTR_STR},
      {TT_SPAN_KEY("rpc.method"), .type = TT_ATTR_STR},
      {TT_SPAN_KEY("db.system"), .type = TT_ATTR_STR, .v.s = {"dynamodb", 8}},
  };
  a[1].v.s.p = svc;
  a[1].v.s.len = (uint32_t)strlen(svc);
  a[2].v.s.p = name; /* tt_ddb_op_name's table */
  a[2].v.s.len = (uint32_t)strlen(name);
  int n = snprintf(op_spans[op].name, sizeof(op_spans[op].name), "%s.%s", svc, name);
  op_spans[op].len = n > 0 && (size_t)n < sizeof(op_spans[op].name) ? (uint8_t)n : 0;
  (void)tt_otlp_group_build(&op_spans[op].group, a, kms ? 3 : 4); /* fits: 4 short ones */
}

void tt_client_init(struct tt_client *cl, struct tt_backend *backend, uv_loop_t *loop,
                    struct tt_families *fams) {
  for (unsigned op = 0; op < TT_DDB_OP__COUNT; op++)
    op_span_init((enum tt_ddb_op)op);
  memset(cl, 0, sizeof(*cl));
  cl->backend = backend;
  cl->loop = loop;
  cl->fams = fams;
  cl->retry = tt_client_default_retry;
  cl->tokens = cl->retry.quota;
  if (getrandom(&cl->rng, sizeof(cl->rng), 0) != (ssize_t)sizeof(cl->rng))
    cl->rng = now_ns();
}

static double random01(struct tt_client *cl) {
  if (cl->random01)
    return cl->random01(cl->random_arg);
  /* xorshift64*: jitter needs spread, not secrecy. */
  cl->rng ^= cl->rng >> 12;
  cl->rng ^= cl->rng << 25;
  cl->rng ^= cl->rng >> 27;
  return (double)((cl->rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

uint64_t tt_client_backoff_ms(struct tt_client *cl, const struct tt_backend_error *e,
                              unsigned retry) {
  uint64_t base = e->throttling ? cl->retry.throttle_base_ms : cl->retry.transient_base_ms;
  uint64_t ceiling = base;
  for (unsigned i = 1; i < retry && ceiling < cl->retry.max_backoff_ms; i++)
    ceiling *= 2;
  if (ceiling > cl->retry.max_backoff_ms)
    ceiling = cl->retry.max_backoff_ms;
  uint64_t wait = (uint64_t)(random01(cl) * (double)ceiling);
  if (e->retry_after_ms > wait)
    wait = e->retry_after_ms;
  return wait;
}

static const char *outcome_of(const struct tt_backend_call *bc) {
  if (bc->status == 0)
    return "success";
  if (bc->error.throttling)
    return "throttled";
  if (bc->error.retryable)
    return "transient";
  if (strcmp(bc->error.type, "RequestCanceled") == 0)
    return "canceled";
  return "error";
}

/* The request of a call, in whichever form it has. */
static void drop_request(struct tt_backend_call *bc) {
  json_decref(bc->request);
  bc->request = NULL;
  bc->item = NULL;
  bc->read = NULL;
  bc->txn = NULL;
  bc->batch = NULL;
  bc->table = NULL;
}

/* What a call owns once an attempt ended. */
static void release_results(struct tt_backend_call *bc) {
  drop_request(bc);
  tt_backend_call_results_free(bc);
}

/* A call whose `done` is running. A `done` may start the same call again:
 * the start then moves the finished call's results here, and they are
 * released when `done` returns (so what `done` read before the start stays
 * valid until it returns). A stack, since a completion may run inside
 * another one's `done` (a cancel). */
struct finishing {
  struct tt_client_call *call;
  struct finishing *up;
  bool restarted;
  struct tt_backend_call old;
};
static struct finishing *finishing_top;

/* Ends the call: it leaves the join (held meanwhile, so the group cannot
 * complete under `done`), its timer is already closed, and nothing of the
 * client refers to it any more; then `done` runs, and may start it again. */
static void finish(struct tt_client_call *c) {
  struct tt_join *j = c->op.join;
  tt_join_ref(j);
  tt_op_done(&c->op, NULL); /* the caller judges the result in done */
  struct finishing f; /* `old` is written only by a restart */
  f.call = c;
  f.up = finishing_top;
  f.restarted = false;
  finishing_top = &f;
  c->done(c);
  finishing_top = f.up;
  release_results(f.restarted ? &f.old : &c->bc);
  tt_join_unref(j);
}

/* A start of a call whose `done` is running: its results move aside. */
static void adopt_finished(struct tt_client_call *call) {
  for (struct finishing *f = finishing_top; f != NULL; f = f->up) {
    if (f->call == call) {
      if (!f->restarted) {
        f->old = call->bc;
        f->restarted = true;
      } else {
        release_results(&call->bc); /* a refused start's leftovers */
      }
      return;
    }
  }
}

static void timer_closed_cb(uv_handle_t *h) {
  struct tt_client_call *c = h->data;
  c->timer_open = false;
  finish(c);
}

/* Ends the call: closes the retry timer first when it exists (its memory is
 * the caller's and must not be released before the close callback). */
static void complete(struct tt_client_call *c) {
  if (c->timer_open)
    uv_close((uv_handle_t *)&c->retry_timer, timer_closed_cb);
  else
    finish(c);
}

static int attempt(struct tt_client_call *c);

static void retry_timer_cb(uv_timer_t *t) {
  struct tt_client_call *c = t->data;
  if (attempt(c) != 0)
    complete(c); /* from the loop: the refusal is this call's answer */
}

/* The quota a retry of a non-throttling error spends. */
static unsigned retry_cost(const struct tt_client *cl, const struct tt_backend_error *e) {
  return strstr(e->type, "Timeout") ? cl->retry.timeout_retry_cost : cl->retry.retry_cost;
}

static bool should_retry(struct tt_client_call *c) {
  const struct tt_backend_error *e = &c->bc.error;
  struct tt_client *cl = c->client;
  if (c->canceled || c->attempt >= cl->retry.max_attempts)
    return false;
  bool conflict = strcmp(e->type, "TransactionConflictException") == 0;
  if (!e->retryable && !(conflict && c->retry_conflicts))
    return false;
  /* Throttling retries are free in standard mode; others spend quota. */
  if (!e->throttling) {
    unsigned cost = retry_cost(cl, e);
    if (cl->tokens < cost)
      return false;
    cl->tokens -= cost;
  }
  return true;
}

/* Whether waiting `wait` ms and trying again can still help: not when
 * the wait would end after the request's deadline (the request would be
 * canceled while waiting), nor when the backend advises a wait
 * (x-amz-retry-after) longer than the longest backoff. Then the call fails
 * at once with the error that asked for the wait, and a throttling error
 * tells the client when to come back (Retry-After). */
static bool retry_fits(const struct tt_client_call *c, uint64_t wait) {
  const struct tt_client *cl = c->client;
  if (c->bc.error.retry_after_ms > cl->retry.max_backoff_ms)
    return false;
  uint64_t deadline = c->op.join ? c->op.join->deadline_ms : 0;
  return deadline == 0 || uv_now(cl->loop) + wait < deadline;
}

/* The table an attempt addresses: a name from the model, never a value. */
static const char *table_of(const struct tt_backend_call *bc) {
  if (bc->item)
    return bc->item->table;
  if (bc->read)
    return bc->read->table;
  if (bc->txn)
    return bc->txn->n_steps ? bc->txn->steps[0].r.table : NULL;
  if (bc->batch)
    return bc->batch->n_tables ? bc->batch->tables[0].table : NULL;
  return bc->table ? bc->table->table : NULL; /* KMS: none */
}

/* One client span per attempt (OpenTelemetry's aws-api conventions). */
static void attempt_span_start(struct tt_client_call *c) {
  c->span = NULL;
  if (!c->parent.valid || !tt_tracer_on())
    return;
  bool kms = c->bc.op >= TT_KMS_GENERATE_DATA_KEY;
  struct tt_span *s = tt_span_start_at(&c->parent, "", TT_SPAN_CLIENT, c->started_ns);
  if (s == NULL)
    return;
  if ((unsigned)c->bc.op < TT_DDB_OP__COUNT) { /* the table's sizes always fit */
    tt_span_name_static(s, op_spans[c->bc.op].name, op_spans[c->bc.op].len);
    tt_span_put_group(s, &op_spans[c->bc.op].group);
  }
  if (!kms) {
    const char *table = table_of(&c->bc);
    if (table)
      tt_span_str_array1(s, "aws.dynamodb.table_names", table);
  }
  tt_span_int(s, "tabletheoryd.attempt", c->attempt);
  if (c->attempt > 1)
    tt_span_int(s, "http.request.resend_count", c->attempt - 1);
  c->span = s; /* the request id and the model are on the server span */
}

/* Ends the attempt's span with its outcome at `end_ns` (the monotonic
 * clock; 0: now); `backoff_ms` >= 0 when a retry follows. Only the
 * error's type is recorded: DynamoDB's message may quote request content. */
static void attempt_span_end(struct tt_client_call *c, int64_t backoff_ms, uint64_t end_ns) {
  struct tt_span *s = c->span;
  if (s == NULL)
    return;
  c->span = NULL;
  const struct tt_backend_call *bc = &c->bc;
  if (bc->error.request_id[0])
    tt_span_str(s, "aws.request_id", bc->error.request_id);
  if (bc->status == 0) {
    tt_span_status(s, TT_SPAN_UNSET, NULL);
  } else {
    tt_span_str(s, "error.type", bc->error.type);
    if (bc->error.http_status)
      tt_span_int(s, "http.response.status_code", bc->error.http_status);
    tt_span_bool(s, "tabletheoryd.throttled", bc->error.throttling);
    tt_span_status(s, TT_SPAN_ERROR, bc->error.type);
  }
  if (backoff_ms >= 0) {
    tt_span_str(s, "tabletheoryd.retry.reason", bc->error.throttling ? "throttled" : "transient");
    tt_span_int(s, "tabletheoryd.retry.backoff_ms", backoff_ms);
  }
  tt_span_end_at(s, end_ns);
}

static void backend_done_cb(struct tt_backend_call *bc) {
  struct tt_client_call *c = bc->arg;
  struct tt_client *cl = c->client;
  const char *op = tt_ddb_op_name(bc->op);
  c->in_backend = false;
  /* One clock read for the duration and the attempt's span. */
  uint64_t ended = cl->fams || c->span ? now_ns() : 0;
  if (cl->fams) {
    const char *l2[2] = {op, outcome_of(bc)};
    tt_metric_add(cl->fams->backend_calls, l2, 1);
    const char *l1[1] = {op};
    tt_metric_observe(cl->fams->backend_duration, l1, (double)(ended - c->started_ns) / 1e9);
  }
  if (bc->status == 0) {
    if (cl->tokens < cl->retry.quota)
      cl->tokens += c->attempt > 1 ? cl->retry.retry_cost : 1;
    if (cl->tokens > cl->retry.quota)
      cl->tokens = cl->retry.quota;
  }
  uint64_t wait = 0;
  bool retry = bc->status != 0 && should_retry(c);
  if (retry)
    wait = tt_client_backoff_ms(cl, &bc->error, c->attempt);
  if (retry && !retry_fits(c, wait)) {
    if (!bc->error.throttling) /* no retry made: give back what should_retry spent */
      cl->tokens += retry_cost(cl, &bc->error);
    retry = false; /* this attempt's error, with its retry_after_ms, is the answer */
  }
  if (!retry) {
    attempt_span_end(c, -1, ended);
    complete(c);
    return;
  }
  attempt_span_end(c, (int64_t)wait, ended);
  const char *reason = bc->error.throttling ? "throttled" : "transient";
  if (cl->fams) {
    const char *l2[2] = {op, reason};
    tt_metric_add(cl->fams->backend_retries, l2, 1);
  }
  struct tt_log_line l;
  tt_log_begin(&l, TT_LOG_WARN, "backend.retry");
  tt_log_str(&l, "request_id", c->request_id);
  tt_log_str(&l, "op", op);
  tt_log_str(&l, "model", c->model);
  tt_log_int(&l, "attempt", c->attempt);
  tt_log_str(&l, "error_code", bc->error.type);
  tt_log_int(&l, "backoff_ms", (int64_t)wait);
  tt_log_end(&l);
  if (!c->timer_open) {
    if (uv_timer_init(cl->loop, &c->retry_timer) != 0) {
      complete(c);
      return;
    }
    c->retry_timer.data = c;
    c->timer_open = true;
  }
  uv_timer_start(&c->retry_timer, retry_timer_cb, wait, 0);
}

/* Starts an attempt. Returns 0, or the backend's negative error (the
 * call's error says why; its span has ended). */
static int attempt(struct tt_client_call *c) {
  struct tt_client *cl = c->client;
  c->attempt++;
  tt_backend_call_results_free(&c->bc);
  c->bc.status = 0;
  c->bc.done = backend_done_cb;
  c->bc.arg = c;
  c->started_ns = now_ns();
  attempt_span_start(c);
  int rc = cl->backend->ops->start(cl->backend, &c->bc);
  if (rc != 0) {
    c->bc.status = -1;
    tt_backend_error_set(&c->bc.error, "InternalFailure", 0, "the backend refused the call");
    attempt_span_end(c, -1, 0);
    return rc < 0 ? rc : UV_EINVAL;
  }
  c->in_backend = true;
  return 0;
}

static void cancel_cb(struct tt_op *op) {
  struct tt_client_call *c = (struct tt_client_call *)((char *)op - offsetof(struct tt_client_call, op));
  c->canceled = true;
  if (c->in_backend) {
    c->client->backend->ops->cancel(c->client->backend, &c->bc);
  } else if (c->timer_open && uv_is_active((uv_handle_t *)&c->retry_timer)) {
    /* Waiting to retry: the last attempt's error stands. */
    uv_timer_stop(&c->retry_timer);
    complete(c);
  }
}

/* A start that did not happen: the call leaves the join (which someone
 * else holds, as it did before the start), the request is released, and
 * the error stays in call->bc.error (without a body). */
static int refuse(struct tt_client_call *call, int rc) {
  if (call->op.join != NULL)
    tt_op_done(&call->op, NULL);
  drop_request(&call->bc);
  call->bc.status = -1;
  return rc;
}

/* Starts a call: `req` holds its operation and its request in one of its
 * forms (the others NULL). */
static int start(struct tt_client *cl, struct tt_join *join, struct tt_client_call *call,
                 const struct tt_backend_call *req, tt_client_done_cb done, void *arg) {
  if (finishing_top != NULL)
    adopt_finished(call);
  call->bc = *req;
  call->client = cl;
  /* The request's partner account, for every call of the request. */
  call->bc.account = cl->one_account ? 0 : join->account;
  call->done = done;
  call->arg = arg;
  call->attempt = 0;
  call->timer_open = call->in_backend = call->canceled = false;
  call->parent = join->trace;
  call->span = NULL;
  call->op.join = NULL;
  const struct tt_backend_call *f = &call->bc;
  if (f->request == NULL && f->item == NULL && f->read == NULL && f->txn == NULL &&
      f->batch == NULL && f->table == NULL) {
    tt_backend_error_set(&call->bc.error, "InternalFailure", 0, "out of memory");
    return refuse(call, UV_ENOMEM);
  }
  if (join->canceled) {
    tt_backend_error_set(&call->bc.error, "RequestCanceled", 0, "the request was canceled");
    return refuse(call, UV_ECANCELED);
  }
  tt_join_add(join, &call->op, tt_ddb_op_name(req->op), cancel_cb);
  int rc = attempt(call);
  if (rc != 0)
    return refuse(call, rc);
  return 0;
}

int tt_client_start(struct tt_client *cl, struct tt_join *join, struct tt_client_call *call,
                    enum tt_ddb_op op, json_t *request, tt_client_done_cb done, void *arg) {
  return start(cl, join, call, &(struct tt_backend_call){.op = op, .request = request}, done, arg);
}

int tt_client_start_item(struct tt_client *cl, struct tt_join *join, struct tt_client_call *call,
                         enum tt_ddb_op op, const struct tt_ddb_item_request *item,
                         tt_client_done_cb done, void *arg) {
  return start(cl, join, call, &(struct tt_backend_call){.op = op, .item = item}, done, arg);
}

int tt_client_start_read(struct tt_client *cl, struct tt_join *join, struct tt_client_call *call,
                         enum tt_ddb_op op, const struct tt_ddb_read_request *read,
                         tt_client_done_cb done, void *arg) {
  return start(cl, join, call, &(struct tt_backend_call){.op = op, .read = read}, done, arg);
}

int tt_client_start_txn(struct tt_client *cl, struct tt_join *join, struct tt_client_call *call,
                        enum tt_ddb_op op, const struct tt_ddb_txn_request *txn,
                        tt_client_done_cb done, void *arg) {
  return start(cl, join, call, &(struct tt_backend_call){.op = op, .txn = txn}, done, arg);
}

int tt_client_start_batch(struct tt_client *cl, struct tt_join *join, struct tt_client_call *call,
                          enum tt_ddb_op op, const struct tt_ddb_batch_request *batch,
                          tt_client_done_cb done, void *arg) {
  return start(cl, join, call, &(struct tt_backend_call){.op = op, .batch = batch}, done, arg);
}

int tt_client_start_table(struct tt_client *cl, struct tt_join *join, struct tt_client_call *call,
                          enum tt_ddb_op op, const struct tt_ddb_table_request *table,
                          tt_client_done_cb done, void *arg) {
  return start(cl, join, call, &(struct tt_backend_call){.op = op, .table = table}, done, arg);
}

size_t tt_client_run_ready(struct tt_client *cl, uint64_t until_ns) {
  struct tt_backend *b = cl->backend;
  return b->ops->run_ready ? b->ops->run_ready(b, until_ns) : 0;
}
