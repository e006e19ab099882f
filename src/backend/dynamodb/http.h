/* SPDX-License-Identifier: Apache-2.0 */
/* http.h -- outbound HTTP(S) on the libuv loop through libcurl: one multi
 * handle driven by CURLMOPT_SOCKETFUNCTION/TIMERFUNCTION (uv_poll_t per
 * socket, one uv_timer_t), its connection and DNS caches, TLS sessions
 * shared through a CURLSH, pooled easy handles that keep their options
 * between transfers. Failures map to a few transport outcomes. Used by the
 * dynamodb backend, KMS and the credential providers (STS, ECS/EKS, IMDS).
 * docs/internals/http.md says how. */
#ifndef TT_BACKEND_DYNAMODB_HTTP_H
#define TT_BACKEND_DYNAMODB_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "util/buf.h"

struct tt_http;
struct tt_http_call;

/* Transport outcome, mapped once from libcurl's CURLcode (http.c). */
enum tt_http_transport {
  TT_HTTP_OK = 0,       /* a response arrived (any status) */
  TT_HTTP_TIMEOUT,      /* connect or transfer timeout */
  TT_HTTP_CONNECT,      /* could not connect / resolve */
  TT_HTTP_RESET,        /* connection reset or closed mid-transfer */
  TT_HTTP_TLS,          /* TLS handshake or verification failure */
  TT_HTTP_CANCELED,     /* tt_http_cancel */
  TT_HTTP_TOO_LARGE,    /* response over the body cap */
  TT_HTTP_OTHER
};

struct tt_http_request {
  const char *method;          /* "GET", "PUT", "POST" */
  const char *url;
  const char *const *headers;  /* "Name: value" strings, NULL-terminated; may be NULL;
                                  copied by tt_http_start */
  const char *body;            /* borrowed until completion; may be NULL */
  size_t body_len;
  uint64_t timeout_ms;         /* whole transfer; 0 = client default */
  uint64_t connect_timeout_ms; /* 0 = client default */
};

struct tt_http_response {
  enum tt_http_transport transport;
  long status;           /* HTTP status when transport == TT_HTTP_OK */
  struct tt_buf body;    /* owned by the call until the callback returns */
  struct tt_buf headers; /* raw "name: value\r\n" lines, lower-cased names */
};

typedef void (*tt_http_done_cb)(struct tt_http_call *call, struct tt_http_response *resp,
                                void *arg);

/* One request in flight. The caller allocates it (zeroing is not needed)
 * and keeps it alive until `done` ran; every field is private to http.c.
 * After `done` returned, http.c never touches the struct again, so `done`
 * may free or reuse it. */
struct tt_http_call {
  struct tt_http *h;
  tt_http_done_cb done;
  void *arg;
  struct tt_http_response resp;
  struct tt_http_call *prev, *next; /* in h's active or finished list */
  int state;                        /* private: started, finished, delivered */
  void *slot;                       /* the pooled easy handle carrying it */
  unsigned head_lines;              /* header lines received (a limit) */
  bool too_large;                   /* the write callback hit the body cap */
};

struct tt_http_options {
  uint64_t default_timeout_ms;         /* 0 = 10000 */
  uint64_t default_connect_timeout_ms; /* 0 = 3000 */
  size_t max_body_bytes;               /* response cap; 0 = 64 MiB */
  /* Trust anchors (PEM) of every https call and of an https proxy: the
   * one place the CA setting lives. NULL = SSL_CERT_FILE (and
   * SSL_CERT_DIR) when set, else libcurl's default (the system bundle).
   * One that does not load fails https calls with TT_HTTP_TLS (check it
   * first with tt_http_ca_file_check). */
  const char *ca_file;
};

/* Whether `path` holds at least one PEM certificate OpenSSL can load as a
 * trust anchor. Returns 0, or -1 with a reason ("No such file or
 * directory", "holds no PEM certificate") in why. No network I/O. */
int tt_http_ca_file_check(const char *path, char *why, size_t cap);

/* A client on `loop` (opts copied; may be NULL): a multi handle and its
 * share of TLS sessions. Returns 0 and *out, or a negative error. */
int tt_http_new(uv_loop_t *loop, const struct tt_http_options *opts, struct tt_http **out);

/* Starts a request. The call struct is the caller's and must stay alive
 * until `done` ran. Returns 0 (done runs exactly once, later, on the loop,
 * never inside this call) or a negative error (done never runs):
 * UV_EINVAL for a header with CR or LF, without a name and colon, or
 * Transfer-Encoding (a caller's Content-Length is dropped: libcurl sends
 * the body's). */
int tt_http_start(struct tt_http *h, struct tt_http_call *call, const struct tt_http_request *req,
                  tt_http_done_cb done, void *arg);

/* Asks a started call to stop; done still runs once (TT_HTTP_CANCELED
 * unless it had already completed), later on the loop, never inside this
 * call. On a call whose done already ran (struct still valid, not
 * restarted) it does nothing. */
void tt_http_cancel(struct tt_http *h, struct tt_http_call *call);

/* Finds response header `lname` (lower case) in resp->headers. Returns a
 * pointer to its value (borrowed from resp, not NUL-terminated, trimmed)
 * and its length in *len, or NULL when absent. The last occurrence wins. */
const char *tt_http_response_header(const struct tt_http_response *resp, const char *lname,
                                    size_t *len);

/* Closes the client's handles; no call may be outstanding. `closed` runs
 * once they are closed (may be NULL); then tt_http_destroy frees it. */
void tt_http_close(struct tt_http *h, void (*closed)(void *arg), void *arg);
void tt_http_destroy(struct tt_http *h);

#endif
