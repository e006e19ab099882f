/* SPDX-License-Identifier: Apache-2.0 */
/* test_trace.c -- traceparent and tracestate parsing, samplers, spans, the
 * OTLP/JSON encoder, the OTEL_* list parsers and the batch processor. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

#include "daemon/config.h"
#include "daemon/otlp.h"
#include "obs/otlp.h"
#include "obs/trace.h"
#include "tests/unit/http_test_server.h"

static const char *TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

START_TEST(traceparent_valid_and_formatted) {
  struct tt_trace_ctx c;
  ck_assert_int_eq(tt_traceparent_parse(TP, strlen(TP), &c), 0);
  ck_assert(c.valid);
  ck_assert_uint_eq(c.trace_id[0], 0x4b);
  ck_assert_uint_eq(c.span_id[7], 0xb7);
  ck_assert_uint_eq(c.flags, 1);
  char out[TT_TRACEPARENT_LEN + 1];
  tt_traceparent_format(&c, out);
  ck_assert_str_eq(out, TP);
  /* A later version may carry more after the flags. */
  const char *v1 = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-extra";
  ck_assert_int_eq(tt_traceparent_parse(v1, strlen(v1), &c), 0);
  ck_assert_uint_eq(c.flags, 0);
}
END_TEST

START_TEST(traceparent_refusals) {
  static const char *bad[] = {
      "",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
      "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
      "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    struct tt_trace_ctx c;
    ck_assert_msg(tt_traceparent_parse(bad[i], strlen(bad[i]), &c) == -1, "%s", bad[i]);
    ck_assert(!c.valid);
  }
}
END_TEST

START_TEST(tracestate_grammar) {
  static const char *good[] = {"", "a=b", "vendor=abc, other@sys=x y,,", "k_1-*/x=v!~"};
  static const char *bad[] = {"=b", "A=b", "a", "a=b,c", "a=", "a=b ,=c", "a=b\x01",
                              "a@=x", "@a=x", "a=x=y"};
  for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
    ck_assert_msg(tt_tracestate_valid(good[i], strlen(good[i])), "%s", good[i]);
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    ck_assert_msg(!tt_tracestate_valid(bad[i], strlen(bad[i])), "%s", bad[i]);
  char many[600];
  size_t n = 0;
  for (int i = 0; i < 33; i++)
    n += (size_t)snprintf(many + n, sizeof(many) - n, "%sk%d=v", i ? "," : "", i);
  ck_assert(!tt_tracestate_valid(many, n)); /* 33 members */
}
END_TEST

START_TEST(samplers) {
  struct tt_sampler s;
  char why[128];
  ck_assert_int_eq(tt_sampler_parse(NULL, NULL, &s, why, sizeof(why)), 0);
  ck_assert_int_eq(s.kind, TT_SAMPLER_PARENTBASED_ALWAYS_ON);
  ck_assert_int_eq(tt_sampler_parse("nope", NULL, &s, why, sizeof(why)), -1);
  ck_assert_int_eq(tt_sampler_parse("traceidratio", "1.5", &s, why, sizeof(why)), -1);
  ck_assert_int_eq(tt_sampler_parse("traceidratio", "x", &s, why, sizeof(why)), -1);
  ck_assert_int_eq(tt_sampler_parse("traceidratio", "0.5", &s, why, sizeof(why)), 0);
  uint8_t low[16] = {0xff, 0, 0, 0, 0, 0, 0, 0, 0x10}, high[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0x90};
  ck_assert(tt_sampler_should_sample(&s, NULL, low));
  ck_assert(!tt_sampler_should_sample(&s, NULL, high));
  struct tt_trace_ctx parent;
  tt_traceparent_parse(TP, strlen(TP), &parent);
  ck_assert(!tt_sampler_should_sample(&s, &parent, high)); /* not parent-based */
  ck_assert_int_eq(tt_sampler_parse("parentbased_traceidratio", "0", &s, why, sizeof(why)), 0);
  ck_assert(tt_sampler_should_sample(&s, &parent, high)); /* the parent sampled */
  parent.flags = 0;
  ck_assert(!tt_sampler_should_sample(&s, &parent, low));
  ck_assert(!tt_sampler_should_sample(&s, NULL, low)); /* ratio 0 */
  ck_assert_int_eq(tt_sampler_parse("always_off", NULL, &s, why, sizeof(why)), 0);
  parent.flags = 1;
  ck_assert(!tt_sampler_should_sample(&s, &parent, low));
}
END_TEST

static struct tt_span *sunk[16];
static size_t nsunk;
static void sink(struct tt_span *span, void *arg) {
  (void)arg;
  ck_assert_uint_lt(nsunk, 16);
  sunk[nsunk++] = span;
}

/* Span edges from the caller's monotonic times: their difference is kept
 * exactly, and the Unix times are the wall clock's (within the test's
 * run); a span without a time reads the clock itself. */
START_TEST(span_edges_from_monotonic_times) {
  nsunk = 0;
  struct tt_sampler s = {TT_SAMPLER_ALWAYS_ON, 1.0};
  tt_tracer_set(&s, sink, NULL);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t real0 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t mono = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  struct tt_trace_ctx ctx;
  struct tt_span *server = tt_span_start_server_at(NULL, NULL, &ctx, mono);
  struct tt_span *child = tt_span_start_at(&ctx, "DynamoDB.GetItem", TT_SPAN_CLIENT, mono + 1000);
  ck_assert_ptr_nonnull(child);
  tt_span_end_at(child, mono + 251000);
  tt_span_end_at(server, mono + 300000);
  struct tt_span *own = tt_span_start(&ctx, "own", TT_SPAN_INTERNAL);
  tt_span_end(own);
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t real1 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  ck_assert_uint_eq(nsunk, 3);
  ck_assert_uint_eq(sunk[0]->end_unix_ns - sunk[0]->start_unix_ns, 250000);
  ck_assert_uint_eq(sunk[1]->end_unix_ns - sunk[1]->start_unix_ns, 300000);
  ck_assert_uint_eq(sunk[0]->start_unix_ns - sunk[1]->start_unix_ns, 1000);
  /* A millisecond either side: the offset is read from two clock reads. */
  ck_assert_uint_ge(sunk[1]->start_unix_ns + 1000000, real0);
  ck_assert_uint_le(sunk[1]->start_unix_ns, real1 + 1000000);
  ck_assert_uint_ge(sunk[2]->start_unix_ns + 1000000, real0);
  ck_assert_uint_le(sunk[2]->end_unix_ns, real1 + 1000000);
  ck_assert_uint_le(sunk[2]->start_unix_ns, sunk[2]->end_unix_ns);
  for (size_t i = 0; i < nsunk; i++)
    tt_span_release(sunk[i]);
  tt_tracer_set(NULL, NULL, NULL);
}
END_TEST

START_TEST(spans_continue_and_nest) {
  nsunk = 0;
  struct tt_sampler s = {TT_SAMPLER_PARENTBASED_ALWAYS_ON, 1.0};
  tt_tracer_set(&s, sink, NULL);
  struct tt_trace_ctx remote, ctx;
  tt_traceparent_parse(TP, strlen(TP), &remote);
  struct tt_span *server = tt_span_start_server_at(&remote, "k=v", &ctx, 0);
  ck_assert_ptr_nonnull(server);
  ck_assert_mem_eq(ctx.trace_id, remote.trace_id, 16);
  ck_assert(memcmp(ctx.span_id, remote.span_id, 8) != 0);
  struct tt_span *child = tt_span_start(&server->ctx, "DynamoDB.GetItem", TT_SPAN_CLIENT);
  ck_assert_ptr_nonnull(child);
  ck_assert_mem_eq(child->parent_id, ctx.span_id, 8);
  tt_span_str(child, "rpc.method", "GetItem");
  tt_span_int(child, "tabletheoryd.attempt", 2);
  tt_span_str(child, "rpc.method", "PutItem"); /* the last value wins */
  for (int i = 0; i < TT_SPAN_MAX_ATTRS + 3; i++)
    tt_span_bool(child, i % 2 ? "x.odd" : "x.even", true);
  tt_span_status(child, TT_SPAN_ERROR, "ThrottlingException");
  tt_span_end(child);
  tt_span_set_name(server, "GET /healthz");
  tt_span_end(server);
  ck_assert_uint_eq(nsunk, 2);
  ck_assert_uint_eq(tt_span_live(), 0);
  /* An unsampled parent has no recorded children. */
  remote.flags = 0;
  ck_assert_ptr_null(tt_span_start_server_at(&remote, NULL, &ctx, 0));
  ck_assert_uint_eq(ctx.flags, 0);
  ck_assert_ptr_null(tt_span_start(&ctx, "x", TT_SPAN_INTERNAL));

  /* The encoder's JSON, read back. */
  struct tt_otlp_kvs attrs;
  char why[128];
  ck_assert_int_eq(tt_otlp_kv_parse("deployment.environment=prod", 27, false, &attrs, why,
                                    sizeof(why)), 0);
  struct tt_otlp_resource res = {"svc", "1.2.3", &attrs};
  struct tt_buf out;
  tt_buf_init(&out, 0);
  ck_assert_int_eq(tt_otlp_encode(&res, TT_OTLP_JSON, sunk, nsunk, &out), 0);
  json_error_t jerr;
  json_t *v = json_loadb(out.data, out.len, 0, &jerr);
  ck_assert_msg(v != NULL, "%s", jerr.text);
  json_t *rs = json_array_get(json_object_get(v, "resourceSpans"), 0);
  json_t *spans = json_object_get(json_array_get(json_object_get(rs, "scopeSpans"), 0), "spans");
  ck_assert_uint_eq(json_array_size(spans), 2);
  json_t *c = json_array_get(spans, 0), *sv = json_array_get(spans, 1);
  ck_assert_str_eq(json_string_value(json_object_get(sv, "traceId")),
                   "4bf92f3577b34da6a3ce929d0e0e4736");
  ck_assert_str_eq(json_string_value(json_object_get(sv, "parentSpanId")), "00f067aa0ba902b7");
  ck_assert_str_eq(json_string_value(json_object_get(sv, "traceState")), "k=v");
  ck_assert_int_eq(json_integer_value(json_object_get(sv, "kind")), 2);
  ck_assert_int_eq(json_integer_value(json_object_get(c, "kind")), 3);
  ck_assert_str_eq(json_string_value(json_object_get(c, "parentSpanId")),
                   json_string_value(json_object_get(sv, "spanId")));
  json_t *status = json_object_get(c, "status");
  ck_assert_int_eq(json_integer_value(json_object_get(status, "code")), 2);
  ck_assert_str_eq(json_string_value(json_object_get(status, "message")), "ThrottlingException");
  json_t *a0 = json_array_get(json_object_get(c, "attributes"), 0);
  ck_assert_str_eq(json_string_value(json_object_get(a0, "key")), "rpc.method");
  ck_assert_str_eq(
      json_string_value(json_object_get(json_object_get(a0, "value"), "stringValue")), "PutItem");
  json_t *a1 = json_array_get(json_object_get(c, "attributes"), 1);
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(a1, "value"), "intValue")),
                   "2");
  ck_assert(json_is_string(json_object_get(c, "startTimeUnixNano")));
  char ns[24];
  snprintf(ns, sizeof(ns), "%llu", (unsigned long long)sunk[0]->start_unix_ns);
  ck_assert_str_eq(json_string_value(json_object_get(c, "startTimeUnixNano")), ns);
  json_decref(v);
  /* The protobuf encoding: one resource_spans field whose length is the
   * rest, holding the ids as raw bytes. */
  tt_buf_reset(&out);
  ck_assert_int_eq(tt_otlp_encode(&res, TT_OTLP_PROTOBUF, sunk, nsunk, &out), 0);
  ck_assert_int_eq((unsigned char)out.data[0], 0x0a);
  size_t len = 0, at = 1;
  for (int shift = 0;; shift += 7) {
    unsigned char byte = (unsigned char)out.data[at++];
    len |= (size_t)(byte & 0x7f) << shift;
    if (!(byte & 0x80))
      break;
  }
  ck_assert_uint_eq(len, out.len - at);
  ck_assert_ptr_nonnull(memmem(out.data, out.len, sunk[1]->ctx.trace_id, 16));
  ck_assert_ptr_nonnull(memmem(out.data, out.len, "ThrottlingException", 19));
  ck_assert_ptr_nonnull(memmem(out.data, out.len, "deployment.environment", 22));
  tt_buf_free(&out);
  tt_otlp_kvs_free(&attrs);
  for (size_t i = 0; i < nsunk; i++)
    tt_span_release(sunk[i]);
  tt_tracer_set(NULL, NULL, NULL);
}
END_TEST

/* A protobuf length-delimited field at *at: its field number, and its
 * bytes as [*body, *body + *len); -1 when it runs past end. */
static int pb_field(const unsigned char *p, size_t end, size_t *at, int *field, size_t *body,
                    size_t *len) {
  if (*at >= end || (p[*at] & 7) != 2)
    return -1;
  *field = p[(*at)++] >> 3;
  size_t n = 0;
  for (int shift = 0; *at < end && shift < 64; shift += 7) {
    unsigned char b = p[(*at)++];
    n |= (size_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      if (n > end - *at)
        return -1;
      *body = *at;
      *len = n;
      *at += n;
      return 0;
    }
  }
  return -1;
}

/* A batch takes spans one at a time; a Span's length takes one, two or
 * three bytes (its fields are written first, then moved when the length
 * is not two bytes), and the request seals around them. */
START_TEST(batch_span_lengths) {
  struct tt_sampler smp = {TT_SAMPLER_ALWAYS_ON, 1.0};
  nsunk = 0;
  tt_tracer_set(&smp, sink, NULL);
  static char big[20000];
  memset(big, 'b', sizeof(big) - 1);
  struct tt_trace_ctx ctx;
  struct tt_span *tiny = tt_span_start_server_at(NULL, NULL, &ctx, 0); /* < 128 bytes */
  tt_span_end(tiny);
  struct tt_span *mid = tt_span_start(&ctx, "DynamoDB.GetItem", TT_SPAN_CLIENT);
  tt_span_str_static(mid, "rpc.system", "aws-api");
  tt_span_int(mid, "tabletheoryd.attempt", 1);
  tt_span_str(mid, "aws.request_id", "0123456789abcdef0123456789abcdef0123456789abcdef");
  tt_span_status(mid, TT_SPAN_ERROR, "ThrottlingException");
  tt_span_end(mid);
  struct tt_span *large = tt_span_start(&ctx, "big", TT_SPAN_INTERNAL); /* >= 16 KB */
  tt_span_str_static(large, "big.static", big);
  tt_span_end(large);
  ck_assert_uint_eq(nsunk, 3);
  struct tt_otlp_resource res = {"svc", NULL, NULL};
  struct tt_otlp_encoder enc;
  ck_assert_int_eq(tt_otlp_encoder_init(&enc, &res, TT_OTLP_PROTOBUF), 0);
  struct tt_otlp_batch b;
  tt_otlp_batch_init(&b);
  for (size_t i = 0; i < nsunk; i++)
    ck_assert_int_eq(tt_otlp_batch_add(&enc, &b, sunk[i]), 0);
  ck_assert_uint_eq(b.n, 3);
  ck_assert_int_eq(tt_otlp_batch_seal(&enc, &b), 0);
  ck_assert_int_eq(tt_otlp_batch_add(&enc, &b, sunk[0]), -1); /* sealed */
  const unsigned char *p = (const unsigned char *)b.buf.data + b.body;
  size_t end = b.buf.len - b.body, at = 0, body, len, rs, rs_len;
  int field;
  ck_assert_int_eq(pb_field(p, end, &at, &field, &rs, &rs_len), 0);
  ck_assert_int_eq(field, 1);
  ck_assert_uint_eq(at, end); /* one ResourceSpans, the whole request */
  at = rs;
  ck_assert_int_eq(pb_field(p, rs + rs_len, &at, &field, &body, &len), 0);
  ck_assert_int_eq(field, 1); /* the resource */
  size_t ss, ss_len;
  ck_assert_int_eq(pb_field(p, rs + rs_len, &at, &field, &ss, &ss_len), 0);
  ck_assert_int_eq(field, 2); /* the ScopeSpans */
  ck_assert_uint_eq(at, rs + rs_len);
  at = ss;
  ck_assert_int_eq(pb_field(p, ss + ss_len, &at, &field, &body, &len), 0);
  ck_assert_int_eq(field, 1); /* the scope */
  size_t heads[3], lens[3], n = 0, start;
  while (at < ss + ss_len) {
    start = at;
    ck_assert_int_eq(pb_field(p, ss + ss_len, &at, &field, &body, &len), 0);
    ck_assert_int_eq(field, 2);
    ck_assert_uint_lt(n, 3);
    heads[n] = body - start;
    lens[n++] = len;
    /* Each Span opens with its trace id. */
    ck_assert_int_eq(p[body], 0x0a);
    ck_assert_int_eq(p[body + 1], 16);
    ck_assert_int_eq(memcmp(p + body + 2, ctx.trace_id, 16), 0);
  }
  ck_assert_uint_eq(n, 3);
  ck_assert_uint_lt(lens[0], 128);
  ck_assert_uint_eq(heads[0], 2);
  ck_assert_uint_ge(lens[1], 128);
  ck_assert_uint_lt(lens[1], 16384);
  ck_assert_uint_eq(heads[1], 3);
  ck_assert_uint_ge(lens[2], 16384);
  ck_assert_uint_eq(heads[2], 4);
  ck_assert_ptr_nonnull(memmem(p, end, big, sizeof(big) - 1));
  /* The same spans in one call: the same bytes. */
  struct tt_buf one;
  tt_buf_init(&one, 0);
  ck_assert_int_eq(tt_otlp_encode(&res, TT_OTLP_PROTOBUF, sunk, nsunk, &one), 0);
  ck_assert_uint_eq(one.len, end);
  ck_assert_int_eq(memcmp(one.data, p, end), 0);
  /* Emptied, a batch seals to a request without spans. */
  tt_otlp_batch_reset(&b);
  ck_assert_int_eq(tt_otlp_batch_seal(&enc, &b), 0);
  tt_buf_reset(&one);
  ck_assert_int_eq(tt_otlp_encode(&res, TT_OTLP_PROTOBUF, NULL, 0, &one), 0);
  ck_assert_uint_eq(one.len, b.buf.len - b.body);
  ck_assert_int_eq(memcmp(one.data, b.buf.data + b.body, one.len), 0);
  tt_buf_free(&one);
  tt_otlp_batch_free(&b);
  tt_otlp_encoder_free(&enc);
  for (size_t i = 0; i < nsunk; i++)
    tt_span_release(sunk[i]);
  nsunk = 0;
  tt_tracer_set(NULL, NULL, NULL);
}
END_TEST

/* Span text is UTF-8 whatever it was given: protobuf strings and JSON
 * text must be. */
START_TEST(span_text_kept_utf8) {
  nsunk = 0;
  struct tt_sampler on = {TT_SAMPLER_ALWAYS_ON, 1.0};
  tt_tracer_set(&on, sink, NULL);
  struct tt_trace_ctx ctx;
  struct tt_span *s = tt_span_start_server_at(NULL, NULL, &ctx, 0);
  ck_assert_ptr_nonnull(s);
  tt_span_str(s, "ok", "caf\xc3\xa9");
  tt_span_str(s, "bad", "Throttl\xff\xfeing");
  tt_span_status(s, TT_SPAN_ERROR, "E\xc3");
  tt_span_set_name(s, "GET \x80");
  tt_span_end(s);
  ck_assert_uint_eq(nsunk, 1);
  size_t n;
  ck_assert_str_eq(sunk[0]->name, "GET ?");
  ck_assert_str_eq(sunk[0]->status_message, "E?");
  const char *v = tt_span_attr_str(sunk[0], &sunk[0]->attrs[0], &n);
  ck_assert_uint_eq(n, 5);
  ck_assert(memcmp(v, "caf\xc3\xa9", 5) == 0);
  v = tt_span_attr_str(sunk[0], &sunk[0]->attrs[1], &n);
  ck_assert(n == 12 && memcmp(v, "Throttl??ing", 12) == 0);
  tt_span_release(sunk[0]);
  nsunk = 0;
  tt_tracer_set(NULL, NULL, NULL);
}
END_TEST

/* An attribute set again keeps its slot and takes the last value, whether
 * its key's length is shared with another key or not; a static value is
 * pointed at, a copied one is not. */
/* Attributes encoded once (a route's, an operation's) give the same bytes,
 * in both protocols, as the same attributes set on the span one by one;
 * a group too large for its room is refused and left empty. */
START_TEST(span_group_encodes_as_its_attributes) {
  nsunk = 0;
  struct tt_sampler smp = {TT_SAMPLER_ALWAYS_ON, 1.0};
  tt_tracer_set(&smp, sink, NULL);
  struct tt_span_attr a[3] = {
      {.key = "rpc.system", .key_len = 10, .type = TT_ATTR_STR, .v.s = {"aws-api", 7}},
      {.key = "x.count", .key_len = 7, .type = TT_ATTR_INT, .v.i = 300},
      {.key = "x.quote", .key_len = 7, .type = TT_ATTR_STR, .v.s = {"a\"b\n", 4}},
  };
  struct tt_span_group g;
  ck_assert_int_eq(tt_otlp_group_build(&g, a, 3), 0);
  ck_assert_uint_eq(g.nattrs, 3);
  struct tt_trace_ctx ctx;
  for (int grouped = 0; grouped < 2; grouped++) {
    struct tt_span *s = tt_span_start_server_at(NULL, NULL, &ctx, 0);
    ck_assert_ptr_nonnull(s);
    memset(s->ctx.trace_id, 7, 16); /* the same ids and times both ways */
    memset(s->ctx.span_id, 8, 8);
    s->start_unix_ns = 1000;
    if (grouped) {
      tt_span_name_static(s, "GET /x", 6);
      tt_span_put_group(s, &g);
    } else {
      tt_span_set_name(s, "GET /x");
      tt_span_str(s, "rpc.system", "aws-api");
      tt_span_int(s, "x.count", 300);
      tt_span_str(s, "x.quote", "a\"b\n");
    }
    tt_span_int(s, "http.response.status_code", 200);
    tt_span_end_at(s, 0);
    s->end_unix_ns = 2000;
  }
  ck_assert_uint_eq(nsunk, 2);
  struct tt_buf one[2], many[2];
  for (int i = 0; i < 2; i++) {
    tt_buf_init(&one[i], 0);
    tt_buf_init(&many[i], 0);
  }
  ck_assert_int_eq(tt_otlp_encode(NULL, TT_OTLP_JSON, &sunk[1], 1, &one[0]), 0);
  ck_assert_int_eq(tt_otlp_encode(NULL, TT_OTLP_JSON, &sunk[0], 1, &many[0]), 0);
  ck_assert_int_eq(tt_otlp_encode(NULL, TT_OTLP_PROTOBUF, &sunk[1], 1, &one[1]), 0);
  ck_assert_int_eq(tt_otlp_encode(NULL, TT_OTLP_PROTOBUF, &sunk[0], 1, &many[1]), 0);
  for (int i = 0; i < 2; i++) {
    ck_assert_uint_eq(one[i].len, many[i].len);
    ck_assert_mem_eq(one[i].data, many[i].data, one[i].len);
    tt_buf_free(&one[i]);
    tt_buf_free(&many[i]);
  }
  for (size_t i = 0; i < nsunk; i++)
    tt_span_release(sunk[i]);
  /* Too large for the group's room: refused, empty. */
  static char big[600];
  memset(big, 'x', sizeof(big));
  struct tt_span_attr b = {.key = "x.big", .key_len = 5, .type = TT_ATTR_STR,
                           .v.s = {big, sizeof(big)}};
  ck_assert_int_eq(tt_otlp_group_build(&g, &b, 1), -1);
  ck_assert_uint_eq(g.pb_len + g.json_len + g.nattrs, 0);
  tt_tracer_set(NULL, NULL, NULL);
}
END_TEST

START_TEST(span_attrs_last_value_wins) {
  nsunk = 0;
  struct tt_sampler on = {TT_SAMPLER_ALWAYS_ON, 1.0};
  tt_tracer_set(&on, sink, NULL);
  struct tt_trace_ctx ctx;
  struct tt_span *s = tt_span_start_server_at(NULL, NULL, &ctx, 0);
  ck_assert_ptr_nonnull(s);
  static const char route[] = "/v1/x";
  char copied[] = "one";
  tt_span_str(s, "aa", copied);
  tt_span_str_static(s, "bb", route); /* the same key length */
  tt_span_int(s, "c", 7);
  tt_span_str(s, "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk", "x"); /* a length 64 apart from "c"'s */
  tt_span_str(s, "dd", copied);
  tt_span_str_static(s, "aa", "two");
  tt_span_int(s, "c", 8);
  copied[0] = 'O';
  tt_span_end(s);
  ck_assert_uint_eq(nsunk, 1);
  struct tt_span *g = sunk[0];
  ck_assert_uint_eq(g->nattrs, 5);
  size_t n;
  const char *v = tt_span_attr_str(g, &g->attrs[0], &n);
  ck_assert(n == 3 && memcmp(v, "two", 3) == 0);
  v = tt_span_attr_str(g, &g->attrs[1], &n);
  ck_assert_ptr_eq(v, route);
  ck_assert_uint_eq(n, 5);
  ck_assert_int_eq(g->attrs[2].type, TT_ATTR_INT);
  ck_assert_int_eq(g->attrs[2].v.i, 8);
  ck_assert_uint_eq(g->attrs[3].key_len, 65);
  v = tt_span_attr_str(g, &g->attrs[4], &n);
  ck_assert(n == 3 && memcmp(v, "one", 3) == 0);
  tt_span_release(g);
  nsunk = 0;
  tt_tracer_set(NULL, NULL, NULL);
}
END_TEST

START_TEST(kv_lists) {
  struct tt_otlp_kvs kv;
  char why[128];
  const char *t = " api-key = s%3Dcret ,, x-b=1%2C2 ";
  ck_assert_int_eq(tt_otlp_kv_parse(t, strlen(t), true, &kv, why, sizeof(why)), 0);
  ck_assert_uint_eq(kv.n, 2);
  ck_assert_str_eq(tt_otlp_kvs_get(&kv, "api-key"), "s=cret");
  ck_assert_str_eq(tt_otlp_kvs_get(&kv, "x-b"), "1,2");
  tt_otlp_kvs_free(&kv);
  static const char *bad[] = {"novalue", "=v", "a b=c", "k=%zz", "k=%0", "k=a%0Ab", "k=%00"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    ck_assert_msg(tt_otlp_kv_parse(bad[i], strlen(bad[i]), true, &kv, why, sizeof(why)) == -1,
                  "%s", bad[i]);
    ck_assert_ptr_null(strstr(why, "zz"));
  }
  /* A raw NUL or control byte is refused, not cut short. */
  ck_assert_int_eq(tt_otlp_kv_parse("a\0b=c", 5, false, &kv, why, sizeof(why)), -1);
  ck_assert_int_eq(tt_otlp_kv_parse("ab=c\x01", 5, false, &kv, why, sizeof(why)), -1);
  /* Resource attribute keys may hold characters a header name may not. */
  ck_assert_int_eq(tt_otlp_kv_parse("a b=c", 5, false, &kv, why, sizeof(why)), 0);
  tt_otlp_kvs_free(&kv);
}
END_TEST

static int closed_calls;
static void closed_cb(void *arg) {
  (void)arg;
  closed_calls++;
}

static void stop_timer_cb(uv_timer_t *t) { uv_stop(t->loop); }

/* An exporter with o on loop, and every span sampled into it. */
static struct tt_otlp_exporter *tracing_to(uv_loop_t *loop,
                                           const struct tt_otlp_exporter_options *o) {
  struct tt_otlp_exporter *e;
  struct tt_error err;
  ck_assert_int_eq(tt_otlp_exporter_new(loop, o, &e, &err), 0);
  struct tt_sampler s = {TT_SAMPLER_ALWAYS_ON, 1.0};
  tt_tracer_set(&s, tt_otlp_exporter_sink, e);
  return e;
}

/* A collector that is down: every batch fails after its retries, every
 * span is counted once, and the queue's bound holds. */
START_TEST(batch_processor_drops_and_counts) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  struct tt_metrics *m = tt_metrics_new();
  struct tt_otlp_exporter_options o = {.url = "http://127.0.0.1:1/v1/traces",
                                       .max_queue = 4,
                                       .max_batch = 2,
                                       .max_attempts = 2,
                                       .retry_base_ms = 1,
                                       .pause_base_ms = 100,
                                       .timeout_ms = 2000,
                                       .metrics = m};
  struct tt_otlp_exporter *e = tracing_to(&loop, &o);
  struct tt_trace_ctx ctx;
  /* Two spans fill a batch: its export starts, the queue is empty again;
   * four more fill the queue, two more are dropped. */
  for (int i = 0; i < 8; i++)
    tt_span_end(tt_span_start_server_at(NULL, NULL, &ctx, 0));
  struct tt_otlp_exporter_stats st;
  tt_otlp_exporter_stats(e, &st);
  ck_assert(st.in_flight);
  ck_assert_uint_eq(st.queued, 4);
  ck_assert_uint_eq(st.dropped_queue, 2);
  uv_timer_t stop;
  uv_timer_init(&loop, &stop);
  while (1) {
    tt_otlp_exporter_stats(e, &st);
    if (st.dropped_export >= 6 && !st.in_flight)
      break;
    uv_timer_start(&stop, stop_timer_cb, 5, 0);
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  ck_assert_uint_eq(st.dropped_export, 6);
  ck_assert_uint_eq(st.exported, 0);
  ck_assert_uint_eq(st.exports_failed, 3);
  /* The first batch is retried; the two after it went out as probes of a
   * paused tracer, one attempt each. */
  ck_assert_uint_eq(st.retries, 1);
  struct tt_buf text;
  tt_buf_init(&text, 0);
  ck_assert_int_eq(tt_metrics_render(m, &text), 0);
  ck_assert_ptr_nonnull(
      strstr(text.data, "tabletheoryd_trace_spans_dropped_total{reason=\"export_failed\"} 6"));
  ck_assert_ptr_nonnull(
      strstr(text.data, "tabletheoryd_trace_spans_dropped_total{reason=\"queue_full\"} 2"));
  tt_buf_free(&text);
  /* Each failed batch paused the tracer; the last pause is on: a span is
   * counted, not recorded, and its ids and sampling are as ever. */
  ck_assert(st.paused);
  ck_assert_ptr_null(tt_span_start_server_at(NULL, NULL, &ctx, 0));
  ck_assert(ctx.valid && (ctx.flags & TT_TRACE_FLAG_SAMPLED));
  ck_assert_ptr_null(tt_span_start(&ctx, "child", TT_SPAN_CLIENT));
  tt_otlp_exporter_stats(e, &st);
  ck_assert_uint_eq(st.dropped_paused, 2);
  ck_assert_uint_eq(tt_span_live(), 0);
  /* Shutdown: close with no time left. */
  tt_tracer_set(NULL, NULL, NULL);
  tt_otlp_exporter_close(e, 0, closed_cb, NULL);
  uv_close((uv_handle_t *)&stop, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(closed_calls, 1);
  tt_otlp_exporter_stats(e, &st);
  ck_assert_uint_eq(st.dropped_export + st.dropped_shutdown, 6);
  ck_assert_uint_eq(st.dropped_paused, 2);
  ck_assert_int_eq(uv_loop_close(&loop), 0);
  tt_otlp_exporter_destroy(e);
  tt_metrics_free(m);
  ck_assert_uint_eq(tt_span_live(), 0);
}
END_TEST

static void collector_ok(void *arg, const struct tts_request *req, struct tts_response *resp) {
  (void)arg;
  (void)req;
  resp->action = TTS_RESPOND;
  resp->status = 200;
}

static bool exporter_idle(struct tt_otlp_exporter *e, uint64_t exported) {
  struct tt_otlp_exporter_stats st;
  tt_otlp_exporter_stats(e, &st);
  return st.exported >= exported && !st.in_flight;
}

/* A collector that answers, the POSTs made by the sender thread: a full
 * batch sent at once and the rest at the flush; every span is exported
 * once, in its batch; closing joins the thread and leaves the loop
 * closable. */
START_TEST(batch_processor_exports_from_its_thread) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  struct tts_server srv;
  ck_assert_int_eq(tts_start(&srv, &loop, collector_ok, NULL), 0);
  char url[64];
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/traces", srv.port);
  struct tt_metrics *m = tt_metrics_new();
  struct tt_otlp_exporter_options o = {
      .url = url, .max_queue = 256, .max_batch = 64, .timeout_ms = 5000, .metrics = m};
  struct tt_otlp_exporter *e = tracing_to(&loop, &o);
  struct tt_trace_ctx ctx;
  for (int i = 0; i < 100; i++) {
    struct tt_span *sp = tt_span_start_server_at(NULL, NULL, &ctx, 0);
    tt_span_set_name(sp, "GET /v1/models/{model}");
    tt_span_int(sp, "http.response.status_code", 200);
    tt_span_end(sp);
  }
  struct tt_otlp_exporter_stats st;
  tt_otlp_exporter_stats(e, &st);
  ck_assert(st.in_flight); /* the first 64 */
  ck_assert_uint_eq(st.queued, 36);
  uv_timer_t stop;
  uv_timer_init(&loop, &stop);
  while (!exporter_idle(e, 64)) {
    uv_timer_start(&stop, stop_timer_cb, 5, 0);
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  tt_otlp_exporter_flush(e);
  while (!exporter_idle(e, 100)) {
    uv_timer_start(&stop, stop_timer_cb, 5, 0);
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  tt_otlp_exporter_stats(e, &st);
  ck_assert_uint_eq(st.exported, 100);
  ck_assert_uint_eq(st.exports_ok, 2);
  ck_assert_uint_eq(st.queued, 0);
  ck_assert_uint_eq(st.dropped_queue + st.dropped_export + st.dropped_shutdown, 0);
  ck_assert_uint_eq(srv.requests, 2);
  char ct[64];
  ck_assert_ptr_nonnull(tts_header(&srv.last, "content-type", ct, sizeof(ct)));
  ck_assert_str_eq(ct, "application/x-protobuf");
  /* 36 spans, each with its 16-byte trace id and its name. */
  ck_assert_uint_gt(srv.last.body_len, 36 * (16 + 22));
  ck_assert_ptr_nonnull(memmem(srv.last.body, srv.last.body_len, "GET /v1/models/{model}", 22));
  struct tt_buf text;
  tt_buf_init(&text, 0);
  ck_assert_int_eq(tt_metrics_render(m, &text), 0);
  ck_assert_ptr_nonnull(strstr(text.data, "tabletheoryd_trace_spans_exported_total 100"));
  ck_assert_ptr_nonnull(strstr(text.data, "tabletheoryd_trace_queue_spans 0"));
  tt_buf_free(&text);
  ck_assert_uint_eq(tt_span_live(), 0);
  /* Spans after the close are dropped; the close joins the thread. */
  int before = closed_calls;
  tt_otlp_exporter_close(e, 1000, closed_cb, NULL);
  tt_span_end(tt_span_start_server_at(NULL, NULL, &ctx, 0));
  tt_tracer_set(NULL, NULL, NULL);
  uv_close((uv_handle_t *)&stop, NULL);
  tts_close(&srv);
  uv_run(&loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(closed_calls, before + 1);
  tt_otlp_exporter_stats(e, &st);
  ck_assert_uint_eq(st.dropped_shutdown, 1);
  ck_assert_int_eq(uv_loop_close(&loop), 0);
  tt_otlp_exporter_destroy(e);
  tt_metrics_free(m);
  ck_assert_uint_eq(tt_span_live(), 0);
}
END_TEST

/* Closing with no time left: the queued batch is not handed to the
 * sender thread, none is sent, every span is counted once, and the thread
 * is joined. */
START_TEST(batch_processor_close_without_time) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  struct tt_otlp_exporter_options o = {.url = "http://127.0.0.1:1/v1/traces",
                                       .max_queue = 512,
                                       .max_batch = 128,
                                       .timeout_ms = 2000};
  struct tt_otlp_exporter *e = tracing_to(&loop, &o);
  struct tt_trace_ctx ctx;
  for (int i = 0; i < 100; i++)
    tt_span_end(tt_span_start_server_at(NULL, NULL, &ctx, 0));
  struct tt_otlp_exporter_stats st;
  tt_otlp_exporter_stats(e, &st);
  ck_assert(!st.in_flight);
  ck_assert_uint_eq(st.queued, 100);
  int before = closed_calls;
  tt_tracer_set(NULL, NULL, NULL);
  tt_otlp_exporter_close(e, 0, closed_cb, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(closed_calls, before + 1);
  tt_otlp_exporter_stats(e, &st);
  ck_assert_uint_eq(st.dropped_export, 100);
  ck_assert_uint_eq(st.exports_failed, 1);
  ck_assert_uint_eq(st.exported, 0);
  ck_assert_int_eq(uv_loop_close(&loop), 0);
  tt_otlp_exporter_destroy(e);
  ck_assert_uint_eq(tt_span_live(), 0);
}
END_TEST

static int load(struct tt_config *cfg, int argc, char **argv, char **envp, struct tt_error *err) {
  enum tt_config_action action;
  return tt_config_load(cfg, argc, argv, envp, &action, err);
}

/* The tracing settings: off by default, on with an endpoint, the OTEL_*
 * variables under the daemon's own, and checks that never quote a value. */
START_TEST(tracing_settings) {
  static struct tt_config cfg;
  struct tt_error err;
  char *argv0[] = {"tabletheoryd", NULL};
  char *none[] = {NULL};
  ck_assert_int_eq(load(&cfg, 1, argv0, none, &err), 0);
  ck_assert(!cfg.tracing);
  ck_assert_str_eq(cfg.otlp_endpoint, "http://localhost:4318/v1/traces");
  char *otel[] = {"OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318/",
                  "OTEL_SERVICE_NAME=orders", "OTEL_TRACES_SAMPLER=traceidratio",
                  "OTEL_TRACES_SAMPLER_ARG=0.25", "OTEL_BSP_SCHEDULE_DELAY=200",
                  "OTEL_EXPORTER_OTLP_HEADERS=api-key=abc", NULL};
  ck_assert_int_eq(load(&cfg, 1, argv0, otel, &err), 0);
  ck_assert(!cfg.tracing); /* the variables alone do not turn it on */
  ck_assert_str_eq(cfg.otlp_endpoint, "http://collector:4318/v1/traces");
  ck_assert_str_eq(cfg.service_name, "orders");
  ck_assert_str_eq(cfg.traces_sampler, "traceidratio");
  ck_assert_uint_eq(cfg.otlp_schedule_delay_ms, 200);
  char *argv1[] = {"tabletheoryd", "--otlp-endpoint", "http://127.0.0.1:9/v1/traces", NULL};
  char *traces[] = {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://t:1/x", NULL};
  ck_assert_int_eq(load(&cfg, 3, argv1, traces, &err), 0);
  ck_assert(cfg.tracing);
  ck_assert_str_eq(cfg.otlp_endpoint, "http://127.0.0.1:9/v1/traces");
  ck_assert_int_eq(load(&cfg, 1, argv0, traces, &err), 0);
  ck_assert_str_eq(cfg.otlp_endpoint, "http://t:1/x");
  char *argv2[] = {"tabletheoryd", "--tracing", "--traces-sampler", "sometimes", NULL};
  ck_assert_int_eq(load(&cfg, 4, argv2, none, &err), -1);
  ck_assert_str_eq(err.field, "traces-sampler");
  char *bad_headers[] = {"OTEL_EXPORTER_OTLP_HEADERS=api-key=SECRET%zz", NULL};
  ck_assert_int_eq(load(&cfg, 1, argv0, bad_headers, &err), -1);
  ck_assert_str_eq(err.field, "otlp-headers");
  ck_assert_ptr_null(strstr(err.message, "SECRET"));
  /* The encoding: protobuf by default, JSON on request, grpc refused when
   * tracing is on and not read when it is off. */
  ck_assert_int_eq(load(&cfg, 3, argv1, none, &err), 0);
  ck_assert_str_eq(cfg.otlp_protocol, "http/protobuf");
  char *json_env[] = {"OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
                      "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json", NULL};
  ck_assert_int_eq(load(&cfg, 3, argv1, json_env, &err), 0);
  ck_assert_str_eq(cfg.otlp_protocol, "http/json");
  char *grpc[] = {"OTEL_EXPORTER_OTLP_PROTOCOL=grpc", NULL};
  ck_assert_int_eq(load(&cfg, 3, argv1, grpc, &err), -1);
  ck_assert_str_eq(err.field, "otlp-protocol");
  ck_assert_int_eq(load(&cfg, 1, argv0, grpc, &err), 0);
  char *argv3[] = {"tabletheoryd", "--otlp-endpoint", "ftp://x/v1/traces", NULL};
  ck_assert_int_eq(load(&cfg, 3, argv3, none, &err), -1);
  ck_assert_str_eq(err.field, "otlp-endpoint");
}
END_TEST

int main(void) {
  Suite *s = suite_create("trace");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, traceparent_valid_and_formatted);
  tcase_add_test(tc, traceparent_refusals);
  tcase_add_test(tc, tracestate_grammar);
  tcase_add_test(tc, samplers);
  tcase_add_test(tc, spans_continue_and_nest);
  tcase_add_test(tc, span_edges_from_monotonic_times);
  tcase_add_test(tc, batch_span_lengths);
  tcase_add_test(tc, span_text_kept_utf8);
  tcase_add_test(tc, span_attrs_last_value_wins);
  tcase_add_test(tc, span_group_encodes_as_its_attributes);
  tcase_add_test(tc, kv_lists);
  tcase_add_test(tc, batch_processor_drops_and_counts);
  tcase_add_test(tc, batch_processor_exports_from_its_thread);
  tcase_add_test(tc, batch_processor_close_without_time);
  tcase_add_test(tc, tracing_settings);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
