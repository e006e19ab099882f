/* SPDX-License-Identifier: Apache-2.0 */
/* txn.c -- POST /v1/transactions/write and /v1/transactions/get. */
#include "api/handlers.h"
#include "api/orm_job.h"
#include "orm/txn.h"

static void start(struct tt_request *req, bool get) {
  json_t *body = tt_request_json_body(req, true);
  struct tt_orm_txn_op *op = body ? tt_api_orm_job(req, sizeof(*op), NULL, body) : NULL;
  if (op == NULL)
    return;
  op->get = get;
  op->body = body;
  tt_orm_txn_start(op);
}

void tt_handle_txn_write(struct tt_request *req) { start(req, false); }

void tt_handle_txn_get(struct tt_request *req) { start(req, true); }
