/* SPDX-License-Identifier: Apache-2.0 */
/* txn.c -- POST /v1/transactions/write and /v1/transactions/get. */
#include "api/handlers.h"
#include "orm/txn.h"

struct txn_job {
  struct tt_orm_txn_op op; /* first */
  struct tt_orm_result result;
  json_t *body;
};

static void txn_done(void *arg) { (void)arg; }

static void txn_joined(struct tt_request *req) {
  struct txn_job *job = req->handler_data;
  tt_request_respond_result(req, &job->result);
  tt_orm_result_free(&job->result);
  json_decref(job->body);
}

static void start(struct tt_request *req, bool get) {
  json_t *body = tt_request_json_body(req, true);
  if (body == NULL)
    return;
  struct txn_job *job = tt_arena_alloc(&req->arena, sizeof(*job));
  if (job == NULL) {
    json_decref(body);
    tt_request_fail(req, TT_ERR_INTERNAL, NULL, "out of memory");
    return;
  }
  tt_buf_init(&job->result.body, 0);
  job->body = body;
  tt_orm_ctx_init(&job->op.ctx, req->server->orm, &req->join, &req->arena, req->request_id, NULL,
                  &job->result, txn_done, job);
  job->op.get = get;
  job->op.body = body;
  req->handler_data = job;
  req->on_joined = txn_joined;
  tt_orm_txn_start(&job->op);
}

void tt_handle_txn_write(struct tt_request *req) { start(req, false); }

void tt_handle_txn_get(struct tt_request *req) { start(req, true); }
