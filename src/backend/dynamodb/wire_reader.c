/* SPDX-License-Identifier: Apache-2.0 */
/* wire_reader.c -- DynamoDB's answers to the typed operations read from the
 * body text into tt_av values in one pass, without a jansson tree. */

/* Why: parsing a GetItem answer into a tree, walking the tree into tt_av
 * and freeing it cost more than anything else the daemon does per request.
 * Here each string is decoded straight into the buffer its value keeps.
 *
 * The reader must accept and refuse exactly what the jansson path
 * (tt_ddb_response_classify + typed_wire.c + codec_ddb.c) does, so it keeps
 * two kinds of failure apart: text that is not JSON (jansson refuses the
 * whole body: SYNTAX) and JSON that is not a valid value (the codec refuses
 * one member: BAD). A BAD value is still read to its end, because a later
 * member of the same name replaces it (jansson keeps a repeated key's last
 * value) and because text after it may still be malformed. */
#include "backend/dynamodb/wire_reader.h"
#include "value/json_exact.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "value/base64.h"
#include "value/codec_ddb.h"

#define MAX_NESTING 2048 /* jansson's JSON_PARSER_MAX_DEPTH: values nest at most this deep */

/* What reading one value gave. */
enum {
  OK = 0,      /* read */
  BAD = 1,     /* well-formed JSON, not a valid value here: consumed, nothing kept */
  SYNTAX = -1, /* not JSON: stop */
  NOMEM = -2,  /* out of memory: stop */
};

struct rd {
  const unsigned char *p, *end;
  int open; /* containers open around the read position */
};

/* ---- JSON tokens, checked as jansson checks them ---- */

static int peek(struct rd *r) {
  while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t'))
    r->p++;
  return r->p < r->end ? *r->p : -1;
}

static bool eat(struct rd *r, int c) {
  if (peek(r) != c)
    return false;
  r->p++;
  return true;
}

static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* Reads the string token at r->p (a '"'), checked as jansson checks it. */
static int scan_string(struct rd *r, struct tt_json_str *s) {
  const char *at;
  if (tt_json_str_scan((const char *)r->p + 1, (const char *)r->end, s, &at) != NULL)
    return SYNTAX;
  r->p = (const unsigned char *)s->raw + s->raw_len + 1;
  return OK;
}

/* Whether a real number token overflows a double, which jansson refuses
 * (underflow it accepts). Most tokens are too short to need strtod. */
static bool real_overflows(const unsigned char *s, size_t n) {
  if (memchr(s, 'e', n) == NULL && memchr(s, 'E', n) == NULL && n < 300)
    return false; /* under 1e300 */
  char small[64], *buf = n < sizeof(small) ? small : malloc(n + 1);
  if (buf == NULL)
    return true;
  memcpy(buf, s, n);
  buf[n] = '\0';
  errno = 0;
  double d = strtod(buf, NULL); /* the daemon never changes LC_NUMERIC */
  bool over = (d == HUGE_VAL || d == -HUGE_VAL) && errno == ERANGE;
  if (buf != small)
    free(buf);
  return over;
}

/* jansson reads one character past a number or a word and puts it back;
 * a NUL byte put back is lost (its stream buffer takes NUL for "empty"), so
 * "2\0," reads as "2,". The same here, to accept what it accepts. */
static void token_end(struct rd *r) {
  if (r->p < r->end && *r->p == '\0')
    r->p++;
}

/* Reads the number token at r->p: an integer must fit json_int_t (long
 * long), a real must not overflow. *is_int and *ival tell an integer. */
static int scan_number(struct rd *r, bool *is_int, long long *ival) {
  const unsigned char *start = r->p;
  size_t n = tt_json_number_len((const char *)start, (const char *)r->end);
  bool neg = *start == '-';
  const unsigned char *p = start + neg, *end = start + n;
  if (n == 0)
    return SYNTAX; /* "01" reads as 0 and fails at the 1 that follows */
  while (p < end && is_digit(*p))
    p++;
  *is_int = p == end;
  if (!*is_int && real_overflows(start, n))
    return SYNTAX;
  unsigned long long v = 0, limit = neg ? (unsigned long long)LLONG_MAX + 1 : LLONG_MAX;
  for (p = start + neg; *is_int && p < end; p++) {
    unsigned digit = (unsigned)(*p - '0');
    if (v > (limit - digit) / 10)
      return SYNTAX; /* jansson: too big integer */
    v = v * 10 + digit;
  }
  *ival = !neg ? (long long)v : v > (unsigned long long)LLONG_MAX ? LLONG_MIN : -(long long)v;
  r->p = end;
  token_end(r);
  return OK;
}

/* Reads a bare word (jansson takes every letter) and tells which literal
 * it is: 't', 'f' or 'n'. */
static int scan_word(struct rd *r) {
  const unsigned char *p = r->p;
  while (r->p < r->end && is_alpha(*r->p))
    r->p++;
  size_t n = (size_t)(r->p - p);
  int w = n == 4 && memcmp(p, "true", 4) == 0    ? 't'
          : n == 5 && memcmp(p, "false", 5) == 0 ? 'f'
          : n == 4 && memcmp(p, "null", 4) == 0  ? 'n'
                                                 : SYNTAX;
  if (w != SYNTAX)
    token_end(r);
  return w;
}

/* ---- containers ---- */

/* Opens the container at r->p (its '{' or '[' was peeked). Returns 1 when
 * a member or element follows, 0 when it closed at once, or SYNTAX. */
static int open_container(struct rd *r, int close) {
  if (r->open >= MAX_NESTING)
    return SYNTAX;
  r->p++;
  r->open++;
  if (eat(r, close)) {
    r->open--;
    return 0;
  }
  return 1;
}

/* After a member or element: 1 when another follows, 0 when the container
 * closed, or SYNTAX. */
static int next_in(struct rd *r, int close) {
  if (eat(r, ','))
    return 1;
  if (eat(r, close)) {
    r->open--;
    return 0;
  }
  return SYNTAX;
}

/* Reads a member name and its ':'. jansson refuses names holding NUL. */
static int member_name(struct rd *r, struct tt_json_str *k) {
  if (peek(r) != '"' || scan_string(r, k) != OK || k->nul || !eat(r, ':'))
    return SYNTAX;
  return OK;
}

/* Whether member name k is `name`. */
static bool name_is(const struct tt_json_str *k, const char *name) {
  size_t n = strlen(name);
  if (!k->escaped)
    return k->raw_len == n && memcmp(k->raw, name, n) == 0;
  char buf[128];
  if (k->raw_len > sizeof(buf))
    return false; /* escapes shrink at most sixfold: too long for any name we ask */
  return tt_json_str_decode(k, buf) == n && memcmp(buf, name, n) == 0;
}

/* Checks and passes over one value of any kind. */
static int skip(struct rd *r) {
  int c = peek(r);
  bool is_int;
  long long ival;
  if (r->open >= MAX_NESTING)
    return SYNTAX;
  if (c == '"') {
    struct tt_json_str s;
    return scan_string(r, &s);
  }
  if (c == '-' || is_digit(c))
    return scan_number(r, &is_int, &ival);
  if (is_alpha(c))
    return scan_word(r) < 0 ? SYNTAX : OK;
  if (c != '{' && c != '[')
    return SYNTAX;
  int close = c == '{' ? '}' : ']';
  int more = open_container(r, close);
  while (more == 1) {
    struct tt_json_str k;
    if ((close == '}' && member_name(r, &k) != OK) || skip(r) != OK)
      return SYNTAX;
    more = next_in(r, close);
  }
  return more;
}

/* A value of the wrong kind for where it stands: checked, passed over,
 * BAD. */
static int reject(struct rd *r) {
  int rc = skip(r);
  return rc == OK ? BAD : rc;
}

/* ---- attribute values (codec_ddb.c's rules) ---- */

static int read_value(struct rd *r, int depth, struct tt_av *out);

/* S, N or B from a string token. */
static int read_scalar(struct rd *r, enum tt_av_type type, struct tt_av *out) {
  struct tt_json_str s;
  if (peek(r) != '"')
    return reject(r);
  if (r->open >= MAX_NESTING || scan_string(r, &s) != OK)
    return SYNTAX;
  if (type == TT_AV_S) { /* decoded straight into the value's own buffer */
    char *b = malloc(s.raw_len + 1);
    if (b == NULL)
      return NOMEM;
    out->len = tt_json_str_decode(&s, b);
    b[out->len] = '\0';
    out->type = TT_AV_S;
    out->u.bytes = b;
    return OK;
  }
  const char *t = s.raw;
  size_t n = s.raw_len;
  char small[64], *heap = NULL;
  if (s.escaped) { /* rare: the number or base64 text is decoded first */
    char *d = n <= sizeof(small) ? small : (heap = malloc(n));
    if (d == NULL)
      return NOMEM;
    n = tt_json_str_decode(&s, d);
    t = d;
  }
  int rc;
  if (type == TT_AV_N) {
    struct tt_error err;
    rc = OK;
    if (tt_av_number_text(out, t, n, "N", &err) != 0) {
      rc = err.code == TT_ERR_INTERNAL ? NOMEM : BAD;
      memset(out, 0, sizeof(*out));
    }
  } else {
    int d = tt_base64_decode_av(out, t, n, TT_BASE64_STD, 0);
    rc = d < 0 ? NOMEM : d > 0 ? BAD : OK;
  }
  free(heap);
  return rc;
}

/* BOOL (true or false) or NULL (only true). */
static int read_literal(struct rd *r, enum tt_av_type type, struct tt_av *out) {
  if (!is_alpha(peek(r)))
    return reject(r);
  if (r->open >= MAX_NESTING)
    return SYNTAX;
  int w = scan_word(r);
  if (w < 0)
    return SYNTAX;
  if (type == TT_AV_NULL) {
    if (w != 't')
      return BAD;
    tt_av_null(out);
  } else {
    if (w == 'n')
      return BAD;
    tt_av_bool(out, w == 't');
  }
  return OK;
}

/* The array `a` of *cap slots of `size` bytes, grown to twice as many;
 * NULL when out of memory (a is unchanged then). */
static void *more_room(void *a, size_t *cap, size_t size) {
  size_t c = *cap ? *cap * 2 : 4;
  void *b = realloc(a, c * size);
  if (b != NULL)
    *cap = c;
  return b;
}

static void free_values(struct tt_av *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    tt_av_free(&v[i]);
  free(v);
}

static int read_map(struct rd *r, int depth, bool item, struct tt_av *out);

/* Reads the elements of the array at r->p (its '[' was peeked) into *vp
 * (*np of them): an L's values (elem L), a set's members (S, N or B) or
 * items (M). After a BAD element *bad is set and the rest are only checked
 * and passed over. Returns OK, or a stop (nothing kept then). */
static int read_elems(struct rd *r, enum tt_av_type elem, int depth, struct tt_av **vp,
                      size_t *np, bool *bad) {
  struct tt_av *v = NULL;
  size_t n = 0, cap = 0;
  int rc = OK, more = open_container(r, ']');
  *bad = false;
  while (more == 1 && rc == OK) {
    struct tt_av *g = v;
    if (*bad) {
      rc = skip(r);
    } else if (n == cap && (g = more_room(v, &cap, sizeof(*v))) == NULL) {
      rc = NOMEM;
    } else {
      v = g;
      memset(&v[n], 0, sizeof(v[n]));
      rc = elem == TT_AV_L   ? read_value(r, depth, &v[n])
           : elem == TT_AV_M ? read_map(r, 0, true, &v[n])
                             : read_scalar(r, elem, &v[n]);
      if (rc == OK)
        n++;
      else if (rc == BAD)
        *bad = true, rc = OK;
    }
    if (rc == OK)
      more = next_in(r, ']');
  }
  if (rc == OK && more < 0)
    rc = more;
  if (rc != OK || n == 0) {
    free_values(v, n);
    v = NULL;
    n = 0;
  }
  *vp = v;
  *np = n;
  return rc;
}

/* SS, NS, BS (non-empty, no duplicates, kept sorted) or L. */
static int read_array(struct rd *r, enum tt_av_type type, int depth, struct tt_av *out) {
  if (peek(r) != '[')
    return reject(r);
  enum tt_av_type elem = type == TT_AV_SS   ? TT_AV_S
                         : type == TT_AV_NS ? TT_AV_N
                         : type == TT_AV_BS ? TT_AV_B
                                            : TT_AV_L;
  bool bad;
  int rc = read_elems(r, elem, depth, &out->u.elems, &out->len, &bad);
  if (rc != OK)
    return rc;
  out->type = type;
  struct tt_error err;
  if (bad || (type != TT_AV_L && tt_av_set_finish(out, "", &err) != 0)) {
    tt_av_free(out);
    memset(out, 0, sizeof(*out));
    return BAD;
  }
  return OK;
}

static int name_cmp(const struct tt_av_member *a, const struct tt_av_member *b) {
  size_t m = a->name_len < b->name_len ? a->name_len : b->name_len;
  int c = m ? memcmp(a->name, b->name, m) : 0;
  if (c != 0)
    return c;
  return (a->name_len > b->name_len) - (a->name_len < b->name_len);
}

/* Stable merge sort by name (equal names keep their order in the text). */
static void sort_members(struct tt_av_member *m, size_t n, struct tt_av_member *tmp) {
  if (n < 12) {
    for (size_t i = 1; i < n; i++) {
      struct tt_av_member x = m[i];
      size_t j = i;
      for (; j > 0 && name_cmp(&m[j - 1], &x) > 0; j--)
        m[j] = m[j - 1];
      m[j] = x;
    }
    return;
  }
  size_t h = n / 2, i = 0, j = h, k = 0;
  sort_members(m, h, tmp);
  sort_members(m + h, n - h, tmp);
  while (i < h && j < n)
    tmp[k++] = name_cmp(&m[j], &m[i]) < 0 ? m[j++] : m[i++];
  while (i < h)
    tmp[k++] = m[i++];
  memcpy(m, tmp, k * sizeof(*m)); /* m[j..n) are in place already */
}

/* Sorts the members by name and keeps the last of each repeated name, as
 * jansson keeps a repeated key's last value. BAD when a kept member holds
 * no value (type 0: it was BAD). */
static int members_finish(struct tt_av_member *m, size_t *np) {
  size_t n = *np;
  bool sorted = true;
  for (size_t i = 1; i < n && sorted; i++)
    sorted = name_cmp(&m[i - 1], &m[i]) < 0;
  if (!sorted) {
    struct tt_av_member small[12], *tmp = n <= 12 ? small : malloc(n * sizeof(*tmp));
    if (tmp == NULL)
      return NOMEM;
    sort_members(m, n, tmp);
    if (tmp != small)
      free(tmp);
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
      if (i + 1 < n && name_cmp(&m[i], &m[i + 1]) == 0) {
        free(m[i].name);
        tt_av_free(&m[i].value);
        continue;
      }
      m[w++] = m[i];
    }
    *np = n = w;
  }
  for (size_t i = 0; i < n; i++)
    if (m[i].value.type == 0)
      return BAD;
  return OK;
}

/* An attribute map: an item (`item`: names non-empty) or an M's object. */
static int read_map(struct rd *r, int depth, bool item, struct tt_av *out) {
  if (peek(r) != '{')
    return reject(r);
  struct tt_av_member *m = NULL;
  size_t n = 0, cap = 0;
  int rc = OK, more = open_container(r, '}');
  while (more == 1) {
    struct tt_json_str k;
    if ((rc = member_name(r, &k)) != OK)
      goto fail;
    if (n == cap) {
      struct tt_av_member *g = more_room(m, &cap, sizeof(*m));
      if (g == NULL) {
        rc = NOMEM;
        goto fail;
      }
      m = g;
    }
    struct tt_av_member *mm = &m[n];
    memset(mm, 0, sizeof(*mm));
    if ((mm->name = malloc(k.raw_len + 1)) == NULL) {
      rc = NOMEM;
      goto fail;
    }
    mm->name_len = tt_json_str_decode(&k, mm->name);
    mm->name[mm->name_len] = '\0';
    n++;
    /* A BAD value stays as a member of type 0: a later member of the same
     * name may replace it. */
    rc = item && mm->name_len == 0 ? skip(r) : read_value(r, depth, &mm->value);
    if (rc == BAD)
      rc = OK;
    if (rc != OK)
      goto fail;
    more = next_in(r, '}');
  }
  if ((rc = more) < 0 || (rc = members_finish(m, &n)) != OK)
    goto fail;
  out->type = TT_AV_M;
  out->len = n;
  out->u.members = n ? m : NULL;
  if (n == 0)
    free(m);
  return OK;
fail:
  for (size_t i = 0; i < n; i++) {
    free(m[i].name);
    tt_av_free(&m[i].value);
  }
  free(m);
  return rc;
}

/* The value of type key `type` at nesting `depth` (documents: <= 32). */
static int read_typed(struct rd *r, enum tt_av_type type, int depth, struct tt_av *out) {
  switch (type) {
  case TT_AV_S:
  case TT_AV_N:
  case TT_AV_B:
    return read_scalar(r, type, out);
  case TT_AV_BOOL:
  case TT_AV_NULL:
    return read_literal(r, type, out);
  case TT_AV_SS:
  case TT_AV_NS:
  case TT_AV_BS:
    return read_array(r, type, depth, out);
  case TT_AV_M:
  case TT_AV_L:
    if (depth + 1 > TT_DDB_MAX_DEPTH)
      return reject(r);
    return type == TT_AV_M ? read_map(r, depth + 1, false, out)
                           : read_array(r, TT_AV_L, depth + 1, out);
  default:
    return reject(r);
  }
}

/* One AttributeValue: an object with exactly one type key. A repeated type
 * key keeps its last value; a second, different key makes it BAD. */
static int read_value(struct rd *r, int depth, struct tt_av *out) {
  memset(out, 0, sizeof(*out));
  if (peek(r) != '{')
    return reject(r);
  enum tt_av_type type = 0;
  bool bad = false, first = true;
  int rc = OK, more = open_container(r, '}');
  if (more == 0)
    return BAD; /* {}: no type */
  while (more == 1) {
    struct tt_json_str k;
    if ((rc = member_name(r, &k)) != OK)
      goto fail;
    if (!bad) {
      char buf[32];
      enum tt_av_type t = 0;
      if (!k.escaped)
        t = tt_av_type_parse(k.raw, k.raw_len);
      else if (k.raw_len <= sizeof(buf))
        t = tt_av_type_parse(buf, tt_json_str_decode(&k, buf));
      if (first)
        type = t;
      bad = t == 0 || t != type;
      first = false;
    }
    tt_av_free(out);
    memset(out, 0, sizeof(*out));
    rc = bad ? skip(r) : read_typed(r, type, depth, out);
    if (rc == BAD)
      rc = OK; /* out stays type 0: BAD unless a later value replaces it */
    if (rc != OK)
      goto fail;
    more = next_in(r, '}');
  }
  if ((rc = more) < 0)
    goto fail;
  if (bad || out->type == 0) {
    rc = BAD;
    goto fail;
  }
  return OK;
fail:
  tt_av_free(out);
  memset(out, 0, sizeof(*out));
  return rc;
}

/* ---- the answers ---- */

static int invalid(struct tt_backend_error *e, const char *what) {
  return tt_backend_error_set(e, "InvalidResponse", 200,
                              "the DynamoDB endpoint answered an invalid %s", what);
}

static int stop(int rc, struct tt_backend_error *e) {
  if (rc == NOMEM)
    return tt_backend_error_set(e, "InternalFailure", 0, "out of memory");
  return TT_DDB_WIRE_NOT_OBJECT;
}

/* Opens the body's top-level object. */
static int open_body(struct rd *r, const char *text, size_t len) {
  r->p = (const unsigned char *)text;
  r->end = r->p + (text ? len : 0);
  r->open = 0;
  if (peek(r) != '{')
    return SYNTAX; /* an array is JSON, but not an object: the same answer */
  return open_container(r, '}');
}

/* After the top-level object only whitespace may follow. */
static bool at_end(struct rd *r) { return peek(r) < 0; }

/* An item member: null (none), an attribute map, or BAD. */
static int read_item_member(struct rd *r, struct tt_av *out) {
  memset(out, 0, sizeof(*out));
  if (peek(r) == 'n')
    return skip(r); /* null, or not JSON */
  return read_map(r, 0, true, out);
}

int tt_ddb_item_response_parse(enum tt_ddb_op op, const char *text, size_t len,
                               struct tt_av *out, struct tt_backend_error *e) {
  const char *name = op == TT_DDB_GET_ITEM ? "Item" : "Attributes";
  struct rd r;
  bool bad = false;
  memset(out, 0, sizeof(*out));
  int rc = OK, more = open_body(&r, text, len);
  while (more == 1) {
    struct tt_json_str k;
    if ((rc = member_name(&r, &k)) != OK)
      goto fail;
    if (name_is(&k, name)) {
      tt_av_free(out); /* a repeated member: the last one counts */
      rc = read_item_member(&r, out);
      bad = rc == BAD;
      if (bad)
        rc = OK;
    } else {
      rc = skip(&r);
    }
    if (rc != OK)
      goto fail;
    more = next_in(&r, '}');
  }
  if ((rc = more) < 0 || (rc = at_end(&r) ? OK : SYNTAX) != OK)
    goto fail;
  if (bad)
    return invalid(e, name);
  return 0;
fail:
  tt_av_free(out);
  memset(out, 0, sizeof(*out));
  return stop(rc, e);
}

/* Count or ScannedCount: a non-negative integer, else BAD. */
static int read_count(struct rd *r, uint64_t *out) {
  int c = peek(r);
  bool is_int;
  long long v;
  *out = 0;
  if (c != '-' && !is_digit(c))
    return reject(r);
  if (r->open >= MAX_NESTING || scan_number(r, &is_int, &v) != OK)
    return SYNTAX;
  if (!is_int || v < 0)
    return BAD;
  *out = (uint64_t)v;
  return OK;
}

/* Items: an array of attribute maps. BAD when it is no array; *bad_item
 * when it is one but an element is not a valid map. */
static int read_items(struct rd *r, struct tt_ddb_read_result *out, bool *bad_item) {
  free_values(out->items, out->n_items); /* a repeated Items member replaces them */
  out->items = NULL;
  out->n_items = 0;
  *bad_item = false;
  if (peek(r) != '[')
    return reject(r);
  return read_elems(r, TT_AV_M, 0, &out->items, &out->n_items, bad_item);
}

int tt_ddb_read_response_parse(const char *text, size_t len, struct tt_ddb_read_result *out,
                               struct tt_backend_error *e) {
  struct rd r;
  bool bad_count = false, bad_scanned = false, bad_items = false, bad_item = false,
       bad_key = false;
  memset(out, 0, sizeof(*out));
  int rc = OK, more = open_body(&r, text, len);
  while (more == 1) {
    struct tt_json_str k;
    if ((rc = member_name(&r, &k)) != OK)
      goto fail;
    /* Each member read again replaces what the last one of its name gave. */
    if (name_is(&k, "Items")) {
      rc = read_items(&r, out, &bad_item);
      bad_items = rc == BAD;
    } else if (name_is(&k, "Count")) {
      rc = read_count(&r, &out->count);
      bad_count = rc == BAD;
    } else if (name_is(&k, "ScannedCount")) {
      rc = read_count(&r, &out->scanned_count);
      bad_scanned = rc == BAD;
    } else if (name_is(&k, "LastEvaluatedKey")) {
      tt_av_free(&out->last_key);
      rc = read_item_member(&r, &out->last_key);
      bad_key = rc == BAD;
      if (out->last_key.type == TT_AV_M && out->last_key.len == 0)
        tt_av_free(&out->last_key); /* {}: the data ended, as for null */
      if (out->last_key.type != TT_AV_M)
        memset(&out->last_key, 0, sizeof(out->last_key));
    } else {
      rc = skip(&r);
    }
    if (rc == BAD)
      rc = OK;
    if (rc != OK)
      goto fail;
    more = next_in(&r, '}');
  }
  if ((rc = more) < 0 || (rc = at_end(&r) ? OK : SYNTAX) != OK)
    goto fail;
  /* The jansson path's order of checks, so each answer names the same
   * member. */
  const char *what = bad_count || bad_scanned ? "Count"
                     : bad_items              ? "Items"
                     : bad_item               ? "item"
                     : bad_key                ? "LastEvaluatedKey"
                                              : NULL;
  if (what != NULL) {
    tt_ddb_read_result_free(out);
    return invalid(e, what);
  }
  return 0;
fail:
  tt_ddb_read_result_free(out);
  return stop(rc, e);
}
