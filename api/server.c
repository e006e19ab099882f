/* SPDX-License-Identifier: Apache-2.0 */
/* server.c -- libmicrohttpd callbacks and the request lifecycle: read the
 * body, route, run the handler and the backend's ready calls, answer at once
 * when that joined everything or else suspend until joined and resume, log,
 * free; connection deadlines and lingering close. */
#include "api/server.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#else
#define ASAN_POISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#endif

#include "api/errors.h"
#include "api/framing.h"
#include "api/handlers.h"
#include "api/request.h"
#include "value/json_exact.h"
#include "obs/log.h"
#include "obs/otlp.h"
#include "obs/trace.h"
#include "model/registry.h"
#include "util/hex.h"
#include "util/text.h"

#define ID_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
#define CONN_MAGIC 0x74746363u   /* "ttcc" */
#define DISCARD_LIMIT (64u << 20)
/* A keep-alive connection has this long after an answer to send the next
 * request line (MHD's idle timeout is the same, but restarts at every byte). */
#define KEEPALIVE_MS 30000u
/* Lingering close after an early refusal: read and drop what the client
 * still sends, up to these bounds, so it can read the answer (closing with
 * unread input would reset the connection and lose it). */
#define LINGER_BYTES (64u << 20)
#define LINGER_MS 10000u
#define LINGER_MAX 256u

/* One client connection, from accept to close (MHD's socket context). */
struct tt_conn {
  uint32_t magic;
  struct tt_server *server;
  int fd;
  struct tt_request *req; /* the request on it now; NULL between requests */
  uint64_t deadline;      /* loop ms; the header, body or keep-alive deadline */
  unsigned requests;      /* request lines seen */
  bool linger;            /* answered before its body was read */
  bool killed;            /* shut down by us */
  bool answered;          /* on server->answered */
  struct tt_conn *prev, *next;
  struct tt_conn *aprev, *anext; /* server->answered */
};

/* A connection MHD closed that we keep open on a dup of its socket while
 * its remaining input is read and dropped. */
struct tt_linger {
  struct tt_server *server;
  uv_poll_t poll;
  uv_timer_t timer;
  int fd;
  int open_handles;
  size_t dropped;
  struct tt_linger *prev, *next;
};

uint64_t tt_server_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Each route's server span name, "METHOD pattern", and its attributes
 * http.request.method and http.route encoded once (tt_api_routes' order):
 * written by tt_server_init (the same bytes each time), pointed at by the
 * spans, which the exporter may still hold after the server closed. The
 * name stays empty (the span is named as a request's) when they do not fit. */
#define SPAN_NAME_MAX 128

static struct tt_route_span {
  char name[SPAN_NAME_MAX];
  uint32_t name_len;
  struct tt_span_group group;
} route_spans[TT_ROUTER_MAX_ROUTES];

/* A server span's name, "METHOD route" (the route cut to fit), into out
 * (SPAN_NAME_MAX bytes); returns its length. */
static size_t span_name(char *out, const char *method, const char *route) {
  size_t mn = strlen(method), rn = strlen(route);
  if (mn + 1 + rn >= SPAN_NAME_MAX)
    rn = SPAN_NAME_MAX - mn - 2;
  memcpy(out, method, mn);
  out[mn] = ' ';
  memcpy(out + mn + 1, route, rn);
  out[mn + 1 + rn] = '\0';
  return mn + 1 + rn;
}

static void route_span_init(struct tt_route_span *rs, const struct tt_route *r) {
  const char *m = tt_method_name(r->methods);
  struct tt_span_attr a[2] = {
      {TT_SPAN_KEY("http.request.method"), .type = TT_ATTR_STR},
      {TT_SPAN_KEY("http.route"), .type = TT_ATTR_STR},
  };
  rs->name_len = 0;
  if (m == NULL)
    return;
  a[0].v.s.p = m;
  a[0].v.s.len = (uint32_t)strlen(m);
  a[1].v.s.p = r->pattern;
  a[1].v.s.len = (uint32_t)strlen(r->pattern);
  if (tt_otlp_group_build(&rs->group, a, 2) == 0)
    rs->name_len = (uint32_t)span_name(rs->name, m, r->pattern);
}

int tt_server_init(struct tt_server *s, uv_loop_t *loop, struct tt_families *fams,
                   const struct tt_api_options *opts) {
  memset(s, 0, sizeof(*s));
  int rc = tt_router_init(&s->router, tt_api_routes, tt_api_nroutes);
  if (rc != 0)
    return rc;
  for (size_t i = 0; i < tt_api_nroutes; i++) /* tt_router_init: at most TT_ROUTER_MAX_ROUTES */
    route_span_init(&route_spans[i], &tt_api_routes[i]);
  s->loop = loop;
  s->fams = fams;
  s->opts = *opts;
  if (getrandom(&s->id_state, sizeof(s->id_state), 0) != (ssize_t)sizeof(s->id_state))
    s->id_state = tt_server_now_ns();
  return 0;
}

uint64_t tt_server_next_id(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* W3C traceparent: version-traceid-parentid-flags, lowercase hex. */
static bool traceparent_valid(const char *v) {
  static const int lens[] = {2, 32, 16, 2};
  const char *p = v;
  for (int part = 0; part < 4; part++) {
    for (int i = 0; i < lens[part]; i++, p++)
      if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
        return false;
    if (part < 3 && *p++ != '-')
      return false;
  }
  return *p == '\0';
}

/* v as 16 lowercase hex digits ("%016llx"), no NUL. */
static void put_hex64(char *out, uint64_t v) {
  static const char hex[] = "0123456789abcdef";
  for (int i = 15; i >= 0; i--, v >>= 4)
    out[i] = hex[v & 15];
}

void tt_server_uint_text(char out[static 11], uint32_t v) {
  char tmp[10];
  size_t n = 0;
  do
    tmp[n++] = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  for (size_t i = 0; i < n; i++)
    out[i] = tmp[n - 1 - i];
  out[n] = '\0';
}

/* The request's ids, and its server span: it continues the caller's
 * traceparent (and passes its tracestate on) or starts a trace. Named and
 * ended in the completion callback, when the route and status are known. */
static void set_ids(struct tt_request *req) {
  const char *rid = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, "X-Request-Id");
  /* A client's X-Request-Id is echoed only when it is 1..128 characters of
   * [A-Za-z0-9._:-], so it can never smuggle a value or a control character
   * into a log line or a header; otherwise one is generated. */
  size_t n = rid ? strspn(rid, ID_CHARS "._:-") : 0;
  if (rid && rid[n] == '\0' && n >= 1 && n <= 128) {
    tt_text_copy(req->request_id, sizeof(req->request_id), rid);
  } else {
    _Static_assert(sizeof(req->request_id) > 32, "two 64-bit ids in hex");
    put_hex64(req->request_id, tt_server_next_id(&req->server->id_state));
    put_hex64(req->request_id + 16, tt_server_next_id(&req->server->id_state));
    req->request_id[32] = '\0';
  }
  const char *tp = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, "traceparent");
  if (tp && traceparent_valid(tp))
    snprintf(req->traceparent, sizeof(req->traceparent), "%s", tp);
  struct tt_trace_ctx remote;
  if (tp == NULL || tt_traceparent_parse(tp, strlen(tp), &remote) != 0)
    remote.valid = false;
  const char *ts = remote.valid && tt_tracer_on()
                       ? MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, "tracestate")
                       : NULL;
  if (ts && !tt_tracestate_valid(ts, strlen(ts)))
    ts = NULL;
  req->span = tt_span_start_server_at(&remote, ts, &req->trace, req->start_ns);
}

/* The model a route names, when it is a registered model (a model's name
 * is configuration; any other path segment is what a client sent, and may
 * be a value): the one the handler resolved, or else looked up now. */
static bool route_model(const struct tt_request *req, const char **out, size_t *len) {
  if (req->match.route == NULL || req->server->orm == NULL)
    return false;
  const struct tt_route_param *p = tt_route_param(&req->match, "model");
  char name[129];
  if (p == NULL || p->len == 0 || p->len >= sizeof(name))
    return false;
  for (size_t i = 0; i < p->len; i++)
    if (!memchr(ID_CHARS "_-.", p->value[i], sizeof(ID_CHARS "_-.") - 1))
      return false;
  /* The handler resolved it already (tt_api_path_model): no second lookup. */
  if (!req->path_model) {
    memcpy(name, p->value, p->len);
    name[p->len] = '\0';
    if (tt_model_registry_get(req->server->orm->models, name) == NULL)
      return false;
  }
  *out = p->value;
  *len = p->len;
  return true;
}

static void trace_end(struct tt_request *req, const char *method, unsigned status,
                      const char *error_code, uint64_t end_ns) {
  struct tt_span *s = req->span;
  if (s == NULL)
    return;
  req->span = NULL;
  const struct tt_route *route = req->match.route;
  const struct tt_route_span *rs =
      route && route->methods == req->method ? &route_spans[route - tt_api_routes] : NULL;
  if (rs && rs->name_len) {
    tt_span_name_static(s, rs->name, rs->name_len);
    tt_span_put_group(s, &rs->group); /* http.request.method, http.route */
  } else {
    char name[SPAN_NAME_MAX];
    span_name(name, method, req->route_label);
    tt_span_set_name(s, name);
    tt_span_str(s, "http.request.method", method);
    if (req->match.route) /* a pattern of the static route table */
      tt_span_str_static(s, "http.route", req->route_label);
  }
  tt_span_int(s, "http.response.status_code", status);
  tt_span_str(s, "tabletheoryd.request_id", req->request_id);
  const char *model;
  size_t mlen;
  if (route_model(req, &model, &mlen))
    tt_span_strn(s, "tabletheoryd.model", model, mlen);
  if (req->partner)
    tt_span_str(s, "tabletheoryd.partner", req->partner);
  if (error_code)
    tt_span_str(s, "error.type", error_code);
  /* Server spans: 5xx and requests that got no answer are errors. */
  if (status >= 500 || status == 499 || status == 408)
    tt_span_status(s, TT_SPAN_ERROR, error_code ? error_code : "ServerError");
  tt_span_end_at(s, end_ns);
}

/* ---- answering ---------------------------------------------------------- */

static void response_clear(struct tt_response *r) {
  if (r->body && !r->body_static)
    free(r->body);
  memset(r, 0, sizeof(*r));
}

void tt_request_respond_static(struct tt_request *req, unsigned status, const char *content_type,
                               const char *body, size_t len) {
  response_clear(&req->resp);
  req->resp.status = status;
  req->resp.body = (char *)body;
  req->resp.body_len = len;
  req->resp.body_static = true;
  req->resp.content_type = content_type;
  req->responded = true;
}

void tt_request_respond_json(struct tt_request *req, unsigned status, json_t *value) {
  char *text = value ? json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
  json_decref(value);
  if (text == NULL) {
    tt_request_fail(req, TT_ERR_INTERNAL, NULL, "could not encode the answer");
    return;
  }
  tt_request_respond_static(req, status, "application/json", text, strlen(text));
  req->resp.body_static = false; /* ours to free */
}

void tt_request_respond_error(struct tt_request *req, const struct tt_error *err,
                              const json_t *extra) {
  struct tt_buf out;
  tt_buf_init(&out, 0);
  req->error_code = err->code;
  if (tt_api_error_body(&out, err, req->request_id, extra) != 0) {
    /* Only memory can fail now (texts are scrubbed to UTF-8): answer a
     * fixed envelope that still names the request. */
    tt_buf_free(&out);
    req->error_code = TT_ERR_INTERNAL;
    int n = tt_api_error_fallback(req->fallback_body, sizeof(req->fallback_body),
                                  req->request_id);
    tt_request_respond_static(req, 500, "application/json", req->fallback_body, (size_t)n);
    return;
  }
  tt_request_respond_buf(req, tt_api_error_status(err->code), &out);
}

void tt_request_fail(struct tt_request *req, enum tt_err_code code, const char *field,
                     const char *fmt, ...) {
  struct tt_error err;
  va_list ap;
  va_start(ap, fmt);
  tt_error_vset(&err, code, field, fmt, ap);
  va_end(ap);
  tt_request_respond_error(req, &err, NULL);
}

json_t *tt_request_json_body(struct tt_request *req, bool exact) {
  if (req->body.len == 0)
    return json_object();
  json_t *v = NULL;
  if (exact) {
    struct tt_error err;
    /* Containers nest one level deeper than values (the body itself). */
    struct tt_json_opts opts = {.max_bytes = 0, .max_depth = 40};
    if (tt_json_parse(req->body.data, req->body.len, &opts, &v, &err) != 0) {
      /* The field is the JSON path inside the body; "body" for the whole. */
      if (err.field[0] == '\0')
        snprintf(err.field, sizeof(err.field), "body");
      tt_request_respond_error(req, &err, NULL);
      return NULL;
    }
  } else {
    json_error_t jerr;
    v = json_loadb(req->body.data, req->body.len, JSON_REJECT_DUPLICATES, &jerr);
    if (v == NULL) {
      /* jerr.text may quote the input; report only the position. */
      tt_request_fail(req, TT_ERR_VALIDATION, "body",
                      "the body is not valid JSON (line %d, column %d)", jerr.line, jerr.column);
      return NULL;
    }
  }
  if (!json_is_object(v)) {
    json_decref(v);
    tt_request_fail(req, TT_ERR_VALIDATION, "body", "the body must be a JSON object");
    return NULL;
  }
  return v;
}

int tt_request_int_member(struct tt_request *req, const json_t *body, const char *name,
                          json_int_t lo, json_int_t hi, json_int_t *out) {
  const json_t *v = json_object_get(body, name);
  int64_t x = 0;
  if (v == NULL)
    return 0;
  if (tt_json_integer(v, &x) != 0 || x < lo || x > hi) {
    tt_request_fail(req, TT_ERR_VALIDATION, name, "%s must be an integer from %lld to %lld", name,
                    (long long)lo, (long long)hi);
    return -1;
  }
  *out = x;
  return 0;
}

long tt_request_unescape(const char *s, size_t n, char *out, bool query) {
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    int hi = s[i] == '%' && i + 2 < n ? tt_hex_digit((unsigned char)s[i + 1]) : -1;
    int lo = hi >= 0 ? tt_hex_digit((unsigned char)s[i + 2]) : -1;
    if (lo >= 0) {
      out[o++] = (char)(hi * 16 + lo);
      i += 2;
    } else if (s[i] == '%' && !query) {
      out[o] = '\0';
      return -(long)o - 1;
    } else {
      out[o++] = query && s[i] == '+' ? ' ' : s[i];
    }
  }
  out[o] = '\0';
  return (long)o;
}

/* Decodes %XX and '+' of a query component into the arena; *len (when
 * non-NULL) gets the decoded length, NUL bytes included. */
static char *query_decode(struct tt_arena *a, const char *s, size_t n, size_t *len) {
  char *out = tt_arena_alloc(a, n + 1);
  long o = out ? tt_request_unescape(s, n, out, true) : 0;
  if (len)
    *len = (size_t)o;
  return out;
}

/* Whether a decoded query part or path parameter may reach a handler: no
 * NUL (it would cut the C string, hiding what follows from every later
 * check), no other control character, and valid UTF-8. */
static bool text_acceptable(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
      return false;
  return tt_utf8_valid(s, n);
}

/* One name=value part of a raw query string: the still-encoded name and, when
 * the part has an '=', the still-encoded value (val NULL otherwise). */
struct query_part {
  const char *key, *val;
  size_t klen, vlen;
};

/* Splits the part at *p (a query string or NULL) into q and moves *p past its
 * '&' (NULL after the last part). False when no part is left. */
static bool query_next(const char **p, struct query_part *q) {
  const char *s = *p;
  if (s == NULL || *s == '\0')
    return false;
  const char *amp = strchr(s, '&');
  size_t len = amp ? (size_t)(amp - s) : strlen(s);
  const char *eq = memchr(s, '=', len);
  q->key = s;
  q->klen = eq ? (size_t)(eq - s) : len;
  q->val = eq ? eq + 1 : NULL;
  q->vlen = eq ? len - q->klen - 1 : 0;
  *p = amp ? amp + 1 : NULL;
  return true;
}

/* Checks every parameter of the query string before the handler runs:
 * decoded names and values must be UTF-8 without NUL or other control
 * characters. On failure answers 400 and returns false. */
static bool tt_request_query_acceptable(struct tt_request *req) {
  const char *p = req->query;
  struct query_part q;
  while (query_next(&p, &q)) {
    size_t kn = 0, vn = 0;
    char *key = query_decode(&req->arena, q.key, q.klen, &kn);
    char *val = q.val ? query_decode(&req->arena, q.val, q.vlen, &vn) : NULL;
    if (key == NULL || (q.val && val == NULL)) {
      tt_request_fail(req, TT_ERR_INTERNAL, NULL, "out of memory");
      return false;
    }
    bool key_ok = text_acceptable(key, kn);
    if (!key_ok || (val && !text_acceptable(val, vn))) {
      /* Name the parameter only when its name itself is clean. */
      tt_request_fail(req, TT_ERR_VALIDATION, key_ok ? key : "query",
                      "query parameter %s: decoded names and values must be UTF-8 text "
                      "without NUL or other control characters",
                      key_ok ? key : "(name)");
      return false;
    }
  }
  return true;
}

const char *tt_request_query(struct tt_request *req, const char *name) {
  size_t nl = strlen(name);
  const char *p = req->query;
  struct query_part q;
  while (query_next(&p, &q)) {
    char *key = query_decode(&req->arena, q.key, q.klen, NULL);
    if (key && strlen(key) == nl && memcmp(key, name, nl) == 0)
      return q.val ? query_decode(&req->arena, q.val, q.vlen, NULL) : "";
  }
  return NULL;
}

const char *tt_request_param(struct tt_request *req, const char *name) {
  const struct tt_route_param *p = tt_route_param(&req->match, name);
  if (p == NULL)
    return NULL;
  char *out = tt_arena_alloc(&req->arena, p->len + 1);
  if (out == NULL)
    return NULL;
  /* The first of a control character and a malformed escape is refused. */
  long n = tt_request_unescape(p->value, p->len, out, false);
  size_t o = n < 0 ? (size_t)(-n - 1) : (size_t)n;
  for (size_t i = 0; i < o; i++)
    if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f) {
      tt_request_fail(req, TT_ERR_VALIDATION, name,
                      "%s may not contain NUL or other control characters", name);
      return NULL;
    }
  if (n < 0) {
    tt_request_fail(req, TT_ERR_VALIDATION, name, "%s has a malformed %%-escape", name);
    return NULL;
  }
  if (!tt_utf8_valid(out, o)) {
    tt_request_fail(req, TT_ERR_VALIDATION, name, "%s must be valid UTF-8 once decoded", name);
    return NULL;
  }
  return out;
}

void tt_request_respond_failure(struct tt_request *req, const struct tt_error *err,
                                const json_t *details, uint32_t retry_after_s) {
  tt_request_respond_error(req, err, details);
  if (retry_after_s)
    snprintf(req->resp.retry_after, sizeof(req->resp.retry_after), "%u", retry_after_s);
}

void tt_request_respond_buf(struct tt_request *req, unsigned status, struct tt_buf *b) {
  if (status == 204 || b->len == 0) {
    tt_request_respond_static(req, status, "application/json", "", 0);
  } else {
    size_t len;
    char *text = tt_buf_steal(b, &len);
    tt_request_respond_static(req, status, "application/json", text, len);
    req->resp.body_static = false; /* ours to free */
  }
  tt_buf_free(b);
}

void tt_request_respond_rendered(struct tt_request *req, const struct tt_orm_result *r,
                                 struct tt_buf *b) {
  if (r->status != 0) {
    tt_request_respond_failure(req, &r->err, r->details, r->retry_after_s);
    tt_buf_free(b);
  } else {
    tt_request_respond_buf(req, 200, b);
  }
}

void tt_request_respond_result(struct tt_request *req, const struct tt_orm_result *r) {
  if (r->status != 0)
    tt_request_respond_failure(req, &r->err, r->details, r->retry_after_s);
  else if (r->answer == TT_ORM_ANSWER_NONE)
    tt_request_respond_static(req, 204, "application/json", "", 0);
  else
    tt_request_fail(req, TT_ERR_INTERNAL, NULL, "the handler did not render its answer");
}

static enum MHD_Result queue_answer(struct tt_request *req) {
  struct tt_response *r = &req->resp;
  enum MHD_ResponseMemoryMode mode = r->body_static ? MHD_RESPMEM_PERSISTENT : MHD_RESPMEM_MUST_FREE;
  struct MHD_Response *mr = MHD_create_response_from_buffer(r->body_len, r->body, mode);
  if (mr == NULL)
    return MHD_NO;
  r->body = NULL; /* MHD owns it now */
  MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type);
  MHD_add_response_header(mr, "X-Request-Id", req->request_id);
  if (tt_tracer_on() && req->trace.valid) {
    char tr[TT_TRACEPARENT_LEN + 1];
    tt_traceparent_format(&req->trace, tr);
    MHD_add_response_header(mr, "traceresponse", tr);
  }
  if (r->allow[0])
    MHD_add_response_header(mr, MHD_HTTP_HEADER_ALLOW, r->allow);
  if (r->etag[0])
    MHD_add_response_header(mr, MHD_HTTP_HEADER_ETAG, r->etag);
  if (r->retry_after[0])
    MHD_add_response_header(mr, MHD_HTTP_HEADER_RETRY_AFTER, r->retry_after);
  if (req->server->draining || req->must_close)
    MHD_add_response_header(mr, MHD_HTTP_HEADER_CONNECTION, "close");
  enum MHD_Result rc = MHD_queue_response(req->conn, r->status, mr);
  MHD_destroy_response(mr);
  req->state = TT_REQ_ANSWERED;
  return rc;
}

/* ---- operations, deadline, disconnect ----------------------------------- */

static void request_free(struct tt_request *req) {
  struct tt_server *s = req->server;
  response_clear(&req->resp);
  tt_buf_free(&req->body);
  tt_span_free(req->span);
  if (!s->closed && s->nspare < TT_SERVER_SPARE_REQUESTS) {
    tt_arena_reset(&req->arena); /* the next request's first page */
    req->next = s->spare;
    s->spare = req;
    s->nspare++;
    ASAN_POISON_MEMORY_REGION(req, sizeof(*req));
  } else {
    tt_arena_free(&req->arena);
    free(req);
  }
  s->active--;
  tt_metric_set(s->fams->inflight_requests, NULL, (double)s->active);
  if (s->active == 0 && s->quiet)
    s->quiet(s->hook_arg);
  if (s->draining && s->active == 0 && s->idle)
    s->idle(s->hook_arg);
}

/* Frees once libmicrohttpd is done with the request and every handle the
 * context embeds is closed (libuv: memory only after the close callback). */
static void request_release(struct tt_request *req) {
  if (req->mhd_done && req->open_handles == 0)
    request_free(req);
}

static void handle_closed_cb(uv_handle_t *h) {
  struct tt_request *req = h->data;
  req->open_handles--;
  request_release(req);
}

/* The join's completion: every operation finished. Build the answer (unless
 * the handler already did) and hand the connection back to MHD. */
static void joined_cb(struct tt_join *j, void *arg) {
  struct tt_request *req = arg;
  (void)j;
  /* The continuation always runs: it owns the handler's state and frees it. */
  if (!req->responded && req->on_joined)
    req->on_joined(req);
  if (!req->responded && req->join.failed)
    tt_request_respond_error(req, &req->join.first_error, NULL);
  /* After a cancel (deadline, drain) the handler's answer stands when it
   * says something the client needs: a success (the work was done), an
   * error that happened first, or what was written and what not
   * (BatchIncomplete). Only an answer that merely reports the
   * cancellation (or none) becomes the deadline's or the drain's. */
  bool cancel_only = !req->responded || req->error_code == TT_ERR_BACKEND_TIMEOUT;
  if (req->deadline_hit && cancel_only) {
    tt_request_fail(req, TT_ERR_BACKEND_TIMEOUT, NULL,
                    "the request deadline of %llu ms passed before the backend answered",
                    (unsigned long long)req->server->opts.request_timeout_ms);
  } else if (req->drain_canceled && !req->deadline_hit && cancel_only) {
    tt_request_fail(req, TT_ERR_DRAINING, NULL, "the daemon is shutting down");
  }
  if (!req->responded)
    tt_request_fail(req, TT_ERR_INTERNAL, NULL, "the handler produced no answer");
  req->state = TT_REQ_ANSWERING;
  if (!req->suspended)
    return; /* joined inside dispatch: the access callback answers */
  req->suspended = false;
  /* Close our handles before MHD may close the socket the poll watches. */
  if (req->deadline_started)
    uv_close((uv_handle_t *)&req->deadline, handle_closed_cb);
  if (req->watch_started)
    uv_close((uv_handle_t *)&req->watch, handle_closed_cb);
  LIST_UNLINK(req->server->suspended, req, prev, next);
  MHD_resume_connection(req->conn);
  if (req->server->wake)
    req->server->wake(req->server->hook_arg);
}

static void watch_cb(uv_poll_t *p, int status, int events) {
  struct tt_request *req = p->data;
  if (status == 0 && (events & UV_DISCONNECT)) {
    /* A FIN alone is also what a client sends that half-closes after its
     * request (shutdown(SHUT_WR), `nc -N`) and still reads: keep serving,
     * and from now on watch only for errors, i.e. a reset. Only a reset (or
     * the deadline) tells a client that is really gone. */
    char c;
    ssize_t n = recv(req->watch_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n >= 0 || errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      uv_poll_start(p, UV_PRIORITIZED, watch_cb);
      return;
    }
  }
  /* The client reset the connection while we were working: stop watching
   * (the event stays level-triggered), cancel, and still join everything. */
  uv_poll_stop(p);
  req->client_gone = true;
  tt_join_cancel(&req->join);
}

/* Starts noticing the client leaving. A second uv_poll on one fd would be
 * refused within a loop, but MHD watches the socket through its own epoll
 * set, so ours may watch too. */
static void start_disconnect_watch(struct tt_request *req) {
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(req->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
  if (ci && uv_poll_init(req->server->loop, &req->watch, ci->connect_fd) == 0) {
    req->watch.data = req;
    req->watch_fd = ci->connect_fd;
    req->watch_started = true;
    req->open_handles++;
    uv_poll_start(&req->watch, UV_DISCONNECT, watch_cb);
  }
}

/* Most requests finish within a few loop iterations; watching the socket
 * costs two epoll_ctl calls, so the watch starts only when a request is
 * still running after this long. */
#define WATCH_DELAY_MS 20

static void deadline_cb(uv_timer_t *t) {
  struct tt_request *req = t->data;
  uint64_t now = uv_now(req->server->loop);
  if (!req->watch_started && now < req->deadline_at) {
    start_disconnect_watch(req);
    uv_timer_start(&req->deadline, deadline_cb, req->deadline_at - now, 0);
    return;
  }
  req->deadline_hit = true;
  tt_join_cancel(&req->join);
}

/* Arms the deadline (and, through it, the disconnect watch) for a
 * suspended request. A failure to arm only loses that safeguard; the
 * request still ends when its operations do. */
static void start_watch(struct tt_request *req) {
  struct tt_server *s = req->server;
  /* The deadline counts from the request line, so a slow body uses it up. */
  req->deadline_at = req->start_ms + s->opts.request_timeout_ms;
  uint64_t now = uv_now(s->loop);
  uint64_t left = req->deadline_at > now ? req->deadline_at - now : 0;
  if (uv_timer_init(s->loop, &req->deadline) == 0) {
    req->deadline.data = req;
    req->deadline_started = true;
    req->open_handles++;
    uint64_t first = left < WATCH_DELAY_MS ? left : WATCH_DELAY_MS;
    uv_timer_start(&req->deadline, deadline_cb, first, 0);
  } else {
    start_disconnect_watch(req);
  }
}

/* ---- libmicrohttpd callbacks -------------------------------------------- */

static bool is_json_type(const char *ct) {
  if (ct == NULL)
    return false;
  size_t n = strcspn(ct, ";");
  while (n > 0 && ct[n - 1] == ' ')
    n--;
  return (n == 16 && strncasecmp(ct, "application/json", 16) == 0) ||
         (n > 5 && strncasecmp(ct + n - 5, "+json", 5) == 0);
}

static bool authorized(struct tt_request *req) {
  const char *token = req->server->opts.auth_token;
  if (token == NULL || !(req->match.route->flags & TT_ROUTE_AUTH))
    return true;
  const char *h = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, "Authorization");
  /* RFC 7235: the scheme is case-insensitive, then one or more spaces. */
  if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0)
    return false;
  h += 7;
  while (*h == ' ')
    h++;
  size_t n = strlen(token);
  /* Constant time over the token; only its length can be learned. */
  return strlen(h) == n && CRYPTO_memcmp(h, token, n) == 0;
}

/* Picks the partner account named by X-TableTheory-Partner, before any
 * I/O. Returns 0 (req->account set; 0 without the header) or -1 after
 * failing the request with UnknownPartner. The id is never echoed: it is
 * the client's input and may hold anything. */
static int select_partner(struct tt_request *req) {
  const struct tt_api_options *o = &req->server->opts;
  const char *h = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, TT_API_PARTNER_HEADER);
  if (h == NULL)
    return 0;
  for (size_t i = 0; i < o->n_partners; i++) {
    if (strcmp(h, o->partners[i]) == 0) {
      req->account = (unsigned)(i + 1);
      req->partner = o->partners[i];
      return 0;
    }
  }
  tt_request_fail(req, TT_ERR_UNKNOWN_PARTNER, TT_API_PARTNER_HEADER,
                  o->n_partners ? "the " TT_API_PARTNER_HEADER
                                  " header names no partner of the configuration (\"partners\")"
                                : "the " TT_API_PARTNER_HEADER
                                  " header was sent but no partner accounts are configured");
  return -1;
}

/* The request line arrived: allocate the context; the deadline starts. */
static struct tt_request *request_new(struct tt_server *s, struct MHD_Connection *conn) {
  struct tt_request *req = s->spare;
  if (req != NULL) {
    ASAN_UNPOISON_MEMORY_REGION(req, sizeof(*req));
    s->spare = req->next;
    s->nspare--;
    struct tt_arena arena = req->arena;
    memset(req, 0, sizeof(*req));
    req->arena = arena;
  } else if ((req = calloc(1, sizeof(*req))) == NULL) {
    return NULL;
  }
  req->server = s;
  req->conn = conn;
  req->start_ns = tt_server_now_ns();
  req->start_ms = uv_now(s->loop);
  req->route_label = "unmatched";
  req->state = TT_REQ_READING;
  req->watch_fd = -1;
  tt_buf_init(&req->body, s->opts.max_body_bytes);
  s->active++;
  tt_metric_set(s->fams->inflight_requests, NULL, (double)s->active);
  req->query = "";
  return req;
}

/* libmicrohttpd 0.9.75 leaves the header fields NUL-terminated in place in
 * its read buffer, in order, after the request line (api/framing.h): the
 * layout checks rely on exactly that parser, so they are on for it only. */
#if MHD_VERSION >= 0x00097500 && MHD_VERSION < 0x00097600
#define FIELDS_IN_PLACE 1
#else
#define FIELDS_IN_PLACE 0
#endif

static enum MHD_Result framing_field_cb(void *cls, enum MHD_ValueKind kind, const char *key,
                                        size_t key_size, const char *value, size_t value_size) {
  (void)kind;
  return tt_framing_field(cls, key, key_size, value, value_size) ? MHD_YES : MHD_NO;
}

/* Whether the request target has a byte no request line may carry there
 * (a space would make the line read differently by another parser). */
static bool target_acceptable(const char *s) {
  for (; *s; s++)
    if ((unsigned char)*s <= 0x20 || *s == 0x7f)
      return false;
  return true;
}

/* With MHD 0.9.75 the request line is split in place: method, target and
 * version each NUL-terminated where a space was, the '?' (and, through
 * tt_server_uri_cb, the query's first byte) NUL too. Each part must end
 * where the next begins, so no NUL hides inside one and no second space
 * separates them. */
static bool request_line_in_place(const struct tt_request *req, const char *method,
                                  const char *url, const char *version) {
  if (strlen(version) != 8 || method + strlen(method) + 1 != url)
    return false;
  const char *e = url + strlen(url);
  if (e + 1 != version)
    e += 1 + strlen(req->query);
  return e + 1 == version;
}

/* The framing checks (api/framing.h), in one pass over the headers, before
 * anything else: false after failing the request, which is then answered at
 * once and its connection closed (RFC 9112 6.3: its length is unknown). */
static bool framing_acceptable(struct tt_request *req, const char *method, const char *url,
                               const char *version) {
  struct tt_framing f = {0};
  size_t vlen = strlen(version);
  bool http10 = vlen == 8 && memcmp(version, "HTTP/1.0", 8) == 0;
  const char *line_end = FIELDS_IN_PLACE ? version + vlen : NULL;
  bool ok = false;
  if (!target_acceptable(url) || !target_acceptable(req->query)) {
    f.why = "the request target may not contain spaces or control characters";
  } else if (FIELDS_IN_PLACE && !request_line_in_place(req, method, url, version)) {
    f.why = "the request line must be a method, a request target and an HTTP version, "
            "separated by single spaces, without NUL bytes";
  } else {
    /* The section runs from the request line (`method` is its start) over
     * the size MHD counted. */
    const char *section_end = NULL;
    if (FIELDS_IN_PLACE) {
      const union MHD_ConnectionInfo *ci =
          MHD_get_connection_info(req->conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
      section_end = ci ? method + ci->header_size : method;
    }
    ok = tt_framing_begin(&f, line_end);
    if (ok) {
      MHD_get_connection_values_n(req->conn, MHD_HEADER_KIND, framing_field_cb, &f);
      ok = tt_framing_end(&f, http10, section_end);
    }
  }
  if (ok)
    return true;
  const char *field = f.field;
  if (field == NULL && f.name && f.name_len <= 64)
    field = tt_arena_strndup(&req->arena, f.name, f.name_len);
  tt_request_fail(req, TT_ERR_VALIDATION, field, "malformed request: %s", f.why);
  req->must_close = true;
  return false;
}

static bool has_body(struct tt_request *req) {
  const char *cl = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND,
                                               MHD_HTTP_HEADER_CONTENT_LENGTH);
  const char *te = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND,
                                               MHD_HTTP_HEADER_TRANSFER_ENCODING);
  return (cl && strcmp(cl, "0") != 0) || te != NULL;
}

static void body_too_large(struct tt_request *req) {
  tt_request_fail(req, TT_ERR_PAYLOAD_TOO_LARGE, "body",
                  "the body is larger than the limit of %llu bytes (--max-body-bytes)",
                  (unsigned long long)req->server->opts.max_body_bytes);
}

/* Decides, before any body byte is read, whether the request is refused. */
static void precheck(struct tt_request *req, const char *url) {
  struct tt_server *s = req->server;
  if (s->draining) {
    tt_request_fail(req, TT_ERR_DRAINING, NULL, "the daemon is shutting down; retry elsewhere");
    return;
  }
  unsigned enabled = (s->opts.enable_fault_injection ? TT_ROUTE_FAULTS : 0) |
                     (s->opts.enable_test_clock ? TT_ROUTE_TEST_CLOCK : 0);
  int rc = tt_router_match(&s->router, req->method, url, strlen(url), enabled, &req->match);
  if (rc == TT_ROUTER_NO_PATH) {
    tt_request_fail(req, TT_ERR_ROUTE_NOT_FOUND, NULL, "no route matches this path");
    return;
  }
  if (rc == TT_ROUTER_NO_METHOD) {
    tt_request_fail(req, TT_ERR_METHOD_NOT_ALLOWED, NULL, "method %s is not allowed here",
                    req->method ? req->method_name : "(unknown)");
    tt_method_allow_header(req->match.allow, req->resp.allow, sizeof(req->resp.allow));
    return;
  }
  req->route_label = req->match.route->pattern;
  if (!authorized(req)) {
    tt_request_fail(req, TT_ERR_UNAUTHORIZED, NULL,
                    "send the configured token as 'Authorization: Bearer <token>'");
    return;
  }
  if ((req->match.route->flags & TT_ROUTE_AUTH) && select_partner(req) != 0)
    return;
  const char *cl = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND,
                                               MHD_HTTP_HEADER_CONTENT_LENGTH);
  if (cl && strtoull(cl, NULL, 10) > s->opts.max_body_bytes) {
    body_too_large(req);
    return;
  }
  if (has_body(req) && !is_json_type(MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND,
                                                            MHD_HTTP_HEADER_CONTENT_TYPE))) {
    tt_request_fail(req, TT_ERR_UNSUPPORTED_MEDIA, "Content-Type",
                    "send the body as JSON with 'Content-Type: application/json'");
    return;
  }
}

/* How long one request's dispatch may run the backend's ready calls before
 * its connection is suspended and the rest completes from the loop: ample
 * for a GET, a query page chain or a batch on the memory backend, short
 * enough that one long scan does not hold up other connections, deadlines
 * or the drain. */
#define READY_SLICE_NS (5u * 1000000u)

void tt_server_run_ready(uv_loop_t *loop, struct tt_client *client, uint64_t deadline_ms) {
  uint64_t now_ms = uv_now(loop);
  if (deadline_ms <= now_ms)
    return;
  uint64_t slice = (deadline_ms - now_ms) * 1000000u;
  if (slice > READY_SLICE_NS)
    slice = READY_SLICE_NS;
  tt_client_run_ready(client, tt_server_now_ns() + slice);
}

static void dispatch(struct tt_request *req) {
  struct tt_server *s = req->server;
  tt_join_init(&req->join, s->fams, joined_cb, req);
  req->join.account = req->account;
  if (req->span)
    req->join.trace = req->span->ctx;
  req->join.deadline_ms = req->start_ms + s->opts.request_timeout_ms;
  tt_handler_fn fn = (tt_handler_fn)req->match.route->handler;
  if (tt_request_query_acceptable(req))
    fn(req);
  tt_join_release(&req->join); /* may complete synchronously */
  if (req->state != TT_REQ_RUNNING || s->orm == NULL)
    return;
  /* The handler has returned, so nothing of it is on the stack: complete
   * what the backend can answer now (backend.h: run_ready, the trampoline).
   * When that joins the request, the access callback answers at once and
   * the connection is never suspended. Bounded by the slice and by the
   * request's deadline, which only a suspended request's timer enforces. */
  tt_server_run_ready(s->loop, s->orm->client, req->join.deadline_ms);
}

/* A refusal decided from the headers is answered before the body is read
 * when reading it would be wasted or unwelcome: a body over the limit, a
 * client without the token, or one that waits for "100 Continue" (it has
 * sent nothing yet). MHD 0.9.75 then closes the connection; a lingering
 * close lets the client finish sending and read the answer. Other refusals
 * read and drop the body, which keeps the connection alive. */
static bool answer_at_once(struct tt_request *req) {
  if (!req->responded || !has_body(req))
    return false;
  const char *expect = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND,
                                                   MHD_HTTP_HEADER_EXPECT);
  return req->resp.status == 413 || req->resp.status == 401 ||
         (expect && strcasecmp(expect, "100-continue") == 0);
}

enum MHD_Result tt_server_access_cb(void *cls, struct MHD_Connection *conn, const char *url,
                                    const char *method, const char *version,
                                    const char *upload_data, size_t *upload_data_size,
                                    void **con_cls) {
  struct tt_server *s = cls;
  struct tt_request *req = *con_cls;
  if (req == NULL)
    return MHD_NO; /* the URI callback could not allocate: close */
  if (!req->headers_done) { /* the first call: the headers are complete */
    req->headers_done = true;
    req->method_name = method;
    req->method = tt_method_parse(method);
    set_ids(req);
    if (req->tconn)
      req->tconn->deadline = req->start_ms + s->opts.request_timeout_ms;
    /* A refusal of the framing may leave unread bytes (a hidden body): it
     * lingers so the client still reads the answer, as answer_at_once's. */
    bool now = !framing_acceptable(req, method, url, version);
    if (!now) {
      precheck(req, url);
      now = answer_at_once(req);
    }
    if (!now)
      return MHD_YES; /* answered on a later call: the connection stays alive */
    if (req->tconn)
      req->tconn->linger = true;
    return queue_answer(req);
  }
  if (req->state == TT_REQ_READING && *upload_data_size > 0) {
    if (!req->responded && tt_buf_append(&req->body, upload_data, *upload_data_size) != 0) {
      body_too_large(req);
      tt_buf_free(&req->body);
    }
    /* A refused request's body is read and dropped so the answer can be
     * sent (MHD 0.9.75 will not answer mid-upload), but only up to a bound:
     * past it the connection is simply closed. */
    if (req->responded) {
      req->discarded += *upload_data_size;
      if (req->discarded > DISCARD_LIMIT)
        return MHD_NO;
    }
    *upload_data_size = 0;
    return MHD_YES;
  }
  switch (req->state) {
  case TT_REQ_READING:
    if (!req->responded) {
      req->state = TT_REQ_RUNNING;
      dispatch(req);
      if (req->state == TT_REQ_RUNNING) {
        /* Operations are outstanding: park the connection until joined. */
        start_watch(req);
        req->suspended = true;
        LIST_PUSH(s->suspended, req, prev, next);
        tt_metric_add(s->fams->http_suspensions, NULL, 1);
        MHD_suspend_connection(conn);
        return MHD_YES;
      }
    }
    return queue_answer(req);
  case TT_REQ_ANSWERING:
    return queue_answer(req);
  case TT_REQ_RUNNING:
  case TT_REQ_ANSWERED:
    break;
  }
  return MHD_YES;
}

static void answered_unlink(struct tt_server *s, struct tt_conn *c) {
  if (c->answered)
    LIST_UNLINK(s->answered, c, aprev, anext);
  c->answered = false;
}

void tt_server_completed_cb(void *cls, struct MHD_Connection *conn, void **con_cls,
                            enum MHD_RequestTerminationCode toe) {
  struct tt_server *s = cls;
  struct tt_request *req = *con_cls;
  (void)conn;
  if (req == NULL)
    return;
  *con_cls = NULL;
  struct tt_conn *c = req->tconn;
  if (c) {
    /* Between requests: the next request line is due within KEEPALIVE_MS. */
    c->req = NULL;
    c->deadline = uv_now(s->loop) + KEEPALIVE_MS;
    req->tconn = NULL;
    /* A client that half-closes mostly does so after its first request:
     * check that one at once (tt_server_after_run); later ones cost no
     * system call per request, the sweep checks idle connections. */
    if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK && c->requests == 1 && !c->answered &&
        !c->killed) {
      c->answered = true;
      LIST_PUSH(s->answered, c, aprev, anext);
    }
  }
  if (req->request_id[0] == '\0')
    set_ids(req);
  uint64_t end_ns = tt_server_now_ns(); /* the duration's and the server span's end */
  double secs = (double)(end_ns - req->start_ns) / 1e9;
  bool gone = req->client_gone || toe != MHD_REQUEST_TERMINATED_COMPLETED_OK ||
              req->state != TT_REQ_ANSWERED;
  /* 499: the client went away before the answer was delivered (nginx's
   * convention), so dashboards can tell it from server errors. A
   * connection we closed at a deadline is logged 408, at the drain timeout
   * 503; neither client got an answer. */
  unsigned status = gone ? 499 : req->resp.status;
  const char *closed_code = NULL;
  if (gone && req->timed_out) {
    status = 408;
    closed_code = "RequestTimeout";
  } else if (gone && req->drain_closed) {
    status = 503;
    closed_code = "Draining";
  } else if (!req->headers_done && toe == MHD_REQUEST_TERMINATED_WITH_ERROR) {
    /* MHD itself refused the request line or headers (malformed, or over
     * its buffer) and answered 400, 414 or 431. */
    status = 400;
    closed_code = "BadRequest";
  }
  char status_text[11];
  tt_server_uint_text(status_text, status);
  const char *labels[3] = {req->route_label, req->method ? req->method_name : "OTHER",
                           status_text};
  tt_metric_add(s->fams->http_requests, labels, 1);
  if (req->trace.valid && (req->trace.flags & TT_TRACE_FLAG_SAMPLED) && tt_tracer_recording()) {
    /* The exemplar points at a trace that was exported (not one whose
     * spans a paused tracer counted instead). */
    tt_metric_observe_exemplar(s->fams->http_duration, labels, secs, req->trace.trace_id,
                               req->trace.span_id, tt_trace_unix_ns(end_ns));
  } else {
    tt_metric_observe(s->fams->http_duration, labels, secs);
  }

  struct tt_log_line l;
  tt_log_begin(&l, status >= 500 && status != 503 ? TT_LOG_ERROR : TT_LOG_INFO,
               "request.completed");
  tt_log_str(&l, "request_id", req->request_id);
  tt_log_str(&l, "method", labels[1]);
  tt_log_str(&l, "route", req->route_label);
  if (req->partner)
    tt_log_str(&l, "partner", req->partner); /* an id from the configuration, not a secret */
  tt_log_int(&l, "status", status);
  if (closed_code)
    tt_log_str(&l, "error_code", closed_code);
  else if (req->error_code != TT_OK)
    tt_log_str(&l, "error_code", tt_error_code_name(req->error_code));
  else if (gone)
    tt_log_str(&l, "error_code", "ClientClosed");
  tt_log_ms(&l, "duration_ms", secs * 1000.0);
  if (req->traceparent[0])
    tt_log_str(&l, "traceparent", req->traceparent);
  if (l.enabled && req->trace.valid) {
    char ids[48];
    tt_trace_hex(req->trace.trace_id, 16, ids);
    tt_trace_hex(req->trace.span_id, 8, ids + 32);
    tt_log_strn(&l, "trace_id", ids, 32);
    tt_log_strn(&l, "span_id", ids + 32, 16);
  }
  const char *model;
  size_t mlen;
  if (l.enabled && route_model(req, &model, &mlen))
    tt_log_strn(&l, "model", model, mlen);
  tt_log_end(&l);
  trace_end(req, labels[1], status,
            closed_code                ? closed_code
            : gone                     ? "ClientClosed"
            : req->error_code != TT_OK ? tt_error_code_name(req->error_code)
                                       : NULL,
            end_ns);

  req->mhd_done = true;
  request_release(req);
}

/* ---- connections: deadlines, lingering close ---------------------------- */

static uint64_t sweep_interval(const struct tt_server *s) {
  uint64_t t = s->opts.header_timeout_ms < s->opts.request_timeout_ms ? s->opts.header_timeout_ms
                                                                      : s->opts.request_timeout_ms;
  t /= 4;
  return t < 10 ? 10 : t > 1000 ? 1000 : t;
}

/* Ends a connection from outside MHD: shutting the socket down makes MHD
 * read EOF and close it through its normal path (completion callback,
 * then the close notification). */
static void conn_kill(struct tt_conn *c) {
  if (c->killed)
    return;
  c->killed = true;
  shutdown(c->fd, SHUT_RDWR);
  if (c->server->wake)
    c->server->wake(c->server->hook_arg);
}

/* Closes c, answered and now between requests, when its client has
 * half-closed: a pipelined request MHD had buffered is already under way
 * (c->req); otherwise the kernel holds the next request's bytes, nothing
 * yet, or only the client's FIN, which recv reports as 0. */
static void close_if_half_closed(struct tt_conn *c) {
  if (c->req || c->killed)
    return;
  char b;
  if (recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
    conn_kill(c);
}

void tt_server_after_run(struct tt_server *s) {
  while (s->answered) {
    struct tt_conn *c = s->answered;
    answered_unlink(s, c);
    close_if_half_closed(c);
  }
}

static void sweep_cb(uv_timer_t *t) {
  struct tt_server *s = t->data;
  if (s->conns == NULL) {
    uv_timer_stop(t);
    return;
  }
  uint64_t now = uv_now(s->loop);
  for (struct tt_conn *c = s->conns; c; c = c->next) {
    /* A request past its headers is timed by its own deadline once it
     * runs; here only reading (headers, body) and waiting between
     * requests are bounded. */
    if (c->killed || (c->req && c->req->state != TT_REQ_READING))
      continue;
    if (now < c->deadline) {
      if (c->req == NULL && c->requests > 0)
        close_if_half_closed(c); /* idle after an answer */
      continue;
    }
    if (c->req)
      c->req->timed_out = true;
    conn_kill(c);
  }
}

void *tt_server_uri_cb(void *cls, const char *uri, struct MHD_Connection *conn) {
  struct tt_server *s = cls;
  struct tt_request *req = request_new(s, conn);
  if (req == NULL)
    return NULL;
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  struct tt_conn *c = ci ? ci->socket_context : NULL;
  if (c && c->magic == CONN_MAGIC) {
    /* The first request's headers are due from accept, later ones' from
     * their request line. */
    if (c->requests++ > 0)
      c->deadline = req->start_ms + s->opts.header_timeout_ms;
    c->linger = false;
    c->req = req;
    req->tconn = c;
  }
  /* Keep the raw query ourselves and hide it from MHD: MHD 0.9.75 parses
   * every parameter into the connection's pool, and a few hundred of
   * them exhaust it so that not even an error can be answered. MHD calls
   * this callback before it parses the arguments (true up to at least
   * 1.0), and `uri` points into its writable read buffer. */
  char *q = strchr(uri, '?');
  if (q) {
    req->query = tt_arena_strndup(&req->arena, q + 1, strlen(q + 1));
    if (req->query == NULL)
      req->query = "";
    q[1] = '\0';
  }
  return req;
}

static void linger_closed_cb(uv_handle_t *h) {
  struct tt_linger *lg = h->data;
  if (--lg->open_handles == 0)
    free(lg);
}

static void linger_end(struct tt_linger *lg) {
  struct tt_server *s = lg->server;
  LIST_UNLINK(s->lingering, lg, prev, next);
  s->nlingering--;
  uv_close((uv_handle_t *)&lg->poll, linger_closed_cb);
  uv_close((uv_handle_t *)&lg->timer, linger_closed_cb);
  close(lg->fd); /* the poll no longer watches it */
}

static void linger_timer_cb(uv_timer_t *t) { linger_end(t->data); }

static void linger_poll_cb(uv_poll_t *p, int status, int events) {
  struct tt_linger *lg = p->data;
  (void)events;
  char buf[16384];
  for (;;) {
    ssize_t n = status < 0 ? -1 : recv(lg->fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n > 0) {
      lg->dropped += (size_t)n;
      if (lg->dropped <= LINGER_BYTES)
        continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      return;
    }
    linger_end(lg); /* EOF, an error, or too much */
    return;
  }
}

/* Called while MHD closes a connection it answered early: keep a dup of
 * the socket open (MHD removes its own fd from its epoll set before
 * closing it) and drop its input until EOF or a bound. Best effort: on any
 * failure the socket simply closes. */
static void linger_start(struct tt_server *s, int fd) {
  if (s->closed || s->nlingering >= LINGER_MAX)
    return;
  struct tt_linger *lg = calloc(1, sizeof(*lg));
  if (lg == NULL)
    return;
  lg->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (lg->fd < 0) {
    free(lg);
    return;
  }
  shutdown(lg->fd, SHUT_WR); /* the answer is out: say so with a FIN */
  lg->server = s;
  if (uv_poll_init(s->loop, &lg->poll, lg->fd) != 0) {
    close(lg->fd);
    free(lg);
    return;
  }
  uv_timer_init(s->loop, &lg->timer);
  lg->poll.data = lg->timer.data = lg;
  lg->open_handles = 2;
  LIST_PUSH(s->lingering, lg, prev, next);
  s->nlingering++;
  uv_poll_start(&lg->poll, UV_READABLE, linger_poll_cb);
  uv_timer_start(&lg->timer, linger_timer_cb, LINGER_MS, 0);
}

void tt_server_connection_cb(void *cls, struct MHD_Connection *conn, void **socket_context,
                             enum MHD_ConnectionNotificationCode toe) {
  struct tt_server *s = cls;
  if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct tt_conn *c = ci ? calloc(1, sizeof(*c)) : NULL;
    if (c == NULL)
      return; /* untracked: only MHD's own idle timeout applies */
    c->magic = CONN_MAGIC;
    c->server = s;
    c->fd = ci->connect_fd;
    c->deadline = uv_now(s->loop) + s->opts.header_timeout_ms;
    LIST_PUSH(s->conns, c, prev, next);
    *socket_context = c;
    if (!s->sweep_open && !s->closed && uv_timer_init(s->loop, &s->sweep) == 0) {
      s->sweep.data = s;
      s->sweep_open = true;
    }
    if (s->sweep_open && !uv_is_active((uv_handle_t *)&s->sweep)) {
      uint64_t every = sweep_interval(s);
      uv_timer_start(&s->sweep, sweep_cb, every, every);
    }
    return;
  }
  struct tt_conn *c = *socket_context;
  if (c == NULL || c->magic != CONN_MAGIC)
    return;
  *socket_context = NULL;
  answered_unlink(s, c);
  if (c->req)
    c->req->tconn = NULL;
  LIST_UNLINK(s->conns, c, prev, next);
  if (c->linger && !c->killed)
    linger_start(s, c->fd);
  c->magic = 0;
  free(c);
}

size_t tt_server_unescape_cb(void *cls, struct MHD_Connection *conn, char *s) {
  (void)cls;
  (void)conn;
  return strlen(s);
}

void tt_server_drain(struct tt_server *s) {
  s->draining = true;
  if (s->active == 0 && s->idle)
    s->idle(s->hook_arg);
}

void tt_server_cancel_all(struct tt_server *s) {
  for (struct tt_request *req = s->suspended; req; req = req->next)
    req->drain_canceled = true;
  /* Cancel walks may resume requests (unlinking them); restart each time. */
  for (;;) {
    struct tt_request *req = s->suspended;
    while (req && req->join.canceled)
      req = req->next;
    if (req == NULL)
      break;
    tt_join_cancel(&req->join);
  }
  /* A request still arriving (or an answer a client does not read) would
   * hold the drain open: close those connections. Suspended requests answer
   * Draining once joined; idle ones close with MHD. */
  for (struct tt_conn *c = s->conns; c; c = c->next) {
    struct tt_request *req = c->req;
    if (req == NULL || req->state == TT_REQ_RUNNING || req->state == TT_REQ_ANSWERING)
      continue;
    req->drain_closed = true;
    conn_kill(c);
  }
}

void tt_server_close(struct tt_server *s) {
  s->closed = true;
  while (s->spare) {
    struct tt_request *req = s->spare;
    ASAN_UNPOISON_MEMORY_REGION(req, sizeof(*req));
    s->spare = req->next;
    tt_arena_free(&req->arena);
    free(req);
  }
  s->nspare = 0;
  if (s->sweep_open) {
    uv_close((uv_handle_t *)&s->sweep, NULL);
    s->sweep_open = false;
  }
  while (s->lingering)
    linger_end(s->lingering);
}
