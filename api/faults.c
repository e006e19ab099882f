/* SPDX-License-Identifier: Apache-2.0 */
/* faults.c -- POST/GET/DELETE /v1/_faults: fault rules of the backend
 * decorator over HTTP (only with --enable-fault-injection). */
#include "api/handlers.h"
#include "backend/fault.h"
#include "model/registry.h"
#include "value/json_exact.h"

#include <string.h>

/* The server has no field for the decorator (and only the daemon knows
 * whether it wrapped its backend), so the daemon hands it over once. */
static struct tt_fault_backend *attached;

void tt_api_faults_attach(struct tt_fault_backend *fb) { attached = fb; }

static struct tt_fault_backend *require_attached(struct tt_request *req) {
  if (attached == NULL)
    tt_request_fail(req, TT_ERR_INTERNAL, NULL,
                    "fault injection is enabled but the backend has no fault decorator");
  return attached;
}

static json_t *rule_json(const struct tt_fault_rule_info *r) {
  json_t *o = json_pack("{s:I,s:s,s:I,s:I,s:I,s:I,s:b}", "id", (json_int_t)r->id, "op", r->op,
                        "times", (json_int_t)r->times, "latency_ms", (json_int_t)r->latency_ms,
                        "fired", (json_int_t)r->fired, "remaining",
                        (json_int_t)(r->times - r->fired), "active", r->fired < r->times);
  if (o == NULL)
    return NULL;
  json_object_set_new(o, "error", r->error ? json_string(r->error) : json_null());
  if (r->model)
    json_object_set_new(o, "model", json_string(r->model));
  if (r->table)
    json_object_set_new(o, "table", json_string(r->table));
  if (r->unprocessed)
    json_object_set_new(o, "unprocessed", json_integer((json_int_t)r->unprocessed));
  if (r->retry_after_ms)
    json_object_set_new(o, "retry_after_ms", json_integer((json_int_t)r->retry_after_ms));
  return o;
}

/* Reads an optional string member (null counts as absent). */
static int read_str(struct tt_request *req, json_t *body, const char *name, const char **out) {
  json_t *v = json_object_get(body, name);
  if (v == NULL || json_is_null(v))
    return 0;
  if (!json_is_string(v)) {
    tt_request_fail(req, TT_ERR_VALIDATION, name, "%s must be a string", name);
    return -1;
  }
  *out = json_string_value(v);
  return 0;
}

void tt_handle_faults_add(struct tt_request *req) {
  struct tt_fault_backend *fb = require_attached(req);
  if (fb == NULL)
    return;
  json_t *body = tt_request_json_body(req, false);
  if (body == NULL)
    return;
  static const char *const known[] = {"op",    "model",      "table",       "error",
                                      "times", "latency_ms", "unprocessed", "retry_after_ms"};
  const char *name;
  json_t *v;
  json_object_foreach(body, name, v) {
    size_t i = 0;
    while (i < sizeof(known) / sizeof(known[0]) && strcmp(name, known[i]) != 0)
      i++;
    if (i == sizeof(known) / sizeof(known[0])) {
      /* A misspelt field would silently make a different fault. */
      tt_request_fail(req, TT_ERR_VALIDATION, name,
                      "unknown field; a fault takes op, model, table, error, times, "
                      "latency_ms, unprocessed and retry_after_ms");
      goto done;
    }
  }
  struct tt_fault_spec spec = {0};
  json_int_t times = 1, latency = 0, unprocessed = 0, retry_after = 0;
  if (!json_is_string(json_object_get(body, "op"))) {
    tt_request_fail(req, TT_ERR_VALIDATION, "op",
                    "op is required: a DynamoDB operation name such as PutItem, or \"*\"");
    goto done;
  }
  if (read_str(req, body, "op", &spec.op) != 0 || read_str(req, body, "model", &spec.model) != 0 ||
      read_str(req, body, "table", &spec.table) != 0 ||
      read_str(req, body, "error", &spec.error) != 0 ||
      tt_request_int_member(req, body, "times", 1, TT_FAULT_MAX_TIMES, &times) != 0 ||
      tt_request_int_member(req, body, "latency_ms", 0, TT_FAULT_MAX_LATENCY_MS, &latency) != 0 ||
      tt_request_int_member(req, body, "unprocessed", 1, TT_FAULT_MAX_UNPROCESSED,
                            &unprocessed) != 0 ||
      tt_request_int_member(req, body, "retry_after_ms", 1, TT_FAULT_MAX_RETRY_AFTER_MS,
                            &retry_after) != 0)
    goto done;
  if (spec.model != NULL) {
    if (spec.table != NULL) {
      tt_request_fail(req, TT_ERR_VALIDATION, "table", "give model or table, not both");
      goto done;
    }
    /* Only the table name is read: a reserved (ledger) model may be named. */
    const struct tt_model *m =
        req->server->orm ? tt_model_registry_get_internal(req->server->orm->models, spec.model)
                         : NULL;
    if (m == NULL) {
      tt_request_fail(req, TT_ERR_VALIDATION, "model",
                      "no model is called so; list them with GET /v1/models");
      goto done;
    }
    spec.table = m->table;
  }
  spec.times = (unsigned)times;
  spec.latency_ms = latency;
  spec.unprocessed = (unsigned)unprocessed;
  spec.retry_after_ms = (uint32_t)retry_after;
  struct tt_error err;
  unsigned id;
  if (tt_fault_add(fb, &spec, &id, &err) != 0) {
    tt_request_respond_error(req, &err, NULL);
    goto done;
  }
  /* The rule just added is the last one listed. */
  struct tt_fault_rule_info info;
  tt_fault_rule_get(fb, tt_fault_rule_count(fb) - 1, &info);
  json_t *out = rule_json(&info);
  if (out == NULL)
    tt_request_fail(req, TT_ERR_INTERNAL, NULL, "out of memory");
  else
    tt_request_respond_json(req, 201, out);
done:
  json_decref(body);
}

void tt_handle_faults_list(struct tt_request *req) {
  struct tt_fault_backend *fb = require_attached(req);
  if (fb == NULL)
    return;
  json_t *list = json_array();
  size_t n = tt_fault_rule_count(fb);
  for (size_t i = 0; i < n && list; i++) {
    struct tt_fault_rule_info info;
    tt_fault_rule_get(fb, i, &info);
    if (json_array_append_new(list, rule_json(&info)) != 0) {
      json_decref(list);
      list = NULL;
    }
  }
  json_t *out = list ? json_pack("{s:o,s:I}", "faults", list, "fired_total",
                                 (json_int_t)tt_fault_fired_total(fb))
                     : NULL;
  if (out == NULL)
    tt_request_fail(req, TT_ERR_INTERNAL, NULL, "out of memory");
  else
    tt_request_respond_json(req, 200, out);
}

void tt_handle_faults_clear(struct tt_request *req) {
  struct tt_fault_backend *fb = require_attached(req);
  if (fb == NULL)
    return;
  tt_fault_clear(fb);
  tt_request_respond_static(req, 204, "application/json", "", 0);
}
