/* SPDX-License-Identifier: Apache-2.0 */
/* join.h -- join groups: every asynchronous operation a request starts is
 * counted, can be cancelled, and is waited for before the request answers
 * (the join rule of docs/internals/completions.md). */
#ifndef TT_CLIENT_JOIN_H
#define TT_CLIENT_JOIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "obs/families.h"
#include "obs/trace.h"
#include "util/error.h"

struct tt_op;
struct tt_join;

/* Asks an operation to finish early. It must still complete through
 * tt_op_done exactly once (possibly from inside this call). */
typedef void (*tt_op_cancel_cb)(struct tt_op *op);

/* Called once when the last operation of a join completed and the join was
 * released. The callee may free the memory that holds the join. */
typedef void (*tt_join_done_cb)(struct tt_join *join, void *arg);

/* One outstanding operation. Embedded in the operation's own struct, which
 * the request context owns. */
struct tt_op {
  struct tt_join *join;
  struct tt_op *prev, *next;
  tt_op_cancel_cb cancel;
  const char *name; /* static string, for logs */
  bool cancel_requested;
};

/* A group of operations with one completion. The caller holds it open from
 * tt_join_init until tt_join_release, so operations that complete while
 * others are still being started cannot fire the completion early. */
struct tt_join {
  size_t outstanding; /* operations + 1 while held */
  struct tt_op *ops;  /* outstanding operations */
  bool held;
  bool canceled;
  bool cancel_on_error; /* first error cancels the others */
  bool failed;
  struct tt_error first_error;
  struct tt_families *fams; /* borrowed; may be NULL */
  /* The account every backend call of the join runs in (backend.h:
   * tt_backend_call.account); 0 unless the request selected a partner. */
  unsigned account;
  /* The loop time (uv_now, ms) of the request's deadline, 0 = none: a
   * retry whose wait would end after it is not made (client.h). */
  uint64_t deadline_ms;
  /* The span operations started now are children of (obs/trace.h):
   * the request's server span, or a fan-out span (a batch chunk, a scan
   * segment) that its code sets around the starts and restores. Copied by
   * each call at its start; invalid = no spans. */
  struct tt_trace_ctx trace;
  tt_join_done_cb done;
  void *done_arg;
};

/* Initializes a held join. `fams` (borrowed, may be NULL) gets the
 * in-flight operation gauge. */
void tt_join_init(struct tt_join *j, struct tt_families *fams, tt_join_done_cb done, void *arg);

/* Registers an operation that has been started (or is about to be). After
 * this, the operation must call tt_op_done exactly once. If the join is
 * already cancelled the operation's cancel is requested at once. */
void tt_join_add(struct tt_join *j, struct tt_op *op, const char *name, tt_op_cancel_cb cancel);

/* Completes an operation; `err` (copied, may be NULL) is its failure. The
 * op must not be touched afterwards: the join's completion may run inside
 * this call and free it. */
void tt_op_done(struct tt_op *op, const struct tt_error *err);

/* Drops the caller's hold. The completion runs now if nothing is
 * outstanding, else when the last operation completes. */
void tt_join_release(struct tt_join *j);

/* A transient hold, for a completion that leaves the join before it calls
 * back (client.c): while held, the group cannot complete. tt_join_unref
 * drops it, and the completion runs then if nothing else is outstanding. */
void tt_join_ref(struct tt_join *j);
void tt_join_unref(struct tt_join *j);

/* Requests cancellation of every outstanding operation (deadline, client
 * gone, drain timeout, first error). Completion still waits for all. */
void tt_join_cancel(struct tt_join *j);

/* Number of operations not yet completed (excluding the hold). */
size_t tt_join_pending(const struct tt_join *j);

#endif
