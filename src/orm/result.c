/* SPDX-License-Identifier: Apache-2.0 */
/* result.c -- operation results (typed answers and rendered bodies) and the
 * mapping of backend errors onto the API's error codes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "orm/orm.h"

void tt_orm_result_free(struct tt_orm_result *r) {
  json_decref(r->details);
  r->details = NULL;
  tt_av_free(&r->item);
  for (size_t i = 0; i < r->page.n_items; i++)
    tt_av_free(&r->page.items[i]);
  free(r->page.items);
  free(r->page.cursor);
  memset(&r->page, 0, sizeof(r->page));
  if (r->model)
    tt_model_unref(r->model);
  r->model = NULL;
}

int tt_orm_fail(struct tt_orm_result *r, const struct tt_error *err) {
  r->status = -1;
  r->err = *err;
  return -1;
}

int tt_orm_fail_version(struct tt_orm_result *r, int64_t expected, const int64_t *have) {
  struct tt_error e;
  tt_error_set(&e, TT_ERR_VERSION_CONFLICT, "expected_version",
               "the item's version is not the expected one; read it again and retry");
  tt_orm_fail(r, &e);
  r->details = json_pack("{s:I}", "expected_version", (json_int_t)expected);
  if (have)
    json_object_set_new(r->details, "version", json_integer((json_int_t)*have));
  return -1;
}

int tt_orm_oom(struct tt_error *err) {
  return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
}

int tt_orm_map_put_copy(struct tt_av *map, const char *name, size_t len, const struct tt_av *v) {
  struct tt_av copy;
  if (tt_av_clone(&copy, v) == 0 && tt_av_map_put(map, name, len, &copy) == 0)
    return 0;
  tt_av_free(&copy); /* a failed put leaves the copy ours */
  return -1;
}

int tt_orm_fail_backend(struct tt_orm_result *r, const struct tt_backend_error *e,
                        const char *model) {
  r->status = -1;
  const char *t = e->type;
  if (strcmp(t, "ConditionalCheckFailedException") == 0) {
    tt_error_set(&r->err, TT_ERR_CONDITION_FAILED, NULL, "the condition of the write was not met");
  } else if (strcmp(t, "ResourceNotFoundException") == 0) {
    tt_error_set(&r->err, TT_ERR_TABLE_NOT_FOUND, NULL,
                 "the table of model %s does not exist; create it with PUT /v1/models/%s/table",
                 model ? model : "?", model ? model : "{model}");
  } else if (strcmp(t, "TransactionCanceledException") == 0) {
    tt_error_set(&r->err, TT_ERR_TRANSACTION_CANCELED, NULL,
                 "the transaction was canceled; see details.reasons");
  } else if (strcmp(t, "RequestCanceled") == 0) {
    tt_error_set(&r->err, TT_ERR_BACKEND_TIMEOUT, NULL,
                 "the backend call was canceled at the request deadline");
  } else if (e->http_status == 413 || strcmp(t, "RequestEntityTooLarge") == 0) {
    /* The endpoint (or a proxy before it) refused the body as too large,
     * possibly before reading it: sending it again cannot help. */
    tt_error_set(&r->err, TT_ERR_PAYLOAD_TOO_LARGE, NULL,
                 "the backend refused the request as too large (HTTP 413)");
  } else if (strcmp(t, "CredentialsRefused") == 0) {
    /* AWS refused the credentials for good (STS AccessDenied, ...): a
     * configuration problem. The message names the source (the partner)
     * and AWS's error code, never a secret (credentials.h). */
    tt_error_set(&r->err, TT_ERR_FORBIDDEN, NULL, "%s", e->message);
  } else if (strcmp(t, "CredentialsUnavailable") == 0) {
    tt_error_set(&r->err, TT_ERR_BACKEND_UNAVAILABLE, NULL, "%s", e->message);
  } else if (e->throttling) {
    tt_error_set(&r->err, TT_ERR_THROTTLED, NULL,
                 "the backend is still throttling after the retry budget (%s); retry later", t);
    r->retry_after_s = e->retry_after_ms ? (e->retry_after_ms + 999) / 1000 : 1;
  } else if (strstr(t, "Timeout") != NULL) {
    tt_error_set(&r->err, TT_ERR_BACKEND_TIMEOUT, NULL, "the backend timed out (%s)", t);
  } else if (strcmp(t, "DataDirUnavailable") == 0) {
    /* The memory backend's data dir failed (disk full, I/O error): the
     * message names the dir and the error, never an item. */
    tt_error_set(&r->err, TT_ERR_BACKEND_UNAVAILABLE, NULL, "%s", e->message);
  } else if (e->retryable) {
    tt_error_set(&r->err, TT_ERR_BACKEND_UNAVAILABLE, NULL, "the backend failed (%s); retry", t);
  } else if (strcmp(t, "ValidationException") == 0 && strstr(e->message, "Item size") != NULL) {
    /* An update can grow an item past the limit: only the backend knows. */
    tt_error_set(&r->err, TT_ERR_PAYLOAD_TOO_LARGE, "item",
                 "the item would exceed DynamoDB's 400 KB limit");
  } else if (strcmp(t, "ValidationException") == 0 ||
             strcmp(t, "SerializationException") == 0) {
    /* DynamoDB's validation texts name parameters, not item values. */
    tt_error_set(&r->err, TT_ERR_VALIDATION, NULL, "%s", e->message);
  } else if (strcmp(t, "ResourceInUseException") == 0) {
    tt_error_set(&r->err, TT_ERR_ALREADY_EXISTS, NULL, "the table is being changed; retry");
  } else if (strcmp(t, "ItemCollectionSizeLimitExceededException") == 0) {
    tt_error_set(&r->err, TT_ERR_VALIDATION, NULL,
                 "the item collection of this partition key exceeds 10 GB");
  } else {
    tt_error_set(&r->err, TT_ERR_BACKEND_UNAVAILABLE, NULL, "the backend answered %s", t);
  }
  return -1;
}

int64_t tt_orm_now_ns(const struct tt_orm *orm) {
  struct timespec ts;
  if (orm->now_ns)
    return orm->now_ns(orm->clock_arg);
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void tt_orm_ctx_init(struct tt_orm_ctx *ctx, struct tt_orm *orm, struct tt_join *join,
                     struct tt_arena *arena, const char *request_id,
                     const struct tt_model *model, struct tt_orm_result *result,
                     tt_orm_done_cb done, void *arg) {
  memset(ctx, 0, sizeof(*ctx));
  ctx->orm = orm;
  ctx->join = join;
  ctx->arena = arena;
  ctx->request_id = request_id;
  /* The registry may replace the model while we wait on the backend. */
  ctx->model = model ? tt_model_ref((struct tt_model *)model) : NULL;
  ctx->result = result;
  ctx->done = done;
  ctx->arg = arg;
}

void tt_orm_ctx_finish(struct tt_orm_ctx *ctx) {
  if (ctx->model)
    tt_model_unref(ctx->model);
  ctx->model = NULL;
  if (ctx->starting > 0) {
    ctx->settled = true; /* the start returns -1 instead */
    return;
  }
  if (ctx->done)
    ctx->done(ctx);
}

static void ctx_enter(struct tt_orm_ctx *ctx) { ctx->starting++; }

static int ctx_leave(struct tt_orm_ctx *ctx) {
  if (--ctx->starting > 0)
    return 0; /* a nested start: the outer one answers */
  return ctx->settled ? -1 : 0;
}

int tt_orm_ctx_start(struct tt_orm_ctx *ctx, int (*run)(struct tt_orm_ctx *ctx)) {
  ctx_enter(ctx);
  run(ctx);
  return ctx_leave(ctx);
}

int tt_orm_ctx_refuse(struct tt_orm_ctx *ctx, const struct tt_error *err) {
  ctx_enter(ctx);
  tt_orm_fail(ctx->result, err);
  tt_orm_ctx_finish(ctx); /* inside the start: done does not run */
  return ctx_leave(ctx);
}

/* Starts ctx->call; see tt_orm_call. */
static int call_start(struct tt_orm_ctx *ctx, enum tt_ddb_op op,
                      const struct tt_ddb_table_request *table,
                      const struct tt_ddb_item_request *item, tt_client_done_cb cb) {
  struct tt_client_call *call = &ctx->call;
  call->request_id = ctx->request_id;
  call->model = ctx->model ? ctx->model->name : NULL;
  int rc = item ? tt_client_start_item(ctx->orm->client, ctx->join, call, op, item, cb, ctx)
                : tt_client_start_table(ctx->orm->client, ctx->join, call, op, table, cb, ctx);
  return rc == 0 ? 0 : -1;
}

int tt_orm_call_table(struct tt_orm_ctx *ctx, enum tt_ddb_op op,
                      const struct tt_ddb_table_request *table, tt_client_done_cb cb) {
  return call_start(ctx, op, table, NULL, cb);
}

int tt_orm_call_item(struct tt_orm_ctx *ctx, enum tt_ddb_op op,
                     const struct tt_ddb_item_request *item, tt_client_done_cb cb) {
  return call_start(ctx, op, NULL, item, cb);
}

/* The declared-attribute rule of tt_orm_check_select for one path. */
static int check_path(const struct tt_model *m, const char *path, const char *field,
                      struct tt_error *err) {
  const char *name;
  size_t n;
  tt_expr_rest_path_head(path, &name, &n);
  if (m->additional_attributes || tt_model_attr_find(m, name, n) != NULL)
    return 0;
  char where[128];
  snprintf(where, sizeof(where), "%s.%.*s", field, (int)(n < 120 ? n : 120), name);
  tt_utf8_scrub(where); /* drops a character the cut split */
  return tt_error_set(err, TT_ERR_VALIDATION, where,
                      "%s names an attribute that model %s does not declare", where, m->name);
}

int tt_orm_check_select(const struct tt_model *m, const struct tt_select *select,
                        const char *field, struct tt_error *err) {
  for (size_t i = 0; select != NULL && i < select->n; i++)
    if (check_path(m, select->paths[i], field, err) != 0)
      return -1;
  return 0;
}

int tt_orm_select_from_json(const struct tt_model *m, const json_t *v, const char *field,
                            struct tt_arena *a, struct tt_select *out, struct tt_error *err) {
  size_t n = json_array_size(v);
  const char **paths;
  memset(out, 0, sizeof(*out));
  if (v == NULL || json_is_null(v))
    return 0;
  if (!json_is_array(v) || n == 0)
    return tt_error_set(err, TT_ERR_VALIDATION, field,
                        "%s must be a non-empty list of attribute paths", field);
  if ((paths = tt_arena_alloc(a, n * sizeof(*paths))) == NULL)
    return tt_orm_oom(err);
  /* The shape is checked for every model: only whether the first segment
   * is declared depends on additional_attributes. */
  for (size_t i = 0; i < n; i++) {
    if ((paths[i] = json_string_value(json_array_get(v, i))) == NULL)
      return tt_error_set(err, TT_ERR_VALIDATION, field, "%s[%zu] must be a string", field, i);
    if (check_path(m, paths[i], field, err) != 0)
      return -1;
  }
  *out = (struct tt_select){.paths = paths, .n = n};
  return 0;
}

int tt_orm_take_placeholders(struct tt_expr_builder *b, struct tt_av *names, struct tt_av *values,
                             const struct tt_av **names_ref, const struct tt_av **values_ref,
                             struct tt_error *err) {
  if (tt_expr_builder_take(b, names, values, err) != 0)
    return -1;
  *names_ref = names->len ? names : NULL;
  *values_ref = values->len ? values : NULL;
  return 0;
}
