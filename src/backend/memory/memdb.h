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
  /* How long a table stays CREATING after CreateTable, UPDATING after an
   * UpdateTable of its throughput and DELETING after DeleteTable, in
   * wall-clock milliseconds, as DynamoDB's tables do (0: the change is made
   * at once and the table stays ACTIVE). A CREATING or DELETING table is
   * not found by item operations; an UPDATING one keeps its old throughput
   * until the time passed. */
  uint64_t transition_ms;
  /* The region in the ARNs of tables and indexes (DynamoDB's own); NULL or
   * "": "ddblocal". */
  const char *region;
  /* Durability (docs/local-dynamodb.md#durability): with a data dir every
   * write is logged and answered once its record is on disk (per
   * fsync_mode), and tt_memdb_new loads the tables found there. A write
   * then completes after calls started later that changed nothing (their
   * answers need no disk). NULL: the tables live in memory only. */
  const char *data_dir;
  enum tt_memdb_fsync { TT_MEMDB_FSYNC_ALWAYS = 0, TT_MEMDB_FSYNC_EVERYSEC, TT_MEMDB_FSYNC_NO }
      fsync_mode;
  /* A corrupt record (not a torn tail) stops the start-up; with this the
   * log is truncated before it instead (the records after it are lost). */
  bool recover_truncate;
  /* A snapshot is written when the log passes max(this, twice the last
   * snapshot); 0: 64 MiB. */
  uint64_t snapshot_min_bytes;
  /* Test hooks, called on the thread pool or in a snapshot's child
   * (NULL: pwrite(2), fdatasync(2)). */
  long (*pwrite_hook)(int fd, const void *p, size_t n, int64_t off, void *arg);
  int (*fsync_hook)(int fd, void *arg);
  /* Test hook for the fork of a snapshot, on the loop (NULL: fork(2)); -1
   * with errno: the snapshot is serialized on the loop instead. */
  int (*fork_hook)(void *arg);
  void *hook_arg;
};

/* Creates a memory backend bound to `loop`. `opts` may be NULL (defaults)
 * and is copied. On success *out is a new backend: close it with
 * ops->close, run the loop until `closed` ran, then ops->destroy frees it
 * and every table. Returns 0, or UV_ENOMEM / a libuv error (nothing to
 * free). */
int tt_memdb_new(uv_loop_t *loop, const struct tt_memdb_options *opts, struct tt_backend **out);

/* The same, with the reason of a failure in msg (the data dir is locked by
 * another process: UV_EBUSY; a file is corrupt: UV_EIO, naming the file
 * and the offset). */
int tt_memdb_open(uv_loop_t *loop, const struct tt_memdb_options *opts, struct tt_backend **out,
                  char *msg, size_t msgsz);

#endif
