/* SPDX-License-Identifier: Apache-2.0 */
/* unique.h -- unique attributes kept unique across a table with guard items
 * written in the same transaction as the item they protect. */
#ifndef TT_ORM_UNIQUE_H
#define TT_ORM_UNIQUE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "expr/build.h"
#include "model/model.h"
#include "util/error.h"
#include "value/av.h"

/* The partition-key prefix of every guard item (docs/batch.md). */
#define TT_UNIQUE_PREFIX "UNIQUE#"
/* Attribute of a guard naming "<Model>#<attr>": marks it so that queries
 * and scans of the model can leave guards out. */
#define TT_UNIQUE_MARKER_ATTR "_tt_unique"
/* Attribute of a guard holding the key (an M) of the item that owns it. */
#define TT_UNIQUE_OWNER_ATTR "_tt_owner"

/* Whether model `m` declares at least one attribute with tags.unique. */
bool tt_unique_model_has(const struct tt_model *m);

/* Checks that `m` can keep its unique attributes: a string partition key
 * (guards live in the model's table, keyed "UNIQUE#<Model>#<attr>#<value>")
 * and unique attributes of type S, N or B. Returns 0 (also for a model
 * without unique attributes) or -1 with a ValidationError naming the
 * model and attribute. */
int tt_unique_model_check(const struct tt_model *m, struct tt_error *err);

/* Whether the partition key of `key_or_item` (an M) is reserved for guards
 * in a model with unique attributes: an S value starting with "UNIQUE#".
 * Such keys are refused on every write of that model so that no item can
 * overwrite a guard. False for a model without unique attributes. */
bool tt_unique_key_reserved(const struct tt_model *m, const struct tt_av *key_or_item);

/* Whether `v` is a value a guard is kept for: a non-empty S or B, or an N.
 * NULL, absent (v == NULL) and empty values hold no guard. */
bool tt_unique_value_guarded(const struct tt_av *v);

/* Builds the key of the guard of attribute `a` (unique, of model `m`)
 * holding value `v` (tt_unique_value_guarded): the partition key
 * "UNIQUE#<Model>#<attr>#<text>" where text is the S value, the canonical
 * N text or the standard base64 of B; a sort key (when the table has one)
 * "UNIQUE" (S), 0 (N) or the bytes "UNIQUE" (B). On success *out is a new
 * M (caller frees). Errors: ValidationError naming the attribute when the
 * guard key would pass DynamoDB's 2048-byte partition-key limit; Internal
 * when out of memory. Returns 0 or -1 (*out then a NULL value). */
int tt_unique_guard_key(const struct tt_model *m, const struct tt_model_attr *a,
                        const struct tt_av *v, struct tt_av *out, struct tt_error *err);

/* One guard action of a write: the unique attribute, whether it claims
 * (Put) or releases (Delete) a value, and what the action sends (owned;
 * tt_unique_guard_free releases it). */
struct tt_unique_guard {
  const struct tt_model_attr *attr;
  bool claim;
  struct tt_av item;          /* claim: the guard item; release: the guard's key */
  struct tt_av names, values; /* claim: the placeholder maps of TT_UNIQUE_CLAIM_CONDITION */
};

/* The condition of a claim: the guard is absent or already this item's. */
#define TT_UNIQUE_CLAIM_CONDITION "attribute_not_exists(#p) OR #o = :o"

void tt_unique_guard_free(struct tt_unique_guard *g);

/* Fills guards[*n_guards...] (room for 2 per unique attribute, zeroed or
 * freed) with the guard actions that move the unique values of one item of
 * `m` (key `owner_key`) from `old_item` to `new_item` (either may be NULL:
 * no item before / after; only unique attributes are looked at):
 *   - a value that stays the same needs nothing;
 *   - an old guarded value is released: Delete of its guard (unconditional:
 *     the caller's condition on the item proves the old value was current,
 *     so the guard is the item's own; a missing guard is no error);
 *   - a new guarded value is claimed: Put of its guard with the marker and
 *     the owner key, conditioned on the guard being absent or already owned
 *     by this item (so a repeated write is idempotent).
 * Returns 0 or -1 (ValidationError from tt_unique_guard_key, Internal when
 * out of memory); on failure *n_guards counts the guards filled so far. */
int tt_unique_guard_actions(const struct tt_model *m, const struct tt_av *owner_key,
                            const struct tt_av *old_item, const struct tt_av *new_item,
                            struct tt_unique_guard *guards, size_t *n_guards,
                            struct tt_error *err);

/* The number of unique attributes of `m` (guards per item at most twice
 * that). */
size_t tt_unique_count(const struct tt_model *m);

/* The condition (docs/api.md "Conditions") that leaves guard items out of a query or
 * scan of a model with unique attributes: {"attr": "_tt_unique", "op":
 * "not_exists"}, into *out (pointing at static text: never cleared). False
 * (nothing written) for a model without unique attributes. Query/scan AND
 * it with the caller's filter (docs/batch.md). */
bool tt_unique_query_filter(const struct tt_model *m, struct tt_cond *out);

#endif
