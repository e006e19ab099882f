/* SPDX-License-Identifier: Apache-2.0 */
/* orm_job.c -- path models and ORM jobs shared by the ORM-backed handlers. */
#include "api/handlers.h"

#include <stdalign.h>
#include <stddef.h>

#include "model/registry.h"

struct orm_job {
  struct tt_orm_result result;
  json_t *body;
  tt_api_orm_answer_fn answer;
  alignas(max_align_t) unsigned char op[]; /* starts with a struct tt_orm_ctx */
};

const struct tt_model *tt_api_path_model(struct tt_request *req) {
  const char *name = tt_request_param(req, "model");
  if (name == NULL)
    return NULL;
  struct tt_error err;
  const struct tt_model *m = tt_model_registry_lookup(req->server->orm->models, name, "model", &err);
  if (m == NULL)
    tt_request_respond_error(req, &err, NULL);
  else
    req->path_model = true; /* the span's and log line's model (api/server.c) */
  return m;
}

static void job_done(struct tt_orm_ctx *ctx) { (void)ctx; }

static void job_joined(struct tt_request *req) {
  struct orm_job *job = req->handler_data;
  job->answer(req, &job->result, job->op);
  tt_orm_result_free(&job->result);
  json_decref(job->body);
}

void *tt_api_orm_job(struct tt_request *req, size_t op_size, const struct tt_model *model,
                     json_t *body, tt_api_orm_answer_fn answer) {
  struct orm_job *job = tt_arena_alloc(&req->arena, sizeof(*job) + op_size);
  if (job == NULL) {
    json_decref(body);
    tt_request_fail(req, TT_ERR_INTERNAL, NULL, "out of memory");
    return NULL;
  }
  job->body = body;
  job->answer = answer;
  tt_orm_ctx_init((struct tt_orm_ctx *)job->op, req->server->orm, &req->join, &req->arena,
                  req->request_id, model, &job->result, job_done, job);
  req->handler_data = job;
  req->on_joined = job_joined;
  return job->op;
}
