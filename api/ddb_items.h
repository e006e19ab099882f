/* SPDX-License-Identifier: Apache-2.0 */
/* ddb_items.h -- the DynamoDB listener's GetItem, PutItem, UpdateItem,
 * DeleteItem, Query and Scan: DynamoDB's request JSON read into the backend
 * port's typed request (backend.h), and the typed answer written as
 * DynamoDB's answer JSON. The member checks of ddb_wire.h come first; what
 * is left here is what only reading the JSON can tell (a missing Key or
 * Item, the enums, Limit, the segments, nesting), with DynamoDB's messages.
 * What depends on the table is the backend's. */
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

#endif
