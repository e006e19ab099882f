/* SPDX-License-Identifier: Apache-2.0 */
/* batch.c -- POST /v1/models/{m}/batch-get and /batch-write. */
#include "api/handlers.h"
#include "api/orm_job.h"
#include "orm/batch.h"

static void start(struct tt_request *req, bool write) {
  const struct tt_model *m = tt_api_path_model(req);
  json_t *body = m ? tt_request_json_body(req, true) : NULL;
  struct tt_orm_batch_op *op = body ? tt_api_orm_job(req, sizeof(*op), m, body) : NULL;
  if (op == NULL)
    return;
  op->write = write;
  op->body = body;
  /* Unprocessed work stops being retried before the request deadline, so
   * the answer can still name it (BatchIncomplete) instead of a timeout. */
  op->deadline_ns = req->start_ns + req->server->opts.request_timeout_ms * 1000000u;
  tt_orm_batch_start(op);
}

void tt_handle_batch_get(struct tt_request *req) { start(req, false); }

void tt_handle_batch_write(struct tt_request *req) { start(req, true); }
