/* SPDX-License-Identifier: Apache-2.0 */
/* json_exact.c -- a single-pass JSON parser that builds jansson trees with
 * exact number text, and the matching compact writer. */
#include "value/json_exact.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value/number.h"
#include "util/hex.h"
#include "util/utf8.h"

/* Where the parser is in the document, for error paths. Frames live on the
 * C stack of the recursive descent, so tracking costs nothing until an
 * error asks for the path. */
struct frame {
  const struct frame *parent;
  const char *key; /* object member being parsed, or NULL for arrays */
  size_t key_len;
  size_t index; /* array element being parsed */
};

struct parser {
  const char *start, *p, *end;
  int max_depth;
  struct tt_error *err;
  char *scratch; /* decoded escapes and marked numbers; reused */
  size_t scratch_cap;
};

/* Writes the path of f ("a.b[2]", truncated to cap - 1 bytes) into out;
 * returns its length. */
static size_t path_of(const struct frame *f, char *out, size_t cap) {
  size_t k = f && f->parent ? path_of(f->parent, out, cap) : 0;
  int w = 0;
  out[k] = '\0';
  if (f != NULL && f->key != NULL)
    w = snprintf(out + k, cap - k, "%s%.*s", k ? "." : "",
                 (int)(f->key_len < cap ? f->key_len : cap), f->key);
  else if (f != NULL)
    w = snprintf(out + k, cap - k, "[%zu]", f->index);
  return w < 0 ? k : k + (size_t)w < cap ? k + (size_t)w : cap - 1;
}

static int fail_at(struct parser *ps, const struct frame *f, const char *what) {
  char path[128];
  int line = 1, col = 1;
  for (const char *q = ps->start; q < ps->p && q < ps->end; q++) {
    if (*q == '\n') {
      line++;
      col = 1;
    } else {
      col++;
    }
  }
  path_of(f, path, sizeof(path));
  if (path[0])
    return tt_error_set(ps->err, TT_ERR_VALIDATION, path,
                        "invalid JSON at line %d, column %d (at %s): %s", line, col, path, what);
  return tt_error_set(ps->err, TT_ERR_VALIDATION, "", "invalid JSON at line %d, column %d: %s",
                      line, col, what);
}

static int scratch_reserve(struct parser *ps, size_t n) {
  if (n <= ps->scratch_cap)
    return 0;
  size_t cap = ps->scratch_cap ? ps->scratch_cap : 256;
  while (cap < n)
    cap *= 2;
  char *s = realloc(ps->scratch, cap);
  if (s == NULL)
    return -1;
  ps->scratch = s;
  ps->scratch_cap = cap;
  return 0;
}

static void skip_ws(struct parser *ps) {
  while (ps->p < ps->end &&
         (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t'))
    ps->p++;
}

/* Bytes that end the plain-ASCII fast path of a string: quote, backslash,
 * controls and every non-ASCII byte (validated as UTF-8). */
static const unsigned char str_class[256] = {
    [0x00 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1, [0x80 ... 0xff] = 1,
};

/* 16 bytes compared at once (GCC/Clang vector extensions: SSE2 on x86-64,
 * NEON on arm64, plain code elsewhere). A comparison yields 0xFF in each
 * matching byte. */
typedef uint8_t tt_v16 __attribute__((vector_size(16)));

/* What else a string scan stops at besides quote, backslash and controls. */
enum {
  STOP_HIGH = 1, /* every byte >= 0x80 (the parser validates UTF-8) */
  STOP_GO = 2    /* <, >, & and 0xE2 (the writer's Go mode) */
};

/* 0xFF in each byte of the 16 at p that a scan stops at. */
static inline tt_v16 stop_bytes(const unsigned char *p, unsigned stop) {
  tt_v16 v, t;
  memcpy(&v, p, 16);
  t = (tt_v16)(v < 0x20) | (tt_v16)(v == '"') | (tt_v16)(v == '\\');
  if (stop & STOP_HIGH)
    t |= (tt_v16)(v > 0x7f);
  if (stop & STOP_GO)
    t |= (tt_v16)(v == '<') | (tt_v16)(v == '>') | (tt_v16)(v == '&') | (tt_v16)(v == 0xE2);
  return t;
}

static inline bool any_byte(tt_v16 t) {
  uint64_t half[2];
  memcpy(half, &t, 16);
  return (half[0] | half[1]) != 0;
}

/* Length of the prefix of u[0..len) made of whole 16-byte blocks without a
 * byte to stop at: the scans' byte loops take over after it, so long plain
 * text costs about one instruction a byte instead of six. Two blocks a
 * step while they last: one test and one loop branch for 32 bytes. */
static size_t plain_blocks(const unsigned char *u, size_t len, unsigned stop) {
  size_t i = 0;
  while (len - i >= 32 && !any_byte(stop_bytes(u + i, stop) | stop_bytes(u + i + 16, stop)))
    i += 32;
  while (len - i >= 16 && !any_byte(stop_bytes(u + i, stop)))
    i += 16;
  return i;
}

const char *tt_json_str_scan(const char *p, const char *end, struct tt_json_str *s,
                             const char **at) {
  const unsigned char *q = (const unsigned char *)p, *e = (const unsigned char *)end;
  s->raw = p;
  s->escaped = s->nul = false;
  for (;;) {
    /* Fast scan: plain ASCII without escapes, by blocks, then one table
     * load per byte. */
    q += plain_blocks(q, (size_t)(e - q), STOP_HIGH);
    while (q < e && str_class[*q] == 0)
      q++;
    *at = (const char *)q;
    if (q >= e)
      return "unterminated string";
    unsigned c = *q;
    if (c == '"')
      break;
    if (c < 0x20)
      return "control character in string";
    if (c >= 0x80) {
      size_t n = tt_utf8_seq(q, (size_t)(e - q), NULL);
      if (n == 0)
        return "invalid UTF-8 in string";
      q += n;
      continue;
    }
    s->escaped = true; /* a backslash: every refusal below names it */
    if (e - q < 2)
      return "unterminated string";
    c = q[1];
    if (c != 'u') {
      if (memchr("\"\\/bfnrt", (int)c, 8) == NULL)
        return "invalid escape in string";
      q += 2;
      continue;
    }
    int v = e - q >= 6 ? tt_hex4(q + 2) : -1;
    if (v < 0)
      return "invalid \\u escape";
    if (v >= 0xDC00 && v <= 0xDFFF)
      return "lone low surrogate in \\u escape";
    q += 6;
    if (v >= 0xD800 && v <= 0xDBFF) {
      int lo = e - q >= 6 && q[0] == '\\' && q[1] == 'u' ? tt_hex4(q + 2) : -1;
      if (lo < 0xDC00 || lo > 0xDFFF)
        return "lone high surrogate in \\u escape";
      q += 6;
    } else if (v == 0) {
      s->nul = true;
    }
  }
  s->raw_len = (size_t)(q - (const unsigned char *)p);
  return NULL;
}

/* What the character after a backslash stands for (all but 'u'). */
static const char unescape[0x80] = {['"'] = '"',  ['\\'] = '\\', ['/'] = '/',  ['b'] = '\b',
                                    ['f'] = '\f', ['n'] = '\n',   ['r'] = '\r', ['t'] = '\t'};

size_t tt_json_str_decode(const struct tt_json_str *s, char *dst) {
  if (!s->escaped) {
    memcpy(dst, s->raw, s->raw_len);
    return s->raw_len;
  }
  const unsigned char *p = (const unsigned char *)s->raw, *end = p + s->raw_len;
  char *t = dst;
  while (p < end) {
    const unsigned char *q = memchr(p, '\\', (size_t)(end - p));
    size_t run = (size_t)((q ? q : end) - p);
    memcpy(t, p, run);
    t += run;
    p += run;
    if (q == NULL)
      break;
    if (p[1] == 'u') {
      uint32_t v = (uint32_t)tt_hex4(p + 2);
      p += 6;
      if (v >= 0xD800 && v <= 0xDBFF) {
        v = ((v - 0xD800) << 10) + ((uint32_t)tt_hex4(p + 2) - 0xDC00) + 0x10000;
        p += 6;
      }
      t += tt_utf8_put(t, v);
      continue;
    }
    *t = unescape[(unsigned char)p[1]];
    t++;
    p += 2;
  }
  return (size_t)(t - dst);
}

/* Parses a string token at ps->p (the opening quote). On success the
 * bytes are at *s (length *len): either inside the input (no escapes: the
 * common case, no copy; *decoded false) or inside ps->scratch at offset
 * `reserve` (escapes decoded; the first `reserve` bytes are left free for a
 * marker; *decoded true). */
static int parse_string(struct parser *ps, const struct frame *f, size_t reserve,
                        const char **s, size_t *len, bool *decoded) {
  struct tt_json_str t;
  const char *at;
  const char *why = tt_json_str_scan(ps->p + 1, ps->end, &t, &at);
  if (why != NULL) {
    ps->p = at;
    return fail_at(ps, f, why);
  }
  ps->p = t.raw + t.raw_len + 1;
  *decoded = t.escaped;
  if (!t.escaped) {
    *s = t.raw;
    *len = t.raw_len;
    return 0;
  }
  /* Decoded text is never longer than its source. */
  if (scratch_reserve(ps, reserve + t.raw_len) != 0)
    return tt_error_set(ps->err, TT_ERR_INTERNAL, NULL, "out of memory");
  *s = ps->scratch + reserve;
  *len = tt_json_str_decode(&t, ps->scratch + reserve);
  return 0;
}

size_t tt_json_number_len(const char *s, const char *end) {
  const char *q = s;
  if (q < end && *q == '-')
    q++;
  if (q >= end)
    return 0;
  if (*q == '0') {
    q++;
  } else if (*q >= '1' && *q <= '9') {
    while (q < end && *q >= '0' && *q <= '9')
      q++;
  } else {
    return 0;
  }
  if (q < end && *q == '.') {
    const char *d = ++q;
    while (q < end && *q >= '0' && *q <= '9')
      q++;
    if (q == d)
      return 0;
  }
  if (q < end && (*q == 'e' || *q == 'E')) {
    q++;
    if (q < end && (*q == '+' || *q == '-'))
      q++;
    const char *d = q;
    while (q < end && *q >= '0' && *q <= '9')
      q++;
    if (q == d)
      return 0;
  }
  return (size_t)(q - s);
}

bool tt_json_number_syntax(const char *s, size_t len) {
  return len > 0 && tt_json_number_len(s, s + len) == len;
}

/* A jansson string with a 2-byte marker in front of `len` bytes. When
 * `in_scratch`, the bytes already sit at ps->scratch + 2 (parse_string
 * reserved the room), so nothing moves. */
static json_t *marked(struct parser *ps, char tag, const char *s, size_t len, bool in_scratch) {
  if (!in_scratch) {
    if (scratch_reserve(ps, len + 2) != 0)
      return NULL;
    memcpy(ps->scratch + 2, s, len);
  }
  ps->scratch[0] = '\0';
  ps->scratch[1] = tag;
  return json_stringn_nocheck(ps->scratch, len + 2);
}

static int parse_value(struct parser *ps, const struct frame *f, int depth, json_t **out);

/* Steps over the opening '{' or '['; 1 when `close` follows at once (an
 * empty container, consumed), else 0. */
static int open_container(struct parser *ps, char close) {
  ps->p++;
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == close) {
    ps->p++;
    return 1;
  }
  return 0;
}

/* After a member or an element: 0 on ',' (another follows), 1 on `close`
 * (the container ends), else -1 with the error set. */
static int after_item(struct parser *ps, const struct frame *f, char close) {
  skip_ws(ps);
  if (ps->p < ps->end && (*ps->p == ',' || *ps->p == close))
    return *ps->p++ == close;
  return fail_at(ps, f, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
}

static int parse_object(struct parser *ps, const struct frame *f, int depth, json_t **out) {
  json_t *obj = json_object();
  char *key_copy = NULL;
  if (obj == NULL)
    return tt_error_set(ps->err, TT_ERR_INTERNAL, NULL, "out of memory");
  int end = open_container(ps, '}');
  while (end == 0) {
    struct frame child = {f, NULL, 0, 0};
    const char *key;
    size_t key_len;
    bool decoded;
    json_t *val = NULL;
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != '"') {
      fail_at(ps, f, "expected a string key");
      goto fail;
    }
    if (parse_string(ps, f, 0, &key, &key_len, &decoded) != 0)
      goto fail;
    if (memchr(key, '\0', key_len) != NULL) {
      fail_at(ps, f, "object key contains a NUL character");
      goto fail;
    }
    if (decoded) {
      /* Decoded into scratch, which the value will reuse: keep a copy. */
      if ((key_copy = malloc(key_len + 1)) == NULL) {
        tt_error_set(ps->err, TT_ERR_INTERNAL, NULL, "out of memory");
        goto fail;
      }
      memcpy(key_copy, key, key_len);
      key = key_copy;
    }
    child.key = key_len ? key : "\"\"";
    child.key_len = key_len ? key_len : 2;
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != ':') {
      fail_at(ps, &child, "expected ':'");
      goto fail;
    }
    ps->p++;
    if (parse_value(ps, &child, depth, &val) != 0)
      goto fail;
    size_t before = json_object_size(obj);
    /* One hash operation for both insert and duplicate detection: a
     * duplicate replaces and leaves the size unchanged. */
    if (json_object_setn_new_nocheck(obj, key, key_len, val) != 0) {
      tt_error_set(ps->err, TT_ERR_INTERNAL, NULL, "out of memory");
      goto fail;
    }
    if (json_object_size(obj) == before) {
      fail_at(ps, &child, "duplicate object key");
      goto fail;
    }
    free(key_copy);
    key_copy = NULL;
    end = after_item(ps, f, '}');
  }
  if (end > 0) {
    *out = obj;
    return 0;
  }
fail:
  free(key_copy);
  json_decref(obj);
  return -1;
}

static int parse_array(struct parser *ps, const struct frame *f, int depth, json_t **out) {
  json_t *arr = json_array();
  if (arr == NULL)
    return tt_error_set(ps->err, TT_ERR_INTERNAL, NULL, "out of memory");
  int end = open_container(ps, ']');
  for (size_t i = 0; end == 0; i++) {
    struct frame child = {f, NULL, 0, i};
    json_t *val = NULL;
    if (parse_value(ps, &child, depth, &val) != 0)
      goto fail;
    if (json_array_append_new(arr, val) != 0) {
      tt_error_set(ps->err, TT_ERR_INTERNAL, NULL, "out of memory");
      goto fail;
    }
    end = after_item(ps, f, ']');
  }
  if (end > 0) {
    *out = arr;
    return 0;
  }
fail:
  json_decref(arr);
  return -1;
}

static int parse_value(struct parser *ps, const struct frame *f, int depth, json_t **out) {
  skip_ws(ps);
  if (ps->p >= ps->end)
    return fail_at(ps, f, "unexpected end of input");
  char c = *ps->p;
  json_t *v = NULL;
  switch (c) {
  case '{':
  case '[':
    if (depth + 1 > ps->max_depth) {
      char what[64];
      snprintf(what, sizeof(what), "nesting deeper than %d levels", ps->max_depth);
      return fail_at(ps, f, what);
    }
    return c == '{' ? parse_object(ps, f, depth + 1, out) : parse_array(ps, f, depth + 1, out);
  case '"': {
    const char *s;
    size_t len;
    bool decoded;
    if (parse_string(ps, f, 2, &s, &len, &decoded) != 0)
      return -1;
    if (len > 0 && s[0] == '\0')
      v = marked(ps, 'S', s, len, decoded);
    else
      v = json_stringn_nocheck(s, len);
    break;
  }
  case 't':
  case 'f':
  case 'n': {
    const char *w = c == 't' ? "true" : c == 'f' ? "false" : "null";
    size_t n = strlen(w);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n) != 0)
      return fail_at(ps, f, "invalid literal");
    ps->p += n;
    v = c == 't' ? json_true() : c == 'f' ? json_false() : json_null();
    break;
  }
  default: {
    size_t n = tt_json_number_len(ps->p, ps->end);
    if (n == 0)
      return fail_at(ps, f, c == '-' || (c >= '0' && c <= '9') ? "invalid number"
                                                               : "unexpected character");
    const char *tok = ps->p;
    ps->p += n;
    /* "1.5x" or "01": the token must end at a delimiter. */
    if (ps->p < ps->end && ((*ps->p >= '0' && *ps->p <= '9') || *ps->p == '.' ||
                            *ps->p == 'e' || *ps->p == 'E' || *ps->p == '-' || *ps->p == '+'))
      return fail_at(ps, f, "invalid number");
    v = marked(ps, 'N', tok, n, false);
    break;
  }
  }
  if (v == NULL)
    return tt_error_set(ps->err, TT_ERR_INTERNAL, NULL, "out of memory");
  *out = v;
  return 0;
}

int tt_json_parse(const char *text, size_t len, const struct tt_json_opts *opts, json_t **out,
                  struct tt_error *err) {
  struct parser ps = {text, text, text + len, TT_JSON_MAX_DEPTH, err, NULL, 0};
  json_t *v = NULL;
  int rc = -1;
  *out = NULL;
  if (opts && opts->max_depth > 0)
    ps.max_depth = opts->max_depth;
  if (ps.max_depth > 200)
    ps.max_depth = 200; /* bounds the recursion whatever the caller asks */
  if (opts && opts->max_bytes && len > opts->max_bytes)
    return tt_error_set(err, TT_ERR_PAYLOAD_TOO_LARGE, "",
                        "JSON text is larger than %zu bytes", opts->max_bytes);
  if (parse_value(&ps, NULL, 0, &v) != 0)
    goto done;
  skip_ws(&ps);
  if (ps.p != ps.end) {
    fail_at(&ps, NULL, "unexpected data after the JSON value");
    json_decref(v);
    goto done;
  }
  *out = v;
  rc = 0;
done:
  free(ps.scratch);
  return rc;
}

/* ---- accessors ---- */

static bool has_marker(const json_t *j, char tag) {
  if (!json_is_string(j) || json_string_length(j) < 2)
    return false;
  const char *s = json_string_value(j);
  return s[0] == '\0' && s[1] == tag;
}

bool tt_json_is_number(const json_t *j) {
  return j && (json_is_integer(j) || json_is_real(j) || has_marker(j, 'N'));
}

const char *tt_json_number_text(const json_t *j, struct tt_json_numbuf *nb, size_t *len) {
  int n;
  if (j == NULL)
    return NULL;
  if (has_marker(j, 'N')) {
    *len = json_string_length(j) - 2;
    return json_string_value(j) + 2;
  }
  if (json_is_integer(j)) {
    n = snprintf(nb->text, sizeof(nb->text), "%" JSON_INTEGER_FORMAT, json_integer_value(j));
  } else if (json_is_real(j)) {
    n = snprintf(nb->text, sizeof(nb->text), "%.17g", json_real_value(j));
  } else {
    return NULL;
  }
  *len = (size_t)n;
  return nb->text;
}

int tt_json_integer(const json_t *j, int64_t *out) {
  struct tt_json_numbuf nb;
  char canon[TT_NUMBER_TEXT_MAX];
  size_t len;
  const char *text = tt_json_number_text(j, &nb, &len);
  /* The canonical form of a whole number has no '.' nor exponent, so
   * tt_number_to_int64 refuses exactly the fractions and the overflows. */
  if (text == NULL || tt_number_canonical(text, len, canon, sizeof(canon), NULL, NULL) != 0 ||
      tt_number_to_int64(canon, out) != 0)
    return -1;
  return 0;
}

bool tt_json_is_string(const json_t *j) {
  return j && json_is_string(j) && !has_marker(j, 'N');
}

const char *tt_json_string_text(const json_t *j, size_t *len) {
  if (!tt_json_is_string(j))
    return NULL;
  if (has_marker(j, 'S')) {
    *len = json_string_length(j) - 2;
    return json_string_value(j) + 2;
  }
  *len = json_string_length(j);
  return json_string_value(j);
}

int tt_json_member_text(const json_t *obj, const char *key, const char **out) {
  const json_t *j = json_object_get(obj, key);
  size_t len;
  *out = NULL;
  if (j == NULL || json_is_null(j))
    return 0;
  const char *s = tt_json_string_text(j, &len);
  if (s == NULL || strlen(s) != len)
    return -1;
  *out = s;
  return 0;
}

/* "\0" tag + the len bytes at s, in a new buffer the caller frees; NULL
 * when out of memory. */
static char *with_marker(char tag, const char *s, size_t len) {
  char *buf = malloc(len + 2);
  if (buf) {
    buf[0] = '\0';
    buf[1] = tag;
    memcpy(buf + 2, s, len);
  }
  return buf;
}

/* A new jansson string of "\0" tag + the len bytes at s, or NULL. */
static json_t *marked_new(char tag, const char *s, size_t len) {
  char *buf = with_marker(tag, s, len);
  json_t *j = buf ? json_stringn_nocheck(buf, len + 2) : NULL;
  free(buf);
  return j;
}

json_t *tt_json_number_new(const char *text, size_t len) {
  return tt_json_number_syntax(text, len) ? marked_new('N', text, len) : NULL;
}

json_t *tt_json_string_new(const char *s, size_t len) {
  if (!tt_utf8_valid(s, len))
    return NULL;
  if (len == 0 || s[0] != '\0')
    return json_stringn_nocheck(s, len);
  return marked_new('S', s, len);
}

/* Marks one string of a plain tree in place when it begins with NUL. */
static int mark_string(json_t *j) {
  size_t len = json_string_length(j);
  const char *s = json_string_value(j);
  if (len == 0 || s[0] != '\0')
    return 0;
  char *buf = with_marker('S', s, len);
  int rc = buf ? json_string_setn_nocheck(j, buf, len + 2) : -1;
  free(buf);
  return rc;
}

int tt_json_mark_plain_strings(json_t *j) {
  if (json_is_string(j))
    return mark_string(j);
  if (json_is_array(j)) {
    for (size_t i = 0; i < json_array_size(j); i++)
      if (tt_json_mark_plain_strings(json_array_get(j, i)) != 0)
        return -1;
  } else if (json_is_object(j)) {
    const char *k;
    json_t *v;
    json_object_foreach(j, k, v) {
      if (tt_json_mark_plain_strings(v) != 0)
        return -1;
    }
  }
  return 0;
}

bool tt_json_too_deep(const json_t *j, size_t limit) {
  size_t i;
  const char *k;
  json_t *v;
  if (!json_is_object(j) && !json_is_array(j))
    return false;
  if (limit == 0)
    return true;
  if (json_is_array(j)) {
    json_array_foreach(j, i, v) {
      if (tt_json_too_deep(v, limit - 1))
        return true;
    }
  } else {
    json_object_foreach((json_t *)j, k, v) {
      if (tt_json_too_deep(v, limit - 1))
        return true;
    }
  }
  return false;
}

/* ---- writer ---- */

/* Which bytes a JSON string writer must look at: 1 = always escaped
 * (quote, backslash, controls), 2 = escaped only in Go mode (<, >, & and
 * the lead byte of U+2028/U+2029). Everything else is copied in spans. */
static const unsigned char esc_class[256] = {
    [0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1,
    [0x07] = 1, [0x08] = 1, [0x09] = 1, [0x0a] = 1, [0x0b] = 1, [0x0c] = 1, [0x0d] = 1,
    [0x0e] = 1, [0x0f] = 1, [0x10] = 1, [0x11] = 1, [0x12] = 1, [0x13] = 1, [0x14] = 1,
    [0x15] = 1, [0x16] = 1, [0x17] = 1, [0x18] = 1, [0x19] = 1, [0x1a] = 1, [0x1b] = 1,
    [0x1c] = 1, [0x1d] = 1, [0x1e] = 1, [0x1f] = 1, ['"'] = 1,  ['\\'] = 1, ['<'] = 2,
    ['>'] = 2,  ['&'] = 2,  [0xE2] = 2,
};

int tt_json_write_string(struct tt_buf *b, const char *s, size_t len, unsigned flags) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *u = (const unsigned char *)s;
  bool go = (flags & TT_JSON_GO_ESCAPE) != 0;
  unsigned char mask = go ? 3 : 1;
  size_t start = 0, i = 0;
  /* The quoted text is at least this long: one reservation covers a string
   * without escapes, and the appends below take their inline path. */
  if (len > (size_t)-1 - 2 || tt_buf_reserve(b, len + 2) != 0)
    return -1;
  if (tt_buf_append(b, "\"", 1) != 0)
    return -1;
  for (;;) {
    i += plain_blocks(u + i, len - i, go ? STOP_GO : 0);
    while (i < len && !(esc_class[u[i]] & mask))
      i++;
    if (i >= len)
      break;
    unsigned char c = u[i];
    char esc[7];
    size_t elen = 0, skip = 1;
    switch (c) {
    case '"': memcpy(esc, "\\\"", 2); elen = 2; break;
    case '\\': memcpy(esc, "\\\\", 2); elen = 2; break;
    case '\b': memcpy(esc, "\\b", 2); elen = 2; break;
    case '\f': memcpy(esc, "\\f", 2); elen = 2; break;
    case '\n': memcpy(esc, "\\n", 2); elen = 2; break;
    case '\r': memcpy(esc, "\\r", 2); elen = 2; break;
    case '\t': memcpy(esc, "\\t", 2); elen = 2; break;
    case 0xE2:
      /* U+2028 / U+2029: Go escapes them for JavaScript's sake. */
      if (i + 2 < len && u[i + 1] == 0x80 && (u[i + 2] == 0xA8 || u[i + 2] == 0xA9)) {
        memcpy(esc, u[i + 2] == 0xA8 ? "\\u2028" : "\\u2029", 6);
        elen = 6;
        skip = 3;
      }
      break;
    default: /* other controls, and <, >, & in Go mode */
      memcpy(esc, "\\u00", 4);
      esc[4] = hex[c >> 4];
      esc[5] = hex[c & 15];
      elen = 6;
    }
    if (elen == 0) {
      i++;
      continue;
    }
    if (tt_buf_append(b, s + start, i - start) != 0 || tt_buf_append(b, esc, elen) != 0)
      return -1;
    i += skip;
    start = i;
  }
  if (tt_buf_append(b, s + start, len - start) != 0)
    return -1;
  return tt_buf_append(b, "\"", 1);
}

struct kv {
  const char *key;
  size_t len;
  json_t *val;
};

static int kv_cmp(const void *pa, const void *pb) {
  const struct kv *a = pa, *b = pb;
  size_t m = a->len < b->len ? a->len : b->len;
  int c = memcmp(a->key, b->key, m);
  if (c)
    return c;
  return (a->len > b->len) - (a->len < b->len);
}

int tt_json_dump(const json_t *j, unsigned flags, struct tt_buf *b) {
  switch (json_typeof(j)) {
  case JSON_OBJECT: {
    size_t n = json_object_size(j), i = 0;
    struct kv small[16];
    struct kv *kvs = n <= 16 ? small : malloc(n * sizeof(*kvs));
    int rc = -1;
    const char *key;
    size_t key_len;
    json_t *val;
    if (kvs == NULL)
      return -1;
    json_object_keylen_foreach((json_t *)j, key, key_len, val) {
      kvs[i].key = key;
      kvs[i].len = key_len;
      kvs[i].val = val;
      i++;
    }
    if ((flags & TT_JSON_SORT_KEYS) && n > 1)
      qsort(kvs, n, sizeof(*kvs), kv_cmp);
    if (tt_buf_append(b, "{", 1) != 0)
      goto obj_done;
    for (i = 0; i < n; i++) {
      if ((i && tt_buf_append(b, ",", 1) != 0) ||
          tt_json_write_string(b, kvs[i].key, kvs[i].len, flags) != 0 ||
          tt_buf_append(b, ":", 1) != 0 || tt_json_dump(kvs[i].val, flags, b) != 0)
        goto obj_done;
    }
    rc = tt_buf_append(b, "}", 1);
  obj_done:
    if (kvs != small)
      free(kvs);
    return rc;
  }
  case JSON_ARRAY: {
    if (tt_buf_append(b, "[", 1) != 0)
      return -1;
    for (size_t i = 0; i < json_array_size(j); i++)
      if ((i && tt_buf_append(b, ",", 1) != 0) || tt_json_dump(json_array_get(j, i), flags, b) != 0)
        return -1;
    return tt_buf_append(b, "]", 1);
  }
  case JSON_STRING: {
    size_t len;
    const char *s;
    if (has_marker(j, 'N')) {
      s = json_string_value(j) + 2;
      len = json_string_length(j) - 2;
      if (flags & TT_JSON_CANON_NUMBERS) {
        char canon[TT_NUMBER_TEXT_MAX];
        if (tt_number_canonical(s, len, canon, sizeof(canon), NULL, NULL) == 0)
          return tt_buf_puts(b, canon);
      }
      return tt_buf_append(b, s, len);
    }
    s = tt_json_string_text(j, &len);
    return tt_json_write_string(b, s, len, flags);
  }
  case JSON_INTEGER:
    return tt_buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(j));
  case JSON_REAL: {
    char tmp[40];
    int n = snprintf(tmp, sizeof(tmp), "%.17g", json_real_value(j));
    if (n < 0 || (size_t)n >= sizeof(tmp) || tt_buf_append(b, tmp, (size_t)n) != 0)
      return -1;
    /* Keep it a real for readers that care: "1" -> "1.0". */
    if (strpbrk(tmp, ".eEn") == NULL && tt_buf_append(b, ".0", 2) != 0)
      return -1;
    return 0;
  }
  case JSON_TRUE:
    return tt_buf_append(b, "true", 4);
  case JSON_FALSE:
    return tt_buf_append(b, "false", 5);
  case JSON_NULL:
    return tt_buf_append(b, "null", 4);
  }
  return -1;
}
