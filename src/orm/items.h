/* SPDX-License-Identifier: Apache-2.0 */
/* items.h -- single-item operations of a typed key and typed inputs (the
 * item, the parsed update): create, put, get, update, delete, answering
 * the typed item (TT_ORM_ANSWER_ITEM) or nothing (a delete). */
#ifndef TT_ORM_ITEMS_H
#define TT_ORM_ITEMS_H

#include <jansson.h>
#include <stdbool.h>

#include "expr/build.h"
#include "orm/item.h"
#include "orm/orm.h"
#include "value/av.h"

enum tt_orm_item_kind {
  TT_ORM_OP_CREATE = 1, /* POST .../items */
  TT_ORM_OP_PUT,        /* PUT .../items/{key} */
  TT_ORM_OP_GET,
  TT_ORM_OP_UPDATE,     /* PATCH */
  TT_ORM_OP_DELETE
};

/* One item operation. Fill the inputs of a zeroed op, then
 * tt_orm_item_start. The op borrows `item_key` and `select` until it
 * finishes, and owns `item`, `upd` and `condition` from its start on. */
struct tt_orm_item_op {
  struct tt_orm_ctx ctx; /* first */
  enum tt_orm_item_kind kind;
  /* Inputs. */
  struct tt_av item;        /* CREATE/PUT: the item (tt_orm_item_from_json at `now`);
                             * then the working copy that is written and answered */
  struct tt_orm_expected item_expected; /* PUT: the version the item carried */
  struct tt_orm_update upd; /* UPDATE: the update (tt_orm_update_from_json at `now`) */
  struct tt_cond *condition; /* UPDATE: the typed condition (orm/cond.h) or NULL;
                              * checked for encrypted attributes on every kind */
  int64_t now;              /* when `item` or `upd` was made (tt_orm_now_ns) */
  const struct tt_av *item_key; /* all but CREATE: the item's key, an M of exactly the
                                 * model's key attributes (tt_orm_key_check) */
  struct tt_select select;  /* GET: projection (tt_orm_select_from_json); n 0: none */
  bool consistent;          /* GET */
  bool raw_format;          /* GET: the item as stored, encrypted attributes left sealed
                             * (?format=dynamodb) */
  bool if_none_match;       /* PUT If-None-Match: * */
  bool upsert;              /* UPDATE "upsert": true */
  struct tt_orm_expected expected; /* If-Match / expected_version */
  /* Working state. */
  struct tt_expr_builder *builder;
  /* The backend call's typed request, pointing into the fields below:
   * its condition text, update and projection texts, placeholder maps. */
  struct tt_ddb_item_request req;
  struct tt_buf cond;
  char *update_text, *projection_text;
  struct tt_av names, values;
  /* Encrypted attributes (orm/crypt.h): a PutItem waits while the sealed
   * copy `stored` of `item` (the answer stays plain) or the update's values
   * get their envelopes. */
  struct tt_av stored;
};

/* Validates every input (answering with a ValidationError before any I/O
 * when one is wrong) and starts the backend calls. Returns 0, and the ctx's
 * done runs once later with the result filled, or -1: it finished inside
 * this call (result filled, done never runs; docs/internals/completions.md).
 * Errors land in the result either way. */
int tt_orm_item_start(struct tt_orm_item_op *op);

/* The first refusal of a single-item request: the model's write policy
 * (orm/policy.h). A caller that types the key itself and fails to asks it
 * first, so that it comes before a key error as it does in
 * tt_orm_item_check_request. Returns 0 or -1. */
int tt_orm_item_check_policy(const struct tt_orm_item_op *op, struct tt_error *err);

/* The refusals of a single-item request before any I/O, in this order:
 * tt_orm_item_check_policy, the key (all but CREATE: op->item_key checked,
 * and copied into *key unless `key` is NULL), those of encrypted attributes
 * (orm/crypt.h: EncryptionNotConfigured without a KMS key, but not for a
 * DELETE; EncryptedFieldNotQueryable for a condition naming one or a select
 * path reaching inside one), and If-Match on a model without a version.
 * Shared by the plain path and the unique-guard path, so that both refuse
 * the same requests. Returns 0 or -1. */
int tt_orm_item_check_request(const struct tt_orm_item_op *op, struct tt_av *key,
                              struct tt_error *err);

/* Fails op, never started, with the first refusal of
 * tt_orm_item_check_request, else with `input` (the error of making its
 * inputs): the order of a request whose inputs failed to convert. Frees
 * the inputs op owns. Returns as tt_orm_item_start does. */
int tt_orm_item_fail_input(struct tt_orm_item_op *op, const struct tt_error *input);

/* Hands `item` (a stored M, copied) back as op's typed answer
 * (TT_ORM_ANSWER_ITEM of op's model), `created` when the write created it.
 * Returns 0, or -1 with the result failed (out of memory). */
int tt_orm_item_answer(struct tt_orm_item_op *op, const struct tt_av *item, bool created);

#endif
