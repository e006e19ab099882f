/* SPDX-License-Identifier: Apache-2.0 */
/* table_json.h -- DynamoDB's JSON of the typed table operations
 * (backend.h's tt_ddb_table_request and tt_ddb_table_desc): the request a
 * typed call makes, and its answer read back into a description. One
 * codec, for the dynamodb backend (the wire) and the memory backend (whose
 * table operations and durability log speak that JSON). */
#ifndef TT_BACKEND_TABLE_JSON_H
#define TT_BACKEND_TABLE_JSON_H

#include <jansson.h>

#include "backend/backend.h"

/* The request JSON of a typed table operation (a new reference), NULL when
 * memory ran out. */
json_t *tt_ddb_table_request_json(enum tt_ddb_op op, const struct tt_ddb_table_request *r);

/* The answer JSON of a table operation from its description (a new
 * reference): {"Table": ...} for DescribeTable, {"TableDescription": ...}
 * for CreateTable, UpdateTable and DeleteTable, the TTL's for
 * DescribeTimeToLive and UpdateTimeToLive; NULL when memory ran out. A
 * description writes the members it has: an ARN, ID and counts as given,
 * CreationDateTime, the throughput with its dates when set, a
 * BillingModeSummary unless UNSET (and TableThroughputModeSummary when
 * PAY_PER_REQUEST), an index's status, ARN, counts and throughput. */
json_t *tt_ddb_table_desc_json(enum tt_ddb_op op, const struct tt_ddb_table_desc *d);

/* Reads the answer of a table operation (a TableDescription, Table,
 * TimeToLiveDescription or TimeToLiveSpecification; absent members stay
 * NULL or 0) into *d, which the caller frees. Returns 0, or -1 when memory
 * ran out (*d then empty). */
int tt_ddb_table_answer_read(enum tt_ddb_op op, const json_t *answer,
                             struct tt_ddb_table_desc *d);

/* Reads a client's request of a table operation into *r: its strings
 * borrowed from req, its arrays allocated in `a`. Refuses, with the memory
 * backend's messages, what the typed form cannot say: a body that is not an
 * object, a legacy parameter, a member of the wrong type or null, a key
 * schema that is not HASH then RANGE, an unknown projection or billing
 * mode, an empty index list or NonKeyAttributes, an UpdateTable member
 * the memory backend does not take (an index Delete action is only counted,
 * n_deletes, for the backend's limit), a TTL specification without
 * its members, ListTables' Limit out of 1..100, a tag without its key or
 * value or longer than DynamoDB allows. What the typed form can say (names,
 * lengths, counts, definitions against keys, the tables) is the backend's
 * to check. Returns 0, or -1 with e set. */
int tt_ddb_table_request_read(enum tt_ddb_op op, const json_t *req, struct tt_arena *a,
                              struct tt_ddb_table_request *r, struct tt_backend_error *e);

#endif
