/* SPDX-License-Identifier: Apache-2.0 */
/* test_http.c -- the HTTP client (libcurl on the loop) against a tiny
 * server on the same loop, every client case twice: over http:// and over
 * https:// (a throwaway CA made at test time): methods, keep-alive reuse,
 * timeouts, refused and reset connections, cancellation, the body cap,
 * chunked and close-delimited bodies, the retry of a dead pooled
 * connection, a clean shutdown; TLS alone: one handshake per kept-alive
 * connection, SNI, session resumption, verification failures, the trust
 * store's precedence, a stalled handshake. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "backend/dynamodb/http.h"
#include "http_test_server.h"

static char big_body[5000];
/* The next `drop_next` requests are answered by closing the connection
 * (with RST when drop_reset): what a server that closed an idle
 * keep-alive connection looks like to the client. */
static int drop_next;
static bool drop_reset;

static const char chunked_resp[] =
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Test: chunk\r\n\r\n"
    "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n";

static void handler(void *arg, const struct tts_request *r, struct tts_response *resp) {
  static char echo[256];
  static char wire[20000];
  (void)arg;
  if (drop_next > 0) {
    drop_next--;
    resp->action = drop_reset ? TTS_RESET : TTS_CLOSE;
    return;
  }
  if (strcmp(r->path, "/chunked") == 0) {
    resp->action = TTS_RAW_KEEP;
    resp->body = chunked_resp;
  } else if (strcmp(r->path, "/chunkbig") == 0) {
    /* Chunks of 600 bytes: the second one crosses the 1000-byte cap. */
    size_t n = (size_t)snprintf(wire, sizeof(wire),
                                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
    for (int i = 0; i < 3; i++) {
      n += (size_t)snprintf(wire + n, sizeof(wire) - n, "258\r\n");
      memset(wire + n, 'c', 600);
      n += 600;
      n += (size_t)snprintf(wire + n, sizeof(wire) - n, "\r\n");
    }
    n += (size_t)snprintf(wire + n, sizeof(wire) - n, "0\r\n\r\n");
    resp->action = TTS_RAW_KEEP;
    resp->body = wire;
    resp->body_len = n;
  } else if (strcmp(r->path, "/connclose") == 0) {
    resp->headers = "Connection: close\r\n";
    resp->body = "bye";
  } else if (strcmp(r->path, "/http10") == 0) {
    resp->action = TTS_RAW_KEEP;
    resp->body = "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok";
  } else if (strcmp(r->path, "/continue") == 0) {
    resp->action = TTS_RAW_KEEP;
    resp->body = "HTTP/1.1 100 Continue\r\nX-Test: early\r\n\r\n"
                 "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
  } else if (strcmp(r->path, "/untilclose") == 0) {
    resp->action = TTS_RAW;
    resp->body = "HTTP/1.1 200 OK\r\nX-Test: eof\r\n\r\nabc";
  } else if (strcmp(r->path, "/early413") == 0) {
    /* Answered before the body was read, then the connection ends with
     * the answer's own body cut short. */
    resp->action = TTS_RAW;
    resp->body = "HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: 100\r\n\r\ntoo";
  } else if (strcmp(r->path, "/partial") == 0) {
    /* A head and part of the body, then nothing: the rest never comes. */
    resp->action = TTS_RAW_KEEP;
    resp->body = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nX-Test: part\r\n\r\nabc";
  } else if (strcmp(r->path, "/cut") == 0) {
    resp->action = TTS_RAW;
    resp->body = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc";
  } else if (strcmp(r->path, "/garbage") == 0) {
    resp->action = TTS_RAW_KEEP;
    resp->body = "SSH-2.0-OpenSSH_9.2\r\n\r\n";
  } else if (strcmp(r->path, "/manyheaders") == 0) {
    size_t n = (size_t)snprintf(wire, sizeof(wire), "HTTP/1.1 200 OK\r\n");
    for (int i = 0; i < 200; i++)
      n += (size_t)snprintf(wire + n, sizeof(wire) - n, "X-H%d: v\r\n", i);
    n += (size_t)snprintf(wire + n, sizeof(wire) - n, "Content-Length: 0\r\n\r\n");
    resp->action = TTS_RAW_KEEP;
    resp->body = wire;
    resp->body_len = n;
  } else if (strcmp(r->path, "/longline") == 0) {
    size_t n = (size_t)snprintf(wire, sizeof(wire), "HTTP/1.1 200 OK\r\nX-Long: ");
    memset(wire + n, 'l', 9000);
    n += 9000;
    n += (size_t)snprintf(wire + n, sizeof(wire) - n, "\r\nContent-Length: 0\r\n\r\n");
    resp->action = TTS_RAW_KEEP;
    resp->body = wire;
    resp->body_len = n;
  } else if (strcmp(r->path, "/hello") == 0) {
    resp->headers = "X-Test: Yes\r\nX-Amzn-RequestId: abc123\r\n";
    resp->body = "hello";
  } else if (strcmp(r->path, "/echo") == 0) {
    snprintf(echo, sizeof(echo), "%s:%s", r->method, r->body);
    resp->body = echo;
  } else if (strcmp(r->path, "/len") == 0) {
    snprintf(echo, sizeof(echo), "%zu", r->body_len);
    resp->body = echo;
  } else if (strcmp(r->path, "/huge") == 0) {
    static char huge[100000];
    memset(huge, 'h', sizeof(huge));
    resp->body = huge;
    resp->body_len = sizeof(huge);
  } else if (strcmp(r->path, "/status") == 0) {
    resp->status = 503;
    resp->body = "{}";
  } else if (strcmp(r->path, "/hang") == 0) {
    resp->action = TTS_HANG;
  } else if (strcmp(r->path, "/reset") == 0) {
    resp->action = TTS_RESET;
  } else if (strcmp(r->path, "/close") == 0) {
    resp->action = TTS_CLOSE;
  } else if (strcmp(r->path, "/big") == 0) {
    resp->body = big_body;
    resp->body_len = sizeof(big_body);
  } else if (strcmp(r->path, "/exact") == 0) {
    resp->body = big_body;
    resp->body_len = 1000;
  } else if (strcmp(r->path, "/bigraw") == 0) {
    /* No Content-Length: only the write callback can notice the cap. */
    static char raw[6000];
    memcpy(raw, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", 39);
    memset(raw + 39, 'r', sizeof(raw) - 39);
    resp->action = TTS_RAW;
    resp->body = raw;
    resp->body_len = sizeof(raw);
  } else {
    resp->status = 404;
  }
}

struct fx {
  uv_loop_t loop;
  struct tts_server srv;
  struct tt_http *http;
  int closed;
  bool tls;          /* the server speaks TLS, URLs are https:// */
  char ca[64];       /* the throwaway CA that signed the server's certificate */
  SSL_CTX *srv_ctx;  /* the server's certificate: localhost and 127.0.0.1 */
};

static struct fx F;

static const char *scheme(void) { return F.tls ? "https" : "http"; }

struct res {
  struct tt_http_call call;
  int ndone;
  enum tt_http_transport transport;
  long status;
  char body[8192];
  size_t body_len;   /* of what body holds */
  size_t total_len;  /* of the whole response body */
  char xtest[64];
};

static void on_done(struct tt_http_call *call, struct tt_http_response *resp, void *arg) {
  struct res *r = arg;
  ck_assert_ptr_eq(call, &r->call);
  r->ndone++;
  uv_stop(&F.loop); /* wake the test's uv_run even when nothing else is pending */
  r->transport = resp->transport;
  r->status = resp->status;
  r->total_len = resp->body.len;
  r->body_len = resp->body.len < sizeof(r->body) - 1 ? resp->body.len : sizeof(r->body) - 1;
  if (resp->body.data)
    memcpy(r->body, resp->body.data, r->body_len);
  r->body[r->body_len] = '\0';
  size_t n;
  const char *v = tt_http_response_header(resp, "x-test", &n);
  if (v && n < sizeof(r->xtest)) {
    memcpy(r->xtest, v, n);
    r->xtest[n] = '\0';
  }
}

static void setup_with(size_t max_body, bool tls) {
  memset(&F, 0, sizeof(F));
  drop_next = 0;
  drop_reset = false;
  memset(big_body, 'b', sizeof(big_body));
  ck_assert_int_eq(uv_loop_init(&F.loop), 0);
  F.tls = tls;
  if (tls) {
    ck_assert_int_eq(tts_tls_make("DNS:localhost,IP:127.0.0.1", F.ca, sizeof(F.ca), &F.srv_ctx),
                     0);
    ck_assert_int_eq(tts_start_tls(&F.srv, &F.loop, handler, NULL, F.srv_ctx), 0);
  } else {
    ck_assert_int_eq(tts_start(&F.srv, &F.loop, handler, NULL), 0);
  }
  struct tt_http_options o = {.max_body_bytes = max_body, .default_timeout_ms = 5000,
                              .ca_file = tls ? F.ca : NULL};
  ck_assert_int_eq(tt_http_new(&F.loop, &o, &F.http), 0);
}

static void setup(void) { setup_with(1000, false); }
static void setup_tls(void) { setup_with(1000, true); }

static void on_closed(void *arg) { *(int *)arg = 1; }

static void teardown(void) {
  tt_http_close(F.http, on_closed, &F.closed);
  tts_close(&F.srv);
  uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(F.closed, 1);
  tt_http_destroy(F.http);
  ck_assert_int_eq(uv_loop_close(&F.loop), 0);
  if (F.tls) {
    SSL_CTX_free(F.srv_ctx);
    unlink(F.ca);
  }
}

static void url(char *out, size_t cap, const char *path) {
  snprintf(out, cap, "%s://127.0.0.1:%d%s", scheme(), F.srv.port, path);
}

/* Starts one request and runs the loop until it completed. */
static void run1(struct res *r, const char *method, const char *path, const char *body,
                 uint64_t timeout_ms) {
  char u[128];
  url(u, sizeof(u), path);
  static const char *const hdrs[] = {"X-Custom: 1", "Content-Type: text/plain", NULL};
  struct tt_http_request req = {.method = method, .url = u, .headers = hdrs, .body = body,
                                .body_len = body ? strlen(body) : 0, .timeout_ms = timeout_ms};
  memset(r, 0, sizeof(*r));
  ck_assert_int_eq(tt_http_start(F.http, &r->call, &req, on_done, r), 0);
  ck_assert_int_eq(r->ndone, 0); /* never inside start */
  while (r->ndone == 0)
    uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(r->ndone, 1);
}

START_TEST(get_post_put) {
  struct res r;
  run1(&r, "GET", "/hello", NULL, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  ck_assert_int_eq(r.status, 200);
  ck_assert_str_eq(r.body, "hello");
  ck_assert_str_eq(r.xtest, "Yes");
  ck_assert_str_eq(F.srv.last.method, "GET");
  char v[64];
  ck_assert_ptr_nonnull(tts_header(&F.srv.last, "x-custom", v, sizeof(v)));
  ck_assert_str_eq(v, "1");

  run1(&r, "POST", "/echo", "abc", 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  ck_assert_str_eq(r.body, "POST:abc");
  ck_assert_ptr_null(tts_header(&F.srv.last, "expect", v, sizeof(v)));

  run1(&r, "PUT", "/echo", "xyz", 0);
  ck_assert_str_eq(r.body, "PUT:xyz");

  run1(&r, "POST", "/status", "", 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  ck_assert_int_eq(r.status, 503);
  ck_assert_str_eq(r.body, "{}");

  /* Over 1 MiB libcurl would ask for 100-continue (and wait for it). */
  size_t n = (size_t)1200 * 1024;
  char *big = malloc(n + 1);
  memset(big, 'e', n);
  big[n] = '\0';
  run1(&r, "POST", "/len", big, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  ck_assert_str_eq(r.body, "1228800");
  ck_assert_ptr_null(tts_header(&F.srv.last, "expect", v, sizeof(v)));
  free(big);
}
END_TEST

START_TEST(keep_alive_reuses_one_connection) {
  struct res r;
  for (int i = 0; i < 5; i++) {
    run1(&r, i % 2 ? "POST" : "GET", i % 2 ? "/echo" : "/hello", i % 2 ? "x" : NULL, 0);
    ck_assert_int_eq(r.transport, TT_HTTP_OK);
  }
  ck_assert_uint_eq(F.srv.requests, 5);
  ck_assert_uint_eq(F.srv.connections, 1);
  /* A 4xx/5xx answer keeps the connection too. */
  run1(&r, "POST", "/status", "{}", 0);
  run1(&r, "GET", "/hello", NULL, 0);
  ck_assert_uint_eq(F.srv.connections, 1);
}
END_TEST

/* Starts one request without headers and runs the loop until it completed. */
static void run_bare(struct res *r, const char *method, const char *path) {
  char u[128];
  url(u, sizeof(u), path);
  struct tt_http_request req = {.method = method, .url = u};
  memset(r, 0, sizeof(*r));
  ck_assert_int_eq(tt_http_start(F.http, &r->call, &req, on_done, r), 0);
  while (r->ndone == 0)
    uv_run(&F.loop, UV_RUN_DEFAULT);
}

START_TEST(reused_handles_carry_nothing_over) {
  /* Easy handles are pooled and reset between transfers: what one request
   * set (method, body, headers, no-body for HEAD) must not reach the next,
   * and handles of failed transfers are not reused. */
  struct res r;
  char v[64];
  for (int i = 0; i < 3; i++) {
    run1(&r, "PUT", "/echo", "body", 0);
    ck_assert_str_eq(r.body, "PUT:body");
    run_bare(&r, "GET", "/echo");
    ck_assert_int_eq(r.transport, TT_HTTP_OK);
    ck_assert_str_eq(r.body, "GET:");
    ck_assert_str_eq(F.srv.last.method, "GET");
    ck_assert_uint_eq(F.srv.last.body_len, 0);
    ck_assert_ptr_null(tts_header(&F.srv.last, "x-custom", v, sizeof(v)));
    ck_assert_ptr_null(tts_header(&F.srv.last, "content-type", v, sizeof(v)));
    run_bare(&r, "HEAD", "/hello");
    ck_assert_int_eq(r.status, 200);
    run_bare(&r, "GET", "/hello");
    ck_assert_str_eq(r.body, "hello"); /* not a HEAD any more */
    run1(&r, "GET", "/hang", NULL, 50);
    ck_assert_int_eq(r.transport, TT_HTTP_TIMEOUT);
    run_bare(&r, "GET", "/hello");
    ck_assert_int_eq(r.transport, TT_HTTP_OK);
    ck_assert_str_eq(r.body, "hello");
  }
}
END_TEST

START_TEST(concurrent_requests_then_reuse) {
  char u[128];
  url(u, sizeof(u), "/hello");
  struct tt_http_request req = {.method = "GET", .url = u};
  struct res r[4];
  memset(r, 0, sizeof(r));
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(tt_http_start(F.http, &r[i].call, &req, on_done, &r[i]), 0);
  int left = 4;
  while (left > 0) {
    uv_run(&F.loop, UV_RUN_DEFAULT);
    left = 0;
    for (int i = 0; i < 4; i++)
      left += r[i].ndone == 0;
  }
  for (int i = 0; i < 4; i++) {
    ck_assert_int_eq(r[i].ndone, 1);
    ck_assert_str_eq(r[i].body, "hello");
  }
  unsigned conns = F.srv.connections;
  ck_assert_uint_le(conns, 4);
  struct res one;
  for (int i = 0; i < 4; i++)
    run1(&one, "GET", "/hello", NULL, 0);
  ck_assert_uint_eq(F.srv.connections, conns); /* idle connections were reused */
}
END_TEST

START_TEST(timeout) {
  /* A client whose default timeout is an hour: only the request's own
   * timeout can end the wait for an answer that never comes. */
  struct tt_http *h = NULL;
  struct tt_http_options o = {.max_body_bytes = 1000, .default_timeout_ms = 3600000,
                              .ca_file = F.tls ? F.ca : NULL};
  ck_assert_int_eq(tt_http_new(&F.loop, &o, &h), 0);
  char u[128];
  /* A first request connects (and, over https, shakes hands) with no time
   * limit, so the timed one goes out at once on the kept connection: the
   * timeout can only fall on the wait for the answer, however slow the
   * handshake is on a busy machine. */
  url(u, sizeof(u), "/hello");
  struct tt_http_request warm = {.method = "GET", .url = u};
  struct res r;
  memset(&r, 0, sizeof(r));
  ck_assert_int_eq(tt_http_start(h, &r.call, &warm, on_done, &r), 0);
  while (r.ndone == 0)
    uv_run(&F.loop, UV_RUN_ONCE);
  ck_assert_int_eq(r.status, 200);
  unsigned before = F.srv.requests, conns = F.srv.connections;
  url(u, sizeof(u), "/hang");
  struct tt_http_request req = {.method = "GET", .url = u, .timeout_ms = 200};
  memset(&r, 0, sizeof(r));
  ck_assert_int_eq(tt_http_start(h, &r.call, &req, on_done, &r), 0);
  while (r.ndone == 0)
    uv_run(&F.loop, UV_RUN_ONCE);
  ck_assert_int_eq(r.transport, TT_HTTP_TIMEOUT);
  ck_assert_int_eq(r.status, 0);
  /* It timed out waiting for the answer: the server had the whole request,
   * on the connection the first one made. */
  ck_assert_uint_eq(F.srv.requests, before + 1);
  ck_assert_uint_eq(F.srv.connections, conns);
  ck_assert_str_eq(F.srv.last.path, "/hang");
  int closed = 0;
  tt_http_close(h, on_closed, &closed);
  while (!closed)
    uv_run(&F.loop, UV_RUN_ONCE);
  tt_http_destroy(h);
}
END_TEST

START_TEST(connection_refused) {
  char u[128];
  snprintf(u, sizeof(u), "%s://127.0.0.1:%d/", scheme(), tts_unused_port());
  struct tt_http_request req = {.method = "GET", .url = u};
  struct res r;
  memset(&r, 0, sizeof(r));
  ck_assert_int_eq(tt_http_start(F.http, &r.call, &req, on_done, &r), 0);
  while (r.ndone == 0)
    uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(r.transport, TT_HTTP_CONNECT);
}
END_TEST

START_TEST(reset_and_close) {
  struct res r;
  run1(&r, "POST", "/reset", "{}", 0);
  ck_assert_int_eq(r.transport, TT_HTTP_RESET);
  run1(&r, "POST", "/close", "{}", 0);
  ck_assert_int_eq(r.transport, TT_HTTP_RESET);
  /* The client recovers on a new connection. */
  run1(&r, "GET", "/hello", NULL, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
}
END_TEST

/* A 413 whose connection ends before its body did is still the 413 (not
 * a reset to retry), also for a URL with user info. A 200 cut the same
 * way stays a reset. */
static void run_on(struct tt_http *h, struct res *r, const char *u, const char *body,
                   uint64_t timeout_ms, uint64_t connect_timeout_ms);

START_TEST(early_413_is_an_answer) {
  struct res r;
  run1(&r, "POST", "/early413", "{}", 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  ck_assert_int_eq(r.status, 413);
  char u[128];
  snprintf(u, sizeof(u), "%s://u@127.0.0.1:%d/early413", scheme(), F.srv.port);
  run_on(F.http, &r, u, "{}", 0, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  ck_assert_int_eq(r.status, 413);
  run1(&r, "GET", "/cut", NULL, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_RESET);
}
END_TEST

static void cancel_later(uv_timer_t *t) {
  struct res *r = t->data;
  tt_http_cancel(F.http, &r->call);
  ck_assert_int_eq(r->ndone, 0); /* never inside cancel */
}

START_TEST(cancel) {
  char u[128];
  url(u, sizeof(u), "/hang");
  struct tt_http_request req = {.method = "POST", .url = u, .body = "{}", .body_len = 2};
  struct res r, r2;
  memset(&r, 0, sizeof(r));
  memset(&r2, 0, sizeof(r2));
  /* Canceled while the server holds it. */
  ck_assert_int_eq(tt_http_start(F.http, &r.call, &req, on_done, &r), 0);
  uv_timer_t t;
  uv_timer_init(&F.loop, &t);
  t.data = &r;
  uv_timer_start(&t, cancel_later, 50, 0);
  /* Canceled before it ever left. */
  ck_assert_int_eq(tt_http_start(F.http, &r2.call, &req, on_done, &r2), 0);
  tt_http_cancel(F.http, &r2.call);
  ck_assert_int_eq(r2.ndone, 0);
  while (r.ndone == 0 || r2.ndone == 0)
    uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(r.transport, TT_HTTP_CANCELED);
  ck_assert_int_eq(r2.transport, TT_HTTP_CANCELED);
  uv_close((uv_handle_t *)&t, NULL);
  /* A second cancel after completion is harmless and runs nothing. */
  tt_http_cancel(F.http, &r.call);
  tt_http_cancel(F.http, &r2.call);
  uv_run(&F.loop, UV_RUN_NOWAIT);
  ck_assert_int_eq(r.ndone, 1);
  ck_assert_int_eq(r2.ndone, 1);
  /* The client still works. */
  struct res ok;
  run1(&ok, "GET", "/hello", NULL, 0);
  ck_assert_int_eq(ok.transport, TT_HTTP_OK);
}
END_TEST

START_TEST(cancel_mid_body) {
  /* The head and 3 of 100 body bytes have arrived when the cancel comes. */
  char u[128];
  url(u, sizeof(u), "/partial");
  struct tt_http_request req = {.method = "GET", .url = u};
  struct res r;
  memset(&r, 0, sizeof(r));
  ck_assert_int_eq(tt_http_start(F.http, &r.call, &req, on_done, &r), 0);
  uv_timer_t t;
  uv_timer_init(&F.loop, &t);
  t.data = &r;
  uv_timer_start(&t, cancel_later, 50, 0);
  while (r.ndone == 0)
    uv_run(&F.loop, UV_RUN_ONCE);
  ck_assert_int_eq(r.transport, TT_HTTP_CANCELED);
  ck_assert_uint_eq(r.total_len, 0); /* what arrived is not handed over */
  uv_close((uv_handle_t *)&t, NULL);
  struct res ok;
  run1(&ok, "GET", "/hello", NULL, 0);
  ck_assert_int_eq(ok.transport, TT_HTTP_OK);
  ck_assert_uint_eq(F.srv.connections, 2); /* the canceled one was closed */
}
END_TEST

START_TEST(body_cap) {
  struct res r;
  run1(&r, "GET", "/exact", NULL, 0); /* exactly the cap: fine */
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  ck_assert_uint_eq(r.body_len, 1000);
  run1(&r, "GET", "/big", NULL, 0); /* Content-Length over the cap */
  ck_assert_int_eq(r.transport, TT_HTTP_TOO_LARGE);
  run1(&r, "GET", "/bigraw", NULL, 0); /* no Content-Length */
  ck_assert_int_eq(r.transport, TT_HTTP_TOO_LARGE);
}
END_TEST

START_TEST(tls_to_plain_server) {
  char u[128];
  snprintf(u, sizeof(u), "https://127.0.0.1:%d/hello", F.srv.port);
  struct tt_http_request req = {.method = "GET", .url = u};
  struct res r;
  memset(&r, 0, sizeof(r));
  ck_assert_int_eq(tt_http_start(F.http, &r.call, &req, on_done, &r), 0);
  while (r.ndone == 0)
    uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(r.transport, TT_HTTP_TLS);
}
END_TEST

START_TEST(bad_start_runs_nothing) {
  struct res r;
  memset(&r, 0, sizeof(r));
  struct tt_http_request req = {.method = "GET", .url = NULL};
  ck_assert_int_eq(tt_http_start(F.http, &r.call, &req, on_done, &r), UV_EINVAL);
  req.url = "ftp://127.0.0.1/x"; /* refused by the protocol list, at transfer time */
  ck_assert_int_eq(tt_http_start(F.http, &r.call, &req, on_done, &r), 0);
  while (r.ndone == 0)
    uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(r.transport, TT_HTTP_OTHER);
}
END_TEST

/* A completion that starts the next request and frees its own call. */
struct chain {
  int left;
  int completed;
  struct tt_http_call *call;
  char url[128];
};

static void chain_done(struct tt_http_call *call, struct tt_http_response *resp, void *arg) {
  struct chain *c = arg;
  ck_assert_int_eq(resp->transport, TT_HTTP_OK);
  ck_assert_int_eq(resp->status, 200);
  free(call);
  c->completed++;
  uv_stop(&F.loop);
  if (--c->left > 0) {
    struct tt_http_request req = {.method = "GET", .url = c->url};
    c->call = malloc(sizeof(*c->call));
    ck_assert_int_eq(tt_http_start(F.http, c->call, &req, chain_done, c), 0);
  }
}

START_TEST(start_from_done_and_free_call) {
  struct chain c = {.left = 3};
  url(c.url, sizeof(c.url), "/hello");
  struct tt_http_request req = {.method = "GET", .url = c.url};
  c.call = malloc(sizeof(*c.call));
  ck_assert_int_eq(tt_http_start(F.http, c.call, &req, chain_done, &c), 0);
  while (c.left > 0)
    uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(c.completed, 3);
  ck_assert_uint_eq(F.srv.connections, 1);
}
END_TEST

START_TEST(response_header_lookup) {
  struct tt_http_response resp;
  memset(&resp, 0, sizeof(resp));
  tt_buf_init(&resp.headers, 0);
  tt_buf_puts(&resp.headers,
              "content-type: a\r\nx-amz-retry-after: 1500  \r\nx-a: 1\r\nx-a: 2\r\n");
  size_t n = 0;
  const char *v = tt_http_response_header(&resp, "x-amz-retry-after", &n);
  ck_assert_ptr_nonnull(v);
  ck_assert_int_eq((int)n, 4);
  ck_assert_int_eq(memcmp(v, "1500", 4), 0);
  v = tt_http_response_header(&resp, "x-a", &n);
  ck_assert_int_eq(n, 1);
  ck_assert_int_eq(v[0], '2');
  ck_assert_ptr_null(tt_http_response_header(&resp, "x-amz", &n));
  ck_assert_ptr_null(tt_http_response_header(&resp, "missing", &n));
  tt_buf_free(&resp.headers);
}
END_TEST

/* ---- what goes out and what is accepted ---- */

static int count_lines(const char *headers, const char *lname) {
  int n = 0;
  size_t l = strlen(lname);
  for (const char *p = headers; p && (p = strstr(p, lname)) != NULL; p += l)
    if ((p == headers || p[-1] == '\n') && p[l] == ':')
      n++;
  return n;
}

START_TEST(request_head_on_the_wire) {
  /* What libcurl sent: Host with the port, User-Agent, Accept, the caller's
   * headers, Content-Length for a body; no Expect. */
  struct res r;
  char v[128], want[64];
  run1(&r, "POST", "/echo", "abc", 0);
  ck_assert_str_eq(r.body, "POST:abc");
  snprintf(want, sizeof(want), "127.0.0.1:%d", F.srv.port);
  ck_assert_str_eq(tts_header(&F.srv.last, "host", v, sizeof(v)), want);
  ck_assert_str_eq(tts_header(&F.srv.last, "user-agent", v, sizeof(v)), "tabletheoryd");
  ck_assert_str_eq(tts_header(&F.srv.last, "accept", v, sizeof(v)), "*/*");
  ck_assert_str_eq(tts_header(&F.srv.last, "content-length", v, sizeof(v)), "3");
  ck_assert_str_eq(tts_header(&F.srv.last, "content-type", v, sizeof(v)), "text/plain");
  ck_assert_ptr_null(tts_header(&F.srv.last, "expect", v, sizeof(v)));
  ck_assert_ptr_null(tts_header(&F.srv.last, "transfer-encoding", v, sizeof(v)));
  run_bare(&r, "GET", "/echo?x=1#frag");
  ck_assert_str_eq(F.srv.last.path, "/echo?x=1");
  ck_assert_ptr_null(tts_header(&F.srv.last, "content-length", v, sizeof(v)));
  run_bare(&r, "PUT", "/echo"); /* PUT without a body: Content-Length: 0 */
  ck_assert_str_eq(tts_header(&F.srv.last, "content-length", v, sizeof(v)), "0");

  /* The caller's Host (the signed one), Accept and User-Agent replace
   * ours; an empty value removes a header; a caller's Content-Length is
   * replaced. */
  char u[128];
  url(u, sizeof(u), "/echo");
  static const char *const hdrs[] = {"Host: signed.example:8000", "Accept: text/xml",
                                     "X-Empty:", "Content-Length: 99",
                                     "user-agent: signer/1", NULL};
  struct tt_http_request req = {.method = "POST", .url = u, .headers = hdrs, .body = "xy",
                                .body_len = 2};
  memset(&r, 0, sizeof(r));
  ck_assert_int_eq(tt_http_start(F.http, &r.call, &req, on_done, &r), 0);
  while (r.ndone == 0)
    uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_str_eq(r.body, "POST:xy");
  ck_assert_str_eq(tts_header(&F.srv.last, "host", v, sizeof(v)), "signed.example:8000");
  ck_assert_int_eq(count_lines(F.srv.last.headers, "host"), 1);
  ck_assert_int_eq(count_lines(F.srv.last.headers, "accept"), 1);
  ck_assert_str_eq(tts_header(&F.srv.last, "accept", v, sizeof(v)), "text/xml");
  ck_assert_int_eq(count_lines(F.srv.last.headers, "user-agent"), 1);
  ck_assert_str_eq(tts_header(&F.srv.last, "user-agent", v, sizeof(v)), "signer/1");
  ck_assert_ptr_null(tts_header(&F.srv.last, "x-empty", v, sizeof(v)));
  ck_assert_str_eq(tts_header(&F.srv.last, "content-length", v, sizeof(v)), "2");

  /* A header that would split the request is refused; done never runs. */
  static const char *const evil[] = {"X-A: 1\r\nX-B: 2", NULL};
  req.headers = evil;
  memset(&r, 0, sizeof(r));
  ck_assert_int_eq(tt_http_start(F.http, &r.call, &req, on_done, &r), UV_EINVAL);
  uv_run(&F.loop, UV_RUN_NOWAIT);
  ck_assert_int_eq(r.ndone, 0);
}
END_TEST

START_TEST(chunked_bodies) {
  struct res r;
  run1(&r, "GET", "/chunked", NULL, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  ck_assert_str_eq(r.body, "hello world");
  ck_assert_str_eq(r.xtest, "chunk");
  run1(&r, "GET", "/chunked", NULL, 0);
  ck_assert_str_eq(r.body, "hello world");
  ck_assert_uint_eq(F.srv.connections, 1); /* a complete chunked body keeps it */
  run1(&r, "GET", "/chunkbig", NULL, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_TOO_LARGE);
  run1(&r, "GET", "/hello", NULL, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
}
END_TEST

START_TEST(connection_close_and_http10) {
  struct res r;
  run1(&r, "GET", "/connclose", NULL, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  ck_assert_str_eq(r.body, "bye");
  run1(&r, "GET", "/hello", NULL, 0);
  ck_assert_uint_eq(F.srv.connections, 2); /* not reused after Connection: close */
  run1(&r, "GET", "/http10", NULL, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  ck_assert_str_eq(r.body, "ok");
  run1(&r, "GET", "/hello", NULL, 0);
  ck_assert_uint_eq(F.srv.connections, 3); /* nor after an HTTP/1.0 answer */
  run1(&r, "GET", "/untilclose", NULL, 0); /* no length: the body ends at close */
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  ck_assert_str_eq(r.body, "abc");
  ck_assert_str_eq(r.xtest, "eof");
  run1(&r, "GET", "/cut", NULL, 0); /* closed before Content-Length bytes */
  ck_assert_int_eq(r.transport, TT_HTTP_RESET);
  run1(&r, "GET", "/continue", NULL, 0); /* 100 Continue skipped, its headers too */
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  ck_assert_int_eq(r.status, 200);
  ck_assert_str_eq(r.body, "ok");
  ck_assert_str_eq(r.xtest, "");
}
END_TEST

START_TEST(idle_closed_connection_retried_once) {
  struct res r;
  run1(&r, "GET", "/hello", NULL, 0);
  ck_assert_uint_eq(F.srv.connections, 1);
  /* The server closes the pooled connection as the request arrives: sent
   * again, once, on a fresh connection; the caller sees only the answer. */
  drop_next = 1;
  run1(&r, "POST", "/echo", "abc", 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  ck_assert_str_eq(r.body, "POST:abc");
  ck_assert_uint_eq(F.srv.connections, 2);
  ck_assert_uint_eq(F.srv.requests, 3);
  drop_next = 1; /* the same with a reset */
  drop_reset = true;
  run1(&r, "GET", "/hello", NULL, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  ck_assert_uint_eq(F.srv.connections, 3);
  ck_assert_uint_eq(F.srv.requests, 5);
  /* The fresh connection dies too: no second retry. */
  drop_next = 2;
  drop_reset = false;
  run1(&r, "GET", "/hello", NULL, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_RESET);
  ck_assert_uint_eq(F.srv.requests, 7);
  /* A fresh connection that dies is not retried at all. */
  drop_next = 1;
  run1(&r, "GET", "/hello", NULL, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_RESET);
  ck_assert_uint_eq(F.srv.requests, 8);
  run1(&r, "GET", "/hello", NULL, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
}
END_TEST

START_TEST(header_limits) {
  struct res r;
  run1(&r, "GET", "/manyheaders", NULL, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OTHER);
  run1(&r, "GET", "/longline", NULL, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OTHER);
  run1(&r, "GET", "/garbage", NULL, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OTHER);
  run1(&r, "GET", "/hello", NULL, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
}
END_TEST

START_TEST(resolved_name) {
  /* "localhost" goes through getaddrinfo (and on to the next address when
   * ::1 refuses). */
  char u[128];
  snprintf(u, sizeof(u), "%s://localhost:%d/hello", scheme(), F.srv.port);
  struct tt_http_request req = {.method = "GET", .url = u};
  for (int i = 0; i < 2; i++) {
    struct res r;
    memset(&r, 0, sizeof(r));
    ck_assert_int_eq(tt_http_start(F.http, &r.call, &req, on_done, &r), 0);
    while (r.ndone == 0)
      uv_run(&F.loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(r.transport, TT_HTTP_OK);
    ck_assert_str_eq(r.body, "hello");
  }
  ck_assert_uint_eq(F.srv.connections, 1);
}
END_TEST

START_TEST(pooled_handle_follows_the_url) {
  /* One pooled handle keeps its parsed URL: the same URL again, another
   * path, a query, another host name, a URL the parser refuses (which fails
   * that transfer alone) and back: every request goes where its URL says. */
  char u[128];
  snprintf(u, sizeof(u), "%s://localhost:%d/hello", scheme(), F.srv.port);
  static const char *const paths[] = {"/hello", "/hello", "/echo", "/echo?q=1", NULL, "/hello"};
  for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
    struct res r;
    if (paths[i] == NULL) {
      char bad[128];
      snprintf(bad, sizeof(bad), "%s://127.0.0.1:99999/hello", scheme());
      struct tt_http_request req = {.method = "GET", .url = bad};
      memset(&r, 0, sizeof(r));
      ck_assert_int_eq(tt_http_start(F.http, &r.call, &req, on_done, &r), 0);
      while (r.ndone == 0)
        uv_run(&F.loop, UV_RUN_DEFAULT);
      ck_assert_int_eq(r.transport, TT_HTTP_OTHER);
      /* A name instead of the address, on a handle parsed for the address. */
      struct tt_http_request named = {.method = "GET", .url = u};
      memset(&r, 0, sizeof(r));
      ck_assert_int_eq(tt_http_start(F.http, &r.call, &named, on_done, &r), 0);
      while (r.ndone == 0)
        uv_run(&F.loop, UV_RUN_DEFAULT);
      ck_assert_int_eq(r.transport, TT_HTTP_OK);
      ck_assert_str_eq(r.body, "hello");
      ck_assert_str_eq(F.srv.last.path, "/hello");
      continue;
    }
    run_bare(&r, "GET", paths[i]);
    ck_assert_int_eq(r.transport, TT_HTTP_OK);
    ck_assert_str_eq(F.srv.last.path, paths[i]);
    if (strcmp(paths[i], "/hello") == 0)
      ck_assert_str_eq(r.body, "hello");
    else if (strcmp(paths[i], "/echo") == 0)
      ck_assert_str_eq(r.body, "GET:");
  }
}
END_TEST

START_TEST(cancel_while_connecting_or_resolving) {
  char u1[128], u2[128];
  snprintf(u1, sizeof(u1), "%s://127.0.0.1:%d/hello", scheme(), F.srv.port);
  snprintf(u2, sizeof(u2), "%s://localhost:%d/hello", scheme(), F.srv.port);
  struct tt_http_request q1 = {.method = "GET", .url = u1};
  struct tt_http_request q2 = {.method = "GET", .url = u2};
  struct res r1, r2;
  memset(&r1, 0, sizeof(r1));
  memset(&r2, 0, sizeof(r2));
  ck_assert_int_eq(tt_http_start(F.http, &r1.call, &q1, on_done, &r1), 0); /* connecting */
  ck_assert_int_eq(tt_http_start(F.http, &r2.call, &q2, on_done, &r2), 0); /* resolving */
  tt_http_cancel(F.http, &r1.call);
  tt_http_cancel(F.http, &r2.call);
  ck_assert_int_eq(r1.ndone + r2.ndone, 0);
  while (r1.ndone == 0 || r2.ndone == 0)
    uv_run(&F.loop, UV_RUN_ONCE);
  ck_assert_int_eq(r1.transport, TT_HTTP_CANCELED);
  ck_assert_int_eq(r2.transport, TT_HTTP_CANCELED);
  ck_assert_uint_eq(F.srv.requests, 0);
  /* teardown closes at once: a getaddrinfo still running is joined too */
}
END_TEST

START_TEST(close_with_pooled_connections) {
  char u[128];
  url(u, sizeof(u), "/hello");
  struct tt_http_request req = {.method = "GET", .url = u};
  struct res r[3];
  memset(r, 0, sizeof(r));
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(tt_http_start(F.http, &r[i].call, &req, on_done, &r[i]), 0);
  while (r[0].ndone + r[1].ndone + r[2].ndone < 3)
    uv_run(&F.loop, UV_RUN_ONCE);
  ck_assert_uint_eq(F.srv.connections, 3);
  /* teardown: three idle connections in the pool, closed with the client;
   * uv_loop_close must return 0 */
}
END_TEST

/* ---- TLS ---- */

/* A second client on the fixture's loop. */
static struct tt_http *client_with(const char *ca_file, size_t max_body) {
  struct tt_http *h = NULL;
  struct tt_http_options o = {.max_body_bytes = max_body, .default_timeout_ms = 5000,
                              .ca_file = ca_file};
  ck_assert_int_eq(tt_http_new(&F.loop, &o, &h), 0);
  return h;
}

static void client_close(struct tt_http *h) {
  int closed = 0;
  tt_http_close(h, on_closed, &closed);
  while (!closed)
    uv_run(&F.loop, UV_RUN_ONCE);
  tt_http_destroy(h);
}

static void run_on(struct tt_http *h, struct res *r, const char *u, const char *body,
                   uint64_t timeout_ms, uint64_t connect_timeout_ms) {
  struct tt_http_request req = {.method = body ? "POST" : "GET", .url = u, .body = body,
                                .body_len = body ? strlen(body) : 0, .timeout_ms = timeout_ms,
                                .connect_timeout_ms = connect_timeout_ms};
  memset(r, 0, sizeof(*r));
  ck_assert_int_eq(tt_http_start(h, &r->call, &req, on_done, r), 0);
  ck_assert_int_eq(r->ndone, 0);
  while (r->ndone == 0)
    uv_run(&F.loop, UV_RUN_DEFAULT);
}

START_TEST(tls_one_handshake_per_connection) {
  struct res r;
  for (int i = 0; i < 4; i++) {
    run1(&r, i % 2 ? "POST" : "GET", i % 2 ? "/echo" : "/hello", i % 2 ? "x" : NULL, 0);
    ck_assert_int_eq(r.transport, TT_HTTP_OK);
  }
  ck_assert_uint_eq(F.srv.connections, 1);
  ck_assert_uint_eq(F.srv.handshakes, 1);
  ck_assert_str_eq(F.srv.sni, ""); /* no SNI for an address */
  /* A name: SNI, the certificate's DNS name; its own pooled connection. */
  char u[128];
  snprintf(u, sizeof(u), "https://localhost:%d/hello", F.srv.port);
  for (int i = 0; i < 3; i++) {
    run_on(F.http, &r, u, NULL, 0, 0);
    ck_assert_int_eq(r.transport, TT_HTTP_OK);
    ck_assert_str_eq(r.body, "hello");
  }
  ck_assert_str_eq(F.srv.sni, "localhost");
  ck_assert_uint_eq(F.srv.connections, 2);
  ck_assert_uint_eq(F.srv.handshakes, 2);
  /* http:// to the same port is another pool entry (and not TLS). */
  snprintf(u, sizeof(u), "http://127.0.0.1:%d/hello", F.srv.port);
  run_on(F.http, &r, u, NULL, 1000, 0);
  ck_assert_int_ne(r.transport, TT_HTTP_OK);
}
END_TEST

START_TEST(tls_session_resumed) {
  /* A new connection to the same peer resumes the last session (no
   * certificate exchange); another peer key does not. */
  struct res r;
  run1(&r, "GET", "/connclose", NULL, 0); /* the server ends the connection */
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  run1(&r, "GET", "/connclose", NULL, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  run1(&r, "GET", "/hello", NULL, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  ck_assert_uint_eq(F.srv.connections, 3);
  ck_assert_uint_eq(F.srv.handshakes, 3);
  ck_assert_uint_eq(F.srv.resumed, 2);
  char u[128];
  snprintf(u, sizeof(u), "https://localhost:%d/hello", F.srv.port);
  run_on(F.http, &r, u, NULL, 0, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  ck_assert_uint_eq(F.srv.handshakes, 4);
  ck_assert_uint_eq(F.srv.resumed, 2); /* "localhost" is not "127.0.0.1" */
}
END_TEST

START_TEST(tls_big_bodies) {
  /* Many records each way: a 200 kB request body, a 100 kB answer. */
  struct tt_http *h = client_with(F.ca, 1 << 20);
  char *big = malloc(200001);
  memset(big, 'q', 200000);
  big[200000] = '\0';
  char u[128];
  struct res r;
  url(u, sizeof(u), "/len");
  run_on(h, &r, u, big, 0, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  ck_assert_str_eq(r.body, "200000");
  url(u, sizeof(u), "/huge");
  run_on(h, &r, u, NULL, 0, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  ck_assert_uint_eq(r.total_len, 100000);
  ck_assert_uint_eq(F.srv.handshakes, 1);
  free(big);
  client_close(h);
}
END_TEST

START_TEST(tls_verification_failures) {
  char u[128];
  struct res r;
  url(u, sizeof(u), "/hello");
  /* A CA that did not sign the server's certificate. */
  char other_ca[64];
  SSL_CTX *other_ctx = NULL;
  ck_assert_int_eq(tts_tls_make("DNS:other.example", other_ca, sizeof(other_ca), &other_ctx), 0);
  struct tt_http *h = client_with(other_ca, 0);
  run_on(h, &r, u, NULL, 0, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_TLS);
  client_close(h);
  /* The system's trust store does not know the throwaway CA either. */
  h = client_with(NULL, 0);
  run_on(h, &r, u, NULL, 0, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_TLS);
  client_close(h);
  /* A CA file that does not load fails https calls, not the client. */
  h = client_with("/nonexistent/ca.pem", 0);
  run_on(h, &r, u, NULL, 0, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_TLS);
  client_close(h);
  ck_assert_uint_eq(F.srv.handshakes, 0);
  ck_assert_uint_eq(F.srv.requests, 0);
  /* A certificate for another name, from a trusted CA: neither the address
   * nor "localhost" matches "other.example". */
  struct tts_server srv2;
  ck_assert_int_eq(tts_start_tls(&srv2, &F.loop, handler, NULL, other_ctx), 0);
  h = client_with(other_ca, 0);
  snprintf(u, sizeof(u), "https://127.0.0.1:%d/hello", srv2.port);
  run_on(h, &r, u, NULL, 0, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_TLS);
  snprintf(u, sizeof(u), "https://localhost:%d/hello", srv2.port);
  run_on(h, &r, u, NULL, 0, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_TLS);
  /* libcurl checks the name once the handshake is over (the server may
   * count it), and closes before a byte of the request. */
  ck_assert_uint_le(srv2.handshakes, 2);
  ck_assert_uint_eq(srv2.requests, 0);
  client_close(h);
  tts_close(&srv2);
  SSL_CTX_free(other_ctx);
  unlink(other_ca);
  /* The fixture's client, with the right CA, still works. */
  run1(&r, "GET", "/hello", NULL, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
}
END_TEST

/* The configured CA is the trust store of every https call, also of a URL
 * with user info; SSL_CERT_FILE applies when no CA is configured; a
 * configured CA wins over it. */
static void trusts(struct tt_http *h, enum tt_http_transport want) {
  char u[128];
  struct res r;
  url(u, sizeof(u), "/hello");
  run_on(h, &r, u, NULL, 0, 0);
  ck_assert_int_eq(r.transport, want);
  snprintf(u, sizeof(u), "https://u@127.0.0.1:%d/hello", F.srv.port);
  run_on(h, &r, u, NULL, 0, 0);
  ck_assert_int_eq(r.transport, want);
  if (want == TT_HTTP_OK)
    ck_assert_str_eq(r.body, "hello");
}

START_TEST(tls_ca_file_and_environment) {
  unsetenv("SSL_CERT_FILE");
  unsetenv("SSL_CERT_DIR");
  struct tt_http *h = client_with(F.ca, 0);
  trusts(h, TT_HTTP_OK);
  client_close(h);
  h = client_with(NULL, 0); /* the system bundle knows no throwaway CA */
  trusts(h, TT_HTTP_TLS);
  client_close(h);
  char other_ca[64];
  SSL_CTX *other_ctx = NULL;
  ck_assert_int_eq(tts_tls_make("DNS:other.example", other_ca, sizeof(other_ca), &other_ctx), 0);
  ck_assert_int_eq(setenv("SSL_CERT_FILE", F.ca, 1), 0);
  h = client_with(NULL, 0);
  trusts(h, TT_HTTP_OK);
  client_close(h);
  h = client_with(other_ca, 0); /* the configured CA wins over SSL_CERT_FILE */
  trusts(h, TT_HTTP_TLS);
  client_close(h);
  unsetenv("SSL_CERT_FILE");
  SSL_CTX_free(other_ctx);
  unlink(other_ca);
}
END_TEST

START_TEST(ca_file_check) {
  char why[128];
  ck_assert_int_eq(tt_http_ca_file_check(F.ca, why, sizeof(why)), 0);
  ck_assert_int_eq(tt_http_ca_file_check("/nonexistent/ca.pem", why, sizeof(why)), -1);
  ck_assert_str_eq(why, "No such file or directory");
  char path[] = "/tmp/tt-ca-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, "not a certificate\n", 18), 18);
  close(fd);
  ck_assert_int_eq(tt_http_ca_file_check(path, why, sizeof(why)), -1);
  ck_assert_str_eq(why, "holds no PEM certificate");
  unlink(path);
}
END_TEST

START_TEST(tls_handshake_stall) {
  /* The server reads the ClientHello and never answers: the handshake is
   * under the whole timeout, and under the connect timeout. The timeout
   * not under test is an hour each time, so a handshake that escaped the
   * other one would keep this test waiting. */
  F.srv.tls_stall = true;
  struct tt_http *h = NULL;
  struct tt_http_options o = {.max_body_bytes = 1000, .default_timeout_ms = 3600000,
                              .default_connect_timeout_ms = 200, .ca_file = F.ca};
  ck_assert_int_eq(tt_http_new(&F.loop, &o, &h), 0);
  char u[128];
  struct res r;
  url(u, sizeof(u), "/hello");
  run_on(h, &r, u, NULL, 250, 3600000);
  ck_assert_int_eq(r.transport, TT_HTTP_TIMEOUT);
  /* The default connect timeout again, not the last transfer's hour. */
  run_on(h, &r, u, NULL, 0, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_TIMEOUT);
  ck_assert_uint_eq(F.srv.connections, 2);
  ck_assert_uint_eq(F.srv.handshakes, 0);
  ck_assert_uint_eq(F.srv.requests, 0);
  client_close(h);
}
END_TEST

START_TEST(tls_cancel_in_handshake) {
  F.srv.tls_stall = true;
  char u[128];
  url(u, sizeof(u), "/hello");
  struct tt_http_request req = {.method = "GET", .url = u};
  struct res r;
  memset(&r, 0, sizeof(r));
  ck_assert_int_eq(tt_http_start(F.http, &r.call, &req, on_done, &r), 0);
  while (F.srv.connections == 0) /* connected: the ClientHello is out */
    uv_run(&F.loop, UV_RUN_ONCE);
  for (int i = 0; i < 3; i++)
    uv_run(&F.loop, UV_RUN_NOWAIT);
  ck_assert_int_eq(r.ndone, 0);
  tt_http_cancel(F.http, &r.call);
  ck_assert_int_eq(r.ndone, 0);
  while (r.ndone == 0)
    uv_run(&F.loop, UV_RUN_ONCE);
  ck_assert_int_eq(r.transport, TT_HTTP_CANCELED);
  F.srv.tls_stall = false;
  run1(&r, "GET", "/hello", NULL, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  ck_assert_uint_eq(F.srv.connections, 2);
  ck_assert_uint_eq(F.srv.handshakes, 1);
}
END_TEST

/* The proxy variables are read when the client is made: http_proxy sends
 * http:// URLs to the proxy in absolute form; no_proxy bypasses it. */
START_TEST(proxy_from_environment) {
  char proxy[64], u[128];
  struct res r;
  snprintf(proxy, sizeof(proxy), "http://127.0.0.1:%d", F.srv.port);
  ck_assert_int_eq(setenv("http_proxy", proxy, 1), 0);
  struct tt_http *h = client_with(NULL, 0);
  unsetenv("http_proxy");
  run_on(h, &r, "http://proxied.invalid/hello", NULL, 0, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  ck_assert_int_eq(r.status, 404); /* the test server knows no absolute path */
  ck_assert_str_eq(F.srv.last.path, "http://proxied.invalid/hello");
  client_close(h);
  ck_assert_int_eq(setenv("http_proxy", "http://127.0.0.1:1", 1), 0);
  ck_assert_int_eq(setenv("no_proxy", "127.0.0.1", 1), 0);
  h = client_with(NULL, 0);
  unsetenv("http_proxy");
  unsetenv("no_proxy");
  url(u, sizeof(u), "/hello");
  run_on(h, &r, u, NULL, 0, 0);
  ck_assert_int_eq(r.transport, TT_HTTP_OK);
  ck_assert_str_eq(r.body, "hello");
  ck_assert_str_eq(F.srv.last.path, "/hello");
  client_close(h);
}
END_TEST

/* Every client case, on http:// or (tls) https://. */
static void add_client_tests(TCase *tc, bool tls) {
  tcase_add_test(tc, get_post_put);
  tcase_add_test(tc, keep_alive_reuses_one_connection);
  tcase_add_test(tc, reused_handles_carry_nothing_over);
  tcase_add_test(tc, concurrent_requests_then_reuse);
  tcase_add_test(tc, timeout);
  tcase_add_test(tc, connection_refused);
  tcase_add_test(tc, reset_and_close);
  tcase_add_test(tc, early_413_is_an_answer);
  tcase_add_test(tc, cancel);
  tcase_add_test(tc, cancel_mid_body);
  tcase_add_test(tc, body_cap);
  if (!tls)
    tcase_add_test(tc, tls_to_plain_server);
  tcase_add_test(tc, bad_start_runs_nothing);
  tcase_add_test(tc, start_from_done_and_free_call);
  tcase_add_test(tc, response_header_lookup);
  tcase_add_test(tc, request_head_on_the_wire);
  tcase_add_test(tc, chunked_bodies);
  tcase_add_test(tc, connection_close_and_http10);
  tcase_add_test(tc, idle_closed_connection_retried_once);
  tcase_add_test(tc, header_limits);
  tcase_add_test(tc, resolved_name);
  tcase_add_test(tc, pooled_handle_follows_the_url);
  tcase_add_test(tc, cancel_while_connecting_or_resolving);
  tcase_add_test(tc, close_with_pooled_connections);
}

static Suite *suite(void) {
  Suite *s = suite_create("http");
  TCase *tc = tcase_create("client");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 20);
  add_client_tests(tc, false);
  tcase_add_test(tc, proxy_from_environment);
  suite_add_tcase(s, tc);
  TCase *tt = tcase_create("client_tls");
  tcase_add_checked_fixture(tt, setup_tls, teardown);
  tcase_set_timeout(tt, 30);
  add_client_tests(tt, true);
  tcase_add_test(tt, tls_one_handshake_per_connection);
  tcase_add_test(tt, tls_session_resumed);
  tcase_add_test(tt, tls_big_bodies);
  tcase_add_test(tt, tls_verification_failures);
  tcase_add_test(tt, tls_ca_file_and_environment);
  tcase_add_test(tt, ca_file_check);
  tcase_add_test(tt, tls_handshake_stall);
  tcase_add_test(tt, tls_cancel_in_handshake);
  suite_add_tcase(s, tt);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
