/* SPDX-License-Identifier: Apache-2.0 */
/* query.c -- POST /v1/models/{m}/query and /scan. */
#include "api/handlers.h"
#include "api/orm_job.h"
#include "orm/query.h"

static void start(struct tt_request *req, bool scan) {
  const struct tt_model *m = tt_api_path_model(req);
  json_t *body = m ? tt_request_json_body(req, true) : NULL;
  struct tt_orm_query_op *op = body ? tt_api_orm_job(req, sizeof(*op), m, body) : NULL;
  if (op == NULL)
    return;
  op->scan = scan;
  op->body = body;
  tt_orm_query_start(op);
}

void tt_handle_query(struct tt_request *req) { start(req, false); }

void tt_handle_scan(struct tt_request *req) { start(req, true); }
