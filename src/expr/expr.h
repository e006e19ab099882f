/* SPDX-License-Identifier: Apache-2.0 */
/* expr.h -- DynamoDB expressions: parse, then evaluate against items. */
#ifndef TT_EXPR_EXPR_H
#define TT_EXPR_EXPR_H

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"
#include "value/av.h"

/* A compiled expression (opaque). It owns its syntax tree and copies of the
 * resolved attribute names, but BORROWS the ExpressionAttributeValues map it
 * was parsed with: keep that map alive and unchanged while the expression is
 * used. */
struct tt_expr;

/* Which of DynamoDB's expression parameters the text came from: it picks the
 * grammar and the "Invalid <Kind>Expression:" prefix of error messages. */
enum tt_expr_kind {
  TT_EXPR_CONDITION = 1, /* ConditionExpression */
  TT_EXPR_FILTER,        /* FilterExpression */
  TT_EXPR_KEY_CONDITION, /* KeyConditionExpression */
  TT_EXPR_UPDATE,        /* UpdateExpression */
  TT_EXPR_PROJECTION     /* ProjectionExpression */
};

/* Longest expression text DynamoDB accepts (4 KB per expression). */
#define TT_EXPR_MAX_TEXT 4096

/* Parses `text` as an expression of `kind`. `names` is the request's
 * ExpressionAttributeNames as an M of S values and `values` its
 * ExpressionAttributeValues as an M; either may be NULL when the request
 * has none. Placeholders are resolved now, so an undefined #name or :value
 * is an error here. Both maps are borrowed; `values` must outlive *out.
 * Returns 0 and a new expression in *out (free with tt_expr_free), or -1
 * with *out NULL and a ValidationError whose message is DynamoDB's
 * ValidationException text ("Invalid ConditionExpression: Syntax error;
 * token: ..."). */
int tt_expr_parse(enum tt_expr_kind kind, const char *text, const struct tt_av *names,
                  const struct tt_av *values, struct tt_expr **out, struct tt_error *err);

/* Frees an expression. NULL is a no-op. */
void tt_expr_free(struct tt_expr *e);

/* The kind the expression was parsed as. */
enum tt_expr_kind tt_expr_kind(const struct tt_expr *e);

/* Checks the request-level rules about the placeholder maps, before
 * parsing: keys of `names` look like "#x" and map to S values, keys of
 * `values` look like ":x", and a map that is given is not empty. Both are
 * borrowed and may be NULL. Returns 0 or -1 with a ValidationError
 * (DynamoDB's texts, e.g. `ExpressionAttributeNames contains invalid key:
 * Syntax error; key: "x"`). */
int tt_expr_check_maps(const struct tt_av *names, const struct tt_av *values,
                       struct tt_error *err);

/* After every expression of one request was parsed with the same `names` and
 * `values` maps, fails when a map entry was used by none of them, as
 * DynamoDB does ("Value provided in ExpressionAttributeValues unused in
 * expressions: keys: {:x}"). `exprs` holds n expressions (NULL entries are
 * skipped); everything is borrowed. Returns 0 or -1 with a ValidationError. */
int tt_expr_check_unused(const struct tt_expr *const *exprs, size_t n,
                         const struct tt_av *names, const struct tt_av *values,
                         struct tt_error *err);

/* Evaluates a condition, filter or key condition on `item` (an M value, or
 * NULL for an absent item: then every path is missing). Borrows both. Type
 * mismatches make a comparison false, never an error, as in DynamoDB. */
bool tt_expr_eval_condition(const struct tt_expr *e, const struct tt_av *item);

/* Applies an update expression to `old_item` (an M, or NULL when the item does
 * not exist yet) and writes the resulting item to *new_item (a new value the
 * caller frees with tt_av_free). Every operand reads the old item, as in
 * DynamoDB. Borrows e and old_item. Returns 0, or -1 with *new_item zeroed and
 * a ValidationError with DynamoDB's runtime messages ("The provided
 * expression refers to an attribute that does not exist in the item", "An
 * operand in the update expression has an incorrect data type", "The
 * document path provided in the update expression is invalid for update"),
 * or TT_ERR_INTERNAL when memory runs out. */
int tt_expr_apply_update(const struct tt_expr *e, const struct tt_av *old_item,
                         struct tt_av *new_item, struct tt_error *err);

/* Top-level attribute written by the i-th action of an update expression
 * (SET, REMOVE, ADD and DELETE in text order), or NULL past the last. Lets
 * a backend refuse key updates and compute UPDATED_NEW/UPDATED_OLD. The
 * string belongs to e. */
const char *tt_expr_update_target(const struct tt_expr *e, size_t i);

/* Copies the projected parts of `item` (an M) into *out (a new M the caller
 * frees); for an update expression, the parts its actions' paths name (the
 * UPDATED_OLD and UPDATED_NEW of DynamoDB). A list index keeps that element
 * in a shorter list; missing paths are skipped. Borrows e and item. Returns 0 or -1 (out of memory:
 * TT_ERR_INTERNAL; *out zeroed). */
int tt_expr_apply_projection(const struct tt_expr *e, const struct tt_av *item,
                             struct tt_av *out, struct tt_error *err);

/* The operator of a sort-key condition. */
enum tt_expr_key_op {
  TT_EXPR_KEY_NONE = 0, /* no sort-key condition */
  TT_EXPR_KEY_EQ,
  TT_EXPR_KEY_LT,
  TT_EXPR_KEY_LE,
  TT_EXPR_KEY_GT,
  TT_EXPR_KEY_GE,
  TT_EXPR_KEY_BETWEEN,
  TT_EXPR_KEY_BEGINS_WITH
};

/* A key condition taken apart for an indexed lookup. Values are borrowed
 * from the ExpressionAttributeValues the expression was parsed with. */
struct tt_expr_key_range {
  const struct tt_av *pk;  /* partition key value */
  enum tt_expr_key_op op;  /* sort-key operator or NONE */
  const struct tt_av *lo;  /* operand of op; lower bound of BETWEEN */
  const struct tt_av *hi;  /* upper bound of BETWEEN, else NULL */
};

/* Matches a parsed key condition against a key schema (`sk_name` NULL for a
 * table or index without sort key) and fills *out. Fails with DynamoDB's
 * messages ("Query condition missed key schema element: pk", "Query key
 * condition not supported"). Checking value types against the schema is
 * left to the caller, which knows them: out->pk is set when the partition
 * key's condition was found, even when its operator is then refused.
 * Borrows everything. */
int tt_expr_key_range(const struct tt_expr *e, const char *pk_name, const char *sk_name,
                      struct tt_expr_key_range *out, struct tt_error *err);

/* Whether `word` (n bytes, any case) is one of DynamoDB's reserved words. */
/* Whether a condition or filter reads top-level attribute `name` anywhere
 * (Query refuses filters on key attributes). */
bool tt_expr_condition_refers(const struct tt_expr *e, const char *name);
/* Whether a projection's paths, a condition's operands or an update's
 * paths and operands go into the top-level attribute `name` (a map lookup
 * or a list index under it). */
bool tt_expr_nested_under(const struct tt_expr *e, const char *name);

/* The type an update expression writes to the top-level attribute `name`
 * as far as its text tells, from the first action whose path is just
 * `name`: the value's type for a value, ADD and DELETE, N for + and -, L
 * for list_append, if_not_exists's default's; 0 when a path decides it,
 * for REMOVE, or when no action writes `name` itself. DynamoDB checks
 * index key types with it before reading the item. */
int tt_expr_update_static_type(const struct tt_expr *e, const char *name);

/* Whether a SET action of an update expression writes the whole top-level
 * attribute `name`. */
bool tt_expr_update_sets(const struct tt_expr *e, const char *name);

bool tt_expr_is_reserved(const char *word, size_t n);

#endif
