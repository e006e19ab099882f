/* SPDX-License-Identifier: Apache-2.0 */
/* buf.c -- growable byte buffer with a hard cap. */
#include "util/buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

void tt_buf_init(struct tt_buf *b, size_t cap) {
  b->data = NULL;
  b->len = 0;
  b->alloc = 0;
  b->cap = cap;
}

void tt_buf_free(struct tt_buf *b) {
  free(b->data);
  tt_buf_init(b, b->cap);
}

void tt_buf_reset(struct tt_buf *b) {
  b->len = 0;
  if (b->data)
    b->data[0] = '\0';
}

/* Sets errno so callers can tell the cap (EMSGSIZE) from memory (ENOMEM). */
int tt_buf_reserve(struct tt_buf *b, size_t extra) {
  if (extra > (size_t)-1 - b->len - 1) {
    errno = EMSGSIZE;
    return -1;
  }
  size_t need = b->len + extra + 1;
  if (b->cap && need - 1 > b->cap) {
    errno = EMSGSIZE;
    return -1;
  }
  if (need <= b->alloc)
    return 0;
  size_t n = b->alloc ? b->alloc : 256;
  while (n < need)
    n *= 2;
  /* Never past the cap: tt_buf_append's inline path takes room for
   * permission. */
  if (b->cap && n - 1 > b->cap)
    n = b->cap + 1;
  char *p = realloc(b->data, n);
  if (p == NULL) {
    errno = ENOMEM;
    return -1;
  }
  b->data = p;
  b->alloc = n;
  return 0;
}

int tt_buf_append_grow(struct tt_buf *b, const void *p, size_t n) {
  return tt_buf_reserve(b, n) != 0 ? -1 : tt_buf_append(b, p, n); /* fits now: inline path */
}

int tt_buf_puts(struct tt_buf *b, const char *s) {
  return tt_buf_append(b, s, strlen(s));
}

int tt_buf_printf(struct tt_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || tt_buf_reserve(b, (size_t)n) != 0)
    return -1;
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
  return 0;
}

int tt_buf_json_escape_as(struct tt_buf *b, const char *s, size_t n, bool go) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0, start = 0;
  while (i < n) {
    unsigned c = p[i];
    const char *esc = NULL;
    char u[7];
    size_t step = 1;
    if (c == '"')
      esc = "\\\"";
    else if (c == '\\')
      esc = "\\\\";
    else if (c == '\n')
      esc = "\\n";
    else if (c == '\r')
      esc = "\\r";
    else if (c == '\t')
      esc = "\\t";
    else if (go && c == '\b')
      esc = "\\b";
    else if (go && c == '\f')
      esc = "\\f";
    else if (c < 0x20 || (go && (c == '<' || c == '>' || c == '&'))) {
      memcpy(u, "\\u00", 4);
      u[4] = hex[c >> 4];
      u[5] = hex[c & 15];
      u[6] = '\0';
      esc = u;
    } else if (go && c >= 0x80) {
      /* Go writes U+FFFD for each byte of an ill-formed sequence. */
      step = tt_utf8_seq(p + i, n - i, NULL);
      if (step == 0) {
        esc = "\\ufffd";
        step = 1;
      } else if (step == 3 && c == 0xE2 && p[i + 1] == 0x80 && (p[i + 2] & 0xFE) == 0xA8) {
        esc = p[i + 2] == 0xA8 ? "\\u2028" : "\\u2029";
      }
    }
    if (esc) {
      if (tt_buf_append(b, s + start, i - start) != 0 || tt_buf_puts(b, esc) != 0)
        return -1;
      start = i + step;
    }
    i += step;
  }
  return tt_buf_append(b, s + start, n - start);
}

int tt_buf_json_escape(struct tt_buf *b, const char *s, size_t n) {
  return tt_buf_json_escape_as(b, s, n, false);
}

char *tt_buf_steal(struct tt_buf *b, size_t *len) {
  char *p = b->data;
  if (len)
    *len = b->len;
  if (p == NULL)
    p = calloc(1, 1);
  tt_buf_init(b, b->cap);
  return p;
}
