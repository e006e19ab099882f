/* SPDX-License-Identifier: Apache-2.0 */
/* http_wire.c -- our HTTP/1.1 client engine for http:// and https:// URLs
 * on the libuv loop: a bounded keep-alive pool per scheme, host and port,
 * one request per connection at a time, one write per request, the call's
 * timer on its connection; TLS (http_tls.c) between the socket and the
 * parser for https. */
#include "backend/dynamodb/http_wire.h"

#include <assert.h>
#include <netdb.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backend/dynamodb/http_parse.h"
#include "backend/dynamodb/http_tls.h"

#define WIRE_MAGIC 0x57495245u /* "WIRE" */
/* curl's CURLOPT_MAXAGE_CONN default: an idle connection older than this
 * is not reused (servers drop idle ones; node's default is 5 s, which the
 * read on idle connections notices first). */
#define IDLE_MAX_AGE_MS 118000
/* One read buffer for every connection: the loop is single-threaded and
 * each read callback consumes its bytes before it returns. */
#define READ_BUF_SIZE (64u * 1024u)
/* Decrypted bytes: one TLS record holds at most 16 KiB. */
#define PLAIN_BUF_SIZE (16u * 1024u)
#define HOST_MAX 255
#define METHOD_MAX 16

enum conn_state {
  C_RESOLVING = 1, /* getaddrinfo outstanding */
  C_CONNECTING,    /* uv_tcp_connect outstanding */
  C_HANDSHAKE,     /* https: connected, TLS handshake running */
  C_BUSY,          /* a request on it: writing and/or reading */
  C_IDLE,          /* in the pool */
  C_CLOSED,        /* uv_close called: waiting for close callbacks (and getaddrinfo) */
};

/* One TCP connection; at most one call on it at a time. Its timer is the
 * call's (connect, then whole-transfer timeout): a connection's life is
 * longer than a call's, so a call never waits for a handle to close. */
struct wire_conn {
  uv_tcp_t tcp;
  uv_timer_t timer;
  uv_connect_t connect;
  uv_write_t write;
  uv_getaddrinfo_t gai;
  struct tt_http_wire *w;
  struct wire_conn *prev, *next;   /* every connection not yet freed */
  struct wire_conn *iprev, *inext; /* the idle pool, most recent first */
  struct tt_http_call *call;
  enum conn_state state;
  int closes;        /* close callbacks still to come */
  bool gai_pending;  /* on_resolved still to come */
  bool writing;      /* on_written still to come */
  bool reused;       /* taken from the pool: a dead peer is retried once */
  bool tcp_used;     /* uv_tcp_connect was called on tcp */
  bool secure;       /* https: TLS on this connection (part of the pool key) */
  uint64_t idle_since;
  uint64_t connect_deadline; /* loop time */
  struct addrinfo *ai;       /* owned: a name's addresses while connecting */
  struct addrinfo *ai_next;  /* the next one to try */
  struct tt_http_parse parse;
  struct tt_buf head; /* the current request's line and headers */
  struct tt_http_tls tls; /* https, from the handshake on */
  struct tt_buf out;      /* https: encrypted bytes being written */
  uint16_t port;
  char host[HOST_MAX + 1]; /* as in the URL, without brackets */
};

struct tt_http_wire {
  unsigned magic;
  uv_loop_t *loop;
  struct tt_http *h;
  struct wire_conn *conns;
  struct wire_conn *idle_head, *idle_tail;
  size_t nidle;
  size_t nconns; /* allocated, not yet freed */
  char *rbuf;
  char *pbuf;       /* decrypted bytes, as rbuf (allocated with the context) */
  SSL_CTX *ssl_ctx; /* https */
  struct tt_http_tls_cache sessions; /* ssl_ctx's, for resumption */
  const char *ca_file; /* borrowed from the client; NULL = default paths */
  bool anchors;        /* ssl_ctx's trust anchors loaded */
  bool closing;
  void (*closed)(void *arg);
  void *closed_arg;
};

/* ---- URL ---- */

struct wire_url {
  const char *host;
  size_t host_len;
  bool v6;
  bool secure; /* https */
  uint16_t port;
  const char *path; /* from '/' or '?', fragment excluded; "" means "/" */
  size_t path_len;
};

static bool host_char(char c, bool v6) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
      c == '-')
    return true;
  return v6 ? c == ':' : c == '_';
}

/* Splits an http:// or https:// URL. UV_ENOTSUP for anything this engine
 * leaves to libcurl: other schemes, user info, IPv6 zones, bytes libcurl
 * would encode or refuse, an https host with a trailing dot (libcurl
 * strips it for SNI and the certificate check). */
static int url_parse(const char *url, struct wire_url *u) {
  memset(u, 0, sizeof(*u));
  const char *a;
  if (strncasecmp(url, "http://", 7) == 0) {
    a = url + 7;
  } else if (strncasecmp(url, "https://", 8) == 0) {
    a = url + 8;
    u->secure = true;
  } else {
    return UV_ENOTSUP;
  }
  size_t alen = strcspn(a, "/?#");
  const char *ae = a + alen;
  if (memchr(a, '@', alen) != NULL)
    return UV_ENOTSUP;
  const char *p = a;
  if (*p == '[') {
    const char *close = memchr(p, ']', alen);
    if (close == NULL)
      return UV_ENOTSUP;
    u->v6 = true;
    u->host = p + 1;
    u->host_len = (size_t)(close - p - 1);
    p = close + 1;
  } else {
    u->host = p;
    while (p < ae && *p != ':')
      p++;
    u->host_len = (size_t)(p - u->host);
  }
  if (u->host_len == 0 || u->host_len > HOST_MAX)
    return UV_ENOTSUP;
  for (size_t i = 0; i < u->host_len; i++)
    if (!host_char(u->host[i], u->v6))
      return UV_ENOTSUP;
  if (u->secure && u->host[u->host_len - 1] == '.')
    return UV_ENOTSUP;
  unsigned long port = u->secure ? 443 : 80;
  if (p < ae) {
    if (*p != ':' || p + 1 == ae || ae - p > 6)
      return UV_ENOTSUP;
    port = 0;
    for (p++; p < ae; p++) {
      if (*p < '0' || *p > '9')
        return UV_ENOTSUP;
      port = port * 10 + (unsigned long)(*p - '0');
    }
    if (port == 0 || port > 65535)
      return UV_ENOTSUP;
  }
  u->port = (uint16_t)port;
  u->path = ae;
  u->path_len = strcspn(ae, "#");
  for (size_t i = 0; i < u->path_len; i++) {
    unsigned char c = (unsigned char)ae[i];
    if (c <= 0x20 || c >= 0x7f)
      return UV_ENOTSUP;
  }
  return 0;
}

/* ---- the request head ---- */

static bool is_tchar(unsigned char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-')
    return true;
  return c != '\0' && strchr("!#$%&'*+.^_`|~", c) != NULL;
}

static bool is_token(const char *s, size_t n) {
  if (n == 0)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!is_tchar((unsigned char)s[i]))
      return false;
  return true;
}

/* Whether header line `h` is named `lname` (lower case, with its colon). */
static bool named(const char *h, const char *lname, size_t len) {
  return strncasecmp(h, lname, len) == 0;
}

static int put_u64(struct tt_buf *b, uint64_t x) {
  char d[24];
  size_t i = sizeof(d);
  do {
    d[--i] = (char)('0' + x % 10);
    x /= 10;
  } while (x);
  return tt_buf_append(b, d + i, sizeof(d) - i);
}

/* The request line and headers, as libcurl sent them: Host (host[:port],
 * the port only when not the scheme's, 80 or 443), User-Agent and Accept
 * unless the caller set them, the caller's headers in order,
 * Content-Length for a body or a POST/PUT. A caller header with an empty value is not sent and suppresses
 * our default of that name (libcurl's "Name:" rule); a caller's
 * Content-Length is replaced by ours. Returns 0, UV_EINVAL for a caller
 * line that is not one header (no colon, a bad name, CR or LF in the value:
 * what would split the request; Transfer-Encoding: we frame the body), or
 * UV_ENOMEM. One pass over each value: they hold long signatures and
 * tokens. */
static int head_build(struct tt_buf *b, const char *method, const struct wire_url *u,
                      const struct tt_http_request *req) {
  bool has_host = false, has_ua = false, has_accept = false;
  for (const char *const *p = req->headers; p && *p; p++) {
    switch ((*p)[0] | 0x20) { /* the first letter, lower case */
    case 'h':
      has_host |= named(*p, "host:", 5);
      break;
    case 'u':
      has_ua |= named(*p, "user-agent:", 11);
      break;
    case 'a':
      has_accept |= named(*p, "accept:", 7);
      break;
    default:
      break;
    }
  }
  tt_buf_reset(b);
  int bad = tt_buf_puts(b, method) | tt_buf_append(b, " ", 1);
  if (u->path_len == 0 || u->path[0] == '?')
    bad |= tt_buf_append(b, "/", 1);
  bad |= tt_buf_append(b, u->path, u->path_len) | tt_buf_puts(b, " HTTP/1.1\r\n");
  if (!has_host) { /* first, as RFC 9112 asks */
    bad |= tt_buf_puts(b, "Host: ");
    if (u->v6)
      bad |= tt_buf_append(b, "[", 1);
    bad |= tt_buf_append(b, u->host, u->host_len);
    if (u->v6)
      bad |= tt_buf_append(b, "]", 1);
    if (u->port != (u->secure ? 443 : 80))
      bad |= tt_buf_append(b, ":", 1) | put_u64(b, u->port);
    bad |= tt_buf_append(b, "\r\n", 2);
  }
  for (const char *const *p = req->headers; p && *p; p++) {
    const char *h = *p;
    size_t nlen = 0;
    while (h[nlen] != ':' && is_tchar((unsigned char)h[nlen]))
      nlen++;
    if (nlen == 0 || h[nlen] != ':')
      return UV_EINVAL;
    const char *v = h + nlen + 1;
    while (*v == ' ' || *v == '\t')
      v++;
    size_t vlen = strcspn(v, "\r\n");
    if (v[vlen] != '\0' || (nlen == 17 && named(h, "transfer-encoding:", 18)))
      return UV_EINVAL;
    while (vlen > 0 && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
      vlen--;
    if (vlen == 0 || (nlen == 14 && named(h, "content-length:", 15)))
      continue;
    bad |= tt_buf_append(b, h, nlen) | tt_buf_append(b, ": ", 2) | tt_buf_append(b, v, vlen) |
           tt_buf_append(b, "\r\n", 2);
  }
  if (!has_ua)
    bad |= tt_buf_puts(b, "User-Agent: tabletheoryd\r\n");
  if (!has_accept)
    bad |= tt_buf_puts(b, "Accept: */*\r\n");
  if (req->body != NULL || req->body_len > 0 || strcmp(method, "POST") == 0 ||
      strcmp(method, "PUT") == 0)
    bad |= tt_buf_puts(b, "Content-Length: ") | put_u64(b, req->body_len) |
           tt_buf_append(b, "\r\n", 2);
  bad |= tt_buf_append(b, "\r\n", 2);
  return bad ? UV_ENOMEM : 0;
}

/* ---- connections ---- */

static void on_timer(uv_timer_t *t);
static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);
static void on_written(uv_write_t *req, int status);
static int conn_open(struct wire_conn *cn);
static int conn_flush(struct wire_conn *cn);

static uint64_t left_ms(struct tt_http_wire *w, uint64_t deadline) {
  uint64_t now = uv_now(w->loop);
  return deadline > now ? deadline - now : 0;
}

static void idle_unlink(struct tt_http_wire *w, struct wire_conn *cn) {
  if (cn->iprev)
    cn->iprev->inext = cn->inext;
  else
    w->idle_head = cn->inext;
  if (cn->inext)
    cn->inext->iprev = cn->iprev;
  else
    w->idle_tail = cn->iprev;
  cn->iprev = cn->inext = NULL;
  w->nidle--;
}

static void conn_maybe_free(struct wire_conn *cn) {
  if (cn->closes > 0 || cn->gai_pending)
    return;
  struct tt_http_wire *w = cn->w;
  if (cn->prev)
    cn->prev->next = cn->next;
  else
    w->conns = cn->next;
  if (cn->next)
    cn->next->prev = cn->prev;
  if (cn->ai)
    uv_freeaddrinfo(cn->ai);
  if (cn->head.data) /* it held the signature and maybe a session token */
    OPENSSL_cleanse(cn->head.data, cn->head.alloc);
  tt_buf_free(&cn->head);
  tt_buf_free(&cn->out);
  tt_http_tls_free(&cn->tls); /* no close_notify: the socket is gone */
  tt_http_parse_free(&cn->parse);
  free(cn);
  if (--w->nconns == 0 && w->closing && w->closed)
    w->closed(w->closed_arg);
}

static void on_conn_handle_closed(uv_handle_t *hd) {
  struct wire_conn *cn = hd->data;
  cn->closes--;
  conn_maybe_free(cn);
}

/* Closes a connection that carries no call (detach it first). */
static void conn_close(struct wire_conn *cn) {
  if (cn->state == C_CLOSED)
    return;
  assert(cn->call == NULL);
  if (cn->state == C_IDLE)
    idle_unlink(cn->w, cn);
  cn->state = C_CLOSED;
  if (cn->gai_pending)
    uv_cancel((uv_req_t *)&cn->gai); /* may fail when already running: on_resolved frees */
  cn->closes = 2;
  uv_close((uv_handle_t *)&cn->tcp, on_conn_handle_closed);
  uv_close((uv_handle_t *)&cn->timer, on_conn_handle_closed);
}

static struct wire_conn *conn_new(struct tt_http_wire *w, bool secure, const char *host,
                                  size_t host_len, uint16_t port) {
  struct wire_conn *cn = calloc(1, sizeof(*cn));
  if (cn == NULL)
    return NULL;
  if (uv_tcp_init(w->loop, &cn->tcp) != 0) {
    free(cn);
    return NULL;
  }
  uv_timer_init(w->loop, &cn->timer);
  cn->w = w;
  cn->tcp.data = cn;
  cn->timer.data = cn;
  cn->connect.data = cn;
  cn->write.data = cn;
  cn->gai.data = cn;
  cn->port = port;
  cn->secure = secure;
  memcpy(cn->host, host, host_len);
  cn->host[host_len] = '\0';
  tt_buf_init(&cn->head, 0);
  tt_buf_init(&cn->out, 0);
  cn->next = w->conns;
  if (w->conns)
    w->conns->prev = cn;
  w->conns = cn;
  w->nconns++;
  return cn;
}

/* Puts a connection whose call completed into the pool (the newest first);
 * over the bound, the oldest idle one is closed. */
static void idle_put(struct tt_http_wire *w, struct wire_conn *cn) {
  cn->state = C_IDLE;
  cn->idle_since = uv_now(w->loop);
  cn->iprev = NULL;
  cn->inext = w->idle_head;
  if (w->idle_head)
    w->idle_head->iprev = cn;
  else
    w->idle_tail = cn;
  w->idle_head = cn;
  w->nidle++;
  if (w->nidle > TT_HTTP_MAX_IDLE)
    conn_close(w->idle_tail);
}

/* The most recently used idle connection to scheme://host:port, or NULL. */
static struct wire_conn *idle_take(struct tt_http_wire *w, const struct wire_url *u) {
  uint64_t now = uv_now(w->loop);
  struct wire_conn *cn = w->idle_head;
  while (cn) {
    struct wire_conn *next = cn->inext;
    if (now - cn->idle_since > IDLE_MAX_AGE_MS) {
      conn_close(cn);
    } else if (cn->port == u->port && cn->secure == u->secure && strlen(cn->host) == u->host_len &&
               memcmp(cn->host, u->host, u->host_len) == 0) {
      idle_unlink(w, cn);
      return cn;
    }
    cn = next;
  }
  return NULL;
}

static void conn_attach(struct wire_conn *cn, struct tt_http_call *c) {
  cn->call = c;
  c->conn = cn;
  tt_http_parse_init(&cn->parse, c->head, &c->resp.headers, &c->resp.body);
}

static struct tt_http_call *conn_detach(struct wire_conn *cn) {
  struct tt_http_call *c = cn->call;
  if (c) {
    c->conn = NULL;
    cn->call = NULL;
  }
  uv_timer_stop(&cn->timer);
  return c;
}

/* Ends the call on `cn` with outcome `t` and closes the connection. */
static void conn_fail(struct wire_conn *cn, enum tt_http_transport t) {
  struct tt_http_call *c = conn_detach(cn);
  conn_close(cn);
  if (c)
    tt_http_finish(c, t, 0);
}

/* Sends the request: head and body in one system call when the socket
 * takes them (the usual case: no write request, no callback), the rest
 * with one uv_write. A completed write must not wait for its callback: the
 * answer can arrive in the same loop turn (a request sent from an idle
 * callback runs after that turn's pending callbacks), and a connection
 * with a write in flight cannot go back to the pool. */
static int conn_send(struct wire_conn *cn) {
  struct tt_http_call *c = cn->call;
  if (cn->secure) {
    if (tt_http_tls_write(&cn->tls, cn->head.data, cn->head.len) != 0 ||
        tt_http_tls_write(&cn->tls, c->body, c->body_len) != 0)
      return UV_EIO;
    return conn_flush(cn);
  }
  uv_buf_t bufs[2] = {uv_buf_init(cn->head.data, (unsigned)cn->head.len),
                      uv_buf_init((char *)(uintptr_t)c->body, (unsigned)c->body_len)};
  unsigned n = c->body_len > 0 ? 2 : 1;
  int rc = uv_try_write((uv_stream_t *)&cn->tcp, bufs, n);
  if (rc < 0 && rc != UV_EAGAIN)
    return rc;
  size_t sent = rc > 0 ? (size_t)rc : 0;
  uv_buf_t *first = bufs;
  while (n > 0 && sent >= first->len) {
    sent -= first->len;
    first++;
    n--;
  }
  if (n == 0)
    return 0;
  first->base += sent;
  first->len -= sent;
  rc = uv_write(&cn->write, (uv_stream_t *)&cn->tcp, first, n, on_written);
  cn->writing = rc == 0;
  return rc;
}

/* https: writes what OpenSSL produced for the peer, as conn_send does:
 * what the socket takes at once, the rest with one uv_write from cn->out,
 * which stays untouched until on_written; what OpenSSL produces meanwhile
 * waits in its memory BIO until then. */
static int conn_flush(struct wire_conn *cn) {
  if (cn->writing)
    return 0;
  tt_buf_reset(&cn->out);
  ssize_t n = tt_http_tls_take_out(&cn->tls, &cn->out);
  if (n <= 0) {
    if (cn->out.alloc > READ_BUF_SIZE) /* a big body passed: do not keep its size */
      tt_buf_free(&cn->out);
    return n == 0 ? 0 : UV_ENOMEM;
  }
  uv_buf_t b = uv_buf_init(cn->out.data, (unsigned)cn->out.len);
  int rc = uv_try_write((uv_stream_t *)&cn->tcp, &b, 1);
  if (rc < 0 && rc != UV_EAGAIN)
    return rc;
  size_t sent = rc > 0 ? (size_t)rc : 0;
  if (sent == b.len)
    return 0;
  b.base += sent;
  b.len -= sent;
  rc = uv_write(&cn->write, (uv_stream_t *)&cn->tcp, &b, 1, on_written);
  cn->writing = rc == 0;
  return rc;
}

/* The peer closed or reset `cn` before its response was complete. A
 * connection from the pool that died before any response byte was most
 * likely closed by the server while idle: the request goes once more on a
 * fresh connection, as libcurl does. Otherwise TT_HTTP_RESET. */
static void conn_complete(struct wire_conn *cn, bool reusable);

static void conn_died(struct wire_conn *cn) {
  struct tt_http_call *c = cn->call;
  struct tt_http_wire *w = cn->w;
  if (c && tt_http_parse_head_status(&cn->parse) == 413) {
    /* A server may answer 413 before reading a whole body and then reset
     * the connection: the answer stands (what arrived of its body too),
     * it is not a transport failure to retry. */
    conn_complete(cn, false);
    return;
  }
  if (c == NULL || !cn->reused || cn->parse.any_byte || c->retried || w->closing) {
    conn_fail(cn, TT_HTTP_RESET);
    return;
  }
  struct wire_conn *fresh = conn_new(w, cn->secure, cn->host, strlen(cn->host), cn->port);
  if (fresh == NULL) {
    conn_fail(cn, TT_HTTP_RESET);
    return;
  }
  c->retried = true;
  conn_detach(cn);
  struct tt_buf t = fresh->head; /* the request head moves along */
  fresh->head = cn->head;
  cn->head = t;
  conn_close(cn);
  conn_attach(fresh, c);
  uint64_t now = uv_now(w->loop);
  fresh->connect_deadline = now + c->connect_timeout_ms;
  if (fresh->connect_deadline > c->deadline)
    fresh->connect_deadline = c->deadline;
  uv_timer_start(&fresh->timer, on_timer, left_ms(w, fresh->connect_deadline), 0);
  if (conn_open(fresh) != 0)
    conn_fail(fresh, TT_HTTP_CONNECT);
}

/* ---- loop callbacks: each ends by delivering what finished ---- */

static void on_timer(uv_timer_t *t) {
  struct wire_conn *cn = t->data;
  struct tt_http_wire *w = cn->w;
  conn_fail(cn, TT_HTTP_TIMEOUT);
  tt_http_deliver(w->h, true);
}

static void on_alloc(uv_handle_t *hd, size_t suggested, uv_buf_t *buf) {
  (void)suggested;
  struct wire_conn *cn = hd->data;
  buf->base = cn->w->rbuf;
  buf->len = READ_BUF_SIZE;
}

/* The response is complete: the call finishes, the connection goes back to
 * the pool when it can carry another request. */
static void conn_complete(struct wire_conn *cn, bool reusable) {
  struct tt_http_wire *w = cn->w;
  long status = cn->parse.status;
  struct tt_http_call *c = conn_detach(cn);
  if (reusable && !cn->writing && !w->closing)
    idle_put(w, cn);
  else
    conn_close(cn);
  tt_http_finish(c, TT_HTTP_OK, status);
}

/* Response bytes (plain, or decrypted) for the call on `cn`. */
static void conn_feed(struct wire_conn *cn, const char *data, size_t len) {
  size_t used;
  int rc = tt_http_parse_feed(&cn->parse, data, len, &used);
  if (rc == TT_HTTP_PARSE_MORE)
    return;
  if (rc == TT_HTTP_PARSE_DONE)
    /* Bytes past the response were never asked for: not reusable. */
    conn_complete(cn, cn->parse.keep_alive && used == len);
  else
    conn_fail(cn, rc == TT_HTTP_PARSE_TOO_LARGE ? TT_HTTP_TOO_LARGE : TT_HTTP_OTHER);
}

/* The peer ended the stream (EOF, or TLS close_notify) while a call is on
 * `cn`: a close-delimited body is complete, anything else died. */
static void conn_eof(struct wire_conn *cn) {
  long head = tt_http_parse_head_status(&cn->parse);
  if (tt_http_parse_eof(&cn->parse) == TT_HTTP_PARSE_DONE || head == 413)
    conn_complete(cn, false); /* a 413 cut short: see conn_died */
  else
    conn_died(cn);
}

/* Connected (and, for https, the handshake done): the request goes out;
 * the timer now guards the whole transfer. */
static void conn_request(struct wire_conn *cn) {
  cn->state = C_BUSY;
  uv_timer_start(&cn->timer, on_timer, left_ms(cn->w, cn->call->deadline), 0);
  if (conn_send(cn) != 0)
    conn_fail(cn, TT_HTTP_RESET);
}

/* https: advances the handshake and writes what it produced; once done,
 * the request goes out. Any failure on the way is TT_HTTP_TLS, as libcurl
 * reports a handshake cut by the peer (CURLE_SSL_CONNECT_ERROR). */
static void conn_handshake(struct wire_conn *cn) {
  int rc = tt_http_tls_handshake(&cn->tls);
  int wrc = conn_flush(cn); /* also a failure's alert, best effort */
  if (rc == TT_HTTP_TLS_FAIL || wrc != 0)
    conn_fail(cn, TT_HTTP_TLS);
  else if (rc == 0)
    conn_request(cn);
}

/* https: encrypted bytes from the peer. During the handshake they advance
 * it; then each decrypted piece goes to the parser. Decrypted bytes on an
 * idle connection (or after the response) close it as on plain http;
 * records without data (TLS 1.3 session tickets) do not. */
static void conn_decrypt(struct wire_conn *cn, const char *data, size_t len) {
  struct tt_http_wire *w = cn->w;
  if (tt_http_tls_feed(&cn->tls, data, len) != 0) {
    if (cn->call)
      conn_fail(cn, TT_HTTP_OTHER);
    else
      conn_close(cn);
    return;
  }
  if (cn->state == C_HANDSHAKE) {
    conn_handshake(cn);
    if (cn->state != C_BUSY)
      return; /* still handshaking, or failed */
  }
  while (cn->state != C_CLOSED) {
    ssize_t n = tt_http_tls_read(&cn->tls, w->pbuf, PLAIN_BUF_SIZE);
    if (n == TT_HTTP_TLS_AGAIN)
      break;
    if (cn->call == NULL) /* idle: data, close_notify or garbage */
      conn_close(cn);
    else if (n > 0)
      conn_feed(cn, w->pbuf, (size_t)n);
    else if (n == TT_HTTP_TLS_EOF)
      conn_eof(cn);
    else /* a bad record: what libcurl reports as CURLE_RECV_ERROR */
      conn_fail(cn, TT_HTTP_RESET);
  }
  if (cn->state != C_CLOSED && conn_flush(cn) != 0) { /* e.g. a KeyUpdate answer */
    if (cn->call && !cn->parse.any_byte)
      conn_died(cn);
    else if (cn->call == NULL)
      conn_close(cn);
  }
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  struct wire_conn *cn = s->data;
  struct tt_http_wire *w = cn->w;
  if (nread == 0 || cn->state == C_CLOSED)
    return;
  if (cn->call == NULL && (nread < 0 || !cn->secure)) {
    /* idle: the server closed it, or sent what nobody asked */
    conn_close(cn);
    return;
  }
  if (nread < 0) {
    if (cn->state == C_HANDSHAKE)
      conn_fail(cn, TT_HTTP_TLS); /* cut in the handshake: CURLE_SSL_CONNECT_ERROR */
    else if (nread == UV_EOF)
      conn_eof(cn);
    else
      conn_died(cn);
  } else if (cn->secure) {
    conn_decrypt(cn, buf->base, (size_t)nread);
  } else {
    conn_feed(cn, buf->base, (size_t)nread);
  }
  tt_http_deliver(w->h, true);
}

static void on_written(uv_write_t *req, int status) {
  struct wire_conn *cn = req->data;
  cn->writing = false;
  if (cn->state == C_CLOSED)
    return; /* closed under the write (UV_ECANCELED) */
  if (status == 0 && cn->secure)
    status = conn_flush(cn); /* what OpenSSL produced while this write ran */
  if (status == 0)
    return;
  if (cn->state == C_HANDSHAKE)
    conn_fail(cn, TT_HTTP_TLS);
  else if (cn->call == NULL)
    conn_close(cn);
  else if (!cn->parse.any_byte)
    /* No answer yet: the connection is dead. With bytes of an answer, the
     * read side finishes the call (a server may answer before reading a
     * whole body, e.g. 413, then close). */
    conn_died(cn);
  else
    return;
  tt_http_deliver(cn->w->h, true);
}

/* Connected: plain http sends the request; https starts the handshake,
 * which stays under the connect deadline (libcurl's connect timeout covers
 * it too). */
static void conn_ready(struct wire_conn *cn) {
  struct tt_http_wire *w = cn->w;
  if (cn->ai) {
    uv_freeaddrinfo(cn->ai);
    cn->ai = cn->ai_next = NULL;
  }
  cn->state = cn->secure ? C_HANDSHAKE : C_BUSY;
  uv_tcp_nodelay(&cn->tcp, 1);
  uv_tcp_keepalive(&cn->tcp, 1, 60); /* as CURLOPT_TCP_KEEPALIVE */
  if (uv_read_start((uv_stream_t *)&cn->tcp, on_alloc, on_read) != 0) {
    conn_fail(cn, TT_HTTP_RESET);
    return;
  }
  if (!cn->secure) {
    conn_request(cn);
    return;
  }
  int rc = tt_http_tls_begin(&cn->tls, w->ssl_ctx, cn->host, cn->port);
  if (rc != 0)
    conn_fail(cn, rc == TT_HTTP_TLS_NOMEM ? TT_HTTP_OTHER : TT_HTTP_TLS);
  else
    conn_handshake(cn);
}

static void on_connected(uv_connect_t *req, int status);

/* Connects to the next address of a name: on `cn` itself while its handle
 * never tried one, else on a new connection (a uv_tcp_t that failed to
 * connect cannot be reused), which takes the call, the head and the
 * addresses while `cn` is closed. Returns 0, or UV_ENOENT when no address
 * is left (UV_ENOMEM when out of memory). */
static int conn_next_address(struct wire_conn *cn) {
  struct tt_http_wire *w = cn->w;
  while (cn->ai_next) {
    struct addrinfo *ai = cn->ai_next;
    cn->ai_next = ai->ai_next;
    if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
        ai->ai_addrlen > sizeof(struct sockaddr_storage))
      continue;
    struct wire_conn *nx = cn;
    if (cn->tcp_used &&
        (nx = conn_new(w, cn->secure, cn->host, strlen(cn->host), cn->port)) == NULL)
      return UV_ENOMEM;
    struct sockaddr_storage sa;
    memcpy(&sa, ai->ai_addr, ai->ai_addrlen);
    if (ai->ai_family == AF_INET)
      ((struct sockaddr_in *)&sa)->sin_port = htons(cn->port);
    else
      ((struct sockaddr_in6 *)&sa)->sin6_port = htons(cn->port);
    int rc = uv_tcp_connect(&nx->connect, &nx->tcp, (struct sockaddr *)&sa, on_connected);
    nx->tcp_used = true;
    if (rc != 0) {
      if (nx != cn)
        conn_close(nx);
      continue;
    }
    nx->state = C_CONNECTING;
    if (nx == cn)
      return 0;
    struct tt_http_call *c = conn_detach(cn);
    nx->connect_deadline = cn->connect_deadline;
    nx->ai = cn->ai;
    nx->ai_next = cn->ai_next;
    cn->ai = cn->ai_next = NULL;
    struct tt_buf t = nx->head;
    nx->head = cn->head;
    cn->head = t;
    conn_close(cn);
    conn_attach(nx, c);
    uv_timer_start(&nx->timer, on_timer, left_ms(w, nx->connect_deadline), 0);
    return 0;
  }
  return UV_ENOENT;
}

static void on_connected(uv_connect_t *req, int status) {
  struct wire_conn *cn = req->data;
  struct tt_http_wire *w = cn->w;
  if (cn->state == C_CLOSED)
    return; /* canceled or timed out while connecting */
  if (status == 0)
    conn_ready(cn);
  else if (conn_next_address(cn) != 0)
    conn_fail(cn, TT_HTTP_CONNECT);
  tt_http_deliver(w->h, true);
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res) {
  struct wire_conn *cn = req->data;
  struct tt_http_wire *w = cn->w;
  cn->gai_pending = false;
  if (cn->state == C_CLOSED) {
    if (res)
      uv_freeaddrinfo(res);
    conn_maybe_free(cn);
    return;
  }
  if (status != 0) {
    conn_fail(cn, TT_HTTP_CONNECT);
  } else {
    cn->ai = cn->ai_next = res;
    if (conn_next_address(cn) != 0)
      conn_fail(cn, TT_HTTP_CONNECT);
  }
  tt_http_deliver(w->h, true);
}

/* Starts connecting: a numeric address at once, a name through
 * getaddrinfo (joined like everything else: canceled on close). */
static int conn_open(struct wire_conn *cn) {
  struct tt_http_wire *w = cn->w;
  struct sockaddr_storage sa;
  if (uv_ip4_addr(cn->host, cn->port, (struct sockaddr_in *)&sa) == 0 ||
      uv_ip6_addr(cn->host, cn->port, (struct sockaddr_in6 *)&sa) == 0) {
    cn->state = C_CONNECTING;
    cn->tcp_used = true;
    return uv_tcp_connect(&cn->connect, &cn->tcp, (struct sockaddr *)&sa, on_connected);
  }
  struct addrinfo hints;
  memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  int rc = uv_getaddrinfo(w->loop, &cn->gai, on_resolved, cn->host, NULL, &hints);
  if (rc == 0) {
    cn->state = C_RESOLVING;
    cn->gai_pending = true;
  }
  return rc;
}

/* ---- the engine ---- */

int tt_http_wire_new(uv_loop_t *loop, struct tt_http *h, const char *ca_file,
                     struct tt_http_wire **out) {
  struct tt_http_wire *w = calloc(1, sizeof(*w));
  if (w == NULL || (w->rbuf = malloc(READ_BUF_SIZE)) == NULL ||
      (w->pbuf = malloc(PLAIN_BUF_SIZE)) == NULL) {
    if (w)
      free(w->rbuf);
    free(w);
    return UV_ENOMEM;
  }
  if (tt_http_tls_ctx_new(&w->sessions, &w->ssl_ctx) != 0) {
    free(w->pbuf);
    free(w->rbuf);
    free(w);
    return UV_ENOMEM;
  }
  w->magic = WIRE_MAGIC;
  w->ca_file = ca_file;
  w->loop = loop;
  w->h = h;
  *out = w;
  return 0;
}

int tt_http_wire_start(struct tt_http_wire *w, struct tt_http_call *c,
                       const struct tt_http_request *req, uint64_t timeout_ms,
                       uint64_t connect_timeout_ms) {
  assert(w->magic == WIRE_MAGIC);
  struct wire_url u;
  const char *method = req->method ? req->method : "GET";
  size_t mlen = strlen(method);
  if (w->closing || url_parse(req->url, &u) != 0 || mlen > METHOD_MAX || !is_token(method, mlen))
    return UV_ENOTSUP;
  /* Trust anchors at the first https call (the system bundle costs ~30 ms:
   * a client that only speaks http never pays it; libcurl loaded them at
   * its first https connection too). One that does not load fails the call
   * with TT_HTTP_TLS, as libcurl's CURLE_SSL_CACERT_BADFILE did, and is
   * tried again by the next call; http is unaffected. */
  if (u.secure && !w->anchors)
    w->anchors = tt_http_tls_ctx_load(w->ssl_ctx, w->ca_file) == 0;
  if (u.secure && !w->anchors) {
    c->wire = true;
    tt_http_finish(c, TT_HTTP_TLS, 0);
    tt_http_deliver(w->h, false);
    return 0;
  }
  struct wire_conn *cn = idle_take(w, &u);
  bool fresh = cn == NULL;
  if (fresh && (cn = conn_new(w, u.secure, u.host, u.host_len, u.port)) == NULL)
    return UV_ENOMEM;
  int rc = head_build(&cn->head, method, &u, req);
  if (rc != 0) {
    if (fresh)
      conn_close(cn);
    else
      idle_put(w, cn);
    return rc;
  }
  c->wire = true;
  c->body = req->body;
  c->body_len = req->body_len;
  c->head = strcmp(method, "HEAD") == 0;
  c->retried = false;
  c->connect_timeout_ms = connect_timeout_ms;
  uint64_t now = uv_now(w->loop);
  c->deadline = now + timeout_ms;
  conn_attach(cn, c);
  if (!fresh) {
    cn->state = C_BUSY;
    cn->reused = true;
    uv_timer_start(&cn->timer, on_timer, timeout_ms, 0);
    if (conn_send(cn) != 0)
      conn_died(cn);
  } else {
    cn->connect_deadline = now + (connect_timeout_ms < timeout_ms ? connect_timeout_ms : timeout_ms);
    uv_timer_start(&cn->timer, on_timer, left_ms(w, cn->connect_deadline), 0);
    if (conn_open(cn) != 0)
      conn_fail(cn, TT_HTTP_CONNECT);
  }
  if (c->conn == NULL) /* failed at once: done still runs later, on the loop */
    tt_http_deliver(w->h, false);
  return 0;
}

void tt_http_wire_detach(struct tt_http_wire *w, struct tt_http_call *c) {
  assert(w->magic == WIRE_MAGIC);
  struct wire_conn *cn = c->conn;
  if (cn == NULL)
    return;
  conn_detach(cn);
  conn_close(cn);
}

void tt_http_wire_close(struct tt_http_wire *w, void (*closed)(void *arg), void *arg) {
  assert(w->magic == WIRE_MAGIC);
  w->closing = true;
  w->closed = closed;
  w->closed_arg = arg;
  for (struct wire_conn *cn = w->conns; cn; cn = cn->next) {
    if (cn->call)
      tt_http_wire_detach(w, cn->call);
    else
      conn_close(cn);
  }
  if (w->nconns == 0 && closed)
    closed(arg);
}

void tt_http_wire_destroy(struct tt_http_wire *w) {
  if (w == NULL)
    return;
  assert(w->magic == WIRE_MAGIC);
  w->magic = 0;
  /* Only connections of a loop that is gone can be left: free their memory. */
  while (w->conns) {
    struct wire_conn *cn = w->conns;
    w->conns = cn->next;
    if (cn->ai)
      uv_freeaddrinfo(cn->ai);
    tt_buf_free(&cn->head);
    tt_buf_free(&cn->out);
    tt_http_tls_free(&cn->tls);
    tt_http_parse_free(&cn->parse);
    free(cn);
  }
  SSL_CTX_free(w->ssl_ctx);
  tt_http_tls_cache_free(&w->sessions);
  free(w->pbuf);
  free(w->rbuf);
  free(w);
}
