/* SPDX-License-Identifier: Apache-2.0 */
/* keyhash.c -- DynamoDB's partition hash: the order of a Scan and the
 * parallel-scan segment of a partition key, and the order of index entries
 * whose index keys are equal. The hash is the MD5 digest of "Outliers"
 * followed by the key's bytes: an S value's UTF-8 bytes, a B value's raw
 * bytes, an N value in DynamoDB's internal number form (a base-100
 * exponent byte, then base-100 digits, complemented for negative numbers).
 * DynamoDB's answers order partitions by this digest (dynalite reproduces
 * its recorded orders the same way); a store keeps its first 32 bits. */
#include <string.h>

#include "backend/memory/internal.h"

/* ---- MD5 (RFC 1321) ---- */

#define MD5_F(x, y, z) ((z) ^ ((x) & ((y) ^ (z))))
#define MD5_G(x, y, z) ((y) ^ ((z) & ((x) ^ (y))))
#define MD5_H(x, y, z) ((x) ^ (y) ^ (z))
#define MD5_I(x, y, z) ((y) ^ ((x) | ~(z)))
#define MD5_STEP(f, a, b, c, d, x, k, r)                                                           \
  do {                                                                                             \
    (a) += f((b), (c), (d)) + (x) + (k);                                                           \
    (a) = ((a) << (r) | (a) >> (32 - (r))) + (b);                                                 \
  } while (0)

static void md5_block(uint32_t h[4], const unsigned char *p) {
  uint32_t w[16];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
           (uint32_t)p[4 * i + 3] << 24;
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
  MD5_STEP(MD5_F, a, b, c, d, w[0], 0xd76aa478, 7);
  MD5_STEP(MD5_F, d, a, b, c, w[1], 0xe8c7b756, 12);
  MD5_STEP(MD5_F, c, d, a, b, w[2], 0x242070db, 17);
  MD5_STEP(MD5_F, b, c, d, a, w[3], 0xc1bdceee, 22);
  MD5_STEP(MD5_F, a, b, c, d, w[4], 0xf57c0faf, 7);
  MD5_STEP(MD5_F, d, a, b, c, w[5], 0x4787c62a, 12);
  MD5_STEP(MD5_F, c, d, a, b, w[6], 0xa8304613, 17);
  MD5_STEP(MD5_F, b, c, d, a, w[7], 0xfd469501, 22);
  MD5_STEP(MD5_F, a, b, c, d, w[8], 0x698098d8, 7);
  MD5_STEP(MD5_F, d, a, b, c, w[9], 0x8b44f7af, 12);
  MD5_STEP(MD5_F, c, d, a, b, w[10], 0xffff5bb1, 17);
  MD5_STEP(MD5_F, b, c, d, a, w[11], 0x895cd7be, 22);
  MD5_STEP(MD5_F, a, b, c, d, w[12], 0x6b901122, 7);
  MD5_STEP(MD5_F, d, a, b, c, w[13], 0xfd987193, 12);
  MD5_STEP(MD5_F, c, d, a, b, w[14], 0xa679438e, 17);
  MD5_STEP(MD5_F, b, c, d, a, w[15], 0x49b40821, 22);
  MD5_STEP(MD5_G, a, b, c, d, w[1], 0xf61e2562, 5);
  MD5_STEP(MD5_G, d, a, b, c, w[6], 0xc040b340, 9);
  MD5_STEP(MD5_G, c, d, a, b, w[11], 0x265e5a51, 14);
  MD5_STEP(MD5_G, b, c, d, a, w[0], 0xe9b6c7aa, 20);
  MD5_STEP(MD5_G, a, b, c, d, w[5], 0xd62f105d, 5);
  MD5_STEP(MD5_G, d, a, b, c, w[10], 0x02441453, 9);
  MD5_STEP(MD5_G, c, d, a, b, w[15], 0xd8a1e681, 14);
  MD5_STEP(MD5_G, b, c, d, a, w[4], 0xe7d3fbc8, 20);
  MD5_STEP(MD5_G, a, b, c, d, w[9], 0x21e1cde6, 5);
  MD5_STEP(MD5_G, d, a, b, c, w[14], 0xc33707d6, 9);
  MD5_STEP(MD5_G, c, d, a, b, w[3], 0xf4d50d87, 14);
  MD5_STEP(MD5_G, b, c, d, a, w[8], 0x455a14ed, 20);
  MD5_STEP(MD5_G, a, b, c, d, w[13], 0xa9e3e905, 5);
  MD5_STEP(MD5_G, d, a, b, c, w[2], 0xfcefa3f8, 9);
  MD5_STEP(MD5_G, c, d, a, b, w[7], 0x676f02d9, 14);
  MD5_STEP(MD5_G, b, c, d, a, w[12], 0x8d2a4c8a, 20);
  MD5_STEP(MD5_H, a, b, c, d, w[5], 0xfffa3942, 4);
  MD5_STEP(MD5_H, d, a, b, c, w[8], 0x8771f681, 11);
  MD5_STEP(MD5_H, c, d, a, b, w[11], 0x6d9d6122, 16);
  MD5_STEP(MD5_H, b, c, d, a, w[14], 0xfde5380c, 23);
  MD5_STEP(MD5_H, a, b, c, d, w[1], 0xa4beea44, 4);
  MD5_STEP(MD5_H, d, a, b, c, w[4], 0x4bdecfa9, 11);
  MD5_STEP(MD5_H, c, d, a, b, w[7], 0xf6bb4b60, 16);
  MD5_STEP(MD5_H, b, c, d, a, w[10], 0xbebfbc70, 23);
  MD5_STEP(MD5_H, a, b, c, d, w[13], 0x289b7ec6, 4);
  MD5_STEP(MD5_H, d, a, b, c, w[0], 0xeaa127fa, 11);
  MD5_STEP(MD5_H, c, d, a, b, w[3], 0xd4ef3085, 16);
  MD5_STEP(MD5_H, b, c, d, a, w[6], 0x04881d05, 23);
  MD5_STEP(MD5_H, a, b, c, d, w[9], 0xd9d4d039, 4);
  MD5_STEP(MD5_H, d, a, b, c, w[12], 0xe6db99e5, 11);
  MD5_STEP(MD5_H, c, d, a, b, w[15], 0x1fa27cf8, 16);
  MD5_STEP(MD5_H, b, c, d, a, w[2], 0xc4ac5665, 23);
  MD5_STEP(MD5_I, a, b, c, d, w[0], 0xf4292244, 6);
  MD5_STEP(MD5_I, d, a, b, c, w[7], 0x432aff97, 10);
  MD5_STEP(MD5_I, c, d, a, b, w[14], 0xab9423a7, 15);
  MD5_STEP(MD5_I, b, c, d, a, w[5], 0xfc93a039, 21);
  MD5_STEP(MD5_I, a, b, c, d, w[12], 0x655b59c3, 6);
  MD5_STEP(MD5_I, d, a, b, c, w[3], 0x8f0ccc92, 10);
  MD5_STEP(MD5_I, c, d, a, b, w[10], 0xffeff47d, 15);
  MD5_STEP(MD5_I, b, c, d, a, w[1], 0x85845dd1, 21);
  MD5_STEP(MD5_I, a, b, c, d, w[8], 0x6fa87e4f, 6);
  MD5_STEP(MD5_I, d, a, b, c, w[15], 0xfe2ce6e0, 10);
  MD5_STEP(MD5_I, c, d, a, b, w[6], 0xa3014314, 15);
  MD5_STEP(MD5_I, b, c, d, a, w[13], 0x4e0811a1, 21);
  MD5_STEP(MD5_I, a, b, c, d, w[4], 0xf7537e82, 6);
  MD5_STEP(MD5_I, d, a, b, c, w[11], 0xbd3af235, 10);
  MD5_STEP(MD5_I, c, d, a, b, w[2], 0x2ad7d2bb, 15);
  MD5_STEP(MD5_I, b, c, d, a, w[9], 0xeb86d391, 21);
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
}

struct md5 {
  uint32_t h[4];
  unsigned char blk[64];
  size_t n; /* bytes waiting in blk */
  uint64_t len;
};

static void md5_add(struct md5 *m, const unsigned char *p, size_t len) {
  if (len == 0)
    return;
  m->len += len;
  if (m->n) {
    size_t k = 64 - m->n < len ? 64 - m->n : len;
    memcpy(m->blk + m->n, p, k);
    m->n += k;
    p += k;
    len -= k;
    if (m->n < 64)
      return;
    md5_block(m->h, m->blk);
    m->n = 0;
  }
  for (; len >= 64; p += 64, len -= 64)
    md5_block(m->h, p);
  if (len)
    memcpy(m->blk, p, len);
  m->n = len;
}

/* The first 32 bits (big-endian: the order of the digest's hex text) of
 * MD5("Outliers" + a + b). */
static uint32_t md5_top32(const unsigned char *a, size_t na, const unsigned char *b, size_t nb) {
  struct md5 m = {{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476}, {0}, 0, 0};
  md5_add(&m, (const unsigned char *)"Outliers", 8);
  md5_add(&m, a, na);
  md5_add(&m, b, nb);
  uint64_t bits = m.len * 8;
  m.blk[m.n++] = 0x80;
  if (m.n > 56) {
    memset(m.blk + m.n, 0, 64 - m.n);
    md5_block(m.h, m.blk);
    m.n = 0;
  }
  memset(m.blk + m.n, 0, 56 - m.n);
  for (int i = 0; i < 8; i++)
    m.blk[56 + i] = (unsigned char)(bits >> (8 * i));
  md5_block(m.h, m.blk);
  uint32_t x = m.h[0];
  return (x & 0xff) << 24 | (x & 0xff00) << 8 | (x >> 8 & 0xff00) | x >> 24;
}

/* ---- the bytes a key value is hashed as ---- */

size_t memdb_key_bytes(const struct memdb_kv *k, unsigned char out[MEMDB_NUM_BYTES_MAX],
                       const unsigned char **bytes) {
  if (k->type != TT_AV_N) {
    *bytes = (const unsigned char *)k->p;
    return k->len;
  }
  *bytes = out;
  /* Canonical text: optional '-', digits, optional '.' and digits. The
   * value is 0.D x 10^e with D the significant digits. */
  const char *p = k->p, *end = k->p + k->len;
  bool neg = p < end && *p == '-';
  if (neg)
    p++;
  char d[48];
  size_t nd = 0;
  long e = 0;
  bool point = false, lead = true;
  for (; p < end; p++) {
    if (*p == '.') {
      point = true;
      continue;
    }
    if (*p < '0' || *p > '9')
      break;
    if (lead && *p == '0') {
      if (point)
        e--; /* 0.00x: the point moves right past a zero */
      continue;
    }
    lead = false;
    if (!point)
      e++;
    if (nd < sizeof(d))
      d[nd++] = *p;
  }
  while (nd && d[nd - 1] == '0')
    nd--;
  if (nd == 0) {
    out[0] = 0x80;
    return 1;
  }
  /* Base-100 digits aligned on the point: a leading zero digit when e is
   * odd; the exponent byte is the base-100 exponent offset by 64 (193 + x
   * for a positive number, its complement for a negative one). */
  int odd = (int)(e & 1);
  long x = (e + odd) / 2 - 64;
  size_t n = 0;
  out[n++] = (unsigned char)(neg ? ~x : x);
  size_t total = nd + (size_t)odd, pairs = (total + 1) / 2;
  for (size_t i = 0; i < pairs; i++) {
    size_t hi = 2 * i, lo = hi + 1;
    int a = hi < (size_t)odd ? 0 : d[hi - (size_t)odd] - '0';
    int b = lo - (size_t)odd < nd ? d[lo - (size_t)odd] - '0' : 0;
    int v = 10 * a + b;
    out[n++] = (unsigned char)(neg ? 101 - v : v + 1);
  }
  if (neg && pairs < 20)
    out[n++] = 102;
  return n;
}

uint32_t memdb_hash2(const struct memdb_kv *a, const struct memdb_kv *b) {
  unsigned char na[MEMDB_NUM_BYTES_MAX], nb[MEMDB_NUM_BYTES_MAX];
  const unsigned char *pa, *pb = NULL;
  size_t la = memdb_key_bytes(a, na, &pa), lb = 0;
  if (b)
    lb = memdb_key_bytes(b, nb, &pb);
  return md5_top32(pa, la, pb, lb);
}

uint32_t memdb_hash(const struct memdb_kv *k) { return memdb_hash2(k, NULL); }
