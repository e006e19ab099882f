/* SPDX-License-Identifier: Apache-2.0 */
/* item_io.h -- the HTTP side of the typed ORM: the {key} of an item URL
 * percent-decoded and typed by the model's key attributes (what the item
 * handlers hand the typed ORM), the ORM's typed item rendered as the body
 * and ETag of the HTTP answer, an item body typed into an item operation's
 * inputs, a query or scan body read into the ORM's typed request
 * (api/query.c), and a batch's or transaction's body read into the ORM's
 * typed batch (orm/batch.h, api/batch.c) or transaction (orm/txn.h,
 * api/txn.c) with its typed answer rendered. */
#ifndef TT_API_ITEM_IO_H
#define TT_API_ITEM_IO_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "model/model.h"
#include "orm/batch.h"
#include "orm/orm.h"
#include "orm/txn.h"
#include "util/buf.h"
#include "util/error.h"
#include "value/av.h"

/* Builds the key of model `m` from the raw (still percent-encoded) `{key}`
 * part of an item URL: "pk" for a partition-key-only table, "pk/sk" for a
 * composite key. The split happens on raw '/' before decoding, so "%2F"
 * inside a key is data. Each part is percent-decoded (%XX, either case; '+'
 * stays '+', as in paths) and typed: S as UTF-8 text, N as decimal text
 * (canonicalized, 38 digits), B as base64url with or without '=' padding.
 * Errors are ValidationErrors with field "key" whose message names the
 * attribute, never the value: wrong number of parts, a bad escape, invalid
 * UTF-8, an empty key value, a malformed number or base64. On success
 * *key_out is a new M holding exactly the key attributes (caller frees);
 * on failure a NULL value. Returns 0 or -1. */
int tt_api_item_key(const struct tt_model *m, const char *raw, size_t len,
                     struct tt_av *key_out, struct tt_error *err);

/* Room for an ETag: a version's digits in quotes. */
#define TT_API_ETAG_MAX 32

/* Renders the typed item answer `r` (TT_ORM_ANSWER_ITEM) into b: the
 * logical JSON of r->item by r->model's declarations, keeping the
 * attributes `select` names (NULL: all; orm/item.h), or DynamoDB's own
 * item JSON when `raw` (?format=dynamodb). `etag` gets the item's version
 * in quotes ("\"3\""), or "" when it has none. The status is 201 when
 * r->created, else 200. Returns 0, or -1 with an Internal error (b then
 * holds a partial text to discard). */
int tt_api_item_write(struct tt_buf *b, const struct tt_orm_result *r,
                      const struct tt_select *select, bool raw, char etag[TT_API_ETAG_MAX],
                      struct tt_error *err);

/* Refuses a member of `body` that is none of the NULL-terminated `names`:
 * ValidationError naming it, "<member> is <what>" ("not a query
 * parameter"). Returns 0 or -1. */
int tt_api_check_members(const json_t *body, const char *const *names, const char *what,
                         struct tt_error *err);

/* Reads the optional boolean member `name` of `obj` into *out (false when
 * absent); any other type is a ValidationError on `field`, "<field> must be
 * true or false". Returns 0 or -1. */
int tt_api_bool_member(const json_t *obj, const char *name, const char *field, bool *out,
                       struct tt_error *err);

/* EncryptedFieldNotQueryable (field "select") when a string of a body's
 * `select` list reaches inside an encrypted attribute of `m`: what a query
 * or batch-get answers before the body's other members. Returns 0 or -1. */
int tt_api_select_crypt(const struct tt_model *m, const json_t *select, struct tt_error *err);

/* Starts the query or scan `op` (ctx, scan and sink filled) of a body of
 * POST /v1/models/{m}/query or /scan: read into op->rq (which borrows its
 * conditions, select and cursor), or the operation fails with the body's
 * first error, in the API's order (docs/internals/orm.md). Returns as
 * tt_orm_query_start does. */
struct tt_orm_query_op;
int tt_api_query_start(struct tt_orm_query_op *op, const json_t *body);

/* Starts the item operation `op` (ctx, kind, key and flags filled) of a
 * REST body (borrowed until op finishes; NULL for a get or delete) typed
 * into its inputs; a body that fails fails op in the API's order
 * (tt_orm_item_fail_input). A model with unique attributes takes the
 * guard path (orm/txn.h). Returns as tt_orm_item_start does. */
struct tt_orm_item_op;
int tt_api_item_start(struct tt_orm_item_op *op, const json_t *body);

/* Starts the batch `op` (ctx, write and deadline_ns filled) of a REST body
 * (borrowed until op finishes): read into op's typed entries, or op fails
 * with the body's first error in the API's order (encryption, members,
 * lists, counts, consistent, select, then each key or item;
 * docs/batch.md). Returns as tt_orm_batch_start does. */
int tt_api_batch_start(struct tt_orm_batch_op *op, const json_t *body);

/* Once op finished: turns its typed answer in `r` into the HTTP answer's
 * body, written to `out` on success (batch-get: 200 {"items": [found items
 * in key order], "missing": [keys]}; batch-write: 200 {"processed": n}),
 * or `r` fails (out of memory); a failure that left entries
 * undone gets details.unprocessed -- batch-get: indexes into keys;
 * batch-write: {"put": [indexes], "delete": [indexes]} -- and
 * details.processed, then the backend's details or details.cause) and
 * frees op's entries. */
void tt_api_batch_answer(struct tt_orm_batch_op *op, struct tt_orm_result *r, struct tt_buf *out);

/* Starts the transaction `op` (ctx and get filled) of a REST body
 * (borrowed until op finishes): read into op's typed request, or op fails
 * with the body's first error in the API's order (docs/batch.md). Returns
 * as tt_orm_txn_start does. */
int tt_api_txn_start(struct tt_orm_txn_op *op, const json_t *body);

/* Once op finished: turns its typed answer in `r` into the HTTP answer
 * (the body of a 200 written to `out`: {"ok": true} or {"items": [item |
 * null, ...]}; or details.reasons of a TransactionCanceled in `r`; `r`
 * fails when memory runs out) and releases what op's answer and actions
 * hold. */
void tt_api_txn_answer(struct tt_orm_txn_op *op, struct tt_orm_result *r, struct tt_buf *out);

#endif
