/* SPDX-License-Identifier: Apache-2.0 */
/* policy.h -- DMS write policies (write_policy.mode and protected_attributes):
 * which writes a model refuses, decided before any I/O. */
#ifndef TT_ORM_POLICY_H
#define TT_ORM_POLICY_H

#include <jansson.h>

#include "model/model.h"
#include "orm/item.h"
#include "orm/items.h"
#include "util/error.h"

/* The kind of a write, as the policy sees it. */
enum tt_orm_policy_write {
  TT_ORM_POLICY_CREATE = 1, /* create only (POST, PUT with If-None-Match: *, txn create) */
  TT_ORM_POLICY_PUT,        /* create or replace: TableTheory's save/upsert */
  TT_ORM_POLICY_UPDATE,     /* PATCH, txn update (also with upsert) */
  TT_ORM_POLICY_DELETE,
  TT_ORM_POLICY_CHECK       /* a transaction's condition check: writes nothing */
};

/* Refuses a write of kind `w` that model `m`'s write policy forbids
 * whatever the write carries, as TableTheory does before it sends anything:
 *   - write_once: only CREATE (and CHECK) pass; PUT, UPDATE and DELETE are
 *     ImmutableModelMutation;
 *   - protected_attributes (any listed): PUT is ProtectedFieldMutation
 *     outright, since a replace may change or drop a protected attribute
 *     (TableTheory refuses save/upsert and batch puts of such a model
 *     without looking at the item).
 * `field` (borrowed, may be NULL) becomes the error's field ("items[2]").
 * Returns 0, or -1 with *err set. */
int tt_orm_policy_check_write(const struct tt_model *m, enum tt_orm_policy_write w,
                              const char *field, struct tt_error *err);

/* The policy kind of a single-item operation (PUT with If-None-Match: * is
 * a create). */
enum tt_orm_policy_write tt_orm_policy_item_kind(enum tt_orm_item_kind kind, bool if_none_match);

/* Refuses an update (parsed by tt_orm_update_from_json from `body`) that sets,
 * removes or changes any part of a protected attribute: one of the model's
 * protected_attributes, or of the request's own `protected_attributes`
 * member of `body` (a per-call list of attribute names, TableTheory's
 * update option; borrowed, may be absent). An action on a nested path
 * ("pin.value") counts for its top-level attribute. `field` prefixes error
 * fields ("items[2]"; NULL or "" for a body). Errors: ValidationError for a
 * malformed `protected_attributes`, ProtectedFieldMutation naming the
 * attribute. Returns 0 or -1. */
int tt_orm_policy_check_update(const struct tt_model *m, const struct tt_orm_update *upd,
                               const json_t *body, const char *field, struct tt_error *err);

#endif
