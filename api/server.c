/* SPDX-License-Identifier: Apache-2.0 */
/* server.c -- libmicrohttpd callbacks and the request lifecycle: read the
 * body, route, run the handler, suspend until every operation is joined,
 * resume, answer, log, free. */
#include "api/server.h"

#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "api/errors.h"
#include "api/handlers.h"
#include "api/request.h"
#include "value/json_exact.h"
#include "obs/log.h"

#define SERVER_MAGIC 0x74747376u /* "ttsv" */
#define DISCARD_LIMIT (64u << 20)

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void tt_server_init(struct tt_server *s, uv_loop_t *loop, struct tt_families *fams,
                    const struct tt_api_options *opts) {
  memset(s, 0, sizeof(*s));
  s->magic = SERVER_MAGIC;
  s->loop = loop;
  s->fams = fams;
  s->opts = *opts;
  if (getrandom(&s->id_state, sizeof(s->id_state), 0) != (ssize_t)sizeof(s->id_state))
    s->id_state = now_ns();
}

/* splitmix64: cheap, and ids only need to be unique, not secret. */
static uint64_t next_id(struct tt_server *s) {
  uint64_t z = (s->id_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* A client's X-Request-Id is echoed only when it is 1..128 characters of
 * [A-Za-z0-9._:-], so it can never smuggle a value or a control character
 * into a log line or a header; otherwise one is generated. */
static bool request_id_acceptable(const char *v) {
  size_t n = 0;
  for (; v[n]; n++) {
    char c = v[n];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '.' || c == '_' || c == ':' || c == '-'))
      return false;
  }
  return n >= 1 && n <= 128;
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

static void set_ids(struct tt_request *req) {
  const char *rid = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, "X-Request-Id");
  if (rid && request_id_acceptable(rid)) {
    snprintf(req->request_id, sizeof(req->request_id), "%s", rid);
  } else {
    uint64_t a = next_id(req->server), b = next_id(req->server);
    snprintf(req->request_id, sizeof(req->request_id), "%016llx%016llx", (unsigned long long)a,
             (unsigned long long)b);
  }
  const char *tp = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, "traceparent");
  if (tp && traceparent_valid(tp))
    snprintf(req->traceparent, sizeof(req->traceparent), "%s", tp);
}

/* ---- answering ---------------------------------------------------------- */

static void response_clear(struct tt_response *r) {
  if (r->body && !r->body_static)
    free(r->body);
  memset(r, 0, sizeof(*r));
}

void tt_request_respond_json_text(struct tt_request *req, unsigned status, char *body,
                                  size_t len) {
  response_clear(&req->resp);
  req->resp.status = status;
  req->resp.body = body;
  req->resp.body_len = len;
  req->resp.content_type = "application/json";
  req->responded = true;
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

void tt_request_respond_json(struct tt_request *req, unsigned status, const json_t *value) {
  char *text = value ? json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
  if (text == NULL) {
    tt_request_fail(req, TT_ERR_INTERNAL, NULL, "could not encode the answer");
    return;
  }
  tt_request_respond_json_text(req, status, text, strlen(text));
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
  size_t len;
  char *text = tt_buf_steal(&out, &len);
  tt_request_respond_json_text(req, tt_api_error_status(err->code), text, len);
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

static int hexval(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Decodes %XX and '+' of a query component into the arena; *len (when
 * non-NULL) gets the decoded length, NUL bytes included. */
static char *query_decode(struct tt_arena *a, const char *s, size_t n, size_t *len) {
  char *out = tt_arena_alloc(a, n + 1);
  if (out == NULL)
    return NULL;
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
      out[o++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
      i += 2;
    } else if (s[i] == '+') {
      out[o++] = ' ';
    } else {
      out[o++] = s[i];
    }
  }
  out[o] = '\0';
  if (len)
    *len = o;
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

bool tt_request_query_acceptable(struct tt_request *req) {
  const char *p = req->query;
  while (p && *p) {
    const char *amp = strchr(p, '&');
    size_t len = amp ? (size_t)(amp - p) : strlen(p);
    const char *eq = memchr(p, '=', len);
    size_t klen = eq ? (size_t)(eq - p) : len;
    size_t kn = 0, vn = 0;
    char *key = query_decode(&req->arena, p, klen, &kn);
    char *val = eq ? query_decode(&req->arena, eq + 1, len - klen - 1, &vn) : NULL;
    if (key == NULL || (eq && val == NULL)) {
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
    p = amp ? amp + 1 : NULL;
  }
  return true;
}

const char *tt_request_query(struct tt_request *req, const char *name) {
  size_t nl = strlen(name);
  const char *p = req->query;
  while (p && *p) {
    const char *amp = strchr(p, '&');
    size_t len = amp ? (size_t)(amp - p) : strlen(p);
    const char *eq = memchr(p, '=', len);
    size_t klen = eq ? (size_t)(eq - p) : len;
    char *key = query_decode(&req->arena, p, klen, NULL);
    if (key && strlen(key) == nl && memcmp(key, name, nl) == 0)
      return eq ? query_decode(&req->arena, eq + 1, len - klen - 1, NULL) : "";
    p = amp ? amp + 1 : NULL;
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
  size_t o = 0;
  for (size_t i = 0; i < p->len; i++) {
    char c = p->value[i];
    if (c == '%') {
      if (i + 2 >= p->len || hexval(p->value[i + 1]) < 0 || hexval(p->value[i + 2]) < 0) {
        tt_request_fail(req, TT_ERR_VALIDATION, name, "%s has a malformed %%-escape", name);
        return NULL;
      }
      c = (char)(hexval(p->value[i + 1]) * 16 + hexval(p->value[i + 2]));
      i += 2;
    }
    if ((unsigned char)c < 0x20 || c == 0x7f) {
      tt_request_fail(req, TT_ERR_VALIDATION, name,
                      "%s may not contain NUL or other control characters", name);
      return NULL;
    }
    out[o++] = c;
  }
  out[o] = '\0';
  if (!tt_utf8_valid(out, o)) {
    tt_request_fail(req, TT_ERR_VALIDATION, name, "%s must be valid UTF-8 once decoded", name);
    return NULL;
  }
  return out;
}

void tt_request_respond_result(struct tt_request *req, struct tt_orm_result *r) {
  if (r->status != 0) {
    tt_request_respond_error(req, &r->err, r->details);
    if (r->retry_after_s)
      snprintf(req->resp.retry_after, sizeof(req->resp.retry_after), "%u", r->retry_after_s);
    return;
  }
  if (r->http_status == 204 || r->body.len == 0) {
    tt_request_respond_static(req, r->http_status, "application/json", "", 0);
  } else {
    size_t len;
    char *text = tt_buf_steal(&r->body, &len);
    tt_request_respond_json_text(req, r->http_status, text, len);
  }
  if (r->etag[0])
    snprintf(req->resp.etag, sizeof(req->resp.etag), "%s", r->etag);
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
  if (r->allow[0])
    MHD_add_response_header(mr, MHD_HTTP_HEADER_ALLOW, r->allow);
  if (r->etag[0])
    MHD_add_response_header(mr, MHD_HTTP_HEADER_ETAG, r->etag);
  if (r->retry_after[0])
    MHD_add_response_header(mr, MHD_HTTP_HEADER_RETRY_AFTER, r->retry_after);
  if (req->server->draining)
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
  tt_arena_free(&req->arena);
  req->magic = 0;
  free(req);
  s->active--;
  tt_metric_set(s->fams->inflight_requests, NULL, (double)s->active);
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

static void unlink_suspended(struct tt_request *req) {
  struct tt_server *s = req->server;
  if (req->prev)
    req->prev->next = req->next;
  else if (s->suspended == req)
    s->suspended = req->next;
  if (req->next)
    req->next->prev = req->prev;
  req->prev = req->next = NULL;
}

/* The join's completion: every operation finished. Build the answer (unless
 * the handler already did) and hand the connection back to MHD. */
static void joined_cb(struct tt_join *j, void *arg) {
  struct tt_request *req = arg;
  (void)j;
  /* The continuation always runs: it owns the handler's state and frees it. */
  if (!req->responded && req->on_joined)
    req->on_joined(req);
  if (req->deadline_hit) {
    tt_request_fail(req, TT_ERR_BACKEND_TIMEOUT, NULL,
                    "the request deadline of %llu ms passed before the backend answered",
                    (unsigned long long)req->server->opts.request_timeout_ms);
  } else if (req->drain_canceled) {
    tt_request_fail(req, TT_ERR_DRAINING, NULL, "the daemon is shutting down");
  } else if (!req->responded && req->join.failed) {
    tt_request_respond_error(req, &req->join.first_error, NULL);
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
  unlink_suspended(req);
  MHD_resume_connection(req->conn);
  if (req->server->wake)
    req->server->wake(req->server->hook_arg);
}

static void watch_cb(uv_poll_t *p, int status, int events) {
  struct tt_request *req = p->data;
  (void)events;
  (void)status;
  /* The client closed its side while we were working: stop watching (the
   * event stays level-triggered), cancel, and still join everything. */
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
  req->deadline_at = uv_now(s->loop) + s->opts.request_timeout_ms;
  if (uv_timer_init(s->loop, &req->deadline) == 0) {
    req->deadline.data = req;
    req->deadline_started = true;
    req->open_handles++;
    uint64_t first = s->opts.request_timeout_ms < WATCH_DELAY_MS ? s->opts.request_timeout_ms
                                                                 : WATCH_DELAY_MS;
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

/* First call for a request: allocate the context, route, check headers. */
static struct tt_request *request_new(struct tt_server *s, struct MHD_Connection *conn,
                                      const char *url, const char *method) {
  struct tt_request *req = calloc(1, sizeof(*req));
  if (req == NULL)
    return NULL;
  req->magic = TT_REQUEST_MAGIC;
  req->server = s;
  req->conn = conn;
  req->start_ns = now_ns();
  req->method_name = method;
  req->method = tt_method_parse(method);
  req->route_label = "unmatched";
  req->state = TT_REQ_READING;
  tt_arena_init(&req->arena);
  tt_buf_init(&req->body, s->opts.max_body_bytes);
  s->active++;
  tt_metric_set(s->fams->inflight_requests, NULL, (double)s->active);
  set_ids(req);
  req->query = "";
  return req;
}

/* Decides, before any body byte is read, whether the request is refused. */
static void precheck(struct tt_request *req, const char *url) {
  struct tt_server *s = req->server;
  if (s->draining) {
    tt_request_fail(req, TT_ERR_DRAINING, NULL, "the daemon is shutting down; retry elsewhere");
    return;
  }
  unsigned enabled = s->opts.enable_fault_injection ? TT_ROUTE_FAULTS : 0;
  int rc = tt_router_match(tt_api_routes, tt_api_nroutes, req->method, url, strlen(url), enabled,
                           &req->match);
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
  const char *cl = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND,
                                               MHD_HTTP_HEADER_CONTENT_LENGTH);
  const char *te = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND,
                                               MHD_HTTP_HEADER_TRANSFER_ENCODING);
  bool has_body = (cl && strcmp(cl, "0") != 0) || te != NULL;
  if (cl && strtoull(cl, NULL, 10) > s->opts.max_body_bytes) {
    tt_request_fail(req, TT_ERR_PAYLOAD_TOO_LARGE, "body",
                    "the body is larger than the limit of %llu bytes (--max-body-bytes)",
                    (unsigned long long)s->opts.max_body_bytes);
    return;
  }
  if (has_body && !is_json_type(MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND,
                                                            MHD_HTTP_HEADER_CONTENT_TYPE))) {
    tt_request_fail(req, TT_ERR_UNSUPPORTED_MEDIA, "Content-Type",
                    "send the body as JSON with 'Content-Type: application/json'");
    return;
  }
}

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value) {
  struct tt_buf *q = cls;
  (void)kind;
  if (q->len)
    tt_buf_puts(q, "&");
  tt_buf_puts(q, key);
  if (value) {
    tt_buf_puts(q, "=");
    tt_buf_puts(q, value);
  }
  return MHD_YES;
}

static void dispatch(struct tt_request *req) {
  struct tt_buf q;
  tt_buf_init(&q, 0);
  if (MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, collect_arg, &q) > 0 && q.data)
    req->query = tt_arena_strndup(&req->arena, q.data, q.len);
  tt_buf_free(&q);
  if (req->query == NULL)
    req->query = "";
  tt_join_init(&req->join, req->server->fams, joined_cb, req);
  tt_handler_fn fn = (tt_handler_fn)req->match.route->handler;
  if (tt_request_query_acceptable(req))
    fn(req);
  tt_join_release(&req->join); /* may complete synchronously */
}

enum MHD_Result tt_server_access_cb(void *cls, struct MHD_Connection *conn, const char *url,
                                    const char *method, const char *version,
                                    const char *upload_data, size_t *upload_data_size,
                                    void **con_cls) {
  struct tt_server *s = cls;
  struct tt_request *req = *con_cls;
  (void)version;
  if (req == NULL) {
    req = request_new(s, conn, url, method);
    if (req == NULL)
      return MHD_NO;
    *con_cls = req;
    precheck(req, url);
    /* An early refusal with a body still on the wire is answered now (MHD
     * then closes the connection); otherwise answer on a later call, which
     * keeps the connection alive. */
    if (req->responded && *upload_data_size == 0 &&
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH) &&
        req->resp.status == 413)
      return queue_answer(req);
    return MHD_YES;
  }
  if (req->state == TT_REQ_READING && *upload_data_size > 0) {
    if (!req->responded && tt_buf_append(&req->body, upload_data, *upload_data_size) != 0) {
      tt_request_fail(req, TT_ERR_PAYLOAD_TOO_LARGE, "body",
                      "the body is larger than the limit of %llu bytes (--max-body-bytes)",
                      (unsigned long long)s->opts.max_body_bytes);
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
        req->next = s->suspended;
        if (s->suspended)
          s->suspended->prev = req;
        s->suspended = req;
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

void tt_server_completed_cb(void *cls, struct MHD_Connection *conn, void **con_cls,
                            enum MHD_RequestTerminationCode toe) {
  struct tt_server *s = cls;
  struct tt_request *req = *con_cls;
  (void)conn;
  if (req == NULL)
    return;
  *con_cls = NULL;
  double secs = (double)(now_ns() - req->start_ns) / 1e9;
  bool gone = req->client_gone || toe != MHD_REQUEST_TERMINATED_COMPLETED_OK ||
              req->state != TT_REQ_ANSWERED;
  /* 499: the client went away before the answer was delivered (nginx's
   * convention), so dashboards can tell it from server errors. */
  unsigned status = gone ? 499 : req->resp.status;
  char status_text[8];
  snprintf(status_text, sizeof(status_text), "%u", status);
  const char *labels[3] = {req->route_label, req->method ? req->method_name : "OTHER",
                           status_text};
  tt_metric_add(s->fams->http_requests, labels, 1);
  tt_metric_observe(s->fams->http_duration, labels, secs);

  struct tt_log_line l;
  tt_log_begin(&l, status >= 500 && status != 503 ? TT_LOG_ERROR : TT_LOG_INFO,
               "request.completed");
  tt_log_str(&l, "request_id", req->request_id);
  tt_log_str(&l, "method", labels[1]);
  tt_log_str(&l, "route", req->route_label);
  tt_log_int(&l, "status", status);
  if (req->error_code != TT_OK)
    tt_log_str(&l, "error_code", tt_error_code_name(req->error_code));
  else if (gone)
    tt_log_str(&l, "error_code", "ClientClosed");
  tt_log_ms(&l, "duration_ms", secs * 1000.0);
  if (req->traceparent[0])
    tt_log_str(&l, "traceparent", req->traceparent);
  tt_log_end(&l);

  req->mhd_done = true;
  request_release(req);
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
}
