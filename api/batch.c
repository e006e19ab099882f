/* SPDX-License-Identifier: Apache-2.0 */
/* batch.c -- POST /v1/models/{m}/batch-get and /batch-write: the body read
 * into the ORM's typed batch in the API's order of errors, and the typed
 * answer rendered. */
#include <stdio.h>
#include <string.h>

#include "api/handlers.h"
#include "api/item_io.h"
#include "orm/crypt.h"
#include "orm/item.h"
#include "orm/key.h"
#include "orm/query.h"

/* Entry v of the body, named `field` ("keys[3]", "put[0]"), into e: a key,
 * or a put's item made at `now`, which may not check a version. */
static int read_entry(const struct tt_orm_batch_op *op, const json_t *v, int64_t now,
                      const char *field, struct tt_orm_batch_entry *e, struct tt_error *err) {
  const struct tt_model *m = op->ctx.model;
  if (!json_is_object(v))
    return tt_error_set(err, TT_ERR_VALIDATION, field,
                        op->write ? "%s must be an object" : "%s must be a key object", field);
  if (!e->put)
    return tt_orm_key_from_json(m, v, field, &e->key, err);
  struct tt_orm_expected exp = {0};
  if (tt_orm_item_from_json(m, v, TT_ORM_PUT, now, field, &e->item, &exp, err) != 0)
    return -1;
  if (exp.present) {
    const struct tt_model_attr *ver = tt_model_lifecycle(m, TT_LC_VERSION);
    char f[160];
    snprintf(f, sizeof(f), "%s.%s", field, ver ? ver->name : "version");
    return tt_error_set(err, TT_ERR_VALIDATION, f,
                        "a batch put cannot check a version (BatchWriteItem has no "
                        "conditions); leave it out, or use a transaction");
  }
  return 0;
}

int tt_api_batch_start(struct tt_orm_batch_op *op, const json_t *body) {
  static const char *const get_members[] = {"keys", "select", "consistent", NULL};
  static const char *const write_members[] = {"put", "delete", NULL};
  const struct tt_model *m = op->ctx.model;
  const json_t *puts = NULL, *keys;
  struct tt_error err;
  /* Encrypted attributes first: fail closed, and never in a select path. */
  if (tt_orm_crypt_check(op->ctx.orm, m, &err) != 0 ||
      (!op->write && tt_api_select_crypt(m, json_object_get(body, "select"), &err) != 0) ||
      tt_api_check_members(body, op->write ? write_members : get_members,
                           op->write ? "not a batch-write parameter" : "not a batch-get parameter",
                           &err) != 0)
    goto refuse;
  if (op->write) {
    puts = json_object_get(body, "put");
    keys = json_object_get(body, "delete");
    if (puts && !json_is_array(puts)) {
      tt_error_set(&err, TT_ERR_VALIDATION, "put", "put must be an array of items");
      goto refuse;
    }
    if (keys && !json_is_array(keys)) {
      tt_error_set(&err, TT_ERR_VALIDATION, "delete", "delete must be an array of keys");
      goto refuse;
    }
  } else if (!json_is_array(keys = json_object_get(body, "keys"))) {
    tt_error_set(&err, TT_ERR_VALIDATION, "keys", "keys must be an array of key objects");
    goto refuse;
  }
  size_t np = json_array_size(puts), n = np + json_array_size(keys);
  if (tt_orm_batch_check_counts(m, op->write, np, n - np, &err) != 0)
    goto refuse;
  if (!op->write) {
    if (tt_api_bool_member(body, "consistent", "consistent", &op->consistent, &err) != 0 ||
        tt_orm_select_from_json(m, json_object_get(body, "select"), "select", op->ctx.arena,
                                &op->select, &err) != 0)
      goto refuse;
  }
  if (n && (op->entries = tt_arena_alloc(op->ctx.arena, n * sizeof(*op->entries))) == NULL) {
    tt_error_set(&err, TT_ERR_INTERNAL, NULL, "out of memory");
    goto refuse;
  }
  op->n_entries = n;
  for (size_t i = 0; i < np; i++)
    op->entries[i].put = true;
  int64_t now = tt_orm_now_ns(op->ctx.orm);
  for (size_t i = 0; i < n; i++) {
    struct tt_orm_batch_entry *e = &op->entries[i];
    size_t pos = e->put ? i : i - np;
    char field[32];
    snprintf(field, sizeof(field), "%s[%zu]", !op->write ? "keys" : e->put ? "put" : "delete",
             pos);
    if (read_entry(op, json_array_get(e->put ? puts : keys, pos), now, field, e, &err) != 0)
      return tt_orm_batch_fail_input(op, i, &err);
  }
  return tt_orm_batch_start(op);
refuse:
  return tt_orm_batch_fail_input(op, 0, &err);
}

/* {"items":[...],"missing":[...]}: the items found and the keys of the
 * others, in key order. */
static int items_text(const struct tt_orm_batch_op *op, const struct tt_model *m,
                      struct tt_buf *b, struct tt_error *err) {
  int rc = tt_buf_puts(b, "{\"items\":[");
  for (int missing = 0; missing < 2; missing++) {
    bool first = true;
    for (size_t i = 0; rc == 0 && i < op->n_entries; i++) {
      const struct tt_orm_batch_entry *e = &op->entries[i];
      if ((e->found.type != TT_AV_M) != missing)
        continue;
      if (!first)
        rc = tt_buf_puts(b, ",");
      if (rc == 0)
        rc = tt_orm_item_write(b, m, missing ? &e->key : &e->found,
                               missing ? NULL : &op->select, err);
      first = false;
    }
    if (rc == 0)
      rc = tt_buf_puts(b, missing ? "]}" : "],\"missing\":[");
  }
  return rc;
}

/* The details of a failure that left entries undone: unprocessed,
 * processed, then the backend's own details or the cause. NULL when out
 * of memory. */
static json_t *incomplete_details(const struct tt_orm_batch_op *op, const json_t *backend) {
  json_t *puts = json_array(), *dels = json_array(), *unprocessed = NULL, *out = NULL;
  size_t pos[2] = {0, 0};
  for (size_t i = 0; puts && dels && i < op->n_entries; i++) {
    bool put = op->write && op->entries[i].put;
    size_t at = pos[put]++;
    json_t *list = !op->write || put ? puts : dels;
    if (!op->entries[i].done && json_array_append_new(list, json_integer((json_int_t)at)) != 0)
      goto done;
  }
  if (puts == NULL || dels == NULL)
    goto done;
  unprocessed = op->write ? json_pack("{s:O, s:O}", "put", puts, "delete", dels)
                          : json_incref(puts);
  if (unprocessed == NULL || (out = json_object()) == NULL)
    goto done;
  json_object_set(out, "unprocessed", unprocessed);
  json_object_set_new(out, "processed", json_integer((json_int_t)op->processed));
  if (backend)
    json_object_update(out, (json_t *)backend);
  if (op->cause != TT_OK)
    json_object_set_new(out, "cause", json_string(tt_error_code_name(op->cause)));
done:
  json_decref(unprocessed);
  json_decref(puts);
  json_decref(dels);
  return out;
}

void tt_api_batch_answer(struct tt_orm_batch_op *op, struct tt_orm_result *r, struct tt_buf *out) {
  struct tt_error err;
  tt_error_clear(&err);
  int rc = 0;
  if (r->status == 0 && r->answer == TT_ORM_ANSWER_BATCH) {
    rc = op->write ? tt_buf_printf(out, "{\"processed\":%zu}", op->processed)
                   : items_text(op, r->model, out, &err);
  } else if (r->status != 0 && op->incomplete) {
    json_t *details = incomplete_details(op, r->details);
    json_decref(r->details);
    r->details = details;
    rc = details ? 0 : -1;
  }
  if (rc != 0) {
    if (err.code == TT_OK)
      tt_error_set(&err, TT_ERR_INTERNAL, NULL, "out of memory");
    tt_orm_fail(r, &err);
  }
  tt_orm_batch_entries_free(op);
}

static void answer(struct tt_request *req, struct tt_orm_result *r, void *op) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  tt_api_batch_answer(op, r, &b);
  tt_request_respond_rendered(req, r, &b);
}

static void start(struct tt_request *req, bool write) {
  const struct tt_model *m = tt_api_path_model(req);
  json_t *body = m ? tt_request_json_body(req, true) : NULL;
  struct tt_orm_batch_op *op = body ? tt_api_orm_job(req, sizeof(*op), m, body, answer) : NULL;
  if (op == NULL)
    return;
  op->write = write;
  /* Unprocessed work stops being retried before the request deadline, so
   * the answer can still name it (BatchIncomplete) instead of a timeout. */
  op->deadline_ns = req->start_ns + req->server->opts.request_timeout_ms * 1000000u;
  tt_api_batch_start(op, body);
}

void tt_handle_batch_get(struct tt_request *req) { start(req, false); }

void tt_handle_batch_write(struct tt_request *req) { start(req, true); }
