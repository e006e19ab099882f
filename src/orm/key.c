/* SPDX-License-Identifier: Apache-2.0 */
/* key.c -- primary keys of a model from URL segments, JSON objects and stored items. */
#include "orm/key.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value/base64.h"
#include "value/codec_logical.h"
#include "util/hex.h"

/* "prefix.name", or "name" alone when there is no prefix; truncated to fit
 * like every error field. */
static void field_join(char *out, size_t cap, const char *prefix, const char *name) {
  int n = (prefix && *prefix) ? snprintf(out, cap, "%s.%s", prefix, name)
                              : snprintf(out, cap, "%s", name);
  if (n < 0)
    out[0] = '\0';
}

static int oom(struct tt_error *err) {
  return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
}

int tt_orm_key_check_value(const struct tt_model_attr *a, const struct tt_av *v,
                           const char *field, struct tt_error *err) {
  if (v->type == TT_AV_NULL)
    return tt_error_set(err, TT_ERR_VALIDATION, field, "missing key attribute %s", a->name);
  if (v->type != a->type)
    return tt_error_set(err, TT_ERR_VALIDATION, field, "key attribute %s must be of type %s",
                        a->name, tt_model_type_name(a->type));
  if ((v->type == TT_AV_S || v->type == TT_AV_B) && v->len == 0)
    return tt_error_set(err, TT_ERR_VALIDATION, field,
                        "key attribute %s must not be empty (DynamoDB refuses empty key values)",
                        a->name);
  return 0;
}

/* ---- URL parts ----------------------------------------------------------- */

/* Decodes %XX escapes of `len` bytes into out (room for len + 1 bytes).
 * Returns the decoded length, or -1 on a malformed escape. */
static long percent_decode(const char *s, size_t len, char *out) {
  size_t o = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] != '%') {
      out[o++] = s[i];
      continue;
    }
    int hi = i + 2 < len ? tt_hex_digit((unsigned char)s[i + 1]) : -1;
    int lo = hi >= 0 ? tt_hex_digit((unsigned char)s[i + 2]) : -1;
    if (hi < 0 || lo < 0)
      return -1;
    out[o++] = (char)(hi << 4 | lo);
    i += 2;
  }
  out[o] = '\0';
  return (long)o;
}

/* Strict UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF). */
static bool utf8_valid(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned c = s[i];
    size_t k;
    unsigned cp, min;
    if (c < 0x80) {
      i++;
      continue;
    }
    if (c >= 0xC2 && c <= 0xDF) {
      k = 1;
      cp = c & 0x1F;
      min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
      k = 2;
      cp = c & 0x0F;
      min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
      k = 3;
      cp = c & 0x07;
      min = 0x10000;
    } else {
      return false;
    }
    for (size_t j = 1; j <= k; j++) {
      if (i + j >= n || (s[i + j] & 0xC0) != 0x80)
        return false;
      cp = cp << 6 | (s[i + j] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += k + 1;
  }
  return true;
}

/* Types one decoded URL part as attribute `a` declares it. */
static int part_to_av(const struct tt_model_attr *a, const char *text, size_t len,
                      struct tt_av *out, struct tt_error *err) {
  switch (a->type) {
  case TT_AV_S:
    if (!utf8_valid((const unsigned char *)text, len))
      return tt_error_set(err, TT_ERR_VALIDATION, "key",
                          "key attribute %s: the percent-decoded value is not valid UTF-8",
                          a->name);
    if (tt_av_string(out, text, len) != 0)
      return oom(err);
    break;
  case TT_AV_N:
    if (tt_av_number_text(out, text, len, "key", err) != 0)
      return tt_error_set(err, TT_ERR_VALIDATION, "key",
                          "key attribute %s: expected a decimal number (N) of at most 38 digits",
                          a->name);
    break;
  case TT_AV_B: {
    size_t n;
    unsigned char *bytes = malloc(TT_BASE64_DECODED_MAX(len) + 1);
    if (bytes == NULL)
      return oom(err);
    if (tt_base64_decode(text, len, TT_BASE64_URL, 1, bytes, &n) != 0) {
      free(bytes);
      return tt_error_set(err, TT_ERR_VALIDATION, "key",
                          "key attribute %s: expected base64url (B), padded or not", a->name);
    }
    int rc = tt_av_binary(out, bytes, n);
    free(bytes);
    if (rc != 0)
      return oom(err);
    break;
  }
  default:
    return tt_error_set(err, TT_ERR_INTERNAL, "key", "key attribute %s has no key type",
                        a->name);
  }
  return tt_orm_key_check_value(a, out, "key", err);
}

/* Appends the key attribute `a` with value *v (stolen) to the M *key. */
static int key_put(struct tt_av *key, const struct tt_model_attr *a, struct tt_av *v,
                   struct tt_error *err) {
  if (tt_av_map_put(key, a->name, a->name_len, v) != 0) {
    tt_av_free(v);
    return oom(err);
  }
  return 0;
}

int tt_orm_key_from_path(const struct tt_model *m, const char *raw, size_t len,
                         struct tt_av *key_out, struct tt_error *err) {
  const struct tt_model_attr *pk = tt_model_pk(m), *sk = tt_model_sk(m);
  const char *slash = memchr(raw, '/', len);
  const char *parts[2] = {raw, NULL};
  size_t lens[2] = {len, 0};
  char *buf = NULL;
  struct tt_av v = {0};
  int rc = -1;

  if (tt_av_map(key_out, 0) != 0)
    return oom(err);
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
    oom(err);
    goto fail;
  }
  for (int i = 0; i < (sk ? 2 : 1); i++) {
    const struct tt_model_attr *a = i == 0 ? pk : sk;
    long n = percent_decode(parts[i], lens[i], buf);
    if (n < 0) {
      tt_error_set(err, TT_ERR_VALIDATION, "key",
                   "key attribute %s: '%%' must start an escape of two hex digits (%%XX)",
                   a->name);
      goto fail;
    }
    if (part_to_av(a, buf, (size_t)n, &v, err) != 0 || key_put(key_out, a, &v, err) != 0)
      goto fail;
  }
  rc = 0;
fail:
  free(buf);
  tt_av_free(&v);
  if (rc != 0)
    tt_av_free(key_out);
  return rc;
}

/* ---- JSON keys ------------------------------------------------------------- */

int tt_orm_key_from_json(const struct tt_model *m, const json_t *obj, const char *field,
                         struct tt_av *key_out, struct tt_error *err) {
  const struct tt_model_attr *keys[2] = {tt_model_pk(m), tt_model_sk(m)};
  char f[128];
  const char *name;
  json_t *val;
  struct tt_av v = {0};
  int rc = -1;

  tt_av_null(key_out);
  if (!json_is_object(obj))
    return tt_error_set(err, TT_ERR_VALIDATION, field && *field ? field : "key",
                        "%s: a key must be a JSON object of the key attributes",
                        field && *field ? field : "key");
  json_object_foreach((json_t *)obj, name, val) {
    if (strcmp(name, keys[0]->name) != 0 && (keys[1] == NULL || strcmp(name, keys[1]->name) != 0)) {
      field_join(f, sizeof(f), field, name);
      return tt_error_set(err, TT_ERR_VALIDATION, f, "%s is not a key attribute of model %s",
                          name, m->name);
    }
  }
  if (tt_av_map(key_out, 0) != 0)
    return oom(err);
  for (int i = 0; i < 2 && keys[i] != NULL; i++) {
    const struct tt_model_attr *a = keys[i];
    field_join(f, sizeof(f), field, a->name);
    if (tt_logical_to_av(json_object_get(obj, a->name), a->type, 0, f, &v, err) != 0 ||
        tt_orm_key_check_value(a, &v, f, err) != 0 || key_put(key_out, a, &v, err) != 0)
      goto fail;
  }
  rc = 0;
fail:
  tt_av_free(&v);
  if (rc != 0)
    tt_av_free(key_out);
  return rc;
}

int tt_orm_key_of_item(const struct tt_model *m, const struct tt_av *item, const char *field,
                       struct tt_av *key_out, struct tt_error *err) {
  const struct tt_model_attr *keys[2] = {tt_model_pk(m), tt_model_sk(m)};
  struct tt_av v = {0};
  const char *f = field && *field ? field : "item";

  if (tt_av_map(key_out, 0) != 0)
    return oom(err);
  for (int i = 0; i < 2 && keys[i] != NULL; i++) {
    const struct tt_av *src = tt_av_map_getn(item, keys[i]->name, keys[i]->name_len);
    if (src == NULL) {
      tt_error_set(err, TT_ERR_VALIDATION, f, "missing key attribute %s", keys[i]->name);
      goto fail;
    }
    if (tt_orm_key_check_value(keys[i], src, f, err) != 0)
      goto fail;
    if (tt_av_clone(&v, src) != 0) {
      oom(err);
      goto fail;
    }
    if (key_put(key_out, keys[i], &v, err) != 0)
      goto fail;
  }
  return 0;
fail:
  tt_av_free(key_out);
  return -1;
}
