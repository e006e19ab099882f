/* SPDX-License-Identifier: Apache-2.0 */
/* trace.h -- spans: W3C trace context (traceparent, tracestate), the
 * OpenTelemetry samplers, and spans recorded on the loop thread and handed
 * to a sink (the OTLP exporter, obs/otlp.h and daemon/otlp.h). Like the
 * logger, the tracer is process-wide; it is off until tt_tracer_set.
 *
 * Attributes carry names, codes and numbers only: never an item, a key,
 * a condition value, a body or a credential (the rule of obs/log.h). */
#ifndef TT_OBS_TRACE_H
#define TT_OBS_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TT_TRACE_FLAG_SAMPLED 0x01

/* One position in a trace: the ids of a span and its flags. */
struct tt_trace_ctx {
  uint8_t trace_id[16];
  uint8_t span_id[8];
  uint8_t flags;
  bool valid;
};

/* "00-<32 hex>-<16 hex>-<2 hex>" and its NUL. */
#define TT_TRACEPARENT_LEN 55

/* Parses a traceparent header value of n bytes (W3C Trace Context level 1):
 * lowercase hex, version ff refused, version 00 exactly 55 characters,
 * later versions 55 characters or more with a '-' after the flags; an
 * all-zero trace id or parent id is refused. Returns 0 with *out (valid),
 * or -1 (*out cleared). */
int tt_traceparent_parse(const char *s, size_t n, struct tt_trace_ctx *out);

/* Writes "00-traceid-spanid-flags" and a NUL into out. */
void tt_traceparent_format(const struct tt_trace_ctx *c, char out[TT_TRACEPARENT_LEN + 1]);

#define TT_TRACESTATE_MAX 512

/* Whether a tracestate header value of n bytes is one the daemon passes
 * on: at most 512 characters and 32 list members, each "key=value" with
 * the W3C key and value grammar (empty members between commas allowed). */
bool tt_tracestate_valid(const char *s, size_t n);

/* Every byte's two lowercase hex digits, "000102...ff". */
extern const char tt_hex_pairs[513];

/* n bytes as 2n lowercase hex digits (no NUL). Inline: the callers pass
 * 16 or 8, and the loop unrolls to a load and a store a byte. */
static inline void tt_trace_hex(const uint8_t *b, size_t n, char *out) {
  for (size_t i = 0; i < n; i++)
    memcpy(out + 2 * i, tt_hex_pairs + 2 * b[i], 2);
}

enum tt_sampler_kind {
  TT_SAMPLER_ALWAYS_ON = 0,
  TT_SAMPLER_ALWAYS_OFF,
  TT_SAMPLER_TRACEIDRATIO,
  TT_SAMPLER_PARENTBASED_ALWAYS_ON,
  TT_SAMPLER_PARENTBASED_ALWAYS_OFF,
  TT_SAMPLER_PARENTBASED_TRACEIDRATIO,
};

struct tt_sampler {
  enum tt_sampler_kind kind;
  double ratio; /* traceidratio: 0..1 */
};

/* Parses OTEL_TRACES_SAMPLER's names and OTEL_TRACES_SAMPLER_ARG (NULL or
 * "" = 1.0). Returns 0, or -1 with a reason in why. */
int tt_sampler_parse(const char *name, const char *arg, struct tt_sampler *out, char *why,
                     size_t cap);

/* The sampling decision of a new server span in trace `trace_id`, whose
 * remote parent is `parent` (NULL or !valid: a root). The ratio samplers
 * compare the trace id's last 8 bytes (big-endian) with ratio * 2^64, so
 * every service with the same ratio decides the same. */
bool tt_sampler_should_sample(const struct tt_sampler *s, const struct tt_trace_ctx *parent,
                              const uint8_t trace_id[16]);

enum tt_span_kind { TT_SPAN_INTERNAL = 1, TT_SPAN_SERVER = 2, TT_SPAN_CLIENT = 3 };
enum tt_span_status { TT_SPAN_UNSET = 0, TT_SPAN_OK = 1, TT_SPAN_ERROR = 2 };
enum tt_attr_type { TT_ATTR_STR = 1, TT_ATTR_INT, TT_ATTR_BOOL, TT_ATTR_STR_ARRAY };

#define TT_SPAN_MAX_ATTRS 24
#define TT_SPAN_STRS 1024

/* A string literal key of a tt_span_attr initializer, with its length. */
#define TT_SPAN_KEY(k) .key = (k), .key_len = sizeof(k) - 1

struct tt_span_attr {
  const char *key; /* a string literal */
  size_t key_len;
  enum tt_attr_type type;
  union {
    int64_t i;
    bool b;
    struct {
      const char *p; /* in the span's strs, or a static string */
      uint32_t len;
    } s;
  } v;
};

/* Attributes that many spans share (a route's method and pattern, an
 * operation's rpc.*): encoded once, in OTLP's protobuf and JSON forms
 * (tt_otlp_group_build), and copied as they are into each span's export.
 * A span points at one group (tt_span_put_group), which outlives it; it
 * never sets a key of its group again. */
struct tt_span_group {
  uint32_t nattrs;
  uint16_t pb_len, json_len;
  char pb[192];
  char json[448];
};

/* A recorded span. Strings are copied into it (static ones are pointed at:
 * tt_span_str_static); one past the room is dropped and counted in
 * dropped_attrs. */
struct tt_span {
  struct tt_span *next; /* the sink's queue */
  struct tt_trace_ctx ctx;
  uint8_t parent_id[8];
  bool has_parent;
  enum tt_span_kind kind;
  enum tt_span_status status;
  const char *name_p; /* the name: `name`, or a static string (tt_span_name_static) */
  uint32_t name_n;
  char name[128];
  char status_message[96];
  char tracestate[TT_TRACESTATE_MAX + 1];
  uint64_t start_unix_ns, end_unix_ns;
  size_t nattrs;
  uint64_t key_lens; /* bit (length % 64) of every attribute key's length */
  uint32_t dropped_attrs;
  uint32_t attr_bytes; /* the attributes' keys and string values, at most (an
                        * overwritten value still counts): room to encode */
  const struct tt_span_group *group; /* encoded before attrs; NULL: none */
  struct tt_span_attr attrs[TT_SPAN_MAX_ATTRS];
  size_t strs_len;
  char strs[TT_SPAN_STRS];
};

/* Takes an ended, sampled span (the sink owns it: tt_span_release). */
typedef void (*tt_span_sink_fn)(struct tt_span *span, void *arg);

/* Turns the tracer on with this sampler and sink, or off (sink NULL). */
void tt_tracer_set(const struct tt_sampler *sampler, tt_span_sink_fn sink, void *arg);

/* Whether spans are recorded at all. */
bool tt_tracer_on(void);

/* Pauses recording or resumes it (the exporter pauses it while it backs
 * off from a collector that failed). Paused, ids and sampling decisions
 * are made as usual -- traceparent and traceresponse do not change --
 * but a span that would be recorded is only counted: the start functions
 * return NULL. tt_tracer_set resumes. */
void tt_tracer_pause(bool paused);

/* Spans counted while paused since the last take; the count restarts. */
uint64_t tt_tracer_take_paused(void);

/* The same count, left as it is. */
uint64_t tt_tracer_paused_count(void);

/* Whether a sampled span started now would be recorded: on, not paused. */
bool tt_tracer_recording(void);

/* Span edges in time: the _at functions take the CLOCK_MONOTONIC time in
 * ns the caller read already (a request's or a call's start and end; 0:
 * read it now), which the tracer turns into Unix time; the others read
 * the clock. */

/* Starts a request's server span. Fills *ctx with the request's position
 * in its trace: the remote parent's trace id (or a new one), a new span
 * id, and the sampling flag (the sampler's decision when the tracer is on,
 * else the parent's flag). Returns the span when it is recorded, else
 * NULL. `tracestate` (may be NULL) is kept on the span. Ids are made even
 * with the tracer off: log lines carry them. */
struct tt_span *tt_span_start_server_at(const struct tt_trace_ctx *remote, const char *tracestate,
                                        struct tt_trace_ctx *ctx, uint64_t mono_ns);

/* The Unix time in ns of a CLOCK_MONOTONIC time, as spans get it (an
 * exemplar's time beside the span's end). */
uint64_t tt_trace_unix_ns(uint64_t mono_ns);

/* Starts a child of the span at `parent` (NULL, invalid or not sampled: no
 * span, returns NULL). Every tt_span_* function accepts NULL and does
 * nothing then. */
struct tt_span *tt_span_start(const struct tt_trace_ctx *parent, const char *name,
                              enum tt_span_kind kind);
struct tt_span *tt_span_start_at(const struct tt_trace_ctx *parent, const char *name,
                                 enum tt_span_kind kind, uint64_t mono_ns);

/* Starts a span of a new trace that belongs to no request (a credential
 * fetch): the sampler decides as for a request without traceparent.
 * NULL when the tracer is off or the trace is not sampled. */
struct tt_span *tt_span_start_root(const char *name, enum tt_span_kind kind);

void tt_span_set_name(struct tt_span *span, const char *name);

/* The span's shared attributes (NULL: none). */
static inline void tt_span_put_group(struct tt_span *span, const struct tt_span_group *g) {
  if (span)
    span->group = g;
}

/* Names the span with n bytes at `name`, which outlive it (a string of a
 * table built once): pointed at, not copied. UTF-8 is the caller's. */
static inline void tt_span_name_static(struct tt_span *span, const char *name, size_t n) {
  if (span) {
    span->name_p = name;
    span->name_n = (uint32_t)n;
  }
}

/* tt_span_attr_slot's path when an attribute's key has key_len's length
 * (maybe the same key: overwritten) or the span is full. */
struct tt_span_attr *tt_span_attr_find(struct tt_span *span, const char *key, size_t key_len);

/* The attribute `key` (key_len bytes) of span, new or to overwrite (the
 * last value wins); NULL when the span has no room left (counted). Keys
 * of a span mostly differ in length: a length no key has is a new slot,
 * taken inline without a look at the others. */
static inline struct tt_span_attr *tt_span_attr_slot(struct tt_span *span, const char *key,
                                                     size_t key_len) {
  uint64_t bit = (uint64_t)1 << (key_len & 63);
  if ((span->key_lens & bit) || span->nattrs == TT_SPAN_MAX_ATTRS)
    return tt_span_attr_find(span, key, key_len);
  struct tt_span_attr *a = &span->attrs[span->nattrs++];
  a->key = key;
  a->key_len = key_len;
  span->key_lens |= bit;
  span->attr_bytes += (uint32_t)key_len;
  return a;
}

/* A string value of n bytes, copied into the span; without `copy` it is
 * pointed at, and must outlive every span (a string literal, a static
 * table's entry) and be UTF-8. */
void tt_span_put_str(struct tt_span *span, const char *key, size_t key_len, const char *value,
                     size_t n, enum tt_attr_type type, bool copy);

/* The setters: inline, so that a literal key's length is a constant and a
 * NULL span (not recorded) costs one test. */
static inline void tt_span_str(struct tt_span *span, const char *key, const char *value) {
  if (span && value)
    tt_span_put_str(span, key, strlen(key), value, strlen(value), TT_ATTR_STR, true);
}

static inline void tt_span_strn(struct tt_span *span, const char *key, const char *value,
                                size_t n) {
  if (span && value)
    tt_span_put_str(span, key, strlen(key), value, n, TT_ATTR_STR, true);
}

/* A string literal or a static table's string (not copied). */
static inline void tt_span_str_static(struct tt_span *span, const char *key, const char *value) {
  if (span && value)
    tt_span_put_str(span, key, strlen(key), value, strlen(value), TT_ATTR_STR, false);
}

/* A string array of one element (aws.dynamodb.table_names). */
static inline void tt_span_str_array1(struct tt_span *span, const char *key, const char *value) {
  if (span && value)
    tt_span_put_str(span, key, strlen(key), value, strlen(value), TT_ATTR_STR_ARRAY, true);
}

static inline void tt_span_int(struct tt_span *span, const char *key, int64_t value) {
  struct tt_span_attr *a = span ? tt_span_attr_slot(span, key, strlen(key)) : NULL;
  if (a) {
    a->type = TT_ATTR_INT;
    a->v.i = value;
  }
}

static inline void tt_span_bool(struct tt_span *span, const char *key, bool value) {
  struct tt_span_attr *a = span ? tt_span_attr_slot(span, key, strlen(key)) : NULL;
  if (a) {
    a->type = TT_ATTR_BOOL;
    a->v.b = value;
  }
}

/* Sets the status; `message` (may be NULL) is a code, never free text
 * from a backend. */
void tt_span_status(struct tt_span *span, enum tt_span_status status, const char *message);

/* The string value of an attribute of type STR or STR_ARRAY, and its
 * length, or NULL. */
const char *tt_span_attr_str(const struct tt_span *span, const struct tt_span_attr *a,
                             size_t *len);

/* Ends the span now and hands it to the sink (or frees it when the tracer
 * was turned off meanwhile). */
void tt_span_end(struct tt_span *span);
void tt_span_end_at(struct tt_span *span, uint64_t mono_ns);

/* Frees a span that was started and not ended, without exporting it. */
void tt_span_free(struct tt_span *span);

/* Frees an ended span a sink took. */
void tt_span_release(struct tt_span *span);

/* Spans started and not yet ended or freed (tests: nothing leaks). */
size_t tt_span_live(void);

#endif
