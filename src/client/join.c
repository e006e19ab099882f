/* SPDX-License-Identifier: Apache-2.0 */
/* join.c -- join groups: count, cancel and wait for a request's operations. */
#include "client/join.h"

#include <assert.h>
#include <string.h>

void tt_join_init(struct tt_join *j, struct tt_families *fams, tt_join_done_cb done, void *arg) {
  memset(j, 0, sizeof(*j));
  j->outstanding = 1;
  j->held = true;
  j->fams = fams;
  j->done = done;
  j->done_arg = arg;
}

static void maybe_finish(struct tt_join *j) {
  if (j->outstanding == 0 && j->done)
    j->done(j, j->done_arg);
}

static void request_cancel(struct tt_op *op) {
  if (op->cancel_requested)
    return;
  op->cancel_requested = true;
  if (op->cancel)
    op->cancel(op);
}

void tt_join_add(struct tt_join *j, struct tt_op *op, const char *name, tt_op_cancel_cb cancel) {
  assert(j->outstanding > 0 && "an operation joined a finished group");
  op->join = j;
  op->name = name;
  op->cancel = cancel;
  op->cancel_requested = false;
  op->prev = NULL;
  op->next = j->ops;
  if (j->ops)
    j->ops->prev = op;
  j->ops = op;
  j->outstanding++;
  tt_families_inflight_ops(j->fams, 1);
  if (j->canceled)
    request_cancel(op);
}

void tt_op_done(struct tt_op *op, const struct tt_error *err) {
  struct tt_join *j = op->join;
  assert(j != NULL && j->outstanding > 0);
  if (op->prev)
    op->prev->next = op->next;
  else
    j->ops = op->next;
  if (op->next)
    op->next->prev = op->prev;
  op->join = NULL;
  tt_families_inflight_ops(j->fams, -1);
  /* The op still counts in `outstanding` here, so a cancel triggered by
   * its error cannot complete the group underneath us. */
  if (err && err->code != TT_OK && !j->failed) {
    j->failed = true;
    j->first_error = *err;
    if (j->cancel_on_error)
      tt_join_cancel(j);
  }
  j->outstanding--;
  maybe_finish(j);
}

void tt_join_ref(struct tt_join *j) {
  assert(j->outstanding > 0);
  j->outstanding++;
}

void tt_join_unref(struct tt_join *j) {
  assert(j->outstanding > 0);
  j->outstanding--;
  maybe_finish(j);
}

void tt_join_release(struct tt_join *j) {
  assert(j->held);
  j->held = false;
  tt_join_unref(j);
}

void tt_join_cancel(struct tt_join *j) {
  if (j->outstanding == 0)
    return; /* already complete: nothing left to cancel */
  j->canceled = true;
  /* Hold the group while walking: a cancel may complete its op at once,
   * and the last completion must not free the group mid-walk. */
  j->outstanding++;
  for (;;) {
    struct tt_op *op = j->ops;
    while (op && op->cancel_requested)
      op = op->next;
    if (op == NULL)
      break;
    request_cancel(op);
  }
  tt_join_unref(j);
}

size_t tt_join_pending(const struct tt_join *j) { return j->outstanding - (j->held ? 1 : 0); }
