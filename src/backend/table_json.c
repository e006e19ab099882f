/* SPDX-License-Identifier: Apache-2.0 */
/* table_json.c -- DynamoDB's JSON of the typed table operations
 * (table_json.h). */
#include "backend/table_json.h"

#include <string.h>

static const char *const projections[] = {"ALL", "KEYS_ONLY", "INCLUDE"};
static const char *const billings[] = {NULL, "PROVISIONED", "PAY_PER_REQUEST"};

/* ---- writing a request ---------------------------------------------------- */

static json_t *keys_json(const struct tt_ddb_keys *k) {
  json_t *ks = json_pack("[{s:s,s:s}]", "AttributeName", k->hash, "KeyType", "HASH");
  if (ks && k->range &&
      json_array_append_new(ks, json_pack("{s:s,s:s}", "AttributeName", k->range, "KeyType",
                                          "RANGE")) != 0) {
    json_decref(ks);
    return NULL;
  }
  return ks;
}

static json_t *throughput_json(const struct tt_ddb_throughput *t) {
  return json_pack("{s:I,s:I}", "ReadCapacityUnits", (json_int_t)t->read, "WriteCapacityUnits",
                   (json_int_t)t->write);
}

static json_t *index_json(const struct tt_ddb_index *ix) {
  json_t *p = json_pack("{s:s}", "ProjectionType", projections[ix->projection]);
  json_t *out = p ? json_pack("{s:s,s:o,s:O}", "IndexName", ix->name, "KeySchema",
                              keys_json(&ix->keys), "Projection", p)
                  : NULL;
  int rc = out ? 0 : -1;
  if (rc == 0 && ix->projection == TT_DDB_PROJECT_INCLUDE) {
    json_t *nka = json_array();
    for (size_t i = 0; nka && rc == 0 && i < ix->n_include; i++)
      rc = json_array_append_new(nka, json_string(ix->include[i]));
    rc = rc == 0 ? json_object_set(p, "NonKeyAttributes", nka) : -1;
    json_decref(nka);
  }
  if (rc == 0 && ix->throughput.set)
    rc = json_object_set_new(out, "ProvisionedThroughput", throughput_json(&ix->throughput));
  json_decref(p);
  if (rc != 0) {
    json_decref(out);
    return NULL;
  }
  return out;
}

/* The request's indexes of one kind as a list (create: bare; else each an
 * UpdateTable {"Create": ...}); NULL when there is none or memory ran out
 * (*rc -1). */
static json_t *indexes_json(const struct tt_ddb_table_request *r, bool global, bool create,
                            int *rc) {
  json_t *list = NULL;
  for (size_t i = 0; *rc == 0 && i < r->n_indexes; i++) {
    if (r->indexes[i].global != global)
      continue;
    json_t *ix = index_json(&r->indexes[i]);
    if (ix && !create)
      ix = json_pack("{s:o}", "Create", ix);
    if (list == NULL)
      list = json_array();
    *rc = json_array_append_new(list, ix);
  }
  return list;
}

json_t *tt_ddb_table_request_json(enum tt_ddb_op op, const struct tt_ddb_table_request *r) {
  json_t *req = json_pack("{s:s}", "TableName", r->table ? r->table : "");
  int rc = req ? 0 : -1;
  if (op == TT_DDB_UPDATE_TIME_TO_LIVE && rc == 0)
    rc = json_object_set_new(req, "TimeToLiveSpecification",
                             json_pack("{s:b,s:s}", "Enabled", r->ttl_enabled, "AttributeName",
                                       r->ttl_attribute ? r->ttl_attribute : ""));
  if (op != TT_DDB_CREATE_TABLE && op != TT_DDB_UPDATE_TABLE)
    goto done;
  if (r->n_defs && rc == 0) {
    json_t *defs = json_array();
    for (size_t i = 0; defs && rc == 0 && i < r->n_defs; i++)
      rc = json_array_append_new(defs, json_pack("{s:s,s:s}", "AttributeName", r->defs[i].name,
                                                 "AttributeType",
                                                 tt_av_type_name(r->defs[i].type)));
    rc = rc == 0 ? json_object_set(req, "AttributeDefinitions", defs) : -1;
    json_decref(defs);
  }
  if (r->keys.hash && rc == 0)
    rc = json_object_set_new(req, "KeySchema", keys_json(&r->keys));
  if (r->billing != TT_DDB_BILLING_UNSET && rc == 0)
    rc = json_object_set_new(req, "BillingMode", json_string(billings[r->billing]));
  if (r->throughput.set && rc == 0)
    rc = json_object_set_new(req, "ProvisionedThroughput", throughput_json(&r->throughput));
  bool create = op == TT_DDB_CREATE_TABLE;
  json_t *g = indexes_json(r, true, create, &rc);
  if (g && rc == 0)
    rc = json_object_set(req, create ? "GlobalSecondaryIndexes" : "GlobalSecondaryIndexUpdates",
                         g);
  json_decref(g);
  json_t *l = create ? indexes_json(r, false, true, &rc) : NULL;
  if (l && rc == 0)
    rc = json_object_set(req, "LocalSecondaryIndexes", l);
  json_decref(l);
done:
  if (rc != 0) {
    json_decref(req);
    return NULL;
  }
  return req;
}

/* ---- writing an answer --------------------------------------------------- */

static json_t *desc_throughput_json(const struct tt_ddb_throughput *t) {
  json_t *pt = json_pack("{s:I,s:I,s:I}", "NumberOfDecreasesToday",
                         (json_int_t)t->decreases_today, "ReadCapacityUnits",
                         (json_int_t)t->read, "WriteCapacityUnits", (json_int_t)t->write);
  if (pt && ((t->last_increase > 0 &&
              json_object_set_new(pt, "LastIncreaseDateTime", json_real(t->last_increase)) != 0) ||
             (t->last_decrease > 0 &&
              json_object_set_new(pt, "LastDecreaseDateTime", json_real(t->last_decrease)) != 0))) {
    json_decref(pt);
    return NULL;
  }
  return pt;
}

static json_t *desc_index_json(const struct tt_ddb_index *ix) {
  struct tt_ddb_index bare = *ix;
  bare.throughput.set = false;
  json_t *d = index_json(&bare);
  int rc = d ? 0 : -1;
  if (rc == 0)
    rc = json_object_set_new(d, "ItemCount", json_integer((json_int_t)ix->item_count)) != 0 ||
                 json_object_set_new(d, "IndexSizeBytes",
                                     json_integer((json_int_t)ix->size_bytes)) != 0 ||
                 (ix->arn && json_object_set_new(d, "IndexArn", json_string(ix->arn)) != 0) ||
                 (ix->status && json_object_set_new(d, "IndexStatus", json_string(ix->status)) != 0) ||
                 (ix->throughput.set &&
                  json_object_set_new(d, "ProvisionedThroughput",
                                      desc_throughput_json(&ix->throughput)) != 0)
             ? -1
             : 0;
  if (rc != 0) {
    json_decref(d);
    return NULL;
  }
  return d;
}

/* The TableDescription of d. */
static json_t *desc_table_json(const struct tt_ddb_table_desc *d) {
  json_t *t = json_pack("{s:s?,s:s?}", "TableName", d->table, "TableStatus", d->status);
  struct tt_ddb_table_request defs = {.defs = d->defs, .n_defs = d->n_defs, .keys = d->keys};
  json_t *dj = t ? tt_ddb_table_request_json(TT_DDB_CREATE_TABLE, &defs) : NULL;
  int rc = dj ? 0 : -1;
  if (rc == 0 && d->keys.hash)
    rc = json_object_set(t, "KeySchema", json_object_get(dj, "KeySchema"));
  if (rc == 0)
    rc = json_object_set_new(t, "AttributeDefinitions",
                             json_incref(json_object_get(dj, "AttributeDefinitions")
                                             ? json_object_get(dj, "AttributeDefinitions")
                                             : json_array()));
  json_decref(dj);
  if (rc == 0)
    rc = json_object_set_new(t, "ItemCount", json_integer((json_int_t)d->item_count)) != 0 ||
                 json_object_set_new(t, "TableSizeBytes",
                                     json_integer((json_int_t)d->size_bytes)) != 0 ||
                 (d->arn && json_object_set_new(t, "TableArn", json_string(d->arn)) != 0) ||
                 (d->id && json_object_set_new(t, "TableId", json_string(d->id)) != 0) ||
                 json_object_set_new(t, "CreationDateTime", json_real(d->created)) != 0 ||
                 (d->throughput.set &&
                  json_object_set_new(t, "ProvisionedThroughput",
                                      desc_throughput_json(&d->throughput)) != 0) ||
                 (d->billing != TT_DDB_BILLING_UNSET &&
                  json_object_set_new(t, "BillingModeSummary",
                                      json_pack("{s:s}", "BillingMode", billings[d->billing])) !=
                      0) ||
                 (d->billing == TT_DDB_BILLING_PAY_PER_REQUEST &&
                  json_object_set_new(t, "TableThroughputModeSummary",
                                      json_pack("{s:s}", "TableThroughputMode",
                                                "PAY_PER_REQUEST")) != 0)
             ? -1
             : 0;
  for (int k = 0; k < 2 && rc == 0; k++) {
    json_t *list = NULL;
    for (size_t i = 0; rc == 0 && i < d->n_indexes; i++) {
      if (d->indexes[i].global != (k == 0))
        continue;
      if (list == NULL && (list = json_array()) == NULL)
        rc = -1;
      else
        rc = json_array_append_new(list, desc_index_json(&d->indexes[i]));
    }
    if (list && rc == 0)
      rc = json_object_set(t, k == 0 ? "GlobalSecondaryIndexes" : "LocalSecondaryIndexes", list);
    json_decref(list);
  }
  if (rc != 0) {
    json_decref(t);
    return NULL;
  }
  return t;
}

json_t *tt_ddb_table_desc_json(enum tt_ddb_op op, const struct tt_ddb_table_desc *d) {
  if (op == TT_DDB_DESCRIBE_TIME_TO_LIVE)
    return d->ttl_attribute
               ? json_pack("{s:{s:s?,s:s}}", "TimeToLiveDescription", "TimeToLiveStatus",
                           d->ttl_status, "AttributeName", d->ttl_attribute)
               : json_pack("{s:{s:s?}}", "TimeToLiveDescription", "TimeToLiveStatus",
                           d->ttl_status);
  if (op == TT_DDB_UPDATE_TIME_TO_LIVE)
    return json_pack("{s:{s:s?,s:b}}", "TimeToLiveSpecification", "AttributeName",
                     d->ttl_attribute, "Enabled", d->ttl_enabled);
  json_t *t = desc_table_json(d);
  return t ? json_pack("{s:o}", op == TT_DDB_DESCRIBE_TABLE ? "Table" : "TableDescription", t)
           : NULL;
}

/* ---- reading an answer ---------------------------------------------------- */

/* A string copied into the arena: NULL when j is not one; sets *bad when
 * memory ran out. */
static const char *copy_str(struct tt_ddb_table_desc *d, const json_t *j, bool *bad) {
  const char *s = json_string_value(j);
  const char *c = s ? tt_arena_strndup(&d->arena, s, strlen(s)) : NULL;
  *bad = *bad || (s && c == NULL);
  return c;
}

static const char *str(struct tt_ddb_table_desc *d, const json_t *o, const char *key,
                       bool *bad) {
  return copy_str(d, json_object_get(o, key), bad);
}

static int64_t num(const json_t *o, const char *key) {
  return (int64_t)json_integer_value(json_object_get(o, key));
}

static void keys_read(struct tt_ddb_table_desc *d, const json_t *ks, struct tt_ddb_keys *k,
                      bool *bad) {
  size_t i;
  const json_t *e;
  json_array_foreach(ks, i, e) {
    const char *t = json_string_value(json_object_get(e, "KeyType"));
    if (t && strcmp(t, "HASH") == 0)
      k->hash = str(d, e, "AttributeName", bad);
    else if (t && strcmp(t, "RANGE") == 0)
      k->range = str(d, e, "AttributeName", bad);
  }
}

static void throughput_read(const json_t *pt, struct tt_ddb_throughput *t) {
  if (!json_is_object(pt))
    return;
  *t = (struct tt_ddb_throughput){
      .set = true,
      .read = num(pt, "ReadCapacityUnits"),
      .write = num(pt, "WriteCapacityUnits"),
      .decreases_today = num(pt, "NumberOfDecreasesToday"),
      .last_increase = json_number_value(json_object_get(pt, "LastIncreaseDateTime")),
      .last_decrease = json_number_value(json_object_get(pt, "LastDecreaseDateTime"))};
}

static void index_read(struct tt_ddb_table_desc *d, const json_t *j, bool global,
                       struct tt_ddb_index *ix, bool *bad) {
  const json_t *p = json_object_get(j, "Projection");
  const char *pt = json_string_value(json_object_get(p, "ProjectionType"));
  const json_t *nka = json_object_get(p, "NonKeyAttributes");
  ix->global = global;
  ix->name = str(d, j, "IndexName", bad);
  keys_read(d, json_object_get(j, "KeySchema"), &ix->keys, bad);
  for (int k = 0; pt && k < 3; k++)
    if (strcmp(pt, projections[k]) == 0)
      ix->projection = (enum tt_ddb_projection)k;
  size_t n = json_array_size(nka);
  const char **inc = n ? tt_arena_alloc(&d->arena, n * sizeof(*inc)) : NULL;
  *bad = *bad || (n && inc == NULL);
  for (size_t i = 0; inc && i < n; i++)
    if ((inc[ix->n_include] = copy_str(d, json_array_get(nka, i), bad)) != NULL)
      ix->n_include++;
  ix->include = inc;
  throughput_read(json_object_get(j, "ProvisionedThroughput"), &ix->throughput);
  ix->status = str(d, j, "IndexStatus", bad);
  ix->item_count = num(j, "ItemCount");
  ix->size_bytes = num(j, "IndexSizeBytes");
  ix->arn = str(d, j, "IndexArn", bad);
}

int tt_ddb_table_answer_read(enum tt_ddb_op op, const json_t *answer,
                             struct tt_ddb_table_desc *d) {
  bool bad = false;
  memset(d, 0, sizeof(*d));
  tt_arena_init(&d->arena);
  if (op == TT_DDB_DESCRIBE_TIME_TO_LIVE || op == TT_DDB_UPDATE_TIME_TO_LIVE) {
    const json_t *t = json_object_get(answer, op == TT_DDB_DESCRIBE_TIME_TO_LIVE
                                                  ? "TimeToLiveDescription"
                                                  : "TimeToLiveSpecification");
    d->ttl_status = str(d, t, "TimeToLiveStatus", &bad);
    d->ttl_attribute = str(d, t, "AttributeName", &bad);
    d->ttl_enabled = json_is_true(json_object_get(t, "Enabled"));
    goto done;
  }
  const json_t *t =
      json_object_get(answer, op == TT_DDB_DESCRIBE_TABLE ? "Table" : "TableDescription");
  d->table = str(d, t, "TableName", &bad);
  d->status = str(d, t, "TableStatus", &bad);
  d->arn = str(d, t, "TableArn", &bad);
  d->id = str(d, t, "TableId", &bad);
  keys_read(d, json_object_get(t, "KeySchema"), &d->keys, &bad);
  const json_t *defs = json_object_get(t, "AttributeDefinitions");
  size_t n = json_array_size(defs), i;
  const json_t *e;
  if (n && (d->defs = tt_arena_alloc(&d->arena, n * sizeof(*d->defs))) == NULL)
    bad = true;
  json_array_foreach(defs, i, e) {
    const char *ty = json_string_value(json_object_get(e, "AttributeType"));
    struct tt_ddb_attr_def *a = d->defs ? &d->defs[d->n_defs] : NULL;
    if (a && (a->name = str(d, e, "AttributeName", &bad)) != NULL) {
      a->type = ty ? tt_av_type_parse(ty, strlen(ty)) : 0;
      d->n_defs++;
    }
  }
  d->item_count = num(t, "ItemCount");
  d->size_bytes = num(t, "TableSizeBytes");
  d->created = json_number_value(json_object_get(t, "CreationDateTime"));
  const char *b = json_string_value(
      json_object_get(json_object_get(t, "BillingModeSummary"), "BillingMode"));
  for (int k = 1; b && k < 3; k++)
    if (strcmp(b, billings[k]) == 0)
      d->billing = (enum tt_ddb_billing)k;
  throughput_read(json_object_get(t, "ProvisionedThroughput"), &d->throughput);
  const json_t *g = json_object_get(t, "GlobalSecondaryIndexes"),
               *l = json_object_get(t, "LocalSecondaryIndexes");
  n = json_array_size(g) + json_array_size(l);
  if (n && (d->indexes = tt_arena_alloc(&d->arena, n * sizeof(*d->indexes))) == NULL)
    bad = true;
  for (int k = 0; d->indexes && k < 2; k++)
    json_array_foreach(k ? l : g, i, e) {
      struct tt_ddb_index *ix = &d->indexes[d->n_indexes++];
      memset(ix, 0, sizeof(*ix));
      index_read(d, e, k == 0, ix, &bad);
    }
done:
  if (bad) {
    tt_ddb_table_desc_free(d);
    return -1;
  }
  return 0;
}
