/* SPDX-License-Identifier: Apache-2.0 */
/* item_io.c -- the HTTP side of single items: the {key} of an item URL
 * percent-decoded and typed by the model, an item or update body typed into
 * the operation's inputs, and the ORM's typed item answer rendered. */
#include "api/item_io.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orm/item.h"
#include "orm/cond.h"
#include "orm/crypt.h"
#include "orm/items.h"
#include "orm/key.h"
#include "orm/policy.h"
#include "orm/txn.h"
#include "orm/unique.h"
#include "api/request.h"
#include "value/base64.h"
#include "value/codec_ddb.h"

/* Types one decoded URL part as attribute `a` declares it. */
static int part_to_av(const struct tt_model_attr *a, const char *text, size_t len,
                      struct tt_av *out, struct tt_error *err) {
  switch (a->type) {
  case TT_AV_S:
    if (!tt_utf8_valid(text, len))
      return tt_error_set(err, TT_ERR_VALIDATION, "key",
                          "key attribute %s: the percent-decoded value is not valid UTF-8",
                          a->name);
    if (tt_av_string(out, text, len) != 0)
      return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
    break;
  case TT_AV_N:
    if (tt_av_number_text(out, text, len, "key", err) != 0)
      return tt_error_set(err, TT_ERR_VALIDATION, "key",
                          "key attribute %s: expected a decimal number (N) of at most 38 digits",
                          a->name);
    break;
  case TT_AV_B: {
    int rc = tt_base64_decode_av(out, text, len, TT_BASE64_URL, 1);
    if (rc < 0)
      return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
    if (rc > 0)
      return tt_error_set(err, TT_ERR_VALIDATION, "key",
                          "key attribute %s: expected base64url (B), padded or not", a->name);
    break;
  }
  default:
    return tt_error_set(err, TT_ERR_INTERNAL, "key", "key attribute %s has no key type",
                        a->name);
  }
  return tt_orm_key_check_value(a, out, "key", err);
}

int tt_api_item_key(const struct tt_model *m, const char *raw, size_t len,
                         struct tt_av *key_out, struct tt_error *err) {
  const struct tt_model_attr *pk = tt_model_pk(m), *sk = tt_model_sk(m);
  const char *slash = memchr(raw, '/', len);
  const char *parts[2] = {raw, NULL};
  size_t lens[2] = {len, 0};
  char *buf = NULL;
  struct tt_av v = {0};
  int rc = -1;

  if (tt_av_map(key_out, 0) != 0)
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
  if (slash != NULL) {
    lens[0] = (size_t)(slash - raw);
    parts[1] = slash + 1;
    lens[1] = len - lens[0] - 1;
  }
  if (sk == NULL && parts[1] != NULL) {
    tt_error_set(err, TT_ERR_VALIDATION, "key",
                 "model %s has only a partition key (%s): the URL key is one segment; write "
                 "'/' inside it as %%2F",
                 m->name, pk->name);
    goto fail;
  }
  if (sk != NULL && (parts[1] == NULL || memchr(parts[1], '/', lens[1]) != NULL)) {
    tt_error_set(err, TT_ERR_VALIDATION, "key",
                 "model %s has a composite key: the URL key is %s/%s, each percent-encoded "
                 "('/' inside a value as %%2F)",
                 m->name, pk->name, sk->name);
    goto fail;
  }
  if ((buf = malloc(len + 1)) == NULL) {
    tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
    goto fail;
  }
  for (int i = 0; i < (sk ? 2 : 1); i++) {
    const struct tt_model_attr *a = i == 0 ? pk : sk;
    long n = tt_request_unescape(parts[i], lens[i], buf, false);
    if (n < 0) {
      tt_error_set(err, TT_ERR_VALIDATION, "key",
                   "key attribute %s: '%%' must start an escape of two hex digits (%%XX)",
                   a->name);
      goto fail;
    }
    if (part_to_av(a, buf, (size_t)n, &v, err) != 0)
      goto fail;
    if (tt_av_map_put(key_out, a->name, a->name_len, &v) != 0) { /* steals v */
      tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
      goto fail; /* v freed there */
    }
  }
  rc = 0;
fail:
  free(buf);
  tt_av_free(&v);
  if (rc != 0)
    tt_av_free(key_out);
  return rc;
}

int tt_api_select_crypt(const struct tt_model *m, const json_t *select, struct tt_error *err) {
  size_t i;
  json_t *p;
  json_array_foreach(select, i, p) {
    const char *s = json_string_value(p);
    if (s != NULL && tt_orm_crypt_check_path(m, s, "select", err) != 0)
      return -1;
  }
  return 0;
}

int tt_api_item_write(struct tt_buf *b, const struct tt_orm_result *r,
                      const struct tt_select *select, bool raw, char etag[TT_API_ETAG_MAX],
                      struct tt_error *err) {
  etag[0] = '\0';
  if (raw ? tt_ddb_item_write(b, &r->item, 0) != 0
          : tt_orm_item_write(b, r->model, &r->item, select, err) != 0) {
    if (raw)
      tt_error_set(err, TT_ERR_INTERNAL, NULL, "could not encode the item");
    return -1;
  }
  const struct tt_av *ver = tt_orm_item_version(r->model, &r->item);
  if (ver)
    snprintf(etag, TT_API_ETAG_MAX, "\"%s\"", ver->u.bytes);
  return 0;
}

int tt_api_check_members(const json_t *body, const char *const *names, const char *what,
                         struct tt_error *err) {
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)body, k, v) {
    const char *const *n = names;
    while (*n && strcmp(k, *n) != 0)
      n++;
    if (*n == NULL)
      return tt_error_set(err, TT_ERR_VALIDATION, k, "%s is %s", k, what);
  }
  return 0;
}

int tt_api_bool_member(const json_t *obj, const char *name, const char *field, bool *out,
                       struct tt_error *err) {
  const json_t *v = json_object_get(obj, name);
  if (v && !json_is_boolean(v))
    return tt_error_set(err, TT_ERR_VALIDATION, field, "%s must be true or false", field);
  *out = json_is_true(v);
  return 0;
}

/* The members of an update body (docs/api.md "Items"). */
static const char *const update_members[] = {
    "fields", "item", "set", "set_if_not_exists", "remove", "add", "delete", "append", "prepend",
    "condition", "expected_version", "upsert", "protected_attributes", NULL};

/* The typed inputs of op made of `body` at op->now. */
static int item_input(struct tt_orm_item_op *op, const json_t *body, struct tt_error *err) {
  const struct tt_model *m = op->ctx.model;
  /* Only an update's body has a condition; a create's or put's member of
   * that name is an attribute of the item. */
  switch (op->kind) {
  case TT_ORM_OP_CREATE:
    return tt_orm_item_from_json(m, body, TT_ORM_CREATE, op->now, NULL, &op->item, NULL, err);
  case TT_ORM_OP_PUT:
    return tt_orm_item_from_json(m, body, TT_ORM_PUT, op->now, NULL, &op->item,
                                 &op->item_expected, err);
  case TT_ORM_OP_UPDATE:
    if (tt_api_check_members(body, update_members, "not part of an update body", err) != 0 ||
        tt_orm_update_from_json(m, body, op->now, "", &op->upd, err) != 0 ||
        tt_orm_policy_check_update(m, &op->upd, body, NULL, err) != 0)
      return -1;
    return tt_orm_cond_read(m, json_object_get(body, "condition"), "condition", &op->condition,
                            err);
  default:
    return 0;
  }
}

int tt_api_item_start(struct tt_orm_item_op *op, const json_t *body) {
  struct tt_error err;
  op->now = tt_orm_now_ns(op->ctx.orm);
  if (body != NULL && item_input(op, body, &err) != 0)
    return tt_orm_item_fail_input(op, &err);
  return tt_unique_model_has(op->ctx.model) ? tt_orm_txn_item_start(op) : tt_orm_item_start(op);
}
