/* SPDX-License-Identifier: Apache-2.0 */
/* request.h -- the request context: owns a request's memory, counts its
 * operations, and is freed only after every one of them is joined. */
#ifndef TT_API_REQUEST_H
#define TT_API_REQUEST_H

#include <jansson.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "api/router.h"
#include "api/server.h"
#include "client/join.h"
#include "obs/trace.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/error.h"

/* A handler validates, then either answers at once (tt_request_respond_*)
 * or starts operations registered in req->join and sets req->on_joined,
 * which runs once all of them completed and builds the answer. */
typedef void (*tt_handler_fn)(struct tt_request *req);

enum tt_request_state {
  TT_REQ_READING,    /* receiving the body */
  TT_REQ_RUNNING,    /* handler ran; operations outstanding, connection suspended */
  TT_REQ_ANSWERING,  /* answer ready, waiting for MHD to call us again */
  TT_REQ_ANSWERED,   /* answer queued */
};

struct tt_response {
  unsigned status;
  char *body; /* malloc'd unless body_static */
  size_t body_len;
  bool body_static;
  const char *content_type;
  char allow[64];
  char etag[48];
  char retry_after[16];
};

struct tt_request {
  struct tt_server *server;
  struct MHD_Connection *conn;
  struct tt_arena arena; /* everything the handler allocates */
  unsigned method;
  const char *method_name; /* MHD's, valid for the request's life */
  const char *route_label; /* the pattern, or "unmatched" */
  unsigned account;        /* partner account of the request's calls; 0 = default */
  const char *partner;     /* its id for logs (borrowed from the options), or NULL */
  struct tt_route_match match;
  const char *query; /* raw query string (without '?'), "" when none */
  struct tt_buf body;
  size_t discarded; /* body bytes dropped after an early refusal */
  char request_id[129];
  char traceparent[56];
  struct tt_trace_ctx trace; /* the request's position in its trace (log lines, answer) */
  struct tt_span *span;      /* its server span; NULL when not recorded */
  bool path_model; /* the route's {model} named a registered model (tt_api_path_model) */
  uint64_t start_ns;
  uint64_t start_ms; /* loop time of the request line: the deadline counts from here */
  struct tt_conn *tconn; /* the connection; NULL once it is gone */
  bool headers_done; /* the access callback ran once */
  bool timed_out;    /* the connection was closed at a header or body deadline */
  bool drain_closed; /* the connection was closed at the drain timeout */
  int watch_fd;
  enum tt_request_state state;
  /* Operations. */
  struct tt_join join;
  void (*on_joined)(struct tt_request *req);
  void *handler_data;
  uv_timer_t deadline;
  uint64_t deadline_at; /* loop time (ms) when the request times out */
  uv_poll_t watch; /* notices the client leaving while suspended */
  int open_handles;
  bool deadline_started;
  bool watch_started;
  bool suspended; /* MHD connection suspended, in server->suspended */
  bool deadline_hit;
  bool client_gone;
  bool drain_canceled;
  bool mhd_done;
  struct tt_request *prev, *next; /* in server->suspended */
  /* The answer. */
  struct tt_response resp;
  /* The error envelope when building the real one ran out of memory;
   * lives as long as the request, which outlives the queued answer. */
  char fallback_body[256];
  bool responded;
  bool must_close; /* refused for its framing: answer with Connection: close */
  enum tt_err_code error_code; /* for the log line; TT_OK on success */
};

/* Answers with the JSON text in b (taken), or with no body when b is empty
 * or status is 204; b is freed either way. */
void tt_request_respond_buf(struct tt_request *req, unsigned status, struct tt_buf *b);

/* Answers with a static body (borrowed for the program's life). */
void tt_request_respond_static(struct tt_request *req, unsigned status, const char *content_type,
                               const char *body, size_t len);

/* Answers with `value` serialized compactly (stolen; NULL answers 500). */
void tt_request_respond_json(struct tt_request *req, unsigned status, json_t *value);

/* Answers with the error envelope for err; `extra` (borrowed, may be NULL)
 * adds members to details. */
void tt_request_respond_error(struct tt_request *req, const struct tt_error *err,
                              const json_t *extra);

/* Shorthand: formats a message and answers with it. */
void tt_request_fail(struct tt_request *req, enum tt_err_code code, const char *field,
                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Parses the body as a JSON object. On failure answers 400 and returns
 * NULL. Returns a new reference. An empty body yields an empty object.
 * With `exact`, numbers keep their text (value/json_exact.h: read them with
 * tt_json_number_text); use it wherever item values travel. */
json_t *tt_request_json_body(struct tt_request *req, bool exact);

/* Reads the optional integer member `name` of body into *out (kept when
 * absent). Returns 0, or -1 after answering 400 ("<name> must be an
 * integer from <lo> to <hi>"). */
int tt_request_int_member(struct tt_request *req, const json_t *body, const char *name,
                          json_int_t lo, json_int_t hi, json_int_t *out);

/* Decodes the %XX escapes of s (n bytes) into out (n + 1 bytes, made
 * NUL-terminated). A query component's '+' is a space and its malformed
 * escape stays as sent; elsewhere decoding stops at a malformed escape.
 * Returns the decoded length, or -1 - the length decoded before a
 * malformed escape. */
long tt_request_unescape(const char *s, size_t n, char *out, bool query);

/* The percent-decoded path parameter `name` in the arena; NULL when the
 * route has none or it does not decode (then a 400 was answered). */
const char *tt_request_param(struct tt_request *req, const char *name);

/* Answers an ORM result that needs no rendering: its error envelope
 * (Retry-After when set), or 204 for TT_ORM_ANSWER_NONE. Typed answers are
 * the handler's to render (api/item_io.h); one that reaches here is a 500. */
void tt_request_respond_result(struct tt_request *req, const struct tt_orm_result *r);

/* Answers a result whose handler rendered its success: 200 with the JSON
 * text in b (taken; b is freed either way), or r's error. */
void tt_request_respond_rendered(struct tt_request *req, const struct tt_orm_result *r,
                                 struct tt_buf *b);

/* Answers with the error envelope of err and details, and a Retry-After of
 * retry_after_s seconds unless 0. */
void tt_request_respond_failure(struct tt_request *req, const struct tt_error *err,
                                const json_t *details, uint32_t retry_after_s);

/* Copies the percent-decoded value of query parameter `name` into the
 * arena; NULL when absent. The dispatcher already refused a query string
 * that tt_request_query_acceptable would not accept. */
const char *tt_request_query(struct tt_request *req, const char *name);

#endif
