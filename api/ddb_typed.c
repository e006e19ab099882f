/* SPDX-License-Identifier: Apache-2.0 */
/* ddb_typed.c -- DynamoDB JSON transactions and batches to typed requests
 * and typed results back to DynamoDB JSON, for the DynamoDB listener
 * (ddb_items.h).
 * The shape is checked here, with DynamoDB's messages; what depends on the
 * tables (keys, expressions, sizes) is the backend's. */
#include "api/ddb_items.h"

#include <stdlib.h>
#include <string.h>

#include "backend/json_members.h"
#include "value/codec_ddb.h"
#include "value/json_exact.h"

static int oom(struct tt_backend_error *e) {
  return tt_backend_error_set(e, "InternalServerError", 500, "Internal server error");
}

/* One action's members, in the order DynamoDB reports their errors. */
static int step_of(const json_t *obj, enum tt_ddb_txn_kind kind, struct tt_ddb_txn_step *s,
                   struct tt_av own[3], struct tt_backend_error *e) {
  s->kind = kind;
  if (tt_ddbi_item_or_key(obj, kind == TT_DDB_TXN_PUT, kind != TT_DDB_TXN_GET, &own[0], &s->r,
                          e) != 0 ||
      tt_ddb_member_placeholders(obj, &own[1], &own[2], &s->r.names, &s->r.values, e) != 0)
    return -1;
  if ((kind == TT_DDB_TXN_GET &&
       tt_ddb_member_str(obj, "ProjectionExpression", &s->r.projection, e) != 0) ||
      (kind == TT_DDB_TXN_UPDATE &&
       tt_ddb_member_str(obj, "UpdateExpression", &s->r.update, e) != 0) ||
      (kind != TT_DDB_TXN_GET &&
       tt_ddb_member_str(obj, "ConditionExpression", &s->r.condition, e) != 0) ||
      tt_ddb_member_str(obj, "TableName", &s->r.table, e) != 0)
    return -1;
  return 0;
}

bool tt_ddbt_is_txn(enum tt_ddb_op op) {
  return op == TT_DDB_TRANSACT_WRITE_ITEMS || op == TT_DDB_TRANSACT_GET_ITEMS;
}

/* The action of one TransactItems entry: its kind and body, or -1. */
static int action_of(bool get, const json_t *ti, size_t i, enum tt_ddb_txn_kind *kind,
                     const json_t **body, struct tt_backend_error *e) {
  if (get) {
    *kind = TT_DDB_TXN_GET;
    *body = json_object_get(ti, "Get");
    if (!json_is_object(*body) || json_object_size(ti) != 1)
      return tt_backend_error_set(e, "ValidationException", 400,
                                  "1 validation error detected: Value null at "
                                  "'transactItems.%zu.member.get' failed to satisfy "
                                  "constraint: Member must not be null",
                                  i + 1);
    return 0;
  }
  static const char *const names[] = {"ConditionCheck", "Put", "Delete", "Update"};
  static const enum tt_ddb_txn_kind kinds[] = {TT_DDB_TXN_CONDITION_CHECK, TT_DDB_TXN_PUT,
                                               TT_DDB_TXN_DELETE, TT_DDB_TXN_UPDATE};
  int count = 0;
  for (int k = 0; k < 4; k++) {
    const json_t *o = json_object_get(ti, names[k]);
    if (o != NULL) {
      *kind = kinds[k];
      *body = o;
      count++;
    }
  }
  if (count != 1)
    return tt_backend_error_set(e, "ValidationException", 400,
                                "TransactItems can only contain one of Check, Put, Update or "
                                "Delete");
  return 0;
}

int tt_ddbt_txn_parse(enum tt_ddb_op op, const json_t *body, struct tt_ddbt_txn *out,
                      struct tt_backend_error *e) {
  bool get = op == TT_DDB_TRANSACT_GET_ITEMS;
  memset(out, 0, sizeof(*out));
  const json_t *items = json_object_get(body, "TransactItems");
  if (!json_is_array(items))
    return tt_backend_error_set(e, "ValidationException", 400,
                                "1 validation error detected: Value null at 'transactItems' "
                                "failed to satisfy constraint: Member must not be null");
  size_t n = json_array_size(items);
  if (n < 1 || n > 100)
    return tt_backend_error_set(e, "ValidationException", 400,
                                "1 validation error detected: Value at 'transactItems' failed "
                                "to satisfy constraint: Member must have length %s",
                                n < 1 ? "greater than or equal to 1"
                                      : "less than or equal to 100");
  if (!get && tt_ddb_member_str(body, "ClientRequestToken", &out->req.client_token, e) != 0)
    return -1;
  if ((out->steps = calloc(n, sizeof(*out->steps))) == NULL ||
      (out->own = calloc(3 * n, sizeof(*out->own))) == NULL) {
    tt_ddbt_txn_free(out);
    return oom(e);
  }
  out->req.steps = out->steps;
  out->req.n_steps = n;
  for (size_t i = 0; i < n; i++) {
    enum tt_ddb_txn_kind kind = TT_DDB_TXN_GET;
    const json_t *obj = NULL;
    if (action_of(get, json_array_get(items, i), i, &kind, &obj, e) != 0 ||
        step_of(obj, kind, &out->steps[i], &out->own[3 * i], e) != 0) {
      tt_ddbt_txn_free(out);
      return -1;
    }
  }
  return 0;
}

void tt_ddbt_txn_free(struct tt_ddbt_txn *t) {
  for (size_t i = 0; t->own && i < 3 * t->req.n_steps; i++)
    tt_av_free(&t->own[i]);
  free(t->own);
  free(t->steps);
  memset(t, 0, sizeof(*t));
}

json_t *tt_ddbt_txn_answer(enum tt_ddb_op op, const struct tt_ddb_txn_result *r) {
  json_t *out = json_object();
  if (out == NULL || op != TT_DDB_TRANSACT_GET_ITEMS)
    return out;
  json_t *list = json_array();
  if (list == NULL || json_object_set_new(out, "Responses", list) != 0)
    goto fail;
  for (size_t i = 0; i < r->n_items; i++) {
    json_t *entry = json_object();
    if (entry == NULL || json_array_append_new(list, entry) != 0)
      goto fail;
    if (r->items[i].type == TT_AV_M &&
        json_object_set_new(entry, "Item", tt_ddb_item_to_json(&r->items[i])) != 0)
      goto fail;
  }
  return out;
fail:
  json_decref(out);
  return NULL;
}

json_t *tt_ddbt_txn_reasons(const struct tt_ddb_txn_result *r) {
  json_t *list = json_array();
  json_t *out = json_pack("{s:o*}", "CancellationReasons", list);
  if (out == NULL)
    return NULL;
  for (size_t i = 0; i < r->n_reasons; i++) {
    const struct tt_ddb_txn_reason *x = &r->reasons[i];
    json_t *o = json_pack("{s:s}", "Code", x->code);
    if (o == NULL || json_array_append_new(list, o) != 0 ||
        (x->message && json_object_set_new(o, "Message", json_string(x->message)) != 0) ||
        (x->item.type == TT_AV_M &&
         json_object_set_new(o, "Item", tt_ddb_item_to_json(&x->item)) != 0)) {
      json_decref(out);
      return NULL;
    }
  }
  return out;
}

/* ---- batches ------------------------------------------------------------ */

bool tt_ddbt_is_batch(enum tt_ddb_op op) {
  return op == TT_DDB_BATCH_GET_ITEM || op == TT_DDB_BATCH_WRITE_ITEM;
}

/* The key or item list of one RequestItems member (NULL: none). */
static const json_t *entries_json(bool write, const json_t *spec) {
  const json_t *list = write ? spec : json_object_get(spec, "Keys");
  return json_is_array(list) ? list : NULL;
}

/* One entry's key or item: a BatchGetItem's key, or the PutRequest or
 * DeleteRequest of a BatchWriteItem. */
static int entry_of(bool write, const json_t *j, struct tt_ddb_batch_entry *x, struct tt_av *own,
                    struct tt_backend_error *e) {
  struct tt_error err;
  if (!write) {
    x->value = own;
    if (tt_ddb_item_from_json(j, "Keys", own, &err) == 0)
      return 0;
    return err.code == TT_ERR_INTERNAL
               ? oom(e)
               : tt_backend_error_set(e, "ValidationException", 400, "%s", err.message);
  }
  const json_t *put = json_object_get(j, "PutRequest");
  const json_t *del = json_object_get(j, "DeleteRequest");
  if ((put == NULL) == (del == NULL) || json_object_size(j) != 1)
    return tt_backend_error_set(e, "ValidationException", 400,
                                "Supplied AttributeValue has more than one datatypes set, must "
                                "contain exactly one of the supported datatypes");
  x->put = put != NULL;
  return tt_ddb_member_map(put ? put : del, put ? "Item" : "Key", own, &x->value, e);
}

/* A BatchGetItem table's members besides its keys. */
static int get_spec(const json_t *spec, struct tt_ddb_batch_table *t, struct tt_av maps[2],
                    struct tt_backend_error *e) {
  struct tt_ddb_item_request r;
  memset(&r, 0, sizeof(r));
  if (tt_ddb_member_placeholders(spec, &maps[0], &maps[1], &r.names, &r.values, e) != 0 ||
      tt_ddb_member_str(spec, "ProjectionExpression", &t->projection, e) != 0)
    return -1;
  t->names = r.names;
  t->values = r.values;
  return tt_ddb_member_bool(spec, "ConsistentRead", false, &t->consistent_read, e);
}

int tt_ddbt_batch_parse(enum tt_ddb_op op, const json_t *body, struct tt_ddbt_batch *out,
                        struct tt_backend_error *e) {
  bool write = op == TT_DDB_BATCH_WRITE_ITEM;
  const json_t *ri = json_object_get(body, "RequestItems");
  const char *name;
  const json_t *spec;
  size_t nt = json_is_object(ri) ? json_object_size(ri) : 0, ne = 0;
  memset(out, 0, sizeof(*out));
  out->req.capacity = tt_ddb_capacity_mode(body);
  json_object_foreach((json_t *)ri, name, spec) {
    ne += json_array_size(entries_json(write, spec));
  }
  if (!write && ne > 100)
    return tt_backend_error_set(e, "ValidationException", 400,
                                "Too many items requested for the BatchGetItem call");
  if ((out->tables = calloc(nt ? nt : 1, sizeof(*out->tables))) == NULL ||
      (out->maps = calloc(2 * (nt ? nt : 1), sizeof(*out->maps))) == NULL ||
      (out->entries = calloc(ne ? ne : 1, sizeof(*out->entries))) == NULL ||
      (out->own = calloc(ne ? ne : 1, sizeof(*out->own))) == NULL) {
    tt_ddbt_batch_free(out);
    return oom(e);
  }
  out->req.tables = out->tables;
  out->req.entries = out->entries;
  size_t t = 0;
  json_object_foreach((json_t *)ri, name, spec) {
    out->tables[t].table = name;
    out->req.n_tables = t + 1;
    if (!write && get_spec(spec, &out->tables[t], &out->maps[2 * t], e) != 0)
      goto fail;
    size_t i;
    const json_t *j;
    json_array_foreach(entries_json(write, spec), i, j) {
      size_t k = out->req.n_entries++;
      out->entries[k].table = t;
      if (entry_of(write, j, &out->entries[k], &out->own[k], e) != 0)
        goto fail;
    }
    t++;
  }
  return 0;
fail:
  tt_ddbt_batch_free(out);
  return -1;
}

void tt_ddbt_batch_free(struct tt_ddbt_batch *b) {
  for (size_t i = 0; b->own && i < b->req.n_entries; i++)
    tt_av_free(&b->own[i]);
  for (size_t i = 0; b->maps && i < 2 * b->req.n_tables; i++)
    tt_av_free(&b->maps[i]);
  free(b->own);
  free(b->maps);
  free(b->entries);
  free(b->tables);
  memset(b, 0, sizeof(*b));
}

/* The JSON of an unprocessed entry: a key, or a PutRequest/DeleteRequest. */
static json_t *left_json(bool write, const struct tt_ddb_batch_value *v) {
  json_t *j = tt_ddb_item_to_json(&v->value);
  if (!write || j == NULL)
    return j;
  return json_pack("{s:{s:o}}", v->put ? "PutRequest" : "DeleteRequest", v->put ? "Item" : "Key",
                   j);
}

/* The list of table t in a per-table object of the answer, made when
 * missing: a BatchGetItem's unprocessed keys go into a copy of the table's
 * request (its projection and consistency stay). */
static json_t *table_list(json_t *per_table, bool get_left, const json_t *body, const char *table) {
  json_t *have = json_object_get(per_table, table);
  if (have != NULL)
    return get_left ? json_object_get(have, "Keys") : have;
  json_t *list = json_array();
  json_t *holder = list;
  if (list != NULL && get_left) {
    holder = json_deep_copy(json_object_get(json_object_get(body, "RequestItems"), table));
    if (holder == NULL || json_object_set_new(holder, "Keys", list) != 0) {
      json_decref(holder);
      return NULL;
    }
  }
  return holder != NULL && json_object_set_new(per_table, table, holder) == 0 ? list : NULL;
}

json_t *tt_ddbt_batch_answer(enum tt_ddb_op op, const json_t *body, const struct tt_ddbt_batch *b,
                             const struct tt_ddb_batch_result *r) {
  bool write = op == TT_DDB_BATCH_WRITE_ITEM;
  json_t *responses = write ? NULL : json_object(), *left = json_object();
  json_t *out = write ? json_pack("{s:o}", "UnprocessedItems", left)
                      : json_pack("{s:o, s:o}", "Responses", responses, "UnprocessedKeys", left);
  if (out == NULL)
    return NULL;
  for (size_t t = 0; !write && t < b->req.n_tables; t++)
    if (table_list(responses, false, body, b->tables[t].table) == NULL)
      goto fail;
  for (size_t i = 0; i < r->n_items; i++) {
    json_t *list = json_object_get(responses, b->tables[r->items[i].table].table);
    if (json_array_append_new(list, tt_ddb_item_to_json(&r->items[i].value)) != 0)
      goto fail;
  }
  for (size_t i = 0; i < r->n_left; i++) {
    json_t *list = table_list(left, !write, body, b->tables[r->left[i].table].table);
    if (list == NULL || json_array_append_new(list, left_json(write, &r->left[i])) != 0)
      goto fail;
  }
  if (r->units != NULL && b->req.capacity != 0) {
    json_t *cc = json_array();
    if (cc == NULL || json_object_set_new(out, "ConsumedCapacity", cc) != 0)
      goto fail;
    for (size_t t = 0; t < b->req.n_tables; t++)
      if (json_array_append_new(cc, tt_ddb_capacity_json(b->req.capacity, b->tables[t].table,
                                                         r->units[t])) != 0)
        goto fail;
  }
  return out;
fail:
  json_decref(out);
  return NULL;
}
