/* SPDX-License-Identifier: Apache-2.0 */
/* test_ops.c -- POST /v1/_test/sleep: N parallel timer operations joined
 * before the answer; exists to prove the join rule end to end. */
#include "api/handlers.h"
#include "client/sleep_op.h"
#include "value/json_exact.h"

#include <stdlib.h>

#define SLEEP_MAX_OPS 64
#define SLEEP_MAX_MS 60000

struct sleep_job {
  size_t nops;
  struct tt_sleep_op *ops;
};

static void sleep_joined(struct tt_request *req) {
  struct sleep_job *job = req->handler_data;
  size_t canceled = 0;
  for (size_t i = 0; i < job->nops; i++)
    canceled += job->ops[i].canceled;
  /* On failure too, so that a test sees the cancellation itself rather
   * than timing the answer. */
  json_t *out = json_pack("{s:I,s:I}", "completed", (json_int_t)(job->nops - canceled),
                          "canceled", (json_int_t)canceled);
  if (!req->join.failed) {
    tt_request_respond_json(req, 200, out);
    return;
  }
  tt_request_respond_error(req, &req->join.first_error, out);
  json_decref(out);
}

void tt_handle_test_sleep(struct tt_request *req) {
  json_t *body = tt_request_json_body(req, false);
  if (body == NULL)
    return;
  json_int_t nops = 1, ms = 0, fail_op = -1;
  if (tt_request_int_member(req, body, "ops", 1, SLEEP_MAX_OPS, &nops) != 0 ||
      tt_request_int_member(req, body, "ms", 0, SLEEP_MAX_MS, &ms) != 0 ||
      tt_request_int_member(req, body, "fail_op", 0, SLEEP_MAX_OPS - 1, &fail_op) != 0)
    goto done;
  struct sleep_job *job = tt_arena_alloc(&req->arena, sizeof(*job));
  struct tt_sleep_op *ops =
      job ? tt_arena_alloc(&req->arena, sizeof(*ops) * (size_t)nops) : NULL;
  if (ops == NULL) {
    tt_request_fail(req, TT_ERR_INTERNAL, NULL, "out of memory");
    goto done;
  }
  job->nops = (size_t)nops;
  job->ops = ops;
  req->handler_data = job;
  req->on_joined = sleep_joined;
  req->join.cancel_on_error = true;
  for (json_int_t i = 0; i < nops; i++) {
    /* The failing op fires first so the others are visibly canceled. */
    uint64_t delay = i == fail_op ? (uint64_t)ms / 2 : (uint64_t)ms;
    if (tt_sleep_op_start(&ops[i], req->server->loop, &req->join, delay, i == fail_op) != 0) {
      /* Already-started ops are canceled and joined before the answer. */
      tt_error_set(&req->join.first_error, TT_ERR_INTERNAL, NULL, "could not start a timer");
      req->join.failed = true;
      job->nops = (size_t)i; /* the ones started */
      tt_join_cancel(&req->join);
      break;
    }
  }
done:
  json_decref(body);
}
