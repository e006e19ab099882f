/* SPDX-License-Identifier: Apache-2.0 */
/* codec_ddb.h -- DynamoDB wire JSON ({"S":"x"}, {"N":"1.5"}, ...) <-> tt_av. */
#ifndef TT_VALUE_CODEC_DDB_H
#define TT_VALUE_CODEC_DDB_H

#include <jansson.h>

#include "util/buf.h"
#include "util/error.h"
#include "value/av.h"

/* DynamoDB documents nest at most 32 levels. */
#define TT_DDB_MAX_DEPTH 32

/* Converts one AttributeValue in wire JSON (an object with exactly one of
 * S N B BOOL NULL SS NS BS M L) into *out (new value, caller frees with
 * tt_av_free). `j` comes from tt_json_parse (or plain jansson). Validates
 * everything: N canonical (38 digits, range), B standard base64 with
 * padding, NULL must be true, sets non-empty without duplicates (kept
 * sorted), M keys unique, nesting <= 32. Errors are ValidationErrors whose
 * field is `path` extended to the offending value ("Item.tags[1]"); they
 * never quote values. On failure *out is a NULL value. Returns 0 or -1. */
int tt_ddb_value_from_json(const json_t *j, const char *path, struct tt_av *out,
                           struct tt_error *err);

/* Whether an attribute map's wire JSON nests values deeper than
 * `max_level` (a top-level attribute is level 1), stopping past it so that
 * a hostile document costs no more than the limit. Meant to run before the
 * codec, whose own (deeper) bound answers with another text. A malformed
 * value is not too deep (the codec says why). */
bool tt_ddb_json_map_too_deep(const json_t *map, unsigned max_level);

/* ReturnConsumedCapacity of a request: 0 (NONE or absent), 1 (TOTAL),
 * 2 (INDEXES). */
int tt_ddb_capacity_mode(const json_t *req);

/* A ConsumedCapacity entry, {"CapacityUnits", "TableName"[, "Table"]}, for
 * mode 1 or 2 (NULL on OOM). */
json_t *tt_ddb_capacity_json(int mode, const char *table, double units);

/* ExpressionAttributeNames (a JSON object of strings) as an M of S values
 * into *out (zeroed first). Returns 0; 1 when a value is not a string
 * (*out freed); -1 with err set (memory, or tt_av_map_finish's refusal). */
int tt_ddb_names_from_json(const json_t *names, struct tt_av *out, struct tt_error *err);

/* Converts an attribute map ({"attr": {"S": ...}, ...}: an Item, Key,
 * ExclusiveStartKey...) into an M value. Same rules and errors. */
int tt_ddb_item_from_json(const json_t *j, const char *path, struct tt_av *out,
                          struct tt_error *err);

/* Appends the wire JSON of v ({"S":"x"}) to b, compact. `json_flags` are
 * tt_json_dump flags (TT_JSON_GO_ESCAPE for Go-identical bytes). Returns 0
 * or -1 (b's cap or memory). */
int tt_ddb_value_write(struct tt_buf *b, const struct tt_av *v, unsigned json_flags);

/* Appends an M value as an attribute map ({"a":{"S":"x"}}), names in byte
 * order. Returns 0 or -1. */
int tt_ddb_item_write(struct tt_buf *b, const struct tt_av *item, unsigned json_flags);

/* An M value as an attribute-map tree (caller decrefs); NULL when out of
 * memory or item is not an M. */
json_t *tt_ddb_item_to_json(const struct tt_av *item);

#endif
