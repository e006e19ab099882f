/* SPDX-License-Identifier: Apache-2.0 */
/* lease.c -- job leases: one LOCK item per job, acquired, refreshed and
 * released by its owner under conditions on the daemon's clock, so that only
 * one worker processes a job at a time; the lease rules here also serve
 * semaphore.c's slots. */
#include <string.h>

#include "ledger/internal.h"

#define RELEASE_ATTEMPTS 3

/* ---- the lease rules, shared with semaphore.c's slots ------------------- */

/* A comparison of attr with room for n values (zeroed). */
static struct tt_cond *cmp_new(const char *attr, enum tt_cond_op op, size_t n) {
  struct tt_cond *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return NULL;
  *c = (struct tt_cond){.kind = TT_COND_CMP, .op = op, .path = strdup(attr)};
  if (n && (c->values = calloc(n, sizeof(*c->values))) != NULL)
    c->n_values = n;
  if (c->path == NULL || c->n_values != n) {
    tt_cond_free(c);
    return NULL;
  }
  return c;
}

struct tt_cond *ledger_cmp(const char *attr, enum tt_cond_op op, size_t n,
                           const char *const *values) {
  struct tt_cond *c = cmp_new(attr, op, n);
  for (size_t i = 0; c && i < n; i++)
    if (tt_av_string(&c->values[i], values[i], strlen(values[i])) != 0) {
      tt_cond_free(c);
      c = NULL;
    }
  return c;
}

struct tt_cond *ledger_cmp_int(const char *attr, enum tt_cond_op op, int64_t value) {
  struct tt_cond *c = cmp_new(attr, op, 1);
  if (c && tt_av_number_int(&c->values[0], value) != 0) {
    tt_cond_free(c);
    c = NULL;
  }
  return c;
}

struct tt_cond *ledger_join(enum tt_cond_kind kind, size_t n, struct tt_cond **parts) {
  struct tt_cond *c = calloc(1, sizeof(*c)), *kids = calloc(n, sizeof(*kids));
  bool ok = c && kids;
  for (size_t i = 0; i < n; i++)
    ok = ok && parts[i];
  for (size_t i = 0; i < n; i++) {
    if (ok)
      kids[i] = *parts[i];
    else
      tt_cond_clear(parts[i]);
    free(parts[i]);
  }
  if (!ok) {
    free(c);
    free(kids);
    return NULL;
  }
  *c = (struct tt_cond){.kind = kind, .kids = kids, .n_kids = n};
  return c;
}

int ledger_key(struct tt_key_cond *k, const char *pk_attr, const char *pk, const char *sk_attr,
               enum tt_cond_op sk_op, const char *sk) {
  const char *attrs[2] = {pk_attr, sk_attr}, *values[2] = {pk, sk};
  enum tt_cond_op ops[2] = {TT_COND_EQ, sk_op};
  memset(k, 0, sizeof(*k));
  for (k->n = 0; k->n < 2 && attrs[k->n]; k->n++) {
    struct tt_key_cond_entry *e = &k->e[k->n];
    e->op = ops[k->n];
    if ((e->attr = strdup(attrs[k->n])) == NULL ||
        tt_av_string(&e->v[0], values[k->n], strlen(values[k->n])) != 0) {
      k->n++;
      tt_key_cond_clear(k);
      return -1;
    }
  }
  return 0;
}

/* What differs between a job's lease (its JobLock item) and a semaphore's
 * (the SemaphoreLease item of a slot). */
static const struct lease_item {
  const char *model;
  const char *name;        /* of the item, in "the <name> item has no version" */
  const char *what;        /* that kept changing while it was being released */
  const char *not_renewed; /* LeaseNotOwned of a refresh */
  const char *not_freed;   /* LeaseNotOwned of a release */
  const char *holder;      /* what a missing owner of an acquire or refresh is */
  const char *release;     /* the usage a release without ?owner= is told */
} lease_items[] = {
    {TT_LEDGER_MODEL_LOCK, "lock", "lease",
     "this owner does not hold an unexpired lease on this job; acquire it again",
     "another owner holds the lease on this job; only its owner can release it",
     "who holds the lease", "DELETE .../lease?owner=<who holds it>"},
    {TT_LEDGER_MODEL_SEMAPHORE, "slot", "slot",
     "this owner does not hold an unexpired lease on this slot; acquire again",
     "another owner holds this slot; only its owner can release it", "who holds the slot",
     "DELETE .../lease?owner=<who holds it>&slot=<slot>"},
};

static bool on_slot(const struct tt_ledger_op *op) {
  return op->kind == TT_LEDGER_SEM_ACQUIRE || op->kind == TT_LEDGER_SEM_REFRESH ||
         op->kind == TT_LEDGER_SEM_RELEASE;
}

static const struct lease_item *lease_item(const struct tt_ledger_op *op) {
  return &lease_items[on_slot(op)];
}

/* Sets op->w.sk to the sort key of the lease item: LOCK, or SLOT# and nine
 * digits, so that slots sort by number (AppTheory's SemaphoreSlotSortKey);
 * NULL when out of memory. */
static void lease_sk(struct tt_ledger_op *op) {
  op->w.sk = on_slot(op) ? ledger_fmt(op, "SLOT#%09d", (int)op->w.slot) : "LOCK";
}

int ledger_lease_args(struct tt_ledger_op *op) {
  static const char *const members[][4] = {{"owner", "duration_seconds"},
                                           {"owner", "limit", "duration_seconds"},
                                           {"owner", "slot", "duration_seconds"}};
  bool limit = op->kind == TT_LEDGER_SEM_ACQUIRE, slot = op->kind == TT_LEDGER_SEM_REFRESH;
  struct tt_error err;
  const char *owner = NULL;
  size_t len = 0;
  if (ledger_body_members(op->body, members[limit ? 1 : slot ? 2 : 0], &err) != 0 ||
      ledger_body_str(op->body, "owner", lease_item(op)->holder, &owner, &len, &err) < 0 ||
      tt_ledger_check_id(owner, len, "owner", &err) != 0 ||
      (limit && ledger_body_int(op->body, "limit", 1, TT_LEDGER_MAX_SEM_LIMIT,
                                "how many owners may hold the semaphore at once", &op->w.limit,
                                &err) < 0) ||
      (slot && ledger_body_int(op->body, "slot", 0, TT_LEDGER_MAX_SEM_LIMIT - 1,
                               "the slot the acquire answered", &op->w.slot, &err) < 0) ||
      ledger_body_int(op->body, "duration_seconds", 1, TT_LEDGER_MAX_LEASE_SECONDS,
                      "how long the lease lasts", &op->w.duration, &err) < 0) {
    ledger_fail(op, &err, NULL);
    return -1;
  }
  op->owner = owner;
  return 0;
}

int ledger_lease_query_owner(struct tt_ledger_op *op) {
  struct tt_error err;
  if (op->owner == NULL) {
    ledger_failf(op, TT_ERR_VALIDATION, "owner", "owner is required: %s", lease_item(op)->release);
    return -1;
  }
  if (tt_ledger_check_id(op->owner, strlen(op->owner), "owner", &err) != 0) {
    ledger_fail(op, &err, NULL);
    return -1;
  }
  return 0;
}

void ledger_lease_answer(struct tt_ledger_op *op) {
  json_int_t expires = (json_int_t)(op->w.now_s + op->w.duration);
  if (on_slot(op))
    ledger_answer(op, 200,
                  json_pack("{s:o,s:o,s:o,s:I,s:I}", "scope", ledger_str(op->scope), "subject",
                            ledger_str(op->subject), "owner", ledger_str(op->owner), "slot",
                            (json_int_t)op->w.slot, "expires_at", expires));
  else
    ledger_answer(op, 200, json_pack("{s:o,s:o,s:I}", "job_id", ledger_str(op->job_id), "owner",
                                     ledger_str(op->owner), "expires_at", expires));
}

/* Starts the update of the lease item: the lease fields that take
 * it for op->owner until now + duration, as an upsert under "no item,
 * expired, or already ours" that keeps the item's identity (`take`), or
 * that extend op->owner's unexpired lease under "ours and not expired"
 * (!take). */
static void lease_write(struct tt_ledger_op *op, bool take, ledger_next_fn next) {
  lease_sk(op);
  int64_t expires = op->w.now_s + op->w.duration;
  struct ledger_item_args a = {.kind = TT_ORM_OP_UPDATE, .model = lease_item(op)->model,
                               .sk = op->w.sk, .upsert = take, .oom = !op->w.sk};
  ledger_set(&a, TT_EXPR_UPD_SET, "owner", op->owner, 0);
  ledger_set(&a, TT_EXPR_UPD_SET, "lease_expires_at", NULL, expires);
  ledger_set(&a, TT_EXPR_UPD_SET, "ttl", NULL, expires + TT_LEDGER_LOCK_TTL_GRACE_SECONDS);
  if (take) /* free (no item), expired, or already ours */
    a.cond = ledger_join(TT_COND_OR, 3,
                         (struct tt_cond *[]){
                             ledger_cmp("pk", TT_COND_NOT_EXISTS, 0, NULL),
                             ledger_cmp_int("lease_expires_at", TT_COND_LT, op->w.now_s),
                             ledger_cmp("owner", TT_COND_EQ, 1, &op->owner)});
  else
    a.cond = ledger_join(TT_COND_AND, 2,
                         (struct tt_cond *[]){
                             ledger_cmp("owner", TT_COND_EQ, 1, &op->owner),
                             ledger_cmp_int("lease_expires_at", TT_COND_GE, op->w.now_s)});
  a.oom |= a.cond == NULL;
  if (take && on_slot(op)) {
    ledger_set(&a, TT_EXPR_UPD_SET_IF_NOT_EXISTS, "scope", op->scope, 0);
    ledger_set(&a, TT_EXPR_UPD_SET_IF_NOT_EXISTS, "subject", op->subject, 0);
    ledger_set(&a, TT_EXPR_UPD_SET_IF_NOT_EXISTS, "slot", NULL, op->w.slot);
  } else if (take) {
    ledger_set(&a, TT_EXPR_UPD_SET_IF_NOT_EXISTS, "job_id", op->job_id, 0);
  }
  ledger_item(op, &a, next);
}

void ledger_lease_take(struct tt_ledger_op *op, ledger_next_fn next) {
  lease_write(op, true, next);
}

/* ---- refresh: only the owner of an unexpired lease ----------------------- */

static void refreshed(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (ledger_failed_with(r, TT_ERR_CONDITION_FAILED) ||
      ledger_failed_with(r, TT_ERR_ITEM_NOT_FOUND))
    ledger_failf(op, TT_ERR_LEASE_NOT_OWNED, "owner", "%s", lease_item(op)->not_renewed);
  else if (ledger_ok(op, r))
    ledger_lease_answer(op);
}

void ledger_lease_refresh(struct tt_ledger_op *op) {
  /* Not an upsert: the ORM adds attribute_exists, so a missing item is
   * ItemNotFound, which is "not owned" too. */
  lease_write(op, false, refreshed);
}

/* ---- release: read the item, then delete it at the version we read ------ */
/* The ORM's delete takes a version but no condition, so ownership is
 * checked on a consistent read and the delete is guarded by the item's
 * version: any write in between (a refresh, a takeover) makes it fail, and
 * the release starts over. */

static void released(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (r->status == 0 || r->err.code == TT_ERR_ITEM_NOT_FOUND)
    ledger_answer(op, 204, NULL);
  else if (r->err.code != TT_ERR_VERSION_CONFLICT)
    ledger_fail_result(op, r);
  else if (++op->w.attempts < RELEASE_ATTEMPTS)
    ledger_lease_release(op);
  else
    ledger_failf(op, TT_ERR_VERSION_CONFLICT, "owner",
                 "the %s kept changing while it was being released; retry",
                 lease_item(op)->what);
}

static void release_item_read(struct tt_ledger_op *op, struct tt_orm_result *r) {
  const struct lease_item *li = lease_item(op);
  const char *owner = ledger_result_str(r, "owner");
  int64_t version = 0;
  if (ledger_failed_with(r, TT_ERR_ITEM_NOT_FOUND)) {
    ledger_answer(op, 204, NULL); /* already gone */
  } else if (!ledger_ok(op, r)) {
    return;
  } else if (owner == NULL || strcmp(owner, op->owner) != 0) {
    ledger_failf(op, TT_ERR_LEASE_NOT_OWNED, "owner", "%s", li->not_freed);
  } else if (ledger_result_int(r, "version", &version) != 0) {
    ledger_failf(op, TT_ERR_INTERNAL, NULL, "the %s item has no version", li->name);
  } else {
    struct ledger_item_args a = {.kind = TT_ORM_OP_DELETE, .model = li->model, .sk = op->w.sk,
                                 .has_expected = true, .expected = version};
    ledger_item(op, &a, released);
  }
}

void ledger_lease_release(struct tt_ledger_op *op) {
  lease_sk(op);
  ledger_get(op, lease_item(op)->model, op->w.sk, release_item_read);
}

/* ---- job leases ---------------------------------------------------------- */

/* ---- acquire: the job must exist; then one conditional upsert ------------ */

static void acquired(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (ledger_ok_or(op, r, TT_ERR_CONDITION_FAILED, TT_ERR_LEASE_HELD, "owner",
                   "another owner holds an unexpired lease on this job; retry after it expires"))
    ledger_lease_answer(op);
}

static void acquire_job_read(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (ledger_ok_or(op, r, TT_ERR_ITEM_NOT_FOUND, TT_ERR_JOB_NOT_FOUND, "job_id",
                   "no job has this job_id"))
    ledger_lease_take(op, acquired);
}

void ledger_lease_start(struct tt_ledger_op *op) {
  if (op->kind == TT_LEDGER_LEASE_RELEASE ? ledger_lease_query_owner(op) != 0
                                          : ledger_lease_args(op) != 0)
    return;
  if (op->kind == TT_LEDGER_LEASE_RELEASE)
    ledger_lease_release(op);
  else if (op->kind == TT_LEDGER_LEASE_REFRESH)
    ledger_lease_refresh(op);
  else
    ledger_get(op, TT_LEDGER_MODEL_META, "META", acquire_job_read);
}
