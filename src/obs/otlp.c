/* SPDX-License-Identifier: Apache-2.0 */
/* otlp.c -- OTLP/JSON encoding and the OTEL_* list parsers (obs/otlp.h). */
#include "obs/otlp.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- key=value lists ---- */

static int hexval(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Percent-decodes s[0..n) into a new string; NULL on a bad escape, a
 * decoded NUL or no memory. */
static char *decode(const char *s, size_t n) {
  char *out = malloc(n + 1);
  if (out == NULL)
    return NULL;
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '%') {
      /* Both digits must be there. */
      if (i + 2 >= n) {
        free(out);
        return NULL;
      }
      int h = hexval(s[i + 1]), l = hexval(s[i + 2]);
      if (h < 0 || l < 0 || (h == 0 && l == 0)) {
        free(out);
        return NULL;
      }
      out[o++] = (char)(h << 4 | l);
      i += 2;
    } else {
      out[o++] = s[i];
    }
  }
  out[o] = '\0';
  return out;
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
    if (kvs->items[i].value) {
      /* Header values may be credentials. */
      volatile char *v = kvs->items[i].value;
      for (size_t j = 0; v[j]; j++)
        v[j] = 0;
      free(kvs->items[i].value);
    }
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
        memset(value, 0, strlen(value));
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

static int put_string(struct tt_buf *b, const char *s, size_t n) {
  if (tt_buf_append(b, "\"", 1) != 0 || tt_buf_json_escape(b, s, n) != 0)
    return -1;
  return tt_buf_append(b, "\"", 1);
}

static int put_kv_string(struct tt_buf *b, bool first, const char *key, const char *v,
                         size_t n) {
  int rc = tt_buf_puts(b, first ? "{\"key\":" : ",{\"key\":");
  rc |= put_string(b, key, strlen(key));
  rc |= tt_buf_puts(b, ",\"value\":{\"stringValue\":");
  rc |= put_string(b, v, n);
  rc |= tt_buf_puts(b, "}}");
  return rc ? -1 : 0;
}

static int put_hex(struct tt_buf *b, const uint8_t *id, size_t n) {
  char hex[33];
  tt_trace_hex(id, n, hex);
  if (tt_buf_append(b, "\"", 1) != 0 || tt_buf_append(b, hex, 2 * n) != 0)
    return -1;
  return tt_buf_append(b, "\"", 1);
}

static int put_attr(struct tt_buf *b, bool first, const struct tt_span *s,
                    const struct tt_span_attr *a) {
  int rc = tt_buf_puts(b, first ? "{\"key\":" : ",{\"key\":");
  rc |= put_string(b, a->key, strlen(a->key));
  rc |= tt_buf_puts(b, ",\"value\":");
  size_t n = 0;
  const char *str = tt_span_attr_str(s, a, &n);
  switch (a->type) {
  case TT_ATTR_STR:
    rc |= tt_buf_puts(b, "{\"stringValue\":");
    rc |= put_string(b, str, n);
    rc |= tt_buf_puts(b, "}");
    break;
  case TT_ATTR_STR_ARRAY:
    rc |= tt_buf_puts(b, "{\"arrayValue\":{\"values\":[{\"stringValue\":");
    rc |= put_string(b, str, n);
    rc |= tt_buf_puts(b, "}]}}");
    break;
  case TT_ATTR_INT:
    rc |= tt_buf_printf(b, "{\"intValue\":\"%" PRId64 "\"}", a->v.i);
    break;
  case TT_ATTR_DOUBLE:
    rc |= tt_buf_printf(b, "{\"doubleValue\":%.17g}", a->v.d);
    break;
  case TT_ATTR_BOOL:
    rc |= tt_buf_puts(b, a->v.b ? "{\"boolValue\":true}" : "{\"boolValue\":false}");
    break;
  }
  rc |= tt_buf_puts(b, "}");
  return rc ? -1 : 0;
}

static int put_span(struct tt_buf *b, const struct tt_span *s) {
  int rc = tt_buf_puts(b, "{\"traceId\":");
  rc |= put_hex(b, s->ctx.trace_id, 16);
  rc |= tt_buf_puts(b, ",\"spanId\":");
  rc |= put_hex(b, s->ctx.span_id, 8);
  if (s->has_parent) {
    rc |= tt_buf_puts(b, ",\"parentSpanId\":");
    rc |= put_hex(b, s->parent_id, 8);
  }
  if (s->tracestate[0]) {
    rc |= tt_buf_puts(b, ",\"traceState\":");
    rc |= put_string(b, s->tracestate, strlen(s->tracestate));
  }
  rc |= tt_buf_puts(b, ",\"name\":");
  rc |= put_string(b, s->name, strlen(s->name));
  rc |= tt_buf_printf(b, ",\"kind\":%d,\"startTimeUnixNano\":\"%" PRIu64
                         "\",\"endTimeUnixNano\":\"%" PRIu64 "\",\"attributes\":[",
                      (int)s->kind, s->start_unix_ns, s->end_unix_ns);
  for (size_t i = 0; i < s->nattrs; i++)
    rc |= put_attr(b, i == 0, s, &s->attrs[i]);
  rc |= tt_buf_puts(b, "]");
  if (s->dropped_attrs)
    rc |= tt_buf_printf(b, ",\"droppedAttributesCount\":%u", (unsigned)s->dropped_attrs);
  rc |= tt_buf_printf(b, ",\"status\":{\"code\":%d", (int)s->status);
  if (s->status_message[0]) {
    rc |= tt_buf_puts(b, ",\"message\":");
    rc |= put_string(b, s->status_message, strlen(s->status_message));
  }
  rc |= tt_buf_puts(b, "}}");
  return rc ? -1 : 0;
}

int tt_otlp_encode(const struct tt_otlp_resource *res, struct tt_span *const *spans, size_t n,
                   struct tt_buf *out) {
  const char *name = res && res->service_name ? res->service_name : "tabletheoryd";
  const char *version = res ? res->service_version : NULL;
  int rc = tt_buf_puts(out, "{\"resourceSpans\":[{\"resource\":{\"attributes\":[");
  rc |= put_kv_string(out, true, "service.name", name, strlen(name));
  if (version)
    rc |= put_kv_string(out, false, "service.version", version, strlen(version));
  rc |= put_kv_string(out, false, "telemetry.sdk.name", "tabletheoryd", 12);
  rc |= put_kv_string(out, false, "telemetry.sdk.language", "cpp", 3);
  if (res && res->attrs)
    for (size_t i = 0; i < res->attrs->n; i++) {
      const struct tt_otlp_kv *kv = &res->attrs->items[i];
      if (strcmp(kv->key, "service.name") == 0 || strcmp(kv->key, "service.version") == 0)
        continue; /* said above */
      rc |= put_kv_string(out, false, kv->key, kv->value, strlen(kv->value));
    }
  rc |= tt_buf_puts(out, "]},\"scopeSpans\":[{\"scope\":{\"name\":\"tabletheoryd\"");
  if (version) {
    rc |= tt_buf_puts(out, ",\"version\":");
    rc |= put_string(out, version, strlen(version));
  }
  rc |= tt_buf_puts(out, "},\"spans\":[");
  for (size_t i = 0; i < n; i++) {
    if (i)
      rc |= tt_buf_puts(out, ",");
    rc |= put_span(out, spans[i]);
  }
  rc |= tt_buf_puts(out, "]}]}]}");
  return rc ? -1 : 0;
}
