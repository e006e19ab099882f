/* SPDX-License-Identifier: Apache-2.0 */
/* typed_wire.h -- the dynamodb backend's side of the typed operations: a
 * struct tt_ddb_item_request or tt_ddb_read_request written as DynamoDB's
 * request JSON straight into the body buffer, and the answer read into
 * typed values. */
#ifndef TT_BACKEND_DYNAMODB_TYPED_WIRE_H
#define TT_BACKEND_DYNAMODB_TYPED_WIRE_H

#include <jansson.h>

#include "backend/backend.h"
#include "backend/dynamodb/http.h"
#include "util/buf.h"

/* Writes the request JSON of `r` for `op` (GetItem, PutItem, UpdateItem,
 * DeleteItem) into b, which must be empty. Returns 0 or -1 (memory). */
int tt_ddb_item_request_write(struct tt_buf *b, enum tt_ddb_op op,
                              const struct tt_ddb_item_request *r);

/* Writes the request JSON of a Query or Scan into b (empty). Returns 0 or
 * -1 (memory). */
int tt_ddb_read_request_write(struct tt_buf *b, const struct tt_ddb_read_request *r);

/* Writes the request JSON of a TransactWriteItems or TransactGetItems into
 * b (empty). Returns 0 or -1 (memory). */
int tt_ddb_txn_request_write(struct tt_buf *b, const struct tt_ddb_txn_request *r);

/* Reads a transaction's 2xx answer: TransactGetItems' Responses into
 * out->items (nothing for TransactWriteItems). Returns 0, or -1 with an
 * InvalidResponse in e (out then empty). */
int tt_ddb_txn_response_read(const json_t *resp, struct tt_ddb_txn_result *out,
                             struct tt_backend_error *e);

/* Moves the CancellationReasons of a TransactionCanceledException's body
 * (e->body, which is then released) into out->reasons: Code ("None" when
 * absent), Message, Item (left out when it is no attribute map). Returns 0
 * or -1 (memory; out empty, e unchanged). */
int tt_ddb_txn_reasons_read(struct tt_backend_error *e, struct tt_ddb_txn_result *out);

/* Writes the request JSON of a BatchGetItem or BatchWriteItem into b
 * (empty). Returns 0 or -1 (memory). */
int tt_ddb_batch_request_write(struct tt_buf *b, enum tt_ddb_op op,
                               const struct tt_ddb_batch_request *r);

/* Reads a batch's 2xx answer for request r: Responses into out->items,
 * UnprocessedKeys / UnprocessedItems into out->left, ConsumedCapacity into
 * out->units (when asked). Returns 0, or -1 with an InvalidResponse in e
 * (a table not in the request, a value that is no attribute map; out then
 * empty). */
int tt_ddb_batch_response_read(enum tt_ddb_op op, const struct tt_ddb_batch_request *r,
                               const json_t *resp, struct tt_ddb_batch_result *out,
                               struct tt_backend_error *e);

/* Fills a call's outcome from its HTTP answer, in the call's form: status,
 * and response (JSON), item_out, read_out or txn_out, or error. The one
 * reading of an answer: the backend's, and the fuzz target's. */
void tt_ddb_call_answer(struct tt_backend_call *call, const struct tt_http_response *resp);

#endif
