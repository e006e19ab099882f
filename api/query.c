/* SPDX-License-Identifier: Apache-2.0 */
/* query.c -- POST /v1/models/{m}/query and /scan. */
#include "api/handlers.h"
#include "orm/query.h"

struct query_job {
  struct tt_orm_query_op op; /* first */
  struct tt_orm_result result;
  json_t *body;
};

static void query_done(void *arg) { (void)arg; }

static void query_joined(struct tt_request *req) {
  struct query_job *job = req->handler_data;
  tt_request_respond_result(req, &job->result);
  tt_orm_result_free(&job->result);
  json_decref(job->body);
}

static void start(struct tt_request *req, bool scan) {
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
  struct query_job *job = tt_arena_alloc(&req->arena, sizeof(*job));
  if (job == NULL) {
    json_decref(body);
    tt_request_fail(req, TT_ERR_INTERNAL, NULL, "out of memory");
    return;
  }
  tt_buf_init(&job->result.body, 0);
  job->body = body;
  tt_orm_ctx_init(&job->op.ctx, req->server->orm, &req->join, &req->arena, req->request_id, m,
                  &job->result, query_done, job);
  job->op.scan = scan;
  job->op.body = body;
  req->handler_data = job;
  req->on_joined = query_joined;
  tt_orm_query_start(&job->op);
}

void tt_handle_query(struct tt_request *req) { start(req, false); }

void tt_handle_scan(struct tt_request *req) { start(req, true); }
