/* SPDX-License-Identifier: Apache-2.0 */
/* internal.h -- what the ledger's files share and nobody else calls: the
 * step runner over ORM operations, answers, and input helpers. */
#ifndef TT_LEDGER_INTERNAL_H
#define TT_LEDGER_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "ledger/ledger.h"
#include "orm/items.h"
#include "orm/query.h"

/* What runs when a step's ORM operation finished; `r` is its result
 * (borrowed: it is freed when this returns). The function either starts
 * the next step or answers (ledger_answer / ledger_fail). */
typedef void (*ledger_next_fn)(struct tt_ledger_op *op, struct tt_orm_result *r);

/* One single-item step. Its typed input (the CREATE item, the UPDATE
 * actions) is filled with ledger_set; the ORM adds the lifecycle
 * attributes when the step starts. */
struct ledger_item_args {
  enum tt_orm_item_kind kind;
  const char *model;   /* TT_LEDGER_MODEL_* */
  const char *sk;      /* sort key; the partition key is op->w.pk */
  struct tt_av item;   /* CREATE: the first n members filled (moved to the step) */
  size_t n;
  struct tt_orm_update upd; /* UPDATE: the actions, in order (moved to the step) */
  struct tt_cond *cond; /* stolen; UPDATE: its condition or NULL */
  bool upsert;         /* UPDATE */
  bool consistent;     /* GET */
  bool has_expected;   /* DELETE/UPDATE guarded by the version attribute */
  int64_t expected;
  bool oom;            /* building the args ran out of memory: the step answers so */
};

/* Adds attribute `name` to the input of a CREATE (a member; `act` unused)
 * or an UPDATE step (the action `act`; no value for REMOVE): the S value s,
 * or the N value x when s is NULL; ledger_set_av *v (stolen). Out of memory
 * sets a->oom. */
void ledger_set(struct ledger_item_args *a, enum tt_expr_update_op act, const char *name,
                const char *s, int64_t x);
void ledger_set_av(struct ledger_item_args *a, enum tt_expr_update_op act, const char *name,
                   struct tt_av *v);

/* Starts one ORM item operation as the op's next step; a's input moves to
 * the step (and is freed when it cannot start; after a->oom the op answers
 * Internal). These step helpers sit in tail position of a step (or of
 * tt_ledger_start): when the ORM operation finishes inside its start, they
 * go on to `next` before they return, as the step's completion would
 * (docs/internals/completions.md). */
void ledger_item(struct tt_ledger_op *op, struct ledger_item_args *a, ledger_next_fn next);

/* Starts the consistent read of the item `sk` (NULL: out of memory) of
 * `model` as ledger_item does. */
void ledger_get(struct tt_ledger_op *op, const char *model, const char *sk, ledger_next_fn next);

/* Starts one ORM query on `model` of the typed request `rq` (moved: its key
 * conditions and filter are the query's, freed also when it cannot start). */
void ledger_query(struct tt_ledger_op *op, const char *model, struct tt_orm_query_request *rq,
                  ledger_next_fn next);

/* Answers with `value` (stolen; dumped exactly) and finishes the op. A NULL
 * value is an empty body with 204, else out of memory (Internal). */
void ledger_answer(struct tt_ledger_op *op, unsigned http_status, json_t *value);

/* Answers with `err` (and `details`, stolen, may be NULL) and finishes. */
void ledger_fail(struct tt_ledger_op *op, const struct tt_error *err, json_t *details);

/* Formats an error and answers with it. */
void ledger_failf(struct tt_ledger_op *op, enum tt_err_code code, const char *field,
                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Answers with the failure of an ORM result (its error and details). */
void ledger_fail_result(struct tt_ledger_op *op, struct tt_orm_result *r);

/* Whether the step's result `r` succeeded. Otherwise answers, as `code`
 * naming `field` with the message `msg` when r failed with `when` (not
 * TT_OK), else with r's own failure, and returns false. */
bool ledger_ok_or(struct tt_ledger_op *op, struct tt_orm_result *r, enum tt_err_code when,
                  enum tt_err_code code, const char *field, const char *msg);
static inline bool ledger_ok(struct tt_ledger_op *op, struct tt_orm_result *r) {
  return ledger_ok_or(op, r, TT_OK, TT_OK, NULL, NULL);
}

/* Whether r failed with `code`. */
static inline bool ledger_failed_with(const struct tt_orm_result *r, enum tt_err_code code) {
  return r->status != 0 && r->err.code == code;
}

/* The page of a query step's result, or NULL after answering its failure. */
const struct tt_orm_page *ledger_page(struct tt_ledger_op *op, struct tt_orm_result *r);

/* ledger_item_str and ledger_item_int of a typed item answer (none when
 * the result holds no item). */
const char *ledger_result_str(const struct tt_orm_result *r, const char *name);
int ledger_result_int(const struct tt_orm_result *r, const char *name, int64_t *out);

/* The printf-style text in the op's arena, or NULL when out of memory. */
const char *ledger_fmt(struct tt_ledger_op *op, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A new real JSON string of a C string (NULL when out of memory). */
json_t *ledger_str(const char *s);

/* The S attribute `name` of a stored item (an M; NULL gives NULL), or NULL
 * when it has no such S attribute. */
const char *ledger_item_str(const struct tt_av *item, const char *name);

/* The N attribute `name` of a stored item as a whole number into *out.
 * Returns 0, or -1 when absent, not an N or not a whole int64. */
int ledger_item_int(const struct tt_av *item, const char *name, int64_t *out);

/* Formats the op's clock as RFC3339Nano (TT_ORM_TIME_MAX bytes). */
void ledger_now_text(const struct tt_ledger_op *op, char *out, size_t cap);

/* Sanitizes the error envelope `in` (a tt_json_parse tree) into *out (new
 * reference): type/code/message must be strings without NUL bytes, the rest
 * is tt_sanitize_error_envelope's. NULL, JSON null and an envelope left
 * empty (omit_empty: never stored) give *out = NULL. Returns 0 or -1 with a
 * ValidationError naming error.<member>. The caller turns it into the
 * stored attribute's typed value (an M) once. */
int ledger_sanitize_envelope(const json_t *in, json_t **out, struct tt_error *err);

/* Sanitizes any JSON value (a result) into *out (new reference), keeping
 * exact numbers. Returns 0 or -1 (Internal). */
int ledger_sanitize_value(const json_t *in, json_t **out, struct tt_error *err);

/* Reads the integer member `name` of the body into *out, checked against
 * [min, max]. Returns 1 when present, 0 when absent (or null), -1 with a
 * ValidationError ("<name> is required: <required>" when absent and
 * `required` is not NULL). */
int ledger_body_int(const json_t *body, const char *name, int64_t min, int64_t max,
                    const char *required, int64_t *out, struct tt_error *err);

/* Reads the string member `name` of the body. Returns 1 and sets *out
 * (borrowed from the body), 0 when absent or null, -1 with a
 * ValidationError when it is not a string (or is absent and `required`, as
 * ledger_body_int). */
int ledger_body_str(const json_t *body, const char *name, const char *required,
                    const char **out, size_t *len, struct tt_error *err);

/* Checks that every member of the body is one of the NULL-terminated
 * `names`. Returns 0 or -1 with a ValidationError naming the member. */
int ledger_body_members(const json_t *body, const char *const *names, struct tt_error *err);

/* ---- the lease rules (lease.c), shared by job leases and semaphore slots -- */

/* Reads the body of an acquire or refresh: owner (required, sets op->owner,
 * borrowed from the body), a semaphore acquire's limit (op->w.limit) or
 * refresh's slot (op->w.slot), then duration_seconds (op->w.duration), all
 * required. Returns 0, or -1 after answering. */
int ledger_lease_args(struct tt_ledger_op *op);

/* Checks the ?owner= of a release. Returns 0, or -1 after answering. */
int ledger_lease_query_owner(struct tt_ledger_op *op);

/* Typed conditions (expr/build.h), built directly: `attr op` the n string
 * values (none for exists/not_exists), `attr op` one integer, the and/or of
 * n conditions (stolen; a NULL among them fails). Each returns a new tree
 * (tt_cond_free), or NULL when out of memory. */
struct tt_cond *ledger_cmp(const char *attr, enum tt_cond_op op, size_t n,
                           const char *const *values);
struct tt_cond *ledger_cmp_int(const char *attr, enum tt_cond_op op, int64_t value);
struct tt_cond *ledger_join(enum tt_cond_kind kind, size_t n, struct tt_cond **parts);

/* Key conditions pk_attr = pk and, when sk_attr is not NULL, sk_attr sk_op
 * sk, into *k. Returns 0, or -1 when out of memory (*k cleared). */
int ledger_key(struct tt_key_cond *k, const char *pk_attr, const char *pk, const char *sk_attr,
               enum tt_cond_op sk_op, const char *sk);

/* A lease is a job's JobLock item LOCK, or for the semaphore kinds the
 * SemaphoreLease item of the slot op->w.slot. */

/* Starts the upsert that takes the lease for op->owner until now + duration
 * under "no item, expired, or already ours", writing the item's identity
 * (job_id; scope, subject and slot); `next` gets its result. */
void ledger_lease_take(struct tt_ledger_op *op, ledger_next_fn next);

/* Answers a taken or refreshed lease: {job_id | scope, subject, slot}, owner
 * and expires_at. */
void ledger_lease_answer(struct tt_ledger_op *op);

/* Extends op->owner's unexpired lease and answers it; LeaseNotOwned when
 * the condition fails or the item is gone. */
void ledger_lease_refresh(struct tt_ledger_op *op);

/* Releases op->owner's lease: a consistent read checks the owner
 * (LeaseNotOwned), then a delete at the version read; 204 when done or
 * already gone; after a version conflict it starts over, a few times before
 * it answers VersionConflict. */
void ledger_lease_release(struct tt_ledger_op *op);

/* Operation starters of the other files. */
void ledger_lease_start(struct tt_ledger_op *op);   /* lease.c */
void ledger_request_start(struct tt_ledger_op *op); /* idempotency.c */
void ledger_semaphore_start(struct tt_ledger_op *op); /* semaphore.c */

#endif
