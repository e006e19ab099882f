/* SPDX-License-Identifier: Apache-2.0 */
/* crypt.h -- encrypted attributes (DMS `encryption: {v: 1}`) on the item
 * paths: the fail-closed and not-queryable refusals made before any I/O,
 * and the KMS calls that seal values before a write and open them after a
 * read, fanned out as operations of the request's join.
 *
 * Cost: one KMS call per encrypted attribute value written
 * (GenerateDataKey: TableTheory's envelope uses each data key once) and one
 * per value read (Decrypt). No data key is cached: a key is wiped as soon
 * as its value is sealed or opened. At most TT_ORM_CRYPT_PARALLEL calls of
 * one request run at a time. */
#ifndef TT_ORM_CRYPT_H
#define TT_ORM_CRYPT_H

#include <jansson.h>
#include <stdbool.h>

#include "model/model.h"
#include "orm/item.h"
#include "orm/orm.h"
#include "util/error.h"
#include "value/av.h"

#define TT_ORM_CRYPT_PARALLEL 8

/* Whether model `m` declares an encrypted attribute. */
bool tt_orm_crypt_model(const struct tt_model *m);

/* Fail closed: EncryptionNotConfigured (naming the model) when `m` has an
 * encrypted attribute and no KMS key is configured. Returns 0 or -1. */
int tt_orm_crypt_check(const struct tt_orm *orm, const struct tt_model *m, struct tt_error *err);

/* EncryptedFieldNotQueryable when typed condition `c` (borrowed; NULL:
 * none) names an encrypted attribute of `m` anywhere in its and/or/not
 * tree. `field` names the condition. Returns 0 or -1. */
int tt_orm_crypt_check_condition(const struct tt_model *m, const struct tt_cond *c,
                                 const char *field, struct tt_error *err);

/* The same for the entries of key condition `k` (NULL: none), field "key". */
int tt_orm_crypt_check_key(const struct tt_model *m, const struct tt_key_cond *k,
                           struct tt_error *err);

/* EncryptedFieldNotQueryable when a REST path (a select entry, an update
 * target) reaches inside an encrypted attribute ("secret.x", "secret[0]"):
 * an envelope is only ever read or written whole. Returns 0 or -1. */
int tt_orm_crypt_check_path(const struct tt_model *m, const char *path, const char *field,
                            struct tt_error *err);

/* tt_orm_crypt_check_path of every path of `s` (NULL: none), field `field`. */
int tt_orm_crypt_check_select(const struct tt_model *m, const struct tt_select *s,
                              const char *field, struct tt_error *err);

/* One batch of values to seal (before a write) or open (after a read). */
struct tt_orm_crypt;

/* Called once when every KMS call finished: err is NULL on success (every
 * added value was replaced in place), else the first failure (the values
 * are then partly replaced and must not be written or answered). */
typedef void (*tt_orm_crypt_done_cb)(void *arg, const struct tt_error *err);

/* A new, empty batch of ctx's request (allocated in ctx->arena, like its
 * KMS calls, which the join may look at until the request ends). `seal`:
 * encrypt; else decrypt. NULL when out of memory. */
struct tt_orm_crypt *tt_orm_crypt_new(struct tt_orm_ctx *ctx, bool seal);

/* Adds every member of `item` (an M, borrowed until done ran) that is an
 * encrypted attribute of model `m`. Returns 0 or -1 (Internal). */
int tt_orm_crypt_add_item_of(struct tt_orm_crypt *c, const struct tt_model *m, struct tt_av *item,
                             struct tt_error *err);

/* Adds the values the actions of update `u` (of model `m`, borrowed until
 * done ran) set on encrypted attributes: item.c refused every other action
 * on such an attribute. Returns 0 or -1 (Internal). */
int tt_orm_crypt_add_update(struct tt_orm_crypt *c, const struct tt_model *m,
                            struct tt_orm_update *u, struct tt_error *err);

/* Hex digits of the key hash that names an item whose envelope failed. */
#define TT_ORM_KEY_SHA256_HEX 16

/* Runs the KMS calls; done(arg, err) runs exactly once, err NULL on
 * success or the failure (an envelope that does not parse, no KMS
 * configured, the KMS calls refused). When the run settles at once
 * (nothing to do, or a failure before any call) done is called here, in
 * the caller's frame, as the step that follows the start (the caller's
 * continuation; docs/internals/completions.md). On opening, a value that
 * is not an envelope is InvalidEncryptedEnvelope before any call. An
 * InvalidEncryptedEnvelope of a value added with its item names that item
 * without its key values: the message and a crypt.envelope_invalid log
 * line carry the SHA-256 prefix of its key (TT_ORM_KEY_SHA256_HEX hex
 * digits), and the ctx's result, when not failed yet and without details,
 * gets details {"model", "key_attributes", "key_sha256"}. */
void tt_orm_crypt_run_then(struct tt_orm_crypt *c, tt_orm_crypt_done_cb done, void *arg);

#endif
