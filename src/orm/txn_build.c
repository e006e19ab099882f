/* SPDX-License-Identifier: Apache-2.0 */
/* txn_build.c -- actions to the DynamoDB request: each action's
 * Put/Update/Delete/ConditionCheck/Get with its condition, the guard
 * actions of unique attributes, and the limits of one transaction. */
#include "orm/txn_internal.h"

/* The unique values of an update's item after it, from the values before
 * (`old`, may be NULL) and the update's actions on unique attributes. */
static int compute_newvals(struct action *a, const struct tt_av *old, struct tt_error *err) {
  tt_av_free(&a->newvals);
  if (tt_av_map(&a->newvals, 0) != 0)
    return oom(err);
  for (size_t i = 0; i < a->m->n_attrs; i++) {
    const struct tt_model_attr *u = &a->m->attrs[i];
    const struct tt_av *ov = old ? tt_av_map_get(old, u->name) : NULL;
    if (!u->unique || ov == NULL)
      continue;
    struct tt_av copy;
    if (tt_av_clone(&copy, ov) != 0 ||
        tt_av_map_put(&a->newvals, u->name, u->name_len, &copy) != 0) {
      tt_av_free(&copy); /* a failed put leaves the copy ours */
      return oom(err);
    }
  }
  for (size_t i = 0; i < a->upd.n_actions; i++) {
    const struct tt_orm_action *x = &a->upd.actions[i];
    const struct tt_model_attr *u = action_attr(a->m, x);
    if (u == NULL || !u->unique)
      continue;
    if (x->kind == TT_EXPR_UPD_REMOVE) {
      tt_av_map_remove(&a->newvals, u->name);
      continue;
    }
    if (x->kind == TT_EXPR_UPD_SET_IF_NOT_EXISTS && tt_av_map_get(&a->newvals, u->name))
      continue;
    struct tt_av copy;
    if (tt_av_clone(&copy, &x->value) != 0 ||
        tt_av_map_put(&a->newvals, u->name, u->name_len, &copy) != 0) {
      tt_av_free(&copy); /* a failed put leaves the copy ours */
      return oom(err);
    }
  }
  return 0;
}

/* The conditions of an item's own action. `snapshot` adds what the read
 * before the write saw (existence and unique values), so that guards moved
 * on the strength of that read cannot go stale. */
static int build_condition(struct action *a, struct tt_expr_builder *b, struct tt_buf *c,
                           bool snapshot, struct tt_error *err) {
  bool exists = false, absent = false;
  if (a->kind == K_CREATE || a->create_only)
    absent = true;
  if ((a->kind == K_UPDATE && !a->upsert) || (a->kind == K_DELETE && a->must_exist))
    exists = true;
  if (snapshot && a->needs_old) {
    if (!a->old_found && !exists)
      absent = true;
    else if (a->old_found && !absent)
      exists = true;
  }
  const struct tt_orm_write_cond w = {.absent = absent,
                                      .exists = exists,
                                      .expected = a->expected,
                                      .condition = a->condition,
                                      .field = a->field};
  if (tt_orm_write_condition(a->m, b, &w, c, err) != 0)
    return -1;
  if (snapshot && a->needs_old && a->old_found) {
    for (size_t i = 0; i < a->m->n_attrs; i++) {
      const struct tt_model_attr *u = &a->m->attrs[i];
      if (!u->unique)
        continue;
      const struct tt_av *ov = tt_av_map_get(&a->old, u->name);
      if ((ov && tt_orm_cond_equals(b, c, u->name, ov, u->name, err) != 0) ||
          (!ov && tt_orm_cond_exists(b, c, u->name, false, err) != 0))
        return -1;
    }
  }
  return 0;
}

static int build_main(struct tt_orm_txn_state *st, struct action *a, bool snapshot, json_t **out,
                      struct tt_error *err) {
  struct tt_expr_builder *b = tt_expr_builder_new(tt_orm_encode_value, a->m);
  struct tt_buf c;
  tt_buf_init(&c, 0);
  char *upd = NULL;
  int rc = -1;
  json_t *body = json_pack("{s:s}", "TableName", a->m->table);
  const char *wrapper = "Get";
  if (b == NULL || body == NULL) {
    oom(err);
    goto done;
  }
  switch (a->kind) {
  case K_CREATE:
  case K_PUT:
    wrapper = "Put";
    json_object_set_new(body, "Item", tt_ddb_item_to_json(&a->item));
    break;
  case K_UPDATE:
    wrapper = "Update";
    if (tt_orm_update_expression(a->m, b, &a->upd, a->upsert, st->now, a->field, &upd, err) != 0)
      goto done;
    json_object_set_new(body, "Key", tt_ddb_item_to_json(&a->key));
    json_object_set_new(body, "UpdateExpression", json_string(upd));
    break;
  case K_DELETE:
    wrapper = "Delete";
    json_object_set_new(body, "Key", tt_ddb_item_to_json(&a->key));
    break;
  case K_CHECK:
    wrapper = "ConditionCheck";
    json_object_set_new(body, "Key", tt_ddb_item_to_json(&a->key));
    break;
  case K_GET:
    json_object_set_new(body, "Key", tt_ddb_item_to_json(&a->key));
    if (a->select) {
      char *text = NULL;
      char f[160];
      subfield(a, "select", f, sizeof(f));
      if (tt_expr_build_projection(b, a->select, f, &text, err) != 0)
        goto done;
      json_object_set_new(body, "ProjectionExpression", json_string(text));
      free(text);
    }
    break;
  }
  if (a->kind != K_GET) {
    if (build_condition(a, b, &c, snapshot, err) != 0)
      goto done;
    if (c.len) {
      json_object_set_new(body, "ConditionExpression", json_string(c.data));
      json_object_set_new(body, "ReturnValuesOnConditionCheckFailure", json_string("ALL_OLD"));
    }
  }
  if (tt_orm_attach_placeholders(b, body, err) != 0)
    goto done;
  *out = json_pack("{s:O}", wrapper, body);
  rc = *out ? 0 : oom(err);
done:
  json_decref(body);
  free(upd);
  tt_buf_free(&c);
  tt_expr_builder_free(b);
  return rc;
}

/* "table\n{key json}" of the item an action in TransactItems names. */
static char *target_of(const json_t *action, const struct tt_model *m) {
  void *it = json_object_iter((json_t *)action);
  const json_t *body = it ? json_object_iter_value(it) : NULL;
  const json_t *src = json_object_get(body, "Key");
  if (src == NULL)
    src = json_object_get(body, "Item");
  json_t *key = json_pack("{s:O*}", m->pk->name, json_object_get(src, m->pk->name));
  if (key && m->sk)
    json_object_set(key, m->sk->name, json_object_get(src, m->sk->name));
  char *text = key ? json_dumps(key, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
  json_decref(key);
  if (text == NULL)
    return NULL;
  size_t n = strlen(m->table) + strlen(text) + 2;
  char *out = malloc(n);
  if (out)
    snprintf(out, n, "%s\n%s", m->table, text);
  free(text);
  return out;
}

/* Which action (and which guard of it) index `at` of TransactItems is. */
static struct action *owner_of(struct tt_orm_txn_state *st, size_t at,
                               const struct tt_unique_guard **guard) {
  *guard = NULL;
  for (size_t i = 0; i < st->n; i++) {
    struct action *a = &st->acts[i];
    if (a->main_at == at)
      return a;
    if (at >= a->guard_at && at < a->guard_at + a->n_guards) {
      *guard = &a->guards[at - a->guard_at];
      return a;
    }
  }
  return NULL;
}

/* Two actions on one item. Items of the caller were compared before; what
 * is left are guard items: two claims of one value are a duplicate; a claim
 * and a release of one value (a swap) cannot run in one transaction. */
static int check_targets(struct tt_orm_txn_state *st, const json_t *items, struct tt_error *err) {
  size_t n = json_array_size(items);
  char **t = calloc(n ? n : 1, sizeof(char *));
  int rc = -1;
  if (t == NULL)
    return oom(err);
  for (size_t i = 0; i < n; i++) {
    const struct tt_unique_guard *g;
    struct action *a = owner_of(st, i, &g);
    if (a == NULL || (t[i] = target_of(json_array_get(items, i), a->m)) == NULL) {
      oom(err);
      goto done;
    }
    for (size_t j = 0; j < i; j++) {
      if (strcmp(t[i], t[j]) != 0)
        continue;
      const struct tt_unique_guard *h;
      struct action *b = owner_of(st, j, &h);
      char f[160];
      if (g && h && g->claim && h->claim) {
        subfield(a, g->attr->name, f, sizeof(f));
        tt_error_set(err, TT_ERR_CONDITION_FAILED, f,
                     "%s%sclaims the same value of unique attribute %s as %s", a->field,
                     a->field[0] ? " " : "", g->attr->name,
                     b->field[0] ? b->field : "another item");
      } else if (g || h) {
        const struct tt_unique_guard *x = g ? g : h;
        subfield(a, x->attr->name, f, sizeof(f));
        tt_error_set(err, TT_ERR_VALIDATION, f,
                     "%s and %s move the same value of unique attribute %s; split them into "
                     "two transactions",
                     a->field[0] ? a->field : "the item", b->field[0] ? b->field : "the item",
                     x->attr->name);
      } else {
        tt_error_set(err, TT_ERR_VALIDATION, a->field[0] ? a->field : "key",
                     "%s and %s name the same item; a transaction may act on each item once",
                     a->field, b->field);
      }
      goto done;
    }
  }
  rc = 0;
done:
  for (size_t i = 0; i < n; i++)
    free(t[i]);
  free(t);
  return rc;
}

/* Builds the whole TransactWriteItems (or TransactGetItems) request.
 * `snapshot`: the reads of needs_old actions are in. */
int txn_build_request(struct tt_orm_txn_state *st, bool snapshot, json_t **out,
                         struct tt_error *err) {
  json_t *items = json_array();
  size_t bytes = 0;
  if (items == NULL)
    return oom(err);
  for (size_t i = 0; i < st->n; i++) {
    struct action *a = &st->acts[i];
    json_t *main;
    if (build_main(st, a, snapshot, &main, err) != 0)
      goto fail;
    a->main_at = json_array_size(items);
    a->guard_at = a->main_at + 1;
    a->n_guards = 0;
    if (json_array_append_new(items, main) != 0) {
      oom(err);
      goto fail;
    }
    bytes += tt_av_item_size(a->kind == K_CREATE || a->kind == K_PUT ? &a->item : &a->key);
    bool guarded = a->unique && a->kind != K_CHECK && a->kind != K_GET &&
                   (a->kind != K_UPDATE || a->touches_unique);
    if (!guarded)
      continue;
    const struct tt_av *old = snapshot && a->old_found ? &a->old : NULL;
    const struct tt_av *neu = a->kind == K_CREATE || a->kind == K_PUT ? &a->item
                              : a->kind == K_UPDATE                   ? &a->newvals
                                                                      : NULL;
    if (a->kind == K_UPDATE && compute_newvals(a, old, err) != 0)
      goto fail;
    struct tt_error gerr;
    if (tt_unique_guard_actions(a->m, &a->key, old, neu, items, a->guards, &a->n_guards,
                                &gerr) != 0) {
      *err = gerr;
      if (gerr.code == TT_ERR_VALIDATION && a->field[0]) {
        subfield(a, gerr.field, err->field, sizeof(err->field));
      }
      goto fail;
    }
  }
  if (json_array_size(items) > TT_ORM_TXN_MAX_ITEMS) {
    tt_error_set(err, TT_ERR_VALIDATION, "items",
                 "the transaction needs %zu DynamoDB actions (items plus the guard items of "
                 "unique attributes); DynamoDB allows %d",
                 json_array_size(items), TT_ORM_TXN_MAX_ITEMS);
    goto fail;
  }
  if (bytes > TT_ORM_TXN_MAX_BYTES) {
    tt_error_set(err, TT_ERR_VALIDATION, "items",
                 "the items of a transaction may hold at most 4 MB together");
    goto fail;
  }
  if (!st->get && check_targets(st, items, err) != 0)
    goto fail;
  *out = json_pack("{s:o}", "TransactItems", items);
  if (*out == NULL)
    return oom(err);
  if (st->token)
    json_object_set_new(*out, "ClientRequestToken", json_string(st->token));
  return 0;
fail:
  json_decref(items);
  return -1;
}
