/* SPDX-License-Identifier: Apache-2.0 */
/* base64.c -- RFC 4648 base64 encode/decode for B values and cursors. */
#include "value/base64.h"

#include <stdint.h>
#include <stdlib.h>

#include "value/av.h"

static const char alpha_std[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char alpha_url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int tt_base64_encode(struct tt_buf *b, const void *p, size_t n, enum tt_base64_variant v) {
  const unsigned char *s = p;
  const char *a = v == TT_BASE64_URL ? alpha_url : alpha_std;
  /* Encode through a small stack chunk: few appends, no heap temporary. */
  char chunk[256];
  size_t k = 0, i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t w = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
    chunk[k++] = a[w >> 18];
    chunk[k++] = a[(w >> 12) & 63];
    chunk[k++] = a[(w >> 6) & 63];
    chunk[k++] = a[w & 63];
    if (k == sizeof(chunk)) {
      if (tt_buf_append(b, chunk, k) != 0)
        return -1;
      k = 0;
    }
  }
  if (i < n) { /* one or two bytes left: padded to four characters */
    bool two = n - i == 2;
    uint32_t w = (uint32_t)s[i] << 16 | (two ? (uint32_t)s[i + 1] << 8 : 0);
    chunk[k++] = a[w >> 18];
    chunk[k++] = a[(w >> 12) & 63];
    chunk[k++] = two ? a[(w >> 6) & 63] : '=';
    chunk[k++] = '=';
  }
  return tt_buf_append(b, chunk, k);
}

/* 0..63, or 64 for characters outside the alphabet. */
static unsigned char dec_char(unsigned char c, enum tt_base64_variant v) {
  if (c >= 'A' && c <= 'Z')
    return (unsigned char)(c - 'A');
  if (c >= 'a' && c <= 'z')
    return (unsigned char)(c - 'a' + 26);
  if (c >= '0' && c <= '9')
    return (unsigned char)(c - '0' + 52);
  if (c == (v == TT_BASE64_URL ? '-' : '+'))
    return 62;
  if (c == (v == TT_BASE64_URL ? '_' : '/'))
    return 63;
  return 64;
}

int tt_base64_decode(const char *in, size_t len, enum tt_base64_variant v, int pad_optional,
                     unsigned char *out, size_t *out_len) {
  size_t data = len;
  size_t o = 0;
  /* Strip up to two '=' of padding; padded input is a multiple of 4. */
  if (len % 4 == 0 && len >= 4) {
    if (in[len - 1] == '=') {
      data--;
      if (in[len - 2] == '=')
        data--;
    }
  } else if (!pad_optional && len % 4 != 0) {
    return -1;
  }
  if (data % 4 == 1)
    return -1;
  size_t i = 0;
  for (; i + 4 <= data; i += 4) {
    unsigned char c0 = dec_char((unsigned char)in[i], v), c1 = dec_char((unsigned char)in[i + 1], v),
                  c2 = dec_char((unsigned char)in[i + 2], v), c3 = dec_char((unsigned char)in[i + 3], v);
    if ((c0 | c1 | c2 | c3) & 64)
      return -1;
    uint32_t w = (uint32_t)c0 << 18 | (uint32_t)c1 << 12 | (uint32_t)c2 << 6 | c3;
    out[o++] = (unsigned char)(w >> 16);
    out[o++] = (unsigned char)(w >> 8);
    out[o++] = (unsigned char)w;
  }
  size_t rest = data - i;
  if (rest) {
    unsigned char c0 = dec_char((unsigned char)in[i], v), c1 = dec_char((unsigned char)in[i + 1], v);
    unsigned char c2 = rest == 3 ? dec_char((unsigned char)in[i + 2], v) : 0;
    if ((c0 | c1 | c2) & 64)
      return -1;
    uint32_t w = (uint32_t)c0 << 18 | (uint32_t)c1 << 12 | (uint32_t)c2 << 6;
    out[o++] = (unsigned char)(w >> 16);
    if (rest == 3)
      out[o++] = (unsigned char)(w >> 8);
  }
  *out_len = o;
  return 0;
}

int tt_base64_decode_av(struct tt_av *out, const char *in, size_t len, enum tt_base64_variant v,
                        int pad_optional) {
  size_t n;
  unsigned char *bytes = malloc(TT_BASE64_DECODED_MAX(len) + 1);
  if (bytes == NULL)
    return -1;
  if (tt_base64_decode(in, len, v, pad_optional, bytes, &n) != 0) {
    free(bytes);
    return 1;
  }
  bytes[n] = '\0';
  out->type = TT_AV_B;
  out->len = n;
  out->u.bytes = (char *)bytes; /* decoded in place: no second copy */
  return 0;
}

int tt_base64_write_av(struct tt_buf *b, const struct tt_av *v) {
  if (tt_buf_append(b, "\"", 1) != 0 || tt_base64_encode(b, v->u.bytes, v->len, TT_BASE64_STD) != 0)
    return -1;
  return tt_buf_append(b, "\"", 1);
}
