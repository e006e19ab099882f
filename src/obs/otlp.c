/* SPDX-License-Identifier: Apache-2.0 */
/* otlp.c -- OTLP/JSON encoding and the OTEL_* list parsers (obs/otlp.h). */
#include "obs/otlp.h"
#include "util/hex.h"

#include <inttypes.h>
#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- key=value lists ---- */

/* Percent-decodes s[0..n) into a new string; NULL on a bad escape, a
 * decoded NUL, a raw control byte or no memory. */
static char *decode(const char *s, size_t n) {
  char *out = malloc(n + 1);
  if (out == NULL)
    return NULL;
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '%') {
      /* Both digits must be there. */
      int h = i + 2 < n ? tt_hex_digit((unsigned char)s[i + 1]) : -1;
      int l = h >= 0 ? tt_hex_digit((unsigned char)s[i + 2]) : -1;
      if (l < 0 || (h == 0 && l == 0))
        goto bad;
      out[o++] = (char)(h << 4 | l);
      i += 2;
    } else if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
      goto bad; /* a raw control byte (NUL included) */
    } else {
      out[o++] = s[i];
    }
  }
  out[o] = '\0';
  return out;
bad:
  free(out);
  return NULL;
}

static bool token_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static bool has_control(const char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
      return true;
  return false;
}

void tt_otlp_kvs_free(struct tt_otlp_kvs *kvs) {
  if (kvs == NULL)
    return;
  for (size_t i = 0; i < kvs->n; i++) {
    free(kvs->items[i].key);
    if (kvs->items[i].value) /* header values may be credentials */
      OPENSSL_cleanse(kvs->items[i].value, strlen(kvs->items[i].value));
    free(kvs->items[i].value);
  }
  free(kvs->items);
  kvs->items = NULL;
  kvs->n = 0;
}

const char *tt_otlp_kvs_get(const struct tt_otlp_kvs *kvs, const char *key) {
  if (kvs == NULL)
    return NULL;
  const char *v = NULL;
  for (size_t i = 0; i < kvs->n; i++)
    if (strcmp(kvs->items[i].key, key) == 0)
      v = kvs->items[i].value;
  return v;
}

static bool blank(char c) { return c == ' ' || c == '\t'; }

int tt_otlp_kv_parse(const char *text, size_t n, bool header, struct tt_otlp_kvs *out, char *why,
                     size_t cap) {
  memset(out, 0, sizeof(*out));
  if (text == NULL || n == 0)
    return 0;
  if (n > TT_OTLP_KV_TEXT_MAX) {
    snprintf(why, cap, "the list is longer than %d bytes", TT_OTLP_KV_TEXT_MAX);
    return -1;
  }
  size_t i = 0, member = 0;
  while (i <= n) {
    size_t end = i;
    while (end < n && text[end] != ',')
      end++;
    member++;
    size_t a = i, b = end;
    while (a < b && blank(text[a]))
      a++;
    while (b > a && blank(text[b - 1]))
      b--;
    i = end + 1;
    if (a == b)
      continue;
    const char *eq = memchr(text + a, '=', b - a);
    if (eq == NULL) {
      snprintf(why, cap, "member %zu is not key=value", member);
      goto fail;
    }
    size_t ka = a, kb = (size_t)(eq - text), va = kb + 1, vb = b;
    while (kb > ka && blank(text[kb - 1]))
      kb--;
    while (va < vb && blank(text[va]))
      va++;
    if (kb == ka) {
      snprintf(why, cap, "member %zu has an empty key", member);
      goto fail;
    }
    if (out->n == TT_OTLP_KV_MAX) {
      snprintf(why, cap, "more than %d members", TT_OTLP_KV_MAX);
      goto fail;
    }
    char *key = decode(text + ka, kb - ka);
    char *value = key ? decode(text + va, vb - va) : NULL;
    bool ok = key != NULL && value != NULL && !has_control(key) && !has_control(value);
    if (ok && header)
      for (const char *k = key; *k; k++)
        if (!token_char((unsigned char)*k))
          ok = false;
    if (!ok) {
      free(key);
      if (value)
        OPENSSL_cleanse(value, strlen(value));
      free(value);
      snprintf(why, cap, "member %zu has a malformed key or value", member);
      goto fail;
    }
    struct tt_otlp_kv *items = realloc(out->items, (out->n + 1) * sizeof(*items));
    if (items == NULL) {
      free(key);
      free(value);
      snprintf(why, cap, "out of memory");
      goto fail;
    }
    out->items = items;
    out->items[out->n].key = key;
    out->items[out->n].value = value;
    out->n++;
  }
  return 0;
fail:
  tt_otlp_kvs_free(out);
  return -1;
}

/* ---- encoding ---- */

/* Appends a string literal without measuring it. */
#define PUT_LIT(b, lit) tt_buf_append((b), (lit), sizeof(lit) - 1)

/* ---- one span, written at a cursor into room reserved up front ---- */

/* Copies a string literal at o and moves o past it. */
#define W_LIT(o, lit) (memcpy((o), (lit), sizeof(lit) - 1), (o) += sizeof(lit) - 1)

/* Room a JSON string of n bytes may take: every byte \u00XX, and quotes. */
#define STR_ROOM(n) (6 * (n) + 2)

/* A JSON string, escaped as tt_buf_json_escape does. The room (STR_ROOM)
 * is there, so clean bytes are stored eight at a time as they are scanned. */
static char *w_string(char *o, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
  *o++ = '"';
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x, q, bs;
    memcpy(&x, s + i, 8);
    q = x ^ (ones * '"');
    bs = x ^ (ones * '\\');
    /* A high bit for a byte below 0x20 or equal to '"' or '\\'. */
    if ((((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((bs - ones) & ~bs)) & high)
      break;
    memcpy(o, &x, 8);
    o += 8;
  }
  for (; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x20 && c != '"' && c != '\\') {
      *o++ = (char)c;
      continue;
    }
    *o++ = '\\';
    switch (c) {
    case '"':
    case '\\':
      *o++ = (char)c;
      break;
    case '\n':
      *o++ = 'n';
      break;
    case '\r':
      *o++ = 'r';
      break;
    case '\t':
      *o++ = 't';
      break;
    default:
      W_LIT(o, "u00");
      *o++ = hex[c >> 4];
      *o++ = hex[c & 15];
    }
  }
  *o++ = '"';
  return o;
}

/* A JSON string appended to b (w_string into room reserved for it). */
static int put_string(struct tt_buf *b, const char *s, size_t n) {
  if (tt_buf_reserve(b, STR_ROOM(n)) != 0)
    return -1;
  b->len = (size_t)(w_string(b->data + b->len, s, n) - b->data);
  b->data[b->len] = '\0';
  return 0;
}

static int put_kv_string(struct tt_buf *b, bool first, const char *key, const char *v,
                         size_t n) {
  int rc = tt_buf_puts(b, first ? "{\"key\":" : ",{\"key\":");
  rc |= put_string(b, key, strlen(key));
  rc |= PUT_LIT(b, ",\"value\":{\"stringValue\":");
  rc |= put_string(b, v, n);
  rc |= PUT_LIT(b, "}}");
  return rc ? -1 : 0;
}

/* v in decimal, quoted ("123"): OTLP/JSON's 64-bit integers (at most 22
 * bytes). */
static char *w_u64_string(char *o, uint64_t v) {
  static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930"
                              "31323334353637383940414243444546474849505152535455565758596061"
                              "62636465666768697071727374757677787980818283848586878889909192"
                              "93949596979899";
  char tmp[24];
  size_t n = sizeof(tmp);
  tmp[--n] = '"';
  /* Eight digits a 64-bit division (timestamps have 19), then 32-bit
   * arithmetic, two digits at a time. */
  while (v >= 100000000) {
    uint32_t lo = (uint32_t)(v % 100000000);
    v /= 100000000;
    for (int k = 0; k < 4; k++) {
      uint32_t d = lo % 100;
      lo /= 100;
      tmp[--n] = pairs[2 * d + 1];
      tmp[--n] = pairs[2 * d];
    }
  }
  uint32_t w = (uint32_t)v;
  while (w >= 100) {
    uint32_t d = w % 100;
    w /= 100;
    tmp[--n] = pairs[2 * d + 1];
    tmp[--n] = pairs[2 * d];
  }
  if (w >= 10) {
    tmp[--n] = pairs[2 * w + 1];
    tmp[--n] = pairs[2 * w];
  } else {
    tmp[--n] = (char)('0' + w);
  }
  tmp[--n] = '"';
  memcpy(o, tmp + n, sizeof(tmp) - n);
  return o + (sizeof(tmp) - n);
}

/* An id as quoted lowercase hex. */
static char *w_hex(char *o, const uint8_t *id, size_t n) {
  *o++ = '"';
  tt_trace_hex(id, n, o);
  o += 2 * n;
  *o++ = '"';
  return o;
}

/* snprintf's text copied at o (numbers the fast paths leave out; `cap`
 * bytes of room at most). */
static char *w_printf(char *o, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static char *w_printf(char *o, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(o, cap, fmt, ap);
  va_end(ap);
  return o + (k < 0 ? 0 : (size_t)k < cap ? (size_t)k : cap - 1);
}

/* Room for one attribute but its key and string value. */
#define ATTR_ROOM 96

static char *w_attr(char *o, bool first, const struct tt_span *s, const struct tt_span_attr *a) {
  if (!first)
    *o++ = ',';
  W_LIT(o, "{\"key\":\"");
  memcpy(o, a->key, a->key_len); /* a literal of the code's own: nothing to escape */
  o += a->key_len;
  W_LIT(o, "\",\"value\":");
  size_t n = 0;
  const char *str = tt_span_attr_str(s, a, &n);
  switch (a->type) {
  case TT_ATTR_STR:
    W_LIT(o, "{\"stringValue\":");
    o = w_string(o, str, n);
    *o++ = '}';
    break;
  case TT_ATTR_STR_ARRAY:
    W_LIT(o, "{\"arrayValue\":{\"values\":[{\"stringValue\":");
    o = w_string(o, str, n);
    W_LIT(o, "}]}}");
    break;
  case TT_ATTR_INT:
    W_LIT(o, "{\"intValue\":");
    if (a->v.i < 0)
      o = w_printf(o, 32, "\"%" PRId64 "\"", a->v.i);
    else
      o = w_u64_string(o, (uint64_t)a->v.i);
    *o++ = '}';
    break;
  case TT_ATTR_BOOL:
    if (a->v.b)
      W_LIT(o, "{\"boolValue\":true}");
    else
      W_LIT(o, "{\"boolValue\":false}");
    break;
  }
  *o++ = '}';
  return o;
}

/* The most bytes put_span may write for s. */
static size_t span_room(const struct tt_span *s, size_t name_n, size_t ts_n, size_t msg_n) {
  size_t room = 512 + STR_ROOM(name_n) + STR_ROOM(ts_n) + STR_ROOM(msg_n) +
                (s->group ? s->group->json_len : 0);
  for (size_t i = 0; i < s->nattrs; i++) {
    room += ATTR_ROOM + s->attrs[i].key_len;
    if (s->attrs[i].type == TT_ATTR_STR || s->attrs[i].type == TT_ATTR_STR_ARRAY)
      room += STR_ROOM((size_t)s->attrs[i].v.s.len);
  }
  return room;
}

static int put_span(struct tt_buf *b, const struct tt_span *s) {
  size_t name_n = s->name_n, ts_n = strlen(s->tracestate),
         msg_n = strlen(s->status_message);
  size_t room = span_room(s, name_n, ts_n, msg_n);
  if (tt_buf_reserve(b, room) != 0)
    return -1;
  char *o = b->data + b->len;
  W_LIT(o, "{\"traceId\":");
  o = w_hex(o, s->ctx.trace_id, 16);
  W_LIT(o, ",\"spanId\":");
  o = w_hex(o, s->ctx.span_id, 8);
  if (s->has_parent) {
    W_LIT(o, ",\"parentSpanId\":");
    o = w_hex(o, s->parent_id, 8);
  }
  if (ts_n) {
    W_LIT(o, ",\"traceState\":");
    o = w_string(o, s->tracestate, ts_n);
  }
  W_LIT(o, ",\"name\":");
  o = w_string(o, s->name_p, name_n);
  W_LIT(o, ",\"kind\":");
  *o++ = (char)('0' + (int)s->kind);
  W_LIT(o, ",\"startTimeUnixNano\":");
  o = w_u64_string(o, s->start_unix_ns);
  W_LIT(o, ",\"endTimeUnixNano\":");
  o = w_u64_string(o, s->end_unix_ns);
  W_LIT(o, ",\"attributes\":[");
  bool first = true;
  if (s->group && s->group->json_len) {
    memcpy(o, s->group->json, s->group->json_len);
    o += s->group->json_len;
    first = false;
  }
  for (size_t i = 0; i < s->nattrs; i++)
    o = w_attr(o, first && i == 0, s, &s->attrs[i]);
  *o++ = ']';
  if (s->dropped_attrs)
    o = w_printf(o, 48, ",\"droppedAttributesCount\":%u", (unsigned)s->dropped_attrs);
  W_LIT(o, ",\"status\":{\"code\":");
  *o++ = (char)('0' + (int)s->status);
  if (msg_n) {
    W_LIT(o, ",\"message\":");
    o = w_string(o, s->status_message, msg_n);
  }
  W_LIT(o, "}}");
  b->len = (size_t)(o - b->data);
  b->data[b->len] = '\0';
  return 0;
}

/* The resource's attributes: service.name, service.version, the SDK's,
 * then OTEL_RESOURCE_ATTRIBUTES but the two service ones. */
struct res_kv {
  const char *key, *value;
};

#define RES_MAX (4 + TT_OTLP_KV_MAX)

static size_t res_kvs(const struct tt_otlp_resource *res, struct res_kv *kv) {
  size_t n = 0;
  kv[n++] = (struct res_kv){"service.name",
                           res && res->service_name ? res->service_name : "tabletheoryd"};
  if (res && res->service_version)
    kv[n++] = (struct res_kv){"service.version", res->service_version};
  kv[n++] = (struct res_kv){"telemetry.sdk.name", "tabletheoryd"};
  kv[n++] = (struct res_kv){"telemetry.sdk.language", "cpp"};
  if (res && res->attrs)
    for (size_t i = 0; i < res->attrs->n && n < RES_MAX; i++) {
      const struct tt_otlp_kv *a = &res->attrs->items[i];
      if (strcmp(a->key, "service.name") != 0 && strcmp(a->key, "service.version") != 0)
        kv[n++] = (struct res_kv){a->key, a->value};
    }
  return n;
}

/* The JSON request's text up to its first span. */
static int json_prefix(const struct tt_otlp_resource *res, struct tt_buf *out) {
  struct res_kv kv[RES_MAX];
  size_t n = res_kvs(res, kv);
  const char *version = res ? res->service_version : NULL;
  int rc = PUT_LIT(out, "{\"resourceSpans\":[{\"resource\":{\"attributes\":[");
  for (size_t i = 0; i < n; i++)
    rc |= put_kv_string(out, i == 0, kv[i].key, kv[i].value, strlen(kv[i].value));
  rc |= PUT_LIT(out, "]},\"scopeSpans\":[{\"scope\":{\"name\":\"tabletheoryd\"");
  if (version) {
    rc |= PUT_LIT(out, ",\"version\":");
    rc |= put_string(out, version, strlen(version));
  }
  rc |= PUT_LIT(out, "},\"spans\":[");
  return rc ? -1 : 0;
}

int tt_otlp_protocol_parse(const char *s, enum tt_otlp_protocol *out) {
  if (s != NULL && strcmp(s, "http/protobuf") == 0)
    *out = TT_OTLP_PROTOBUF;
  else if (s != NULL && strcmp(s, "http/json") == 0)
    *out = TT_OTLP_JSON;
  else
    return -1;
  return 0;
}

/* ---- protobuf ---- */

/* Field numbers of opentelemetry/proto/{collector/trace,trace,common,resource}/v1. */
enum {
  F_REQ_RESOURCE_SPANS = 1,
  F_RS_RESOURCE = 1,
  F_RS_SCOPE_SPANS = 2,
  F_RES_ATTRIBUTES = 1,
  F_SS_SCOPE = 1,
  F_SS_SPANS = 2,
  F_SCOPE_NAME = 1,
  F_SCOPE_VERSION = 2,
  F_SPAN_TRACE_ID = 1,
  F_SPAN_SPAN_ID = 2,
  F_SPAN_TRACE_STATE = 3,
  F_SPAN_PARENT_SPAN_ID = 4,
  F_SPAN_NAME = 5,
  F_SPAN_KIND = 6,
  F_SPAN_START = 7,
  F_SPAN_END = 8,
  F_SPAN_ATTRIBUTES = 9,
  F_SPAN_DROPPED_ATTRIBUTES = 10,
  F_SPAN_STATUS = 15,
  F_STATUS_MESSAGE = 2,
  F_STATUS_CODE = 3,
  F_KV_KEY = 1,
  F_KV_VALUE = 2,
  F_ANY_STRING = 1,
  F_ANY_BOOL = 2,
  F_ANY_INT = 3,
  F_ANY_ARRAY = 5,
  F_ARRAY_VALUES = 1,
};

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2 };

/* Every field number is below 16: a tag is one byte. */
#define TAG(field, wt) ((char)((field) << 3 | (wt)))

/* Bytes of v as a varint: 1 + (index of its highest bit) / 7. */
static inline size_t pb_varint_len(uint64_t v) {
  return (size_t)(((63 - __builtin_clzll(v | 1)) * 9 + 73) / 64);
}

/* A length-delimited field of n bytes: tag, length, bytes. Most are
 * shorter than 128 bytes: one byte of length. */
static inline size_t pb_len_field(size_t n) {
  return n + (n < 0x80 ? 2 : 1 + pb_varint_len(n));
}

static inline char *pb_varint(char *o, uint64_t v) {
  while (v >= 0x80) {
    *o++ = (char)(v | 0x80);
    v >>= 7;
  }
  *o++ = (char)v;
  return o;
}

static inline char *pb_head(char *o, int field, size_t n) {
  *o++ = TAG(field, WT_LEN);
  if (n < 0x80) {
    *o++ = (char)n;
    return o;
  }
  return pb_varint(o, n);
}

/* n bytes from p to o. Keys and values are mostly 4 to 32 bytes: two
 * or four overlapping word moves, no call. */
static inline void pb_copy(char *o, const char *p, size_t n) {
  if (n >= 8 && n <= 32) {
    uint64_t a, b, c, d;
    memcpy(&a, p, 8);
    memcpy(&b, p + n - 8, 8);
    if (n > 16) {
      memcpy(&c, p + 8, 8);
      memcpy(&d, p + n - 16, 8);
      memcpy(o + 8, &c, 8);
      memcpy(o + n - 16, &d, 8);
    }
    memcpy(o, &a, 8);
    memcpy(o + n - 8, &b, 8);
  } else if (n >= 4 && n < 8) {
    uint32_t a, b;
    memcpy(&a, p, 4);
    memcpy(&b, p + n - 4, 4);
    memcpy(o, &a, 4);
    memcpy(o + n - 4, &b, 4);
  } else {
    memcpy(o, p, n);
  }
}

static inline char *pb_bytes(char *o, int field, const void *p, size_t n) {
  o = pb_head(o, field, n);
  pb_copy(o, p, n);
  return o + n;
}

static inline char *pb_fixed64(char *o, int field, uint64_t v) {
  *o++ = TAG(field, WT_I64);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(o, &v, 8);
  return o + 8;
#else
  for (int i = 0; i < 8; i++, v >>= 8)
    *o++ = (char)(v & 0xff);
  return o;
#endif
}

/* AnyValue of an attribute. */
static inline size_t pb_any_size(const struct tt_span_attr *a) {
  switch (a->type) {
  case TT_ATTR_STR:
    return pb_len_field(a->v.s.len);
  case TT_ATTR_STR_ARRAY:
    return pb_len_field(pb_len_field(pb_len_field(a->v.s.len)));
  case TT_ATTR_INT:
    return 1 + pb_varint_len((uint64_t)a->v.i);
  case TT_ATTR_BOOL:
    return 2;
  }
  return 0;
}

/* The KeyValue's tag and length, its key, and its value's tag and length
 * (`any` bytes of AnyValue). */
static inline char *pb_kv_head(char *o, const struct tt_span_attr *a, size_t any) {
  o = pb_head(o, F_SPAN_ATTRIBUTES, pb_len_field(a->key_len) + pb_len_field(any));
  o = pb_bytes(o, F_KV_KEY, a->key, a->key_len);
  return pb_head(o, F_KV_VALUE, any);
}

/* One attribute; a short string or a small integer, the usual ones,
 * first: every length of their nesting is one byte, written as is. */
static char *pb_attr(char *o, const struct tt_span_attr *a) {
  size_t kl = a->key_len;
  if (a->type == TT_ATTR_STR && kl + a->v.s.len < 0x80 - 6) {
    size_t vl = a->v.s.len;
    o[0] = TAG(F_SPAN_ATTRIBUTES, WT_LEN);
    o[1] = (char)(kl + vl + 6);
    o[2] = TAG(F_KV_KEY, WT_LEN);
    o[3] = (char)kl;
    pb_copy(o + 4, a->key, kl);
    o += 4 + kl;
    o[0] = TAG(F_KV_VALUE, WT_LEN);
    o[1] = (char)(vl + 2);
    o[2] = TAG(F_ANY_STRING, WT_LEN);
    o[3] = (char)vl;
    pb_copy(o + 4, a->v.s.p, vl);
    return o + 4 + vl;
  }
  if (a->type == TT_ATTR_INT && (uint64_t)a->v.i < 0x80 && kl < 0x80 - 6) {
    o[0] = TAG(F_SPAN_ATTRIBUTES, WT_LEN);
    o[1] = (char)(kl + 6);
    o[2] = TAG(F_KV_KEY, WT_LEN);
    o[3] = (char)kl;
    pb_copy(o + 4, a->key, kl);
    o += 4 + kl;
    o[0] = TAG(F_KV_VALUE, WT_LEN);
    o[1] = 2;
    o[2] = TAG(F_ANY_INT, WT_VARINT);
    o[3] = (char)a->v.i;
    return o + 4;
  }
  if (a->type == TT_ATTR_STR) {
    o = pb_kv_head(o, a, pb_len_field(a->v.s.len));
    return pb_bytes(o, F_ANY_STRING, a->v.s.p, a->v.s.len);
  }
  o = pb_kv_head(o, a, pb_any_size(a));
  switch (a->type) {
  case TT_ATTR_STR:
    break; /* above */
  case TT_ATTR_STR_ARRAY:
    o = pb_head(o, F_ANY_ARRAY, pb_len_field(pb_len_field(a->v.s.len)));
    o = pb_head(o, F_ARRAY_VALUES, pb_len_field(a->v.s.len));
    o = pb_bytes(o, F_ANY_STRING, a->v.s.p, a->v.s.len);
    break;
  case TT_ATTR_INT:
    *o++ = TAG(F_ANY_INT, WT_VARINT);
    o = pb_varint(o, (uint64_t)a->v.i);
    break;
  case TT_ATTR_BOOL:
    *o++ = TAG(F_ANY_BOOL, WT_VARINT);
    *o++ = a->v.b ? 1 : 0;
    break;
  }
  return o;
}

/* A varint's most bytes, and a tag's and a length's. */
#define PB_VARINT_MAX 10
#define PB_HEAD_MAX (1 + PB_VARINT_MAX)

/* The most bytes the Span message of s takes (an attribute's nesting is
 * at most four tags and lengths and a 64-bit scalar). */
static size_t pb_span_room(const struct tt_span *s, size_t name, size_t ts, size_t msg) {
  return 4 * PB_HEAD_MAX + 16 + 8 + 8 + name + ts + msg + 2 + 9 + 9 + 1 + PB_VARINT_MAX +
         2 * PB_HEAD_MAX + 2 + s->nattrs * (4 * PB_HEAD_MAX + PB_VARINT_MAX) + s->attr_bytes +
         (s->group ? s->group->pb_len : 0);
}

/* The Span message's fields at o, in one pass: each attribute's nested
 * lengths are known from its own sizes, the Span's own length is written
 * by the caller once the fields are. */
static char *pb_span_fields(char *o, const struct tt_span *s, size_t name, size_t ts, size_t msg) {
  o = pb_bytes(o, F_SPAN_TRACE_ID, s->ctx.trace_id, 16);
  o = pb_bytes(o, F_SPAN_SPAN_ID, s->ctx.span_id, 8);
  if (ts)
    o = pb_bytes(o, F_SPAN_TRACE_STATE, s->tracestate, ts);
  if (s->has_parent)
    o = pb_bytes(o, F_SPAN_PARENT_SPAN_ID, s->parent_id, 8);
  o = pb_bytes(o, F_SPAN_NAME, s->name_p, name);
  *o++ = TAG(F_SPAN_KIND, WT_VARINT);
  *o++ = (char)s->kind;
  o = pb_fixed64(o, F_SPAN_START, s->start_unix_ns);
  o = pb_fixed64(o, F_SPAN_END, s->end_unix_ns);
  if (s->group) {
    memcpy(o, s->group->pb, s->group->pb_len);
    o += s->group->pb_len;
  }
  for (size_t i = 0; i < s->nattrs; i++)
    o = pb_attr(o, &s->attrs[i]);
  if (s->dropped_attrs) {
    *o++ = TAG(F_SPAN_DROPPED_ATTRIBUTES, WT_VARINT);
    o = pb_varint(o, s->dropped_attrs);
  }
  /* An unset status without a message is the Status message's default:
   * left out, as an absent field means the same. */
  if (s->status == TT_SPAN_UNSET && msg == 0)
    return o;
  o = pb_head(o, F_SPAN_STATUS, (msg ? pb_len_field(msg) : 0) + (s->status ? 2 : 0));
  if (msg)
    o = pb_bytes(o, F_STATUS_MESSAGE, s->status_message, msg);
  if (s->status) {
    *o++ = TAG(F_STATUS_CODE, WT_VARINT);
    *o++ = (char)s->status;
  }
  return o;
}

/* ScopeSpans.spans: the Span field of s at o, which has room for
 * pb_span_room + PB_HEAD_MAX bytes. Spans are mostly 128 bytes to 16 KB:
 * the fields are written after a tag and a two-byte length, and moved
 * when the length takes another size. */
static char *pb_span(char *o, const struct tt_span *s, size_t name, size_t ts, size_t msg) {
  char *fields = o + 3;
  char *end = pb_span_fields(fields, s, name, ts, msg);
  size_t n = (size_t)(end - fields);
  size_t head = 1 + pb_varint_len(n);
  if (head != 3) {
    memmove(o + head, fields, n);
    end = o + head + n;
  }
  pb_head(o, F_SS_SPANS, n);
  return end;
}

/* KeyValue{key, AnyValue{string_value}}'s size. */
static size_t pb_str_kv_size(const char *key, const char *value) {
  return pb_len_field(strlen(key)) + pb_len_field(pb_len_field(strlen(value)));
}

static char *pb_str_kv(char *o, int field, const char *key, const char *value) {
  size_t vn = strlen(value);
  o = pb_head(o, field, pb_str_kv_size(key, value));
  o = pb_bytes(o, F_KV_KEY, key, strlen(key));
  o = pb_head(o, F_KV_VALUE, pb_len_field(vn));
  return pb_bytes(o, F_ANY_STRING, value, vn);
}

/* ---- the encoder and batches ---- */

int tt_otlp_encoder_init(struct tt_otlp_encoder *enc, const struct tt_otlp_resource *res,
                         enum tt_otlp_protocol protocol) {
  memset(enc, 0, sizeof(*enc));
  enc->protocol = protocol;
  tt_buf_init(&enc->pre, 0);
  if (protocol == TT_OTLP_JSON)
    return json_prefix(res, &enc->pre);
  struct res_kv kv[RES_MAX];
  size_t nkv = res_kvs(res, kv);
  size_t resource = 0;
  for (size_t i = 0; i < nkv; i++)
    resource += pb_len_field(pb_str_kv_size(kv[i].key, kv[i].value));
  const char *version = res ? res->service_version : NULL;
  size_t scope = pb_len_field(12) + (version ? pb_len_field(strlen(version)) : 0);
  size_t total = pb_len_field(resource) + pb_len_field(scope);
  if (tt_buf_reserve(&enc->pre, total) != 0)
    return -1;
  char *start = enc->pre.data, *o = start;
  o = pb_head(o, F_RS_RESOURCE, resource);
  for (size_t i = 0; i < nkv; i++)
    o = pb_str_kv(o, F_RES_ATTRIBUTES, kv[i].key, kv[i].value);
  enc->resource_len = (size_t)(o - start);
  o = pb_head(o, F_SS_SCOPE, scope);
  o = pb_bytes(o, F_SCOPE_NAME, "tabletheoryd", 12);
  if (version)
    o = pb_bytes(o, F_SCOPE_VERSION, version, strlen(version));
  if ((size_t)(o - start) != total)
    return -1; /* cannot happen: every size above is what is written */
  enc->pre.len = total;
  enc->pre.data[total] = '\0';
  /* The request's and the ScopeSpans' tags and lengths, the resource and
   * the scope. */
  enc->room = 2 * (1 + PB_VARINT_MAX) + total;
  return 0;
}

void tt_otlp_encoder_free(struct tt_otlp_encoder *enc) { tt_buf_free(&enc->pre); }

int tt_otlp_group_build(struct tt_span_group *g, const struct tt_span_attr *attrs, size_t n) {
  memset(g, 0, sizeof(*g));
  /* Each form is written into scratch room as large as it may need, and
   * kept when it fits. */
  size_t room = 0;
  for (size_t i = 0; i < n; i++) {
    size_t v = attrs[i].type == TT_ATTR_STR || attrs[i].type == TT_ATTR_STR_ARRAY
                   ? attrs[i].v.s.len
                   : 0;
    room += 1 + ATTR_ROOM + 4 * PB_HEAD_MAX + attrs[i].key_len + STR_ROOM(v);
  }
  char *scratch = malloc(room);
  if (scratch == NULL)
    return -1;
  int rc = -1;
  char *o = scratch;
  for (size_t i = 0; i < n; i++)
    o = pb_attr(o, &attrs[i]);
  size_t pb = (size_t)(o - scratch);
  if (pb > sizeof(g->pb))
    goto out;
  memcpy(g->pb, scratch, pb);
  o = scratch;
  for (size_t i = 0; i < n; i++)
    o = w_attr(o, i == 0, NULL, &attrs[i]);
  size_t json = (size_t)(o - scratch);
  if (json > sizeof(g->json)) {
    memset(g->pb, 0, pb);
    goto out;
  }
  memcpy(g->json, scratch, json);
  g->pb_len = (uint16_t)pb;
  g->json_len = (uint16_t)json;
  g->nattrs = (uint32_t)n;
  rc = 0;
out:
  free(scratch);
  return rc;
}

void tt_otlp_batch_init(struct tt_otlp_batch *b) {
  memset(b, 0, sizeof(*b));
  tt_buf_init(&b->buf, 0);
}

void tt_otlp_batch_reset(struct tt_otlp_batch *b) {
  tt_buf_reset(&b->buf);
  b->n = 0;
  b->body = 0;
  b->sealed = false;
}

void tt_otlp_batch_free(struct tt_otlp_batch *b) {
  tt_buf_free(&b->buf);
  tt_otlp_batch_reset(b);
}

/* What every request has before its first span: the JSON prefix, or the
 * protobuf's reserved room. */
static int batch_open(const struct tt_otlp_encoder *enc, struct tt_otlp_batch *b) {
  if (b->buf.len != 0)
    return 0;
  if (enc->protocol == TT_OTLP_JSON)
    return tt_buf_append(&b->buf, enc->pre.data, enc->pre.len);
  if (tt_buf_reserve(&b->buf, enc->room) != 0)
    return -1;
  b->buf.len = enc->room; /* written when the batch is sealed */
  b->buf.data[b->buf.len] = '\0';
  return 0;
}

int tt_otlp_batch_add(const struct tt_otlp_encoder *enc, struct tt_otlp_batch *b,
                      const struct tt_span *s) {
  if (b->sealed || batch_open(enc, b) != 0)
    return -1;
  size_t before = b->buf.len;
  int rc;
  if (enc->protocol == TT_OTLP_JSON) {
    rc = b->n ? tt_buf_append(&b->buf, ",", 1) : 0;
    if (rc == 0)
      rc = put_span(&b->buf, s);
  } else {
    size_t name = s->name_n;
    size_t ts = s->tracestate[0] ? strlen(s->tracestate) : 0;
    size_t msg = s->status_message[0] ? strlen(s->status_message) : 0;
    rc = tt_buf_reserve(&b->buf, PB_HEAD_MAX + pb_span_room(s, name, ts, msg));
    if (rc == 0)
      b->buf.len = (size_t)(pb_span(b->buf.data + b->buf.len, s, name, ts, msg) - b->buf.data);
  }
  if (rc != 0) {
    b->buf.len = b->n ? before : 0; /* as it was */
    if (b->buf.data)
      b->buf.data[b->buf.len] = '\0';
    return -1;
  }
  b->buf.data[b->buf.len] = '\0';
  b->n++;
  return 0;
}

int tt_otlp_batch_seal(const struct tt_otlp_encoder *enc, struct tt_otlp_batch *b) {
  if (b->sealed)
    return 0;
  if (batch_open(enc, b) != 0)
    return -1;
  if (enc->protocol == TT_OTLP_JSON) {
    if (PUT_LIT(&b->buf, "]}]}]}") != 0)
      return -1;
    b->body = 0;
    b->sealed = true;
    return 0;
  }
  size_t spans_len = b->buf.len - enc->room;
  size_t scope_len = enc->pre.len - enc->resource_len;
  size_t scope_spans = scope_len + spans_len;
  size_t resource_spans = enc->resource_len + pb_len_field(scope_spans);
  size_t head = 1 + pb_varint_len(resource_spans) + enc->resource_len + 1 +
                pb_varint_len(scope_spans) + scope_len;
  char *start = b->buf.data + (enc->room - head), *o = start;
  o = pb_head(o, F_REQ_RESOURCE_SPANS, resource_spans);
  memcpy(o, enc->pre.data, enc->resource_len);
  o += enc->resource_len;
  o = pb_head(o, F_RS_SCOPE_SPANS, scope_spans);
  memcpy(o, enc->pre.data + enc->resource_len, scope_len);
  o += scope_len;
  if (o != b->buf.data + enc->room)
    return -1; /* cannot happen: the head is what is written */
  b->body = enc->room - head;
  b->sealed = true;
  return 0;
}

int tt_otlp_encode(const struct tt_otlp_resource *res, enum tt_otlp_protocol protocol,
                   struct tt_span *const *spans, size_t n, struct tt_buf *out) {
  struct tt_otlp_encoder enc;
  struct tt_otlp_batch b;
  tt_otlp_batch_init(&b);
  int rc = tt_otlp_encoder_init(&enc, res, protocol);
  for (size_t i = 0; i < n && rc == 0; i++)
    rc = tt_otlp_batch_add(&enc, &b, spans[i]);
  if (rc == 0)
    rc = tt_otlp_batch_seal(&enc, &b);
  if (rc == 0)
    rc = tt_buf_append(out, b.buf.data + b.body, b.buf.len - b.body);
  tt_otlp_batch_free(&b);
  tt_otlp_encoder_free(&enc);
  return rc ? -1 : 0;
}
