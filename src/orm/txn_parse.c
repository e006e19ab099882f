/* SPDX-License-Identifier: Apache-2.0 */
/* txn_parse.c -- transaction requests to actions: every item of a body
 * validated and typed before any I/O (models, kinds, keys, items, updates,
 * expected versions, write policies, unique and encryption refusals). */
#include "orm/txn_internal.h"

static const char *const kind_names[] = {"", "create", "put", "update", "delete", "check", "get"};

static int parse_expected(const json_t *v, const char *field, struct tt_orm_expected *out,
                          struct tt_error *err) {
  int64_t n = -1;
  if (v == NULL || tt_json_integer(v, &n) != 0 || n < 0)
    return tt_error_set(err, TT_ERR_VALIDATION, field,
                        "%s must be a whole number of at least 0", field);
  out->present = true;
  out->version = n;
  return 0;
}

/* What an update does to unique attributes: only SET, SET_IF_NOT_EXISTS
 * and REMOVE of the whole attribute can be followed by a guard. */
static int check_update_unique(struct action *a, struct tt_error *err) {
  for (size_t i = 0; i < a->upd.n_actions; i++) {
    const struct tt_orm_action *x = &a->upd.actions[i];
    const struct tt_model_attr *u = action_attr(a->m, x);
    if (u == NULL || !u->unique)
      continue;
    bool whole = x->literal || strcmp(x->path, u->name) == 0;
    if (!whole || (x->kind != TT_EXPR_UPD_SET && x->kind != TT_EXPR_UPD_SET_IF_NOT_EXISTS &&
                   x->kind != TT_EXPR_UPD_REMOVE))
      return tt_error_set(err, TT_ERR_VALIDATION, x->field,
                          "unique attribute %s can only be changed with set, set_if_not_exists "
                          "or remove of the whole attribute",
                          u->name);
    a->touches_unique = true;
  }
  return 0;
}

/* Checks the model and key of an action of a model with unique attributes
 * and decides what must be read first. */
int txn_prepare_unique(struct action *a, struct tt_error *err) {
  a->unique = tt_unique_model_has(a->m);
  if (!a->unique)
    return 0;
  char f[160];
  if (tt_unique_model_check(a->m, err) != 0)
    return -1;
  if (tt_unique_key_reserved(a->m, &a->key)) {
    subfield(a, pk_name(a), f, sizeof(f));
    return tt_error_set(err, TT_ERR_VALIDATION, f,
                        "%s may not start with \"" TT_UNIQUE_PREFIX
                        "\" in model %s: such keys hold the guards of unique attributes",
                        pk_name(a), a->m->name);
  }
  if (a->kind == K_UPDATE && check_update_unique(a, err) != 0)
    return -1;
  a->needs_old =
      a->kind == K_PUT || a->kind == K_DELETE || (a->kind == K_UPDATE && a->touches_unique);
  return 0;
}

int txn_alloc_guards(struct tt_orm_txn_state *st, struct action *a, struct tt_error *err) {
  size_t nu = tt_unique_count(a->m);
  if (nu == 0)
    return 0;
  a->guards = tt_arena_alloc(st->ctx->arena, 2 * nu * sizeof(*a->guards));
  return a->guards ? 0 : oom(err);
}

/* Compares the update's key attributes (TableTheory form) with the key. */
int txn_check_update_key(struct action *a, struct tt_error *err) {
  for (size_t i = 0; a->upd.key.type == TT_AV_M && i < a->upd.key.len; i++) {
    const struct tt_av_member *k = &a->upd.key.u.members[i];
    const struct tt_av *want = tt_av_map_get(&a->key, k->name);
    if (want && !tt_av_equal(want, &k->value)) {
      char f[160];
      subfield(a, k->name, f, sizeof(f));
      return tt_error_set(err, TT_ERR_VALIDATION, f, "%s differs from the key", f);
    }
  }
  return 0;
}

static bool entry_member_ok(const char *k) {
  static const char *const names[] = {"op", "model", "item", "key", "condition",
                                      "expected_version", "upsert", "fields", "set",
                                      "set_if_not_exists", "remove", "add", "delete", "append",
                                      "prepend", "select", "protected_attributes",
                                      "deploy_authority"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strcmp(k, names[i]) == 0)
      return true;
  return false;
}

static bool is_update_member(const char *k) {
  static const char *const names[] = {"fields", "set", "set_if_not_exists", "remove", "add",
                                      "delete", "append", "prepend", "upsert",
                                      "protected_attributes"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strcmp(k, names[i]) == 0)
      return true;
  return false;
}

/* The write-policy kind of a transaction item. */
static enum tt_orm_policy_write policy_kind(enum kind k) {
  switch (k) {
  case K_PUT:
    return TT_ORM_POLICY_PUT;
  case K_UPDATE:
    return TT_ORM_POLICY_UPDATE;
  case K_DELETE:
    return TT_ORM_POLICY_DELETE;
  case K_CREATE:
    return TT_ORM_POLICY_CREATE;
  case K_CHECK:
  case K_GET:
    break;
  }
  return TT_ORM_POLICY_CHECK;
}

/* One entry of items[] of transactions/write or /get. */
int txn_parse_entry(struct tt_orm_txn_state *st, struct action *a, size_t i, const json_t *e,
                       struct tt_error *err) {
  char f[160];
  snprintf(a->field, sizeof(a->field), "items[%zu]", i);
  if (!json_is_object(e))
    return tt_error_set(err, TT_ERR_VALIDATION, a->field, "%s must be an object", a->field);
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)e, k, v) {
    subfield(a, k, f, sizeof(f));
    if (!entry_member_ok(k) || (st->get && strcmp(k, "model") != 0 && strcmp(k, "key") != 0 &&
                                strcmp(k, "select") != 0))
      return tt_error_set(err, TT_ERR_VALIDATION, f, "%s is not part of a transaction item", f);
  }
  /* The model. */
  subfield(a, "model", f, sizeof(f));
  const char *model = json_string_value(json_object_get(e, "model"));
  if (model == NULL)
    return tt_error_set(err, TT_ERR_VALIDATION, f, "%s must name a model", f);
  const struct tt_model *m = tt_model_registry_lookup(st->ctx->orm->models, model, f, err);
  if (m == NULL && err->code == TT_ERR_MODEL_NOT_FOUND)
    return tt_error_set(err, TT_ERR_MODEL_NOT_FOUND, f,
                        "%s names no model; list them with GET /v1/models", f);
  if (m == NULL)
    return -1; /* ReservedModel */
  a->m = tt_model_ref((struct tt_model *)m);
  /* The kind. */
  if (st->get) {
    a->kind = K_GET;
  } else {
    subfield(a, "op", f, sizeof(f));
    const char *op = json_string_value(json_object_get(e, "op"));
    for (int kk = K_CREATE; op && kk <= K_CHECK; kk++)
      if (strcmp(op, kind_names[kk]) == 0)
        a->kind = (enum kind)kk;
    if (a->kind == 0)
      return tt_error_set(err, TT_ERR_VALIDATION, f,
                          "%s must be one of create, put, update, delete, check", f);
  }
  const json_t *item = json_object_get(e, "item");
  const json_t *key = json_object_get(e, "key");
  const json_t *ev = json_object_get(e, "expected_version");
  a->condition = json_object_get(e, "condition");
  if (a->condition && json_is_null(a->condition))
    a->condition = NULL;
  /* Members that do not belong to this kind. */
  json_object_foreach((json_t *)e, k, v) {
    bool bad = false;
    if (a->kind == K_CREATE || a->kind == K_PUT)
      bad = strcmp(k, "key") == 0 || is_update_member(k);
    else if (a->kind == K_DELETE || a->kind == K_CHECK)
      bad = strcmp(k, "item") == 0 || is_update_member(k);
    if (strcmp(k, "select") == 0)
      bad = a->kind != K_GET;
    if (a->kind == K_CREATE && strcmp(k, "expected_version") == 0)
      bad = true;
    if (strcmp(k, "deploy_authority") == 0)
      bad = a->kind != K_CREATE && a->kind != K_PUT;
    if (bad) {
      subfield(a, k, f, sizeof(f));
      return tt_error_set(err, TT_ERR_VALIDATION, f, "%s has no meaning for op %s", f,
                          kind_names[a->kind]);
    }
  }
  if (tt_orm_policy_check_write(a->m, policy_kind(a->kind), a->field, err) != 0)
    return -1;
  switch (a->kind) {
  case K_CREATE:
  case K_PUT: {
    subfield(a, "item", f, sizeof(f));
    if (!json_is_object(item))
      return tt_error_set(err, TT_ERR_VALIDATION, f, "%s must be an item object", f);
    /* "deploy_authority": true asks for the release-state evidence check
     * of the item, before anything of the transaction is sent. */
    const json_t *da = json_object_get(e, "deploy_authority");
    if (da && !json_is_boolean(da)) {
      subfield(a, "deploy_authority", f, sizeof(f));
      return tt_error_set(err, TT_ERR_VALIDATION, f, "%s must be true or false", f);
    }
    if (json_is_true(da) && tt_orm_provenance_check(item, f, err) != 0)
      return -1;
    struct tt_orm_expected body_exp = {0};
    if (tt_orm_item_from_json(a->m, item, a->kind == K_CREATE ? TT_ORM_CREATE : TT_ORM_PUT,
                              st->now, f, &a->item, a->kind == K_PUT ? &body_exp : NULL,
                              err) != 0 ||
        tt_orm_key_of_item(a->m, &a->item, f, &a->key, err) != 0)
      return -1;
    if (ev) {
      subfield(a, "expected_version", f, sizeof(f));
      if (parse_expected(ev, f, &a->expected, err) != 0)
        return -1;
      if (body_exp.present && body_exp.version != a->expected.version)
        return tt_error_set(err, TT_ERR_VALIDATION, f,
                            "%s differs from the version in the item", f);
    } else {
      a->expected = body_exp;
    }
    /* As PUT with If-Match: the new version is the expected one + 1. */
    if (a->kind == K_PUT && a->expected.present &&
        tt_orm_item_set_version(a->m, &a->item, a->expected.version + 1) != 0)
      return oom(err);
    break;
  }
  case K_UPDATE: {
    if (tt_orm_update_from_json(a->m, e, st->now, a->field, &a->upd, err) != 0)
      return -1;
    a->has_upd = true; /* state_free frees it from here on */
    if (tt_orm_policy_check_update(a->m, &a->upd, e, a->field, err) != 0)
      return -1;
    const json_t *up = json_object_get(e, "upsert");
    subfield(a, "upsert", f, sizeof(f));
    if (up && !json_is_boolean(up))
      return tt_error_set(err, TT_ERR_VALIDATION, f, "%s must be true or false", f);
    a->upsert = json_is_true(up);
    if (key) {
      subfield(a, "key", f, sizeof(f));
      if (!json_is_object(key))
        return tt_error_set(err, TT_ERR_VALIDATION, f, "%s must be a key object", f);
      if (tt_orm_key_from_json(a->m, key, f, &a->key, err) != 0 || txn_check_update_key(a, err) != 0)
        return -1;
    } else {
      subfield(a, "key", f, sizeof(f));
      if (a->upd.key.type != TT_AV_M ||
          a->upd.key.len != (size_t)(a->m->sk ? 2 : 1))
        return tt_error_set(err, TT_ERR_VALIDATION, f,
                            "%s is required (or every key attribute in item)", f);
      if (tt_av_clone(&a->key, &a->upd.key) != 0)
        return oom(err);
    }
    a->expected = a->upd.expected;
    break;
  }
  case K_DELETE:
  case K_CHECK:
  case K_GET:
    subfield(a, "key", f, sizeof(f));
    if (!json_is_object(key))
      return tt_error_set(err, TT_ERR_VALIDATION, f, "%s must be a key object", f);
    if (tt_orm_key_from_json(a->m, key, f, &a->key, err) != 0)
      return -1;
    if (ev) {
      subfield(a, "expected_version", f, sizeof(f));
      if (parse_expected(ev, f, &a->expected, err) != 0)
        return -1;
    }
    if (a->kind == K_CHECK && a->condition == NULL && !a->expected.present)
      return tt_error_set(err, TT_ERR_VALIDATION, a->field,
                          "%s: a check needs a condition or an expected_version", a->field);
    if (a->kind == K_GET) {
      const json_t *sel = json_object_get(e, "select");
      subfield(a, "select", f, sizeof(f));
      if (sel && !json_is_null(sel)) {
        if (!json_is_array(sel) || json_array_size(sel) == 0)
          return tt_error_set(err, TT_ERR_VALIDATION, f,
                              "%s must be a non-empty list of attribute paths", f);
        if (tt_orm_check_select(a->m, sel, f, err) != 0)
          return -1;
        a->select = sel;
      }
    }
    break;
  }
  if (a->expected.present && tt_model_lifecycle(a->m, TT_LC_VERSION) == NULL) {
    subfield(a, "expected_version", f, sizeof(f));
    return tt_error_set(err, TT_ERR_VALIDATION, f, "model %s has no version attribute",
                        a->m->name);
  }
  if (a->kind != K_GET && (txn_prepare_unique(a, err) != 0 || txn_alloc_guards(st, a, err) != 0))
    return -1;
  return 0;
}

/* Two actions on one item of the caller, before any I/O. */
int txn_check_duplicates(struct tt_orm_txn_state *st, struct tt_error *err) {
  struct tt_buf x, y;
  tt_buf_init(&x, 0);
  tt_buf_init(&y, 0);
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < st->n; i++) {
    for (size_t j = 0; rc == 0 && j < i; j++) {
      if (strcmp(st->acts[i].m->table, st->acts[j].m->table) != 0)
        continue;
      tt_buf_reset(&x);
      tt_buf_reset(&y);
      if (tt_ddb_item_write(&x, &st->acts[i].key, 0) != 0 ||
          tt_ddb_item_write(&y, &st->acts[j].key, 0) != 0) {
        rc = oom(err);
      } else if (x.len == y.len && memcmp(x.data, y.data, x.len) == 0) {
        rc = tt_error_set(err, TT_ERR_VALIDATION, st->acts[i].field,
                          "%s and %s name the same item; a transaction may %s each item once",
                          st->acts[i].field, st->acts[j].field, st->get ? "read" : "act on");
      }
    }
  }
  tt_buf_free(&x);
  tt_buf_free(&y);
  return rc;
}

/* Encrypted attributes in a transaction: every model's key is configured,
 * no condition names one, no select reaches inside one; a write that seals
 * values cannot carry a client token (a retry would send new envelopes,
 * which DynamoDB refuses as another request under the same token). Sets
 * st->sealing when a write has values to seal. */
int txn_check_encrypted(struct tt_orm_txn_state *st, struct tt_error *err) {
  char f[160];
  for (size_t i = 0; i < st->n; i++) {
    struct action *a = &st->acts[i];
    if (!tt_orm_crypt_model(a->m))
      continue;
    if (tt_orm_crypt_check(st->ctx->orm, a->m, err) != 0) {
      tt_utf8_copy(err->field, sizeof(err->field), a->field);
      return -1;
    }
    subfield(a, "condition", f, sizeof(f));
    if (a->condition && tt_orm_crypt_check_condition(a->m, a->condition, f, err) != 0)
      return -1;
    subfield(a, "select", f, sizeof(f));
    for (size_t j = 0; a->select && j < json_array_size(a->select); j++) {
      const char *p = json_string_value(json_array_get(a->select, j));
      if (p && tt_orm_crypt_check_path(a->m, p, f, err) != 0)
        return -1;
    }
    if (!st->get && (a->item.type == TT_AV_M || a->has_upd))
      st->sealing = true;
  }
  if (st->sealing && st->token)
    return tt_error_set(err, TT_ERR_VALIDATION, "client_token",
                        "client_token cannot be used with a transaction that writes encrypted "
                        "attributes (each attempt seals them with a new data key)");
  return 0;
}
