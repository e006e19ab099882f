/* SPDX-License-Identifier: Apache-2.0 */
/* text.h -- a bounded copy of text into a fixed buffer, cut short to fit
 * as snprintf "%s" would, without the format machinery (a few hundred
 * instructions a call, on paths every request takes); the name of an enum
 * value from a table. */
#ifndef TT_UTIL_TEXT_H
#define TT_UTIL_TEXT_H

#include <stddef.h>
#include <string.h>

/* The n bytes at src into out (cap > 0 bytes), cut to cap - 1 and
 * NUL-terminated; returns the bytes copied. */
static inline size_t tt_text_copyn(char *out, size_t cap, const char *src, size_t n) {
  if (n > cap - 1)
    n = cap - 1;
  memcpy(out, src, n);
  out[n] = '\0';
  return n;
}

/* The same for the C string src (NULL: the empty string). */
static inline size_t tt_text_copy(char *out, size_t cap, const char *src) {
  return src ? tt_text_copyn(out, cap, src, strlen(src)) : tt_text_copyn(out, cap, "", 0);
}

/* The entry for value i of `names`, a static table indexed by an enum
 * (designated initializers, gaps NULL), or `other` past its end or in a
 * gap. */
#define TT_NAME_OF(names, i, other)                                                     \
  ((size_t)(i) < sizeof(names) / sizeof((names)[0]) && (names)[(size_t)(i)] != NULL \
       ? (names)[(size_t)(i)]                                                        \
       : (other))

#endif
