/* SPDX-License-Identifier: Apache-2.0 */
/* codec_ddb.c -- validate and convert DynamoDB wire JSON to and from tt_av. */
#include "value/codec_ddb.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value/base64.h"
#include "value/json_exact.h"
#include "value/number.h"
#include "value/path.h"

static int bad(struct tt_vpath *c, const char *what) {
  const char *p = c->len ? c->path : "value";
  return tt_error_set(c->err, TT_ERR_VALIDATION, c->path, "%s: %s", p, what);
}

static int value_from(struct tt_vpath *c, const json_t *j, int depth, struct tt_av *out);

static int string_of(struct tt_vpath *c, const json_t *j, const char **s, size_t *len,
                     const char *what) {
  *s = tt_json_string_text(j, len);
  if (*s == NULL)
    return bad(c, what);
  return 0;
}

static int binary_from(struct tt_vpath *c, const json_t *j, int depth, struct tt_av *out) {
  const char *s;
  size_t len;
  if (string_of(c, j, &s, &len, "B must be a base64 string") != 0)
    return -1;
  int rc = tt_base64_decode_av(out, s, len, TT_BASE64_STD, 0);
  return rc < 0 ? tt_vpath_oom(c) : rc > 0 ? bad(c, "B is not valid base64") : 0;
}

static int number_from(struct tt_vpath *c, const json_t *j, int depth, struct tt_av *out) {
  const char *s;
  size_t len;
  if (string_of(c, j, &s, &len, "N must be a string holding a number") != 0)
    return -1;
  return tt_av_number_text(out, s, len, c->path[0] ? c->path : "N", c->err);
}

static int set_string_from(struct tt_vpath *c, const json_t *j, int depth, struct tt_av *out) {
  const char *s;
  size_t len;
  if (string_of(c, j, &s, &len, "SS members must be strings") != 0)
    return -1;
  return tt_av_string(out, s, len) != 0 ? tt_vpath_oom(c) : 0;
}

static int set_from(struct tt_vpath *c, const json_t *j, enum tt_av_type type, struct tt_av *out) {
  if (!json_is_array(j))
    return bad(c, "a set must be a JSON array");
  size_t n = json_array_size(j);
  if (n == 0)
    return bad(c, "a set cannot be empty");
  if (tt_av_list(out, type, n) != 0)
    return tt_vpath_oom(c);
  tt_vpath_elem_fn fn = type == TT_AV_SS   ? set_string_from
                        : type == TT_AV_NS ? number_from
                                           : binary_from;
  if (tt_vpath_elems(c, j, 0, fn, out) != 0)
    return -1;
  return tt_av_set_finish(out, c->path, c->err);
}

/* An M value's map, or (item) an item's attribute map, whose names must
 * not be empty. */
static int map_from(struct tt_vpath *c, const json_t *j, int depth, bool item, struct tt_av *out) {
  if (!json_is_object(j))
    return bad(c, item ? "an attribute map must be a JSON object" : "M must be a JSON object");
  if (tt_av_map(out, json_object_size(j)) != 0)
    return tt_vpath_oom(c);
  return tt_vpath_members(c, j, depth, value_from, item, bad,
                          item ? "attribute names must be non-empty and cannot contain NUL"
                               : "map keys cannot contain NUL",
                          out);
}

static int list_from(struct tt_vpath *c, const json_t *j, int depth, struct tt_av *out) {
  if (!json_is_array(j))
    return bad(c, "L must be a JSON array");
  if (tt_av_list(out, TT_AV_L, json_array_size(j)) != 0)
    return tt_vpath_oom(c);
  return tt_vpath_elems(c, j, depth, value_from, out);
}

static int value_from(struct tt_vpath *c, const json_t *j, int depth, struct tt_av *out) {
  tt_av_null(out);
  if (!json_is_object(j) || json_object_size(j) != 1)
    return bad(c, "an AttributeValue must be an object with exactly one type key");
  void *it = json_object_iter((json_t *)j);
  const char *tkey = json_object_iter_key(it);
  size_t tlen = json_object_iter_key_len(it);
  const json_t *v = json_object_iter_value(it);
  enum tt_av_type type = tt_av_type_parse(tkey, tlen);
  int rc;
  switch (type) {
  case TT_AV_S: {
    const char *s;
    size_t len;
    rc = string_of(c, v, &s, &len, "S must be a string");
    if (rc == 0 && tt_av_string(out, s, len) != 0)
      rc = tt_vpath_oom(c);
    break;
  }
  case TT_AV_N:
    rc = number_from(c, v, depth, out);
    break;
  case TT_AV_B:
    rc = binary_from(c, v, depth, out);
    break;
  case TT_AV_BOOL:
    if (!json_is_boolean(v))
      return bad(c, "BOOL must be true or false");
    tt_av_bool(out, json_is_true(v));
    return 0;
  case TT_AV_NULL:
    if (!json_is_true(v))
      return bad(c, "NULL must be true");
    return 0;
  case TT_AV_SS:
  case TT_AV_NS:
  case TT_AV_BS:
    rc = set_from(c, v, type, out);
    break;
  case TT_AV_M:
  case TT_AV_L:
    if (depth + 1 > TT_DDB_MAX_DEPTH)
      return bad(c, "documents nest at most 32 levels");
    rc = type == TT_AV_M ? map_from(c, v, depth + 1, false, out)
                         : list_from(c, v, depth + 1, out);
    break;
  default:
    return bad(c, "unknown AttributeValue type");
  }
  if (rc != 0)
    tt_av_free(out);
  return rc;
}

int tt_ddb_value_from_json(const json_t *j, const char *path, struct tt_av *out,
                           struct tt_error *err) {
  struct tt_vpath c;
  tt_vpath_init(&c, path, err);
  return value_from(&c, j, 0, out);
}

int tt_ddb_item_from_json(const json_t *j, const char *path, struct tt_av *out,
                          struct tt_error *err) {
  struct tt_vpath c;
  tt_vpath_init(&c, path, err);
  tt_av_null(out);
  if (map_from(&c, j, 0, true, out) != 0) {
    tt_av_free(out);
    return -1;
  }
  return 0;
}

/* ---- writers ---- */

static int write_scalar_text(struct tt_buf *b, const struct tt_av *v, unsigned fl) {
  switch (v->type) {
  case TT_AV_S:
    return tt_json_write_string(b, v->u.bytes, v->len, fl);
  case TT_AV_N:
    if (tt_buf_append(b, "\"", 1) != 0 || tt_buf_append(b, v->u.bytes, v->len) != 0)
      return -1;
    return tt_buf_append(b, "\"", 1);
  case TT_AV_B:
    return tt_base64_write_av(b, v);
  default:
    return -1;
  }
}

int tt_ddb_value_write(struct tt_buf *b, const struct tt_av *v, unsigned fl) {
  switch (v->type) {
  case TT_AV_BOOL:
    return tt_buf_puts(b, v->u.boolean ? "{\"BOOL\":true}" : "{\"BOOL\":false}");
  case TT_AV_NULL:
    return tt_buf_puts(b, "{\"NULL\":true}");
  case TT_AV_S:
  case TT_AV_N:
  case TT_AV_B:
  case TT_AV_M:
    if (tt_buf_append(b, "{\"", 2) != 0 || tt_buf_puts(b, tt_av_type_name(v->type)) != 0 ||
        tt_buf_append(b, "\":", 2) != 0 ||
        (v->type == TT_AV_M ? tt_ddb_item_write(b, v, fl) : write_scalar_text(b, v, fl)) != 0)
      return -1;
    return tt_buf_append(b, "}", 1);
  case TT_AV_SS:
  case TT_AV_NS:
  case TT_AV_BS:
  case TT_AV_L:
    if (tt_buf_append(b, "{\"", 2) != 0 || tt_buf_puts(b, tt_av_type_name(v->type)) != 0 ||
        tt_buf_append(b, "\":[", 3) != 0)
      return -1;
    for (size_t i = 0; i < v->len; i++)
      if ((i && tt_buf_append(b, ",", 1) != 0) ||
          (v->type == TT_AV_L ? tt_ddb_value_write(b, &v->u.elems[i], fl)
                              : write_scalar_text(b, &v->u.elems[i], fl)) != 0)
        return -1;
    return tt_buf_append(b, "]}", 2);
  default:
    return -1;
  }
}

int tt_ddb_item_write(struct tt_buf *b, const struct tt_av *item, unsigned fl) {
  if (item->type != TT_AV_M || tt_buf_append(b, "{", 1) != 0)
    return -1;
  for (size_t i = 0; i < item->len; i++) {
    const struct tt_av_member *m = &item->u.members[i];
    if ((i && tt_buf_append(b, ",", 1) != 0) ||
        tt_json_write_string(b, m->name, m->name_len, fl) != 0 ||
        tt_buf_append(b, ":", 1) != 0 || tt_ddb_value_write(b, &m->value, fl) != 0)
      return -1;
  }
  return tt_buf_append(b, "}", 1);
}

json_t *tt_ddb_item_to_json(const struct tt_av *item) {
  /* Written, then read back: one writer of DynamoDB JSON. The parser goes
   * as deep as it can (200 JSON levels); an item of 32 levels takes 66. */
  struct tt_json_opts o = {0, INT_MAX};
  struct tt_buf b;
  json_t *j = NULL;
  tt_buf_init(&b, 0);
  if (tt_ddb_item_write(&b, item, 0) != 0 || tt_json_parse(b.data, b.len, &o, &j, NULL) != 0)
    j = NULL;
  tt_buf_free(&b);
  return j;
}

int tt_ddb_names_from_json(const json_t *names, struct tt_av *out, struct tt_error *err) {
  memset(out, 0, sizeof(*out));
  if (tt_av_map(out, json_object_size(names)) != 0)
    goto oom;
  const char *k;
  const json_t *v;
  size_t i = 0;
  json_object_foreach((json_t *)names, k, v) {
    size_t len;
    const char *s = tt_json_string_text(v, &len);
    if (s == NULL) {
      tt_av_free(out);
      return 1;
    }
    struct tt_av_member *mb = &out->u.members[i++];
    mb->name_len = strlen(k);
    if ((mb->name = strdup(k)) == NULL || tt_av_string(&mb->value, s, len) != 0)
      goto oom;
  }
  if (tt_av_map_finish(out, "ExpressionAttributeNames", err) != 0) {
    tt_av_free(out);
    return -1;
  }
  return 0;
oom:
  tt_av_free(out);
  return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
}

int tt_ddb_capacity_mode(const json_t *req) {
  const char *s = json_string_value(json_object_get(req, "ReturnConsumedCapacity"));
  return s == NULL ? 0 : strcmp(s, "TOTAL") == 0 ? 1 : strcmp(s, "INDEXES") == 0 ? 2 : 0;
}

json_t *tt_ddb_capacity_json(int mode, const char *table, double units) {
  json_t *c = json_pack("{s:f, s:s}", "CapacityUnits", units, "TableName", table);
  if (c != NULL && mode == 2 &&
      json_object_set_new(c, "Table", json_pack("{s:f}", "CapacityUnits", units)) != 0) {
    json_decref(c);
    return NULL;
  }
  return c;
}

static bool json_too_deep(const json_t *av, unsigned level, unsigned max_level) {
  if (level > max_level)
    return true;
  if (!json_is_object(av) || json_object_size(av) != 1)
    return false;
  const json_t *m = json_object_get(av, "M"), *l = json_object_get(av, "L");
  const char *k;
  const json_t *v;
  size_t i;
  if (json_is_object(m)) {
    json_object_foreach((json_t *)m, k, v) {
      if (json_too_deep(v, level + 1, max_level))
        return true;
    }
  } else if (json_is_array(l)) {
    json_array_foreach(l, i, v) {
      if (json_too_deep(v, level + 1, max_level))
        return true;
    }
  }
  return false;
}

bool tt_ddb_json_map_too_deep(const json_t *map, unsigned max_level) {
  const char *k;
  const json_t *v;
  json_object_foreach((json_t *)map, k, v) {
    if (json_too_deep(v, 1, max_level))
      return true;
  }
  return false;
}
