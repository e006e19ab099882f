/* SPDX-License-Identifier: Apache-2.0 */
/* ddb_get.c -- the DynamoDB listener's typed GetItem (ddb_wire.h): from a
 * checked JSON body, or in one pass from the request text. */
#include "api/ddb_wire.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "value/codec_ddb.h"
#include "util/utf8.h"


/* ---- the one-pass reader ------------------------------------------------ */

struct rd {
  const char *p, *end;
};

static void ws(struct rd *r) {
  while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
    r->p++;
}

/* Skips whitespace and `c`; false when the next character is not `c`. */
static bool punct(struct rd *r, char c) {
  ws(r);
  if (r->p < r->end && *r->p == c) {
    r->p++;
    return true;
  }
  return false;
}

/* A string without escapes or control characters, in valid UTF-8: *s
 * points into the text (not NUL-terminated). */
static bool string(struct rd *r, const char **s, size_t *n) {
  ws(r);
  if (r->p >= r->end || *r->p != '"')
    return false;
  const unsigned char *p = (const unsigned char *)r->p + 1;
  const unsigned char *end = (const unsigned char *)r->end, *start = p;
  while (p < end) {
    unsigned char c = *p;
    if (c == '"') {
      *s = (const char *)start;
      *n = (size_t)(p - start);
      r->p = (const char *)p + 1;
      return true;
    }
    if (c == '\\' || c < 0x20)
      return false;
    if (c < 0x80) {
      p++;
      continue;
    }
    size_t len = tt_utf8_seq(p, (size_t)(end - p), NULL);
    if (len == 0)
      return false;
    p += len;
  }
  return false;
}

static bool is(const char *s, size_t n, const char *lit) {
  return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* One key value {"S": "..."} or {"N": "..."} into *v. */
static bool key_value(struct rd *r, struct tt_av *v) {
  const char *t, *s;
  size_t tn, n;
  if (!punct(r, '{') || !string(r, &t, &tn) || !punct(r, ':') || !string(r, &s, &n) ||
      !punct(r, '}'))
    return false;
  if (is(t, tn, "S"))
    return tt_av_string(v, s, n) == 0;
  if (!is(t, tn, "N"))
    return false;
  /* check_values' N check, then the codec's (tt_av_number_text). */
  char text[128];
  if (n == 0 || n >= sizeof(text))
    return false;
  memcpy(text, s, n);
  text[n] = '\0';
  struct tt_error err;
  return tt_ddbw_number_ok(text) && tt_av_number_text(v, s, n, "Key", &err) == 0;
}

/* Key: a non-empty map of non-empty names to key values, no name twice. */
static bool key_map(struct rd *r, struct tt_av *key) {
  enum { MAX_KEY_ATTRS = 8 };
  size_t n = 0;
  if (!punct(r, '{'))
    return false;
  struct rd save = *r;
  /* First pass: count the members (the map is allocated once). */
  do {
    const char *name, *s;
    size_t len, sl;
    if (n == MAX_KEY_ATTRS || !string(r, &name, &len) || len == 0 || !punct(r, ':') ||
        !punct(r, '{') || !string(r, &s, &sl) || !punct(r, ':') || !string(r, &s, &sl) ||
        !punct(r, '}'))
      return false;
    n++;
  } while (punct(r, ','));
  if (!punct(r, '}'))
    return false;
  struct rd end = *r;
  *r = save;
  if (tt_av_map(key, n) != 0)
    return false;
  for (size_t i = 0; i < n; i++) {
    struct tt_av_member *m = &key->u.members[i];
    const char *name;
    size_t len;
    if (i > 0)
      punct(r, ',');
    string(r, &name, &len);
    punct(r, ':');
    if (tt_av_member_name(m, name, len) != 0 || !key_value(r, &m->value))
      return false;
  }
  *r = end;
  struct tt_error err;
  return tt_av_map_finish(key, "Key", &err) == 0; /* refuses a name given twice */
}

static bool read_body(struct rd *r, struct tt_ddbw_get *out) {
  bool table = false, key = false, consistent = false, capacity = false;
  if (!punct(r, '{'))
    return false;
  do {
    const char *m, *s;
    size_t mn, n;
    if (!string(r, &m, &mn) || !punct(r, ':'))
      return false;
    ws(r);
    if (is(m, mn, "TableName") && !table) {
      /* [a-zA-Z0-9_.-]: a table name's characters (s[n] is the closing '"'). */
      if (!string(r, &s, &n) || n < 3 || n >= sizeof(out->table) ||
          strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") < n)
        return false;
      memcpy(out->table, s, n);
      out->table[n] = '\0';
      table = true;
    } else if (is(m, mn, "Key") && !key) {
      if (!key_map(r, &out->key))
        return false;
      key = true;
    } else if (is(m, mn, "ConsistentRead") && !consistent) {
      size_t left = (size_t)(r->end - r->p);
      if (left >= 4 && memcmp(r->p, "true", 4) == 0)
        out->consistent_read = true, r->p += 4;
      else if (left >= 5 && memcmp(r->p, "false", 5) == 0)
        r->p += 5;
      else
        return false;
      consistent = true;
    } else if (is(m, mn, "ReturnConsumedCapacity") && !capacity) {
      if (!string(r, &s, &n) || !is(s, n, "NONE"))
        return false;
      capacity = true;
    } else {
      return false;
    }
  } while (punct(r, ','));
  if (!punct(r, '}'))
    return false;
  ws(r);
  return r->p == r->end && table && key;
}

bool tt_ddbw_fast_get(const struct tt_ddbw_input *in, struct tt_ddbw_get *out,
                      struct tt_ddbw_auth *auth) {
  static const char target[] = "DynamoDB_20120810.GetItem";
  memset(out, 0, sizeof(*out));
  memset(auth, 0, sizeof(*auth)); /* as tt_ddbw_parse leaves it for a presigned request */
  if (in->method == NULL || strcmp(in->method, "POST") != 0 || in->body == NULL ||
      in->body_len == 0 || in->target == NULL || strcmp(in->target, target) != 0 ||
      (!tt_ddbw_is_json_1_0(in->content_type) && !tt_ddbw_is_json(in->content_type)))
    return false;
  struct rd r = {in->body, in->body + in->body_len};
  struct tt_ddbw_error err;
  if (read_body(&r, out) && tt_ddbw_check_auth(in, auth, &err) == 0)
    return true;
  tt_av_free(&out->key);
  memset(out, 0, sizeof(*out));
  return false;
}
