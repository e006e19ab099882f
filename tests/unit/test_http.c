/* SPDX-License-Identifier: Apache-2.0 */
/* test_http.c -- the libcurl-on-libuv HTTP client against a tiny server on
 * the same loop: methods, keep-alive reuse, timeouts, refused and reset
 * connections, cancellation, the body cap, and a clean shutdown. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "backend/dynamodb/http.h"
#include "http_test_server.h"

static char big_body[5000];

static void handler(void *arg, const struct tts_request *r, struct tts_response *resp) {
  static char echo[256];
  (void)arg;
  if (strcmp(r->path, "/hello") == 0) {
    resp->headers = "X-Test: Yes\r\nX-Amzn-RequestId: abc123\r\n";
    resp->body = "hello";
  } else if (strcmp(r->path, "/echo") == 0) {
    snprintf(echo, sizeof(echo), "%s:%s", r->method, r->body);
    resp->body = echo;
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
};

static struct fx F;

struct res {
  struct tt_http_call call;
  int ndone;
  enum tt_http_transport transport;
  long status;
  char body[8192];
  size_t body_len;
  char xtest[64];
};

static void on_done(struct tt_http_call *call, struct tt_http_response *resp, void *arg) {
  struct res *r = arg;
  ck_assert_ptr_eq(call, &r->call);
  r->ndone++;
  uv_stop(&F.loop); /* wake the test's uv_run even when nothing else is pending */
  r->transport = resp->transport;
  r->status = resp->status;
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

static void setup_with(size_t max_body) {
  memset(&F, 0, sizeof(F));
  memset(big_body, 'b', sizeof(big_body));
  ck_assert_int_eq(uv_loop_init(&F.loop), 0);
  ck_assert_int_eq(tts_start(&F.srv, &F.loop, handler, NULL), 0);
  struct tt_http_options o = {.max_body_bytes = max_body, .default_timeout_ms = 5000};
  ck_assert_int_eq(tt_http_new(&F.loop, &o, &F.http), 0);
}

static void setup(void) { setup_with(1000); }

static void on_closed(void *arg) { *(int *)arg = 1; }

static void teardown(void) {
  tt_http_close(F.http, on_closed, &F.closed);
  tts_close(&F.srv);
  uv_run(&F.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(F.closed, 1);
  tt_http_destroy(F.http);
  ck_assert_int_eq(uv_loop_close(&F.loop), 0);
}

static void url(char *out, size_t cap, const char *path) {
  snprintf(out, cap, "http://127.0.0.1:%d%s", F.srv.port, path);
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
  struct res r;
  uint64_t t0 = uv_now(&F.loop);
  run1(&r, "GET", "/hang", NULL, 200);
  ck_assert_int_eq(r.transport, TT_HTTP_TIMEOUT);
  ck_assert_int_eq(r.status, 0);
  uv_update_time(&F.loop);
  ck_assert_uint_ge(uv_now(&F.loop) - t0, 190);
  ck_assert_uint_lt(uv_now(&F.loop) - t0, 3000);
}
END_TEST

START_TEST(connection_refused) {
  char u[128];
  snprintf(u, sizeof(u), "http://127.0.0.1:%d/", tts_unused_port());
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
  uv_run(&F.loop, UV_RUN_NOWAIT);
  ck_assert_int_eq(r.ndone, 1);
  ck_assert_int_eq(r2.ndone, 1);
  /* The client still works. */
  struct res ok;
  run1(&ok, "GET", "/hello", NULL, 0);
  ck_assert_int_eq(ok.transport, TT_HTTP_OK);
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
  ck_assert_ptr_nonnull(tt_http_version());
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("http");
  TCase *tc = tcase_create("client");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 20);
  tcase_add_test(tc, get_post_put);
  tcase_add_test(tc, keep_alive_reuses_one_connection);
  tcase_add_test(tc, reused_handles_carry_nothing_over);
  tcase_add_test(tc, concurrent_requests_then_reuse);
  tcase_add_test(tc, timeout);
  tcase_add_test(tc, connection_refused);
  tcase_add_test(tc, reset_and_close);
  tcase_add_test(tc, cancel);
  tcase_add_test(tc, body_cap);
  tcase_add_test(tc, tls_to_plain_server);
  tcase_add_test(tc, bad_start_runs_nothing);
  tcase_add_test(tc, start_from_done_and_free_call);
  tcase_add_test(tc, response_header_lookup);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
