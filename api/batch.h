/* SPDX-License-Identifier: Apache-2.0 */
/* batch.h -- the HTTP side of batches: a body of POST
 * /v1/models/{m}/batch-get or /batch-write read into the ORM's typed batch
 * (orm/batch.h), and its typed answer rendered. */
#ifndef TT_API_BATCH_H
#define TT_API_BATCH_H

#include <jansson.h>

#include "orm/batch.h"

/* Starts the batch `op` (ctx, write and deadline_ns filled) of a REST body
 * (borrowed until op finishes): read into op's typed entries, or op fails
 * with the body's first error in the API's order (encryption, members,
 * lists, counts, consistent, select, then each key or item;
 * docs/batch.md). Returns as tt_orm_batch_start does. */
int tt_api_batch_start(struct tt_orm_batch_op *op, const json_t *body);

/* Once op finished: turns its typed answer in `r` into the HTTP answer's
 * body, written to `out` on success (batch-get: 200 {"items": [found items
 * in key order], "missing": [keys]}; batch-write: 200 {"processed": n}),
 * or `r` fails (out of memory); a failure that left entries
 * undone gets details.unprocessed -- batch-get: indexes into keys;
 * batch-write: {"put": [indexes], "delete": [indexes]} -- and
 * details.processed, then the backend's details or details.cause) and
 * frees op's entries. */
void tt_api_batch_answer(struct tt_orm_batch_op *op, struct tt_orm_result *r, struct tt_buf *out);

#endif
