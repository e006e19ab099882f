/* SPDX-License-Identifier: Apache-2.0 */
/* wire_reader.h -- DynamoDB's answers to the typed operations read from the
 * body text straight into typed values, without a jansson tree. */
#ifndef TT_BACKEND_DYNAMODB_WIRE_READER_H
#define TT_BACKEND_DYNAMODB_WIRE_READER_H

#include <stddef.h>

#include "backend/backend.h"

/* The body is not one JSON object (malformed JSON, another kind of value,
 * empty): the caller reports it as tt_ddb_response_not_object does. */
#define TT_DDB_WIRE_NOT_OBJECT (-2)

/* Both readers accept exactly what json_loadb(JSON_ALLOW_NUL) accepts
 * (RFC 8259, UTF-8, \u escapes with surrogate pairs, NUL in strings but not
 * in keys, integers that fit json_int_t, reals that do not overflow,
 * nesting <= 2048; a repeated key keeps its last value) and produce exactly
 * the values codec_ddb.c makes of that tree.
 * `text` need not be NUL-terminated; it is borrowed. */

/* Reads the answer of `op` (GetItem's Item, a write's Attributes) into
 * *out (type 0 when the answer has none; other members are checked and
 * skipped). Returns 0; -1 with e set: InvalidResponse (status 200) when the
 * member is not a valid attribute map, InternalFailure when out of memory;
 * or TT_DDB_WIRE_NOT_OBJECT (e untouched). On failure *out is type 0 and
 * nothing is left allocated. */
int tt_ddb_item_response_parse(enum tt_ddb_op op, const char *text, size_t len,
                               struct tt_av *out, struct tt_backend_error *e);

/* Reads a Query or Scan answer (Items, Count, ScannedCount,
 * LastEvaluatedKey) into *out: InvalidResponse names "Count" (not a
 * non-negative integer), "Items" (not an array), "item" or
 * "LastEvaluatedKey" (not a valid attribute map; absent, null or {} is the
 * end of the data). Returns as tt_ddb_item_response_parse; on failure *out
 * is empty. */
int tt_ddb_read_response_parse(const char *text, size_t len, struct tt_ddb_read_result *out,
                               struct tt_backend_error *e);

#endif
