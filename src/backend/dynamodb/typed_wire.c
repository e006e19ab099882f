/* SPDX-License-Identifier: Apache-2.0 */
/* typed_wire.c -- typed requests as DynamoDB JSON, written member by member
 * into one buffer (no tree is built), and their answers read. */
#include "backend/dynamodb/typed_wire.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dynamodb/errors.h"
#include "backend/dynamodb/wire_reader.h"
#include "backend/table_json.h"
#include "value/codec_ddb.h"
#include "value/json_exact.h"

/* Appends ,"name": (the first member has no comma). */
static int member(struct tt_buf *b, const char *name) {
  if (b->len > 1 && tt_buf_puts(b, ",") != 0)
    return -1;
  return tt_json_write_string(b, name, strlen(name), 0) != 0 || tt_buf_puts(b, ":") != 0 ? -1
                                                                                          : 0;
}

static int string_member(struct tt_buf *b, const char *name, const char *value) {
  if (value == NULL)
    return 0;
  return member(b, name) != 0 || tt_json_write_string(b, value, strlen(value), 0) != 0 ? -1 : 0;
}

static int map_member(struct tt_buf *b, const char *name, const struct tt_av *map) {
  if (map == NULL)
    return 0;
  return member(b, name) != 0 || tt_ddb_item_write(b, map, 0) != 0 ? -1 : 0;
}

/* ExpressionAttributeNames: an M of S values written as plain strings. */
static int names_member(struct tt_buf *b, const struct tt_av *names) {
  if (names == NULL)
    return 0;
  if (member(b, "ExpressionAttributeNames") != 0 || tt_buf_puts(b, "{") != 0)
    return -1;
  for (size_t i = 0; i < names->len; i++) {
    const struct tt_av_member *m = &names->u.members[i];
    if ((i > 0 && tt_buf_puts(b, ",") != 0) ||
        tt_json_write_string(b, m->name, m->name_len, 0) != 0 || tt_buf_puts(b, ":") != 0 ||
        tt_json_write_string(b, m->value.u.bytes, m->value.len, 0) != 0)
      return -1;
  }
  return tt_buf_puts(b, "}");
}

int tt_ddb_item_request_write(struct tt_buf *b, enum tt_ddb_op op,
                              const struct tt_ddb_item_request *r) {
  /* Only the members `op` has (backend.h: the others are ignored, as the
   * memory backend ignores them). */
  bool get = op == TT_DDB_GET_ITEM, put = op == TT_DDB_PUT_ITEM;
  if (tt_buf_puts(b, "{") != 0 || string_member(b, "TableName", r->table) != 0 ||
      map_member(b, put ? "Item" : "Key", put ? r->item : r->key) != 0 ||
      string_member(b, "ConditionExpression", get ? NULL : r->condition) != 0 ||
      string_member(b, "UpdateExpression", op == TT_DDB_UPDATE_ITEM ? r->update : NULL) != 0 ||
      string_member(b, "ProjectionExpression", get ? r->projection : NULL) != 0 ||
      names_member(b, r->names) != 0 ||
      map_member(b, "ExpressionAttributeValues", r->values) != 0 ||
      string_member(b, "ReturnValues", get || r->return_values == TT_DDB_RETURN_NONE
                                           ? NULL
                                           : tt_ddb_return_values_name(r->return_values)) != 0 ||
      string_member(b, "ReturnValuesOnConditionCheckFailure",
                    !get && r->old_on_condition_failure ? "ALL_OLD" : NULL) != 0)
    return -1;
  if (get && r->consistent_read &&
      (member(b, "ConsistentRead") != 0 || tt_buf_puts(b, "true") != 0))
    return -1;
  return tt_buf_puts(b, "}");
}

static int int_member(struct tt_buf *b, const char *name, int64_t v) {
  return member(b, name) != 0 || tt_buf_printf(b, "%" PRId64, v) != 0 ? -1 : 0;
}

int tt_ddb_read_request_write(struct tt_buf *b, const struct tt_ddb_read_request *r) {
  if (tt_buf_puts(b, "{") != 0 || string_member(b, "TableName", r->table) != 0 ||
      string_member(b, "IndexName", r->index) != 0 ||
      string_member(b, "KeyConditionExpression", r->key_condition) != 0 ||
      string_member(b, "FilterExpression", r->filter) != 0 ||
      string_member(b, "ProjectionExpression", r->projection) != 0 ||
      names_member(b, r->names) != 0 ||
      map_member(b, "ExpressionAttributeValues", r->values) != 0 ||
      map_member(b, "ExclusiveStartKey", r->start_key) != 0 ||
      string_member(b, "Select", tt_ddb_select_name(r->select)) != 0)
    return -1;
  if ((r->limit != 0 && int_member(b, "Limit", r->limit) != 0) ||
      (r->backward && (member(b, "ScanIndexForward") != 0 || tt_buf_puts(b, "false") != 0)) ||
      (r->consistent_read && (member(b, "ConsistentRead") != 0 || tt_buf_puts(b, "true") != 0)) ||
      (r->total_segments != 0 && (int_member(b, "Segment", r->segment) != 0 ||
                                  int_member(b, "TotalSegments", r->total_segments) != 0)))
    return -1;
  return tt_buf_puts(b, "}");
}

static int invalid(struct tt_backend_error *e, const char *what) {
  return tt_backend_error_set(e, "InvalidResponse", 200,
                              "the DynamoDB endpoint answered an invalid %s", what);
}

/* The item operation whose members a transaction step of `kind` writes. */
static enum tt_ddb_op step_op(enum tt_ddb_txn_kind kind) {
  switch (kind) {
  case TT_DDB_TXN_PUT:
    return TT_DDB_PUT_ITEM;
  case TT_DDB_TXN_UPDATE:
    return TT_DDB_UPDATE_ITEM;
  case TT_DDB_TXN_GET:
    return TT_DDB_GET_ITEM;
  default:
    return TT_DDB_DELETE_ITEM; /* Delete and ConditionCheck: a key, a condition */
  }
}

int tt_ddb_txn_request_write(struct tt_buf *b, const struct tt_ddb_txn_request *r) {
  static const char *const wrappers[] = {
      [TT_DDB_TXN_CONDITION_CHECK] = "ConditionCheck", [TT_DDB_TXN_PUT] = "Put",
      [TT_DDB_TXN_DELETE] = "Delete", [TT_DDB_TXN_UPDATE] = "Update", [TT_DDB_TXN_GET] = "Get"};
  struct tt_buf step;
  int rc = -1;
  tt_buf_init(&step, 0);
  if (tt_buf_puts(b, "{\"TransactItems\":[") != 0)
    goto done;
  for (size_t i = 0; i < r->n_steps; i++) {
    const struct tt_ddb_txn_step *s = &r->steps[i];
    struct tt_ddb_item_request q = s->r;
    /* A Get of a transaction has no ConsistentRead, a write no ReturnValues. */
    q.consistent_read = false;
    q.return_values = TT_DDB_RETURN_NONE;
    tt_buf_reset(&step);
    if ((unsigned)s->kind > TT_DDB_TXN_GET ||
        tt_ddb_item_request_write(&step, step_op(s->kind), &q) != 0 ||
        tt_buf_printf(b, "%s{\"%s\":", i ? "," : "", wrappers[s->kind]) != 0 ||
        tt_buf_append(b, step.data, step.len) != 0 || tt_buf_puts(b, "}") != 0)
      goto done;
  }
  if (tt_buf_puts(b, "]") != 0 ||
      (r->client_token && (tt_buf_puts(b, ",\"ClientRequestToken\":") != 0 ||
                           tt_json_write_string(b, r->client_token, strlen(r->client_token),
                                                0) != 0)) ||
      tt_buf_puts(b, "}") != 0)
    goto done;
  rc = 0;
done:
  tt_buf_free(&step);
  return rc;
}

/* An Item member of `holder` into *out (type 0 when absent or null).
 * Returns 0 or -1 (not a valid attribute map; *out then type 0). */
static int item_member(const json_t *holder, struct tt_av *out) {
  struct tt_error err;
  const json_t *j = json_object_get(holder, "Item");
  memset(out, 0, sizeof(*out));
  if (j == NULL || json_is_null(j))
    return 0;
  if (tt_ddb_item_from_json(j, "Item", out, &err) != 0) {
    memset(out, 0, sizeof(*out));
    return -1;
  }
  return 0;
}

/* Reads a transaction's 2xx answer: TransactGetItems' Responses into
 * out->items (nothing for TransactWriteItems). Returns 0, or -1 with an
 * InvalidResponse in e (out then empty). */
static int tt_ddb_txn_response_read(const json_t *resp, struct tt_ddb_txn_result *out,
                             struct tt_backend_error *e) {
  memset(out, 0, sizeof(*out));
  const json_t *list = json_object_get(resp, "Responses");
  if (list == NULL || json_is_null(list))
    return 0; /* TransactWriteItems */
  if (!json_is_array(list))
    return invalid(e, "Responses");
  size_t n = json_array_size(list);
  if (n > 0 && (out->items = calloc(n, sizeof(*out->items))) == NULL)
    return tt_backend_error_set(e, "InternalFailure", 0, "out of memory");
  for (size_t i = 0; i < n; i++, out->n_items++)
    if (item_member(json_array_get(list, i), &out->items[i]) != 0) {
      tt_ddb_txn_result_free(out);
      return invalid(e, "item");
    }
  return 0;
}

/* Moves the CancellationReasons of a TransactionCanceledException's body
 * (e->body, which is then released) into out->reasons: Code ("None" when
 * absent), Message, Item (left out when it is no attribute map). Returns 0
 * or -1 (memory; out empty, e unchanged). */
static int tt_ddb_txn_reasons_read(struct tt_backend_error *e, struct tt_ddb_txn_result *out) {
  memset(out, 0, sizeof(*out));
  const json_t *list = e->body ? json_object_get(e->body, "CancellationReasons") : NULL;
  size_t n = json_array_size(list);
  if (n > 0 && (out->reasons = calloc(n, sizeof(*out->reasons))) == NULL)
    return -1;
  for (size_t i = 0; i < n; i++, out->n_reasons++) {
    const json_t *r = json_array_get(list, i);
    struct tt_ddb_txn_reason *t = &out->reasons[i];
    const char *code = json_string_value(json_object_get(r, "Code"));
    const char *msg = json_string_value(json_object_get(r, "Message"));
    snprintf(t->code, sizeof(t->code), "%s", code ? code : "None");
    if (msg && (t->message = strdup(msg)) == NULL) {
      tt_ddb_txn_result_free(out);
      return -1;
    }
    /* An Item that is no attribute map is left out: the reason stands. */
    (void)item_member(r, &t->item);
  }
  json_decref(e->body);
  e->body = NULL;
  return 0;
}

/* ---- batches ---- */

int tt_ddb_batch_request_write(struct tt_buf *b, enum tt_ddb_op op,
                               const struct tt_ddb_batch_request *r) {
  bool write = op == TT_DDB_BATCH_WRITE_ITEM;
  struct tt_buf spec;
  int rc = -1;
  tt_buf_init(&spec, 0);
  if (tt_buf_puts(b, "{\"RequestItems\":{") != 0)
    goto done;
  for (size_t t = 0; t < r->n_tables; t++) {
    const struct tt_ddb_batch_table *bt = &r->tables[t];
    if ((t > 0 && tt_buf_puts(b, ",") != 0) ||
        tt_json_write_string(b, bt->table, strlen(bt->table), 0) != 0 ||
        tt_buf_puts(b, write ? ":[" : ":{\"Keys\":[") != 0)
      goto done;
    bool first = true;
    for (size_t i = 0; i < r->n_entries; i++) {
      const struct tt_ddb_batch_entry *x = &r->entries[i];
      if (x->table != t)
        continue;
      if ((!first && tt_buf_puts(b, ",") != 0) ||
          (write && tt_buf_puts(b, x->put ? "{\"PutRequest\":{\"Item\":"
                                          : "{\"DeleteRequest\":{\"Key\":") != 0) ||
          tt_ddb_item_write(b, x->value, 0) != 0 || (write && tt_buf_puts(b, "}}") != 0))
        goto done;
      first = false;
    }
    if (write) {
      if (tt_buf_puts(b, "]") != 0)
        goto done;
      continue;
    }
    /* The table's other members, written as a request's (member() needs
     * a buffer of their own). */
    tt_buf_reset(&spec);
    if (tt_buf_puts(&spec, "{") != 0 ||
        string_member(&spec, "ProjectionExpression", bt->projection) != 0 ||
        names_member(&spec, bt->names) != 0 ||
        map_member(&spec, "ExpressionAttributeValues", bt->values) != 0 ||
        (bt->consistent_read &&
         (member(&spec, "ConsistentRead") != 0 || tt_buf_puts(&spec, "true") != 0)) ||
        tt_buf_puts(b, "]") != 0 ||
        (spec.len > 1 && (tt_buf_puts(b, ",") != 0 ||
                          tt_buf_append(b, spec.data + 1, spec.len - 1) != 0)) ||
        tt_buf_puts(b, "}") != 0)
      goto done;
  }
  static const char *const modes[] = {NULL, "TOTAL", "INDEXES"};
  if (tt_buf_puts(b, "}") != 0 ||
      (r->capacity > 0 && r->capacity < 3 &&
       tt_buf_printf(b, ",\"ReturnConsumedCapacity\":\"%s\"", modes[r->capacity]) != 0) ||
      tt_buf_puts(b, "}") != 0)
    goto done;
  rc = 0;
done:
  tt_buf_free(&spec);
  return rc;
}

/* The index of table `name` in the request, or -1. */
static long table_index(const struct tt_ddb_batch_request *r, const char *name) {
  for (size_t t = 0; t < r->n_tables; t++)
    if (strcmp(r->tables[t].table, name) == 0)
      return (long)t;
  return -1;
}

/* Appends the attribute map j of table t to a result list. Returns 0, or
 * -1 (not an attribute map, or memory). */
static int push_map(struct tt_ddb_batch_value **list, size_t *n, size_t t, bool put,
                    const json_t *j, const char *path) {
  struct tt_error err;
  struct tt_ddb_batch_value *grown = realloc(*list, (*n + 1) * sizeof(**list));
  if (grown == NULL)
    return -1;
  *list = grown;
  grown[*n] = (struct tt_ddb_batch_value){.table = t, .put = put};
  if (tt_ddb_item_from_json(j, path, &grown[*n].value, &err) != 0) {
    tt_av_free(&grown[*n].value);
    return -1;
  }
  (*n)++;
  return 0;
}

/* Reads a batch's 2xx answer for request r: Responses into out->items,
 * UnprocessedKeys / UnprocessedItems into out->left, ConsumedCapacity into
 * out->units (when asked). Returns 0, or -1 with an InvalidResponse in e
 * (a table not in the request, a value that is no attribute map; out then
 * empty). */
static int tt_ddb_batch_response_read(enum tt_ddb_op op, const struct tt_ddb_batch_request *r,
                               const json_t *resp, struct tt_ddb_batch_result *out,
                               struct tt_backend_error *e) {
  bool write = op == TT_DDB_BATCH_WRITE_ITEM;
  const char *name;
  const json_t *v;
  memset(out, 0, sizeof(*out));
  json_object_foreach(write ? NULL : json_object_get(resp, "Responses"), name, v) {
    long t = table_index(r, name);
    size_t i;
    const json_t *item;
    if (t < 0 || !json_is_array(v))
      goto bad;
    json_array_foreach(v, i, item) {
      if (push_map(&out->items, &out->n_items, (size_t)t, false, item, "Responses") != 0)
        goto bad;
    }
  }
  json_object_foreach(json_object_get(resp, write ? "UnprocessedItems" : "UnprocessedKeys"), name,
                      v) {
    long t = table_index(r, name);
    const json_t *list = write ? v : json_object_get(v, "Keys");
    size_t i;
    const json_t *x;
    if (t < 0 || !json_is_array(list))
      goto bad;
    json_array_foreach(list, i, x) {
      const json_t *put = write ? json_object_get(x, "PutRequest") : NULL;
      const json_t *map = !write ? x
                          : put  ? json_object_get(put, "Item")
                                 : json_object_get(json_object_get(x, "DeleteRequest"), "Key");
      if (push_map(&out->left, &out->n_left, (size_t)t, put != NULL, map, "Unprocessed") != 0)
        goto bad;
    }
  }
  const json_t *cc = json_object_get(resp, "ConsumedCapacity");
  if (r->capacity != 0 && json_is_array(cc)) {
    if ((out->units = calloc(r->n_tables ? r->n_tables : 1, sizeof(*out->units))) == NULL)
      goto bad;
    size_t i;
    json_array_foreach(cc, i, v) {
      const char *tn = json_string_value(json_object_get(v, "TableName"));
      long t = tn ? table_index(r, tn) : -1;
      if (t >= 0)
        out->units[t] = json_number_value(json_object_get(v, "CapacityUnits"));
    }
  }
  return 0;
bad:
  tt_ddb_batch_result_free(out);
  return invalid(e, write ? "UnprocessedItems" : "Responses");
}

void tt_ddb_call_answer(struct tt_backend_call *call, const struct tt_http_response *resp) {
  json_t *out = NULL;
  bool typed = tt_backend_call_typed(call);
  if (typed && !call->batch && !call->txn && !call->table && tt_ddb_response_ok(resp)) {
    /* A typed answer is read from the text straight into typed values:
     * no jansson tree (wire_reader.h). Errors keep the classify path. */
    const char *text = resp->body.data;
    size_t len = resp->body.len;
    tt_backend_error_clear(&call->error);
    int rc = call->read != NULL
                 ? tt_ddb_read_response_parse(text, len, &call->read_out, &call->error)
                 : tt_ddb_item_response_parse(call->op, text, len, &call->item_out,
                                              &call->error);
    if (rc == TT_DDB_WIRE_NOT_OBJECT)
      tt_ddb_response_not_object(resp, &call->error);
    call->status = rc == 0 ? 0 : -1;
    return;
  }
  /* A batch's, a transaction's (and its cancellation reasons') and a table
   * operation's answer go through the tree: they are not on the per-item
   * path. */
  if (tt_ddb_response_classify(resp, &out, &call->error) != 0) {
    call->status = -1;
    if (typed && call->txn != NULL &&
        strcmp(call->error.type, "TransactionCanceledException") == 0 &&
        tt_ddb_txn_reasons_read(&call->error, &call->txn_out) != 0)
      tt_backend_error_set(&call->error, "InternalFailure", 0, "out of memory");
    return;
  }
  int rc = 0;
  if (typed && call->batch != NULL) {
    rc = tt_ddb_batch_response_read(call->op, call->batch, out, &call->batch_out, &call->error);
  } else if (typed && call->txn != NULL) {
    rc = tt_ddb_txn_response_read(out, &call->txn_out, &call->error);
  } else if (typed && call->table != NULL) {
    call->table_out = malloc(sizeof(*call->table_out));
    if (call->table_out == NULL || tt_ddb_table_answer_read(call->op, out, call->table_out) != 0) {
      free(call->table_out);
      call->table_out = NULL;
      rc = tt_backend_error_set(&call->error, "InternalFailure", 0, "out of memory");
    }
  } else {
    call->response = out; /* a JSON call: a typed one's 2xx answer never gets here */
    out = NULL;
  }
  call->status = rc == 0 ? 0 : -1;
  json_decref(out);
}
