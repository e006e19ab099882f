/* SPDX-License-Identifier: Apache-2.0 */
/* item_wire.c -- typed item requests as DynamoDB JSON, written member by
 * member into one buffer (no tree is built), and their answers read. */
#include "backend/dynamodb/item_wire.h"

#include <string.h>

#include "value/codec_ddb.h"
#include "value/json_exact.h"

/* Appends ,"name": (the first member has no comma). */
static int member(struct tt_buf *b, const char *name) {
  if (b->len > 1 && tt_buf_puts(b, ",") != 0)
    return -1;
  return tt_json_write_string(b, name, strlen(name), 0) != 0 || tt_buf_puts(b, ":") != 0 ? -1
                                                                                          : 0;
}

static int string_member(struct tt_buf *b, const char *name, const char *value) {
  if (value == NULL)
    return 0;
  return member(b, name) != 0 || tt_json_write_string(b, value, strlen(value), 0) != 0 ? -1 : 0;
}

static int map_member(struct tt_buf *b, const char *name, const struct tt_av *map) {
  if (map == NULL)
    return 0;
  return member(b, name) != 0 || tt_ddb_item_write(b, map, 0) != 0 ? -1 : 0;
}

/* ExpressionAttributeNames: an M of S values written as plain strings. */
static int names_member(struct tt_buf *b, const struct tt_av *names) {
  if (names == NULL)
    return 0;
  if (member(b, "ExpressionAttributeNames") != 0 || tt_buf_puts(b, "{") != 0)
    return -1;
  for (size_t i = 0; i < names->len; i++) {
    const struct tt_av_member *m = &names->u.members[i];
    if ((i > 0 && tt_buf_puts(b, ",") != 0) ||
        tt_json_write_string(b, m->name, m->name_len, 0) != 0 || tt_buf_puts(b, ":") != 0 ||
        tt_json_write_string(b, m->value.u.bytes, m->value.len, 0) != 0)
      return -1;
  }
  return tt_buf_puts(b, "}");
}

static const char *return_values_name(enum tt_ddb_return_values rv) {
  static const char *const names[] = {"NONE", "ALL_OLD", "UPDATED_OLD", "ALL_NEW",
                                      "UPDATED_NEW"};
  return rv == TT_DDB_RETURN_NONE || (unsigned)rv >= 5 ? NULL : names[rv];
}

int tt_ddb_item_request_write(struct tt_buf *b, enum tt_ddb_op op,
                              const struct tt_ddb_item_request *r) {
  if (tt_buf_puts(b, "{") != 0 || string_member(b, "TableName", r->table) != 0 ||
      map_member(b, op == TT_DDB_PUT_ITEM ? "Item" : "Key",
                 op == TT_DDB_PUT_ITEM ? r->item : r->key) != 0 ||
      string_member(b, "ConditionExpression", r->condition) != 0 ||
      string_member(b, "UpdateExpression", r->update) != 0 ||
      string_member(b, "ProjectionExpression", r->projection) != 0 ||
      names_member(b, r->names) != 0 ||
      map_member(b, "ExpressionAttributeValues", r->values) != 0 ||
      string_member(b, "ReturnValues", return_values_name(r->return_values)) != 0 ||
      string_member(b, "ReturnValuesOnConditionCheckFailure",
                    r->old_on_condition_failure ? "ALL_OLD" : NULL) != 0)
    return -1;
  if (r->consistent_read && (member(b, "ConsistentRead") != 0 || tt_buf_puts(b, "true") != 0))
    return -1;
  return tt_buf_puts(b, "}");
}

int tt_ddb_item_response_read(enum tt_ddb_op op, const json_t *resp, struct tt_av *out,
                              struct tt_backend_error *e) {
  struct tt_error err;
  const char *name = op == TT_DDB_GET_ITEM ? "Item" : "Attributes";
  const json_t *j = json_object_get(resp, name);
  memset(out, 0, sizeof(*out));
  if (j == NULL || json_is_null(j))
    return 0;
  if (tt_ddb_item_from_json(j, name, out, &err) != 0)
    return tt_backend_error_set(e, "InvalidResponse", 200,
                                "the DynamoDB endpoint answered an invalid %s", name);
  return 0;
}
