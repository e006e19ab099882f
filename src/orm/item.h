/* SPDX-License-Identifier: Apache-2.0 */
/* item.h -- the model-driven item codec: logical JSON items and update bodies to
 * DynamoDB values, lifecycle fields, omit_empty, and stored items back to JSON. */
#ifndef TT_ORM_ITEM_H
#define TT_ORM_ITEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "expr/build.h"
#include "model/model.h"
#include "util/buf.h"
#include "util/error.h"
#include "value/av.h"
#include "value/codec_logical.h"

/* DynamoDB's item size limit (400 KB, attribute names included). */
#define TT_ORM_MAX_ITEM_BYTES (400u * 1024u)

/* Room for an RFC 3339 timestamp with nanoseconds and "Z" (35 bytes + NUL). */
#define TT_ORM_TIME_MAX 40

/* How a whole item is being written. */
enum tt_orm_write_mode {
  TT_ORM_CREATE = 1, /* create only: the body must not carry a version */
  TT_ORM_PUT         /* create or replace: a version in the body is the expected one */
};

/* The optimistic-lock version a caller expects to find in storage. */
struct tt_orm_expected {
  bool present;
  int64_t version; /* >= 0 when present */
};

/* Formats `now_ns` (nanoseconds since the Unix epoch, UTC) as Go's
 * time.RFC3339Nano does: "2023-11-14T22:13:20.5Z" -- the fraction's trailing
 * zeros trimmed, no fraction at all when it is zero, always "Z". Writes at
 * most cap bytes including the NUL (TT_ORM_TIME_MAX always suffices).
 * Returns the length, or -1 when cap is too small. */
int tt_orm_format_rfc3339nano(int64_t now_ns, char *out, size_t cap);

/* Parses an RFC 3339 timestamp ("2023-11-14T22:13:20Z",
 * "2023-11-14T23:13:20.123456789+01:00"; 't'/'z' in lower case too; at most
 * nine fraction digits) into seconds since the epoch (*sec) and the
 * nanoseconds of the fraction (*nsec, may be NULL). Returns 0, or -1 when the
 * text is not such a timestamp or a field is out of range. */
int tt_orm_parse_rfc3339(const char *s, size_t len, int64_t *sec, int32_t *nsec);

/* Converts a logical item (a JSON object from tt_json_parse: exact numbers;
 * plain jansson works too) into a DynamoDB item for model `m`, applying the
 * DMS rules (docs/internals/orm.md):
 *   - every member must be a declared attribute, unless the model has
 *     tags.additional_attributes (then its type is inferred); values are
 *     typed by the declaration (json: true, format: decimal_string);
 *   - key attributes are required, non-null and non-empty; `required`
 *     attributes must be present and not null;
 *   - an `omit_empty` attribute whose value is empty (null, "", 0, false,
 *     [], {}, empty binary) is not stored;
 *   - the created_at and updated_at attributes get `now_ns` as RFC3339Nano,
 *     the version attribute 0 (PUT with an expected version: that + 1); the
 *     caller may not send created_at/updated_at, nor the version on CREATE;
 *     on PUT a version member is the expected version, returned in
 *     *expected (which may be NULL only for CREATE);
 *   - ttl: integer epoch seconds (a JSON number or decimal string), or an
 *     RFC 3339 string converted to epoch seconds (fraction dropped);
 *   - format int/unix_seconds values must be integers, rfc3339nano values
 *     RFC 3339 strings;
 *   - encrypted attributes are converted like any other: orm/crypt.h seals
 *     them before the write.
 * `field` prefixes error fields (NULL or "" for a top-level body: the field is
 * then the attribute name, e.g. "nickname"; "put[3]" gives "put[3].nickname").
 * On success *out is a new M value (caller frees with tt_av_free). Errors:
 * ValidationError naming the attribute (never a value), PayloadTooLarge when
 * the item exceeds TT_ORM_MAX_ITEM_BYTES, Internal when out of memory; *out
 * is then a NULL value. Returns 0 or -1. */
int tt_orm_item_from_json(const struct tt_model *m, const json_t *obj, enum tt_orm_write_mode mode,
                          int64_t now_ns, const char *field, struct tt_av *out,
                          struct tt_orm_expected *expected, struct tt_error *err);

/* The member slots an item under construction keeps free for the lifecycle
 * attributes (created_at, updated_at, version). */
#define TT_ORM_LIFECYCLE_SLOTS 3

/* Completes an item of model `m` whose first n members are filled, in an M
 * made by tt_av_map with room for n + TT_ORM_LIFECYCLE_SLOTS: created_at and
 * updated_at get `now_ns` as RFC3339Nano, the version attribute `version`
 * (0 for a new item), as tt_orm_item_from_json gives them; then the members
 * are sorted (a duplicate name is a ValidationError naming `field`) and the
 * size is checked (PayloadTooLarge). The item stays the caller's to free
 * (tt_av_free), also on failure. Returns 0 or -1. */
int tt_orm_item_finish(const struct tt_model *m, struct tt_av *item, size_t n, int64_t now_ns,
                       int64_t version, const char *field, struct tt_error *err);

/* Sets the version attribute of `item` (an M built by tt_orm_item_from_json)
 * to `version`, for a replace guarded by If-Match (new version = expected +
 * 1). A model without a version attribute leaves the item unchanged.
 * Returns 0 or -1 (out of memory, item unchanged). */
int tt_orm_item_set_version(const struct tt_model *m, struct tt_av *item, int64_t version);

/* The version attribute's value in a stored item (an M): an N, or NULL when
 * the model has no version attribute or the item none of that type. */
const struct tt_av *tt_orm_item_version(const struct tt_model *m, const struct tt_av *item);

/* Appends the logical JSON object of a stored item (an M) to b: each
 * attribute written by its declared type and flags (a NULL stored for a
 * declared set reads back as [], a json: true S value as the JSON document,
 * N as a JSON number only when a double-parsing client gets it exactly, and
 * always as a string for decimal_string), undeclared attributes inferred.
 * `select` (borrowed; NULL or none for all) holds attribute paths: an
 * attribute is written when it equals a path or is a path's first segment
 * ("profile.source" keeps "profile"). Encrypted attributes must have been
 * opened (orm/crypt.h): an envelope still in their place is Internal, never
 * written out. Errors: Internal when b's cap or memory runs out (b then
 * holds a partial text to discard). Returns 0 or -1. */
int tt_orm_item_write(struct tt_buf *b, const struct tt_model *m, const struct tt_av *item,
                      const struct tt_select *select, struct tt_error *err);

/* Same as a new jansson tree (numbers are marked numbers: dump it with
 * tt_json_dump). Returns a new reference, or NULL with *err set. */
json_t *tt_orm_item_to_json(const struct tt_model *m, const struct tt_av *item,
                            const struct tt_select *select, struct tt_error *err);

/* ---- updates -------------------------------------------------------------- */

/* One update action, neutral of expression syntax: the caller hands each to
 * tt_expr_build_update_action(b, kind, path, literal, &value, field, err). */
struct tt_orm_action {
  enum tt_expr_update_op kind;
  char *path;         /* malloc'd; one attribute name when `literal`, else a REST path "a.b[0]" */
  bool literal;       /* true: `path` is taken as one attribute name */
  struct tt_av value; /* typed value; a NULL value for REMOVE */
  char field[128];    /* JSON path of the action in the body, for errors ("set.nickname") */
};

/* A parsed update body. Zero-initialize (or tt_orm_update_init) before
 * tt_orm_update_from_json; release with tt_orm_update_free. */
struct tt_orm_update {
  struct tt_orm_action *actions; /* in body order, lifecycle actions last */
  size_t n_actions;
  size_t cap_actions;
  struct tt_orm_expected expected; /* the version to check, if the caller gave one */
  struct tt_av key; /* TableTheory form: the key attributes found in `item`, typed
                     * (an M, possibly with only some or none of the keys) so the
                     * caller can use it as the key or compare it with the URL's;
                     * NULL-typed for the operator form */
};

/* The top-level attribute name an update action writes: its path's first
 * name (a literal path is one name). Sets *name; returns its length. */
size_t tt_orm_action_root(const struct tt_orm_action *x, const char **name);

/* Makes *u empty (no actions, no expected version, a NULL key); owns nothing. */
void tt_orm_update_init(struct tt_orm_update *u);

/* Frees every action and the key; leaves *u initialized and empty. */
void tt_orm_update_free(struct tt_orm_update *u);

/* Appends the action `kind` on the top-level attribute `name` (value
 * stolen, also on failure; NULL for REMOVE) to u, as the operator form of
 * tt_orm_update_from_json records it, without its checks. Returns 0 or -1
 * (Internal when out of memory). */
int tt_orm_update_push(struct tt_orm_update *u, enum tt_expr_update_op kind, const char *name,
                       struct tt_av *value, struct tt_error *err);

/* Appends the actions on the lifecycle attributes of an update of `m` made
 * at `now_ns` after the caller's: SET updated_at, and ADD 1 to the version
 * attribute, as tt_orm_update_from_json ends every update. Returns 0 or -1
 * (Internal when out of memory). */
int tt_orm_update_lifecycle(const struct tt_model *m, int64_t now_ns, struct tt_orm_update *u,
                            struct tt_error *err);

/* Parses an update body (docs/api.md "Items") for model `m` into *out (which must
 * be initialized and empty). Two forms:
 *   - TableTheory form {"fields": [...]?, "item": {...}}: with `fields`,
 *     exactly those attributes of `item` are written, and a listed
 *     `omit_empty` attribute whose value is empty becomes REMOVE (DMS v0.2);
 *     without `fields`, every non-key attribute of `item` whose value is not
 *     empty is written (an empty value -- including an object whose members
 *     are all empty -- counts as not selected, as Go's sparse update does);
 *     the version attribute in `item` is the expected version; key
 *     attributes in `item` are typed into out->key, not written;
 *   - operator form {"set", "set_if_not_exists", "remove", "add", "delete",
 *     "append", "prepend"} whose keys are REST paths; values are typed by
 *     the declaration of the top-level attribute (nested values inferred);
 *     ADD takes a number or a set, DELETE a set, APPEND/PREPEND an array on
 *     an L attribute; `set` of an empty value to an omit_empty attribute
 *     becomes REMOVE (a set_if_not_exists of one is dropped).
 * Both: "expected_version" (a non-negative integer) is the expected version;
 * keys, created_at, updated_at and version cannot be targeted, nor can a
 * required attribute be removed (ValidationError naming the attribute, field
 * = its JSON path in the body); then updated_at gets SET to `now_ns` and a
 * versioned model always gets ADD version 1. Other members ("condition",
 * "upsert", "op", "model", "key", ...) are the caller's and ignored. `field`
 * prefixes error fields ("items[2]" in a transaction; NULL for a body).
 * Returns 0, or -1 with a ValidationError (Internal when out of memory);
 * *out is then emptied. */
int tt_orm_update_from_json(const struct tt_model *m, const json_t *body, int64_t now_ns,
                            const char *field, struct tt_orm_update *out, struct tt_error *err);

/* Whether a logical JSON value counts as empty for `omit_empty` (DMS v0.2):
 * null, "", a zero number (also a decimal string for N), false, [] and {}.
 * `declared` is the attribute's DMS type (TT_LOGICAL_INFER when none). When
 * `deep`, an object whose members are all empty (recursively) is empty too:
 * the rule of an update without `fields`. */
bool tt_orm_value_is_empty(const json_t *v, enum tt_av_type declared, bool deep);

/* ---- the single-item write ---------------------------------------------------
 * One set of builders for the Put/Update/Delete of one item, used by the item
 * operations (items.c), by every write step of a transaction and by the
 * unique-guard path (txn_build.c, txn_item.c). Conditions are appended to a
 * text joined with " AND "; values and names go to the builder's
 * placeholders. All return 0, or -1 with *err set (ValidationError from the
 * expression builder naming `field`, Internal when out of memory). */

/* Appends attribute_exists(attr) (or attribute_not_exists) to c; errors
 * name the field "key". */
int tt_orm_cond_exists(struct tt_expr_builder *b, struct tt_buf *c, const char *attr, bool exists,
                       struct tt_error *err);

/* Appends attr = value (value cloned) to c. */
int tt_orm_cond_equals(struct tt_expr_builder *b, struct tt_buf *c, const char *attr,
                       const struct tt_av *value, const char *field, struct tt_error *err);

/* What the condition of a single-item write says, in this order. */
struct tt_orm_write_cond {
  bool absent;                     /* no item has the key (create, If-None-Match) */
  bool exists;                     /* the item exists (update without upsert, delete) */
  struct tt_orm_expected expected; /* its version is this one (models with a version) */
  const struct tt_cond *condition; /* the caller's condition (borrowed); NULL: none */
  const char *field;               /* prefix of error fields ("items[2]"); NULL or "" */
};

/* Appends the condition `w` describes for an item of `m` to c. */
int tt_orm_write_condition(const struct tt_model *m, struct tt_expr_builder *b,
                           const struct tt_orm_write_cond *w, struct tt_buf *c,
                           struct tt_error *err);

/* Builds the UpdateExpression of the parsed update `u` (its values cloned,
 * `u` unchanged), plus SET if_not_exists of created_at = now_ns when
 * `upsert` (the creation time a POST would have given); `field` prefixes the
 * actions' error fields. *text is malloc'd (caller frees). */
int tt_orm_update_expression(const struct tt_model *m, struct tt_expr_builder *b,
                             const struct tt_orm_update *u, bool upsert, int64_t now_ns,
                             const char *field, char **text, struct tt_error *err);

/* Reconciles the version a body carries (`body`) with the one of If-Match
 * (*expected): ValidationError(field, msg) when both are given and differ;
 * else *expected becomes the body's when it has one. */
int tt_orm_expected_merge(struct tt_orm_expected *expected, const struct tt_orm_expected *body,
                          const char *field, const char *msg, struct tt_error *err);

/* Prepares the item of a PUT of one item (converted with TT_ORM_PUT, which
 * gave the version it carried, *item_expected): the path's key (an M)
 * merged into it (ValidationError naming an attribute whose copy in the
 * item differs), that version reconciled with If-Match (*expected in: the header's;
 * out: the one to check), and then the new version set to expected + 1. */
int tt_orm_item_put_prepare(const struct tt_model *m, const struct tt_av *key, struct tt_av *item,
                            const struct tt_orm_expected *item_expected,
                            struct tt_orm_expected *expected, struct tt_error *err);

#endif
