/* SPDX-License-Identifier: Apache-2.0 */
/* http.c -- outbound HTTP(S) on the libuv loop through libcurl: one multi
 * handle driven by uv_poll_t/uv_timer_t, pooled easy handles configured
 * once, TLS sessions shared through a CURLSH, and the one delivery path of
 * completions. */
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
#include <sys/socket.h>
#include <unistd.h>

#define HTTP_MAGIC 0x48545450u /* "HTTP" */
#define HEADERS_CAP (64u * 1024u)
/* Limits on an answer's head (untrusted input): header lines (1xx heads
 * count) and the length of one line. libcurl's own are 100 KiB a line and
 * no count. */
#define HEAD_LINES_MAX 128u
#define HEAD_LINE_MAX (8u * 1024u)
/* Idle keep-alive connections the multi handle keeps (CURLMOPT_MAXCONNECTS;
 * curl's default, 4 per added handle, shrinks to a handful once a burst is
 * over). One daemon talks to a few endpoints with fan-outs of 4-8. */
#define MAX_IDLE_CONNECTIONS 64L
/* Idle easy handles kept for reuse. A new handle costs an allocation of
 * libcurl's whole per-transfer state, its initialization and ~20 options;
 * a pooled one keeps them all (connections live in the multi handle's
 * cache either way). 16 covers the usual in-flight count of one daemon
 * (fan-outs of 4-8, a few requests); a burst beyond it frees the extras. */
#define EASY_POOL_MAX 16
/* The User-Agent of every request without one of its own. */
#define HTTP_USER_AGENT "tabletheoryd"
/* Bodies from this size on are sent with an empty "Expect:" header. */
#define EXPECT_MIN (64u * 1024u)

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
  int events; /* UV_READABLE/UV_WRITABLE curl asked for */
  bool owned; /* opened by on_open_socket: closed only by on_close_socket */
};

/* An easy handle with the options every transfer shares already set, and
 * the request headers of its current transfer: their text in one buffer
 * and the curl_slist nodes pointing into it, both kept for the next
 * transfer (no allocation per header). */
struct easy_slot {
  CURL *e;
  struct tt_http_call *call; /* the transfer on it; NULL while pooled */
  /* The URL of the last transfer, parsed once (CURLOPT_CURLU): libcurl
   * copies the parsed parts for each transfer instead of parsing the URL
   * string and formatting it back. `url` is its text, NULL after a URL
   * libcurl's parser refused (the handle then has CURLOPT_URL instead). */
  CURLU *uh;
  char *url;
  /* The proxy and the timeouts set on the handle (options a transfer sets
   * only when they differ from its last one's). */
  const char *proxy;
  long timeout_ms, connect_timeout_ms;
  char *text;
  size_t text_cap, text_len;
  struct curl_slist *nodes;
  size_t nodes_cap;
};

/* A doubly linked list of calls, in the order they joined it. */
struct call_list {
  struct tt_http_call *head, *tail;
};

struct tt_http {
  unsigned magic;
  uv_loop_t *loop;
  CURLM *multi;
  CURLSH *share;      /* TLS sessions of every easy handle */
  uv_timer_t timer;   /* curl's own timeout (CURLMOPT_TIMERFUNCTION) */
  uv_timer_t deliver; /* delivers completions made outside curl (cancel) */
  /* Watched sockets indexed by fd. Our own table instead of
   * curl_multi_assign, so no curl_multi_* runs inside a curl callback. */
  struct http_sock **socks;
  size_t nsocks;
  struct call_list active; /* transfers in curl's multi */
  struct call_list fin;    /* finished, not delivered */
  struct easy_slot *pool[EASY_POOL_MAX]; /* idle easy handles, in no multi */
  size_t npool;
  uint64_t timeout_ms, connect_timeout_ms;
  size_t max_body;
  char *cainfo; /* CAINFO: ca_file, else SSL_CERT_FILE; NULL = libcurl's default */
  char *capath; /* CAPATH: SSL_CERT_DIR without ca_file; NULL = libcurl's default */
  /* The proxy settings of the environment, read once (libcurl would read
   * five variables per transfer): the proxy of http:// and of https:// URLs
   * ("" = none) and the hosts that bypass it. */
  char *proxy_http, *proxy_https, *no_proxy;
  bool delivering;
  bool closing;
  bool loop_gone; /* tt_http_destroy without tt_http_close: no uv_* calls */
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

static void list_push(struct call_list *l, struct tt_http_call *c, int state) {
  c->state = state;
  c->next = NULL;
  c->prev = l->tail;
  if (l->tail)
    l->tail->next = c;
  else
    l->head = c;
  l->tail = c;
}

static void list_unlink(struct call_list *l, struct tt_http_call *c) {
  if (c->prev)
    c->prev->next = c->next;
  else
    l->head = c->next;
  if (c->next)
    c->next->prev = c->prev;
  else
    l->tail = c->prev;
  c->prev = c->next = NULL;
}

/* ---- per-transfer callbacks (set once per easy handle) ---- */

static size_t on_write(char *p, size_t size, size_t n, void *ud) {
  struct tt_http_call *c = ((struct easy_slot *)ud)->call;
  size_t len = size * n;
  if (tt_buf_append(&c->resp.body, p, len) != 0) {
    c->too_large = c->resp.body.cap && c->resp.body.len + len > c->resp.body.cap;
    return 0; /* CURLE_WRITE_ERROR */
  }
  return len;
}

/* Keeps the final response's header lines as "name: value\r\n" with the
 * name lower-cased; a new status line (100 Continue, ...) starts over.
 * Refuses (CURLE_WRITE_ERROR, TT_HTTP_OTHER) a head over the limits. */
static size_t on_header(char *p, size_t size, size_t n, void *ud) {
  struct tt_http_call *c = ((struct easy_slot *)ud)->call;
  size_t len = size * n;
  if (++c->head_lines > HEAD_LINES_MAX || len > HEAD_LINE_MAX)
    return 0; /* CURLE_WRITE_ERROR without too_large: TT_HTTP_OTHER */
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
  size_t vlen = (size_t)(p + end - v);
  /* One reservation, then the line written in place. */
  struct tt_buf *b = &c->resp.headers;
  if (tt_buf_reserve(b, nlen + 2 + vlen + 2) != 0)
    return 0; /* over HEADERS_CAP */
  char *o = b->data + b->len;
  for (size_t i = 0; i < nlen; i++)
    o[i] = p[i] >= 'A' && p[i] <= 'Z' ? (char)(p[i] - 'A' + 'a') : p[i];
  o[nlen] = ':';
  o[nlen + 1] = ' ';
  memcpy(o + nlen + 2, v, vlen);
  memcpy(o + nlen + 2 + vlen, "\r\n", 3); /* and the buffer's NUL */
  b->len += nlen + 2 + vlen + 2;
  return len;
}

/* ---- easy handles ---- */

static curl_socket_t on_open_socket(void *clientp, curlsocktype purpose,
                                    struct curl_sockaddr *a);
static int on_close_socket(void *clientp, curl_socket_t fd);

/* A new easy handle with every option that does not change between
 * transfers; NULL when out of memory or an option is refused. */
static struct easy_slot *easy_new(struct tt_http *h) {
  struct easy_slot *s = calloc(1, sizeof(*s));
  if (s == NULL)
    return NULL;
  CURL *e = s->e = curl_easy_init();
  if (e == NULL ||
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
      (h->cainfo && curl_easy_setopt(e, CURLOPT_CAINFO, h->cainfo) != CURLE_OK) ||
      (h->capath && curl_easy_setopt(e, CURLOPT_CAPATH, h->capath) != CURLE_OK) ||
      /* An https:// proxy (a TLS-inspecting one) is verified the same way. */
      (h->cainfo && curl_easy_setopt(e, CURLOPT_PROXY_CAINFO, h->cainfo) != CURLE_OK) ||
      (h->capath && curl_easy_setopt(e, CURLOPT_PROXY_CAPATH, h->capath) != CURLE_OK) ||
      curl_easy_setopt(e, CURLOPT_SHARE, h->share) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_NOPROXY, h->no_proxy) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)h->max_body) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, 60L) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 60L) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, on_open_socket) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, (void *)h) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, on_close_socket) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, (void *)h) != CURLE_OK ||
      (s->uh = curl_url()) == NULL ||
      curl_easy_setopt(e, CURLOPT_PRIVATE, (void *)s) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_WRITEDATA, (void *)s) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_HEADERDATA, (void *)s) != CURLE_OK) {
    if (e)
      curl_easy_cleanup(e);
    curl_url_cleanup(s->uh);
    free(s);
    return NULL;
  }
  return s;
}

/* The copied headers carry a signature and maybe a session token: wiped
 * once the transfer no longer needs them. */
static void easy_wipe(struct easy_slot *s) {
  if (s->text_len) {
    OPENSSL_cleanse(s->text, s->text_len);
    s->text_len = 0;
  }
}

static void easy_free(struct easy_slot *s) {
  easy_wipe(s);
  curl_easy_cleanup(s->e);
  curl_url_cleanup(s->uh);
  free(s->url);
  free(s->text);
  free(s->nodes);
  free(s);
}

/* Takes back an easy handle that is in no multi handle. Only the handle of
 * a transfer that completed normally is kept: one that was canceled or
 * failed is freed, so no state of a broken transfer can reach the next
 * one. A kept one keeps its options: the next transfer sets every one that
 * differs between transfers (URL, method, body, headers, timeouts). */
static void easy_put(struct tt_http *h, struct easy_slot *s, bool reusable) {
  s->call = NULL;
  easy_wipe(s);
  if (reusable && h->npool < EASY_POOL_MAX && !h->closing) {
    h->pool[h->npool++] = s;
    return;
  }
  easy_free(s);
}

static void pool_free(struct tt_http *h) {
  while (h->npool > 0)
    easy_free(h->pool[--h->npool]);
}

/* Detaches the easy handle of an active call; never from a curl callback.
 * `reusable`: the transfer completed normally (CURLE_OK). */
static void call_release_easy(struct tt_http *h, struct tt_http_call *c, bool reusable) {
  struct easy_slot *s = c->slot;
  if (s) {
    if (h->multi)
      curl_multi_remove_handle(h->multi, s->e);
    easy_put(h, s, reusable && h->multi != NULL);
    c->slot = NULL;
  }
}

/* ---- delivery ---- */

/* Runs `done` of every finished call. Each call is taken off the list and
 * its response moved to the stack first: done may free the call, start new
 * calls or cancel others (which then land on the list and run here too). */
static void deliver_all(struct tt_http *h) {
  if (h->delivering)
    return;
  h->delivering = true;
  while (h->fin.head && !h->closing) {
    struct tt_http_call *c = h->fin.head;
    list_unlink(&h->fin, c);
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

/* Moves a transfer that curl reported done to the finished list. */
static void transfer_done(struct tt_http *h, struct tt_http_call *c, CURLcode rc) {
  long status = 0;
  curl_easy_getinfo(((struct easy_slot *)c->slot)->e, CURLINFO_RESPONSE_CODE, &status);
  enum tt_http_transport t = map_curlcode(rc, c->too_large);
  /* A 413 answered before the whole body was sent, then the connection
   * reset: the answer stands. */
  if (status == 413 && t == TT_HTTP_RESET)
    t = TT_HTTP_OK;
  c->resp.transport = t;
  c->resp.status = t == TT_HTTP_OK ? status : 0;
  if (t != TT_HTTP_OK) { /* what arrived of a failed answer means nothing */
    tt_buf_free(&c->resp.body);
    tt_buf_reset(&c->resp.headers);
  }
  call_release_easy(h, c, rc == CURLE_OK);
  list_unlink(&h->active, c);
  list_push(&h->fin, c, CALL_FINISHED);
}

/* Moves every transfer curl reported done to the finished list. */
static void collect(struct tt_http *h) {
  CURLMsg *m;
  int left;
  while (h->multi && (m = curl_multi_info_read(h->multi, &left)) != NULL) {
    if (m->msg != CURLMSG_DONE)
      continue;
    CURL *easy = m->easy_handle;
    CURLcode rc = m->data.result; /* m is invalid once the handle is removed */
    char *priv = NULL;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, &priv);
    transfer_done(h, ((struct easy_slot *)(void *)priv)->call, rc);
  }
}

/* Reads every message curl queued and delivers; after each socket action
 * of a loop callback. */
static void drain(struct tt_http *h) {
  collect(h);
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

/* Stops watching a socket at once (uv_close takes the descriptor out of
 * epoll before it returns, so curl may close it right after) and frees the
 * handle when libuv is done with it. A new socket on the same descriptor
 * gets a new handle meanwhile. */
static void sock_close(struct tt_http *h, struct http_sock *s) {
  h->socks[s->fd] = NULL;
  h->pending_closes++;
  uv_close((uv_handle_t *)&s->poll, on_sock_closed);
}

static void on_poll(uv_poll_t *p, int status, int events) {
  struct http_sock *s = p->data;
  struct tt_http *h = s->h;
  if (status < 0) {
    /* POLLERR (a reset, a refused connect): libuv stopped the handle. curl
     * is told the socket is ready for what it waited for, so its own read,
     * write or connect check meets the error and judges it (a reset pooled
     * connection is retried; CURL_CSELECT_ERR would fail the transfer with
     * CURLE_SEND_ERROR at once). The watch stays until curl removes it. */
    events = s->events;
    uv_poll_start(&s->poll, s->events, on_poll);
  }
  int flags = 0;
  if (events & UV_READABLE)
    flags |= CURL_CSELECT_IN;
  if (events & UV_WRITABLE)
    flags |= CURL_CSELECT_OUT;
  int running = 0;
  /* s may be closed by curl's socket callback during this action. */
  curl_multi_socket_action(h->multi, s->fd, flags, &running);
  drain(h);
}

/* The handle of `fd`, made (not started) when there is none; NULL when out
 * of memory. */
static struct http_sock *sock_get(struct tt_http *h, curl_socket_t fd) {
  struct http_sock *s = (size_t)fd < h->nsocks ? h->socks[fd] : NULL;
  if (s)
    return s;
  if ((size_t)fd >= h->nsocks) {
    size_t n = h->nsocks ? h->nsocks : 64;
    while (n <= (size_t)fd)
      n *= 2;
    struct http_sock **a = realloc(h->socks, n * sizeof(*a));
    if (a == NULL)
      return NULL;
    memset(a + h->nsocks, 0, (n - h->nsocks) * sizeof(*a));
    h->socks = a;
    h->nsocks = n;
  }
  s = calloc(1, sizeof(*s));
  if (s == NULL)
    return NULL;
  if (uv_poll_init_socket(h->loop, &s->poll, fd) != 0) {
    free(s);
    return NULL;
  }
  s->h = h;
  s->fd = fd;
  s->poll.data = s;
  h->socks[fd] = s;
  return s;
}

/* CURLMOPT_SOCKETFUNCTION: watch, change or stop watching one socket. A
 * connection's socket (owned) keeps its handle when curl stops watching
 * it between transfers on a kept-alive connection: the watch is stopped
 * (out of epoll), and the handle is closed when curl closes the socket
 * (on_close_socket). Other sockets (the threaded resolver's) lose their
 * handle at once: curl closes them right after this callback. */
static int on_curl_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp) {
  (void)easy;
  (void)socketp;
  struct tt_http *h = userp;
  if (fd < 0 || h->loop_gone)
    return h->loop_gone ? 0 : -1;
  if (what == CURL_POLL_REMOVE) {
    struct http_sock *s = (size_t)fd < h->nsocks ? h->socks[fd] : NULL;
    if (s && s->owned) {
      s->events = 0;
      uv_poll_stop(&s->poll);
    } else if (s) {
      sock_close(h, s);
    }
    return 0;
  }
  struct http_sock *s = sock_get(h, fd);
  if (s == NULL)
    return -1;
  int events = 0;
  if (what & CURL_POLL_IN)
    events |= UV_READABLE;
  if (what & CURL_POLL_OUT)
    events |= UV_WRITABLE;
  s->events = events;
  if (uv_poll_start(&s->poll, events, on_poll) != 0)
    return -1;
  return 0;
}

/* CURLOPT_OPENSOCKETFUNCTION: a connection's socket, with its poll handle
 * made at once (so it is made once per connection, not per transfer). */
static curl_socket_t on_open_socket(void *clientp, curlsocktype purpose,
                                    struct curl_sockaddr *a) {
  struct tt_http *h = clientp;
  if (purpose != CURLSOCKTYPE_IPCXN)
    return CURL_SOCKET_BAD;
  curl_socket_t fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
  if (fd < 0)
    return CURL_SOCKET_BAD;
  struct http_sock *s = sock_get(h, fd);
  if (s == NULL) {
    close(fd);
    return CURL_SOCKET_BAD;
  }
  s->owned = true;
  return fd;
}

/* CURLOPT_CLOSESOCKETFUNCTION: the handle is closed (out of epoll) while
 * the descriptor is still open, then the descriptor. */
static int on_close_socket(void *clientp, curl_socket_t fd) {
  struct tt_http *h = clientp;
  struct http_sock *s = fd >= 0 && (size_t)fd < h->nsocks ? h->socks[fd] : NULL;
  if (s && !h->loop_gone)
    sock_close(h, s);
  return close(fd);
}

static void on_timer(uv_timer_t *t) {
  struct tt_http *h = t->data;
  int running = 0;
  curl_multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
  drain(h);
}

/* CURLMOPT_TIMERFUNCTION: curl's next timeout, or none (-1). */
static int on_curl_timer(CURLM *multi, long timeout_ms, void *userp) {
  (void)multi;
  struct tt_http *h = userp;
  if (h->loop_gone)
    return 0;
  if (timeout_ms < 0)
    uv_timer_stop(&h->timer);
  else /* also for 0: curl must not be re-entered from its own callback */
    uv_timer_start(&h->timer, on_timer, (uint64_t)timeout_ms, 0);
  return 0;
}

/* ---- public ---- */

/* The first of two environment variables that is set and not empty. */
static const char *env_first(const char *a, const char *b) {
  const char *v = getenv(a);
  if ((v == NULL || v[0] == '\0') && b != NULL)
    v = getenv(b);
  return v && v[0] ? v : NULL;
}

/* The memory of h itself, once its curl handles are cleaned up. */
static void http_free(struct tt_http *h) {
  free(h->socks);
  free(h->cainfo);
  free(h->capath);
  free(h->proxy_http);
  free(h->proxy_https);
  free(h->no_proxy);
  free(h);
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
  /* The trust store: the configured CA file, else OpenSSL's variables,
   * which libcurl itself ignores (it uses the bundle it was built with). */
  const char *env_file = getenv("SSL_CERT_FILE"), *env_dir = getenv("SSL_CERT_DIR");
  if (opts && opts->ca_file) {
    if ((h->cainfo = strdup(opts->ca_file)) == NULL)
      goto fail;
  } else {
    if (env_file && env_file[0] && (h->cainfo = strdup(env_file)) == NULL)
      goto fail;
    if (env_dir && env_dir[0] && (h->capath = strdup(env_dir)) == NULL)
      goto fail;
  }
  /* The proxy variables as libcurl reads them: http_proxy only in lower
   * case (a CGI program's HTTP_PROXY could come from a request header),
   * https_proxy, all_proxy and no_proxy in both. */
  const char *all = env_first("all_proxy", "ALL_PROXY");
  const char *ph = env_first("http_proxy", NULL), *ps = env_first("https_proxy", "HTTPS_PROXY");
  const char *np = env_first("no_proxy", "NO_PROXY");
  if ((h->proxy_http = strdup(ph ? ph : all ? all : "")) == NULL ||
      (h->proxy_https = strdup(ps ? ps : all ? all : "")) == NULL ||
      (h->no_proxy = strdup(np ? np : "")) == NULL)
    goto fail;
  /* Reference-counted by libcurl; thread-safe in the versions we accept. */
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    rc = UV_EIO;
    goto fail;
  }
  /* TLS sessions in one cache for every easy handle (each would have its
   * own otherwise), so a new connection resumes whichever handle made the
   * last one. DNS and connections already live in the multi handle, shared
   * by all its easy handles. One thread: no lock functions. */
  h->share = curl_share_init();
  if (h->share == NULL ||
      curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK ||
      (h->multi = curl_multi_init()) == NULL) {
    if (h->share)
      curl_share_cleanup(h->share);
    curl_global_cleanup();
    goto fail;
  }
  curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
  curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
  curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
  curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
  curl_multi_setopt(h->multi, CURLMOPT_MAXCONNECTS, MAX_IDLE_CONNECTIONS);
  uv_timer_init(loop, &h->timer);
  uv_timer_init(loop, &h->deliver);
  h->timer.data = h;
  h->deliver.data = h;
  *out = h;
  return 0;
fail:
  http_free(h);
  return rc;
}

/* Per transfer: the method and body. Every option a previous transfer on
 * the same handle may have set is set again (a GET after a HEAD after a
 * PUT). POSTFIELDS borrows the body until completion, as the contract
 * says. */
static int set_method(CURL *e, const struct tt_http_request *req) {
  const char *m = req->method ? req->method : "GET";
  bool has_body = req->body != NULL || req->body_len > 0;
  bool head = strcmp(m, "HEAD") == 0;
  if (head || (strcmp(m, "GET") == 0 && !has_body)) {
    /* HTTPGET also clears NOBODY and the POST of an earlier transfer. */
    if (curl_easy_setopt(e, CURLOPT_HTTPGET, 1L) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, (char *)NULL) != CURLE_OK)
      return -1;
    return head && curl_easy_setopt(e, CURLOPT_NOBODY, 1L) != CURLE_OK ? -1 : 0;
  }
  if (curl_easy_setopt(e, CURLOPT_NOBODY, 0L) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len) != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_POSTFIELDS, req->body ? req->body : "") != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, strcmp(m, "POST") != 0 ? m : NULL) != CURLE_OK)
    return -1;
  return 0;
}

static bool header_is(const char *hd, size_t nlen, const char *name) {
  return strlen(name) == nlen && strncasecmp(hd, name, nlen) == 0;
}

/* The caller's headers, checked and copied into the slot (its text buffer
 * and list nodes are reused from transfer to transfer), then the
 * User-Agent unless the caller gave one: libcurl formats every header byte
 * it writes through its printf engine, and CURLOPT_USERAGENT's value twice
 * (into a string per transfer, then into the head), a line of the list
 * once. A large body adds an empty "Expect:": libcurl asks for
 * 100-continue above 1 MiB, a round trip we never want; below EXPECT_MIN
 * the entry would only cost a compare in each of libcurl's header lookups
 * (an empty "Accept:" would cost more than libcurl's default Accept saves).
 * Returns the list in *out, or UV_EINVAL / UV_ENOMEM. */
static int set_headers(struct easy_slot *s, const struct tt_http_request *req,
                       struct curl_slist **out) {
  static char no_expect[] = "Expect:", user_agent[] = "User-Agent: " HTTP_USER_AGENT;
  size_t text = 0, count = 0;
  bool has_agent = false;
  for (const char *const *p = req->headers; p && *p; p++) {
    const char *hd = *p;
    size_t len = strcspn(hd, "\r\n");
    const char *colon = memchr(hd, ':', len);
    if (hd[len] != '\0' || colon == NULL || colon == hd)
      return UV_EINVAL;
    size_t nlen = (size_t)(colon - hd);
    if (header_is(hd, nlen, "transfer-encoding"))
      return UV_EINVAL;
    if (header_is(hd, nlen, "content-length"))
      continue;
    has_agent = has_agent || header_is(hd, nlen, "user-agent");
    text += len + 1;
    count++;
  }
  bool expect = req->body_len >= EXPECT_MIN;
  count += (size_t)expect + (size_t)!has_agent;
  if (text > s->text_cap) {
    char *t = realloc(s->text, text);
    if (t == NULL)
      return UV_ENOMEM;
    s->text = t;
    s->text_cap = text;
  }
  if (count > s->nodes_cap) {
    struct curl_slist *n = realloc(s->nodes, count * sizeof(*n));
    if (n == NULL)
      return UV_ENOMEM;
    s->nodes = n;
    s->nodes_cap = count;
  }
  size_t i = 0, off = 0;
  for (const char *const *p = req->headers; p && *p; p++) {
    size_t len = strlen(*p);
    const char *colon = memchr(*p, ':', len);
    if (header_is(*p, (size_t)(colon - *p), "content-length"))
      continue;
    memcpy(s->text + off, *p, len + 1);
    s->text_len = off + len + 1;
    s->nodes[i++].data = s->text + off;
    off += len + 1;
  }
  if (!has_agent)
    s->nodes[i++].data = user_agent;
  if (expect)
    s->nodes[i++].data = no_expect;
  for (size_t j = 0; j + 1 < i; j++)
    s->nodes[j].next = &s->nodes[j + 1];
  s->nodes[i - 1].next = NULL;
  *out = s->nodes;
  return 0;
}

/* The URL of a transfer. The same URL as the handle's last one costs
 * nothing; a new one is parsed into the handle's CURLU, with the flags
 * libcurl itself parses a CURLOPT_URL string with. CURLOPT_URL is cleared
 * so that libcurl takes the URL's text from the CURLU again (it keeps the
 * text of the first transfer otherwise). A URL the parser refuses goes to
 * CURLOPT_URL as it is, so the transfer fails just as it would without
 * the CURLU. */
static int set_url(struct easy_slot *s, const char *url) {
  if (s->url && strcmp(s->url, url) == 0)
    return 0;
  free(s->url);
  s->url = NULL;
  if (curl_url_set(s->uh, CURLUPART_URL, url, CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME) !=
      CURLUE_OK)
    return curl_easy_setopt(s->e, CURLOPT_CURLU, (CURLU *)NULL) != CURLE_OK ||
                   curl_easy_setopt(s->e, CURLOPT_URL, url) != CURLE_OK
               ? -1
               : 0;
  if ((s->url = strdup(url)) == NULL ||
      curl_easy_setopt(s->e, CURLOPT_URL, (char *)NULL) != CURLE_OK ||
      curl_easy_setopt(s->e, CURLOPT_CURLU, s->uh) != CURLE_OK)
    return -1;
  return 0;
}

int tt_http_start(struct tt_http *h, struct tt_http_call *call, const struct tt_http_request *req,
                  tt_http_done_cb done, void *arg) {
  assert(h->magic == HTTP_MAGIC);
  if (h->closing || req == NULL || req->url == NULL || done == NULL)
    return UV_EINVAL;
  memset(call, 0, sizeof(*call));
  /* A pooled easy handle, else a new one. */
  struct easy_slot *s = h->npool > 0 ? h->pool[--h->npool] : easy_new(h);
  if (s == NULL)
    return UV_ENOMEM;
  struct curl_slist *sl = NULL;
  int rc = set_headers(s, req, &sl);
  if (rc != 0) {
    easy_put(h, s, true); /* untouched by a transfer: still reusable */
    return rc;
  }
  uint64_t timeout = req->timeout_ms ? req->timeout_ms : h->timeout_ms;
  uint64_t ctimeout = req->connect_timeout_ms ? req->connect_timeout_ms : h->connect_timeout_ms;
  CURL *e = s->e;
  bool https = strncasecmp(req->url, "https:", 6) == 0;
  const char *proxy = https ? h->proxy_https : h->proxy_http;
  if (set_url(s, req->url) != 0 ||
      (s->proxy != proxy && curl_easy_setopt(e, CURLOPT_PROXY, proxy) != CURLE_OK) ||
      (s->timeout_ms != (long)timeout &&
       curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)timeout) != CURLE_OK) ||
      (s->connect_timeout_ms != (long)ctimeout &&
       curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)ctimeout) != CURLE_OK) ||
      curl_easy_setopt(e, CURLOPT_HTTPHEADER, sl) != CURLE_OK || set_method(e, req) != 0) {
    easy_put(h, s, false); /* half-configured: never back to the pool */
    return UV_EINVAL;
  }
  s->proxy = proxy;
  s->timeout_ms = (long)timeout;
  s->connect_timeout_ms = (long)ctimeout;
  call->h = h;
  call->done = done;
  call->arg = arg;
  call->slot = s;
  s->call = call;
  tt_buf_init(&call->resp.body, h->max_body);
  tt_buf_init(&call->resp.headers, HEADERS_CAP);
  if (curl_multi_add_handle(h->multi, e) != CURLM_OK) {
    call->slot = NULL;
    easy_put(h, s, false);
    return UV_ENOMEM;
  }
  list_push(&h->active, call, CALL_ACTIVE);
  /* The transfer starts here (connect, or the request written on a kept-
   * alive connection) instead of from the 0 ms timer curl just armed: one
   * loop turn less per request. Whatever finished meanwhile (this call
   * too, e.g. a refused scheme) is delivered from the delivery timer, or by
   * the deliver_all this call runs under: never inside this call. */
  int running = 0;
  curl_multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
  collect(h);
  if (h->fin.head && !h->delivering)
    uv_timer_start(&h->deliver, on_deliver, 0, 0);
  return 0;
}

void tt_http_cancel(struct tt_http *h, struct tt_http_call *call) {
  assert(h->magic == HTTP_MAGIC);
  if (call->state != CALL_ACTIVE)
    return; /* already finished: done reports what really happened */
  call_release_easy(h, call, false); /* stopped mid-flight: freed, never reused */
  list_unlink(&h->active, call);
  tt_buf_free(&call->resp.body);
  tt_buf_reset(&call->resp.headers);
  call->resp.transport = TT_HTTP_CANCELED;
  call->resp.status = 0;
  list_push(&h->fin, call, CALL_FINISHED);
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

static void on_handle_closed(uv_handle_t *handle) {
  struct tt_http *h = handle->data;
  if (--h->pending_closes == 0 && h->closed)
    h->closed(h->closed_arg);
}

void tt_http_close(struct tt_http *h, void (*closed)(void *arg), void *arg) {
  assert(h->magic == HTTP_MAGIC);
  assert(h->active.head == NULL && h->fin.head == NULL); /* the contract: nothing outstanding */
  h->closing = true;
  h->closed = closed;
  h->closed_arg = arg;
  /* Tolerated in release builds: drop what is left without callbacks. */
  while (h->active.head) {
    struct tt_http_call *c = h->active.head;
    call_release_easy(h, c, false);
    list_unlink(&h->active, c);
    tt_buf_free(&c->resp.body);
    tt_buf_free(&c->resp.headers);
    c->state = CALL_DELIVERED;
  }
  for (struct tt_http_call *c = h->fin.head; c; c = c->next) {
    tt_buf_free(&c->resp.body);
    tt_buf_free(&c->resp.headers);
  }
  h->fin.head = h->fin.tail = NULL;
  /* Order matters: curl_multi_cleanup may still call the timer and socket
   * callbacks (closing cached connections), so both must be alive. */
  h->pending_closes++; /* held until every handle was asked to close */
  pool_free(h); /* easy handles first, then the multi (docs/design.md, "Shutdown") */
  curl_multi_cleanup(h->multi);
  h->multi = NULL;
  curl_share_cleanup(h->share); /* no easy handle uses it any more */
  h->share = NULL;
  for (size_t i = 0; i < h->nsocks; i++)
    if (h->socks[i])
      sock_close(h, h->socks[i]);
  h->pending_closes += 2;
  uv_close((uv_handle_t *)&h->timer, on_handle_closed);
  uv_close((uv_handle_t *)&h->deliver, on_handle_closed);
  h->pending_closes--; /* cannot reach 0 here: the timers are still closing */
}

void tt_http_destroy(struct tt_http *h) {
  if (h == NULL)
    return;
  assert(h->magic == HTTP_MAGIC);
  h->magic = 0;
  pool_free(h);
  if (h->multi) { /* never closed: only valid when the loop is gone anyway */
    h->loop_gone = true; /* the callbacks below touch no handle */
    curl_multi_cleanup(h->multi);
    for (size_t i = 0; i < h->nsocks; i++)
      free(h->socks[i]);
  }
  if (h->share)
    curl_share_cleanup(h->share);
  http_free(h);
  curl_global_cleanup();
}
