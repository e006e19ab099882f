/* SPDX-License-Identifier: Apache-2.0 */
/* codec_logical.c -- REST API JSON values <-> tt_av by DMS type, exact
 * numbers, sets, base64 binaries and the json:true rule. */
#include "value/codec_logical.h"

#include <stdlib.h>
#include <string.h>

#include "value/base64.h"
#include "value/json_exact.h"
#include "value/number.h"
#include "value/path.h"

static int expect(struct tt_vpath *c, const char *what) {
  const char *p = c->len ? c->path : "value";
  return tt_error_set(c->err, TT_ERR_VALIDATION, c->path, "%s: expected %s", p, what);
}

static int convert(struct tt_vpath *c, const json_t *in, enum tt_av_type t, unsigned flags,
                   int depth, struct tt_av *out);

static int number_from(struct tt_vpath *c, const json_t *in, int depth, struct tt_av *out) {
  struct tt_json_numbuf nb;
  size_t len;
  const char *s = tt_json_number_text(in, &nb, &len);
  if (s == NULL)
    s = tt_json_string_text(in, &len);
  if (s == NULL)
    return expect(c, "a number or a decimal string (N)");
  return tt_av_number_text(out, s, len, c->len ? c->path : "value", c->err);
}

static int binary_from(struct tt_vpath *c, const json_t *in, int depth, struct tt_av *out) {
  size_t len;
  const char *s = tt_json_string_text(in, &len);
  if (s == NULL)
    return expect(c, "a base64 string (B)");
  int rc = tt_base64_decode_av(out, s, len, TT_BASE64_STD, 0);
  return rc < 0 ? tt_vpath_oom(c) : rc > 0 ? expect(c, "standard base64 with padding (B)") : 0;
}

static int set_string_from(struct tt_vpath *c, const json_t *in, int depth, struct tt_av *out) {
  size_t len;
  const char *s = tt_json_string_text(in, &len);
  if (s == NULL)
    return expect(c, "a string (SS member)");
  return tt_av_string(out, s, len) != 0 ? tt_vpath_oom(c) : 0;
}

/* A member or element of a map or list: its type is inferred. */
static int inferred_from(struct tt_vpath *c, const json_t *in, int depth, struct tt_av *out) {
  return convert(c, in, TT_LOGICAL_INFER, 0, depth, out);
}

static int set_from(struct tt_vpath *c, const json_t *in, enum tt_av_type t,
                    struct tt_av *out) {
  static const char *const what[] = {[TT_AV_SS] = "a JSON array of strings (SS)",
                                     [TT_AV_NS] = "a JSON array of numbers (NS)",
                                     [TT_AV_BS] = "a JSON array of base64 strings (BS)"};
  if (!json_is_array(in))
    return expect(c, what[t]);
  size_t n = json_array_size(in);
  if (n == 0)
    return 0; /* an empty set is stored as NULL (DynamoDB has no empty sets) */
  if (tt_av_list(out, t, n) != 0)
    return tt_vpath_oom(c);
  tt_vpath_elem_fn fn = t == TT_AV_SS ? set_string_from : t == TT_AV_NS ? number_from : binary_from;
  if (tt_vpath_elems(c, in, 0, fn, out) != 0)
    return -1;
  return tt_av_set_finish(out, c->path, c->err);
}

static int map_from(struct tt_vpath *c, const json_t *in, int depth, struct tt_av *out) {
  if (tt_av_map(out, json_object_size(in)) != 0)
    return tt_vpath_oom(c);
  return tt_vpath_members(c, in, depth, inferred_from, false, expect, "map keys without NUL",
                          out);
}

static int list_from(struct tt_vpath *c, const json_t *in, int depth, struct tt_av *out) {
  if (tt_av_list(out, TT_AV_L, json_array_size(in)) != 0)
    return tt_vpath_oom(c);
  return tt_vpath_elems(c, in, depth, inferred_from, out);
}

/* json:true with type S: a deterministic JSON text (sorted keys, no
 * spaces, canonical numbers, Go's string escaping), so the same document
 * is always stored as the same bytes whatever order or spacing the client
 * used. */
static int json_string_from(struct tt_vpath *c, const json_t *in, struct tt_av *out) {
  struct tt_buf b;
  if (tt_json_too_deep(in, TT_LOGICAL_MAX_DEPTH))
    return expect(c, "a JSON document nested at most 32 levels");
  tt_buf_init(&b, 0);
  if (tt_json_dump(in, TT_JSON_SORT_KEYS | TT_JSON_CANON_NUMBERS | TT_JSON_GO_ESCAPE, &b) != 0) {
    tt_buf_free(&b);
    return tt_vpath_oom(c);
  }
  size_t len;
  char *text = tt_buf_steal(&b, &len);
  /* Hand the buffer over as the S bytes: no second copy. */
  out->type = TT_AV_S;
  out->len = len;
  out->u.bytes = text;
  return 0;
}

static int convert(struct tt_vpath *c, const json_t *in, enum tt_av_type t, unsigned flags,
                   int depth, struct tt_av *out) {
  int rc;
  tt_av_null(out);
  if (in == NULL || json_is_null(in))
    return 0;
  if (t == TT_LOGICAL_INFER) {
    if (tt_json_is_number(in))
      t = TT_AV_N;
    else if (json_is_string(in))
      t = TT_AV_S;
    else if (json_is_boolean(in))
      t = TT_AV_BOOL;
    else if (json_is_object(in))
      t = TT_AV_M;
    else
      t = TT_AV_L;
  }
  switch (t) {
  case TT_AV_S: {
    if (flags & TT_LOGICAL_JSON) {
      rc = json_string_from(c, in, out);
      break;
    }
    size_t len;
    const char *s = tt_json_string_text(in, &len);
    if (s == NULL)
      return expect(c, "a string (S)");
    rc = tt_av_string(out, s, len) != 0 ? tt_vpath_oom(c) : 0;
    break;
  }
  case TT_AV_N:
    rc = number_from(c, in, depth, out);
    break;
  case TT_AV_B:
    rc = binary_from(c, in, depth, out);
    break;
  case TT_AV_BOOL:
    if (!json_is_boolean(in))
      return expect(c, "true or false (BOOL)");
    tt_av_bool(out, json_is_true(in));
    return 0;
  case TT_AV_NULL:
    return expect(c, "null (NULL)");
  case TT_AV_SS:
  case TT_AV_NS:
  case TT_AV_BS:
    rc = set_from(c, in, t, out);
    break;
  case TT_AV_M:
  case TT_AV_L:
    if (t == TT_AV_M ? !json_is_object(in) : !json_is_array(in))
      return expect(c, t == TT_AV_M ? "a JSON object (M)" : "a JSON array (L)");
    if (depth + 1 > TT_LOGICAL_MAX_DEPTH)
      return expect(c, "a document nested at most 32 levels");
    rc = t == TT_AV_M ? map_from(c, in, depth + 1, out) : list_from(c, in, depth + 1, out);
    break;
  default:
    return tt_error_set(c->err, TT_ERR_INTERNAL, c->path, "unknown DMS type");
  }
  if (rc != 0)
    tt_av_free(out);
  return rc;
}

int tt_logical_to_av(const json_t *in, enum tt_av_type declared, unsigned flags,
                     const char *attr, struct tt_av *out, struct tt_error *err) {
  struct tt_vpath c;
  tt_vpath_init(&c, attr, err);
  return convert(&c, in, declared, flags, 0, out);
}

/* ---- output ---- */

static bool is_set(enum tt_av_type t) {
  return t == TT_AV_SS || t == TT_AV_NS || t == TT_AV_BS;
}

/* A stored S of a json:true attribute, parsed back; NULL when it is not
 * JSON (then the plain string is returned: a legacy or foreign writer). */
static json_t *parse_stored_json(const struct tt_av *v) {
  struct tt_json_opts o = {0, TT_LOGICAL_MAX_DEPTH + 1};
  json_t *j = NULL;
  if (tt_json_parse(v->u.bytes, v->len, &o, &j, NULL) != 0)
    return NULL;
  return j;
}

/* Whether an N's text is an integer of at most 15 digits ("-"? digits):
 * tt_number_json_safe says yes to every such text, and counters, versions
 * and timestamps are the common numbers, so they skip its full parse. */
static bool short_integer(const char *s, size_t len) {
  size_t i = len > 0 && s[0] == '-';
  if (len - i == 0 || len - i > 15)
    return false;
  for (; i < len; i++)
    if (s[i] < '0' || s[i] > '9')
      return false;
  return true;
}

static int write_number(struct tt_buf *b, const struct tt_av *v, unsigned flags) {
  if (!(flags & TT_LOGICAL_N_STRING) &&
      (short_integer(v->u.bytes, v->len) || tt_number_json_safe(v->u.bytes)))
    return tt_buf_append(b, v->u.bytes, v->len);
  if (tt_buf_append(b, "\"", 1) != 0 || tt_buf_append(b, v->u.bytes, v->len) != 0)
    return -1;
  return tt_buf_append(b, "\"", 1);
}

int tt_logical_write(struct tt_buf *b, const struct tt_av *v, enum tt_av_type declared,
                     unsigned flags) {
  switch (v->type) {
  case TT_AV_S:
    if (flags & TT_LOGICAL_JSON) {
      json_t *j = parse_stored_json(v);
      if (j != NULL) {
        int rc = tt_json_dump(j, 0, b);
        json_decref(j);
        return rc;
      }
    }
    return tt_json_write_string(b, v->u.bytes, v->len, 0);
  case TT_AV_N:
    return write_number(b, v, flags);
  case TT_AV_B:
    return tt_base64_write_av(b, v);
  case TT_AV_BOOL:
    return tt_buf_puts(b, v->u.boolean ? "true" : "false");
  case TT_AV_NULL:
    return tt_buf_puts(b, is_set(declared) ? "[]" : "null");
  case TT_AV_SS:
  case TT_AV_NS:
  case TT_AV_BS:
  case TT_AV_L:
    if (tt_buf_append(b, "[", 1) != 0)
      return -1;
    for (size_t i = 0; i < v->len; i++) {
      const struct tt_av *e = &v->u.elems[i];
      int rc;
      if (i && tt_buf_append(b, ",", 1) != 0)
        return -1;
      if (v->type == TT_AV_NS)
        rc = write_number(b, e, flags);
      else
        rc = tt_logical_write(b, e, TT_LOGICAL_INFER, 0);
      if (rc != 0)
        return -1;
    }
    return tt_buf_append(b, "]", 1);
  case TT_AV_M:
    if (tt_buf_append(b, "{", 1) != 0)
      return -1;
    for (size_t i = 0; i < v->len; i++) {
      const struct tt_av_member *m = &v->u.members[i];
      if ((i && tt_buf_append(b, ",", 1) != 0) ||
          tt_json_write_string(b, m->name, m->name_len, 0) != 0 ||
          tt_buf_append(b, ":", 1) != 0 ||
          tt_logical_write(b, &m->value, TT_LOGICAL_INFER, 0) != 0)
        return -1;
    }
    return tt_buf_append(b, "}", 1);
  default:
    return -1;
  }
}

/* The bytes of B value v in standard base64 as a new jansson string, or
 * NULL when out of memory. */
static json_t *bytes_json(const struct tt_av *v) {
  struct tt_buf b;
  json_t *j = NULL;
  tt_buf_init(&b, 0);
  if (tt_base64_encode(&b, v->u.bytes, v->len, TT_BASE64_STD) == 0)
    j = json_stringn_nocheck(b.data ? b.data : "", b.len);
  tt_buf_free(&b);
  return j;
}

static json_t *number_json(const struct tt_av *v, unsigned flags) {
  if (!(flags & TT_LOGICAL_N_STRING) && tt_number_json_safe(v->u.bytes))
    return tt_json_number_new(v->u.bytes, v->len);
  return json_stringn_nocheck(v->u.bytes, v->len);
}

json_t *tt_logical_from_av(const struct tt_av *v, enum tt_av_type declared, unsigned flags) {
  json_t *j = NULL;
  switch (v->type) {
  case TT_AV_S:
    if ((flags & TT_LOGICAL_JSON) && (j = parse_stored_json(v)) != NULL)
      return j;
    return tt_json_string_new(v->u.bytes, v->len);
  case TT_AV_N:
    return number_json(v, flags);
  case TT_AV_B:
    return bytes_json(v);
  case TT_AV_BOOL:
    return json_boolean(v->u.boolean);
  case TT_AV_NULL:
    return is_set(declared) ? json_array() : json_null();
  case TT_AV_SS:
  case TT_AV_NS:
  case TT_AV_BS:
  case TT_AV_L:
    if ((j = json_array()) == NULL)
      return NULL;
    for (size_t i = 0; i < v->len; i++) {
      const struct tt_av *e = &v->u.elems[i];
      json_t *x = v->type == TT_AV_NS ? number_json(e, flags)
                                      : tt_logical_from_av(e, TT_LOGICAL_INFER, 0);
      if (x == NULL || json_array_append_new(j, x) != 0) {
        json_decref(j);
        return NULL;
      }
    }
    return j;
  case TT_AV_M:
    if ((j = json_object()) == NULL)
      return NULL;
    for (size_t i = 0; i < v->len; i++) {
      const struct tt_av_member *m = &v->u.members[i];
      json_t *x = tt_logical_from_av(&m->value, TT_LOGICAL_INFER, 0);
      if (x == NULL || json_object_setn_new_nocheck(j, m->name, m->name_len, x) != 0) {
        json_decref(j);
        return NULL;
      }
    }
    return j;
  default:
    return NULL;
  }
}
