/* SPDX-License-Identifier: Apache-2.0 */
/* query.c -- POST /v1/models/{m}/query and /scan: the ORM's typed page
 * rendered as the answer. */
#include "api/handlers.h"
#include "api/item_io.h"
#include "api/orm_job.h"
#include "orm/query.h"

static void page_answer(struct tt_request *req, struct tt_orm_result *r, void *arg) {
  struct tt_orm_query_op *op = arg;
  if (r->status != 0 || r->answer != TT_ORM_ANSWER_PAGE) {
    tt_request_respond_result(req, r);
    return;
  }
  struct tt_buf b;
  struct tt_error err;
  tt_buf_init(&b, 0);
  if (tt_api_page_write(&b, r, op->select, &err) != 0) {
    tt_buf_free(&b);
    tt_request_respond_error(req, &err, NULL);
    return;
  }
  size_t len;
  char *text = tt_buf_steal(&b, &len);
  tt_request_respond_json_text(req, 200, text, len);
}

static void start(struct tt_request *req, bool scan) {
  const struct tt_model *m = tt_api_path_model(req);
  json_t *body = m ? tt_request_json_body(req, true) : NULL;
  struct tt_orm_query_op *op = body ? tt_api_orm_job(req, sizeof(*op), m, body) : NULL;
  if (op == NULL)
    return;
  tt_api_orm_job_answer(op, page_answer);
  op->scan = scan;
  op->body = body;
  tt_orm_query_start(op);
}

void tt_handle_query(struct tt_request *req) { start(req, false); }

void tt_handle_scan(struct tt_request *req) { start(req, true); }
