/* SPDX-License-Identifier: Apache-2.0 */
/* ops_read.c -- Query and Scan: key ranges over sorted partitions, Limit
 * counted before the filter, 1 MB pages, LastEvaluatedKey, index
 * projections and parallel-scan segments. */
#include <stdlib.h>
#include <string.h>

#include "backend/memory/internal.h"

enum sel { SEL_DEFAULT = 0, SEL_ALL, SEL_PROJECTED, SEL_SPECIFIC, SEL_COUNT };

/* ReturnConsumedCapacity of a Query or Scan: the bytes it read from the
 * table (items, or an LSI's fetches) and from the index it read (or NULL). */
struct rd_cap {
  uint64_t table_bytes, index_bytes;
  const struct memdb_index *ix;
};

struct rd {
  struct memdb *m;
  struct memdb_table *t;
  struct memdb_index *ix;
  struct memdb_store *s;
  struct memdb_exprs x;
  struct tt_expr *kc, *filter, *proj;
  enum sel sel;
  int64_t limit;
  bool has_limit, forward, consistent, query;
  const struct tt_av *esk; /* ExclusiveStartKey or NULL */
  struct rd_cap *units;    /* NULL: ConsumedCapacity not asked */
  struct memdb_kv esk_pk, esk_sk, esk_tpk, esk_tsk;
  int64_t now;
  /* results */
  struct tt_ddb_read_result *out;
  size_t cap;
  size_t bytes;
};

static const char esk_invalid[] = "The provided starting key is invalid";
static const char esk_schema[] = "The provided key element does not match the schema";

/* The table's keys, then the index's (NULL when none). */
static void esk_defs(const struct rd *r, const struct memdb_keydef *defs[4]) {
  defs[0] = &r->t->pk;
  defs[1] = &r->t->sk;
  defs[2] = r->ix ? &r->ix->pk : NULL;
  defs[3] = r->ix ? &r->ix->sk : NULL;
}

/* One key of what is read, in the start key: there, and of its type. */
static int esk_piece(const struct rd *r, const struct memdb_keydef *d,
                     struct tt_backend_error *e) {
  if (d == NULL || d->name == NULL)
    return 0;
  const struct tt_av *v = tt_av_map_get(r->esk, d->name);
  if (v == NULL)
    return memdb_validation(e, "%s", esk_invalid);
  if (v->type != d->type)
    return memdb_validation(e, "%s", esk_schema);
  return 0;
}

/* The start key against all the keys, and its positions. */
static int esk_finish(struct rd *r, struct tt_backend_error *e) {
  const struct memdb_keydef *defs[4];
  esk_defs(r, defs);
  struct memdb_kv *outs[4] = {&r->esk_tpk, &r->esk_tsk, &r->esk_pk, &r->esk_sk};
  for (int i = 0; i < 4; i++) {
    if (defs[i] == NULL || defs[i]->name == NULL)
      continue;
    const struct tt_av *v = tt_av_map_get(r->esk, defs[i]->name);
    if (v == NULL || v->type != defs[i]->type)
      return memdb_validation(e, "%s: %s", esk_invalid, esk_schema);
    *outs[i] = memdb_kv_of(v);
  }
  if (r->ix == NULL) {
    r->esk_pk = r->esk_tpk;
    r->esk_sk = r->esk_tsk;
  }
  return 0;
}

/* ALL_ATTRIBUTES of a global index that does not project them all. */
static int select_check(const struct rd *r, struct tt_backend_error *e) {
  if (r->ix && r->sel == SEL_ALL && r->ix->global && r->ix->proj != TT_DDB_PROJECT_ALL)
    return memdb_validation(e, "One or more parameter values were invalid: Select type "
                               "ALL_ATTRIBUTES is not supported for global secondary index %s "
                               "because its projection type is not ALL",
                            r->ix->name);
  return 0;
}

/* Common parameters of Query and Scan. */
static int rd_prepare(struct memdb *m, const struct tt_ddb_read_request *req, bool query,
                      struct rd *r, struct tt_backend_error *e) {
  memset(r, 0, sizeof(*r));
  r->m = m;
  r->query = query;
  r->forward = !(query && req->backward);
  r->consistent = req->consistent_read;
  r->has_limit = req->limit != 0;
  r->limit = req->limit;
  r->esk = req->start_key;
  r->sel = (enum sel)req->select;
  const char *index = req->index;
  if (r->has_limit && r->limit < 1)
    return memdb_validation(e, "1 validation error detected: Value '%lld' at 'limit' failed to "
                               "satisfy constraint: Member must have value greater than or "
                               "equal to 1",
                            (long long)r->limit);
  if ((unsigned)r->sel > SEL_COUNT)
    return memdb_validation(e, "1 validation error detected: Value at 'select' failed "
                               "to satisfy constraint: Member must satisfy enum value set: "
                               "[SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, "
                               "ALL_PROJECTED_ATTRIBUTES]");
  if (memdb_exprs_use(&r->x, req->names, req->values, e) != 0)
    return -1;
  if (query) {
    if (req->key_condition == NULL)
      return memdb_validation(e, "Either the KeyConditions or KeyConditionExpression parameter "
                                 "must be specified in the request.");
    if (memdb_exprs_parse_text(&r->x, req->key_condition, TT_EXPR_KEY_CONDITION, &r->kc, e) !=
        0)
      return -1;
  }
  if (memdb_exprs_parse_text(&r->x, req->filter, TT_EXPR_FILTER, &r->filter, e) != 0 ||
      memdb_exprs_parse_text(&r->x, req->projection, TT_EXPR_PROJECTION, &r->proj, e) != 0 ||
      memdb_exprs_finish(&r->x, e) != 0)
    return -1;
  if (r->proj && r->sel != SEL_DEFAULT && r->sel != SEL_SPECIFIC) {
    static const char *const names[] = {"", "ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES", "",
                                        "COUNT"};
    return memdb_validation(e, "Cannot specify the ProjectionExpression when choosing to get %s",
                            names[r->sel]);
  }
  if (r->sel == SEL_SPECIFIC && r->proj == NULL)
    return memdb_validation(e, "One or more parameter values were invalid: Select type "
                               "SPECIFIC_ATTRIBUTES requires a ProjectionExpression");
  if (r->proj)
    r->sel = SEL_SPECIFIC;
  if (memdb_req_table_named(m, req->table, &r->t, e) != 0)
    return -1;
  r->s = &r->t->store;
  if (index) {
    for (size_t i = 0; i < r->t->nidx; i++)
      if (strcmp(r->t->idx[i].name, index) == 0)
        r->ix = &r->t->idx[i];
    if (r->ix == NULL)
      return memdb_validation(e, "The table does not have the specified index: %s", index);
    r->s = &r->ix->store;
    if (r->ix->global && r->consistent)
      return memdb_validation(e, "Consistent reads are not supported on global secondary "
                                 "indexes");
  } else if (r->sel == SEL_PROJECTED) {
    return memdb_validation(e, "One or more parameter values were invalid: Select type "
                               "ALL_PROJECTED_ATTRIBUTES is not supported when %s without an "
                               "IndexName",
                            query ? "querying" : "scanning");
  }
  if (query && r->filter) {
    /* DynamoDB: a Query's filter may not name the keys it queries by. */
    const struct memdb_keydef *keys[2] = {r->ix ? &r->ix->pk : &r->t->pk,
                                          r->ix ? &r->ix->sk : &r->t->sk};
    for (int i = 0; i < 2; i++)
      if (keys[i]->name && tt_expr_condition_refers(r->filter, keys[i]->name))
        return memdb_validation(e, "Filter Expression can only contain non-primary key "
                                   "attributes: Primary key attribute: %s",
                                keys[i]->name);
  }
  if (r->sel == SEL_DEFAULT)
    r->sel = r->ix ? SEL_PROJECTED : SEL_ALL;
  if (r->esk) {
    /* The start key holds exactly the table keys plus the index keys.
     * DynamoDB checks its size, then the keys of what is read (the
     * index's, or a Query's table keys) one by one (a Query's each with
     * its key condition: the sort key's after the partition key's
     * condition, esk_finish), then the table keys. */
    const struct memdb_keydef *defs[4];
    esk_defs(r, defs);
    size_t want = 0, have = r->esk->type == TT_AV_M ? r->esk->len : 0;
    for (int i = 0; i < 4; i++) {
      bool named = defs[i] && defs[i]->name; /* and not an earlier one's name */
      for (int k = 0; named && k < i; k++)
        named = !(defs[k] && defs[k]->name && strcmp(defs[k]->name, defs[i]->name) == 0);
      want += named;
    }
    if (want != have)
      return memdb_validation(e, "%s%s%s", esk_invalid, query || r->ix ? "" : ": ",
                              query || r->ix ? "" : esk_schema);
    int first = r->ix ? 2 : 0;
    if ((query || r->ix) && esk_piece(r, defs[first], e) != 0)
      return -1;
    if (!query && r->ix && esk_piece(r, defs[first + 1], e) != 0)
      return -1;
    /* A Scan's Select is checked between the index's keys and the table's;
     * its segment (read_scan) before the key paths. */
    if (!query && (select_check(r, e) != 0 || esk_finish(r, e) != 0))
      return -1;
  }
  if (!query && select_check(r, e) != 0)
    return -1;
  r->now = memdb_now(m);
  return 0;
}

/* Whether the read sees an index's projection of each item rather than the
 * item: a GSI holds only its projection; an LSI query asking for more than
 * its projection fetches the table item, as DynamoDB does. */
static bool rd_projected(const struct rd *r) {
  return r->ix && (r->ix->global || r->sel == SEL_PROJECTED);
}

/* Appends a page item (moved). */
static int rd_keep(struct rd *r, struct tt_av *item) {
  struct tt_ddb_read_result *o = r->out;
  if (o->n_items == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 16;
    struct tt_av *p = realloc(o->items, cap * sizeof(*p));
    if (p == NULL)
      return -1;
    o->items = p;
    r->cap = cap;
  }
  o->items[o->n_items++] = *item;
  memset(item, 0, sizeof(*item));
  return 0;
}

/* Adds an entry read to the capacity: the item's size for the table; for
 * an index the size of its projection, and the table item's when an LSI
 * read fetched what its projection lacks. */
static int rd_cap_count(struct rd *r, const struct memdb_item *it, bool projected,
                        const struct tt_av *seen, const struct tt_av *full) {
  if (r->ix == NULL) {
    r->units->table_bytes += it->size;
    return 0;
  }
  if (r->ix->proj == TT_DDB_PROJECT_ALL) {
    r->units->index_bytes += it->size;
    return 0;
  }
  if (projected) {
    r->units->index_bytes += tt_av_item_size(seen);
    return 0;
  }
  struct tt_av view = {0};
  if (memdb_index_project(r->t, r->ix, full, &view) != 0)
    return -1;
  r->units->index_bytes += tt_av_item_size(&view);
  r->units->table_bytes += it->size;
  tt_av_free(&view);
  return 0;
}

/* Reads one entry: counts it, filters it, keeps it. Returns 1 to stop (a
 * page limit was reached), 0 to go on, -1 on error. */
static int visit(struct rd *r, const void *entry, struct tt_backend_error *e) {
  const struct memdb_item *it = memdb_entry_item(r->s, entry);
  struct tt_av full = {0}, view = {0}, out = {0};
  struct tt_arena *a = r->out->items_in_arena ? &r->out->arena : NULL;
  struct tt_arena_mark mark = {0};
  struct tt_error err;
  bool kept = false;
  int rc = -1;
  if (a)
    mark = tt_arena_mark(a);
  if (memdb_item_decode(r->t, it, &full, a) != 0)
    goto oom;
  if (memdb_expired(r->t, &full, r->now)) {
    rc = 0; /* hidden as if already deleted: see docs/internals/memory.md */
    goto done;
  }
  bool projected = rd_projected(r);
  struct tt_av *seen = &full;
  if (projected) {
    if (memdb_index_project(r->t, r->ix, &full, &view) != 0)
      goto oom;
    seen = &view;
  }
  r->out->scanned_count++;
  r->bytes += projected ? tt_av_item_size(seen) : it->size;
  if (r->units && rd_cap_count(r, it, projected, seen, &full) != 0)
    goto oom;
  bool stop = (r->has_limit && r->out->scanned_count >= (uint64_t)r->limit) ||
              r->bytes >= MEMDB_PAGE_MAX;
  /* LastEvaluatedKey: only the entry a page stops at needs one. */
  if (stop && memdb_key_of(r->t, r->ix, &full, &r->out->last_key) != 0)
    goto oom;
  if (r->filter == NULL || tt_expr_eval_condition(r->filter, seen)) {
    r->out->count++;
    if (r->sel != SEL_COUNT) {
      if (r->proj && tt_expr_apply_projection(r->proj, seen, &out, &err) != 0) {
        memdb_fail_tt(e, &err);
        goto done;
      }
      if (rd_keep(r, r->proj ? &out : seen) != 0)
        goto oom;
      kept = true;
    }
  }
  rc = stop ? 1 : 0;
  goto done;
oom:
  memdb_oom(e);
done:
  if (a == NULL)
    tt_av_free(&full);
  else if (!kept)
    tt_arena_release(a, mark); /* an entry filtered out costs no memory */
  tt_av_free(&view);
  tt_av_free(&out);
  return rc;
}

/* The bounds of a sort-key condition: an entry is in range when it does
 * not sort before `lo` and sorts before `hi` (SK_NONE: unbounded). */
enum skmode { SK_NONE, SK_LT, SK_LE, SK_PREFIX_END };
static const struct {
  unsigned char lo, hi;
} sk_bounds[] = {[TT_EXPR_KEY_NONE] = {SK_NONE, SK_NONE},
                 [TT_EXPR_KEY_EQ] = {SK_LT, SK_LE},
                 [TT_EXPR_KEY_LT] = {SK_NONE, SK_LT},
                 [TT_EXPR_KEY_LE] = {SK_NONE, SK_LE},
                 [TT_EXPR_KEY_GT] = {SK_LE, SK_NONE},
                 [TT_EXPR_KEY_GE] = {SK_LT, SK_NONE},
                 [TT_EXPR_KEY_BETWEEN] = {SK_LT, SK_LE},
                 [TT_EXPR_KEY_BEGINS_WITH] = {SK_LT, SK_PREFIX_END}};

/* Whether sort key sk sorts before the bound v in `mode`. */
static bool sk_before(const struct memdb_kv *sk, const struct memdb_kv *v, enum skmode mode) {
  int c = memdb_kv_cmp(sk, v);
  if (mode == SK_PREFIX_END)
    return c < 0 || (sk->len >= v->len && memcmp(sk->p, v->p, v->len) == 0);
  return mode == SK_LT ? c < 0 : c <= 0;
}

struct skpred {
  const struct memdb_store *s;
  const struct memdb_kv *v;
  enum skmode mode;
};

static bool sk_pred(const void *entry, const void *ctx) {
  const struct skpred *p = ctx;
  struct memdb_kv pk, sk;
  memdb_entry_keys(p->s, entry, &pk, &sk);
  return sk_before(&sk, p->v, p->mode);
}

/* The bound value of the upper end: BETWEEN's second operand. */
static const struct tt_av *sk_hi_value(const struct tt_expr_key_range *kr) {
  return kr->op == TT_EXPR_KEY_BETWEEN ? kr->hi : kr->lo;
}

/* Whether a sort key value satisfies the query's sort-key condition. */
static bool sk_matches(const struct memdb_kv *sk, const struct tt_expr_key_range *kr) {
  unsigned lo = sk_bounds[kr->op].lo, hi = sk_bounds[kr->op].hi;
  struct memdb_kv lv = lo ? memdb_kv_of(kr->lo) : (struct memdb_kv){0},
                  hv = hi ? memdb_kv_of(sk_hi_value(kr)) : (struct memdb_kv){0};
  return (lo == SK_NONE || !sk_before(sk, &lv, lo)) && (hi == SK_NONE || sk_before(sk, &hv, hi));
}

/* The first entry of partition pt that is not before the bound v (mode). */
static struct memdb_pos sk_point(const struct memdb_store *s, const struct memdb_part *pt,
                                 const struct tt_av *v, enum skmode mode) {
  struct memdb_kv k = memdb_kv_of(v);
  struct skpred p = {s, &k, mode};
  return memdb_seq_point(&pt->entries, sk_pred, &p);
}

static int read_query(struct rd *r, struct tt_backend_error *e) {
  struct tt_error err;
  struct tt_expr_key_range kr;
  const struct memdb_keydef *pkd = r->ix ? &r->ix->pk : &r->t->pk;
  const struct memdb_keydef *skd = r->ix ? &r->ix->sk : &r->t->sk;
  if (tt_expr_key_range(r->kc, pkd->name, skd->name, &kr, &err) != 0) {
    /* DynamoDB checks the partition key value's type before its operator. */
    if (kr.pk && kr.pk->type != pkd->type)
      return memdb_validation(e, "One or more parameter values were invalid: Condition "
                                 "parameter type does not match schema type");
    return memdb_fail_tt(e, &err);
  }
  if (r->esk && esk_piece(r, skd, e) != 0)
    return -1;
  if (kr.pk->type != pkd->type || (kr.lo && kr.lo->type != skd->type) ||
      (kr.hi && kr.hi->type != skd->type))
    return memdb_validation(e, "One or more parameter values were invalid: Condition parameter "
                               "type does not match schema type");
  if (kr.op == TT_EXPR_KEY_BEGINS_WITH && skd->type == TT_AV_N)
    return memdb_validation(e, "Invalid KeyConditionExpression: Incorrect operand type for "
                               "operator or function; operator or function: begins_with, "
                               "operand type: N");
  if (r->esk && esk_finish(r, e) != 0)
    return -1;
  struct memdb_kv qpk = memdb_kv_of(kr.pk);
  if (r->esk && kr.op == TT_EXPR_KEY_NONE && memdb_kv_cmp(&r->esk_pk, &qpk) != 0)
    return memdb_validation(e, "The provided starting key is outside query boundaries based on "
                               "provided conditions");
  if (r->esk && kr.op != TT_EXPR_KEY_NONE && !sk_matches(&r->esk_sk, &kr))
    return memdb_validation(e, "The provided starting key does not match the range key "
                               "predicate");
  if (r->esk && kr.op != TT_EXPR_KEY_NONE && memdb_kv_cmp(&r->esk_pk, &qpk) != 0)
    return memdb_validation(e, "The query can return at most one row and cannot be restarted");
  if (memdb_key_paths_check(r->t, r->proj, e) != 0 || select_check(r, e) != 0 ||
      memdb_key_paths_check(r->t, r->filter, e) != 0)
    return -1;
  struct memdb_part *pt = memdb_store_part(r->s, &qpk, NULL);
  if (pt) {
    const struct memdb_seq *q = &pt->entries;
    struct memdb_pos lo = memdb_seq_begin(q), hi = memdb_seq_end(q);
    if (sk_bounds[kr.op].lo != SK_NONE)
      lo = sk_point(r->s, pt, kr.lo, sk_bounds[kr.op].lo);
    if (sk_bounds[kr.op].hi != SK_NONE)
      hi = sk_point(r->s, pt, sk_hi_value(&kr), sk_bounds[kr.op].hi);
    if (r->esk) {
      const struct memdb_kv *sk = r->s->has_sk ? &r->esk_sk : NULL;
      const struct memdb_kv *tsk = r->t->sk.name ? &r->esk_tsk : NULL;
      struct memdb_pos p = memdb_store_seek(r->s, pt, sk, &r->esk_tpk, tsk, r->forward);
      if (r->forward && memdb_pos_cmp(p, lo) > 0)
        lo = p;
      else if (!r->forward && memdb_pos_cmp(p, hi) < 0)
        hi = p;
    }
    /* [lo, hi) in the read's direction: forward from lo, or back from hi. */
    struct memdb_pos p = r->forward ? lo : hi;
    while (r->forward ? memdb_pos_cmp(p, hi) < 0
                     : memdb_seq_prev(q, &p) && memdb_pos_cmp(p, lo) >= 0) {
      int v = visit(r, memdb_seq_at(q, p), e);
      if (v < 0)
        return -1;
      if (v > 0)
        break;
      if (r->forward)
        memdb_seq_next(q, &p);
    }
  }
  return 0;
}

static bool hash_before(const void *entry, const void *ctx) {
  return ((const struct memdb_part *)entry)->hash < *(const uint32_t *)ctx;
}

/* A Scan's Segment and TotalSegments, checked before its other parameters. */
static int scan_segments(const struct tt_ddb_read_request *req, struct tt_backend_error *e) {
  int64_t seg = req->segment, total = req->total_segments ? req->total_segments : 1;
  if (total < 1 || total > 1000000)
    return memdb_validation(e, "1 validation error detected: Value '%lld' at 'totalSegments' "
                               "failed to satisfy constraint: Member must have value less than "
                               "or equal to 1000000 and greater than or equal to 1",
                            (long long)total);
  if (seg < 0 || seg >= total)
    return memdb_validation(e, "The Segment parameter is zero-based and must be less than "
                               "parameter TotalSegments: Segment: %lld is not less than "
                               "TotalSegments: %lld",
                            (long long)seg, (long long)total);
  return 0;
}

static int read_scan(struct rd *r, const struct tt_ddb_read_request *req,
                     struct tt_backend_error *e) {
  int64_t seg = req->segment, total = req->total_segments ? req->total_segments : 1;
  /* Segment s owns the partitions whose key hash falls in
   * [s * 2^32 / total, (s + 1) * 2^32 / total): a contiguous run. */
  uint64_t hlo = ((uint64_t)seg << 32) / (uint64_t)total;
  uint64_t hhi = ((uint64_t)(seg + 1) << 32) / (uint64_t)total;
  const struct memdb_seq *parts = &r->s->parts;
  uint32_t from = (uint32_t)hlo;
  struct memdb_pos pp = memdb_seq_point(parts, hash_before, &from);
  struct memdb_pos first = {0, 0};
  bool resume = false;
  if (r->esk) {
    uint32_t h = memdb_hash(&r->esk_pk);
    if (h < hlo || h >= hhi)
      return memdb_validation(e, "%s: Invalid ExclusiveStartKey. Please use ExclusiveStartKey "
                                 "with correct Segment. TotalSegments: %lld Segment: %lld",
                              esk_invalid, (long long)total, (long long)seg);
    struct memdb_part *pt = memdb_store_part(r->s, &r->esk_pk, &pp);
    if (pt) {
      first = memdb_store_seek(r->s, pt, r->s->has_sk ? &r->esk_sk : NULL, &r->esk_tpk,
                               r->t->sk.name ? &r->esk_tsk : NULL, true);
      resume = true;
    }
  }
  if (memdb_key_paths_check(r->t, r->proj, e) != 0 ||
      memdb_key_paths_check(r->t, r->filter, e) != 0)
    return -1;
  for (; !memdb_seq_is_end(parts, pp); memdb_seq_next(parts, &pp)) {
    const struct memdb_part *pt = memdb_seq_at(parts, pp);
    if (pt->hash >= hhi)
      break;
    struct memdb_pos p = resume ? first : memdb_seq_begin(&pt->entries);
    resume = false;
    int v = 0;
    for (; !memdb_seq_is_end(&pt->entries, p); memdb_seq_next(&pt->entries, &p))
      if ((v = visit(r, memdb_seq_at(&pt->entries, p), e)) != 0)
        break;
    if (v < 0)
      return -1;
    if (v > 0)
      break;
  }
  return 0;
}

/* Read units of `bytes` read at once: the total rounded up to 4 KB (a
 * Query or Scan is one read of all it read), halved unless consistent. */
static double rd_units(uint64_t bytes, bool consistent) {
  return (double)((bytes + 4095) / 4096) * (consistent ? 1.0 : 0.5);
}

/* ConsumedCapacity of a Query or Scan: the part read (the table, or the
 * index) counts at least one unit, as a read of nothing does; an index
 * read answers Table (its LSI fetches) and the index by name. */
static void rd_consumed(const struct tt_ddb_read_request *req, const struct rd_cap *cap,
                        struct tt_ddb_consumed *cc) {
  const struct memdb_index *ix = cap->ix;
  bool c = req->consistent_read;
  uint64_t main_bytes = ix ? cap->index_bytes : cap->table_bytes;
  double main = rd_units(main_bytes ? main_bytes : 1, c);
  double table = ix ? rd_units(cap->table_bytes, c) : main;
  *cc = (struct tt_ddb_consumed){.set = true,
                                 .total = ix ? main + table : main,
                                 .table = table,
                                 .index = ix ? main : 0,
                                 .index_global = ix && ix->global};
}

int memdb_op_read(struct memdb *m, bool query, const struct tt_ddb_read_request *r,
                  struct tt_ddb_read_result *out, struct tt_backend_error *e) {
  struct rd_cap cap = {0, 0, NULL};
  struct rd rd;
  memset(out, 0, sizeof(*out));
  memset(&rd, 0, sizeof(rd));
  int rc = !query && scan_segments(r, e) != 0 ? -1 : rd_prepare(m, r, query, &rd, e);
  if (rc == 0) {
    rd.out = out;
    rd.units = r->consumed ? &cap : NULL;
    cap.ix = rd.ix;
    /* A page that keeps the items as stored (no projection) decodes them
     * into the result's arena. */
    out->items_in_arena = !rd_projected(&rd) && rd.proj == NULL;
    rc = query ? read_query(&rd, e) : read_scan(&rd, r, e);
  }
  memdb_exprs_free(&rd.x);
  if (rc != 0)
    tt_ddb_read_result_free(out);
  else if (r->consumed)
    rd_consumed(r, &cap, r->consumed);
  return rc;
}
