/* SPDX-License-Identifier: Apache-2.0 */
/* txn.c -- POST /v1/transactions/write and /v1/transactions/get: the body
 * read into the ORM's typed transaction, every item validated in the API's
 * order of errors (members, model, op, item, key, update, expected version,
 * select), and the typed answer rendered. */
#include <stdio.h>
#include <string.h>

#include "api/handlers.h"
#include "api/item_io.h"
#include "orm/cond.h"
#include "orm/item.h"
#include "orm/key.h"
#include "orm/policy.h"
#include "orm/provenance.h"
#include "orm/tokens.h"
#include "value/json_exact.h"

static const char *const kind_names[] = {"", "create", "put", "update", "delete", "check", "get"};

/* "items[3].name". */
static void subfield(const struct tt_orm_txn_action *a, const char *name, char *out, size_t cap) {
  snprintf(out, cap, "%s.%s", a->field, name);
}

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

#define KB(x) (1u << TT_ORM_TXN_##x)
#define WRITES (KB(CREATE) | KB(PUT) | KB(UPDATE) | KB(DELETE) | KB(CHECK))

/* The kinds of action (bits KB) a member of a transaction item belongs to;
 * 0: no member. */
static unsigned member_kinds(const char *k) {
  static const struct {
    const char *name;
    unsigned kinds;
  } members[] = {
      {"op", WRITES}, {"model", WRITES | KB(GET)}, {"item", KB(CREATE) | KB(PUT) | KB(UPDATE)},
      {"key", KB(UPDATE) | KB(DELETE) | KB(CHECK) | KB(GET)}, {"condition", WRITES},
      {"expected_version", WRITES & ~KB(CREATE)}, {"select", KB(GET)},
      {"deploy_authority", KB(CREATE) | KB(PUT)}, {"fields", KB(UPDATE)}, {"set", KB(UPDATE)},
      {"set_if_not_exists", KB(UPDATE)}, {"remove", KB(UPDATE)}, {"add", KB(UPDATE)},
      {"delete", KB(UPDATE)}, {"append", KB(UPDATE)}, {"prepend", KB(UPDATE)},
      {"upsert", KB(UPDATE)}, {"protected_attributes", KB(UPDATE)}};
  for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++)
    if (strcmp(k, members[i].name) == 0)
      return members[i].kinds;
  return 0;
}

/* The field, model, op and members of entry i (e), checked; sets a->model
 * (a reference), a->kind and a->condition once all hold. */
static int read_head(struct tt_orm_txn_op *op, struct tt_orm_txn_action *a, size_t i,
                     const json_t *e, struct tt_error *err) {
  char f[160];
  const char *k;
  json_t *v;
  snprintf(a->field, sizeof(a->field), "items[%zu]", i);
  if (!json_is_object(e))
    return tt_error_set(err, TT_ERR_VALIDATION, a->field, "%s must be an object", a->field);
  json_object_foreach((json_t *)e, k, v) {
    subfield(a, k, f, sizeof(f));
    if (!member_kinds(k) || (op->get && !(member_kinds(k) & KB(GET))))
      return tt_error_set(err, TT_ERR_VALIDATION, f, "%s is not part of a transaction item", f);
  }
  subfield(a, "model", f, sizeof(f));
  const char *model = json_string_value(json_object_get(e, "model"));
  if (model == NULL)
    return tt_error_set(err, TT_ERR_VALIDATION, f, "%s must name a model", f);
  const struct tt_model *m = tt_model_registry_lookup(op->ctx.orm->models, model, f, err);
  if (m == NULL && err->code == TT_ERR_MODEL_NOT_FOUND)
    return tt_error_set(err, TT_ERR_MODEL_NOT_FOUND, f,
                        "%s names no model; list them with GET /v1/models", f);
  if (m == NULL)
    return -1; /* ReservedModel */
  enum tt_orm_txn_kind kind = op->get ? TT_ORM_TXN_GET : 0;
  if (!op->get) {
    subfield(a, "op", f, sizeof(f));
    const char *name = json_string_value(json_object_get(e, "op"));
    for (int kk = TT_ORM_TXN_CREATE; name && kk <= TT_ORM_TXN_CHECK; kk++)
      if (strcmp(name, kind_names[kk]) == 0)
        kind = (enum tt_orm_txn_kind)kk;
    if (kind == 0)
      return tt_error_set(err, TT_ERR_VALIDATION, f,
                          "%s must be one of create, put, update, delete, check", f);
  }
  json_object_foreach((json_t *)e, k, v) {
    subfield(a, k, f, sizeof(f));
    if (!(member_kinds(k) & (1u << kind)))
      return tt_error_set(err, TT_ERR_VALIDATION, f, "%s has no meaning for op %s", f,
                          kind_names[kind]);
  }
  a->model = tt_model_ref((struct tt_model *)m);
  a->kind = kind;
  subfield(a, "condition", f, sizeof(f));
  return tt_orm_cond_read(m, json_object_get(e, "condition"), f, &a->condition, err);
}

/* Member `name` of e, which must be `what` (an object); f gets its field.
 * NULL after a ValidationError. */
static const json_t *object_member(const struct tt_orm_txn_action *a, const json_t *e,
                                   const char *name, const char *what, char f[160],
                                   struct tt_error *err) {
  const json_t *v = json_object_get(e, name);
  subfield(a, name, f, 160);
  if (!json_is_object(v))
    tt_error_set(err, TT_ERR_VALIDATION, f, "%s must be %s", f, what);
  return json_is_object(v) ? v : NULL;
}

/* The item of a create or put. */
static int read_item(struct tt_orm_txn_op *op, struct tt_orm_txn_action *a, const json_t *e,
                     struct tt_error *err) {
  char f[160];
  const json_t *item = object_member(a, e, "item", "an item object", f, err);
  const json_t *ev = json_object_get(e, "expected_version");
  if (item == NULL)
    return -1;
  /* "deploy_authority": true asks for the release-state evidence check
   * of the item, before anything of the transaction is sent. */
  const json_t *da = json_object_get(e, "deploy_authority");
  if (da && !json_is_boolean(da)) {
    subfield(a, "deploy_authority", f, sizeof(f));
    return tt_error_set(err, TT_ERR_VALIDATION, f, "%s must be true or false", f);
  }
  if (json_is_true(da) && tt_orm_provenance_check(item, f, err) != 0)
    return -1;
  bool put = a->kind == TT_ORM_TXN_PUT;
  struct tt_orm_expected body_exp = {0};
  if (tt_orm_item_from_json(a->model, item, put ? TT_ORM_PUT : TT_ORM_CREATE, op->now, f,
                            &a->item, put ? &body_exp : NULL, err) != 0)
    return -1;
  a->expected = body_exp;
  if (ev) {
    subfield(a, "expected_version", f, sizeof(f));
    if (parse_expected(ev, f, &a->expected, err) != 0)
      return -1;
    if (body_exp.present && body_exp.version != a->expected.version)
      return tt_error_set(err, TT_ERR_VALIDATION, f, "%s differs from the version in the item",
                          f);
  }
  return 0;
}

/* The update, the upsert flag and the key of an update. */
static int read_update(struct tt_orm_txn_op *op, struct tt_orm_txn_action *a, const json_t *e,
                       struct tt_error *err) {
  char f[160];
  const json_t *key = json_object_get(e, "key");
  if (tt_orm_update_from_json(a->model, e, op->now, a->field, &a->upd, err) != 0 ||
      tt_orm_policy_check_update(a->model, &a->upd, e, a->field, err) != 0)
    return -1;
  subfield(a, "upsert", f, sizeof(f));
  if (tt_api_bool_member(e, "upsert", f, &a->upsert, err) != 0)
    return -1;
  if (key) {
    key = object_member(a, e, "key", "a key object", f, err);
    return key ? tt_orm_key_from_json(a->model, key, f, &a->key, err) : -1;
  }
  subfield(a, "key", f, sizeof(f));
  if (a->upd.key.type != TT_AV_M || a->upd.key.len != (size_t)(a->model->sk ? 2 : 1))
    return tt_error_set(err, TT_ERR_VALIDATION, f,
                        "%s is required (or every key attribute in item)", f);
  if (tt_av_clone(&a->key, &a->upd.key) != 0)
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
  return 0;
}

/* The key, expected version and select of a delete, check or get. */
static int read_key(struct tt_arena *arena, struct tt_orm_txn_action *a, const json_t *e,
                    struct tt_error *err) {
  char f[160];
  const json_t *key = object_member(a, e, "key", "a key object", f, err);
  const json_t *ev = json_object_get(e, "expected_version");
  if (key == NULL || tt_orm_key_from_json(a->model, key, f, &a->key, err) != 0)
    return -1;
  subfield(a, "expected_version", f, sizeof(f));
  if (ev && parse_expected(ev, f, &a->expected, err) != 0)
    return -1;
  if (a->kind != TT_ORM_TXN_GET)
    return 0;
  subfield(a, "select", f, sizeof(f));
  return tt_orm_select_from_json(a->model, json_object_get(e, "select"), f, arena, &a->select,
                                 err);
}

int tt_api_txn_start(struct tt_orm_txn_op *op, const json_t *body) {
  struct tt_error err;
  const json_t *items = json_object_get(body, "items");
  size_t n = json_array_size(items);
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)body, k, v) {
    if (strcmp(k, "items") != 0 &&
        (op->get || (strcmp(k, "client_token") != 0 && strcmp(k, "retry_conflicts") != 0))) {
      tt_error_set(&err, TT_ERR_VALIDATION, k, "%s is not a transaction parameter", k);
      goto refuse;
    }
  }
  op->n_actions = n;
  if (n == 0 || n > TT_ORM_TXN_MAX_ITEMS)
    return tt_orm_txn_start(op); /* refused: items must list 1 to 100 */
  const json_t *tok = json_object_get(body, "client_token");
  op->client_token = json_string_value(tok);
  size_t tl = op->client_token ? strlen(op->client_token) : 0;
  if (tok && (tl < 1 || tl > 36)) {
    tt_error_set(&err, TT_ERR_VALIDATION, "client_token",
                 "client_token must be a string of 1 to 36 characters");
    goto refuse;
  }
  if (tok && tt_orm_tokens_hash(body, &op->token_hash) != 0)
    goto oom;
  op->now = tt_orm_now_ns(op->ctx.orm);
  if (tok) /* a retry of the same body writes the same times (orm/tokens.h) */
    op->now = tt_orm_tokens_time(op->ctx.orm, op->client_token, op->token_hash, op->now);
  if (tt_api_bool_member(body, "retry_conflicts", "retry_conflicts", &op->retry_conflicts,
                         &err) != 0)
    goto refuse;
  if ((op->actions = tt_arena_alloc(op->ctx.arena, n * sizeof(*op->actions))) == NULL)
    goto oom;
  for (size_t i = 0; i < n; i++) {
    struct tt_orm_txn_action *a = &op->actions[i];
    const json_t *e = json_array_get(items, i);
    int rc = read_head(op, a, i, e, &err);
    if (rc == 0 && (a->kind == TT_ORM_TXN_CREATE || a->kind == TT_ORM_TXN_PUT))
      rc = read_item(op, a, e, &err);
    else if (rc == 0)
      rc = a->kind == TT_ORM_TXN_UPDATE ? read_update(op, a, e, &err)
                                          : read_key(op->ctx.arena, a, e, &err);
    if (rc != 0)
      return tt_orm_txn_fail_input(op, i, &err);
  }
  return tt_orm_txn_start(op);
oom:
  tt_error_set(&err, TT_ERR_INTERNAL, NULL, "out of memory");
refuse:
  return tt_orm_ctx_refuse(&op->ctx, &err);
}

/* {"items":[item | null, ...]}: op->items in request order. */
static int items_text(const struct tt_orm_txn_op *op, struct tt_buf *b, struct tt_error *err) {
  int rc = tt_buf_puts(b, "{\"items\":[");
  for (size_t i = 0; rc == 0 && i < op->n_actions; i++) {
    const struct tt_orm_txn_action *a = &op->actions[i];
    if (i)
      rc = tt_buf_puts(b, ",");
    if (rc == 0 && op->items[i].type == TT_AV_M)
      rc = tt_orm_item_write(b, a->model, &op->items[i], &a->select, err);
    else if (rc == 0)
      rc = tt_buf_puts(b, "null");
  }
  return rc != 0 || tt_buf_puts(b, "]}") != 0 ? -1 : 0;
}

/* details.reasons of a TransactionCanceled: {"index", "code", "message",
 * "attribute" or "expected_version" and "version"} per item. */
static json_t *reasons_json(const struct tt_orm_txn_op *op) {
  static const char *const messages[] = {
      [TT_ORM_TXN_EXISTS] = "an item with this key already exists",
      [TT_ORM_TXN_MISSING] = "no item has this key",
      [TT_ORM_TXN_VERSION] = "the item's version is not the expected one",
      [TT_ORM_TXN_CONDITION] = "the condition evaluated to false",
      [TT_ORM_TXN_UNIQUE] = "another item already has this value of a unique attribute"};
  json_t *list = json_array();
  for (size_t i = 0; list && i < op->n_actions; i++) {
    const struct tt_orm_txn_reason *r = &op->reasons[i];
    bool other = r->v == TT_ORM_TXN_OTHER;
    const char *msg = other ? r->message : messages[r->v];
    const char *code = other                        ? r->code
                       : r->v == TT_ORM_TXN_NONE    ? "None"
                       : r->v == TT_ORM_TXN_VERSION ? "VersionConflict"
                                                    : "ConditionalCheckFailed";
    json_t *o = json_pack("{s:I, s:s}", "index", (json_int_t)i, "code", code);
    if (o && msg)
      json_object_set_new(o, "message", json_string(msg));
    if (o && r->v == TT_ORM_TXN_UNIQUE)
      json_object_set_new(o, "attribute", json_string(r->attr->name));
    if (o && r->v == TT_ORM_TXN_VERSION) {
      json_object_set_new(o, "expected_version",
                          json_integer((json_int_t)op->actions[i].expected.version));
      if (r->has_version)
        json_object_set_new(o, "version", json_integer((json_int_t)r->version));
    }
    if (o == NULL || json_array_append_new(list, o) != 0) {
      json_decref(list);
      list = NULL;
    }
  }
  return list ? json_pack("{s:o}", "reasons", list) : NULL;
}

void tt_api_txn_answer(struct tt_orm_txn_op *op, struct tt_orm_result *r, struct tt_buf *out) {
  struct tt_error err;
  tt_error_clear(&err);
  int rc = 0;
  if (r->status == 0) {
    rc = op->get ? items_text(op, out, &err) : tt_buf_puts(out, "{\"ok\":true}");
  } else if (op->reasons && r->err.code == TT_ERR_TRANSACTION_CANCELED) {
    rc = (r->details = reasons_json(op)) != NULL ? 0 : -1;
  }
  if (rc != 0) {
    if (err.code == TT_OK)
      tt_error_set(&err, TT_ERR_INTERNAL, NULL, "out of memory");
    tt_orm_fail(r, &err);
  }
  for (size_t i = 0; op->actions && i < op->n_actions; i++) {
    if (op->items)
      tt_av_free(&op->items[i]);
    tt_model_unref((struct tt_model *)op->actions[i].model);
  }
}

static void answer(struct tt_request *req, struct tt_orm_result *r, void *op) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  tt_api_txn_answer(op, r, &b);
  tt_request_respond_rendered(req, r, &b);
}

static void start(struct tt_request *req, bool get) {
  json_t *body = tt_request_json_body(req, true);
  struct tt_orm_txn_op *op = body ? tt_api_orm_job(req, sizeof(*op), NULL, body, answer) : NULL;
  if (op == NULL)
    return;
  op->get = get;
  tt_api_txn_start(op, body);
}

void tt_handle_txn_write(struct tt_request *req) { start(req, false); }

void tt_handle_txn_get(struct tt_request *req) { start(req, true); }
