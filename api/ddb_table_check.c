/* SPDX-License-Identifier: Apache-2.0 */
/* ddb_table_check.c -- DynamoDB's checks of a CreateTable's or an
 * UpdateTable's parameters taken together (ddb_wire.h), made after
 * the member constraints and before any table is looked up, in DynamoDB's
 * order and with its messages. */
#include "api/ddb_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value/json_exact.h"

#define INVALID "One or more parameter values were invalid: "

/* A capacity number's value and its text as given. */
static double capacity(const json_t *pt, const char *key, char *text, size_t n) {
  const json_t *j = json_object_get(pt, key);
  struct tt_json_numbuf nb;
  size_t len = 0;
  const char *s = j ? tt_json_number_text(j, &nb, &len) : NULL;
  if (s == NULL) {
    snprintf(text, n, "0");
    return 0;
  }
  snprintf(text, n, "%.*s", (int)len, s);
  return strtod(text, NULL);
}

static int capacity_bounds(const json_t *pt, struct tt_ddbw_error *err) {
  static const char *const keys[] = {"ReadCapacityUnits", "WriteCapacityUnits"};
  for (int i = 0; i < 2; i++) {
    char text[64];
    if (capacity(pt, keys[i], text, sizeof(text)) > 1e12)
      return tt_ddbw_invalid(err, "Given value %s for %s is out of bounds", text, keys[i]);
  }
  return 0;
}

static const char *str(const json_t *o, const char *key) {
  return json_string_value(json_object_get(o, key));
}

/* The AttributeNames of a list of {AttributeName: ...}, joined by ", ". */
static void names(const json_t *list, char *out, size_t n) {
  size_t i, len = 0;
  const json_t *e;
  out[0] = '\0';
  json_array_foreach(list, i, e) {
    const char *s = str(e, "AttributeName");
    int w = snprintf(out + len, n - len, "%s%s", i ? ", " : "", s ? s : "null");
    if (w < 0 || (size_t)w >= n - len)
      return;
    len += (size_t)w;
  }
}

static bool defined(const json_t *defs, const char *name) {
  size_t i;
  const json_t *d;
  json_array_foreach(defs, i, d) {
    const char *s = str(d, "AttributeName");
    if (s && name && strcmp(s, name) == 0)
      return true;
  }
  return false;
}


static bool same(const char *a, const char *b) {
  return a == b || (a && b && strcmp(a, b) == 0);
}

/* A table's or an index's KeySchema `ks`: every attribute in AttributeDefinitions
 * `defs`, two distinct names, HASH then RANGE. */
static int check_key_schema(const json_t *ks, const json_t *defs, struct tt_ddbw_error *err) {
  size_t i;
  const json_t *k;
  json_array_foreach(ks, i, k) {
    if (!defined(defs, str(k, "AttributeName"))) {
      char keys[1024], dn[1024];
      names(ks, keys, sizeof(keys));
      names(defs, dn, sizeof(dn));
      return tt_ddbw_invalid(err,
                             INVALID "Some index key attributes are not defined in "
                                     "AttributeDefinitions. Keys: [%s], AttributeDefinitions: [%s]",
                             keys, dn);
    }
  }
  const json_t *k0 = json_array_get(ks, 0), *k1 = json_array_get(ks, 1);
  if (k1 && same(str(k0, "AttributeName"), str(k1, "AttributeName")))
    return tt_ddbw_invalid(err,
                           "Both the Hash Key and the Range Key element in the KeySchema have the "
                           "same name");
  if (!same(str(k0, "KeyType"), "HASH"))
    return tt_ddbw_invalid(err,
                           "Invalid KeySchema: The first KeySchemaElement is not a HASH key type");
  if (k1 && !same(str(k1, "KeyType"), "RANGE"))
    return tt_ddbw_invalid(err,
                           "Invalid KeySchema: The second KeySchemaElement is not a RANGE key "
                           "type");
  return 0;
}

/* The checks of one secondary index's KeySchema and Projection. */
static int check_index(const json_t *ix, const json_t *defs, bool local, const char *table_hash,
                       bool ppr, struct tt_ddbw_error *err) {
  const char *name = str(ix, "IndexName");
  const json_t *ks = json_object_get(ix, "KeySchema");
  const json_t *k0 = json_array_get(ks, 0);
  if (check_key_schema(ks, defs, err) != 0)
    return -1;
  if (local) {
    if (json_array_size(ks) != 2)
      return tt_ddbw_invalid(err, INVALID "Index KeySchema does not have a range key for index: %s",
                    name ? name : "null");
    const char *h = str(k0, "AttributeName");
    if (!same(h, table_hash))
      return tt_ddbw_invalid(err,
                             INVALID "Index KeySchema does not have the same leading hash key as "
                             "table KeySchema for index: %s. index hash key: %s, table "
                             "hash key: %s",
                             name ? name : "null", h ? h : "null",
                             table_hash ? table_hash : "null");
  }
  const json_t *proj = json_object_get(ix, "Projection");
  const char *pt = str(proj, "ProjectionType");
  if (pt == NULL)
    return tt_ddbw_invalid(err, INVALID "Unknown ProjectionType: null");
  if (json_object_get(proj, "NonKeyAttributes") && strcmp(pt, "INCLUDE") != 0)
    return tt_ddbw_invalid(err,
                           INVALID "ProjectionType is %s, but NonKeyAttributes is specified", pt);
  if (!local && ppr && json_object_get(ix, "ProvisionedThroughput"))
    return tt_ddbw_invalid(err,
                           INVALID "ProvisionedThroughput should not be specified for index: %s "
                           "when BillingMode is PAY_PER_REQUEST",
                           name ? name : "null");
  return 0;
}

/* Duplicate IndexNames across both lists, in the order they are met: ix
 * against the indexes of the body before it, LSIs then GSIs. */
static int check_duplicate(const json_t *body, const json_t *ix, struct tt_ddbw_error *err) {
  const char *name = str(ix, "IndexName");
  for (int k = 0; k < 2; k++) {
    const json_t *list =
        json_object_get(body, k ? "GlobalSecondaryIndexes" : "LocalSecondaryIndexes");
    size_t i;
    const json_t *s;
    json_array_foreach(list, i, s) {
      if (s == ix)
        return 0;
      if (same(str(s, "IndexName"), name))
        return tt_ddbw_invalid(err, INVALID "Duplicate index name: %s", name ? name : "null");
    }
  }
  return 0;
}

static int check_create(const json_t *body, struct tt_ddbw_error *err) {
  const char *billing = str(body, "BillingMode");
  bool ppr = same(billing, "PAY_PER_REQUEST");
  const json_t *pt = json_object_get(body, "ProvisionedThroughput");
  if (ppr) {
    if (pt)
      return tt_ddbw_invalid(err, INVALID "Neither ReadCapacityUnits nor WriteCapacityUnits can be "
                                 "specified when BillingMode is PAY_PER_REQUEST");
  } else {
    char text[64];
    if (pt == NULL || capacity(pt, "ReadCapacityUnits", text, sizeof(text)) == 0 ||
        capacity(pt, "WriteCapacityUnits", text, sizeof(text)) == 0)
      return tt_ddbw_invalid(err, INVALID "ReadCapacityUnits and WriteCapacityUnits must both be "
                                 "specified when BillingMode is PROVISIONED");
    if (capacity_bounds(pt, err) != 0)
      return -1;
  }
  const json_t *defs = json_object_get(body, "AttributeDefinitions");
  const json_t *ks = json_object_get(body, "KeySchema");
  if (json_array_size(ks) > json_array_size(defs))
    return tt_ddbw_invalid(err, "Invalid KeySchema: Some index key attribute have no definition");
  if (check_key_schema(ks, defs, err) != 0)
    return -1;
  if (json_object_get(body, "LocalSecondaryIndexes") == NULL &&
      json_object_get(body, "GlobalSecondaryIndexes") == NULL &&
      json_array_size(ks) != json_array_size(defs))
    return tt_ddbw_invalid(err,
                           INVALID "Number of attributes in KeySchema does not exactly match "
                           "number of attributes defined in AttributeDefinitions");
  static const struct {
    const char *key;
    size_t max;
    const char *over;
  } kinds[] = {
      {"LocalSecondaryIndexes", 5,
       INVALID "Number of LocalSecondaryIndexes exceeds per-table limit of 5"},
      {"GlobalSecondaryIndexes", 20,
       INVALID "GlobalSecondaryIndex count exceeds the per-table limit of 20"},
  };
  const char *hash = str(json_array_get(ks, 0), "AttributeName");
  for (int k = 0; k < 2; k++) {
    const json_t *list = json_object_get(body, kinds[k].key), *ix;
    size_t i;
    if (list == NULL)
      continue;
    if (json_array_size(list) == 0)
      return tt_ddbw_invalid(err, INVALID "List of %s is empty", kinds[k].key);
    if (k == 0 && json_array_size(ks) != 2)
      return tt_ddbw_invalid(err,
                             INVALID "Table KeySchema does not have a range key, which is required "
                             "when specifying a LocalSecondaryIndex");
    json_array_foreach(list, i, ix) {
      if (check_index(ix, defs, k == 0, hash, ppr, err) != 0 ||
          check_duplicate(body, ix, err) != 0)
        return -1;
    }
    if (json_array_size(list) > kinds[k].max)
      return tt_ddbw_invalid(err, "%s", kinds[k].over);
  }
  return 0;
}

/* A GlobalSecondaryIndexUpdate's Update, else Create, else Delete. */
static const json_t *gsi_action(const json_t *u) {
  const json_t *a = json_object_get(u, "Update");
  if (a == NULL)
    a = json_object_get(u, "Create");
  return a ? a : json_object_get(u, "Delete");
}

static int check_update(const json_t *body, struct tt_ddbw_error *err) {
  const json_t *pt = json_object_get(body, "ProvisionedThroughput");
  const char *billing = str(body, "BillingMode");
  const json_t *updates = json_object_get(body, "GlobalSecondaryIndexUpdates");
  const json_t *stream = json_object_get(body, "StreamSpecification");
  if (pt == NULL && billing == NULL && json_object_get(stream, "StreamEnabled") == NULL &&
      json_array_size(updates) == 0 && json_object_get(body, "SSESpecification") == NULL &&
      json_object_get(body, "ReplicaUpdates") == NULL)
    return tt_ddbw_invalid(err, "At least one of ProvisionedThroughput, BillingMode, "
                       "UpdateStreamEnabled, GlobalSecondaryIndexUpdates or SSESpecification "
                       "or ReplicaUpdates is required");
  if (same(billing, "PROVISIONED") && pt == NULL)
    return tt_ddbw_invalid(err,
                           INVALID "ProvisionedThroughput must be specified when BillingMode is "
                           "PROVISIONED");
  if (pt && capacity_bounds(pt, err) != 0)
    return -1;
  size_t i;
  const json_t *u;
  json_array_foreach(updates, i, u) {
    const json_t *action = gsi_action(u);
    if (action == NULL)
      return tt_ddbw_invalid(err, INVALID "One of GlobalSecondaryIndexUpdate.Update, "
                                 "GlobalSecondaryIndexUpdate.Create, "
                                 "GlobalSecondaryIndexUpdate.Delete must not be null");
    const char *name = str(action, "IndexName");
    for (size_t k = 0; k < i; k++) {
      if (same(str(gsi_action(json_array_get(updates, k)), "IndexName"), name))
        return tt_ddbw_invalid(err, INVALID "Only one global secondary index update per index is "
                                   "allowed simultaneously. Index: %s",
                      name ? name : "null");
    }
  }
  return 0;
}

int tt_ddbw_check_table(enum tt_ddb_op op, const json_t *body, struct tt_ddbw_error *err) {
  if (op == TT_DDB_CREATE_TABLE)
    return check_create(body, err);
  if (op == TT_DDB_UPDATE_TABLE)
    return check_update(body, err);
  return 0;
}
