/* SPDX-License-Identifier: Apache-2.0 */
/* key.c -- primary keys of a model from JSON objects, typed keys and stored items. */
#include "orm/key.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/build.h"
#include "orm/orm.h"
#include "value/codec_logical.h"

int tt_orm_key_check_value(const struct tt_model_attr *a, const struct tt_av *v,
                           const char *field, struct tt_error *err) {
  if (v->type == TT_AV_NULL)
    return tt_error_set(err, TT_ERR_VALIDATION, field, "missing key attribute %s", a->name);
  if (v->type != a->type)
    return tt_error_set(err, TT_ERR_VALIDATION, field, "key attribute %s must be of type %s",
                        a->name, tt_model_type_name(a->type));
  if ((v->type == TT_AV_S || v->type == TT_AV_B) && v->len == 0)
    return tt_error_set(err, TT_ERR_VALIDATION, field,
                        "key attribute %s must not be empty (DynamoDB refuses empty key values)",
                        a->name);
  return 0;
}

/* ---- JSON keys ------------------------------------------------------------- */

int tt_orm_key_from_json(const struct tt_model *m, const json_t *obj, const char *field,
                         struct tt_av *key_out, struct tt_error *err) {
  const struct tt_model_attr *keys[2] = {tt_model_pk(m), tt_model_sk(m)};
  char f[128];
  const char *name;
  json_t *val;
  struct tt_av v = {0};
  int rc = -1;

  tt_av_null(key_out);
  if (!json_is_object(obj))
    return tt_error_set(err, TT_ERR_VALIDATION, field && *field ? field : "key",
                        "%s: a key must be a JSON object of the key attributes",
                        field && *field ? field : "key");
  json_object_foreach((json_t *)obj, name, val) {
    if (strcmp(name, keys[0]->name) != 0 && (keys[1] == NULL || strcmp(name, keys[1]->name) != 0)) {
      tt_expr_field_key(f, sizeof(f), field, name);
      return tt_error_set(err, TT_ERR_VALIDATION, f, "%s is not a key attribute of model %s",
                          name, m->name);
    }
  }
  if (tt_av_map(key_out, 0) != 0)
    return tt_orm_oom(err);
  for (int i = 0; i < 2 && keys[i] != NULL; i++) {
    const struct tt_model_attr *a = keys[i];
    tt_expr_field_key(f, sizeof(f), field, a->name);
    if (tt_logical_to_av(json_object_get(obj, a->name), a->type, 0, f, &v, err) != 0 ||
        tt_orm_key_check_value(a, &v, f, err) != 0)
      goto fail;
    if (tt_av_map_put(key_out, a->name, a->name_len, &v) != 0) { /* v stays ours */
      tt_orm_oom(err);
      goto fail;
    }
  }
  rc = 0;
fail:
  tt_av_free(&v);
  if (rc != 0)
    tt_av_free(key_out);
  return rc;
}

int tt_orm_key_of_item(const struct tt_model *m, const struct tt_av *item, const char *field,
                       struct tt_av *key_out, struct tt_error *err) {
  const struct tt_model_attr *keys[2] = {tt_model_pk(m), tt_model_sk(m)};
  if (tt_av_map(key_out, 0) != 0)
    return tt_orm_oom(err);
  /* The key attributes found are copied, then checked as a key. */
  for (int i = 0; i < 2 && keys[i] != NULL; i++) {
    const struct tt_av *src = tt_av_map_getn(item, keys[i]->name, keys[i]->name_len);
    if (src && tt_orm_map_put_copy(key_out, keys[i]->name, keys[i]->name_len, src) != 0) {
      tt_av_free(key_out);
      return tt_orm_oom(err);
    }
  }
  if (tt_orm_key_check(m, key_out, field && *field ? field : "item", err) == 0)
    return 0;
  tt_av_free(key_out);
  return -1;
}

int tt_orm_key_check(const struct tt_model *m, const struct tt_av *key, const char *field,
                     struct tt_error *err) {
  const struct tt_model_attr *keys[2] = {tt_model_pk(m), tt_model_sk(m)};
  const char *f = field && *field ? field : "key";
  if (key == NULL || key->type != TT_AV_M)
    return tt_error_set(err, TT_ERR_VALIDATION, f, "a key of model %s is a map of its key attributes",
                        m->name);
  for (int i = 0; i < 2 && keys[i] != NULL; i++) {
    const struct tt_av *v = tt_av_map_getn(key, keys[i]->name, keys[i]->name_len);
    if (v == NULL)
      return tt_error_set(err, TT_ERR_VALIDATION, f, "missing key attribute %s", keys[i]->name);
    if (tt_orm_key_check_value(keys[i], v, f, err) != 0)
      return -1;
  }
  if (key->len != (keys[1] ? 2u : 1u))
    return tt_error_set(err, TT_ERR_VALIDATION, f, "a key of model %s holds only its key attributes",
                        m->name);
  return 0;
}
