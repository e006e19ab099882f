/* SPDX-License-Identifier: Apache-2.0 */
/* ddb_items.h -- the DynamoDB listener's GetItem, PutItem, UpdateItem,
 * DeleteItem, Query and Scan: DynamoDB's request JSON read into the backend
 * port's typed request (backend.h), and the typed answer written as
 * DynamoDB's answer JSON. The member checks of ddb_wire.h come first; what
 * is left here is what only reading the JSON can tell (a missing Key or
 * Item, the enums, Limit, the segments, nesting), with DynamoDB's messages.
 * What depends on the table is the backend's.
 *
 * Below them, the same for transactions and batches (api/ddb_typed.c): a
 * TransactWriteItems, TransactGetItems, BatchGetItem or BatchWriteItem body
 * into a typed request, checked as DynamoDB checks its shape; a typed
 * result into the answer's JSON (and the CancellationReasons of an
 * error). */
#ifndef TT_API_DDB_ITEMS_H
#define TT_API_DDB_ITEMS_H

#include <jansson.h>
#include <stdbool.h>

#include "backend/backend.h"
#include "util/buf.h"

/* ReturnConsumedCapacity. */
enum tt_ddbi_capacity {
  TT_DDBI_CAPACITY_NONE = 0,
  TT_DDBI_CAPACITY_TOTAL,
  TT_DDBI_CAPACITY_INDEXES
};

/* One decoded request. The typed request points into a struct
 * tt_ddbi_owned and into the JSON body it was read from, which the caller
 * keeps until the call's `done` ran. */
struct tt_ddbi_request {
  enum tt_ddb_op op;
  enum tt_ddbi_capacity capacity;
  union {
    struct tt_ddb_item_request item; /* GetItem, PutItem, UpdateItem, DeleteItem */
    struct tt_ddb_read_request read; /* Query, Scan */
  };
};

/* What a request read from JSON owns: its Key or Item, placeholder maps and
 * ExclusiveStartKey, and the ConsumedCapacity its call answers. */
struct tt_ddbi_owned {
  struct tt_av av[4];
  struct tt_ddb_consumed consumed;
};

/* Whether op is one of the six typed operations. */
bool tt_ddbi_typed_op(enum tt_ddb_op op);

/* An item request's Item (`put`) or Key into q, which must be there, then
 * (with `on_failure`) its ReturnValuesOnConditionCheckFailure, with
 * DynamoDB's messages; the map is kept in *own. Returns 0 or -1 with e set. */
int tt_ddbi_item_or_key(const json_t *obj, bool put, bool on_failure, struct tt_av *own,
                        struct tt_ddb_item_request *q, struct tt_backend_error *e);

/* Reads `body` (a JSON object, strings marked as json_exact.h reads them)
 * into *r, whose values are kept in *own (zeroed first). Returns 0, or -1
 * with e set (own then holds nothing to free). */
int tt_ddbi_request_from_json(enum tt_ddb_op op, const json_t *body, struct tt_ddbi_request *r,
                              struct tt_ddbi_owned *own, struct tt_backend_error *e);

/* Frees what own holds (a zeroed one holds nothing). */
void tt_ddbi_owned_free(struct tt_ddbi_owned *own);

/* Appends DynamoDB's answer to r's successful call (bc's item_out or
 * read_out, and the ConsumedCapacity r's request points to) to b:
 * {"Item":...} or {}, {"Attributes":...}, {"Count":...,"ScannedCount":...,
 * "Items":[...],"LastEvaluatedKey":...}, with ConsumedCapacity when the
 * request asked for it. Returns 0 or -1
 * (memory). */
int tt_ddbi_answer_write(const struct tt_ddbi_request *r, const struct tt_backend_call *bc,
                         struct tt_buf *b);

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
