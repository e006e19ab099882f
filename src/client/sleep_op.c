/* SPDX-License-Identifier: Apache-2.0 */
/* sleep_op.c -- a timer as a joined operation (waits between polls; /v1/_test/sleep). */
#include "client/sleep_op.h"

#include <stddef.h>

/* The op leaves the join (held meanwhile, so the group cannot complete
 * under on_done), then on_done runs and may start the same op again. */
static void closed_cb(uv_handle_t *h) {
  struct tt_sleep_op *s = h->data;
  struct tt_join *j = s->op.join;
  struct tt_error err;
  tt_join_ref(j);
  if (s->canceled) {
    tt_error_set(&err, TT_ERR_BACKEND_TIMEOUT, NULL, "operation canceled");
    tt_op_done(&s->op, &err);
  } else if (s->fail) {
    tt_error_set(&err, TT_ERR_BACKEND_UNAVAILABLE, NULL, "injected failure of a test operation");
    tt_op_done(&s->op, &err);
  } else {
    tt_op_done(&s->op, NULL);
  }
  if (s->on_done)
    s->on_done(s);
  tt_join_unref(j);
}

static void fired_cb(uv_timer_t *t) {
  struct tt_sleep_op *s = t->data;
  s->fired = true;
  uv_close((uv_handle_t *)t, closed_cb);
}

static void cancel_cb(struct tt_op *op) {
  struct tt_sleep_op *s = (struct tt_sleep_op *)((char *)op - offsetof(struct tt_sleep_op, op));
  if (s->fired)
    return; /* already closing: it completes on its own */
  s->canceled = true;
  s->fired = true;
  uv_timer_stop(&s->timer);
  uv_close((uv_handle_t *)&s->timer, closed_cb);
}

int tt_sleep_op_start(struct tt_sleep_op *s, uv_loop_t *loop, struct tt_join *join, uint64_t ms,
                      bool fail) {
  s->fail = fail;
  s->canceled = false;
  s->fired = false;
  int rc = uv_timer_init(loop, &s->timer);
  if (rc != 0)
    return rc;
  s->timer.data = s;
  /* libuv's clock is whole milliseconds, truncated: a timer of `ms` can
   * fire up to 1 ms of real time early. The op promises at least `ms`. */
  rc = uv_timer_start(&s->timer, fired_cb, ms + 1, 0);
  if (rc != 0) {
    /* Not registered: close without completing anything. The handle
     * memory must outlive the close, which the caller's arena ensures. */
    uv_close((uv_handle_t *)&s->timer, NULL);
    return rc;
  }
  tt_join_add(join, &s->op, "sleep", cancel_cb);
  return 0;
}
