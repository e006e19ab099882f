/* SPDX-License-Identifier: Apache-2.0 */
/* ops_multi.c -- BatchGetItem, BatchWriteItem, TransactWriteItems and
 * TransactGetItems: request-wide limits, duplicate rules, all-or-nothing
 * transactions with cancellation reasons, client-token idempotency. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/memory/internal.h"
#include "value/codec_ddb.h"
#include "value/json_exact.h"

/* Whether two keys of one table are the same item. */
static bool same_key(const struct memdb_table *t, const struct memdb_kv *pa,
                     const struct memdb_kv *sa, const struct memdb_kv *pb,
                     const struct memdb_kv *sb) {
  if (memdb_kv_cmp(pa, pb) != 0)
    return false;
  return t->sk.name == NULL || memdb_kv_cmp(sa, sb) == 0;
}

/* ---- BatchGetItem ---- */

struct bg_table {
  struct memdb_table *t;
  const char *name;
  const json_t *spec;
  struct memdb_exprs x;
  struct tt_expr *proj;
  struct tt_av *keys;
  struct memdb_kv *pks, *sks;
  size_t n;
  bool consistent;
  double units; /* capacity units read */
};

static void bg_free(struct bg_table *b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    memdb_exprs_free(&b[i].x);
    for (size_t k = 0; k < b[i].n; k++)
      tt_av_free(&b[i].keys[k]);
    free(b[i].keys);
    free(b[i].pks);
    free(b[i].sks);
  }
  free(b);
}

/* The request's RequestItems as a non-empty object. */
static int request_items(const json_t *req, const json_t **ri, struct tt_backend_error *e) {
  *ri = json_object_get(req, "RequestItems");
  if (!json_is_object(*ri) || json_object_size(*ri) == 0)
    return memdb_validation(e, "1 validation error detected: Value at 'requestItems' failed to "
                               "satisfy constraint: Member must have length greater than or "
                               "equal to 1");
  return 0;
}

int memdb_op_batch_get(struct memdb *m, const json_t *req, json_t **resp,
                       struct tt_backend_error *e) {
  const json_t *ri;
  struct bg_table *b = NULL;
  size_t nb = 0, total = 0;
  json_t *out = NULL;
  int rc = -1;
  if (request_items(req, &ri, e) != 0)
    return -1;
  const char *name;
  const json_t *spec;
  json_object_foreach((json_t *)ri, name, spec) {
    total += json_array_size(json_object_get(spec, "Keys"));
  }
  if (total > 100)
    return memdb_validation(e, "Too many items requested for the BatchGetItem call");
  if ((b = calloc(json_object_size(ri), sizeof(*b))) == NULL)
    return memdb_oom(e);
  json_object_foreach((json_t *)ri, name, spec) {
    struct bg_table *bt = &b[nb++];
    bt->name = name;
    bt->spec = spec;
    const json_t *keys = json_object_get(spec, "Keys");
    if (!json_is_array(keys) || json_array_size(keys) == 0) {
      memdb_validation(e, "1 validation error detected: Value at 'requestItems.%s.member.keys' "
                          "failed to satisfy constraint: Member must have length greater than "
                          "or equal to 1",
                       name);
      goto done;
    }
    if (memdb_exprs_init(&bt->x, spec, e) != 0 ||
        memdb_exprs_parse(&bt->x, spec, "ProjectionExpression", TT_EXPR_PROJECTION, &bt->proj,
                          e) != 0 ||
        memdb_exprs_finish(&bt->x, e) != 0)
      goto done;
    if (memdb_get_bool(spec, "ConsistentRead", false, &bt->consistent, e) != 0)
      goto done;
    size_t n = json_array_size(keys);
    if ((bt->keys = calloc(n, sizeof(*bt->keys))) == NULL ||
        (bt->pks = calloc(n, sizeof(*bt->pks))) == NULL ||
        (bt->sks = calloc(n, sizeof(*bt->sks))) == NULL)
      goto oom;
    /* Repeated keys are refused before the table is looked up. */
    for (size_t i = 0; i < n; i++) {
      struct tt_error err;
      bt->keys[i].type = TT_AV_NULL;
      bt->n = i + 1;
      if (tt_ddb_item_from_json(json_array_get(keys, i), "Keys", &bt->keys[i], &err) != 0) {
        memdb_fail_tt(e, &err);
        goto done;
      }
      for (size_t k = 0; k < i; k++)
        if (tt_av_equal(&bt->keys[k], &bt->keys[i])) {
          memdb_validation(e, "Provided list of item keys contains duplicates");
          goto done;
        }
    }
    if ((bt->t = memdb_table_get(m, name)) == NULL) {
      memdb_fail(e, "ResourceNotFoundException", "Requested resource not found");
      goto done;
    }
    for (size_t i = 0; i < n; i++) {
      if (memdb_key_check(bt->t, &bt->keys[i], &bt->pks[i], &bt->sks[i], e) != 0)
        goto done;
      for (size_t k = 0; k < i; k++)
        if (same_key(bt->t, &bt->pks[k], &bt->sks[k], &bt->pks[i], &bt->sks[i])) {
          memdb_validation(e, "Provided list of item keys contains duplicates");
          goto done;
        }
    }
  }
  json_t *responses = json_object(), *unprocessed = json_object();
  out = json_pack("{s:o, s:o}", "Responses", responses, "UnprocessedKeys", unprocessed);
  if (out == NULL || responses == NULL || unprocessed == NULL)
    goto oom;
  size_t bytes = 0;
  for (size_t i = 0; i < nb; i++) {
    struct bg_table *bt = &b[i];
    json_t *arr = json_array(), *left = NULL;
    if (arr == NULL || json_object_set_new(responses, bt->name, arr) != 0)
      goto oom;
    for (size_t k = 0; k < bt->n; k++) {
      if (bytes >= MEMDB_BATCH_GET_RESPONSE_MAX) {
        /* Over the 16 MB response limit: the rest goes back unprocessed. */
        if (left == NULL) {
          json_t *u = json_deep_copy(bt->spec);
          left = json_array();
          if (u == NULL || left == NULL) {
            json_decref(u);
            json_decref(left);
            goto oom;
          }
          json_object_set_new(u, "Keys", left);
          json_object_set_new(unprocessed, bt->name, u);
        }
        json_array_append_new(left, memdb_item_json(&bt->keys[k]));
        continue;
      }
      struct tt_av item, proj = {.type = TT_AV_NULL};
      bool found;
      struct tt_error err;
      if (memdb_lookup(m, bt->t, &bt->pks[k], &bt->sks[k], NULL, &item, &found, e) != 0)
        goto done;
      bt->units += memdb_capacity_units(found ? &item : NULL, NULL, true, bt->consistent);
      if (!found)
        continue;
      bytes += tt_av_item_size(&item);
      if (bt->proj && tt_expr_apply_projection(bt->proj, &item, &proj, &err) != 0) {
        tt_av_free(&item);
        memdb_fail_tt(e, &err);
        goto done;
      }
      json_t *j = memdb_item_json(bt->proj ? &proj : &item);
      tt_av_free(&item);
      tt_av_free(&proj);
      if (j == NULL || json_array_append_new(arr, j) != 0)
        goto oom;
    }
  }
  int mode = memdb_capacity_mode(req);
  if (mode != 0) {
    json_t *cc = json_array();
    if (cc == NULL || json_object_set_new(out, "ConsumedCapacity", cc) != 0)
      goto oom;
    for (size_t i = 0; i < nb; i++)
      if (json_array_append_new(cc, memdb_capacity_json(mode, b[i].name, b[i].units)) != 0)
        goto oom;
  }
  *resp = out;
  out = NULL;
  rc = 0;
  goto done;
oom:
  memdb_oom(e);
done:
  json_decref(out);
  bg_free(b, nb);
  return rc;
}

/* ---- BatchWriteItem ---- */

int memdb_op_batch_write(struct memdb *m, const json_t *req, json_t **resp,
                         struct tt_backend_error *e) {
  const json_t *ri;
  struct memdb_wr *w = NULL;
  json_t *out = NULL;
  size_t nw = 0, total = 0;
  int rc = -1;
  if (request_items(req, &ri, e) != 0)
    return -1;
  const char *name;
  const json_t *list;
  json_object_foreach((json_t *)ri, name, list) {
    if (!json_is_array(list) || json_array_size(list) == 0)
      return memdb_validation(e, "1 validation error detected: Value at 'requestItems' failed "
                                 "to satisfy constraint: Map value must satisfy constraint: "
                                 "[Member must have length less than or equal to 25, Member "
                                 "must have length greater than or equal to 1]");
    total += json_array_size(list);
  }
  if (total > 25)
    return memdb_validation(e, "1 validation error detected: Value at 'requestItems' failed to "
                               "satisfy constraint: Map value must satisfy constraint: [Member "
                               "must have length less than or equal to 25, Member must have "
                               "length greater than or equal to 1]");
  if ((w = calloc(total, sizeof(*w))) == NULL)
    return memdb_oom(e);
  json_object_foreach((json_t *)ri, name, list) {
    size_t i;
    const json_t *r;
    json_array_foreach(list, i, r) {
      const json_t *put = json_object_get(r, "PutRequest");
      const json_t *del = json_object_get(r, "DeleteRequest");
      if ((put == NULL) == (del == NULL) || json_object_size(r) != 1) {
        memdb_validation(e, "Supplied AttributeValue has more than one datatypes set, must "
                            "contain exactly one of the supported datatypes");
        goto done;
      }
      const json_t *src = put ? put : del;
      const char *field = put ? "Item" : "Key";
      json_t *obj = json_pack("{s:s, s:O*}", "TableName", name, field,
                              json_object_get(src, field));
      if (obj == NULL)
        goto oom;
      int prc = memdb_wr_prepare(m, put ? MEMDB_WR_PUT : MEMDB_WR_DELETE, obj, &w[nw], e);
      json_decref(obj);
      /* A PutRequest's item without the table's key attributes, or with
       * another type, is refused as a key would be. */
      static const char *const key_msgs[] = {
          "One or more parameter values were invalid: Missing the key ",
          "One or more parameter values were invalid: Type mismatch for key "};
      for (size_t k = 0; prc != 0 && put && k < 2; k++)
        if (strncmp(e->message, key_msgs[k], strlen(key_msgs[k])) == 0)
          memdb_validation(e, "The provided key element does not match the schema");
      if (prc != 0)
        goto done;
      nw++;
      for (size_t k = 0; k + 1 < nw; k++)
        if (w[k].t == w[nw - 1].t &&
            same_key(w[k].t, &w[k].pk, &w[k].sk, &w[nw - 1].pk, &w[nw - 1].sk)) {
          memdb_validation(e, "Provided list of item keys contains duplicates");
          goto done;
        }
    }
  }
  /* Every request was valid: apply them all (none is ever left unprocessed
   * here; UnprocessedItems is always empty). */
  for (size_t i = 0; i < nw; i++)
    if (memdb_wr_eval(m, &w[i], e) != 0 || memdb_wr_apply(&w[i], e) != 0)
      goto done;
  if ((out = json_pack("{s:{}}", "UnprocessedItems")) == NULL)
    goto oom;
  int mode = memdb_capacity_mode(req);
  if (mode != 0) {
    /* One entry a table, in the request's order. */
    json_t *cc = json_array();
    if (cc == NULL || json_object_set_new(out, "ConsumedCapacity", cc) != 0)
      goto oom;
    for (size_t i = 0; i < nw; i++) {
      bool seen = false;
      for (size_t k = 0; k < i && !seen; k++)
        seen = w[k].t == w[i].t;
      if (seen)
        continue;
      double units = 0;
      for (size_t k = i; k < nw; k++)
        if (w[k].t == w[i].t)
          units += memdb_capacity_units(w[k].found ? &w[k].old : NULL,
                                        w[k].has_next ? &w[k].next : NULL, false, true);
      if (json_array_append_new(cc, memdb_capacity_json(mode, w[i].t->name, units)) != 0)
        goto oom;
    }
  }
  *resp = out;
  out = NULL;
  rc = 0;
  goto done;
oom:
  memdb_oom(e);
done:
  json_decref(out);
  for (size_t i = 0; i < nw; i++)
    memdb_wr_free(&w[i]);
  free(w);
  return rc;
}

/* ---- TransactWriteItems ---- */

static int transact_items(const json_t *req, const json_t **items, struct tt_backend_error *e) {
  *items = json_object_get(req, "TransactItems");
  if (!json_is_array(*items))
    return memdb_validation(e, "1 validation error detected: Value null at 'transactItems' "
                               "failed to satisfy constraint: Member must not be null");
  size_t n = json_array_size(*items);
  if (n < 1 || n > 100)
    return memdb_validation(e, "1 validation error detected: Value at 'transactItems' failed "
                               "to satisfy constraint: Member must have length %s",
                            n < 1 ? "greater than or equal to 1" : "less than or equal to 100");
  return 0;
}

static void tokens_expire(struct memdb *m, int64_t now) {
  struct memdb_token **pp = &m->tokens;
  while (*pp) {
    struct memdb_token *k = *pp;
    if (now - k->at >= MEMDB_TOKEN_WINDOW_S) {
      *pp = k->next;
      free(k->token);
      free(k->request);
      free(k);
    } else {
      pp = &k->next;
    }
  }
}

int memdb_op_transact_write(struct memdb *m, const json_t *req, json_t **resp,
                            struct tt_backend_error *e) {
  const json_t *items;
  const char *token;
  struct memdb_wr *w = NULL;
  size_t n, nw = 0;
  struct tt_buf canon;
  json_t *reasons = NULL;
  int rc = -1;
  tt_buf_init(&canon, 0);
  if (transact_items(req, &items, e) != 0 || memdb_get_str(req, "ClientRequestToken", &token, e))
    return -1;
  int64_t now = memdb_now(m);
  if (token) {
    if (strlen(token) < 1 || strlen(token) > 36)
      return memdb_validation(e, "1 validation error detected: Value at 'clientRequestToken' "
                                 "failed to satisfy constraint: Member must have length less "
                                 "than or equal to 36");
    tokens_expire(m, now);
    if (tt_json_dump(req, TT_JSON_SORT_KEYS, &canon) != 0)
      return memdb_oom(e);
    for (struct memdb_token *k = m->tokens; k; k = k->next)
      if (strcmp(k->token, token) == 0) {
        rc = strcmp(k->request, canon.data) == 0
                 ? 0
                 : memdb_fail(e, "IdempotentParameterMismatchException",
                              "The request uses the same client token as a previous, but "
                              "non-identical request.");
        if (rc == 0 && (*resp = json_object()) == NULL)
          rc = memdb_oom(e);
        tt_buf_free(&canon);
        return rc;
      }
  }
  n = json_array_size(items);
  if ((w = calloc(n, sizeof(*w))) == NULL)
    goto oom;
  for (size_t i = 0; i < n; i++) {
    static const char *const kinds[] = {"ConditionCheck", "Put", "Delete", "Update"};
    static const enum memdb_wr_kind wk[] = {MEMDB_WR_CHECK, MEMDB_WR_PUT, MEMDB_WR_DELETE,
                                            MEMDB_WR_UPDATE};
    const json_t *ti = json_array_get(items, i), *obj = NULL;
    int which = -1, count = 0;
    for (int k = 0; k < 4; k++)
      if ((obj = json_object_get(ti, kinds[k])) != NULL) {
        which = k;
        count++;
      }
    if (count != 1) {
      memdb_validation(e, "TransactItems can only contain one of Check, Put, Update or Delete");
      goto done;
    }
    obj = json_object_get(ti, kinds[which]);
    if (memdb_wr_prepare(m, wk[which], obj, &w[nw], e) != 0)
      goto done;
    nw++;
    for (size_t k = 0; k + 1 < nw; k++)
      if (w[k].t == w[nw - 1].t &&
          same_key(w[k].t, &w[k].pk, &w[k].sk, &w[nw - 1].pk, &w[nw - 1].sk)) {
        memdb_validation(e, "Transaction request cannot include multiple operations on one "
                            "item");
        goto done;
      }
  }
  if (memdb_limit_txn(w, nw, e) != 0)
    goto done;
  /* Evaluate every action against the state before the transaction. */
  bool canceled = false;
  if ((reasons = json_array()) == NULL)
    goto oom;
  char codes[sizeof(e->message)];
  size_t cl = 0;
  codes[0] = '\0';
  for (size_t i = 0; i < nw; i++) {
    struct tt_backend_error ve;
    memset(&ve, 0, sizeof(ve));
    int c = memdb_wr_eval(m, &w[i], &ve);
    json_t *reason;
    const char *code;
    if (c == 0) {
      code = "None";
      reason = json_pack("{s:s}", "Code", code);
    } else if (c == 1) {
      code = "ConditionalCheckFailed";
      reason = json_pack("{s:s, s:s}", "Code", code, "Message", "The conditional request failed");
      if (reason && w[i].all_old_on_fail && w[i].found)
        json_object_set_new(reason, "Item", memdb_item_json(&w[i].old));
      canceled = true;
    } else if (strcmp(ve.type, "ValidationException") == 0) {
      code = "ValidationError";
      reason = json_pack("{s:s, s:s}", "Code", code, "Message", ve.message);
      canceled = true;
    } else {
      *e = ve;
      goto done;
    }
    tt_backend_error_clear(&ve);
    if (reason == NULL || json_array_append_new(reasons, reason) != 0)
      goto oom;
    int wrote = snprintf(codes + cl, sizeof(codes) - cl, "%s%s", i ? ", " : "", code);
    if (wrote > 0 && (size_t)wrote < sizeof(codes) - cl)
      cl += (size_t)wrote;
  }
  if (canceled) {
    memdb_fail(e, "TransactionCanceledException",
               "Transaction cancelled, please refer cancellation reasons for specific reasons "
               "[%s]",
               codes);
    e->body = json_pack("{s:s, s:s, s:O}", "__type",
                        "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
                        "Message", e->message, "CancellationReasons", reasons);
    goto done;
  }
  for (size_t i = 0; i < nw; i++)
    if (memdb_wr_apply(&w[i], e) != 0)
      goto done;
  if (token) {
    struct memdb_token *k = calloc(1, sizeof(*k));
    if (k == NULL || (k->token = strdup(token)) == NULL) {
      free(k);
      goto oom; /* applied but not remembered: a retry would apply twice */
    }
    k->request = tt_buf_steal(&canon, NULL);
    k->at = now;
    k->next = m->tokens;
    m->tokens = k;
  }
  if ((*resp = json_object()) == NULL)
    goto oom;
  rc = 0;
  goto done;
oom:
  memdb_oom(e);
done:
  json_decref(reasons);
  for (size_t i = 0; i < nw; i++)
    memdb_wr_free(&w[i]);
  free(w);
  tt_buf_free(&canon);
  return rc;
}

/* ---- TransactGetItems ---- */

int memdb_op_transact_get(struct memdb *m, const json_t *req, json_t **resp,
                          struct tt_backend_error *e) {
  const json_t *items;
  struct memdb_wr *w = NULL; /* reuses the key validation of writes */
  size_t n, nw = 0;
  json_t *out = NULL;
  int rc = -1;
  if (transact_items(req, &items, e) != 0)
    return -1;
  n = json_array_size(items);
  struct tt_expr **proj = NULL;
  struct memdb_exprs *xs = NULL;
  if ((w = calloc(n, sizeof(*w))) == NULL || (proj = calloc(n, sizeof(*proj))) == NULL ||
      (xs = calloc(n, sizeof(*xs))) == NULL)
    goto oom;
  for (size_t i = 0; i < n; i++) {
    const json_t *ti = json_array_get(items, i);
    const json_t *get = json_object_get(ti, "Get");
    if (!json_is_object(get) || json_object_size(ti) != 1) {
      memdb_validation(e, "1 validation error detected: Value null at "
                          "'transactItems.%zu.member.get' failed to satisfy constraint: Member "
                          "must not be null",
                       i + 1);
      goto done;
    }
    /* The projection's placeholders: validated with the Get's own maps. */
    json_t *obj = json_pack("{s:O*, s:O*}", "TableName", json_object_get(get, "TableName"),
                            "Key", json_object_get(get, "Key"));
    if (obj == NULL)
      goto oom;
    int prc = memdb_wr_prepare(m, MEMDB_WR_DELETE, obj, &w[nw], e);
    json_decref(obj);
    if (prc != 0)
      goto done;
    nw++;
    if (memdb_exprs_init(&xs[i], get, e) != 0)
      goto done;
    if (memdb_exprs_parse(&xs[i], get, "ProjectionExpression", TT_EXPR_PROJECTION, &proj[i], e) !=
            0 ||
        memdb_exprs_finish(&xs[i], e) != 0)
      goto done;
    for (size_t k = 0; k + 1 < nw; k++)
      if (w[k].t == w[nw - 1].t &&
          same_key(w[k].t, &w[k].pk, &w[k].sk, &w[nw - 1].pk, &w[nw - 1].sk)) {
        memdb_validation(e, "Transaction request cannot include multiple operations on one "
                            "item");
        goto done;
      }
  }
  json_t *arr = json_array();
  if (arr == NULL || (out = json_pack("{s:o}", "Responses", arr)) == NULL)
    goto oom;
  for (size_t i = 0; i < nw; i++) {
    struct tt_av item, pr = {.type = TT_AV_NULL};
    bool found;
    struct tt_error err;
    json_t *entry = json_object();
    if (entry == NULL || json_array_append_new(arr, entry) != 0)
      goto oom;
    if (memdb_lookup(m, w[i].t, &w[i].pk, &w[i].sk, NULL, &item, &found, e) != 0)
      goto done;
    if (!found)
      continue;
    if (proj[i] && tt_expr_apply_projection(proj[i], &item, &pr, &err) != 0) {
      tt_av_free(&item);
      memdb_fail_tt(e, &err);
      goto done;
    }
    json_t *j = memdb_item_json(proj[i] ? &pr : &item);
    tt_av_free(&item);
    tt_av_free(&pr);
    if (j == NULL || json_object_set_new(entry, "Item", j) != 0)
      goto oom;
  }
  *resp = out;
  out = NULL;
  rc = 0;
  goto done;
oom:
  memdb_oom(e);
done:
  json_decref(out);
  for (size_t i = 0; i < nw; i++)
    memdb_wr_free(&w[i]);
  for (size_t i = 0; xs && i < n; i++)
    memdb_exprs_free(&xs[i]);
  free(xs);
  free(proj);
  free(w);
  return rc;
}
