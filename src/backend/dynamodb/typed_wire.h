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

/* Writes the request JSON of a BatchGetItem or BatchWriteItem into b
 * (empty). Returns 0 or -1 (memory). */
int tt_ddb_batch_request_write(struct tt_buf *b, enum tt_ddb_op op,
                               const struct tt_ddb_batch_request *r);

/* Fills a call's outcome from its HTTP answer, in the call's form: status,
 * and response (JSON), item_out, read_out or txn_out, or error. The one
 * reading of an answer: the backend's, and the fuzz target's. */
void tt_ddb_call_answer(struct tt_backend_call *call, const struct tt_http_response *resp);

#endif
