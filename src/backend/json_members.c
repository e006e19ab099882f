/* SPDX-License-Identifier: Apache-2.0 */
/* json_members.c -- members of a DynamoDB JSON request read with
 * DynamoDB's refusals (json_members.h). */
#include "backend/json_members.h"

#include <string.h>

#include "value/codec_ddb.h"
#include "value/json_exact.h"
#include "value/number.h"

static int serialization(struct tt_backend_error *e, const char *key, const char *must) {
  return tt_backend_error_set(e, "SerializationException", 400, "%s must be %s", key, must);
}

static int from_tt(struct tt_backend_error *e, const struct tt_error *err) {
  if (err->code == TT_ERR_INTERNAL)
    return tt_backend_error_set(e, "InternalServerError", 500, "Internal server error");
  return tt_backend_error_set(e, "ValidationException", 400, "%s", err->message);
}

int tt_ddb_member_str(const json_t *obj, const char *key, const char **out,
                      struct tt_backend_error *e) {
  return tt_json_member_text(obj, key, out) != 0 ? serialization(e, key, "a string") : 0;
}

int tt_ddb_member_bool(const json_t *obj, const char *key, bool def, bool *out,
                       struct tt_backend_error *e) {
  const json_t *j = json_object_get(obj, key);
  *out = def;
  if (j == NULL || json_is_null(j))
    return 0;
  if (!json_is_boolean(j))
    return serialization(e, key, "a boolean");
  *out = json_is_true(j);
  return 0;
}

int tt_ddb_member_int(const json_t *obj, const char *key, int64_t *out, bool *present,
                      struct tt_backend_error *e) {
  const json_t *j = json_object_get(obj, key);
  *present = false;
  if (j == NULL || json_is_null(j))
    return 0;
  struct tt_json_numbuf nb;
  size_t len;
  const char *text = tt_json_number_text(j, &nb, &len);
  char canon[TT_NUMBER_TEXT_MAX];
  struct tt_error err;
  if (text == NULL || tt_number_canonical(text, len, canon, sizeof(canon), key, &err) != 0 ||
      tt_number_to_int64(canon, out) != 0)
    return serialization(e, key, "an integer");
  *present = true;
  return 0;
}

int tt_ddb_member_map(const json_t *obj, const char *key, struct tt_av *own,
                      const struct tt_av **ref, struct tt_backend_error *e) {
  const json_t *j = json_object_get(obj, key);
  struct tt_error err;
  if (j == NULL || json_is_null(j))
    return 0;
  /* Before the codec, whose own (deeper) bound words its refusal otherwise. */
  if (tt_ddb_json_map_too_deep(j, TT_DDB_MAX_DEPTH))
    return tt_backend_error_set(e, "ValidationException", 400,
                                "Nesting Levels have exceeded supported limits: Attributes in "
                                "the item have nested levels beyond supported limit");
  *ref = own;
  return tt_ddb_item_from_json(j, key, own, &err) != 0 ? from_tt(e, &err) : 0;
}

int tt_ddb_member_placeholders(const json_t *obj, struct tt_av *own_names,
                               struct tt_av *own_values, const struct tt_av **names,
                               const struct tt_av **values, struct tt_backend_error *e) {
  const json_t *n = json_object_get(obj, "ExpressionAttributeNames");
  const json_t *v = json_object_get(obj, "ExpressionAttributeValues");
  struct tt_error err;
  if (n && !json_is_null(n)) {
    if (!json_is_object(n))
      return serialization(e, "ExpressionAttributeNames", "an object");
    *names = own_names;
    int rc = tt_ddb_names_from_json(n, own_names, &err);
    if (rc == 1)
      return serialization(e, "ExpressionAttributeNames values", "strings");
    if (rc != 0)
      return from_tt(e, &err);
  }
  if (v && !json_is_null(v) && !json_is_object(v))
    return serialization(e, "ExpressionAttributeValues", "an object");
  return tt_ddb_member_map(obj, "ExpressionAttributeValues", own_values, values, e);
}
