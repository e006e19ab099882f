/* SPDX-License-Identifier: Apache-2.0 */
/* http_parse.h -- an incremental HTTP/1.1 response parser for untrusted
 * input: status line, headers, Content-Length, chunked and close-delimited
 * bodies, 1xx skipped, strict limits. No I/O; http_wire.c feeds it. */
#ifndef TT_BACKEND_DYNAMODB_HTTP_PARSE_H
#define TT_BACKEND_DYNAMODB_HTTP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* Limits. A status, header, chunk-size or trailer line longer than
 * TT_HTTP_LINE_MAX, more than TT_HTTP_HEADERS_MAX header lines in one
 * response, or more than TT_HTTP_HEAD_BYTES_MAX bytes of head (status line,
 * headers, and those of skipped 1xx responses, trailers) is a protocol
 * error. */
#define TT_HTTP_LINE_MAX 8192
#define TT_HTTP_HEADERS_MAX 128
#define TT_HTTP_HEAD_BYTES_MAX (64u * 1024u)

enum tt_http_parse_result {
  TT_HTTP_PARSE_MORE = 0,       /* all input used, the response is not complete */
  TT_HTTP_PARSE_DONE = 1,       /* the response is complete */
  TT_HTTP_PARSE_ERROR = -1,     /* not a valid HTTP/1.x response (or over a limit) */
  TT_HTTP_PARSE_TOO_LARGE = -2, /* the body would exceed the body buffer's cap */
};

struct tt_http_parse {
  int state;             /* private */
  bool head_request;     /* the request was HEAD: the response has no body */
  bool any_byte;         /* at least one byte was fed */
  bool keep_alive;       /* valid after DONE: the connection may carry another request */
  int minor;             /* HTTP/1.<minor> of the final response */
  long status;           /* status of the final response (after DONE) */
  uint64_t left;         /* private: body or chunk bytes still to come */
  bool chunked, has_length, close; /* private: framing of the final response */
  size_t head_bytes, nheaders;     /* private: counted against the limits */
  struct tt_buf line;              /* private: a line split across reads, capped */
  struct tt_buf *headers;          /* borrowed: "name: value\r\n", names lower-cased */
  struct tt_buf *body;             /* borrowed: the body; its cap is the body cap */
};

/* Prepares `p` for one response. `headers` and `body` are borrowed until
 * the response is done; headers get the final response's header lines in
 * tt_http_response's format, body the decoded body (its cap is the body
 * cap). Keeps the line buffer's storage of an earlier use. */
void tt_http_parse_init(struct tt_http_parse *p, bool head_request, struct tt_buf *headers,
                        struct tt_buf *body);

/* Feeds `len` bytes. Returns one of enum tt_http_parse_result; on DONE,
 * *used (always set) says how many bytes belonged to the response (the rest
 * is not part of it). After DONE or an error, feed no more. */
int tt_http_parse_feed(struct tt_http_parse *p, const char *data, size_t len, size_t *used);

/* The peer closed the connection: returns DONE when that completes the
 * response (a close-delimited body), else ERROR (the response was cut). */
int tt_http_parse_eof(struct tt_http_parse *p);

/* The status of the final response once its head (status line and
 * headers) was parsed, else 0: what a connection that dies in the body
 * had already answered. */
long tt_http_parse_head_status(const struct tt_http_parse *p);

/* Frees the line buffer's storage. */
void tt_http_parse_free(struct tt_http_parse *p);

#endif
