/* SPDX-License-Identifier: Apache-2.0 */
/* items.c -- /v1/models/{m}/items: create, put, get, patch, delete. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/orm_job.h"
#include "orm/items.h"
#include "orm/txn.h"
#include "orm/unique.h"

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

/* Common set-up: the model, the key segment and the job, which owns `body`
 * (stolen; the item, the update, or GET's select list). NULL after
 * answering. */
static struct tt_orm_item_op *item_op(struct tt_request *req, enum tt_orm_item_kind kind,
                                      json_t *body) {
  const struct tt_model *m = tt_api_path_model(req);
  struct tt_orm_item_op *op = m ? tt_api_orm_job(req, sizeof(*op), m, body) : NULL;
  if (op == NULL) {
    if (m == NULL)
      json_decref(body);
    return NULL;
  }
  op->kind = kind;
  const struct tt_route_param *key = tt_route_param(&req->match, "key");
  if (key) {
    op->raw_key = key->value;
    op->raw_key_len = key->len;
  }
  return op;
}

/* Writes of a model with unique attributes move guard items with the item,
 * in one transaction (orm/txn.h). */
static void run(struct tt_orm_item_op *op) {
  if (tt_unique_model_has(op->ctx.model))
    tt_orm_txn_item_start(op);
  else
    tt_orm_item_start(op);
}

static int bool_param(struct tt_request *req, const char *name, bool *out);

void tt_handle_item_create(struct tt_request *req) {
  bool authority = false;
  if (bool_param(req, "deploy_authority", &authority) != 0)
    return;
  json_t *body = tt_request_json_body(req, true);
  struct tt_orm_item_op *op = body ? item_op(req, TT_ORM_OP_CREATE, body) : NULL;
  if (op == NULL)
    return;
  op->body = body;
  op->deploy_authority = authority;
  run(op);
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
  op->body = body;
  op->deploy_authority = authority;
  run(op);
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
  const char *format = tt_request_query(req, "format");
  if (format && strcmp(format, "dynamodb") != 0 && strcmp(format, "json") != 0) {
    tt_request_fail(req, TT_ERR_VALIDATION, "format", "format must be json or dynamodb");
    return;
  }
  bool consistent = false;
  if (bool_param(req, "consistent", &consistent) != 0)
    return;
  json_t *select = select_param(req);
  struct tt_orm_item_op *op = item_op(req, TT_ORM_OP_GET, select);
  if (op == NULL)
    return;
  op->consistent = consistent;
  op->raw_format = format && strcmp(format, "dynamodb") == 0;
  op->select = select;
  run(op);
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
  bool is_upsert = json_is_true(upsert);
  struct tt_orm_item_op *op = item_op(req, TT_ORM_OP_UPDATE, body);
  if (op == NULL)
    return;
  op->expected = expected;
  op->upsert = is_upsert;
  op->body = body;
  run(op);
}

void tt_handle_item_delete(struct tt_request *req) {
  struct tt_orm_expected expected = {0};
  if (if_match(req, &expected) < 0)
    return;
  struct tt_orm_item_op *op = item_op(req, TT_ORM_OP_DELETE, NULL);
  if (op == NULL)
    return;
  op->expected = expected;
  run(op);
}
