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

/* Whether the last of the n prepared writes names the item of an earlier
 * one. */
static bool last_repeats(const struct memdb_wr *w, size_t n) {
  for (size_t k = 0; k + 1 < n; k++)
    if (w[k].t == w[n - 1].t && same_key(w[k].t, &w[k].pk, &w[k].sk, &w[n - 1].pk, &w[n - 1].sk))
      return true;
  return false;
}

/* Frees n prepared writes and their array. */
static void wrs_free(struct memdb_wr *w, size_t n) {
  for (size_t i = 0; i < n; i++)
    memdb_wr_free(&w[i]);
  free(w);
}

/* ---- BatchGetItem ---- */

struct bg_table {
  struct memdb_table *t;
  const struct tt_ddb_batch_table *spec;
  struct memdb_exprs x;
  struct tt_expr *proj;
  const struct tt_av **keys;
  struct memdb_kv *pks, *sks;
  size_t n;
};

static void bg_free(struct bg_table *b, size_t n) {
  for (size_t i = 0; b && i < n; i++) {
    memdb_exprs_free(&b[i].x);
    free(b[i].keys);
    free(b[i].pks);
    free(b[i].sks);
  }
  free(b);
}

/* The request's RequestItems as a non-empty map. */
static int request_items(const struct tt_ddb_batch_request *r, struct tt_backend_error *e) {
  if (r->n_tables == 0)
    return memdb_validation(e, "1 validation error detected: Value at 'requestItems' failed to "
                               "satisfy constraint: Member must have length greater than or "
                               "equal to 1");
  return 0;
}

/* The number of entries of table `t`. */
static size_t entries_of(const struct tt_ddb_batch_request *r, size_t t) {
  size_t n = 0;
  for (size_t i = 0; i < r->n_entries; i++)
    n += r->entries[i].table == t;
  return n;
}

/* Appends a value (cloned) of table `t` to a result list. */
static int push_value(struct tt_ddb_batch_value **list, size_t *n, size_t t, bool put,
                      const struct tt_av *v, bool steal) {
  struct tt_ddb_batch_value *grown = realloc(*list, (*n + 1) * sizeof(**list));
  if (grown == NULL)
    return -1;
  *list = grown;
  struct tt_ddb_batch_value *x = &grown[*n];
  x->table = t;
  x->put = put;
  if (steal)
    x->value = *v;
  else if (tt_av_clone(&x->value, v) != 0)
    return -1;
  (*n)++;
  return 0;
}

/* BatchGetItem and BatchWriteItem add the capacity units of each table
 * into units[table]. */
static int batch_get(struct memdb *m, const struct tt_ddb_batch_request *r, double *units,
                     struct tt_ddb_batch_result *out, struct tt_backend_error *e) {
  struct bg_table *b = NULL;
  size_t nb = 0;
  int rc = -1;
  if (request_items(r, e) != 0)
    return -1;
  if (r->n_entries > 100)
    return memdb_validation(e, "Too many items requested for the BatchGetItem call");
  if ((b = calloc(r->n_tables, sizeof(*b))) == NULL)
    goto oom;
  for (size_t ti = 0; ti < r->n_tables; ti++) {
    struct bg_table *bt = &b[nb++];
    const struct tt_ddb_batch_table *spec = &r->tables[ti];
    size_t n = entries_of(r, ti);
    bt->spec = spec;
    if (n == 0) {
      memdb_validation(e, "1 validation error detected: Value at 'requestItems.%s.member.keys' "
                          "failed to satisfy constraint: Member must have length greater than "
                          "or equal to 1",
                       spec->table);
      goto done;
    }
    if (memdb_exprs_use(&bt->x, spec->names, spec->values, e) != 0 ||
        memdb_exprs_parse_text(&bt->x, spec->projection, TT_EXPR_PROJECTION, &bt->proj, e) != 0 ||
        memdb_exprs_finish(&bt->x, e) != 0)
      goto done;
    if ((bt->keys = calloc(n, sizeof(*bt->keys))) == NULL ||
        (bt->pks = calloc(n, sizeof(*bt->pks))) == NULL ||
        (bt->sks = calloc(n, sizeof(*bt->sks))) == NULL)
      goto oom;
    /* Repeated keys are refused before the table is looked up. */
    for (size_t i = 0; i < r->n_entries; i++) {
      if (r->entries[i].table != ti)
        continue;
      const struct tt_av *key = r->entries[i].value;
      if (key == NULL) {
        memdb_validation(e, "1 validation error detected: Value null at 'key' failed to "
                            "satisfy constraint: Member must not be null");
        goto done;
      }
      for (size_t k = 0; k < bt->n; k++)
        if (tt_av_equal(bt->keys[k], key)) {
          memdb_validation(e, "Provided list of item keys contains duplicates");
          goto done;
        }
      bt->keys[bt->n++] = key;
    }
    if ((bt->t = memdb_table_get(m, spec->table)) == NULL) {
      memdb_fail(e, "ResourceNotFoundException", "Requested resource not found");
      goto done;
    }
    for (size_t i = 0; i < n; i++) {
      if (memdb_key_check(bt->t, bt->keys[i], &bt->pks[i], &bt->sks[i], e) != 0)
        goto done;
      for (size_t k = 0; k < i; k++)
        if (same_key(bt->t, &bt->pks[k], &bt->sks[k], &bt->pks[i], &bt->sks[i])) {
          memdb_validation(e, "Provided list of item keys contains duplicates");
          goto done;
        }
    }
  }
  size_t bytes = 0;
  for (size_t i = 0; i < nb; i++) {
    struct bg_table *bt = &b[i];
    for (size_t k = 0; k < bt->n; k++) {
      if (bytes >= MEMDB_BATCH_GET_RESPONSE_MAX) {
        /* Over the 16 MB response limit: the rest goes back unprocessed. */
        if (push_value(&out->left, &out->n_left, i, false, bt->keys[k], false) != 0)
          goto oom;
        continue;
      }
      struct tt_av item, kept;
      bool found;
      if (memdb_lookup(m, bt->t, &bt->pks[k], &bt->sks[k], NULL, &item, &found, e) != 0)
        goto done;
      units[i] += memdb_capacity_units(found ? &item : NULL, NULL, true,
                                       bt->spec->consistent_read);
      if (!found)
        continue;
      bytes += tt_av_item_size(&item);
      if (memdb_project_item(bt->proj, &item, &kept, e) != 0)
        goto done;
      if (push_value(&out->items, &out->n_items, i, false, &kept, true) != 0) {
        tt_av_free(&kept);
        goto oom;
      }
    }
  }
  rc = 0;
  goto done;
oom:
  memdb_oom(e);
done:
  bg_free(b, nb);
  return rc;
}

/* ---- BatchWriteItem ---- */

static int batch_write(struct memdb *m, const struct tt_ddb_batch_request *r, double *units,
                       struct tt_ddb_batch_result *out, struct tt_backend_error *e) {
  struct memdb_wr *w = NULL;
  size_t nw = 0;
  int rc = -1;
  if (request_items(r, e) != 0)
    return -1;
  bool sized = r->n_entries <= 25;
  for (size_t t = 0; sized && t < r->n_tables; t++)
    sized = entries_of(r, t) > 0;
  if (!sized)
    return memdb_validation(e, "1 validation error detected: Value at 'requestItems' failed "
                               "to satisfy constraint: Map value must satisfy constraint: "
                               "[Member must have length less than or equal to 25, Member must "
                               "have length greater than or equal to 1]");
  if ((w = calloc(r->n_entries, sizeof(*w))) == NULL)
    goto oom;
  for (size_t i = 0; i < r->n_entries; i++) {
    const struct tt_ddb_batch_entry *x = &r->entries[i];
    struct tt_ddb_item_request q = {.table = r->tables[x->table].table};
    *(x->put ? &q.item : &q.key) = x->value;
    int prc = memdb_wr_prepare_typed(m, x->put ? MEMDB_WR_PUT : MEMDB_WR_DELETE, &q, &w[nw], e);
    /* A PutRequest's item without the table's key attributes, or with
     * another type, is refused as a key would be. */
    static const char *const key_msgs[] = {
        "One or more parameter values were invalid: Missing the key ",
        "One or more parameter values were invalid: Type mismatch for key "};
    for (size_t k = 0; prc != 0 && x->put && k < 2; k++)
      if (strncmp(e->message, key_msgs[k], strlen(key_msgs[k])) == 0)
        memdb_validation(e, "The provided key element does not match the schema");
    if (prc != 0)
      goto done;
    nw++;
    if (last_repeats(w, nw)) {
      memdb_validation(e, "Provided list of item keys contains duplicates");
      goto done;
    }
  }
  /* Every request was valid: apply them all (none is ever left unprocessed
   * here). */
  for (size_t i = 0; i < nw; i++) {
    if (memdb_wr_eval(m, &w[i], e) != 0 || memdb_wr_apply(&w[i], e) != 0)
      goto done;
    units[r->entries[i].table] += memdb_capacity_units(
        w[i].found ? &w[i].old : NULL, w[i].has_next ? &w[i].next : NULL, false, true);
  }
  rc = 0;
  goto done;
oom:
  memdb_oom(e);
done:
  wrs_free(w, nw);
  return rc;
}

int memdb_op_batch(struct memdb *m, bool write, const struct tt_ddb_batch_request *r,
                   struct tt_ddb_batch_result *out, struct tt_backend_error *e) {
  double *units = calloc(r->n_tables + 1, sizeof(*units));
  memset(out, 0, sizeof(*out));
  int rc = units == NULL ? memdb_oom(e)
           : write       ? batch_write(m, r, units, out, e)
                         : batch_get(m, r, units, out, e);
  if (rc != 0) {
    tt_ddb_batch_result_free(out);
  } else if (r->capacity != 0) { /* ConsumedCapacity asked: the units move into out */
    out->units = units;
    units = NULL;
  }
  free(units);
  return rc;
}

/* ---- TransactWriteItems ---- */

static int transact_items(const struct tt_ddb_txn_request *r, struct tt_backend_error *e) {
  if (r->n_steps < 1 || r->n_steps > 100)
    return memdb_validation(e, "1 validation error detected: Value at 'transactItems' failed "
                               "to satisfy constraint: Member must have length %s",
                            r->n_steps < 1 ? "greater than or equal to 1"
                                           : "less than or equal to 100");
  return 0;
}

void memdb_tokens_expire(struct memdb *m, int64_t now, bool all) {
  struct memdb_token **pp = &m->tokens;
  while (*pp) {
    struct memdb_token *k = *pp;
    if (all || now - k->at >= MEMDB_TOKEN_WINDOW_S) {
      *pp = k->next;
      free(k->token);
      free(k->request);
      free(k);
    } else {
      pp = &k->next;
    }
  }
}

/* Appends a text member of the canonical form: its length, then it. */
static int canon_text(struct tt_buf *b, const char *s) {
  return s == NULL ? tt_buf_puts(b, "-|") : tt_buf_printf(b, "%zu:%s|", strlen(s), s);
}

static int canon_map(struct tt_buf *b, const struct tt_av *v) {
  return v == NULL ? tt_buf_puts(b, "-|")
                   : tt_ddb_item_write(b, v, 0) != 0 ? -1 : tt_buf_puts(b, "|");
}

/* The request in one text that two equal requests share (the client-token
 * comparison): every member of every step, in order. */
static int txn_canon(const struct tt_ddb_txn_request *r, struct tt_buf *b) {
  for (size_t i = 0; i < r->n_steps; i++) {
    const struct tt_ddb_item_request *q = &r->steps[i].r;
    if (tt_buf_printf(b, "%d%d|", (int)r->steps[i].kind, q->old_on_condition_failure) != 0 ||
        canon_text(b, q->table) != 0 || canon_map(b, q->key) != 0 ||
        canon_map(b, q->item) != 0 || canon_text(b, q->condition) != 0 ||
        canon_text(b, q->update) != 0 || canon_map(b, q->names) != 0 ||
        canon_map(b, q->values) != 0)
      return -1;
  }
  return 0;
}

/* Fills one reason of a canceled transaction. Returns 0 or -1 (memory). */
static int set_reason(struct tt_ddb_txn_reason *r, const char *code, const char *message,
                      const struct tt_av *item) {
  snprintf(r->code, sizeof(r->code), "%s", code);
  if (message && (r->message = strdup(message)) == NULL)
    return -1;
  return item ? tt_av_clone(&r->item, item) : 0;
}

static int transact_write(struct memdb *m, const struct tt_ddb_txn_request *r,
                          struct tt_ddb_txn_result *out, struct tt_backend_error *e) {
  const char *token = r->client_token;
  struct memdb_wr *w = NULL;
  size_t n = r->n_steps, nw = 0;
  struct tt_buf canon;
  int rc = -1;
  tt_buf_init(&canon, 0);
  if (transact_items(r, e) != 0)
    return -1;
  int64_t now = memdb_now(m);
  if (token) {
    if (strlen(token) < 1 || strlen(token) > 36)
      return memdb_validation(e, "1 validation error detected: Value at 'clientRequestToken' "
                                 "failed to satisfy constraint: Member must have length less "
                                 "than or equal to 36");
    memdb_tokens_expire(m, now, false);
    if (txn_canon(r, &canon) != 0 || tt_buf_append(&canon, "", 1) != 0)
      return memdb_oom(e);
    for (struct memdb_token *k = m->tokens; k; k = k->next)
      if (strcmp(k->token, token) == 0) {
        rc = strcmp(k->request, canon.data) == 0
                 ? 0
                 : memdb_fail(e, "IdempotentParameterMismatchException",
                              "The request uses the same client token as a previous, but "
                              "non-identical request.");
        tt_buf_free(&canon);
        return rc;
      }
  }
  if ((w = calloc(n, sizeof(*w))) == NULL)
    goto oom;
  for (size_t i = 0; i < n; i++) {
    static const enum memdb_wr_kind wk[] = {
        [TT_DDB_TXN_CONDITION_CHECK] = MEMDB_WR_CHECK, [TT_DDB_TXN_PUT] = MEMDB_WR_PUT,
        [TT_DDB_TXN_DELETE] = MEMDB_WR_DELETE, [TT_DDB_TXN_UPDATE] = MEMDB_WR_UPDATE};
    const struct tt_ddb_txn_step *st = &r->steps[i];
    if (st->kind == TT_DDB_TXN_GET || (unsigned)st->kind > TT_DDB_TXN_GET) {
      memdb_validation(e, "TransactItems can only contain one of Check, Put, Update or Delete");
      goto done;
    }
    if (memdb_wr_prepare_typed(m, wk[st->kind], &st->r, &w[nw], e) != 0)
      goto done;
    nw++;
    if (last_repeats(w, nw)) {
      memdb_validation(e, "Transaction request cannot include multiple operations on one "
                          "item");
      goto done;
    }
  }
  if (memdb_limit_txn(w, nw, e) != 0)
    goto done;
  /* Evaluate every action against the state before the transaction. */
  bool canceled = false;
  if ((out->reasons = calloc(nw, sizeof(*out->reasons))) == NULL)
    goto oom;
  out->n_reasons = nw;
  char codes[sizeof(e->message)];
  size_t cl = 0;
  codes[0] = '\0';
  for (size_t i = 0; i < nw; i++) {
    struct tt_backend_error ve;
    memset(&ve, 0, sizeof(ve));
    int c = memdb_wr_eval(m, &w[i], &ve);
    const char *code = c == 0 ? "None" : c == 1 ? "ConditionalCheckFailed" : "ValidationError";
    if (c < 0 && strcmp(ve.type, "ValidationException") != 0) {
      *e = ve;
      goto done;
    }
    canceled = canceled || c != 0;
    int src = set_reason(&out->reasons[i], code,
                         c == 0 ? NULL : c == 1 ? "The conditional request failed" : ve.message,
                         c == 1 && w[i].all_old_on_fail && w[i].found ? &w[i].old : NULL);
    tt_backend_error_clear(&ve);
    if (src != 0)
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
  rc = 0;
  goto done;
oom:
  memdb_oom(e);
done:
  if (rc == 0 || strcmp(e->type, "TransactionCanceledException") != 0)
    tt_ddb_txn_result_free(out); /* reasons only for a cancellation */
  wrs_free(w, nw);
  tt_buf_free(&canon);
  return rc;
}

/* ---- TransactGetItems ---- */

static int transact_get(struct memdb *m, const struct tt_ddb_txn_request *r,
                        struct tt_ddb_txn_result *out, struct tt_backend_error *e) {
  struct memdb_wr *w = NULL; /* reuses the key validation of writes */
  size_t n = r->n_steps, nw = 0;
  int rc = -1;
  if (transact_items(r, e) != 0)
    return -1;
  struct tt_expr **proj = NULL;
  struct memdb_exprs *xs = NULL;
  if ((w = calloc(n, sizeof(*w))) == NULL || (proj = calloc(n, sizeof(*proj))) == NULL ||
      (xs = calloc(n, sizeof(*xs))) == NULL)
    goto oom;
  for (size_t i = 0; i < n; i++) {
    const struct tt_ddb_txn_step *st = &r->steps[i];
    if (st->kind != TT_DDB_TXN_GET) {
      memdb_validation(e, "1 validation error detected: Value null at "
                          "'transactItems.%zu.member.get' failed to satisfy constraint: Member "
                          "must not be null",
                       i + 1);
      goto done;
    }
    /* The projection's placeholders: validated with the Get's own maps. */
    struct tt_ddb_item_request key = {.table = st->r.table, .key = st->r.key};
    if (memdb_wr_prepare_typed(m, MEMDB_WR_DELETE, &key, &w[nw], e) != 0)
      goto done;
    nw++;
    if (memdb_exprs_use(&xs[i], st->r.names, st->r.values, e) != 0 ||
        memdb_exprs_parse_text(&xs[i], st->r.projection, TT_EXPR_PROJECTION, &proj[i], e) != 0 ||
        memdb_exprs_finish(&xs[i], e) != 0)
      goto done;
    if (last_repeats(w, nw)) {
      memdb_validation(e, "Transaction request cannot include multiple operations on one "
                          "item");
      goto done;
    }
  }
  if ((out->items = calloc(nw, sizeof(*out->items))) == NULL)
    goto oom;
  out->n_items = nw;
  for (size_t i = 0; i < nw; i++) {
    struct tt_av item;
    bool found;
    if (memdb_lookup(m, w[i].t, &w[i].pk, &w[i].sk, NULL, &item, &found, e) != 0 ||
        (found && memdb_project_item(proj[i], &item, &out->items[i], e) != 0))
      goto done;
  }
  rc = 0;
  goto done;
oom:
  memdb_oom(e);
done:
  if (rc != 0)
    tt_ddb_txn_result_free(out);
  wrs_free(w, nw);
  for (size_t i = 0; xs && i < n; i++)
    memdb_exprs_free(&xs[i]);
  free(xs);
  free(proj);
  return rc;
}

int memdb_op_transact(struct memdb *m, bool get, const struct tt_ddb_txn_request *r,
                      struct tt_ddb_txn_result *out, struct tt_backend_error *e) {
  memset(out, 0, sizeof(*out));
  return get ? transact_get(m, r, out, e) : transact_write(m, r, out, e);
}
