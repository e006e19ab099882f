/* SPDX-License-Identifier: Apache-2.0 */
/* sleep_op.h -- a timer as a joined operation: waits between polls, and the
 * test-only /v1/_test/sleep endpoint that proves the join machinery. */
#ifndef TT_CLIENT_SLEEP_OP_H
#define TT_CLIENT_SLEEP_OP_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "client/join.h"

/* One timer operation, under the completion contract of
 * docs/internals/completions.md. The caller owns the struct (normally in a
 * request arena) and must keep it alive until the join completes. */
struct tt_sleep_op {
  struct tt_op op;
  uv_timer_t timer;
  bool fail;     /* complete with BackendUnavailable instead of success */
  bool canceled; /* cancel arrived before the timer fired */
  bool fired;
  /* Called (when set) once the op left the join, which is held until it
   * returns: a continuation may start its next operation, or this one. */
  void (*on_done)(struct tt_sleep_op *s); /* s->arg is the caller's */
  void *arg;
};

/* Starts a timer of `ms` milliseconds on `loop` and registers it in `join`.
 * When it fires (or is cancelled) its handle is closed and only then the
 * op completes, so the memory may be freed from the join's completion.
 * Set s->on_done/s->arg before calling, or leave them zeroed. Returns 0, or
 * a negative libuv error (the op is then not registered). */
int tt_sleep_op_start(struct tt_sleep_op *s, uv_loop_t *loop, struct tt_join *join, uint64_t ms,
                      bool fail);

#endif
