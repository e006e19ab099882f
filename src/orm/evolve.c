/* SPDX-License-Identifier: Apache-2.0 */
/* evolve.c -- table evolution: compares the table a model's registry wants
 * with the one DynamoDB describes and builds the UpdateTable call that adds
 * a missing GSI. Everything else a table cannot change after creation is a
 * difference reported before any write. */
#include "orm/evolve.h"

#include <stdio.h>
#include <string.h>

#include "util/buf.h"
#include "value/json_exact.h"

/* The type of an attribute in an AttributeDefinitions list, "" if absent. */
static const char *def_type(const json_t *defs, const char *name) {
  const char *t =
      json_string_value(json_object_get(tt_json_find(defs, "AttributeName", name), "AttributeType"));
  return t ? t : "";
}

/* A key schema as people read it: "HASH id (S), RANGE at (N)". */
static void keys_text(const json_t *ks, const json_t *defs, struct tt_buf *b) {
  size_t i;
  const json_t *k;
  json_array_foreach(ks, i, k) {
    const char *n = json_string_value(json_object_get(k, "AttributeName"));
    const char *t = json_string_value(json_object_get(k, "KeyType"));
    tt_buf_printf(b, "%s%s %s (%s)", i ? ", " : "", t ? t : "?", n ? n : "?",
                  n ? def_type(defs, n) : "?");
  }
}

/* A projection as people read it: "ALL", "INCLUDE [a, b]" (names sorted, as
 * DynamoDB does not promise their order). */
static void projection_text(const json_t *p, struct tt_buf *b) {
  const char *t = json_string_value(json_object_get(p, "ProjectionType"));
  tt_buf_printf(b, "%s", t ? t : "ALL");
  const json_t *nka = json_object_get(p, "NonKeyAttributes");
  size_t n = json_array_size(nka);
  if (n == 0)
    return;
  const char *names[20];
  size_t m = 0;
  for (size_t i = 0; i < n && m < 20; i++) {
    const char *s = json_string_value(json_array_get(nka, i));
    if (s == NULL)
      continue;
    size_t j = m++;
    for (; j > 0 && strcmp(names[j - 1], s) > 0; j--)
      names[j] = names[j - 1];
    names[j] = s;
  }
  tt_buf_printf(b, " [");
  for (size_t i = 0; i < m; i++)
    tt_buf_printf(b, "%s%s", i ? ", " : "", names[i]);
  tt_buf_printf(b, "]");
}

/* Fills the 409 and its details; returns -1. */
static int differ(struct tt_error *err, json_t **details, const char *difference,
                  const char *index, const char *has, const char *wants, const char *table,
                  const char *why) {
  if (index)
    tt_error_set(err, TT_ERR_ALREADY_EXISTS, NULL,
                 "table %s: index %s is %s, the model wants %s; %s", table, index, has, wants,
                 why);
  else
    tt_error_set(err, TT_ERR_ALREADY_EXISTS, NULL,
                 "table %s has key schema %s, the model wants %s; %s", table, has, wants, why);
  *details = json_pack("{s:s,s:s,s:s}", "difference", difference, "table", has, "model", wants);
  if (*details && index)
    json_object_set_new(*details, "index", json_string(index));
  return -1;
}

/* Compares one wanted index with the table's index of that name. */
static int index_diff(const json_t *want, const json_t *table, const json_t *w, const json_t *t,
                      const char *tname, json_t **details, struct tt_error *err) {
  const char *name = json_string_value(json_object_get(w, "IndexName"));
  struct tt_buf a, b;
  int rc = 0;
  tt_buf_init(&a, 0);
  tt_buf_init(&b, 0);
  keys_text(json_object_get(t, "KeySchema"), json_object_get(table, "AttributeDefinitions"), &a);
  keys_text(json_object_get(w, "KeySchema"), json_object_get(want, "AttributeDefinitions"), &b);
  if (a.data && b.data && strcmp(a.data, b.data) != 0) {
    rc = differ(err, details, "index_key_schema", name, a.data, b.data, tname,
                "DynamoDB cannot change an index's keys: give the model's index another name, "
                "or delete the table's index first");
    goto done;
  }
  tt_buf_reset(&a);
  tt_buf_reset(&b);
  projection_text(json_object_get(t, "Projection"), &a);
  projection_text(json_object_get(w, "Projection"), &b);
  if (a.data && b.data && strcmp(a.data, b.data) != 0)
    rc = differ(err, details, "index_projection", name, a.data, b.data, tname,
                "DynamoDB cannot change an index's projection: give the model's index another "
                "name, or delete the table's index first");
done:
  tt_buf_free(&a);
  tt_buf_free(&b);
  return rc;
}

int tt_orm_table_diff(const json_t *want, const json_t *table, json_t **missing,
                      json_t **details, struct tt_error *err) {
  const char *tname = json_string_value(json_object_get(want, "TableName"));
  const json_t *tdefs = json_object_get(table, "AttributeDefinitions");
  const json_t *wdefs = json_object_get(want, "AttributeDefinitions");
  struct tt_buf a, b;
  int rc = 0;
  *missing = NULL;
  *details = NULL;
  tt_buf_init(&a, 0);
  tt_buf_init(&b, 0);
  keys_text(json_object_get(table, "KeySchema"), tdefs, &a);
  keys_text(json_object_get(want, "KeySchema"), wdefs, &b);
  if (a.data && b.data && strcmp(a.data, b.data) != 0) {
    rc = differ(err, details, "key_schema", NULL, a.data, b.data, tname ? tname : "",
                "DynamoDB cannot change a table's keys: use another table for this model");
    goto done;
  }
  if ((*missing = json_array()) == NULL) {
    rc = tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
    goto done;
  }
  static const char *const kinds[2] = {"GlobalSecondaryIndexes", "LocalSecondaryIndexes"};
  for (int k = 0; k < 2 && rc == 0; k++) {
    size_t i;
    const json_t *w;
    json_array_foreach(json_object_get(want, kinds[k]), i, w) {
      const char *name = json_string_value(json_object_get(w, "IndexName"));
      const json_t *same = tt_json_find(json_object_get(table, kinds[k]), "IndexName", name);
      const json_t *other = tt_json_find(json_object_get(table, kinds[1 - k]), "IndexName", name);
      if (same) {
        if ((rc = index_diff(want, table, w, same, tname, details, err)) != 0)
          break;
        continue;
      }
      if (other) {
        rc = differ(err, details, "index_kind", name, k ? "a GSI" : "an LSI",
                    k ? "an LSI" : "a GSI", tname,
                    "give the model's index another name");
        break;
      }
      if (k == 1) {
        rc = differ(err, details, "lsi_missing", name, "missing", "an LSI", tname,
                    "DynamoDB creates local secondary indexes only with the table: recreate "
                    "the table, or make the index a GSI");
        break;
      }
      /* A new GSI whose key attribute the table already defines with
       * another type: UpdateTable would refuse it. */
      size_t j;
      const json_t *key;
      json_array_foreach(json_object_get(w, "KeySchema"), j, key) {
        const char *an = json_string_value(json_object_get(key, "AttributeName"));
        const char *tt = def_type(tdefs, an ? an : ""), *wt = def_type(wdefs, an ? an : "");
        if (*tt && strcmp(tt, wt) != 0) {
          tt_buf_reset(&a);
          tt_buf_reset(&b);
          tt_buf_printf(&a, "%s (%s)", an, tt);
          tt_buf_printf(&b, "%s (%s)", an, wt);
          tt_error_set(err, TT_ERR_ALREADY_EXISTS, NULL,
                       "table %s defines attribute %s, a key of the model's new index %s, "
                       "as type %s, not %s; DynamoDB cannot change it",
                       tname, an, name, tt, wt);
          *details = json_pack("{s:s,s:s,s:s,s:s}", "difference", "attribute_type", "index",
                               name, "table", a.data ? a.data : "", "model",
                               b.data ? b.data : "");
          rc = -1;
          break;
        }
      }
      if (rc == 0 && json_array_append(*missing, (json_t *)w) != 0)
        rc = tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
      if (rc != 0)
        break;
    }
  }
done:
  if (rc != 0) {
    json_decref(*missing);
    *missing = NULL;
  }
  tt_buf_free(&a);
  tt_buf_free(&b);
  return rc;
}

json_t *tt_orm_add_gsi_request(const json_t *want, const json_t *table, const json_t *gsi) {
  const json_t *tdefs = json_object_get(table, "AttributeDefinitions");
  const json_t *wdefs = json_object_get(want, "AttributeDefinitions");
  json_t *defs = json_array();
  json_t *create = json_deep_copy(gsi);
  json_t *req = NULL;
  size_t i;
  const json_t *d;
  if (defs == NULL || create == NULL)
    goto fail;
  json_array_foreach(tdefs, i, d) {
    if (json_array_append_new(defs, json_pack("{s:O,s:O}", "AttributeName",
                                              json_object_get(d, "AttributeName"),
                                              "AttributeType",
                                              json_object_get(d, "AttributeType"))) != 0)
      goto fail;
  }
  json_array_foreach(json_object_get(gsi, "KeySchema"), i, d) {
    const char *an = json_string_value(json_object_get(d, "AttributeName"));
    if (an == NULL || *def_type(defs, an))
      continue;
    if (json_array_append_new(defs, json_pack("{s:s,s:s}", "AttributeName", an,
                                              "AttributeType", def_type(wdefs, an))) != 0)
      goto fail;
  }
  /* On-demand unless the summary says otherwise; an old description
   * without a summary is provisioned when it has capacity. */
  const json_t *pt = json_object_get(table, "ProvisionedThroughput");
  const char *billing =
      json_string_value(json_object_get(json_object_get(table, "BillingModeSummary"),
                                        "BillingMode"));
  bool provisioned = billing ? strcmp(billing, "PROVISIONED") == 0
                             : json_integer_value(json_object_get(pt, "ReadCapacityUnits")) > 0;
  if (provisioned &&
      json_object_set_new(create, "ProvisionedThroughput",
                          json_pack("{s:I,s:I}", "ReadCapacityUnits",
                                    json_integer_value(json_object_get(pt, "ReadCapacityUnits")),
                                    "WriteCapacityUnits",
                                    json_integer_value(
                                        json_object_get(pt, "WriteCapacityUnits")))) != 0)
    goto fail;
  req = json_pack("{s:O,s:O,s:[{s:O}]}", "TableName", json_object_get(want, "TableName"),
                  "AttributeDefinitions", defs, "GlobalSecondaryIndexUpdates", "Create", create);
fail:
  json_decref(defs);
  json_decref(create);
  return req;
}
