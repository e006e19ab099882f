/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_item.c -- libFuzzer target for the model-driven item codec: item
 * bodies (create/put), patch bodies (both forms), keys from the URL and from
 * JSON, and stored items written back, on the example models. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "orm/item.h"
#include "api/item_io.h"
#include "orm/key.h"
#include "value/json_exact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A stored item must write back as JSON and hold its key. */
static void check_item(const struct tt_model *m, const struct tt_av *item) {
  struct tt_buf b;
  struct tt_error err;
  struct tt_av key;
  tt_buf_init(&b, 0);
  if (item->type != TT_AV_M || tt_orm_item_write(&b, m, item, NULL, &err) != 0)
    abort();
  json_t *back = fz_body(b.data, b.len);
  if (back == NULL)
    abort();
  json_t *j = tt_orm_item_to_json(m, item, NULL, &err);
  if (j == NULL || !json_is_object(j) || json_object_size(j) != json_object_size(back))
    abort();
  json_decref(j);
  json_decref(back);
  if (tt_orm_key_of_item(m, item, NULL, &key, &err) != 0 || key.type != TT_AV_M)
    abort();
  tt_av_free(&key);
  tt_buf_free(&b);
}

/* The first byte picks the model; the first line is the raw {key} of the
 * item URL; the rest is the JSON body. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct tt_error err;
  struct tt_av v;
  const char *line, *rest;
  size_t line_len, rest_len;
  fz_init();
  if (size < 1)
    return 0;
  const struct tt_model *m = fz_model(data[0]);
  fz_split_line((const char *)data + 1, size - 1, &line, &line_len, &rest, &rest_len);

  if (tt_api_item_key(m, line, line_len, &v, &err) == 0) {
    if (v.type != TT_AV_M || v.len != (m->sk ? 2u : 1u))
      abort();
    tt_av_free(&v);
  } else if (err.code != TT_ERR_VALIDATION || v.type != TT_AV_NULL) {
    abort();
  }

  json_t *body = fz_body(rest, rest_len);
  if (body == NULL)
    return 0;
  struct tt_orm_expected expected = {0};
  if (tt_orm_item_from_json(m, body, TT_ORM_CREATE, FZ_T0_NS, NULL, &v, NULL, &err) == 0) {
    check_item(m, &v);
    tt_av_free(&v);
  } else if (v.type != TT_AV_NULL || err.message[0] == '\0') {
    abort();
  }
  if (tt_orm_item_from_json(m, body, TT_ORM_PUT, FZ_T0_NS, "put[0]", &v, &expected, &err) == 0) {
    if (tt_orm_item_set_version(m, &v, 7) != 0)
      abort();
    check_item(m, &v);
    tt_av_free(&v);
  } else if (v.type != TT_AV_NULL || err.message[0] == '\0') {
    abort();
  }

  struct tt_orm_update u;
  tt_orm_update_init(&u);
  if (tt_orm_update_from_json(m, body, FZ_T0_NS, NULL, &u, &err) == 0) {
    for (size_t i = 0; i < u.n_actions; i++)
      if (u.actions[i].path == NULL || u.actions[i].field[0] == '\0')
        abort();
  } else if (u.n_actions != 0 || err.message[0] == '\0') {
    abort();
  }
  tt_orm_update_free(&u);

  if (tt_orm_key_from_json(m, body, "keys[0]", &v, &err) == 0) {
    if (v.type != TT_AV_M || v.len != (m->sk ? 2u : 1u))
      abort();
    tt_av_free(&v);
  } else if (v.type != TT_AV_NULL || err.code != TT_ERR_VALIDATION) {
    abort();
  }

  /* The select list: typed, every path declared (or refused). */
  struct tt_arena arena;
  struct tt_select sel;
  tt_arena_init(&arena);
  if (tt_orm_select_from_json(m, json_object_get(body, "select"), "select", &arena, &sel,
                              &err) == 0) {
    if (tt_orm_check_select(m, &sel, "select", &err) != 0)
      abort();
  } else if (err.code != TT_ERR_VALIDATION) {
    abort();
  }
  tt_arena_free(&arena);
  const char *k;
  json_t *val;
  json_object_foreach(body, k, val) {
    const struct tt_model_attr *a = tt_model_attr_find(m, k, strlen(k));
    (void)tt_orm_value_is_empty(val, a ? a->type : TT_LOGICAL_INFER, true);
  }
  json_decref(body);
  return 0;
}
