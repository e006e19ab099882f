/* SPDX-License-Identifier: Apache-2.0 */
/* items.c -- /v1/models/{m}/items: create, put, get, patch, delete. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "orm/items.h"
#include "orm/txn.h"
#include "orm/unique.h"

struct item_job {
  struct tt_orm_item_op op; /* first */
  struct tt_orm_result result;
  json_t *body;
  json_t *select;
};

static void item_done(void *arg) { (void)arg; }

static void item_joined(struct tt_request *req) {
  struct item_job *job = req->handler_data;
  tt_request_respond_result(req, &job->result);
  tt_orm_result_free(&job->result);
  json_decref(job->body);
  json_decref(job->select);
}

/* Parses If-Match: "<version>" (quotes optional). Returns 0, 1 when absent,
 * -1 after answering 400. */
static int if_match(struct tt_request *req, struct tt_orm_expected *out) {
  const char *h = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, "If-Match");
  const char *q = tt_request_query(req, "expected_version");
  const char *v = h ? h : q;
  if (v == NULL)
    return 1;
  size_t n = strlen(v);
  if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
    v++;
    n -= 2;
  }
  char buf[24];
  char *end = NULL;
  if (n == 0 || n >= sizeof(buf))
    goto bad;
  memcpy(buf, v, n);
  buf[n] = '\0';
  errno = 0;
  long long ver = strtoll(buf, &end, 10);
  if (errno || *end || ver < 0 || buf[0] == '-' || buf[0] == '+')
    goto bad;
  out->present = true;
  out->version = ver;
  return 0;
bad:
  tt_request_fail(req, TT_ERR_VALIDATION, h ? "If-Match" : "expected_version",
                  "give the expected version as a whole number, e.g. If-Match: \"3\"");
  return -1;
}

/* Common set-up: model, key segment, job. NULL after answering. */
static struct item_job *item_job_new(struct tt_request *req, enum tt_orm_item_kind kind) {
  const char *name = tt_request_param(req, "model");
  if (name == NULL)
    return NULL;
  const struct tt_model *m = tt_model_registry_get(req->server->orm->models, name);
  if (m == NULL) {
    tt_request_fail(req, TT_ERR_MODEL_NOT_FOUND, "model",
                    "no model is called so; list them with GET /v1/models");
    return NULL;
  }
  struct item_job *job = tt_arena_alloc(&req->arena, sizeof(*job));
  if (job == NULL) {
    tt_request_fail(req, TT_ERR_INTERNAL, NULL, "out of memory");
    return NULL;
  }
  tt_buf_init(&job->result.body, 0);
  tt_orm_ctx_init(&job->op.ctx, req->server->orm, &req->join, &req->arena, req->request_id, m,
                  &job->result, item_done, job);
  job->op.kind = kind;
  const struct tt_route_param *key = tt_route_param(&req->match, "key");
  if (key) {
    job->op.raw_key = key->value;
    job->op.raw_key_len = key->len;
  }
  req->handler_data = job;
  req->on_joined = item_joined;
  return job;
}

/* Starts the op; the answer comes from item_joined once it is joined. */
static void run(struct tt_request *req, struct item_job *job) {
  /* Writes of a model with unique attributes move guard items with the
   * item, in one transaction (orm/txn.h). */
  if (tt_unique_model_has(job->op.ctx.model))
    tt_orm_txn_item_start(&job->op);
  else
    tt_orm_item_start(&job->op);
  (void)req;
}

/* Drops a job that failed validation in the handler itself. */
static void abandon(struct tt_request *req, struct item_job *job) {
  req->on_joined = NULL;
  req->handler_data = NULL;
  json_decref(job->body);
  json_decref(job->select);
  tt_orm_ctx_finish(&job->op.ctx);
  tt_orm_result_free(&job->result);
}

void tt_handle_item_create(struct tt_request *req) {
  struct item_job *job = item_job_new(req, TT_ORM_OP_CREATE);
  if (job == NULL)
    return;
  job->body = tt_request_json_body(req, true);
  if (job->body == NULL) {
    abandon(req, job);
    return;
  }
  job->op.body = job->body;
  run(req, job);
}

void tt_handle_item_put(struct tt_request *req) {
  struct item_job *job = item_job_new(req, TT_ORM_OP_PUT);
  if (job == NULL)
    return;
  const char *inm = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, "If-None-Match");
  if (inm && strcmp(inm, "*") != 0) {
    tt_request_fail(req, TT_ERR_VALIDATION, "If-None-Match", "only If-None-Match: * is supported");
    abandon(req, job);
    return;
  }
  job->op.if_none_match = inm != NULL;
  if (if_match(req, &job->op.expected) < 0 ||
      (job->body = tt_request_json_body(req, true)) == NULL) {
    abandon(req, job);
    return;
  }
  if (job->op.if_none_match && job->op.expected.present) {
    tt_request_fail(req, TT_ERR_VALIDATION, "If-None-Match",
                    "If-None-Match and If-Match exclude each other");
    abandon(req, job);
    return;
  }
  job->op.body = job->body;
  run(req, job);
}

/* ?select=a,b.c -> ["a","b.c"] */
static json_t *select_param(struct tt_request *req) {
  const char *s = tt_request_query(req, "select");
  if (s == NULL || s[0] == '\0')
    return NULL;
  json_t *list = json_array();
  while (*s) {
    size_t n = strcspn(s, ",");
    if (n)
      json_array_append_new(list, json_stringn(s, n));
    s += n + (s[n] == ',');
  }
  return list;
}

static int bool_param(struct tt_request *req, const char *name, bool *out) {
  const char *v = tt_request_query(req, name);
  if (v == NULL)
    return 0;
  if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0 || v[0] == '\0')
    *out = true;
  else if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
    *out = false;
  else {
    tt_request_fail(req, TT_ERR_VALIDATION, name, "%s must be true or false", name);
    return -1;
  }
  return 0;
}

void tt_handle_item_get(struct tt_request *req) {
  struct item_job *job = item_job_new(req, TT_ORM_OP_GET);
  if (job == NULL)
    return;
  const char *format = tt_request_query(req, "format");
  if (format && strcmp(format, "dynamodb") != 0 && strcmp(format, "json") != 0) {
    tt_request_fail(req, TT_ERR_VALIDATION, "format", "format must be json or dynamodb");
    abandon(req, job);
    return;
  }
  if (bool_param(req, "consistent", &job->op.consistent) != 0) {
    abandon(req, job);
    return;
  }
  job->op.raw_format = format && strcmp(format, "dynamodb") == 0;
  job->select = select_param(req);
  job->op.select = job->select;
  run(req, job);
}

void tt_handle_item_patch(struct tt_request *req) {
  struct item_job *job = item_job_new(req, TT_ORM_OP_UPDATE);
  if (job == NULL)
    return;
  if (if_match(req, &job->op.expected) < 0 ||
      (job->body = tt_request_json_body(req, true)) == NULL) {
    abandon(req, job);
    return;
  }
  json_t *upsert = json_object_get(job->body, "upsert");
  if (upsert && !json_is_boolean(upsert)) {
    tt_request_fail(req, TT_ERR_VALIDATION, "upsert", "upsert must be true or false");
    abandon(req, job);
    return;
  }
  job->op.upsert = json_is_true(upsert);
  job->op.body = job->body;
  run(req, job);
}

void tt_handle_item_delete(struct tt_request *req) {
  struct item_job *job = item_job_new(req, TT_ORM_OP_DELETE);
  if (job == NULL)
    return;
  if (if_match(req, &job->op.expected) < 0) {
    abandon(req, job);
    return;
  }
  run(req, job);
}
