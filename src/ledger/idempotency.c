/* SPDX-License-Identifier: Apache-2.0 */
/* idempotency.c -- idempotency records of a job: a conditional create that
 * tells a duplicate (in progress or completed, with the stored outcome), and
 * a completion whose first result wins. */
#include <string.h>

#include "ledger/internal.h"

/* Create attempts when the record vanishes or expires between our calls. */
#define CREATE_ATTEMPTS 3

static void create_request(struct tt_ledger_op *op);

/* The stored attribute `name` (of type `type`, codec `flags`) of the
 * request `r` holds, as the answer writes it: a new reference, JSON null
 * when absent, NULL when out of memory. */
static json_t *stored(const struct tt_orm_result *r, const char *name, enum tt_av_type type,
                      unsigned flags) {
  const struct tt_av *v = tt_av_map_get(&r->item, name);
  return v ? tt_logical_from_av(v, type, flags) : json_null();
}

/* {"outcome": o} and, from the stored request of `r` (NULL: none),
 * "result": r|null, "error": e|null. */
static void answer_outcome(struct tt_ledger_op *op, unsigned status, const char *outcome,
                           const struct tt_orm_result *r) {
  json_t *out = r ? json_pack("{s:s,s:o,s:o}", "outcome", outcome, "result",
                              stored(r, "result", TT_AV_S, TT_LOGICAL_JSON), "error",
                              stored(r, "error", TT_AV_M, 0))
                  : json_pack("{s:s}", "outcome", outcome);
  ledger_answer(op, status, out);
}

static void retry_or_fail(struct tt_ledger_op *op) {
  if (++op->w.attempts < CREATE_ATTEMPTS) {
    create_request(op);
    return;
  }
  ledger_failf(op, TT_ERR_BACKEND_UNAVAILABLE, "key",
               "the idempotency record kept changing while it was being created; retry");
}

static void expired_deleted(struct tt_ledger_op *op, struct tt_orm_result *r) {
  /* Deleted, already gone, or rewritten by another caller: try again. */
  if (r->status == 0 || r->err.code == TT_ERR_ITEM_NOT_FOUND ||
      r->err.code == TT_ERR_VERSION_CONFLICT)
    retry_or_fail(op);
  else
    ledger_fail_result(op, r);
}

static void duplicate_read(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (ledger_failed_with(r, TT_ERR_ITEM_NOT_FOUND)) {
    retry_or_fail(op); /* deleted since our create failed */
    return;
  }
  if (!ledger_ok(op, r))
    return;
  int64_t ttl = 0, version = 0;
  /* DynamoDB deletes expired items only eventually and still returns them:
   * an expired record counts as absent. Delete it at the version we read
   * (nobody else's newer write is lost) and create ours. */
  if (ledger_result_int(r, "ttl", &ttl) == 0 && ttl > 0 && ttl < op->w.now_s &&
      ledger_result_int(r, "version", &version) == 0) {
    struct ledger_item_args a = {.kind = TT_ORM_OP_DELETE, .model = TT_LEDGER_MODEL_REQUEST,
                                 .sk = op->w.sk, .has_expected = true,
                                 .expected = version};
    ledger_item(op, &a, expired_deleted);
    return;
  }
  const char *status = ledger_result_str(r, "status");
  if (status == NULL || strcmp(status, "COMPLETED") != 0) {
    answer_outcome(op, 200, "already_in_progress", NULL);
    return;
  }
  answer_outcome(op, 200, "already_completed", r);
}

static void created(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (ledger_failed_with(r, TT_ERR_CONDITION_FAILED))
    ledger_get(op, TT_LEDGER_MODEL_REQUEST, op->w.sk, duplicate_read);
  else if (ledger_ok(op, r))
    answer_outcome(op, 201, "created", NULL);
}

static void create_request(struct tt_ledger_op *op) {
  struct ledger_item_args a = {.kind = TT_ORM_OP_CREATE, .model = TT_LEDGER_MODEL_REQUEST};
  ledger_set(&a, TT_EXPR_UPD_SET, "pk", op->w.pk, 0);
  ledger_set(&a, TT_EXPR_UPD_SET, "sk", op->w.sk, 0);
  ledger_set(&a, TT_EXPR_UPD_SET, "job_id", op->job_id, 0);
  ledger_set(&a, TT_EXPR_UPD_SET, "idempotency_key", op->key, 0);
  ledger_set(&a, TT_EXPR_UPD_SET, "status", "IN_PROGRESS", 0);
  ledger_set(&a, TT_EXPR_UPD_SET, "ttl", NULL, op->w.ttl);
  ledger_item(op, &a, created);
}

/* ---- complete ------------------------------------------------------------ */

static void already_completed(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (ledger_ok_or(op, r, TT_ERR_ITEM_NOT_FOUND, TT_ERR_ITEM_NOT_FOUND, "key",
                   "no idempotency request has this key in this job; create it first"))
    answer_outcome(op, 200, "already_completed", r);
}

static void completed(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (ledger_failed_with(r, TT_ERR_CONDITION_FAILED)) /* the first completion stands */
    ledger_get(op, TT_LEDGER_MODEL_REQUEST, op->w.sk, already_completed);
  else if (ledger_ok_or(op, r, TT_ERR_ITEM_NOT_FOUND, TT_ERR_ITEM_NOT_FOUND, "key",
                        "no idempotency request has this key in this job; create it first "
                        "with POST /v1/jobs/{id}/requests/{key}"))
    answer_outcome(op, 200, "completed", r);
}

static void complete_request(struct tt_ledger_op *op) {
  static const char *const members[] = {"result", "error", NULL};
  struct tt_error err;
  const json_t *result = json_object_get(op->body, "result");
  json_t *error = NULL, *value = NULL;
  /* The stored values, typed once as the update's set_if_not_exists
   * actions: the result's first (it comes first), then the error's. */
  int rc = ledger_body_members(op->body, members, &err) != 0 ||
           ledger_sanitize_envelope(json_object_get(op->body, "error"), &error, &err) != 0 ||
           (result && !json_is_null(result) &&
            (ledger_sanitize_value(result, &value, &err) != 0 ||
             tt_logical_to_av(value, TT_AV_S, TT_LOGICAL_JSON, "set_if_not_exists.result",
                              &op->w.value, &err) != 0)) ||
           (error && tt_logical_to_av(error, TT_AV_M, 0, "set_if_not_exists.error",
                                      &op->w.error, &err) != 0);
  json_decref(error);
  json_decref(value);
  if (rc != 0) {
    ledger_fail(op, &err, NULL);
    return;
  }
  char now[TT_ORM_TIME_MAX];
  ledger_now_text(op, now, sizeof(now));
  /* Only an IN_PROGRESS request completes; a second completion reads the
   * first one back. set_if_not_exists keeps a stored result even if a
   * writer outside the ledger changed the status. */
  static const char *const in_progress = "IN_PROGRESS";
  struct tt_cond *cond = ledger_cmp("status", TT_COND_EQ, 1, &in_progress);
  struct ledger_item_args a = {.kind = TT_ORM_OP_UPDATE, .model = TT_LEDGER_MODEL_REQUEST,
                               .sk = op->w.sk, .cond = cond, .oom = !cond};
  ledger_set(&a, TT_EXPR_UPD_SET, "status", "COMPLETED", 0);
  ledger_set(&a, TT_EXPR_UPD_SET_IF_NOT_EXISTS, "completed_at", now, 0);
  if (op->w.value.type == TT_AV_S)
    ledger_set_av(&a, TT_EXPR_UPD_SET_IF_NOT_EXISTS, "result", &op->w.value);
  if (op->w.error.type == TT_AV_M)
    ledger_set_av(&a, TT_EXPR_UPD_SET_IF_NOT_EXISTS, "error", &op->w.error);
  ledger_item(op, &a, completed);
}

void ledger_request_start(struct tt_ledger_op *op) {
  struct tt_error err;
  if (op->kind == TT_LEDGER_REQUEST_COMPLETE) {
    complete_request(op);
    return;
  }
  static const char *const members[] = {"ttl_seconds", NULL};
  int64_t ttl_seconds = TT_LEDGER_REQUEST_TTL_SECONDS;
  if (ledger_body_members(op->body, members, &err) != 0 ||
      ledger_body_int(op->body, "ttl_seconds", 1, TT_LEDGER_MAX_TTL_SECONDS, NULL, &ttl_seconds,
                      &err) < 0) {
    ledger_fail(op, &err, NULL);
    return;
  }
  op->w.ttl = op->w.now_s + ttl_seconds;
  create_request(op);
}
