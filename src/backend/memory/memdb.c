/* SPDX-License-Identifier: Apache-2.0 */
/* memdb.c -- the memory backend's port: a FIFO of started calls, executed
 * and completed in order, never inside start(): from run_ready (the port's
 * trampoline, which the server calls after a request's handler) or else
 * from a loop idle handle or timer, like network calls. */
#include "backend/memory/memdb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/memory/internal.h"
#include "backend/memory/wal.h"

memdb_op_fn *const memdb_table_ops[TT_DDB_OP__COUNT] = {
    [TT_DDB_CREATE_TABLE] = memdb_op_create_table,
    [TT_DDB_DESCRIBE_TABLE] = memdb_op_describe_table,
    [TT_DDB_DELETE_TABLE] = memdb_op_delete_table,
    [TT_DDB_UPDATE_TIME_TO_LIVE] = memdb_op_update_ttl,
    [TT_DDB_DESCRIBE_TIME_TO_LIVE] = memdb_op_describe_ttl,
    [TT_DDB_UPDATE_TABLE] = memdb_op_update_table,
    [TT_DDB_LIST_TABLES] = memdb_op_list_tables,
    [TT_DDB_TAG_RESOURCE] = memdb_op_tag_resource,
    [TT_DDB_UNTAG_RESOURCE] = memdb_op_untag_resource,
    [TT_DDB_LIST_TAGS_OF_RESOURCE] = memdb_op_list_tags,
};

void memdb_table_arn(const struct memdb *m, const struct memdb_table *t, char *out, size_t n) {
  snprintf(out, n, "arn:aws:dynamodb:%s:000000000000:table/%s",
           m->opts.region && m->opts.region[0] ? m->opts.region : "ddblocal", t->name);
}

enum tt_ddb_billing memdb_billing(const struct memdb_table *t) {
  return t->pay_per_request ? TT_DDB_BILLING_PAY_PER_REQUEST
         : t->billing_given ? TT_DDB_BILLING_PROVISIONED
                            : TT_DDB_BILLING_UNSET;
}

int64_t memdb_now(const struct memdb *m) {
  return m->opts.clock ? m->opts.clock(m->opts.clock_arg) : (int64_t)time(NULL);
}

/* The due time of a queued call lives in call->impl (loop milliseconds):
 * the port gives each call one private pointer and we need nothing else. */
static uint64_t due_of(const struct tt_backend_call *c) {
  return (uint64_t)(uintptr_t)c->impl;
}

static void execute(struct memdb *m, struct tt_backend_call *c) {
  tt_backend_error_clear(&c->error);
  c->response = NULL;
  memdb_wal_begin(m);
  if (memdb_wal_refuse(m, &c->error)) {
    c->status = -1;
    return;
  }
  if (c->canceled) {
    tt_backend_error_set(&c->error, "RequestCanceled", 0, "Request canceled");
    c->status = -1;
    return;
  }
  memset(&c->item_out, 0, sizeof(c->item_out));
  memset(&c->read_out, 0, sizeof(c->read_out));
  memset(&c->txn_out, 0, sizeof(c->txn_out));
  memset(&c->batch_out, 0, sizeof(c->batch_out));
  c->table_out = NULL;
  if (c->table != NULL) {
    struct tt_ddb_table_desc *d = calloc(1, sizeof(*d));
    c->status = d == NULL || memdb_table_ops[c->op](m, c->table, d, &c->error) != 0 ? -1 : 0;
    if (d == NULL)
      memdb_oom(&c->error);
    c->table_out = d;
    if (c->status != 0)
      tt_ddb_table_out_free(&c->table_out);
    if (c->status == 0 && c->op != TT_DDB_DESCRIBE_TABLE &&
        c->op != TT_DDB_DESCRIBE_TIME_TO_LIVE && c->op != TT_DDB_LIST_TABLES &&
        c->op != TT_DDB_LIST_TAGS_OF_RESOURCE)
      memdb_wal_note_table(m, c->op, c->table);
    return;
  }
  int rc = c->read    ? memdb_op_read(m, c->op == TT_DDB_QUERY, c->read, &c->read_out, &c->error)
           : c->txn   ? memdb_op_transact(m, c->op == TT_DDB_TRANSACT_GET_ITEMS, c->txn,
                                          &c->txn_out, &c->error)
           : c->batch ? memdb_op_batch(m, c->op == TT_DDB_BATCH_WRITE_ITEM, c->batch,
                                       &c->batch_out, &c->error)
                      : memdb_op_item(m, c->op, c->item, &c->item_out, &c->error);
  c->status = rc != 0 ? -1 : 0;
}

/* Executes a call and completes it, unless it waits for its log record
 * (with a data dir, a write waits for its log). done() may free c, start
 * calls and cancel calls. */
static void run_one(struct memdb *m, struct tt_backend_call *c) {
  execute(m, c);
  if (!memdb_wal_hold(m, c))
    c->done(c);
}

/* Takes the next call to complete: a canceled one first (they do not wait
 * for their turn), else the oldest queued call that is due at `now`. */
static struct tt_backend_call *take_ready(struct memdb *m, uint64_t now) {
  struct tt_backend_call *c = m->canceled;
  if (c) {
    m->canceled = c->next;
  } else if (m->head && due_of(m->head) <= now) {
    c = m->head;
    m->head = c->next;
    if (m->head == NULL)
      m->tail = NULL;
  } else {
    return NULL;
  }
  c->next = NULL;
  return c;
}

/* Runs the calls that are due. Reached from a timer (calls delayed by
 * latency_ms) or from an idle handle (calls due now). Not a zero timer: a
 * timer re-armed at 0 from a timer callback runs again in the same timer
 * phase (libuv 1.44), so a busy server would never reach the loop's close
 * phase and closed handles -- request contexts -- would pile up. */
static void run_due(struct memdb *m) {
  /* Only calls queued before this tick run now, so a completion that starts
   * another call cannot keep this callback busy forever. Canceled calls
   * queued meanwhile are taken too: there are at most as many as calls. */
  struct tt_backend_call *last = m->tail;
  uint64_t now = uv_now(m->base.loop);
  m->running = true;
  bool reached_last = last == NULL;
  struct tt_backend_call *c;
  while (!reached_last && (c = take_ready(m, now)) != NULL) {
    reached_last = c == last; /* done() may free c */
    run_one(m, c);
  }
  while (m->canceled && (c = take_ready(m, now)) != NULL)
    run_one(m, c);
  m->running = false;
  memdb_arm(m);
}

/* The port's trampoline (backend.h): one flat loop over the FIFO. A
 * completion that starts the next page or lane only appends to the FIFO,
 * and this loop takes it next, so nothing recurses however long the chain.
 * Due times compare with the loop time of this iteration, which does not
 * move here: calls started now are due, calls delayed by latency_ms wait
 * for their timer. */
static size_t memdb_run_ready(struct tt_backend *b, uint64_t until_ns) {
  struct memdb *m = b->impl;
  if (m->running || m->closing)
    return 0;
  m->running = true;
  uint64_t now = uv_now(b->loop);
  size_t n = 0;
  struct tt_backend_call *c;
  while ((c = take_ready(m, now)) != NULL) {
    run_one(m, c);
    n++;
    if (until_ns && uv_hrtime() >= until_ns) /* CLOCK_MONOTONIC */
      break;
  }
  m->running = false;
  memdb_arm(m); /* nothing left: the idle handle stops, so the loop may block */
  return n;
}

static void timer_cb(uv_timer_t *h) { run_due(h->data); }

static void idle_cb(uv_idle_t *h) { run_due(h->data); }

void memdb_arm(struct memdb *m) {
  if (m->closing)
    return;
  uint64_t now = uv_now(m->base.loop);
  if (m->canceled || (m->head && due_of(m->head) <= now)) {
    uv_timer_stop(&m->timer);
    uv_idle_start(&m->idle, idle_cb);
    return;
  }
  uv_idle_stop(&m->idle);
  if (m->head == NULL) {
    uv_timer_stop(&m->timer);
    return;
  }
  uv_timer_start(&m->timer, timer_cb, due_of(m->head) - now, 0);
}

static int memdb_start(struct tt_backend *b, struct tt_backend_call *c) {
  struct memdb *m = b->impl;
  /* Every operation has only the typed form (KMS operations are not
   * DynamoDB's). */
  if (m->closing || c == NULL || c->done == NULL || !tt_backend_call_typed(c))
    return UV_EINVAL;
  c->canceled = false;
  c->status = 0;
  c->response = NULL;
  /* +1 with a latency: the loop's clock is truncated to whole ms, so a
   * call could otherwise complete up to 1 ms of real time early. */
  c->impl = (void *)(uintptr_t)(uv_now(b->loop) + m->opts.latency_ms +
                                (m->opts.latency_ms ? 1 : 0));
  memdb_call_push(&m->head, &m->tail, c);
  if (!uv_is_active((uv_handle_t *)&m->timer) && !uv_is_active((uv_handle_t *)&m->idle))
    memdb_arm(m);
  return 0;
}

static void memdb_cancel(struct tt_backend *b, struct tt_backend_call *c) {
  struct memdb *m = b->impl;
  struct tt_backend_call **pp = &m->head, *prev = NULL;
  while (*pp && *pp != c) {
    prev = *pp;
    pp = &(*pp)->next;
  }
  if (*pp == NULL)
    return; /* already completed (or being canceled): nothing to do */
  *pp = c->next;
  if (m->tail == c)
    m->tail = prev;
  c->canceled = true;
  c->next = NULL;
  struct tt_backend_call **q = &m->canceled;
  while (*q)
    q = &(*q)->next;
  *q = c;
  memdb_arm(m);
}

void memdb_handle_closed(struct memdb *m) {
  if (--m->open_handles == 0 && m->closed)
    m->closed(m->closed_arg);
}

static void closed_cb(uv_handle_t *h) { memdb_handle_closed(h->data); }

static void memdb_close(struct tt_backend *b, void (*closed)(void *arg), void *arg) {
  struct memdb *m = b->impl;
  m->closing = true;
  m->closed = closed;
  m->closed_arg = arg;
  uv_close((uv_handle_t *)&m->timer, closed_cb);
  uv_close((uv_handle_t *)&m->idle, closed_cb);
  memdb_wal_close(m); /* flush, sync and close the log, if any */
}

void memdb_free_tables(struct memdb *m) {
  while (m->tables) {
    struct memdb_table *t = m->tables;
    m->tables = t->next;
    memdb_table_free(t);
  }
  memdb_tokens_expire(m, 0, true);
}

static void memdb_destroy(struct tt_backend *b) {
  struct memdb *m = b->impl;
  memdb_free_tables(m);
  memdb_wal_free(m);
  free(m);
}

static const struct tt_backend_ops memdb_ops = {
    .name = "memory",
    .start = memdb_start,
    .cancel = memdb_cancel,
    .close = memdb_close,
    .destroy = memdb_destroy,
    .run_ready = memdb_run_ready,
};

int tt_memdb_new(uv_loop_t *loop, const struct tt_memdb_options *opts, struct tt_backend **out) {
  char msg[512];
  return tt_memdb_open(loop, opts, out, msg, sizeof(msg));
}

int tt_memdb_open(uv_loop_t *loop, const struct tt_memdb_options *opts, struct tt_backend **out,
                  char *msg, size_t msgsz) {
  struct memdb *m = calloc(1, sizeof(*m));
  if (msgsz)
    msg[0] = '\0';
  if (m == NULL) {
    snprintf(msg, msgsz, "out of memory");
    return UV_ENOMEM;
  }
  if (opts)
    m->opts = *opts;
  m->base.loop = loop;
  m->base.impl = m;
  int rc;
  if (m->opts.data_dir && (rc = memdb_wal_open(m, msg, msgsz)) != 0) {
    memdb_free_tables(m); /* what the load made before it failed */
    memdb_wal_free(m);
    free(m);
    return rc;
  }
  rc = uv_timer_init(loop, &m->timer);
  if (rc != 0) {
    snprintf(msg, msgsz, "%s", uv_strerror(rc));
    memdb_destroy(&m->base);
    return rc;
  }
  m->timer.data = m;
  uv_idle_init(loop, &m->idle); /* cannot fail once the timer could be made */
  m->idle.data = m;
  m->open_handles = 2;
  m->base.ops = &memdb_ops;
  *out = &m->base;
  return 0;
}
