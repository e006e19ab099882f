/* SPDX-License-Identifier: Apache-2.0 */
/* http.c -- outbound HTTP(S) on the libuv loop: the interface, the choice
 * of engine per URL, the one delivery path of completions, and the libcurl
 * engine (one multi handle driven by uv_poll_t/uv_timer_t) for what our
 * engine declines (proxies, unusual URLs). */
#include "backend/dynamodb/http.h"

#include <assert.h>
#include <curl/curl.h>
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backend/dynamodb/http_wire.h"

#define HTTP_MAGIC 0x48545450u /* "HTTP" */
#define HEADERS_CAP (64u * 1024u)
#define MAX_IDLE_CONNECTIONS ((long)TT_HTTP_MAX_IDLE)
/* Idle easy handles kept for reuse. A new handle costs an allocation of
 * libcurl's whole per-transfer state and its initialization, and freeing
 * it again; a reset one keeps both (connections live in the multi handle's
 * cache either way). 16 covers the usual in-flight count of one daemon
 * (fan-outs of 4-8, a few requests); a burst beyond it frees the extras. */
#define EASY_POOL_MAX 16

enum call_state {
  CALL_IDLE = 0,
  CALL_ACTIVE,    /* easy handle in the multi */
  CALL_FINISHED,  /* transfer over, waiting in the finished list */
  CALL_DELIVERED, /* done ran (or is running) */
};

/* One socket curl asked us to watch: exactly one uv_poll_t per fd, because
 * libuv refuses a second poll handle on the same descriptor. */
struct http_sock {
  uv_poll_t poll;
  struct tt_http *h;
  curl_socket_t fd;
};

struct tt_http {
  unsigned magic;
  uv_loop_t *loop;
  CURLM *multi;
  struct tt_http_wire *wire; /* our engine; NULL: libcurl for all */
  bool wire_http, wire_https; /* which schemes go to it (no proxy for them) */
  uv_timer_t timer;   /* curl's own timeout (CURLMOPT_TIMERFUNCTION) */
  uv_timer_t deliver; /* delivers completions made outside curl (cancel) */
  /* Watched sockets indexed by fd. Our own table instead of
   * curl_multi_assign, so no curl_multi_* runs inside a curl callback. */
  struct http_sock **socks;
  size_t nsocks;
  struct tt_http_call *active;                /* doubly linked */
  struct tt_http_call *fin_head, *fin_tail;   /* finished, not delivered */
  CURL *pool[EASY_POOL_MAX]; /* idle easy handles: reset, in no multi */
  size_t npool;
  uint64_t timeout_ms, connect_timeout_ms;
  size_t max_body;
  char *ca_file;     /* --ca-file: both engines, and an https proxy */
  char *curl_cainfo; /* libcurl's CAINFO: ca_file, else SSL_CERT_FILE; NULL = its default */
  char *curl_capath; /* libcurl's CAPATH: SSL_CERT_DIR without ca_file; NULL = its default */
  bool delivering;
  bool closing;
  int pending_closes;
  void (*closed)(void *arg);
  void *closed_arg;
};

/* ---- CURLcode -> transport outcome, in one place ---- */

static enum tt_http_transport map_curlcode(CURLcode rc, bool too_large) {
  switch (rc) {
  case CURLE_OK:
    return TT_HTTP_OK;
  case CURLE_OPERATION_TIMEDOUT:
    return TT_HTTP_TIMEOUT;
  case CURLE_COULDNT_CONNECT:
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_RESOLVE_PROXY:
    return TT_HTTP_CONNECT;
  case CURLE_RECV_ERROR:
  case CURLE_SEND_ERROR:
  case CURLE_GOT_NOTHING:
  case CURLE_PARTIAL_FILE:
  case CURLE_HTTP2:
  case CURLE_HTTP2_STREAM:
    return TT_HTTP_RESET;
  case CURLE_SSL_CONNECT_ERROR:
  case CURLE_PEER_FAILED_VERIFICATION:
  case CURLE_SSL_CERTPROBLEM:
  case CURLE_SSL_CIPHER:
  case CURLE_SSL_CACERT_BADFILE:
  case CURLE_SSL_ISSUER_ERROR:
  case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
  case CURLE_SSL_INVALIDCERTSTATUS:
  case CURLE_SSL_CRL_BADFILE:
  case CURLE_SSL_SHUTDOWN_FAILED:
  case CURLE_SSL_ENGINE_NOTFOUND:
  case CURLE_SSL_ENGINE_SETFAILED:
  case CURLE_SSL_ENGINE_INITFAILED:
  case CURLE_USE_SSL_FAILED:
    return TT_HTTP_TLS;
  case CURLE_FILESIZE_EXCEEDED:
    return TT_HTTP_TOO_LARGE;
  case CURLE_WRITE_ERROR:
    return too_large ? TT_HTTP_TOO_LARGE : TT_HTTP_OTHER;
  default:
    return TT_HTTP_OTHER;
  }
}

/* ---- lists ---- */

static void active_push(struct tt_http *h, struct tt_http_call *c) {
  c->state = CALL_ACTIVE;
  c->prev = NULL;
  c->next = h->active;
  if (h->active)
    h->active->prev = c;
  h->active = c;
}

static void active_unlink(struct tt_http *h, struct tt_http_call *c) {
  if (c->prev)
    c->prev->next = c->next;
  else
    h->active = c->next;
  if (c->next)
    c->next->prev = c->prev;
  c->prev = c->next = NULL;
}

static void fin_push(struct tt_http *h, struct tt_http_call *c) {
  c->state = CALL_FINISHED;
  c->next = NULL;
  c->prev = h->fin_tail;
  if (h->fin_tail)
    h->fin_tail->next = c;
  else
    h->fin_head = c;
  h->fin_tail = c;
}

/* An easy handle for a new transfer: a pooled one (reset when it was put
 * back) or a new one; NULL when out of memory. */
static CURL *easy_get(struct tt_http *h) {
  if (h->npool > 0)
    return h->pool[--h->npool];
  return curl_easy_init();
}

/* Takes back an easy handle that is in no multi handle. Only the handle of
 * a transfer that completed normally is kept: one that was canceled or
 * failed is freed, so no state of a broken transfer can reach the next
 * one. curl_easy_reset drops every option, among them the pointers to the
 * finished call (PRIVATE, WRITEDATA, HEADERDATA, POSTFIELDS, HTTPHEADER). */
static void easy_put(struct tt_http *h, CURL *e, bool reusable) {
  if (reusable && h->npool < EASY_POOL_MAX && !h->closing) {
    curl_easy_reset(e);
    h->pool[h->npool++] = e;
    return;
  }
  curl_easy_cleanup(e);
}

static void pool_free(struct tt_http *h) {
  while (h->npool > 0)
    curl_easy_cleanup(h->pool[--h->npool]);
}

/* Detaches the easy handle of an active call; never from a curl callback.
 * `reusable`: the transfer completed normally (CURLE_OK). */
static void call_release_easy(struct tt_http *h, struct tt_http_call *c, bool reusable) {
  if (c->easy) {
    if (h->multi)
      curl_multi_remove_handle(h->multi, c->easy);
    easy_put(h, c->easy, reusable && h->multi != NULL);
    c->easy = NULL;
  }
  curl_slist_free_all(c->headers);
  c->headers = NULL;
}

/* Runs `done` of every finished call. Each call is taken off the list and
 * its response moved to the stack first: done may free the call, start new
 * calls or cancel others (which then land on the list and run here too). */
static void deliver_all(struct tt_http *h) {
  if (h->delivering)
    return;
  h->delivering = true;
  while (h->fin_head && !h->closing) {
    struct tt_http_call *c = h->fin_head;
    h->fin_head = c->next;
    if (h->fin_head)
      h->fin_head->prev = NULL;
    else
      h->fin_tail = NULL;
    c->next = c->prev = NULL;
    c->state = CALL_DELIVERED;
    struct tt_http_response r = c->resp;
    memset(&c->resp, 0, sizeof(c->resp));
    c->done(c, &r, c->arg); /* c may be gone from here on */
    tt_buf_free(&r.body);
    tt_buf_free(&r.headers);
  }
  h->delivering = false;
}

static void on_deliver(uv_timer_t *t) { deliver_all(t->data); }

void tt_http_finish(struct tt_http_call *c, enum tt_http_transport t, long status) {
  struct tt_http *h = c->h;
  c->resp.transport = t;
  c->resp.status = t == TT_HTTP_OK ? status : 0;
  if (t != TT_HTTP_OK) { /* what arrived of a failed answer means nothing */
    tt_buf_free(&c->resp.body);
    tt_buf_reset(&c->resp.headers);
  }
  active_unlink(h, c);
  fin_push(h, c);
}

void tt_http_deliver(struct tt_http *h, bool now) {
  if (now)
    deliver_all(h);
  else
    uv_timer_start(&h->deliver, on_deliver, 0, 0);
}

/* Moves a transfer that curl reported done to the finished list. */
static void transfer_done(struct tt_http *h, struct tt_http_call *c, CURLcode rc) {
  long status = 0;
  curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &status);
  c->resp.transport = map_curlcode(rc, c->too_large);
  /* A 413 answered before the whole body was sent, then the connection
   * reset: the answer stands, as on our engine. */
  if (status == 413 && c->resp.transport == TT_HTTP_RESET)
    c->resp.transport = TT_HTTP_OK;
  c->resp.status = c->resp.transport == TT_HTTP_OK ? status : 0;
  call_release_easy(h, c, rc == CURLE_OK);
  active_unlink(h, c);
  fin_push(h, c);
}

/* Reads every message curl queued; called after each socket action. */
static void drain(struct tt_http *h) {
  CURLMsg *m;
  int left;
  while (h->multi && (m = curl_multi_info_read(h->multi, &left)) != NULL) {
    if (m->msg != CURLMSG_DONE)
      continue;
    CURL *easy = m->easy_handle;
    CURLcode rc = m->data.result; /* m is invalid once the handle is removed */
    char *priv = NULL;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, &priv);
    transfer_done(h, (struct tt_http_call *)(void *)priv, rc);
  }
  deliver_all(h);
}

/* ---- sockets and timer (curl -> libuv) ---- */

static void on_sock_closed(uv_handle_t *handle) {
  struct http_sock *s = handle->data;
  struct tt_http *h = s->h;
  free(s);
  if (--h->pending_closes == 0 && h->closing && h->closed)
    h->closed(h->closed_arg);
}

static void sock_close(struct tt_http *h, struct http_sock *s) {
  h->socks[s->fd] = NULL;
  h->pending_closes++;
  uv_close((uv_handle_t *)&s->poll, on_sock_closed);
}

static void on_poll(uv_poll_t *p, int status, int events) {
  struct http_sock *s = p->data;
  struct tt_http *h = s->h;
  int flags = 0;
  if (status < 0) {
    flags = CURL_CSELECT_ERR;
  } else {
    if (events & UV_READABLE)
      flags |= CURL_CSELECT_IN;
    if (events & UV_WRITABLE)
      flags |= CURL_CSELECT_OUT;
  }
  int running = 0;
  /* s may be closed by curl's socket callback during this action. */
  curl_multi_socket_action(h->multi, s->fd, flags, &running);
  drain(h);
}

static int on_curl_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp) {
  (void)easy;
  (void)socketp;
  struct tt_http *h = userp;
  if (fd < 0)
    return -1;
  struct http_sock *s = (size_t)fd < h->nsocks ? h->socks[fd] : NULL;
  if (what == CURL_POLL_REMOVE) {
    if (s)
      sock_close(h, s);
    return 0;
  }
  if (s == NULL) {
    if ((size_t)fd >= h->nsocks) {
      size_t n = h->nsocks ? h->nsocks : 64;
      while (n <= (size_t)fd)
        n *= 2;
      struct http_sock **a = realloc(h->socks, n * sizeof(*a));
      if (a == NULL)
        return -1;
      memset(a + h->nsocks, 0, (n - h->nsocks) * sizeof(*a));
      h->socks = a;
      h->nsocks = n;
    }
    s = calloc(1, sizeof(*s));
    if (s == NULL)
      return -1;
    if (uv_poll_init_socket(h->loop, &s->poll, fd) != 0) {
      free(s);
      return -1;
    }
    s->h = h;
    s->fd = fd;
    s->poll.data = s;
    h->socks[fd] = s;
  }
  int events = 0;
  if (what & CURL_POLL_IN)
    events |= UV_READABLE;
  if (what & CURL_POLL_OUT)
    events |= UV_WRITABLE;
  if (uv_poll_start(&s->poll, events, on_poll) != 0)
    return -1;
  return 0;
}

static void on_timer(uv_timer_t *t) {
  struct tt_http *h = t->data;
  int running = 0;
  curl_multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
  drain(h);
}

static int on_curl_timer(CURLM *multi, long timeout_ms, void *userp) {
  (void)multi;
  struct tt_http *h = userp;
  if (timeout_ms < 0)
    uv_timer_stop(&h->timer);
  else /* also for 0: curl must not be re-entered from its own callback */
    uv_timer_start(&h->timer, on_timer, (uint64_t)timeout_ms, 0);
  return 0;
}

/* ---- per-transfer callbacks ---- */

static size_t on_write(char *p, size_t size, size_t n, void *ud) {
  struct tt_http_call *c = ud;
  size_t len = size * n;
  if (tt_buf_append(&c->resp.body, p, len) != 0) {
    c->too_large = c->resp.body.cap && c->resp.body.len + len > c->resp.body.cap;
    return 0; /* CURLE_WRITE_ERROR */
  }
  return len;
}

/* Keeps the final response's header lines as "name: value\r\n" with the
 * name lower-cased; a new status line (100 Continue, ...) starts over. */
static size_t on_header(char *p, size_t size, size_t n, void *ud) {
  struct tt_http_call *c = ud;
  size_t len = size * n;
  if (len >= 5 && memcmp(p, "HTTP/", 5) == 0) {
    tt_buf_reset(&c->resp.headers);
    return len;
  }
  size_t end = len;
  while (end > 0 && (p[end - 1] == '\r' || p[end - 1] == '\n'))
    end--;
  const char *colon = memchr(p, ':', end);
  if (colon == NULL || colon == p)
    return len; /* blank line or continuation: not kept */
  size_t nlen = (size_t)(colon - p);
  const char *v = colon + 1;
  while (v < p + end && (*v == ' ' || *v == '\t'))
    v++;
  struct tt_buf *b = &c->resp.headers;
  size_t start = b->len;
  if (tt_buf_append(b, p, nlen) != 0 || tt_buf_append(b, ": ", 2) != 0 ||
      tt_buf_append(b, v, (size_t)(p + end - v)) != 0 || tt_buf_append(b, "\r\n", 2) != 0) {
    c->too_large = true;
    return 0;
  }
  for (size_t i = start; i < start + nlen; i++)
    if (b->data[i] >= 'A' && b->data[i] <= 'Z')
      b->data[i] = (char)(b->data[i] - 'A' + 'a');
  return len;
}

/* ---- public ---- */

static bool env_set(const char *name) {
  const char *v = getenv(name);
  return v != NULL && v[0] != '\0';
}

/* Whether libcurl would send URLs of this scheme through a proxy named in
 * the environment. It reads http_proxy only in lower case (a CGI program's
 * HTTP_PROXY could come from a request header); https_proxy and all_proxy
 * in both cases. */
static bool proxy_configured(bool https) {
  if (env_set("all_proxy") || env_set("ALL_PROXY"))
    return true;
  return https ? env_set("https_proxy") || env_set("HTTPS_PROXY") : env_set("http_proxy");
}

int tt_http_new(uv_loop_t *loop, const struct tt_http_options *opts, struct tt_http **out) {
  struct tt_http *h = calloc(1, sizeof(*h));
  if (h == NULL)
    return UV_ENOMEM;
  int rc = UV_ENOMEM;
  h->magic = HTTP_MAGIC;
  h->loop = loop;
  h->timeout_ms = opts && opts->default_timeout_ms ? opts->default_timeout_ms : 10000;
  h->connect_timeout_ms =
      opts && opts->default_connect_timeout_ms ? opts->default_connect_timeout_ms : 3000;
  h->max_body = opts && opts->max_body_bytes ? opts->max_body_bytes : (size_t)64 << 20;
  if (opts && opts->ca_file && (h->ca_file = strdup(opts->ca_file)) == NULL)
    goto fail;
  /* Our engine reads SSL_CERT_FILE/SSL_CERT_DIR through OpenSSL's default
   * paths; libcurl ignores them (it uses its built-in bundle), so they are
   * handed to it here: one trust store for both engines. */
  const char *env_file = getenv("SSL_CERT_FILE"), *env_dir = getenv("SSL_CERT_DIR");
  if (h->ca_file == NULL && env_file && env_file[0] &&
      (h->curl_cainfo = strdup(env_file)) == NULL)
    goto fail;
  if (h->ca_file == NULL && env_dir && env_dir[0] && (h->curl_capath = strdup(env_dir)) == NULL)
    goto fail;
  if (h->ca_file && (h->curl_cainfo = strdup(h->ca_file)) == NULL)
    goto fail;
  /* Reference-counted by libcurl; thread-safe in the versions we accept. */
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    rc = UV_EIO;
    goto fail;
  }
  h->multi = curl_multi_init();
  if (h->multi == NULL) {
    curl_global_cleanup();
    goto fail;
  }
  curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
  curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
  curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
  curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
  /* Idle keep-alive connections to keep; curl's default (4 per added
   * handle) shrinks to a handful once a burst is over. */
  curl_multi_setopt(h->multi, CURLMOPT_MAXCONNECTS, MAX_IDLE_CONNECTIONS);
  /* libcurl sends URLs through a proxy named by these variables (and
   * honours no_proxy); our engine does not speak to proxies, so with one
   * configured for a scheme its URLs keep libcurl's behaviour. */
  h->wire_http = !proxy_configured(false);
  h->wire_https = !proxy_configured(true);
  if ((h->wire_http || h->wire_https) && tt_http_wire_new(loop, h, h->ca_file, &h->wire) != 0) {
    curl_multi_cleanup(h->multi);
    curl_global_cleanup();
    goto fail;
  }
  uv_timer_init(loop, &h->timer);
  uv_timer_init(loop, &h->deliver);
  h->timer.data = h;
  h->deliver.data = h;
  *out = h;
  return 0;
fail:
  free(h->ca_file);
  free(h->curl_cainfo);
  free(h->curl_capath);
  free(h);
  return rc;
}

static int set_method(CURL *e, const struct tt_http_request *req) {
  const char *m = req->method ? req->method : "GET";
  bool has_body = req->body != NULL || req->body_len > 0;
  if (strcmp(m, "HEAD") == 0)
    return curl_easy_setopt(e, CURLOPT_NOBODY, 1L) == CURLE_OK ? 0 : -1;
  if (strcmp(m, "GET") == 0 && !has_body)
    return curl_easy_setopt(e, CURLOPT_HTTPGET, 1L) == CURLE_OK ? 0 : -1;
  if (has_body || strcmp(m, "POST") == 0 || strcmp(m, "PUT") == 0) {
    /* POSTFIELDS borrows the body until completion, as the contract says. */
    if (curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, req->body ? req->body : "") != CURLE_OK)
      return -1;
  }
  if (strcmp(m, "POST") != 0 && curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, m) != CURLE_OK)
    return -1;
  return 0;
}

int tt_http_start(struct tt_http *h, struct tt_http_call *call, const struct tt_http_request *req,
                  tt_http_done_cb done, void *arg) {
  assert(h->magic == HTTP_MAGIC);
  if (h->closing || req == NULL || req->url == NULL || done == NULL)
    return UV_EINVAL;
  memset(call, 0, sizeof(*call));
  call->h = h;
  call->done = done;
  call->arg = arg;
  tt_buf_init(&call->resp.body, h->max_body);
  tt_buf_init(&call->resp.headers, HEADERS_CAP);
  uint64_t timeout = req->timeout_ms ? req->timeout_ms : h->timeout_ms;
  uint64_t ctimeout = req->connect_timeout_ms ? req->connect_timeout_ms : h->connect_timeout_ms;
  int rc;
  bool plain = strncasecmp(req->url, "http://", 7) == 0;
  bool secure = !plain && strncasecmp(req->url, "https://", 8) == 0;
  if ((plain && h->wire_http) || (secure && h->wire_https)) {
    /* On the active list first: the engine may finish the call at once
     * (delivered later from the delivery timer). */
    active_push(h, call);
    rc = tt_http_wire_start(h->wire, call, req, timeout, ctimeout);
    if (rc == 0)
      return 0;
    active_unlink(h, call);
    call->state = CALL_IDLE;
    call->wire = false;
    if (rc != UV_ENOTSUP) {
      tt_buf_free(&call->resp.body);
      tt_buf_free(&call->resp.headers);
      return rc;
    }
  }
  rc = UV_ENOMEM;
  CURL *e = easy_get(h);
  if (e == NULL)
    goto fail;
  call->easy = e;
  struct curl_slist *sl = NULL;
  for (const char *const *p = req->headers; p && *p; p++) {
    struct curl_slist *t = curl_slist_append(sl, *p);
    if (t == NULL)
      goto fail;
    sl = call->headers = t;
  }
  if (req->body != NULL || req->body_len > 0) {
    /* No "Expect: 100-continue" round trip for bodies over 1 MB. */
    struct curl_slist *t = curl_slist_append(sl, "Expect:");
    if (t == NULL)
      goto fail;
    sl = call->headers = t;
  }
  rc = UV_EINVAL;
  if (curl_easy_setopt(e, CURLOPT_URL, req->url) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_PRIVATE, (void *)call) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
#if LIBCURL_VERSION_NUM >= 0x075500
      curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
#else
      curl_easy_setopt(e, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS)) !=
          CURLE_OK ||
#endif
      curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L) != CURLE_OK ||
      (h->curl_cainfo && curl_easy_setopt(e, CURLOPT_CAINFO, h->curl_cainfo) != CURLE_OK) ||
      (h->curl_capath && curl_easy_setopt(e, CURLOPT_CAPATH, h->curl_capath) != CURLE_OK) ||
#if LIBCURL_VERSION_NUM >= 0x073400
      /* An https:// proxy (a TLS-inspecting one) is verified the same way. */
      (h->curl_cainfo &&
       curl_easy_setopt(e, CURLOPT_PROXY_CAINFO, h->curl_cainfo) != CURLE_OK) ||
      (h->curl_capath &&
       curl_easy_setopt(e, CURLOPT_PROXY_CAPATH, h->curl_capath) != CURLE_OK) ||
#endif
      curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)timeout) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)ctimeout) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)h->max_body) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_USERAGENT, "tabletheoryd") != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_HTTPHEADER, sl) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_WRITEDATA, (void *)call) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_HEADERDATA, (void *)call) != CURLE_OK || set_method(e, req) != 0)
    goto fail;
  /* Only arms curl's timer (at 0): the transfer and its completion happen
   * in loop callbacks, never inside this call. */
  if (curl_multi_add_handle(h->multi, e) != CURLM_OK) {
    rc = UV_ENOMEM;
    goto fail;
  }
  active_push(h, call);
  return 0;
fail:
  if (e)
    curl_easy_cleanup(e); /* half-configured: never back to the pool */
  call->easy = NULL;
  curl_slist_free_all(call->headers);
  call->headers = NULL;
  tt_buf_free(&call->resp.body);
  tt_buf_free(&call->resp.headers);
  return rc;
}

void tt_http_cancel(struct tt_http *h, struct tt_http_call *call) {
  assert(h->magic == HTTP_MAGIC);
  if (call->state != CALL_ACTIVE)
    return; /* already finished: done reports what really happened */
  if (call->wire)
    tt_http_wire_detach(h->wire, call); /* its connection is closed */
  else
    call_release_easy(h, call, false); /* stopped mid-flight: freed, never reused */
  active_unlink(h, call);
  tt_buf_free(&call->resp.body);
  tt_buf_reset(&call->resp.headers);
  call->resp.transport = TT_HTTP_CANCELED;
  call->resp.status = 0;
  fin_push(h, call);
  uv_timer_start(&h->deliver, on_deliver, 0, 0);
}

const char *tt_http_response_header(const struct tt_http_response *resp, const char *lname,
                                    size_t *len) {
  const char *found = NULL;
  size_t nlen = strlen(lname);
  const char *p = resp->headers.data;
  const char *end = p ? p + resp->headers.len : NULL;
  while (p && p < end) {
    const char *eol = memchr(p, '\r', (size_t)(end - p));
    if (eol == NULL)
      eol = end;
    if ((size_t)(eol - p) >= nlen + 2 && memcmp(p, lname, nlen) == 0 && p[nlen] == ':') {
      const char *v = p + nlen + 2;
      const char *ve = eol;
      while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
        ve--;
      found = v;
      *len = (size_t)(ve - v);
    }
    p = eol + 2;
  }
  return found;
}

int tt_http_ca_file_check(const char *path, char *why, size_t cap) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    snprintf(why, cap, "%s", strerror(errno));
    return -1;
  }
  fclose(f);
  X509_STORE *st = X509_STORE_new();
  X509_LOOKUP *lk = st ? X509_STORE_add_lookup(st, X509_LOOKUP_file()) : NULL;
  int n = lk ? X509_load_cert_file(lk, path, X509_FILETYPE_PEM) : 0;
  ERR_clear_error();
  X509_STORE_free(st);
  if (n <= 0) {
    snprintf(why, cap, "%s", lk ? "holds no PEM certificate" : "out of memory");
    return -1;
  }
  return 0;
}

const char *tt_http_version(void) {
  static char v[128];
  if (v[0] == '\0')
    snprintf(v, sizeof(v), "tabletheoryd-http/1.1 OpenSSL/%s, libcurl/%s",
             OpenSSL_version(OPENSSL_VERSION_STRING), curl_version_info(CURLVERSION_NOW)->version);
  return v;
}

static void on_handle_closed(uv_handle_t *handle) {
  struct tt_http *h = handle->data;
  if (--h->pending_closes == 0 && h->closed)
    h->closed(h->closed_arg);
}

static void on_wire_closed(void *arg) {
  struct tt_http *h = arg;
  if (--h->pending_closes == 0 && h->closed)
    h->closed(h->closed_arg);
}

void tt_http_close(struct tt_http *h, void (*closed)(void *arg), void *arg) {
  assert(h->magic == HTTP_MAGIC);
  assert(h->active == NULL && h->fin_head == NULL); /* the contract: nothing outstanding */
  h->closing = true;
  h->closed = closed;
  h->closed_arg = arg;
  /* Tolerated in release builds: drop what is left without callbacks. */
  while (h->active) {
    struct tt_http_call *c = h->active;
    if (c->wire)
      tt_http_wire_detach(h->wire, c);
    else
      call_release_easy(h, c, false);
    active_unlink(h, c);
    tt_buf_free(&c->resp.body);
    tt_buf_free(&c->resp.headers);
    c->state = CALL_DELIVERED;
  }
  for (struct tt_http_call *c = h->fin_head; c; c = c->next) {
    tt_buf_free(&c->resp.body);
    tt_buf_free(&c->resp.headers);
  }
  h->fin_head = h->fin_tail = NULL;
  /* Order matters: curl_multi_cleanup may still call the timer and socket
   * callbacks (closing cached connections), so both must be alive. */
  h->pending_closes++; /* held until every handle was asked to close */
  pool_free(h); /* easy handles first, then the multi (docs/design.md, "Shutdown") */
  curl_multi_cleanup(h->multi);
  h->multi = NULL;
  for (size_t i = 0; i < h->nsocks; i++)
    if (h->socks[i])
      sock_close(h, h->socks[i]);
  h->pending_closes += 2;
  uv_close((uv_handle_t *)&h->timer, on_handle_closed);
  uv_close((uv_handle_t *)&h->deliver, on_handle_closed);
  if (h->wire) { /* pooled connections, their timers, getaddrinfo requests */
    h->pending_closes++;
    tt_http_wire_close(h->wire, on_wire_closed, h);
  }
  h->pending_closes--; /* cannot reach 0 here: the timers are still closing */
}

void tt_http_destroy(struct tt_http *h) {
  if (h == NULL)
    return;
  assert(h->magic == HTTP_MAGIC);
  h->magic = 0;
  tt_http_wire_destroy(h->wire);
  pool_free(h);
  if (h->multi) { /* never closed: only valid when the loop is gone anyway */
    curl_multi_cleanup(h->multi);
  }
  free(h->socks);
  free(h->ca_file);
  free(h->curl_cainfo);
  free(h->curl_capath);
  free(h);
  curl_global_cleanup();
}
