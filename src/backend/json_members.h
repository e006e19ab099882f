/* SPDX-License-Identifier: Apache-2.0 */
/* json_members.h -- members of a DynamoDB JSON request read with
 * DynamoDB's refusals: strings, booleans and integers
 * (SerializationException "X must be a string", ...), attribute maps
 * (nesting measured first, then codec_ddb.h) and the placeholder maps. For
 * the DynamoDB listener's conversion (api/ddb_items.c) and the memory
 * backend's operations that still take JSON. Strings are read through
 * json_exact.h (a tree's strings marked as tt_json_parse marks them). */
#ifndef TT_BACKEND_JSON_MEMBERS_H
#define TT_BACKEND_JSON_MEMBERS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend/backend.h"

/* Each returns 0 (absent or null: *out NULL, def, *present false), or -1
 * with e set. A string is borrowed from obj and holds no NUL. */
int tt_ddb_member_str(const json_t *obj, const char *key, const char **out,
                      struct tt_backend_error *e);
int tt_ddb_member_bool(const json_t *obj, const char *key, bool def, bool *out,
                       struct tt_backend_error *e);
int tt_ddb_member_int(const json_t *obj, const char *key, int64_t *out, bool *present,
                      struct tt_backend_error *e);

/* An attribute map member (Item, Key, ExclusiveStartKey, ...) into *own
 * (which the caller frees), *ref pointed at it; *ref untouched when the
 * member is absent or null. */
int tt_ddb_member_map(const json_t *obj, const char *key, struct tt_av *own,
                      const struct tt_av **ref, struct tt_backend_error *e);

/* ExpressionAttributeNames into *own_names and ExpressionAttributeValues
 * into *own_values (both freed by the caller), *names and *values pointed
 * at those present. */
int tt_ddb_member_placeholders(const json_t *obj, struct tt_av *own_names,
                               struct tt_av *own_values, const struct tt_av **names,
                               const struct tt_av **values, struct tt_backend_error *e);

#endif
