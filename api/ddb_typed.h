/* SPDX-License-Identifier: Apache-2.0 */
/* ddb_typed.h -- the DynamoDB listener's conversions between DynamoDB's
 * request and answer JSON and the port's typed transactions and batches
 * (backend.h): a TransactWriteItems, TransactGetItems, BatchGetItem or
 * BatchWriteItem body into a typed request, checked as DynamoDB checks its
 * shape; a typed result into the answer's JSON (and the
 * CancellationReasons of an error). */
#ifndef TT_API_DDB_TYPED_H
#define TT_API_DDB_TYPED_H

#include <jansson.h>
#include <stdbool.h>

#include "backend/backend.h"

/* A transaction converted from its JSON body: `req` points into the body
 * (which the caller keeps until the call is done) and into `own`. */
struct tt_ddbt_txn {
  struct tt_ddb_txn_request req;
  struct tt_ddb_txn_step *steps;
  struct tt_av *own; /* 3 a step: the Item or Key, the names, the values */
};

/* Whether `op` is a transaction (TransactWriteItems, TransactGetItems). */
bool tt_ddbt_is_txn(enum tt_ddb_op op);

/* Converts the body of transaction `op`. Returns 0, or -1 with e set
 * (DynamoDB's SerializationException or ValidationException for a body of
 * the wrong shape; out then empty). */
int tt_ddbt_txn_parse(enum tt_ddb_op op, const json_t *body, struct tt_ddbt_txn *out,
                      struct tt_backend_error *e);

void tt_ddbt_txn_free(struct tt_ddbt_txn *t);

/* The answer of a successful transaction: {} for TransactWriteItems,
 * {"Responses":[{"Item":...},{}...]} for TransactGetItems. NULL: memory. */
json_t *tt_ddbt_txn_answer(enum tt_ddb_op op, const struct tt_ddb_txn_result *r);

/* The extra members of a canceled transaction's error body:
 * {"CancellationReasons":[{"Code":...,"Message":...,"Item":...}...]}.
 * NULL: memory. */
json_t *tt_ddbt_txn_reasons(const struct tt_ddb_txn_result *r);

/* A batch converted from its JSON body, borrowing from it like a
 * transaction. */
struct tt_ddbt_batch {
  struct tt_ddb_batch_request req;
  struct tt_ddb_batch_table *tables;
  struct tt_ddb_batch_entry *entries;
  struct tt_av *own;  /* an entry's key or item */
  struct tt_av *maps; /* 2 a table: its names, its values */
};

/* Whether `op` is a batch (BatchGetItem, BatchWriteItem). */
bool tt_ddbt_is_batch(enum tt_ddb_op op);

/* Converts the body of batch `op`. Returns 0, or -1 with e set (out then
 * empty). */
int tt_ddbt_batch_parse(enum tt_ddb_op op, const json_t *body, struct tt_ddbt_batch *out,
                        struct tt_backend_error *e);

void tt_ddbt_batch_free(struct tt_ddbt_batch *b);

/* The answer of a successful batch converted from `body`: Responses (every
 * table, BatchGetItem), UnprocessedKeys (each table's request with the keys
 * left) or UnprocessedItems, ConsumedCapacity when asked. NULL: memory. */
json_t *tt_ddbt_batch_answer(enum tt_ddb_op op, const json_t *body, const struct tt_ddbt_batch *b,
                             const struct tt_ddb_batch_result *r);

#endif
