/* SPDX-License-Identifier: Apache-2.0 */
/* limits.c -- DynamoDB's documented size and shape limits (key value sizes,
 * attribute name lengths, document nesting, placeholder maps, transaction
 * size, key attribute names in a schema), checked in one place with the
 * service's error texts so a test on memory fails where production would. */
#include <string.h>

#include "backend/memory/internal.h"
#include "value/codec_ddb.h"

/* ---- key values ---- */

int memdb_limit_key_value(const struct tt_av *v, bool is_hash, struct tt_backend_error *e) {
  /* Numbers are bounded by their 38 digits; only S and B count bytes (B its
   * raw bytes, not the base64 text). */
  if (v->type != TT_AV_S && v->type != TT_AV_B)
    return 0;
  /* DynamoDB's texts, the missing space of "of2048" included. */
  if (is_hash && v->len > MEMDB_PK_MAX)
    return memdb_validation(e, "One or more parameter values were invalid: Size of hashkey has "
                               "exceeded the maximum size limit of%u bytes",
                            MEMDB_PK_MAX);
  if (!is_hash && v->len > MEMDB_SK_MAX)
    return memdb_validation(e, "One or more parameter values were invalid: Aggregated size of "
                               "all range keys has exceeded the size limit of %u bytes",
                            MEMDB_SK_MAX);
  return 0;
}

int memdb_limit_index_keys(const struct memdb_table *t, const struct tt_av *item,
                           struct tt_backend_error *e) {
  for (size_t x = 0; x < t->nidx; x++) {
    const struct memdb_index *ix = &t->idx[x];
    const struct memdb_keydef *defs[2] = {&ix->pk, &ix->sk};
    for (int i = 0; i < 2; i++) {
      /* An LSI's partition key is the table's, checked with the table's. */
      const struct tt_av *v = defs[i]->name ? tt_av_map_get(item, defs[i]->name) : NULL;
      if (v && v->type == defs[i]->type && memdb_limit_key_value(v, i == 0, e) != 0)
        return -1;
    }
  }
  return 0;
}

/* ---- attribute names and nesting ---- */

static int name_too_large(struct tt_backend_error *e) {
  return memdb_validation(e, "1 validation error detected: Attribute name is too large, must be "
                             "less than %u bytes",
                          MEMDB_ATTR_NAME_MAX + 1);
}

/* Walks one value at `level` (a top-level attribute is level 1). */
static int check_value(const struct tt_av *v, unsigned level, struct tt_backend_error *e) {
  if (level > MEMDB_NEST_MAX)
    return memdb_validation(e, "Nesting Levels have exceeded supported limits: Attributes in the "
                               "item have nested levels beyond supported limit");
  if (v->type == TT_AV_M) {
    for (size_t i = 0; i < v->len; i++) {
      if (v->u.members[i].name_len > MEMDB_ATTR_NAME_MAX)
        return name_too_large(e);
      if (check_value(&v->u.members[i].value, level + 1, e) != 0)
        return -1;
    }
  } else if (v->type == TT_AV_L) {
    for (size_t i = 0; i < v->len; i++)
      if (check_value(&v->u.elems[i], level + 1, e) != 0)
        return -1;
  }
  return 0;
}

int memdb_limit_item(const struct tt_av *item, struct tt_backend_error *e) {
  return item->type == TT_AV_M ? check_value(item, 0, e) : 0; /* its attributes: level 1 */
}

/* ---- placeholder maps ---- */

int memdb_limit_exprs(const struct tt_av *names, const struct tt_av *values,
                      struct tt_backend_error *e) {
  static const char *const what[2] = {"ExpressionAttributeNames", "ExpressionAttributeValues"};
  const struct tt_av *maps[2] = {names, values};
  size_t total = 0; /* the 2 MB bound is on names and values together */
  for (int k = 0; k < 2; k++) {
    for (size_t i = 0; maps[k] && maps[k]->type == TT_AV_M && i < maps[k]->len; i++) {
      const struct tt_av_member *mb = &maps[k]->u.members[i];
      if (mb->name_len > MEMDB_PLACEHOLDER_MAX)
        return memdb_validation(e, "%s contains invalid key: The expression attribute map "
                                   "contains a key that is too long; size of key: %zu",
                                what[k], mb->name_len);
      if (k == 0 && mb->value.type == TT_AV_S && mb->value.len > MEMDB_ATTR_NAME_MAX)
        return name_too_large(e);
      if (k == 1 && check_value(&mb->value, 1, e) != 0)
        return -1;
      total += k == 0 ? mb->name_len + mb->value.len
                      : tt_av_attr_size(mb->name, mb->name_len, &mb->value);
    }
    if (maps[k] && maps[k]->type == TT_AV_M && total > MEMDB_EXPR_MAPS_MAX)
      return memdb_validation(e, "%s exceeds max size", what[k]);
  }
  return 0;
}

/* ---- transactions ---- */

int memdb_limit_txn(const struct memdb_wr *w, size_t n, struct tt_backend_error *e) {
  size_t total = 0;
  for (size_t i = 0; i < n; i++) {
    total += tt_av_item_size(w[i].item);
    if (w[i].x.values)
      total += tt_av_item_size(w[i].x.values);
  }
  if (total > MEMDB_TXN_BYTES_MAX)
    return memdb_validation(e, "Transaction request cannot be larger than 4 MB");
  return 0;
}

/* ---- key attribute names of a schema ---- */

/* One name of a schema list (param, 1-based position i, field NULL for a
 * NonKeyAttributes entry). */
static int schema_name_check(const char *name, const char *param, size_t i, bool field,
                             struct tt_backend_error *e) {
  if (name == NULL || strlen(name) <= MEMDB_KEY_NAME_MAX)
    return 0;
  /* The service quotes the name, but names can be 64 KB: say which one. */
  return memdb_validation(e, "1 validation error detected: Value at '%s.%zu.member%s' failed to "
                             "satisfy constraint: Member must have length less than or equal "
                             "to %u",
                          param, i, field ? ".attributeName" : "", MEMDB_KEY_NAME_MAX);
}

/* The key schema's names, then the index's projected ones. */
static int keys_check(const struct tt_ddb_keys *k, const struct tt_ddb_index *ix,
                      struct tt_backend_error *e) {
  if (schema_name_check(k->hash, "keySchema", 1, true, e) != 0 ||
      schema_name_check(k->range, "keySchema", 2, true, e) != 0)
    return -1;
  for (size_t i = 0; ix && i < ix->n_include; i++)
    if (schema_name_check(ix->include[i], "nonKeyAttributes", i + 1, false, e) != 0)
      return -1;
  return 0;
}

int memdb_limit_schema(const struct tt_ddb_table_request *r, struct tt_backend_error *e) {
  for (size_t i = 0; i < r->n_defs; i++)
    if (schema_name_check(r->defs[i].name, "attributeDefinitions", i + 1, true, e) != 0)
      return -1;
  if (keys_check(&r->keys, NULL, e) != 0)
    return -1;
  for (size_t i = 0; i < r->n_indexes; i++)
    if (keys_check(&r->indexes[i].keys, &r->indexes[i], e) != 0)
      return -1;
  return 0;
}
