/* SPDX-License-Identifier: Apache-2.0 */
/* item.c -- the model-driven item codec: logical JSON items and update bodies to
 * DynamoDB values, lifecycle fields, omit_empty, and stored items back to JSON. */
#include "orm/item.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orm/key.h"
#include "orm/orm.h"
#include "util/civil.h"
#include "util/error.h"
#include "value/json_exact.h"
#include "value/number.h"

#define NS_PER_SEC 1000000000LL
#define SEC_PER_DAY 86400LL

/* ---- time ----------------------------------------------------------------- */

static char *put_digits(char *p, unsigned v, int width) {
  for (int i = width - 1; i >= 0; i--) {
    p[i] = (char)('0' + v % 10);
    v /= 10;
  }
  return p + width;
}

int tt_orm_format_rfc3339nano(int64_t now_ns, char *out, size_t cap) {
  char tmp[TT_ORM_TIME_MAX];
  int64_t sec = now_ns / NS_PER_SEC, frac = now_ns % NS_PER_SEC;
  if (frac < 0) {
    frac += NS_PER_SEC;
    sec--;
  }
  int64_t days = sec / SEC_PER_DAY, rem = sec % SEC_PER_DAY;
  if (rem < 0) {
    rem += SEC_PER_DAY;
    days--;
  }
  int64_t y;
  unsigned mo, d;
  tt_civil_from_days(days, &y, &mo, &d);
  /* An int64 of nanoseconds spans the years 1677..2262: always 4 digits. */
  char *p = put_digits(tmp, (unsigned)y, 4);
  *p++ = '-';
  p = put_digits(p, mo, 2);
  *p++ = '-';
  p = put_digits(p, d, 2);
  *p++ = 'T';
  p = put_digits(p, (unsigned)(rem / 3600), 2);
  *p++ = ':';
  p = put_digits(p, (unsigned)(rem / 60 % 60), 2);
  *p++ = ':';
  p = put_digits(p, (unsigned)(rem % 60), 2);
  if (frac != 0) {
    /* Go's RFC3339Nano layout ".999999999" drops trailing zeros. */
    int width = 9;
    while (frac % 10 == 0) {
      frac /= 10;
      width--;
    }
    *p++ = '.';
    p = put_digits(p, (unsigned)frac, width);
  }
  *p++ = 'Z';
  size_t n = (size_t)(p - tmp);
  if (n + 1 > cap)
    return -1;
  memcpy(out, tmp, n);
  out[n] = '\0';
  return (int)n;
}

static bool read_digits(const char *s, size_t n, unsigned *out) {
  unsigned v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    v = v * 10 + (unsigned)(s[i] - '0');
  }
  *out = v;
  return true;
}

int tt_orm_parse_rfc3339(const char *s, size_t len, int64_t *sec, int32_t *nsec) {
  unsigned y, mo, d, h, mi, se, oh = 0, om = 0, frac = 0;
  size_t i = 19;
  int sign = 0;
  if (len < 20 || !read_digits(s, 4, &y) || s[4] != '-' || !read_digits(s + 5, 2, &mo) ||
      s[7] != '-' || !read_digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
      !read_digits(s + 11, 2, &h) || s[13] != ':' || !read_digits(s + 14, 2, &mi) ||
      s[16] != ':' || !read_digits(s + 17, 2, &se))
    return -1;
  static const unsigned dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (mo < 1 || mo > 12 || d < 1 || d > dm[mo - 1] + (mo == 2 && leap) || h > 23 || mi > 59 ||
      se > 59)
    return -1;
  if (s[i] == '.') {
    size_t k = 0;
    i++;
    while (i + k < len && s[i + k] >= '0' && s[i + k] <= '9')
      k++;
    if (k == 0 || k > 9 || !read_digits(s + i, k, &frac))
      return -1;
    for (size_t z = k; z < 9; z++)
      frac *= 10;
    i += k;
  }
  if (i < len && (s[i] == 'Z' || s[i] == 'z')) {
    i++;
  } else if (i < len && (s[i] == '+' || s[i] == '-')) {
    sign = s[i] == '+' ? 1 : -1;
    if (len - i < 6 || !read_digits(s + i + 1, 2, &oh) || s[i + 3] != ':' ||
        !read_digits(s + i + 4, 2, &om) || oh > 23 || om > 59)
      return -1;
    i += 6;
  } else {
    return -1;
  }
  if (i != len)
    return -1;
  *sec = tt_days_from_civil(y, mo, d) * SEC_PER_DAY + h * 3600 + mi * 60 + se -
         sign * (int64_t)(oh * 3600 + om * 60);
  if (nsec)
    *nsec = (int32_t)frac;
  return 0;
}

/* ---- emptiness ------------------------------------------------------------ */

static bool number_text_is_zero(const char *s, size_t len) {
  char canon[TT_NUMBER_TEXT_MAX];
  if (tt_number_canonical(s, len, canon, sizeof(canon), NULL, NULL) != 0)
    return false;
  return strcmp(canon, "0") == 0;
}

bool tt_orm_value_is_empty(const json_t *v, enum tt_av_type declared, bool deep) {
  struct tt_json_numbuf nb;
  size_t len;
  const char *s;
  if (v == NULL || json_is_null(v))
    return true;
  if ((s = tt_json_number_text(v, &nb, &len)) != NULL)
    return number_text_is_zero(s, len);
  if ((s = tt_json_string_text(v, &len)) != NULL) {
    if (len == 0)
      return true;
    /* An N attribute may travel as a decimal string: its value decides. */
    return declared == TT_AV_N && tt_json_number_syntax(s, len) && number_text_is_zero(s, len);
  }
  if (json_is_boolean(v))
    return json_is_false(v);
  if (json_is_array(v))
    return json_array_size(v) == 0;
  if (json_is_object(v)) {
    const char *k;
    json_t *x;
    if (json_object_size(v) == 0)
      return true;
    if (!deep)
      return false;
    json_object_foreach((json_t *)v, k, x) {
      if (!tt_orm_value_is_empty(x, TT_LOGICAL_INFER, true))
        return false;
    }
    return true;
  }
  return false;
}

/* ---- attribute values ----------------------------------------------------- */

static unsigned attr_flags(const struct tt_model_attr *a) {
  unsigned f = 0;
  if (a != NULL && a->json)
    f |= TT_LOGICAL_JSON;
  if (a != NULL && a->format == TT_FORMAT_DECIMAL_STRING)
    f |= TT_LOGICAL_N_STRING;
  return f;
}

static bool is_set_type(enum tt_av_type t) {
  return t == TT_AV_SS || t == TT_AV_NS || t == TT_AV_BS;
}

/* Whether a stored value of encrypted attribute `a` is still an envelope:
 * output must never carry one as if it were the value (orm/crypt.h opens
 * envelopes before any answer is written). */
static bool still_sealed(const struct tt_model_attr *a, const struct tt_av *v) {
  return a != NULL && a->encrypted && v->type == TT_AV_M && tt_av_map_get(v, "edk") != NULL &&
         tt_av_map_get(v, "ct") != NULL;
}

static int sealed_refused(const struct tt_model_attr *a, struct tt_error *err) {
  return tt_error_set(err, TT_ERR_INTERNAL, a->name,
                      "attribute %s was not decrypted before the answer", a->name);
}

/* Converts the value `v` of attribute `a` (NULL: undeclared, inferred) with
 * the DMS rules for its flags, format and role. */
static int convert_value(const struct tt_model_attr *a, const json_t *v, const char *f,
                         struct tt_av *out, struct tt_error *err) {
  size_t len;
  const char *s;
  if (a == NULL)
    return tt_logical_to_av(v, TT_LOGICAL_INFER, 0, f, out, err);
  bool ttl = (a->roles & TT_ROLE_TTL) != 0;
  if (ttl && a->type == TT_AV_N && (s = tt_json_string_text(v, &len)) != NULL &&
      !tt_json_number_syntax(s, len)) {
    /* Convenience input (the spec allows it): an RFC 3339 time becomes the
     * epoch seconds that are stored. */
    int64_t sec;
    tt_av_null(out);
    if (tt_orm_parse_rfc3339(s, len, &sec, NULL) != 0 || sec < 0)
      return tt_error_set(err, TT_ERR_VALIDATION, f,
                          "%s: expected epoch seconds (a number) or an RFC 3339 time after 1970",
                          a->name);
    return tt_av_number_int(out, sec) != 0 ? tt_orm_oom(err) : 0;
  }
  if (tt_logical_to_av(v, a->type, attr_flags(a), f, out, err) != 0)
    return -1;
  if (out->type == TT_AV_N && !a->json &&
      (ttl || a->format == TT_FORMAT_INT || a->format == TT_FORMAT_UNIX_SECONDS)) {
    if (memchr(out->u.bytes, '.', out->len) != NULL ||
        ((ttl || a->format == TT_FORMAT_UNIX_SECONDS) && out->u.bytes[0] == '-')) {
      tt_av_free(out);
      return tt_error_set(err, TT_ERR_VALIDATION, f, "%s: expected %s", a->name,
                          ttl || a->format == TT_FORMAT_UNIX_SECONDS
                              ? "non-negative integer epoch seconds"
                              : "an integer");
    }
  }
  if (out->type == TT_AV_S && a->format == TT_FORMAT_RFC3339NANO && !a->json) {
    int64_t sec;
    if (tt_orm_parse_rfc3339(out->u.bytes, out->len, &sec, NULL) != 0) {
      tt_av_free(out);
      return tt_error_set(err, TT_ERR_VALIDATION, f, "%s: expected an RFC 3339 timestamp",
                          a->name);
    }
  }
  return 0;
}

/* Reads an expected version into *out (NULL or null: none, *out kept): a
 * JSON number holding a non-negative integer that still has a successor in
 * int64. */
static int read_version(const json_t *v, const char *f, struct tt_orm_expected *out,
                        struct tt_error *err) {
  struct tt_json_numbuf nb;
  char canon[TT_NUMBER_TEXT_MAX];
  size_t len;
  int64_t x;
  if (v == NULL || json_is_null(v))
    return 0;
  const char *s = tt_json_number_text(v, &nb, &len);
  if (s == NULL || tt_number_canonical(s, len, canon, sizeof(canon), f, NULL) != 0 ||
      tt_number_to_int64(canon, &x) != 0 || x < 0 || x == INT64_MAX)
    return tt_error_set(err, TT_ERR_VALIDATION, f,
                        "%s: the expected version must be a non-negative integer", f);
  *out = (struct tt_orm_expected){true, x};
  return 0;
}

static bool is_lifecycle(const struct tt_model *m, const struct tt_model_attr *a) {
  return a != NULL && (a == tt_model_lifecycle(m, TT_LC_CREATED_AT) ||
                       a == tt_model_lifecycle(m, TT_LC_UPDATED_AT) ||
                       a == tt_model_lifecycle(m, TT_LC_VERSION));
}

static int lifecycle_refused(const struct tt_model_attr *a, const char *f, struct tt_error *err) {
  return tt_error_set(err, TT_ERR_VALIDATION, f,
                      "%s is written by tabletheoryd (a lifecycle attribute); leave it out", a->name);
}

static int unknown_attr(const struct tt_model *m, const char *name, size_t len, const char *f,
                        struct tt_error *err) {
  if (len == 0)
    return tt_error_set(err, TT_ERR_VALIDATION, f, "attribute names must not be empty");
  return tt_error_set(err, TT_ERR_VALIDATION, f, "%.*s is not an attribute of model %s",
                      tt_utf8_prefix_n(name, len, 100), name, m->name);
}

/* ---- whole items ---------------------------------------------------------- */

/* Fills the next free slot of an M being built with tt_av_map(n) slots.
 * Steals *v. The name is copied. */
static int slot_put(struct tt_av *item, size_t *n, const char *name, size_t len, struct tt_av *v,
                    struct tt_error *err) {
  struct tt_av_member *mb = &item->u.members[(*n)];
  if (tt_av_member_name(mb, name, len) != 0) {
    tt_av_free(v);
    return tt_orm_oom(err);
  }
  mb->value = *v;
  tt_av_null(v);
  (*n)++;
  return 0;
}

int tt_orm_item_finish(const struct tt_model *m, struct tt_av *item, size_t n, int64_t now_ns,
                       int64_t version, const char *field, struct tt_error *err) {
  const struct tt_model_attr *lc[3] = {tt_model_lifecycle(m, TT_LC_CREATED_AT),
                                       tt_model_lifecycle(m, TT_LC_UPDATED_AT),
                                       tt_model_lifecycle(m, TT_LC_VERSION)};
  char ts[TT_ORM_TIME_MAX];
  int tl = tt_orm_format_rfc3339nano(now_ns, ts, sizeof(ts));
  struct tt_av v;
  for (int k = 0; k < 3; k++) {
    if (lc[k] == NULL)
      continue;
    /* A replace at an expected version stores its successor (`version`). */
    if ((k < 2 ? tt_av_string(&v, ts, (size_t)tl) : tt_av_number_int(&v, version)) != 0)
      return tt_orm_oom(err);
    if (slot_put(item, &n, lc[k]->name, lc[k]->name_len, &v, err) != 0)
      return -1;
  }
  item->len = n;
  if (tt_av_map_finish(item, field, err) != 0)
    return -1;
  if (tt_av_item_size(item) > TT_ORM_MAX_ITEM_BYTES)
    return tt_error_set(err, TT_ERR_PAYLOAD_TOO_LARGE, field,
                        "the item is larger than DynamoDB's limit of 400 KB (names and values)");
  return 0;
}

int tt_orm_item_from_json(const struct tt_model *m, const json_t *obj, enum tt_orm_write_mode mode,
                          int64_t now_ns, const char *field, struct tt_av *out,
                          struct tt_orm_expected *expected, struct tt_error *err) {
  const struct tt_model_attr *lc_created = tt_model_lifecycle(m, TT_LC_CREATED_AT);
  const struct tt_model_attr *lc_updated = tt_model_lifecycle(m, TT_LC_UPDATED_AT);
  const struct tt_model_attr *lc_version = tt_model_lifecycle(m, TT_LC_VERSION);
  struct tt_orm_expected ev = {false, 0};
  struct tt_av item = {0}, v = {0};
  size_t n = 0;
  char f[128];
  const char *name;
  size_t name_len;
  json_t *val;
  int rc = -1;

  tt_av_null(out);
  if (expected != NULL)
    *expected = ev;
  if (!json_is_object(obj))
    return tt_error_set(err, TT_ERR_VALIDATION, field, "%s: an item must be a JSON object",
                        field && *field ? field : "item");
  /* One slot per member plus the three lifecycle attributes; members that
   * are not stored leave their slot unused (len is trimmed below). */
  if (tt_av_map(&item, json_object_size(obj) + TT_ORM_LIFECYCLE_SLOTS) != 0)
    return tt_orm_oom(err);

  json_object_keylen_foreach((json_t *)obj, name, name_len, val) {
    const struct tt_model_attr *a = tt_model_attr_find(m, name, name_len);
    tt_expr_field_key(f, sizeof(f), field, name);
    if (name_len == 0 || (a == NULL && !m->additional_attributes)) {
      unknown_attr(m, name, name_len, f, err);
      goto fail;
    }
    if (a != NULL && (a == lc_created || a == lc_updated)) {
      lifecycle_refused(a, f, err);
      goto fail;
    }
    if (a != NULL && a == lc_version) {
      if (mode == TT_ORM_CREATE) {
        tt_error_set(err, TT_ERR_VALIDATION, f,
                     "%s is written by tabletheoryd (0 on create); leave it out", a->name);
        goto fail;
      }
      if (read_version(val, f, &ev, err) != 0)
        goto fail;
      continue;
    }
    if (convert_value(a, val, f, &v, err) != 0)
      goto fail;
    if (a != NULL && tt_model_attr_is_key(m, a)) {
      if (tt_orm_key_check_value(a, &v, f, err) != 0)
        goto fail;
    } else if (a != NULL && a->omit_empty && tt_orm_value_is_empty(val, a->type, false)) {
      tt_av_free(&v);
      continue;
    } else if (a != NULL && a->required && v.type == TT_AV_NULL && a->type != TT_AV_NULL) {
      tt_error_set(err, TT_ERR_VALIDATION, f, "attribute %s is required and must not be null",
                   a->name);
      goto fail;
    }
    if (slot_put(&item, &n, name, name_len, &v, err) != 0)
      goto fail;
  }

  /* Keys and required attributes must be there (lifecycle ones are ours). */
  for (size_t i = 0; i < m->n_attrs; i++) {
    const struct tt_model_attr *a = &m->attrs[i];
    bool key = tt_model_attr_is_key(m, a);
    if ((!key && !a->required) || is_lifecycle(m, a) ||
        json_object_get(obj, a->name) != NULL)
      continue;
    tt_expr_field_key(f, sizeof(f), field, a->name);
    tt_error_set(err, TT_ERR_VALIDATION, f, "missing %s attribute %s", key ? "key" : "required",
                 a->name);
    goto fail;
  }
  /* A required omit_empty attribute given empty was skipped above. */
  for (size_t i = 0; i < m->n_attrs; i++) {
    const struct tt_model_attr *a = &m->attrs[i];
    if (!a->required || !a->omit_empty || is_lifecycle(m, a) || tt_model_attr_is_key(m, a) ||
        !tt_orm_value_is_empty(json_object_get(obj, a->name), a->type, false))
      continue;
    tt_expr_field_key(f, sizeof(f), field, a->name);
    tt_error_set(err, TT_ERR_VALIDATION, f, "attribute %s is required and must not be empty",
                 a->name);
    goto fail;
  }

  if (tt_orm_item_finish(m, &item, n, now_ns, ev.present ? ev.version + 1 : 0, field, err) != 0)
    goto fail;
  *out = item;
  memset(&item, 0, sizeof(item));
  if (expected != NULL)
    *expected = ev;
  rc = 0;
fail:
  tt_av_free(&v);
  tt_av_free(&item); /* unused slots hold no allocation */
  return rc;
}

int tt_orm_item_set_version(const struct tt_model *m, struct tt_av *item, int64_t version) {
  const struct tt_model_attr *a = tt_model_lifecycle(m, TT_LC_VERSION);
  struct tt_av v;
  if (a == NULL)
    return 0;
  if (tt_av_number_int(&v, version) != 0)
    return -1;
  if (tt_av_map_put(item, a->name, a->name_len, &v) != 0) {
    tt_av_free(&v);
    return -1;
  }
  return 0;
}

/* ---- reading ---------------------------------------------------------------- */

const struct tt_av *tt_orm_item_version(const struct tt_model *m, const struct tt_av *item) {
  const struct tt_model_attr *v = tt_model_lifecycle(m, TT_LC_VERSION);
  const struct tt_av *ver = v ? tt_av_map_getn(item, v->name, v->name_len) : NULL;
  return ver && ver->type == TT_AV_N ? ver : NULL;
}

/* Whether attribute `name` is kept by a projection list (NULL keeps all):
 * a path whose first name is it ("a", "a.b", "`a`"). */
static bool selected(const struct tt_select *select, const char *name, size_t len) {
  if (select == NULL || select->paths == NULL)
    return true;
  for (size_t i = 0; i < select->n; i++) {
    const char *h;
    size_t hl;
    tt_expr_rest_path_head(select->paths[i], &h, &hl);
    if (hl == len && memcmp(h, name, len) == 0)
      return true;
  }
  return false;
}

static int write_failed(struct tt_error *err) {
  return tt_error_set(err, TT_ERR_INTERNAL, NULL, "response buffer limit or memory exhausted");
}

/* About how long the answer for `item` is: names and scalar texts with
 * their punctuation, a guess for containers. Only a hint for the buffer. */
static size_t answer_size_hint(const struct tt_av *item) {
  size_t n = 2;
  for (size_t i = 0; i < item->len; i++) {
    const struct tt_av_member *mb = &item->u.members[i];
    const struct tt_av *v = &mb->value;
    n += mb->name_len + 4;
    if (v->type == TT_AV_S || v->type == TT_AV_N)
      n += v->len + 2;
    else if (v->type == TT_AV_B)
      n += v->len / 3 * 4 + 6;
    else if (v->type == TT_AV_BOOL || v->type == TT_AV_NULL)
      n += 5;
    else
      n += 16 * v->len + 2;
  }
  return n;
}

/* `"name":` -- a model attribute's is written once, when the model loads. */
static int write_key(struct tt_buf *b, const struct tt_model_attr *a,
                     const struct tt_av_member *mb) {
  if (a)
    return tt_buf_append(b, a->json_key, a->json_key_len);
  return tt_json_write_string(b, mb->name, mb->name_len, 0) != 0 ? -1 : tt_buf_append(b, ":", 1);
}

int tt_orm_item_write(struct tt_buf *b, const struct tt_model *m, const struct tt_av *item,
                      const struct tt_select *select, struct tt_error *err) {
  bool first = true;
  if (item->type != TT_AV_M)
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "stored item is not a map");
  /* Grow the answer once rather than double it from 256 bytes a few times
   * (a ~1 KB item took three reallocs). Only a hint: when it does not fit
   * the cap, the appends below decide, so the answer and its errors are
   * what they were. A projection may keep little of the item: no hint. */
  if (select == NULL || select->paths == NULL)
    (void)tt_buf_reserve(b, answer_size_hint(item));
  if (tt_buf_append(b, "{", 1) != 0)
    return write_failed(err);
  size_t pos = 0; /* members come in name order: a merge walk finds their attributes */
  for (size_t i = 0; i < item->len; i++) {
    const struct tt_av_member *mb = &item->u.members[i];
    if (!selected(select, mb->name, mb->name_len))
      continue;
    const struct tt_model_attr *a = tt_model_attr_seek(m, mb->name, mb->name_len, &pos);
    if (still_sealed(a, &mb->value))
      return sealed_refused(a, err);
    if ((!first && tt_buf_append(b, ",", 1) != 0) || write_key(b, a, mb) != 0 ||
        tt_logical_write(b, &mb->value, a ? a->type : TT_LOGICAL_INFER, attr_flags(a)) != 0)
      return write_failed(err);
    first = false;
  }
  if (tt_buf_append(b, "}", 1) != 0)
    return write_failed(err);
  return 0;
}

json_t *tt_orm_item_to_json(const struct tt_model *m, const struct tt_av *item,
                            const struct tt_select *select, struct tt_error *err) {
  json_t *obj;
  if (item->type != TT_AV_M) {
    tt_error_set(err, TT_ERR_INTERNAL, NULL, "stored item is not a map");
    return NULL;
  }
  if ((obj = json_object()) == NULL) {
    tt_orm_oom(err);
    return NULL;
  }
  for (size_t i = 0; i < item->len; i++) {
    const struct tt_av_member *mb = &item->u.members[i];
    if (!selected(select, mb->name, mb->name_len))
      continue;
    const struct tt_model_attr *a = tt_model_attr_find(m, mb->name, mb->name_len);
    if (still_sealed(a, &mb->value)) {
      sealed_refused(a, err);
      json_decref(obj);
      return NULL;
    }
    json_t *x = tt_logical_from_av(&mb->value, a ? a->type : TT_LOGICAL_INFER, attr_flags(a));
    if (x == NULL || json_object_setn_new_nocheck(obj, mb->name, mb->name_len, x) != 0) {
      tt_orm_oom(err);
      json_decref(obj);
      return NULL;
    }
  }
  return obj;
}

/* ---- updates ---------------------------------------------------------------- */

size_t tt_orm_action_root(const struct tt_orm_action *x, const char **name) {
  size_t n = strlen(x->path);
  *name = x->path;
  if (!x->literal)
    tt_expr_rest_path_head(x->path, name, &n);
  return n;
}

void tt_orm_update_init(struct tt_orm_update *u) {
  memset(u, 0, sizeof(*u));
  u->key.type = TT_AV_NULL;
}

void tt_orm_update_free(struct tt_orm_update *u) {
  for (size_t i = 0; i < u->n_actions; i++) {
    free(u->actions[i].path);
    tt_av_free(&u->actions[i].value);
  }
  free(u->actions);
  tt_av_free(&u->key);
  tt_orm_update_init(u);
}

/* Appends an action; steals *value (freed on failure too). */
static int push_action(struct tt_orm_update *u, enum tt_expr_update_op kind, const char *path,
                       bool literal, struct tt_av *value, const char *f, struct tt_error *err) {
  if (u->n_actions == u->cap_actions) {
    size_t cap = u->cap_actions ? u->cap_actions * 2 : 8;
    struct tt_orm_action *na = realloc(u->actions, cap * sizeof(*na));
    if (na == NULL)
      goto oom;
    u->actions = na;
    u->cap_actions = cap;
  }
  struct tt_orm_action *act = &u->actions[u->n_actions];
  memset(act, 0, sizeof(*act));
  if ((act->path = strdup(path)) == NULL)
    goto oom;
  act->kind = kind;
  act->literal = literal;
  act->value.type = TT_AV_NULL;
  if (value != NULL) {
    act->value = *value;
    tt_av_null(value);
  }
  tt_utf8_copy(act->field, sizeof(act->field), f);
  u->n_actions++;
  return 0;
oom:
  if (value != NULL)
    tt_av_free(value);
  return tt_orm_oom(err);
}


/* Checks that the caller may write attribute `a` (NULL: undeclared). */
static int target_allowed(const struct tt_model *m, const struct tt_model_attr *a, const char *f,
                          struct tt_error *err) {
  if (a == NULL)
    return 0;
  if (tt_model_attr_is_key(m, a))
    return tt_error_set(err, TT_ERR_VALIDATION, f,
                        "%s is a key attribute; a key cannot be updated (write a new item)",
                        a->name);
  if (is_lifecycle(m, a))
    return lifecycle_refused(a, f, err);
  return 0;
}

static int remove_required(const struct tt_model_attr *a, const char *f, struct tt_error *err) {
  return tt_error_set(err, TT_ERR_VALIDATION, f,
                      "attribute %s is required; it cannot be removed or set empty", a->name);
}

/* SET (or SET_IF_NOT_EXISTS) of the whole attribute `a` (NULL: undeclared)
 * to val: an empty value of an omit_empty attribute is never stored, so set
 * means remove and set-if-absent of nothing is nothing; a required
 * attribute can be neither removed nor set to null. */
static int set_attr(const struct tt_model_attr *a, enum tt_expr_update_op op, const char *path,
                    bool literal, const json_t *val, const char *f, struct tt_orm_update *u,
                    struct tt_error *err) {
  struct tt_av v = {0};
  if (a != NULL && a->omit_empty && tt_orm_value_is_empty(val, a->type, false)) {
    if (op == TT_EXPR_UPD_SET_IF_NOT_EXISTS)
      return 0;
    if (a->required)
      return remove_required(a, f, err);
    return push_action(u, TT_EXPR_UPD_REMOVE, path, literal, NULL, f, err);
  }
  if (convert_value(a, val, f, &v, err) != 0)
    return -1;
  if (a != NULL && a->required && v.type == TT_AV_NULL && a->type != TT_AV_NULL) {
    tt_av_free(&v);
    return remove_required(a, f, err);
  }
  return push_action(u, op, path, literal, &v, f, err);
}

/* TableTheory form: {"fields": [...]?, "item": {...}}. */
static int update_item_form(const struct tt_model *m, const json_t *body, const char *field,
                            struct tt_orm_update *u, struct tt_error *err) {
  const struct tt_model_attr *lc_version = tt_model_lifecycle(m, TT_LC_VERSION);
  const json_t *item = json_object_get(body, "item");
  const json_t *fields = json_object_get(body, "fields");
  char pf[128], f[128];
  const char *name;
  size_t name_len;
  json_t *val;
  struct tt_av v = {0};
  int rc = -1;

  tt_expr_field_key(pf, sizeof(pf), field, "item");
  if (!json_is_object(item))
    return tt_error_set(err, TT_ERR_VALIDATION, pf,
                        "%s: the update form with `fields` needs an `item` object", pf);
  if (fields != NULL && json_is_null(fields))
    fields = NULL;
  if (tt_av_map(&u->key, 0) != 0)
    return tt_orm_oom(err);

  /* Every member is checked, selected or not: an unknown or library-owned
   * attribute is a mistake whatever `fields` says. */
  json_object_keylen_foreach((json_t *)item, name, name_len, val) {
    const struct tt_model_attr *a = tt_model_attr_find(m, name, name_len);
    tt_expr_field_key(f, sizeof(f), pf, name);
    if (name_len == 0 || (a == NULL && !m->additional_attributes)) {
      unknown_attr(m, name, name_len, f, err);
      goto fail;
    }
    if (a != NULL && a == lc_version) {
      if (read_version(val, f, &u->expected, err) != 0)
        goto fail;
      continue;
    }
    if (a != NULL && tt_model_attr_is_key(m, a)) {
      if (tt_logical_to_av(val, a->type, 0, f, &v, err) != 0 ||
          tt_orm_key_check_value(a, &v, f, err) != 0)
        goto fail;
      if (tt_av_map_put(&u->key, a->name, a->name_len, &v) != 0) {
        tt_orm_oom(err);
        goto fail;
      }
      continue;
    }
    if (target_allowed(m, a, f, err) != 0)
      goto fail;
    if (fields != NULL)
      continue; /* written below, in the order of `fields` */
    /* Sparse selection (no `fields`): an empty value is not selected. */
    if (tt_orm_value_is_empty(val, a ? a->type : TT_LOGICAL_INFER, true))
      continue;
    if (convert_value(a, val, f, &v, err) != 0 ||
        push_action(u, TT_EXPR_UPD_SET, name, true, &v, f, err) != 0)
      goto fail;
  }

  if (fields != NULL) {
    char ff[128];
    size_t i;
    json_t *fj;
    tt_expr_field_key(ff, sizeof(ff), field, "fields");
    if (!json_is_array(fields)) {
      tt_error_set(err, TT_ERR_VALIDATION, ff, "%s: must be an array of attribute names", ff);
      goto fail;
    }
    json_array_foreach(fields, i, fj) {
      char fi[128];
      size_t len;
      const char *fname = tt_json_string_text(fj, &len);
      tt_expr_field_index(fi, sizeof(fi), ff, i);
      if (fname == NULL) {
        tt_error_set(err, TT_ERR_VALIDATION, fi, "%s: must be an attribute name", fi);
        goto fail;
      }
      const struct tt_model_attr *a = tt_model_attr_find(m, fname, len);
      if (len == 0 || memchr(fname, '\0', len) != NULL ||
          (a == NULL && !m->additional_attributes)) {
        unknown_attr(m, fname, len, fi, err);
        goto fail;
      }
      if (target_allowed(m, a, fi, err) != 0)
        goto fail;
      for (size_t k = 0; k < i; k++) {
        size_t plen;
        const char *prev = tt_json_string_text(json_array_get(fields, k), &plen);
        if (prev != NULL && plen == len && memcmp(prev, fname, len) == 0) {
          tt_error_set(err, TT_ERR_VALIDATION, fi, "%s is listed twice", fname);
          goto fail;
        }
      }
      tt_expr_field_key(f, sizeof(f), pf, fname);
      val = json_object_get(item, fname);
      if (val == NULL) {
        tt_error_set(err, TT_ERR_VALIDATION, f,
                     "fields lists %s but the item has no %s; give its value (or use remove)",
                     fname, fname);
        goto fail;
      }
      if (set_attr(a, TT_EXPR_UPD_SET, fname, true, val, f, u, err) != 0)
        goto fail;
    }
  }
  rc = 0;
fail:
  tt_av_free(&v);
  return rc;
}

static const struct {
  const char *key;
  enum tt_expr_update_op op;
} op_keys[] = {{"set", TT_EXPR_UPD_SET},       {"set_if_not_exists", TT_EXPR_UPD_SET_IF_NOT_EXISTS},
               {"remove", TT_EXPR_UPD_REMOVE}, {"add", TT_EXPR_UPD_ADD},
               {"delete", TT_EXPR_UPD_DELETE}, {"append", TT_EXPR_UPD_APPEND},
               {"prepend", TT_EXPR_UPD_PREPEND}};

#define N_OP_KEYS (sizeof(op_keys) / sizeof(op_keys[0]))

/* One operator-form action on REST path `path` with JSON value `val` (NULL
 * for REMOVE). */
static int operator_action(const struct tt_model *m, enum tt_expr_update_op op, const char *path,
                           const json_t *val, const char *f, struct tt_orm_update *u,
                           struct tt_error *err) {
  struct tt_av v = {0};
  if (!tt_expr_rest_path_valid(path))
    return tt_expr_bad_path(f, err);
  const char *top_name;
  size_t top;
  bool nested = path[tt_expr_rest_path_head(path, &top_name, &top)] != '\0';
  const struct tt_model_attr *a = tt_model_attr_find(m, top_name, top);
  enum tt_av_type t = a ? a->type : TT_LOGICAL_INFER;
  if (a == NULL && !m->additional_attributes)
    return unknown_attr(m, top_name, top, f, err);
  if (target_allowed(m, a, f, err) != 0)
    return -1;
  /* TableTheory writes an encrypted attribute whole: no add, delete, append
   * or prepend, no nested path (its update_expression.go refuses them). */
  if (a != NULL && a->encrypted &&
      (nested || (op != TT_EXPR_UPD_SET && op != TT_EXPR_UPD_SET_IF_NOT_EXISTS &&
                  op != TT_EXPR_UPD_REMOVE)))
    return tt_error_set(err, TT_ERR_ENCRYPTED_FIELD_NOT_QUERYABLE, f,
                        "attribute %s is encrypted: it is only ever written whole (set, "
                        "set_if_not_exists or remove of the attribute itself)",
                        a->name);
  if (nested && a != NULL && t != TT_AV_M && t != TT_AV_L)
    return tt_error_set(err, TT_ERR_VALIDATION, f,
                        "%s is of type %s; only M and L attributes have nested paths", a->name,
                        tt_model_type_name(t));

  switch (op) {
  case TT_EXPR_UPD_REMOVE:
    if (!nested && a != NULL && a->required)
      return remove_required(a, f, err);
    return push_action(u, op, path, false, NULL, f, err);
  case TT_EXPR_UPD_SET:
  case TT_EXPR_UPD_SET_IF_NOT_EXISTS:
    if (nested)
      return tt_logical_to_av(val, TT_LOGICAL_INFER, 0, f, &v, err) != 0
                 ? -1
                 : push_action(u, op, path, false, &v, f, err);
    return set_attr(a, op, path, false, val, f, u, err);
  case TT_EXPR_UPD_ADD:
    if (!nested && a != NULL && t != TT_AV_N && !is_set_type(t))
      return tt_error_set(err, TT_ERR_VALIDATION, f,
                          "add works on N and set attributes; %s is of type %s", a->name,
                          tt_model_type_name(t));
    if ((nested ? tt_logical_to_av(val, TT_LOGICAL_INFER, 0, f, &v, err)
                : convert_value(a, val, f, &v, err)) != 0)
      return -1;
    if (v.type != TT_AV_N && !is_set_type(v.type)) {
      tt_av_free(&v);
      return tt_error_set(err, TT_ERR_VALIDATION, f,
                          "%s: add takes a number, or a non-empty array for a declared set", f);
    }
    return push_action(u, op, path, false, &v, f, err);
  case TT_EXPR_UPD_DELETE:
    if (nested || a == NULL || !is_set_type(t))
      return tt_error_set(err, TT_ERR_VALIDATION, f,
                          "%s: delete works on declared set attributes (SS, NS, BS)", f);
    if (convert_value(a, val, f, &v, err) != 0)
      return -1;
    if (v.type == TT_AV_NULL)
      return tt_error_set(err, TT_ERR_VALIDATION, f, "%s: delete takes a non-empty array", f);
    return push_action(u, op, path, false, &v, f, err);
  case TT_EXPR_UPD_APPEND:
  case TT_EXPR_UPD_PREPEND:
    if (!nested && a != NULL && t != TT_AV_L)
      return tt_error_set(err, TT_ERR_VALIDATION, f,
                          "append and prepend work on L attributes; %s is of type %s", a->name,
                          tt_model_type_name(t));
    if (!json_is_array(val))
      return tt_error_set(err, TT_ERR_VALIDATION, f, "%s: expected a JSON array of elements", f);
    if (tt_logical_to_av(val, TT_AV_L, 0, f, &v, err) != 0)
      return -1;
    return push_action(u, op, path, false, &v, f, err);
  }
  return tt_error_set(err, TT_ERR_INTERNAL, f, "unknown update operator");
}

static int update_operator_form(const struct tt_model *m, const json_t *body, const char *field,
                                struct tt_orm_update *u, struct tt_error *err) {
  char f[128], af[128];
  for (size_t k = 0; k < N_OP_KEYS; k++) {
    const json_t *j = json_object_get(body, op_keys[k].key);
    if (j == NULL || json_is_null(j))
      continue;
    tt_expr_field_key(f, sizeof(f), field, op_keys[k].key);
    if (op_keys[k].op == TT_EXPR_UPD_REMOVE) {
      size_t i;
      json_t *p;
      if (!json_is_array(j))
        return tt_error_set(err, TT_ERR_VALIDATION, f, "%s: must be an array of paths", f);
      json_array_foreach(j, i, p) {
        size_t plen;
        const char *path = tt_json_string_text(p, &plen);
        tt_expr_field_index(af, sizeof(af), f, i);
        if (path == NULL || memchr(path, '\0', plen) != NULL)
          return tt_error_set(err, TT_ERR_VALIDATION, af, "%s: must be an attribute path", af);
        if (operator_action(m, TT_EXPR_UPD_REMOVE, path, NULL, af, u, err) != 0)
          return -1;
      }
      continue;
    }
    const char *key;
    json_t *v;
    if (!json_is_object(j))
      return tt_error_set(err, TT_ERR_VALIDATION, f, "%s: must be an object of path: value", f);
    json_object_foreach((json_t *)j, key, v) {
      tt_expr_field_key(af, sizeof(af), f, key);
      if (operator_action(m, op_keys[k].op, key, v, af, u, err) != 0)
        return -1;
    }
  }
  return 0;
}

int tt_orm_update_push(struct tt_orm_update *u, enum tt_expr_update_op kind, const char *name,
                       struct tt_av *value, struct tt_error *err) {
  return push_action(u, kind, name, false, value, name, err);
}

int tt_orm_update_lifecycle(const struct tt_model *m, int64_t now_ns, struct tt_orm_update *u,
                            struct tt_error *err) {
  const struct tt_model_attr *lc_updated = tt_model_lifecycle(m, TT_LC_UPDATED_AT);
  const struct tt_model_attr *lc_version = tt_model_lifecycle(m, TT_LC_VERSION);
  struct tt_av v;
  /* Library-owned attributes come last, after the caller's actions. */
  if (lc_updated != NULL) {
    char ts[TT_ORM_TIME_MAX];
    int tl = tt_orm_format_rfc3339nano(now_ns, ts, sizeof(ts));
    if (tt_av_string(&v, ts, (size_t)tl) != 0)
      return tt_orm_oom(err);
    if (push_action(u, TT_EXPR_UPD_SET, lc_updated->name, true, &v, lc_updated->name, err) != 0)
      return -1;
  }
  if (lc_version != NULL) {
    if (tt_av_number_int(&v, 1) != 0)
      return tt_orm_oom(err);
    if (push_action(u, TT_EXPR_UPD_ADD, lc_version->name, true, &v, lc_version->name, err) != 0)
      return -1;
  }
  return 0;
}

int tt_orm_update_from_json(const struct tt_model *m, const json_t *body, int64_t now_ns,
                            const char *field, struct tt_orm_update *out, struct tt_error *err) {
  const struct tt_model_attr *lc_version = tt_model_lifecycle(m, TT_LC_VERSION);
  bool has_ops = false, has_item;
  char f[128];
  int rc = -1;

  tt_orm_update_init(out);
  if (!json_is_object(body))
    return tt_error_set(err, TT_ERR_VALIDATION, field, "%s: an update must be a JSON object",
                        field && *field ? field : "update");
  for (size_t k = 0; k < N_OP_KEYS; k++)
    has_ops |= json_object_get(body, op_keys[k].key) != NULL;
  has_item = json_object_get(body, "item") != NULL || json_object_get(body, "fields") != NULL;
  if (has_ops && has_item) {
    tt_expr_field_key(f, sizeof(f), field, "item");
    tt_error_set(err, TT_ERR_VALIDATION, f,
                 "an update uses either item/fields or the operators (set, remove, add, ...), "
                 "not both");
    goto fail;
  }
  if ((has_item ? update_item_form(m, body, field, out, err)
                : update_operator_form(m, body, field, out, err)) != 0)
    goto fail;

  const json_t *ev = json_object_get(body, "expected_version");
  tt_expr_field_key(f, sizeof(f), field, "expected_version");
  struct tt_orm_expected x = {false, 0};
  if (read_version(ev, f, &x, err) != 0)
    goto fail;
  if (x.present && out->expected.present) {
    tt_error_set(err, TT_ERR_VALIDATION, f,
                 "give the expected version once: in the item or as expected_version");
    goto fail;
  }
  if (x.present)
    out->expected = x;
  if (out->expected.present && lc_version == NULL) {
    tt_error_set(err, TT_ERR_VALIDATION, f, "model %s has no version attribute", m->name);
    goto fail;
  }

  if (tt_orm_update_lifecycle(m, now_ns, out, err) != 0)
    goto fail;
  if (out->n_actions == 0) {
    tt_error_set(err, TT_ERR_VALIDATION, field, "%s: the update changes nothing",
                 field && *field ? field : "update");
    goto fail;
  }
  rc = 0;
fail:
  if (rc != 0)
    tt_orm_update_free(out);
  return rc;
}

/* ---- the single-item write: conditions, update expressions, items ------------ */

int tt_orm_cond_exists(struct tt_expr_builder *b, struct tt_buf *c, const char *attr, bool exists,
                       struct tt_error *err) {
  if ((c->len && tt_buf_puts(c, " AND ") != 0) ||
      tt_buf_puts(c, exists ? "attribute_exists(" : "attribute_not_exists(") != 0)
    return tt_orm_oom(err);
  if (tt_expr_builder_path(b, attr, true, c, "key", err) != 0)
    return -1;
  return tt_buf_puts(c, ")") != 0 ? tt_orm_oom(err) : 0;
}

int tt_orm_cond_equals(struct tt_expr_builder *b, struct tt_buf *c, const char *attr,
                       const struct tt_av *value, const char *field, struct tt_error *err) {
  struct tt_av v;
  if (tt_av_clone(&v, value) != 0)
    return tt_orm_oom(err);
  /* A buffer that cannot grow is memory (no cap): say so, the error is
   * otherwise left unset. */
  int rc = c->len && tt_buf_puts(c, " AND ") != 0 ? tt_orm_oom(err) : 0;
  if (rc == 0 && tt_expr_builder_path(b, attr, true, c, field, err) != 0)
    rc = -1;
  if (rc == 0 && tt_buf_puts(c, " = ") != 0)
    rc = tt_orm_oom(err);
  if (rc != 0) {
    tt_av_free(&v);
    return rc;
  }
  return tt_expr_builder_value(b, &v, c, err);
}

int tt_orm_write_condition(const struct tt_model *m, struct tt_expr_builder *b,
                           const struct tt_orm_write_cond *w, struct tt_buf *c,
                           struct tt_error *err) {
  char f[160];
  if ((w->absent && tt_orm_cond_exists(b, c, m->pk->name, false, err) != 0) ||
      (w->exists && tt_orm_cond_exists(b, c, m->pk->name, true, err) != 0))
    return -1;
  const struct tt_model_attr *v = tt_model_lifecycle(m, TT_LC_VERSION);
  if (w->expected.present && v) {
    struct tt_av ev;
    if (tt_av_number_int(&ev, w->expected.version) != 0)
      return tt_orm_oom(err);
    tt_expr_field_key(f, sizeof(f), w->field, "expected_version");
    int rc = tt_orm_cond_equals(b, c, v->name, &ev, f, err);
    tt_av_free(&ev);
    if (rc != 0)
      return -1;
  }
  if (w->condition) {
    char *text = NULL;
    tt_expr_field_key(f, sizeof(f), w->field, "condition");
    if (tt_expr_build_condition(b, w->condition, f, &text, err) != 0)
      return -1;
    int rc = (c->len && tt_buf_puts(c, " AND ") != 0) || tt_buf_printf(c, "(%s)", text) != 0
                 ? tt_orm_oom(err)
                 : 0;
    free(text);
    if (rc != 0)
      return -1;
  }
  return 0;
}

int tt_orm_update_expression(const struct tt_model *m, struct tt_expr_builder *b,
                             const struct tt_orm_update *u, bool upsert, int64_t now_ns,
                             const char *field, char **text, struct tt_error *err) {
  for (size_t i = 0; i < u->n_actions; i++) {
    const struct tt_orm_action *x = &u->actions[i];
    struct tt_av copy, *value = NULL;
    if (x->kind != TT_EXPR_UPD_REMOVE) {
      if (tt_av_clone(&copy, &x->value) != 0)
        return tt_orm_oom(err);
      value = &copy;
    }
    char f[200];
    tt_expr_field_key(f, sizeof(f), field, x->field);
    if (tt_expr_build_update_action(b, x->kind, x->path, x->literal, value, f, err) != 0)
      return -1;
  }
  /* An upsert may create the item: give it the creation time it would have
   * had from POST (if_not_exists keeps an existing one). */
  const struct tt_model_attr *c = tt_model_lifecycle(m, TT_LC_CREATED_AT);
  if (upsert && c != NULL) {
    char t[TT_ORM_TIME_MAX];
    struct tt_av v;
    if (tt_orm_format_rfc3339nano(now_ns, t, sizeof(t)) < 0 || tt_av_string(&v, t, strlen(t)) != 0)
      return tt_orm_oom(err);
    if (tt_expr_build_update_action(b, TT_EXPR_UPD_SET_IF_NOT_EXISTS, c->name, true, &v, c->name,
                                    err) != 0)
      return -1;
  }
  return tt_expr_build_update_finish(b, text, err);
}

int tt_orm_expected_merge(struct tt_orm_expected *expected, const struct tt_orm_expected *body,
                          const char *field, const char *msg, struct tt_error *err) {
  if (!body->present)
    return 0;
  if (expected->present && expected->version != body->version)
    return tt_error_set(err, TT_ERR_VALIDATION, field, "%s", msg);
  *expected = *body;
  return 0;
}

int tt_orm_item_put_prepare(const struct tt_model *m, const struct tt_av *key, struct tt_av *item,
                            const struct tt_orm_expected *item_expected,
                            struct tt_orm_expected *expected, struct tt_error *err) {
  /* The path's key goes into the item, or must equal the item's copy. */
  for (size_t i = 0; i < key->len; i++) {
    const struct tt_av_member *k = &key->u.members[i];
    const struct tt_av *given = tt_av_map_get(item, k->name);
    if (given && !tt_av_equal(given, &k->value))
      return tt_error_set(err, TT_ERR_VALIDATION, k->name,
                          "%s in the body differs from the key in the path", k->name);
    if (given == NULL && tt_orm_map_put_copy(item, k->name, k->name_len, &k->value) != 0)
      return tt_orm_oom(err);
  }
  if (tt_orm_expected_merge(expected, item_expected, "version",
                            "the body's version differs from If-Match", err) != 0)
    return -1;
  /* The caller refused If-Match on a model without a version. */
  if (expected->present && tt_orm_item_set_version(m, item, expected->version + 1) != 0)
    return tt_orm_oom(err);
  return 0;
}
