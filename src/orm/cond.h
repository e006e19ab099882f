/* SPDX-License-Identifier: Apache-2.0 */
/* cond.h -- the REST condition and key-condition language (docs/api.md
 * "Conditions") parsed into the typed forms of expr/build.h, values typed
 * by the model: what api/ hands the ORM. */
#ifndef TT_ORM_COND_H
#define TT_ORM_COND_H

#include <jansson.h>

#include "expr/build.h"
#include "model/model.h"
#include "util/error.h"

/* Parses condition `j` (borrowed; {"attr","op","value"}, {"attr","size",
 * "value"}, {"and": [...]}, {"or": [...]}, {"not": c}, a bare array = AND)
 * for model `m`. Values are typed by the attribute they are compared with
 * (a key attribute of the table or an index only takes its declared type;
 * others fall back to the inferred type); size() operands are numbers,
 * `type` takes a DynamoDB type name. `field` names the condition in errors
 * ("condition" gives "condition.and[1].op"). NULL or a JSON null is no
 * condition: *out NULL. Returns 0 and a new tree in *out (tt_cond_free), or
 * -1 with *out NULL and a ValidationError naming the offending member. */
int tt_orm_cond_from_json(const struct tt_model *m, const json_t *j, const char *field,
                          struct tt_cond **out, struct tt_error *err);

/* What api/ calls: tt_orm_cond_from_json, except that a condition that
 * does not parse becomes a node of kind TT_COND_ERROR carrying the error
 * (and, as kids, the paths tt_orm_cond_names finds), which the ORM answers
 * where it builds the condition, so the errors of a request come in the
 * order the API has always answered them (the ORM's refusals before any
 * I/O first, encrypted attributes among them). Returns 0, or -1 only when
 * out of memory. */
int tt_orm_cond_read(const struct tt_model *m, const json_t *j, const char *field,
                     struct tt_cond **out, struct tt_error *err);

/* Every "attr" string of a REST condition or key list `j` (through arrays
 * and "and", "or", "not"), as comparisons without operator under one node
 * of kind TT_COND_ERROR without error: what the encrypted-attribute check
 * (tt_orm_crypt_check_condition) sees of input that is not parsed (yet).
 * Never built. A new tree, or NULL when out of memory. */
struct tt_cond *tt_orm_cond_names(const json_t *j);

/* The first half of a query's key conditions `j` (field "key"): a list of
 * one or two objects with a string "attr". Fills out->n and the entries'
 * attr, and op TT_COND_EQ for an entry whose "op" is "=" (else 0): enough
 * to choose the target (tt_orm_query_target). Returns 0, or -1 with a
 * ValidationError (out cleared). */
int tt_orm_key_cond_shape(const json_t *j, struct tt_key_cond *out, struct tt_error *err);

/* The second half: every entry's operator (=, <, <=, >, >=, between,
 * begins_with; one "=" at least, one condition per attribute) and values,
 * typed as the model declares the key attribute, into `out` (filled by
 * tt_orm_key_cond_shape from the same `j`). Errors name "key[1].op" and so
 * on. Returns 0, or -1 with *err set: a ValidationError is also kept in
 * out->error with the entries (tt_orm_query_target still reads them), for
 * the ORM to answer where it builds the key condition; out is cleared only
 * when that copy finds no memory. */
int tt_orm_key_cond_type(const struct tt_model *m, const json_t *j, struct tt_key_cond *out,
                         struct tt_error *err);

#endif
