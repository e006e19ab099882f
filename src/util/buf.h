/* SPDX-License-Identifier: Apache-2.0 */
/* buf.h -- growable byte buffer with a hard cap. */
#ifndef TT_UTIL_BUF_H
#define TT_UTIL_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* A byte buffer that refuses to grow past `cap` bytes instead of failing
 * later. The buffer owns `data` (malloc'd); data[len] is always '\0' once
 * anything was appended, so text can be used as a C string. */
struct tt_buf {
  char *data;
  size_t len;
  size_t alloc; /* bytes of data: > len once allocated, and never more than
                 * cap + 1, so room in data is also room under the cap */
  size_t cap;   /* 0 means no cap */
};

/* Initializes an empty buffer that holds at most `cap` bytes (0 = no cap). */
void tt_buf_init(struct tt_buf *b, size_t cap);

/* Frees the storage and leaves an empty buffer with the same cap. */
void tt_buf_free(struct tt_buf *b);

/* Drops the contents but keeps the storage. */
void tt_buf_reset(struct tt_buf *b);

/* Makes room for `extra` more bytes (and the NUL) without changing the
 * contents, so a writer that knows its size up front grows the buffer once.
 * Returns 0, or -1 (buffer unchanged) when the cap would be exceeded (errno
 * EMSGSIZE) or memory is exhausted (errno ENOMEM). */
int tt_buf_reserve(struct tt_buf *b, size_t extra);

/* tt_buf_append's path when the bytes do not fit in `alloc`; call
 * tt_buf_append instead. */
int tt_buf_append_grow(struct tt_buf *b, const void *p, size_t n);

/* Appends n bytes. Returns 0, or -1 (buffer unchanged) when the cap would be
 * exceeded (errno EMSGSIZE) or memory is exhausted (errno ENOMEM). Inline
 * because the JSON writers append a punctuation byte at a time: when the
 * room is there (alloc never exceeds cap + 1) that is a store, not a call. */
static inline int tt_buf_append(struct tt_buf *b, const void *p, size_t n) {
  if (n < b->alloc - b->len) {
    if (n)
      memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
  }
  return tt_buf_append_grow(b, p, n);
}

/* Appends a NUL-terminated string. Same errors as tt_buf_append. */
int tt_buf_puts(struct tt_buf *b, const char *s);

/* Appends printf-formatted text. Same errors as tt_buf_append. */
int tt_buf_printf(struct tt_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Appends `s` (n bytes) as the body of a JSON string, without the quotes:
 * escapes quotes, backslashes and control characters. */
int tt_buf_json_escape(struct tt_buf *b, const char *s, size_t n);

/* The same, or with `go` as Go's json.Marshal writes it (HTML escaping on):
 * also \b and \f, <, > and & as \u00XX, U+2028 and U+2029 escaped and each
 * byte of an ill-formed UTF-8 sequence as \ufffd. */
int tt_buf_json_escape_as(struct tt_buf *b, const char *s, size_t n, bool go);

/* Takes the data out: returns the malloc'd bytes (caller frees) and leaves
 * the buffer empty. Never NULL: an empty buffer yields "". */
char *tt_buf_steal(struct tt_buf *b, size_t *len);

#endif
