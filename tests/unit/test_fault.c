/* SPDX-License-Identifier: Apache-2.0 */
/* test_fault.c -- the fault-injecting decorator over a tiny fake backend
 * on a real loop: every fault kind, times and expiry, op/table matching,
 * latency and cancellation, Unprocessed splitting, close and destroy. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "api/ddb_items.h"
#include "backend/fault.h"
#include "value/codec_ddb.h"

/* ---- a fake inner backend: completes calls in order after delay_ms ------- */

#define FAKE_MAX 16

struct fake {
  struct tt_backend base;
  uv_timer_t timer;
  uint64_t delay_ms;
  struct tt_backend_call *pending[FAKE_MAX];
  size_t npending;
  unsigned starts, cancels;
  json_t *last_request; /* a reference to the last request started */
  json_t *extra_unprocessed; /* BatchWriteItem: what the fake itself leaves out */
  const char *fail_type;     /* every call fails with this type when set */
  int refuse;                /* start() returns this when nonzero */
  int closed, destroyed;
  void (*closed_fn)(void *arg);
  void *closed_arg;
};

/* Appends a clone of v to a batch result's list. */
static void push(struct tt_ddb_batch_value **list, size_t *n, size_t table, bool put,
                 const struct tt_av *v) {
  *list = realloc(*list, (*n + 1) * sizeof(**list));
  ck_assert_ptr_nonnull(*list);
  (*list)[*n] = (struct tt_ddb_batch_value){.table = table, .put = put};
  ck_assert_int_eq(tt_av_clone(&(*list)[*n].value, v), 0);
  (*n)++;
}

static json_t *fake_response(struct fake *f, struct tt_backend_call *c) {
  const struct tt_ddb_batch_request *b = c->batch;
  if (c->op == TT_DDB_BATCH_WRITE_ITEM) {
    /* What the fake itself leaves out, in tables of the request. */
    const char *name;
    json_t *list;
    json_object_foreach(f->extra_unprocessed, name, list) {
      for (size_t t = 0; t < b->n_tables; t++) {
        size_t i;
        json_t *e;
        json_array_foreach(strcmp(b->tables[t].table, name) == 0 ? list : NULL, i, e) {
          struct tt_av v;
          struct tt_error err;
          json_t *item = json_object_get(json_object_get(e, "PutRequest"), "Item");
          ck_assert_int_eq(tt_ddb_item_from_json(item, "Item", &v, &err), 0);
          push(&c->batch_out.left, &c->batch_out.n_left, t, true, &v);
          tt_av_free(&v);
        }
      }
    }
    return NULL;
  }
  if (c->op == TT_DDB_BATCH_GET_ITEM) {
    /* Every key is "found": the item is the key itself. */
    for (size_t i = 0; i < b->n_entries; i++)
      push(&c->batch_out.items, &c->batch_out.n_items, b->entries[i].table, false,
           b->entries[i].value);
    return NULL;
  }
  return json_pack("{s:s}", "from", "inner");
}

/* A typed batch request as DynamoDB's JSON: what the fake was given. */
static json_t *batch_request_json(enum tt_ddb_op op, const struct tt_ddb_batch_request *b) {
  bool write = op == TT_DDB_BATCH_WRITE_ITEM;
  json_t *ri = json_object();
  for (size_t t = 0; t < b->n_tables; t++) {
    const struct tt_ddb_batch_table *bt = &b->tables[t];
    json_t *list = json_array();
    for (size_t i = 0; i < b->n_entries; i++) {
      const struct tt_ddb_batch_entry *x = &b->entries[i];
      json_t *v = tt_ddb_item_to_json(x->value);
      if (x->table == t)
        json_array_append_new(list, !write ? v
                                    : json_pack("{s:{s:o}}", x->put ? "PutRequest" : "DeleteRequest",
                                                x->put ? "Item" : "Key", v));
      else
        json_decref(v);
    }
    if (json_array_size(list) == 0) {
      json_decref(list);
      continue;
    }
    json_t *spec = write ? list : json_pack("{s:o}", "Keys", list);
    if (!write && bt->projection)
      json_object_set_new(spec, "ProjectionExpression", json_string(bt->projection));
    if (!write && bt->consistent_read)
      json_object_set_new(spec, "ConsistentRead", json_true());
    json_object_set_new(ri, bt->table, spec);
  }
  json_t *out = json_pack("{s:o}", "RequestItems", ri);
  if (b->capacity)
    json_object_set_new(out, "ReturnConsumedCapacity",
                        json_string(b->capacity == 1 ? "TOTAL" : "INDEXES"));
  return out;
}

static void fake_fire(uv_timer_t *t) {
  struct fake *f = t->data;
  size_t n = f->npending;
  struct tt_backend_call *batch[FAKE_MAX];
  memcpy(batch, f->pending, n * sizeof(batch[0]));
  f->npending = 0;
  for (size_t i = 0; i < n; i++) {
    struct tt_backend_call *c = batch[i];
    if (c->canceled) {
      c->status = tt_backend_error_set(&c->error, "RequestCanceled", 0, "canceled");
    } else if (f->fail_type) {
      c->status = tt_backend_error_set(&c->error, f->fail_type, 400, "from the fake");
      c->error.body = json_pack("{s:s}", "__type", f->fail_type);
    } else {
      c->status = 0;
      c->response = fake_response(f, c);
    }
    c->done(c);
  }
}

static int fake_start(struct tt_backend *b, struct tt_backend_call *c) {
  struct fake *f = (struct fake *)b;
  if (f->refuse)
    return f->refuse;
  ck_assert_uint_lt(f->npending, FAKE_MAX);
  f->pending[f->npending++] = c;
  f->starts++;
  json_decref(f->last_request);
  f->last_request = c->batch ? batch_request_json(c->op, c->batch) : json_incref(c->request);
  c->canceled = false;
  if (!uv_is_active((uv_handle_t *)&f->timer))
    uv_timer_start(&f->timer, fake_fire, f->delay_ms, 0);
  return 0;
}

static void fake_cancel(struct tt_backend *b, struct tt_backend_call *c) {
  struct fake *f = (struct fake *)b;
  for (size_t i = 0; i < f->npending; i++)
    if (f->pending[i] == c && !c->canceled) {
      f->cancels++;
      c->canceled = true;
      uv_timer_start(&f->timer, fake_fire, 0, 0);
    }
}

static void fake_timer_closed(uv_handle_t *h) {
  struct fake *f = h->data;
  f->closed++;
  if (f->closed_fn)
    f->closed_fn(f->closed_arg);
}

static void fake_close(struct tt_backend *b, void (*closed)(void *arg), void *arg) {
  struct fake *f = (struct fake *)b;
  ck_assert_uint_eq(f->npending, 0);
  f->closed_fn = closed;
  f->closed_arg = arg;
  uv_close((uv_handle_t *)&f->timer, fake_timer_closed);
}

static void fake_destroy(struct tt_backend *b) {
  struct fake *f = (struct fake *)b;
  f->destroyed++;
  json_decref(f->last_request);
  f->last_request = NULL;
}

/* The port's trampoline: every pending call is ready now. */
static size_t fake_run_ready(struct tt_backend *b, uint64_t until_ns) {
  struct fake *f = (struct fake *)b;
  (void)until_ns;
  size_t n = f->npending;
  if (n) {
    uv_timer_stop(&f->timer);
    fake_fire(&f->timer);
  }
  return n;
}

static const struct tt_backend_ops fake_ops = {"fake", fake_start, fake_cancel, fake_close,
                                               fake_destroy, fake_run_ready};

/* ---- fixture ------------------------------------------------------------- */

#define CALLS 8

struct fixture {
  uv_loop_t loop;
  struct fake fake;
  struct tt_backend *b;
  struct tt_fault_backend *fb;
  struct tt_backend_call calls[CALLS];
  struct tt_ddbt_batch batches[CALLS]; /* a batch call's typed form of its request */
  int done[CALLS];
  unsigned done_seq[CALLS]; /* completion order: 1, 2, ... */
  unsigned ndone;
  int closed_cb;
};

static struct fixture fx;

static void setup(void) {
  memset(&fx, 0, sizeof(fx));
  ck_assert_int_eq(uv_loop_init(&fx.loop), 0);
  fx.fake.base.ops = &fake_ops;
  fx.fake.base.loop = &fx.loop;
  ck_assert_int_eq(uv_timer_init(&fx.loop, &fx.fake.timer), 0);
  fx.fake.timer.data = &fx.fake;
  ck_assert_int_eq(tt_fault_backend_new(&fx.fake.base, &fx.loop, &fx.b), 0);
  fx.fb = tt_fault_backend_of(fx.b);
  ck_assert_ptr_nonnull(fx.fb);
}

static void closed_cb(void *arg) { ((struct fixture *)arg)->closed_cb++; }

static void teardown(void) {
  for (int i = 0; i < CALLS; i++) {
    json_decref(fx.calls[i].request);
    json_decref(fx.calls[i].response);
    tt_backend_error_clear(&fx.calls[i].error);
    tt_ddb_batch_result_free(&fx.calls[i].batch_out);
    tt_ddbt_batch_free(&fx.batches[i]);
  }
  fx.b->ops->close(fx.b, closed_cb, &fx);
  ck_assert_int_eq(fx.closed_cb, 0); /* asynchronous, like every close */
  uv_run(&fx.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(fx.closed_cb, 1);
  ck_assert_int_eq(fx.fake.closed, 1);
  fx.b->ops->destroy(fx.b);
  ck_assert_int_eq(fx.fake.destroyed, 1);
  json_decref(fx.fake.extra_unprocessed);
  ck_assert_int_eq(uv_loop_close(&fx.loop), 0);
}

static void call_done(struct tt_backend_call *c) {
  int i = (int)(c - fx.calls);
  /* A batch's answer as the DynamoDB listener writes it. */
  if (c->batch && c->status == 0)
    c->response = tt_ddbt_batch_answer(c->op, c->request, &fx.batches[i], &c->batch_out);
  fx.done[i]++;
  fx.done_seq[i] = ++fx.ndone;
}

/* Starts call i with op and a request (stolen); asserts the start worked
 * and that done did not run inside start(). */
/* Starts call i with its request: JSON (a batch is converted), or a typed
 * transaction. */
static void start_txn(int i, enum tt_ddb_op op, json_t *request,
                      const struct tt_ddb_txn_request *txn) {
  struct tt_backend_call *c = &fx.calls[i];
  json_decref(c->request);
  json_decref(c->response);
  tt_backend_error_clear(&c->error);
  tt_ddb_batch_result_free(&c->batch_out);
  tt_ddbt_batch_free(&fx.batches[i]);
  memset(c, 0, sizeof(*c));
  c->op = op;
  c->request = request;
  c->txn = txn;
  /* Batches cross the port typed: converted as the DynamoDB listener
   * converts them; the JSON stays for the assertions. */
  struct tt_backend_error e;
  memset(&e, 0, sizeof(e));
  if (tt_ddbt_is_batch(op)) {
    ck_assert_int_eq(tt_ddbt_batch_parse(op, request, &fx.batches[i], &e), 0);
    c->batch = &fx.batches[i].req;
  }
  c->done = call_done;
  fx.done[i] = 0;
  ck_assert_int_eq(fx.b->ops->start(fx.b, c), 0);
  ck_assert_int_eq(fx.done[i], 0);
}

static void start(int i, enum tt_ddb_op op, json_t *request) { start_txn(i, op, request, NULL); }

static void run_loop(void) { uv_run(&fx.loop, UV_RUN_DEFAULT); }

static unsigned add_rule(const char *op, const char *table, const char *error, unsigned times,
                         uint64_t latency_ms, unsigned unprocessed) {
  struct tt_fault_spec spec = {.op = op, .table = table, .error = error, .times = times,
                               .latency_ms = latency_ms, .unprocessed = unprocessed};
  struct tt_error err;
  unsigned id = 0;
  ck_assert_msg(tt_fault_add(fx.fb, &spec, &id, &err) == 0, "%s", err.message);
  ck_assert_uint_ge(id, 1);
  return id;
}

static json_t *put_req(const char *table) {
  return json_pack("{s:s,s:{s:{s:s}}}", "TableName", table, "Item", "PK", "S", "k");
}

/* ---- tests --------------------------------------------------------------- */

START_TEST(test_pass_through) {
  start(0, TT_DDB_PUT_ITEM, put_req("T"));
  run_loop();
  ck_assert_int_eq(fx.done[0], 1);
  ck_assert_int_eq(fx.calls[0].status, 0);
  ck_assert_str_eq(json_string_value(json_object_get(fx.calls[0].response, "from")), "inner");
  ck_assert_uint_eq(fx.fake.starts, 1);
  ck_assert_uint_eq(tt_fault_fired_total(fx.fb), 0);
  /* Another backend is not a decorator. */
  ck_assert_ptr_null(tt_fault_backend_of(&fx.fake.base));
}
END_TEST

/* Each injectable error, with the classification the client relies on. */
static const struct {
  const char *type;
  unsigned status;
  bool retryable, throttling;
} kinds[] = {
    {"ProvisionedThroughputExceededException", 400, true, true},
    {"InternalServerError", 500, true, false},
    {"ServiceUnavailable", 503, true, false},
    {"Timeout", 0, true, false},
    {"ConnectionReset", 0, true, false},
    {"ConditionalCheckFailedException", 400, false, false},
};

/* run_ready reaches the calls that passed through; a call a rule took
 * waits for the fault timer like a real failed or delayed call. */
START_TEST(test_run_ready_passes_through_only_untaken) {
  add_rule("PutItem", NULL, "InternalServerError", 1, 0, 0);
  start(0, TT_DDB_PUT_ITEM, put_req("T"));
  start(1, TT_DDB_GET_ITEM, json_pack("{s:s}", "TableName", "T"));
  ck_assert_uint_eq(fx.b->ops->run_ready(fx.b, 0), 1);
  ck_assert_int_eq(fx.done[1], 1);
  ck_assert_int_eq(fx.calls[1].status, 0);
  ck_assert_int_eq(fx.done[0], 0);
  run_loop();
  ck_assert_int_eq(fx.done[0], 1);
  ck_assert_str_eq(fx.calls[0].error.type, "InternalServerError");
  ck_assert_int_eq(fx.done[1], 1);
}
END_TEST

START_TEST(test_error_kinds) {
  add_rule("PutItem", NULL, kinds[_i].type, 1, 0, 0);
  start(0, TT_DDB_PUT_ITEM, put_req("T"));
  run_loop();
  const struct tt_backend_call *c = &fx.calls[0];
  ck_assert_int_eq(fx.done[0], 1);
  ck_assert_int_eq(c->status, -1);
  ck_assert_ptr_null(c->response);
  ck_assert_str_eq(c->error.type, kinds[_i].type);
  ck_assert_uint_eq(c->error.http_status, kinds[_i].status);
  ck_assert_int_eq(c->error.retryable, kinds[_i].retryable);
  ck_assert_int_eq(c->error.throttling, kinds[_i].throttling);
  ck_assert_str_eq(c->error.request_id, "tt-fault-1");
  ck_assert_uint_eq(fx.fake.starts, 0); /* the call never ran */
  ck_assert_uint_eq(tt_fault_fired_total(fx.fb), 1);
}
END_TEST

START_TEST(test_times_then_expiry) {
  unsigned id = add_rule("PutItem", NULL, "InternalServerError", 2, 0, 0);
  for (int i = 0; i < 3; i++) {
    start(i, TT_DDB_PUT_ITEM, put_req("T"));
    run_loop();
  }
  ck_assert_int_eq(fx.calls[0].status, -1);
  ck_assert_int_eq(fx.calls[1].status, -1);
  ck_assert_int_eq(fx.calls[2].status, 0);
  ck_assert_uint_eq(fx.fake.starts, 1);
  ck_assert_uint_eq(tt_fault_fired(fx.fb, id), 2);
  ck_assert_uint_eq(tt_fault_fired(fx.fb, id + 100), 0);
  /* An expired rule stays listed with its counts. */
  struct tt_fault_rule_info info;
  ck_assert_uint_eq(tt_fault_rule_count(fx.fb), 1);
  ck_assert_int_eq(tt_fault_rule_get(fx.fb, 0, &info), 0);
  ck_assert_uint_eq(info.id, id);
  ck_assert_str_eq(info.op, "PutItem");
  ck_assert_str_eq(info.error, "InternalServerError");
  ck_assert_uint_eq(info.times, 2);
  ck_assert_uint_eq(info.fired, 2);
  ck_assert_ptr_null(info.table);
  ck_assert_int_eq(tt_fault_rule_get(fx.fb, 1, &info), -1);
}
END_TEST

START_TEST(test_times_in_parallel) {
  /* Three calls started together: the first two take the rule. */
  add_rule("*", NULL, "ServiceUnavailable", 2, 0, 0);
  for (int i = 0; i < 3; i++)
    start(i, TT_DDB_GET_ITEM, json_pack("{s:s}", "TableName", "T"));
  run_loop();
  ck_assert_int_eq(fx.calls[0].status, -1);
  ck_assert_int_eq(fx.calls[1].status, -1);
  ck_assert_int_eq(fx.calls[2].status, 0);
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(fx.done[i], 1);
}
END_TEST

START_TEST(test_op_matching) {
  add_rule("PutItem", NULL, "InternalServerError", 5, 0, 0);
  start(0, TT_DDB_GET_ITEM, json_pack("{s:s}", "TableName", "T"));
  start(1, TT_DDB_PUT_ITEM, put_req("T"));
  run_loop();
  ck_assert_int_eq(fx.calls[0].status, 0);
  ck_assert_int_eq(fx.calls[1].status, -1);
  tt_fault_clear(fx.fb);
  ck_assert_uint_eq(tt_fault_rule_count(fx.fb), 0);
  add_rule("*", NULL, "InternalServerError", 5, 0, 0);
  start(2, TT_DDB_DELETE_ITEM, json_pack("{s:s}", "TableName", "T"));
  start(3, TT_DDB_QUERY, json_pack("{s:s}", "TableName", "T"));
  run_loop();
  ck_assert_int_eq(fx.calls[2].status, -1);
  ck_assert_int_eq(fx.calls[3].status, -1);
  ck_assert_uint_eq(fx.fake.starts, 1);
}
END_TEST

START_TEST(test_table_matching) {
  unsigned id = add_rule("*", "A", "InternalServerError", 10, 0, 0);
  start(0, TT_DDB_PUT_ITEM, put_req("B"));
  start(1, TT_DDB_PUT_ITEM, put_req("A"));
  start(2, TT_DDB_BATCH_WRITE_ITEM,
        json_pack("{s:{s:[{s:{s:{}}}]}}", "RequestItems", "A", "PutRequest", "Item"));
  /* A transaction matches when any of its steps names the table. */
  static const struct tt_ddb_txn_step wsteps[] = {
      {.kind = TT_DDB_TXN_PUT, .r = {.table = "B"}},
      {.kind = TT_DDB_TXN_CONDITION_CHECK, .r = {.table = "A"}}};
  static const struct tt_ddb_txn_step gsteps[] = {{.kind = TT_DDB_TXN_GET, .r = {.table = "B"}}};
  static const struct tt_ddb_txn_request wtxn = {.steps = wsteps, .n_steps = 2};
  static const struct tt_ddb_txn_request gtxn = {.steps = gsteps, .n_steps = 1};
  start_txn(3, TT_DDB_TRANSACT_WRITE_ITEMS, NULL, &wtxn);
  start_txn(4, TT_DDB_TRANSACT_GET_ITEMS, NULL, &gtxn);
  start(5, TT_DDB_PUT_ITEM, json_string("not an object"));
  run_loop();
  ck_assert_int_eq(fx.calls[0].status, 0);
  ck_assert_int_eq(fx.calls[1].status, -1);
  ck_assert_int_eq(fx.calls[2].status, -1);
  ck_assert_int_eq(fx.calls[3].status, -1);
  ck_assert_int_eq(fx.calls[4].status, 0);
  ck_assert_int_eq(fx.calls[5].status, 0); /* the inner backend judges it */
  ck_assert_uint_eq(tt_fault_fired(fx.fb, id), 3);
  struct tt_fault_rule_info info;
  ck_assert_int_eq(tt_fault_rule_get(fx.fb, 0, &info), 0);
  ck_assert_str_eq(info.table, "A");
  ck_assert_str_eq(info.op, "*");
}
END_TEST

START_TEST(test_first_matching_rule_wins) {
  unsigned a = add_rule("PutItem", NULL, "InternalServerError", 1, 0, 0);
  unsigned b = add_rule("*", NULL, "ServiceUnavailable", 1, 0, 0);
  start(0, TT_DDB_PUT_ITEM, put_req("T"));
  start(1, TT_DDB_PUT_ITEM, put_req("T"));
  start(2, TT_DDB_PUT_ITEM, put_req("T"));
  run_loop();
  ck_assert_str_eq(fx.calls[0].error.type, "InternalServerError");
  ck_assert_str_eq(fx.calls[1].error.type, "ServiceUnavailable");
  ck_assert_int_eq(fx.calls[2].status, 0);
  ck_assert_uint_eq(tt_fault_fired(fx.fb, a), 1);
  ck_assert_uint_eq(tt_fault_fired(fx.fb, b), 1);
}
END_TEST

static void longest_due(uv_handle_t *h, void *arg) {
  uint64_t *longest = arg;
  if (h->type == UV_TIMER && uv_is_active(h) && h != (uv_handle_t *)&fx.fake.timer &&
      uv_timer_get_due_in((uv_timer_t *)h) > *longest)
    *longest = uv_timer_get_due_in((uv_timer_t *)h);
}

/* How long, by the loop's clock, the decorator's active timers have to run:
 * a delayed call waits on one due after its latency. 0 when none runs. */
static uint64_t delay_due_in(void) {
  uint64_t longest = 0;
  uv_walk(&fx.loop, longest_due, &longest);
  return longest;
}

START_TEST(test_latency_then_runs) {
  add_rule("GetItem", NULL, NULL, 1, 60, 0);
  start(0, TT_DDB_GET_ITEM, json_pack("{s:s}", "TableName", "T"));
  ck_assert_uint_ge(delay_due_in(), 60);
  ck_assert_uint_eq(fx.fake.starts, 0); /* waits before it runs */
  start(1, TT_DDB_GET_ITEM, json_pack("{s:s}", "TableName", "T")); /* rule expired */
  ck_assert_uint_eq(fx.fake.starts, 1); /* runs at once */
  run_loop();
  ck_assert_int_eq(fx.calls[0].status, 0);
  ck_assert_str_eq(json_string_value(json_object_get(fx.calls[0].response, "from")), "inner");
  ck_assert_uint_eq(fx.done_seq[1], 1); /* the undelayed call first */
  ck_assert_uint_eq(fx.done_seq[0], 2);
  ck_assert_uint_eq(fx.fake.starts, 2);
}
END_TEST

START_TEST(test_latency_then_error) {
  add_rule("PutItem", NULL, "ProvisionedThroughputExceededException", 1, 40, 0);
  start(0, TT_DDB_PUT_ITEM, put_req("T"));
  ck_assert_uint_ge(delay_due_in(), 40);
  run_loop();
  ck_assert_int_eq(fx.done[0], 1);
  ck_assert_str_eq(fx.calls[0].error.type, "ProvisionedThroughputExceededException");
  ck_assert_uint_eq(fx.fake.starts, 0);
}
END_TEST

static void cancel_timer_cb(uv_timer_t *t) {
  struct tt_backend_call *c = t->data;
  fx.b->ops->cancel(fx.b, c);
  fx.b->ops->cancel(fx.b, c); /* twice is harmless */
}

static void run_with_cancel(struct tt_backend_call *c, uint64_t after_ms) {
  uv_timer_t t;
  uv_timer_init(&fx.loop, &t);
  t.data = c;
  uv_timer_start(&t, cancel_timer_cb, after_ms, 0);
  run_loop();
  uv_close((uv_handle_t *)&t, NULL);
  run_loop();
}

START_TEST(test_cancel_during_latency) {
  /* The longest latency: a cancel that left the call waiting would keep the
   * loop (and this test) running for it. */
  add_rule("PutItem", NULL, NULL, 1, TT_FAULT_MAX_LATENCY_MS, 0);
  start(0, TT_DDB_PUT_ITEM, put_req("T"));
  run_with_cancel(&fx.calls[0], 20);
  ck_assert_int_eq(fx.done[0], 1);
  ck_assert_int_eq(fx.calls[0].status, -1);
  ck_assert_str_eq(fx.calls[0].error.type, "RequestCanceled");
  ck_assert_uint_eq(fx.fake.starts, 0); /* never ran */
}
END_TEST

START_TEST(test_cancel_while_inner_runs) {
  fx.fake.delay_ms = 3600000; /* only a cancel passed on ends the inner call */
  add_rule("PutItem", NULL, NULL, 1, 10, 0);
  start(0, TT_DDB_PUT_ITEM, put_req("T"));
  run_with_cancel(&fx.calls[0], 40);
  ck_assert_int_eq(fx.done[0], 1);
  ck_assert_str_eq(fx.calls[0].error.type, "RequestCanceled");
  ck_assert_uint_eq(fx.fake.starts, 1);
  ck_assert_uint_eq(fx.fake.cancels, 1);
}
END_TEST

START_TEST(test_cancel_pass_through) {
  fx.fake.delay_ms = 5000;
  start(0, TT_DDB_PUT_ITEM, put_req("T"));
  run_with_cancel(&fx.calls[0], 10);
  ck_assert_str_eq(fx.calls[0].error.type, "RequestCanceled");
  ck_assert_uint_eq(fx.fake.cancels, 1);
}
END_TEST

START_TEST(test_inner_error_and_refusal) {
  fx.fake.fail_type = "ValidationException";
  add_rule("PutItem", NULL, NULL, 2, 5, 0);
  start(0, TT_DDB_PUT_ITEM, put_req("T"));
  run_loop();
  ck_assert_str_eq(fx.calls[0].error.type, "ValidationException");
  ck_assert_str_eq(json_string_value(json_object_get(fx.calls[0].error.body, "__type")),
                   "ValidationException");
  fx.fake.fail_type = NULL;
  fx.fake.refuse = UV_EINVAL;
  start(1, TT_DDB_PUT_ITEM, put_req("T"));
  run_loop();
  ck_assert_int_eq(fx.done[1], 1);
  ck_assert_str_eq(fx.calls[1].error.type, "InternalFailure");
  /* Without a rule a refusal is the caller's to see. */
  struct tt_backend_call c = {.op = TT_DDB_PUT_ITEM, .done = call_done};
  ck_assert_int_eq(fx.b->ops->start(fx.b, &c), UV_EINVAL);
}
END_TEST

static json_t *write_req(void) {
  return json_pack("{s:{s:[{s:{s:{s:{s:s}}}},{s:{s:{s:{s:s}}}},{s:{s:{s:{s:s}}}},"
                   "{s:{s:{s:{s:s}}}}]},s:s}",
                   "RequestItems", "T", "PutRequest", "Item", "PK", "S", "a", "PutRequest",
                   "Item", "PK", "S", "b", "DeleteRequest", "Key", "PK", "S", "c", "PutRequest",
                   "Item", "PK", "S", "d", "ReturnConsumedCapacity", "TOTAL");
}

/* The PK of entry i of a BatchWriteItem list. */
static const char *entry_pk(const json_t *list, size_t i) {
  const json_t *e = json_array_get(list, i);
  const json_t *r = json_object_get(e, "PutRequest");
  const json_t *item = r ? json_object_get(r, "Item")
                         : json_object_get(json_object_get(e, "DeleteRequest"), "Key");
  return json_string_value(json_object_get(json_object_get(item, "PK"), "S"));
}

START_TEST(test_unprocessed_write_half) {
  add_rule("BatchWriteItem", NULL, "Unprocessed", 1, 0, 0);
  start(0, TT_DDB_BATCH_WRITE_ITEM, write_req());
  run_loop();
  ck_assert_int_eq(fx.calls[0].status, 0);
  /* The inner backend got only the processed half... */
  ck_assert_uint_eq(fx.fake.starts, 1);
  json_t *sent = json_object_get(json_object_get(fx.fake.last_request, "RequestItems"), "T");
  ck_assert_uint_eq(json_array_size(sent), 2);
  ck_assert_str_eq(entry_pk(sent, 0), "a");
  ck_assert_str_eq(entry_pk(sent, 1), "b");
  ck_assert_str_eq(json_string_value(json_object_get(fx.fake.last_request,
                                                     "ReturnConsumedCapacity")),
                   "TOTAL");
  /* ...the caller's request is untouched, and the rest is reported. */
  ck_assert_uint_eq(
      json_array_size(json_object_get(json_object_get(fx.calls[0].request, "RequestItems"), "T")),
      4);
  json_t *left =
      json_object_get(json_object_get(fx.calls[0].response, "UnprocessedItems"), "T");
  ck_assert_uint_eq(json_array_size(left), 2);
  ck_assert_str_eq(entry_pk(left, 0), "c");
  ck_assert_str_eq(entry_pk(left, 1), "d");
  ck_assert_ptr_nonnull(json_object_get(json_array_get(left, 0), "DeleteRequest"));
}
END_TEST

START_TEST(test_unprocessed_write_all) {
  add_rule("*", NULL, "Unprocessed", 1, 0, 25);
  start(1, TT_DDB_PUT_ITEM, put_req("T")); /* not a batch: Unprocessed never matches */
  start(0, TT_DDB_BATCH_WRITE_ITEM, write_req());
  run_loop();
  ck_assert_int_eq(fx.calls[1].status, 0);
  ck_assert_int_eq(fx.calls[0].status, 0);
  ck_assert_uint_eq(fx.fake.starts, 1); /* only the PutItem ran */
  json_t *expect = json_object_get(fx.calls[0].request, "RequestItems");
  ck_assert(json_equal(json_object_get(fx.calls[0].response, "UnprocessedItems"), expect));
}
END_TEST

START_TEST(test_unprocessed_write_one_table_merged) {
  /* Two tables; the rule names T2 and leaves one item out; the inner
   * backend itself leaves one T2 item out too: both are reported. */
  fx.fake.extra_unprocessed =
      json_pack("{s:[{s:{s:{s:{s:s}}}}]}", "T2", "PutRequest", "Item", "PK", "S", "inner");
  add_rule("BatchWriteItem", "T2", "Unprocessed", 1, 0, 1);
  start(0, TT_DDB_BATCH_WRITE_ITEM,
        json_pack("{s:{s:[{s:{s:{s:{s:s}}}}],s:[{s:{s:{s:{s:s}}}},{s:{s:{s:{s:s}}}}]}}",
                  "RequestItems", "T1", "PutRequest", "Item", "PK", "S", "x", "T2",
                  "PutRequest", "Item", "PK", "S", "y", "PutRequest", "Item", "PK", "S", "z"));
  run_loop();
  ck_assert_int_eq(fx.calls[0].status, 0);
  json_t *sent = json_object_get(fx.fake.last_request, "RequestItems");
  ck_assert_uint_eq(json_array_size(json_object_get(sent, "T1")), 1);
  ck_assert_uint_eq(json_array_size(json_object_get(sent, "T2")), 1);
  ck_assert_str_eq(entry_pk(json_object_get(sent, "T2"), 0), "y");
  json_t *u = json_object_get(fx.calls[0].response, "UnprocessedItems");
  ck_assert_uint_eq(json_object_size(u), 1);
  json_t *t2 = json_object_get(u, "T2");
  ck_assert_uint_eq(json_array_size(t2), 2);
  ck_assert_str_eq(entry_pk(t2, 0), "inner");
  ck_assert_str_eq(entry_pk(t2, 1), "z");
}
END_TEST

START_TEST(test_unprocessed_get) {
  add_rule("BatchGetItem", NULL, "Unprocessed", 1, 0, 0);
  start(0, TT_DDB_BATCH_GET_ITEM,
        json_pack("{s:{s:{s:[{s:{s:s}},{s:{s:s}},{s:{s:s}}],s:s,s:b}}}", "RequestItems", "T",
                  "Keys", "PK", "S", "a", "PK", "S", "b", "PK", "S", "c",
                  "ProjectionExpression", "PK", "ConsistentRead", 1));
  run_loop();
  ck_assert_int_eq(fx.calls[0].status, 0);
  /* 3 keys: 2 (half, rounded up) are left out; the inner call got 1. */
  json_t *sent = json_object_get(json_object_get(fx.fake.last_request, "RequestItems"), "T");
  ck_assert_uint_eq(json_array_size(json_object_get(sent, "Keys")), 1);
  ck_assert_str_eq(json_string_value(json_object_get(sent, "ProjectionExpression")), "PK");
  json_t *found = json_object_get(json_object_get(fx.calls[0].response, "Responses"), "T");
  ck_assert_uint_eq(json_array_size(found), 1);
  json_t *left = json_object_get(json_object_get(fx.calls[0].response, "UnprocessedKeys"), "T");
  ck_assert_uint_eq(json_array_size(json_object_get(left, "Keys")), 2);
  ck_assert_str_eq(json_string_value(json_object_get(
                       json_object_get(json_array_get(json_object_get(left, "Keys"), 0), "PK"),
                       "S")),
                   "b");
  ck_assert_str_eq(json_string_value(json_object_get(left, "ProjectionExpression")), "PK");
  ck_assert(json_is_true(json_object_get(left, "ConsistentRead")));
}
END_TEST

START_TEST(test_unprocessed_get_all) {
  add_rule("BatchGetItem", NULL, "Unprocessed", 1, 0, 100);
  start(0, TT_DDB_BATCH_GET_ITEM,
        json_pack("{s:{s:{s:[{s:{s:s}}]}}}", "RequestItems", "T", "Keys", "PK", "S", "a"));
  run_loop();
  ck_assert_int_eq(fx.calls[0].status, 0);
  ck_assert_uint_eq(fx.fake.starts, 0);
  ck_assert_uint_eq(
      json_array_size(json_object_get(json_object_get(fx.calls[0].response, "Responses"), "T")),
      0);
  ck_assert(json_equal(json_object_get(fx.calls[0].response, "UnprocessedKeys"),
                       json_object_get(fx.calls[0].request, "RequestItems")));
}
END_TEST

START_TEST(test_unprocessed_table_not_in_batch) {
  add_rule("BatchWriteItem", "Other", "Unprocessed", 1, 0, 0);
  start(0, TT_DDB_BATCH_WRITE_ITEM, write_req());
  run_loop();
  ck_assert_int_eq(fx.calls[0].status, 0);
  ck_assert_uint_eq(json_object_size(json_object_get(fx.calls[0].response, "UnprocessedItems")),
                    0);
  ck_assert_uint_eq(tt_fault_fired_total(fx.fb), 0);
}
END_TEST

START_TEST(test_clear_keeps_taken_calls) {
  add_rule("PutItem", NULL, "InternalServerError", 3, 30, 0);
  start(0, TT_DDB_PUT_ITEM, put_req("T"));
  tt_fault_clear(fx.fb);
  start(1, TT_DDB_PUT_ITEM, put_req("T"));
  run_loop();
  ck_assert_str_eq(fx.calls[0].error.type, "InternalServerError");
  ck_assert_int_eq(fx.calls[1].status, 0);
  ck_assert_uint_eq(tt_fault_rule_count(fx.fb), 0);
}
END_TEST

static void expect_invalid(struct tt_fault_spec spec, const char *field) {
  struct tt_error err;
  tt_error_clear(&err);
  ck_assert_int_eq(tt_fault_add(fx.fb, &spec, NULL, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err.field, field);
}

START_TEST(test_add_validation) {
  expect_invalid((struct tt_fault_spec){.error = "Timeout", .times = 1}, "op");
  expect_invalid((struct tt_fault_spec){.op = "Putitem", .error = "Timeout", .times = 1}, "op");
  expect_invalid((struct tt_fault_spec){.op = "PutItem", .error = "Boom", .times = 1}, "error");
  expect_invalid((struct tt_fault_spec){.op = "PutItem", .error = "Timeout", .times = 0},
                 "times");
  expect_invalid(
      (struct tt_fault_spec){.op = "PutItem", .error = "Timeout", .times = TT_FAULT_MAX_TIMES + 1},
      "times");
  expect_invalid((struct tt_fault_spec){.op = "PutItem", .error = "Timeout", .times = 1,
                                        .latency_ms = TT_FAULT_MAX_LATENCY_MS + 1},
                 "latency_ms");
  expect_invalid((struct tt_fault_spec){.op = "PutItem", .times = 1}, "error");
  expect_invalid((struct tt_fault_spec){.op = "PutItem", .error = "Unprocessed", .times = 1},
                 "error");
  expect_invalid(
      (struct tt_fault_spec){.op = "PutItem", .error = "Timeout", .times = 1, .unprocessed = 2},
      "unprocessed");
  expect_invalid((struct tt_fault_spec){.op = "PutItem", .table = "", .error = "Timeout",
                                        .times = 1},
                 "table");
  ck_assert_uint_eq(tt_fault_rule_count(fx.fb), 0);
}
END_TEST

START_TEST(test_rule_limit) {
  for (int i = 0; i < TT_FAULT_MAX_RULES; i++)
    add_rule("GetItem", NULL, "Timeout", 1, 0, 0);
  expect_invalid((struct tt_fault_spec){.op = "PutItem", .error = "Timeout", .times = 1},
                 "faults");
  /* Once one expired, a new rule takes its place. */
  start(0, TT_DDB_GET_ITEM, json_pack("{s:s}", "TableName", "T"));
  run_loop();
  ck_assert_str_eq(fx.calls[0].error.type, "Timeout");
  unsigned id = add_rule("PutItem", "T", "Timeout", 1, 0, 0);
  ck_assert_uint_eq(id, TT_FAULT_MAX_RULES + 1);
  ck_assert_uint_eq(tt_fault_rule_count(fx.fb), TT_FAULT_MAX_RULES);
  struct tt_fault_rule_info info;
  ck_assert_int_eq(tt_fault_rule_get(fx.fb, 0, &info), 0);
  ck_assert_uint_eq(info.id, 2); /* rule 1 made room */
}
END_TEST

/* A completion that restarts its call at once: the restarted call still
 * completes on a later turn of the loop, never inside start(). */
static int restarts;
static void restart_done(struct tt_backend_call *c) {
  if (restarts++ < 3) {
    tt_backend_error_clear(&c->error);
    ck_assert_int_eq(fx.b->ops->start(fx.b, c), 0);
  }
}

START_TEST(test_restart_from_done) {
  restarts = 0;
  add_rule("PutItem", NULL, "InternalServerError", 3, 0, 0);
  struct tt_backend_call *c = &fx.calls[0];
  c->op = TT_DDB_PUT_ITEM;
  c->request = put_req("T");
  c->done = restart_done;
  ck_assert_int_eq(fx.b->ops->start(fx.b, c), 0);
  run_loop();
  ck_assert_int_eq(restarts, 4);
  ck_assert_int_eq(c->status, 0); /* the fourth attempt passed through */
  ck_assert_uint_eq(fx.fake.starts, 1);
}
END_TEST

static Suite *fault_suite(void) {
  Suite *s = suite_create("fault");
  TCase *tc = tcase_create("decorator");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_pass_through);
  tcase_add_test(tc, test_run_ready_passes_through_only_untaken);
  tcase_add_loop_test(tc, test_error_kinds, 0, (int)(sizeof(kinds) / sizeof(kinds[0])));
  tcase_add_test(tc, test_times_then_expiry);
  tcase_add_test(tc, test_times_in_parallel);
  tcase_add_test(tc, test_op_matching);
  tcase_add_test(tc, test_table_matching);
  tcase_add_test(tc, test_first_matching_rule_wins);
  tcase_add_test(tc, test_latency_then_runs);
  tcase_add_test(tc, test_latency_then_error);
  tcase_add_test(tc, test_cancel_during_latency);
  tcase_add_test(tc, test_cancel_while_inner_runs);
  tcase_add_test(tc, test_cancel_pass_through);
  tcase_add_test(tc, test_inner_error_and_refusal);
  tcase_add_test(tc, test_unprocessed_write_half);
  tcase_add_test(tc, test_unprocessed_write_all);
  tcase_add_test(tc, test_unprocessed_write_one_table_merged);
  tcase_add_test(tc, test_unprocessed_get);
  tcase_add_test(tc, test_unprocessed_get_all);
  tcase_add_test(tc, test_unprocessed_table_not_in_batch);
  tcase_add_test(tc, test_clear_keeps_taken_calls);
  tcase_add_test(tc, test_add_validation);
  tcase_add_test(tc, test_rule_limit);
  tcase_add_test(tc, test_restart_from_done);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(fault_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
