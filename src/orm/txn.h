/* SPDX-License-Identifier: Apache-2.0 */
/* txn.h -- transactions across models (TransactWriteItems/TransactGetItems)
 * and the single-item writes of models with unique attributes, which need a
 * transaction to move their guard items with the item. */
#ifndef TT_ORM_TXN_H
#define TT_ORM_TXN_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "orm/items.h"
#include "orm/orm.h"

/* DynamoDB's limits of one transaction. */
#define TT_ORM_TXN_MAX_ITEMS 100
#define TT_ORM_TXN_MAX_BYTES (4u * 1024u * 1024u)
/* Attempts when a concurrent writer changed an item between the read of
 * its unique values and the write that moves their guards. */
#define TT_ORM_TXN_MAX_ATTEMPTS 4

/* What one action of a transaction does: CHECK a condition or an expected
 * version without a write; a read transaction holds GETs only. */
enum tt_orm_txn_kind { TT_ORM_TXN_CREATE = 1, TT_ORM_TXN_PUT, TT_ORM_TXN_UPDATE,
                       TT_ORM_TXN_DELETE, TT_ORM_TXN_CHECK, TT_ORM_TXN_GET };

/* One action, typed; `field` names it in errors ("items[3]"). */
struct tt_orm_txn_action {
  enum tt_orm_txn_kind kind;
  const struct tt_model *model; /* borrowed until the caller read the answer */
  char field[24];
  struct tt_av key;         /* all but CREATE/PUT: an M of exactly the key attributes */
  struct tt_av item;        /* CREATE/PUT: the item (tt_orm_item_from_json at op->now) */
  struct tt_orm_update upd; /* UPDATE (tt_orm_update_from_json at op->now) */
  bool upsert;              /* UPDATE */
  struct tt_orm_expected expected; /* to check; an UPDATE without one takes upd's */
  struct tt_cond *condition; /* the typed condition (orm/cond.h) or NULL; owned like upd */
  struct tt_select select;  /* GET: the projection (tt_orm_select_from_json); n 0: none */
};

/* What a canceled transaction says of one action (op->reasons[i]). */
struct tt_orm_txn_reason {
  enum tt_orm_txn_verdict {
    TT_ORM_TXN_NONE,      /* nothing against it */
    TT_ORM_TXN_EXISTS,    /* the item a create (or a create-only put) makes exists */
    TT_ORM_TXN_MISSING,   /* the item an update or delete implies is missing */
    TT_ORM_TXN_VERSION,   /* the version is not the expected one */
    TT_ORM_TXN_CONDITION, /* the condition is false */
    TT_ORM_TXN_UNIQUE,    /* another item holds its value of unique attribute `attr` */
    TT_ORM_TXN_OTHER      /* DynamoDB's `code` and `message` (or NULL) */
  } v;
  const char *code, *message;
  const struct tt_model_attr *attr;
  bool has_version;
  int64_t version; /* the stored version, when has_version */
};

/* One transaction (POST /v1/transactions/write or /get): fill a zeroed op
 * and its zeroed actions, then tt_orm_txn_start. The op borrows the
 * actions until done ran, frees their key, item, upd and condition, and
 * settles their expected version (an update's own). */
struct tt_orm_txn_op {
  struct tt_orm_ctx ctx; /* first; ctx.model is NULL */
  bool get;              /* a read transaction */
  struct tt_orm_txn_action *actions;
  size_t n_actions;
  const char *client_token; /* write: ClientRequestToken (1 to 36 characters) or NULL */
  uint64_t token_hash;      /* of what the token names: equal requests, equal hashes */
  bool retry_conflicts;     /* write: retry transaction conflicts */
  int64_t now; /* when the items and updates were made: with a token tt_orm_tokens_time's */
  /* Answers, in the ctx's arena: get's items[i] (an M, encrypted attributes
   * opened, or a NULL value when absent; the caller frees each), and a
   * TransactionCanceled's reasons[i], one per action. */
  struct tt_av *items;
  struct tt_orm_txn_reason *reasons;
};

/* Checks every action before any I/O, in order (write policy, key, the
 * update's key attributes, a check with nothing to check, an expected
 * version of a model without one, unique attributes), then two actions on
 * one item, encrypted attributes, more than 100 DynamoDB actions or 4 MB;
 * then write: reads the current unique values of items of models with
 * unique attributes, then one TransactWriteItems holding every item plus
 * its guard actions, with the client token; success answers nothing
 * (TT_ORM_ANSWER_NONE), a cancellation is 409 TransactionCanceled with
 * op->reasons; conflicts are retried only with retry_conflicts. get: one
 * TransactGetItems, op->items in request order. The ctx's done runs once
 * later (0), or it finished inside this call (-1, result filled, done never
 * runs; docs/internals/completions.md). */
int tt_orm_txn_start(struct tt_orm_txn_op *op);

/* Fails op, never started, whose actions [0, n_typed) were typed and whose
 * action n_typed, when its kind is set, was typed up to its model and kind,
 * with the first refusal tt_orm_txn_start would make of them, else with
 * `input`: the order of a request whose input failed to type. Frees what
 * the actions hold. Returns -1, as a start that finished inside it. */
int tt_orm_txn_fail_input(struct tt_orm_txn_op *op, size_t n_typed,
                          const struct tt_error *input);

/* Runs a create, put, update or delete of one item of a model with unique
 * attributes (tt_unique_model_has) as a transaction that also claims and
 * releases the item's guard items; same inputs and answers as
 * tt_orm_item_start (items.h), plus 409 ConditionFailed with details.field
 * naming the unique attribute whose value another item holds. A GET is
 * handed to tt_orm_item_start. Returns as tt_orm_txn_start. */
int tt_orm_txn_item_start(struct tt_orm_item_op *op);

#endif
