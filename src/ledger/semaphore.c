/* SPDX-License-Identifier: Apache-2.0 */
/* semaphore.c -- leased semaphores: at most `limit` owners hold a
 * scope/subject at once, each on one SLOT# item that it acquires, refreshes
 * and releases under the same owner and expiry rules as a job lease
 * (lease.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/internal.h"

/* A consistent query of the whole semaphore: at most 256 slot items, one
 * page. */
static void read_slots(struct tt_ledger_op *op, ledger_next_fn next) {
  struct tt_orm_query_request rq = {
      .consistent = true, .has_limit = true, .limit = TT_LEDGER_MAX_SEM_LIMIT};
  if (ledger_key(&rq.key, "pk", op->w.pk, "sk", TT_COND_BEGINS_WITH, "SLOT#") != 0) {
    ledger_failf(op, TT_ERR_INTERNAL, NULL, "out of memory");
    return;
  }
  ledger_query(op, TT_LEDGER_MODEL_SEMAPHORE, &rq, next);
}

/* ---- acquire: read the slots, then one conditional write per candidate --- */
/* The read only orders the attempts: every slot is taken by a conditional
 * upsert (no item, expired, or already ours), so two owners never hold one
 * slot whatever they read. The owner's own slot comes first, which makes a
 * repeated acquire keep its slot instead of taking a second one; then the
 * slots that looked free, starting at a hash of the owner so that
 * concurrent owners spread over the slots instead of all racing for slot 0.
 * A slot that looked held is not tried: it is free again only after a
 * release or an expiry, and an acquire that races those may answer
 * LeaseHeld, as a try-acquire does. */

static void try_next_slot(struct tt_ledger_op *op);

static void slot_acquired(struct tt_ledger_op *op, struct tt_orm_result *r) {
  if (ledger_failed_with(r, TT_ERR_CONDITION_FAILED))
    try_next_slot(op); /* someone took it since the read */
  else if (ledger_ok(op, r))
    ledger_lease_answer(op);
}

static void try_next_slot(struct tt_ledger_op *op) {
  struct tt_error e;
  if (op->w.next < op->w.nslots) {
    op->w.slot = op->w.slots[op->w.next++];
    ledger_lease_take(op, slot_acquired);
    return;
  }
  tt_error_set(&e, TT_ERR_LEASE_HELD, "limit",
               "all %" PRId64 " slots of this semaphore are held by other owners; retry after "
               "one is released or expires",
               op->w.limit);
  ledger_fail(op, &e, json_pack("{s:I}", "limit", (json_int_t)op->w.limit));
}

/* FNV-1a: a stable spread of owners over the slots. */
static uint32_t owner_hash(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

enum slot_state { SLOT_FREE, SLOT_OURS, SLOT_HELD };

static void acquire_read(struct tt_ledger_op *op, struct tt_orm_result *r) {
  const struct tt_orm_page *page = ledger_page(op, r);
  if (page == NULL)
    return;
  unsigned limit = (unsigned)op->w.limit;
  unsigned char state[TT_LEDGER_MAX_SEM_LIMIT] = {0}; /* SLOT_FREE */
  for (size_t i = 0; i < page->n_items; i++) {
    const struct tt_av *it = &page->items[i];
    int64_t slot, expires;
    const char *owner = ledger_item_str(it, "owner");
    if (ledger_item_int(it, "slot", &slot) != 0 || slot < 0 || slot >= (int64_t)limit ||
        owner == NULL)
      continue; /* above this call's limit: not counted (docs/ledger.md) */
    if (strcmp(owner, op->owner) == 0)
      state[slot] = SLOT_OURS;
    else if (ledger_item_int(it, "lease_expires_at", &expires) == 0 && expires >= op->w.now_s)
      state[slot] = SLOT_HELD;
  }
  op->w.slots = tt_arena_alloc(op->arena, limit * sizeof(op->w.slots[0]));
  if (op->w.slots == NULL) {
    ledger_failf(op, TT_ERR_INTERNAL, NULL, "out of memory");
    return;
  }
  unsigned n = 0;
  for (unsigned s = 0; s < limit; s++)
    if (state[s] == SLOT_OURS)
      op->w.slots[n++] = (uint16_t)s;
  unsigned start = owner_hash(op->owner) % limit;
  for (unsigned k = 0; k < limit; k++) {
    unsigned s = (start + k) % limit;
    if (state[s] == SLOT_FREE)
      op->w.slots[n++] = (uint16_t)s;
  }
  op->w.nslots = n;
  op->w.next = 0;
  try_next_slot(op);
}

/* ---- inspect: the unexpired holders, in slot order ---------------------- */

static void inspected(struct tt_ledger_op *op, struct tt_orm_result *r) {
  const struct tt_orm_page *page = ledger_page(op, r);
  if (page == NULL)
    return;
  json_t *holders = json_array();
  for (size_t i = 0; i < page->n_items; i++) {
    const struct tt_av *it = &page->items[i];
    int64_t slot, expires;
    const char *owner = ledger_item_str(it, "owner");
    if (owner == NULL || ledger_item_int(it, "slot", &slot) != 0 ||
        ledger_item_int(it, "lease_expires_at", &expires) != 0 || expires < op->w.now_s)
      continue; /* expired: free for the next acquire */
    if (holders && json_array_append_new(holders, json_pack("{s:o,s:I,s:I}", "owner",
                                                            ledger_str(owner), "slot",
                                                            (json_int_t)slot, "expires_at",
                                                            (json_int_t)expires)) != 0) {
      json_decref(holders);
      holders = NULL;
    }
  }
  json_t *out = holders ? json_pack("{s:o,s:o,s:I,s:o}", "scope", ledger_str(op->scope),
                                    "subject", ledger_str(op->subject), "count",
                                    (json_int_t)json_array_size(holders), "holders", holders)
                        : NULL;
  ledger_answer(op, 200, out);
}

/* ---- inputs -------------------------------------------------------------- */

/* The ?slot= of a release: decimal digits only, 0 to 255. */
static int query_slot(struct tt_ledger_op *op) {
  const char *t = op->slot;
  char *end = NULL;
  long long v = -1;
  if (t && t[0] >= '0' && t[0] <= '9') {
    errno = 0;
    v = strtoll(t, &end, 10);
    if (errno || *end)
      v = -1;
  }
  if (v < 0 || v >= TT_LEDGER_MAX_SEM_LIMIT) {
    ledger_failf(op, TT_ERR_VALIDATION, "slot",
                 "slot is required: DELETE .../lease?owner=<who>&slot=<0 to %d, from the "
                 "acquire>",
                 TT_LEDGER_MAX_SEM_LIMIT - 1);
    return -1;
  }
  op->w.slot = v;
  return 0;
}

/* Checks scope and subject and builds the partition key SEM#<scope>#<subject>.
 * A '#' in the scope would let two pairs share one partition ("a#b"/"c" and
 * "a"/"b#c"), so the scope may not hold one; the subject may. */
static int semaphore_key(struct tt_ledger_op *op) {
  struct tt_error err;
  size_t ns = op->scope ? strlen(op->scope) : 0, nj = op->subject ? strlen(op->subject) : 0;
  if (tt_ledger_check_id(op->scope, ns, "scope", &err) != 0 ||
      tt_ledger_check_id(op->subject, nj, "subject", &err) != 0 ||
      (memchr(op->scope, '#', ns) &&
       tt_error_set(&err, TT_ERR_VALIDATION, "scope", "scope must not contain '#'"))) {
    ledger_fail(op, &err, NULL);
    return -1;
  }
  if ((op->w.pk = ledger_fmt(op, "SEM#%s#%s", op->scope, op->subject)) == NULL) {
    ledger_failf(op, TT_ERR_INTERNAL, NULL, "out of memory");
    return -1;
  }
  return 0;
}

void ledger_semaphore_start(struct tt_ledger_op *op) {
  if (semaphore_key(op) != 0)
    return;
  switch (op->kind) {
  case TT_LEDGER_SEM_ACQUIRE:
    if (ledger_lease_args(op) == 0)
      read_slots(op, acquire_read);
    return;
  case TT_LEDGER_SEM_REFRESH:
    if (ledger_lease_args(op) == 0)
      ledger_lease_refresh(op);
    return;
  case TT_LEDGER_SEM_RELEASE:
    if (ledger_lease_query_owner(op) == 0 && query_slot(op) == 0)
      ledger_lease_release(op);
    return;
  case TT_LEDGER_SEM_INSPECT:
    read_slots(op, inspected);
    return;
  default:
    ledger_failf(op, TT_ERR_INTERNAL, NULL, "unknown semaphore operation");
    return;
  }
}
