/* SPDX-License-Identifier: Apache-2.0 */
/* wire_diff.h -- the differential check of wire_reader.c shared by
 * test_wire_reader.c and tests/fuzz/fuzz_wire_reader.c: one body read by
 * the streaming reader and by the jansson path it replaced
 * (tt_ddb_response_classify, then the tree readers below), which must give
 * the same values in the same order, or the same error.
 *
 * Strings beginning with U+0000: classify marks them ("\0S" + text,
 * tt_json_mark_plain_strings) so that codec_ddb.c's readers, made for
 * tt_json_parse's marked trees, read them whole, as the reader does.
 * Static functions only: the fuzz build compiles this into its target. */
#ifndef TT_TESTS_WIRE_DIFF_H
#define TT_TESTS_WIRE_DIFF_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/dynamodb/errors.h"
#include "backend/dynamodb/typed_wire.h"
#include "backend/dynamodb/wire_reader.h"
#include "value/codec_ddb.h"

/* The jansson path's readers of a 2xx answer's tree: GetItem's Item or a
 * write's Attributes, and a Query or Scan page, with codec_ddb.c's rules
 * and the same InvalidResponse texts. */
static int wd_item_read(enum tt_ddb_op op, const json_t *resp, struct tt_av *out,
                        struct tt_backend_error *e) {
  struct tt_error err;
  const char *name = op == TT_DDB_GET_ITEM ? "Item" : "Attributes";
  const json_t *j = json_object_get(resp, name);
  memset(out, 0, sizeof(*out));
  if (j == NULL || json_is_null(j))
    return 0;
  if (tt_ddb_item_from_json(j, name, out, &err) != 0) {
    /* The codec leaves a NULL-typed value; the port says type 0 (none), as
     * the memory backend leaves it. */
    memset(out, 0, sizeof(*out));
    return tt_backend_error_set(e, "InvalidResponse", 200,
                                "the DynamoDB endpoint answered an invalid %s", name);
  }
  return 0;
}

static int wd_invalid(struct tt_backend_error *e, const char *what) {
  return tt_backend_error_set(e, "InvalidResponse", 200,
                              "the DynamoDB endpoint answered an invalid %s", what);
}

static int wd_count_of(const json_t *resp, const char *name, uint64_t *out) {
  const json_t *j = json_object_get(resp, name);
  *out = 0;
  if (j == NULL)
    return 0;
  if (!json_is_integer(j) || json_integer_value(j) < 0)
    return -1;
  *out = (uint64_t)json_integer_value(j);
  return 0;
}

static int wd_read_read(const json_t *resp, struct tt_ddb_read_result *out,
                        struct tt_backend_error *e) {
  struct tt_error err;
  memset(out, 0, sizeof(*out));
  if (wd_count_of(resp, "Count", &out->count) != 0 ||
      wd_count_of(resp, "ScannedCount", &out->scanned_count) != 0)
    return wd_invalid(e, "Count");
  const json_t *items = json_object_get(resp, "Items");
  if (items != NULL && !json_is_array(items))
    return wd_invalid(e, "Items");
  size_t n = json_array_size(items);
  if (n > 0 && (out->items = calloc(n, sizeof(*out->items))) == NULL)
    return tt_backend_error_set(e, "InternalFailure", 0, "out of memory");
  for (size_t i = 0; i < n; i++) {
    if (tt_ddb_item_from_json(json_array_get(items, i), "Items", &out->items[i], &err) != 0) {
      tt_ddb_read_result_free(out);
      return wd_invalid(e, "item");
    }
    out->n_items++;
  }
  /* Absent, null or {}: the data ended. Anything else must be a key: a
   * string or an array taken for "ended" would end a listing silently. */
  const json_t *lek = json_object_get(resp, "LastEvaluatedKey");
  if (lek != NULL && !json_is_null(lek) && !(json_is_object(lek) && json_object_size(lek) == 0) &&
      tt_ddb_item_from_json(lek, "LastEvaluatedKey", &out->last_key, &err) != 0) {
    tt_ddb_read_result_free(out);
    return wd_invalid(e, "LastEvaluatedKey");
  }
  return 0;
}

/* The jansson path: 0, -1 with e, or TT_DDB_WIRE_NOT_OBJECT when classify
 * refused the body (its error text is not compared: the backend rewrites
 * it with the status and request id). `read` picks the answer kind. */
static int wd_old(bool read, enum tt_ddb_op op, const char *text, size_t len, struct tt_av *item,
                  struct tt_ddb_read_result *rr, struct tt_backend_error *e) {
  struct tt_http_response resp;
  memset(&resp, 0, sizeof(resp));
  resp.status = 200;
  tt_buf_init(&resp.body, 0);
  tt_buf_init(&resp.headers, 0);
  if (len > 0 && tt_buf_append(&resp.body, text, len) != 0)
    abort();
  json_t *j = NULL;
  int rc = tt_ddb_response_classify(&resp, &j, e);
  tt_buf_free(&resp.body);
  tt_buf_free(&resp.headers);
  if (read)
    memset(rr, 0, sizeof(*rr));
  else
    memset(item, 0, sizeof(*item));
  if (rc != 0)
    return TT_DDB_WIRE_NOT_OBJECT;
  rc = read ? wd_read_read(j, rr, e) : wd_item_read(op, j, item, e);
  json_decref(j);
  return rc;
}

/* The text of an optional attribute map, members in their order. */
static char *wd_text(const struct tt_av *v) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  if (v->type == 0)
    return strdup("-");
  if (v->type != TT_AV_M || tt_ddb_item_write(&b, v, 0) != 0 || tt_buf_append(&b, "", 1) != 0)
    abort();
  return b.data;
}

static bool wd_same_av(const struct tt_av *a, const struct tt_av *b) {
  if (a->type != b->type)
    return false;
  if (a->type == 0)
    return true;
  char *x = wd_text(a), *y = wd_text(b);
  bool same = strcmp(x, y) == 0 && tt_av_equal(a, b);
  free(x);
  free(y);
  return same;
}

static bool wd_empty_av(const struct tt_av *v) {
  static const struct tt_av zero;
  return memcmp(v, &zero, sizeof(zero)) == 0;
}

/* Runs both paths on one body; returns NULL when they agree, else a static
 * description of the difference. *rc_out gets the reader's result. */
static const char *wd_compare(bool read, enum tt_ddb_op op, const char *text, size_t len,
                              int *rc_out) {
  struct tt_av ai, bi;
  struct tt_ddb_read_result ar, br;
  struct tt_backend_error ae, be;
  memset(&ae, 0, sizeof(ae));
  memset(&be, 0, sizeof(be));
  const char *diff = NULL;
  int arc = wd_old(read, op, text, len, &ai, &ar, &ae);
  int brc = read ? tt_ddb_read_response_parse(text, len, &br, &be)
                 : tt_ddb_item_response_parse(op, text, len, &bi, &be);
  *rc_out = brc;
  if (arc != brc) {
    diff = "result codes differ";
  } else if (brc == -1) {
    if (strcmp(ae.type, be.type) != 0 || strcmp(ae.message, be.message) != 0 ||
        ae.http_status != be.http_status)
      diff = "errors differ";
  } else if (brc == 0 && !read) {
    if (!wd_same_av(&ai, &bi))
      diff = "items differ";
  } else if (brc == 0) {
    if (ar.n_items != br.n_items || ar.count != br.count ||
        ar.scanned_count != br.scanned_count || !wd_same_av(&ar.last_key, &br.last_key))
      diff = "read results differ";
    for (size_t i = 0; diff == NULL && i < ar.n_items; i++)
      if (!wd_same_av(&ar.items[i], &br.items[i]))
        diff = "items differ";
  }
  /* On failure the reader leaves nothing (the old path may keep counts). */
  if (diff == NULL && brc != 0) {
    if (read && (br.items != NULL || br.n_items || br.count || br.scanned_count ||
                 !wd_empty_av(&br.last_key)))
      diff = "read result not empty after a failure";
    if (!read && !wd_empty_av(&bi))
      diff = "item not empty after a failure";
  }
  if (read) {
    tt_ddb_read_result_free(&ar);
    tt_ddb_read_result_free(&br);
  } else {
    tt_av_free(&ai);
    tt_av_free(&bi);
  }
  tt_backend_error_clear(&ae);
  tt_backend_error_clear(&be);
  return diff;
}

#endif
