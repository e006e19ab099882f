/* SPDX-License-Identifier: Apache-2.0 */
/* http_parse.c -- an incremental HTTP/1.1 response parser for untrusted
 * input, with strict limits on lines, header count and head size. */
#include "backend/dynamodb/http_parse.h"

#include <errno.h>
#include <string.h>

#define BODY_PREALLOC_MAX ((size_t)4 << 20)

enum {
  P_STATUS = 0, /* the status line */
  P_HEADER,     /* header lines up to the empty one */
  P_BODY_LEN,   /* `left` bytes of a Content-Length body */
  P_CHUNK_SIZE, /* a chunk-size line */
  P_CHUNK_DATA, /* `left` bytes of chunk data */
  P_CHUNK_END,  /* the CRLF after chunk data */
  P_TRAILER,    /* trailer lines up to the empty one */
  P_BODY_EOF,   /* a body delimited by the connection's close */
  P_DONE,
  P_FAILED,
};

void tt_http_parse_init(struct tt_http_parse *p, bool head_request, struct tt_buf *headers,
                        struct tt_buf *body) {
  struct tt_buf line = p->line;
  memset(p, 0, sizeof(*p));
  p->line = line;
  p->line.len = 0;
  p->head_request = head_request;
  p->headers = headers;
  p->body = body;
}

void tt_http_parse_free(struct tt_http_parse *p) { tt_buf_free(&p->line); }

long tt_http_parse_head_status(const struct tt_http_parse *p) {
  return p->state > P_HEADER && p->state <= P_DONE ? p->status : 0;
}

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

/* RFC 9110 tchar: what a header name may hold. */
static bool is_tchar(unsigned char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
    return true;
  return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* Field values and reason phrases: visible characters, SP, HT and
 * obs-text; no other control character (a CR or NUL in a value is how
 * response splitting starts). */
static bool is_text(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if ((c < 0x20 && c != '\t') || c == 0x7f)
      return false;
  }
  return true;
}

/* Whether the comma-separated list `v` holds token `t` (case-insensitive);
 * with `last`, whether its last element is `t`. */
static bool list_has(const char *v, size_t n, const char *t, bool last) {
  size_t tl = strlen(t);
  bool found = false;
  size_t i = 0;
  while (i < n) {
    while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
      i++;
    size_t s = i;
    while (i < n && v[i] != ',')
      i++;
    size_t e = i;
    while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
      e--;
    if (e == s)
      continue;
    bool match = e - s == tl;
    for (size_t k = 0; match && k < tl; k++)
      match = lower(v[s + k]) == t[k];
    if (last)
      found = match;
    else if (match)
      return true;
  }
  return found;
}

/* Takes the next line (LF-terminated; a CR before the LF is dropped). Returns
 * 1 with the line in *l and *ll (valid until the next call), 0 when the input ran
 * out (the part seen is kept), -1 when the line is over TT_HTTP_LINE_MAX. */
static int take_line(struct tt_http_parse *p, const char *d, size_t len, size_t *i,
                     const char **l, size_t *ll) {
  const char *s = d + *i;
  size_t n = len - *i;
  const char *lf = memchr(s, '\n', n);
  if (lf == NULL) {
    if (p->line.len + n > TT_HTTP_LINE_MAX || tt_buf_append(&p->line, s, n) != 0)
      return -1;
    *i = len;
    return 0;
  }
  size_t k = (size_t)(lf - s);
  *i += k + 1;
  if (p->line.len > 0) {
    if (p->line.len + k > TT_HTTP_LINE_MAX || tt_buf_append(&p->line, s, k) != 0)
      return -1;
    *l = p->line.data;
    *ll = p->line.len;
    p->line.len = 0; /* the bytes stay readable until the next append */
  } else {
    if (k > TT_HTTP_LINE_MAX)
      return -1;
    *l = s;
    *ll = k;
  }
  if (*ll > 0 && (*l)[*ll - 1] == '\r')
    (*ll)--;
  return 1;
}

/* "HTTP/1.x NNN[ reason]" */
static int status_line(struct tt_http_parse *p, const char *l, size_t n) {
  if (n < 12 || memcmp(l, "HTTP/1.", 7) != 0 || l[7] < '0' || l[7] > '9' || l[8] != ' ')
    return -1;
  if (l[9] < '1' || l[9] > '9' || l[10] < '0' || l[10] > '9' || l[11] < '0' || l[11] > '9')
    return -1;
  if (n > 12 && (l[12] != ' ' || !is_text(l + 13, n - 13)))
    return -1;
  p->minor = l[7] - '0';
  p->status = (l[9] - '0') * 100 + (l[10] - '0') * 10 + (l[11] - '0');
  p->chunked = p->has_length = p->close = false;
  p->nheaders = 0;
  tt_buf_reset(p->headers);
  return 0;
}

static int content_length(struct tt_http_parse *p, const char *v, size_t n) {
  if (n == 0 || n > 18)
    return -1; /* 18 digits cannot overflow 64 bits */
  uint64_t x = 0;
  for (size_t i = 0; i < n; i++) {
    if (v[i] < '0' || v[i] > '9')
      return -1;
    x = x * 10 + (uint64_t)(v[i] - '0');
  }
  if (p->has_length && p->left != x)
    return -1; /* two different lengths: a smuggling attempt or a broken peer */
  p->has_length = true;
  p->left = x;
  return 0;
}

static int header_line(struct tt_http_parse *p, const char *l, size_t n) {
  if (++p->nheaders > TT_HTTP_HEADERS_MAX)
    return -1;
  const char *colon = memchr(l, ':', n);
  if (colon == NULL || colon == l)
    return -1; /* also an obs-fold continuation line (leading SP/HT) */
  size_t nlen = (size_t)(colon - l);
  for (size_t i = 0; i < nlen; i++)
    if (!is_tchar((unsigned char)l[i]))
      return -1;
  const char *v = colon + 1;
  const char *e = l + n;
  while (v < e && (*v == ' ' || *v == '\t'))
    v++;
  while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
    e--;
  size_t vlen = (size_t)(e - v);
  if (!is_text(v, vlen))
    return -1;
  struct tt_buf *b = p->headers;
  size_t start = b->len;
  if (tt_buf_reserve(b, nlen + vlen + 4) != 0)
    return -1;
  tt_buf_append(b, l, nlen);
  tt_buf_append(b, ": ", 2);
  tt_buf_append(b, v, vlen);
  tt_buf_append(b, "\r\n", 2);
  char *name = b->data + start;
  for (size_t i = 0; i < nlen; i++)
    name[i] = lower(name[i]);
  if (nlen == 14 && memcmp(name, "content-length", 14) == 0)
    return content_length(p, v, vlen);
  if (nlen == 17 && memcmp(name, "transfer-encoding", 17) == 0) {
    /* chunked must be the last coding; any other framing ends at close */
    p->chunked = list_has(v, vlen, "chunked", true);
    if (!p->chunked)
      p->close = true;
    return 0;
  }
  if (nlen == 10 && memcmp(name, "connection", 10) == 0 && list_has(v, vlen, "close", false))
    p->close = true;
  return 0;
}

static int body_append(struct tt_http_parse *p, const char *d, size_t n) {
  if (tt_buf_append(p->body, d, n) == 0)
    return 0;
  return errno == EMSGSIZE ? TT_HTTP_PARSE_TOO_LARGE : TT_HTTP_PARSE_ERROR;
}

/* The empty line after the headers: picks the body's framing. */
static int headers_end(struct tt_http_parse *p) {
  if (p->status < 200) {
    if (p->status == 101)
      return TT_HTTP_PARSE_ERROR; /* we never ask to switch protocols */
    p->state = P_STATUS;            /* 100 Continue and friends: skipped */
    tt_buf_reset(p->headers);
    return TT_HTTP_PARSE_MORE;
  }
  bool reusable = p->minor >= 1 && !p->close;
  if (p->head_request || p->status == 204 || p->status == 304) {
    p->keep_alive = reusable;
    p->state = P_DONE;
    return TT_HTTP_PARSE_DONE;
  }
  if (p->chunked) {
    p->has_length = false; /* Transfer-Encoding overrides Content-Length */
    p->keep_alive = reusable;
    p->state = P_CHUNK_SIZE;
    return TT_HTTP_PARSE_MORE;
  }
  if (p->has_length) {
    if (p->body->cap && p->left > p->body->cap)
      return TT_HTTP_PARSE_TOO_LARGE;
    p->keep_alive = reusable;
    if (p->left == 0) {
      p->state = P_DONE;
      return TT_HTTP_PARSE_DONE;
    }
    /* One allocation for the usual body; a large announced length is not
     * trusted with memory before its bytes arrive. */
    size_t want = p->left < BODY_PREALLOC_MAX ? (size_t)p->left : BODY_PREALLOC_MAX;
    if (tt_buf_reserve(p->body, want) != 0)
      return errno == EMSGSIZE ? TT_HTTP_PARSE_TOO_LARGE : TT_HTTP_PARSE_ERROR;
    p->state = P_BODY_LEN;
    return TT_HTTP_PARSE_MORE;
  }
  p->keep_alive = false;
  p->state = P_BODY_EOF;
  return TT_HTTP_PARSE_MORE;
}

static int chunk_size(struct tt_http_parse *p, const char *l, size_t n) {
  uint64_t x = 0;
  size_t i = 0;
  for (; i < n; i++) {
    char c = lower(l[i]);
    int dv = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (dv < 0)
      break;
    if (i >= 15)
      return TT_HTTP_PARSE_ERROR; /* 2^60 and more: nobody sends that */
    x = x * 16 + (uint64_t)dv;
  }
  if (i == 0 || (i < n && l[i] != ';' && l[i] != ' ' && l[i] != '\t'))
    return TT_HTTP_PARSE_ERROR; /* chunk extensions after ';' are ignored */
  if (!is_text(l + i, n - i))
    return TT_HTTP_PARSE_ERROR;
  if (x == 0) {
    p->state = P_TRAILER;
    return TT_HTTP_PARSE_MORE;
  }
  if (p->body->cap && x > p->body->cap - p->body->len)
    return TT_HTTP_PARSE_TOO_LARGE;
  p->left = x;
  p->state = P_CHUNK_DATA;
  return TT_HTTP_PARSE_MORE;
}

/* One complete line in a line state. */
static int on_line(struct tt_http_parse *p, const char *l, size_t n, size_t raw) {
  if (p->state != P_CHUNK_SIZE && p->state != P_CHUNK_END) {
    p->head_bytes += raw;
    if (p->head_bytes > TT_HTTP_HEAD_BYTES_MAX)
      return TT_HTTP_PARSE_ERROR;
  }
  switch (p->state) {
  case P_STATUS:
    if (status_line(p, l, n) != 0)
      return TT_HTTP_PARSE_ERROR;
    p->state = P_HEADER;
    return TT_HTTP_PARSE_MORE;
  case P_HEADER:
    if (n == 0)
      return headers_end(p);
    return header_line(p, l, n) == 0 ? TT_HTTP_PARSE_MORE : TT_HTTP_PARSE_ERROR;
  case P_CHUNK_SIZE:
    return chunk_size(p, l, n);
  case P_CHUNK_END:
    if (n != 0)
      return TT_HTTP_PARSE_ERROR;
    p->state = P_CHUNK_SIZE;
    return TT_HTTP_PARSE_MORE;
  case P_TRAILER:
    if (n == 0) {
      p->state = P_DONE;
      return TT_HTTP_PARSE_DONE;
    }
    /* Trailers are read (and limited) but not kept. */
    if (++p->nheaders > TT_HTTP_HEADERS_MAX || !is_text(l, n))
      return TT_HTTP_PARSE_ERROR;
    return TT_HTTP_PARSE_MORE;
  default:
    return TT_HTTP_PARSE_ERROR;
  }
}

int tt_http_parse_feed(struct tt_http_parse *p, const char *data, size_t len, size_t *used) {
  size_t i = 0;
  int rc = TT_HTTP_PARSE_MORE;
  if (len > 0)
    p->any_byte = true;
  while (i < len && rc == TT_HTTP_PARSE_MORE) {
    switch (p->state) {
    case P_BODY_LEN:
    case P_CHUNK_DATA: {
      size_t n = len - i;
      if ((uint64_t)n > p->left)
        n = (size_t)p->left;
      rc = body_append(p, data + i, n);
      if (rc != 0)
        break;
      i += n;
      p->left -= n;
      if (p->left == 0) {
        if (p->state == P_BODY_LEN) {
          p->state = P_DONE;
          rc = TT_HTTP_PARSE_DONE;
        } else {
          p->state = P_CHUNK_END;
        }
      }
      break;
    }
    case P_BODY_EOF:
      rc = body_append(p, data + i, len - i);
      i = len;
      break;
    case P_DONE:
      rc = TT_HTTP_PARSE_DONE;
      break;
    case P_FAILED:
      rc = TT_HTTP_PARSE_ERROR;
      break;
    default: {
      const char *l;
      size_t n;
      size_t i0 = i, kept = p->line.len;
      int got = take_line(p, data, len, &i, &l, &n);
      if (got < 0)
        rc = TT_HTTP_PARSE_ERROR;
      else if (got > 0)
        rc = on_line(p, l, n, i - i0 + kept);
      break;
    }
    }
  }
  if (rc < 0)
    p->state = P_FAILED;
  *used = i;
  return rc;
}

int tt_http_parse_eof(struct tt_http_parse *p) {
  if (p->state == P_BODY_EOF) {
    p->state = P_DONE;
    p->keep_alive = false;
    return TT_HTTP_PARSE_DONE;
  }
  if (p->state == P_DONE)
    return TT_HTTP_PARSE_DONE;
  p->state = P_FAILED;
  return TT_HTTP_PARSE_ERROR;
}
