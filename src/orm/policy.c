/* SPDX-License-Identifier: Apache-2.0 */
/* policy.c -- DMS write policies: write_once models and protected attributes,
 * refused before any I/O (TableTheory's ErrImmutableModelMutation and
 * ErrProtectedFieldMutation). */
#include "orm/policy.h"

#include <stdio.h>
#include <string.h>

#include "util/text.h"
#include "value/json_exact.h"

/* At most this many names in a request's protected_attributes: a model has
 * at most 1000 attributes, so a longer list can only be a mistake. */
#define POLICY_MAX_EXTRA 1000

static const char *kind_name(enum tt_orm_policy_write w) {
  static const char *const names[] = {[TT_ORM_POLICY_PUT] = "a put (create or replace)",
      [TT_ORM_POLICY_UPDATE] = "an update", [TT_ORM_POLICY_DELETE] = "a delete"};
  return TT_NAME_OF(names, w, "a write");
}

static bool any_protected(const struct tt_model *m) {
  for (size_t i = 0; i < m->n_attrs; i++)
    if (m->attrs[i].is_protected)
      return true;
  return false;
}

int tt_orm_policy_check_write(const struct tt_model *m, enum tt_orm_policy_write w,
                              const char *field, struct tt_error *err) {
  if (w == TT_ORM_POLICY_CREATE || w == TT_ORM_POLICY_CHECK)
    return 0;
  if (m->write_once)
    return tt_error_set(err, TT_ERR_IMMUTABLE_MODEL_MUTATION, field,
                        "model %s is write_once: items can only be created, so %s is "
                        "refused; create a new item instead",
                        m->name, kind_name(w));
  if (w == TT_ORM_POLICY_PUT && any_protected(m))
    return tt_error_set(err, TT_ERR_PROTECTED_FIELD_MUTATION, field,
                        "model %s has protected attributes, which a put could overwrite; "
                        "create the item with POST (or If-None-Match: *) and change "
                        "other attributes with PATCH",
                        m->name);
  return 0;
}

enum tt_orm_policy_write tt_orm_policy_item_kind(enum tt_orm_item_kind kind, bool if_none_match) {
  switch (kind) {
  case TT_ORM_OP_PUT:
    return if_none_match ? TT_ORM_POLICY_CREATE : TT_ORM_POLICY_PUT;
  case TT_ORM_OP_UPDATE:
    return TT_ORM_POLICY_UPDATE;
  case TT_ORM_OP_DELETE:
    return TT_ORM_POLICY_DELETE;
  case TT_ORM_OP_CREATE:
    return TT_ORM_POLICY_CREATE;
  case TT_ORM_OP_GET:
    break;
  }
  return TT_ORM_POLICY_CHECK; /* a read: nothing to refuse */
}

/* Whether `name` (n bytes) is listed in the request's `extra` array. */
static bool listed(const json_t *extra, const char *name, size_t n) {
  size_t i;
  const json_t *v;
  json_array_foreach(extra, i, v) {
    size_t len;
    const char *text = tt_json_string_text(v, &len);
    if (text && len == n && memcmp(text, name, n) == 0)
      return true;
  }
  return false;
}

static int check_extra(const json_t *extra, const char *field, struct tt_error *err) {
  char f[160];
  snprintf(f, sizeof(f), "%s%sprotected_attributes", field ? field : "",
           field && field[0] ? "." : "");
  if (!json_is_array(extra) || json_array_size(extra) > POLICY_MAX_EXTRA)
    return tt_error_set(err, TT_ERR_VALIDATION, f,
                        "%s must be a list of at most %d attribute names", f, POLICY_MAX_EXTRA);
  size_t i;
  const json_t *v;
  json_array_foreach(extra, i, v) {
    size_t len = 0;
    const char *text = tt_json_string_text(v, &len); /* request trees mark numbers */
    if (text == NULL || len == 0 || memchr(text, '\0', len) != NULL) {
      char fi[192];
      snprintf(fi, sizeof(fi), "%s[%zu]", f, i);
      return tt_error_set(err, TT_ERR_VALIDATION, fi, "%s must be an attribute name", fi);
    }
  }
  return 0;
}

int tt_orm_policy_check_update(const struct tt_model *m, const struct tt_orm_update *upd,
                               const json_t *body, const char *field, struct tt_error *err) {
  const json_t *extra = body ? json_object_get(body, "protected_attributes") : NULL;
  if (extra && json_is_null(extra))
    extra = NULL;
  if (extra && check_extra(extra, field, err) != 0)
    return -1;
  /* Every action counts, the lifecycle ones too: TableTheory adds
   * updated_at and version to the fields it checks, so protecting one of
   * them makes the model's items unchangeable by update. */
  for (size_t i = 0; i < upd->n_actions; i++) {
    const struct tt_orm_action *a = &upd->actions[i];
    const char *root;
    size_t n = tt_orm_action_root(a, &root);
    const struct tt_model_attr *attr = tt_model_attr_find(m, root, n);
    if (attr && attr->is_protected)
      return tt_error_set(err, TT_ERR_PROTECTED_FIELD_MUTATION, a->field,
                          "%.*s is a protected attribute of model %s: it cannot change after "
                          "the item is created",
                          tt_utf8_prefix_n(root, n, 128), root, m->name);
    if (extra && listed(extra, root, n))
      return tt_error_set(err, TT_ERR_PROTECTED_FIELD_MUTATION, a->field,
                          "%.*s is listed in this update's protected_attributes, so the "
                          "update may not change it",
                          tt_utf8_prefix_n(root, n, 128), root);
  }
  return 0;
}
