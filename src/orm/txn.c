/* SPDX-License-Identifier: Apache-2.0 */
/* txn.c -- transactions over TransactWriteItems/TransactGetItems: every item
 * validated and compiled before I/O, guard items of unique attributes moved
 * in the same transaction, cancellation reasons classified per item. */
#include "orm/txn.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/sleep_op.h"
#include "obs/log.h"
#include "orm/crypt.h"
#include "orm/item.h"
#include "orm/key.h"
#include "orm/policy.h"
#include "orm/provenance.h"
#include "orm/tokens.h"
#include "orm/unique.h"
#include "value/codec_ddb.h"
#include "value/json_exact.h"

enum kind { K_CREATE = 1, K_PUT, K_UPDATE, K_DELETE, K_CHECK, K_GET };

static const char *const kind_names[] = {"", "create", "put", "update", "delete", "check", "get"};

/* One item of the transaction. */
struct action {
  enum kind kind;
  struct tt_model *m; /* one reference */
  char field[24];     /* "items[3]"; "" for a single-item write */
  struct tt_av key;   /* M */
  struct tt_av item;  /* create/put: the whole item (sealed before the write);
                       * single update: the item read back for the answer */
  struct tt_av plain; /* single create/put of an encrypted model: the item
                       * before sealing, which the answer shows */
  struct tt_orm_update upd;
  bool has_upd;
  bool upsert;
  bool must_exist;  /* single delete: 404 when absent */
  bool create_only; /* put with If-None-Match: * */
  struct tt_orm_expected expected;
  const json_t *condition; /* borrowed */
  const json_t *select;    /* get: borrowed */
  bool unique;             /* the model keeps unique attributes */
  bool needs_old;          /* read the item before writing */
  bool touches_unique;     /* update: changes a unique attribute */
  struct tt_av old;        /* read before the write */
  bool old_found;
  struct tt_av newvals; /* update touching unique: their values after it */
  size_t main_at;       /* index of its own action in TransactItems */
  size_t guard_at, n_guards;
  struct tt_unique_guard *guards;
  bool raced; /* the last write lost a race with another writer */
};

struct tt_orm_txn_state {
  struct tt_orm_ctx *ctx;
  struct tt_orm_item_op *single; /* single-item write, else NULL */
  struct tt_orm_txn_op *op;      /* /v1/transactions/..., else NULL */
  bool get;
  struct action *acts;
  size_t n;
  const char *token; /* borrowed from the body */
  uint64_t token_hash; /* of the body, for the client-token memo */
  bool retry_conflicts;
  int64_t now;
  unsigned attempts;  /* writes sent */
  unsigned conflicts; /* conflict retries done */
  struct tt_client_call call; /* its steps, one after another */
  struct tt_sleep_op sleep;
  size_t *read_of; /* read index -> action index */
  size_t n_reads;
  bool sealing; /* a write with values of encrypted attributes */
  struct tt_av *got; /* get: the items read, opened before the answer */
  struct tt_span *span; /* the attempt's span (read, then write); NULL when not traced */
};

static int oom(struct tt_error *err) {
  return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
}

/* ---- small helpers ------------------------------------------------------------ */



static int cond_sep(struct tt_buf *c) { return c->len ? tt_buf_puts(c, " AND ") : 0; }

static int cond_exists(struct tt_expr_builder *b, struct tt_buf *c, const char *attr, bool exists,
                       struct tt_error *err) {
  if (cond_sep(c) != 0 ||
      tt_buf_puts(c, exists ? "attribute_exists(" : "attribute_not_exists(") != 0)
    return oom(err);
  if (tt_expr_builder_path(b, attr, true, c, "key", err) != 0)
    return -1;
  return tt_buf_puts(c, ")") != 0 ? oom(err) : 0;
}

/* attr = value (value cloned). */
static int cond_equals(struct tt_expr_builder *b, struct tt_buf *c, const char *attr,
                       const struct tt_av *value, const char *field, struct tt_error *err) {
  struct tt_av v;
  if (tt_av_clone(&v, value) != 0)
    return oom(err);
  /* A buffer that cannot grow is memory (no cap): say so, the error is
   * otherwise left unset. */
  int rc = cond_sep(c) != 0 ? oom(err) : 0;
  if (rc == 0 && tt_expr_builder_path(b, attr, true, c, field, err) != 0)
    rc = -1;
  if (rc == 0 && tt_buf_puts(c, " = ") != 0)
    rc = oom(err);
  if (rc != 0) {
    tt_av_free(&v);
    return rc;
  }
  return tt_expr_builder_value(b, &v, c, err);
}

static const char *pk_name(const struct action *a) { return a->m->pk->name; }

/* "items[3].x" or "x" for a single item. */
static void subfield(const struct action *a, const char *name, char *out, size_t cap) {
  /* A longer path is cut: a field only points at the place. */
  size_t o = 0;
  const char *parts[3] = {a->field, a->field[0] ? "." : "", name};
  for (size_t p = 0; p < 3; p++)
    for (const char *c = parts[p]; *c && o + 1 < cap; c++)
      out[o++] = *c;
  out[o] = '\0';
}

/* The top-level attribute an update action targets. */
static const struct tt_model_attr *action_attr(const struct tt_model *m,
                                               const struct tt_orm_action *x) {
  const char *name = x->path;
  size_t n = strlen(x->path);
  if (!x->literal)
    tt_expr_rest_path_head(x->path, &name, &n);
  return tt_model_attr_find(m, name, n);
}

/* ---- parsing ------------------------------------------------------------------ */

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
static int prepare_unique(struct action *a, struct tt_error *err) {
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

static int alloc_guards(struct tt_orm_txn_state *st, struct action *a, struct tt_error *err) {
  size_t nu = tt_unique_count(a->m);
  if (nu == 0)
    return 0;
  a->guards = tt_arena_alloc(st->ctx->arena, 2 * nu * sizeof(*a->guards));
  return a->guards ? 0 : oom(err);
}

/* Puts the path's key into the item, or checks the item's copy. */
static int merge_key(struct action *a, struct tt_error *err) {
  for (size_t i = 0; i < a->key.len; i++) {
    const struct tt_av_member *k = &a->key.u.members[i];
    const struct tt_av *given = tt_av_map_get(&a->item, k->name);
    if (given) {
      if (!tt_av_equal(given, &k->value))
        return tt_error_set(err, TT_ERR_VALIDATION, k->name,
                            "%s in the body differs from the key in the path", k->name);
      continue;
    }
    struct tt_av copy;
    if (tt_av_clone(&copy, &k->value) != 0 ||
        tt_av_map_put(&a->item, k->name, k->name_len, &copy) != 0) {
      tt_av_free(&copy); /* a failed put leaves the copy ours */
      return oom(err);
    }
  }
  return 0;
}

/* Compares the update's key attributes (TableTheory form) with the key. */
static int check_update_key(struct action *a, struct tt_error *err) {
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
static int parse_entry(struct tt_orm_txn_state *st, struct action *a, size_t i, const json_t *e,
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
      if (tt_orm_key_from_json(a->m, key, f, &a->key, err) != 0 || check_update_key(a, err) != 0)
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
  if (a->kind != K_GET && (prepare_unique(a, err) != 0 || alloc_guards(st, a, err) != 0))
    return -1;
  return 0;
}

/* ---- building TransactItems ---------------------------------------------------- */

static int upsert_created_at(struct action *a, struct tt_expr_builder *b, int64_t now,
                             struct tt_error *err) {
  const struct tt_model_attr *c = tt_model_lifecycle(a->m, TT_LC_CREATED_AT);
  if (!a->upsert || c == NULL)
    return 0;
  char text[TT_ORM_TIME_MAX];
  struct tt_av v;
  if (tt_orm_format_rfc3339nano(now, text, sizeof(text)) < 0 ||
      tt_av_string(&v, text, strlen(text)) != 0)
    return oom(err);
  return tt_expr_build_update_action(b, TT_EXPR_UPD_SET_IF_NOT_EXISTS, c->name, true, &v, c->name,
                                     err);
}

static int build_update_text(struct action *a, struct tt_expr_builder *b, int64_t now,
                             char **text, struct tt_error *err) {
  for (size_t i = 0; i < a->upd.n_actions; i++) {
    const struct tt_orm_action *x = &a->upd.actions[i];
    struct tt_av copy, *value = NULL;
    if (x->kind != TT_EXPR_UPD_REMOVE) {
      if (tt_av_clone(&copy, &x->value) != 0)
        return oom(err);
      value = &copy;
    }
    char f[200];
    if (a->field[0])
      snprintf(f, sizeof(f), "%s.%s", a->field, x->field);
    else
      snprintf(f, sizeof(f), "%s", x->field);
    if (tt_expr_build_update_action(b, x->kind, x->path, x->literal, value, f, err) != 0)
      return -1;
  }
  if (upsert_created_at(a, b, now, err) != 0)
    return -1;
  return tt_expr_build_update_finish(b, text, err);
}

/* The conditions of an item's own action. `snapshot` adds what the read
 * before the write saw (existence and unique values), so that guards moved
 * on the strength of that read cannot go stale. */
static int build_condition(struct action *a, struct tt_expr_builder *b, struct tt_buf *c,
                           bool snapshot, struct tt_error *err) {
  bool exists = false, absent = false;
  char f[160];
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
  if ((absent && cond_exists(b, c, pk_name(a), false, err) != 0) ||
      (exists && cond_exists(b, c, pk_name(a), true, err) != 0))
    return -1;
  const struct tt_model_attr *v = tt_model_lifecycle(a->m, TT_LC_VERSION);
  if (a->expected.present && v) {
    struct tt_av ev;
    if (tt_av_number_int(&ev, a->expected.version) != 0)
      return oom(err);
    subfield(a, "expected_version", f, sizeof(f));
    int rc = cond_equals(b, c, v->name, &ev, f, err);
    tt_av_free(&ev);
    if (rc != 0)
      return -1;
  }
  if (a->condition) {
    char *text = NULL;
    subfield(a, "condition", f, sizeof(f));
    if (tt_expr_build_condition(b, a->condition, f, &text, err) != 0)
      return -1;
    int rc = cond_sep(c) != 0 || tt_buf_printf(c, "(%s)", text) != 0 ? oom(err) : 0;
    free(text);
    if (rc != 0)
      return -1;
  }
  if (snapshot && a->needs_old && a->old_found) {
    for (size_t i = 0; i < a->m->n_attrs; i++) {
      const struct tt_model_attr *u = &a->m->attrs[i];
      if (!u->unique)
        continue;
      const struct tt_av *ov = tt_av_map_get(&a->old, u->name);
      if ((ov && cond_equals(b, c, u->name, ov, u->name, err) != 0) ||
          (!ov && cond_exists(b, c, u->name, false, err) != 0))
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
    if (build_update_text(a, b, st->now, &upd, err) != 0)
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
static int build_request(struct tt_orm_txn_state *st, bool snapshot, json_t **out,
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

/* ---- finishing ------------------------------------------------------------------- */

static void state_free(struct tt_orm_txn_state *st) {
  for (size_t i = 0; i < st->n; i++) {
    struct action *a = &st->acts[i];
    if (st->got)
      tt_av_free(&st->got[i]);
    tt_av_free(&a->key);
    tt_av_free(&a->item);
    tt_av_free(&a->plain);
    tt_av_free(&a->old);
    tt_av_free(&a->newvals);
    if (a->has_upd)
      tt_orm_update_free(&a->upd);
    if (a->m)
      tt_model_unref(a->m);
    a->m = NULL;
  }
  st->n = 0;
}

/* Ends the span of the attempt that ran, if any. */
static void attempt_span_end(struct tt_orm_txn_state *st, const char *retry_reason) {
  if (st->span == NULL)
    return;
  if (retry_reason)
    tt_span_str(st->span, "tabletheoryd.txn.retry_reason", retry_reason);
  else if (st->ctx->join->canceled)
    tt_span_status(st->span, TT_SPAN_ERROR, "RequestCanceled");
  tt_span_end(st->span);
  st->span = NULL;
}

static void finish(struct tt_orm_txn_state *st) {
  attempt_span_end(st, NULL);
  state_free(st);
  tt_orm_ctx_finish(st->ctx);
}

static void fail(struct tt_orm_txn_state *st, const struct tt_error *err) {
  tt_orm_fail(st->ctx->result, err);
  finish(st);
}

static void fail_code(struct tt_orm_txn_state *st, enum tt_err_code code, const char *field,
                      const char *msg) {
  struct tt_error e;
  tt_error_set(&e, code, field, "%s", msg);
  fail(st, &e);
}

static void fail_backend(struct tt_orm_txn_state *st, const struct tt_backend_error *e) {
  if (strcmp(e->type, "IdempotentParameterMismatchException") == 0) {
    fail_code(st, TT_ERR_VALIDATION, "client_token",
              "client_token was used in the last 10 minutes for a different request; use a "
              "new token for a new request");
    return;
  }
  const char *model = st->n == 1 ? st->acts[0].m->name : NULL;
  tt_orm_fail_backend(st->ctx->result, e, model);
  finish(st);
}

/* ---- running ---------------------------------------------------------------------- */

static void start_write(struct tt_orm_txn_state *st);
static void start_attempt(struct tt_orm_txn_state *st);

static void call(struct tt_orm_txn_state *st, enum tt_ddb_op op, json_t *req,
                 tt_client_done_cb cb) {
  struct tt_client_call *c = &st->call;
  c->request_id = st->ctx->request_id;
  c->model = st->n ? st->acts[0].m->name : NULL;
  c->retry_conflicts = st->retry_conflicts;
  struct tt_join *join = st->ctx->join;
  struct tt_trace_ctx outer = join->trace;
  if (st->span)
    join->trace = st->span->ctx;
  int started = tt_client_start(st->ctx->orm->client, join, c, op, req, cb, st);
  join->trace = outer;
  if (started != 0)
    cb(c); /* refused: the step fails as its completion would */
}

static int item_of(const json_t *holder, const char *member, struct tt_av *out) {
  struct tt_error err;
  const json_t *j = json_object_get(holder, member);
  memset(out, 0, sizeof(*out));
  out->type = TT_AV_NULL;
  if (j == NULL || !json_is_object(j))
    return 1;
  return tt_ddb_item_from_json(j, member, out, &err) == 0 ? 0 : -1;
}

static void read_cb(struct tt_client_call *c) {
  struct tt_orm_txn_state *st = c->arg;
  if (c->bc.status != 0) {
    fail_backend(st, &c->bc.error);
    return;
  }
  const json_t *resp = json_object_get(c->bc.response, "Responses");
  for (size_t r = 0; r < st->n_reads; r++) {
    struct action *a = &st->acts[st->read_of[r]];
    tt_av_free(&a->old);
    int rc = item_of(json_array_get(resp, r), "Item", &a->old);
    if (rc < 0) {
      fail_code(st, TT_ERR_INTERNAL, NULL, "the backend returned an undecodable item");
      return;
    }
    a->old_found = rc == 0;
  }
  if (st->single) {
    struct action *a = &st->acts[0];
    if (!a->old_found && ((a->kind == K_UPDATE && !a->upsert) || a->kind == K_DELETE)) {
      fail_code(st, TT_ERR_ITEM_NOT_FOUND, "key", "no item has this key");
      return;
    }
  }
  start_write(st);
}

/* Reads what the items that move guards hold now, then writes. */
static void start_attempt(struct tt_orm_txn_state *st) {
  st->n_reads = 0;
  /* One span per attempt: its guard reads and its write nest in it. */
  attempt_span_end(st, NULL);
  st->span = tt_span_start(&st->ctx->join->trace, "transaction attempt", TT_SPAN_INTERNAL);
  tt_span_int(st->span, "tabletheoryd.txn.attempt", (int64_t)st->attempts + 1);
  tt_span_int(st->span, "tabletheoryd.txn.actions", (int64_t)st->n);
  if (st->n)
    tt_span_str(st->span, "tabletheoryd.model", st->acts[0].m->name);
  json_t *items = json_array();
  for (size_t i = 0; items && i < st->n; i++) {
    struct action *a = &st->acts[i];
    if (!a->needs_old)
      continue;
    json_t *g = json_pack("{s:{s:s, s:o*}}", "Get", "TableName", a->m->table, "Key",
                          tt_ddb_item_to_json(&a->key));
    if (g == NULL || json_array_append_new(items, g) != 0)
      break;
    st->read_of[st->n_reads++] = i;
  }
  if (items == NULL) {
    fail_code(st, TT_ERR_INTERNAL, NULL, "out of memory");
    return;
  }
  if (st->n_reads == 0) {
    json_decref(items);
    start_write(st);
    return;
  }
  call(st, TT_DDB_TRANSACT_GET_ITEMS, json_pack("{s:o}", "TransactItems", items), read_cb);
}

static void answer_item(struct tt_orm_txn_state *st, const struct tt_av *item, unsigned status) {
  struct tt_orm_result *r = st->ctx->result;
  const struct tt_model *m = st->acts[0].m;
  struct tt_error err;
  tt_buf_reset(&r->body);
  if (tt_orm_item_write(&r->body, m, item, NULL, &err) != 0) {
    tt_orm_fail(r, &err);
    return;
  }
  const struct tt_model_attr *v = tt_model_lifecycle(m, TT_LC_VERSION);
  const struct tt_av *ver = v ? tt_av_map_get(item, v->name) : NULL;
  if (ver && ver->type == TT_AV_N)
    snprintf(r->etag, sizeof(r->etag), "\"%s\"", ver->u.bytes);
  r->status = 0;
  r->http_status = status;
}

static void reread_opened_cb(void *arg, const struct tt_error *err) {
  struct tt_orm_txn_state *st = arg;
  if (err != NULL) {
    fail(st, err);
    return;
  }
  answer_item(st, &st->acts[0].item, 200);
  finish(st);
}

static void reread_cb(struct tt_client_call *c) {
  struct tt_orm_txn_state *st = c->arg;
  if (c->bc.status != 0) {
    fail_backend(st, &c->bc.error);
    return;
  }
  struct tt_av item;
  int rc = item_of(c->bc.response, "Item", &item);
  if (rc == 0) {
    /* The new item holds envelopes: open them before answering (kept in
     * the action, which the KMS calls borrow it from). */
    struct action *a = &st->acts[0];
    struct tt_error err;
    tt_av_free(&a->item);
    a->item = item;
    struct tt_orm_crypt *cr = tt_orm_crypt_new(st->ctx, false);
    if (cr == NULL) {
      fail(st, (oom(&err), &err));
      return;
    }
    if (tt_orm_crypt_add_item_of(cr, a->m, &a->item, &err) != 0) {
      fail(st, &err);
      return;
    }
    struct tt_error cerr;
    int crc = tt_orm_crypt_run(cr, reread_opened_cb, st, &cerr);
    if (crc != 0) /* settled at once: go on as its completion would */
      reread_opened_cb(st, crc < 0 ? &cerr : NULL);
    return;
  }
  tt_av_free(&item);
  fail_code(st, rc == 1 ? TT_ERR_ITEM_NOT_FOUND : TT_ERR_INTERNAL, "key",
            rc == 1 ? "the item was deleted right after the update"
                    : "the backend returned an undecodable item");
}

static void succeeded(struct tt_orm_txn_state *st) {
  struct tt_orm_result *r = st->ctx->result;
  if (st->single == NULL) {
    tt_buf_reset(&r->body);
    if (tt_buf_puts(&r->body, "{\"ok\":true}") != 0) {
      fail_code(st, TT_ERR_INTERNAL, NULL, "out of memory");
      return;
    }
    r->status = 0;
    r->http_status = 200;
    finish(st);
    return;
  }
  struct action *a = &st->acts[0];
  switch (a->kind) {
  case K_CREATE:
  case K_PUT: {
    /* The item as sent, not its envelopes. */
    const struct tt_av *shown = a->plain.type == TT_AV_M ? &a->plain : &a->item;
    answer_item(st, shown, a->kind == K_CREATE || !a->old_found ? 201 : 200);
    break;
  }
  case K_UPDATE: {
    /* TransactWriteItems returns no item: read the new one. */
    json_t *req = json_pack("{s:s, s:o*, s:b}", "TableName", a->m->table, "Key",
                            tt_ddb_item_to_json(&a->key), "ConsistentRead", 1);
    call(st, TT_DDB_GET_ITEM, req, reread_cb);
    return;
  }
  default:
    r->status = 0;
    r->http_status = 204;
    break;
  }
  finish(st);
}

/* ---- cancellation ------------------------------------------------------------------ */

/* Whether the item DynamoDB found differs from what the read saw in what
 * the guards depend on (a concurrent writer came in between). */
static bool raced(const struct action *a, const json_t *reason) {
  if (!a->needs_old)
    return false;
  struct tt_av cur;
  int rc = item_of(reason, "Item", &cur);
  bool found = rc == 0;
  bool differs = found != a->old_found;
  for (size_t i = 0; !differs && found && i < a->m->n_attrs; i++) {
    const struct tt_model_attr *u = &a->m->attrs[i];
    if (!u->unique)
      continue;
    const struct tt_av *x = tt_av_map_get(&cur, u->name), *y = tt_av_map_get(&a->old, u->name);
    differs = (x == NULL) != (y == NULL) || (x && !tt_av_equal(x, y));
  }
  tt_av_free(&cur);
  return differs;
}

enum verdict { V_NONE, V_EXISTS, V_MISSING, V_VERSION, V_CONDITION, V_UNIQUE, V_OTHER };

struct reason {
  enum verdict v;
  const char *code; /* DynamoDB's, for V_OTHER */
  const char *message;
  const struct tt_model_attr *attr; /* V_UNIQUE */
  bool has_version;
  int64_t version; /* V_VERSION: what is stored */
};

static void judge(const struct action *a, const json_t *main, const json_t *guards_reasons,
                  size_t guard0, struct reason *out) {
  memset(out, 0, sizeof(*out));
  const char *code = json_string_value(json_object_get(main, "Code"));
  if (code && strcmp(code, "ConditionalCheckFailed") == 0) {
    struct tt_av cur;
    bool current = item_of(main, "Item", &cur) == 0;
    const struct tt_model_attr *v = tt_model_lifecycle(a->m, TT_LC_VERSION);
    const struct tt_av *have = current && v ? tt_av_map_get(&cur, v->name) : NULL;
    if (have && have->type == TT_AV_N) {
      out->has_version = true;
      out->version = strtoll(have->u.bytes, NULL, 10);
    }
    tt_av_free(&cur);
    if (a->kind == K_CREATE || (a->create_only && current))
      out->v = V_EXISTS;
    else if (a->expected.present && v &&
             (!out->has_version || out->version != a->expected.version))
      out->v = V_VERSION;
    else if (!current && ((a->kind == K_UPDATE && !a->upsert) ||
                          (a->kind == K_DELETE && a->must_exist)))
      out->v = V_MISSING; /* the existence the action implies */
    else
      out->v = V_CONDITION;
    return;
  }
  if (code && strcmp(code, "None") != 0) {
    out->v = V_OTHER;
    out->code = code;
    out->message = json_string_value(json_object_get(main, "Message"));
    return;
  }
  for (size_t g = 0; g < a->n_guards; g++) {
    const json_t *gr = json_array_get(guards_reasons, guard0 + g);
    const char *gc = json_string_value(json_object_get(gr, "Code"));
    if (gc && strcmp(gc, "ConditionalCheckFailed") == 0 && a->guards[g].claim) {
      out->v = V_UNIQUE;
      out->attr = a->guards[g].attr;
      return;
    }
    if (gc && strcmp(gc, "None") != 0) {
      out->v = V_OTHER;
      out->code = gc;
      out->message = json_string_value(json_object_get(gr, "Message"));
      return;
    }
  }
  out->v = V_NONE;
}

/* The single-item answer of a failed write. */
static void fail_single(struct tt_orm_txn_state *st, const struct reason *r) {
  struct action *a = &st->acts[0];
  struct tt_error e;
  switch (r->v) {
  case V_EXISTS:
    fail_code(st, TT_ERR_CONDITION_FAILED, "key", "an item with this key already exists");
    return;
  case V_MISSING:
    fail_code(st, TT_ERR_ITEM_NOT_FOUND, "key", "no item has this key");
    return;
  case V_VERSION:
    tt_error_set(&e, TT_ERR_VERSION_CONFLICT, "expected_version",
                 "the item's version is not the expected one; read it again and retry");
    tt_orm_fail(st->ctx->result, &e);
    st->ctx->result->details =
        json_pack("{s:I}", "expected_version", (json_int_t)a->expected.version);
    if (r->has_version)
      json_object_set_new(st->ctx->result->details, "version",
                          json_integer((json_int_t)r->version));
    finish(st);
    return;
  case V_UNIQUE:
    tt_error_set(&e, TT_ERR_CONDITION_FAILED, r->attr->name,
                 "another item already has this value of unique attribute %s", r->attr->name);
    fail(st, &e);
    return;
  case V_OTHER:
    if (strcmp(r->code, "TransactionConflict") == 0) {
      fail_code(st, TT_ERR_BACKEND_UNAVAILABLE, NULL,
                "another transaction changed the item at the same time; retry");
      return;
    }
    if (strcmp(r->code, "ValidationError") == 0) {
      tt_error_set(&e, TT_ERR_VALIDATION, NULL, "%s",
                   r->message ? r->message : "the backend refused the write");
      fail(st, &e);
      return;
    }
    tt_error_set(&e, TT_ERR_BACKEND_UNAVAILABLE, NULL, "the backend canceled the write (%s)",
                 r->code);
    fail(st, &e);
    return;
  default:
    break;
  }
  fail_code(st, TT_ERR_CONDITION_FAILED, "condition", "the condition evaluated to false");
}

static json_t *reason_json(const struct action *a, size_t index, const struct reason *r) {
  const char *code = "None";
  const char *msg = NULL;
  switch (r->v) {
  case V_NONE:
    break;
  case V_EXISTS:
    code = "ConditionalCheckFailed";
    msg = "an item with this key already exists";
    break;
  case V_MISSING:
    code = "ConditionalCheckFailed";
    msg = "no item has this key";
    break;
  case V_VERSION:
    code = "VersionConflict";
    msg = "the item's version is not the expected one";
    break;
  case V_CONDITION:
    code = "ConditionalCheckFailed";
    msg = "the condition evaluated to false";
    break;
  case V_UNIQUE:
    code = "ConditionalCheckFailed";
    msg = "another item already has this value of a unique attribute";
    break;
  case V_OTHER:
    code = r->code;
    msg = r->message;
    break;
  }
  json_t *o = json_pack("{s:I, s:s}", "index", (json_int_t)index, "code", code);
  if (o == NULL)
    return NULL;
  if (msg)
    json_object_set_new(o, "message", json_string(msg));
  if (r->v == V_UNIQUE)
    json_object_set_new(o, "attribute", json_string(r->attr->name));
  if (r->v == V_VERSION) {
    json_object_set_new(o, "expected_version", json_integer((json_int_t)a->expected.version));
    if (r->has_version)
      json_object_set_new(o, "version", json_integer((json_int_t)r->version));
  }
  return o;
}

/* Every retry is a metric and a log line (docs/design.md, "Retries"); no values. */
static void note_retry(struct tt_orm_txn_state *st, const char *reason) {
  attempt_span_end(st, reason);
  struct tt_families *fams = st->ctx->orm->client->fams;
  if (fams) {
    const char *labels[2] = {"TransactWriteItems", reason};
    tt_metric_add(fams->backend_retries, labels, 1);
  }
  struct tt_log_line l;
  tt_log_begin(&l, TT_LOG_WARN, "txn.retry");
  tt_log_str(&l, "request_id", st->ctx->request_id);
  tt_log_str(&l, "op", "TransactWriteItems");
  tt_log_str(&l, "model", st->n ? st->acts[0].m->name : NULL);
  tt_log_str(&l, "reason", reason);
  tt_log_int(&l, "attempt", (int64_t)st->attempts + 1);
  tt_log_end(&l);
}

static void retry_sleep_done(struct tt_sleep_op *s) {
  struct tt_orm_txn_state *st = s->arg;
  if (s->canceled || st->ctx->join->canceled) {
    fail_code(st, TT_ERR_BACKEND_TIMEOUT, NULL,
              "the request ended while waiting to retry a conflicting transaction");
    return;
  }
  start_attempt(st);
}

static void canceled(struct tt_orm_txn_state *st, const struct tt_backend_error *e) {
  const json_t *reasons = e->body ? json_object_get(e->body, "CancellationReasons") : NULL;
  /* A race with another writer between our read and our write: read again. */
  bool race = false, conflict_only = true, any = false;
  for (size_t i = 0; i < st->n; i++) {
    struct action *a = &st->acts[i];
    const json_t *mr = json_array_get(reasons, a->main_at);
    const char *code = json_string_value(json_object_get(mr, "Code"));
    a->raced = code && strcmp(code, "ConditionalCheckFailed") == 0 && raced(a, mr);
    race |= a->raced;
  }
  if (race && st->attempts < TT_ORM_TXN_MAX_ATTEMPTS) {
    note_retry(st, "race");
    start_attempt(st);
    return;
  }
  struct reason *rs = calloc(st->n ? st->n : 1, sizeof(*rs));
  if (rs == NULL) {
    fail_code(st, TT_ERR_INTERNAL, NULL, "out of memory");
    return;
  }
  for (size_t i = 0; i < st->n; i++) {
    struct action *a = &st->acts[i];
    judge(a, json_array_get(reasons, a->main_at), reasons, a->guard_at, &rs[i]);
    if (a->raced) {
      /* Still racing after every attempt: as DynamoDB says of conflicts. */
      rs[i].v = V_OTHER;
      rs[i].code = "TransactionConflict";
      rs[i].message = "another writer kept changing the item; retry";
    }
    if (rs[i].v == V_NONE)
      continue;
    any = true;
    if (rs[i].v != V_OTHER || strcmp(rs[i].code, "TransactionConflict") != 0)
      conflict_only = false;
  }
  if (any && conflict_only && st->retry_conflicts &&
      st->conflicts + 1 < st->ctx->orm->client->retry.max_attempts) {
    free(rs);
    struct tt_backend_error synthetic;
    memset(&synthetic, 0, sizeof(synthetic));
    uint64_t wait = tt_client_backoff_ms(st->ctx->orm->client, &synthetic, ++st->conflicts);
    note_retry(st, "conflict");
    st->sleep.on_done = retry_sleep_done;
    st->sleep.arg = st;
    if (tt_sleep_op_start(&st->sleep, st->ctx->orm->client->loop, st->ctx->join, wait, false) !=
        0)
      fail_code(st, TT_ERR_INTERNAL, NULL, "could not arm the retry timer");
    return;
  }
  if (st->single) {
    struct reason r = rs[0];
    free(rs);
    fail_single(st, &r);
    return;
  }
  json_t *list = json_array();
  for (size_t i = 0; list && i < st->n; i++) {
    json_t *o = reason_json(&st->acts[i], i, &rs[i]);
    if (o == NULL || json_array_append_new(list, o) != 0) {
      json_decref(list);
      list = NULL;
    }
  }
  free(rs);
  if (list == NULL) {
    fail_code(st, TT_ERR_INTERNAL, NULL, "out of memory");
    return;
  }
  struct tt_error err;
  tt_error_set(&err, TT_ERR_TRANSACTION_CANCELED, NULL,
               "the transaction was canceled and nothing was written; see details.reasons");
  tt_orm_fail(st->ctx->result, &err);
  st->ctx->result->details = json_pack("{s:o}", "reasons", list);
  finish(st);
}

static void write_cb(struct tt_client_call *c) {
  struct tt_orm_txn_state *st = c->arg;
  if (c->bc.status == 0) {
    succeeded(st);
    return;
  }
  if (strcmp(c->bc.error.type, "TransactionCanceledException") == 0) {
    canceled(st, &c->bc.error);
    return;
  }
  fail_backend(st, &c->bc.error);
}

static void start_write(struct tt_orm_txn_state *st) {
  struct tt_error err;
  json_t *req = NULL;
  if (build_request(st, true, &req, &err) != 0) {
    fail(st, &err);
    return;
  }
  st->attempts++;
  call(st, TT_DDB_TRANSACT_WRITE_ITEMS, req, write_cb);
}

/* ---- transactions/get ----------------------------------------------------------------- */

/* The answer of a TransactGetItems, from st->got (opened). */
static void answer_got(struct tt_orm_txn_state *st) {
  struct tt_orm_result *r = st->ctx->result;
  struct tt_buf *b = &r->body;
  struct tt_error err;
  tt_error_clear(&err);
  tt_buf_reset(b);
  int rc = tt_buf_puts(b, "{\"items\":[");
  for (size_t i = 0; rc == 0 && i < st->n; i++) {
    if (i)
      rc = tt_buf_puts(b, ",");
    if (rc == 0 && st->got[i].type == TT_AV_M)
      rc = tt_orm_item_write(b, st->acts[i].m, &st->got[i], st->acts[i].select, &err);
    else if (rc == 0)
      rc = tt_buf_puts(b, "null");
    if (rc != 0 && err.code == TT_OK)
      oom(&err);
  }
  if (rc == 0 && tt_buf_puts(b, "]}") != 0)
    rc = oom(&err);
  if (rc != 0) {
    fail(st, &err);
    return;
  }
  r->status = 0;
  r->http_status = 200;
  finish(st);
}

static void got_opened_cb(void *arg, const struct tt_error *err) {
  struct tt_orm_txn_state *st = arg;
  if (err != NULL)
    fail(st, err);
  else
    answer_got(st);
}

static void get_cb(struct tt_client_call *c) {
  struct tt_orm_txn_state *st = c->arg;
  if (c->bc.status != 0) {
    fail_backend(st, &c->bc.error);
    return;
  }
  struct tt_error err;
  const json_t *resp = json_object_get(c->bc.response, "Responses");
  struct tt_orm_crypt *cr = tt_orm_crypt_new(st->ctx, false);
  st->got = tt_arena_alloc(st->ctx->arena, st->n * sizeof(*st->got));
  if (cr == NULL || st->got == NULL) {
    fail(st, (oom(&err), &err));
    return;
  }
  for (size_t i = 0; i < st->n; i++) {
    int found = item_of(json_array_get(resp, i), "Item", &st->got[i]);
    if (found == 1) {
      st->got[i].type = TT_AV_NULL;
    } else if (found != 0) {
      fail_code(st, TT_ERR_INTERNAL, NULL, "the backend returned an undecodable item");
      return;
    } else if (tt_orm_crypt_add_item_of(cr, st->acts[i].m, &st->got[i], &err) != 0) {
      fail(st, &err);
      return;
    }
  }
  struct tt_error cerr;
  int crc = tt_orm_crypt_run(cr, got_opened_cb, st, &cerr);
  if (crc != 0) /* settled at once: go on as its completion would */
    got_opened_cb(st, crc < 0 ? &cerr : NULL);
}

/* ---- entry points ------------------------------------------------------------------------ */

static struct tt_orm_txn_state *state_new(struct tt_orm_ctx *ctx, size_t n) {
  struct tt_orm_txn_state *st = tt_arena_alloc(ctx->arena, sizeof(*st));
  if (st == NULL)
    return NULL;
  st->ctx = ctx;
  st->acts = tt_arena_alloc(ctx->arena, (n ? n : 1) * sizeof(*st->acts));
  st->read_of = tt_arena_alloc(ctx->arena, (n ? n : 1) * sizeof(*st->read_of));
  if (st->acts == NULL || st->read_of == NULL)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    struct action *a = &st->acts[i];
    a->key.type = a->item.type = a->plain.type = a->old.type = a->newvals.type = TT_AV_NULL;
    tt_orm_update_init(&a->upd);
  }
  st->now = tt_orm_now_ns(ctx->orm);
  return st;
}

/* Two actions on one item of the caller, before any I/O. */
static int check_duplicates(struct tt_orm_txn_state *st, struct tt_error *err) {
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
static int check_encrypted(struct tt_orm_txn_state *st, struct tt_error *err) {
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

static void txn_go(struct tt_orm_txn_state *st);

/* Starts sealing, in place, the values of encrypted attributes the actions
 * write: the items of creates and puts, the values updates set (item.c
 * refused every other action on such an attribute). A single create or
 * put keeps a plain copy of its item for the answer. Unique attributes are
 * never encrypted (the model does not load), so the guards, the snapshot
 * conditions and the race checks, which only look at unique values, see
 * plain values. done(st, err) runs once; returns 0, or -1 (done not
 * called). */
static int seal_actions(struct tt_orm_txn_state *st, tt_orm_crypt_done_cb done,
                        struct tt_error *err) {
  struct tt_orm_crypt *c = tt_orm_crypt_new(st->ctx, true);
  if (c == NULL)
    return oom(err);
  for (size_t i = 0; i < st->n; i++) {
    struct action *a = &st->acts[i];
    if (!tt_orm_crypt_model(a->m))
      continue;
    if (st->single && a->item.type == TT_AV_M && tt_av_clone(&a->plain, &a->item) != 0)
      return oom(err);
    if (tt_orm_crypt_add_item_of(c, a->m, &a->item, err) != 0)
      return -1;
    for (size_t j = 0; a->has_upd && j < a->upd.n_actions; j++) {
      struct tt_orm_action *u = &a->upd.actions[j];
      const struct tt_model_attr *at = tt_model_attr_find(a->m, u->path, strlen(u->path));
      if (at != NULL && at->encrypted && u->kind != TT_EXPR_UPD_REMOVE &&
          tt_orm_crypt_add_value(c, at, &u->value, err) != 0)
        return -1;
    }
  }
  struct tt_error cerr;
  int crc = tt_orm_crypt_run(c, done, st, &cerr);
  if (crc != 0) /* settled at once: go on as its completion would */
    done(st, crc < 0 ? &cerr : NULL);
  return 0;
}

static void sealed_cb(void *arg, const struct tt_error *err) {
  struct tt_orm_txn_state *st = arg;
  if (err != NULL) {
    fail(st, err);
    return;
  }
  txn_go(st);
}

static int txn_start_run(struct tt_orm_txn_op *op);

int tt_orm_txn_start(struct tt_orm_txn_op *op) {
  tt_orm_ctx_enter(&op->ctx);
  txn_start_run(op);
  return tt_orm_ctx_leave(&op->ctx);
}

static int txn_start_run(struct tt_orm_txn_op *op) {
  struct tt_error err;
  tt_error_clear(&err);
  const json_t *body = op->body;
  const json_t *items = json_object_get(body, "items");
  size_t n = json_array_size(items);
  struct tt_orm_txn_state *st = state_new(&op->ctx, n);
  if (st == NULL) {
    tt_error_set(&err, TT_ERR_INTERNAL, NULL, "out of memory");
    tt_orm_fail(op->ctx.result, &err);
    tt_orm_ctx_finish(&op->ctx);
    return 0;
  }
  op->st = st;
  st->op = op;
  st->get = op->get;
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)body, k, v) {
    bool ok = strcmp(k, "items") == 0 ||
              (!op->get && (strcmp(k, "client_token") == 0 || strcmp(k, "retry_conflicts") == 0));
    if (!ok) {
      tt_error_set(&err, TT_ERR_VALIDATION, k, "%s is not a transaction parameter", k);
      goto bad;
    }
  }
  if (!json_is_array(items) || n == 0 || n > TT_ORM_TXN_MAX_ITEMS) {
    tt_error_set(&err, TT_ERR_VALIDATION, "items",
                 "items must list 1 to %d transaction items (DynamoDB's limit)",
                 TT_ORM_TXN_MAX_ITEMS);
    goto bad;
  }
  const json_t *tok = json_object_get(body, "client_token");
  if (tok) {
    st->token = json_string_value(tok);
    size_t tl = st->token ? strlen(st->token) : 0;
    if (tl < 1 || tl > 36) {
      tt_error_set(&err, TT_ERR_VALIDATION, "client_token",
                   "client_token must be a string of 1 to 36 characters");
      goto bad;
    }
    if (tt_orm_tokens_hash(body, &st->token_hash) != 0) {
      tt_error_set(&err, TT_ERR_INTERNAL, NULL, "out of memory");
      goto bad;
    }
    /* A retry of the same body writes the same times (orm/tokens.h). */
    st->now = tt_orm_tokens_time(st->ctx->orm, st->token, st->token_hash, st->now);
  }
  const json_t *rcf = json_object_get(body, "retry_conflicts");
  if (rcf && !json_is_boolean(rcf)) {
    tt_error_set(&err, TT_ERR_VALIDATION, "retry_conflicts",
                 "retry_conflicts must be true or false");
    goto bad;
  }
  st->retry_conflicts = json_is_true(rcf);
  for (size_t i = 0; i < n; i++) {
    st->n = i + 1;
    if (parse_entry(st, &st->acts[i], i, json_array_get(items, i), &err) != 0)
      goto bad;
  }
  if (check_duplicates(st, &err) != 0 || check_encrypted(st, &err) != 0)
    goto bad;
  if (!st->get && st->sealing) {
    /* Values of encrypted attributes get their envelopes first. */
    if (seal_actions(st, sealed_cb, &err) != 0)
      goto bad;
    return 0;
  }
  txn_go(st);
  return 0;
bad:
  fail(st, &err);
  return 0;
}

static void txn_go(struct tt_orm_txn_state *st) {
  struct tt_error err;
  /* Compile everything once before any I/O, so that a bad condition or
   * update in item 57 is refused before item 0 is touched. */
  json_t *req = NULL;
  if (build_request(st, false, &req, &err) != 0)
    goto bad;
  if (st->get) {
    call(st, TT_DDB_TRANSACT_GET_ITEMS, req, get_cb);
    return;
  }
  json_decref(req);
  /* Remembered only once the request is valid and about to be sent: a
   * refused body never binds its token. */
  if (st->token) {
    uint32_t retry_after = 0;
    if (tt_orm_tokens_remember(st->ctx->orm, st->token, st->token_hash, st->now,
                               tt_orm_now_ns(st->ctx->orm), &retry_after, &err) != 0) {
      st->ctx->result->retry_after_s = retry_after;
      goto bad;
    }
  }
  start_attempt(st);
  return;
bad:
  fail(st, &err);
}

/* The members an update body may have (docs/api.md "Items"). */
static bool update_body_member(const char *k) {
  static const char *const names[] = {"fields", "item", "set", "set_if_not_exists", "remove",
                                      "add", "delete", "append", "prepend", "condition",
                                      "expected_version", "upsert", "protected_attributes"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strcmp(k, names[i]) == 0)
      return true;
  return false;
}

static int parse_single(struct tt_orm_txn_state *st, struct tt_orm_item_op *op,
                        struct tt_error *err) {
  struct action *a = &st->acts[0];
  a->m = tt_model_ref(op->ctx.model);
  a->field[0] = '\0';
  if (tt_orm_policy_check_write(a->m, tt_orm_policy_item_kind(op->kind, op->if_none_match), NULL,
                                err) != 0 ||
      (op->deploy_authority && tt_orm_provenance_check(op->body, NULL, err) != 0))
    return -1;
  if (op->kind != TT_ORM_OP_CREATE &&
      tt_orm_key_from_path(a->m, op->raw_key, op->raw_key_len, &a->key, err) != 0)
    return -1;
  /* The same encryption refusals as the plain path, before any I/O. */
  if (tt_orm_item_check_encrypted(op, err) != 0)
    return -1;
  if (op->expected.present && tt_model_lifecycle(a->m, TT_LC_VERSION) == NULL)
    return tt_error_set(err, TT_ERR_VALIDATION, "If-Match", "this model has no version attribute");
  switch (op->kind) {
  case TT_ORM_OP_CREATE:
    a->kind = K_CREATE;
    if (tt_orm_item_from_json(a->m, op->body, TT_ORM_CREATE, st->now, NULL, &a->item, NULL,
                              err) != 0 ||
        tt_orm_key_of_item(a->m, &a->item, NULL, &a->key, err) != 0)
      return -1;
    break;
  case TT_ORM_OP_PUT: {
    a->kind = K_PUT;
    a->create_only = op->if_none_match;
    struct tt_orm_expected body_exp = {0};
    if (tt_orm_item_from_json(a->m, op->body, TT_ORM_PUT, st->now, NULL, &a->item, &body_exp,
                              err) != 0 ||
        merge_key(a, err) != 0)
      return -1;
    a->expected = op->expected;
    if (body_exp.present) {
      if (op->expected.present && op->expected.version != body_exp.version)
        return tt_error_set(err, TT_ERR_VALIDATION, "version",
                            "the body's version differs from If-Match");
      a->expected = body_exp;
    }
    break;
  }
  case TT_ORM_OP_UPDATE: {
    a->kind = K_UPDATE;
    a->upsert = op->upsert;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)op->body, k, v) {
      if (!update_body_member(k))
        return tt_error_set(err, TT_ERR_VALIDATION, k, "%s is not part of an update body", k);
    }
    if (tt_orm_update_from_json(a->m, op->body, st->now, "", &a->upd, err) != 0)
      return -1;
    a->has_upd = true; /* state_free frees it from here on */
    if (tt_orm_policy_check_update(a->m, &a->upd, op->body, NULL, err) != 0)
      return -1;
    if (check_update_key(a, err) != 0)
      return -1;
    a->expected = op->expected;
    if (a->upd.expected.present) {
      if (op->expected.present && op->expected.version != a->upd.expected.version)
        return tt_error_set(err, TT_ERR_VALIDATION, "expected_version",
                            "the body's expected version differs from If-Match");
      a->expected = a->upd.expected;
    }
    a->condition = json_object_get(op->body, "condition");
    if (a->condition && json_is_null(a->condition))
      a->condition = NULL;
    break;
  }
  case TT_ORM_OP_DELETE:
    a->kind = K_DELETE;
    a->must_exist = true;
    a->expected = op->expected;
    break;
  case TT_ORM_OP_GET:
    break;
  }
  if (a->kind == K_PUT && a->expected.present &&
      tt_orm_item_set_version(a->m, &a->item, a->expected.version + 1) != 0)
    return oom(err);
  if (prepare_unique(a, err) != 0 || alloc_guards(st, a, err) != 0)
    return -1;
  return 0;
}

static void single_sealed_cb(void *arg, const struct tt_error *err) {
  struct tt_orm_txn_state *st = arg;
  if (err != NULL) {
    fail(st, err);
    return;
  }
  start_attempt(st);
}

static int txn_item_start_run(struct tt_orm_item_op *op);

int tt_orm_txn_item_start(struct tt_orm_item_op *op) {
  tt_orm_ctx_enter(&op->ctx);
  txn_item_start_run(op);
  return tt_orm_ctx_leave(&op->ctx);
}

static int txn_item_start_run(struct tt_orm_item_op *op) {
  if (op->kind == TT_ORM_OP_GET)
    return tt_orm_item_start(op);
  struct tt_error err;
  tt_error_clear(&err);
  memset(&op->key, 0, sizeof(op->key));
  memset(&op->item, 0, sizeof(op->item));
  op->builder = NULL;
  struct tt_orm_txn_state *st = state_new(&op->ctx, 1);
  if (st == NULL) {
    tt_error_set(&err, TT_ERR_INTERNAL, NULL, "out of memory");
    tt_orm_fail(op->ctx.result, &err);
    tt_orm_ctx_finish(&op->ctx);
    return 0;
  }
  st->single = op;
  st->n = 1;
  json_t *req = NULL;
  if (parse_single(st, op, &err) != 0) {
    fail(st, &err);
    return 0;
  }
  if (st->acts[0].kind == K_UPDATE && !st->acts[0].touches_unique) {
    /* No guard moves: the plain UpdateItem (ALL_NEW, one call) is enough.
     * The key was checked above (never a guard's). */
    state_free(st);
    return tt_orm_item_start(op);
  }
  if (build_request(st, false, &req, &err) != 0) {
    fail(st, &err);
    return 0;
  }
  json_decref(req);
  if (st->acts[0].kind != K_DELETE && tt_orm_crypt_model(st->acts[0].m)) {
    /* Sealed once: a retry after a race sends the same envelopes. */
    if (seal_actions(st, single_sealed_cb, &err) != 0)
      fail(st, &err);
    return 0;
  }
  start_attempt(st);
  return 0;
}
