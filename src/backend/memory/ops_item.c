/* SPDX-License-Identifier: Apache-2.0 */
/* ops_item.c -- GetItem, PutItem, UpdateItem, DeleteItem, and the prepared
 * write that batches and transactions reuse. */
#include <stdlib.h>
#include <string.h>

#include "backend/memory/internal.h"

static void av_null(struct tt_av *v) {
  memset(v, 0, sizeof(*v));
  v->type = TT_AV_NULL;
}

void memdb_wr_free(struct memdb_wr *w) {
  memdb_exprs_free(&w->x);
  tt_av_free(&w->item);
  tt_av_free(&w->old);
  tt_av_free(&w->next);
}

int memdb_wr_prepare(struct memdb *m, enum memdb_wr_kind kind, const json_t *obj,
                     struct memdb_wr *w, struct tt_backend_error *e) {
  bool present;
  const char *rvf;
  memset(w, 0, sizeof(*w));
  w->kind = kind;
  av_null(&w->item);
  av_null(&w->old);
  av_null(&w->next);
  av_null(&w->x.names);
  av_null(&w->x.values);
  if (memdb_get_item(obj, kind == MEMDB_WR_PUT ? "Item" : "Key", &w->item, &present, e) != 0)
    goto fail;
  if (!present) {
    memdb_validation(e, "1 validation error detected: Value null at '%s' failed to satisfy "
                        "constraint: Member must not be null",
                     kind == MEMDB_WR_PUT ? "item" : "key");
    goto fail;
  }
  if (memdb_get_str(obj, "ReturnValuesOnConditionCheckFailure", &rvf, e) != 0)
    goto fail;
  if (rvf && strcmp(rvf, "ALL_OLD") != 0 && strcmp(rvf, "NONE") != 0) {
    memdb_validation(e, "1 validation error detected: Value '%s' at "
                        "'returnValuesOnConditionCheckFailure' failed to satisfy constraint: "
                        "Member must satisfy enum value set: [ALL_OLD, NONE]",
                     rvf);
    goto fail;
  }
  w->all_old_on_fail = rvf && strcmp(rvf, "ALL_OLD") == 0;
  if (memdb_exprs_init(&w->x, obj, e) != 0)
    goto fail;
  if (kind == MEMDB_WR_UPDATE &&
      memdb_exprs_parse(&w->x, obj, "UpdateExpression", TT_EXPR_UPDATE, &w->update, e) != 0)
    goto fail;
  if (memdb_exprs_parse(&w->x, obj, "ConditionExpression", TT_EXPR_CONDITION, &w->cond, e) != 0)
    goto fail;
  if (kind == MEMDB_WR_CHECK && w->cond == NULL) {
    memdb_validation(e, "1 validation error detected: Value null at 'conditionExpression' "
                        "failed to satisfy constraint: Member must not be null");
    goto fail;
  }
  if (memdb_exprs_finish(&w->x, e) != 0)
    goto fail;
  if (memdb_req_table(m, obj, &w->t, e) != 0)
    goto fail;
  if (kind == MEMDB_WR_PUT) {
    if (memdb_item_check(w->t, &w->item, "Item size has exceeded the maximum allowed size", e) !=
        0)
      goto fail;
    w->pk = memdb_kv_of(tt_av_map_get(&w->item, w->t->pk.name));
    if (w->t->sk.name)
      w->sk = memdb_kv_of(tt_av_map_get(&w->item, w->t->sk.name));
  } else if (memdb_key_check(w->t, &w->item, &w->pk, &w->sk, e) != 0) {
    goto fail;
  }
  for (size_t i = 0; w->update && tt_expr_update_target(w->update, i); i++) {
    const char *a = tt_expr_update_target(w->update, i);
    if (strcmp(a, w->t->pk.name) == 0 || (w->t->sk.name && strcmp(a, w->t->sk.name) == 0)) {
      memdb_validation(e, "One or more parameter values were invalid: Cannot update attribute "
                          "%s. This attribute is part of the key",
                       a);
      goto fail;
    }
  }
  return 0;
fail:
  memdb_wr_free(w);
  return -1;
}

int memdb_wr_eval(struct memdb *m, struct memdb_wr *w, struct tt_backend_error *e) {
  struct tt_error err;
  tt_av_free(&w->old);
  tt_av_free(&w->next);
  w->has_next = false;
  if (memdb_lookup(m, w->t, &w->pk, &w->sk, &w->phys, &w->old, &w->found, e) != 0)
    return -1;
  if (w->cond && !tt_expr_eval_condition(w->cond, w->found ? &w->old : NULL))
    return 1;
  switch (w->kind) {
  case MEMDB_WR_PUT:
    if (tt_av_clone(&w->next, &w->item) != 0)
      return memdb_oom(e);
    w->has_next = true;
    break;
  case MEMDB_WR_UPDATE: {
    /* A missing item is updated as if it held just its key (upsert). */
    const struct tt_av *base = w->found ? &w->old : &w->item;
    if (w->update) {
      if (tt_expr_apply_update(w->update, base, &w->next, &err) != 0)
        return memdb_fail_tt(e, &err);
    } else if (tt_av_clone(&w->next, base) != 0) {
      return memdb_oom(e);
    }
    w->has_next = true;
    if (memdb_item_check(w->t, &w->next,
                         "Item size to update has exceeded the maximum allowed size", e) != 0)
      return -1;
    break;
  }
  case MEMDB_WR_DELETE:
  case MEMDB_WR_CHECK:
    break;
  }
  return 0;
}

int memdb_wr_apply(struct memdb_wr *w, struct tt_backend_error *e) {
  if (w->kind == MEMDB_WR_CHECK)
    return 0;
  if (w->kind == MEMDB_WR_DELETE && w->phys == NULL)
    return 0;
  if (memdb_table_write(w->t, w->phys, w->has_next ? &w->next : NULL) != 0)
    return memdb_oom(e);
  w->phys = NULL; /* freed or replaced by the write */
  return 0;
}

/* The attributes of `item` that an update expression wrote (top-level). */
static int updated_attrs(const struct tt_expr *u, const struct tt_av *item, struct tt_av *out) {
  if (tt_av_map(out, 0) != 0)
    return -1;
  for (size_t i = 0; u && tt_expr_update_target(u, i); i++) {
    const char *a = tt_expr_update_target(u, i);
    const struct tt_av *v = tt_av_map_get(item, a);
    if (v == NULL || tt_av_map_get(out, a))
      continue;
    struct tt_av c;
    if (tt_av_clone(&c, v) != 0 || tt_av_map_put(out, a, strlen(a), &c) != 0) {
      tt_av_free(&c);
      tt_av_free(out);
      return -1;
    }
  }
  return 0;
}

/* Builds {"Attributes": ...} (omitted when empty) into *resp. */
static int attributes_resp(const struct tt_av *attrs, json_t **resp, struct tt_backend_error *e) {
  if ((*resp = json_object()) == NULL)
    return memdb_oom(e);
  if (attrs && attrs->type == TT_AV_M && attrs->len > 0) {
    json_t *j = memdb_item_json(attrs);
    if (j == NULL || json_object_set_new(*resp, "Attributes", j) != 0)
      return memdb_oom(e);
  }
  return 0;
}

enum rv { RV_NONE, RV_ALL_OLD, RV_UPDATED_OLD, RV_ALL_NEW, RV_UPDATED_NEW };

static int return_values(const json_t *req, bool update_op, enum rv *rv,
                         struct tt_backend_error *e) {
  static const char *const names[] = {"NONE", "ALL_OLD", "UPDATED_OLD", "ALL_NEW",
                                      "UPDATED_NEW"};
  const char *s;
  *rv = RV_NONE;
  if (memdb_get_str(req, "ReturnValues", &s, e) != 0)
    return -1;
  if (s == NULL)
    return 0;
  for (int i = 0; i < 5; i++)
    if (strcmp(s, names[i]) == 0) {
      *rv = (enum rv)i;
      if (!update_op && *rv != RV_NONE && *rv != RV_ALL_OLD)
        return memdb_validation(e, "ReturnValues can only be ALL_OLD or NONE");
      return 0;
    }
  return memdb_validation(e, "1 validation error detected: Value '%s' at 'returnValues' failed "
                             "to satisfy constraint: Member must satisfy enum value set: "
                             "[ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]",
                          s);
}

static int write_op(struct memdb *m, enum memdb_wr_kind kind, const json_t *req, json_t **resp,
                    struct tt_backend_error *e) {
  struct memdb_wr w;
  enum rv rv;
  struct tt_av attrs = {.type = TT_AV_NULL};
  int rc = -1;
  if (return_values(req, kind == MEMDB_WR_UPDATE, &rv, e) != 0)
    return -1;
  if (memdb_wr_prepare(m, kind, req, &w, e) != 0)
    return -1;
  int c = memdb_wr_eval(m, &w, e);
  if (c < 0)
    goto done;
  if (c == 1) {
    memdb_condition_failed(e, w.all_old_on_fail && w.found ? &w.old : NULL);
    goto done;
  }
  /* Compute the answer before applying: it reads w.old / w.next. */
  switch (rv) {
  case RV_NONE:
    break;
  case RV_ALL_OLD:
    if (w.found && tt_av_clone(&attrs, &w.old) != 0)
      goto oom;
    break;
  case RV_UPDATED_OLD:
    if (w.found && updated_attrs(w.update, &w.old, &attrs) != 0)
      goto oom;
    break;
  case RV_ALL_NEW:
    if (tt_av_clone(&attrs, &w.next) != 0)
      goto oom;
    break;
  case RV_UPDATED_NEW:
    if (updated_attrs(w.update, &w.next, &attrs) != 0)
      goto oom;
    break;
  }
  if (attributes_resp(&attrs, resp, e) != 0)
    goto done;
  if (memdb_wr_apply(&w, e) != 0) {
    json_decref(*resp);
    *resp = NULL;
    goto done;
  }
  rc = 0;
  goto done;
oom:
  memdb_oom(e);
done:
  tt_av_free(&attrs);
  memdb_wr_free(&w);
  return rc;
}

int memdb_op_put_item(struct memdb *m, const json_t *req, json_t **resp,
                      struct tt_backend_error *e) {
  return write_op(m, MEMDB_WR_PUT, req, resp, e);
}

int memdb_op_update_item(struct memdb *m, const json_t *req, json_t **resp,
                         struct tt_backend_error *e) {
  return write_op(m, MEMDB_WR_UPDATE, req, resp, e);
}

int memdb_op_delete_item(struct memdb *m, const json_t *req, json_t **resp,
                         struct tt_backend_error *e) {
  return write_op(m, MEMDB_WR_DELETE, req, resp, e);
}

int memdb_op_get_item(struct memdb *m, const json_t *req, json_t **resp,
                      struct tt_backend_error *e) {
  struct memdb_exprs x;
  struct tt_expr *proj = NULL;
  struct tt_av key = {.type = TT_AV_NULL}, item = {.type = TT_AV_NULL}, out = {.type = TT_AV_NULL};
  struct memdb_table *t;
  struct memdb_kv pk, sk;
  struct tt_error err;
  bool present, found, consistent;
  int rc = -1;
  if (memdb_exprs_init(&x, req, e) != 0)
    return -1;
  if (memdb_get_item(req, "Key", &key, &present, e) != 0 ||
      memdb_get_bool(req, "ConsistentRead", false, &consistent, e) != 0)
    goto done;
  if (!present) {
    memdb_validation(e, "1 validation error detected: Value null at 'key' failed to satisfy "
                        "constraint: Member must not be null");
    goto done;
  }
  if (memdb_exprs_parse(&x, req, "ProjectionExpression", TT_EXPR_PROJECTION, &proj, e) != 0 ||
      memdb_exprs_finish(&x, e) != 0 || memdb_req_table(m, req, &t, e) != 0 ||
      memdb_key_check(t, &key, &pk, &sk, e) != 0 ||
      memdb_lookup(m, t, &pk, &sk, NULL, &item, &found, e) != 0)
    goto done;
  if ((*resp = json_object()) == NULL)
    goto oom;
  if (found) {
    if (proj && tt_expr_apply_projection(proj, &item, &out, &err) != 0) {
      memdb_fail_tt(e, &err);
      goto done;
    }
    json_t *j = memdb_item_json(proj ? &out : &item);
    if (j == NULL || json_object_set_new(*resp, "Item", j) != 0)
      goto oom;
  }
  rc = 0;
  goto done;
oom:
  memdb_oom(e);
done:
  if (rc != 0 && *resp) {
    json_decref(*resp);
    *resp = NULL;
  }
  tt_av_free(&key);
  tt_av_free(&item);
  tt_av_free(&out);
  memdb_exprs_free(&x);
  return rc;
}
