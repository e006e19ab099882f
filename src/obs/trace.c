/* SPDX-License-Identifier: Apache-2.0 */
/* trace.c -- trace context, samplers and spans (obs/trace.h). */
#include "obs/trace.h"
#include "util/error.h"
#include "util/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static struct {
  bool on;
  bool paused;          /* tt_tracer_pause */
  uint64_t paused_spans; /* counted, not recorded, while paused */
  struct tt_sampler sampler;
  tt_span_sink_fn sink;
  void *arg;
  uint64_t rng;
  bool seeded;
  size_t live;
  /* Span times: CLOCK_MONOTONIC + clock_offset (span_unix_ns). */
  int64_t clock_offset;
  uint64_t clock_synced; /* the monotonic time of the last offset, 0: none yet */
  /* Released spans kept for reuse: a span is ~2.5 KB, two a request; a
   * 2.5 KB malloc and free cost ~1,000 instructions each (past tcache). */
  struct tt_span *spare;
  size_t nspare;
} tracer;

/* The exporter encodes a span when it ends and releases it at once, so
 * only the requests in flight hold spans (two each, more for fan-outs):
 * at most ~650 KB kept while tracing is on. */
#define SPARE_SPANS 256

/* Span text goes out as protobuf strings or JSON text, both UTF-8 only:
 * text that is not (a backend's error type is whatever it sent) has its
 * bytes above 0x7f replaced by '?'. ASCII, the usual case, costs a scan. */
static void scrub_utf8(char *s, size_t n) {
  if (tt_utf8_valid(s, n))
    return;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] >= 0x80)
      s[i] = '?';
}

static inline void keep_utf8(char *s, size_t n) {
  uint64_t any = 0, x;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    memcpy(&x, s + i, 8);
    any |= x;
  }
  if (i < n && n >= 8) {
    memcpy(&x, s + n - 8, 8); /* the tail, in the word that ends the text */
    any |= x;
  } else {
    for (; i < n; i++)
      any |= (unsigned char)s[i];
  }
  if (any & 0x8080808080808080ULL)
    scrub_utf8(s, n);
}

/* ---- trace context ---- */

static int hexval(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1; /* upper case is refused, as the recommendation says */
}

static int hex_bytes(const char *s, size_t nbytes, uint8_t *out) {
  for (size_t i = 0; i < nbytes; i++) {
    int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return -1;
    out[i] = (uint8_t)(hi << 4 | lo);
  }
  return 0;
}

static bool all_zero(const uint8_t *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (b[i])
      return false;
  return true;
}

int tt_traceparent_parse(const char *s, size_t n, struct tt_trace_ctx *out) {
  memset(out, 0, sizeof(*out));
  if (s == NULL || n < TT_TRACEPARENT_LEN)
    return -1;
  uint8_t version;
  if (hex_bytes(s, 1, &version) != 0 || version == 0xff)
    return -1;
  if (version == 0 ? n != TT_TRACEPARENT_LEN : (n > TT_TRACEPARENT_LEN && s[55] != '-'))
    return -1;
  if (s[2] != '-' || s[35] != '-' || s[52] != '-')
    return -1;
  struct tt_trace_ctx c;
  memset(&c, 0, sizeof(c));
  if (hex_bytes(s + 3, 16, c.trace_id) != 0 || hex_bytes(s + 36, 8, c.span_id) != 0 ||
      hex_bytes(s + 53, 1, &c.flags) != 0)
    return -1;
  if (all_zero(c.trace_id, 16) || all_zero(c.span_id, 8))
    return -1;
  c.valid = true;
  *out = c;
  return 0;
}

/* Every byte's two hex digits: one load a byte. */
const char tt_hex_pairs[513] =
  "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
  "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
  "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
  "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
  "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
  "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
  "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
  "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/* Eight bytes as sixteen hex digits, unrolled: a load and a store a byte. */
static inline void hex8(const uint8_t *b, char *out) {
  memcpy(out, tt_hex_pairs + 2 * b[0], 2);
  memcpy(out + 2, tt_hex_pairs + 2 * b[1], 2);
  memcpy(out + 4, tt_hex_pairs + 2 * b[2], 2);
  memcpy(out + 6, tt_hex_pairs + 2 * b[3], 2);
  memcpy(out + 8, tt_hex_pairs + 2 * b[4], 2);
  memcpy(out + 10, tt_hex_pairs + 2 * b[5], 2);
  memcpy(out + 12, tt_hex_pairs + 2 * b[6], 2);
  memcpy(out + 14, tt_hex_pairs + 2 * b[7], 2);
}

void tt_traceparent_format(const struct tt_trace_ctx *c, char out[TT_TRACEPARENT_LEN + 1]) {
  memcpy(out, "00-", 3);
  hex8(c->trace_id, out + 3);
  hex8(c->trace_id + 8, out + 19);
  out[35] = '-';
  hex8(c->span_id, out + 36);
  memcpy(out + 52, (c->flags & TT_TRACE_FLAG_SAMPLED) ? "-01" : "-00", 4);
}

static bool key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '*' ||
         c == '/';
}

/* One "key=value" member of n bytes, without surrounding whitespace. */
static bool member_valid(const char *s, size_t n) {
  const char *eq = memchr(s, '=', n);
  if (eq == NULL)
    return false;
  size_t klen = (size_t)(eq - s), vlen = n - klen - 1;
  if (klen == 0 || klen > 256 || vlen == 0 || vlen > 256)
    return false;
  if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
    return false;
  size_t at = 0, nat = 0;
  for (size_t i = 0; i < klen; i++) {
    if (s[i] == '@') {
      at = i;
      nat++;
    } else if (!key_char(s[i])) {
      return false;
    }
  }
  if (nat > 1 || (nat == 1 && (at == 0 || at > 241 || klen - at - 1 == 0 ||
                                klen - at - 1 > 14 || !(s[at + 1] >= 'a' && s[at + 1] <= 'z'))))
    return false;
  for (size_t i = 0; i < vlen; i++) {
    unsigned char c = (unsigned char)eq[1 + i];
    if (c < 0x20 || c > 0x7e || c == ',' || c == '=')
      return false;
  }
  return eq[vlen] != ' ';
}

bool tt_tracestate_valid(const char *s, size_t n) {
  if (s == NULL || n > TT_TRACESTATE_MAX)
    return false;
  size_t members = 0, i = 0;
  while (i <= n) {
    size_t end = i;
    while (end < n && s[end] != ',')
      end++;
    size_t a = i, b = end;
    while (a < b && (s[a] == ' ' || s[a] == '\t'))
      a++;
    while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t'))
      b--;
    if (b > a) {
      if (!member_valid(s + a, b - a) || ++members > 32)
        return false;
    }
    i = end + 1;
  }
  return true;
}

/* ---- samplers ---- */

static const struct {
  const char *name;
  enum tt_sampler_kind kind;
} samplers[] = {
    {"always_on", TT_SAMPLER_ALWAYS_ON},
    {"always_off", TT_SAMPLER_ALWAYS_OFF},
    {"traceidratio", TT_SAMPLER_TRACEIDRATIO},
    {"parentbased_always_on", TT_SAMPLER_PARENTBASED_ALWAYS_ON},
    {"parentbased_always_off", TT_SAMPLER_PARENTBASED_ALWAYS_OFF},
    {"parentbased_traceidratio", TT_SAMPLER_PARENTBASED_TRACEIDRATIO},
};

int tt_sampler_parse(const char *name, const char *arg, struct tt_sampler *out, char *why,
                     size_t cap) {
  memset(out, 0, sizeof(*out));
  out->kind = TT_SAMPLER_PARENTBASED_ALWAYS_ON;
  out->ratio = 1.0;
  if (name != NULL && name[0]) {
    size_t i = 0, n = sizeof(samplers) / sizeof(samplers[0]);
    while (i < n && strcmp(samplers[i].name, name) != 0)
      i++;
    if (i == n) {
      snprintf(why, cap,
               "the sampler must be always_on, always_off, traceidratio, "
               "parentbased_always_on, parentbased_always_off or parentbased_traceidratio");
      return -1;
    }
    out->kind = samplers[i].kind;
  }
  if (arg != NULL && arg[0]) {
    char *end = NULL;
    double r = strtod(arg, &end);
    if (end == arg || *end != '\0' || !(r >= 0.0 && r <= 1.0)) {
      snprintf(why, cap, "the sampler argument must be a ratio from 0 to 1");
      return -1;
    }
    out->ratio = r;
  }
  return 0;
}

static bool ratio_sample(double ratio, const uint8_t trace_id[16]) {
  if (ratio >= 1.0)
    return true;
  if (ratio <= 0.0)
    return false;
  uint64_t x = 0;
  for (int i = 8; i < 16; i++)
    x = x << 8 | trace_id[i];
  /* 2^64 * ratio, below 2^64 since ratio < 1. */
  uint64_t bound = (uint64_t)(ratio * 18446744073709551616.0);
  return x < bound;
}

bool tt_sampler_should_sample(const struct tt_sampler *s, const struct tt_trace_ctx *parent,
                              const uint8_t trace_id[16]) {
  bool has_parent = parent != NULL && parent->valid;
  switch (s->kind) {
  case TT_SAMPLER_ALWAYS_ON:
    return true;
  case TT_SAMPLER_ALWAYS_OFF:
    return false;
  case TT_SAMPLER_TRACEIDRATIO:
    return ratio_sample(s->ratio, trace_id);
  case TT_SAMPLER_PARENTBASED_ALWAYS_ON:
    return has_parent ? (parent->flags & TT_TRACE_FLAG_SAMPLED) != 0 : true;
  case TT_SAMPLER_PARENTBASED_ALWAYS_OFF:
    return has_parent ? (parent->flags & TT_TRACE_FLAG_SAMPLED) != 0 : false;
  case TT_SAMPLER_PARENTBASED_TRACEIDRATIO:
    return has_parent ? (parent->flags & TT_TRACE_FLAG_SAMPLED) != 0
                      : ratio_sample(s->ratio, trace_id);
  }
  return false;
}

/* ---- ids ---- */

static uint64_t next_random(void) {
  if (!tracer.seeded) {
    if (getrandom(&tracer.rng, sizeof(tracer.rng), 0) != (ssize_t)sizeof(tracer.rng)) {
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      tracer.rng = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32);
    }
    tracer.seeded = true;
  }
  /* splitmix64: ids need spread and uniqueness, not secrecy. */
  uint64_t z = (tracer.rng += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* n (8 or 16) random bytes, not all zero: each 8 are a draw's bytes from
 * the lowest up. */
static void random_id(uint8_t *out, size_t n) {
  uint64_t any;
  do {
    any = 0;
    for (size_t i = 0; i < n; i += 8) {
      uint64_t r = next_random();
      any |= r;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      memcpy(out + i, &r, 8);
#else
      for (size_t j = 0; j < 8; j++, r >>= 8)
        out[i + j] = (uint8_t)r;
#endif
    }
  } while (any == 0);
}

static uint64_t clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A span's edges are monotonic times -- mostly the ones its caller read
 * for its own durations (a request's, a backend call's), so that a traced
 * request reads the clock no more often than an untraced one -- turned
 * into Unix times by an offset between the two clocks, read again when
 * it is a second old: a step of the wall clock shows within a second. */
#define CLOCK_RESYNC_NS 1000000000u

static uint64_t span_unix_ns(uint64_t mono) {
  if (mono == 0)
    mono = clock_ns(CLOCK_MONOTONIC);
  if (tracer.clock_synced == 0 || mono > tracer.clock_synced + CLOCK_RESYNC_NS) {
    uint64_t real = clock_ns(CLOCK_REALTIME);
    uint64_t now = clock_ns(CLOCK_MONOTONIC);
    tracer.clock_offset = (int64_t)(real - now);
    tracer.clock_synced = now ? now : 1;
  }
  return (uint64_t)((int64_t)mono + tracer.clock_offset);
}

uint64_t tt_trace_unix_ns(uint64_t mono_ns) { return span_unix_ns(mono_ns); }

/* ---- the tracer and spans ---- */

void tt_tracer_set(const struct tt_sampler *sampler, tt_span_sink_fn sink, void *arg) {
  tracer.on = sink != NULL;
  tracer.paused = false;
  tracer.sink = sink;
  tracer.arg = arg;
  if (sampler)
    tracer.sampler = *sampler;
  else
    tracer.sampler.kind = TT_SAMPLER_PARENTBASED_ALWAYS_ON;
  if (sink == NULL) {
    while (tracer.spare) {
      struct tt_span *s = tracer.spare;
      tracer.spare = s->next;
      free(s);
    }
    tracer.nspare = 0;
  }
}

bool tt_tracer_on(void) { return tracer.on; }

void tt_tracer_pause(bool paused) { tracer.paused = paused; }

uint64_t tt_tracer_take_paused(void) {
  uint64_t n = tracer.paused_spans;
  tracer.paused_spans = 0;
  return n;
}

uint64_t tt_tracer_paused_count(void) { return tracer.paused_spans; }

bool tt_tracer_recording(void) { return tracer.on && !tracer.paused; }

size_t tt_span_live(void) { return tracer.live; }

static struct tt_span *span_new(const char *name, enum tt_span_kind kind, uint64_t mono) {
  struct tt_span *s = tracer.spare;
  if (s != NULL) {
    tracer.spare = s->next;
    tracer.nspare--;
  } else if ((s = malloc(sizeof(*s))) == NULL) {
    return NULL;
  }
  /* Only what is read before it is written is set: the text buffers,
   * the attributes and their strings are filled as they are used. */
  s->next = NULL;
  memset(&s->ctx, 0, sizeof(s->ctx));
  s->has_parent = false;
  s->status = TT_SPAN_UNSET;
  s->status_message[0] = '\0';
  s->tracestate[0] = '\0';
  s->end_unix_ns = 0;
  s->nattrs = 0;
  s->group = NULL;
  s->key_lens = 0;
  s->dropped_attrs = 0;
  s->attr_bytes = 0;
  s->strs_len = 0;
  s->kind = kind;
  if (name[0])
    tt_span_set_name(s, name);
  else
    tt_span_name_static(s, "", 0); /* a server span, named when it ends */
  s->start_unix_ns = span_unix_ns(mono);
  tracer.live++;
  return s;
}

struct tt_span *tt_span_start_server_at(const struct tt_trace_ctx *remote, const char *tracestate,
                                        struct tt_trace_ctx *ctx, uint64_t mono_ns) {
  memset(ctx, 0, sizeof(*ctx));
  bool has_parent = remote != NULL && remote->valid;
  if (has_parent)
    memcpy(ctx->trace_id, remote->trace_id, 16);
  else
    random_id(ctx->trace_id, 16);
  random_id(ctx->span_id, 8);
  ctx->valid = true;
  if (!tracer.on) {
    ctx->flags = has_parent ? remote->flags & TT_TRACE_FLAG_SAMPLED : 0;
    return NULL;
  }
  bool sampled = tt_sampler_should_sample(&tracer.sampler, remote, ctx->trace_id);
  ctx->flags = sampled ? TT_TRACE_FLAG_SAMPLED : 0;
  if (!sampled)
    return NULL;
  if (tracer.paused) {
    tracer.paused_spans++;
    return NULL;
  }
  struct tt_span *s = span_new("", TT_SPAN_SERVER, mono_ns);
  if (s == NULL)
    return NULL;
  s->ctx = *ctx;
  if (has_parent) {
    memcpy(s->parent_id, remote->span_id, 8);
    s->has_parent = true;
  }
  if (tracestate && tracestate[0])
    tt_text_copy(s->tracestate, sizeof(s->tracestate), tracestate);
  return s;
}

/* A sampled span of trace `trace_id` with a new span id, a child of
 * `parent_id` (NULL: a root); NULL while paused (counted) or out of
 * memory. */
static struct tt_span *sampled_span(const char *name, enum tt_span_kind kind,
                                    const uint8_t *trace_id, const uint8_t *parent_id,
                                    uint64_t mono) {
  if (tracer.paused) {
    tracer.paused_spans++;
    return NULL;
  }
  struct tt_span *s = span_new(name, kind, mono);
  if (s == NULL)
    return NULL;
  memcpy(s->ctx.trace_id, trace_id, 16);
  random_id(s->ctx.span_id, 8);
  s->ctx.flags = TT_TRACE_FLAG_SAMPLED;
  s->ctx.valid = true;
  if (parent_id) {
    memcpy(s->parent_id, parent_id, 8);
    s->has_parent = true;
  }
  return s;
}

struct tt_span *tt_span_start(const struct tt_trace_ctx *parent, const char *name,
                              enum tt_span_kind kind) {
  return tt_span_start_at(parent, name, kind, 0);
}

struct tt_span *tt_span_start_at(const struct tt_trace_ctx *parent, const char *name,
                                 enum tt_span_kind kind, uint64_t mono_ns) {
  if (!tracer.on || parent == NULL || !parent->valid ||
      !(parent->flags & TT_TRACE_FLAG_SAMPLED))
    return NULL;
  return sampled_span(name, kind, parent->trace_id, parent->span_id, mono_ns);
}

struct tt_span *tt_span_start_root(const char *name, enum tt_span_kind kind) {
  if (!tracer.on)
    return NULL;
  uint8_t trace_id[16];
  random_id(trace_id, 16);
  if (!tt_sampler_should_sample(&tracer.sampler, NULL, trace_id))
    return NULL;
  return sampled_span(name, kind, trace_id, NULL, 0);
}

void tt_span_set_name(struct tt_span *span, const char *name) {
  if (span) {
    size_t n = tt_text_copy(span->name, sizeof(span->name), name);
    keep_utf8(span->name, n);
    tt_span_name_static(span, span->name, n);
  }
}

struct tt_span_attr *tt_span_attr_find(struct tt_span *span, const char *key, size_t n) {
  uint64_t bit = (uint64_t)1 << (n & 63);
  if (span->key_lens & bit) {
    for (size_t i = 0; i < span->nattrs; i++) {
      const struct tt_span_attr *a = &span->attrs[i];
      if (a->key == key || (a->key_len == n && memcmp(a->key, key, n) == 0))
        return &span->attrs[i]; /* the last value wins */
    }
  }
  if (span->nattrs == TT_SPAN_MAX_ATTRS) {
    span->dropped_attrs++;
    return NULL;
  }
  struct tt_span_attr *a = &span->attrs[span->nattrs++];
  a->key = key;
  a->key_len = n;
  span->key_lens |= bit;
  span->attr_bytes += (uint32_t)n;
  return a;
}

void tt_span_put_str(struct tt_span *span, const char *key, size_t key_len, const char *value,
                     size_t n, enum tt_attr_type type, bool copy) {
  if (span == NULL || value == NULL)
    return;
  if (copy && span->strs_len + n > TT_SPAN_STRS) {
    span->dropped_attrs++;
    return;
  }
  struct tt_span_attr *a = tt_span_attr_slot(span, key, key_len);
  if (a == NULL)
    return;
  if (copy) {
    char *c = span->strs + span->strs_len;
    memcpy(c, value, n);
    keep_utf8(c, n);
    span->strs_len += n;
    value = c;
  }
  a->type = type;
  a->v.s.p = value;
  a->v.s.len = (uint32_t)n;
  span->attr_bytes += (uint32_t)n;
}

void tt_span_status(struct tt_span *span, enum tt_span_status status, const char *message) {
  if (span == NULL)
    return;
  span->status = status;
  if (message == NULL || status != TT_SPAN_ERROR) {
    span->status_message[0] = '\0';
    return;
  }
  keep_utf8(span->status_message,
            tt_text_copy(span->status_message, sizeof(span->status_message), message));
}

const char *tt_span_attr_str(const struct tt_span *span, const struct tt_span_attr *a,
                             size_t *len) {
  if (a->type != TT_ATTR_STR && a->type != TT_ATTR_STR_ARRAY)
    return NULL;
  *len = a->v.s.len;
  return a->v.s.p;
}

void tt_span_free(struct tt_span *span) {
  if (span == NULL)
    return;
  tracer.live--;
  tt_span_release(span);
}

void tt_span_release(struct tt_span *span) {
  if (span == NULL)
    return;
  if (tracer.on && tracer.nspare < SPARE_SPANS) {
    span->next = tracer.spare;
    tracer.spare = span;
    tracer.nspare++;
    return;
  }
  free(span);
}

void tt_span_end(struct tt_span *span) { tt_span_end_at(span, 0); }

void tt_span_end_at(struct tt_span *span, uint64_t mono_ns) {
  if (span == NULL)
    return;
  span->end_unix_ns = span_unix_ns(mono_ns);
  if (span->end_unix_ns < span->start_unix_ns)
    span->end_unix_ns = span->start_unix_ns;
  if (!tracer.on) {
    tt_span_free(span);
    return;
  }
  tracer.live--; /* the sink's now */
  tracer.sink(span, tracer.arg);
}
