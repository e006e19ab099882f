/* SPDX-License-Identifier: Apache-2.0 */
/* query.c -- POST /v1/models/{m}/query and /scan: the body read into the
 * ORM's typed request (its errors in the API's order), the ORM's items
 * rendered as they are answered, one text per reader (parallel scan
 * segments), joined into the answer with the page's counts and cursor. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/handlers.h"
#include "api/item_io.h"
#include "orm/cond.h"
#include "orm/crypt.h"
#include "orm/item.h"
#include "orm/query.h"
#include "value/json_exact.h"

/* A query and the texts of its readers' items. */
struct query_job {
  struct tt_orm_query_op op; /* first */
  struct tt_orm_page_sink sink;
  struct reader_text {
    struct tt_buf items; /* comma-separated items; a single reader's after the
                          * answer's opening, so that it becomes the answer */
    size_t n_items;
    size_t before; /* the length before the last item */
  } *readers;
  size_t n_readers;
};

static int add_item(void *arg, size_t reader, size_t n_readers, const struct tt_av *item,
                    size_t *size, struct tt_error *err) {
  struct query_job *j = arg;
  if (j->readers == NULL) {
    j->readers = calloc(n_readers, sizeof(*j->readers));
    if (j->readers == NULL)
      return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
    j->n_readers = n_readers;
  }
  struct reader_text *t = &j->readers[reader];
  t->before = t->items.len;
  int rc = t->n_items > 0    ? tt_buf_append(&t->items, ",", 1)
           : n_readers == 1 ? tt_buf_puts(&t->items, TT_ORM_ITEMS_OPEN)
                            : 0;
  if (rc != 0)
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
  if (tt_orm_item_write(&t->items, j->op.ctx.model, item, &j->op.rq.select, err) != 0)
    return -1;
  t->n_items++;
  *size = t->items.len - t->before;
  return 0;
}

static void take_back(void *arg, size_t reader) {
  struct reader_text *t = &((struct query_job *)arg)->readers[reader];
  t->items.len = t->before;
  t->items.data[t->before] = '\0';
  t->n_items--;
}

static void reserve(void *arg, size_t reader, size_t bytes) {
  struct reader_text *t = &((struct query_job *)arg)->readers[reader];
  (void)tt_buf_reserve(&t->items, bytes);
}

/* The answer: the readers' texts (a single reader's without a copy), then
 * the counts and the cursor. */
static int page_text(struct query_job *j, const struct tt_orm_page *p, struct tt_buf *b) {
  int rc = 0;
  if (p->count_only) {
    rc = tt_buf_puts(b, "{");
  } else if (j->n_readers == 1 && j->readers[0].n_items > 0) {
    *b = j->readers[0].items;
    tt_buf_init(&j->readers[0].items, 0);
  } else {
    /* Each reader's text is released once copied: the copy never holds
     * much more than one answer. */
    size_t total = sizeof(TT_ORM_ITEMS_OPEN) + j->n_readers;
    for (size_t i = 0; i < j->n_readers; i++)
      total += j->readers[i].items.len;
    rc |= tt_buf_reserve(b, total + 96);
    rc |= tt_buf_puts(b, TT_ORM_ITEMS_OPEN);
    bool first = true;
    for (size_t i = 0; i < j->n_readers; i++) {
      if (j->readers[i].n_items == 0)
        continue;
      rc |= first ? 0 : tt_buf_puts(b, ",");
      rc |= tt_buf_append(b, j->readers[i].items.data, j->readers[i].items.len);
      tt_buf_free(&j->readers[i].items);
      first = false;
    }
  }
  if (!p->count_only)
    rc |= tt_buf_puts(b, "],");
  rc |= tt_buf_printf(b, "\"count\":%" PRIu64 ",\"scanned_count\":%" PRIu64 ",\"cursor\":",
                      p->count, p->scanned);
  return rc | (p->cursor ? tt_buf_printf(b, "\"%s\"}", p->cursor) : tt_buf_puts(b, "null}"));
}

static void page_answer(struct tt_request *req, struct tt_orm_result *r, void *arg) {
  struct query_job *j = arg;
  struct tt_buf b;
  tt_buf_init(&b, 0);
  if (r->status != 0 || r->answer != TT_ORM_ANSWER_PAGE) {
    tt_request_respond_result(req, r);
  } else if (page_text(j, &r->page, &b) != 0) {
    tt_request_fail(req, TT_ERR_INTERNAL, NULL, "could not encode the answer");
  } else {
    tt_request_respond_buf(req, 200, &b);
  }
  tt_buf_free(&b);
  for (size_t i = 0; i < j->n_readers; i++)
    tt_buf_free(&j->readers[i].items);
  free(j->readers);
}

/* Reads a query or scan body into *rq; the errors in the order the API
 * has always answered them (item_io.h). */
static int read_request(const struct tt_orm *orm, const struct tt_model *m, struct tt_arena *arena,
                        const json_t *body,
                        bool scan, struct tt_orm_query_request *rq, struct tt_error *err) {
  static const char *const query_members[] = {"index", "filter", "select", "limit", "consistent",
                                              "cursor", "count", "key", "order", NULL};
  static const char *const scan_members[] = {"index", "filter", "select", "limit", "consistent",
                                             "cursor", "count", "segments", NULL};
  json_t *v;
  const json_t *key = json_object_get(body, "key");
  memset(rq, 0, sizeof(*rq));
  /* Encrypted attributes first: the key's, the filter's (whose own errors
   * are the ORM's to answer where it builds it), the select's. */
  if (tt_orm_crypt_check(orm, m, err) != 0)
    return -1;
  struct tt_cond *names = tt_orm_cond_names(key);
  if (names == NULL)
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
  int rc = tt_orm_crypt_check_condition(m, names, "key", err);
  tt_cond_free(names);
  if (rc != 0 ||
      tt_orm_cond_read(m, json_object_get(body, "filter"), "filter", &rq->filter, err) != 0 ||
      tt_orm_crypt_check_condition(m, rq->filter, "filter", err) != 0 ||
      tt_api_select_crypt(m, json_object_get(body, "select"), err) != 0)
    return -1;
  if (tt_api_check_members(body, scan ? scan_members : query_members,
                           scan ? "not a scan parameter" : "not a query parameter", err) != 0)
    return -1;
  v = json_object_get(body, "limit");
  if (v && !json_is_null(v)) {
    int64_t lim = 0;
    if (tt_json_integer(v, &lim) != 0 || lim < 1 || lim > TT_ORM_MAX_LIMIT)
      return tt_error_set(err, TT_ERR_VALIDATION, "limit",
                          "limit must be a whole number from 1 to %d", TT_ORM_MAX_LIMIT);
    rq->has_limit = true;
    rq->limit = (size_t)lim;
  }
  if (tt_api_bool_member(body, "count", "count", &rq->count_only, err) != 0 ||
      tt_api_bool_member(body, "consistent", "consistent", &rq->consistent, err) != 0)
    return -1;
  v = json_object_get(body, "order");
  if (v) {
    const char *o = json_string_value(v);
    if (o && strcasecmp(o, "asc") == 0)
      rq->order = TT_ORDER_ASC;
    else if (o && strcasecmp(o, "desc") == 0)
      rq->order = TT_ORDER_DESC;
    else
      return tt_error_set(err, TT_ERR_VALIDATION, "order", "order must be asc or desc");
  }
  if (tt_orm_select_from_json(m, json_object_get(body, "select"), "select", arena, &rq->select,
                              err) != 0)
    return -1;
  rq->segments = 1;
  v = json_object_get(body, "segments");
  if (v) {
    int64_t n = 0;
    if (tt_json_integer(v, &n) != 0 || n < 1 || n > TT_ORM_MAX_SEGMENTS)
      return tt_error_set(err, TT_ERR_VALIDATION, "segments",
                          "segments must be a whole number from 1 to %d", TT_ORM_MAX_SEGMENTS);
    rq->segments = (size_t)n;
  }
  rq->index = json_string_value(json_object_get(body, "index"));
  const struct tt_model_index *index;
  if ((!scan && tt_orm_key_cond_shape(key, &rq->key, err) != 0) ||
      tt_orm_query_target(m, scan, rq, &index, err) != 0)
    return -1;
  v = json_object_get(body, "cursor");
  if (v && !json_is_null(v) &&
      (rq->cursor = tt_json_string_text(v, &rq->cursor_len)) == NULL)
    return tt_error_set(err, TT_ERR_INVALID_CURSOR, "cursor", "cursor must be a string");
  /* Their own errors are the ORM's to answer where it builds them. */
  if (!scan && tt_orm_key_cond_type(m, key, &rq->key, err) != 0 && rq->key.error == NULL)
    return -1;
  return 0;
}

static void start(struct tt_request *req, bool scan) {
  const struct tt_model *m = tt_api_path_model(req);
  json_t *body = m ? tt_request_json_body(req, true) : NULL;
  struct query_job *j = body ? tt_api_orm_job(req, sizeof(*j), m, body, page_answer) : NULL;
  if (j == NULL)
    return;
  j->sink = (struct tt_orm_page_sink){.add = add_item, .take_back = take_back,
                                      .reserve = reserve, .arg = j};
  j->op.sink = &j->sink;
  j->op.scan = scan;
  tt_api_query_start(&j->op, body);
}

int tt_api_query_start(struct tt_orm_query_op *op, const json_t *body) {
  struct tt_error err;
  if (read_request(op->ctx.orm, op->ctx.model, op->ctx.arena, body, op->scan, &op->rq, &err) == 0)
    return tt_orm_query_start(op);
  tt_orm_query_request_clear(&op->rq);
  return tt_orm_ctx_refuse(&op->ctx, &err);
}

void tt_handle_query(struct tt_request *req) { start(req, false); }

void tt_handle_scan(struct tt_request *req) { start(req, true); }
