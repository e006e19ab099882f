/* SPDX-License-Identifier: Apache-2.0 */
/* query.h -- Query and Scan of a model: index choice, key/filter/select
 * expressions, reading pages until `limit` items are found or the answer
 * reaches its byte budget, the DMS cursor, counts, and parallel scan
 * segments that are all joined. */
#ifndef TT_ORM_QUERY_H
#define TT_ORM_QUERY_H

#include <jansson.h>
#include <stdbool.h>

#include "expr/build.h"
#include "obs/trace.h"
#include "orm/orm.h"
#include "value/av.h"

#define TT_ORM_MAX_SEGMENTS 64
/* Default of struct tt_orm's max_response_bytes (--max-response-bytes). */
#define TT_ORM_DEFAULT_RESPONSE_BYTES (4u << 20)
/* What one backend page may hold (DynamoDB's 1 MB): pages are started only
 * while the ones being read would fit what is left of the budget. */
#define TT_ORM_PAGE_BYTES (1u << 20)
/* How the answer text of a page begins: the budget counts it with the first
 * item of a single reader. */
#define TT_ORM_ITEMS_OPEN "{\"items\":["

struct tt_orm_query_op;

/* Where a query's answered items go as they come, instead of into the
 * page: the HTTP edge renders them at once (each item is then written
 * once, and not kept). */
struct tt_orm_page_sink {
  /* Takes `item` (borrowed for the call) as the next answered item of
   * reader `reader` (0 .. n_readers - 1: parallel scan segments, else one)
   * and says in *size how many bytes of answer it adds, which the budget
   * counts. Returns 0, or -1 with *err: the query fails with it. */
  int (*add)(void *arg, size_t reader, size_t n_readers, const struct tt_av *item,
             size_t *size, struct tt_error *err);
  /* Takes back what the last add of `reader` took: it did not fit. */
  void (*take_back)(void *arg, size_t reader);
  /* After the first item of a backend page: about `bytes` more are coming
   * for `reader` (the page's items at the first one's size, never more than
   * the budget leaves). A hint to grow a buffer once. */
  void (*reserve)(void *arg, size_t reader, size_t bytes);
  void *arg;
};

/* One sequential reader: the whole query, or one scan segment. */
struct tt_orm_chain {
  struct tt_orm_query_op *q;
  int segment; /* -1 for a query or an unsegmented scan */
  struct tt_client_call call; /* its pages, one after another */
  struct tt_av last_key; /* where the next page starts (M), NULL-typed at the start */
  bool exhausted;        /* no LastEvaluatedKey: this reader is done */
  bool finished;
  bool busy;             /* a page of this reader is being read */
  size_t n_items;        /* items this reader answered */
  struct tt_av *kept;    /* without a sink: copies of them (n_kept of cap_kept) */
  size_t n_kept, cap_kept;
  uint64_t count, scanned;
  size_t quota; /* with a limit: items (or counts) this reader may still add up to */
  struct tt_ddb_read_request req; /* the page being read: the op's base request
                                   * with this reader's start key, Limit, Segment */
  struct tt_av next_key;          /* the page's LastEvaluatedKey, until page_rest */
  /* Encrypted models: a page's items wait here while their envelopes are
   * opened. */
  struct tt_av *page_items;
  size_t n_page_items;
  struct tt_span *span; /* a parallel scan segment's span; NULL otherwise */
};

/* How a query walks the sort key. */
enum tt_orm_order { TT_ORDER_NONE, TT_ORDER_ASC, TT_ORDER_DESC };

/* What a query or scan asks, typed (api/query.c reads it from the REST
 * body). The key conditions and the filter (orm/cond.h) are owned by the op
 * from tt_orm_query_start on; the rest is borrowed until done. */
struct tt_orm_query_request {
  const char *index;    /* NULL: the table (scan), or chosen by the key conditions (query) */
  struct tt_key_cond key; /* query: 1 or 2 key conditions; scan: none (n 0) */
  struct tt_cond *filter; /* NULL or a condition */
  struct tt_select select; /* the projection (tt_orm_select_from_json); n 0: none */
  bool has_limit;
  size_t limit; /* 1 .. TT_ORM_MAX_LIMIT */
  bool count_only;
  bool consistent;
  enum tt_orm_order order;
  size_t segments;    /* scan: 1 .. TT_ORM_MAX_SEGMENTS; 0 counts as 1 */
  const char *cursor; /* NULL: from the start; else cursor_len bytes */
  size_t cursor_len;
};

#define TT_ORM_MAX_LIMIT 100000

struct tt_orm_query_op {
  struct tt_orm_ctx ctx; /* first */
  bool scan;
  struct tt_orm_query_request rq;      /* borrowed until done */
  const struct tt_orm_page_sink *sink; /* borrowed; NULL: the page holds the items */
  const struct tt_model_index *index;  /* the target rq names or its key conditions choose */
  /* Running: the request every page shares, and the texts and maps it
   * points to. */
  struct tt_ddb_read_request base;
  char *key_text, *filter_text, *projection_text;
  struct tt_av names, values;
  struct tt_expr_builder *builder;
  struct tt_orm_chain *chains;
  size_t nchains;
  bool failed;
  /* The byte budget of the answer's items (orm->max_response_bytes): an
   * item that would pass it ends the answer before it, with a cursor right
   * after the last item answered; the first item is always answered. */
  size_t budget;
  size_t bytes;    /* answer text of the items answered so far, every reader */
  struct tt_buf scratch; /* where an item's answer text is measured */
  size_t answered; /* items answered so far, every reader */
  size_t inflight; /* pages being read */
  bool full;       /* the budget ended the answer: no page starts */
  bool pumping, repump;
};

/* Checks op->rq against the model (before any I/O: every error is a
 * ValidationError or InvalidCursor and nothing is read), then reads. The
 * ctx's done runs once with the result: a typed page (TT_ORM_ANSWER_PAGE:
 * the items -- unless op->sink took them --, the counts, the cursor), or
 * only the counts with count_only. The byte budget counts what the sink says each item adds,
 * or without a sink the answer text of the items as the HTTP answer writes
 * them ({"items":[...]}: logical JSON keeping what `select` names, commas,
 * the opening of a single reader's answer); an answer that reaches it ends
 * early (also inside a backend page, and across parallel segments: each
 * segment's cursor then points right after the last item it answered), so
 * paging with the cursor returns every item exactly once. Errors land in
 * the result. Returns 0 (done runs later) or -1 (it finished inside this
 * call: done never runs; docs/internals/completions.md). */
int tt_orm_query_start(struct tt_orm_query_op *op);

/* The ORM's checks of a request that the HTTP edge runs at their place in
 * its order of errors (tt_orm_query_start runs both; batches run the
 * first, without key conditions and filter): encrypted attributes
 * (fail closed without a key; never in the key conditions, the filter, nor
 * inside a select path), and the target: the select paths, the index
 * (named, or chosen by the key conditions) and consistency on it, into
 * *index. Each returns 0 or -1 with a ValidationError. */
/* *out: `select`'s paths, then the `keys` none of them reaches (list in `a`). With
 * `whole`, a path into a key ("PK.x", which would hide it) is refused. Returns 0 or -1. */
int tt_orm_select_with_keys(struct tt_arena *a, const struct tt_select *select,
                            const char *const *keys, size_t nkeys, bool whole,
                            struct tt_select *out, struct tt_error *err);

int tt_orm_query_check_crypt(const struct tt_orm *orm, const struct tt_model *m,
                             const struct tt_key_cond *key, const struct tt_cond *filter,
                             const struct tt_select *select, struct tt_error *err);
int tt_orm_query_target(const struct tt_model *m, bool scan, const struct tt_orm_query_request *rq,
                        const struct tt_model_index **index, struct tt_error *err);

/* Frees the key conditions and the filter of rq (what a caller does when it
 * does not start the op after all). */
void tt_orm_query_request_clear(struct tt_orm_query_request *rq);

#endif
