/* SPDX-License-Identifier: Apache-2.0 */
/* build.h -- turns the REST condition/update/select language into DynamoDB expressions. */
#ifndef TT_EXPR_BUILD_H
#define TT_EXPR_BUILD_H

#include <jansson.h>
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

/* Converts the JSON `value` given for attribute path `attr_path` (REST
 * syntax, "a.b[0]") into *out, typed as the model declares that attribute.
 * For `in` and `between` it is called once per element; for
 * `contains`/`not_contains` the value is one element of the attribute (a
 * set member, a list element or a substring); for `append`/`prepend` it is
 * the JSON array of elements to add. Returns 0, or -1 with *err set; the
 * builder then replaces err->field with the JSON path of the value. */
typedef int (*tt_expr_encode_cb)(void *ctx, const char *attr_path, json_t *value,
                                 struct tt_av *out, struct tt_error *err);

/* A new builder that encodes values with encode(ctx, ...); ctx is
 * borrowed. Returns NULL when out of memory. */
struct tt_expr_builder *tt_expr_builder_new(tt_expr_encode_cb encode, void *ctx);

/* Frees the builder and everything it still holds. NULL is a no-op. */
void tt_expr_builder_free(struct tt_expr_builder *b);

/* Builds a ConditionExpression/FilterExpression from the REST condition
 * language (docs/api.md "Conditions"): {"attr","op","value"}, {"attr","size",
 * "value"}, {"and": [...]}, {"or": [...]}, {"not": c}, a bare array = AND.
 * `cond` is borrowed (a tree from tt_json_parse or plain jansson). `field`
 * names it in errors ("condition" gives "condition.and[1].op"). On success
 * *text is a new string (caller frees). Errors: ValidationError with
 * details.field set, or the encoder's error. Returns 0 or -1 (*text NULL). */
int tt_expr_build_condition(struct tt_expr_builder *b, const json_t *cond, const char *field,
                            char **text, struct tt_error *err);

/* Builds a KeyConditionExpression from a key list ([{"attr","op","value"}],
 * one or two entries, ops = < <= > >= between begins_with, at least one
 * "="). Names are taken literally (key attributes are top level). Which
 * entry is the partition key is the caller's business. Same contract as
 * tt_expr_build_condition. */
int tt_expr_build_key_condition(struct tt_expr_builder *b, const json_t *key, const char *field,
                                char **text, struct tt_error *err);

/* Builds a ProjectionExpression from a non-empty array of REST paths
 * ("select"). Overlapping paths ("a" and "a.b") are a ValidationError naming
 * the later one. Same contract as tt_expr_build_condition. */
int tt_expr_build_projection(struct tt_expr_builder *b, const json_t *select, const char *field,
                             char **text, struct tt_error *err);

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

/* Adds the actions of a docs/api.md operator-form update body: the members
 * "set", "set_if_not_exists", "add", "delete", "append", "prepend" (objects
 * path -> value) and "remove" (array of paths). Other members are ignored
 * (they belong to the caller). `field` prefixes error fields ("" for the
 * body itself gives "set.nickname"). Borrows body. Returns 0 or -1. */
int tt_expr_build_update_json(struct tt_expr_builder *b, const json_t *body, const char *field,
                              struct tt_error *err);

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
