/* SPDX-License-Identifier: Apache-2.0 */
/* fault.h -- a fault-injecting decorator over any backend (tests only):
 * rules make matching calls fail with a classified DynamoDB error, leave
 * batch items unprocessed, or wait before they run. */
#ifndef TT_BACKEND_FAULT_H
#define TT_BACKEND_FAULT_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "backend/backend.h"
#include "util/error.h"

/* Limits of one rule (the HTTP layer checks against the same numbers). */
#define TT_FAULT_MAX_RULES 64
#define TT_FAULT_MAX_TIMES 1000000u
#define TT_FAULT_MAX_LATENCY_MS 600000u
#define TT_FAULT_MAX_UNPROCESSED 100000u
#define TT_FAULT_MAX_RETRY_AFTER_MS 3600000u

struct tt_fault_backend;

/* What a rule does. `error` is one of
 *   "ProvisionedThroughputExceededException" (400, throttling),
 *   "InternalServerError" (500), "ServiceUnavailable" (503),
 *   "Timeout" (transport timeout, status 0), "ConnectionReset" (status 0),
 *   "ConditionalCheckFailedException" (400, never retried),
 *   "RequestEntityTooLarge" (413, never retried: the body is too large),
 *   "Unprocessed" (BatchWriteItem/BatchGetItem only: part of the items are
 *   returned in UnprocessedItems/UnprocessedKeys and not executed),
 * or NULL for a latency-only rule. */
struct tt_fault_spec {
  const char *op;       /* DynamoDB operation name ("PutItem") or "*" */
  const char *table;    /* only calls touching this table; NULL = any */
  const char *model;    /* a label reported back (GET); NULL = none */
  const char *error;    /* see above; NULL = no error */
  unsigned times;       /* calls affected before the rule expires, >= 1 */
  uint64_t latency_ms;  /* delay before the call runs or fails */
  unsigned unprocessed; /* "Unprocessed": items left out per call; 0 = half (rounded up) */
  uint32_t retry_after_ms; /* an error's x-amz-retry-after (ms); 0 = none */
};

/* A rule as reported back: strings borrowed from the backend, valid until
 * the next tt_fault_add / tt_fault_clear. */
struct tt_fault_rule_info {
  unsigned id;
  const char *op;
  const char *table; /* NULL = any */
  const char *model; /* NULL = none */
  const char *error; /* NULL = latency only */
  unsigned times;
  unsigned fired; /* matching calls so far; the rule expired when fired == times */
  uint64_t latency_ms;
  unsigned unprocessed;
  uint32_t retry_after_ms;
};

/* Wraps `inner` (stolen on success: close and destroy of the decorator
 * close and destroy it) with a decorator bound to `loop`. Calls pass
 * through untouched until a rule matches. On success *out is the new
 * backend; returns 0, or UV_ENOMEM / a libuv error (then `inner` is still
 * the caller's and nothing else was allocated). */
int tt_fault_backend_new(struct tt_backend *inner, uv_loop_t *loop, struct tt_backend **out);

/* The decorator behind a backend made by tt_fault_backend_new, or NULL
 * when `b` is some other backend. Borrowed. */
struct tt_fault_backend *tt_fault_backend_of(struct tt_backend *b);

/* Adds a rule (spec and its strings are copied). Rules are tried oldest
 * first and at most one fires per call. Returns 0 with *id set (>= 1; id
 * may be NULL), or -1 with a ValidationError whose field names the spec
 * member ("op", "error", "times", "latency_ms", "unprocessed") or "faults"
 * when TT_FAULT_MAX_RULES rules exist and none has expired. Expired rules
 * stay listed (with their counts) until clear, or until room is needed. */
int tt_fault_add(struct tt_fault_backend *fb, const struct tt_fault_spec *spec, unsigned *id,
                 struct tt_error *err);

/* Removes every rule. Calls that a rule already delayed or failed finish
 * as they were told. */
void tt_fault_clear(struct tt_fault_backend *fb);

/* The number of listed rules, and the i-th (oldest first) into *out.
 * Returns 0, or -1 when i is out of range. */
size_t tt_fault_rule_count(const struct tt_fault_backend *fb);
int tt_fault_rule_get(const struct tt_fault_backend *fb, size_t i, struct tt_fault_rule_info *out);

/* How many calls rule `id` affected (0 for an unknown id), and how many
 * calls all rules affected since the decorator was made (never reset). */
unsigned tt_fault_fired(const struct tt_fault_backend *fb, unsigned id);
uint64_t tt_fault_fired_total(const struct tt_fault_backend *fb);

#endif
