/* SPDX-License-Identifier: Apache-2.0 */
/* client.h -- backend calls as joined request operations: metrics per
 * call, AWS standard-mode retries with full-jitter backoff and a retry
 * quota, cancellation on deadline or disconnect. */
#ifndef TT_CLIENT_CLIENT_H
#define TT_CLIENT_CLIENT_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "backend/backend.h"
#include "client/join.h"
#include "obs/families.h"

struct tt_client_retry_policy {
  unsigned max_attempts;       /* 4: the first try and three retries */
  uint64_t transient_base_ms;  /* 25 */
  uint64_t throttle_base_ms;   /* 1000 */
  uint64_t max_backoff_ms;     /* 20000 */
  unsigned quota;              /* 500 tokens */
  unsigned retry_cost;         /* 5 */
  unsigned timeout_retry_cost; /* 10 */
};

/* The defaults of docs/design.md, "Retries" (AWS standard retry mode for DynamoDB). */
extern const struct tt_client_retry_policy tt_client_default_retry;

/* Shared by every request: borrows the backend, loop and families. */
struct tt_client {
  struct tt_backend *backend;
  uv_loop_t *loop;
  struct tt_families *fams; /* may be NULL */
  struct tt_client_retry_policy retry;
  unsigned tokens; /* retry quota left */
  uint64_t rng;    /* jitter */
  double (*random01)(void *arg); /* injectable for tests; NULL = internal */
  void *random_arg;
  /* The backend has one account (KMS: the daemon's --kms-key-id lives in
   * the daemon's own account): calls ignore the join's partner account. */
  bool one_account;
};

struct tt_client_call;
typedef void (*tt_client_done_cb)(struct tt_client_call *call);

/* One logical call (all its attempts). The caller owns the struct, usually
 * in the request arena, and must keep it until the join completed. */
struct tt_client_call {
  struct tt_op op; /* registered in the request's join */
  struct tt_backend_call bc;
  struct tt_client *client;
  const char *model; /* for logs; borrowed, may be NULL */
  const char *request_id; /* for logs; borrowed, may be NULL */
  unsigned attempt;       /* 1-based, of the attempt in flight or last */
  uv_timer_t retry_timer;
  bool timer_open;
  bool in_backend;
  bool canceled;
  bool retry_conflicts; /* TransactionConflict is retried only when asked */
  struct tt_trace_ctx parent; /* the join's trace position at the start */
  struct tt_span *span;       /* the attempt's client span; NULL when not traced */
  uint64_t started_ns;
  tt_client_done_cb done;
  void *arg;
};

/* Initializes the shared client with the default policy. */
void tt_client_init(struct tt_client *cl, struct tt_backend *backend, uv_loop_t *loop,
                    struct tt_families *fams);

/* Starts `op` with `request` (stolen) and registers the call in `join`,
 * under the completion contract of docs/internals/completions.md: returns
 * 0, and then `done` runs exactly once, never inside this function (from
 * the loop or from tt_client_run_ready), when the last attempt finished;
 * or returns a negative libuv error -- the join was already cancelled
 * (UV_ECANCELED), the backend refused the call, no request (UV_ENOMEM) --
 * and `done` never runs: the request is released and call->bc.error says
 * why (RequestCanceled, InternalFailure; no body). In `done`,
 * call->bc.status / .response / .error / .item_out / .read_out / .txn_out / .batch_out /
 * .table_out hold the
 * result (take a reference, or move a value out, to keep it); the call has
 * already left the join and the client no longer refers to it, so `done`
 * may start the same struct again (what it read stays valid until it
 * returns; the results are released then). */
int tt_client_start(struct tt_client *cl, struct tt_join *join, struct tt_client_call *call,
                    enum tt_ddb_op op, json_t *request, tt_client_done_cb done, void *arg);

/* The same for a typed operation (backend.h): `item` is borrowed and must
 * stay unchanged until `done` ran; on success call->bc.item_out holds the
 * Item or Attributes (move it out to keep it: it is freed after `done`). */
int tt_client_start_item(struct tt_client *cl, struct tt_join *join, struct tt_client_call *call,
                         enum tt_ddb_op op, const struct tt_ddb_item_request *item,
                         tt_client_done_cb done, void *arg);

/* The same for a typed Query or Scan; the page lands in call->bc.read_out. */
int tt_client_start_read(struct tt_client *cl, struct tt_join *join, struct tt_client_call *call,
                         enum tt_ddb_op op, const struct tt_ddb_read_request *read,
                         tt_client_done_cb done, void *arg);

/* The same for a typed TransactWriteItems or TransactGetItems; the items
 * read or the cancellation reasons land in call->bc.txn_out. */
int tt_client_start_txn(struct tt_client *cl, struct tt_join *join, struct tt_client_call *call,
                        enum tt_ddb_op op, const struct tt_ddb_txn_request *txn,
                        tt_client_done_cb done, void *arg);

/* The same for a typed BatchGetItem or BatchWriteItem; the items read, the
 * unprocessed entries and the capacity land in call->bc.batch_out. */
int tt_client_start_batch(struct tt_client *cl, struct tt_join *join, struct tt_client_call *call,
                          enum tt_ddb_op op, const struct tt_ddb_batch_request *batch,
                          tt_client_done_cb done, void *arg);

/* The same for a typed table operation; the description lands in
 * call->bc.table_out. */
int tt_client_start_table(struct tt_client *cl, struct tt_join *join, struct tt_client_call *call,
                          enum tt_ddb_op op, const struct tt_ddb_table_request *table,
                          tt_client_done_cb done, void *arg);

/* The client's side of the port's trampoline (backend.h): completes the
 * calls the backend can answer now -- and those their completions start --
 * until none is left or CLOCK_MONOTONIC passes `until_ns` (0: no limit).
 * Each completion runs its `done` as from the loop; a retry still waits on
 * its timer. Call only from the top of the stack (the server, after a
 * handler returned), never from a `done`. Returns the number of backend
 * calls completed; 0 on a backend that completes only from the loop. */
size_t tt_client_run_ready(struct tt_client *cl, uint64_t until_ns);

/* The backoff before retry number `retry` (1-based) for an error: full
 * jitter over min(base * 2^(retry-1), cap); honours retry_after_ms.
 * A retry is not made when this wait would end after the join's
 * deadline_ms, or when retry_after_ms exceeds max_backoff_ms: the call then
 * completes at once with the error (a throttling one becomes 429 Throttled
 * with Retry-After). Exposed for tests. */
uint64_t tt_client_backoff_ms(struct tt_client *cl, const struct tt_backend_error *e,
                              unsigned retry);

#endif
