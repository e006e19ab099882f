/* SPDX-License-Identifier: Apache-2.0 */
/* test_join.c -- the join rule on a real loop: completion waits for every
 * operation on success, error and cancellation; the gauge returns to 0;
 * every test closes the loop with uv_loop_close() == 0. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "client/join.h"
#include "client/sleep_op.h"
#include "obs/families.h"

struct fixture {
  uv_loop_t loop;
  struct tt_families fams;
  struct tt_join join;
  struct tt_sleep_op ops[8];
  int done_calls;
  size_t pending_at_done;
  int ran_at_done; /* ops whose timer had run out when the join completed */
  uv_timer_t canceller;
};

static double inflight(struct fixture *f) {
  return tt_metric_value(f->fams.inflight_operations, NULL);
}

static void done_cb(struct tt_join *j, void *arg) {
  struct fixture *f = arg;
  f->done_calls++;
  f->pending_at_done = tt_join_pending(j);
  for (size_t i = 0; i < sizeof(f->ops) / sizeof(f->ops[0]); i++)
    f->ran_at_done += f->ops[i].fired && !f->ops[i].canceled;
}

static void setup(struct fixture *f) {
  memset(f, 0, sizeof(*f));
  ck_assert_int_eq(uv_loop_init(&f->loop), 0);
  ck_assert_int_eq(tt_families_init(&f->fams), 0);
  tt_join_init(&f->join, &f->fams, done_cb, f);
}

static void teardown(struct fixture *f) {
  ck_assert_int_eq(uv_loop_close(&f->loop), 0);
  tt_families_free(&f->fams);
}

START_TEST(completes_after_all_operations) {
  struct fixture f;
  setup(&f);
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(tt_sleep_op_start(&f.ops[i], &f.loop, &f.join, 10 + 10 * (uint64_t)i, false), 0);
  ck_assert_double_eq(inflight(&f), 4);
  tt_join_release(&f.join);
  ck_assert_int_eq(f.done_calls, 0);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(f.done_calls, 1);
  ck_assert_uint_eq(f.pending_at_done, 0);
  ck_assert_int_eq(f.ran_at_done, 4); /* after the slowest one */
  ck_assert(!f.join.failed);
  ck_assert_double_eq(inflight(&f), 0);
  teardown(&f);
}
END_TEST

START_TEST(empty_join_completes_on_release) {
  struct fixture f;
  setup(&f);
  tt_join_release(&f.join);
  ck_assert_int_eq(f.done_calls, 1);
  teardown(&f);
}
END_TEST

START_TEST(first_error_cancels_the_rest_and_still_joins) {
  struct fixture f;
  setup(&f);
  f.join.cancel_on_error = true;
  ck_assert_int_eq(tt_sleep_op_start(&f.ops[0], &f.loop, &f.join, 5, true), 0);
  /* An hour each: only the cancel ends them. */
  for (int i = 1; i < 5; i++)
    ck_assert_int_eq(tt_sleep_op_start(&f.ops[i], &f.loop, &f.join, 3600000, false), 0);
  tt_join_release(&f.join);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(f.done_calls, 1);
  ck_assert(f.join.failed);
  ck_assert_int_eq(f.join.first_error.code, TT_ERR_BACKEND_UNAVAILABLE);
  for (int i = 1; i < 5; i++)
    ck_assert(f.ops[i].canceled);
  ck_assert_int_eq(f.ran_at_done, 1); /* only the failed one ran out */
  ck_assert_double_eq(inflight(&f), 0);
  teardown(&f);
}
END_TEST

static void cancel_later_cb(uv_timer_t *t) {
  struct fixture *f = t->data;
  tt_join_cancel(&f->join); /* what a deadline or a disconnect does */
  uv_close((uv_handle_t *)t, NULL);
}

START_TEST(cancel_waits_for_every_operation) {
  struct fixture f;
  setup(&f);
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(tt_sleep_op_start(&f.ops[i], &f.loop, &f.join, 10000, false), 0);
  tt_join_release(&f.join);
  uv_timer_init(&f.loop, &f.canceller);
  f.canceller.data = &f;
  uv_timer_start(&f.canceller, cancel_later_cb, 20, 0);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(f.done_calls, 1);
  ck_assert(f.join.canceled);
  for (int i = 0; i < 3; i++)
    ck_assert(f.ops[i].canceled);
  ck_assert_double_eq(inflight(&f), 0);
  teardown(&f);
}
END_TEST

START_TEST(cancel_while_held_then_release) {
  struct fixture f;
  setup(&f);
  ck_assert_int_eq(tt_sleep_op_start(&f.ops[0], &f.loop, &f.join, 10000, false), 0);
  tt_join_cancel(&f.join);
  /* An op added after the cancel is cancelled at once. */
  ck_assert_int_eq(tt_sleep_op_start(&f.ops[1], &f.loop, &f.join, 10000, false), 0);
  ck_assert(f.ops[1].canceled);
  ck_assert_int_eq(f.done_calls, 0); /* still held */
  tt_join_release(&f.join);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(f.done_calls, 1);
  /* Cancelling a finished join does nothing. */
  tt_join_cancel(&f.join);
  ck_assert_int_eq(f.done_calls, 1);
  teardown(&f);
}
END_TEST

/* A timer operation started again from its own on_done (the completion
 * contract: it left the join first, and the join is held meanwhile, so the
 * group completes once, after the last). */
static int restarts_left;
static int on_done_calls;

static void restart_on_done(struct tt_sleep_op *s) {
  struct fixture *f = s->arg;
  on_done_calls++;
  ck_assert_int_eq(f->done_calls, 0);
  ck_assert_ptr_null(f->join.ops); /* it left the join */
  if (restarts_left-- > 0)
    ck_assert_int_eq(tt_sleep_op_start(s, &f->loop, &f->join, 1, false), 0);
}

START_TEST(a_timer_op_is_reusable_from_its_own_on_done) {
  struct fixture f;
  setup(&f);
  restarts_left = 3;
  on_done_calls = 0;
  f.ops[0].on_done = restart_on_done;
  f.ops[0].arg = &f;
  ck_assert_int_eq(tt_sleep_op_start(&f.ops[0], &f.loop, &f.join, 1, false), 0);
  tt_join_release(&f.join);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(on_done_calls, 4);
  ck_assert_int_eq(f.done_calls, 1);
  ck_assert_uint_eq(f.pending_at_done, 0);
  ck_assert_double_eq(inflight(&f), 0);
  teardown(&f);
}
END_TEST

int main(void) {
  Suite *s = suite_create("join");
  TCase *tc = tcase_create("loop");
  tcase_add_test(tc, completes_after_all_operations);
  tcase_add_test(tc, empty_join_completes_on_release);
  tcase_add_test(tc, first_error_cancels_the_rest_and_still_joins);
  tcase_add_test(tc, cancel_waits_for_every_operation);
  tcase_add_test(tc, cancel_while_held_then_release);
  tcase_add_test(tc, a_timer_op_is_reusable_from_its_own_on_done);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
