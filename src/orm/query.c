/* SPDX-License-Identifier: Apache-2.0 */
/* query.c -- Query and Scan of a model over the backend port: typed pages,
 * or items handed to the caller's sink as they are answered. */
#include "orm/query.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "orm/crypt.h"
#include "orm/item.h"
#include "orm/unique.h"
#include "value/cursor.h"

/* ---- validation ------------------------------------------------------------- */

/* Picks the table or index the key conditions address. */
static int choose_target(const struct tt_model *m, const struct tt_orm_query_request *rq,
                         const struct tt_model_index **index, struct tt_error *err) {
  size_t n = rq->key.n;
  if (n < 1 || n > 2)
    return tt_error_set(err, TT_ERR_VALIDATION, "key",
                        "key must list the partition-key equality and at most one sort-key "
                        "condition");
  const struct tt_key_cond_entry *a = &rq->key.e[0], *b = n == 2 ? &rq->key.e[1] : NULL;
  const char *index_name = rq->index;
  if (index_name) {
    *index = tt_model_index_find(m, index_name);
    if (*index == NULL)
      return tt_error_set(err, TT_ERR_VALIDATION, "index", "model %s has no index called so",
                          m->name);
    const char *pk = (*index)->partition->name;
    const char *sk = (*index)->sort ? (*index)->sort->name : NULL;
    bool ok = (a->op == TT_COND_EQ && strcmp(a->attr, pk) == 0 &&
               (!b || (sk && strcmp(b->attr, sk) == 0))) ||
              (b && b->op == TT_COND_EQ && strcmp(b->attr, pk) == 0 && sk &&
               strcmp(a->attr, sk) == 0);
    if (!ok)
      return tt_error_set(err, TT_ERR_VALIDATION, "key",
                          "the key conditions do not match the keys of index %s (%s%s%s)",
                          index_name, pk, sk ? ", " : "", sk ? sk : "");
    return 0;
  }
  /* Try the entries as (partition, sort) in both orders. */
  struct tt_error first;
  tt_error_clear(&first);
  for (int order = 0; order < 2; order++) {
    const struct tt_key_cond_entry *p = order == 0 ? a : b;
    const struct tt_key_cond_entry *s = order == 0 ? b : a;
    if (p == NULL || p->op != TT_COND_EQ)
      continue;
    const struct tt_model_index *ix = NULL;
    struct tt_error e;
    if (tt_model_choose_index(m, p->attr, s ? s->attr : NULL, &ix, &e) == 0) {
      *index = ix;
      return 0;
    }
    if (first.code == TT_OK)
      first = e;
  }
  if (first.code != TT_OK) {
    *err = first;
    return -1;
  }
  return tt_error_set(err, TT_ERR_VALIDATION, "key",
                      "key needs an equality (op \"=\") on a partition key");
}

/* The attribute names a LastEvaluatedKey of this target holds (the
 * table's keys and the index's, each once). Returns how many. */
static size_t key_names(const struct tt_orm_query_op *op, const char *out[4]) {
  const struct tt_model *m = op->ctx.model;
  const char *names[4] = {m->pk->name, m->sk ? m->sk->name : NULL,
                          op->index ? op->index->partition->name : NULL,
                          op->index && op->index->sort ? op->index->sort->name : NULL};
  size_t n = 0;
  for (size_t i = 0; i < 4; i++) {
    bool dup = names[i] == NULL;
    for (size_t j = 0; j < n && !dup; j++)
      dup = strcmp(out[j], names[i]) == 0;
    if (!dup)
      out[n++] = names[i];
  }
  return n;
}

/* The order of the request as a cursor records it. */
static enum tt_cursor_sort cursor_sort(const struct tt_orm_query_op *op) {
  return op->rq.order == TT_ORDER_ASC    ? TT_CURSOR_SORT_ASC
         : op->rq.order == TT_ORDER_DESC ? TT_CURSOR_SORT_DESC
                                         : TT_CURSOR_SORT_NONE;
}

static bool cursor_fits(struct tt_orm_query_op *op, const struct tt_av *key) {
  const struct tt_model *m = op->ctx.model;
  const char *names[4];
  size_t want = key_names(op, names);
  for (size_t i = 0; i < want; i++) {
    const struct tt_av *v = tt_av_map_get(key, names[i]);
    const struct tt_model_attr *a = tt_model_attr_find(m, names[i], strlen(names[i]));
    if (v == NULL || a == NULL || v->type != a->type)
      return false;
  }
  return key->type == TT_AV_M && key->len == want;
}

int tt_orm_query_check_crypt(const struct tt_orm *orm, const struct tt_model *m,
                             const struct tt_key_cond *key, const struct tt_cond *filter,
                             const struct tt_select *select, struct tt_error *err) {
  if (tt_orm_crypt_check(orm, m, err) != 0 || tt_orm_crypt_check_key(m, key, err) != 0 ||
      tt_orm_crypt_check_condition(m, filter, "filter", err) != 0)
    return -1;
  return tt_orm_crypt_check_select(m, select, "select", err);
}

int tt_orm_query_target(const struct tt_model *m, bool scan, const struct tt_orm_query_request *rq,
                        const struct tt_model_index **index, struct tt_error *err) {
  *index = NULL;
  if (tt_orm_check_select(m, &rq->select, "select", err) != 0)
    return -1;
  if (scan) {
    if (rq->index && (*index = tt_model_index_find(m, rq->index)) == NULL)
      return tt_error_set(err, TT_ERR_VALIDATION, "index", "model %s has no index called so",
                          m->name);
  } else if (choose_target(m, rq, index, err) != 0) {
    return -1;
  }
  if (rq->consistent && *index && (*index)->kind == TT_INDEX_GSI)
    return tt_error_set(err, TT_ERR_VALIDATION, "consistent",
                        "consistent reads are not supported on global secondary indexes");
  return 0;
}

/* The request's limits, then the ORM's checks (before any I/O). */
static int check_request(struct tt_orm_query_op *op, struct tt_error *err) {
  struct tt_orm_query_request *rq = &op->rq;
  if (rq->segments == 0)
    rq->segments = 1;
  if (rq->has_limit && (rq->limit < 1 || rq->limit > TT_ORM_MAX_LIMIT))
    return tt_error_set(err, TT_ERR_VALIDATION, "limit",
                        "limit must be a whole number from 1 to %d", TT_ORM_MAX_LIMIT);
  if (rq->segments > TT_ORM_MAX_SEGMENTS)
    return tt_error_set(err, TT_ERR_VALIDATION, "segments",
                        "segments must be a whole number from 1 to %d", TT_ORM_MAX_SEGMENTS);
  /* What only a typed request can ask: a query's segments, a scan's key
   * conditions or order. */
  const char *stray = op->scan ? (rq->key.n ? "key" : rq->order ? "order" : NULL)
                               : (rq->segments > 1 ? "segments" : NULL);
  if (stray)
    return tt_error_set(err, TT_ERR_VALIDATION, stray, "%s is not a %s parameter", stray,
                        op->scan ? "scan" : "query");
  return tt_orm_query_check_crypt(op->ctx.orm, op->ctx.model, &rq->key, rq->filter,
                                  &rq->select, err) != 0 ||
                 tt_orm_query_target(op->ctx.model, op->scan, rq, &op->index, err) != 0
             ? -1
             : 0;
}

/* Decodes the DMS cursor of reader `seg` (n bytes of text) into where it
 * starts; an empty one starts at the beginning. */
static int read_cursor(struct tt_orm_query_op *op, const char *text, size_t n, size_t seg,
                       struct tt_error *err) {
  struct tt_cursor c;
  bool multi = op->rq.segments > 1;
  const char *want_index = op->index ? op->index->name : NULL;
  int rc = tt_cursor_decode(text, n, &c, err);
  bool started = rc == 0 && c.key.type == TT_AV_M && c.key.len > 0;
  bool index_ok = multi ? (c.index == NULL) == (want_index == NULL)
                        : (c.index == NULL && want_index == NULL) ||
                              (c.index && want_index && strcmp(c.index, want_index) == 0);
  if (started && (!index_ok || !cursor_fits(op, &c.key) ||
                  (!multi && !tt_cursor_sort_same(c.sort, cursor_sort(op)))))
    rc = tt_error_set(err, TT_ERR_INVALID_CURSOR, "cursor",
                      multi ? "the cursor does not fit this model or index"
                            : "the cursor was made for another model, index or order");
  if (rc == 0 && started) {
    tt_av_free(&op->chains[seg].last_key);
    op->chains[seg].last_key = c.key;
    memset(&c.key, 0, sizeof(c.key));
  }
  tt_cursor_free(&c);
  return rc;
}

/* Cursor: TableTheory's DMS cursor for one reader; for several scan
 * segments, base64url of {"segments": [lastKey | null, ...]} (our own). */
static int parse_cursor(struct tt_orm_query_op *op, struct tt_error *err) {
  const char *token = op->rq.cursor;
  size_t len = op->rq.cursor_len;
  if (token == NULL)
    return 0;
  if (op->rq.segments > 1) {
    /* Segment cursors: "<segment>:<dms cursor>" joined by '.' */
    const char *p = token, *end = token + len;
    while (p < end) {
      const char *dot = memchr(p, '.', (size_t)(end - p));
      size_t n = dot ? (size_t)(dot - p) : (size_t)(end - p);
      char *colon = memchr(p, ':', n);
      char *num_end = NULL;
      long seg = colon ? strtol(p, &num_end, 10) : -1;
      if (colon == NULL || num_end != colon || seg < 0 || (size_t)seg >= op->rq.segments)
        return tt_error_set(err, TT_ERR_INVALID_CURSOR, "cursor",
                            "the cursor does not fit a scan of %zu segments", op->rq.segments);
      if (read_cursor(op, colon + 1, n - (size_t)(colon + 1 - p), (size_t)seg, err) != 0)
        return -1;
      /* A segment named without a key has not been read yet. */
      op->chains[seg].finished = true; /* marks "named" until the loop below */
      p += n + 1;
    }
    /* Segments the cursor does not name were finished. */
    for (size_t i = 0; i < op->rq.segments; i++) {
      op->chains[i].exhausted = !op->chains[i].finished;
      op->chains[i].finished = false;
    }
    return 0;
  }
  return read_cursor(op, token, len, 0, err);
}


int tt_orm_select_with_keys(struct tt_arena *a, const struct tt_select *select,
                            const char *const *keys, size_t nkeys, bool whole,
                            struct tt_select *out, struct tt_error *err) {
  size_t n = select->n;
  const char **paths = tt_arena_alloc(a, (n + nkeys) * sizeof(*paths));
  if (paths == NULL)
    return tt_orm_oom(err);
  memcpy(paths, select->paths, n * sizeof(*paths));
  *out = (struct tt_select){.paths = paths, .n = n};
  for (size_t k = 0; k < nkeys; k++) {
    bool covered = false;
    for (size_t i = 0; i < n; i++) {
      const char *text = paths[i], *name;
      size_t len, written = tt_expr_rest_path_head(text, &name, &len);
      if (len != strlen(keys[k]) || memcmp(name, keys[k], len) != 0)
        continue;
      if (whole && text[written] != '\0')
        return tt_error_set(err, TT_ERR_VALIDATION, "select",
                            "select[%zu]: key attribute %s holds a scalar: select it whole", i,
                            keys[k]);
      covered = true;
    }
    /* Declared names hold no '.', '[' or ']': a path as they are. */
    if (!covered)
      paths[out->n++] = keys[k];
  }
  return 0;
}

/* Fills op->base: the expressions, placeholders and settings every page
 * request shares. */
static int build_request(struct tt_orm_query_op *op, struct tt_error *err) {
  const struct tt_model *m = op->ctx.model;
  struct tt_ddb_read_request *r = &op->base;
  char *text = NULL;
  memset(r, 0, sizeof(*r));
  r->table = m->table;
  r->index = op->index ? op->index->name : NULL;
  if (!op->scan) {
    if (tt_expr_build_key_condition(op->builder, &op->rq.key, "key", &op->key_text, err) != 0)
      return -1;
    r->key_condition = op->key_text;
    r->backward = op->rq.order == TT_ORDER_DESC;
  }
  if (op->rq.filter &&
      tt_expr_build_condition(op->builder, op->rq.filter, "filter", &op->filter_text, err) != 0)
    return -1;
  /* Guard items of unique attributes (orm/unique.h) are not items of the
   * model: leave them out of every query and scan. */
  struct tt_cond guards;
  if (tt_unique_query_filter(m, &guards)) {
    int grc = tt_expr_build_condition(op->builder, &guards, "filter", &text, err);
    if (grc != 0)
      return -1;
    struct tt_buf both;
    tt_buf_init(&both, 0);
    grc = op->filter_text ? tt_buf_printf(&both, "(%s) AND %s", op->filter_text, text)
                          : tt_buf_puts(&both, text);
    free(text);
    free(op->filter_text);
    op->filter_text = both.data; /* the buffer's text is ours now */
    if (grc != 0 || op->filter_text == NULL)
      return tt_orm_oom(err);
  }
  r->filter = op->filter_text;
  if (op->rq.count_only) {
    r->select = TT_DDB_SELECT_COUNT;
  } else if (op->rq.select.n) {
    /* The select plus the key attributes it leaves out: an answer that ends
     * inside a page needs the last item's key for its cursor
     * (tt_orm_item_write answers only what `select` names). */
    const char *keys[4];
    struct tt_select all;
    if (tt_orm_select_with_keys(op->ctx.arena, &op->rq.select, keys, key_names(op, keys), true,
                                &all, err) != 0 ||
        tt_expr_build_projection(op->builder, &all, "select", &op->projection_text, err) != 0)
      return -1;
    r->projection = op->projection_text;
  }
  r->consistent_read = op->rq.consistent;
  if (op->rq.segments > 1)
    r->total_segments = (int64_t)op->rq.segments;
  return tt_orm_take_placeholders(op->builder, &op->names, &op->values, &r->names, &r->values,
                                  err);
}

/* ---- reading ------------------------------------------------------------------ */

static void finish_all(struct tt_orm_query_op *op);
static void read_page(struct tt_orm_chain *ch);

static size_t produced(const struct tt_orm_query_op *op, const struct tt_orm_chain *ch) {
  return op->rq.count_only ? (size_t)ch->count : ch->n_items;
}

/* Shares what is left of the limit among the readers that still have data,
 * so parallel segments never read past the limit and the answer holds
 * exactly `limit` items unless the data ends. Returns how many readers got
 * a share. */
static size_t share_limit(struct tt_orm_query_op *op) {
  size_t have = 0, open = 0;
  for (size_t i = 0; i < op->nchains; i++) {
    have += produced(op, &op->chains[i]);
    open += !op->chains[i].exhausted;
  }
  if (!op->rq.has_limit || have >= op->rq.limit || open == 0)
    return 0;
  size_t left = op->rq.limit - have, k = 0, started = 0;
  for (size_t i = 0; i < op->nchains; i++) {
    struct tt_orm_chain *ch = &op->chains[i];
    if (ch->exhausted)
      continue;
    size_t share = left / open + (k < left % open ? 1 : 0);
    k++;
    ch->quota = produced(op, ch) + share;
    ch->finished = share == 0;
    started += share > 0;
  }
  return started;
}

/* Whether one more reader may start a page: the pages being read (each up
 * to TT_ORM_PAGE_BYTES) must fit what is left of the budget, so parallel
 * segments neither hold nor read much more than the answer can take. One
 * page may always be read. Counts buffer no items. */
static size_t room(const struct tt_orm_query_op *op) {
  return op->budget > op->bytes ? op->budget - op->bytes : 0;
}

static bool may_start(const struct tt_orm_query_op *op) {
  return op->inflight == 0 || op->rq.count_only ||
         op->inflight + 1 <= room(op) / TT_ORM_PAGE_BYTES;
}

/* Starts pages of the readers that want one, as far as may_start allows;
 * when no page is being read and none may start, the round is over. A
 * reader that completes at once re-enters: the outer call goes on. */
static void pump(struct tt_orm_query_op *op) {
  if (op->pumping) {
    op->repump = true;
    return;
  }
  op->pumping = true;
  do {
    op->repump = false;
    for (size_t i = 0; i < op->nchains && may_start(op); i++) {
      struct tt_orm_chain *ch = &op->chains[i];
      if (ch->busy || ch->finished || ch->exhausted || op->failed || op->full)
        continue;
      ch->busy = true;
      op->inflight++;
      read_page(ch);
    }
  } while (op->repump);
  op->pumping = false;
  if (op->inflight > 0)
    return;
  /* The round is over: the readers share what is left of the limit, or the
   * answer is complete. */
  if (!op->failed && !op->full && op->nchains > 1 && share_limit(op) > 0)
    pump(op);
  else
    finish_all(op);
}

/* A reader stops for this round: it has what it wanted, or the data ended,
 * or the answer is full. */
static void chain_done(struct tt_orm_chain *ch) {
  struct tt_orm_query_op *op = ch->q;
  ch->finished = true;
  if (ch->span) {
    tt_span_int(ch->span, "tabletheoryd.scan.items", (int64_t)ch->n_items);
    tt_span_int(ch->span, "tabletheoryd.scan.scanned_count", (int64_t)ch->scanned);
    if (op->failed || op->ctx.join->canceled)
      tt_span_status(ch->span, TT_SPAN_ERROR, op->failed ? "Failed" : "RequestCanceled");
    tt_span_end(ch->span);
    ch->span = NULL;
  }
  ch->busy = false;
  op->inflight--;
  pump(op);
}

static void page_failed(struct tt_orm_query_op *op, const struct tt_error *err) {
  if (op->failed)
    return;
  op->failed = true;
  tt_orm_fail(op->ctx.result, err);
}

/* Keeps a copy of one stored item of a page for the page, and says in
 * *size how much answer text it adds: its logical JSON, the comma before
 * it, and for the first item of a single reader the answer's opening (the
 * HTTP answer's bytes, which the budget counts). */
static int keep_item(struct tt_orm_chain *ch, const struct tt_av *item, size_t *size,
                     struct tt_error *err) {
  struct tt_orm_query_op *op = ch->q;
  tt_buf_reset(&op->scratch);
  if (tt_orm_item_write(&op->scratch, op->ctx.model, item, &op->rq.select, err) != 0)
    return -1;
  if (ch->n_kept == ch->cap_kept) {
    size_t cap = ch->cap_kept ? 2 * ch->cap_kept : 16;
    struct tt_av *grown = realloc(ch->kept, cap * sizeof(*grown));
    if (grown == NULL)
      return tt_orm_oom(err);
    ch->kept = grown;
    ch->cap_kept = cap;
  }
  if (tt_av_clone(&ch->kept[ch->n_kept], item) != 0)
    return tt_orm_oom(err);
  ch->n_kept++;
  *size = op->scratch.len + (ch->n_items > 0 ? 1 : op->nchains == 1 ? strlen(TT_ORM_ITEMS_OPEN) : 0);
  return 0;
}

/* Answers one stored item of a page: to the sink, or kept for the page. */
static int add_item(struct tt_orm_chain *ch, const struct tt_av *item, size_t *size) {
  struct tt_orm_query_op *op = ch->q;
  struct tt_error err;
  int rc = op->sink ? op->sink->add(op->sink->arg, (size_t)(ch - op->chains), op->nchains, item,
                                    size, &err)
                    : keep_item(ch, item, size, &err);
  if (rc != 0) {
    page_failed(op, &err);
    return -1;
  }
  ch->n_items++;
  return 0;
}

/* Takes back the item add_item answered last. */
static void take_back(struct tt_orm_chain *ch) {
  struct tt_orm_query_op *op = ch->q;
  ch->n_items--;
  if (op->sink)
    op->sink->take_back(op->sink->arg, (size_t)(ch - op->chains));
  else
    tt_av_free(&ch->kept[--ch->n_kept]);
}

/* Answers a page's items (read only) while they fit the budget. Returns how
 * many were answered (all of them unless the budget or a failure ended the
 * page). An item that does not fit is taken back. */
static size_t add_page(struct tt_orm_chain *ch, const struct tt_av *items, size_t n) {
  struct tt_orm_query_op *op = ch->q;
  for (size_t i = 0; i < n; i++) {
    size_t size;
    if (op->failed || add_item(ch, &items[i], &size) != 0)
      return i;
    if (op->answered > 0 && size > room(op)) {
      take_back(ch);
      return i;
    }
    op->bytes += size;
    op->answered++;
    if (i == 0 && n > 1 && op->sink && size < ((size_t)-1 / 2) / n) {
      /* A 1 MB scan page then need not double its text a dozen times. */
      size_t want = size * n + size * n / 8;
      op->sink->reserve(op->sink->arg, (size_t)(ch - op->chains),
                        want < room(op) ? want : room(op));
    }
  }
  return n;
}

/* The key of a stored item as a LastEvaluatedKey of this target. */
static int key_of(struct tt_orm_query_op *op, const struct tt_av *item, struct tt_av *out,
                  struct tt_error *err) {
  const char *names[4];
  size_t n = key_names(op, names);
  if (tt_av_map(out, 0) != 0)
    return tt_orm_oom(err);
  for (size_t i = 0; i < n; i++) {
    const struct tt_av *v = tt_av_map_get(item, names[i]);
    if (v == NULL) {
      tt_av_free(out);
      return tt_error_set(err, TT_ERR_INTERNAL, NULL,
                          "an answered item lacks key attribute %s", names[i]);
    }
    if (tt_orm_map_put_copy(out, names[i], strlen(names[i]), v) != 0) {
      tt_av_free(out);
      return tt_orm_oom(err);
    }
  }
  return 0;
}

/* The budget ended the answer inside a page after its first `k` items: the
 * reader stops right after the last of them (or, when none was answered,
 * where the page began, to read it again next time), never at the page's
 * LastEvaluatedKey, and is not exhausted even when the page was the last. */
static void cut(struct tt_orm_chain *ch, const struct tt_av *items, size_t k) {
  struct tt_orm_query_op *op = ch->q;
  op->full = true;
  tt_av_free(&ch->next_key);
  if (k > 0) {
    struct tt_av key;
    struct tt_error err;
    if (key_of(op, &items[k - 1], &key, &err) != 0) {
      page_failed(op, &err);
    } else {
      tt_av_free(&ch->last_key);
      ch->last_key = key;
    }
  }
  chain_done(ch);
}

/* After a page's items: where the next page starts, and whether to read it. */
static void page_rest(struct tt_orm_chain *ch) {
  tt_av_free(&ch->last_key);
  ch->last_key = ch->next_key;
  memset(&ch->next_key, 0, sizeof(ch->next_key));
  if (ch->last_key.type != TT_AV_M || ch->last_key.len == 0)
    ch->exhausted = true;
  /* Without a limit a query answers one page; a count counts everything. */
  struct tt_orm_query_op *op = ch->q;
  if (!ch->exhausted && !op->failed && !op->full &&
      (op->rq.has_limit ? produced(op, ch) < ch->quota : op->rq.count_only)) {
    read_page(ch);
    return;
  }
  chain_done(ch);
}

/* Answers a page's items, then goes on (page_rest) or, when the budget
 * ended the answer inside the page, stops there (cut). */
static void answer_page(struct tt_orm_chain *ch, const struct tt_av *items, size_t n) {
  size_t k = add_page(ch, items, n);
  if (k < n && !ch->q->failed)
    cut(ch, items, k);
  else
    page_rest(ch);
}

static void free_page(struct tt_orm_chain *ch) {
  for (size_t i = 0; i < ch->n_page_items; i++)
    tt_av_free(&ch->page_items[i]);
  free(ch->page_items);
  ch->page_items = NULL;
  ch->n_page_items = 0;
}

static void page_opened_cb(void *arg, const struct tt_error *err) {
  struct tt_orm_chain *ch = arg;
  struct tt_orm_query_op *op = ch->q;
  /* The items are ours until answered: answering may finish the request,
   * which frees the readers. */
  struct tt_av *items = ch->page_items;
  size_t total = ch->n_page_items, n = total;
  ch->page_items = NULL;
  ch->n_page_items = 0;
  if (err != NULL) {
    page_failed(op, err);
    tt_join_cancel(op->ctx.join); /* the other segments stop too */
    n = 0;
  }
  answer_page(ch, items, n);
  for (size_t i = 0; i < total; i++)
    tt_av_free(&items[i]);
  free(items);
}

/* An encrypted model's page: its items moved to ch->page_items (opening
 * envelopes replaces values in place: the items must be ours), their
 * envelopes opened (one KMS Decrypt per encrypted value), then answered. */
static void open_page(struct tt_orm_chain *ch, struct tt_ddb_read_result *page) {
  struct tt_orm_query_op *op = ch->q;
  struct tt_error err;
  struct tt_orm_crypt *c = NULL;
  if (tt_ddb_read_result_own_items(page) == 0) {
    ch->page_items = page->items;
    ch->n_page_items = page->n_items;
    page->items = NULL;
    page->n_items = 0;
    c = tt_orm_crypt_new(&op->ctx, false);
  }
  if (c == NULL) {
    tt_orm_oom(&err);
    goto fail;
  }
  for (size_t i = 0; i < ch->n_page_items; i++)
    if (tt_orm_crypt_add_item_of(c, op->ctx.model, &ch->page_items[i], &err) != 0)
      goto fail;
  tt_orm_crypt_run_then(c, page_opened_cb, ch);
  return;
fail:
  page_failed(op, &err);
  free_page(ch);
  page_rest(ch);
}

static void page_cb(struct tt_client_call *call) {
  struct tt_orm_chain *ch = call->arg;
  struct tt_orm_query_op *op = ch->q;
  if (call->bc.status != 0) {
    if (!op->failed) {
      op->failed = true;
      tt_orm_fail_backend(op->ctx.result, &call->bc.error, op->ctx.model->name);
      /* The other segments stop too; they are still joined. */
      tt_join_cancel(op->ctx.join);
    }
    chain_done(ch);
    return;
  }
  struct tt_ddb_read_result *page = &call->bc.read_out;
  ch->count += page->count;
  ch->scanned += page->scanned_count;
  tt_av_free(&ch->next_key);
  ch->next_key = page->last_key;
  memset(&page->last_key, 0, sizeof(page->last_key));
  if (page->n_items > 0 && op->full && !op->failed) {
    /* Another segment filled the answer while this page was read: none of
     * it is answered (nor decrypted); it is read again next time. */
    cut(ch, page->items, 0);
    return;
  }
  if (page->n_items > 0 && !op->failed && tt_orm_crypt_model(op->ctx.model))
    open_page(ch, page);
  else
    answer_page(ch, page->items, page->n_items);
}

static void read_page(struct tt_orm_chain *ch) {
  struct tt_orm_query_op *op = ch->q;
  ch->req = op->base;
  if (ch->last_key.type == TT_AV_M && ch->last_key.len)
    ch->req.start_key = &ch->last_key;
  if (op->rq.has_limit)
    ch->req.limit = (int64_t)(ch->quota - produced(op, ch));
  if (ch->segment >= 0)
    ch->req.segment = ch->segment;
  struct tt_client_call *call = &ch->call;
  call->request_id = op->ctx.request_id;
  call->model = op->ctx.model->name;
  struct tt_join *join = op->ctx.join;
  if (ch->segment >= 0 && ch->span == NULL) {
    /* A parallel scan's segment: its pages nest in one span. */
    ch->span = tt_span_start(&join->trace, "scan segment", TT_SPAN_INTERNAL);
    tt_span_int(ch->span, "tabletheoryd.scan.segment", ch->segment);
    tt_span_int(ch->span, "tabletheoryd.scan.total_segments", (int64_t)op->nchains);
    tt_span_str(ch->span, "tabletheoryd.model", op->ctx.model->name);
  }
  struct tt_trace_ctx outer = join->trace;
  if (ch->span)
    join->trace = ch->span->ctx;
  int started = tt_client_start_read(op->ctx.orm->client, join, call,
                                     op->scan ? TT_DDB_SCAN : TT_DDB_QUERY, &ch->req, page_cb,
                                     ch);
  join->trace = outer;
  if (started != 0)
    page_cb(call); /* refused: the reader fails as its completion would */
}

/* Frees what the op holds and finishes it. */
static void op_finish(struct tt_orm_query_op *op) {
  for (size_t i = 0; i < op->nchains; i++) {
    tt_av_free(&op->chains[i].last_key);
    tt_av_free(&op->chains[i].next_key);
    for (size_t k = 0; k < op->chains[i].n_kept; k++)
      tt_av_free(&op->chains[i].kept[k]);
    free(op->chains[i].kept);
    op->chains[i].kept = NULL;
    op->chains[i].n_kept = 0;
    free_page(&op->chains[i]);
  }
  tt_buf_free(&op->scratch);
  free(op->key_text);
  free(op->filter_text);
  free(op->projection_text);
  op->key_text = op->filter_text = op->projection_text = NULL;
  tt_av_free(&op->names);
  tt_av_free(&op->values);
  tt_expr_builder_free(op->builder);
  op->builder = NULL;
  tt_orm_query_request_clear(&op->rq);
  tt_orm_ctx_finish(&op->ctx);
}

void tt_orm_query_request_clear(struct tt_orm_query_request *rq) {
  tt_key_cond_clear(&rq->key);
  tt_cond_free(rq->filter);
  rq->filter = NULL;
}

/* Hands the readers' items (unless the sink took them), the counts and the
 * cursor back as the page. */
static void finish_all(struct tt_orm_query_op *op) {
  struct tt_orm_result *r = op->ctx.result;
  if (op->failed) {
    op_finish(op);
    return;
  }
  struct tt_orm_page *page = &r->page;
  uint64_t count = 0, scanned = 0;
  size_t n_items = 0;
  for (size_t i = 0; i < op->nchains; i++) {
    count += op->chains[i].count;
    scanned += op->chains[i].scanned;
    n_items += op->chains[i].n_items;
  }
  int rc = 0;
  memset(page, 0, sizeof(*page));
  page->count_only = op->rq.count_only;
  page->count = op->rq.count_only ? count : n_items;
  page->scanned = scanned;
  if (op->sink == NULL && n_items > 0 &&
      (page->items = malloc(n_items * sizeof(*page->items))) == NULL)
    rc = -1;
  for (size_t i = 0; rc == 0 && page->items && i < op->nchains; i++) {
    struct tt_orm_chain *ch = &op->chains[i];
    if (ch->n_kept > 0)
      memcpy(page->items + page->n_items, ch->kept, ch->n_kept * sizeof(*ch->kept));
    page->n_items += ch->n_kept;
    ch->n_kept = 0; /* moved */
  }
  /* A count stopped by its limit carries a cursor, as DynamoDB's Select=COUNT
   * answers a LastEvaluatedKey, so the caller can count on from there. */
  struct tt_buf cur;
  tt_buf_init(&cur, 0);
  for (size_t i = 0; i < op->nchains; i++) {
    const struct tt_av *last = &op->chains[i].last_key;
    if (op->chains[i].exhausted)
      continue;
    if (op->nchains > 1)
      rc |= tt_buf_printf(&cur, "%s%zu:", cur.len ? "." : "", i);
    if (last->type == TT_AV_M)
      rc |= tt_cursor_encode(&cur, last, op->index ? op->index->name : NULL, cursor_sort(op));
  }
  if (cur.len)
    page->cursor = tt_buf_steal(&cur, NULL);
  tt_buf_free(&cur);
  if (rc != 0) {
    struct tt_error e;
    tt_error_set(&e, TT_ERR_INTERNAL, NULL, "could not encode the answer");
    tt_orm_fail(r, &e);
  } else {
    r->status = 0;
    r->answer = TT_ORM_ANSWER_PAGE;
    r->model = tt_model_ref(op->ctx.model);
  }
  op_finish(op);
}

static int fail_now(struct tt_orm_query_op *op, struct tt_error *err) {
  tt_orm_fail(op->ctx.result, err);
  op_finish(op);
  return 0;
}

static int query_start_run(struct tt_orm_ctx *ctx) {
  struct tt_orm_query_op *op = (struct tt_orm_query_op *)ctx;
  struct tt_error err;
  tt_error_clear(&err);
  tt_buf_init(&op->scratch, 0);
  op->builder = tt_expr_builder_new();
  if (op->builder == NULL || check_request(op, &err) != 0)
    return fail_now(op, op->builder ? &err : (tt_orm_oom(&err), &err));
  op->budget = op->ctx.orm->max_response_bytes ? op->ctx.orm->max_response_bytes
                                                : TT_ORM_DEFAULT_RESPONSE_BYTES;
  op->nchains = op->scan ? op->rq.segments : 1;
  op->chains = tt_arena_alloc(op->ctx.arena, op->nchains * sizeof(*op->chains));
  if (op->chains == NULL) {
    op->nchains = 0;
    tt_orm_oom(&err);
    return fail_now(op, &err);
  }
  for (size_t i = 0; i < op->nchains; i++) {
    op->chains[i].q = op;
    op->chains[i].segment = op->nchains > 1 ? (int)i : -1;
  }
  if (parse_cursor(op, &err) != 0 || build_request(op, &err) != 0)
    return fail_now(op, &err);
  for (size_t i = 0; i < op->nchains; i++)
    op->chains[i].quota = op->rq.has_limit ? 0 : SIZE_MAX;
  if (op->rq.has_limit)
    share_limit(op);
  pump(op);
  return 0;
}

int tt_orm_query_start(struct tt_orm_query_op *op) {
  return tt_orm_ctx_start(&op->ctx, query_start_run);
}
