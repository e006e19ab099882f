/* SPDX-License-Identifier: Apache-2.0 */
/* txn.h -- the HTTP side of transactions: a body of POST
 * /v1/transactions/write or /get read into the ORM's typed transaction
 * (orm/txn.h), and its typed answer rendered. */
#ifndef TT_API_TXN_H
#define TT_API_TXN_H

#include <jansson.h>

#include "orm/txn.h"

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
