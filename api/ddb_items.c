/* SPDX-License-Identifier: Apache-2.0 */
/* ddb_items.c -- DynamoDB JSON of the item and read operations to typed
 * requests, and typed answers back to DynamoDB JSON, for the DynamoDB
 * listener (ddb_items.h). */
#include "api/ddb_items.h"

#include <inttypes.h>
#include <string.h>

#include "backend/json_members.h"
#include "value/codec_ddb.h"
#include "value/json_exact.h"

/* Appends a string literal. */
#define PUT(b, lit) tt_buf_append((b), (lit), sizeof(lit) - 1)

/* ReturnValues of a write. */
static int return_values(const json_t *obj, enum tt_ddb_return_values *rv,
                         struct tt_backend_error *e) {
  const char *s, *name;
  *rv = TT_DDB_RETURN_NONE;
  if (tt_ddb_member_str(obj, "ReturnValues", &s, e) != 0)
    return -1;
  if (s == NULL)
    return 0;
  for (int i = 0; (name = tt_ddb_return_values_name((enum tt_ddb_return_values)i)); i++)
    if (strcmp(s, name) == 0) {
      *rv = (enum tt_ddb_return_values)i;
      return 0;
    }
  return tt_backend_error_set(
      e, "ValidationException", 400,
      "1 validation error detected: Value '%s' at 'returnValues' failed to satisfy "
      "constraint: Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, "
      "NONE, UPDATED_NEW]",
      s);
}

int tt_ddbi_item_or_key(const json_t *obj, bool put, bool on_failure, struct tt_av *own,
                        struct tt_ddb_item_request *q, struct tt_backend_error *e) {
  const char *rvf = NULL;
  if (tt_ddb_member_map(obj, put ? "Item" : "Key", own, put ? &q->item : &q->key, e) != 0)
    return -1;
  if ((put ? q->item : q->key) == NULL)
    return tt_backend_error_set(e, "ValidationException", 400,
                                "1 validation error detected: Value null at '%s' failed to satisfy "
                                "constraint: Member must not be null",
                                put ? "item" : "key");
  if (on_failure && tt_ddb_member_str(obj, "ReturnValuesOnConditionCheckFailure", &rvf, e) != 0)
    return -1;
  if (rvf && strcmp(rvf, "ALL_OLD") != 0 && strcmp(rvf, "NONE") != 0)
    return tt_backend_error_set(
        e, "ValidationException", 400,
        "1 validation error detected: Value '%s' at "
        "'returnValuesOnConditionCheckFailure' failed to satisfy constraint: Member "
        "must satisfy enum value set: [ALL_OLD, NONE]",
        rvf);
  q->old_on_condition_failure = rvf && strcmp(rvf, "ALL_OLD") == 0;
  return 0;
}

/* GetItem, PutItem, UpdateItem, DeleteItem, in the order DynamoDB reports
 * their errors. */
static int item_from_json(enum tt_ddb_op op, const json_t *obj, struct tt_ddbi_request *r,
                          struct tt_av own[4], struct tt_backend_error *e) {
  struct tt_ddb_item_request *q = &r->item;
  bool get = op == TT_DDB_GET_ITEM, put = op == TT_DDB_PUT_ITEM;
  if (!get) {
    if (return_values(obj, &q->return_values, e) != 0)
      return -1;
    if (op != TT_DDB_UPDATE_ITEM && q->return_values != TT_DDB_RETURN_NONE &&
        q->return_values != TT_DDB_RETURN_ALL_OLD)
      return tt_backend_error_set(
          e, "ValidationException", 400, "ReturnValues can only be ALL_OLD or NONE");
  }
  if (tt_ddbi_item_or_key(obj, put, true, &own[0], q, e) != 0 ||
      tt_ddb_member_placeholders(obj, &own[1], &own[2], &q->names, &q->values, e) != 0 ||
      tt_ddb_member_str(obj, "UpdateExpression", &q->update, e) != 0 ||
      tt_ddb_member_str(obj, "ConditionExpression", &q->condition, e) != 0 ||
      tt_ddb_member_str(obj, "TableName", &q->table, e) != 0)
    return -1;
  if (get && (tt_ddb_member_str(obj, "ProjectionExpression", &q->projection, e) != 0 ||
              tt_ddb_member_bool(obj, "ConsistentRead", false, &q->consistent_read, e) != 0))
    return -1;
  return 0;
}

static const char total_segments_range[] =
    "1 validation error detected: Value '%lld' at 'totalSegments' failed to satisfy "
    "constraint: Member must have value less than or equal to 1000000 and greater than or "
    "equal to 1";

/* Query and Scan. */
static int read_from_json(bool query, const json_t *obj, struct tt_ddbi_request *r,
                          struct tt_av own[4], struct tt_backend_error *e) {
  struct tt_ddb_read_request *q = &r->read;
  const char *select;
  bool forward, has_limit;
  if (tt_ddb_member_str(obj, "IndexName", &q->index, e) != 0 ||
      tt_ddb_member_str(obj, "Select", &select, e) != 0 ||
      tt_ddb_member_bool(obj, "ScanIndexForward", true, &forward, e) != 0 ||
      tt_ddb_member_bool(obj, "ConsistentRead", false, &q->consistent_read, e) != 0 ||
      tt_ddb_member_int(obj, "Limit", &q->limit, &has_limit, e) != 0 ||
      tt_ddb_member_map(obj, "ExclusiveStartKey", &own[3], &q->start_key, e) != 0)
    return -1;
  q->backward = query && !forward;
  if (has_limit && q->limit < 1)
    return tt_backend_error_set(
        e, "ValidationException", 400,
        "1 validation error detected: Value '%lld' at 'limit' failed to satisfy "
        "constraint: Member must have value greater than or equal to 1",
        (long long)q->limit);
  if (select) {
    for (int i = 1; tt_ddb_select_name((enum tt_ddb_select)i); i++)
      if (strcmp(select, tt_ddb_select_name((enum tt_ddb_select)i)) == 0)
        q->select = (enum tt_ddb_select)i;
    if (q->select == TT_DDB_SELECT_DEFAULT)
      return tt_backend_error_set(
          e, "ValidationException", 400,
          "1 validation error detected: Value '%s' at 'select' failed to satisfy "
          "constraint: Member must satisfy enum value set: [SPECIFIC_ATTRIBUTES, "
          "COUNT, ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES]",
          select);
  }
  if (tt_ddb_member_placeholders(obj, &own[1], &own[2], &q->names, &q->values, e) != 0 ||
      tt_ddb_member_str(obj, "KeyConditionExpression", &q->key_condition, e) != 0 ||
      tt_ddb_member_str(obj, "FilterExpression", &q->filter, e) != 0 ||
      tt_ddb_member_str(obj, "ProjectionExpression", &q->projection, e) != 0 ||
      tt_ddb_member_str(obj, "TableName", &q->table, e) != 0)
    return -1;
  if (!query) {
    bool has_seg, has_total;
    if (tt_ddb_member_int(obj, "Segment", &q->segment, &has_seg, e) != 0 ||
        tt_ddb_member_int(obj, "TotalSegments", &q->total_segments, &has_total, e) != 0)
      return -1;
    if (has_seg != has_total)
      return tt_backend_error_set(
          e, "ValidationException", 400, "%s",
          has_seg ? "The TotalSegments parameter is required but was not present in the "
                    "request when Segment parameter is present"
                  : "The Segment parameter is required but was not present in the request "
                    "when parameter TotalSegments is present");
    if (has_total && q->total_segments < 1)
      return tt_backend_error_set(e, "ValidationException", 400, total_segments_range,
                                  (long long)q->total_segments);
  }
  return 0;
}

bool tt_ddbi_typed_op(enum tt_ddb_op op) {
  return op == TT_DDB_GET_ITEM || op == TT_DDB_PUT_ITEM || op == TT_DDB_UPDATE_ITEM ||
         op == TT_DDB_DELETE_ITEM || op == TT_DDB_QUERY || op == TT_DDB_SCAN;
}

int tt_ddbi_request_from_json(enum tt_ddb_op op, const json_t *body, struct tt_ddbi_request *r,
                              struct tt_ddbi_owned *own, struct tt_backend_error *e) {
  memset(r, 0, sizeof(*r));
  memset(own, 0, sizeof(*own));
  r->op = op;
  r->capacity = (enum tt_ddbi_capacity)tt_ddb_capacity_mode(body);
  struct tt_ddb_consumed *cc = r->capacity != TT_DDBI_CAPACITY_NONE ? &own->consumed : NULL;
  int rc;
  if (!tt_ddbi_typed_op(op)) {
    rc = tt_backend_error_set(e, "ValidationException", 400, "%s is not a typed operation",
                              tt_ddb_op_name(op));
  } else if (op == TT_DDB_QUERY || op == TT_DDB_SCAN) {
    rc = read_from_json(op == TT_DDB_QUERY, body, r, own->av, e);
    r->read.consumed = cc;
  } else {
    rc = item_from_json(op, body, r, own->av, e);
    r->item.consumed = cc;
  }
  if (rc != 0)
    tt_ddbi_owned_free(own);
  return rc;
}

void tt_ddbi_owned_free(struct tt_ddbi_owned *own) {
  for (size_t i = 0; i < sizeof(own->av) / sizeof(own->av[0]); i++)
    if (own->av[i].type != 0)
      tt_av_free(&own->av[i]);
}

/* ,"ConsumedCapacity":{...} (the comma unless first), as the memory
 * backend's JSON answers wrote it. */
static int capacity_write(const struct tt_ddbi_request *r, bool first, struct tt_buf *b) {
  bool read = r->op == TT_DDB_QUERY || r->op == TT_DDB_SCAN;
  const struct tt_ddb_consumed *cc = read ? r->read.consumed : r->item.consumed;
  const char *index = read ? r->read.index : NULL;
  if (cc == NULL || !cc->set)
    return 0;
  json_t *o = json_pack("{s:f, s:s}", "CapacityUnits", cc->total, "TableName",
                        read ? r->read.table : r->item.table);
  int rc = o == NULL ? -1 : 0;
  if (rc == 0 && r->capacity == TT_DDBI_CAPACITY_INDEXES &&
      (json_object_set_new(o, "Table", json_pack("{s:f}", "CapacityUnits", cc->table)) != 0 ||
       (index && json_object_set_new(o, cc->index_global ? "GlobalSecondaryIndexes"
                                                         : "LocalSecondaryIndexes",
                                     json_pack("{s:{s:f}}", index, "CapacityUnits",
                                               cc->index)) != 0)))
    rc = -1;
  if (rc == 0 && ((!first && PUT(b, ",") != 0) || PUT(b, "\"ConsumedCapacity\":") != 0 ||
                  tt_json_dump(o, 0, b) != 0))
    rc = -1;
  json_decref(o);
  return rc;
}

static int read_answer(const struct tt_ddbi_request *r, const struct tt_backend_call *bc,
                       struct tt_buf *b) {
  const struct tt_ddb_read_result *p = &bc->read_out;
  if (tt_buf_printf(b, "{\"Count\":%" PRIu64 ",\"ScannedCount\":%" PRIu64, p->count,
                    p->scanned_count) != 0)
    return -1;
  if (r->read.select != TT_DDB_SELECT_COUNT) {
    if (PUT(b, ",\"Items\":[") != 0)
      return -1;
    for (size_t i = 0; i < p->n_items; i++)
      if ((i > 0 && PUT(b, ",") != 0) || tt_ddb_item_write(b, &p->items[i], 0) != 0)
        return -1;
    if (PUT(b, "]") != 0)
      return -1;
  }
  if (p->last_key.type == TT_AV_M && (PUT(b, ",\"LastEvaluatedKey\":") != 0 ||
                                      tt_ddb_item_write(b, &p->last_key, 0) != 0))
    return -1;
  return capacity_write(r, false, b) != 0 ? -1 : PUT(b, "}");
}

int tt_ddbi_answer_write(const struct tt_ddbi_request *r, const struct tt_backend_call *bc,
                         struct tt_buf *b) {
  if (r->op == TT_DDB_QUERY || r->op == TT_DDB_SCAN)
    return read_answer(r, bc, b);
  bool has = bc->item_out.type == TT_AV_M;
  if (r->op == TT_DDB_GET_ITEM) { /* ConsumedCapacity, then Item */
    if (PUT(b, "{") != 0)
      return -1;
    size_t at = b->len;
    if (capacity_write(r, true, b) != 0)
      return -1;
    if (has && ((b->len > at && PUT(b, ",") != 0) || PUT(b, "\"Item\":") != 0 ||
                tt_ddb_item_write(b, &bc->item_out, 0) != 0))
      return -1;
  } else if (PUT(b, "{") != 0 ||
             (has && (PUT(b, "\"Attributes\":") != 0 ||
                      tt_ddb_item_write(b, &bc->item_out, 0) != 0)) ||
             capacity_write(r, !has, b) != 0) {
    return -1;
  }
  return PUT(b, "}");
}
