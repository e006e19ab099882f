/* SPDX-License-Identifier: Apache-2.0 */
/* batch.h -- batch-get and batch-write of one model: validation of every key
 * and item before any I/O, DynamoDB-sized chunks run in parallel with a
 * bound, unprocessed work retried with backoff until done or the deadline. */
#ifndef TT_ORM_BATCH_H
#define TT_ORM_BATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "orm/orm.h"

/* docs/batch.md: at most this many keys (batch-get) or requests (batch-write). */
#define TT_ORM_BATCH_MAX 10000
/* DynamoDB's limits per call. */
#define TT_ORM_BATCH_GET_CHUNK 100
#define TT_ORM_BATCH_WRITE_CHUNK 25
#define TT_ORM_BATCH_REQUEST_BYTES (16u * 1024u * 1024u)
/* Parallel chunks when the daemon was not told (--batch-concurrency). */
#define TT_ORM_BATCH_DEFAULT_CONCURRENCY 4

struct tt_orm_batch_state;

/* One batch call. Fill the inputs, then tt_orm_batch_start. The op borrows
 * `body` until its ctx's done ran. */
struct tt_orm_batch_op {
  struct tt_orm_ctx ctx; /* first; ctx.model is the batch's model */
  bool write;            /* batch-write; else batch-get */
  const json_t *body;    /* the request body (tt_json_parse tree) */
  /* CLOCK_MONOTONIC nanoseconds of the request deadline (0 = none):
   * unprocessed work is not retried when the next backoff would pass it,
   * so the answer names what is left instead of timing out. */
  uint64_t deadline_ns;
  struct tt_orm_batch_state *st; /* private */
};

/* The number of chunks one batch call runs at once: orm->batch_concurrency
 * (--batch-concurrency, 1-64), or TT_ORM_BATCH_DEFAULT_CONCURRENCY when it
 * is 0 (not configured). */
unsigned tt_orm_batch_concurrency(const struct tt_orm *orm);

/* Validates the whole body (the first bad key or item rejects the call with
 * a ValidationError whose field is its index, e.g. "keys[17].SK" or
 * "put[3].email"), then runs the chunks. Answers (in op->ctx.result):
 *   batch-get:   200 {"items": [found items in key order], "missing": [keys]};
 *   batch-write: 200 {"processed": n};
 *   503 BatchIncomplete with details.unprocessed (batch-get: indexes into
 *   keys; batch-write: {"put": [indexes], "delete": [indexes]}) and
 *   details.processed when work is left at the deadline or after a backend
 *   error that came after some requests were written; a backend error
 *   before anything was written answers that error (with the same details
 *   for batch-write).
 * A backend error cancels the other chunks, which are still joined. The
 * ctx's done runs once later (0), or it finished inside this call (-1,
 * result filled, done never runs; docs/internals/completions.md). */
int tt_orm_batch_start(struct tt_orm_batch_op *op);

#endif
