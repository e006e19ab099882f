/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_http_response.c -- libFuzzer target for the HTTP/1.1 response parser
 * (http_parse.c) that reads what an endpoint answers on http://. The first
 * input byte picks the options (bit 0: a HEAD request, bit 1: end with EOF,
 * the rest: a split size), the others are the bytes of the connection. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dynamodb/http.h"
#include "backend/dynamodb/http_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BODY_CAP 4096

struct outcome {
  int rc;
  long status;
  bool keep_alive;
  size_t used;
  struct tt_buf headers, body;
};

/* Feeds `in` in pieces of `step` bytes (0: at once), each an exact-size
 * copy so ASan sees a read past its end. */
static void run(struct outcome *o, const char *in, size_t len, size_t step, bool head, bool eof) {
  struct tt_http_parse p;
  memset(&p, 0, sizeof(p));
  memset(o, 0, sizeof(*o));
  tt_buf_init(&o->headers, 64 * 1024);
  tt_buf_init(&o->body, BODY_CAP);
  tt_http_parse_init(&p, head, &o->headers, &o->body);
  o->rc = TT_HTTP_PARSE_MORE;
  size_t off = 0;
  while (off < len && o->rc == TT_HTTP_PARSE_MORE) {
    size_t n = step && len - off > step ? step : len - off;
    char *piece = malloc(n);
    if (piece == NULL)
      abort();
    memcpy(piece, in + off, n);
    size_t used = (size_t)-1;
    o->rc = tt_http_parse_feed(&p, piece, n, &used);
    free(piece);
    if (used > n || (o->rc == TT_HTTP_PARSE_MORE && used != n))
      abort();
    off += used;
  }
  if (o->rc == TT_HTTP_PARSE_MORE && eof)
    o->rc = tt_http_parse_eof(&p);
  o->used = off;
  o->status = p.status;
  o->keep_alive = p.keep_alive;
  tt_http_parse_free(&p);
}

static bool same_buf(const struct tt_buf *a, const struct tt_buf *b) {
  return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

/* A complete response: a final status, header lines "name: value\r\n" with
 * lower-case token names and no CR/LF/NUL inside, a body under the cap. */
static void check_done(const struct outcome *o) {
  if (o->status < 200 || o->status > 999 || o->body.len > BODY_CAP)
    abort();
  const char *p = o->headers.data;
  const char *end = p ? p + o->headers.len : NULL;
  while (p && p < end) {
    const char *eol = memchr(p, '\r', (size_t)(end - p));
    if (eol == NULL || eol + 1 >= end || eol[1] != '\n')
      abort();
    const char *colon = memchr(p, ':', (size_t)(eol - p));
    if (colon == NULL || colon == p || colon + 1 >= eol || colon[1] != ' ')
      abort();
    for (const char *c = p; c < colon; c++)
      if ((*c >= 'A' && *c <= 'Z') || *c == ' ' || *c == '\n' || *c == '\0')
        abort();
    for (const char *c = colon; c < eol; c++)
      if (*c == '\n' || *c == '\0')
        abort();
    p = eol + 2;
  }
  /* The lookup the callers use stays inside the buffer. */
  struct tt_http_response r;
  memset(&r, 0, sizeof(r));
  r.headers = o->headers;
  size_t n = 0;
  const char *v = tt_http_response_header(&r, "content-length", &n);
  if (v && (v < o->headers.data || v + n > o->headers.data + o->headers.len))
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  bool head = data[0] & 1;
  bool eof = data[0] & 2;
  size_t step = (size_t)(data[0] >> 2) + 1;
  const char *in = (const char *)data + 1;
  size_t len = size - 1;
  struct outcome whole, split;
  run(&whole, in, len, 0, head, eof);
  run(&split, in, len, step, head, eof);
  /* However the bytes arrive, the parser says the same (where it stopped
   * in an error depends on the pieces, the outcome does not). */
  if (whole.rc != split.rc)
    abort();
  if (whole.rc == TT_HTTP_PARSE_DONE) {
    if (whole.used != split.used || whole.status != split.status || whole.keep_alive != split.keep_alive ||
        !same_buf(&whole.headers, &split.headers) || !same_buf(&whole.body, &split.body))
      abort();
    check_done(&whole);
  }
  tt_buf_free(&whole.headers);
  tt_buf_free(&whole.body);
  tt_buf_free(&split.headers);
  tt_buf_free(&split.body);
  return 0;
}
