/* SPDX-License-Identifier: Apache-2.0 */
/* table_json.c -- DynamoDB's JSON of the typed table operations
 * (table_json.h). */
#include "backend/table_json.h"

#include <string.h>

#include "backend/json_members.h"

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

/* UpdateTable's GlobalSecondaryIndexUpdates: the Create actions, then the
 * Update ones; NULL when there is none. */
static json_t *updates_json(const struct tt_ddb_table_request *r, bool *bad) {
  json_t *list = indexes_json(r->indexes, r->n_indexes, true, 1, bad);
  for (size_t i = 0; i < r->n_updates; i++) {
    const struct tt_ddb_index *u = &r->updates[i];
    if (list == NULL)
      list = made(json_array(), bad);
    *bad = json_array_append_new(
               list, made(json_pack("{s:{s:s,s:o}}", "Update", "IndexName", u->name,
                                    "ProvisionedThroughput",
                                    throughput_json(&u->throughput, false, bad)),
                          bad)) ||
           *bad;
  }
  return list;
}

/* The tags (or, with keys, the tag keys) of a tag operation. */
static json_t *tags_json(const struct tt_ddb_tag *tags, size_t n, const char *const *keys,
                         size_t n_keys, bool *bad) {
  json_t *a = made(json_array(), bad);
  for (size_t i = 0; a && i < (keys ? n_keys : n); i++)
    *bad = json_array_append_new(a, keys ? json_string(keys[i])
                                         : json_pack("{s:s,s:s}", "Key", tags[i].key, "Value",
                                                     tags[i].value)) ||
           *bad;
  return a;
}

json_t *tt_ddb_table_request_json(enum tt_ddb_op op, const struct tt_ddb_table_request *r) {
  bool bad = false, create = op == TT_DDB_CREATE_TABLE;
  bool schema = create || op == TT_DDB_UPDATE_TABLE;
  bool tag = op == TT_DDB_TAG_RESOURCE, untag = op == TT_DDB_UNTAG_RESOURCE;
  json_t *out = json_pack(
      "{s:s*,s:o*,s:o*,s:o*,s:s*,s:o*,s:o*,s:o*,s:o*,s:s*,s:s*,s:o*}", "TableName", r->table,
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
      create ? indexes_json(r->indexes, r->n_indexes, true, 0, &bad)
      : schema ? updates_json(r, &bad)
               : NULL,
      "LocalSecondaryIndexes",
      create ? indexes_json(r->indexes, r->n_indexes, false, 0, &bad) : NULL, "Limit",
      op == TT_DDB_LIST_TABLES && r->limit ? made(json_integer((json_int_t)r->limit), &bad)
                                           : NULL,
      "ExclusiveStartTableName", op == TT_DDB_LIST_TABLES ? r->start : NULL, "ResourceArn",
      tag || untag || op == TT_DDB_LIST_TAGS_OF_RESOURCE ? r->arn : NULL,
      tag ? "Tags" : "TagKeys",
      tag || untag ? tags_json(r->tags, r->n_tags, untag ? r->tag_keys : NULL, r->n_tag_keys,
                               &bad)
                   : NULL);
  return unless_bad(out, bad);
}

json_t *tt_ddb_table_desc_json(enum tt_ddb_op op, const struct tt_ddb_table_desc *d) {
  if (op == TT_DDB_DESCRIBE_TIME_TO_LIVE)
    return json_pack("{s:{s:s*,s:s*}}", "TimeToLiveDescription", "TimeToLiveStatus",
                     d->ttl_status, "AttributeName", d->ttl_attribute);
  if (op == TT_DDB_UPDATE_TIME_TO_LIVE)
    return json_pack("{s:{s:s*,s:b}}", "TimeToLiveSpecification", "AttributeName",
                     d->ttl_attribute, "Enabled", d->ttl_enabled);
  if (op == TT_DDB_TAG_RESOURCE || op == TT_DDB_UNTAG_RESOURCE)
    return json_object();
  if (op == TT_DDB_LIST_TAGS_OF_RESOURCE || op == TT_DDB_LIST_TABLES) {
    bool bad = false, tags = op == TT_DDB_LIST_TAGS_OF_RESOURCE;
    json_t *list = tags_json(d->tags, d->n_tags, tags ? NULL : d->names, d->n_names, &bad);
    return unless_bad(json_pack("{s:o,s:s*}", tags ? "Tags" : "TableNames", list,
                                "LastEvaluatedTableName", d->last_name),
                      bad);
  }
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

/* ---- reading a request ---------------------------------------------------- */

#define NULL_AT                                                                                    \
  "1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must "     \
  "not be null"
#define INVALID "One or more parameter values were invalid: "

#define refuse(e, ...) tt_backend_error_set(e, "ValidationException", 400, __VA_ARGS__)

static int oom(struct tt_backend_error *e) {
  return tt_backend_error_set(e, "InternalServerError", 500, "Internal server error");
}

/* An array of n elements of `size` in the arena (n may be 0); NULL: memory. */
static void *arr(struct tt_arena *a, size_t n, size_t size) {
  return tt_arena_alloc(a, (n ? n : 1) * size);
}

/* A KeySchema: HASH first, then an optional RANGE. `what` names the
 * parameter in messages. */
static int keys_in(const json_t *ks, const char *what, struct tt_ddb_keys *k,
                   struct tt_backend_error *e) {
  k->hash = k->range = NULL;
  if (!json_is_array(ks) || json_array_size(ks) < 1 || json_array_size(ks) > 2)
    return refuse(e, "1 validation error detected: Value at '%s' failed to satisfy constraint: "
                     "Member must have length less than or equal to 2 and greater than or "
                     "equal to 1",
                  what);
  for (size_t i = 0; i < json_array_size(ks); i++) {
    const json_t *el = json_array_get(ks, i);
    const char *n = json_string_value(json_object_get(el, "AttributeName"));
    const char *t = json_string_value(json_object_get(el, "KeyType"));
    if (n == NULL || t == NULL || *n == '\0')
      return refuse(e, NULL_AT, what);
    if (strcmp(t, "HASH") == 0 && i == 0)
      k->hash = n;
    else if (strcmp(t, "RANGE") == 0 && i == 1)
      k->range = n;
    else if (strcmp(t, "HASH") != 0 && strcmp(t, "RANGE") != 0)
      return refuse(e, "1 validation error detected: Value at '%s' failed to satisfy "
                       "constraint: Member must satisfy enum value set: [HASH, RANGE]",
                    what);
    else
      return refuse(e, "Invalid KeySchema: The first KeySchemaElement is not a HASH key type");
  }
  if (k->range && strcmp(k->hash, k->range) == 0)
    return refuse(e, "Both the Hash Key and the Range Key element in the KeySchema have the "
                     "same name");
  return 0;
}

/* A ProvisionedThroughput (set when present; an absent capacity is 0). */
static int throughput_in(const json_t *pt, struct tt_ddb_throughput *t,
                         struct tt_backend_error *e) {
  bool present;
  *t = (struct tt_ddb_throughput){.set = pt != NULL};
  return pt && (tt_ddb_member_int(pt, "ReadCapacityUnits", &t->read, &present, e) != 0 ||
                tt_ddb_member_int(pt, "WriteCapacityUnits", &t->write, &present, e) != 0)
             ? -1
             : 0;
}

/* A secondary index of a CreateTable, or an UpdateTable's Create. */
static int index_in(const json_t *j, bool global, struct tt_arena *a, struct tt_ddb_index *ix,
                    struct tt_backend_error *e) {
  ix->name = json_string_value(json_object_get(j, "IndexName"));
  ix->global = global;
  if (keys_in(json_object_get(j, "KeySchema"), "keySchema", &ix->keys, e) != 0)
    return -1;
  const json_t *proj = json_object_get(j, "Projection");
  const char *pt = json_string_value(json_object_get(proj, "ProjectionType"));
  const json_t *nka = json_object_get(proj, "NonKeyAttributes");
  if (!json_is_object(proj))
    return refuse(e, NULL_AT, "projection");
  ix->projection = TT_DDB_PROJECT_ALL;
  for (int k = 0; pt && k < 3; k++)
    if (strcmp(pt, projections[k]) == 0)
      ix->projection = (enum tt_ddb_projection)k;
  if (pt && strcmp(pt, projections[ix->projection]) != 0)
    return refuse(e, "1 validation error detected: Value at 'projection.projectionType' failed "
                     "to satisfy constraint: Member must satisfy enum value set: [INCLUDE, "
                     "ALL, KEYS_ONLY]");
  if (nka && ix->projection != TT_DDB_PROJECT_INCLUDE)
    return refuse(e, INVALID "ProjectionType is %s, but NonKeyAttributes is specified",
                  pt ? pt : "ALL");
  if (ix->projection == TT_DDB_PROJECT_INCLUDE) {
    size_t n = json_array_size(nka);
    if (!json_is_array(nka) || n == 0)
      return refuse(e, INVALID "NonKeyAttributes must not be empty when ProjectionType is "
                               "INCLUDE");
    if (n > 20)
      return refuse(e, INVALID "Number of projected attributes in all indexes exceeds limit "
                               "of 20");
    const char **inc = arr(a, n, sizeof(*inc));
    if (inc == NULL)
      return oom(e);
    for (size_t i = 0; i < n; i++)
      if ((inc[i] = json_string_value(json_array_get(nka, i))) == NULL || *inc[i] == '\0')
        return refuse(e, INVALID "NonKeyAttributes must be non-empty strings");
    ix->include = inc;
    ix->n_include = n;
  }
  return global ? throughput_in(json_object_get(j, "ProvisionedThroughput"), &ix->throughput, e)
                : 0;
}

/* CreateTable's AttributeDefinitions (create) or UpdateTable's. */
static int defs_in(const json_t *defs, bool create, struct tt_arena *a,
                   struct tt_ddb_table_request *r, struct tt_backend_error *e) {
  size_t i, n = json_array_size(defs);
  const json_t *d;
  struct tt_ddb_attr_def *out = arr(a, n, sizeof(*out));
  if (out == NULL)
    return oom(e);
  json_array_foreach(defs, i, d) {
    const char *an = json_string_value(json_object_get(d, "AttributeName"));
    const char *at = json_string_value(json_object_get(d, "AttributeType"));
    enum tt_av_type t = at && strlen(at) == 1 ? tt_av_type_parse(at, 1) : 0;
    bool ok_type = t == TT_AV_S || t == TT_AV_N || t == TT_AV_B;
    if (!create && (an == NULL || *an == '\0' || !ok_type))
      return refuse(e, "1 validation error detected: Value at 'attributeDefinitions.%zu.member' "
                       "failed to satisfy constraint: Member must have an attributeName and an "
                       "attributeType in [B, N, S]",
                    i + 1);
    if (an == NULL || *an == '\0')
      return refuse(e, "1 validation error detected: Value null at "
                       "'attributeDefinitions.%zu.member.attributeName' failed to satisfy "
                       "constraint: Member must not be null",
                    i + 1);
    if (!ok_type)
      return refuse(e, "1 validation error detected: Value at "
                       "'attributeDefinitions.%zu.member.attributeType' failed to satisfy "
                       "constraint: Member must satisfy enum value set: [B, N, S]",
                    i + 1);
    out[i] = (struct tt_ddb_attr_def){an, t};
  }
  r->defs = out;
  r->n_defs = n;
  return 0;
}

/* BillingMode: UNSET when absent. */
static int billing_in(const json_t *req, bool quote, struct tt_ddb_table_request *r,
                      struct tt_backend_error *e) {
  const char *b;
  if (tt_ddb_member_str(req, "BillingMode", &b, e) != 0)
    return -1;
  r->billing = TT_DDB_BILLING_UNSET;
  for (int k = 1; b && k < 3; k++)
    if (strcmp(b, billings[k]) == 0)
      r->billing = (enum tt_ddb_billing)k;
  if (b == NULL || r->billing != TT_DDB_BILLING_UNSET)
    return 0;
  if (quote)
    return refuse(e, "1 validation error detected: Value '%s' at 'billingMode' failed to "
                     "satisfy constraint: Member must satisfy enum value set: [PROVISIONED, "
                     "PAY_PER_REQUEST]",
                  b);
  return refuse(e, "1 validation error detected: Value at 'billingMode' failed to satisfy "
                   "constraint: Member must satisfy enum value set: [PROVISIONED, "
                   "PAY_PER_REQUEST]");
}

static int create_in(const json_t *req, struct tt_arena *a, struct tt_ddb_table_request *r,
                     struct tt_backend_error *e) {
  const json_t *defs = json_object_get(req, "AttributeDefinitions");
  if (r->table == NULL)
    return refuse(e, NULL_AT, "tableName");
  if (!json_is_array(defs))
    return refuse(e, NULL_AT, "attributeDefinitions");
  if (defs_in(defs, true, a, r, e) != 0 ||
      keys_in(json_object_get(req, "KeySchema"), "keySchema", &r->keys, e) != 0 ||
      billing_in(req, false, r, e) != 0 ||
      throughput_in(json_object_get(req, "ProvisionedThroughput"), &r->throughput, e) != 0)
    return -1;
  const json_t *gsis = json_object_get(req, "GlobalSecondaryIndexes");
  const json_t *lsis = json_object_get(req, "LocalSecondaryIndexes");
  if ((gsis && (!json_is_array(gsis) || json_array_size(gsis) == 0)) ||
      (lsis && (!json_is_array(lsis) || json_array_size(lsis) == 0)))
    return refuse(e, INVALID "List of SecondaryIndexes is empty");
  struct tt_ddb_index *ixs =
      arr(a, json_array_size(gsis) + json_array_size(lsis), sizeof(*ixs));
  if (ixs == NULL)
    return oom(e);
  for (int k = 0; k < 2; k++) {
    size_t i;
    const json_t *j;
    json_array_foreach(k ? lsis : gsis, i, j) {
      if (index_in(j, k == 0, a, &ixs[r->n_indexes++], e) != 0)
        return -1;
    }
  }
  r->indexes = ixs;
  return 0;
}

static int update_in(const json_t *req, struct tt_arena *a, struct tt_ddb_table_request *r,
                     struct tt_backend_error *e) {
  static const char *const unsupported[] = {"StreamSpecification", "SSESpecification",
                                            "ReplicaUpdates", "TableClass"};
  const json_t *updates = json_object_get(req, "GlobalSecondaryIndexUpdates");
  const json_t *given = json_object_get(req, "AttributeDefinitions");
  const char *b;
  if (tt_ddb_member_str(req, "BillingMode", &b, e) != 0)
    return -1;
  for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++)
    if (json_object_get(req, unsupported[i]))
      return refuse(e, "The memory backend's UpdateTable does not take %s", unsupported[i]);
  if (billing_in(req, true, r, e) != 0)
    return -1;
  if (updates && !json_is_array(updates))
    return refuse(e, "1 validation error detected: Value at 'globalSecondaryIndexUpdates' "
                     "failed to satisfy constraint: Member must be a list");
  if (given && !json_is_array(given))
    return refuse(e, "1 validation error detected: Value at 'attributeDefinitions' failed to "
                     "satisfy constraint: Member must be a list");
  if (throughput_in(json_object_get(req, "ProvisionedThroughput"), &r->throughput, e) != 0)
    return -1;
  size_t n = json_array_size(updates), i;
  const json_t *u;
  struct tt_ddb_index *creates = arr(a, n, sizeof(*creates)), *ups = arr(a, n, sizeof(*ups));
  if (creates == NULL || ups == NULL)
    return oom(e);
  json_array_foreach(updates, i, u) {
    const json_t *upd = json_object_get(u, "Update"), *cr = json_object_get(u, "Create");
    if (json_object_get(u, "Delete")) {
      r->n_deletes++;
      continue;
    }
    if (upd) {
      struct tt_ddb_index *x = &ups[r->n_updates++];
      x->name = json_string_value(json_object_get(upd, "IndexName"));
      x->global = true;
      if (throughput_in(json_object_get(upd, "ProvisionedThroughput"), &x->throughput, e) != 0)
        return -1;
    } else if (!json_is_object(cr)) {
      return refuse(e, INVALID "One of GlobalSecondaryIndexUpdate.Update, "
                               "GlobalSecondaryIndexUpdate.Create, "
                               "GlobalSecondaryIndexUpdate.Delete must not be null");
    } else if (index_in(cr, true, a, &creates[r->n_indexes++], e) != 0) {
      return -1;
    }
  }
  r->indexes = creates;
  r->updates = ups;
  return r->n_indexes && given ? defs_in(given, false, a, r, e) : 0;
}

static int ttl_in(const json_t *req, struct tt_ddb_table_request *r, struct tt_backend_error *e) {
  const json_t *spec = json_object_get(req, "TimeToLiveSpecification");
  if (!json_is_object(spec))
    return refuse(e, NULL_AT, "timeToLiveSpecification");
  const char *attr;
  if (tt_ddb_member_str(spec, "AttributeName", &attr, e) != 0 ||
      tt_ddb_member_bool(spec, "Enabled", false, &r->ttl_enabled, e) != 0)
    return -1;
  if (attr == NULL || *attr == '\0' || json_object_get(spec, "Enabled") == NULL)
    return refuse(e, NULL_AT,
                  attr == NULL || *attr == '\0' ? "timeToLiveSpecification.attributeName"
                                                : "timeToLiveSpecification.enabled");
  r->ttl_attribute = attr;
  return 0;
}

static int list_in(const json_t *req, struct tt_ddb_table_request *r, struct tt_backend_error *e) {
  const json_t *lim = json_object_get(req, "Limit"), *start;
  if (lim != NULL) {
    if (!json_is_integer(lim))
      return tt_backend_error_set(e, "SerializationException", 400, "Limit must be a number");
    r->limit = json_integer_value(lim);
    if (r->limit < 1 || r->limit > 100)
      return refuse(e, "1 validation error detected: Value '%lld' at 'limit' failed to satisfy "
                       "constraint: Member must have value %s",
                    (long long)r->limit,
                    r->limit < 1 ? "greater than or equal to 1" : "less than or equal to 100");
  }
  start = json_object_get(req, "ExclusiveStartTableName");
  if (start != NULL && !json_is_string(start))
    return tt_backend_error_set(e, "SerializationException", 400,
                                "ExclusiveStartTableName must be a string");
  r->start = json_string_value(start);
  return 0;
}

/* DynamoDB's limits on one tag: key 1..128 characters, value 0..256. */
static size_t utf8_chars(const char *s) {
  size_t n = 0;
  for (; *s; s++)
    n += ((unsigned char)*s & 0xC0) != 0x80;
  return n;
}

static int tags_in(enum tt_ddb_op op, const json_t *req, struct tt_arena *a,
                   struct tt_ddb_table_request *r, struct tt_backend_error *e) {
  bool tag = op == TT_DDB_TAG_RESOURCE;
  const json_t *list = json_object_get(req, tag ? "Tags" : "TagKeys");
  if ((r->arn = json_string_value(json_object_get(req, "ResourceArn"))) == NULL)
    return refuse(e, "Invalid TableArn");
  if (op == TT_DDB_LIST_TAGS_OF_RESOURCE)
    return 0;
  if (!json_is_array(list) || json_array_size(list) == 0)
    return refuse(e, tag ? "Atleast one Tag needs to be provided as Input."
                         : "Atleast one Tag Key needs to be provided as Input.");
  size_t n = json_array_size(list), i;
  const json_t *j;
  struct tt_ddb_tag *tags = arr(a, n, sizeof(*tags));
  const char **keys = arr(a, n, sizeof(*keys));
  if (tags == NULL || keys == NULL)
    return oom(e);
  json_array_foreach(list, i, j) {
    if (!tag) {
      if (json_is_string(j))
        keys[r->n_tag_keys++] = json_string_value(j);
      continue;
    }
    const char *k = json_string_value(json_object_get(j, "Key"));
    const char *v = json_string_value(json_object_get(j, "Value"));
    if (k == NULL || v == NULL)
      return refuse(e, "1 validation error detected: Value null at 'tags.%zu.member.%s' failed "
                       "to satisfy constraint: Member must not be null",
                    i + 1, k == NULL ? "key" : "value");
    bool bad_key = *k == '\0' || utf8_chars(k) > 128;
    if (bad_key || utf8_chars(v) > 256)
      return refuse(e, "1 validation error detected: Value '%s' at 'tags.%zu.member.%s' failed "
                       "to satisfy constraint: Member must have length %s",
                    bad_key ? k : v, i + 1, bad_key ? "key" : "value",
                    *k == '\0'              ? "greater than or equal to 1"
                    : utf8_chars(k) > 128 ? "less than or equal to 128"
                                          : "less than or equal to 256");
    tags[r->n_tags++] = (struct tt_ddb_tag){k, v};
  }
  r->tags = tags;
  r->tag_keys = keys;
  return 0;
}

int tt_ddb_table_request_read(enum tt_ddb_op op, const json_t *req, struct tt_arena *a,
                              struct tt_ddb_table_request *r, struct tt_backend_error *e) {
  memset(r, 0, sizeof(*r));
  if (!json_is_object(req))
    return tt_backend_error_set(e, "SerializationException", 400,
                                "The request body must be a JSON object");
  /* The legacy (pre-expression) parameters are refused rather than ignored. */
  static const char *const legacy[] = {"AttributesToGet", "KeyConditions", "QueryFilter",
                                       "ScanFilter",      "Expected",      "AttributeUpdates",
                                       "ConditionalOperator"};
  for (size_t i = 0; i < sizeof(legacy) / sizeof(legacy[0]); i++)
    if (json_object_get(req, legacy[i]) != NULL)
      return refuse(e, "The memory backend does not support the legacy parameter %s: use "
                       "expressions",
                    legacy[i]);
  bool by_arn = op == TT_DDB_TAG_RESOURCE || op == TT_DDB_UNTAG_RESOURCE ||
                op == TT_DDB_LIST_TAGS_OF_RESOURCE;
  if (!by_arn && op != TT_DDB_LIST_TABLES &&
      tt_ddb_member_str(req, "TableName", &r->table, e) != 0)
    return -1;
  switch (op) {
  case TT_DDB_CREATE_TABLE:
    return create_in(req, a, r, e);
  case TT_DDB_UPDATE_TABLE:
    return update_in(req, a, r, e);
  case TT_DDB_UPDATE_TIME_TO_LIVE:
    return ttl_in(req, r, e);
  case TT_DDB_LIST_TABLES:
    return list_in(req, r, e);
  default:
    return by_arn ? tags_in(op, req, a, r, e) : 0;
  }
}
