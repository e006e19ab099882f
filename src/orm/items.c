/* SPDX-License-Identifier: Apache-2.0 */
/* items.c -- single-item operations on the backend port: create, put
 * (replace), get, update and delete, with lifecycle fields, optimistic
 * versions and user conditions compiled to placeholder-only expressions. */
#include "orm/items.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orm/crypt.h"
#include "orm/key.h"
#include "orm/policy.h"
#include "value/codec_ddb.h"

/* ---- finishing ----------------------------------------------------------- */

static void op_finish(struct tt_orm_item_op *op) {
  tt_av_free(&op->item);
  tt_av_free(&op->stored);
  tt_av_free(&op->names);
  tt_av_free(&op->values);
  tt_buf_free(&op->cond);
  free(op->update_text);
  free(op->projection_text);
  op->update_text = op->projection_text = NULL;
  tt_orm_update_free(&op->upd);
  tt_cond_free(op->condition);
  op->condition = NULL;
  tt_expr_builder_free(op->builder);
  op->builder = NULL;
  tt_orm_ctx_finish(&op->ctx);
}

static void fail(struct tt_orm_item_op *op, const struct tt_error *err) {
  tt_orm_fail(op->ctx.result, err);
  op_finish(op);
}

static void fail_code(struct tt_orm_item_op *op, enum tt_err_code code, const char *field,
                      const char *msg) {
  struct tt_error e;
  tt_error_set(&e, code, field, "%s", msg);
  fail(op, &e);
}

/* Moves *item (a stored M) into op's result as its typed answer. */
static void answer_take(struct tt_orm_item_op *op, struct tt_av *item, bool created) {
  struct tt_orm_result *r = op->ctx.result;
  tt_av_free(&r->item);
  r->item = *item;
  memset(item, 0, sizeof(*item));
  if (r->model == NULL)
    r->model = tt_model_ref(op->ctx.model);
  r->created = created;
  r->answer = TT_ORM_ANSWER_ITEM;
  r->status = 0;
}

int tt_orm_item_answer(struct tt_orm_item_op *op, const struct tt_av *item, bool created) {
  struct tt_av copy;
  if (tt_av_clone(&copy, item) != 0) {
    struct tt_error err;
    tt_orm_oom(&err);
    return tt_orm_fail(op->ctx.result, &err);
  }
  answer_take(op, &copy, created);
  return 0;
}

/* ---- failed conditions: missing item, version conflict, or condition ---- */

static void classify(struct tt_orm_item_op *op, const struct tt_av *current) {
  const struct tt_model_attr *v = tt_model_lifecycle(op->ctx.model, TT_LC_VERSION);
  if (op->kind == TT_ORM_OP_CREATE || op->if_none_match) {
    fail_code(op, TT_ERR_CONDITION_FAILED, "key", "an item with this key already exists");
    return;
  }
  /* An upsert's condition may fail on an absent item; a backend without
   * ReturnValuesOnConditionCheckFailure makes us read the item afterwards,
   * when a racing writer may have deleted it: neither is "not found". */
  if (current == NULL && op->kind != TT_ORM_OP_PUT && !op->upsert) {
    fail_code(op, TT_ERR_ITEM_NOT_FOUND, "key", "no item has this key");
    return;
  }
  if (op->expected.present && v) {
    const struct tt_av *have = current ? tt_orm_item_version(op->ctx.model, current) : NULL;
    char want[32];
    snprintf(want, sizeof(want), "%" PRId64, op->expected.version);
    if (have == NULL || strcmp(have->u.bytes, want) != 0) {
      int64_t hv = have ? strtoll(have->u.bytes, NULL, 10) : 0;
      tt_orm_fail_version(op->ctx.result, op->expected.version, have ? &hv : NULL);
      op_finish(op);
      return;
    }
  }
  fail_code(op, TT_ERR_CONDITION_FAILED, "condition", "the condition evaluated to false");
}

/* The Item or Attributes a typed call returned, or NULL. */
static const struct tt_av *item_out(const struct tt_client_call *call) {
  return call->bc.item_out.type == TT_AV_M ? &call->bc.item_out : NULL;
}

/* Fails op with the backend's error of a call that failed. */
static void fail_call(struct tt_orm_item_op *op, const struct tt_client_call *call) {
  tt_orm_fail_backend(op->ctx.result, &call->bc.error, op->ctx.model->name);
  op_finish(op);
}

static void classified(struct tt_client_call *call) {
  struct tt_orm_item_op *op = call->arg;
  if (call->bc.status != 0)
    fail_call(op, call);
  else
    classify(op, item_out(call));
}

/* A ConditionalCheckFailed: use the item DynamoDB returned with it
 * (ReturnValuesOnConditionCheckFailure) or read it, then say which rule
 * failed. */
static void condition_failed(struct tt_orm_item_op *op, const struct tt_backend_error *e) {
  const json_t *j = e->body ? json_object_get(e->body, "Item") : NULL;
  struct tt_av current;
  struct tt_error perr;
  if (json_is_object(j) && tt_ddb_item_from_json(j, "Item", &current, &perr) == 0) {
    classify(op, &current);
    tt_av_free(&current);
    return;
  }
  if (op->kind == TT_ORM_OP_CREATE || op->if_none_match) {
    classify(op, NULL);
    return;
  }
  memset(&op->req, 0, sizeof(op->req));
  op->req.table = op->ctx.model->table;
  op->req.key = op->item_key;
  op->req.consistent_read = true;
  if (tt_orm_call_item(&op->ctx, TT_DDB_GET_ITEM, &op->req, classified) != 0)
    classified(&op->ctx.call); /* refused: fails as a completion would */
}

/* ---- encrypted attributes ------------------------------------------------- */

static void opened_cb(void *arg, const struct tt_error *err) {
  struct tt_orm_item_op *op = arg;
  if (err != NULL) {
    fail(op, err);
    return;
  }
  answer_take(op, &op->item, false);
  op_finish(op);
}

/* Answers the item the call returned (moved into op->item) once its
 * envelopes are opened; a raw (?format=dynamodb) read answers the envelopes
 * themselves. */
static void answer_opened(struct tt_orm_item_op *op, struct tt_client_call *call) {
  struct tt_error err;
  tt_av_free(&op->item);
  op->item = call->bc.item_out;
  memset(&call->bc.item_out, 0, sizeof(call->bc.item_out));
  if (op->raw_format || !tt_orm_crypt_model(op->ctx.model)) {
    opened_cb(op, NULL);
    return;
  }
  struct tt_orm_crypt *c = tt_orm_crypt_new(&op->ctx, false);
  if (c == NULL || tt_orm_crypt_add_item_of(c, op->ctx.model, &op->item, &err) != 0) {
    if (c == NULL)
      tt_orm_oom(&err);
    fail(op, &err);
    return;
  }
  tt_orm_crypt_run_then(c, opened_cb, op);
}

/* ---- the operations ---------------------------------------------------------- */

static void written(struct tt_client_call *call) {
  struct tt_orm_item_op *op = call->arg;
  if (call->bc.status != 0) {
    if (strcmp(call->bc.error.type, "ConditionalCheckFailedException") == 0)
      condition_failed(op, &call->bc.error);
    else
      fail_call(op, call);
    return;
  }
  switch (op->kind) {
  case TT_ORM_OP_CREATE:
    answer_take(op, &op->item, true);
    break;
  case TT_ORM_OP_PUT: {
    bool replaced = item_out(call) != NULL && item_out(call)->len > 0;
    answer_take(op, &op->item, !replaced);
    break;
  }
  case TT_ORM_OP_UPDATE:
    if (item_out(call) == NULL)
      fail_code(op, TT_ERR_INTERNAL, NULL, "the backend returned no item");
    else
      answer_opened(op, call); /* the new item holds envelopes */
    return;
  case TT_ORM_OP_DELETE:
    op->ctx.result->status = 0;
    op->ctx.result->answer = TT_ORM_ANSWER_NONE;
    break;
  case TT_ORM_OP_GET:
    break;
  }
  op_finish(op);
}

static void got(struct tt_client_call *call) {
  struct tt_orm_item_op *op = call->arg;
  if (call->bc.status != 0)
    fail_call(op, call);
  else if (item_out(call) == NULL)
    fail_code(op, TT_ERR_ITEM_NOT_FOUND, "key", "no item has this key");
  else
    answer_opened(op, call);
}

/* The sealed copy of a PutItem's item is ready: send it. */
static void sealed_cb(void *arg, const struct tt_error *err) {
  struct tt_orm_item_op *op = arg;
  if (err != NULL) {
    fail(op, err);
    return;
  }
  op->req.item = &op->stored;
  if (tt_orm_call_item(&op->ctx, TT_DDB_PUT_ITEM, &op->req, written) != 0)
    written(&op->ctx.call);
}

/* Finishes op->req: table, the condition built so far in op->cond (which
 * asks for the old item on failure, so classify() need not read it
 * again), the placeholders; then starts the call. An encrypted model's
 * PutItem goes out once a sealed copy of the item is ready (the answer is
 * made from the plain one). Returns 0 or -1. */
static int send_request(struct tt_orm_item_op *op, enum tt_ddb_op kind, tt_client_done_cb cb,
                        struct tt_error *err) {
  struct tt_ddb_item_request *r = &op->req;
  r->table = op->ctx.model->table;
  if (op->cond.len) {
    r->condition = op->cond.data;
    r->old_on_condition_failure = true;
  }
  if (op->builder != NULL && tt_orm_take_placeholders(op->builder, &op->names, &op->values,
                                                      &r->names, &r->values, err) != 0)
    return -1;
  if (kind == TT_DDB_PUT_ITEM && tt_orm_crypt_model(op->ctx.model)) {
    struct tt_orm_crypt *c = tt_orm_crypt_new(&op->ctx, true);
    if (c == NULL || tt_av_clone(&op->stored, &op->item) != 0)
      return tt_orm_oom(err);
    if (tt_orm_crypt_add_item_of(c, op->ctx.model, &op->stored, err) != 0)
      return -1;
    tt_orm_crypt_run_then(c, sealed_cb, op);
    return 0;
  }
  if (tt_orm_call_item(&op->ctx, kind, r, cb) != 0)
    cb(&op->ctx.call);
  return 0;
}

static int start_create(struct tt_orm_item_op *op, struct tt_error *err) {
  const struct tt_orm_write_cond w = {.absent = true};
  if (tt_orm_write_condition(op->ctx.model, op->builder, &w, &op->cond, err) != 0)
    return -1;
  op->req.item = &op->item;
  return send_request(op, TT_DDB_PUT_ITEM, written, err);
}

static int start_put(struct tt_orm_item_op *op, struct tt_error *err) {
  /* tt_orm_item_start refused If-Match on a model without a version. */
  if (tt_orm_item_put_prepare(op->ctx.model, op->item_key, &op->item, &op->item_expected,
                              &op->expected, err) != 0)
    return -1;
  const struct tt_orm_write_cond w = {.absent = op->if_none_match, .expected = op->expected};
  if (tt_orm_write_condition(op->ctx.model, op->builder, &w, &op->cond, err) != 0)
    return -1;
  op->req.item = &op->item;
  op->req.return_values = TT_DDB_RETURN_ALL_OLD;
  return send_request(op, TT_DDB_PUT_ITEM, written, err);
}

static int start_get(struct tt_orm_item_op *op, struct tt_error *err) {
  op->req.key = op->item_key;
  op->req.consistent_read = op->consistent;
  if (op->select.n > 0) {
    if (tt_orm_check_select(op->ctx.model, &op->select, "select", err) != 0 ||
        tt_expr_build_projection(op->builder, &op->select, "select", &op->projection_text,
                                 err) != 0)
      return -1;
    op->req.projection = op->projection_text;
  }
  return send_request(op, TT_DDB_GET_ITEM, got, err);
}

/* The second half of an update: its (sealed) actions, conditions and the
 * call. */
static int update_send(struct tt_orm_item_op *op, struct tt_error *err) {
  const struct tt_orm_write_cond w = {
      .exists = !op->upsert,
      .expected = op->expected,
      .condition = op->condition,
  };
  if (tt_orm_update_expression(op->ctx.model, op->builder, &op->upd, op->upsert, op->now, NULL,
                               &op->update_text, err) != 0 ||
      tt_orm_write_condition(op->ctx.model, op->builder, &w, &op->cond, err) != 0)
    return -1;
  op->req.key = op->item_key;
  op->req.update = op->update_text;
  op->req.return_values = TT_DDB_RETURN_ALL_NEW;
  return send_request(op, TT_DDB_UPDATE_ITEM, written, err);
}

static void update_sealed_cb(void *arg, const struct tt_error *err) {
  struct tt_orm_item_op *op = arg;
  struct tt_error e;
  if (err != NULL)
    fail(op, err);
  else if (update_send(op, &e) != 0)
    fail(op, &e);
}

static int start_update(struct tt_orm_item_op *op, struct tt_error *err) {
  struct tt_orm_update *upd = &op->upd;
  for (size_t i = 0; i < upd->key.len && upd->key.type == TT_AV_M; i++) {
    const struct tt_av_member *k = &upd->key.u.members[i];
    const struct tt_av *want = tt_av_map_get(op->item_key, k->name);
    if (want && !tt_av_equal(want, &k->value))
      return tt_error_set(err, TT_ERR_VALIDATION, k->name,
                          "%s in the body differs from the key in the path", k->name);
  }
  if (tt_orm_expected_merge(&op->expected, &upd->expected, "expected_version",
                            "the body's expected version differs from If-Match", err) != 0)
    return -1;
  if (!tt_orm_crypt_model(op->ctx.model))
    return update_send(op, err);
  /* Values set on encrypted attributes are sealed first. */
  struct tt_orm_crypt *c = tt_orm_crypt_new(&op->ctx, true);
  if (c == NULL)
    return tt_orm_oom(err);
  if (tt_orm_crypt_add_update(c, op->ctx.model, upd, err) != 0)
    return -1;
  tt_orm_crypt_run_then(c, update_sealed_cb, op);
  return 0;
}

static int start_delete(struct tt_orm_item_op *op, struct tt_error *err) {
  const struct tt_orm_write_cond w = {.exists = true, .expected = op->expected};
  if (tt_orm_write_condition(op->ctx.model, op->builder, &w, &op->cond, err) != 0)
    return -1;
  op->req.key = op->item_key;
  return send_request(op, TT_DDB_DELETE_ITEM, written, err);
}

int tt_orm_item_check_policy(const struct tt_orm_item_op *op, struct tt_error *err) {
  return tt_orm_policy_check_write(op->ctx.model,
                                   tt_orm_policy_item_kind(op->kind, op->if_none_match), NULL,
                                   err);
}

int tt_orm_item_check_request(const struct tt_orm_item_op *op, struct tt_av *key,
                              struct tt_error *err) {
  const struct tt_model *m = op->ctx.model;
  /* Encrypted attributes fail closed without a key (a DELETE touches no
   * value), and never in a condition or inside a projection path. */
  if (tt_orm_item_check_policy(op, err) != 0 ||
      (op->kind != TT_ORM_OP_CREATE && tt_orm_key_check(m, op->item_key, "key", err) != 0) ||
      (op->kind != TT_ORM_OP_DELETE && tt_orm_crypt_check(op->ctx.orm, m, err) != 0) ||
      tt_orm_crypt_check_condition(m, op->condition, "condition", err) != 0 ||
      tt_orm_crypt_check_select(m, &op->select, "select", err) != 0)
    return -1;
  if (key != NULL && op->kind != TT_ORM_OP_CREATE && tt_av_clone(key, op->item_key) != 0)
    return tt_orm_oom(err);
  if (op->expected.present && tt_model_lifecycle(m, TT_LC_VERSION) == NULL)
    return tt_error_set(err, TT_ERR_VALIDATION, "If-Match", "this model has no version attribute");
  return 0;
}

int tt_orm_item_fail_input(struct tt_orm_item_op *op, const struct tt_error *input) {
  struct tt_error first;
  const struct tt_error *err = tt_orm_item_check_request(op, NULL, &first) != 0 ? &first : input;
  tt_av_free(&op->item);
  tt_orm_update_free(&op->upd);
  tt_cond_free(op->condition);
  op->condition = NULL;
  return tt_orm_ctx_refuse(&op->ctx, err);
}

static int item_start_run(struct tt_orm_ctx *ctx) {
  struct tt_orm_item_op *op = (struct tt_orm_item_op *)ctx;
  struct tt_error err;
  tt_error_clear(&err);
  memset(&op->stored, 0, sizeof(op->stored));
  memset(&op->req, 0, sizeof(op->req));
  memset(&op->names, 0, sizeof(op->names));
  memset(&op->values, 0, sizeof(op->values));
  tt_buf_init(&op->cond, 0);
  op->update_text = op->projection_text = NULL;
  /* A plain GET builds no expression: no builder to make and free. */
  bool plain_get = op->kind == TT_ORM_OP_GET && op->select.n == 0;
  op->builder = plain_get ? NULL : tt_expr_builder_new();
  if (op->builder == NULL && !plain_get) {
    fail_code(op, TT_ERR_INTERNAL, NULL, "out of memory");
    return 0;
  }
  if (tt_orm_item_check_request(op, NULL, &err) != 0) {
    fail(op, &err);
    return 0;
  }
  static int (*const starts[])(struct tt_orm_item_op *, struct tt_error *) = {
      [TT_ORM_OP_CREATE] = start_create, [TT_ORM_OP_PUT] = start_put,
      [TT_ORM_OP_GET] = start_get,       [TT_ORM_OP_UPDATE] = start_update,
      [TT_ORM_OP_DELETE] = start_delete,
  };
  if (starts[op->kind](op, &err) != 0)
    fail(op, &err);
  return 0;
}

int tt_orm_item_start(struct tt_orm_item_op *op) {
  return tt_orm_ctx_start(&op->ctx, item_start_run);
}
