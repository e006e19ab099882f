/* SPDX-License-Identifier: Apache-2.0 */
/* build.h -- the typed condition and key condition, and the builder that turns them, selects
 * and update actions into DynamoDB expressions. */
#ifndef TT_EXPR_BUILD_H
#define TT_EXPR_BUILD_H

#include <stdbool.h>

#include "util/buf.h"
#include "util/error.h"
#include "value/av.h"

/* Every expression the builder writes uses placeholders only: "#n0", "#n1"...
 * for each distinct path segment name and ":v0", ":v1"... for each value, so
 * no name or value is ever spliced into expression text. One builder serves
 * all the expressions of one DynamoDB request (condition + update, or key
 * condition + filter + projection), because they share one
 * ExpressionAttributeNames and one ExpressionAttributeValues map. Every
 * function below that fails leaves the builder as it was before the call,
 * so the maps never carry entries that no expression uses. */
struct tt_expr_builder;

/* A typed condition (docs/api.md "Conditions"), what the ORM builds
 * ConditionExpressions and FilterExpressions from. orm/cond.h parses the
 * REST JSON into it (with the model's typing of values); the ledger builds
 * it directly. A tree of nodes, each owned by its parent. */
enum tt_cond_kind { TT_COND_AND = 1, TT_COND_OR, TT_COND_NOT, TT_COND_CMP, TT_COND_ERROR };

/* The operators of a comparison. */
enum tt_cond_op {
  TT_COND_EQ = 1, /* = ; the six comparators in this order */
  TT_COND_NE,     /* <> */
  TT_COND_LT,
  TT_COND_LE,
  TT_COND_GT,
  TT_COND_GE,
  TT_COND_BETWEEN,      /* two values */
  TT_COND_IN,           /* 1 to 100 values */
  TT_COND_BEGINS_WITH,  /* one value each, for these three */
  TT_COND_CONTAINS,
  TT_COND_NOT_CONTAINS,
  TT_COND_EXISTS,       /* no value, for these two */
  TT_COND_NOT_EXISTS,
  TT_COND_TYPE          /* one S value: a DynamoDB type name */
};

struct tt_cond {
  enum tt_cond_kind kind;
  /* AND, OR: n_kids >= 1 children; NOT: one. `list`: an AND written as a
   * bare array (its children's error fields are "x[1]", not "x.and[1]"). */
  struct tt_cond *kids;
  size_t n_kids;
  bool list;
  /* CMP: `path` (REST syntax, malloc'd) compared by `op`, or its size()
   * when `size` (values are then N), with n_values typed values. */
  char *path;
  enum tt_cond_op op;
  bool size;
  struct tt_av *values;
  size_t n_values;
  /* ERROR: a REST condition that did not parse, and why (malloc'd); the
   * builder answers this error where the condition is built, so a
   * request's errors keep the order the API has always given them. Its
   * kids are then the attribute paths the REST tree named (comparisons
   * without operator), for the encrypted-attribute check. */
  struct tt_error *error;
};

/* Frees what c owns (children, path, values) and zeroes it; NULL is a no-op. */
void tt_cond_clear(struct tt_cond *c);

/* tt_cond_clear, then frees c itself (a malloc'd root). NULL is a no-op. */
void tt_cond_free(struct tt_cond *c);

/* A typed key condition: the partition key's "=" and at most one sort-key
 * condition (=, <, <=, >, >=, between, begins_with), names taken literally. */
struct tt_key_cond {
  size_t n; /* 1 or 2 */
  struct tt_key_cond_entry {
    char *attr; /* malloc'd */
    enum tt_cond_op op;
    struct tt_av v[2]; /* v[1] only for between */
  } e[2];
  struct tt_error *error; /* as tt_cond's: entries that did not type (malloc'd) */
};

/* Frees what k owns and zeroes it. */
void tt_key_cond_clear(struct tt_key_cond *k);

/* The operator's REST name ("=", "not_contains", ...). */
const char *tt_cond_op_name(enum tt_cond_op op);

/* A new, empty builder. Returns NULL when out of memory. */
struct tt_expr_builder *tt_expr_builder_new(void);

/* Frees the builder and everything it still holds. NULL is a no-op. */
void tt_expr_builder_free(struct tt_expr_builder *b);

/* Builds a ConditionExpression/FilterExpression from typed condition `c`
 * (borrowed; values cloned). `field` names it in errors, as the REST form
 * would ("condition" gives "condition.and[1].op"). On success *text is a new
 * string (caller frees). Errors: ValidationError with details.field set (a
 * malformed path, the 4 KB text limit). Returns 0 or -1 (*text NULL). */
int tt_expr_build_condition(struct tt_expr_builder *b, const struct tt_cond *c, const char *field,
                            char **text, struct tt_error *err);

/* Builds a KeyConditionExpression from typed key condition `k` (borrowed).
 * Which entry is the partition key is the caller's business. Same contract
 * as tt_expr_build_condition. */
int tt_expr_build_key_condition(struct tt_expr_builder *b, const struct tt_key_cond *k,
                                const char *field, char **text, struct tt_error *err);

/* A typed projection (`select`): n REST attribute paths, all borrowed.
 * paths NULL: none (an item is answered whole); n 0 with paths: nothing of
 * it (`?select=,`). orm/orm.h's tt_orm_select_from_json reads it. */
struct tt_select {
  const char *const *paths;
  size_t n;
};

/* Builds a ProjectionExpression from the paths of `s` (at least one).
 * Malformed and overlapping paths ("a" and "a.b") are a ValidationError
 * naming the (later) one, "select[2]". Same contract as
 * tt_expr_build_condition. */
int tt_expr_build_projection(struct tt_expr_builder *b, const struct tt_select *s,
                             const char *field, char **text, struct tt_error *err);

/* Operators of the docs/api.md update form. */
enum tt_expr_update_op {
  TT_EXPR_UPD_SET = 1,           /* SET p = v */
  TT_EXPR_UPD_SET_IF_NOT_EXISTS, /* SET p = if_not_exists(p, v) */
  TT_EXPR_UPD_REMOVE,            /* REMOVE p */
  TT_EXPR_UPD_ADD,               /* ADD p v (number or set) */
  TT_EXPR_UPD_DELETE,            /* DELETE p v (set) */
  TT_EXPR_UPD_APPEND,            /* SET p = list_append(if_not_exists(p, []), v) */
  TT_EXPR_UPD_PREPEND            /* SET p = list_append(v, if_not_exists(p, [])) */
};

/* Adds one update action on `path` (REST syntax, or one attribute name
 * taken literally when `literal`). `value` is stolen (freed on failure too);
 * NULL for REMOVE. `field` names the action in errors. Fails with a
 * ValidationError when the path is malformed or overlaps an earlier action
 * of this update. Returns 0 or -1. */
int tt_expr_build_update_action(struct tt_expr_builder *b, enum tt_expr_update_op op,
                                const char *path, bool literal, struct tt_av *value,
                                const char *field, struct tt_error *err);

/* Writes the UpdateExpression of the actions added since the last finish
 * ("SET #n0 = :v0, #n1 = :v1 REMOVE #n2 ADD #n3 :v2 DELETE #n4 :v3") into
 * *text (new string, caller frees) and starts a new, empty update. Fails
 * with a ValidationError when there is no action. Returns 0 or -1. */
int tt_expr_build_update_finish(struct tt_expr_builder *b, char **text, struct tt_error *err);

/* Whether `p` is a REST document path: name ('[' digits ']')* ('.' name ...)*,
 * at most 32 levels (DynamoDB's document path depth). A name is text without
 * '.', '[' and ']' that does not start with a backtick, or any non-empty
 * text without a backtick between backticks (`a.b` is the one attribute
 * named "a.b"). */
bool tt_expr_rest_path_valid(const char *p);

/* Error fields: "parent.key" (key alone when parent is NULL or empty) and
 * "parent[i]", cut to cap bytes as tt_error.field would cut them. */
void tt_expr_field_key(char *out, size_t cap, const char *parent, const char *key);
void tt_expr_field_index(char *out, size_t cap, const char *parent, size_t i);

/* Sets the ValidationError of a malformed REST path named `field`. Returns -1. */
int tt_expr_bad_path(const char *field, struct tt_error *err);

/* The first attribute name of REST path `p` (checked or not): *name points
 * at it inside p (without the backticks of a quoted name) and *len is its
 * length. Returns the length of that name as written (backticks included):
 * in a valid path p[ret] is '\0', '.' or '['. */
size_t tt_expr_rest_path_head(const char *p, const char **name, size_t *len);

/* Appends the placeholder form of `path` ("#n0.#n1[2]") to out, for callers
 * that write their own expression text. REST syntax unless `literal`.
 * Returns 0 or -1 (ValidationError naming `field`, or out of memory). */
int tt_expr_builder_path(struct tt_expr_builder *b, const char *path, bool literal,
                         struct tt_buf *out, const char *field, struct tt_error *err);

/* Registers a value (stolen, freed on failure too) and appends its
 * placeholder (":v3") to out. Returns 0 or -1 (out of memory). */
int tt_expr_builder_value(struct tt_expr_builder *b, struct tt_av *value, struct tt_buf *out,
                          struct tt_error *err);

/* Moves the accumulated maps out: *names becomes the ExpressionAttributeNames
 * (M of S) and *values the ExpressionAttributeValues (M), both new values the
 * caller frees; an unused map comes out as an M with len 0, which the caller
 * must omit from the request. The builder is then empty and numbering starts
 * again at 0. Returns 0 or -1 (out of memory: both outputs zeroed). */
int tt_expr_builder_take(struct tt_expr_builder *b, struct tt_av *names, struct tt_av *values,
                         struct tt_error *err);

#endif
