/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_trace.c -- libFuzzer target for the trace-context and OTEL_* list
 * parsers (obs/trace.c, obs/otlp.c): traceparent, tracestate,
 * OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES and
 * OTEL_EXPORTER_OTLP_PROTOCOL. The input is a length-delimited,
 * non-NUL-terminated buffer, as a header value arrives; accepted values
 * must round-trip and stay within their bounds. The same bytes then become
 * a span's name, string attributes and status message, and its export
 * bodies must be well-formed: the JSON one parses, the protobuf one walks
 * to its end with every length in bounds and every string UTF-8. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "obs/otlp.h"
#include "obs/trace.h"
#include "util/buf.h"
#include "util/error.h"

/* The messages of an ExportTraceServiceRequest the encoder writes. */
enum msg { M_NONE, M_REQ, M_RS, M_RES, M_SS, M_SCOPE, M_SPAN, M_KV, M_ANY, M_ARRAY, M_STATUS };

/* The message a length-delimited field holds, or M_NONE for bytes. */
static enum msg child(enum msg m, uint64_t f) {
  switch (m) {
  case M_REQ:
    return f == 1 ? M_RS : M_NONE;
  case M_RS:
    return f == 1 ? M_RES : f == 2 ? M_SS : M_NONE;
  case M_RES:
    return f == 1 ? M_KV : M_NONE;
  case M_SS:
    return f == 1 ? M_SCOPE : f == 2 ? M_SPAN : M_NONE;
  case M_SPAN:
    return f == 9 ? M_KV : f == 15 ? M_STATUS : M_NONE;
  case M_KV:
    return f == 2 ? M_ANY : M_NONE;
  case M_ANY:
    return f == 5 ? M_ARRAY : M_NONE;
  case M_ARRAY:
    return f == 1 ? M_ANY : M_NONE;
  default:
    return M_NONE;
  }
}

/* Whether field f of m is a protobuf string (UTF-8 only). */
static int is_string(enum msg m, uint64_t f) {
  return (m == M_SPAN && (f == 3 || f == 5)) || (m == M_KV && f == 1) ||
         (m == M_ANY && f == 1) || (m == M_STATUS && f == 2) || (m == M_SCOPE && f <= 2);
}

static int varint(const uint8_t *p, size_t n, size_t *i, uint64_t *out) {
  *out = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*i >= n)
      return -1;
    uint8_t b = p[(*i)++];
    *out |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      return 0;
  }
  return -1;
}

/* Walks message m of n bytes; -1 on anything out of bounds. Counts spans. */
static int walk(const uint8_t *p, size_t n, enum msg m, size_t *spans) {
  size_t i = 0;
  while (i < n) {
    uint64_t tag, v;
    if (varint(p, n, &i, &tag) != 0 || (tag >> 3) == 0)
      return -1;
    switch (tag & 7) {
    case 0:
      if (varint(p, n, &i, &v) != 0)
        return -1;
      break;
    case 1:
      if (n - i < 8)
        return -1;
      i += 8;
      break;
    case 2: {
      if (varint(p, n, &i, &v) != 0 || v > n - i)
        return -1;
      enum msg c = child(m, tag >> 3);
      if (c == M_SPAN)
        (*spans)++;
      if (c != M_NONE && walk(p + i, (size_t)v, c, spans) != 0)
        return -1;
      if (c == M_NONE && is_string(m, tag >> 3) && !tt_utf8_valid((const char *)p + i, v))
        return -1;
      i += (size_t)v;
      break;
    }
    default:
      return -1;
    }
  }
  return 0;
}

static struct tt_span *sunk;
static void sink_cb(struct tt_span *span, void *arg) {
  (void)arg;
  sunk = span;
}

/* The input as a span's text, encoded both ways. */
static void encode_span(const char *buf, size_t size) {
  struct tt_sampler on = {TT_SAMPLER_ALWAYS_ON, 1.0};
  tt_tracer_set(&on, sink_cb, NULL);
  struct tt_trace_ctx ctx;
  struct tt_span *s = tt_span_start_server_at(NULL, NULL, &ctx, 0);
  if (s == NULL)
    abort();
  char name[129];
  size_t nn = size < sizeof(name) - 1 ? size : sizeof(name) - 1;
  memcpy(name, buf, nn);
  name[nn] = '\0';
  tt_span_set_name(s, name);
  tt_span_strn(s, "fuzz.value", buf, size);
  tt_span_str_array1(s, "fuzz.array", name);
  tt_span_int(s, "fuzz.int", size ? (int64_t)buf[0] * 1000003 : -1);
  tt_span_status(s, TT_SPAN_ERROR, name);
  tt_span_end(s);
  if (sunk == NULL)
    abort();
  char rname[129];
  memcpy(rname, name, nn + 1);
  tt_utf8_scrub(rname); /* the exporter's contract: the resource is UTF-8 */
  struct tt_otlp_resource res = {rname, NULL, NULL};
  struct tt_span *one[1] = {sunk};
  struct tt_buf out;
  tt_buf_init(&out, 0);
  if (tt_otlp_encode(&res, TT_OTLP_JSON, one, 1, &out) != 0)
    abort();
  json_error_t jerr;
  json_t *v = json_loadb(out.data, out.len, JSON_ALLOW_NUL, &jerr);
  if (v == NULL)
    abort();
  json_decref(v);
  tt_buf_reset(&out);
  size_t spans = 0;
  if (tt_otlp_encode(&res, TT_OTLP_PROTOBUF, one, 1, &out) != 0 ||
      walk((const uint8_t *)out.data, out.len, M_REQ, &spans) != 0 || spans != 1)
    abort();
  tt_buf_free(&out);
  tt_span_release(sunk);
  sunk = NULL;
  tt_tracer_set(NULL, NULL, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* An exact-size copy, so ASan sees any read past the end. */
  char *buf = malloc(size ? size : 1);
  if (buf == NULL)
    return 0;
  memcpy(buf, data, size);
  struct tt_trace_ctx c;
  if (tt_traceparent_parse(buf, size, &c) == 0) {
    char out[TT_TRACEPARENT_LEN + 1];
    tt_traceparent_format(&c, out);
    struct tt_trace_ctx again;
    if (tt_traceparent_parse(out, strlen(out), &again) != 0 ||
        memcmp(again.trace_id, c.trace_id, 16) != 0 || memcmp(again.span_id, c.span_id, 8) != 0)
      abort();
  }
  if (tt_tracestate_valid(buf, size) && size > TT_TRACESTATE_MAX)
    abort();
  char why[160];
  for (int header = 0; header < 2; header++) {
    struct tt_otlp_kvs kv;
    if (tt_otlp_kv_parse(buf, size, header, &kv, why, sizeof(why)) == 0) {
      if (kv.n > TT_OTLP_KV_MAX)
        abort();
      for (size_t i = 0; i < kv.n; i++)
        if (kv.items[i].key[0] == '\0' || strlen(kv.items[i].value) > size)
          abort();
      tt_otlp_kvs_free(&kv);
    } else if (kv.n != 0 || kv.items != NULL) {
      abort();
    }
  }
  enum tt_otlp_protocol proto;
  char *z = malloc(size + 1);
  if (z) {
    memcpy(z, buf, size);
    z[size] = '\0';
    if (tt_otlp_protocol_parse(z, &proto) == 0 && strcmp(z, "http/json") != 0 &&
        strcmp(z, "http/protobuf") != 0)
      abort();
    free(z);
  }
  encode_span(buf, size);
  free(buf);
  return 0;
}
