/* SPDX-License-Identifier: Apache-2.0 */
/* util.c -- request helpers shared by the memory backend's operations:
 * errors, parameters, placeholder maps and key validation. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/memory/internal.h"
#include "value/codec_ddb.h"
#include "value/json_exact.h"
#include "value/number.h"

int memdb_fail(struct tt_backend_error *e, const char *type, const char *fmt, ...) {
  char msg[sizeof(e->message)];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  return tt_backend_error_set(e, type, 400, "%s", msg);
}

int memdb_oom(struct tt_backend_error *e) {
  return tt_backend_error_set(e, "InternalServerError", 500, "Internal server error");
}

int memdb_fail_tt(struct tt_backend_error *e, const struct tt_error *err) {
  if (err->code == TT_ERR_INTERNAL)
    return memdb_oom(e);
  return memdb_validation(e, "%s", err->message);
}

struct memdb_table *memdb_table_get_any(struct memdb *m, const char *name) {
  if (m->transitions)
    memdb_tables_settle(m);
  for (struct memdb_table *t = m->tables; t; t = t->next)
    if (strcmp(t->name, name) == 0)
      return t;
  return NULL;
}

struct memdb_table *memdb_table_get(struct memdb *m, const char *name) {
  struct memdb_table *t = memdb_table_get_any(m, name);
  return t && (t->status == MEMDB_CREATING || t->status == MEMDB_DELETING) ? NULL : t;
}

int memdb_req_table_named(struct memdb *m, const char *name, struct memdb_table **t,
                          struct tt_backend_error *e) {
  if (name == NULL)
    return memdb_validation(e, "1 validation error detected: Value null at 'tableName' "
                               "failed to satisfy constraint: Member must not be null");
  if ((*t = memdb_table_get(m, name)) == NULL)
    return memdb_fail(e, "ResourceNotFoundException", "Requested resource not found");
  return 0;
}

/* "Capacity unit consumption" of the DynamoDB Developer Guide: a read
 * rounds the item up to 4 KB, a write to 1 KB; an eventually consistent
 * read costs half. */
static double item_units(const struct tt_av *item, bool read) {
  if (item == NULL || item->type != TT_AV_M)
    return 1;
  size_t unit = read ? 4096 : 1024;
  return (double)((tt_av_item_size(item) + unit - 1) / unit);
}

double memdb_capacity_units(const struct tt_av *a, const struct tt_av *b, bool read,
                            bool consistent) {
  double u = item_units(a, read);
  if (b != NULL && b->type == TT_AV_M) {
    double v = item_units(b, read);
    if (a == NULL || a->type != TT_AV_M || v > u)
      u = v;
  }
  return read && !consistent ? u / 2 : u;
}

/* ---- expressions ---- */

int memdb_exprs_use(struct memdb_exprs *x, const struct tt_av *names, const struct tt_av *values,
                    struct tt_backend_error *e) {
  struct tt_error err;
  memset(x, 0, sizeof(*x));
  x->names = names;
  x->values = values;
  /* The size and placeholder-map rules, once the maps are known. */
  if (memdb_limit_exprs(names, values, e) != 0)
    return -1;
  return tt_expr_check_maps(names, values, &err) != 0 ? memdb_fail_tt(e, &err) : 0;
}

int memdb_exprs_parse_text(struct memdb_exprs *x, const char *text, enum tt_expr_kind kind,
                           struct tt_expr **out, struct tt_backend_error *e) {
  struct tt_error err;
  *out = NULL;
  if (text == NULL)
    return 0;
  if (x->n == sizeof(x->list) / sizeof(x->list[0]))
    return memdb_oom(e);
  if (tt_expr_parse(kind, text, x->names, x->values, out, &err) != 0) {
    /* The key-condition rules' messages are the ones without the prefix. */
    static const char prefix[] = "Invalid KeyConditionExpression: ";
    if (kind == TT_EXPR_KEY_CONDITION && err.code == TT_ERR_VALIDATION && !x->key_failed &&
        strncmp(err.message, prefix, sizeof(prefix) - 1) != 0) {
      x->key_failed = true;
      x->key_err = err;
      return 0;
    }
    return memdb_fail_tt(e, &err);
  }
  x->list[x->n++] = *out;
  return 0;
}

int memdb_exprs_finish(struct memdb_exprs *x, struct tt_backend_error *e) {
  struct tt_error err;
  if (x->key_failed)
    return memdb_fail_tt(e, &x->key_err);
  if (x->n == 0) {
    if (x->names)
      return memdb_validation(e, "ExpressionAttributeNames can only be specified when using "
                                 "expressions");
    if (x->values)
      return memdb_validation(e, "ExpressionAttributeValues can only be specified when using "
                                 "expressions");
    return 0;
  }
  if (tt_expr_check_unused((const struct tt_expr *const *)x->list, x->n, x->names, x->values,
                           &err) != 0)
    return memdb_fail_tt(e, &err);
  return 0;
}

void memdb_exprs_free(struct memdb_exprs *x) {
  for (size_t i = 0; i < x->n; i++)
    tt_expr_free(x->list[i]);
  x->n = 0;
  x->names = x->values = NULL;
}

/* ---- keys ---- */

/* An empty S or B key value: DynamoDB words it "are not valid." in an
 * Item and "were invalid:" in a Key parameter. */
static int empty_key(struct tt_backend_error *e, const struct tt_av *v, const char *name,
                     bool in_key) {
  return memdb_validation(e,
                          "One or more parameter values %s The AttributeValue for a key "
                          "attribute cannot contain an empty %s value. Key: %s",
                          in_key ? "were invalid:" : "are not valid.",
                          v->type == TT_AV_B ? "binary" : "string", name);
}

int memdb_key_check(const struct memdb_table *t, const struct tt_av *key, struct memdb_kv *pk,
                    struct memdb_kv *sk, struct tt_backend_error *e) {
  size_t want = t->sk.name ? 2 : 1;
  const struct tt_av *a = tt_av_map_get(key, t->pk.name);
  const struct tt_av *b = t->sk.name ? tt_av_map_get(key, t->sk.name) : NULL;
  if (key->type != TT_AV_M || key->len != want || a == NULL || a->type != t->pk.type ||
      (t->sk.name && (b == NULL || b->type != t->sk.type)))
    return memdb_validation(e, "The provided key element does not match the schema");
  if (a->len == 0 && a->type != TT_AV_N)
    return empty_key(e, a, t->pk.name, true);
  if (b && b->len == 0 && b->type != TT_AV_N)
    return empty_key(e, b, t->sk.name, true);
  if (memdb_limit_key_value(a, true, e) != 0 || (b && memdb_limit_key_value(b, false, e) != 0))
    return -1;
  *pk = memdb_kv_of(a);
  if (b)
    *sk = memdb_kv_of(b);
  else
    memset(sk, 0, sizeof(*sk));
  return 0;
}

int memdb_key_paths_check(const struct memdb_table *t, const struct tt_expr *x,
                          struct tt_backend_error *e) {
  static const char msg[] = "Key attributes must be scalars; list random access '[]' and map "
                            "lookup '.' are not allowed: ";
  const char *keys[2] = {t->pk.name, t->sk.name};
  for (int i = 0; x && i < 2; i++)
    if (keys[i] && tt_expr_nested_under(x, keys[i]))
      return memdb_validation(e, "%sKey: %s", msg, keys[i]);
  for (size_t k = 0; x && k < t->nidx; k++) {
    const char *ik[2] = {t->idx[k].pk.name, t->idx[k].sk.name};
    for (int i = 0; i < 2; i++)
      if (ik[i] && tt_expr_nested_under(x, ik[i]))
        return memdb_validation(e, "%sIndexKey: %s", msg, ik[i]);
  }
  return 0;
}

int memdb_item_check(const struct memdb_table *t, const struct tt_av *item,
                     const char *size_msg, struct memdb_kv *pk, struct memdb_kv *sk,
                     struct tt_backend_error *e) {
  const struct memdb_keydef *defs[2] = {&t->pk, &t->sk};
  struct memdb_kv *keys[2] = {pk, sk};
  if (memdb_limit_item(item, e) != 0)
    return -1;
  for (int i = 0; i < 2; i++) {
    if (defs[i]->name == NULL)
      continue;
    const struct tt_av *v = tt_av_map_get(item, defs[i]->name);
    if (v == NULL)
      return memdb_validation(e, "One or more parameter values were invalid: Missing the key "
                                 "%s in the item",
                              defs[i]->name);
    if (v->type != defs[i]->type)
      return memdb_validation(e, "One or more parameter values were invalid: Type mismatch for "
                                 "key %s expected: %s actual: %s",
                              defs[i]->name, tt_av_type_name(defs[i]->type),
                              tt_av_type_name(v->type));
    if (v->len == 0 && v->type != TT_AV_N)
      return empty_key(e, v, defs[i]->name, false);
    if (memdb_limit_key_value(v, i == 0, e) != 0)
      return -1;
    if (keys[i])
      *keys[i] = memdb_kv_of(v);
  }
  for (size_t x = 0; x < t->nidx; x++) {
    const struct memdb_index *ix = &t->idx[x];
    const struct memdb_keydef *idefs[2] = {&ix->pk, &ix->sk};
    for (int i = 0; i < 2; i++) {
      if (idefs[i]->name == NULL)
        continue;
      const struct tt_av *v = tt_av_map_get(item, idefs[i]->name);
      if (v == NULL)
        continue;
      if (v->type != idefs[i]->type)
        return memdb_validation(e, "One or more parameter values were invalid: Type mismatch "
                                   "for Index Key %s Expected: %s Actual: %s IndexName: %s",
                                idefs[i]->name, tt_av_type_name(idefs[i]->type),
                                tt_av_type_name(v->type), ix->name);
      if (v->len == 0 && v->type != TT_AV_N)
        return memdb_validation(e, "One or more parameter values are not valid. A value "
                                   "specified for a secondary index key is not supported. The "
                                   "AttributeValue for a key attribute cannot contain an empty "
                                   "%s value. IndexName: %s, IndexKey: %s",
                                v->type == TT_AV_B ? "binary" : "string", ix->name,
                                idefs[i]->name);
    }
  }
  if (tt_av_item_size(item) > MEMDB_ITEM_MAX)
    return memdb_validation(e, "%s", size_msg);
  /* After the size: an update that grows an index key past its limit and
   * the item past 400 KB is refused for the size, as moto does. */
  return memdb_limit_index_keys(t, item, e);
}

int memdb_copy_attr(struct tt_av *out, const struct tt_av *item, const char *name) {
  const struct tt_av *v = name ? tt_av_map_get(item, name) : NULL;
  if (v == NULL || tt_av_map_get(out, name) != NULL)
    return 0;
  struct tt_av c;
  if (tt_av_clone(&c, v) != 0)
    return -1;
  if (tt_av_map_put(out, name, strlen(name), &c) != 0) {
    tt_av_free(&c);
    return -1;
  }
  return 0;
}

int memdb_key_of(const struct memdb_table *t, const struct memdb_index *ix,
                 const struct tt_av *item, struct tt_av *out) {
  if (tt_av_map(out, 0) != 0)
    return -1;
  if (memdb_copy_attr(out, item, t->pk.name) != 0 || memdb_copy_attr(out, item, t->sk.name) != 0 ||
      (ix && (memdb_copy_attr(out, item, ix->pk.name) != 0 || memdb_copy_attr(out, item, ix->sk.name) != 0))) {
    tt_av_free(out);
    return -1;
  }
  return 0;
}

int memdb_lookup(struct memdb *m, struct memdb_table *t, const struct memdb_kv *pk,
                 const struct memdb_kv *sk, struct memdb_item **phys, struct tt_av *out,
                 bool *found, struct tt_backend_error *e) {
  tt_av_null(out);
  *found = false;
  struct memdb_item *it = memdb_table_find(t, pk, t->sk.name ? sk : NULL);
  if (phys)
    *phys = it;
  if (it == NULL)
    return 0;
  if (memdb_item_decode(t, it, out, NULL) != 0)
    return memdb_oom(e);
  if (memdb_expired(t, out, memdb_now(m))) {
    tt_av_free(out);
    return 0;
  }
  *found = true;
  return 0;
}

int memdb_project_item(const struct tt_expr *proj, struct tt_av *item, struct tt_av *out,
                       struct tt_backend_error *e) {
  struct tt_error err;
  if (proj == NULL) {
    *out = *item;
    memset(item, 0, sizeof(*item));
    return 0;
  }
  int rc = tt_expr_apply_projection(proj, item, out, &err);
  tt_av_free(item);
  return rc != 0 ? memdb_fail_tt(e, &err) : 0;
}

int memdb_condition_failed(struct tt_backend_error *e, const struct tt_av *old_item) {
  memdb_fail(e, "ConditionalCheckFailedException", "The conditional request failed");
  if (old_item) {
    json_t *item = tt_ddb_item_to_json(old_item);
    e->body = json_pack("{s:s, s:s, s:o*}", "__type",
                        "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",
                        "message", "The conditional request failed", "Item", item);
  }
  return -1;
}
