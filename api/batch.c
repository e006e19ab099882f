/* SPDX-License-Identifier: Apache-2.0 */
/* batch.c -- POST /v1/models/{m}/batch-get and /batch-write. */
#include "api/handlers.h"
#include "orm/batch.h"

struct batch_job {
  struct tt_orm_batch_op op; /* first */
  struct tt_orm_result result;
  json_t *body;
};

static void batch_done(void *arg) { (void)arg; }

static void batch_joined(struct tt_request *req) {
  struct batch_job *job = req->handler_data;
  tt_request_respond_result(req, &job->result);
  tt_orm_result_free(&job->result);
  json_decref(job->body);
}

static void start(struct tt_request *req, bool write) {
  const char *name = tt_request_param(req, "model");
  if (name == NULL)
    return;
  const struct tt_model *m = tt_model_registry_get(req->server->orm->models, name);
  if (m == NULL) {
    tt_request_fail(req, TT_ERR_MODEL_NOT_FOUND, "model",
                    "no model is called so; list them with GET /v1/models");
    return;
  }
  json_t *body = tt_request_json_body(req, true);
  if (body == NULL)
    return;
  struct batch_job *job = tt_arena_alloc(&req->arena, sizeof(*job));
  if (job == NULL) {
    json_decref(body);
    tt_request_fail(req, TT_ERR_INTERNAL, NULL, "out of memory");
    return;
  }
  tt_buf_init(&job->result.body, 0);
  job->body = body;
  tt_orm_ctx_init(&job->op.ctx, req->server->orm, &req->join, &req->arena, req->request_id, m,
                  &job->result, batch_done, job);
  job->op.write = write;
  job->op.body = body;
  /* Unprocessed work stops being retried before the request deadline, so
   * the answer can still name it (BatchIncomplete) instead of a timeout. */
  job->op.deadline_ns = req->start_ns + req->server->opts.request_timeout_ms * 1000000u;
  req->handler_data = job;
  req->on_joined = batch_joined;
  tt_orm_batch_start(&job->op);
}

void tt_handle_batch_get(struct tt_request *req) { start(req, false); }

void tt_handle_batch_write(struct tt_request *req) { start(req, true); }
