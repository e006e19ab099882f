/* SPDX-License-Identifier: Apache-2.0 */
/* ops_table.c -- CreateTable, DescribeTable, UpdateTable (billing mode,
 * throughput, one GSI Create, backfilled), DeleteTable, UpdateTimeToLive,
 * DescribeTimeToLive, ListTables, the tag operations, and the CREATING/
 * UPDATING/DELETING transitions of tt_memdb_options.transition_ms. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "backend/memory/internal.h"
#include "util/buf.h"

static bool valid_name(const char *s, size_t min) {
  size_t n = strlen(s);
  if (n < min || n > 255)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '.')
      return false;
  return true;
}

static int64_t wall_ms(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static const char *status_name(const struct memdb_table *t) {
  static const char *const names[] = {"ACTIVE", "CREATING", "UPDATING", "DELETING"};
  return names[t->status];
}

/* The type of an attribute in a list of n definitions (0: none). */
static enum tt_av_type defs_type(const struct tt_ddb_attr_def *defs, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(defs[i].name, name) == 0)
      return defs[i].type;
  return 0;
}

/* Appends a definition (the name copied) to a list of n. 0, or -1 (memory). */
static int add_def(struct tt_ddb_attr_def **defs, size_t *n, const char *name,
                   enum tt_av_type type) {
  struct tt_ddb_attr_def *grown = realloc(*defs, (*n + 1) * sizeof(**defs));
  if (grown == NULL)
    return -1;
  *defs = grown;
  if ((grown[*n].name = strdup(name)) == NULL)
    return -1;
  grown[(*n)++].type = type;
  return 0;
}

/* A table or index name (the parameter %s) that is not valid_name's. */
#define BAD_NAME                                                                                   \
  "1 validation error detected: Value at '%s' failed to satisfy constraint: Member must "         \
  "satisfy regular expression pattern: [a-zA-Z0-9_.-]+ and have length between 3 and 255"

/* Makes ix from the index x of a request, whose keys resolve in defs. */
static int make_index(struct memdb_table *t, const struct tt_ddb_attr_def *defs, size_t ndefs,
                      const struct tt_ddb_index *x, struct memdb_index *ix, bool ppr,
                      struct tt_backend_error *e) {
  const char *name = x->name, *h = x->keys.hash, *r = x->keys.range;
  if (name == NULL || !valid_name(name, 3))
    return memdb_validation(e, BAD_NAME, "indexName");
  if ((ix->name = strdup(name)) == NULL)
    return memdb_oom(e);
  ix->global = x->global;
  if (!x->global) {
    if (t->sk.name == NULL)
      return memdb_validation(e, "One or more parameter values were invalid: Table KeySchema "
                                 "does not have a range key, which is required when specifying "
                                 "a LocalSecondaryIndex");
    if (r == NULL)
      return memdb_validation(e, "One or more parameter values were invalid: Index KeySchema "
                                 "does not have a range key for index: %s",
                              name);
    if (strcmp(h, t->pk.name) != 0)
      return memdb_validation(e, "One or more parameter values were invalid: Index KeySchema "
                                 "does not have the same leading hash key as table KeySchema "
                                 "for index: %s. index hash key: %s, table hash key: %s",
                              name, h, t->pk.name);
  }
  enum tt_av_type ht = defs_type(defs, ndefs, h), rt = r ? defs_type(defs, ndefs, r) : 0;
  if (ht == 0 || (r && rt == 0))
    return memdb_validation(e, "One or more parameter values were invalid: Some index key "
                               "attributes are not defined in AttributeDefinitions. Keys: [%s%s%s]",
                            h, r ? ", " : "", r ? r : "");
  if ((ix->pk.name = strdup(h)) == NULL || (r && (ix->sk.name = strdup(r)) == NULL))
    return memdb_oom(e);
  ix->pk.type = ht;
  ix->sk.type = rt;
  ix->proj = x->projection;
  if (x->n_include && (ix->include = calloc(x->n_include, sizeof(char *))) == NULL)
    return memdb_oom(e);
  for (size_t i = 0; i < x->n_include; i++)
    if ((ix->include[ix->ninclude++] = strdup(x->include[i])) == NULL)
      return memdb_oom(e);
  if (x->global && !ppr) {
    ix->rcu = x->throughput.read;
    ix->wcu = x->throughput.write;
  }
  ix->store.table = t;
  ix->store.is_index = true;
  ix->store.has_sk = r != NULL;
  return 0;
}

/* A ProvisionedThroughput given with PAY_PER_REQUEST. */
static int ppr_throughput(struct tt_backend_error *e) {
  return memdb_validation(e, "One or more parameter values were invalid: Neither "
                             "ReadCapacityUnits nor WriteCapacityUnits can be specified when "
                             "BillingMode is PAY_PER_REQUEST");
}

/* A provisioned capacity: both numbers given, each at least 1. */
static int capacity(const struct tt_ddb_throughput *pt, struct tt_backend_error *e) {
  if (!pt->set || pt->read < 1 || pt->write < 1)
    return memdb_validation(e, "One or more parameter values were invalid: ReadCapacityUnits "
                               "and WriteCapacityUnits must both be specified when BillingMode "
                               "is PROVISIONED");
  return 0;
}

/* Records an attribute used as a key, for the "exactly the attributes
 * defined" rule. */
static void mark_used(const char **used, size_t *n, const char *name) {
  for (size_t i = 0; i < *n; i++)
    if (strcmp(used[i], name) == 0)
      return;
  if (*n < 64)
    used[(*n)++] = name;
}

/* A table's TableId: a version 4 UUID made from its name and creation
 * time, so that it stays the same across reloads of the data dir. */
static void table_id(const struct memdb_table *t, char out[37]) {
  uint64_t h[2] = {0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL};
  char seed[320];
  int n = snprintf(seed, sizeof(seed), "%s/%.3f", t->name, t->created);
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < n && i < (int)sizeof(seed); i++) {
      h[k] ^= (unsigned char)seed[i];
      h[k] *= 0x100000001b3ULL;
      h[k] ^= h[k] >> 29;
    }
  unsigned char b[16];
  for (int i = 0; i < 16; i++)
    b[i] = (unsigned char)(h[i / 8] >> (8 * (i % 8)));
  b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
  b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
  snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
           b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
           b[15]);
}

static const char *cp(struct tt_ddb_table_desc *d, const char *s, bool *bad) {
  const char *c = s ? tt_arena_strndup(&d->arena, s, strlen(s)) : NULL;
  *bad = *bad || (s && c == NULL);
  return c;
}

/* Fills *d (empty) with t's description in `status`, without its global
 * indexes when !gsis (DeleteTable's). 0, or -1 (memory; d freed). */
static int describe(const struct memdb *m, const struct memdb_table *t, const char *status,
                    bool gsis, struct tt_ddb_table_desc *d) {
  char arn[400], id[37];
  bool bad = false;
  memdb_table_arn(m, t, arn, sizeof(arn));
  table_id(t, id);
  memset(d, 0, sizeof(*d));
  *d = (struct tt_ddb_table_desc){
      .item_count = (int64_t)t->store.count,
      .size_bytes = (int64_t)t->bytes,
      .created = t->created,
      .billing = memdb_billing(t),
      .throughput = {.set = true, .read = t->rcu, .write = t->wcu,
                     .decreases_today = t->decreases_today,
                     .last_increase = t->last_increase, .last_decrease = t->last_decrease}};
  d->table = cp(d, t->name, &bad);
  d->status = cp(d, status, &bad);
  d->arn = cp(d, arn, &bad);
  d->id = cp(d, id, &bad);
  d->keys = (struct tt_ddb_keys){cp(d, t->pk.name, &bad), cp(d, t->sk.name, &bad)};
  d->defs = tt_arena_alloc(&d->arena, (t->ndefs + 1) * sizeof(*d->defs));
  d->indexes = tt_arena_alloc(&d->arena, (t->nidx + 1) * sizeof(*d->indexes));
  bad = bad || d->defs == NULL || d->indexes == NULL;
  for (size_t i = 0; !bad && i < t->ndefs; i++)
    d->defs[d->n_defs++] = (struct tt_ddb_attr_def){cp(d, t->defs[i].name, &bad), t->defs[i].type};
  for (size_t i = 0; !bad && i < t->nidx; i++) {
    const struct memdb_index *ix = &t->idx[i];
    if (ix->global && !gsis)
      continue;
    /* IndexSizeBytes stays 0: projected sizes are not tracked (DynamoDB
     * refreshes it only about every six hours anyway). */
    char iarn[600];
    snprintf(iarn, sizeof(iarn), "%s/index/%s", arn, ix->name);
    const char **inc = tt_arena_alloc(&d->arena, (ix->ninclude + 1) * sizeof(*inc));
    bad = bad || inc == NULL;
    for (size_t k = 0; inc && k < ix->ninclude; k++)
      inc[k] = cp(d, ix->include[k], &bad);
    d->indexes[d->n_indexes++] = (struct tt_ddb_index){
        .name = cp(d, ix->name, &bad),
        .global = ix->global,
        .keys = {cp(d, ix->pk.name, &bad), cp(d, ix->sk.name, &bad)},
        .projection = ix->proj,
        .include = inc,
        .n_include = ix->proj == TT_DDB_PROJECT_INCLUDE ? ix->ninclude : 0,
        .throughput = {.set = ix->global,
                       .read = t->pay_per_request ? 0 : ix->rcu,
                       .write = t->pay_per_request ? 0 : ix->wcu},
        .status = !ix->global                  ? NULL
                  : t->status == MEMDB_CREATING ? "CREATING"
                                                : "ACTIVE",
        .item_count = (int64_t)ix->store.count,
        .arn = cp(d, iarn, &bad)};
  }
  if (bad) {
    tt_ddb_table_desc_free(d);
    return -1;
  }
  return 0;
}

int memdb_op_create_table(struct memdb *m, const struct tt_ddb_table_request *rq,
                          struct tt_ddb_table_desc *out, struct tt_backend_error *e) {
  const char *name = rq->table, *h = rq->keys.hash, *r = rq->keys.range;
  struct memdb_table *t = NULL;
  const char *used[64];
  size_t nused = 0;
  if (name == NULL)
    return memdb_req_table_named(m, name, &t, e); /* "Value null at 'tableName'" */
  if (!valid_name(name, 3))
    return memdb_validation(e, BAD_NAME, "tableName");
  if (memdb_limit_schema(rq, e) != 0)
    return -1;
  for (size_t i = 0; i < rq->n_defs; i++)
    for (size_t k = 0; k < i; k++)
      if (strcmp(rq->defs[k].name, rq->defs[i].name) == 0)
        return memdb_validation(e, "Cannot have two attributes with the same name");
  bool ppr = rq->billing == TT_DDB_BILLING_PAY_PER_REQUEST;
  if (ppr && rq->throughput.set)
    return ppr_throughput(e);
  if (!ppr && capacity(&rq->throughput, e) != 0)
    return -1;
  enum tt_av_type ht = defs_type(rq->defs, rq->n_defs, h),
                  rt = r ? defs_type(rq->defs, rq->n_defs, r) : 0;
  if (ht == 0 || (r && rt == 0))
    return memdb_validation(e, "One or more parameter values were invalid: Some index key "
                               "attributes are not defined in AttributeDefinitions. Keys: [%s%s%s]",
                            h, r ? ", " : "", r ? r : "");
  size_t ngsi = 0;
  for (size_t i = 0; i < rq->n_indexes; i++)
    ngsi += rq->indexes[i].global;
  if (ngsi > 20 || rq->n_indexes - ngsi > 5)
    return memdb_validation(e, "One or more parameter values were invalid: Too many %s indexes",
                            ngsi > 20 ? "global secondary" : "local secondary");
  if ((t = calloc(1, sizeof(*t))) == NULL)
    return memdb_oom(e);
  t->store.table = t;
  t->pay_per_request = ppr;
  t->billing_given = rq->billing != TT_DDB_BILLING_UNSET;
  t->hide_expired = m->opts.hide_expired;
  if (!ppr) {
    t->rcu = rq->throughput.read;
    t->wcu = rq->throughput.write;
  }
  if ((t->name = strdup(name)) == NULL || (t->pk.name = strdup(h)) == NULL ||
      (r && (t->sk.name = strdup(r)) == NULL))
    goto oom;
  t->pk.type = ht;
  t->sk.type = rt;
  t->store.has_sk = r != NULL;
  mark_used(used, &nused, h);
  if (r)
    mark_used(used, &nused, r);
  if (rq->n_indexes && (t->idx = calloc(rq->n_indexes, sizeof(*t->idx))) == NULL)
    goto oom;
  for (size_t i = 0; i < rq->n_indexes; i++) {
    struct memdb_index *ix = &t->idx[t->nidx++];
    if (make_index(t, rq->defs, rq->n_defs, &rq->indexes[i], ix, ppr, e) != 0)
      goto fail;
    for (size_t k = 0; k + 1 < t->nidx; k++)
      if (strcmp(t->idx[k].name, ix->name) == 0) {
        memdb_validation(e, "One or more parameter values were invalid: Duplicate index "
                            "name: %s",
                         ix->name);
        goto fail;
      }
    mark_used(used, &nused, ix->pk.name);
    if (ix->sk.name)
      mark_used(used, &nused, ix->sk.name);
  }
  if (nused != rq->n_defs) {
    memdb_validation(e, "One or more parameter values were invalid: Number of attributes in "
                        "KeySchema does not exactly match number of attributes defined in "
                        "AttributeDefinitions");
    goto fail;
  }
  if (memdb_table_get_any(m, name) != NULL) {
    memdb_fail(e, "ResourceInUseException", "Table already exists: %s", name);
    goto fail;
  }
  for (size_t i = 0; i < rq->n_defs; i++)
    if (add_def(&t->defs, &t->ndefs, rq->defs[i].name, rq->defs[i].type) != 0)
      goto oom;
  struct timeval tv;
  gettimeofday(&tv, NULL);
  t->created = (double)tv.tv_sec + (double)(tv.tv_usec / 1000) / 1000.0;
  /* DynamoDB answers CREATING and turns ACTIVE later; with no
   * transition_ms ours is ACTIVE and usable at once. */
  if (m->opts.transition_ms && !m->replaying) {
    t->status = MEMDB_CREATING;
    t->transition_at_ms = wall_ms() + (int64_t)m->opts.transition_ms;
  }
  if (describe(m, t, status_name(t), true, out) != 0)
    goto oom;
  t->next = m->tables;
  m->tables = t;
  m->transitions += t->status != MEMDB_ACTIVE;
  return 0;
oom:
  memdb_oom(e);
fail:
  memdb_table_free(t);
  return -1;
}

/* The table a table-level operation names; DynamoDB's ResourceNotFound
 * for these names the table. */
static int req_table(struct memdb *m, const char *name, struct memdb_table **t,
                     struct tt_backend_error *e) {
  if (name == NULL)
    return memdb_req_table_named(m, name, t, e);
  if ((*t = memdb_table_get_any(m, name)) == NULL)
    return memdb_fail(e, "ResourceNotFoundException",
                      "Requested resource not found: Table: %s not found", name);
  return 0;
}

/* DynamoDB's refusal to change a table in transition. */
static int in_use(const struct memdb_table *t, struct tt_backend_error *e) {
  if (t->status == MEMDB_ACTIVE)
    return 0;
  return memdb_fail(e, "ResourceInUseException",
                    "Attempt to change a resource which is still in use: Table is being %s: %s",
                    t->status == MEMDB_CREATING   ? "created"
                    : t->status == MEMDB_UPDATING ? "updated"
                                                  : "deleted",
                    t->name);
}

int memdb_op_describe_table(struct memdb *m, const struct tt_ddb_table_request *rq,
                            struct tt_ddb_table_desc *out, struct tt_backend_error *e) {
  struct memdb_table *t;
  if (req_table(m, rq->table, &t, e) != 0)
    return -1;
  return describe(m, t, status_name(t), true, out) != 0 ? memdb_oom(e) : 0;
}

int memdb_op_delete_table(struct memdb *m, const struct tt_ddb_table_request *rq,
                          struct tt_ddb_table_desc *out, struct tt_backend_error *e) {
  struct memdb_table *t;
  if (req_table(m, rq->table, &t, e) != 0 || in_use(t, e) != 0)
    return -1;
  /* DynamoDB's answer: DELETING, without the global secondary indexes. */
  if (describe(m, t, "DELETING", false, out) != 0)
    return memdb_oom(e);
  if (m->opts.transition_ms && !m->replaying) {
    t->status = MEMDB_DELETING;
    t->transition_at_ms = wall_ms() + (int64_t)m->opts.transition_ms;
    m->transitions++;
    return 0;
  }
  for (struct memdb_table **pp = &m->tables; *pp; pp = &(*pp)->next)
    if (*pp == t) {
      *pp = t->next;
      break;
    }
  memdb_table_free(t);
  return 0;
}

int memdb_op_update_ttl(struct memdb *m, const struct tt_ddb_table_request *rq,
                        struct tt_ddb_table_desc *out, struct tt_backend_error *e) {
  struct memdb_table *t;
  const char *attr = rq->ttl_attribute;
  bool enabled = rq->ttl_enabled;
  if (attr == NULL || *attr == '\0')
    return memdb_validation(e, "1 validation error detected: Value null at "
                               "'timeToLiveSpecification.attributeName' failed to satisfy "
                               "constraint: Member must not be null");
  if (strlen(attr) > MEMDB_KEY_NAME_MAX)
    return memdb_validation(e, "1 validation error detected: Value at "
                               "'timeToLiveSpecification.attributeName' failed to satisfy "
                               "constraint: Member must have length less than or equal to %u",
                            MEMDB_KEY_NAME_MAX);
  if (memdb_req_table_named(m, rq->table, &t, e) != 0)
    return -1;
  if (enabled && t->ttl_attr)
    return memdb_validation(e, "TimeToLive is already enabled");
  if (!enabled && t->ttl_attr == NULL)
    return memdb_validation(e, "TimeToLive is already disabled");
  if (!enabled && strcmp(t->ttl_attr, attr) != 0)
    return memdb_validation(e, "TimeToLive attribute name does not match the enabled "
                               "attribute name");
  bool bad = false;
  memset(out, 0, sizeof(*out));
  out->ttl_attribute = cp(out, attr, &bad);
  out->ttl_enabled = enabled;
  free(t->ttl_attr);
  t->ttl_attr = NULL;
  if (bad || (enabled && (t->ttl_attr = strdup(attr)) == NULL)) {
    tt_ddb_table_desc_free(out);
    return memdb_oom(e);
  }
  return 0;
}

int memdb_op_describe_ttl(struct memdb *m, const struct tt_ddb_table_request *rq,
                          struct tt_ddb_table_desc *out, struct tt_backend_error *e) {
  struct memdb_table *t;
  if (req_table(m, rq->table, &t, e) != 0)
    return -1;
  /* TTL changes take effect at once here, so there is no ENABLING or
   * DISABLING; DynamoDB names no attribute while TTL is disabled. */
  bool bad = false;
  memset(out, 0, sizeof(*out));
  out->ttl_status = t->ttl_attr ? "ENABLED" : "DISABLED";
  out->ttl_attribute = cp(out, t->ttl_attr, &bad);
  return bad ? memdb_oom(e) : 0;
}

/* The attribute definitions of a table after an UpdateTable adds an index:
 * the table's own, plus the given ones the new index uses. A given
 * definition may repeat a table's, not change its type. Returns 0 with *out
 * a new list of *n, or -1 with e set. */
static int merged_definitions(const struct memdb_table *t, const struct tt_ddb_table_request *rq,
                              const struct memdb_index *ix, struct tt_ddb_attr_def **out,
                              size_t *n, struct tt_backend_error *e) {
  size_t i;
  for (i = 0; i < rq->n_defs; i++) {
    enum tt_av_type had = defs_type(t->defs, t->ndefs, rq->defs[i].name);
    if (had != 0 && had != rq->defs[i].type)
      return memdb_validation(e, "One or more parameter values were invalid: Cannot change the "
                                 "type of attribute %s, which is defined as a key of the table "
                                 "or of an index",
                              rq->defs[i].name);
  }
  *out = NULL;
  *n = 0;
  int rc = 0;
  for (i = 0; rc == 0 && i < t->ndefs; i++)
    rc = add_def(out, n, t->defs[i].name, t->defs[i].type);
  const struct memdb_keydef *keys[2] = {&ix->pk, &ix->sk};
  for (int k = 0; k < 2 && rc == 0; k++)
    if (keys[k]->name && defs_type(*out, *n, keys[k]->name) == 0)
      rc = add_def(out, n, keys[k]->name, keys[k]->type);
  if (rc != 0) {
    memdb_defs_free(*out, *n);
    return memdb_oom(e);
  }
  return 0;
}

/* UpdateTable's one GlobalSecondaryIndexUpdates Create. DynamoDB
 * backfills the index (CREATING) in the background; here the backfill runs
 * inside the call, so the index is ACTIVE and complete in the answer. */
static int create_index(struct memdb_table *t, const struct tt_ddb_table_request *rq,
                        struct tt_backend_error *e) {
  struct memdb_index ix;
  struct tt_ddb_attr_def *defs = NULL, *all = NULL;
  size_t ndefs = 0, nall = 0;
  memset(&ix, 0, sizeof(ix));
  const struct tt_ddb_index *create = &rq->indexes[0];
  const char *name = create->name;
  for (size_t k = 0; name && k < t->nidx; k++)
    if (strcmp(t->idx[k].name, name) == 0)
      return memdb_validation(e, "One or more parameter values were invalid: Index with name "
                                 "%s already exists on table %s",
                              name, t->name);
  size_t ngsi = 0;
  for (size_t k = 0; k < t->nidx; k++)
    ngsi += t->idx[k].global;
  if (ngsi >= 20)
    return memdb_fail(e, "LimitExceededException", "Subscriber limit exceeded: the table %s "
                                                   "already has 20 global secondary indexes",
                      t->name);
  if (t->pay_per_request && create->throughput.set)
    return ppr_throughput(e);
  if (!t->pay_per_request && !create->throughput.set)
    return memdb_validation(e, "One or more parameter values were invalid: ProvisionedThroughput "
                               "is not specified for index: %s",
                            name ? name : "");
  /* The index's keys resolve against the table's definitions and the given
   * ones together; undefined keys are DynamoDB's "no definition" error. */
  int rc = 0;
  for (size_t k = 0; rc == 0 && k < t->ndefs; k++)
    rc = add_def(&all, &nall, t->defs[k].name, t->defs[k].type);
  for (size_t k = 0; rc == 0 && k < rq->n_defs; k++)
    if (defs_type(all, nall, rq->defs[k].name) == 0)
      rc = add_def(&all, &nall, rq->defs[k].name, rq->defs[k].type);
  if (rc != 0) {
    memdb_defs_free(all, nall);
    return memdb_oom(e);
  }
  const char *keys[2] = {create->keys.hash, create->keys.range};
  for (int k = 0; k < 2; k++)
    if (keys[k] && defs_type(all, nall, keys[k]) == 0) {
      memdb_defs_free(all, nall);
      return memdb_validation(e, "Invalid KeySchema: Some index key attribute have no "
                                 "definition");
    }
  rc = make_index(t, all, nall, create, &ix, t->pay_per_request, e);
  memdb_defs_free(all, nall);
  if (rc == 0 && !t->pay_per_request && capacity(&create->throughput, e) != 0)
    rc = -1;
  if (rc == 0 && merged_definitions(t, rq, &ix, &defs, &ndefs, e) != 0)
    rc = -1;
  if (rc == 0 && memdb_index_backfill(t, &ix) != 0)
    rc = memdb_oom(e);
  struct memdb_index *grown = NULL;
  if (rc == 0 && (grown = realloc(t->idx, (t->nidx + 1) * sizeof(*t->idx))) == NULL)
    rc = memdb_oom(e);
  if (rc != 0) {
    memdb_index_free(&ix);
    memdb_defs_free(defs, ndefs);
    return -1;
  }
  /* Committed: nothing below may fail the table's state (a lost answer is
   * an OOM error after the index exists, which DescribeTable then shows). */
  t->idx = grown;
  t->idx[t->nidx++] = ix;
  memdb_defs_free(t->defs, t->ndefs);
  t->defs = defs;
  t->ndefs = ndefs;
  return 0;
}


/* The UTC day of a time (days since the epoch). */
static int64_t utc_day(int64_t secs) { return secs >= 0 ? secs / 86400 : (secs - 86399) / 86400; }

/* DynamoDB's quota on throughput decreases: four at any time in a UTC day,
 * then one an hour (the first hour after the last decrease), 27 at most. */
static int decrease_allowed(const struct memdb_table *t, int64_t now,
                            struct tt_backend_error *e) {
  int64_t n = t->decrease_day == utc_day(now) ? t->decreases_today : 0;
  if (n < 4 || (n < 27 && (double)now - t->last_decrease >= 3600.0))
    return 0;
  return memdb_fail(e, "LimitExceededException",
                    "Subscriber limit exceeded: Provisioned throughput decreases are limited "
                    "within a given UTC day. After the first 4 decreases, each subsequent "
                    "decrease in the same UTC day can be performed at most once every 3600 "
                    "seconds. Number of decreases today: %lld",
                    (long long)n);
}

/* Records a throughput change of the table made at `at` (epoch seconds);
 * `now` (memdb_now) dates the day of a decrease. */
static void note_change(struct memdb_table *t, int64_t rcu, int64_t wcu, double at, int64_t now) {
  if (rcu > t->rcu || wcu > t->wcu)
    t->last_increase = at;
  if (rcu < t->rcu || wcu < t->wcu) {
    if (t->decrease_day != utc_day(now)) {
      t->decrease_day = utc_day(now);
      t->decreases_today = 0;
    }
    t->decreases_today++;
    t->last_decrease = at;
  }
  t->rcu = rcu;
  t->wcu = wcu;
}

/* UpdateTable: BillingMode, the table's ProvisionedThroughput, a global
 * index's ProvisionedThroughput (Update) and one index Create. DynamoDB
 * answers UPDATING and applies the change (or backfills the index) in the
 * background; here the change is made inside the call, so the answer
 * shows the table ACTIVE with its new settings, except a throughput change
 * with transition_ms, which answers UPDATING and is made when that time
 * passed. Other updates (index Delete, streams, SSE, replicas, table
 * class) are not implemented: ValidationException saying so, never a
 * silent success. */
int memdb_op_update_table(struct memdb *m, const struct tt_ddb_table_request *rq,
                          struct tt_ddb_table_desc *out, struct tt_backend_error *e) {
  struct memdb_table *t;
  const struct tt_ddb_throughput *tpt = &rq->throughput;
  if (memdb_limit_schema(rq, e) != 0)
    return -1;
  if (!tpt->set && rq->billing == TT_DDB_BILLING_UNSET &&
      rq->n_indexes + rq->n_updates + rq->n_deletes == 0)
    return memdb_validation(e, "At least one of ProvisionedThroughput, BillingMode, "
                               "UpdateStreamEnabled, GlobalSecondaryIndexUpdates or "
                               "SSESpecification or ReplicaUpdates is required");
  if (rq->billing == TT_DDB_BILLING_PROVISIONED && !tpt->set)
    return memdb_validation(e, "One or more parameter values were invalid: ProvisionedThroughput "
                               "must be specified when BillingMode is PROVISIONED");
  if (req_table(m, rq->table, &t, e) != 0 || in_use(t, e) != 0)
    return -1;
  bool ppr = rq->billing != TT_DDB_BILLING_UNSET
                 ? rq->billing == TT_DDB_BILLING_PAY_PER_REQUEST
                 : t->pay_per_request;
  if (tpt->set && ppr)
    return ppr_throughput(e);
  /* DynamoDB's own answer (and code) to more than one create in one call. */
  if (rq->n_indexes + rq->n_updates + rq->n_deletes > 5 || rq->n_indexes > 1)
    return memdb_fail(e, "LimitExceededException", "Subscriber limit exceeded: Only 1 online "
                                                   "index can be created or deleted "
                                                   "simultaneously per table");
  if (rq->n_deletes)
    return memdb_validation(e, "The memory backend's UpdateTable does not take "
                               "GlobalSecondaryIndexUpdates Delete actions");
  for (size_t i = 0; i < rq->n_updates; i++) {
    const struct tt_ddb_index *u = &rq->updates[i];
    if (capacity(&u->throughput, e) != 0)
      return -1;
    if (u->throughput.read > 1000000000000 || u->throughput.write > 1000000000000)
      return memdb_validation(e, "This operation cannot be performed with given input "
                                 "values. Please contact DynamoDB service team for more "
                                 "info: Action Blocked: IndexUpdate");
    const struct memdb_index *found = NULL;
    for (size_t k = 0; u->name && k < t->nidx; k++)
      if (t->idx[k].global && strcmp(t->idx[k].name, u->name) == 0)
        found = &t->idx[k];
    if (found == NULL)
      return memdb_fail(e, "ResourceNotFoundException",
                        "Requested resource not found: Index: %s not found",
                        u->name ? u->name : "null");
    if (ppr)
      return ppr_throughput(e);
  }
  if (!ppr && t->pay_per_request) {
    /* Back to PROVISIONED: every global index needs its throughput. */
    char missing[512] = "";
    for (size_t k = 0; k < t->nidx; k++) {
      bool given_pt = false;
      for (size_t i = 0; i < rq->n_updates; i++)
        given_pt = given_pt || strcmp(rq->updates[i].name, t->idx[k].name) == 0;
      if (t->idx[k].global && !given_pt) {
        size_t len = strlen(missing);
        snprintf(missing + len, sizeof(missing) - len, "%s%s", len ? "," : "",
                 t->idx[k].name);
      }
    }
    if (missing[0])
      return memdb_validation(e, "One or more parameter values were invalid: "
                                 "ProvisionedThroughput must be specified for index: %s",
                              missing);
  }
  int64_t now = memdb_now(m), rcu = tpt->read, wcu = tpt->write;
  if (tpt->set) {
    if (capacity(tpt, e) != 0)
      return -1;
    if (!t->pay_per_request && rcu == t->rcu && wcu == t->wcu)
      return memdb_validation(
          e, "The provisioned throughput for the table will not change. The requested value "
             "equals the current value. Current ReadCapacityUnits provisioned for the table: "
             "%lld. Requested ReadCapacityUnits: %lld. Current WriteCapacityUnits provisioned "
             "for the table: %lld. Requested WriteCapacityUnits: %lld. Refer to the Amazon "
             "DynamoDB Developer Guide for current limits and how to request higher limits.",
          (long long)t->rcu, (long long)rcu, (long long)t->wcu, (long long)wcu);
    if (!t->pay_per_request && (rcu < t->rcu || wcu < t->wcu) && !m->replaying &&
        decrease_allowed(t, now, e) != 0)
      return -1;
  }
  if (rq->n_indexes == 1) {
    /* The new index takes the billing mode the table is given. */
    bool was = t->pay_per_request;
    t->pay_per_request = ppr;
    int rc = create_index(t, rq, e);
    t->pay_per_request = was;
    if (rc != 0)
      return -1;
  }
  /* Committed: the billing and throughput changes cannot fail. */
  t->billing_given = t->billing_given || rq->billing != TT_DDB_BILLING_UNSET;
  if (ppr && !t->pay_per_request) {
    t->pay_per_request = true;
    t->rcu = t->wcu = 0;
    for (size_t k = 0; k < t->nidx; k++)
      t->idx[k].rcu = t->idx[k].wcu = 0;
  } else if (tpt->set && t->pay_per_request) {
    t->pay_per_request = false;
    t->rcu = rcu;
    t->wcu = wcu;
  } else if (tpt->set && m->opts.transition_ms && !m->replaying) {
    /* UPDATING: the answer shows the old throughput, the change is made
     * when the time passed (memdb_tables_settle). */
    double at = (double)wall_ms() / 1000.0;
    if (rcu > t->rcu || wcu > t->wcu)
      t->last_increase = at;
    if (rcu < t->rcu || wcu < t->wcu)
      t->last_decrease = at;
    t->status = MEMDB_UPDATING;
    t->transition_at_ms = wall_ms() + (int64_t)m->opts.transition_ms;
    t->pending_rcu = rcu;
    t->pending_wcu = wcu;
    m->transitions++;
  } else if (tpt->set) {
    note_change(t, rcu, wcu, (double)now, now);
  }
  for (size_t i = 0; i < rq->n_updates; i++)
    for (size_t k = 0; k < t->nidx; k++)
      if (t->idx[k].global && strcmp(t->idx[k].name, rq->updates[i].name) == 0) {
        t->idx[k].rcu = rq->updates[i].throughput.read;
        t->idx[k].wcu = rq->updates[i].throughput.write;
      }
  return describe(m, t, status_name(t), true, out) != 0 ? memdb_oom(e) : 0;
}

void memdb_tables_settle(struct memdb *m) {
  int64_t now = wall_ms();
  for (struct memdb_table **pp = &m->tables; *pp;) {
    struct memdb_table *t = *pp;
    if (t->status == MEMDB_ACTIVE || now < t->transition_at_ms) {
      pp = &t->next;
      continue;
    }
    m->transitions--;
    if (t->status == MEMDB_DELETING) {
      *pp = t->next;
      memdb_table_free(t);
      continue;
    }
    if (t->status == MEMDB_UPDATING)
      note_change(t, t->pending_rcu, t->pending_wcu, (double)t->transition_at_ms / 1000.0,
                  memdb_now(m));
    t->status = MEMDB_ACTIVE;
    pp = &t->next;
  }
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* ListTables: names in byte order, Limit 1..100 (default 100), resuming
 * after ExclusiveStartTableName; LastEvaluatedTableName when cut short. */
int memdb_op_list_tables(struct memdb *m, const struct tt_ddb_table_request *rq,
                         struct tt_ddb_table_desc *out, struct tt_backend_error *e) {
  int64_t limit = rq->limit ? rq->limit : 100;
  if (m->transitions)
    memdb_tables_settle(m);
  size_t n = 0;
  for (const struct memdb_table *t = m->tables; t; t = t->next)
    n++;
  memset(out, 0, sizeof(*out));
  const char **names = tt_arena_alloc(&out->arena, (n ? n : 1) * sizeof(*names));
  if (names == NULL)
    return memdb_oom(e);
  n = 0;
  for (const struct memdb_table *t = m->tables; t; t = t->next)
    if (rq->start == NULL || strcmp(t->name, rq->start) > 0)
      names[n++] = t->name;
  qsort(names, n, sizeof(*names), cmp_names);
  out->names = names;
  out->n_names = n < (size_t)limit ? n : (size_t)limit;
  bool bad = false;
  for (size_t i = 0; i < out->n_names; i++)
    names[i] = cp(out, names[i], &bad);
  out->last_name = n > (size_t)limit ? names[limit - 1] : NULL;
  if (bad) {
    tt_ddb_table_desc_free(out);
    return memdb_oom(e);
  }
  return 0;
}

/* ---- tags ---------------------------------------------------------------- */

/* The table a ResourceArn names (arn:aws:dynamodb:<region>:<account>:table/
 * <name>; region and account are not compared: one local store), NULL when
 * there is none. */
static struct memdb_table *arn_table(struct memdb *m, const char *arn) {
  const char *p = arn ? strstr(arn, ":table/") : NULL;
  if (p == NULL)
    return NULL;
  for (const char *q; (q = strstr(p + 1, ":table/")) != NULL;)
    p = q;
  return memdb_table_get_any(m, p + 7);
}

int memdb_op_tag_resource(struct memdb *m, const struct tt_ddb_table_request *rq,
                          struct tt_ddb_table_desc *out, struct tt_backend_error *e) {
  (void)out;
  struct memdb_table *t = arn_table(m, rq->arn);
  if (t == NULL)
    return memdb_fail(e, "ResourceNotFoundException",
                      "Requested resource not found: ResourcArn: %s not found", rq->arn);
  /* The tags after the request: a key given again keeps its place. */
  size_t n = t->ntags;
  struct tt_ddb_tag *next = calloc(n + rq->n_tags + 1, sizeof(*next));
  if (next == NULL)
    return memdb_oom(e);
  if (n)
    memcpy(next, t->tags, n * sizeof(*next));
  for (size_t i = 0; i < rq->n_tags; i++) {
    size_t k = 0;
    while (k < n && strcmp(next[k].key, rq->tags[i].key) != 0)
      k++;
    if (k == n)
      next[n++].key = rq->tags[i].key;
    next[k].value = rq->tags[i].value;
  }
  if (n > 50) {
    free(next);
    return memdb_fail(e, "ValidationException",
                      "One or more parameter values were invalid: The number of tags on the "
                      "resource exceeds the limit of 50");
  }
  bool bad = false;
  for (size_t i = 0; i < n; i++) {
    next[i].key = strdup(next[i].key);
    next[i].value = strdup(next[i].value);
    bad = bad || next[i].key == NULL || next[i].value == NULL;
  }
  if (bad) {
    memdb_tags_free(next, n);
    return memdb_oom(e);
  }
  memdb_tags_free(t->tags, t->ntags);
  t->tags = next;
  t->ntags = n;
  return 0;
}

int memdb_op_untag_resource(struct memdb *m, const struct tt_ddb_table_request *rq,
                            struct tt_ddb_table_desc *out, struct tt_backend_error *e) {
  (void)out;
  struct memdb_table *t = arn_table(m, rq->arn);
  if (t == NULL)
    return memdb_fail(e, "ResourceNotFoundException", "Requested resource not found");
  for (size_t i = 0; i < rq->n_tag_keys; i++)
    for (size_t k = 0; k < t->ntags; k++)
      if (strcmp(t->tags[k].key, rq->tag_keys[i]) == 0) {
        free((char *)t->tags[k].key);
        free((char *)t->tags[k].value);
        memmove(&t->tags[k], &t->tags[k + 1], (--t->ntags - k) * sizeof(*t->tags));
        break;
      }
  return 0;
}

/* ListTagsOfResource: every tag in one answer (at most 50 per table). */
int memdb_op_list_tags(struct memdb *m, const struct tt_ddb_table_request *rq,
                       struct tt_ddb_table_desc *out, struct tt_backend_error *e) {
  struct memdb_table *t = arn_table(m, rq->arn);
  if (t == NULL)
    return memdb_fail(e, "ResourceNotFoundException",
                      "Requested resource not found: ResourcArn: %s not found", rq->arn);
  memset(out, 0, sizeof(*out));
  bool bad = (out->tags = tt_arena_alloc(&out->arena, (t->ntags + 1) * sizeof(*out->tags))) ==
             NULL;
  for (size_t i = 0; !bad && i < t->ntags; i++)
    out->tags[out->n_tags++] =
        (struct tt_ddb_tag){cp(out, t->tags[i].key, &bad), cp(out, t->tags[i].value, &bad)};
  if (bad) {
    tt_ddb_table_desc_free(out);
    return memdb_oom(e);
  }
  return 0;
}
