/* SPDX-License-Identifier: Apache-2.0 */
/* utf8.h -- the one test of a UTF-8 sequence that every reader and writer
 * of text shares: strict UTF-8 as jansson, Go and DynamoDB take it (no
 * overlong form, no UTF-16 surrogate, nothing past U+10FFFF), and the one
 * encoder of a code point. Inline: the JSON readers call them for every
 * non-ASCII character. */
#ifndef TT_UTIL_UTF8_H
#define TT_UTIL_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The length of the UTF-8 sequence at s (n > 0 bytes readable), or 0 when
 * it is ill-formed; *cut (may be NULL) is then whether it only ran out of
 * bytes, being a valid start of a sequence. An ASCII byte is 1. */
static inline size_t tt_utf8_seq(const unsigned char *s, size_t n, bool *cut) {
  unsigned char c = s[0], lo = 0x80, hi = 0xBF; /* lo..hi: the second byte's range */
  size_t need;
  if (cut)
    *cut = false;
  if (c < 0x80)
    return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 3;
    lo = c == 0xE0 ? 0xA0 : 0x80; /* no overlong form */
    hi = c == 0xED ? 0x9F : 0xBF; /* no surrogate */
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 4;
    lo = c == 0xF0 ? 0x90 : 0x80;
    hi = c == 0xF4 ? 0x8F : 0xBF; /* nothing past U+10FFFF */
  } else {
    return 0;
  }
  for (size_t i = 1; i < need; i++) {
    if (i >= n) {
      if (cut)
        *cut = true;
      return 0;
    }
    unsigned char b = s[i];
    if (i == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF))
      return 0;
  }
  return need;
}

/* Writes code point cp (at most U+10FFFF) as UTF-8 at t, which has room
 * for 4 bytes. Returns the length written. */
static inline size_t tt_utf8_put(char *t, uint32_t cp) {
  if (cp < 0x80) {
    t[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    t[0] = (char)(0xC0 | cp >> 6);
    t[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    t[0] = (char)(0xE0 | cp >> 12);
    t[1] = (char)(0x80 | (cp >> 6 & 0x3F));
    t[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  t[0] = (char)(0xF0 | cp >> 18);
  t[1] = (char)(0x80 | (cp >> 12 & 0x3F));
  t[2] = (char)(0x80 | (cp >> 6 & 0x3F));
  t[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

#endif
