/* SPDX-License-Identifier: Apache-2.0 */
/* lease.c -- job leases: one LOCK item per job, acquired, refreshed and
 * released by its owner under conditions on the daemon's clock, so that only
 * one worker processes a job at a time. */
#include <string.h>

#include "ledger/internal.h"

#define RELEASE_ATTEMPTS 3

static const char *const lease_members[] = {"owner", "duration_seconds", NULL};

/* Reads owner and duration_seconds. Returns 0 or -1 after answering. */
static int lease_args(struct tt_ledger_op *op) {
  struct tt_error err;
  const char *owner = NULL;
  size_t len = 0;
  int has_owner, has_duration;
  if (ledger_body_members(op->body, lease_members, &err) != 0 ||
      (has_owner = ledger_body_str(op->body, "owner", &owner, &len, &err)) < 0 ||
      (!has_owner &&
       tt_error_set(&err, TT_ERR_VALIDATION, "owner", "owner is required: who holds the lease")) ||
      tt_ledger_check_id(owner, len, "owner", &err) != 0 ||
      (has_duration = ledger_body_int(op->body, "duration_seconds", 1,
                                      TT_LEDGER_MAX_LEASE_SECONDS, &op->w.duration, &err)) < 0 ||
      (!has_duration && tt_error_set(&err, TT_ERR_VALIDATION, "duration_seconds",
                                     "duration_seconds is required: how long the lease lasts"))) {
    ledger_fail(op, &err, NULL);
    return -1;
  }
  op->owner = owner;
  return 0;
}

static json_t *cond(const char *attr, const char *opname, json_t *value) {
  if (value == NULL)
    return json_pack("{s:s,s:s}", "attr", attr, "op", opname);
  return json_pack("{s:s,s:s,s:o}", "attr", attr, "op", opname, "value", value);
}

/* The lease fields every successful write sets. */
static json_t *lease_set(struct tt_ledger_op *op) {
  int64_t expires = op->w.now_s + op->w.duration;
  return json_pack("{s:o,s:I,s:I}", "owner", ledger_str(op->owner), "lease_expires_at",
                   (json_int_t)expires, "ttl",
                   (json_int_t)(expires + TT_LEDGER_LOCK_TTL_GRACE_SECONDS));
}

static void answer_lease(struct tt_ledger_op *op) {
  json_t *out = json_pack("{s:o,s:o,s:I}", "job_id", ledger_str(op->job_id), "owner",
                          ledger_str(op->owner), "expires_at",
                          (json_int_t)(op->w.now_s + op->w.duration));
  if (out == NULL)
    ledger_failf(op, TT_ERR_INTERNAL, NULL, "out of memory");
  else
    ledger_answer(op, 200, out);
}

/* ---- acquire: the job must exist; then one conditional upsert ------------ */

static void acquired(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (r->status == 0)
    answer_lease(op);
  else if (r->err.code == TT_ERR_CONDITION_FAILED)
    ledger_failf(op, TT_ERR_LEASE_HELD, "owner",
                 "another owner holds an unexpired lease on this job; retry after it expires");
  else
    ledger_fail_result(op, r);
}

static void acquire_job_read(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (r->status != 0) {
    if (r->err.code == TT_ERR_ITEM_NOT_FOUND)
      ledger_failf(op, TT_ERR_JOB_NOT_FOUND, "job_id", "no job has this job_id");
    else
      ledger_fail_result(op, r);
    return;
  }
  /* Free (no lock item), expired, or already ours. */
  json_t *c = json_pack(
      "{s:[o,o,o]}", "or", cond("pk", "not_exists", NULL),
      cond("lease_expires_at", "<", json_integer((json_int_t)op->w.now_s)),
      cond("owner", "=", ledger_str(op->owner)));
  json_t *set = lease_set(op);
  json_t *body = c && set ? json_pack("{s:o,s:{s:o},s:o}", "set", set, "set_if_not_exists",
                                      "job_id", ledger_str(op->job_id), "condition", c)
                          : NULL;
  if (body == NULL) {
    if (!(c && set)) {
      json_decref(c);
      json_decref(set);
    }
    ledger_failf(op, TT_ERR_INTERNAL, NULL, "out of memory");
    return;
  }
  struct ledger_item_args a = {.kind = TT_ORM_OP_UPDATE, .model = TT_LEDGER_MODEL_LOCK,
                               .sk = "LOCK", .body = body, .upsert = true};
  ledger_item(op, &a, acquired);
}

/* ---- refresh: only the owner of an unexpired lease ----------------------- */

static void refreshed(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (r->status == 0)
    answer_lease(op);
  else if (r->err.code == TT_ERR_CONDITION_FAILED || r->err.code == TT_ERR_ITEM_NOT_FOUND)
    ledger_failf(op, TT_ERR_LEASE_NOT_OWNED, "owner",
                 "this owner does not hold an unexpired lease on this job; acquire it again");
  else
    ledger_fail_result(op, r);
}

static void refresh(struct tt_ledger_op *op) {
  json_t *c = json_pack("[o,o]", cond("owner", "=", ledger_str(op->owner)),
                        cond("lease_expires_at", ">=", json_integer((json_int_t)op->w.now_s)));
  json_t *set = lease_set(op);
  json_t *body = c && set ? json_pack("{s:o,s:o}", "set", set, "condition", c) : NULL;
  if (body == NULL) {
    if (!(c && set)) {
      json_decref(c);
      json_decref(set);
    }
    ledger_failf(op, TT_ERR_INTERNAL, NULL, "out of memory");
    return;
  }
  /* Not an upsert: the ORM adds attribute_exists, so a missing lock is
   * ItemNotFound, which is "not owned" too. */
  struct ledger_item_args a = {.kind = TT_ORM_OP_UPDATE, .model = TT_LEDGER_MODEL_LOCK,
                               .sk = "LOCK", .body = body};
  ledger_item(op, &a, refreshed);
}

/* ---- release: read the lock, then delete it at the version we read ------ */
/* The ORM's delete takes a version but no condition, so ownership is
 * checked on a consistent read and the delete is guarded by the lock's
 * version: any write in between (a refresh, a takeover) makes it fail, and
 * the release starts over. */

static void release_read(struct tt_ledger_op *op);

static void released(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (r->status == 0 || r->err.code == TT_ERR_ITEM_NOT_FOUND) {
    ledger_answer(op, 204, NULL);
    return;
  }
  if (r->err.code == TT_ERR_VERSION_CONFLICT) {
    if (++op->w.attempts < RELEASE_ATTEMPTS) {
      release_read(op);
      return;
    }
    ledger_failf(op, TT_ERR_VERSION_CONFLICT, "owner",
                 "the lease kept changing while it was being released; retry");
    return;
  }
  ledger_fail_result(op, r);
}

static void release_lock_read(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (r->status != 0) {
    if (r->err.code == TT_ERR_ITEM_NOT_FOUND)
      ledger_answer(op, 204, NULL); /* already gone */
    else
      ledger_fail_result(op, r);
    return;
  }
  json_t *lock = ledger_result_json(r);
  const char *owner = ledger_item_str(lock, "owner");
  int64_t version = 0;
  bool ours = owner && strcmp(owner, op->owner) == 0;
  bool versioned = ledger_item_int(lock, "version", &version) == 0;
  json_decref(lock);
  if (!ours) {
    ledger_failf(op, TT_ERR_LEASE_NOT_OWNED, "owner",
                 "another owner holds the lease on this job; only its owner can release it");
    return;
  }
  if (!versioned) {
    ledger_failf(op, TT_ERR_INTERNAL, NULL, "the lock item has no version");
    return;
  }
  struct ledger_item_args a = {.kind = TT_ORM_OP_DELETE, .model = TT_LEDGER_MODEL_LOCK,
                               .sk = "LOCK", .has_expected = true, .expected = version};
  ledger_item(op, &a, released);
}

static void release_read(struct tt_ledger_op *op) {
  struct ledger_item_args a = {.kind = TT_ORM_OP_GET, .model = TT_LEDGER_MODEL_LOCK,
                               .sk = "LOCK", .consistent = true};
  ledger_item(op, &a, release_lock_read);
}

void ledger_lease_start(struct tt_ledger_op *op) {
  if (op->kind == TT_LEDGER_LEASE_RELEASE) {
    struct tt_error err;
    if (op->owner == NULL) {
      ledger_failf(op, TT_ERR_VALIDATION, "owner",
                   "owner is required: DELETE .../lease?owner=<who holds it>");
      return;
    }
    if (tt_ledger_check_id(op->owner, strlen(op->owner), "owner", &err) != 0) {
      ledger_fail(op, &err, NULL);
      return;
    }
    release_read(op);
    return;
  }
  if (lease_args(op) != 0)
    return;
  if (op->kind == TT_LEDGER_LEASE_REFRESH) {
    refresh(op);
    return;
  }
  struct ledger_item_args a = {.kind = TT_ORM_OP_GET, .model = TT_LEDGER_MODEL_META,
                               .sk = "META", .consistent = true};
  ledger_item(op, &a, acquire_job_read);
}
