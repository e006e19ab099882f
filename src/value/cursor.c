/* SPDX-License-Identifier: Apache-2.0 */
/* cursor.c -- encode and decode TableTheory's DMS cursor (base64url of a
 * compact JSON object holding the DynamoDB LastEvaluatedKey). */
#include "value/cursor.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "value/base64.h"
#include "value/codec_ddb.h"
#include "value/json_exact.h"

int tt_cursor_encode(struct tt_buf *out, const struct tt_av *last_key, const char *index,
                     enum tt_cursor_sort sort) {
  struct tt_buf json;
  int rc = -1;
  if (last_key == NULL || last_key->type != TT_AV_M || last_key->len == 0)
    return 0;
  tt_buf_init(&json, 0);
  /* TableTheory marshals a Go struct (lastKey, index omitempty, sort
   * omitempty) with encoding/json: field order fixed, map keys sorted, and
   * Go's HTML-safe string escaping; TT_JSON_GO_ESCAPE reproduces it. */
  if (tt_buf_append(&json, "{\"lastKey\":", 11) != 0 ||
      tt_ddb_item_write(&json, last_key, TT_JSON_GO_ESCAPE) != 0)
    goto done;
  if (index && *index) {
    if (tt_buf_append(&json, ",\"index\":", 9) != 0 ||
        tt_json_write_string(&json, index, strlen(index), TT_JSON_GO_ESCAPE) != 0)
      goto done;
  }
  if (sort == TT_CURSOR_SORT_ASC && tt_buf_puts(&json, ",\"sort\":\"ASC\"") != 0)
    goto done;
  if (sort == TT_CURSOR_SORT_DESC && tt_buf_puts(&json, ",\"sort\":\"DESC\"") != 0)
    goto done;
  if (tt_buf_append(&json, "}", 1) != 0)
    goto done;
  rc = tt_base64_encode(out, json.data, json.len, TT_BASE64_URL);
done:
  tt_buf_free(&json);
  return rc;
}

bool tt_cursor_sort_same(enum tt_cursor_sort a, enum tt_cursor_sort b) {
  /* A query without an order reads ascending, so a cursor without "sort"
   * continues an "asc" request and the other way round. */
  return (a == TT_CURSOR_SORT_DESC) == (b == TT_CURSOR_SORT_DESC);
}

void tt_cursor_free(struct tt_cursor *c) {
  tt_av_free(&c->key);
  free(c->index);
  memset(c, 0, sizeof(*c));
  c->key.type = TT_AV_M;
}

static int invalid(struct tt_error *err, const char *why) {
  return tt_error_set(err, TT_ERR_INVALID_CURSOR, "cursor", "cursor does not decode: %s", why);
}

/* Reads the members of a decoded cursor object into c. */
static int decode_members(json_t *doc, struct tt_cursor *c, struct tt_error *err) {
  struct tt_error inner;
  const char *key;
  json_t *val;
  if (!json_is_object(doc))
    return invalid(err, "not a JSON object");
  json_object_foreach(doc, key, val) {
    if (strcmp(key, "lastKey") == 0) {
      if (tt_ddb_item_from_json(val, "lastKey", &c->key, &inner) != 0)
        return invalid(err, inner.message);
      for (size_t i = 0; i < c->key.len; i++) {
        enum tt_av_type t = c->key.u.members[i].value.type;
        if (t != TT_AV_S && t != TT_AV_N && t != TT_AV_B)
          return invalid(err, "lastKey values must be S, N or B");
      }
    } else if (strcmp(key, "index") == 0) {
      size_t n;
      const char *s = tt_json_string_text(val, &n);
      if (s == NULL || n == 0 || memchr(s, '\0', n) != NULL)
        return invalid(err, "index must be a non-empty string");
      if ((c->index = strndup(s, n)) == NULL)
        return tt_error_set(err, TT_ERR_INTERNAL, "cursor", "out of memory");
    } else if (strcmp(key, "sort") == 0) {
      size_t n;
      const char *s = tt_json_string_text(val, &n);
      /* TableTheory writes the order as its caller typed it ("desc") and
       * ignores the case when it reads one back; so do we. */
      if (s && n == 3 && strncasecmp(s, "ASC", 3) == 0)
        c->sort = TT_CURSOR_SORT_ASC;
      else if (s && n == 4 && strncasecmp(s, "DESC", 4) == 0)
        c->sort = TT_CURSOR_SORT_DESC;
      else
        return invalid(err, "sort must be \"ASC\" or \"DESC\"");
    } else {
      return invalid(err, "unknown field");
    }
  }
  if (json_object_get(doc, "lastKey") == NULL)
    return invalid(err, "lastKey is missing");
  return 0;
}

int tt_cursor_decode(const char *token, size_t len, struct tt_cursor *c, struct tt_error *err) {
  unsigned char *raw = NULL;
  json_t *doc = NULL;
  size_t raw_len;
  int rc = -1;
  struct tt_error inner;

  memset(c, 0, sizeof(*c));
  c->key.type = TT_AV_M;
  if (len == 0)
    return 0;
  if (len > TT_CURSOR_MAX_LEN)
    return invalid(err, "token too long");
  if ((raw = malloc(TT_BASE64_DECODED_MAX(len))) == NULL)
    return tt_error_set(err, TT_ERR_INTERNAL, "cursor", "out of memory");
  /* lastKey -> attribute -> {"S": ...}: three levels; allow a little more
   * so that the error below names the real problem. */
  struct tt_json_opts o = {0, 8};
  if (tt_base64_decode(token, len, TT_BASE64_URL, 1, raw, &raw_len) != 0)
    invalid(err, "not base64url");
  else if (tt_json_parse((const char *)raw, raw_len, &o, &doc, &inner) != 0)
    invalid(err, "not JSON");
  else
    rc = decode_members(doc, c, err);
  json_decref(doc);
  free(raw);
  return rc;
}
