/* SPDX-License-Identifier: Apache-2.0 */
/* http_test_server.h -- a tiny HTTP/1.1 server on 127.0.0.1 for unit tests,
 * running on the test's own libuv loop: canned answers, hangs, resets, and
 * a record of what the client sent; optionally over TLS (OpenSSL memory
 * BIOs) with a throwaway CA made at test time. */
#ifndef TT_TEST_HTTP_TEST_SERVER_H
#define TT_TEST_HTTP_TEST_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <openssl/ssl.h>
#include <uv.h>

/* One request as the server parsed it. */
struct tts_request {
  char method[16];
  char path[512];
  char *headers; /* "name: value\r\n" lines, names lower-cased; NUL-terminated */
  char *body;    /* NUL-terminated copy, body_len bytes */
  size_t body_len;
  unsigned conn_no; /* which accepted connection (1, 2, ...) carried it */
};

enum tts_action {
  TTS_RESPOND, /* status + headers + body, keep-alive */
  TTS_HANG,    /* never answer (the client times out or cancels) */
  TTS_RESET,   /* close with RST at once */
  TTS_CLOSE,   /* close gracefully without answering */
  TTS_RAW,     /* write `body` verbatim, then close */
  TTS_RAW_KEEP, /* write `body` verbatim and keep the connection */
};

struct tts_response {
  enum tts_action action;
  int status;          /* 200 when 0 */
  const char *headers; /* extra lines, each ending in "\r\n"; may be NULL */
  const char *body;    /* may be NULL */
  size_t body_len;     /* strlen(body) when 0 */
};

typedef void (*tts_handler)(void *arg, const struct tts_request *req, struct tts_response *resp);

struct tts_conn;

struct tts_server {
  uv_loop_t *loop;
  uv_tcp_t listener;
  int port;
  tts_handler handler;
  void *arg;
  unsigned connections; /* accepted so far */
  unsigned requests;    /* parsed so far */
  struct tts_request last; /* copy of the last request */
  struct tts_conn *conns;
  SSL_CTX *tls;           /* TLS server context (a reference of ours), or NULL */
  bool tls_stall;         /* TLS: read the client's handshake, never answer it */
  unsigned handshakes;    /* TLS handshakes completed */
  unsigned resumed;       /* of which resumed a session */
  char sni[256];          /* TLS: the server name the client sent last ("" = none) */
};

/* Listens on 127.0.0.1 at a free port (s->port). Returns 0 or a libuv error. */
int tts_start(struct tts_server *s, uv_loop_t *loop, tts_handler handler, void *arg);

/* As tts_start, speaking TLS with `ctx` (the server takes a reference). */
int tts_start_tls(struct tts_server *s, uv_loop_t *loop, tts_handler handler, void *arg,
                  SSL_CTX *ctx);

/* Makes a throwaway CA (EC P-256, valid for an hour) and a server
 * certificate for `san` ("DNS:localhost,IP:127.0.0.1") signed by it. The
 * CA's certificate goes to a new file whose path is written to `ca_path`
 * (the caller unlinks it), the server's context to *ctx (the caller frees
 * it). Returns 0 or -1. */
int tts_tls_make(const char *san, char *ca_path, size_t cap, SSL_CTX **ctx);

/* Closes the listener and every connection; run the loop afterwards. */
void tts_close(struct tts_server *s);

/* Header `lname` (lower case) of a parsed request, NUL-terminated copy in
 * `out`; returns out, or NULL when absent or longer than `cap`-1. */
const char *tts_header(const struct tts_request *r, const char *lname, char *out, size_t cap);

/* A TCP port on 127.0.0.1 where nothing listens (bound, read, closed). */
int tts_unused_port(void);

#endif
