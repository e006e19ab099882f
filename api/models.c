/* SPDX-License-Identifier: Apache-2.0 */
/* models.c -- /v1/models: list, show and register DMS models; ensure,
 * describe and delete their tables. */
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "model/registry.h"
#include "obs/log.h"
#include "value/json_exact.h"

/* A table operation running for a request (an ORM job, handlers.h). */
struct table_op {
  struct tt_orm_ctx ctx;       /* first */
  struct tt_model *registered; /* PUT /v1/models: register and answer with this model */
  unsigned put_flags;          /* its TT_MODEL_PUT_* */
};

/* Logs a replace that ?allow_unsafe=true let through: names only (the
 * model, the attributes, the indexes), never values. */
static void log_unsafe(struct tt_request *req, const struct tt_model *old,
                       const struct tt_model *m) {
  struct tt_model_change c[8];
  size_t n = tt_model_unsafe_changes(old, m, c, sizeof(c) / sizeof(c[0]));
  if (n == 0)
    return;
  char list[512];
  size_t len = 0;
  list[0] = '\0';
  for (size_t i = 0; i < n && i < sizeof(c) / sizeof(c[0]); i++) {
    int w = snprintf(list + len, sizeof(list) - len, "%s%s%s%s", i ? "," : "",
                     tt_model_change_label(c[i].kind), c[i].name ? ":" : "",
                     c[i].name ? c[i].name : "");
    if (w < 0 || (size_t)w >= sizeof(list) - len)
      break; /* the count says there is more */
    len += (size_t)w;
  }
  tt_utf8_scrub(list);
  struct tt_log_line l;
  tt_log_begin(&l, TT_LOG_WARN, "model.unsafe_replace");
  tt_log_str(&l, "request_id", req->request_id);
  tt_log_str(&l, "model", m->name);
  tt_log_int(&l, "count", (int64_t)n);
  tt_log_str(&l, "changes", list);
  tt_log_end(&l);
}

/* Registers `m` (borrowed) after its checks and, on the memory backend, its
 * table passed: the registry checks again, as another PUT may have come
 * in between. Returns 0 with the answer's status in *status, or -1 after
 * answering the error. */
static int register_model(struct tt_request *req, struct tt_model *m, unsigned flags,
                          unsigned *status) {
  struct tt_model_registry *r = req->server->orm->models;
  struct tt_error err;
  enum tt_model_put_result what;
  const struct tt_model *cur = tt_model_registry_get_internal(r, m->name);
  struct tt_model *old = cur ? tt_model_ref((struct tt_model *)cur) : NULL;
  if (tt_model_registry_put(r, tt_model_ref(m), flags, &what, &err) != 0) {
    tt_model_unref(old);
    tt_request_respond_error(req, &err, NULL);
    return -1;
  }
  if (what == TT_MODEL_PUT_REPLACED && (flags & TT_MODEL_PUT_ALLOW_UNSAFE))
    log_unsafe(req, old, m);
  tt_model_unref(old);
  *status = what == TT_MODEL_PUT_CREATED ? 201 : 200;
  return 0;
}

static void table_answer(struct tt_request *req, struct tt_orm_result *r, void *arg) {
  struct table_op *job = arg;
  unsigned status;
  if (job->registered && r->status == 0) {
    /* The table is there: register the model and answer with it. */
    if (register_model(req, job->registered, job->put_flags, &status) == 0)
      tt_request_respond_json(req, status, tt_model_to_json(job->registered));
  } else if (r->status == 0 && r->answer == TT_ORM_ANSWER_TABLE) {
    const struct tt_orm_table_desc *d = &r->table;
    json_t *out = tt_orm_table_to_json(d);
    struct tt_buf b;
    tt_buf_init(&b, 0);
    /* Our writer, not json_dumps: jansson's drops a key it failed to write. */
    if (out == NULL || tt_json_dump(out, 0, &b) != 0) {
      tt_request_fail(req, TT_ERR_INTERNAL, NULL, "out of memory");
      tt_buf_free(&b);
    } else {
      tt_request_respond_buf(req, d->created ? 201 : 200, &b);
    }
    json_decref(out);
  } else {
    tt_request_respond_result(req, r);
  }
  if (job->registered)
    tt_model_unref(job->registered);
}

void tt_handle_models_list(struct tt_request *req) {
  const struct tt_model_registry *r = req->server->orm->models;
  json_t *list = json_array();
  /* The user's models only: the job ledger's are its own (docs/ledger.md
   * "Reserved models"), readable one by one with GET /v1/models/{model}. */
  for (size_t i = 0; i < tt_model_registry_count(r); i++) {
    const struct tt_model *m = tt_model_registry_at(r, i);
    if (!tt_model_registry_is_reserved(r, m))
      json_array_append_new(list, tt_model_to_json(m));
  }
  tt_request_respond_json(req, 200, json_pack("{s:o}", "models", list));
}

void tt_handle_model_get(struct tt_request *req) {
  /* Reading a definition is harmless: this is the one route that shows the
   * reserved ledger models, which GET /v1/models does not list
   * (docs/ledger.md "Reserved models"). */
  const char *name = tt_request_param(req, "model");
  if (name == NULL)
    return; /* answered */
  const struct tt_model *m = tt_model_registry_get_internal(req->server->orm->models, name);
  if (m == NULL) {
    tt_request_fail(req, TT_ERR_MODEL_NOT_FOUND, "model",
                    "no model is called so; list them with GET /v1/models");
    return;
  }
  tt_request_respond_json(req, 200, tt_model_to_json(m));
}

void tt_handle_model_put(struct tt_request *req) {
  const char *name = tt_request_param(req, "model");
  if (name == NULL)
    return;
  json_t *body = tt_request_json_body(req, false);
  if (body == NULL)
    return;
  struct tt_error err;
  struct tt_model *m = NULL;
  const char *given = json_string_value(json_object_get(body, "name"));
  if (given && strcmp(given, name) != 0) {
    tt_request_fail(req, TT_ERR_VALIDATION, "name",
                    "the body's name differs from the model name in the path");
    goto done;
  }
  if (given == NULL)
    json_object_set_new(body, "name", json_string(name));
  /* A reserved name is refused whatever the body holds (the registry would
   * refuse a valid one too; this keeps the answer the same for both). */
  const struct tt_model *old = tt_model_registry_get_internal(req->server->orm->models, name);
  if (old && tt_model_registry_is_reserved(req->server->orm->models, old)) {
    tt_model_registry_lookup(req->server->orm->models, name, "name", &err);
    goto refuse;
  }
  if (tt_model_from_json(body, NULL, &m, &err) != 0)
    goto refuse;
  unsigned flags = 0;
  const char *replace = tt_request_query(req, "replace");
  if (replace && strcmp(replace, "true") == 0)
    flags |= TT_MODEL_PUT_REPLACE;
  const char *unsafe = tt_request_query(req, "allow_unsafe");
  if (unsafe && strcmp(unsafe, "true") == 0)
    flags |= TT_MODEL_PUT_ALLOW_UNSAFE;
  else if (unsafe && strcmp(unsafe, "false") != 0) {
    tt_request_fail(req, TT_ERR_VALIDATION, "allow_unsafe", "allow_unsafe must be true or false");
    goto done;
  }
  /* Every check before anything changes: a refused PUT leaves the registry
   * (and, on the memory backend, the tables) as they were. */
  enum tt_model_put_result what;
  if (tt_model_registry_check(req->server->orm->models, m, flags, &what, &err) != 0)
    goto refuse;
  if (!req->server->orm->auto_create_tables || what == TT_MODEL_PUT_IDENTICAL) {
    unsigned status = 200;
    if (what == TT_MODEL_PUT_IDENTICAL || register_model(req, m, flags, &status) == 0)
      tt_request_respond_json(req, status, tt_model_to_json(m));
    goto done;
  }
  /* The memory backend keeps every model's table: ensure it with the new
   * model first, register it only when that worked. */
  struct table_op *job = tt_api_orm_job(req, sizeof(*job), m, NULL, table_answer);
  if (job == NULL)
    goto done;
  job->registered = m; /* the job's reference now */
  m = NULL;
  job->put_flags = flags;
  tt_orm_table_ensure(&job->ctx);
  goto done;
refuse:
  tt_request_respond_error(req, &err, NULL);
done:
  tt_model_unref(m);
  json_decref(body);
}

/* Starts the table operation `start` on the path's model. */
static void table_job(struct tt_request *req, int (*start)(struct tt_orm_ctx *ctx)) {
  const struct tt_model *m = tt_api_path_model(req);
  struct table_op *job = m ? tt_api_orm_job(req, sizeof(*job), m, NULL, table_answer) : NULL;
  if (job)
    start(&job->ctx);
}

void tt_handle_table_put(struct tt_request *req) { table_job(req, tt_orm_table_ensure); }

void tt_handle_table_get(struct tt_request *req) { table_job(req, tt_orm_table_describe); }

void tt_handle_table_delete(struct tt_request *req) { table_job(req, tt_orm_table_delete); }
