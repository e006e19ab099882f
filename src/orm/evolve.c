/* SPDX-License-Identifier: Apache-2.0 */
/* evolve.c -- table evolution: compares the table a model's registry wants
 * with the one DynamoDB describes and builds the UpdateTable call that adds
 * a missing GSI. Everything else a table cannot change after creation is a
 * difference reported before any write. */
#include "orm/evolve.h"

#include <stdio.h>
#include <string.h>

#include "util/buf.h"

/* The type of an attribute in a list of definitions, "" if absent. */
static const char *def_type(const struct tt_ddb_attr_def *defs, size_t n, const char *name) {
  for (size_t i = 0; name && i < n; i++)
    if (strcmp(defs[i].name, name) == 0)
      return defs[i].type ? tt_av_type_name(defs[i].type) : "";
  return "";
}

/* A key schema as people read it: "HASH id (S), RANGE at (N)". */
static void keys_text(const struct tt_ddb_keys *k, const struct tt_ddb_attr_def *defs, size_t n,
                      struct tt_buf *b) {
  if (k->hash)
    tt_buf_printf(b, "HASH %s (%s)", k->hash, def_type(defs, n, k->hash));
  if (k->range)
    tt_buf_printf(b, "%sRANGE %s (%s)", k->hash ? ", " : "", k->range,
                  def_type(defs, n, k->range));
}

/* A projection as people read it: "ALL", "INCLUDE [a, b]" (names sorted, as
 * DynamoDB does not promise their order). */
static void projection_text(const struct tt_ddb_index *ix, struct tt_buf *b) {
  static const char *const types[] = {"ALL", "KEYS_ONLY", "INCLUDE"};
  tt_buf_printf(b, "%s", types[ix->projection]);
  if (ix->n_include == 0)
    return;
  const char *names[20];
  size_t m = 0;
  for (size_t i = 0; i < ix->n_include && m < 20; i++) {
    const char *s = ix->include[i];
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

/* Compares one wanted index with the table's index of that name (without
 * a name: the table's own keys). */
static int index_diff(const struct tt_ddb_table_request *want, const struct tt_ddb_table_desc *table,
                      const struct tt_ddb_index *w, const struct tt_ddb_index *t,
                      json_t **details, struct tt_error *err) {
  struct tt_buf a, b;
  int rc = 0;
  tt_buf_init(&a, 0);
  tt_buf_init(&b, 0);
  keys_text(&t->keys, table->defs, table->n_defs, &a);
  keys_text(&w->keys, want->defs, want->n_defs, &b);
  if (a.data && b.data && strcmp(a.data, b.data) != 0) {
    rc = w->name ? differ(err, details, "index_key_schema", w->name, a.data, b.data, want->table,
                          "DynamoDB cannot change an index's keys: give the model's index "
                          "another name, or delete the table's index first")
                 : differ(err, details, "key_schema", NULL, a.data, b.data, want->table,
                          "DynamoDB cannot change a table's keys: use another table for this "
                          "model");
    goto done;
  }
  tt_buf_reset(&a);
  tt_buf_reset(&b);
  projection_text(t, &a);
  projection_text(w, &b);
  if (a.data && b.data && strcmp(a.data, b.data) != 0)
    rc = differ(err, details, "index_projection", w->name, a.data, b.data, want->table,
                "DynamoDB cannot change an index's projection: give the model's index another "
                "name, or delete the table's index first");
done:
  tt_buf_free(&a);
  tt_buf_free(&b);
  return rc;
}

/* The index of the table named `name`, global or local; NULL if none. */
static const struct tt_ddb_index *find(const struct tt_ddb_table_desc *t, const char *name,
                                       bool global) {
  for (size_t i = 0; i < t->n_indexes; i++)
    if (t->indexes[i].global == global && t->indexes[i].name &&
        strcmp(t->indexes[i].name, name) == 0)
      return &t->indexes[i];
  return NULL;
}

/* A new GSI whose key attribute the table already defines with another
 * type: UpdateTable would refuse it. */
static int type_diff(const struct tt_ddb_table_request *want, const struct tt_ddb_table_desc *table,
                     const struct tt_ddb_index *w, json_t **details, struct tt_error *err) {
  const char *keys[2] = {w->keys.hash, w->keys.range};
  for (int k = 0; k < 2 && keys[k]; k++) {
    const char *an = keys[k];
    const char *tt = def_type(table->defs, table->n_defs, an),
               *wt = def_type(want->defs, want->n_defs, an);
    if (*tt && strcmp(tt, wt) != 0) {
      char a[300], b[300];
      snprintf(a, sizeof(a), "%s (%s)", an, tt);
      snprintf(b, sizeof(b), "%s (%s)", an, wt);
      tt_error_set(err, TT_ERR_ALREADY_EXISTS, NULL,
                   "table %s defines attribute %s, a key of the model's new index %s, as type "
                   "%s, not %s; DynamoDB cannot change it",
                   want->table, an, w->name, tt, wt);
      *details = json_pack("{s:s,s:s,s:s,s:s}", "difference", "attribute_type", "index",
                           w->name, "table", a, "model", b);
      return -1;
    }
  }
  return 0;
}

int tt_orm_table_diff(const struct tt_ddb_table_request *want,
                      const struct tt_ddb_table_desc *table, const struct tt_ddb_index **missing,
                      json_t **details, struct tt_error *err) {
  const struct tt_ddb_index wk = {.keys = want->keys}, tk = {.keys = table->keys};
  *missing = NULL;
  *details = NULL;
  int rc = index_diff(want, table, &wk, &tk, details, err);
  /* The GSIs first, then the LSIs, each in want's order. */
  for (int k = 0; k < 2 && rc == 0; k++) {
    for (size_t i = 0; i < want->n_indexes && rc == 0; i++) {
      const struct tt_ddb_index *w = &want->indexes[i];
      if (w->global != (k == 0))
        continue;
      const struct tt_ddb_index *same = find(table, w->name, w->global);
      if (same)
        rc = index_diff(want, table, w, same, details, err);
      else if (find(table, w->name, !w->global))
        rc = differ(err, details, "index_kind", w->name, k ? "a GSI" : "an LSI",
                    k ? "an LSI" : "a GSI", want->table, "give the model's index another name");
      else if (k == 1)
        rc = differ(err, details, "lsi_missing", w->name, "missing", "an LSI", want->table,
                    "DynamoDB creates local secondary indexes only with the table: recreate "
                    "the table, or make the index a GSI");
      else if ((rc = type_diff(want, table, w, details, err)) == 0 && *missing == NULL)
        *missing = w;
    }
  }
  if (rc != 0)
    *missing = NULL;
  return rc;
}

int tt_orm_add_gsi_request(struct tt_arena *a, const struct tt_ddb_table_request *want,
                           const struct tt_ddb_table_desc *table, const struct tt_ddb_index *gsi,
                           struct tt_ddb_table_request *out) {
  struct tt_ddb_attr_def *defs = tt_arena_alloc(a, (table->n_defs + 2) * sizeof(*defs));
  struct tt_ddb_index *create = tt_arena_alloc(a, sizeof(*create));
  if (defs == NULL || create == NULL)
    return -1;
  /* The names are copied: the description goes with its call. */
  for (size_t i = 0; i < table->n_defs; i++) {
    const char *n = table->defs[i].name;
    defs[i] = (struct tt_ddb_attr_def){tt_arena_strndup(a, n, strlen(n)), table->defs[i].type};
    if (defs[i].name == NULL)
      return -1;
  }
  *out = (struct tt_ddb_table_request){
      .table = want->table, .defs = defs, .n_defs = table->n_defs, .indexes = create,
      .n_indexes = 1};
  const char *keys[2] = {gsi->keys.hash, gsi->keys.range};
  for (int k = 0; k < 2; k++) {
    if (keys[k] == NULL || *def_type(defs, out->n_defs, keys[k]))
      continue;
    enum tt_av_type t = 0;
    for (size_t i = 0; i < want->n_defs; i++)
      if (strcmp(want->defs[i].name, keys[k]) == 0)
        t = want->defs[i].type;
    defs[out->n_defs++] = (struct tt_ddb_attr_def){.name = keys[k], .type = t};
  }
  /* On-demand unless the summary says otherwise; an old description
   * without a summary is provisioned when it has capacity. */
  bool provisioned = table->billing != TT_DDB_BILLING_UNSET
                         ? table->billing == TT_DDB_BILLING_PROVISIONED
                         : table->throughput.read > 0;
  *create = *gsi;
  create->throughput = (struct tt_ddb_throughput){
      .set = provisioned, .read = table->throughput.read, .write = table->throughput.write};
  return 0;
}
