/* SPDX-License-Identifier: Apache-2.0 */
/* cursor.h -- TableTheory's DMS pagination cursor, byte-compatible with its
 * golden fixtures. */
#ifndef TT_VALUE_CURSOR_H
#define TT_VALUE_CURSOR_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"
#include "util/error.h"
#include "value/av.h"

/* Longest token we decode; real keys (2 KB partition + 1 KB sort key, plus
 * index keys) stay far below. */
#define TT_CURSOR_MAX_LEN 65536

enum tt_cursor_sort {
  TT_CURSOR_SORT_NONE = 0, /* the request gave no order: no "sort" field */
  TT_CURSOR_SORT_ASC,
  TT_CURSOR_SORT_DESC
};

/* A decoded cursor. `key` is an M (len 0: no position, start at the
 * beginning); `index` is NULL when absent. Owns everything; free with
 * tt_cursor_free. */
struct tt_cursor {
  struct tt_av key;
  char *index;
  enum tt_cursor_sort sort;
};

/* Appends the token for `last_key` (an M: DynamoDB's LastEvaluatedKey),
 * `index` (NULL or "" for the table) and `sort` to out: base64url with '='
 * padding of the compact JSON {"lastKey":{...},"index":...,"sort":...}
 * (fields in that order, as TableTheory's Go struct marshals them; key
 * names sorted; values in DynamoDB wire JSON; strings escaped as Go does).
 * A NULL or empty last_key appends nothing: the empty cursor means "no more
 * pages". Returns 0, or -1 when out's cap or memory runs out. */
int tt_cursor_encode(struct tt_buf *out, const struct tt_av *last_key, const char *index,
                     enum tt_cursor_sort sort);

/* Decodes a token into *c (zeroed first; caller frees with tt_cursor_free
 * even on failure). An empty token decodes to an empty cursor. Accepts the
 * token with or without '=' padding. Rejects, with InvalidCursor (field
 * "cursor"), anything that does not decode: bad base64, bad JSON, unknown
 * fields, lastKey values other than S/N/B, invalid N or B, a sort other
 * than ASC/DESC (in any case: TableTheory ignores it, and writes "desc" when
 * its caller did), an empty index, tokens over TT_CURSOR_MAX_LEN. Whether
 * the cursor fits the model/index/order of the request is the caller's
 * check (tt_cursor_sort_same for the order). Returns 0 or -1. */
int tt_cursor_decode(const char *token, size_t len, struct tt_cursor *c, struct tt_error *err);

/* Whether two orders read in the same direction: NONE is ascending, as a
 * DynamoDB query without ScanIndexForward is, so a TableTheory cursor
 * without "sort" continues an "asc" request (and an "ASC" one a request
 * without order). */
bool tt_cursor_sort_same(enum tt_cursor_sort a, enum tt_cursor_sort b);

/* Frees what *c owns and zeroes it. */
void tt_cursor_free(struct tt_cursor *c);

#endif
