/* SPDX-License-Identifier: Apache-2.0 */
/* otlp.h -- spans as an ExportTraceServiceRequest, in the OTLP protobuf
 * encoding or the OTLP JSON one (hex ids, integers of 64 bits as strings,
 * enums as numbers), and the parsers of the "k=v,k2=v2" lists of
 * OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES. No I/O; the
 * batch processor and exporter are daemon/otlp.h. */
#ifndef TT_OBS_OTLP_H
#define TT_OBS_OTLP_H

#include <stdbool.h>
#include <stddef.h>

#include "obs/trace.h"
#include "util/buf.h"

struct tt_otlp_kv {
  char *key;
  char *value;
};

struct tt_otlp_kvs {
  struct tt_otlp_kv *items;
  size_t n;
};

#define TT_OTLP_KV_MAX 64       /* pairs */
#define TT_OTLP_KV_TEXT_MAX 8192 /* bytes of the whole list */

/* Parses a comma-separated list of key=value pairs of n bytes: blanks
 * around keys and values are dropped, values (and keys) are
 * percent-decoded, empty members are skipped. With `header` every key
 * must be an HTTP header name (a token) and no value may hold a control
 * byte; otherwise a key is any non-empty text without control bytes and a
 * value any text without control bytes. Returns 0 with *out (free it with
 * tt_otlp_kvs_free), or -1 with a reason in why that never quotes a value
 * (header values are often credentials). */
int tt_otlp_kv_parse(const char *text, size_t n, bool header, struct tt_otlp_kvs *out, char *why,
                     size_t cap);

void tt_otlp_kvs_free(struct tt_otlp_kvs *kvs);

/* The value of `key` in kvs, or NULL. */
const char *tt_otlp_kvs_get(const struct tt_otlp_kvs *kvs, const char *key);

/* The resource and scope every export carries; its strings are UTF-8
 * (the exporter makes them so). */
struct tt_otlp_resource {
  const char *service_name;        /* service.name */
  const char *service_version;     /* service.version and the scope's version; may be NULL */
  const struct tt_otlp_kvs *attrs; /* OTEL_RESOURCE_ATTRIBUTES; may be NULL */
};

/* OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf (the default) or http/json. */
enum tt_otlp_protocol { TT_OTLP_PROTOBUF = 0, TT_OTLP_JSON };

/* "http/protobuf" or "http/json" as *out; -1 for anything else
 * (grpc included: the exporter speaks OTLP/HTTP only). */
int tt_otlp_protocol_parse(const char *s, enum tt_otlp_protocol *out);

/* What every request of an exporter repeats, encoded once: the resource
 * and scope (protobuf: their fields; JSON: the text up to the spans). */
struct tt_otlp_encoder {
  enum tt_otlp_protocol protocol;
  struct tt_buf pre;   /* protobuf: Resource field, then the scope field; JSON: the prefix */
  size_t resource_len; /* protobuf: bytes of pre that are the Resource field */
  size_t room;         /* protobuf: bytes a batch reserves in front of its spans */
};

/* Encodes res (copied: it may go away) for protocol. Returns 0 or -1
 * (memory); free it with tt_otlp_encoder_free either way. */
int tt_otlp_encoder_init(struct tt_otlp_encoder *enc, const struct tt_otlp_resource *res,
                         enum tt_otlp_protocol protocol);
void tt_otlp_encoder_free(struct tt_otlp_encoder *enc);

/* A request being built a span at a time: each span is encoded when it is
 * added (the span can be released then), so a batch holds bytes, not
 * spans. Protobuf lengths come first, so the resource and the outer
 * lengths are written in front of the spans when the batch is sealed,
 * into room reserved there: the body is then one piece, never copied. */
struct tt_otlp_batch {
  struct tt_buf buf;
  size_t n;    /* spans added */
  size_t body; /* once sealed: where the request starts in buf */
  bool sealed;
};

void tt_otlp_batch_init(struct tt_otlp_batch *b);

/* Encodes n attributes (string values: static or outliving g) into g.
 * Returns 0, or -1 when they do not fit (g is then empty: the caller sets
 * them on each span instead). */
int tt_otlp_group_build(struct tt_span_group *g, const struct tt_span_attr *attrs, size_t n);

/* Appends span s. Returns 0, or -1 (memory) with the batch as it was. */
int tt_otlp_batch_add(const struct tt_otlp_encoder *enc, struct tt_otlp_batch *b,
                      const struct tt_span *s);

/* Completes the request (no span may be added after): its bytes are
 * buf.data + body up to buf.len. A batch without spans is a request
 * without spans. Returns 0 or -1 (memory). */
int tt_otlp_batch_seal(const struct tt_otlp_encoder *enc, struct tt_otlp_batch *b);

/* Empties the batch, keeping its storage. */
void tt_otlp_batch_reset(struct tt_otlp_batch *b);
void tt_otlp_batch_free(struct tt_otlp_batch *b);

/* Appends one ExportTraceServiceRequest holding the n spans to out, in
 * the batch's encoding for protocol (protobuf: ids as raw bytes, times as
 * fixed64), in one call. Returns 0 or -1 (the buffer's cap). */
int tt_otlp_encode(const struct tt_otlp_resource *res, enum tt_otlp_protocol protocol,
                   struct tt_span *const *spans, size_t n, struct tt_buf *out);

#endif
