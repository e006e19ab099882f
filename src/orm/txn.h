/* SPDX-License-Identifier: Apache-2.0 */
/* txn.h -- transactions across models (TransactWriteItems/TransactGetItems)
 * and the single-item writes of models with unique attributes, which need a
 * transaction to move their guard items with the item. */
#ifndef TT_ORM_TXN_H
#define TT_ORM_TXN_H

#include <jansson.h>
#include <stdbool.h>

#include "orm/items.h"
#include "orm/orm.h"

/* DynamoDB's limits of one transaction. */
#define TT_ORM_TXN_MAX_ITEMS 100
#define TT_ORM_TXN_MAX_BYTES (4u * 1024u * 1024u)
/* Attempts when a concurrent writer changed an item between the read of
 * its unique values and the write that moves their guards. */
#define TT_ORM_TXN_MAX_ATTEMPTS 4

struct tt_orm_txn_state;

/* One POST /v1/transactions/write or /get. Fill the inputs, then
 * tt_orm_txn_start. ctx.model is NULL (items name their models); the op
 * borrows `body` until its ctx's done ran. */
struct tt_orm_txn_op {
  struct tt_orm_ctx ctx; /* first */
  bool get;              /* transactions/get; else transactions/write */
  const json_t *body;
  struct tt_orm_txn_state *st; /* private */
};

/* Validates the whole body before any I/O (ValidationError with the
 * offending item's path, e.g. "items[2].set.createdAt"; two actions on one
 * item; lifecycle fields set by hand; more than 100 items or 4 MB), then:
 *   write: reads the current unique values of items of models with unique
 *     attributes (TransactGetItems), then one TransactWriteItems holding
 *     every item plus its guard actions, with `client_token` as
 *     ClientRequestToken; 200 {"ok": true}, or 409 TransactionCanceled with
 *     details.reasons[i] = {"index", "code", ...} for every item (codes
 *     ConditionalCheckFailed, VersionConflict, TransactionConflict, None,
 *     ValidationError, ...; a taken unique value is ConditionalCheckFailed
 *     with "attribute"). Conflicts are retried only with
 *     "retry_conflicts": true.
 *   get: one TransactGetItems; 200 {"items": [item | null, ...]} in request
 *     order.
 * The ctx's done runs once later (0), or it finished inside this call (-1,
 * result filled, done never runs; docs/internals/completions.md). */
int tt_orm_txn_start(struct tt_orm_txn_op *op);

/* Runs a create, put, update or delete of one item of a model with unique
 * attributes (tt_unique_model_has) as a transaction that also claims and
 * releases the item's guard items; same inputs and answers as
 * tt_orm_item_start (items.h), plus 409 ConditionFailed with details.field
 * naming the unique attribute whose value another item holds. A GET is
 * handed to tt_orm_item_start. Returns as tt_orm_txn_start. */
int tt_orm_txn_item_start(struct tt_orm_item_op *op);

#endif
