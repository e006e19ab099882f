/* SPDX-License-Identifier: Apache-2.0 */
/* test_client.c -- retries, backoff, quota, metrics and cancellation of
 * backend calls, against a scripted fake backend on a real loop. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "client/client.h"

/* ---- a scripted backend: each call takes the next outcome ---------------- */

struct fake {
  struct tt_backend base;
  uv_timer_t timer;
  struct tt_backend_call *pending;
  const char *const *script; /* error types; NULL entry = success */
  size_t nscript, next;
  unsigned starts;
  uint32_t retry_after_ms; /* x-amz-retry-after of every scripted error */
};

static void fake_fire(uv_timer_t *t) {
  struct fake *f = t->data;
  struct tt_backend_call *c = f->pending;
  f->pending = NULL;
  if (c->canceled) {
    c->status = -1;
    tt_backend_error_set(&c->error, "RequestCanceled", 0, "canceled");
  } else {
    const char *type = f->next < f->nscript ? f->script[f->next] : NULL;
    f->next++;
    if (type) {
      c->status = -1;
      tt_backend_error_set(&c->error, type, strstr(type, "Internal") ? 500 : 400, "scripted");
      c->error.retry_after_ms = f->retry_after_ms;
    } else {
      c->status = 0;
      c->response = json_object();
    }
  }
  c->done(c);
}

static int fake_start(struct tt_backend *b, struct tt_backend_call *c) {
  struct fake *f = (struct fake *)b;
  ck_assert_ptr_null(f->pending);
  f->pending = c;
  f->starts++;
  c->canceled = false;
  uv_timer_start(&f->timer, fake_fire, 5, 0);
  return 0;
}

static void fake_cancel(struct tt_backend *b, struct tt_backend_call *c) {
  struct fake *f = (struct fake *)b;
  c->canceled = true;
  uv_timer_start(&f->timer, fake_fire, 0, 0);
}

static const struct tt_backend_ops fake_ops = {"fake", fake_start, fake_cancel, NULL, NULL, NULL};

/* The same backend with the port's trampoline: a pending call is ready at
 * once, as on the memory backend without latency. */
static size_t fake_run_ready(struct tt_backend *b, uint64_t until_ns) {
  struct fake *f = (struct fake *)b;
  (void)until_ns;
  size_t n = 0;
  while (f->pending) {
    uv_timer_stop(&f->timer);
    fake_fire(&f->timer);
    n++;
  }
  return n;
}

static const struct tt_backend_ops fake_sync_ops = {"fake-sync", fake_start, fake_cancel, NULL,
                                                    NULL,        fake_run_ready};

struct fixture {
  uv_loop_t loop;
  struct fake fake;
  struct tt_families fams;
  struct tt_client client;
  struct tt_join join;
  struct tt_client_call call;
  int done_calls;
  int final_status;
  char final_type[64];
  unsigned final_attempts;
  uint32_t final_retry_after_ms;
  uint64_t deadline_in_ms; /* the join's deadline from the start; 0 = none */
  int join_done;
};

static double zero(void *arg) {
  (void)arg;
  return 0.0;
}

static void setup(struct fixture *f, const char *const *script, size_t n) {
  memset(f, 0, sizeof(*f));
  ck_assert_int_eq(uv_loop_init(&f->loop), 0);
  f->fake.base.ops = &fake_ops;
  f->fake.base.loop = &f->loop;
  f->fake.script = script;
  f->fake.nscript = n;
  uv_timer_init(&f->loop, &f->fake.timer);
  f->fake.timer.data = &f->fake;
  ck_assert_int_eq(tt_families_init(&f->fams), 0);
  tt_client_init(&f->client, &f->fake.base, &f->loop, &f->fams);
  f->client.random01 = zero; /* no waiting in tests */
}

static void teardown(struct fixture *f) {
  uv_close((uv_handle_t *)&f->fake.timer, NULL);
  uv_run(&f->loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(uv_loop_close(&f->loop), 0);
  tt_families_free(&f->fams);
}

static void call_done(struct tt_client_call *c) {
  struct fixture *f = c->arg;
  f->done_calls++;
  f->final_status = c->bc.status;
  snprintf(f->final_type, sizeof(f->final_type), "%s", c->bc.error.type);
  f->final_attempts = c->attempt;
  f->final_retry_after_ms = c->bc.error.retry_after_ms;
}

static void join_done(struct tt_join *j, void *arg) {
  (void)j;
  ((struct fixture *)arg)->join_done++;
}

static void run_one(struct fixture *f) {
  tt_join_init(&f->join, &f->fams, join_done, f);
  if (f->deadline_in_ms)
    f->join.deadline_ms = uv_now(&f->loop) + f->deadline_in_ms;
  ck_assert_int_eq(tt_client_start(&f->client, &f->join, &f->call, TT_DDB_GET_ITEM,
                                   json_object(), call_done, f),
                   0);
  tt_join_release(&f->join);
  uv_run(&f->loop, UV_RUN_DEFAULT);
}

static double metric2(struct fixture *f, struct tt_metric_family *fam, const char *a,
                      const char *b) {
  const char *l[2] = {a, b};
  return tt_metric_value(fam, l);
}

START_TEST(success_after_throttling_and_transient) {
  static const char *const script[] = {"ProvisionedThroughputExceededException",
                                       "InternalServerError", NULL};
  struct fixture f;
  setup(&f, script, 3);
  run_one(&f);
  ck_assert_int_eq(f.done_calls, 1);
  ck_assert_int_eq(f.join_done, 1);
  ck_assert_int_eq(f.final_status, 0);
  ck_assert_uint_eq(f.final_attempts, 3);
  ck_assert_double_eq(metric2(&f, f.fams.backend_retries, "GetItem", "throttled"), 1);
  ck_assert_double_eq(metric2(&f, f.fams.backend_retries, "GetItem", "transient"), 1);
  ck_assert_double_eq(metric2(&f, f.fams.backend_calls, "GetItem", "success"), 1);
  ck_assert_double_eq(metric2(&f, f.fams.backend_calls, "GetItem", "throttled"), 1);
  ck_assert_double_eq(tt_metric_value(f.fams.inflight_operations, NULL), 0);
  teardown(&f);
}
END_TEST

START_TEST(gives_up_after_four_attempts) {
  static const char *const script[] = {"ThrottlingException", "ThrottlingException",
                                       "ThrottlingException", "ThrottlingException", NULL};
  struct fixture f;
  setup(&f, script, 5);
  run_one(&f);
  ck_assert_int_eq(f.final_status, -1);
  ck_assert_str_eq(f.final_type, "ThrottlingException");
  ck_assert_uint_eq(f.fake.starts, 4);
  teardown(&f);
}
END_TEST

START_TEST(conditional_failures_are_never_retried) {
  static const char *const script[] = {"ConditionalCheckFailedException", NULL};
  struct fixture f;
  setup(&f, script, 2);
  run_one(&f);
  ck_assert_int_eq(f.final_status, -1);
  ck_assert_uint_eq(f.fake.starts, 1);
  ck_assert_str_eq(f.final_type, "ConditionalCheckFailedException");
  teardown(&f);
}
END_TEST

START_TEST(transaction_conflicts_retry_only_when_asked) {
  static const char *const script[] = {"TransactionConflictException", NULL};
  struct fixture f;
  setup(&f, script, 2);
  run_one(&f);
  ck_assert_uint_eq(f.fake.starts, 1);
  teardown(&f);
  setup(&f, script, 2);
  f.call.retry_conflicts = true;
  run_one(&f);
  ck_assert_int_eq(f.final_status, 0);
  ck_assert_uint_eq(f.fake.starts, 2);
  teardown(&f);
}
END_TEST

START_TEST(quota_limits_transient_retries) {
  static const char *const script[] = {"InternalServerError", NULL};
  struct fixture f;
  setup(&f, script, 2);
  f.client.tokens = 4; /* less than one retry's cost */
  run_one(&f);
  ck_assert_int_eq(f.final_status, -1);
  ck_assert_uint_eq(f.fake.starts, 1);
  teardown(&f);
}
END_TEST

static double one(void *arg) {
  (void)arg;
  return 0.999999;
}

START_TEST(backoff_is_capped_full_jitter) {
  struct fixture f;
  setup(&f, NULL, 0);
  f.client.random01 = one;
  struct tt_backend_error e;
  memset(&e, 0, sizeof(e));
  tt_backend_error_set(&e, "InternalServerError", 500, "x");
  ck_assert_uint_eq(tt_client_backoff_ms(&f.client, &e, 1), 24);  /* < 25 */
  ck_assert_uint_eq(tt_client_backoff_ms(&f.client, &e, 3), 99);  /* < 100 */
  tt_backend_error_set(&e, "ThrottlingException", 400, "x");
  ck_assert_uint_eq(tt_client_backoff_ms(&f.client, &e, 1), 999);
  ck_assert_uint_eq(tt_client_backoff_ms(&f.client, &e, 10), 19999); /* capped at 20 s */
  f.client.random01 = zero;
  e.retry_after_ms = 1500;
  ck_assert_uint_eq(tt_client_backoff_ms(&f.client, &e, 1), 1500);
  tt_backend_error_clear(&e);
  teardown(&f);
}
END_TEST

/* An advised wait (x-amz-retry-after) longer than the time left before
 * the deadline is not waited out: the call fails at once with the
 * throttling error, which keeps the advice for Retry-After. */
START_TEST(retry_after_past_the_deadline_fails_at_once) {
  static const char *const script[] = {"ThrottlingException", NULL};
  struct fixture f;
  setup(&f, script, 2);
  f.fake.retry_after_ms = 5000;
  f.deadline_in_ms = 1000;
  run_one(&f);
  ck_assert_int_eq(f.done_calls, 1);
  ck_assert_uint_eq(f.fake.starts, 1);
  ck_assert_uint_eq(f.final_attempts, 1);
  ck_assert_str_eq(f.final_type, "ThrottlingException");
  ck_assert_uint_eq(f.final_retry_after_ms, 5000);
  ck_assert_double_eq(metric2(&f, f.fams.backend_retries, "GetItem", "throttled"), 0);
  teardown(&f);
  /* Advice that fits the deadline is followed. */
  setup(&f, script, 2);
  f.fake.retry_after_ms = 10;
  f.deadline_in_ms = 1000;
  run_one(&f);
  ck_assert_int_eq(f.final_status, 0);
  ck_assert_uint_eq(f.fake.starts, 2);
  teardown(&f);
  /* Without a deadline, advice beyond the longest backoff (20 s) is not
   * waited out either. */
  setup(&f, script, 2);
  f.fake.retry_after_ms = 3600000;
  run_one(&f);
  ck_assert_uint_eq(f.fake.starts, 1);
  ck_assert_uint_eq(f.final_retry_after_ms, 3600000);
  teardown(&f);
}
END_TEST

/* The same for the client's own backoff: a wait that would end after the
 * deadline is not started. */
START_TEST(backoff_past_the_deadline_fails_at_once) {
  static const char *const script[] = {"ThrottlingException", NULL};
  struct fixture f;
  setup(&f, script, 2);
  f.client.random01 = one; /* ~1 s */
  f.deadline_in_ms = 200;
  run_one(&f);
  ck_assert_uint_eq(f.fake.starts, 1);
  ck_assert_str_eq(f.final_type, "ThrottlingException");
  ck_assert_int_eq(f.join_done, 1);
  teardown(&f);
  /* A transient error's retry not made spends no quota. */
  static const char *const transient[] = {"InternalServerError", NULL};
  setup(&f, transient, 2);
  f.client.random01 = one;
  f.client.retry.transient_base_ms = 1000;
  f.deadline_in_ms = 200;
  unsigned tokens = f.client.tokens;
  run_one(&f);
  ck_assert_uint_eq(f.fake.starts, 1);
  ck_assert_uint_eq(f.client.tokens, tokens);
  teardown(&f);
}
END_TEST

static void cancel_soon(uv_timer_t *t) {
  struct fixture *f = t->data;
  /* The first attempt failed and the call waits to retry. */
  ck_assert_uint_eq(f->fake.starts, 1);
  ck_assert(f->call.timer_open);
  ck_assert(uv_is_active((uv_handle_t *)&f->call.retry_timer));
  tt_join_cancel(&f->join);
  ck_assert(!uv_is_active((uv_handle_t *)&f->call.retry_timer));
  uv_close((uv_handle_t *)t, NULL);
}

START_TEST(cancel_during_backoff_completes_promptly) {
  static const char *const script[] = {"ThrottlingException", NULL};
  struct fixture f;
  setup(&f, script, 2);
  /* An hour's backoff: a cancel that left it running would keep the loop
   * (and this test) waiting for it. */
  f.client.random01 = one;
  f.client.retry.throttle_base_ms = 3600000;
  f.client.retry.max_backoff_ms = 3600000;
  uv_timer_t t;
  uv_timer_init(&f.loop, &t);
  t.data = &f;
  uv_timer_start(&t, cancel_soon, 50, 0); /* after the first attempt's 5 ms */
  run_one(&f);
  ck_assert_int_eq(f.done_calls, 1);
  ck_assert_int_eq(f.join_done, 1);
  ck_assert_uint_eq(f.fake.starts, 1); /* the retry never started */
  ck_assert_uint_eq(f.final_attempts, 1);
  ck_assert_str_eq(f.final_type, "ThrottlingException");
  ck_assert_double_eq(tt_metric_value(f.fams.inflight_operations, NULL), 0);
  teardown(&f);
}
END_TEST

START_TEST(cancel_in_flight_reaches_the_backend) {
  static const char *const script[] = {NULL};
  struct fixture f;
  setup(&f, script, 1);
  tt_join_init(&f.join, &f.fams, join_done, &f);
  tt_client_start(&f.client, &f.join, &f.call, TT_DDB_QUERY, json_object(), call_done, &f);
  tt_join_release(&f.join);
  tt_join_cancel(&f.join);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(f.join_done, 1);
  ck_assert_str_eq(f.final_type, "RequestCanceled");
  ck_assert_double_eq(metric2(&f, f.fams.backend_calls, "Query", "canceled"), 1);
  teardown(&f);
}
END_TEST

/* run_ready (backend.h): the call completes before the request goes back
 * to the loop, once, never inside tt_client_start. */
START_TEST(run_ready_completes_after_start_returns) {
  static const char *const script[] = {NULL};
  struct fixture f;
  setup(&f, script, 1);
  f.fake.base.ops = &fake_sync_ops;
  tt_join_init(&f.join, &f.fams, join_done, &f);
  ck_assert_int_eq(tt_client_start(&f.client, &f.join, &f.call, TT_DDB_GET_ITEM, json_object(),
                                   call_done, &f),
                   0);
  ck_assert_int_eq(f.done_calls, 0);
  tt_join_release(&f.join);
  ck_assert_uint_eq(tt_client_run_ready(&f.client, 0), 1);
  ck_assert_int_eq(f.done_calls, 1);
  ck_assert_int_eq(f.join_done, 1);
  ck_assert_int_eq(f.final_status, 0);
  ck_assert_double_eq(tt_metric_value(f.fams.inflight_operations, NULL), 0);
  ck_assert_uint_eq(tt_client_run_ready(&f.client, 0), 0);
  teardown(&f);
  ck_assert_int_eq(f.done_calls, 1);
}
END_TEST

/* A retry waits on the client's timer, i.e. the loop: run_ready completes
 * the failed attempt and returns; the request would suspend. */
START_TEST(run_ready_leaves_retries_to_the_loop) {
  static const char *const script[] = {"InternalServerError", NULL};
  struct fixture f;
  setup(&f, script, 2);
  f.fake.base.ops = &fake_sync_ops;
  tt_join_init(&f.join, &f.fams, join_done, &f);
  tt_client_start(&f.client, &f.join, &f.call, TT_DDB_GET_ITEM, json_object(), call_done, &f);
  tt_join_release(&f.join);
  ck_assert_uint_eq(tt_client_run_ready(&f.client, 0), 1);
  ck_assert_int_eq(f.done_calls, 0);
  ck_assert_int_eq(f.join_done, 0);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(f.done_calls, 1);
  ck_assert_int_eq(f.join_done, 1);
  ck_assert_int_eq(f.final_status, 0);
  ck_assert_uint_eq(f.final_attempts, 2);
  ck_assert_double_eq(tt_metric_value(f.fams.inflight_operations, NULL), 0);
  teardown(&f);
}
END_TEST

/* Without run_ready (the dynamodb backend) the client completes nothing. */
START_TEST(run_ready_without_support_is_a_no_op) {
  static const char *const script[] = {NULL};
  struct fixture f;
  setup(&f, script, 1);
  tt_join_init(&f.join, &f.fams, join_done, &f);
  tt_client_start(&f.client, &f.join, &f.call, TT_DDB_GET_ITEM, json_object(), call_done, &f);
  tt_join_release(&f.join);
  ck_assert_uint_eq(tt_client_run_ready(&f.client, 0), 0);
  ck_assert_int_eq(f.done_calls, 0);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(f.done_calls, 1);
  teardown(&f);
}
END_TEST

/* ---- the completion contract (docs/internals/completions.md) ------------- */

/* A done that starts the same call again, `restarts` times; each start
 * gets a fresh response, which done reads before and after restarting. */
struct reuse {
  struct fixture *f;
  int restarts;
  int dones;
  int refused;
  bool cancel_on_last;
};

static void reuse_done(struct tt_client_call *c) {
  struct reuse *r = c->arg;
  struct fixture *f = r->f;
  r->dones++;
  ck_assert_int_eq(c->bc.status, 0);
  json_t *resp = c->bc.response; /* borrowed: valid until this returns */
  ck_assert_ptr_nonnull(resp);
  ck_assert_int_eq(json_object_set_new(resp, "seen", json_true()), 0);
  if (r->dones > r->restarts)
    return;
  if (r->cancel_on_last && r->dones == r->restarts)
    tt_join_cancel(&f->join);
  int rc = tt_client_start(&f->client, &f->join, c, TT_DDB_GET_ITEM, json_object(), reuse_done,
                           r);
  if (rc != 0) {
    /* Refused: done never runs for it, and the error says why. */
    r->refused++;
    ck_assert_int_eq(rc, UV_ECANCELED);
    ck_assert_int_eq(c->bc.status, -1);
    ck_assert_str_eq(c->bc.error.type, "RequestCanceled");
  }
  /* What done read is still there after the start. */
  ck_assert_ptr_eq(json_object_get(resp, "seen"), json_true());
}

/* On the trampoline: every restart is queued and completed by the same
 * run_ready, at constant depth, with no other slot. */
START_TEST(a_call_is_reusable_from_its_own_done_on_run_ready) {
  static const char *const script[] = {NULL};
  struct fixture f;
  setup(&f, script, 1);
  f.fake.base.ops = &fake_sync_ops;
  struct reuse r = {.f = &f, .restarts = 100};
  tt_join_init(&f.join, &f.fams, join_done, &f);
  ck_assert_int_eq(
      tt_client_start(&f.client, &f.join, &f.call, TT_DDB_GET_ITEM, json_object(), reuse_done, &r),
      0);
  ck_assert_int_eq(r.dones, 0); /* never inside start */
  tt_join_release(&f.join);
  ck_assert_int_eq(f.join_done, 0);
  ck_assert_uint_eq(tt_client_run_ready(&f.client, 0), 101);
  ck_assert_int_eq(r.dones, 101);
  ck_assert_int_eq(f.join_done, 1); /* once, after the last */
  ck_assert_uint_eq(f.fake.starts, 101);
  ck_assert_double_eq(tt_metric_value(f.fams.inflight_operations, NULL), 0);
  ck_assert_double_eq(metric2(&f, f.fams.backend_calls, "GetItem", "success"), 101);
  teardown(&f);
}
END_TEST

/* From the loop, with the join released before the first completion: the
 * join stays open across each done that starts the call again. */
START_TEST(a_call_is_reusable_from_its_own_done_on_the_loop) {
  static const char *const script[] = {NULL};
  struct fixture f;
  setup(&f, script, 1);
  struct reuse r = {.f = &f, .restarts = 5};
  tt_join_init(&f.join, &f.fams, join_done, &f);
  ck_assert_int_eq(
      tt_client_start(&f.client, &f.join, &f.call, TT_DDB_GET_ITEM, json_object(), reuse_done, &r),
      0);
  tt_join_release(&f.join);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(r.dones, 6);
  ck_assert_int_eq(f.join_done, 1);
  ck_assert_double_eq(tt_metric_value(f.fams.inflight_operations, NULL), 0);
  teardown(&f);
}
END_TEST

/* A restart refused inside done (the join was cancelled): negative, done
 * never runs for it, nothing leaks, and the join still completes once. */
START_TEST(a_restart_refused_inside_done_never_calls_done) {
  static const char *const script[] = {NULL};
  struct fixture f;
  setup(&f, script, 1);
  f.fake.base.ops = &fake_sync_ops;
  struct reuse r = {.f = &f, .restarts = 3, .cancel_on_last = true};
  tt_join_init(&f.join, &f.fams, join_done, &f);
  ck_assert_int_eq(
      tt_client_start(&f.client, &f.join, &f.call, TT_DDB_GET_ITEM, json_object(), reuse_done, &r),
      0);
  tt_join_release(&f.join);
  tt_client_run_ready(&f.client, 0);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(r.dones, 3);
  ck_assert_int_eq(r.refused, 1);
  ck_assert_int_eq(f.join_done, 1);
  ck_assert_double_eq(tt_metric_value(f.fams.inflight_operations, NULL), 0);
  teardown(&f);
}
END_TEST

/* A start on a cancelled join fails synchronously: done never runs. */
START_TEST(a_start_on_a_cancelled_join_is_refused_synchronously) {
  static const char *const script[] = {NULL};
  struct fixture f;
  setup(&f, script, 1);
  tt_join_init(&f.join, &f.fams, join_done, &f);
  tt_join_cancel(&f.join);
  ck_assert_int_eq(tt_client_start(&f.client, &f.join, &f.call, TT_DDB_GET_ITEM, json_object(),
                                   call_done, &f),
                   UV_ECANCELED);
  ck_assert_str_eq(f.call.bc.error.type, "RequestCanceled");
  ck_assert_uint_eq(tt_join_pending(&f.join), 0);
  ck_assert_uint_eq(f.fake.starts, 0);
  tt_join_release(&f.join);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(f.done_calls, 0);
  ck_assert_int_eq(f.join_done, 1);
  teardown(&f);
}
END_TEST

static int refusing_start(struct tt_backend *b, struct tt_backend_call *c) {
  (void)b;
  (void)c;
  return UV_EINVAL;
}

static const struct tt_backend_ops refusing_ops = {"refusing", refusing_start, fake_cancel,
                                                   NULL,       NULL,           NULL};

/* A backend that refuses a call: the client's start returns its error and
 * done never runs; the call left the join. */
START_TEST(a_backend_refusal_is_returned_not_called_back) {
  static const char *const script[] = {NULL};
  struct fixture f;
  setup(&f, script, 1);
  f.fake.base.ops = &refusing_ops;
  tt_join_init(&f.join, &f.fams, join_done, &f);
  ck_assert_int_eq(tt_client_start(&f.client, &f.join, &f.call, TT_DDB_GET_ITEM, json_object(),
                                   call_done, &f),
                   UV_EINVAL);
  ck_assert_int_eq(f.call.bc.status, -1);
  ck_assert_str_eq(f.call.bc.error.type, "InternalFailure");
  ck_assert_uint_eq(tt_join_pending(&f.join), 0);
  ck_assert_double_eq(tt_metric_value(f.fams.inflight_operations, NULL), 0);
  tt_join_release(&f.join);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(f.done_calls, 0);
  ck_assert_int_eq(f.join_done, 1);
  teardown(&f);
}
END_TEST

int main(void) {
  Suite *s = suite_create("client");
  TCase *tc = tcase_create("retries");
  tcase_add_test(tc, success_after_throttling_and_transient);
  tcase_add_test(tc, retry_after_past_the_deadline_fails_at_once);
  tcase_add_test(tc, backoff_past_the_deadline_fails_at_once);
  tcase_add_test(tc, gives_up_after_four_attempts);
  tcase_add_test(tc, conditional_failures_are_never_retried);
  tcase_add_test(tc, transaction_conflicts_retry_only_when_asked);
  tcase_add_test(tc, quota_limits_transient_retries);
  tcase_add_test(tc, backoff_is_capped_full_jitter);
  tcase_add_test(tc, cancel_during_backoff_completes_promptly);
  tcase_add_test(tc, cancel_in_flight_reaches_the_backend);
  tcase_add_test(tc, run_ready_completes_after_start_returns);
  tcase_add_test(tc, run_ready_leaves_retries_to_the_loop);
  tcase_add_test(tc, run_ready_without_support_is_a_no_op);
  tcase_add_test(tc, a_call_is_reusable_from_its_own_done_on_run_ready);
  tcase_add_test(tc, a_call_is_reusable_from_its_own_done_on_the_loop);
  tcase_add_test(tc, a_restart_refused_inside_done_never_calls_done);
  tcase_add_test(tc, a_start_on_a_cancelled_join_is_refused_synchronously);
  tcase_add_test(tc, a_backend_refusal_is_returned_not_called_back);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
