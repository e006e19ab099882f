/* SPDX-License-Identifier: Apache-2.0 */
/* hex.h -- the value of one hexadecimal digit, for the percent-decoders and
 * the id parsers of every layer, and of the four of a JSON \uXXXX escape. */
#ifndef TT_UTIL_HEX_H
#define TT_UTIL_HEX_H

/* 0-15 for 0-9, a-f, A-F; -1 for any other byte. */
static inline int tt_hex_digit(unsigned char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* The value of the four hexadecimal digits at p (a JSON \uXXXX escape's),
 * or -1 when one is not a digit. */
static inline int tt_hex4(const unsigned char *p) {
  int v = 0;
  for (int i = 0; i < 4; i++) {
    int d = tt_hex_digit(p[i]);
    if (d < 0)
      return -1;
    v = v << 4 | d;
  }
  return v;
}

#endif
