/* SPDX-License-Identifier: Apache-2.0 */
/* items.c -- /v1/models/{m}/items: create, put, get, patch, delete:
 * headers and query strings checked, the path's key typed, the ORM's typed
 * item answered with its status, ETag and body (logical JSON or
 * ?format=dynamodb). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/item_io.h"
#include "orm/items.h"
#include "orm/provenance.h"
#include "util/text.h"

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

/* An item operation and the typed key it borrows. */
struct item_job {
  struct tt_orm_item_op op; /* first */
  struct tt_av key;
};

/* The answer: a typed item as logical JSON (or DynamoDB's shape) with its
 * ETag, 201 when the write created it; 204 after a delete. */
static void item_answer(struct tt_request *req, struct tt_orm_result *r, void *arg) {
  struct item_job *j = arg;
  tt_av_free(&j->key);
  if (r->status != 0 || r->answer != TT_ORM_ANSWER_ITEM) {
    tt_request_respond_result(req, r); /* an error, or 204 after a delete */
    return;
  }
  struct tt_buf b;
  struct tt_error err;
  char etag[TT_API_ETAG_MAX];
  tt_buf_init(&b, 0);
  if (tt_api_item_write(&b, r, &j->op.select, j->op.raw_format, etag, &err) != 0) {
    tt_buf_free(&b);
    tt_request_respond_error(req, &err, NULL);
    return;
  }
  tt_request_respond_buf(req, r->created ? 201 : 200, &b);
  tt_text_copy(req->resp.etag, sizeof(req->resp.etag), etag);
}

/* Common set-up: the model and the job, which owns `body` (stolen; the
 * item, the update, or GET's select list). NULL after answering. */
static struct tt_orm_item_op *item_op(struct tt_request *req, enum tt_orm_item_kind kind,
                                      json_t *body) {
  const struct tt_model *m = tt_api_path_model(req);
  struct item_job *j = m ? tt_api_orm_job(req, sizeof(*j), m, body, item_answer) : NULL;
  if (j == NULL) {
    if (m == NULL)
      json_decref(body);
    return NULL;
  }
  j->op.kind = kind;
  return &j->op;
}

/* Checks the body's deploy authority when asked for (orm/provenance.h),
 * types the path's key (all but a create), then runs the operation of
 * `body` (borrowed; NULL for a get or delete). A refusal here fails as the
 * ORM would have: after the refusal of the model's write policy. */
static void run(struct tt_request *req, struct tt_orm_item_op *op, const json_t *body,
                bool authority) {
  struct item_job *j = (struct item_job *)op;
  struct tt_error err, first;
  if (authority && tt_orm_provenance_check(body, NULL, &err) != 0)
    goto refuse;
  if (op->kind != TT_ORM_OP_CREATE) {
    const struct tt_route_param *p = tt_route_param(&req->match, "key");
    if (tt_api_item_key(op->ctx.model, p ? p->value : "", p ? p->len : 0, &j->key, &err) != 0)
      goto refuse;
    op->item_key = &j->key;
  }
  tt_api_item_start(op, body);
  return;
refuse:
  tt_orm_ctx_refuse(&op->ctx, tt_orm_item_check_policy(op, &first) != 0 ? &first : &err);
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

void tt_handle_item_create(struct tt_request *req) {
  bool authority = false;
  if (bool_param(req, "deploy_authority", &authority) != 0)
    return;
  json_t *body = tt_request_json_body(req, true);
  struct tt_orm_item_op *op = body ? item_op(req, TT_ORM_OP_CREATE, body) : NULL;
  if (op == NULL)
    return;
  run(req, op, body, authority);
}

void tt_handle_item_put(struct tt_request *req) {
  const char *inm = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, "If-None-Match");
  if (inm && strcmp(inm, "*") != 0) {
    tt_request_fail(req, TT_ERR_VALIDATION, "If-None-Match", "only If-None-Match: * is supported");
    return;
  }
  struct tt_orm_expected expected = {0};
  bool authority = false;
  if (if_match(req, &expected) < 0 || bool_param(req, "deploy_authority", &authority) != 0)
    return;
  if (inm && expected.present) {
    tt_request_fail(req, TT_ERR_VALIDATION, "If-None-Match",
                    "If-None-Match and If-Match exclude each other");
    return;
  }
  json_t *body = tt_request_json_body(req, true);
  struct tt_orm_item_op *op = body ? item_op(req, TT_ORM_OP_PUT, body) : NULL;
  if (op == NULL)
    return;
  op->if_none_match = inm != NULL;
  op->expected = expected;
  run(req, op, body, authority);
}

/* ?select=a,b.c -> op->select, the paths "a" and "b.c" (in the op's
 * arena); no paths when there is no ?select=, none of them for "?select=,"
 * (nothing of the item is answered). Returns 0 or -1 (out of memory). */
static int select_param(struct tt_request *req, struct tt_orm_item_op *op) {
  const char *s = tt_request_query(req, "select");
  size_t max = 1, n = 0;
  for (const char *c = s; c && *c; c++)
    max += *c == ',';
  const char **paths = s && *s ? tt_arena_alloc(op->ctx.arena, max * sizeof(*paths)) : NULL;
  if (s && *s && paths == NULL)
    return -1;
  while (s && *s) {
    size_t len = strcspn(s, ",");
    if (len && (paths[n++] = tt_arena_strndup(op->ctx.arena, s, len)) == NULL)
      return -1;
    s += len + (s[len] == ',');
  }
  op->select = (struct tt_select){.paths = paths, .n = n};
  return 0;
}

void tt_handle_item_get(struct tt_request *req) {
  const char *format = tt_request_query(req, "format");
  if (format && strcmp(format, "dynamodb") != 0 && strcmp(format, "json") != 0) {
    tt_request_fail(req, TT_ERR_VALIDATION, "format", "format must be json or dynamodb");
    return;
  }
  bool consistent = false;
  if (bool_param(req, "consistent", &consistent) != 0)
    return;
  struct tt_orm_item_op *op = item_op(req, TT_ORM_OP_GET, NULL);
  if (op == NULL)
    return;
  struct tt_error err;
  if (select_param(req, op) != 0) {
    tt_error_set(&err, TT_ERR_INTERNAL, NULL, "out of memory");
    tt_orm_ctx_refuse(&op->ctx, &err);
    return;
  }
  op->consistent = consistent;
  op->raw_format = format && strcmp(format, "dynamodb") == 0;
  run(req, op, NULL, false);
}

void tt_handle_item_patch(struct tt_request *req) {
  struct tt_orm_expected expected = {0};
  if (if_match(req, &expected) < 0)
    return;
  json_t *body = tt_request_json_body(req, true);
  if (body == NULL)
    return;
  json_t *upsert = json_object_get(body, "upsert");
  if (upsert && !json_is_boolean(upsert)) {
    json_decref(body);
    tt_request_fail(req, TT_ERR_VALIDATION, "upsert", "upsert must be true or false");
    return;
  }
  struct tt_orm_item_op *op = item_op(req, TT_ORM_OP_UPDATE, body);
  if (op == NULL)
    return;
  op->expected = expected;
  op->upsert = json_is_true(upsert); /* body lives as long as the job */
  run(req, op, body, false);
}

void tt_handle_item_delete(struct tt_request *req) {
  struct tt_orm_expected expected = {0};
  if (if_match(req, &expected) < 0)
    return;
  struct tt_orm_item_op *op = item_op(req, TT_ORM_OP_DELETE, NULL);
  if (op == NULL)
    return;
  op->expected = expected;
  run(req, op, NULL, false);
}
