/* SPDX-License-Identifier: Apache-2.0 */
/* table_json.c -- DynamoDB's JSON of the typed table operations
 * (table_json.h). */
#include "backend/table_json.h"

#include <string.h>

static const char *const projections[] = {"ALL", "KEYS_ONLY", "INCLUDE"};
static const char *const billings[] = {NULL, "PROVISIONED", "PAY_PER_REQUEST"};

/* ---- writing ------------------------------------------------------------- */

/* Each writer returns a new tree, or NULL with *bad set when memory ran
 * out; members of json_pack's "o*" that are NULL are left out, so a writer
 * packs what it could make and drops it when *bad. */
static json_t *made(json_t *j, bool *bad) {
  *bad = *bad || j == NULL;
  return j;
}

static json_t *keys_json(const struct tt_ddb_keys *k, bool *bad) {
  return made(k->range ? json_pack("[{s:s,s:s},{s:s,s:s}]", "AttributeName", k->hash, "KeyType",
                                   "HASH", "AttributeName", k->range, "KeyType", "RANGE")
                       : json_pack("[{s:s,s:s}]", "AttributeName", k->hash, "KeyType", "HASH"),
              bad);
}

static json_t *defs_json(const struct tt_ddb_attr_def *defs, size_t n, bool *bad) {
  json_t *a = made(json_array(), bad);
  for (size_t i = 0; a && i < n; i++)
    *bad = json_array_append_new(a, json_pack("{s:s,s:s}", "AttributeName", defs[i].name,
                                              "AttributeType", tt_av_type_name(defs[i].type))) ||
           *bad;
  return a;
}

/* A request's ProvisionedThroughput, or a description's (with its count and
 * dates). */
static json_t *throughput_json(const struct tt_ddb_throughput *t, bool desc, bool *bad) {
  if (!desc)
    return made(json_pack("{s:I,s:I}", "ReadCapacityUnits", (json_int_t)t->read,
                          "WriteCapacityUnits", (json_int_t)t->write),
                bad);
  return made(
      json_pack("{s:I,s:I,s:I,s:o*,s:o*}", "NumberOfDecreasesToday",
                (json_int_t)t->decreases_today, "ReadCapacityUnits", (json_int_t)t->read,
                "WriteCapacityUnits", (json_int_t)t->write, "LastIncreaseDateTime",
                t->last_increase > 0 ? made(json_real(t->last_increase), bad) : NULL,
                "LastDecreaseDateTime",
                t->last_decrease > 0 ? made(json_real(t->last_decrease), bad) : NULL),
      bad);
}

/* The indexes of one kind as a list, NULL when there is none. `form`: 0 a
 * CreateTable's, 1 UpdateTable's (each {"Create": ...}), 2 a description's. */
static json_t *indexes_json(const struct tt_ddb_index *ixs, size_t n, bool global, int form,
                            bool *bad) {
  json_t *list = NULL;
  for (size_t i = 0; i < n; i++) {
    const struct tt_ddb_index *x = &ixs[i];
    if (x->global != global)
      continue;
    json_t *inc = x->projection == TT_DDB_PROJECT_INCLUDE ? made(json_array(), bad) : NULL;
    for (size_t k = 0; inc && k < x->n_include; k++)
      *bad = json_array_append_new(inc, json_string(x->include[k])) || *bad;
    json_t *pt = x->throughput.set ? throughput_json(&x->throughput, form == 2, bad) : NULL;
    json_t *ks = keys_json(&x->keys, bad);
    json_t *ix =
        form == 2
            ? json_pack("{s:s,s:o,s:{s:s,s:o*},s:I,s:I,s:s*,s:s*,s:o*}", "IndexName", x->name,
                        "KeySchema", ks, "Projection", "ProjectionType",
                        projections[x->projection], "NonKeyAttributes", inc, "ItemCount",
                        (json_int_t)x->item_count, "IndexSizeBytes", (json_int_t)x->size_bytes,
                        "IndexArn", x->arn, "IndexStatus", x->status, "ProvisionedThroughput", pt)
            : json_pack("{s:s,s:o,s:{s:s,s:o*},s:o*}", "IndexName", x->name, "KeySchema", ks,
                        "Projection", "ProjectionType", projections[x->projection],
                        "NonKeyAttributes", inc, "ProvisionedThroughput", pt);
    if (form == 1)
      ix = json_pack("{s:o}", "Create", ix);
    if (list == NULL)
      list = made(json_array(), bad);
    *bad = json_array_append_new(list, made(ix, bad)) || *bad;
  }
  return list;
}

/* out, or NULL (out dropped) when bad. */
static json_t *unless_bad(json_t *out, bool bad) {
  if (bad) {
    json_decref(out);
    return NULL;
  }
  return out;
}

json_t *tt_ddb_table_request_json(enum tt_ddb_op op, const struct tt_ddb_table_request *r) {
  bool bad = false, create = op == TT_DDB_CREATE_TABLE;
  bool schema = create || op == TT_DDB_UPDATE_TABLE;
  json_t *out = json_pack(
      "{s:s,s:o*,s:o*,s:o*,s:s*,s:o*,s:o*,s:o*}", "TableName", r->table ? r->table : "",
      "TimeToLiveSpecification",
      op == TT_DDB_UPDATE_TIME_TO_LIVE
          ? made(json_pack("{s:b,s:s}", "Enabled", r->ttl_enabled, "AttributeName",
                           r->ttl_attribute ? r->ttl_attribute : ""),
                 &bad)
          : NULL,
      "AttributeDefinitions", schema && r->n_defs ? defs_json(r->defs, r->n_defs, &bad) : NULL,
      "KeySchema", schema && r->keys.hash ? keys_json(&r->keys, &bad) : NULL, "BillingMode",
      schema ? billings[r->billing] : NULL, "ProvisionedThroughput",
      schema && r->throughput.set ? throughput_json(&r->throughput, false, &bad) : NULL,
      create ? "GlobalSecondaryIndexes" : "GlobalSecondaryIndexUpdates",
      schema ? indexes_json(r->indexes, r->n_indexes, true, create ? 0 : 1, &bad) : NULL,
      "LocalSecondaryIndexes",
      create ? indexes_json(r->indexes, r->n_indexes, false, 0, &bad) : NULL);
  return unless_bad(out, bad);
}

json_t *tt_ddb_table_desc_json(enum tt_ddb_op op, const struct tt_ddb_table_desc *d) {
  if (op == TT_DDB_DESCRIBE_TIME_TO_LIVE)
    return json_pack("{s:{s:s*,s:s*}}", "TimeToLiveDescription", "TimeToLiveStatus",
                     d->ttl_status, "AttributeName", d->ttl_attribute);
  if (op == TT_DDB_UPDATE_TIME_TO_LIVE)
    return json_pack("{s:{s:s*,s:b}}", "TimeToLiveSpecification", "AttributeName",
                     d->ttl_attribute, "Enabled", d->ttl_enabled);
  bool bad = false, ppr = d->billing == TT_DDB_BILLING_PAY_PER_REQUEST;
  json_t *t = json_pack(
      "{s:s*,s:s*,s:o*,s:o,s:I,s:I,s:s*,s:s*,s:f,s:o*,s:o*,s:o*,s:o*,s:o*}", "TableName",
      d->table, "TableStatus", d->status, "KeySchema",
      d->keys.hash ? keys_json(&d->keys, &bad) : NULL, "AttributeDefinitions",
      defs_json(d->defs, d->n_defs, &bad), "ItemCount", (json_int_t)d->item_count,
      "TableSizeBytes", (json_int_t)d->size_bytes, "TableArn", d->arn, "TableId", d->id,
      "CreationDateTime", d->created, "ProvisionedThroughput",
      d->throughput.set ? throughput_json(&d->throughput, true, &bad) : NULL,
      "BillingModeSummary",
      d->billing ? made(json_pack("{s:s}", "BillingMode", billings[d->billing]), &bad) : NULL,
      "TableThroughputModeSummary",
      ppr ? made(json_pack("{s:s}", "TableThroughputMode", "PAY_PER_REQUEST"), &bad) : NULL,
      "GlobalSecondaryIndexes", indexes_json(d->indexes, d->n_indexes, true, 2, &bad),
      "LocalSecondaryIndexes", indexes_json(d->indexes, d->n_indexes, false, 2, &bad));
  t = unless_bad(t, bad);
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
