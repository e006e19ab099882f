/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_value_json.c -- libFuzzer target for the exact JSON parser, the
 * DynamoDB and logical codecs and the cursor decoder, with round-trip
 * invariants that abort on any mismatch. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "value/codec_ddb.h"
#include "value/codec_logical.h"
#include "value/cursor.h"
#include "value/json_exact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static json_t *reparse(const struct tt_buf *b) {
  struct tt_json_opts o = {0, 100};
  struct tt_error err;
  json_t *j = NULL;
  if (tt_json_parse(b->data ? b->data : "", b->len, &o, &j, &err) != 0)
    abort(); /* our own output must always parse */
  return j;
}

/* DynamoDB JSON: from_json -> write -> parse -> from_json gives an equal
 * value and the same bytes. */
static void ddb_round_trip(const json_t *j) {
  struct tt_av v, w;
  struct tt_error err;
  struct tt_buf a, b;
  int item = json_is_object(j) && json_object_size(j) != 1;
  if ((item ? tt_ddb_item_from_json(j, "Item", &v, &err) : tt_ddb_value_from_json(j, "v", &v, &err)) != 0)
    return;
  tt_buf_init(&a, 0);
  tt_buf_init(&b, 0);
  if ((item ? tt_ddb_item_write(&a, &v, 0) : tt_ddb_value_write(&a, &v, 0)) != 0)
    abort();
  json_t *j2 = reparse(&a);
  if ((item ? tt_ddb_item_from_json(j2, "Item", &w, &err) : tt_ddb_value_from_json(j2, "v", &w, &err)) != 0)
    abort();
  if (!tt_av_equal(&v, &w))
    abort();
  if ((item ? tt_ddb_item_write(&b, &w, 0) : tt_ddb_value_write(&b, &w, 0)) != 0 || a.len != b.len ||
      memcmp(a.data, b.data, a.len) != 0)
    abort();
  (void)tt_av_item_size(&v);
  json_decref(j2);
  tt_buf_free(&a);
  tt_buf_free(&b);
  tt_av_free(&w);
  tt_av_free(&v);
}

/* Logical JSON with inferred types: to_av -> write must give JSON that
 * parses; json:true S storage is deterministic (idempotent). */
static void logical(const json_t *j) {
  struct tt_av v, w;
  struct tt_error err;
  struct tt_buf a;
  tt_buf_init(&a, 0);
  if (tt_logical_to_av(j, TT_LOGICAL_INFER, 0, "attr", &v, &err) == 0) {
    if (tt_logical_write(&a, &v, TT_LOGICAL_INFER, 0) != 0)
      abort();
    json_decref(reparse(&a));
    tt_av_free(&v);
  }
  if (tt_logical_to_av(j, TT_AV_S, TT_LOGICAL_JSON, "doc", &v, &err) == 0) {
    if (v.type == TT_AV_S) {
      tt_buf_reset(&a);
      if (tt_logical_write(&a, &v, TT_AV_S, TT_LOGICAL_JSON) != 0)
        abort();
      json_t *j2 = reparse(&a);
      if (tt_logical_to_av(j2, TT_AV_S, TT_LOGICAL_JSON, "doc", &w, &err) != 0 ||
          !tt_av_equal(&v, &w))
        abort();
      tt_av_free(&w);
      json_decref(j2);
    }
    tt_av_free(&v);
  }
  tt_buf_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct tt_json_opts o = {1 << 20, 100};
  struct tt_error err;
  json_t *j = NULL;
  struct tt_cursor c;

  if (tt_cursor_decode((const char *)data, size, &c, &err) == 0) {
    struct tt_buf t;
    tt_buf_init(&t, 0);
    if (tt_cursor_encode(&t, &c.key, c.index, c.sort) != 0)
      abort();
    tt_buf_free(&t);
  }
  tt_cursor_free(&c);

  if (tt_json_parse((const char *)data, size, &o, &j, &err) != 0)
    return 0;
  /* dump -> parse -> dump is a fixed point, numbers verbatim. */
  struct tt_buf a, b;
  tt_buf_init(&a, 0);
  tt_buf_init(&b, 0);
  if (tt_json_dump(j, 0, &a) != 0)
    abort();
  json_t *j2 = reparse(&a);
  if (tt_json_dump(j2, 0, &b) != 0 || a.len != b.len || memcmp(a.data, b.data, a.len) != 0)
    abort();
  json_decref(j2);
  tt_buf_free(&a);
  tt_buf_free(&b);

  ddb_round_trip(j);
  logical(j);
  json_decref(j);
  return 0;
}
