/* SPDX-License-Identifier: Apache-2.0 */
/* memdb.h -- the embedded memory backend: in-process tables with DynamoDB's
 * semantics behind the backend port (backend.h). */
#ifndef TT_BACKEND_MEMORY_MEMDB_H
#define TT_BACKEND_MEMORY_MEMDB_H

#include <stdint.h>
#include <uv.h>

#include <stdbool.h>

#include "backend/backend.h"

/* Returns the current time in unix seconds; used for TTL expiry and for the
 * 10-minute window of TransactWriteItems client request tokens. */
typedef int64_t (*tt_memdb_clock_fn)(void *arg);

struct tt_memdb_options {
  tt_memdb_clock_fn clock; /* NULL: time(NULL) */
  void *clock_arg;
  /* Artificial delay of every call, in loop milliseconds (0: the call
   * completes on the next loop iteration). Calls still complete in the
   * order they were started. */
  uint64_t latency_ms;
  /* Hide items whose TTL passed, as if TTL had deleted them at once. Off by
   * default: DynamoDB deletes expired items in the background within days
   * and returns them from reads until then, so a read right after expiry
   * still sees the item (the TTL contract scenario relies on it). */
  bool hide_expired;
};

/* Creates a memory backend bound to `loop`. `opts` may be NULL (defaults)
 * and is copied. On success *out is a new backend: close it with
 * ops->close, run the loop until `closed` ran, then ops->destroy frees it
 * and every table. Returns 0, or UV_ENOMEM / a libuv error (nothing to
 * free). */
int tt_memdb_new(uv_loop_t *loop, const struct tt_memdb_options *opts, struct tt_backend **out);

#endif
